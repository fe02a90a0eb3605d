"""The process runtime's supervisor, driven through podlife's end of its socket (podlife.runtime.shim):
processes in their own sessions, exit statuses and signals, start errors, a container's processes dying
with its main one, everything killed when podlife's end goes away, and the journal of what ran."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from podlife.runtime.shim import Shim, SpawnError
from podlife.runtime.supervisor import Journal, leftovers, start_time
from tests.helpers import processes_in_groups

ENV = {"PATH": os.defpath}


def gone(pid: int, started: str | None, timeout: float = 5.0) -> bool:
    """The process that had this pid and start time has ended (within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while started is not None and start_time(pid) == started:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def run(tmp_path: Path, body) -> None:
    async def go() -> None:
        shim = Shim(str(tmp_path / "journal"))
        await shim.start()
        try:
            await body(shim)
        finally:
            await shim.stop()
    asyncio.run(asyncio.wait_for(go(), 30))


def test_exit_status_signal_and_a_session_of_its_own(tmp_path: Path) -> None:
    async def body(shim: Shim) -> None:
        sp = shim.spawn(["sh", "-c", "exit 7"], ENV, str(tmp_path), "c1", True, {})
        pid = await sp.started
        assert await sp.exited == (7, 0)
        sp = shim.spawn(["sleep", "60"], ENV, str(tmp_path), "c2", True, {})
        pid = await sp.started
        assert os.getsid(pid) == pid and os.getpgid(pid) == pid
        shim.signal(sp, signal.SIGTERM)
        assert await sp.exited == (0, signal.SIGTERM)
    run(tmp_path, body)


def test_start_errors_say_what_failed(tmp_path: Path) -> None:
    async def body(shim: Shim) -> None:
        with pytest.raises(SpawnError) as e:
            await shim.spawn(["no-such-program"], ENV, str(tmp_path), "c", True, {}).started
        assert e.value.what == "lookup"
        with pytest.raises(SpawnError) as e:
            await shim.spawn(["true"], ENV, str(tmp_path / "missing"), "c", True, {}).started
        assert (e.value.what, e.value.errno) == ("chdir", 2)
        with pytest.raises(SpawnError) as e:
            await shim.spawn([str(tmp_path)], ENV, str(tmp_path), "c", True, {}).started
        assert (e.value.what, e.value.errno) == ("exec", 13)
    run(tmp_path, body)


def test_the_rest_of_a_container_dies_with_its_main_process(tmp_path: Path) -> None:
    pids = tmp_path / "pids"

    async def body(shim: Shim) -> None:
        # a background child in the main process's group, and an exec'd command in a session of its own
        stdin, hold = os.pipe()
        main = shim.spawn(["sh", "-c", f"sleep 60 & echo $! > {pids}; read line"], ENV, str(tmp_path), "c", True,
                          {"stdin": stdin})
        await main.started
        side = shim.spawn(["sleep", "60"], ENV, str(tmp_path), "c", False, {})
        side_pid = await side.started
        while not pids.exists() or not pids.read_text().strip():
            await asyncio.sleep(0.01)
        child = int(pids.read_text())
        child_started, side_started = start_time(child), start_time(side_pid)
        assert child_started and side_started
        os.close(hold)   # the main process's read finds end of file: it exits with status 1
        assert await main.exited == (1, 0)
        assert await side.exited == (0, signal.SIGKILL)
        assert gone(child, child_started) and gone(side_pid, side_started)
    run(tmp_path, body)


def test_end_of_file_on_the_socket_kills_everything(tmp_path: Path) -> None:
    journal = tmp_path / "journal"
    seen: dict[str, int] = {}

    async def go() -> None:
        shim = Shim(str(journal))
        await shim.start()
        sp = shim.spawn(["sh", "-c", "sleep 60 & sleep 60"], ENV, str(tmp_path), "c", True, {})
        seen["main"] = await sp.started
        seen["supervisor"] = shim.pid or 0
        while len(processes_in_groups([seen["main"]])) < 3:   # the shell and its two sleeps
            await asyncio.sleep(0.01)
        group.update((pid, start_time(pid)) for pid in processes_in_groups([seen["main"]]))
        shims.append(shim)
        shim._sock.close()   # podlife's end is gone, as when podlife is killed
    group: set[tuple[int, str | None]] = set()
    shims: list[Shim] = []
    asyncio.run(go())
    assert all(gone(pid, started) for pid, started in group)
    assert shims[0]._proc.wait(timeout=5) == 0   # the supervisor ended (and is reaped here, its parent)
    lines = journal.read_text().splitlines()
    assert lines[0].startswith(f"supervisor {seen['supervisor']} ")
    assert lines[1].startswith(f"spawn {seen['main']} {seen['main']} ")
    assert lines[-1] == "stopped" and leftovers(str(journal)) == []


def test_leftovers_are_the_journal_entries_still_running_as_the_same_process(tmp_path: Path) -> None:
    alive = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        journal = tmp_path / "journal"
        journal.write_text(f"spawn {alive.pid} {alive.pid} {start_time(alive.pid)}\n"
                           f"spawn {alive.pid + 1} {alive.pid + 1} 1\n"       # another process (start time differs)
                           "spawn 4 4 5\nexit 4\n")                          # exited
        assert leftovers(str(journal)) == [(alive.pid, alive.pid)]
    finally:
        alive.kill()
        alive.wait()


def test_the_journal_is_rewritten_with_the_live_processes_every_so_many_lines(tmp_path: Path) -> None:
    alive = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        path = str(tmp_path / "journal")
        journal = Journal(path, compact_after=5)
        journal.started(alive.pid)
        for pid in (alive.pid + 1, alive.pid + 2):   # processes that come and go, as exec probes do
            journal.started(pid)
            journal.ended(pid)
        lines = Path(path).read_text().splitlines()
        # five lines written (header, three spawns, one exit): the rewrite keeps the two live then; then the
        # last exit (the made-up pids have no start time)
        p2 = alive.pid + 2
        assert lines == [journal.header, f"spawn {alive.pid} {alive.pid} {start_time(alive.pid)}",
                         f"spawn {p2} {p2} None", f"exit {p2}"]
        assert leftovers(path) == [(alive.pid, alive.pid)]
    finally:
        alive.kill()
        alive.wait()

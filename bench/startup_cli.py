"""The command line from start to exit: how long ``podlife`` takes to start, run a small scenario and exit.

    python bench/startup_cli.py [--reps 15] [--compare-src DIR] [--instructions] [--only run|help|versions]

Commands measured: ``podlife run EXAMPLE --quiet`` for each seed example (examples/seed-*.yaml), ``podlife
--help`` and ``podlife versions`` (to a pipe, and to a pseudo-terminal), each as ``python -m podlife.cli ...``
with this tree's src/ first on PYTHONPATH. With ``--compare-src DIR`` (another checkout's src/, e.g. from ``git
archive main | tar -x -C /tmp/base``) each command also runs with that tree, the two alternating, so both see the
same host. For each command and tree: the median and the minimum over ``--reps`` runs of wall time and of CPU
time (user + system of the child, from wait4). The host is shared: the minimum is the least disturbed run, the
median the usual one. Both trees' sources are compiled to bytecode first (this machine sets
PYTHONDONTWRITEBYTECODE, which would otherwise make every start compile podlife's sources again, about 0.2 s),
and each command runs once first with bytecode writing allowed, which keeps the methods of its dataclasses
compiled (podlife.engine.dataclasscode) as an installed podlife's first run does.

``--instructions`` also counts the instructions each command executes once under valgrind's cachegrind
(``--cache-sim=no``, PYTHONHASHSEED=0): a measure the host's load does not reach (about 30 times slower).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def commands(only: str | None) -> list[tuple[str, list[str], bool]]:
    """(label, arguments, whether its output goes to a terminal) of each command measured."""
    out: list[tuple[str, list[str], bool]] = []
    if only in (None, "run"):
        for path in sorted((ROOT / "examples").glob("seed-*.yaml")):
            out.append((f"run {path.name} --quiet", ["run", str(path), "--quiet"], False))
    if only in (None, "help"):
        out.append(("--help", ["--help"], False))
    if only in (None, "versions"):
        out.append(("versions (to a pipe)", ["versions"], False))
        out.append(("versions (to a terminal)", ["versions"], True))
    return out


@contextlib.contextmanager
def terminal(wanted: bool) -> Iterator[int | None]:
    """A pseudo-terminal's file descriptor for a child's standard output (its output read and dropped), or None."""
    if not wanted:
        yield None
        return
    master, slave = os.openpty()

    def drain() -> None:
        try:
            while os.read(master, 65536):
                pass
        except OSError:   # EIO once the child has closed its end
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield slave
    finally:
        os.close(slave)
        reader.join(timeout=10)
        os.close(master)


def once(src: str, args: list[str], tty: bool = False, write_bytecode: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of one ``python -m podlife.cli ARGS`` with SRC first on the path."""
    env = dict(os.environ, PYTHONPATH=src)
    if write_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    with terminal(tty) as out:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "podlife.cli", *args], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL if out is None else out, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):   # 1: a failed expectation is still a finished run
        raise SystemExit(f"{src}: podlife {' '.join(args)} exited {proc.returncode}")
    return wall, ru.ru_utime + ru.ru_stime


def instructions(src: str, args: list[str], tty: bool = False) -> int:
    """Instructions executed by one run under cachegrind (no cache simulation)."""
    env = dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory() as tmp, terminal(tty) as out:
        proc = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                               f"--cachegrind-out-file={tmp}/cg.out", sys.executable, "-m", "podlife.cli", *args],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE if out is None else out,
                              stderr=subprocess.PIPE, text=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if not m:
        raise SystemExit(f"cachegrind gave no count:\n{proc.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--compare-src", help="another podlife source tree (its src/ directory), run alternately")
    ap.add_argument("--instructions", action="store_true", help="also count instructions under cachegrind")
    ap.add_argument("--only", choices=["run", "help", "versions"])
    a = ap.parse_args()
    trees = [("this", str(ROOT / "src"))]
    if a.compare_src:
        trees.append(("other", str(Path(a.compare_src).resolve())))
    for _, src in trees:
        compileall.compile_dir(src, quiet=1)
        for _, args, tty in commands(a.only):
            once(src, args, tty, write_bytecode=True)
    print(f"{a.reps} runs of each command per tree, alternating; seconds, median / min; "
          f"load average {os.getloadavg()[0]:.1f} at the start")
    head = f"{'command':52}"
    for label, _ in trees:
        head += f" {label + ' wall':>15} {label + ' CPU':>15}"
        if a.instructions:
            head += f" {label + ' instr. (M)':>17}"
    print(head)
    for label, args, tty in commands(a.only):
        walls: dict[str, list[float]] = {t: [] for t, _ in trees}
        cpus: dict[str, list[float]] = {t: [] for t, _ in trees}
        for _ in range(a.reps):
            for t, src in trees:
                w, c = once(src, args, tty)
                walls[t].append(w)
                cpus[t].append(c)
        row = f"{label:52}"
        for t, src in trees:
            row += (f" {statistics.median(walls[t]):7.3f}/{min(walls[t]):.3f}"
                     f" {statistics.median(cpus[t]):7.3f}/{min(cpus[t]):.3f}")
            if a.instructions:
                row += f" {instructions(src, args, tty) / 1e6:17,.0f}"
        print(row, flush=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()

"""Container logs in the CRI format: written as containerd's redirectLogs writes them, read back as the
kubelet's ReadLogs does for pods/log."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime, timezone
from pathlib import Path

from podlife.kubelet.kuberuntime.logs import LogOptions, options, read_logs
from podlife.runtime.crilog import MAX_LINE, LogWriter, timestamp

T0 = 1_700_000_000_000_000_000   # ns


def write(path: Path, chunks: list[tuple[str, bytes]]) -> list[str]:
    """Feed the chunks through pipes, one stream each, and return the file's lines."""
    async def go() -> None:
        ticks = iter(range(T0, T0 + 10**12, 1000))
        w = LogWriter(str(path), clock=lambda: next(ticks))
        pipes = {}
        for stream in ("stdout", "stderr"):
            r, wfd = os.pipe()
            w.attach(r, stream)
            pipes[stream] = wfd
        for stream, data in chunks:
            os.write(pipes[stream], data)
            await asyncio.sleep(0.01)
        for fd in pipes.values():
            os.close(fd)
        while not w.closed:
            await asyncio.sleep(0.01)
    asyncio.run(go())
    return path.read_text().splitlines()


def test_lines_partial_pieces_and_the_unterminated_rest(tmp_path: Path) -> None:
    lines = write(tmp_path / "0.log", [("stdout", b"one\ntw"), ("stdout", b"o\nthr"), ("stderr", b"oops\n"),
                                       ("stdout", b"ee")])
    body = [line.split(" ", 1)[1] for line in lines]
    # "thr" waits for its line to end; the stream closes with "three" unterminated: a partial line
    assert body == ["stdout F one", "stdout F two", "stderr F oops", "stdout P three"]
    assert lines[0].split(" ")[0] == "2023-11-14T22:13:20.000000000Z"


def test_a_line_longer_than_the_maximum_is_cut_into_partial_pieces(tmp_path: Path) -> None:
    long = b"x" * (MAX_LINE + 10) + b"\n"
    body = [line.split(" ", 3)[2:] for line in write(tmp_path / "0.log", [("stdout", long)])]
    assert body == [["P", "x" * MAX_LINE], ["F", "x" * 10]]


LOG = """\
2024-05-01T10:00:00.000000001Z stdout F first
2024-05-01T10:00:01.500000000Z stderr F second
2024-05-01T10:00:02.000000000Z stdout P thi
2024-05-01T10:00:02.000000001Z stdout F rd
2024-05-01T10:00:03.000000000Z stdout F fourth
"""


def read(tmp_path: Path, opts: LogOptions) -> bytes:
    path = tmp_path / "1.log"
    path.write_text(LOG)

    async def go() -> bytes:
        return b"".join([piece async for piece in read_logs(str(path), opts, lambda: False, None)])
    return asyncio.run(go())


def test_reading_joins_partial_lines_and_applies_tail_since_timestamps_and_limit(tmp_path: Path) -> None:
    assert read(tmp_path, LogOptions()) == b"first\nsecond\nthird\nfourth\n"
    # tail counts the file's lines: the partial "thi" is one of them
    assert read(tmp_path, LogOptions(tail=2)) == b"rd\nfourth\n"
    assert read(tmp_path, LogOptions(since="2024-05-01T10:00:01.500000000Z")) == b"second\nthird\nfourth\n"
    assert read(tmp_path, LogOptions(tail=1, timestamps=True)) == b"2024-05-01T10:00:03.000000000Z fourth\n"
    assert read(tmp_path, LogOptions(limit_bytes=9)) == b"first\nsec"


def test_options_from_the_query_the_later_of_since_seconds_and_since_time_wins() -> None:
    now = datetime(2024, 5, 1, 10, 0, 10, tzinfo=timezone.utc)
    o = options({"tailLines": "5", "timestamps": "true", "sinceSeconds": "4", "follow": "true"}, now)
    assert (o.tail, o.timestamps, o.follow, o.since) == (5, True, True, "2024-05-01T10:00:06.000000000Z")
    o = options({"sinceSeconds": "4", "sinceTime": "2024-05-01T10:00:08Z"}, now)
    assert o.since == "2024-05-01T10:00:08.000000000Z"
    assert timestamp(T0 + 5) == "2023-11-14T22:13:20.000000005Z"


def test_follow_reads_what_comes_until_the_container_stops(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_text("2024-05-01T10:00:00.000000000Z stdout F a\n")
    running = [True]

    async def go() -> list[bytes]:
        got = []
        async def writer() -> None:
            await asyncio.sleep(0.05)
            with open(path, "a") as f:
                f.write("2024-05-01T10:00:01.000000000Z stdout F b\n2024-05-01T10:00:01.0000")
                f.flush()
                await asyncio.sleep(0.05)
                f.write("00000Z stdout F c\n")
            running[0] = False

        async def wait(timeout: float) -> None:
            await asyncio.sleep(0.02)
        task = asyncio.create_task(writer())
        async for piece in read_logs(str(path), LogOptions(follow=True), lambda: running[0], wait):
            got.append(piece)
        await task
        return got
    pieces = asyncio.run(go())
    assert b"".join(pieces) == b"a\nb\nc\n"
    assert pieces[0] == b"a\n"   # sent before the rest was written

"""A container's output in the CRI log format, as containerd writes it (pkg/cri/io/logger.go redirectLogs).

One line per line of output: ``<RFC3339Nano timestamp> <stdout|stderr> <F|P> <text>``. A line longer than
the maximum (16 KiB, containerd's max_container_log_line_size) is cut into partial (P) pieces; what is left
without a newline when the stream closes is written as a partial line. Timestamps are UTC with nine decimals
(RFC3339NanoFixed), so they sort as text.

The pipes are read from the asyncio event loop; readers of the file (``kubectl logs -f``) wait on ``changed``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

MAX_LINE = 16 * 1024
_READ = 64 * 1024


def timestamp(ns: int | None = None) -> str:
    """RFC3339NanoFixed in UTC: 2006-01-02T15:04:05.000000000Z."""
    ns = time.time_ns() if ns is None else ns
    secs, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:09d}Z"


def parse_line(line: bytes) -> tuple[bytes, bytes] | None:
    """parseCRILog (pkg/kubelet/kuberuntime/logs/logs.go): (timestamp, content) of one line of the file, the
    newline of a partial piece dropped; None for a line that is not a CRI line of stdout or stderr."""
    try:
        ts, stream, tag, content = line.split(b" ", 3)
    except ValueError:
        return None   # not a CRI line (upstream logs the parse error and goes on)
    if stream not in (b"stdout", b"stderr"):
        return None
    if tag.split(b":")[0] == b"P" and content.endswith(b"\n"):
        content = content[:-1]
    return ts, content


class LogWriter:
    """Copies a container's stdout and stderr pipes into its log file."""

    def __init__(self, path: str, clock: Callable[[], int] = time.time_ns) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.path = path
        self._file = open(path, "ab", buffering=0)
        self._clock = clock
        self._streams: dict[int, tuple[bytes, bytearray]] = {}
        self._waiters: list[asyncio.Future[None]] = []
        self.closed = False
        # attached clients (pods/attach): each called with (stream, bytes) as the process writes them, and
        # with ("", b"") once its streams are closed
        self.taps: list[Callable[[str, bytes], None]] = []

    def attach(self, fd: int, stream: str) -> None:
        """Read ``fd`` (the read end of the pipe) from the running event loop until end of file."""
        os.set_blocking(fd, False)
        self._streams[fd] = (stream.encode(), bytearray())
        asyncio.get_running_loop().add_reader(fd, self._readable, fd)

    def _readable(self, fd: int) -> None:
        name, pending = self._streams[fd]
        try:
            data = os.read(fd, _READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            for tap in list(self.taps):
                tap(name.decode(), data)
            pending += data
            self._write_lines(name, pending, eof=False)
        else:
            self._write_lines(name, pending, eof=True)
            self._detach(fd)
        self._notify()

    def _write_lines(self, name: bytes, pending: bytearray, eof: bool) -> None:
        ts = timestamp(self._clock()).encode()
        out = bytearray()
        while pending:
            nl = pending.find(b"\n", 0, MAX_LINE + 1)
            if nl >= 0:
                out += ts + b" " + name + b" F " + pending[:nl + 1]
                del pending[:nl + 1]
            elif len(pending) >= MAX_LINE:
                out += ts + b" " + name + b" P " + pending[:MAX_LINE] + b"\n"
                del pending[:MAX_LINE]
            elif eof:
                out += ts + b" " + name + b" P " + pending + b"\n"
                pending.clear()
            else:
                break
        if out and not self._file.closed:
            self._file.write(out)

    def _detach(self, fd: int) -> None:
        try:
            asyncio.get_running_loop().remove_reader(fd)
        except RuntimeError:
            pass
        os.close(fd)
        del self._streams[fd]
        if not self._streams:
            self.close()

    def close(self) -> None:
        """Stop reading (the process's streams are closed, or the runtime goes away)."""
        for fd in list(self._streams):
            self._detach(fd)
        if not self._file.closed:
            self._file.close()
        if not self.closed:
            for tap in list(self.taps):
                tap("", b"")
        self.closed = True
        self._notify()

    async def changed(self, timeout: float) -> None:
        """Wait until something is written (or the writer closes), at most ``timeout`` seconds."""
        if self.closed:
            await asyncio.sleep(min(timeout, 0.05))   # nothing more comes: the process is ending
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            if fut in self._waiters:
                self._waiters.remove(fut)

    def _notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

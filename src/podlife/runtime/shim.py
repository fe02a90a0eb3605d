"""podlife's end of the supervisor (podlife.runtime.supervisor): start it, ask it to start and signal
processes, hear when they end. Everything here runs on the asyncio event loop and never blocks it: messages
that the socket cannot take at once wait in a queue until it can."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from podlife.runtime.supervisor import receive, send

log = logging.getLogger("podlife.runtime")


async def fd_ready(fd: int, writable: bool = False) -> None:
    """Wait until ``fd`` can be read (or written) without blocking."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    add, remove = (loop.add_writer, loop.remove_writer) if writable else (loop.add_reader, loop.remove_reader)
    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    add(fd, wake)
    try:
        await ready
    finally:
        remove(fd)


async def read_chunks(fd: int) -> AsyncIterator[bytes]:
    """What arrives on ``fd`` (a pipe, a terminal), as it comes, until end of file (for a terminal: EIO, its
    other side closed). The caller closes ``fd``."""
    os.set_blocking(fd, False)
    while True:
        await fd_ready(fd)
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            continue
        except OSError:
            return
        if not data:
            return
        yield data


class SpawnError(Exception):
    """A process that could not be started: ``what`` is exec (the program), chdir (the working directory)
    or lookup (the program is not on PATH)."""

    def __init__(self, what: str, errno: int, text: str) -> None:
        super().__init__(text)
        self.what, self.errno = what, errno


@dataclass(eq=False)
class Spawn:
    """A process asked of the supervisor: ``started`` gives its pid (or raises SpawnError), ``exited`` its
    (exit status, killing signal)."""

    ref: int
    started: asyncio.Future[int]
    exited: asyncio.Future[tuple[int, int]]
    pid: int | None = None


@dataclass
class Shim:
    journal: str
    on_lost: Callable[[], None] = lambda: None    # the supervisor went away
    namespaces: bool = False                      # containers get mount namespaces (podlife.runtime.mountns)
    _sock: socket.socket | None = None
    _proc: subprocess.Popen[bytes] | None = None
    _ready: asyncio.Future[int] | None = None
    _next_ref: int = 0
    _spawns: dict[int, Spawn] = field(default_factory=dict)
    _queue: deque[tuple[dict, list[int]]] = field(default_factory=deque)
    _stopping: bool = False
    pid: int | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "podlife.runtime.supervisor", str(theirs.fileno()), self.journal,
             *(["namespaces"] if self.namespaces else [])],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        mine.setblocking(False)
        self._sock = mine
        self._ready = loop.create_future()
        loop.add_reader(mine, self._readable)
        self.pid = await asyncio.wait_for(self._ready, 30)

    @property
    def running(self) -> bool:
        return self._sock is not None

    def spawn(self, argv: list[str], env: dict[str, str], cwd: str, container: str, main: bool,
              fds: dict[str, int], tty: bool = False, namespace: dict | None = None,
              user: dict | None = None, security: dict | None = None, program: str | None = None) -> Spawn:
        """Start a process in a new session. The descriptors in ``fds`` (stdin/stdout/stderr) become the shim's
        to close once they are passed on. ``security``: its capabilities and no_new_privs
        (podlife.runtime.capabilities); ``program``: the file to run under the name ``argv[0]``."""
        loop = asyncio.get_running_loop()
        self._next_ref += 1
        sp = Spawn(self._next_ref, loop.create_future(), loop.create_future())
        self._spawns[sp.ref] = sp
        names = list(fds)
        msg = {"op": "spawn", "ref": sp.ref, "argv": argv, "env": env, "cwd": cwd, "container": container,
               "main": main, "tty": tty, "fds": names}
        if namespace is not None or self.namespaces:
            msg["namespace"] = namespace or {}   # a main process builds it; the others join their container's
        if user is not None:
            msg["user"] = user   # {"uid", "gid", "groups"}: whom the process runs as
        if security is not None:
            msg["security"] = security
        if program is not None:
            msg["program"] = program
        self._send(msg, [fds[n] for n in names])
        return sp

    def signal(self, sp: Spawn, sig: int, group: bool = False) -> None:
        if sp.ref in self._spawns:
            self._send({"op": "signal", "ref": sp.ref, "signal": int(sig), "group": group}, [])

    def pgids(self) -> list[int]:
        return [sp.pid for sp in self._spawns.values() if sp.pid is not None]

    async def stop(self) -> None:
        """Ask the supervisor to kill what is left and end; wait for it."""
        if self._sock is None:
            return
        self._stopping = True
        self._send({"op": "shutdown"}, [])
        if self._proc is not None:
            proc = self._proc
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
        self._close()

    # ---- the socket ----------------------------------------------------------------------------------

    def _send(self, msg: dict, fds: list[int]) -> None:
        if self._sock is None:
            for fd in fds:
                os.close(fd)
            return
        self._queue.append((msg, fds))
        if len(self._queue) == 1:
            self._flush()

    def _flush(self) -> None:
        sock = self._sock
        while self._queue and sock is not None:
            msg, fds = self._queue[0]
            try:
                send(sock, msg, fds)
            except BlockingIOError:
                asyncio.get_running_loop().add_writer(sock, self._writable)
                return
            except OSError:
                self._lost()
                return
            self._queue.popleft()
            for fd in fds:
                os.close(fd)

    def _writable(self) -> None:
        if self._sock is not None:
            asyncio.get_running_loop().remove_writer(self._sock)
        self._flush()

    def _readable(self) -> None:
        while self._sock is not None:
            try:
                msg, fds = receive(self._sock)
            except BlockingIOError:
                return
            except OSError:
                msg, fds = None, []
            for fd in fds:
                os.close(fd)
            if msg is None:
                self._lost()
                return
            self._dispatch(msg)

    def _dispatch(self, msg: dict) -> None:
        op = msg.get("op")
        if op == "ready":
            if self._ready is not None and not self._ready.done():
                self._ready.set_result(msg["pid"])
            return
        sp = self._spawns.get(msg.get("ref", -1))
        if sp is None:
            return
        if op == "spawned":
            sp.pid = msg["pid"]
            sp.started.set_result(msg["pid"])
        elif op == "failed":
            del self._spawns[sp.ref]
            sp.started.set_exception(SpawnError(msg.get("what", "exec"), msg.get("errno", 0), msg.get("error", "")))
        elif op == "exited":
            del self._spawns[sp.ref]
            sp.exited.set_result((msg["code"], msg["signal"]))

    def _lost(self) -> None:
        """The supervisor is gone: kill the groups it started (it could not), fail what waits on it."""
        if self._sock is None:
            return
        for pgid in self.pgids():
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        spawns, self._spawns = self._spawns, {}
        for sp in spawns.values():
            if not sp.started.done():
                sp.started.set_exception(SpawnError("exec", 0, "the process supervisor is gone"))
            elif not sp.exited.done():
                sp.exited.set_result((0, signal.SIGKILL))
        self._close()
        if not self._stopping:
            log.error("the process supervisor exited; the container processes it ran were killed")
            self.on_lost()

    def _close(self) -> None:
        if self._sock is None:
            return
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._sock)
        loop.remove_writer(self._sock)
        self._sock.close()
        self._sock = None
        for _msg, fds in self._queue:
            for fd in fds:
                os.close(fd)
        self._queue.clear()

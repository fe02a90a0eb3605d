"""Snapshots of a running ``podlife up`` (manual clock, --ephemeral, simulated runtime): the whole state — store,
clock, the controllers' and kubelets' in-memory state (simpy generators and greenlets, which cannot be pickled),
the random generators — kept by forking.

Why fork and not replay: replaying the request log from the start costs as much wall time as the run that made
the state (seconds for a 100-pod cluster), while a fork costs the page tables (milliseconds) and restoring one is
a hand-over between two processes (bench/fixture.py measures both).

- Save: the server, holding the kernel (the clock's lock, so no run is under way), forks. The child is the
  snapshot's *holder*: paused in a blocking loop on a unix socket of its own (``NAME.sock`` in a private
  registry directory), its event loop untouched.
- Restore: the serving process stops listening and tells the holder; the holder forks again (the new child
  holds the snapshot on, so it can be restored again) and takes over: a new epoll set for the event loop it
  inherited (the old one is shared with the old server), the connections it knew of at the fork closed (their
  clients reconnect), then it acks. The listening socket is the one both inherited, so the address and the
  kubeconfig stay. The old server answers the request and exits without touching what the holders keep.
- A holder whose server is gone (``server.pid`` no longer runs) exits within a second; a server that stops
  tells every holder to exit and removes the registry.

Restoring and sending the same requests gives the same trace bytes: nothing of the model reads anything but
its own state.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import selectors
import shutil
import signal
import socket
import tempfile
from typing import Any

from aiohttp import web

from podlife.api.errors import ApiError
from podlife.apiserver.status import bad_request, not_found_path

_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_WATCHDOG = 1.0   # seconds between a holder's checks that its server still runs
_SERVER_PID = "server.pid"


async def serve(server: Any, request: web.Request, parts: list[str]) -> web.Response:
    if not parts and request.method == "GET":
        return server._json({"snapshots": listing(server), "pid": os.getpid()})   # the serving process
    _usable(server)
    if not parts and request.method == "POST":
        name = request.query.get("name", "")
        if not _NAME.match(name):
            raise bad_request(f'name: "{name}" is not a snapshot name; expected a DNS label, e.g. base')
        return server._json(save(server, name), status=201)
    if len(parts) == 2 and parts[1] == "restore" and request.method == "POST":
        return server._json(restore(server, parts[0]))
    raise not_found_path()


def _usable(server: Any) -> None:
    why = None
    if server.clock.mode != "manual":
        why = "the clock is realtime; start podlife up with --clock manual"
    elif getattr(server.cluster, "data_dir", None) is not None:
        why = "the state is kept in a data directory; start podlife up with --ephemeral"
    elif server.cluster.process_host is not None:
        why = "containers are local processes (--runtime process); snapshots need the simulated runtime"
    elif getattr(server, "listening", None) is None:
        why = "the server is not listening yet"
    if why:
        raise ApiError(409, "Conflict", f"snapshots: {why}")


def registry(server: Any) -> str:
    path: str | None = getattr(server, "snapshot_dir", None)
    if path is None:
        # 0700: only this user talks to the holders; PODLIFE_SNAPSHOT_DIR: where (the pytest plugin puts it in
        # the cluster's directory, removed whatever way the cluster ends)
        path = tempfile.mkdtemp(prefix="podlife-snap-", dir=os.environ.get("PODLIFE_SNAPSHOT_DIR") or None)
        server.snapshot_dir = path
        _write(os.path.join(path, _SERVER_PID), str(os.getpid()))
    return path


def listing(server: Any) -> list[dict[str, Any]]:
    path = getattr(server, "snapshot_dir", None)
    if path is None or not os.path.isdir(path):
        return []
    out = []
    for f in sorted(os.listdir(path)):
        if f.endswith(".json"):
            with open(os.path.join(path, f), encoding="utf-8") as fh:
                out.append(json.load(fh))
    return out


def _write(path: str, text: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _tell(path: str, message: bytes, timeout: float = 10.0) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(message)
        return s.recv(64)


def save(server: Any, name: str) -> dict[str, Any]:
    reg = registry(server)
    sock_path = os.path.join(reg, f"{name}.sock")
    if os.path.exists(sock_path):
        _drop(reg, name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(4)
    meta = {"name": name, "seconds": round(server.cluster.kernel.now, 6), "records": server.trace.total,
            "resourceVersion": server.store.resource_version}
    loop = asyncio.get_running_loop()
    pid = os.fork()
    if pid == 0:
        try:
            _let_go_of_clients(server)
            _hold(server, loop, listener, reg, name)   # returns in the process that took over serving
        except BaseException:   # noqa: BLE001 - a holder never goes on into the server's loop by mistake
            import traceback

            traceback.print_exc()
            os._exit(1)
        return meta
    listener.close()
    _write(os.path.join(reg, f"{name}.json"), json.dumps({**meta, "pid": pid}))
    reap_children()
    return meta


def restore(server: Any, name: str) -> dict[str, Any]:
    reg = registry(server)
    sock_path = os.path.join(reg, f"{name}.sock")
    meta_path = os.path.join(reg, f"{name}.json")
    if not os.path.exists(sock_path):
        raise ApiError(404, "NotFound", f'snapshot "{name}" not found')
    with open(meta_path, encoding="utf-8") as f:
        meta = json.load(f)
    server.listening.close()   # the holder listens on the same socket from its ack on
    try:
        answer = _tell(sock_path, b"restore")
    except OSError as e:
        answer = f"{e}".encode()
    server.stopping.set()   # either way this process is done: it no longer listens
    if not answer.startswith(b"ok "):
        raise ApiError(500, "InternalError", f"snapshot {name}: the holder did not take over "
                                             f"({answer.decode(errors='replace')}); the server stops")
    server.handed_over = True
    return {**meta, "restored": True, "pid": int(answer[3:])}


def _drop(reg: str, name: str) -> None:
    try:
        _tell(os.path.join(reg, f"{name}.sock"), b"exit", timeout=2.0)
    except OSError:
        pass
    for ext in (".sock", ".json"):
        try:
            os.unlink(os.path.join(reg, name + ext))
        except FileNotFoundError:
            pass


def close(server: Any) -> None:
    """The server stops: every holder exits and the registry goes (not when it handed over to a holder)."""
    reg = getattr(server, "snapshot_dir", None)
    if reg is None or getattr(server, "handed_over", False):
        return
    for f in os.listdir(reg) if os.path.isdir(reg) else ():
        if f.endswith(".sock"):
            _drop(reg, f[:-5])
    shutil.rmtree(reg, ignore_errors=True)
    reap_children()


def reap_children() -> list[int]:
    """The children of this process that have ended (holders: a snapshot replaced, restored elsewhere), reaped."""
    out: list[int] = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return out
        if pid == 0:
            return out
        out.append(pid)


def _server_alive(reg: str) -> bool:
    try:
        with open(os.path.join(reg, _SERVER_PID), encoding="utf-8") as f:
            os.kill(int(f.read()), 0)
        return True
    except (OSError, ValueError):
        return False


def _let_go_of_clients(server: Any) -> None:
    """In a new holder: the clients' connections it inherited are the server's, and a copy kept open here would
    keep them open after the server closed them (a client would wait for ever on one). Each descriptor is
    pointed at a socket that was never connected (``dup2``: the number stays valid for the event loop, which is
    not touched here: its epoll set is still the server's); the takeover closes them."""
    dead = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    for handler in server.connections():
        sock = handler.transport.get_extra_info("socket") if handler.transport is not None else None
        if sock is not None and sock.fileno() >= 0:
            os.dup2(dead.fileno(), sock.fileno())
    dead.close()


def _hold(server: Any, loop: asyncio.AbstractEventLoop, listener: socket.socket, reg: str, name: str) -> None:
    """The holder: paused until told to take over (then it returns, serving) or to exit."""
    signal.set_wakeup_fd(-1)   # the wake-up socket is the server's: a signal here must not wake it
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    listener.settimeout(_WATCHDOG)
    while True:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if not _server_alive(reg):
                os._exit(0)
            continue
        conn.settimeout(10.0)
        try:
            message = conn.recv(64)
        except OSError:
            conn.close()
            continue
        if message != b"restore":
            os._exit(0)
        child = os.fork()
        if child == 0:
            conn.close()   # the new holder keeps the snapshot
            continue
        listener.close()
        with open(os.path.join(reg, f"{name}.json"), encoding="utf-8") as f:
            meta = json.load(f)
        _write(os.path.join(reg, f"{name}.json"), json.dumps({**meta, "pid": child}))
        _write(os.path.join(reg, _SERVER_PID), str(os.getpid()))
        _take_over(server, loop)
        conn.sendall(f"ok {os.getpid()}".encode())
        conn.close()
        return


def _take_over(server: Any, running: asyncio.AbstractEventLoop) -> None:
    """This process serves from here: its own epoll set with what the loop had registered at the fork, a new
    wake-up pipe and signal handlers, and the clients' connections of the fork closed (they are the old
    server's; the old server's own close with it)."""
    # asyncio forgets the running loop in a forked process (it keeps the pid it was set in): this one runs it
    asyncio.events._set_running_loop(running)
    loop: Any = running
    old = loop._selector   # asyncio's selector loop: no public way to give a forked loop its own epoll
    new = selectors.DefaultSelector()
    for key in list(old.get_map().values()):
        new.register(key.fileobj, key.events, key.data)
    loop._selector = new
    old.close()
    handlers = {sig: (h._callback, h._args) for sig, h in loop._signal_handlers.items()}
    for sig in handlers:
        loop.remove_signal_handler(sig)
    loop._close_self_pipe()
    loop._make_self_pipe()
    for sig, (callback, args) in handlers.items():
        loop.add_signal_handler(sig, callback, *args)
    for handler in list(server.connections()):
        transport = handler.transport
        if transport is not None:
            transport.abort()

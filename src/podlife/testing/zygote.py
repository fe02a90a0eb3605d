"""A warm ``podlife up``: one process per test session that has imported the API server and the model (and built
a cluster once, so every lazily imported module is loaded), and forks a ``podlife up`` on request. A fixture's
cluster then starts in the time its cluster takes to build, not the interpreter's start and imports (seconds).

Protocol, on the unix socket given as the argument: one JSON line ``{"argv": [...], "log": PATH, "cwd": DIR,
"env": {...}}``;
the answer is ``{"pid": N}``. The child is the leader of a session of its own (its snapshots' holders are in its
process group, so the whole cluster is stopped with one signal). The zygote exits when its standard input closes:
the test process that started it is gone, however it ended (killed too); the clusters it made that still run
are then killed with it.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import socket
import sys


def _warm() -> None:
    import podlife.cli  # noqa: F401
    from podlife.apiserver import server, up  # noqa: F401

    up.build_cluster(up.UpConfig(clock="manual"))


def _child(request: dict[str, object]) -> None:
    """In the forked child: become ``podlife up`` with the request's arguments; never returns."""
    code: object = 1
    try:
        os.setsid()
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        log = os.open(str(request["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        os.chdir(str(request["cwd"]))
        os.environ.update({str(k): str(v) for k, v in dict(request.get("env") or {}).items()})  # type: ignore[call-overload]
        from podlife.cli import entry

        sys.argv = ["podlife", *[str(a) for a in request["argv"]]]   # type: ignore[attr-defined]
        entry()
        code = 0
    except SystemExit as e:
        code = e.code
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)


def main(path: str) -> None:
    from podlife.apiserver.snapshots import reap_children

    _warm()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    listener.listen(16)
    os.replace(path + ".tmp", path)   # the socket appears once the zygote is warm
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    sel.register(sys.stdin, selectors.EVENT_READ)
    spawned: dict[int, str] = {}   # pid (and process group) -> the cluster's directory
    while True:
        for pid in reap_children():   # clusters that ended: forgotten (their group's number may be another's later)
            spawned.pop(pid, None)
        for key, _ in sel.select(timeout=1.0):
            if key.fileobj is not listener:
                if not os.read(sys.stdin.fileno(), 4096):
                    _kill(spawned)   # the test process is gone: nothing it started may outlive it
                    shutil.rmtree(os.path.dirname(path), ignore_errors=True)
                    return
                continue
            conn, _ = listener.accept()
            with conn:
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                request = json.loads(data)
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    listener.close()
                    conn.close()
                    _child(request)
                spawned[pid] = os.path.dirname(str(request["log"]))
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")


def _kill(groups: dict[int, str]) -> None:
    """SIGKILL to each cluster's process group (its server and snapshot holders) and its directory removed; a
    group already gone, or stopped by its fixture's teardown, is skipped."""
    for pgid, workdir in groups.items():
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])

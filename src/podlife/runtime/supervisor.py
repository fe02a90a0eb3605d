"""The process runtime's supervisor: one small process that starts, signals and reaps every process of the
containers of ``podlife up --runtime process``, and kills them all when podlife goes away.

It plays the part containerd's shims play for a node: it is the parent (and, as a child subreaper, the
adoptive parent) of every container process, so it sees every exit; it runs no threads, so starting a process
from it is safe. podlife talks to it over one SOCK_SEQPACKET socket (a JSON document per message, the pipes
for a process's output passed along with SCM_RIGHTS). When that socket reaches end of file — podlife exited,
crashed or was killed with SIGKILL — the supervisor SIGKILLs every process group it started and every
process left under it, then exits. Why not PR_SET_PDEATHSIG on each container process instead: the parent-death
signal reaches only that one process (not the children a shell starts), fires when the *thread* that forked
it exits, and needs code between fork and exec in podlife's multi-threaded server. The supervisor kills whole
groups and orphans, and its own children also carry PR_SET_PDEATHSIG, so that even a supervisor killed
with SIGKILL takes the container processes with it (and podlife, seeing the socket close, kills the groups).

Every process it starts is recorded in a journal file (``spawn PID PGID STARTTIME``, ``exit PID``; rewritten with
the live ones alone every COMPACT_AFTER lines, so exec probes do not make it grow without end), so a ``podlife
up`` started again on the same data directory finds what a lost supervisor left behind (``leftovers``).

Requests (podlife → supervisor), answers and events (supervisor → podlife):

- ``{"op": "spawn", "ref": R, "argv": [...], "env": {...}, "cwd": DIR, "container": ID, "main": BOOL,
  "tty": BOOL, "fds": ["stdin"?, "stdout", "stderr"]}`` with the listed file descriptors attached: a process in a
  new session (its own process group); with ``tty`` its stdin is a terminal and becomes its controlling one.
  → ``{"op": "spawned", "ref": R, "pid": PID}`` or
  ``{"op": "failed", "ref": R, "error": TEXT, "errno": N, "what": "exec" | "chdir"}``. When the ``main`` process
  of a container exits, everything else of that container (its group, its exec'd commands) is killed, as a
  container's processes die with its PID 1. With ``"namespace": {"mounts": [...], "scratch": DIR, "tmpfs": [...]}``
  the container's main process gets a mount namespace of its own (podlife.runtime.mountns), with ``"hostname"``
  a UTS namespace too (podlife.runtime.utsns), and its other processes join them. A ``netns`` descriptor in
  ``fds`` is a pod's network namespace (podlife.runtime.podnet), which the process joins first; an ``ipcns`` one
  the pod's IPC namespace (podlife.runtime.ipcns), joined next.
- ``{"op": "signal", "ref": R, "signal": N, "group": BOOL}``: to the process, or to its whole group.
- ``{"op": "exited", "ref": R, "pid": PID, "code": N, "signal": N}``: a process ended (``code`` is the
  exit status, ``signal`` the signal that killed it, or 0).
"""

from __future__ import annotations

import array
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import socket
import sys
import termios
import time
from dataclasses import dataclass, field

from podlife.runtime import capabilities, ipcns, mountns, utsns

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_MESSAGE = 1 << 20
MAX_FDS = 5   # stdin, stdout, stderr, and the pod's network and IPC namespaces
COMPACT_AFTER = 10_000
_LIBC = ctypes.CDLL(None, use_errno=True)


def send(sock: socket.socket, msg: dict, fds: list[int] = ()) -> None:  # type: ignore[assignment]
    data = json.dumps(msg, separators=(",", ":")).encode()
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """One message and the descriptors that came with it; (None, []) at end of file."""
    fds = array.array("i")
    data, ancdata, _flags, _addr = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        return None, list(fds)
    return json.loads(data), list(fds)


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22): with the pid, it names
    one process, so a pid the kernel has since given to another is not mistaken for it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2:].split()[19].decode()


def running_supervisor(journal: str) -> int | None:
    """The pid of the supervisor that keeps this journal, if it still runs (another podlife up uses it)."""
    try:
        with open(journal) as f:
            first = f.readline().split()
    except OSError:
        return None
    if first[:1] == ["supervisor"] and len(first) == 3 and first[1].isdigit() and \
            start_time(int(first[1])) == first[2]:
        return int(first[1])
    return None


def leftovers(journal: str) -> list[tuple[int, int]]:
    """(pid, pgid) of the processes a journal records as started and not exited that still run."""
    alive: dict[int, tuple[int, str]] = {}
    try:
        with open(journal) as f:
            for line in f:
                parts = line.split()
                if parts[:1] == ["spawn"] and len(parts) == 4:
                    alive[int(parts[1])] = (int(parts[2]), parts[3])
                elif parts[:1] == ["exit"] and len(parts) == 2:
                    alive.pop(int(parts[1]), None)
    except (OSError, ValueError):
        return []
    return [(pid, pgid) for pid, (pgid, st) in alive.items() if start_time(pid) == st]


# ---- the supervisor process ------------------------------------------------------------------------------


class Journal:
    def __init__(self, path: str, compact_after: int = COMPACT_AFTER) -> None:
        self.path = path
        self.compact_after = compact_after
        self.header = f"supervisor {os.getpid()} {start_time(os.getpid())}"
        self.live: dict[int, str | None] = {}
        self._file = open(path, "a")
        self._lines = 0
        self._write(self.header)

    def started(self, pid: int) -> None:
        self.live[pid] = start_time(pid)
        self._write(f"spawn {pid} {pid} {self.live[pid]}")

    def ended(self, pid: int) -> None:
        if pid in self.live:
            del self.live[pid]
            self._write(f"exit {pid}")

    def close(self) -> None:
        self._write("stopped")
        self._file.close()

    def _write(self, line: str) -> None:
        self._file.write(line + "\n")
        self._file.flush()
        self._lines += 1
        if self._lines >= self.compact_after:
            tmp = self.path + ".tmp"
            with open(tmp, "w") as f:
                f.write("".join(f"{line}\n" for line in [self.header] + [
                    f"spawn {pid} {pid} {st}" for pid, st in self.live.items()]))
            os.replace(tmp, self.path)
            self._file.close()
            self._file = open(self.path, "a")
            self._lines = 0


@dataclass
class Child:
    ref: int
    pid: int
    container: str
    main: bool


@dataclass
class Supervisor:
    sock: socket.socket
    journal: Journal
    children: dict[int, Child] = field(default_factory=dict)          # pid → child
    by_ref: dict[int, Child] = field(default_factory=dict)
    by_container: dict[str, dict[int, None]] = field(default_factory=dict)   # container → pids
    ended: set[str] = field(default_factory=set)   # containers whose main process has exited
    main_pid: dict[str, int] = field(default_factory=dict)   # container → its main process (its namespace)

    def spawn(self, msg: dict, fds: list[int]) -> None:
        ref = msg["ref"]
        names = msg.get("fds") or []
        given = dict(zip(names, fds))
        if not msg.get("main") and msg.get("container", "") in self.ended:
            for fd in fds:
                os.close(fd)   # nothing runs in a container whose main process has ended
            send(self.sock, {"op": "failed", "ref": ref, "error": "container is not running", "errno": errno.ESRCH,
                             "what": "exec"})
            return
        container = msg.get("container", "")
        ns = msg.get("namespace")
        join = None
        if ns is not None and not msg.get("main"):
            join = self.main_pid.get(container)
        try:
            pid = self._fork_exec(msg["argv"], msg.get("env") or {}, msg.get("cwd") or "/", given,
                                  bool(msg.get("tty")), ns if msg.get("main") else None, join, msg.get("user"),
                                  msg.get("security"), msg.get("program"))
        except _StartError as e:
            send(self.sock, {"op": "failed", "ref": ref, "error": e.strerror, "errno": e.errno, "what": e.what})
            return
        finally:
            for fd in fds:
                os.close(fd)
        child = Child(ref, pid, msg.get("container", ""), bool(msg.get("main")))
        self.children[pid] = child
        self.by_ref[ref] = child
        self.by_container.setdefault(child.container, {})[pid] = None
        if child.main:
            self.main_pid[child.container] = pid
        self.journal.started(pid)
        send(self.sock, {"op": "spawned", "ref": ref, "pid": pid})

    def _fork_exec(self, argv: list[str], env: dict[str, str], cwd: str, fds: dict[str, int], tty: bool,
                   ns: dict | None = None, join: int | None = None, user: dict | None = None,
                   security: dict | None = None, program: str | None = None) -> int:
        """fork, then in the child: a new session, the parent-death signal, the given stdio (with ``tty``, its
        stdin is a terminal that becomes the session's controlling terminal), the container's mount namespace
        (``ns``: build it; ``join``: the pid of the process whose namespace to enter), its capabilities and
        no_new_privs (``security``), its user, the working directory, exec (of ``program`` when given, under
        the name ``argv[0]``). An error before exec comes back through a close-on-exec pipe, as subprocess
        does."""
        if ns:
            for path in ns.get("tmpfs") or ():
                try:
                    mountns.memory_medium(path)
                except OSError as e:
                    raise _StartError(e.errno or errno.EPERM, "mount") from e
        r, w = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:   # the child: nothing but system calls until exec
            what = "exec"
            try:
                os.close(r)
                os.setsid()
                _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if os.getppid() != parent:
                    os._exit(137)   # the supervisor died before the signal was armed
                null = os.open(os.devnull, os.O_RDWR)
                for target, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
                    os.dup2(fds.get(name, null), target)
                if tty:
                    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
                for sig in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
                    signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, [])
                if "netns" in fds:   # the pod's network namespace (podlife.runtime.podnet), joined by every process
                    what = "netns"
                    mountns.check(_LIBC.setns(fds["netns"], CLONE_NEWNET), "setns net")
                    os.close(fds["netns"])
                if "ipcns" in fds:   # the pod's IPC namespace (podlife.runtime.ipcns), likewise
                    what = "ipcns"
                    ipcns.join(fds["ipcns"])
                    os.close(fds["ipcns"])
                what = "mount"
                if ns:
                    mountns.enter(ns["mounts"], ns["scratch"], ns.get("readOnlyRoot", True))
                    if ns.get("hostname"):
                        utsns.enter(ns["hostname"])
                elif join is not None:
                    utsns.join(join)   # the host's own for a container without one: a no-op
                    mountns.join(join)
                if security is not None:
                    what = "capabilities"
                    capabilities.apply(security)
                if user is not None:   # runc's finalizeNamespace: groups, then gid, then uid
                    what = "setuid"
                    os.setgroups(user.get("groups") or [])
                    os.setgid(user["gid"])
                    os.setuid(user["uid"])
                what = "lookup"
                program = program or _resolve(argv[0], env.get("PATH", os.defpath))
                what = "chdir"
                os.chdir(cwd)
                what = "exec"
                os.execve(program, argv, env)
            except OSError as e:
                what = getattr(e, "what", what)
                os.write(w, f"{what}:{e.errno or 0}:{e.strerror or ''}".encode())
            finally:
                os._exit(127)
        os.close(w)
        with os.fdopen(r, "rb") as pipe:
            report = pipe.read()
        if report:
            what, num, text = report.decode(errors="replace").split(":", 2)
            os.waitpid(pid, 0)
            raise _StartError(int(num), what, text)
        return pid

    def signal(self, msg: dict) -> None:
        child = self.by_ref.get(msg["ref"])
        if child is None:
            return   # already reaped: its pid may belong to another process now
        try:
            if msg.get("group"):
                os.killpg(child.pid, msg["signal"])
            else:
                os.kill(child.pid, msg["signal"])
        except ProcessLookupError:
            pass

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is None:
                continue   # an orphan that was adopted (child subreaper)
            self.by_ref.pop(child.ref, None)
            mine = self.by_container.get(child.container, {})
            mine.pop(pid, None)
            self.journal.ended(pid)
            if child.main:
                # the container's init is gone: everything else in it dies (its group, its exec'd commands)
                self.ended.add(child.container)
                self.main_pid.pop(child.container, None)
                for p in [pid, *mine]:
                    _killpg(p, signal.SIGKILL)
            if not mine:
                self.by_container.pop(child.container, None)
            code = os.waitstatus_to_exitcode(status)
            send(self.sock, {"op": "exited", "ref": child.ref, "pid": pid, "code": max(code, 0),
                             "signal": -code if code < 0 else 0})

    def kill_everything(self) -> None:
        """SIGKILL every group started and every process left under the supervisor, and reap them."""
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            for pid in [*self.children, *_children(os.getpid())]:
                _killpg(pid, signal.SIGKILL)
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                while True:
                    pid, _status = os.waitpid(-1, os.WNOHANG)
                    if pid == 0:
                        break
                    if self.children.pop(pid, None) is not None:
                        self.journal.ended(pid)
            except ChildProcessError:
                break
            time.sleep(0.01)


class _StartError(OSError):
    def __init__(self, num: int, what: str, text: str = "") -> None:
        super().__init__(num, text or os.strerror(num))
        self.what = what


def _resolve(program: str, path: str) -> str:
    """execvp's search, over the container's PATH rather than the supervisor's."""
    if "/" in program:
        return program
    for d in path.split(":"):
        candidate = os.path.join(d or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise _StartError(errno.ENOENT, "lookup")


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the orphans adopted as child subreaper included)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2:].split()[1]) == pid:
                out.append(int(entry))
    return out


def main(argv: list[str]) -> int:
    fd, journal_path = int(argv[1]), argv[2]
    sock = socket.socket(fileno=fd)
    # not podlife's terminal's Ctrl-C: podlife decides when containers stop
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    if len(argv) > 3 and argv[3] == "namespaces":
        # a mount namespace of the supervisor's own: the tmpfs of memory-medium emptyDirs go with it
        mountns.own_namespace()
        # its copies of the pod network namespaces' bind mounts would keep those namespaces alive after
        # ``ip netns del`` (podlife.runtime.podnet): they go from here
        mountns.detach_under("/run/netns")
    sup = Supervisor(sock, Journal(journal_path))
    try:
        send(sock, {"op": "ready", "pid": os.getpid()})
        _serve(sup, sock, wake_r)
    except OSError:
        pass   # podlife is gone (the socket broke while answering)
    finally:
        sup.kill_everything()
        sup.journal.close()
    return 0


def _serve(sup: Supervisor, sock: socket.socket, wake: int) -> None:
    while True:
        try:
            ready, _, _ = select.select([sock.fileno(), wake], [], [])
        except InterruptedError:
            continue
        if wake in ready:
            try:
                while os.read(wake, 512):
                    pass
            except BlockingIOError:
                pass
            sup.reap()
        if sock.fileno() in ready:
            msg, fds = receive(sock)
            if msg is None:
                return   # podlife is gone: end of file
            op = msg.get("op")
            if op == "spawn":
                sup.spawn(msg, fds)
            elif op == "signal":
                sup.signal(msg)
            elif op == "shutdown":
                return


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""The pod's IPC namespace and the pod's sysctls, as containerd and runc make them for a sandbox.

containerd (pkg/cri/server/sandbox_run.go, NamespaceMode POD) gives every sandbox that is not hostIPC an IPC
namespace of its own, which all the pod's containers share; a hostIPC pod shares the node's. The kubelet hands the
pod's sysctls to the sandbox (kuberuntime_sandbox.go generatePodSandboxLinuxConfig: Linux.Sysctls) and runc writes
each to /proc/sys inside the sandbox's namespaces (libcontainer/standard_init_linux.go, writeSystemProperty):
the IPC ones (kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*) land in the IPC namespace, net.* in the network
namespace, so every container of the pod sees them.

Here a short-lived thread of podlife does it (namespaces belong to a thread, so the rest of podlife stays where it
is): unshare(CLONE_NEWIPC), write the IPC sysctls, open /proc/thread-self/ns/ipc. That descriptor keeps the
namespace until the sandbox stops; every process of the pod joins it in the supervisor's child (setns). Net
sysctls are written the same way from a thread that joins the pod's network namespace (podlife.runtime.podnet).

ctypes, as podlife.runtime.mountns: Python 3.11 has no os.unshare/os.setns.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from typing import TypeVar

from podlife.api.sysctlnames import proc_path
from podlife.runtime.mountns import check

CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)
T = TypeVar("T")


class SysctlError(OSError):
    """A sysctl runc could not write: its message is runc's (``write sysctl key K: open /proc/sys/...: ...``)."""


def available() -> str | None:
    """None when pods can have IPC namespaces here, else why not (said once at start)."""
    pid = os.fork()
    if pid == 0:   # try it in a child that exits at once
        os._exit(0 if _LIBC.unshare(CLONE_NEWIPC) == 0 else 1)
    _pid, status = os.waitpid(pid, 0)
    return None if os.waitstatus_to_exitcode(status) == 0 else "unshare(CLONE_NEWIPC) is not permitted here"


def _in_thread(work: Callable[[], T]) -> T:
    """``work`` in a thread of its own that ends with it, taking whatever namespaces it entered along."""
    out: list[T] = []
    err: list[BaseException] = []

    def run() -> None:
        try:
            out.append(work())
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            err.append(e)
    thread = threading.Thread(target=run, name="podlife-namespace", daemon=True)
    thread.start()
    thread.join()
    if err:
        raise err[0]
    return out[0]


def write(sysctls: list[tuple[str, str]]) -> None:
    """runc's writeSystemProperty for each, in the calling thread's namespaces."""
    for name, value in sysctls:
        path = proc_path(name)
        op = "open"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC)
            op = "write"
            try:
                os.write(fd, value.encode())
            finally:
                os.close(fd)
        except OSError as e:   # Go's *PathError text: "open /proc/sys/...: no such file or directory"
            raise SysctlError(e.errno, f"write sysctl key {name}: {op} {path}: {_go_text(e)}") from None


def _go_text(e: OSError) -> str:
    return (e.strerror or "").lower() if e.strerror else str(e)


def make(sysctls: list[tuple[str, str]]) -> int:
    """A new IPC namespace with ``sysctls`` written in it; returns a descriptor that holds it."""
    def work() -> int:
        check(_LIBC.unshare(CLONE_NEWIPC), "unshare ipc")
        write(sysctls)
        return os.open("/proc/thread-self/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
    return _in_thread(work)


def write_in_netns(path: str, sysctls: list[tuple[str, str]]) -> None:
    """``sysctls`` written in the network namespace bound at ``path``."""
    def work() -> None:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            check(_LIBC.setns(fd, CLONE_NEWNET), "setns net")
        finally:
            os.close(fd)
        write(sysctls)
    _in_thread(work)


def join(fd: int) -> None:
    """Enter the pod's IPC namespace (in the supervisor's child, before exec)."""
    check(_LIBC.setns(fd, CLONE_NEWIPC), "setns ipc")

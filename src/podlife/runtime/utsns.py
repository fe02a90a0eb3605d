"""The pod's hostname: a UTS namespace of the container's own, made between fork and exec in the supervisor's
child right after its mount namespace (podlife.runtime.mountns), with the hostname the kubelet gives the
sandbox (kuberuntime_sandbox.go generatePodSandboxConfig: PodSandboxConfig.Hostname; containerd then gives the
sandbox a UTS namespace and sets it). One per container rather than per pod: the containers of a pod get the
same name, so ``hostname`` prints what it prints in upstream's shared one. A hostNetwork pod shares the node's
(containerd: NamespaceMode NODE), as here: it gets none. Exec'd processes join their container's.

ctypes, as mountns: Python 3.11 has no os.unshare/os.setns nor a sethostname.
"""

from __future__ import annotations

import ctypes
import os

from podlife.runtime.mountns import check, setns

CLONE_NEWUTS = 0x04000000
_LIBC = ctypes.CDLL(None, use_errno=True)


def available() -> str | None:
    """None when containers can have UTS namespaces here, else why not (said once at start)."""
    pid = os.fork()
    if pid == 0:   # try it in a child that exits at once
        name = b"podlife-probe"
        ok = _LIBC.unshare(CLONE_NEWUTS) == 0 and _LIBC.sethostname(name, len(name)) == 0
        os._exit(0 if ok else 1)
    _pid, status = os.waitpid(pid, 0)
    return None if os.waitstatus_to_exitcode(status) == 0 else "unshare(CLONE_NEWUTS) is not permitted here"


def enter(hostname: str) -> None:
    """A UTS namespace of the calling process's own, named ``hostname``."""
    check(_LIBC.unshare(CLONE_NEWUTS), "unshare uts")
    name = hostname.encode()
    check(_LIBC.sethostname(name, len(name)), "sethostname")


def join(pid: int) -> None:
    """Enter the UTS namespace of the process ``pid`` (its container's main process)."""
    setns(pid, "uts", CLONE_NEWUTS, "setns uts")

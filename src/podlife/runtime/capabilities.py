"""A container process's capabilities and no_new_privs, as containerd's CRI plugin asks runc for them.

Which: a container that is not privileged gets containerd's default set (oci/spec.go defaultUnixCaps), with the
securityContext's ``capabilities.add`` and ``drop`` applied (pkg/cri/opts/spec_linux.go WithCapabilities: "ALL"
in add grants every capability, in drop removes every one not added); a privileged one keeps all
(WithPrivileged). Only an explicit ``allowPrivilegeEscalation: false`` sets no_new_privs
(pkg/securitycontext/util.go AddNoNewPrivileges, which generateLinuxContainerConfig passes on as NoNewPrivs).

How: in the child between fork and exec, before it switches user (runc's finalizeNamespace order): every
capability outside the set is dropped from the bounding set (so a root process's execve cannot regain it) and
from the inheritable and ambient sets, then no_new_privs. Needs CAP_SETPCAP: only when podlife runs as root.
"""

from __future__ import annotations

import ctypes
import os

from podlife.api.meta import Obj

PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
NAMES = ("CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
         "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER",
         "SYS_MODULE", "SYS_RAWIO", "SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
         "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE", "AUDIT_CONTROL", "SETFCAP",
         "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM", "BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF",
         "CHECKPOINT_RESTORE")   # linux/capability.h, in number order
# containerd oci/spec.go defaultUnixCaps
DEFAULT = ("CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID", "SETUID", "SETFCAP", "SETPCAP",
           "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE")
_LIBC = ctypes.CDLL(None, use_errno=True)


def _name(cap: str) -> str:
    return cap.upper().removeprefix("CAP_")


def security(spec: Obj) -> dict | None:
    """{"capabilities": [numbers kept] or None for all, "noNewPrivs": bool} for the container ``spec``; None
    when podlife is not root (it cannot take capabilities away from its own user's processes)."""
    if os.geteuid() != 0:
        return None
    sc = spec.get("securityContext") or {}
    privileged = bool(sc.get("privileged"))
    caps: list[int] | None = None
    if not privileged:
        add = {_name(c) for c in (sc.get("capabilities") or {}).get("add") or ()}
        drop = {_name(c) for c in (sc.get("capabilities") or {}).get("drop") or ()}
        kept = set(NAMES) if "ALL" in add else set(DEFAULT) | (add & set(NAMES))
        if "ALL" in drop:
            kept = add & set(NAMES)
        kept -= drop
        caps = sorted(NAMES.index(n) for n in kept)
    return {"capabilities": caps, "noNewPrivs": sc.get("allowPrivilegeEscalation") is False}


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return len(NAMES) - 1


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def apply(sec: dict) -> None:
    """In the child, before it switches user: the bounding, inheritable and ambient sets cut to the container's
    capabilities, then no_new_privs. Raises OSError."""
    caps = sec.get("capabilities")
    if caps is not None:
        keep = set(caps)
        for n in range(_last_cap() + 1):
            if n not in keep and _LIBC.prctl(PR_CAPBSET_DROP, n, 0, 0, 0) != 0:
                num = ctypes.get_errno()
                raise OSError(num, f"drop capability {n}: {os.strerror(num)}")
        _LIBC.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)   # absent before 4.3: nothing to clear
        header, data = _Header(_LINUX_CAPABILITY_VERSION_3, 0), (_Data * 2)()
        if _LIBC.capget(ctypes.byref(header), data) == 0:
            mask = sum(1 << n for n in keep)
            for i in range(2):
                data[i].inheritable &= (mask >> (32 * i)) & 0xFFFFFFFF
            _LIBC.capset(ctypes.byref(header), data)
    if sec.get("noNewPrivs") and _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        num = ctypes.get_errno()
        raise OSError(num, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(num)}")

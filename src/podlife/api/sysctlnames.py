"""Sysctl names as the kubelet and the runtime read them: the dotted form of a name written with slashes, and the
kernel namespace a sysctl belongs to (pkg/kubelet/sysctl/namespace.go; from 1.29
component-helpers/node/util/sysctl)."""

from __future__ import annotations

from typing import Literal

Namespace = Literal["ipc", "net", ""]

# namespace.go: namespaces (exact names) and prefixNamespaces
_EXACT: dict[str, Namespace] = {"kernel.sem": "ipc"}
_PREFIXES: tuple[tuple[str, Namespace], ...] = (("kernel.shm", "ipc"), ("kernel.msg", "ipc"), ("fs.mqueue.", "ipc"),
                                                ("net.", "net"))


def dotted(name: str) -> str:
    """util.go convertSysctlVariableToDotsSeparator (sysctl.d(5)): when the first separator is a slash, slashes
    and dots swap places (``net/ipv4/conf/eth0.100/rp_filter`` → ``net.ipv4.conf.eth0/100.rp_filter``)."""
    first = next((ch for ch in name if ch in "./"), ".")
    return name if first == "." else name.translate(str.maketrans("./", "/."))


def namespaced_by(name: str) -> Namespace:
    """NamespacedBy: "ipc", "net", or "" when the sysctl is not known to be namespaced."""
    if name in _EXACT:
        return _EXACT[name]
    return next((ns for prefix, ns in _PREFIXES if name.startswith(prefix)), "")


def proc_path(name: str) -> str:
    """Where runc writes a sysctl (libcontainer/rootfs_linux.go writeSystemProperty): /proc/sys with the dotted
    name's dots as directories."""
    return "/proc/sys/" + dotted(name).replace(".", "/")

"""The interface that carries Service addresses in the host's network namespace, as kube-proxy's IPVS mode binds
every ClusterIP to the dummy interface ``kube-ipvs0`` (pkg/proxy/ipvs/proxier.go: DefaultDummyDevice,
syncService's netlinkHandle.EnsureAddressBind) so that the machine accepts packets for them.

Each ``podlife up`` has its own: ``plsvc<pid>`` (two instances at once never share one), a dummy device, or where
the kernel has no dummy driver a bridge without ports (it carries local addresses the same way). Left down, as
kube-ipvs0 is: the kernel still adds a local route for each address. Removed at exit; one whose podlife up is
no longer running is removed at the next start of any podlife up. Changed with iproute2's ``ip``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

PREFIX = "plsvc"
_NAME = re.compile(rf"^\d+:\s+({PREFIX}(\d+))[:@]")


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftovers() -> list[str]:
    """Remove the interfaces of podlife ups that are no longer running; their names."""
    if shutil.which("ip") is None:
        return []
    removed = []
    for line in _ip("-o", "link", "show").stdout.splitlines():
        m = _NAME.match(line)
        if m and int(m.group(2)) != os.getpid() and not _alive(int(m.group(2))):
            if _ip("link", "del", m.group(1)).returncode == 0:
                removed.append(m.group(1))
    return removed


class ServiceLink:
    """This process's interface and the addresses on it."""

    def __init__(self) -> None:
        self.name = f"{PREFIX}{os.getpid()}"
        self.addresses: set[str] = set()

    def create(self) -> str | None:
        """Make the interface; None, or why it cannot be made (no ``ip``, no CAP_NET_ADMIN, …)."""
        if shutil.which("ip") is None:
            return "iproute2's ip is not installed"
        _ip("link", "del", self.name)   # this pid's own, from a process that had it before
        for kind in ("dummy", "bridge"):
            r = _ip("link", "add", self.name, "type", kind)
            if r.returncode == 0:
                return None
        return r.stderr.strip() or f"ip link add {self.name} failed"

    def add(self, ip: str) -> str | None:
        """Bind an address (a /32 or /128, as kube-ipvs0's); None, or ip's error."""
        if ip in self.addresses:
            return None
        bits = 128 if ":" in ip else 32
        r = _ip("addr", "add", f"{ip}/{bits}", "dev", self.name)
        if r.returncode != 0 and "File exists" not in r.stderr:
            return r.stderr.strip()
        self.addresses.add(ip)
        return None

    def remove(self, ip: str) -> None:
        if ip in self.addresses:
            self.addresses.discard(ip)
            _ip("addr", "del", f"{ip}/{128 if ':' in ip else 32}", "dev", self.name)

    def delete(self) -> None:
        """Remove the interface and with it every address."""
        _ip("link", "del", self.name)
        self.addresses.clear()


def exists(name: str) -> bool:
    return _ip("link", "show", name).returncode == 0

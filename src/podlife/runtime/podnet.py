"""Pod network namespaces for the process runtime, made as containerd and the CNI bridge plugin make them.

containerd (pkg/cri/server/sandbox_run.go RunPodSandbox) gives every sandbox that is not hostNetwork a network
namespace of its own, bind-mounted under /run/netns (pkg/netns: ``cni-<uuid>``) so it outlives no process, and
asks CNI to set it up; the bridge plugin (plugins/main/bridge/bridge.go cmdAdd) puts a veth pair between the
namespace's ``eth0`` and the node's bridge (``cni0``), gives the bridge the gateway address of the node's podCIDR
(``isGateway``), and host-local IPAM an address of that range to ``eth0`` with a default route via the gateway.
Every container of the pod joins that namespace; StopPodSandbox tears it down (sandbox_stop.go
teardownPodNetwork, then the namespace is removed).

Here, one ``podlife up`` owns an instance number ``k`` and the /16 ``10.<octet k>.0.0/16`` (node i: the /24
``10.<octet>.i.0/24``); node i's bridge is ``pl<k>-br<i>`` with ``.1`` of its range (also the node's address),
a pod's namespace ``podlife<k>-<pid>.<start time>-<sandbox id>`` and its host-side veth ``pl<k>-<sandbox id>``.
The bridges carry the owner in their alias (``podlife:<pid>:<start time>``): a later instance removes what a dead
owner left. Namespace names carry the owner too: /run/netns is the machine's, shared by podlife ups that run in
network namespaces of their own (whose bridges, and instance numbers, are out of each other's sight), and sandbox
ids repeat between clusters of the same seed.
Pods of different nodes reach each other through the host, which routes between the bridges: forwarding is
switched on for these bridges alone (the bridge plugin switches on net.ipv4.ip_forward for the whole machine;
per-interface forwarding is enough for traffic entering a bridge and leaves the machine's setting alone).

``ip`` (iproute2) in batch mode does the work: two processes per sandbox set-up (host side, then inside the
namespace) and one per tear-down; no new dependency (pyroute2 is not installed here) and no netlink code of ours.
"""

from __future__ import annotations

import asyncio
import ctypes
import ipaddress
import json
import os
import re
import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass, field

from podlife.runtime.mountns import check
from podlife.runtime.network import dial_error
from podlife.runtime.supervisor import start_time

CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)   # ctypes, as podlife.runtime.mountns: Python 3.11 has no os.setns

NETNS_DIR = "/run/netns"
# second octets of the candidate /16s (10.244.0.0/16 is the pod range kubeadm's documentation and flannel use);
# clear of 10.96.0.0/12 (kubeadm's Service range) and 10.0.0.0/24 (kube-apiserver's default Service range)
OCTETS = tuple(range(244, 256)) + tuple(range(200, 244))
_BRIDGE = re.compile(r"^pl(\d+)-br(\d+)$")


def _run(args: list[str], script: str) -> tuple[int, str]:
    proc = subprocess.run(["ip", *args], input=script, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stderr.strip()


async def _run_async(args: list[str], script: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec("ip", *args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.PIPE)
    _out, err = await proc.communicate(script.encode())
    return proc.returncode or 0, err.decode(errors="replace").strip()


def _json(args: list[str]) -> list[dict]:
    proc = subprocess.run(["ip", "-j", *args], capture_output=True, text=True, check=False)
    try:
        return json.loads(proc.stdout) if proc.returncode == 0 and proc.stdout.strip() else []
    except ValueError:
        return []


def _owner_alive(alias: str) -> bool | None:
    """Whether the podlife up named in a bridge's alias still runs; None: not a podlife alias."""
    parts = alias.split(":")
    if len(parts) != 3 or parts[0] != "podlife" or not parts[1].isdigit():
        return None
    return start_time(int(parts[1])) == parts[2]


def _netns_owner_alive(name: str, tag: int) -> bool:
    """Whether the podlife up named in namespace ``name`` (``podlife<tag>-<pid>.<start time>-…``) still runs."""
    pid, dot, started = name[len(f"podlife{tag}-"):].partition("-")[0].partition(".")
    return bool(dot) and pid.isdigit() and start_time(int(pid)) == started


def _remove_instance(tag: int, owner: str = "") -> None:
    """Everything of instance ``tag``: its veths (their peers go with them), namespaces, then bridges. A namespace
    whose owner still runs is another network namespace's instance of the same number, and stays, unless that
    owner (``<pid>.<start time>``) is the one removing its own."""
    links = [d.get("ifname", "") for d in _json(["link", "show"])]
    lines = [f"link del {n}" for n in links if n.startswith(f"pl{tag}-") and not _BRIDGE.match(n)]
    lines += [f"netns del {n}" for n in _listdir(NETNS_DIR) if n.startswith(f"podlife{tag}-")
              and (n.startswith(f"podlife{tag}-{owner}-") if owner else not _netns_owner_alive(n, tag))]
    lines += [f"link del {n}" for n in links if (m := _BRIDGE.match(n)) and int(m.group(1)) == tag]
    if lines:
        _run(["-force", "-batch", "-"], "\n".join(lines) + "\n")


def _listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _taken_networks() -> list[ipaddress.IPv4Network]:
    """The IPv4 ranges this machine already routes or has addresses in."""
    out = []
    for r in _json(["-4", "route", "show", "table", "all"]):
        dst = r.get("dst", "")
        if dst and dst != "default":
            try:
                out.append(ipaddress.IPv4Network(dst, strict=False))
            except ValueError:
                pass
    for link in _json(["-4", "addr"]):
        for a in link.get("addr_info") or ():
            try:
                out.append(ipaddress.IPv4Network(f"{a['local']}/{a.get('prefixlen', 32)}", strict=False))
            except (KeyError, ValueError):
                pass
    return out


def unavailable() -> str | None:
    """Why pods cannot have network namespaces here, or None."""
    if os.geteuid() != 0:
        return "podlife is not running as root (network namespaces need CAP_NET_ADMIN)"
    if shutil.which("ip") is None:
        return "no ip command (iproute2) on this machine"
    return None


@dataclass
class PodNetwork:
    """One podlife up's pod network: its instance number, /16 and the nodes' bridges."""

    tag: int
    octet: int
    bridges: dict[int, str] = field(default_factory=dict)   # node index → bridge name
    owner: int = field(default_factory=os.getpid)   # the podlife up process, named in the bridges' alias
    started: str = ""   # the owner's start time (with the pid, it names one process)

    def __post_init__(self) -> None:
        self.started = start_time(self.owner) or ""

    @classmethod
    def claim(cls, preferred: int | None) -> tuple[PodNetwork | None, str]:
        """Remove what dead owners left, then take the first free instance number whose /16 the machine does not
        use yet (``preferred`` first: the one this data directory had). (None, why) when none can be made."""
        why = unavailable()
        if why is not None:
            return None, why
        live: set[int] = set()
        dead: set[int] = set()
        for d in _json(["link", "show", "type", "bridge"]):
            m = _BRIDGE.match(d.get("ifname", ""))
            if m is not None:
                (dead if _owner_alive(d.get("ifalias", "")) is False else live).add(int(m.group(1)))
        for tag in sorted(dead - live):
            _remove_instance(tag)
        taken = _taken_networks()
        order = list(range(len(OCTETS)))
        if preferred is not None and 0 <= preferred < len(OCTETS):
            order.remove(preferred)
            order.insert(0, preferred)
        last = "every candidate range 10.{200-255}.0.0/16 is in use on this machine"
        for tag in order:
            net = ipaddress.IPv4Network(f"10.{OCTETS[tag]}.0.0/16")
            if tag in live or any(net.overlaps(t) for t in taken):
                continue
            pn = cls(tag, OCTETS[tag])
            err = pn.add_node(0)
            if err is None:
                return pn, ""
            if "File exists" not in err:
                return None, f"cannot make a bridge: {err}"
            last = err
        return None, last

    def cidr(self, index: int) -> str:
        return f"10.{self.octet}.{index}.0/24"

    def gateway(self, index: int) -> str:
        return f"10.{self.octet}.{index}.1"

    def add_node(self, index: int) -> str | None:
        """Node ``index``'s bridge with its gateway address (the bridge plugin's isGateway); None, or the error."""
        if index in self.bridges:
            return None
        if index > 255:
            return "the process runtime's pod network has /24s for 256 nodes"
        br = f"pl{self.tag}-br{index}"
        code, err = _run(["-batch", "-"], f"link add name {br} type bridge\n"
                                          f"link set {br} alias podlife:{self.owner}:{self.started}\n"
                                          f"addr add {self.gateway(index)}/24 dev {br}\n"
                                          f"link set {br} up\n")
        if code != 0:
            if "File exists" not in err:
                _run(["-force", "-batch", "-"], f"link del {br}\n")
            return err or f"ip exited with {code}"
        self.bridges[index] = br
        try:
            with open(f"/proc/sys/net/ipv4/conf/{br}/forwarding", "w") as f:
                f.write("1")
        except OSError as e:
            return f"cannot switch on forwarding for {br}: {e.strerror}"
        return None

    def netns(self, sandbox_id: str) -> str:
        return f"podlife{self.tag}-{self.owner}.{self.started}-{sandbox_id[:16]}"

    def netns_path(self, sandbox_id: str) -> str:
        return os.path.join(NETNS_DIR, self.netns(sandbox_id))

    def _veth(self, sandbox_id: str) -> str:
        return f"pl{self.tag}-{sandbox_id[:15 - len(f'pl{self.tag}-')]}"

    async def add(self, sandbox_id: str, index: int, ip: str) -> str | None:
        """The sandbox's namespace, veth and address (cmdAdd); None, or the error (what was made is removed)."""
        ns, veth, br = self.netns(sandbox_id), self._veth(sandbox_id), self.bridges[index]
        code, err = await _run_async(["-batch", "-"], f"netns add {ns}\n"
                                                      f"link add {veth} type veth peer name eth0 netns {ns}\n"
                                                      f"link set {veth} master {br} up\n")
        if code == 0:
            code, err = await _run_async(["-n", ns, "-batch", "-"], "link set lo up\n"
                                                                    f"addr add {ip}/24 dev eth0\n"
                                                                    "link set eth0 up\n"
                                                                    f"route add default via {self.gateway(index)}\n")
        if code != 0:
            await self.remove(sandbox_id)
            return err or f"ip exited with {code}"
        return None

    async def remove(self, sandbox_id: str) -> None:
        """cmdDel and the namespace's removal: the host-side veth first (deleting it takes the peer at once;
        a removed namespace's interfaces go only when the kernel gets round to it)."""
        await _run_async(["-force", "-batch", "-"], f"link del {self._veth(sandbox_id)}\n"
                                                    f"netns del {self.netns(sandbox_id)}\n")

    def remove_all(self) -> None:
        """Everything this instance made (podlife up is stopping)."""
        _remove_instance(self.tag, f"{self.owner}.{self.started}")
        self.bridges.clear()


def _connect_in(path: str, sandbox_id: str, port: int) -> socket.socket:
    """In the calling thread (which it moves into the namespace at ``path``: use a thread of its own), a TCP
    connection to localhost:``port``, IPv4 first, then IPv6, as containerd's portForward dials."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        check(_LIBC.setns(fd, CLONE_NEWNET), "setns net")
    finally:
        os.close(fd)
    errors = []
    for family, host, net in ((socket.AF_INET, "127.0.0.1", "tcp4"), (socket.AF_INET6, "::1", "tcp6")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError as e:
            errors.append(dial_error(host, port, e, net))
            continue
        try:
            sock.connect((host, port))
        except OSError as e:
            sock.close()
            errors.append(dial_error(host, port, e, net))
            continue
        sock.setblocking(False)
        return sock
    raise OSError(f'failed to execute portforward in network namespace "{path}": failed to connect to '
                  f'localhost:{port} inside namespace "{sandbox_id}", IPv4: {errors[0]} IPv6 {errors[1]} ')


async def open_connection_in(path: str, sandbox_id: str, port: int
                             ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio.open_connection to localhost:``port`` inside the pod's network namespace: the socket is made in a
    short-lived thread that joins the namespace (a socket stays in the namespace it was made in)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[socket.socket] = loop.create_future()

    def settle(sock: socket.socket | None, err: OSError | None) -> None:
        if done.cancelled():
            if sock is not None:
                sock.close()
        elif err is not None:
            done.set_exception(err)
        else:
            done.set_result(sock)   # type: ignore[arg-type]

    def work() -> None:
        try:
            sock = _connect_in(path, sandbox_id, port)
        except OSError as e:
            loop.call_soon_threadsafe(settle, None, e)
        else:
            loop.call_soon_threadsafe(settle, sock, None)
    threading.Thread(target=work, name="podlife-portforward", daemon=True).start()
    return await asyncio.open_connection(sock=await done)

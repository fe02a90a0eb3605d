"""A pod's host ports for ``podlife up --runtime process`` with pod network namespaces (podlife.runtime.podnet),
forwarded as the CNI portmap plugin forwards them, in user space as podlife's kube-proxy does.

The kubelet puts the containers' ports in the sandbox config (pkg/kubelet/kuberuntime/kuberuntime_sandbox.go
generatePodSandboxConfig, kubecontainer.MakePortMappings); containerd hands those with a hostPort to CNI
(pkg/cri/server/sandbox_run.go toCNIPortMappings) and the portmap plugin, chained after the bridge plugin,
DNATs hostIP:hostPort to podIP:containerPort (plugins/meta/portmap/portmap.go fillDnatRules): with no hostIP
(or 0.0.0.0) every local address of the node, 127.0.0.1 included (route_localnet and the localhost
masquerade rule); a hostIP of the other family is skipped. CNI DEL removes the rules.

Here each (address, hostPort, protocol) is a listening socket of podlife's kube-proxy
(podlife.runtime.serviceproxy.listen) whose one endpoint is podIP:containerPort, opened when the sandbox's
network is set up and closed when it is torn down. As portmap's rules, an address:port that several
sandboxes map goes to the latest (a terminating pod's sandbox may still map it). Every node is this machine:
with no hostIP a host port listens on the node's address and 127.0.0.1; the loopback address is every node's,
so pods of different nodes that map the same 127.0.0.1 port take it from each other, which is said. SCTP host
ports are not mapped (no SCTP sockets here). A socket that cannot bind (another program holds the port) fails
the sandbox's network set-up; a hostIP that is not an address of this machine is never matched by portmap's
rule and is only said.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
from dataclasses import dataclass, field

from podlife.api.meta import Obj
from podlife.runtime.serviceproxy import Endpoint, VirtualKey, VirtualServer, forget_flows, listen, unlisten

log = logging.getLogger("podlife.portmap")
LOCALHOST = "127.0.0.1"


@dataclass(frozen=True)
class PortMapping:
    """One entry of the CNI portMappings capability (cni.PortMapping)."""

    host_port: int
    container_port: int
    protocol: str   # TCP, UDP or SCTP, as the CRI's Protocol
    host_ip: str


def port_mappings(pod: Obj) -> list[PortMapping]:
    """The pod's port mappings as containerd gives them to CNI: the (regular) containers' ports, each container's
    repeated port names dropped (MakePortMappings: an unnamed port is named by family, protocol, hostIP and the
    two numbers), those without a hostPort left out (toCNIPortMappings)."""
    out = []
    for c in pod["spec"].get("containers") or ():
        names: set[str] = set()
        for p in c.get("ports") or ():
            host_ip, proto = p.get("hostIP") or "", p.get("protocol") or "TCP"
            family = "any" if not host_ip else ("v6" if ":" in host_ip else "v4")
            name = p.get("name") or f"{family}-{proto}-{host_ip}:{p.get('containerPort')}:{p.get('hostPort') or 0}"
            if name in names:
                continue
            names.add(name)
            if int(p.get("hostPort") or 0) > 0:
                out.append(PortMapping(int(p["hostPort"]), int(p["containerPort"]), proto, host_ip))
    return out


def addresses(m: PortMapping, node_ip: str) -> list[str]:
    """Where fillDnatRules's rule matches, on an IPv4 pod: the hostIP; none for an IPv6 one or one that is no
    address at all (the API does not validate hostIP; net.ParseIP's nil counts as IPv6 there); with no hostIP
    or an unspecified one, every local address, which here is the node's address and localhost."""
    if not m.host_ip:
        return [node_ip, LOCALHOST]
    try:
        ip = ipaddress.ip_address(m.host_ip)
    except ValueError:
        return []
    if ip.version != 4:
        return []
    return [node_ip, LOCALHOST] if ip.is_unspecified else [m.host_ip]


def bind_error(proto: str, ip: str, port: int, e: OSError) -> str:
    """Go's net.Listen error text."""
    text = {errno.EADDRINUSE: "address already in use", errno.EACCES: "permission denied",
            errno.EADDRNOTAVAIL: "cannot assign requested address"}.get(e.errno or 0)
    return f"listen {proto.lower()} {ip}:{port}: bind: {text or (e.strerror or str(e)).lower()}"


@dataclass
class _Listener:
    vs: VirtualServer
    holders: list[tuple[str, Endpoint, str, str]]   # (sandbox id, endpoint, pod, node address), the latest last


@dataclass
class PortMap:
    """The host ports of one podlife up's sandboxes."""

    listeners: dict[VirtualKey, _Listener] = field(default_factory=dict)
    sandboxes: dict[str, list[VirtualKey]] = field(default_factory=dict)

    def add(self, sandbox_id: str, pod: Obj, pod_ip: str, node_ip: str) -> str | None:
        """CNI ADD: listen on every mapping's addresses; None, or the first bind failure (what was opened for
        the sandbox is closed again). An address:port a sandbox maps already goes to the latest one, as
        portmap prepends each container's rules (genDnatChain) and clears the port's UDP conntrack entries."""
        self.remove(sandbox_id)   # a retried ADD replaces what the sandbox had, leaving no listener behind
        md = pod["metadata"]
        owner = f"{md.get('namespace', '')}/{md['name']}"
        mine: list[VirtualKey] = []
        self.sandboxes[sandbox_id] = mine
        for m in port_mappings(pod):
            if m.protocol not in ("TCP", "UDP"):
                log.warning("hostPort %d/%s of pod %s is not mapped: podlife forwards TCP and UDP host ports",
                            m.host_port, m.protocol, owner)
                continue
            ep = (pod_ip, m.container_port)
            where = addresses(m, node_ip)
            if not where:
                log.warning("hostPort %d/%s of pod %s is not mapped: its hostIP %r is not an IPv4 address (the "
                            "pod's)", m.host_port, m.protocol, owner, m.host_ip)
            for ip in where:
                key = (ip, m.host_port, m.protocol)
                held = self.listeners.get(key)
                if held is None:
                    vs = VirtualServer(owner, [ep], None)
                    e = listen(key, vs)
                    if e is not None and e.errno == errno.EADDRNOTAVAIL:
                        log.warning("hostIP %s of pod %s is not an address of this machine: %d/%s is not mapped",
                                    ip, owner, m.host_port, m.protocol)
                        continue
                    if e is not None:
                        self.remove(sandbox_id)
                        return bind_error(m.protocol, ip, m.host_port, e)
                    held = self.listeners[key] = _Listener(vs, [])
                else:
                    before = held.holders[-1]
                    if before[3] != node_ip:
                        log.warning("%s:%d/%s now goes to pod %s, no longer to pod %s of another node (the nodes "
                                    "share this machine's addresses)", *key, owner, before[2])
                    held.vs.endpoints, held.vs.service = [ep], owner
                    forget_flows(held.vs)
                held.holders.append((sandbox_id, ep, owner, node_ip))
                mine.append(key)
        return None

    def remove(self, sandbox_id: str) -> None:
        """CNI DEL: the sandbox's mappings go; an address:port another sandbox still maps goes back to it
        (connections already made stay until the pod's address goes)."""
        for key in dict.fromkeys(self.sandboxes.pop(sandbox_id, ())):
            held = self.listeners[key]
            held.holders = [h for h in held.holders if h[0] != sandbox_id]
            if held.holders:
                held.vs.endpoints, held.vs.service = [held.holders[-1][1]], held.holders[-1][2]
                forget_flows(held.vs)
            else:
                unlisten(held.vs)
                del self.listeners[key]

    def close(self) -> None:
        for sandbox_id in list(self.sandboxes):
            self.remove(sandbox_id)

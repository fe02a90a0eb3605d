"""kube-proxy for ``podlife up --runtime process``: Services answer on their addresses, as the IPVS proxier
(pkg/proxy/ipvs/proxier.go) makes them answer, with the kernel's forwarding done by an asyncio proxy.

Upstream binds each ClusterIP (and externalIP) to kube-ipvs0 and makes one IPVS virtual server per
(address, port, protocol) whose real servers are the Service port's endpoints; here the addresses go on the
instance's interface (podlife.runtime.servicelink) and each virtual server is a listening socket that connects
a client to an endpoint:

- endpoints: those of the Service's EndpointSlices (label kubernetes.io/service-name) whose port has the
  Service port's name and protocol, ready ones (``conditions.ready`` unset counts as ready); when none is ready,
  the serving terminating ones (pkg/proxy/topology.go CategorizeEndpoints, ProxyTerminatingEndpoints);
- the choice: IPVS's default scheduler, round robin (``--ipvs-scheduler rr``); with ``sessionAffinity:
  ClientIP`` a persistent virtual server (``Timeout`` = sessionAffinityConfig.clientIP.timeoutSeconds): a
  client address keeps its endpoint while it comes back within the timeout and the endpoint stays;
- a Service port without endpoints has no listener, so a TCP connection is refused and a UDP datagram gets
  ICMP port-unreachable, as the REJECT rule for Services without endpoints does (pkg/proxy/ipvs:
  KUBE-IPVS-FILTER / the iptables proxier's KUBE-SVC reject);
- NodePorts on each Node's InternalIP; headless and ExternalName Services get nothing (proxier.go skips
  ``ClusterIP: None``); LoadBalancer status IPs, internalTrafficPolicy/externalTrafficPolicy Local and topology
  hints are not applied (every node is this machine).

Services and EndpointSlices are followed through the store's watch, as kube-proxy's informers follow them:
each change is applied at once (upstream waits for its sync period, at most ``--ipvs-min-sync-period``).
An address:port another program (another podlife up) holds is left to it and said once.
The listening sockets and their forwarding (``listen``) serve the pods' host ports too (podlife.runtime.portmap).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from podlife.api.meta import Obj
from podlife.runtime.servicelink import ServiceLink

log = logging.getLogger("podlife.kube-proxy")
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
DEFAULT_AFFINITY_TIMEOUT = 10800   # v1.DefaultClientIPServiceAffinitySeconds
UDP_TIMEOUT = 300.0                # IPVS's default UDP connection timeout
Endpoint = tuple[str, int]
VirtualKey = tuple[str, int, str]  # (address, port, protocol)


@dataclass
class VirtualServer:
    """One IPVS virtual server: where a Service port is reached, and its real servers."""

    service: str                       # namespace/name (of the pod, for a host port), for what is said
    endpoints: list[Endpoint]
    affinity: float | None             # persistence timeout in seconds; None: no session affinity
    next: int = 0                      # the round robin's position
    sticky: dict[str, tuple[Endpoint, float]] = field(default_factory=dict)   # client IP -> (endpoint, expiry)
    listener: Any = None               # asyncio.Server or DatagramTransport (at first the bound socket)

    def pick(self, client: str, now: float) -> Endpoint | None:
        if not self.endpoints:
            return None
        if self.affinity is not None:
            held = self.sticky.get(client)
            if held is not None and held[1] > now and held[0] in self.endpoints:
                self.sticky[client] = (held[0], now + self.affinity)
                return held[0]
        ep = self.endpoints[self.next % len(self.endpoints)]
        self.next = (self.next + 1) % len(self.endpoints)
        if self.affinity is not None:
            self.sticky[client] = (ep, now + self.affinity)
        return ep


def service_endpoints(svc: Obj, slices: list[Obj], port: Obj) -> list[Endpoint]:
    """The Service port's endpoints from its slices: ready ones, else serving terminating ones."""
    name, proto = port.get("name") or "", port.get("protocol") or "TCP"
    ready: list[Endpoint] = []
    terminating: list[Endpoint] = []
    for sl in slices:
        if sl.get("addressType", "IPv4") != "IPv4":
            continue
        numbers = [p.get("port") for p in sl.get("ports") or ()
                   if (p.get("name") or "") == name and (p.get("protocol") or "TCP") == proto and p.get("port")]
        if not numbers:
            continue
        for ep in sl.get("endpoints") or ():
            cond = ep.get("conditions") or {}
            addresses = ep.get("addresses") or ()
            if not addresses:
                continue
            target = (addresses[0], int(numbers[0]))
            if cond.get("ready") is not False:
                ready.append(target)
            elif cond.get("serving") and cond.get("terminating"):
                terminating.append(target)
    return list(dict.fromkeys(ready or terminating))


def virtual_servers(services: list[Obj], slices: list[Obj], node_ips: list[str], skip: set[str]
                    ) -> dict[VirtualKey, VirtualServer]:
    """proxier.go syncProxyRules: the virtual servers of every Service (``skip``: namespace/name of Services
    served otherwise, the cluster DNS)."""
    by_service: dict[tuple[str, str], list[Obj]] = {}
    for sl in slices:
        owner = (sl["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL)
        if owner:
            by_service.setdefault((sl["metadata"].get("namespace", ""), owner), []).append(sl)
    out: dict[VirtualKey, VirtualServer] = {}
    for svc in services:
        md, spec = svc["metadata"], svc.get("spec") or {}
        key = f"{md.get('namespace', '')}/{md['name']}"
        cluster_ips = [ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip and ip != "None"]
        if key in skip or spec.get("type") == "ExternalName" or not cluster_ips:
            continue
        affinity = None
        if spec.get("sessionAffinity") == "ClientIP":
            affinity = float(((spec.get("sessionAffinityConfig") or {}).get("clientIP") or {})
                             .get("timeoutSeconds") or DEFAULT_AFFINITY_TIMEOUT)
        own = sorted(by_service.get((md.get("namespace", ""), md["name"]), []), key=lambda s: s["metadata"]["name"])
        for port in spec.get("ports") or ():
            proto = port.get("protocol") or "TCP"
            if proto not in ("TCP", "UDP"):
                continue   # SCTP: no socket support here
            eps = service_endpoints(svc, own, port)
            addresses = [(ip, int(port["port"])) for ip in cluster_ips + list(spec.get("externalIPs") or ())]
            if port.get("nodePort"):
                addresses += [(ip, int(port["nodePort"])) for ip in node_ips]
            for ip, number in addresses:
                if ":" in ip:
                    continue   # the cluster is single-stack IPv4
                out[(ip, number, proto)] = VirtualServer(key, eps, affinity)
    return out


class ServiceProxy:
    """The proxier of one podlife up: ``sync`` brings the listeners and addresses in line with the store."""

    def __init__(self, link: ServiceLink, read: Callable[[], tuple[list[Obj], list[Obj], list[str]]],
                 pinned: set[str], skip: set[str], rewrite: Callable[[Endpoint], Endpoint] = lambda ep: ep) -> None:
        self.link = link
        self.read = read          # () -> (Services, EndpointSlices, node IPs)
        self.pinned = pinned      # addresses kept on the interface whatever the Services say
        self.skip = skip
        self.rewrite = rewrite    # where an endpoint is really reached (the API server's stand-in address)
        self.servers: dict[VirtualKey, VirtualServer] = {}
        self.said: dict[VirtualKey, str] = {}   # what was said of a virtual server that cannot listen
        self._scheduled = False
        self._closed = False

    def changed(self, *_: Any) -> None:
        """A store watch handler: sync once, soon, for any number of changes that come together."""
        if not self._scheduled and not self._closed:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self.sync)

    def sync(self) -> None:
        self._scheduled = False
        if self._closed:
            return
        services, slices, node_ips = self.read()
        want = virtual_servers(services, slices, node_ips, self.skip)
        node_set = set(node_ips)
        addresses = {k[0] for k in want if k[0] not in node_set} | self.pinned
        for ip in sorted(addresses - self.link.addresses):
            err = self.link.add(ip)
            if err is not None and self.said.get((ip, 0, "")) != err:
                self.said[(ip, 0, "")] = err
                log.warning("cannot bind %s to %s: %s", ip, self.link.name, err)
        for key in list(self.servers):
            if key not in want:
                unlisten(self.servers.pop(key))
        for key, vs in want.items():
            have = self.servers.get(key)
            if have is not None:
                have.endpoints, have.service = vs.endpoints, vs.service
                if have.affinity != vs.affinity:
                    have.affinity, have.sticky = vs.affinity, {}
                vs = have
            else:
                self.servers[key] = vs
            if vs.endpoints and vs.listener is None:
                self._open(key, vs)
            elif not vs.endpoints and vs.listener is not None:
                unlisten(vs)
        for ip in sorted(self.link.addresses - addresses):
            self.link.remove(ip)

    def _open(self, key: VirtualKey, vs: VirtualServer) -> None:
        e = listen(key, vs, self.rewrite)
        if e is not None:
            ip, port, proto = key
            why = ("in use by another program (another podlife up?)" if e.errno == errno.EADDRINUSE
                   else (e.strerror or str(e)).lower())
            if self.said.get(key) != why:
                self.said[key] = why
                log.warning("%s:%d/%s of Service %s is not served: %s", ip, port, proto, vs.service, why)
            return
        self.said.pop(key, None)

    def close(self) -> None:
        self._closed = True
        for vs in self.servers.values():
            unlisten(vs)
        self.servers.clear()


def listen(key: VirtualKey, vs: VirtualServer, rewrite: Callable[[Endpoint], Endpoint] = lambda ep: ep
           ) -> OSError | None:
    """Bind the virtual server's address and port and serve it: each TCP connection, or each UDP client's flow,
    goes to an endpoint ``vs`` picks (reached at ``rewrite(endpoint)``). None, or why the socket cannot bind."""
    ip, port, proto = key
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "TCP" else socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((ip, port))
        if proto == "TCP":
            sock.listen(128)
        sock.setblocking(False)
    except OSError as e:
        sock.close()
        return e
    loop = asyncio.get_running_loop()
    # the socket is bound now; the asyncio server around it is made in a task, and until then the bare
    # socket is the listener (closed at once if the virtual server goes meanwhile)
    vs.listener = sock

    async def serve() -> None:
        try:
            if proto == "TCP":
                made: Any = await asyncio.start_server(lambda r, w: _connection(vs, rewrite, r, w), sock=sock)
            else:
                made, _ = await loop.create_datagram_endpoint(lambda: _UdpRelay(vs, rewrite), sock=sock)
        except (OSError, ValueError):
            return   # closed before it was served
        if vs.listener is sock:
            vs.listener = made
        else:
            made.close()
    loop.create_task(serve())
    return None


def unlisten(vs: VirtualServer) -> None:
    listener, vs.listener = vs.listener, None
    if listener is not None:
        listener.close()


def forget_flows(vs: VirtualServer) -> None:
    """Drop a UDP virtual server's flows (conntrack's entries): each client's next datagram picks anew."""
    relay = vs.listener.get_protocol() if isinstance(vs.listener, asyncio.DatagramTransport) else None
    if isinstance(relay, _UdpRelay):
        relay.forget()


async def _connection(vs: VirtualServer, rewrite: Callable[[Endpoint], Endpoint], reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
    peer = writer.get_extra_info("peername") or ("", 0)
    ep = vs.pick(peer[0], asyncio.get_running_loop().time())
    if ep is None:
        writer.transport.abort()
        return
    try:
        up_r, up_w = await asyncio.open_connection(*rewrite(ep))
    except OSError:
        writer.transport.abort()   # the real server does not answer: the client sees a reset
        return
    await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()
    except (OSError, asyncio.CancelledError):
        dst.transport.abort()
        return
    except RuntimeError:
        pass


class _UdpRelay(asyncio.DatagramProtocol):
    """A UDP virtual server: each client address gets its own flow to an endpoint (IPVS's UDP connection
    entry), whose answers go back from the Service address; a flow idle for UDP_TIMEOUT is dropped."""

    def __init__(self, vs: VirtualServer, rewrite: Callable[[Endpoint], Endpoint]) -> None:
        self.vs = vs
        self.rewrite = rewrite
        self.transport: asyncio.DatagramTransport | None = None
        self.flows: dict[tuple[str, int], tuple[asyncio.DatagramTransport | None, list[bytes], float]] = {}

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        flow = self.flows.get(addr)
        if flow is not None:
            out, queued, _ = flow
            self.flows[addr] = (out, queued, now)
            if out is None:
                queued.append(data)
            else:
                out.sendto(data)
            return
        for old, (out, _q, seen) in list(self.flows.items()):
            if now - seen > UDP_TIMEOUT:
                del self.flows[old]
                if out is not None:
                    out.close()
        ep = self.vs.pick(addr[0], now)
        if ep is None:
            return
        self.flows[addr] = (None, [data], now)
        loop.create_task(self._connect(addr, ep))

    async def _connect(self, client: tuple[str, int], ep: Endpoint) -> None:
        relay = self

        class Back(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, _addr: Any) -> None:
                if relay.transport is not None and not relay.transport.is_closing():
                    relay.transport.sendto(data, client)
        try:
            out, _ = await asyncio.get_running_loop().create_datagram_endpoint(Back, remote_addr=self.rewrite(ep))
        except OSError:
            self.flows.pop(client, None)
            return
        flow = self.flows.get(client)
        if flow is None:
            out.close()
            return
        for data in flow[1]:
            out.sendto(data)
        self.flows[client] = (out, [], flow[2])

    def connection_lost(self, exc: Exception | None) -> None:
        self.forget()

    def forget(self) -> None:
        for out, _q, _t in self.flows.values():
            if out is not None:
                out.close()
        self.flows.clear()

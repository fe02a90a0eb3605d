"""Cluster DNS for ``podlife up --runtime process``, answered as CoreDNS's kubernetes plugin answers it with
kubeadm's Corefile (``kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure; fallthrough in-addr.arpa
ip6.arpa; ttl 30 }``, ``forward . /etc/resolv.conf``), following the Kubernetes DNS specification
(github.com/kubernetes/dns docs/specification.md; coredns/coredns plugin/kubernetes):

- ``<svc>.<ns>.svc.cluster.local``: A = the ClusterIP; for a headless Service one A per endpoint address (the
  EndpointSlices' ready endpoints; the slices already hold not-ready ones under publishNotReadyAddresses); an
  ExternalName Service a CNAME to its externalName;
- ``_<port>._<proto>.<svc>.<ns>.svc.cluster.local`` SRV per named port (target the Service's name, or each
  endpoint's ``<hostname or a-b-c-d>.<svc>…`` for a headless one, their A records in the additional section),
  and SRV on the Service's own name for all its ports; weights as the plugin's SRV builder gives them
  (100 / the number of records);
- ``<hostname or a-b-c-d>.<svc>.<ns>.svc.cluster.local``: A = that endpoint's address (the EndpointSlice
  controller sets hostname for pods whose subdomain is the Service);
- ``a-b-c-d.<ns>.pod.cluster.local``: A = a.b.c.d in a namespace that exists (``pods insecure``);
- PTR for ClusterIPs and endpoint addresses; an address it does not know falls through to the forwarder;
- any other name in cluster.local: NXDOMAIN, an existing name without records of the type NODATA, both with
  the zone's SOA (``ns.dns.cluster.local. hostmaster.cluster.local. <serial> 7200 1800 86400 30``);
- everything else is forwarded to the nameservers of this machine's /etc/resolv.conf, as sent.

TTL 30 everywhere. The cluster is single-stack IPv4: AAAA for a Service is NODATA.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dnslib import CNAME, PTR, QTYPE, RCODE, RR, SOA, SRV, A, DNSRecord, NS  # type: ignore[import-untyped]

from podlife.api.meta import Obj
from podlife.runtime.hostsfile import CLUSTER_DOMAIN
from podlife.runtime.serviceproxy import SERVICE_NAME_LABEL

log = logging.getLogger("podlife.coredns")
TTL = 30
DNS_SERVICE = ("kube-system", "kube-dns")
DNS_PORT = 53
METRICS_PORT = 9153
FORWARD_TIMEOUT = 2.0


@dataclass
class ClusterView:
    """What the answers read: the store's Services, EndpointSlices and Namespaces (callables, read per query)."""

    services: Callable[[], list[Obj]]
    slices: Callable[[], list[Obj]]
    namespaces: Callable[[], list[str]]
    serial: int = 0


def _dashed(ip: str) -> str:
    return ip.replace(".", "-").replace(":", "-")


def _soa(serial: int) -> RR:
    zone = CLUSTER_DOMAIN + "."
    return RR(zone, QTYPE.SOA, ttl=TTL, rdata=SOA(f"ns.dns.{zone}", f"hostmaster.{zone}",
                                                   (serial, 7200, 1800, 86400, TTL)))


def _endpoints(svc: Obj, slices: list[Obj]) -> list[tuple[str, str | None, list[Obj]]]:
    """(address, hostname, ports) of the Service's ready endpoints, slices by name."""
    md = svc["metadata"]
    own = sorted((s for s in slices if s["metadata"].get("namespace") == md.get("namespace")
                  and (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == md["name"]
                  and s.get("addressType", "IPv4") == "IPv4"), key=lambda s: s["metadata"]["name"])
    out = []
    for sl in own:
        for ep in sl.get("endpoints") or ():
            if (ep.get("conditions") or {}).get("ready") is False:
                continue
            for addr in ep.get("addresses") or ():
                out.append((addr, ep.get("hostname"), list(sl.get("ports") or ())))
    return out


def _headless(svc: Obj) -> bool:
    return (svc.get("spec") or {}).get("clusterIP") == "None"


def _cluster_ips(svc: Obj) -> list[str]:
    spec = svc.get("spec") or {}
    return [ip for ip in spec.get("clusterIPs") or [spec.get("clusterIP")] if ip and ip != "None" and ":" not in ip]


class Answers:
    """The records of one question, built as the plugin's ServeDNS builds them."""

    def __init__(self, view: ClusterView) -> None:
        self.view = view

    def answer(self, request: DNSRecord) -> DNSRecord | None:
        """The reply, or None when the question is outside the cluster's zones (to be forwarded)."""
        q = request.q
        name = str(q.qname).rstrip(".").lower()
        reply = request.reply()
        if name.endswith(".in-addr.arpa"):
            if q.qtype != QTYPE.PTR:
                return None
            target = self._reverse(name)
            if target is None:
                return None   # fallthrough in-addr.arpa: the forwarder answers
            reply.add_answer(RR(q.qname, QTYPE.PTR, ttl=TTL, rdata=PTR(target)))
            return reply
        if name != CLUSTER_DOMAIN and not name.endswith("." + CLUSTER_DOMAIN):
            return None
        found = self._records(name[:-len(CLUSTER_DOMAIN)].rstrip("."), q.qname, q.qtype, reply)
        if found is None:
            reply.header.rcode = RCODE.NXDOMAIN
        if not reply.rr:
            reply.add_auth(_soa(self.view.serial))
        return reply

    def _records(self, rel: str, qname: Any, qtype: int, reply: DNSRecord) -> bool | None:
        """Add the name's records of the type to ``reply``; None when the name does not exist."""
        labels = rel.split(".") if rel else []
        if not labels:   # the zone's apex
            if qtype == QTYPE.SOA:
                reply.add_answer(_soa(self.view.serial))
            elif qtype == QTYPE.NS:
                reply.add_answer(RR(qname, QTYPE.NS, ttl=TTL, rdata=NS(f"ns.dns.{CLUSTER_DOMAIN}.")))
            return True
        if labels[-1] == "pod" and len(labels) == 3:
            return self._pod(labels[0], labels[1], qname, qtype, reply)
        if labels[-1] != "svc" or len(labels) < 3:
            return True if labels in (["svc"], ["pod"]) or (len(labels) == 2 and labels[1] in ("svc", "pod")
                                                                 and labels[0] in self.view.namespaces()) else None
        ns, svc_name, rest = labels[-2], labels[-3], labels[:-3]
        svc = next((s for s in self.view.services() if s["metadata"].get("namespace") == ns
                    and s["metadata"]["name"] == svc_name), None)
        if svc is None:
            return None
        fqdn = f"{svc_name}.{ns}.svc.{CLUSTER_DOMAIN}."
        if not rest:
            return self._service(svc, fqdn, qname, qtype, reply)
        if len(rest) == 2 and rest[0].startswith("_") and rest[1].startswith("_"):
            return self._ports(svc, fqdn, qname, qtype, reply, rest[0][1:], rest[1][1:])
        if len(rest) == 1:
            matches = [(a, h) for a, h, _p in _endpoints(svc, self.view.slices())
                       if (h or _dashed(a)) == rest[0]]
            if not matches:
                return None
            if qtype in (QTYPE.A, QTYPE.ANY):
                for a, _h in dict.fromkeys(matches):
                    reply.add_answer(RR(qname, QTYPE.A, ttl=TTL, rdata=A(a)))
            return True
        return None

    def _service(self, svc: Obj, fqdn: str, qname: Any, qtype: int, reply: DNSRecord) -> bool:
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName":
            reply.add_answer(RR(qname, QTYPE.CNAME, ttl=TTL, rdata=CNAME(spec.get("externalName", "") + ".")))
            return True
        if qtype in (QTYPE.A, QTYPE.ANY):
            ips = ([a for a, _h, _p in _endpoints(svc, self.view.slices())] if _headless(svc)
                   else _cluster_ips(svc))
            for ip in dict.fromkeys(ips):
                reply.add_answer(RR(qname, QTYPE.A, ttl=TTL, rdata=A(ip)))
        if qtype == QTYPE.SRV:
            self._ports(svc, fqdn, qname, qtype, reply, None, None)
        return True

    def _ports(self, svc: Obj, fqdn: str, qname: Any, qtype: int, reply: DNSRecord, port: str | None,
               proto: str | None) -> bool | None:
        """SRV records of the Service's ports (``port``/``proto``: only that named port)."""
        spec = svc.get("spec") or {}
        ports = [p for p in spec.get("ports") or ()
                 if port is None or ((p.get("name") or "") == port and (p.get("protocol") or "TCP").lower() == proto)]
        if not ports:
            return None
        records: list[tuple[int, str, str | None]] = []   # (port, target, its A)
        if _headless(svc):
            for addr, host, eps in _endpoints(svc, self.view.slices()):
                for p in eps:
                    if any((p.get("name") or "") == (sp.get("name") or "") for sp in ports):
                        records.append((int(p.get("port") or 0), f"{host or _dashed(addr)}.{fqdn}", addr))
        else:
            records = [(int(p["port"]), fqdn, None) for p in ports]
        if qtype not in (QTYPE.SRV, QTYPE.ANY):
            return True
        weight = 100 // len(records) if records else 0   # plugin/backend_lookup.go SRV: 100 / count
        extra: list[tuple[str, str]] = []
        for number, target, ep_ip in records:
            reply.add_answer(RR(qname, QTYPE.SRV, ttl=TTL, rdata=SRV(0, weight, number, target)))
            ips = [ep_ip] if ep_ip is not None else _cluster_ips(svc)
            extra += [(target, ip) for ip in ips]
        for target, ip in dict.fromkeys(extra):
            reply.add_ar(RR(target, QTYPE.A, ttl=TTL, rdata=A(ip)))
        return True

    def _pod(self, dashed: str, ns: str, qname: Any, qtype: int, reply: DNSRecord) -> bool | None:
        """pods insecure: the address the name spells, in a namespace that exists."""
        try:
            ip = ipaddress.IPv4Address(dashed.replace("-", "."))
        except ValueError:
            return None
        if ns not in self.view.namespaces():
            return None
        if qtype in (QTYPE.A, QTYPE.ANY):
            reply.add_answer(RR(qname, QTYPE.A, ttl=TTL, rdata=A(str(ip))))
        return True

    def _reverse(self, name: str) -> str | None:
        parts = name[:-len(".in-addr.arpa")].split(".")
        if len(parts) != 4:
            return None
        ip = ".".join(reversed(parts))
        services = self.view.services()
        for svc in services:
            if ip in _cluster_ips(svc):
                md = svc["metadata"]
                return f"{md['name']}.{md.get('namespace', '')}.svc.{CLUSTER_DOMAIN}."
        slices = self.view.slices()
        for svc in services:
            for addr, host, _p in _endpoints(svc, slices):
                if addr == ip:
                    md = svc["metadata"]
                    return f"{host or _dashed(addr)}.{md['name']}.{md.get('namespace', '')}.svc.{CLUSTER_DOMAIN}."
        return None


def upstream_servers(resolv_conf: bytes, own: str) -> list[str]:
    """forward . /etc/resolv.conf: its nameservers, without the cluster DNS itself (the loop plugin's worry)."""
    out = []
    for line in resolv_conf.decode("utf-8", "replace").splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == "nameserver" and fields[1] != own:
            out.append(fields[1])
    return out


class DnsServer:
    """The server on the cluster DNS address: UDP and TCP port 53."""

    def __init__(self, answers: Answers, address: str, upstream: list[str]) -> None:
        self.answers = answers
        self.address = address
        self.upstream = upstream
        self.closers: list[Any] = []

    async def start(self) -> list[str]:
        """Listen; what could not be listened on, worded for the user."""
        loop = asyncio.get_running_loop()
        problems = []
        try:
            transport, _ = await loop.create_datagram_endpoint(lambda: _Udp(self), local_addr=(self.address, DNS_PORT))
            self.closers.append(transport)
        except OSError as e:
            problems.append(f"{self.address}:{DNS_PORT}/UDP: {_why(e)}")
        try:
            server = await asyncio.start_server(self._tcp, self.address, DNS_PORT, reuse_address=True)
            self.closers.append(server)
        except OSError as e:
            problems.append(f"{self.address}:{DNS_PORT}/TCP: {_why(e)}")
        return problems

    async def resolve(self, data: bytes) -> bytes | None:
        try:
            request = DNSRecord.parse(data)
        except Exception:   # dnslib raises its own DNSError and struct/index errors on junk: no answer
            return None
        if not request.questions:
            return None
        reply = self.answers.answer(request)
        if reply is not None:
            return bytes(reply.pack())
        for server in self.upstream:
            answer = await _forward(data, server)
            if answer is not None:
                return answer
        failed = request.reply()
        failed.header.rcode = RCODE.SERVFAIL
        return bytes(failed.pack())

    async def _tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack("!H", await reader.readexactly(2))[0]
                answer = await self.resolve(await reader.readexactly(size))
                if answer is None:
                    break
                writer.write(struct.pack("!H", len(answer)) + answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, OSError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        for c in self.closers:
            c.close()
        self.closers.clear()


def _why(e: OSError) -> str:
    return os.strerror(e.errno).lower() if e.errno else str(e)


class _Udp(asyncio.DatagramProtocol):
    def __init__(self, server: DnsServer) -> None:
        self.server = server
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        async def reply() -> None:
            answer = await self.server.resolve(data)
            if answer is not None and not self.transport.is_closing():
                self.transport.sendto(answer, addr)
        asyncio.get_running_loop().create_task(reply())


async def _forward(data: bytes, server: str) -> bytes | None:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET6 if ":" in server else socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    try:
        await loop.sock_connect(sock, (server, DNS_PORT))
        await loop.sock_sendall(sock, data)
        return await asyncio.wait_for(loop.sock_recv(sock, 65535), FORWARD_TIMEOUT)
    except (OSError, asyncio.TimeoutError):
        return None
    finally:
        sock.close()


def kube_dns_service(cluster_ip: str) -> Obj:
    """kubeadm's kube-dns Service (cmd/kubeadm/app/phases/addons/dns/manifests.go KubeDNSService)."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": DNS_SERVICE[1], "namespace": DNS_SERVICE[0],
                         "labels": {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
                                    "kubernetes.io/name": "CoreDNS"},
                         "annotations": {"prometheus.io/port": str(METRICS_PORT), "prometheus.io/scrape": "true"}},
            "spec": {"clusterIP": cluster_ip, "selector": {"k8s-app": "kube-dns"},
                     "ports": [{"name": "dns", "port": DNS_PORT, "protocol": "UDP", "targetPort": DNS_PORT},
                               {"name": "dns-tcp", "port": DNS_PORT, "protocol": "TCP", "targetPort": DNS_PORT},
                               {"name": "metrics", "port": METRICS_PORT, "protocol": "TCP",
                                "targetPort": METRICS_PORT}]}}


def dns_ip(cidr: ipaddress.IPv4Network) -> str:
    """kubeadm GetDNSIP: the service range's 10th address."""
    return str(cidr.network_address + 10)

"""Cluster DNS answers (podlife.runtime.clusterdns) against CoreDNS's kubernetes plugin and the Kubernetes DNS
specification (github.com/kubernetes/dns docs/specification.md), and kube-proxy's choice of endpoints
(podlife.runtime.serviceproxy) against the IPVS proxier's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from dnslib import DNSRecord, RCODE  # type: ignore[import-untyped]

from podlife.runtime.clusterdns import Answers, ClusterView, kube_dns_service, upstream_servers
from podlife.runtime.servicelink import ServiceLink
from podlife.runtime.serviceproxy import ServiceProxy, virtual_servers

SOA = "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 77 7200 1800 86400 30"


def svc(name: str, ns: str = "shop", cluster_ip: str = "10.96.12.34", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"clusterIP": cluster_ip, **({"clusterIPs": [cluster_ip]} if cluster_ip != "None" else {}),
                     "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
                               {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 5353}], **spec}}


def eps(service: str, *endpoints: dict[str, Any], ns: str = "shop") -> dict[str, Any]:
    return {"metadata": {"name": f"{service}-x1", "namespace": ns,
                         "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv4", "endpoints": list(endpoints),
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}, {"name": "dns", "port": 5353,
                                                                           "protocol": "UDP"}]}


SERVICES = [svc("web"), svc("db", cluster_ip="None"), svc("ext", cluster_ip="", type="ExternalName",
                                                          externalName="example.org")]
SLICES = [eps("db", {"addresses": ["10.244.1.5"], "hostname": "db-0", "conditions": {"ready": True}},
              {"addresses": ["10.244.1.6"], "conditions": {"ready": True}},
              {"addresses": ["10.244.1.7"], "conditions": {"ready": False}}),
          eps("web", {"addresses": ["10.244.2.9"], "conditions": {"ready": True}})]
ANSWERS = Answers(ClusterView(lambda: SERVICES, lambda: SLICES, lambda: ["default", "shop"], serial=77))


FORWARDED: tuple[str, list[str], list[str], list[str]] = ("forwarded", [], [], [])


def ask(name: str, qtype: str) -> tuple[str, list[str], list[str], list[str]]:
    """(rcode, answer, authority, additional) as zone-file lines, or FORWARDED."""
    reply = ANSWERS.answer(DNSRecord.question(name, qtype))
    if reply is None:
        return FORWARDED
    assert reply.header.aa == 1
    lines = [[" ".join(rr.toZone().split()) for rr in section] for section in (reply.rr, reply.auth, reply.ar)]
    return RCODE[reply.header.rcode], lines[0], lines[1], lines[2]


def test_cluster_ip_service_a_and_srv() -> None:
    assert ask("web.shop.svc.cluster.local", "A") == (
        "NOERROR", ["web.shop.svc.cluster.local. 30 IN A 10.96.12.34"], [], [])
    assert ask("WEB.shop.svc.cluster.local.", "A")[1] == ["WEB.shop.svc.cluster.local. 30 IN A 10.96.12.34"]
    assert ask("_http._tcp.web.shop.svc.cluster.local", "SRV") == (
        "NOERROR", ["_http._tcp.web.shop.svc.cluster.local. 30 IN SRV 0 100 80 web.shop.svc.cluster.local."], [],
        ["web.shop.svc.cluster.local. 30 IN A 10.96.12.34"])
    assert ask("_dns._udp.web.shop.svc.cluster.local", "SRV")[1] == [
        "_dns._udp.web.shop.svc.cluster.local. 30 IN SRV 0 100 53 web.shop.svc.cluster.local."]
    # a port's name with the wrong protocol does not exist; AAAA of an IPv4 Service is NODATA
    assert ask("_http._udp.web.shop.svc.cluster.local", "SRV") == ("NXDOMAIN", [], [SOA], [])
    assert ask("web.shop.svc.cluster.local", "AAAA") == ("NOERROR", [], [SOA], [])


def test_headless_service_endpoints_hostnames_and_srv_per_endpoint() -> None:
    assert ask("db.shop.svc.cluster.local", "A")[1] == ["db.shop.svc.cluster.local. 30 IN A 10.244.1.5",
                                                        "db.shop.svc.cluster.local. 30 IN A 10.244.1.6"]
    assert ask("db-0.db.shop.svc.cluster.local", "A")[1] == ["db-0.db.shop.svc.cluster.local. 30 IN A 10.244.1.5"]
    assert ask("10-244-1-6.db.shop.svc.cluster.local", "A")[1] == [
        "10-244-1-6.db.shop.svc.cluster.local. 30 IN A 10.244.1.6"]
    assert ask("10-244-1-7.db.shop.svc.cluster.local", "A")[0] == "NXDOMAIN"   # not ready
    assert ask("_http._tcp.db.shop.svc.cluster.local", "SRV") == (
        "NOERROR", ["_http._tcp.db.shop.svc.cluster.local. 30 IN SRV 0 50 8080 db-0.db.shop.svc.cluster.local.",
                    "_http._tcp.db.shop.svc.cluster.local. 30 IN SRV 0 50 8080 10-244-1-6.db.shop.svc.cluster.local."],
        [], ["db-0.db.shop.svc.cluster.local. 30 IN A 10.244.1.5",
             "10-244-1-6.db.shop.svc.cluster.local. 30 IN A 10.244.1.6"])


def test_external_name_pods_ptr_nxdomain_and_forwarding() -> None:
    assert ask("ext.shop.svc.cluster.local", "A")[1] == ["ext.shop.svc.cluster.local. 30 IN CNAME example.org."]
    assert ask("10-244-9-9.shop.pod.cluster.local", "A")[1] == ["10-244-9-9.shop.pod.cluster.local. 30 IN A "
                                                                "10.244.9.9"]
    assert ask("10-244-9-9.nowhere.pod.cluster.local", "A") == ("NXDOMAIN", [], [SOA], [])
    assert ask("34.12.96.10.in-addr.arpa", "PTR")[1] == [
        "34.12.96.10.in-addr.arpa. 30 IN PTR web.shop.svc.cluster.local."]
    assert ask("5.1.244.10.in-addr.arpa", "PTR")[1] == ["5.1.244.10.in-addr.arpa. 30 IN PTR "
                                                        "db-0.db.shop.svc.cluster.local."]
    assert ask("9.9.9.9.in-addr.arpa", "PTR") == FORWARDED   # fallthrough in-addr.arpa
    assert ask("nope.shop.svc.cluster.local", "A") == ("NXDOMAIN", [], [SOA], [])
    assert ask("web.shop.svc.cluster.local.shop.svc.cluster.local", "A")[0] == "NXDOMAIN"   # a search-path try
    assert ask("shop.svc.cluster.local", "A") == ("NOERROR", [], [SOA], [])   # an existing namespace
    assert ask("example.org", "A") == FORWARDED
    assert upstream_servers(b"nameserver 10.96.0.10\nnameserver 192.0.2.53\n#nameserver 1.1.1.1\n",
                            "10.96.0.10") == ["192.0.2.53"]


def test_kube_dns_service_is_kubeadms() -> None:
    s = kube_dns_service("10.96.0.10")
    assert s["metadata"]["labels"] == {"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
                                       "kubernetes.io/name": "CoreDNS"}
    assert s["spec"]["selector"] == {"k8s-app": "kube-dns"}


def test_virtual_servers_ready_endpoints_node_ports_and_affinity() -> None:
    web = svc("web", type="NodePort", externalIPs=["192.0.2.7"], sessionAffinity="ClientIP",
              sessionAffinityConfig={"clientIP": {"timeoutSeconds": 60}})
    web["spec"]["ports"][0]["nodePort"] = 30080
    vs = virtual_servers([web, svc("db", cluster_ip="None"), svc("kube-dns", ns="kube-system")], SLICES,
                         ["127.0.1.1"], {"kube-system/kube-dns"})
    assert sorted(vs) == [("10.96.12.34", 53, "UDP"), ("10.96.12.34", 80, "TCP"), ("127.0.1.1", 30080, "TCP"),
                          ("192.0.2.7", 53, "UDP"), ("192.0.2.7", 80, "TCP")]
    http = vs[("10.96.12.34", 80, "TCP")]
    assert http.endpoints == [("10.244.2.9", 8080)] and http.affinity == 60.0
    # serving terminating endpoints only when none is ready (ProxyTerminatingEndpoints)
    term = eps("web", {"addresses": ["10.244.2.9"], "conditions": {"ready": False, "serving": True,
                                                                   "terminating": True}},
               {"addresses": ["10.244.2.8"], "conditions": {"ready": False, "serving": False,
                                                            "terminating": True}})
    assert virtual_servers([svc("web")], [term], [], set())[("10.96.12.34", 80, "TCP")].endpoints == \
        [("10.244.2.9", 8080)]


def test_round_robin_and_client_ip_persistence() -> None:
    vs = virtual_servers([svc("db", cluster_ip="10.96.0.50")], SLICES, [], set())[("10.96.0.50", 80, "TCP")]
    assert [vs.pick("c1", 0.0) for _ in range(3)] == [("10.244.1.5", 8080), ("10.244.1.6", 8080),
                                                      ("10.244.1.5", 8080)]
    vs.affinity = 10.0
    a, b = ("10.244.1.5", 8080), ("10.244.1.6", 8080)
    assert vs.pick("c1", 0.0) == b
    assert [vs.pick("c1", t) for t in (5.0, 14.0, 23.0)] == [b] * 3   # each use renews the timeout
    assert [vs.pick("c2", 23.0), vs.pick("c3", 30.0)] == [a, b]       # other clients: the next in turn
    assert vs.pick("c1", 40.0) == a                                   # expired: the round robin's turn
    vs.endpoints = []
    assert vs.pick("c1", 41.0) is None


class LoopbackLink(ServiceLink):
    """The Service addresses are loopback ones here (Linux answers all of 127/8): nothing to put on a link."""

    def add(self, ip: str) -> str | None:
        self.addresses.add(ip)
        return None

    def remove(self, ip: str) -> None:
        self.addresses.discard(ip)


def test_proxy_follows_endpoints_that_come_go_and_come_back_before_the_loop_turns() -> None:
    async def run() -> None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"from the endpoint " + await reader.read(5))
            await writer.drain()
            writer.close()
        backend = await asyncio.start_server(answer, "127.0.0.1", 0)
        port = backend.sockets[0].getsockname()[1]
        service = svc("web", cluster_ip="127.0.77.1")
        ready = [eps("web", {"addresses": ["127.0.0.1"], "conditions": {"ready": True}})]
        ready[0]["ports"][0]["port"] = port
        state: dict[str, list[Any]] = {"slices": ready}
        proxy = ServiceProxy(LoopbackLink(), lambda: ([service], state["slices"], []), set(), set())
        # opened, closed and opened again in one turn of the loop: the second bind must not find the first
        proxy.sync()
        state["slices"] = []
        proxy.sync()
        state["slices"] = ready
        proxy.sync()
        await asyncio.sleep(0.05)
        assert proxy.said == {}
        reader, writer = await asyncio.open_connection("127.0.77.1", 80)
        writer.write(b"hello")
        assert await reader.read() == b"from the endpoint hello"
        writer.close()
        # no endpoints: the port is closed, a connection refused
        state["slices"] = []
        proxy.sync()
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.77.1", 80)
        proxy.close()
        backend.close()
    asyncio.run(run())

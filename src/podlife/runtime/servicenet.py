"""Service networking for ``podlife up --runtime process``: the instance's Service interface
(podlife.runtime.servicelink), kube-proxy (podlife.runtime.serviceproxy) and cluster DNS
(podlife.runtime.clusterdns), started with the runtime and stopped with it.

At start, as a kubeadm cluster has it, the kube-system/kube-dns Service is created at the service range's 10th
address (10.96.0.10) if it is not there; the DNS server listens on that address itself (there are no CoreDNS
pods: the Service has no endpoints, and kube-proxy leaves its address to the server), and the kubelets'
clusterDNS is that address. Where the machine does not let podlife make the interface (not root, no
CAP_NET_ADMIN, no iproute2), nothing of this runs and pods keep this machine's resolver.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.registry.service import SERVICE_CLUSTER_IP_RANGE
from podlife.runtime import clusterdns, servicelink
from podlife.runtime.serviceproxy import Endpoint, ServiceProxy

log = logging.getLogger("podlife.runtime")
BY = "kubeadm"   # the field manager of the kube-dns Service kubeadm's addon phase creates


class ServiceNetwork:
    def __init__(self, store: Any, kernel: Any, host: Any, api_endpoint: tuple[str, int],
                 api_listen: tuple[str, int]) -> None:
        self.store = store
        self.kernel = kernel
        self.host = host
        self.api_endpoint = api_endpoint   # what default/kubernetes's endpoints say
        self.api_listen = api_listen       # where the API server really listens
        self.link = servicelink.ServiceLink()
        self.proxy: ServiceProxy | None = None
        self.dns: clusterdns.DnsServer | None = None
        self.watches: list[Any] = []

    async def start(self) -> list[str]:
        """Lines to tell the user."""
        said = []
        if os.geteuid() != 0:
            return ["Service ClusterIPs, NodePorts and cluster DNS are not served: they need root (CAP_NET_ADMIN) "
                    "to put the Services' addresses on an interface; pods use this machine's resolver"]
        left = servicelink.leftovers()
        if left:
            said.append(f"removed the Service interface{'s' if len(left) > 1 else ''} {', '.join(left)} of a "
                        f"podlife up that is no longer running")
        why = self.link.create()
        if why is not None:
            return said + [f"Service ClusterIPs, NodePorts and cluster DNS are not served: cannot make the "
                           f"interface {self.link.name} ({why}); pods use this machine's resolver"]
        dns_ip = clusterdns.dns_ip(SERVICE_CLUSTER_IP_RANGE)   # type: ignore[arg-type]
        said += self._kube_dns(dns_ip)
        self.proxy = ServiceProxy(self.link, self._read, pinned={dns_ip},
                                  skip={"/".join(clusterdns.DNS_SERVICE)}, rewrite=self._rewrite)
        self.proxy.sync()
        for kind in ("Service", "EndpointSlice", "Node"):
            self.watches.append(self.store.watch(kind, self.proxy.changed))
        said.append(f"kube-proxy: Service ClusterIPs and externalIPs are bound to {self.link.name} and proxied to "
                    "their ready endpoints (round robin, sessionAffinity ClientIP), NodePorts on the nodes' "
                    "addresses; a Service port without endpoints refuses connections")
        view = clusterdns.ClusterView(lambda: self.store.list("Service"), lambda: self.store.list("EndpointSlice"),
                                      lambda: [n["metadata"]["name"] for n in self.store.list("Namespace")],
                                      serial=int(self.kernel.now))
        try:
            with open("/etc/resolv.conf", "rb") as f:
                upstream = clusterdns.upstream_servers(f.read(), dns_ip)
        except OSError:
            upstream = []
        self.dns = clusterdns.DnsServer(clusterdns.Answers(view), dns_ip, upstream)
        problems = await self.dns.start()
        if len(problems) == 2:
            said.append(f"cluster DNS is not served ({'; '.join(problems)}; another podlife up?): pods use this "
                        "machine's resolver")
        else:
            self.host.cluster_dns = [dns_ip]
            said.append(f"cluster DNS at {dns_ip}:{clusterdns.DNS_PORT} (kube-system/kube-dns) answers for "
                        f"cluster.local as CoreDNS's kubernetes plugin does and forwards other names to "
                        f"{', '.join(upstream) or 'no nameserver (none in /etc/resolv.conf)'}; pods get their "
                        "resolv.conf by dnsPolicy" + (f" (not served: {problems[0]})" if problems else ""))
        return said

    def _kube_dns(self, ip: str) -> list[str]:
        name = clusterdns.DNS_SERVICE
        svc = self.store.try_get("Service", name[0], name[1])
        if svc is None:
            try:
                self.store.create(clusterdns.kube_dns_service(ip), by=BY, uids=self.kernel.rng("uids:kubeadm"))
            except ApiError as e:
                return [f"the kube-dns Service could not be created ({e.message}); cluster DNS listens on {ip}"]
        elif (svc.get("spec") or {}).get("clusterIP") != ip:
            return [f"kube-system/kube-dns has clusterIP {(svc.get('spec') or {}).get('clusterIP')}; cluster DNS "
                    f"listens on {ip}, the kubelets' clusterDNS"]
        return []

    def _read(self) -> tuple[list[Obj], list[Obj], list[str]]:
        nodes = []
        for n in self.store.list("Node"):
            for a in (n.get("status") or {}).get("addresses") or ():
                if a.get("type") == "InternalIP" and a.get("address"):
                    nodes.append(a["address"])
        return self.store.list("Service"), self.store.list("EndpointSlice"), list(dict.fromkeys(nodes))

    def _rewrite(self, ep: Endpoint) -> Endpoint:
        """default/kubernetes lists the API server's advertised address, a stand-in when it serves on
        loopback (podlife.controlplane.controllers.kubernetesservice): connect to where it listens."""
        return self.api_listen if ep == self.api_endpoint else ep

    def stop(self) -> None:
        for w in self.watches:
            self.store.unwatch(w)
        self.watches.clear()
        if self.proxy is not None:
            self.proxy.close()
        if self.dns is not None:
            self.dns.close()
        self.link.delete()
        self.host.cluster_dns = []


def listen_address(host: str, port: int) -> tuple[str, int]:
    """Where a client on this machine reaches the API server served on ``host``."""
    try:
        if ipaddress.ip_address(host).is_unspecified:
            return ("127.0.0.1", port)
    except ValueError:
        return ("127.0.0.1", port)
    return (host, port)


"""core/v1 Service registry: the ClusterIP and NodePort allocators (pkg/registry/core/service/storage/alloc.go,
pkg/registry/core/service/ipallocator, pkg/registry/core/service/portallocator).

Ranges: ``--service-cluster-ip-range`` is taken as kubeadm's default 10.96.0.0/12 (kube-apiserver's own default
is 10.0.0.0/24, but nearly every cluster is set up by kubeadm or a tool that follows it) and
``--service-node-port-range`` as the API server's default 30000-32767. The cluster is single-stack IPv4.

The allocators keep no state of their own: what is taken is read from the stored Services at each allocation,
as the API server's repair loops (ipallocator/controller/repair.go, portallocator/controller/repair.go) rebuild
the bitmaps from the Services, so a restarted ``podlife up`` and a deleted Service (released) need nothing more.

A dynamic pick follows the bitmap allocator's random scan (pkg/registry/core/service/allocator/bitmap.go
randomScanStrategy / randomScanStrategyWithOffset): a random start in the upper band, scanning forward, then the
lower band reserved for static picks (KEP-3070 ServiceIPStaticSubrange from 1.25, KEP-3668
ServiceNodePortStaticSubrange from 1.28); before those, one random scan over the whole range. The random
numbers come from the seeded generator of the "service-allocator" component. From 1.33 upstream allocates
through IPAddress objects (MultiCIDRServiceAllocator); the picks follow the same two bands, but podlife writes
no IPAddress or ServiceCIDR objects.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from podlife.api import errors
from podlife.api.defaults import externally_accessible
from podlife.api.errors import FieldError
from podlife.api.meta import Obj
from podlife.api.registry.generic import Strategy

if TYPE_CHECKING:
    from podlife.api.store import Store
    from podlife.versions import Profile

SERVICE_CLUSTER_IP_RANGE = ipaddress.ip_network("10.96.0.0/12")   # kubeadm's serviceSubnet default
NODE_PORT_RANGE = (30000, 32767)                                 # --service-node-port-range default
# ipallocator ErrAllocated / portallocator ErrAllocated
IP_ALLOCATED = "provided IP is already allocated"
PORT_ALLOCATED = "provided port is already allocated"


class GoStrings(list):
    """A []string field value, printed in a field error as Go's %#v prints it: []string{"a", "b"}."""

    def __format__(self, spec: str) -> str:
        return "[]string{" + ", ".join(f'"{x}"' for x in self) + "}"


def first_service_ip(cidr: ipaddress.IPv4Network | ipaddress.IPv6Network = SERVICE_CLUSTER_IP_RANGE) -> str:
    """The `kubernetes` Service's IP: the range's first usable address (controlplane ServiceIPRange)."""
    return str(cidr.network_address + 1)


def _ip_offset(size: int) -> int:
    """ipallocator calculateRangeOffset: min(max(16, size/16), 256); none for a range of 16 or fewer."""
    if size <= 16:
        return 0
    return min(max(16, size // 16), 256)


def _port_offset(size: int) -> int:
    """portallocator calculateRangeOffset: min(max(16, size/32), 128); none for a range of 16 or fewer."""
    if size <= 16:
        return 0
    return min(max(16, size // 32), 128)


def _random_scan(rng: Any, taken: set[int], size: int, offset: int) -> int | None:
    """bitmap.go AllocateBit: a random start in [offset, size), scanning forward with wrap-around; then the
    same in [0, offset)."""
    if len(taken) >= size:
        return None
    upper = size - offset
    start = rng.randrange(upper)
    for i in range(upper):
        at = offset + (start + i) % upper
        if at not in taken:
            return at
    if offset:
        start = rng.randrange(offset)
        for i in range(offset):
            at = (start + i) % offset
            if at not in taken:
                return at
    return None


def _needs_cluster_ip(spec: dict) -> bool:
    return spec.get("type") != "ExternalName"


def _needs_node_ports(spec: dict) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer")


def _needs_hc_node_port(spec: dict) -> bool:
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def _node_port_set(spec: dict) -> set[Any]:
    return {p.get("nodePort") for p in _ports(spec) if p.get("nodePort")}


def drop_type_dependent_fields(new: Obj, old: Obj, profile: Profile) -> None:
    """pkg/registry/core/service/strategy.go dropTypeDependentFields (PrepareForUpdate): an update changing the
    type wipes what the old type had and the new one does not use, when the update left it as it was (a changed
    value stays, for validation to refuse). What is wiped is released by the allocators (they read the stored
    Services)."""
    spec, ospec = new.get("spec"), old.get("spec")
    if not isinstance(spec, dict) or not isinstance(ospec, dict):
        return
    if _needs_cluster_ip(ospec) and not _needs_cluster_ip(spec):
        if spec.get("clusterIP") == ospec.get("clusterIP") and \
                (spec.get("clusterIPs") or []) == (ospec.get("clusterIPs") or []):   # sameClusterIPs
            spec.pop("clusterIP", None)
            spec.pop("clusterIPs", None)
        if (spec.get("ipFamilies") or []) == (ospec.get("ipFamilies") or []):
            spec.pop("ipFamilies", None)
        if spec.get("ipFamilyPolicy") == ospec.get("ipFamilyPolicy"):
            spec.pop("ipFamilyPolicy", None)
    # sameNodePorts: no node port that the old Service did not have
    if _needs_node_ports(ospec) and not _needs_node_ports(spec) and _node_port_set(spec) <= _node_port_set(ospec):
        for p in _ports(spec):
            p.pop("nodePort", None)
    if _needs_hc_node_port(ospec) and not _needs_hc_node_port(spec) and \
            spec.get("healthCheckNodePort") == ospec.get("healthCheckNodePort"):
        spec.pop("healthCheckNodePort", None)
    if ospec.get("type") == "LoadBalancer" and spec.get("type") != "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is not None and \
                spec.get("allocateLoadBalancerNodePorts") == ospec.get("allocateLoadBalancerNodePorts"):
            spec.pop("allocateLoadBalancerNodePorts")
        if spec.get("loadBalancerClass") == ospec.get("loadBalancerClass"):   # canSetLoadBalancerClass
            spec.pop("loadBalancerClass", None)
    # ExternallyAccessible (needsExternalTrafficPolicy before PR #119150)
    if externally_accessible(ospec, profile) and not externally_accessible(spec, profile) and \
            spec.get("externalTrafficPolicy") == ospec.get("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    status = new.get("status")
    if spec.get("type") != "LoadBalancer" and isinstance(status, dict) and status.get("loadBalancer"):
        # the load balancer status goes at once (LB de-provisioning is asynchronous, but not shown); the status
        # is the stored one's, so replaced rather than changed
        new["status"] = dict(status, loadBalancer={})


def _ports(spec: dict) -> list[dict]:
    return [p for p in spec.get("ports") or () if isinstance(p, dict)] if isinstance(spec.get("ports"), list) else []


class Allocators:
    """The API server's service IP and node port allocators over one store."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.rng = store.kernel.rng("service-allocator")
        self.cidr = SERVICE_CLUSTER_IP_RANGE
        # NewAllocatorCIDRRange: neither the network address nor (IPv4) the broadcast address is handed out
        self.base = int(self.cidr.network_address) + 1
        self.size = self.cidr.num_addresses - 2
        self.port_base, self.port_size = NODE_PORT_RANGE[0], NODE_PORT_RANGE[1] - NODE_PORT_RANGE[0] + 1
        profile = store.profile
        self.ip_offset = _ip_offset(self.cidr.num_addresses) \
            if profile.service_ip_static_subrange else 0
        self.port_offset = _port_offset(self.port_size) \
            if profile.service_node_port_static_subrange else 0

    # ---- what the stored Services hold (the repair loops' view) -----------------------------------

    def _taken(self, skip: tuple[str, str] | None) -> tuple[set[int], set[int]]:
        ips: set[int] = set()
        ports: set[int] = set()
        for svc in self.store.list("Service"):
            md = svc["metadata"]
            if skip is not None and (md.get("namespace", ""), md["name"]) == skip:
                continue
            spec = svc.get("spec") or {}
            for ip in spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else []):
                index = self._ip_index(ip)
                if index is not None:
                    ips.add(index)
            for p in _ports(spec):
                if isinstance(p.get("nodePort"), int) and p["nodePort"]:
                    ports.add(p["nodePort"] - self.port_base)
            if isinstance(spec.get("healthCheckNodePort"), int) and spec["healthCheckNodePort"]:
                ports.add(spec["healthCheckNodePort"] - self.port_base)
        return ips, ports

    def _ip_index(self, ip: Any) -> int | None:
        try:
            addr = ipaddress.ip_address(ip)
        except (TypeError, ValueError):
            return None
        index = int(addr) - self.base
        return index if addr.version == 4 and 0 <= index < self.size else None

    # ---- allocation (alloc.go allocateCreate / allocateUpdate) ------------------------------------

    def allocate(self, svc: Obj, old: Obj | None) -> None:
        """Fill clusterIP(s), ipFamilies, ipFamilyPolicy and nodePorts of ``svc`` (``old``: the stored Service
        of an update). Raises the API server's 422 for an IP or port that cannot be had."""
        spec = svc.get("spec")
        if not isinstance(spec, dict):
            return
        md = svc.get("metadata") or {}
        name = md.get("name", "")
        ospec = (old or {}).get("spec") or {}
        if old is not None:
            self._keep_allocated(spec, ospec)
        if not _needs_cluster_ip(spec):
            return   # what an ExternalName Service no longer needs went in drop_type_dependent_fields
        taken_ips, taken_ports = self._taken((md.get("namespace", ""), name) if old is not None else None)
        if not self._init_families(spec, old is not None and bool(ospec.get("ipFamilyPolicy")), ospec, name):
            return   # malformed clusterIPs: validation reports them
        cluster_ip = spec.get("clusterIP")
        if cluster_ip != "None" and (old is None or not _needs_cluster_ip(ospec) or not ospec.get("clusterIP")):
            if cluster_ip:
                index = self._ip_index(cluster_ip)
                if index is None:
                    detail = (f"the provided IP ({cluster_ip}) is not in the valid range. The range of valid IPs "
                              f"is {self.cidr}")
                elif index in taken_ips:
                    detail = IP_ALLOCATED
                else:
                    detail = ""
                if detail:
                    raise errors.invalid("Service", name, [FieldError(
                        "spec.clusterIPs", "Invalid value", f"failed to allocate IP {cluster_ip}: {detail}",
                        GoStrings(spec.get("clusterIPs") or [cluster_ip]))])
            else:
                index = _random_scan(self.rng, taken_ips, self.size, self.ip_offset)
                if index is None:
                    raise errors.ApiError(500, "InternalError", "Internal error occurred: failed to allocate a "
                                          "serviceIP: range is full")
                cluster_ip = str(ipaddress.IPv4Address(self.base + index))
            spec["clusterIP"] = cluster_ip
            spec["clusterIPs"] = [cluster_ip]
        if _needs_node_ports(spec):
            self._node_ports(spec, ospec if old is not None else None, taken_ports, name)
        self._health_check_node_port(spec, ospec if old is not None else None, taken_ports)

    def _health_check_node_port(self, spec: dict, ospec: dict | None, taken: set[int]) -> None:
        """allocHealthCheckNodePort: a LoadBalancer Service with externalTrafficPolicy Local (NeedsHealthCheck)
        gets a health check node port from the node port range, kept across updates; without the need it goes."""
        had = (ospec or {}).get("healthCheckNodePort")
        if not _needs_hc_node_port(spec):
            return   # one kept from before went in drop_type_dependent_fields; one set is refused by validation
        want = spec.get("healthCheckNodePort")
        if not want and had:
            spec["healthCheckNodePort"] = had
            return
        if want and want == had:
            return
        if want and isinstance(want, int):
            index = want - self.port_base
            if 0 <= index < self.port_size and index not in taken:
                taken.add(index)
                return
            why = PORT_ALLOCATED if 0 <= index < self.port_size else (
                f"provided port is not in the valid range. The range of valid ports is "
                f"{NODE_PORT_RANGE[0]}-{NODE_PORT_RANGE[1]}")
            raise errors.ApiError(500, "InternalError", f"Internal error occurred: failed to allocate requested "
                                  f"HealthCheck NodePort {want}: {why}")
        drawn = _random_scan(self.rng, taken, self.port_size, self.port_offset)
        if drawn is None:
            raise errors.ApiError(500, "InternalError", "Internal error occurred: failed to allocate a HealthCheck "
                                  "NodePort 0: range is full")
        taken.add(drawn)
        spec["healthCheckNodePort"] = self.port_base + drawn

    @staticmethod
    def _keep_allocated(spec: dict, ospec: dict) -> None:
        """service strategy PrepareForUpdate patchAllocatedValues: an update that leaves out what was
        allocated keeps it (a PUT of a manifest without clusterIP)."""
        if _needs_cluster_ip(ospec) and _needs_cluster_ip(spec):
            if not spec.get("clusterIP") and ospec.get("clusterIP"):
                spec["clusterIP"] = ospec["clusterIP"]
            if not spec.get("clusterIPs") and ospec.get("clusterIPs") and \
                    spec.get("clusterIP") == ospec.get("clusterIP"):
                spec["clusterIPs"] = list(ospec["clusterIPs"])
        if _needs_node_ports(ospec) and _needs_node_ports(spec):
            old_ports = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in _ports(ospec)}
            for p in _ports(spec):
                if not p.get("nodePort") and old_ports.get((p.get("port"), p.get("protocol"))):
                    p["nodePort"] = old_ports[(p.get("port"), p.get("protocol"))]

    def _init_families(self, spec: dict, had_policy: bool, ospec: dict, name: str) -> bool:
        """initIPFamilyFields on a single-stack IPv4 cluster."""
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [cluster_ip]   # the v1 conversion of clusterIP into clusterIPs
        ips = spec.get("clusterIPs")
        if isinstance(ips, list) and ips and not cluster_ip and isinstance(ips[0], str):
            spec["clusterIP"] = cluster_ip = ips[0]
        if spec.get("ipFamilyPolicy") is None:
            if had_policy:
                spec["ipFamilyPolicy"] = ospec["ipFamilyPolicy"]
            elif cluster_ip == "None" and not spec.get("selector"):
                spec["ipFamilyPolicy"] = "RequireDualStack"   # headless and selectorless defaults to dual
            else:
                spec["ipFamilyPolicy"] = "SingleStack"
        if cluster_ip not in (None, "", "None"):
            try:
                ipaddress.ip_address(cluster_ip)
            except (TypeError, ValueError):
                return False
        families = spec.get("ipFamilies")
        if not isinstance(families, list) or not families:
            families = spec["ipFamilies"] = ["IPv4"]
        if cluster_ip == "None" and not spec.get("selector") and len(families) < 2 \
                and spec["ipFamilyPolicy"] != "SingleStack":
            # the one exception: a headless selectorless Service may name both families on a single-stack cluster
            families.append("IPv6" if families[0] == "IPv4" else "IPv4")
            return True
        if cluster_ip == "None":
            return True
        causes = []
        if spec["ipFamilyPolicy"] == "RequireDualStack":
            causes.append(FieldError("spec.ipFamilyPolicy", "Invalid value",
                                     "this cluster is not configured for dual-stack services", spec["ipFamilyPolicy"]))
        for i, fam in enumerate(families):
            if fam != "IPv4":
                causes.append(FieldError(f"spec.ipFamilies[{i}]", "Invalid value", "not configured on this cluster",
                                         fam))
        if causes:
            raise errors.invalid("Service", name, causes)
        return True

    def _node_ports(self, spec: dict, ospec: dict | None, taken: set[int], name: str) -> None:
        """initNodePorts / updateNodePorts: requested ports are claimed, the rest drawn; ports of one Service that
        share a port number share a node port. LoadBalancer with allocateLoadBalancerNodePorts=false draws none."""
        own = {p.get("nodePort") for p in _ports(ospec or {}) if p.get("nodePort")}
        allocate_new = spec.get("type") == "NodePort" or spec.get("allocateLoadBalancerNodePorts", True) is not False
        by_port: dict[Any, int] = {}
        for i, p in enumerate(_ports(spec)):
            requested = p.get("nodePort")
            if requested and isinstance(requested, int):
                if requested in own or by_port.get(p.get("port")) == requested:
                    by_port.setdefault(p.get("port"), requested)
                    taken.add(requested - self.port_base)   # kept: not to be drawn again for another port
                    continue
                index = requested - self.port_base
                if not 0 <= index < self.port_size:
                    detail = (f"provided port is not in the valid range. The range of valid ports is "
                              f"{NODE_PORT_RANGE[0]}-{NODE_PORT_RANGE[1]}")
                elif index in taken:
                    detail = PORT_ALLOCATED
                else:
                    taken.add(index)
                    by_port.setdefault(p.get("port"), requested)
                    continue
                raise errors.invalid("Service", name, [FieldError(f"spec.ports[{i}].nodePort", "Invalid value",
                                                                  detail, requested)])
            if not allocate_new:
                continue
            if p.get("port") in by_port:
                p["nodePort"] = by_port[p.get("port")]
                continue
            drawn = _random_scan(self.rng, taken, self.port_size, self.port_offset)
            if drawn is None:
                raise errors.ApiError(500, "InternalError", "Internal error occurred: failed to allocate a nodePort: "
                                      "range is full")
            taken.add(drawn)
            p["nodePort"] = by_port[p.get("port")] = self.port_base + drawn


def allocators(store: Any) -> Allocators:
    alloc: Allocators | None = store.strategy_state.get("service-allocators")
    if alloc is None:
        alloc = store.strategy_state["service-allocators"] = Allocators(store)
    return alloc


def validate_upgrade_downgrade_cluster_ips(new: Obj, old: Obj) -> list[FieldError]:
    """pkg/apis/core/validation ValidateServiceUpdate validateUpgradeDowngradeClusterIPs: the primary cluster IP
    (and each one kept) may not change, except to, from or on ExternalName, or headless to headless."""
    spec, ospec = new.get("spec") or {}, old.get("spec") or {}
    if not isinstance(spec, dict) or "ExternalName" in (spec.get("type"), ospec.get("type")):
        return []
    ips: list[Any] = spec["clusterIPs"] if isinstance(spec.get("clusterIPs"), list) else []
    oips = ospec.get("clusterIPs") or []
    if ips[:1] == ["None"] and oips[:1] == ["None"]:
        return []
    errs: list[FieldError] = []
    if len(oips) == len(ips):
        for i, ip in enumerate(oips):
            if ip != ips[i]:
                errs.append(FieldError(f"spec.clusterIPs[{i}]", "Invalid value", "may not change once set",
                                       GoStrings(ips)))
    elif len(oips) > len(ips):
        if not ips:
            errs.append(FieldError("spec.clusterIPs[0]", "Invalid value", "primary clusterIP can not be unset",
                                   GoStrings(ips)))
        elif oips and ips[0] != oips[0]:
            errs.append(FieldError("spec.clusterIPs[0]", "Invalid value", "may not change once set", GoStrings(ips)))
    return errs


class ServiceStrategy(Strategy):
    """pkg/registry/core/service/storage: beginCreate / beginUpdate run the allocators (errors as 422)."""

    def prepare_for_create(self, obj: Obj, store: Store) -> None:
        super().prepare_for_create(obj, store)
        if hasattr(store, "kernel"):
            allocators(store).allocate(obj, None)

    def prepare_for_update(self, new: Obj, old: Obj, store: Store) -> None:
        super().prepare_for_update(new, old, store)
        drop_type_dependent_fields(new, old, store.profile)
        if store is not None and hasattr(store, "kernel"):
            allocators(store).allocate(new, old)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validate_upgrade_downgrade_cluster_ips(new, old) + super().validate_update(new, old)

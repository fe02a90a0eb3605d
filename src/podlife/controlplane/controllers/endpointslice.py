"""EndpointSlice and Endpoints controllers.

- EndpointSliceController: pkg/controller/endpointslice/endpointslice_controller.go with the reconciler of
  staging/src/k8s.io/endpointslice (reconciler.go, utils.go podToEndpoint / getEndpointPorts /
  newEndpointSlice, util/controller_utils.go ShouldPodBeInEndpoints / podEndpointsChanged /
  GetServicesToUpdateOnPodChange).
- EndpointsController: pkg/controller/endpoint/endpoints_controller.go (the legacy Endpoints object that
  kube-proxy read before EndpointSliceProxying, 1.19 on Linux).

Both watch Services and Pods, keep an index of the services of each namespace with their parsed selectors
(the ServiceSelectorCache), and sync a service through a work queue: the pod changes of one instant
coalesce into one sync per service (endpointUpdatesBatchPeriod defaults to 0).

Version rules: ``endpoint_terminating_condition`` (KEP-1672): before it, a pod with a deletionTimestamp is
dropped from the slices at the deletion instant and endpoints carry only ``ready``; from it, the pod stays
with ready=false, serving=Ready, terminating=true until it is gone or terminal. ``endpointslice_api``:
discovery.k8s.io/v1beta1 (topology map) before 1.21, v1 (nodeName, zone) from 1.21.
"""

from __future__ import annotations

from typing import Any

from podlife.api import names, selectors
from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    WorkQueue,
    controller_ref,
    is_pod_ready,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

SLICE_COMPONENT = "endpointslice-controller"
ENDPOINTS_COMPONENT = "endpoint-controller"
LABEL_SERVICE_NAME = "kubernetes.io/service-name"               # discovery.LabelServiceName
LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by"     # discovery.LabelManagedBy
CONTROLLER_NAME = "endpointslice-controller.k8s.io"             # endpointslice ControllerName
LABEL_HEADLESS = "service.kubernetes.io/headless"               # v1.IsHeadlessService label
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
MAX_ENDPOINTS_PER_SLICE = 100                                   # --max-endpoints-per-slice default
SLICE_CHANGE_MIN_SYNC_DELAY = 1.0                               # endpointSliceChangeMinSyncDelay

Key = tuple[str, str]


# ---- util/controller_utils.go ----------------------------------------------------------------------------


def is_pod_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def pod_ips(pod: Obj) -> list[str]:
    st = pod.get("status") or {}
    ips = [p.get("ip") for p in st.get("podIPs") or () if p.get("ip")]
    if not ips and st.get("podIP"):
        ips = [st["podIP"]]
    return ips


def should_pod_be_in_endpoints(pod: Obj, include_terminating: bool) -> bool:
    """ShouldPodBeInEndpoints: not terminal, has an IP, and (unless included) not terminating."""
    if is_pod_terminal(pod):
        return False
    if not pod_ips(pod):
        return False
    return include_terminating or not pod["metadata"].get("deletionTimestamp")


def should_set_hostname(pod: Obj, svc: Obj) -> bool:
    spec = pod.get("spec") or {}
    return bool(spec.get("hostname")) and spec.get("subdomain") == svc["metadata"]["name"] and \
        svc["metadata"].get("namespace") == pod["metadata"].get("namespace")


def pod_endpoints_changed(old: Obj, new: Obj) -> tuple[bool, bool]:
    """podEndpointsChanged → (podChanged, labelsChanged). The deletionTimestamp test compares pointers in
    Go: two informer copies of a terminating pod always differ, so any update of a terminating pod counts."""
    os_, ns_ = old.get("spec") or {}, new.get("spec") or {}
    labels_changed = (old["metadata"].get("labels") or {}) != (new["metadata"].get("labels") or {}) or \
        os_.get("hostname") != ns_.get("hostname") or os_.get("subdomain") != ns_.get("subdomain")
    if old["metadata"].get("deletionTimestamp") or new["metadata"].get("deletionTimestamp"):
        return True, labels_changed
    if is_pod_ready(old) != is_pod_ready(new):
        return True, labels_changed
    if pod_ips(old) != pod_ips(new):
        return True, labels_changed
    return False, labels_changed


def find_port(pod: Obj, svc_port: Obj) -> int | None:
    """podutil.FindPort: a named targetPort is looked up among the containers' ports (same protocol)."""
    target = svc_port.get("targetPort", svc_port.get("port"))
    proto = svc_port.get("protocol") or "TCP"
    if isinstance(target, str) and not target.isdigit():
        for c in (pod.get("spec") or {}).get("containers") or ():
            for p in c.get("ports") or ():
                if p.get("name") == target and (p.get("protocol") or "TCP") == proto:
                    return int(p["containerPort"])
        return None
    return int(target) if target is not None else None


def slice_prefix(name: str) -> str:
    """getEndpointSlicePrefix: ``<name>-``, or the bare name when that is not a valid generateName."""
    return f"{name}-" if not names.name_is_dns_subdomain(f"{name}-", True) else name


def _address_type(ip: str) -> str:
    return "IPv6" if ":" in ip else "IPv4"


class _ServiceIndex:
    """The informers both controllers share in shape: services by namespace with their selectors
    (ServiceSelectorCache) and pods by namespace."""

    component = ""

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.queue = WorkQueue(kernel, self.sync_service, sync=True)
        self.services: dict[Key, Obj] = {}
        self.selectors: dict[Key, selectors.Selector | None] = {}   # None: nil selector (selects nothing)
        # per namespace, its services with a selector: only those can take a pod (GetPodServiceMemberships), so
        # a namespace with none (the default one's only Service is often the selectorless `kubernetes`) skips
        # every pod change at once
        self.services_by_ns: dict[str, set[Key]] = {}
        self.pods: dict[str, dict[str, Obj]] = {}                   # namespace -> uid -> pod

    def start(self) -> None:
        for svc in self.store.list("Service"):
            self._index_service(svc)
            self.queue.add(_key(svc))
        for pod in self.store.list("Pod"):
            self.pods.setdefault(pod["metadata"]["namespace"], {})[pod["metadata"]["uid"]] = pod
        self.store.watch("Service", self._on_service)
        self.store.watch("Pod", self._on_pod)

    def _index_service(self, svc: Obj) -> None:
        k = _key(svc)
        self.services[k] = svc
        sel = (svc.get("spec") or {}).get("selector")
        self.selectors[k] = None if sel is None else selectors.label_selector_as_selector(
            {"matchLabels": dict(sel)})
        if sel is None:
            self.services_by_ns.get(k[0], set()).discard(k)
        else:
            self.services_by_ns.setdefault(k[0], set()).add(k)

    def _on_service(self, type_: str, svc: Obj, old: Obj | None) -> None:
        k = _key(svc)
        if type_ == DELETED:
            self.services.pop(k, None)
            self.selectors.pop(k, None)
            self.services_by_ns.get(k[0], set()).discard(k)
        else:
            self._index_service(svc)
        self.queue.add(k)

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        ns, uid = pod["metadata"]["namespace"], pod["metadata"]["uid"]
        if type_ == DELETED:
            self.pods.get(ns, {}).pop(uid, None)
            self._enqueue(self._memberships(pod))  # deletePod → addPod
            return
        self.pods.setdefault(ns, {})[uid] = pod
        if not self.services_by_ns.get(ns):
            return   # no Service with a selector in the namespace: no service to update, whatever changed
        if type_ == "ADDED" or old is None:
            self._enqueue(self._memberships(pod))
            return
        # GetServicesToUpdateOnPodChange
        if pod["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        changed, labels_changed = pod_endpoints_changed(old, pod)
        if not changed and not labels_changed:
            return
        services = self._memberships(pod)
        if labels_changed:
            olds = self._memberships(old)
            # determineNeededServiceUpdates: union if the pod changed, else the symmetric difference
            services = (services | olds) if changed else (services ^ olds)
        self._enqueue(services)

    def _memberships(self, pod: Obj) -> set[Key]:
        """GetPodServiceMemberships: services of the pod's namespace whose (non-nil) selector matches."""
        labels = pod["metadata"].get("labels") or {}
        out = set()
        for k in self.services_by_ns.get(pod["metadata"]["namespace"], ()):
            sel = self.selectors.get(k)
            if sel is not None and sel.matches(labels):
                out.add(k)
        return out

    def _enqueue(self, keys: set[Key]) -> None:
        for k in sorted(keys):
            self.queue.add(k)  # AddAfter(key, endpointUpdatesBatchPeriod=0)

    def _selected_pods(self, svc: Obj) -> list[Obj]:
        sel = self.selectors.get(_key(svc))
        if sel is None:
            return []
        pods = [p for p in self.pods.get(svc["metadata"]["namespace"], {}).values()
                if sel.matches(p["metadata"].get("labels") or {})]
        return sorted(pods, key=lambda p: p["metadata"]["name"])

    def sync_service(self, key: Key) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


# ---- EndpointSlice -----------------------------------------------------------------------------------------


def _endpoint_hash(ep: Obj) -> tuple:
    """endpointHash: addresses, hostname and the target's namespace/name."""
    ref = ep.get("targetRef") or {}
    return (tuple(sorted(ep.get("addresses") or ())), ep.get("hostname"), ref.get("namespace"), ref.get("name"))


def _ports_key(ports: list[Obj]) -> tuple:
    """NewPortMapKey: the ports, sorted."""
    return tuple(sorted((p.get("name") or "", p.get("protocol") or "", p.get("port") or 0,
                         p.get("appProtocol") or "") for p in ports))


class EndpointSliceController(_ServiceIndex):
    """endpointslice_controller.go Controller + reconciler.go reconciler."""

    component = SLICE_COMPONENT

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        super().__init__(kernel, trace, store, profile)
        self.terminating_condition = bool(profile.endpoint_terminating_condition)
        self.api = profile.endpointslice_api

    def start(self) -> None:
        self.deleting: set[str] = set()   # the endpointSliceTracker's expected deletions (slice UIDs)
        super().start()
        self.store.watch("EndpointSlice", self._on_slice)

    def _on_slice(self, type_: str, s: Obj, old: Obj | None) -> None:
        """onEndpointSliceDelete: a managed slice someone else deleted (not expected by the tracker) syncs its
        service again, endpointSliceChangeMinSyncDelay later."""
        if type_ != DELETED:
            return
        md = s["metadata"]
        if md.get("uid") in self.deleting:
            self.deleting.discard(md["uid"])
            return
        labels = md.get("labels") or {}
        if labels.get(LABEL_MANAGED_BY) != CONTROLLER_NAME:
            return
        key = (md.get("namespace", ""), labels.get(LABEL_SERVICE_NAME, ""))
        if key in self.services:
            self.queue.add_after(key, SLICE_CHANGE_MIN_SYNC_DELAY)

    def _managed_slices(self, svc: Obj) -> list[Obj]:
        name = svc["metadata"]["name"]
        return self.store.list("EndpointSlice", svc["metadata"]["namespace"], where=lambda s: (
            (s["metadata"].get("labels") or {}).get(LABEL_SERVICE_NAME) == name and
            (s["metadata"].get("labels") or {}).get(LABEL_MANAGED_BY) == CONTROLLER_NAME))

    def sync_service(self, key: Key) -> None:
        svc = self.services.get(key)
        if svc is None:
            return  # the slices are owned by the service: the garbage collector removes them
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName" or spec.get("selector") is None:
            return
        pods = self._selected_pods(svc)
        slices = [s for s in self._managed_slices(svc) if not s["metadata"].get("deletionTimestamp")]
        self._reconcile(svc, pods, slices)

    # utils.go podToEndpoint
    def _pod_to_endpoint(self, pod: Obj, svc: Obj, address_type: str) -> Obj:
        publish = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
        serving = is_pod_ready(pod)
        terminating = bool(pod["metadata"].get("deletionTimestamp"))
        md = pod["metadata"]
        node_name = (pod.get("spec") or {}).get("nodeName") or ""
        node = self.store.try_get("Node", None, node_name) if node_name else None
        node_labels = (node or {}).get("metadata", {}).get("labels") or {}
        ep: dict[str, Any] = {"addresses": [ip for ip in pod_ips(pod) if _address_type(ip) == address_type]}
        if self.terminating_condition:
            # "ready" is never true for a terminating pod, unless publishNotReadyAddresses
            ep["conditions"] = {"ready": publish or (serving and not terminating), "serving": serving,
                                "terminating": terminating}
        else:
            ep["conditions"] = {"ready": publish or serving}
        if should_set_hostname(pod, svc):
            ep["hostname"] = pod["spec"]["hostname"]
        ep["targetRef"] = {"kind": "Pod", "namespace": md["namespace"], "name": md["name"], "uid": md["uid"]}
        if self.api == "v1beta1":
            topology = {lbl: node_labels[lbl] for lbl in (LABEL_ZONE, LABEL_REGION) if node_labels.get(lbl)}
            if node_name:
                topology["kubernetes.io/hostname"] = node_name
            if topology:
                ep["topology"] = topology
        else:
            if node_name:
                ep["nodeName"] = node_name
            if node_labels.get(LABEL_ZONE):
                ep["zone"] = node_labels[LABEL_ZONE]
        return ep

    @staticmethod
    def _endpoint_ports(svc: Obj, pod: Obj) -> list[Obj]:
        """getEndpointPorts: one port per service port whose target the pod resolves."""
        out = []
        for sp in (svc.get("spec") or {}).get("ports") or ():
            num = find_port(pod, sp)
            if num is None:
                continue
            p: dict[str, Any] = {"name": sp.get("name") or "", "protocol": sp.get("protocol") or "TCP",
                                 "port": num}
            if sp.get("appProtocol"):
                p["appProtocol"] = sp["appProtocol"]
            out.append(p)
        return out

    def _labels(self, svc: Obj) -> dict[str, str]:
        """setEndpointSliceLabels: the service's labels (not the reserved ones), service-name, managed-by,
        and the headless label for a clusterIP None service."""
        labels = {k: v for k, v in (svc["metadata"].get("labels") or {}).items()
                  if k not in (LABEL_SERVICE_NAME, LABEL_MANAGED_BY)}
        if (svc.get("spec") or {}).get("clusterIP") == "None":
            labels[LABEL_HEADLESS] = ""
        labels[LABEL_SERVICE_NAME] = svc["metadata"]["name"]
        labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
        return labels

    def _new_slice(self, svc: Obj, ports: list[Obj], address_type: str) -> Obj:
        """newEndpointSlice (generateName getEndpointSlicePrefix: the bare name if <svc>- is invalid)."""
        return {"apiVersion": f"discovery.k8s.io/{self.api}", "kind": "EndpointSlice",
                "metadata": {"generateName": slice_prefix(svc["metadata"]["name"]),
                             "namespace": svc["metadata"]["namespace"],
                             "labels": self._labels(svc), "ownerReferences": [controller_ref(svc)]},
                "addressType": address_type, "endpoints": [], "ports": clone(ports)}

    def _reconcile(self, svc: Obj, pods: list[Obj], existing: list[Obj]) -> None:
        """reconciler.Reconcile / reconcileByAddressType / reconcileByPortMapping / finalize, for the service's
        address type (IPv4, or IPv6 for a v6-only service)."""
        families = (svc.get("spec") or {}).get("ipFamilies") or ["IPv4"]
        address_type = families[0]
        other_types = [s for s in existing if s.get("addressType") != address_type]
        existing = [s for s in existing if s.get("addressType") == address_type]
        to_delete: list[Obj] = []
        include_terminating = self.terminating_condition or \
            bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
        desired: dict[tuple, dict[tuple, Obj]] = {}   # ports key -> endpoint hash -> endpoint
        desired_ports: dict[tuple, list[Obj]] = {}
        for pod in pods:
            if not should_pod_be_in_endpoints(pod, include_terminating):
                continue
            ports = self._endpoint_ports(svc, pod)
            pk = _ports_key(ports)
            desired_ports.setdefault(pk, ports)
            ep = self._pod_to_endpoint(pod, svc, address_type)
            desired.setdefault(pk, {})[_endpoint_hash(ep)] = ep
        by_ports: dict[tuple, list[Obj]] = {}
        for s in existing:
            by_ports.setdefault(_ports_key(s.get("ports") or []), []).append(s)
        labels = self._labels(svc)
        to_create: list[Obj] = []
        to_update: list[Obj] = []
        for pk, slices in by_ports.items():
            if pk not in desired:
                to_delete.extend(slices)
        for pk, want in desired.items():
            remaining = dict(want)
            updated: list[Obj] = []
            unchanged: list[Obj] = []
            for s in by_ports.get(pk, []):
                new_eps, changed = [], False
                for ep in s.get("endpoints") or ():
                    got = remaining.pop(_endpoint_hash(ep), None)
                    if got is None:
                        changed = True
                        continue
                    changed = changed or got != ep
                    new_eps.append(got)
                if (s["metadata"].get("labels") or {}) != labels:
                    changed = True
                if changed:
                    if not new_eps:
                        to_delete.append(s)
                    else:
                        n = clone(s)
                        n["endpoints"] = new_eps
                        n["metadata"]["labels"] = dict(labels)
                        updated.append(n)
                else:
                    unchanged.append(s)
            # 2. fill the slices being updated, 3. then one unchanged slice with room, then new slices
            left = list(remaining.values())
            for n in updated:
                room = MAX_ENDPOINTS_PER_SLICE - len(n["endpoints"])
                n["endpoints"].extend(left[:room])
                left = left[room:]
            if left:
                for s in sorted(unchanged, key=lambda x: len(x.get("endpoints") or ())):
                    if len(s.get("endpoints") or ()) + len(left) <= MAX_ENDPOINTS_PER_SLICE:
                        n = clone(s)
                        n["endpoints"] = list(n.get("endpoints") or ()) + left
                        updated.append(n)
                        left = []
                        break
            while left:
                n = self._new_slice(svc, desired_ports[pk], address_type)
                n["endpoints"] = left[:MAX_ENDPOINTS_PER_SLICE]
                left = left[MAX_ENDPOINTS_PER_SLICE:]
                to_create.append(n)
            to_update.extend(updated)
        # a placeholder slice (no endpoints, no ports) when no slice would otherwise exist
        if len(existing) == len(to_delete) and not to_create:
            placeholder = self._new_slice(svc, [], address_type)
            if len(to_delete) == 1 and self._is_placeholder(to_delete[0], placeholder):
                to_delete = []
            else:
                to_create.append(placeholder)
        # finalize: a slice to delete of the same address type becomes the update of a slice to create
        i = 0
        while i < len(to_delete) and to_create:
            old = to_delete[i]
            if old.get("addressType") == to_create[0].get("addressType"):
                n = to_create.pop(0)
                n["metadata"] = {**clone(old["metadata"]), "labels": n["metadata"]["labels"]}
                to_update.append(n)
                to_delete.pop(i)
            else:
                i += 1
        for n in to_create:
            self.store.create(n, by=self.component)
        for n in to_update:
            self.store.update(n, by=self.component)
        for s in to_delete + other_types:
            self.deleting.add(s["metadata"]["uid"])
            try:
                self.store.delete("EndpointSlice", s["metadata"]["namespace"], s["metadata"]["name"],
                                  by=self.component)
            except ApiError as e:
                if e.reason != "NotFound":
                    raise
                self.deleting.discard(s["metadata"]["uid"])

    @staticmethod
    def _is_placeholder(s: Obj, placeholder: Obj) -> bool:
        """placeholderSliceCompare: namespace, owners, address type, no endpoints, no ports."""
        return s["metadata"].get("namespace") == placeholder["metadata"]["namespace"] and \
            s["metadata"].get("ownerReferences") == placeholder["metadata"]["ownerReferences"] and \
            s.get("addressType") == placeholder["addressType"] and not s.get("endpoints") and not s.get("ports")


# ---- Endpoints ---------------------------------------------------------------------------------------------


class EndpointsController(_ServiceIndex):
    """pkg/controller/endpoint/endpoints_controller.go Controller.syncService."""

    component = ENDPOINTS_COMPONENT

    def sync_service(self, key: Key) -> None:
        ns, name = key
        svc = self.services.get(key)
        if svc is None:
            # the service is gone: delete its Endpoints
            if self.store.try_get("Endpoints", ns, name) is not None:
                try:
                    self.store.delete("Endpoints", ns, name, by=self.component)
                except ApiError as e:
                    if e.reason != "NotFound":
                        raise
            return
        spec = svc.get("spec") or {}
        if spec.get("selector") is None:
            return  # Endpoints of a selector-less service are the user's
        publish = bool(spec.get("publishNotReadyAddresses"))
        subsets: list[tuple[Obj, bool, Obj | None]] = []   # (address, ready, port)
        for pod in self._selected_pods(svc):
            if not should_pod_be_in_endpoints(pod, publish):
                continue
            md = pod["metadata"]
            addr: dict[str, Any] = {"ip": pod_ips(pod)[0]}
            if should_set_hostname(pod, svc):
                addr["hostname"] = pod["spec"]["hostname"]
            if (pod.get("spec") or {}).get("nodeName"):
                addr["nodeName"] = pod["spec"]["nodeName"]
            addr["targetRef"] = {"kind": "Pod", "namespace": md["namespace"], "name": md["name"], "uid": md["uid"]}
            ready = publish or is_pod_ready(pod)
            if not spec.get("ports"):
                if spec.get("clusterIP") == "None":  # a headless service may have no ports
                    subsets.append((addr, ready, None))
                continue
            for sp in spec["ports"]:
                num = find_port(pod, sp)
                if num is None:
                    continue
                epp: dict[str, Any] = {}
                if sp.get("name"):
                    epp["name"] = sp["name"]
                epp["port"] = num
                epp["protocol"] = sp.get("protocol") or "TCP"
                if sp.get("appProtocol"):
                    epp["appProtocol"] = sp["appProtocol"]
                subsets.append((addr, ready, epp))
        packed = repack_subsets(subsets)
        labels = dict(svc["metadata"].get("labels") or {})
        if spec.get("clusterIP") == "None":
            labels[LABEL_HEADLESS] = ""
        cur = self.store.try_get("Endpoints", ns, name)
        if cur is not None and (cur.get("subsets") or []) == packed and \
                (cur["metadata"].get("labels") or {}) == labels:
            return
        if cur is None:
            obj: Obj = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name, "namespace": ns}}
        else:
            obj = clone(cur)
        if labels:
            obj["metadata"]["labels"] = labels
        else:
            obj["metadata"].pop("labels", None)
        if packed:
            obj["subsets"] = packed
        else:
            obj.pop("subsets", None)
        if cur is None:
            self.store.create(obj, by=self.component)
        else:
            self.store.update(obj, by=self.component)


def repack_subsets(entries: list[tuple[Obj, bool, Obj | None]]) -> list[Obj]:
    """pkg/api/v1/endpoints RepackSubsets: ports with the same ready / not-ready address sets share a subset;
    addresses sorted by IP then UID. (Upstream orders ports and subsets by a hash of their content; here by
    port name/number and first address, which agree for one port.)"""
    by_port: dict[tuple, tuple[Obj | None, dict[tuple, Obj], dict[tuple, Obj]]] = {}
    for addr, ready, port in entries:
        pk = (port or {}).get("name", ""), (port or {}).get("port", 0), (port or {}).get("protocol", "")
        slot = by_port.setdefault(pk, (port, {}, {}))
        ak = (addr["ip"], addr["targetRef"]["uid"])
        # mapAddressByPort: a ready copy wins over a not-ready one
        if ready:
            slot[1][ak] = addr
            slot[2].pop(ak, None)
        elif ak not in slot[1]:
            slot[2][ak] = addr
    groups: dict[tuple, tuple[list[Obj], list[Obj], list[Obj]]] = {}
    for pk in sorted(by_port):
        port, ready_at, not_ready_at = by_port[pk]
        gk = (tuple(sorted(ready_at)), tuple(sorted(not_ready_at)))
        g = groups.setdefault(gk, ([clone(ready_at[k]) for k in sorted(ready_at)],
                                   [clone(not_ready_at[k]) for k in sorted(not_ready_at)], []))
        if port is not None:
            g[2].append(port)
    out = []
    for addrs, nra, ports in groups.values():
        s: dict[str, Any] = {}
        if addrs:
            s["addresses"] = addrs
        if nra:
            s["notReadyAddresses"] = nra
        if ports:
            s["ports"] = ports
        out.append(s)
    return out



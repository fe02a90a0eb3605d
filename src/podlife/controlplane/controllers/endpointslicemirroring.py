"""EndpointSliceMirroring controller: pkg/controller/endpointslicemirroring (endpointslicemirroring_controller.go,
reconciler.go, reconciler_helpers.go, utils.go), KEP-752, in kube-controller-manager from 1.19.

The Endpoints of a Service without a selector (written by hand or by another controller) are mirrored into
EndpointSlices, so that EndpointSlice readers (kube-proxy, DNS) see them: one slice per distinct port list and
address family, labelled managed-by endpointslicemirroring-controller.k8s.io and kubernetes.io/service-name,
carrying the Endpoints' labels and annotations (but the trigger-time and last-applied ones), owned by the
Endpoints. Not mirrored: Endpoints labelled endpointslice.kubernetes.io/skip-mirror=true (the API server's own
``default/kubernetes``, whose slice it writes itself), Endpoints carrying a leader-election record, Endpoints
with no Service of their name, or whose Service has a selector (the EndpointSlice controller's). An address that
is not an IP is skipped with a Warning InvalidIPAddress event; at most 1000 addresses of a subset are mirrored
(--mirroring-max-endpoints-per-subset), the rest skipped with a Warning TooManyAddressesToMirror event.

The Endpoints are taken subset by subset as written: upstream first repacks them (RepackSubsets), which merges
subsets with identical ports (mirrored into one slice here too) and orders ports by a hash; here the ports keep
their written order. Endpoints within a slice keep the subsets' order (upstream pops them from a set).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import WorkQueue, controller_ref
from podlife.controlplane.controllers.endpointslice import LABEL_MANAGED_BY, LABEL_SERVICE_NAME, slice_prefix
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "endpoint-slice-mirroring-controller"             # its event recorder's source
CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io"   # the managed-by label's value
LABEL_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"  # discovery.LabelSkipMirror
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"  # resourcelock.LeaderElectionRecordAnnotationKey
TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
MAX_ENDPOINTS_PER_SUBSET = 1000   # --mirroring-max-endpoints-per-subset default
MAX_RETRIES = 15
SYNC_BACKOFF, MAX_SYNC_BACKOFF = 1.0, 100.0   # defaultSyncBackOff, maxSyncBackOff

Key = tuple[str, str]


def should_mirror(ep: Obj) -> bool:
    """shouldMirror: not labelled skip-mirror=true, no leader-election annotation."""
    md = ep["metadata"]
    return (md.get("labels") or {}).get(LABEL_SKIP_MIRROR) != "true" and LEADER_ANNOTATION not in (
        md.get("annotations") or {})


def _has_selector(svc: Obj) -> bool:
    # an empty selector is nil to the informer (omitempty): only a non-empty one counts
    return bool((svc.get("spec") or {}).get("selector"))


def _address_type(ip: Any) -> str | None:
    """getAddressType: IPv4 or IPv6, None for what is not an IP."""
    try:
        return "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    except (TypeError, ValueError):
        return None


def _slice_ports(ports: list[Any]) -> list[Obj]:
    """epPortsToEpsPorts: name, port and protocol always set (pointers to the Endpoints' values)."""
    out = []
    for p in ports:
        p = p if isinstance(p, dict) else {}
        port: Obj = {"name": p.get("name", ""), "protocol": p.get("protocol") or "TCP", "port": p.get("port")}
        if p.get("appProtocol") is not None:
            port["appProtocol"] = p["appProtocol"]
        out.append(port)
    return out


def _ports_key(ports: list[Obj], address_type: str) -> tuple:
    """newAddrTypePortMapKey: the ports in order of name, then the address type."""
    return tuple(sorted((p.get("name") or "", p.get("port") or 0, p.get("protocol") or "",
                         p.get("appProtocol") or "") for p in ports)), address_type


class EndpointSliceMirroringController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.store = store
        self.recorder = EventRecorder(store, COMPONENT)
        self.api = profile.endpointslice_api
        self.queue = WorkQueue(kernel, self.sync_endpoints, sync=True, max_retries=MAX_RETRIES)
        self.queue.BASE_DELAY, self.queue.MAX_DELAY = SYNC_BACKOFF, MAX_SYNC_BACKOFF
        # the endpointSliceTracker: the resourceVersion of each slice as this controller last wrote it, and the
        # slices it deletes; its own writes coming back through the watch bring no sync
        self.written: dict[str, str] = {}
        self.deleting: set[str] = set()
        # the mirrored slices' names by Endpoints (what endpointSlicesMirroredForService would list), so that the
        # sync of an Endpoints not to mirror (every selector Service's) reads no slices when it has none
        self.names: dict[Key, set[str]] = {}
        self.slice_key: dict[Key, Key] = {}   # a mirrored slice (namespace, name) -> its Endpoints

    def start(self) -> None:
        for s in self.store.list("EndpointSlice"):
            self._index(s, "ADDED")
        for ep in self.store.list("Endpoints"):
            if should_mirror(ep):
                self.queue.add(_key(ep))
        for svc in self.store.list("Service"):
            if not _has_selector(svc):
                self.queue.add(_key(svc))
        self.store.watch("Service", self._on_service)
        self.store.watch("Endpoints", self._on_endpoints)
        self.store.watch("EndpointSlice", self._on_slice)

    # ---- event handlers (endpointslicemirroring_controller.go on*) ---------------------------------------

    def _on_service(self, type_: str, svc: Obj, old: Obj | None) -> None:
        if old is not None and type_ != DELETED:
            if _has_selector(svc) != _has_selector(old):   # onServiceUpdate: the selector came or went
                self.queue.add(_key(svc))
        elif not _has_selector(svc):
            self.queue.add(_key(svc))

    def _on_endpoints(self, type_: str, ep: Obj, old: Obj | None) -> None:
        if should_mirror(ep) or (old is not None and type_ != DELETED and should_mirror(old)):
            self.queue.add(_key(ep))

    def _index(self, s: Obj, type_: str) -> None:
        md = s["metadata"]
        at = (md.get("namespace", ""), md["name"])
        was = self.slice_key.pop(at, None)
        if was is not None:
            self.names[was].discard(md["name"])
            if not self.names[was]:
                del self.names[was]
        key = _owner(s)
        if key is not None and type_ != DELETED:
            self.slice_key[at] = key
            self.names.setdefault(key, set()).add(md["name"])

    def _on_slice(self, type_: str, s: Obj, old: Obj | None) -> None:
        self._index(s, type_)
        md = s["metadata"]
        labels = md.get("labels") or {}
        if old is not None and type_ != DELETED:
            old_labels = old["metadata"].get("labels") or {}
            if labels.get(LABEL_SERVICE_NAME) != old_labels.get(LABEL_SERVICE_NAME):
                self._queue_for_slice(s)
                self._queue_for_slice(old)
                return
            if (labels.get(LABEL_MANAGED_BY) == CONTROLLER_NAME) != (
                    old_labels.get(LABEL_MANAGED_BY) == CONTROLLER_NAME):
                self._queue_for_slice(s)
                return
        if labels.get(LABEL_MANAGED_BY) != CONTROLLER_NAME:
            return
        if type_ == DELETED:
            if md["uid"] in self.deleting:
                self.deleting.discard(md["uid"])   # HandleDeletion: expected
            elif md["uid"] in self.written:
                self._queue_for_slice(s)
            self.written.pop(md["uid"], None)
        elif self.written.get(md["uid"]) != md.get("resourceVersion"):   # ShouldSync: someone else's change
            self._queue_for_slice(s)

    def _queue_for_slice(self, s: Obj) -> None:
        """queueEndpointsForEndpointSlice: the Endpoints of the slice's service-name label."""
        name = (s["metadata"].get("labels") or {}).get(LABEL_SERVICE_NAME)
        if name:
            self.queue.add((s["metadata"].get("namespace", ""), name))

    # ---- syncEndpoints ---------------------------------------------------------------------------------

    def _mirrored(self, ns: str, name: str) -> list[Obj]:
        """endpointSlicesMirroredForService: by the service-name and managed-by labels."""
        def mirrored(s: Obj) -> bool:
            labels = s["metadata"].get("labels") or {}
            return labels.get(LABEL_SERVICE_NAME) == name and labels.get(LABEL_MANAGED_BY) == CONTROLLER_NAME
        return self.store.list("EndpointSlice", ns, where=mirrored)

    def sync_endpoints(self, key: Key) -> None:
        ns, name = key
        ep = self.store.try_get("Endpoints", ns, name)
        svc = self.store.try_get("Service", ns, name) if ep is not None and should_mirror(ep) else None
        if ep is None or svc is None or _has_selector(svc) or not should_mirror(ep):
            if key not in self.names:
                return   # none mirrored
            for s in self._mirrored(ns, name):   # deleteMirroredSlices
                self._delete(s)
            return
        self._reconcile(ep, self._mirrored(ns, name))

    def _reconcile(self, ep: Obj, existing: list[Obj]) -> None:
        """reconciler.reconcile: the desired endpoints by port list and address type, then one slice each."""
        desired: dict[tuple, list[Obj]] = {}
        ports_by_key: dict[tuple, list[Obj]] = {}
        invalid = skipped = 0
        for subset in ep.get("subsets") or ():
            subset = subset if isinstance(subset, dict) else {}
            ports = _slice_ports(subset.get("ports") or [])
            keys = {t: _ports_key(ports, t) for t in ("IPv4", "IPv6")}
            for k in keys.values():   # initPorts: both families' keys exist, an empty one deletes its slices
                desired.setdefault(k, [])
                ports_by_key[k] = ports
            addresses = [(a, True) for a in subset.get("addresses") or ()] + \
                [(a, False) for a in subset.get("notReadyAddresses") or ()]
            added = 0
            for address, ready in addresses:
                if added >= MAX_ENDPOINTS_PER_SUBSET:
                    break
                family = _address_type((address or {}).get("ip"))
                if family is None:
                    invalid += 1
                    continue
                endpoint = self._endpoint(address, ready)
                if endpoint not in desired[keys[family]]:   # an EndpointSet: one of each
                    desired[keys[family]].append(endpoint)
                added += 1
            skipped += len(addresses) - added
        if invalid:
            self.recorder.event(ep, "Warning", "InvalidIPAddress",
                                f"Skipped {invalid} invalid IP addresses when mirroring to EndpointSlices")
        if skipped > invalid:
            self.recorder.event(ep, "Warning", "TooManyAddressesToMirror",
                                f"A max of {MAX_ENDPOINTS_PER_SUBSET} addresses can be mirrored to EndpointSlices "
                                f"per Endpoints subset. {skipped} addresses were skipped")
        by_key: dict[tuple, list[Obj]] = {}
        for s in existing:
            by_key.setdefault(_ports_key(s.get("ports") or [], s.get("addressType", "")), []).append(s)
        to_create: list[Obj] = []
        to_update: list[Obj] = []
        to_delete: list[Obj] = []
        for k, endpoints in desired.items():
            have = by_key.get(k, [])
            if not endpoints:
                to_delete += have
                continue
            to_delete += have[1:]
            if have and self._unchanged(ep, have[0], endpoints):
                continue
            new = self._new_slice(ep, ports_by_key[k], k[1], have[0]["metadata"]["name"] if have else "")
            new["endpoints"] = endpoints[:MAX_ENDPOINTS_PER_SUBSET]
            (to_update if have else to_create).append(new)
        for k, have in by_key.items():
            if k not in desired:
                to_delete += have
        # recycleSlices: a slice to create takes the name of one of its address type to delete
        for new in list(to_create):
            same = next((s for s in to_delete if s.get("addressType") == new["addressType"]), None)
            if same is not None:
                to_create.remove(new)
                to_delete.remove(same)
                new["metadata"] = {"name": same["metadata"]["name"],
                                   **{k: v for k, v in new["metadata"].items() if k != "generateName"}}
                to_update.append(new)
        if not ep["metadata"].get("deletionTimestamp"):
            for new in to_create:
                try:
                    made = self.store.create(new, by=COMPONENT)
                except ApiError as e:
                    if "because it is being terminated" in e.message:   # NamespaceTerminatingCause
                        return
                    raise
                self.written[made["metadata"]["uid"]] = made["metadata"]["resourceVersion"]
                self._index(made, "ADDED")
        for new in to_update:
            made = self.store.update(new, by=COMPONENT)
            self.written[made["metadata"]["uid"]] = made["metadata"]["resourceVersion"]
        for s in to_delete:
            self._delete(s)

    def _endpoint(self, address: Obj, ready: bool) -> Obj:
        """addressToEndpoint (v1beta1 before 1.21: the node name as the kubernetes.io/hostname topology)."""
        endpoint: Obj = {"addresses": [address["ip"]], "conditions": {"ready": ready}}
        if address.get("hostname"):
            endpoint["hostname"] = address["hostname"]
        if address.get("targetRef") is not None:
            endpoint["targetRef"] = clone(address["targetRef"])
        if address.get("nodeName") is not None:
            if self.api == "v1":
                endpoint["nodeName"] = address["nodeName"]
            else:
                endpoint["topology"] = {"kubernetes.io/hostname": address["nodeName"]}
        return endpoint

    @staticmethod
    def _unchanged(ep: Obj, have: Obj, endpoints: list[Obj]) -> bool:
        """reconcileByPortMapping: no endpoint added, changed or removed, and the labels and annotations as the
        Endpoints' (the slice's own two labels and the two annotations left out)."""
        if sorted(map(repr, have.get("endpoints") or [])) != sorted(map(repr, endpoints)):
            return False
        labels = {k: v for k, v in (have["metadata"].get("labels") or {}).items()
                  if k not in (LABEL_MANAGED_BY, LABEL_SERVICE_NAME)}
        return labels == (ep["metadata"].get("labels") or {}) and \
            _mirrored_annotations(ep) == (have["metadata"].get("annotations") or {})

    def _new_slice(self, ep: Obj, ports: list[Obj], address_type: str, name: str) -> Obj:
        """newEndpointSlice: owned by the Endpoints, its labels and annotations copied."""
        md = ep["metadata"]
        labels = dict(md.get("labels") or {})
        labels[LABEL_SERVICE_NAME] = md["name"]
        labels[LABEL_MANAGED_BY] = CONTROLLER_NAME
        meta: Obj = {"name": name} if name else {"generateName": slice_prefix(md["name"])}
        meta.update(namespace=md["namespace"], labels=labels)
        annotations = _mirrored_annotations(ep)
        if annotations:
            meta["annotations"] = annotations
        meta["ownerReferences"] = [controller_ref(ep)]
        return {"apiVersion": f"discovery.k8s.io/{self.api}", "kind": "EndpointSlice", "metadata": meta,
                "addressType": address_type, "endpoints": [], "ports": clone(ports)}

    def _delete(self, s: Obj) -> None:
        uid = s["metadata"]["uid"]
        self.deleting.add(uid)
        try:
            self.store.delete("EndpointSlice", s["metadata"]["namespace"], s["metadata"]["name"], by=COMPONENT)
        except ApiError as e:
            self.deleting.discard(uid)
            if e.reason != "NotFound":
                raise


def _mirrored_annotations(ep: Obj) -> dict[str, str]:
    return {k: v for k, v in (ep["metadata"].get("annotations") or {}).items() if k not in (TRIGGER_TIME, LAST_APPLIED)}


def _owner(s: Obj) -> Key | None:
    """The Endpoints a mirrored slice is for (its service-name label), None for a slice not mirrored."""
    labels = s["metadata"].get("labels") or {}
    if labels.get(LABEL_MANAGED_BY) != CONTROLLER_NAME or not labels.get(LABEL_SERVICE_NAME):
        return None
    return s["metadata"].get("namespace", ""), labels[LABEL_SERVICE_NAME]


def _key(obj: Obj) -> Key:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]

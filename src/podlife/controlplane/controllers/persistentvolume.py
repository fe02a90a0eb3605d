"""The PersistentVolume controller's binder: pkg/controller/volume/persistentvolume/pv_controller.go.

A Pending claim is bound to the smallest Available volume of its class whose capacity, access modes and volume
mode fit (findBestMatchForClaim); binding writes the volume's claimRef, its phase Bound, the claim's volumeName
and bind annotations, then the claim's phase Bound with the volume's capacity. A claim of a WaitForFirstConsumer
class waits for the scheduler's selected-node annotation. With no volume to bind and a class with a
provisioner, the claim is handed to that (external) provisioner, podlife.controlplane.provisioner. A claim that
is deleted (once the PVC protection controller lets it go) releases its volume, which a Delete reclaim policy
then removes.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone
from podlife.api.quantity import parse_quantity
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import WorkQueue
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "persistentvolume-controller"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
PROVISIONER_ANNOTATIONS = ("volume.beta.kubernetes.io/storage-provisioner", "volume.kubernetes.io/storage-provisioner")
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"

Key = tuple[str, str]


def storage_request(claim: Obj) -> Fraction:
    req = (((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
    return parse_quantity(req) if req is not None else Fraction(0)


def claim_class(claim: Obj) -> str:
    return (claim.get("spec") or {}).get("storageClassName") or ""


def is_bound(claim: Obj) -> bool:
    return (claim.get("status") or {}).get("phase") == "Bound"


class PersistentVolumeController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.events = EventRecorder(store, COMPONENT)
        self.queue = WorkQueue(kernel, self.sync_claim, sync=True)
        self._waiting_reported: set[str] = set()

    def start(self) -> None:
        self.store.watch("PersistentVolumeClaim", self._on_claim)
        self.store.watch("PersistentVolume", self._on_volume)

    def _on_claim(self, type_: str, claim: Obj, old: Obj | None) -> None:
        key = (claim["metadata"]["namespace"], claim["metadata"]["name"])
        if type_ == DELETED:
            self._release(claim)
            return
        self.queue.add(key)

    def _on_volume(self, type_: str, pv: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            return
        if (pv.get("status") or {}).get("phase") == "Pending":
            # syncVolume: a new volume is Available (pre-bound or not) until a bind makes it Bound
            self._set_volume_phase(pv, "Available")
            return
        ref = pv["spec"].get("claimRef")
        if ref:
            self.queue.add((ref.get("namespace", ""), ref.get("name", "")))
        else:   # a new Available volume may fit a waiting claim
            for claim in self.store.list("PersistentVolumeClaim"):
                if not is_bound(claim):
                    self.queue.add((claim["metadata"]["namespace"], claim["metadata"]["name"]))

    # ---- syncUnboundClaim ----------------------------------------------------------------------------------

    def sync_claim(self, key: Key) -> None:
        claim = self.store.try_get("PersistentVolumeClaim", *key)
        if claim is None or is_bound(claim) or claim["metadata"].get("deletionTimestamp"):
            return
        name = claim["spec"].get("volumeName")
        if name:   # pre-bound to a volume, or the binder's own half-done bind
            pv = self.store.try_get("PersistentVolume", None, name)
            if pv is not None:
                self._bind(claim, pv)
            return
        cls = self.store.try_get("StorageClass", None, claim_class(claim)) if claim_class(claim) else None
        delayed = cls is not None and cls.get("volumeBindingMode") == "WaitForFirstConsumer"
        if delayed and SELECTED_NODE not in (claim["metadata"].get("annotations") or {}):
            # the scheduler binds it when a pod using it is scheduled
            uid = claim["metadata"]["uid"]
            if uid not in self._waiting_reported:
                self._waiting_reported.add(uid)
                self.events.event(claim, "Normal", "WaitForFirstConsumer",
                                  "waiting for first consumer to be created before binding")
            return
        pv = self._best_match(claim)
        if pv is not None:
            self._bind(claim, pv)
            return
        if cls is None or not cls.get("provisioner") or cls.get("provisioner") == "kubernetes.io/no-provisioner":
            if cls is None and not claim_class(claim):
                self.events.event(claim, "Normal", "FailedBinding",
                                  "no persistent volumes available for this claim and no storage class is set")
            return
        self._hand_to_provisioner(claim, cls["provisioner"])

    def _best_match(self, claim: Obj) -> Obj | None:
        """findBestMatchForClaim: a volume pre-bound to the claim, else the smallest fitting Available one."""
        md = claim["metadata"]
        for pv in self.store.list("PersistentVolume"):
            ref = pv["spec"].get("claimRef") or {}
            if (ref.get("namespace"), ref.get("name")) == (md["namespace"], md["name"]) and \
                    ref.get("uid") in (None, md["uid"]):
                return pv
        want = storage_request(claim)
        modes = set(claim["spec"].get("accessModes") or ())
        best = None
        for pv in self.store.list("PersistentVolume"):
            spec = pv["spec"]
            if (pv.get("status") or {}).get("phase") != "Available" or spec.get("claimRef"):
                continue
            if (spec.get("storageClassName") or "") != claim_class(claim):
                continue
            if spec.get("volumeMode", "Filesystem") != claim["spec"].get("volumeMode", "Filesystem"):
                continue
            if not modes <= set(spec.get("accessModes") or ()):
                continue
            size = parse_quantity((spec.get("capacity") or {}).get("storage", "0"))
            if size < want:
                continue
            if best is None or size < best[0]:
                best = (size, pv)
        return best[1] if best else None

    def _hand_to_provisioner(self, claim: Obj, provisioner: str) -> None:
        annotations = claim["metadata"].get("annotations") or {}
        if all(annotations.get(a) == provisioner for a in PROVISIONER_ANNOTATIONS):
            return
        new = clone(claim)
        new["metadata"].setdefault("annotations", {}).update(dict.fromkeys(PROVISIONER_ANNOTATIONS, provisioner))
        try:
            self.store.update(new, by=COMPONENT)
        except ApiError:
            return
        self.events.event(claim, "Normal", "ExternalProvisioning",
                          self.profile.external_provisioning_message.format(provisioner=provisioner))

    def _bind(self, claim: Obj, pv: Obj) -> None:
        """bind: the volume's claimRef and phase, then the claim's volumeName and phase."""
        md = claim["metadata"]
        try:
            if (pv["spec"].get("claimRef") or {}).get("uid") != md["uid"]:
                new = clone(pv)
                new["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": md["namespace"],
                                           "name": md["name"], "uid": md["uid"], "apiVersion": "v1",
                                           "resourceVersion": md.get("resourceVersion")}
                new["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = "yes"
                pv = self.store.update(new, by=COMPONENT)
            if (pv.get("status") or {}).get("phase") != "Bound":
                pv = self._set_volume_phase(pv, "Bound")
            new = clone(self.store.get("PersistentVolumeClaim", md["namespace"], md["name"]))
            if new["spec"].get("volumeName") != pv["metadata"]["name"] or \
                    (new["metadata"].get("annotations") or {}).get(BIND_COMPLETED) != "yes":
                new["spec"]["volumeName"] = pv["metadata"]["name"]
                ann = new["metadata"].setdefault("annotations", {})
                ann[BIND_COMPLETED] = "yes"
                ann[BOUND_BY_CONTROLLER] = "yes"
                new = clone(self.store.update(new, by=COMPONENT))
            new["status"] = {"phase": "Bound", "accessModes": list(pv["spec"].get("accessModes") or ()),
                             "capacity": dict(pv["spec"].get("capacity") or {})}
            self.store.update(new, by=COMPONENT, subresource="status")
        except ApiError:
            self.queue.add_rate_limited((md["namespace"], md["name"]))

    def _set_volume_phase(self, pv: Obj, phase: str) -> Obj:
        new = clone(pv)
        new["status"] = {"phase": phase}
        return self.store.update(new, by=COMPONENT, subresource="status")

    def _release(self, claim: Obj) -> None:
        """syncVolume: a deleted claim makes its volume Released (which lets the PV protection controller drop
        its finalizer); reclaimVolume: reclaimPolicy Delete then removes it (the provisioner's job for
        provisioned volumes, done here at once), Retain keeps it Released."""
        name = (claim.get("spec") or {}).get("volumeName")
        pv = self.store.try_get("PersistentVolume", None, name) if name else None
        if pv is None or (pv["spec"].get("claimRef") or {}).get("uid") != claim["metadata"]["uid"]:
            return
        try:
            pv = self._set_volume_phase(pv, "Released")
            if pv["spec"].get("persistentVolumeReclaimPolicy") == "Delete":
                self.store.delete("PersistentVolume", None, pv["metadata"]["name"], by=COMPONENT)
        except ApiError:
            pass


def claim_ref_error(store: Any, namespace: str, name: str) -> str | None:
    """Why a pod cannot use this claim yet (the scheduler's VolumeBinding PreFilter), or None."""
    claim = store.try_get("PersistentVolumeClaim", namespace, name)
    if claim is None:
        return f'persistentvolumeclaim "{name}" not found'
    if claim["metadata"].get("deletionTimestamp"):
        return f'persistentvolumeclaim "{name}" is being deleted'
    return None

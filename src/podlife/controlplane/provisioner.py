"""A CSI external-provisioner for each StorageClass provisioner (kubernetes-csi/external-provisioner with the
sig-storage-lib-external-provisioner controller): claims the PersistentVolume controller hands to it (the
storage-provisioner annotation) are provisioned after a delay, as a volume ``pvc-<claim uid>`` pre-bound to the
claim; the binder then completes the bind. A WaitForFirstConsumer claim is provisioned once the scheduler has
chosen its node. podlife cannot know a real driver's latency: it is the class's ``podlife/provisioning-seconds``
annotation, else 2 s, and the report lists that assumption.
"""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.persistentvolume import (
    PROVISIONER_ANNOTATIONS,
    SELECTED_NODE,
    claim_class,
    is_bound,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace

DELAY_ANNOTATION = "podlife/provisioning-seconds"
DEFAULT_DELAY = 2.0


def provisioning_delay(sc: Obj) -> tuple[float, bool]:
    """(seconds, whether assumed) for a StorageClass."""
    text = (sc["metadata"].get("annotations") or {}).get(DELAY_ANNOTATION)
    try:
        return (max(float(text), 0.0), False) if text is not None else (DEFAULT_DELAY, True)
    except ValueError:
        return DEFAULT_DELAY, True


class ExternalProvisioner:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self._in_flight: set[str] = set()

    def start(self) -> None:
        self.store.watch("PersistentVolumeClaim", self._on_claim)

    def _on_claim(self, type_: str, claim: Obj, old: Obj | None) -> None:
        if type_ == DELETED or is_bound(claim) or claim["spec"].get("volumeName"):
            return
        uid = claim["metadata"]["uid"]
        sc = self.store.try_get("StorageClass", None, claim_class(claim))
        annotations = claim["metadata"].get("annotations") or {}
        if sc is None or uid in self._in_flight or annotations.get(PROVISIONER_ANNOTATIONS[1]) != sc.get("provisioner"):
            return
        if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and SELECTED_NODE not in annotations:
            return
        self._in_flight.add(uid)
        provisioner = sc["provisioner"]
        events = EventRecorder(self.store, provisioner)
        md = claim["metadata"]
        events.event(claim, "Normal", "Provisioning",
                     f'External provisioner is provisioning volume for claim "{md["namespace"]}/{md["name"]}"')
        delay, _ = provisioning_delay(sc)
        self.kernel.call_later(delay, lambda: self._provision(claim, sc, events))

    def _provision(self, claim: Obj, sc: Obj, events: EventRecorder) -> None:
        md = claim["metadata"]
        current = self.store.try_get("PersistentVolumeClaim", md["namespace"], md["name"])
        self._in_flight.discard(md["uid"])
        if current is None or current["metadata"]["uid"] != md["uid"]:
            return
        name = f"pvc-{md['uid']}"
        spec = claim["spec"]
        request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
        pv = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by": sc["provisioner"]}},
              "spec": {"capacity": {"storage": request}, "accessModes": list(spec.get("accessModes") or ()),
                       "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy", "Delete"),
                       "storageClassName": sc["metadata"]["name"], "volumeMode": spec.get("volumeMode", "Filesystem"),
                       "claimRef": {"kind": "PersistentVolumeClaim", "namespace": md["namespace"], "name": md["name"],
                                    "uid": md["uid"], "apiVersion": "v1"},
                       "csi": {"driver": sc["provisioner"], "volumeHandle": name}}}
        try:
            self.store.create(pv, by=sc["provisioner"])
        except ApiError:
            return
        events.event(claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}")

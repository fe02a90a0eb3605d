"""PVC protection controller: pkg/controller/volume/pvcprotection/pvc_protection_controller.go.

A claim being deleted keeps its kubernetes.io/pvc-protection finalizer (put there by the
StorageObjectInUseProtection admission plugin) while a scheduled pod of its namespace names it in
spec.volumes, whatever that pod's phase; once no such pod exists the finalizer is removed and the claim goes.
Pods that can no longer hold a claim (deleted, terminated or unscheduled) re-queue the claims they name.
"""

from __future__ import annotations

from podlife.api.admission import PVC_PROTECTION_FINALIZER
from podlife.api.meta import Obj
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    Key, WorkQueue, needs_protection_sync, sync_protection)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "pvc-protection-controller"   # cmd/kube-controller-manager: ClientOrDie("pvc-protection-controller")


def claim_names(pod: Obj) -> list[str]:
    return [v["persistentVolumeClaim"]["claimName"] for v in (pod.get("spec") or {}).get("volumes") or ()
            if (v.get("persistentVolumeClaim") or {}).get("claimName")]


def is_pod_terminated(pod: Obj) -> bool:
    """pkg/volume/util: IsPodTerminated: Failed or Succeeded, or deleted with every container terminated or
    waiting (notRunning)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Failed", "Succeeded"):
        return True
    return bool(pod["metadata"].get("deletionTimestamp")) and all(
        {"terminated", "waiting"} & set(cs.get("state") or {}) for cs in status.get("containerStatuses") or ())


class PVCProtectionController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.queue = WorkQueue(kernel, self.process_pvc, sync=True)

    def start(self) -> None:
        self.store.watch("PersistentVolumeClaim", self._on_claim)
        self.store.watch("Pod", self._on_pod)

    def _on_claim(self, type_: str, claim: Obj, old: Obj | None) -> None:
        if type_ != DELETED and needs_protection_sync(claim, PVC_PROTECTION_FINALIZER):
            self.queue.add(_key(claim))

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        """podAddedDeletedUpdated / enqueuePVCs: a pod that can help remove a finalizer (deleted, terminated or
        not scheduled) queues every claim it names; a new pod replacing one of the same name queues the old's."""
        self._enqueue_claims(pod, type_ == DELETED)
        if old is not None and type_ != DELETED and old["metadata"].get("uid") != pod["metadata"].get("uid"):
            self._enqueue_claims(old, True)

    def _enqueue_claims(self, pod: Obj, deleted: bool) -> None:
        names = claim_names(pod)   # most pods name none: the cheap test first
        if not names or (not deleted and not is_pod_terminated(pod) and (pod.get("spec") or {}).get("nodeName")):
            return
        for name in names:
            self.queue.add((pod["metadata"]["namespace"], name))

    def process_pvc(self, key: Key) -> None:
        """processPVC: a claim being deleted loses the finalizer when no pod uses it."""
        claim = self.store.try_get("PersistentVolumeClaim", key[0], key[1])
        if claim is not None:
            sync_protection(self.store, claim, PVC_PROTECTION_FINALIZER, self._is_being_used, COMPONENT)

    def _is_being_used(self, claim: Obj) -> bool:
        """isBeingUsed / podUsesPVC over the namespace's pods: a pod counts once scheduled (the kubelet does not
        start a pod whose claim is being deleted) and until it is removed from the API, terminated or not."""
        ns, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
        return any((pod.get("spec") or {}).get("nodeName") and name in claim_names(pod)
                   for pod in self.store.list("Pod", ns))

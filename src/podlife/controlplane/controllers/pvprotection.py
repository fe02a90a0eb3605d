"""PV protection controller: pkg/controller/volume/pvprotection/pv_protection_controller.go.

A volume being deleted keeps its kubernetes.io/pv-protection finalizer (put there by the
StorageObjectInUseProtection admission plugin) while its phase is Bound (isVolumeInUse); once the
PersistentVolume controller makes it Released (its claim gone) or it was never bound, the finalizer is removed
and the volume goes.
"""

from __future__ import annotations

from podlife.api.admission import PV_PROTECTION_FINALIZER
from podlife.api.meta import Obj
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    WorkQueue, is_deletion_candidate, need_to_add_finalizer, set_finalizer)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "pv-protection-controller"   # cmd/kube-controller-manager: ClientOrDie("pv-protection-controller")


class PVProtectionController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.queue = WorkQueue(kernel, self.process_pv, sync=True)

    def start(self) -> None:
        self.store.watch("PersistentVolume", self._on_volume)

    def _on_volume(self, type_: str, pv: Obj, old: Obj | None) -> None:
        """pvAddedUpdated: only volumes missing the finalizer or being deleted with it are queued."""
        if type_ != DELETED and (need_to_add_finalizer(pv, PV_PROTECTION_FINALIZER)
                                 or is_deletion_candidate(pv, PV_PROTECTION_FINALIZER)):
            self.queue.add(pv["metadata"]["name"])

    def process_pv(self, name: str) -> None:
        """processPV: a volume being deleted loses the finalizer unless it is Bound (isBeingUsed); a live volume
        missing it gets it."""
        pv = self.store.try_get("PersistentVolume", None, name)
        if pv is None:
            return
        if is_deletion_candidate(pv, PV_PROTECTION_FINALIZER):
            if (pv.get("status") or {}).get("phase") != "Bound":
                set_finalizer(self.store, pv, PV_PROTECTION_FINALIZER, False, COMPONENT)
            return   # "Keeping PV because it is being used"
        if need_to_add_finalizer(pv, PV_PROTECTION_FINALIZER):
            set_finalizer(self.store, pv, PV_PROTECTION_FINALIZER, True, COMPONENT)

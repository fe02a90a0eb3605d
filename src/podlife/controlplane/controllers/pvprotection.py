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
    WorkQueue, needs_protection_sync, sync_protection)
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
        if type_ != DELETED and needs_protection_sync(pv, PV_PROTECTION_FINALIZER):
            self.queue.add(pv["metadata"]["name"])

    def process_pv(self, name: str) -> None:
        """processPV: a volume being deleted loses the finalizer unless it is Bound (isVolumeInUse)."""
        pv = self.store.try_get("PersistentVolume", None, name)
        if pv is not None:
            sync_protection(self.store, pv, PV_PROTECTION_FINALIZER, _bound, COMPONENT)


def _bound(pv: Obj) -> bool:
    return (pv.get("status") or {}).get("phase") == "Bound"

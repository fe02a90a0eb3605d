"""The resource quota controller (pkg/controller/resourcequota): status.hard and status.used of each
ResourceQuota, recalculated when the quota changes and when an object its namespace counts is created, changed
or deleted (the replenishment controller's informers). The real controller is asynchronous by milliseconds;
podlife writes the new status in the same instant."""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.meta import KINDS, Obj
from podlife.api.resourcequota import COMPONENT, _show, used
from podlife.api.store import Store
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

_NOT_COUNTED = frozenset({"Event", "Lease", "Node", "Namespace", "Endpoints", "EndpointSlice", "ResourceQuota",
                          "PriorityClass", "StorageClass", "PersistentVolume", "RuntimeClass"})


class ResourceQuotaController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.store = store

    def start(self) -> None:
        self.store.watch("ResourceQuota", self._on_quota)
        for kind in KINDS:
            if kind not in _NOT_COUNTED:
                self.store.watch(kind, self._on_object)

    def _on_quota(self, type_: str, quota: Obj, old: Obj | None) -> None:
        if type_ != "DELETED" and (old is None or quota.get("spec") != old.get("spec")):
            self._sync(quota)

    def _on_object(self, type_: str, obj: Obj, old: Obj | None) -> None:
        ns = obj["metadata"].get("namespace")
        if not ns:
            return
        if type_ == "MODIFIED" and obj["kind"] == "Pod" and old is not None and \
                (obj.get("status") or {}).get("phase") == (old.get("status") or {}).get("phase"):
            return   # only a pod turning terminal frees quota
        for quota in self.store.list("ResourceQuota", ns):
            self._sync(quota)

    def _sync(self, quota: Obj) -> None:
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        status = {"hard": hard, "used": {k: _show(k, v) for k, v in sorted(used(self.store, quota).items())}}
        if quota.get("status") == status:
            return
        md = quota["metadata"]
        try:
            self.store.update_status({"apiVersion": "v1", "kind": "ResourceQuota",
                                      "metadata": {"name": md["name"], "namespace": md["namespace"],
                                                   "uid": md["uid"]}, "status": status}, by=COMPONENT)
        except ApiError:
            pass   # gone or changed: its own event syncs it again

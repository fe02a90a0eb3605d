"""The resource quota controller (pkg/controller/resourcequota): status.hard and status.used of each
ResourceQuota, recalculated when the quota changes and when an object its namespace counts is created, changed
or deleted (the replenishment controller's informers). The real controller is asynchronous by milliseconds;
podlife writes the new status in the same instant.

A status written by someone else (PUT or PATCH of /status) is not reacted to: the quota informer's UpdateFunc
looks only at spec.hard. It is put right by the full resync (enqueueAll) every ResourceQuotaSyncPeriod, 5 min by
default, on a grid from the controller's start; podlife schedules that pass only while some quota's status
differs from what the controller would write (the passes in between would write nothing)."""

from __future__ import annotations

import simpy

from podlife.api.errors import ApiError
from podlife.api.meta import KINDS, Obj
from podlife.api.resourcequota import COMPONENT, _show, used
from podlife.api.store import Store
from podlife.controlplane.controllers.nodelifecycle import late_call_at
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

_NOT_COUNTED = frozenset({"Event", "Lease", "Node", "Namespace", "Endpoints", "EndpointSlice", "ResourceQuota",
                          "PriorityClass", "StorageClass", "PersistentVolume", "RuntimeClass"})


# kube-controller-manager --resource-quota-sync-period (cmd/kube-controller-manager/app/options: 5m)
SYNC_PERIOD = 300.0


class ResourceQuotaController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.store = store
        self.started = 0.0
        self._resync: simpy.Event | None = None   # the pending enqueueAll pass, if one is needed

    def start(self) -> None:
        self.started = self.kernel.now
        self.store.watch("ResourceQuota", self._on_quota)
        for kind in KINDS:
            if kind not in _NOT_COUNTED:
                self.store.watch(kind, self._on_object)

    def _on_quota(self, type_: str, quota: Obj, old: Obj | None) -> None:
        if type_ == "DELETED":
            return
        # resource_quota_controller.go: UpdateFunc enqueues only when spec.hard changed
        if old is None or (quota.get("spec") or {}).get("hard") != (old.get("spec") or {}).get("hard"):
            self._sync(quota)
        elif self._resync is None and quota.get("status") != self._status(quota):
            # a status written by another client waits for the next full resync
            period = SYNC_PERIOD
            t = self.started + (int((self.kernel.now - self.started) // period) + 1) * period
            self._resync = late_call_at(self.kernel, t, self._enqueue_all)

    def _enqueue_all(self) -> None:
        """enqueueAll: every quota is synced again."""
        self._resync = None
        for quota in self.store.list("ResourceQuota"):
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

    def _status(self, quota: Obj) -> Obj:
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        return {"hard": hard, "used": {k: _show(k, v) for k, v in sorted(used(self.store, quota).items())}}

    def _sync(self, quota: Obj) -> None:
        status = self._status(quota)
        if quota.get("status") == status:
            return
        md = quota["metadata"]
        try:
            self.store.update_status({"apiVersion": "v1", "kind": "ResourceQuota",
                                      "metadata": {"name": md["name"], "namespace": md["namespace"],
                                                   "uid": md["uid"]}, "status": status}, by=COMPONENT)
        except ApiError:
            pass   # gone or changed: its own event syncs it again

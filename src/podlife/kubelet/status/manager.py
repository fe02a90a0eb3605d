"""The status manager: pkg/kubelet/status/status_manager.go.

Caches the status the kubelet generated, writes it to the API (keeping conditions other components own),
and issues the final delete (grace 0, UID precondition) once a deleted pod may go:
- 1.22+: when its pod worker has finished (SyncTerminatedPod) and, from 1.27, its phase in the API is
  terminal (canBeDeleted);
- before: when its resources are reclaimed (PodResourcesAreReclaimed: no container running in the reported
  status, volumes unmounted, cgroup gone), checked on each status write and on the 10 s syncBatch.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import DeleteOptions
from podlife.kubelet.status.generate import KUBELET_CONDITIONS, conditions

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

SYNC_PERIOD = 10.0            # syncBatch
VOLUME_CLEANUP_DELAY = 2.0    # volume manager: desiredStateOfWorldPopulator getPodStatusRetryDuration


class StatusManager:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.statuses: dict[str, tuple[int, Obj]] = {}
        self._pending: dict[str, None] = {}
        self._scheduled = False
        self._awaiting_delete: dict[str, None] = {}
        self._batch_scheduled = False
        self.killed_at: dict[str, float] = {}   # legacy reclaim: when the pod's containers were all stopped

    def get(self, uid: str) -> Obj | None:
        v = self.statuses.get(uid)
        return v[1] if v else None

    def set_pod_status(self, pod: Obj, status: Obj) -> None:
        uid = pod["metadata"]["uid"]
        cached = self.statuses.get(uid)
        old = cached[1] if cached else pod.get("status", {})
        status = self._keep_transition_times(old, status)
        if cached is not None and cached[1] == status:
            # <=1.21 updateStatusInternal(pod, status, forceUpdate=deletionTimestamp != nil): a deleting
            # pod's status is synced even when unchanged, which runs the reclaim check
            if pod["metadata"].get("deletionTimestamp") and not self.kl.profile_modern_deletion():
                self.request_sync(uid)
            return
        self.statuses[uid] = ((cached[0] if cached else 0) + 1, status)
        self.request_sync(uid)

    def set_container_readiness(self, pod: Obj, container_id: str, ready: bool) -> None:
        """SetContainerReadiness: a readiness result changes the cached status at once (the container's
        ready, then the Ready and ContainersReady conditions), without waiting for a pod sync."""
        cached = self.get(pod["metadata"]["uid"])
        if cached is None:
            return  # "Container readiness changed before pod has synced"
        status = clone(cached)
        found = [cs for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
                 if cs.get("containerID") == container_id]
        if not found or found[0].get("ready") == ready:
            return
        found[0]["ready"] = ready
        fresh = {c["type"]: c for c in conditions(self.kl, pod, status.get("phase", ""),
                                                  status.get("initContainerStatuses") or [],
                                                  status.get("containerStatuses") or [], True)}
        status["conditions"] = [fresh[c["type"]] if c["type"] in ("Ready", "ContainersReady") else c
                                for c in status.get("conditions") or ()]
        self.set_pod_status(pod, status)

    def request_sync(self, uid: str) -> None:
        self._pending[uid] = None
        if not self._scheduled:
            self._scheduled = True
            self.kl.kernel.call_later(0.0, self._sync_pending)

    def _keep_transition_times(self, old: Obj, new: Obj) -> Obj:
        now = self.kl.trace.timestamp()
        prev = {c["type"]: c for c in old.get("conditions") or ()}
        for c in new.get("conditions") or ():
            p = prev.get(c["type"])
            c["lastProbeTime"] = None
            c["lastTransitionTime"] = p["lastTransitionTime"] if p and p.get("status") == c["status"] and \
                p.get("lastTransitionTime") else now
        if old.get("startTime"):
            new["startTime"] = old["startTime"]
        return new

    def _sync_pending(self) -> None:
        self._scheduled = False
        if not self.kl.running:
            return
        uids, self._pending = list(self._pending), {}
        for uid in uids:
            self._sync_pod(uid)

    def _sync_pod(self, uid: str) -> None:
        kl = self.kl
        if not kl.can_reach_api():
            return
        pod = kl.pod_manager.get(uid)
        if pod is None:
            return
        md = pod["metadata"]
        api = kl.store.try_get("Pod", md["namespace"], md["name"])
        if api is None or api["metadata"]["uid"] != uid:
            return
        cached = self.statuses.get(uid)
        if cached is not None:
            version, status = cached
            # podDeletionSafety.PodCouldHaveRunningContainers (1.24+): the pod worker has not stopped them all
            could_run = kl.profile.terminal_phase_waits_for_containers and not kl.pod_workers.is_terminated(uid)
            merged = self._merge(api.get("status", {}), status, could_run)
            if merged != api.get("status"):
                new = {**api, "status": merged}   # the request body: the status subresource reads only its status
                try:
                    api = kl.store.update_status(new, by="kubelet", stored=api)   # (read just above)
                except ApiError:
                    return
                if kl.trace.logs:   # (its arguments are made only where the line is kept)
                    kl.log("status_patched", pod, status_version=version, phase=merged.get("phase"),
                           pod_ip=merged.get("podIP", ""), status_brief=f"{{phase: {merged.get('phase')}}}")
        if api["metadata"].get("deletionTimestamp"):
            self._maybe_delete(api)

    @staticmethod
    def _merge(api_status: Obj, status: Obj, could_run: bool = False) -> Obj:
        """mergePodStatus: the kubelet's conditions replace the API's; others' conditions stay. DisruptionTarget,
        which the kubelet shares, is replaced or added only as the pod turns terminal with all its containers
        stopped; while they may still run (``could_run``, 1.24+) a terminal phase, reason and message wait."""
        terminal = ("Failed", "Succeeded")
        to_terminal = api_status.get("phase") not in terminal and status.get("phase") in terminal
        others = [c for c in api_status.get("conditions") or () if c["type"] not in KUBELET_CONDITIONS]
        own_only = _kubelet_conditions_only(status.get("conditions"))
        stays_terminal = api_status.get("phase") in terminal and status.get("phase") not in terminal
        if own_only and not others and not (to_terminal and could_run) and not stays_terminal and \
                "nominatedNodeName" not in api_status:
            # nothing to merge in: the kubelet's own status is the one stored (stored data is never changed in
            # place, nor is a status the manager keeps), so the two share one dict
            return status
        merged = dict(status)
        if not own_only:
            merged["conditions"] = [c for c in status["conditions"] if c["type"] in KUBELET_CONDITIONS]
            for c in status["conditions"]:
                if c["type"] == "DisruptionTarget" and to_terminal and not could_run:
                    # statusutil.ReplaceOrAppendPodCondition
                    i = next((i for i, o in enumerate(others) if o["type"] == c["type"]), None)
                    others = others + [c] if i is None else others[:i] + [c] + others[i + 1:]
        if others:
            merged["conditions"] = list(merged.get("conditions") or ()) + others
        if to_terminal and could_run:
            for k in ("phase", "reason", "message"):
                if k in api_status:
                    merged[k] = api_status[k]
                else:
                    merged.pop(k, None)
        if stays_terminal:
            merged["phase"] = api_status["phase"]  # a terminal phase is never left
        for k in ("nominatedNodeName",):
            if k in api_status:
                merged[k] = api_status[k]
        return merged

    # ---- the end of a pod's life ------------------------------------------------------------------

    def terminate_pod(self, pod: Obj) -> None:
        """TerminatePod (1.27+, called at the end of SyncTerminatedPod): a container with no final state is
        reported terminated with ContainerStatusUnknown, a regular one only if the pod ever initialized, an
        init container only within the prefix that tried to start; a Pending or Running pod becomes Failed,
        so that the final delete (which needs a terminal phase) can happen."""
        uid = pod["metadata"]["uid"]
        status = clone(self.get(uid) or pod.get("status") or {})
        unknown = {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown",
                                  "message": "The container could not be located when the pod was terminated"}}
        if _has_pod_initialized(pod, status):
            for cs in status.get("containerStatuses") or []:
                if "terminated" not in cs.get("state", {}):
                    cs["state"] = clone(unknown)
        for cs in _initialized_containers(status.get("initContainerStatuses") or []):
            if "terminated" not in cs.get("state", {}):
                cs["state"] = clone(unknown)
        if status.get("phase") not in ("Succeeded", "Failed"):
            self.kl.log("marking_terminal_failed", pod, old_phase=status.get("phase"))
            status["phase"] = "Failed"
        self.set_pod_status(pod, status)

    # ---- the final delete -------------------------------------------------------------------------

    def _maybe_delete(self, api: Obj) -> None:
        uid = api["metadata"]["uid"]
        if self._can_be_deleted(api):
            self._delete(api)
        elif not self.kl.profile_modern_deletion():
            self._awaiting_delete[uid] = None
            self._schedule_batch()

    def _can_be_deleted(self, api: Obj) -> bool:
        kl = self.kl
        uid = api["metadata"]["uid"]
        if kl.profile_modern_deletion():
            if not kl.pod_workers.is_finished(uid):
                return False
            if kl.profile.terminal_phase_before_removal:
                return api["status"].get("phase") in ("Failed", "Succeeded")
            return True
        # PodResourcesAreReclaimed (<=1.21)
        status = self.get(uid) or api.get("status", {})
        if any("running" in cs.get("state", {}) for cs in (status.get("containerStatuses") or [])
               + (status.get("initContainerStatuses") or [])) or kl.runtime_manager.running(uid):
            kl.log("terminated_but_running", api)
            return False
        killed = self.killed_at.get(uid)
        return killed is not None and kl.kernel.now >= killed + VOLUME_CLEANUP_DELAY

    def _delete(self, api: Obj) -> None:
        kl = self.kl
        md = api["metadata"]
        self._awaiting_delete.pop(md["uid"], None)
        try:
            kl.store.delete("Pod", md["namespace"], md["name"], by="kubelet",
                            options=DeleteOptions(grace_period_seconds=0, uid=md["uid"]))
        except ApiError:
            return
        kl.log("removed_from_etcd", api)

    def _schedule_batch(self) -> None:
        if self._batch_scheduled:
            return
        self._batch_scheduled = True
        now = self.kl.kernel.now
        tick = math.floor(now / SYNC_PERIOD + 1e-9) * SYNC_PERIOD + SYNC_PERIOD
        self.kl.kernel.call_at(tick, self._sync_batch)

    def _sync_batch(self) -> None:
        """syncBatch: look again at every deleted pod still waiting for its resources."""
        self._batch_scheduled = False
        if not self.kl.running:
            return
        for uid in list(self._awaiting_delete):
            pod = self.kl.pod_manager.get(uid)
            if pod is None:
                self._awaiting_delete.pop(uid, None)
                continue
            api = self.kl.store.try_get("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])
            if api is None or api["metadata"]["uid"] != uid:
                self._awaiting_delete.pop(uid, None)
                continue
            if self._can_be_deleted(api):
                self._delete(api)
        if self._awaiting_delete:
            self._schedule_batch()

    def forget(self, uid: str) -> None:
        self.statuses.pop(uid, None)
        self._awaiting_delete.pop(uid, None)
        self.killed_at.pop(uid, None)

    def snapshot(self) -> dict[str, Any]:
        return {uid: v for uid, (v, _) in self.statuses.items()}


def _kubelet_conditions_only(conds: list[Obj] | None) -> bool:
    for c in conds or ():
        if c["type"] not in KUBELET_CONDITIONS:
            return False
    return True


def _has_pod_initialized(pod: Obj, status: Obj) -> bool:
    """status_manager.go hasPodInitialized: a regular container left waiting, or the last init container
    having completed (or, for a sidecar, started)."""
    inits = pod["spec"].get("initContainers") or []
    if not inits:
        return True
    for cs in status.get("containerStatuses") or []:
        if (cs.get("lastState") or {}).get("terminated") or "waiting" not in cs.get("state", {}):
            return True
    init_statuses = status.get("initContainerStatuses") or []
    if init_statuses and len(init_statuses) <= len(inits):
        last, spec = init_statuses[-1], inits[len(init_statuses) - 1]
        if spec.get("restartPolicy") == "Always":
            return "running" in last.get("state", {}) and bool(last.get("started"))
        for state in ((last.get("lastState") or {}), last.get("state", {})):
            if (state.get("terminated") or {}).get("exitCode") == 0 and "terminated" in state:
                return True
    return False


def _initialized_containers(statuses: list[Obj]) -> list[Obj]:
    """status_manager.go initializedContainers: all but the trailing ones still waiting with no previous
    termination (those never tried to start); at least the first."""
    for i in range(len(statuses) - 1, -1, -1):
        if "waiting" not in statuses[i].get("state", {}) or (statuses[i].get("lastState") or {}).get("terminated"):
            return statuses[:i + 1]
    return statuses[:1]

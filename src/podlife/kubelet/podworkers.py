"""Pod workers: one goroutine-like process per pod, moving it through sync → terminating → terminated.

pkg/kubelet/pod_workers.go. Updates arrive from the sync loop (API changes, PLEG events, kill requests);
a worker handles the newest one when it is free. Once a pod is terminating it never goes back, and its
grace period only ever shrinks; a shorter one cancels the termination in flight and starts it again.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import simpy

from podlife.api.meta import Obj

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

SYNC, TERMINATING, TERMINATED, FINISHED = "sync", "terminating", "terminated", "finished"


@dataclass
class KillPodOptions:
    """A request to stop a pod (eviction, admission failure) with an optional grace override."""

    grace_override: int | None = None
    reason: str = ""
    status_fn: Any = None        # called with the generated status before it is written (eviction)


@dataclass
class PodSyncStatus:
    """A pod worker's state of one pod (podSyncStatus)."""

    uid: str
    pod: Obj
    state: str = SYNC
    grace: int | None = None          # effective grace once terminating
    kill: KillPodOptions | None = None
    pending: Obj | None = None
    working: bool = False
    process: simpy.Process | None = None
    cancelled: bool = False
    deleted_from_api: bool = False
    terminating_since: float | None = None
    terminated_at: float | None = None
    last_sync_end: float = float("-inf")
    reconciled: Obj | None = None     # the API's revision whose status ``pod`` was last given (Kubelet.dispatch)


class PodWorkers:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.statuses: dict[str, PodSyncStatus] = {}
        self._terminated_waiters: dict[str, list[simpy.Event]] = {}

    def wait_terminated(self, uid: str) -> simpy.Event:
        """An event that fires once the pod's containers have all stopped."""
        ev = self.kl.kernel.event()
        if self.is_terminated(uid):
            ev.succeed()
        else:
            self._terminated_waiters.setdefault(uid, []).append(ev)
        return ev

    def is_terminating(self, uid: str) -> bool:
        st = self.statuses.get(uid)
        return st is not None and st.state != SYNC

    def is_terminated(self, uid: str) -> bool:
        """Its containers are stopped (terminated or finished), or it was never known."""
        st = self.statuses.get(uid)
        return st is None or st.state in (TERMINATED, FINISHED)

    def is_finished(self, uid: str) -> bool:
        st = self.statuses.get(uid)
        return st is not None and st.state == FINISHED

    def update_pod(self, pod: Obj, update_type: str = "update", kill: KillPodOptions | None = None) -> None:
        """podWorkers.UpdatePod."""
        uid = pod["metadata"]["uid"]
        st = self.statuses.get(uid)
        if st is None:
            st = self.statuses[uid] = PodSyncStatus(uid, pod)
        if st.state == FINISHED:
            return
        st.pod = pod
        if st.state == SYNC and (pod["metadata"].get("deletionTimestamp") or kill is not None
                                 or update_type == "remove"):
            self._start_terminating(st, pod, kill)
        elif st.state == TERMINATING:
            grace = self._effective_grace(st, pod, kill)
            if grace < (st.grace or grace + 1):
                st.grace = grace
                if st.working:
                    # a shorter grace period restarts the termination in flight
                    self.kl.log("cancel_sync", pod, update_type="kill")
                    st.cancelled = True
                    if st.process is not None and st.process.is_alive:
                        st.process.interrupt("shorter grace period")
        if update_type == "remove":
            st.deleted_from_api = True
        st.pending = pod
        if not st.working:
            st.working = True
            st.process = self.kl.go(self._run(st), guarded=True)

    def _start_terminating(self, st: PodSyncStatus, pod: Obj, kill: KillPodOptions | None) -> None:
        st.state = TERMINATING
        st.kill = kill
        st.terminating_since = self.kl.kernel.now
        st.grace = self._effective_grace(st, pod, kill)

    def _effective_grace(self, st: PodSyncStatus, pod: Obj, kill: KillPodOptions | None) -> int:
        """calculateEffectiveGracePeriod: deletionGracePeriodSeconds, then a kill override, only ever lower;
        an explicit 0 per version (``zero_grace`` rule); never below 1 from 1.22 on."""
        grace = st.grace or 0
        for override in (pod["metadata"].get("deletionGracePeriodSeconds"),
                         kill.grace_override if kill else None):
            if override is not None and (grace == 0 or override < grace):
                grace = override
        spec_grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
        rule = self.kl.profile.zero_grace
        if rule == "as-is":
            # <=1.21: no clamp here; killContainer reads the pod's own value (0 skips preStop, then its
            # 2 s minimum applies)
            has = pod["metadata"].get("deletionGracePeriodSeconds") is not None or (
                kill is not None and kill.grace_override is not None)
            return grace if has else spec_grace
        if grace == 0 and (rule == "spec-grace" or not self._explicit_zero(pod, kill)):
            grace = spec_grace
        return max(grace, 1)

    @staticmethod
    def _explicit_zero(pod: Obj, kill: KillPodOptions | None) -> bool:
        return pod["metadata"].get("deletionGracePeriodSeconds") == 0 or (kill is not None and kill.grace_override == 0)

    def _run(self, st: PodSyncStatus) -> Generator[simpy.Event, Any, None]:
        """podWorkerLoop."""
        kl = self.kl
        while st.pending is not None:
            try:
                # podCache.GetNewerThan(uid, lastSyncTime): every sync waits for a PLEG relist that ended
                # after the previous sync did (upstream notes this adds about a second to each transition)
                fresh = kl.pleg.next_relist_after(st.last_sync_end)
                if fresh > kl.kernel.now:
                    yield kl.kernel.timeout(fresh - kl.kernel.now)
                pod = st.pending
                st.pending = None
                st.cancelled = False
                if pod is None:
                    break
                if st.state == SYNC:
                    terminal = yield from kl.sync_pod(pod)
                    if terminal and st.state == SYNC:
                        self._start_terminating(st, pod, None)
                        st.pending = pod
                elif st.state == TERMINATING:
                    done = yield from kl.sync_terminating_pod(pod, st)
                    if done and not st.cancelled:
                        st.state = TERMINATED
                        st.terminated_at = kl.kernel.now
                        st.pending = pod
                        for ev in self._terminated_waiters.pop(st.uid, ()):
                            ev.succeed()
                elif st.state == TERMINATED:
                    yield from kl.sync_terminated_pod(pod, st)
                    st.state = FINISHED
                    kl.pod_finished(st)
            except simpy.Interrupt as i:
                if i.cause == "kubelet stopped":
                    return   # the goroutine dies with the kubelet process (Kubelet.go: guarded)
                st.pending = st.pod  # run again with the newest pod and the shorter grace
            st.last_sync_end = kl.kernel.now
        st.working = False

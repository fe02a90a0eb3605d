"""pkg/controller/deployment/progress.go: the Progressing condition (progressDeadlineSeconds), ReplicaSet
failures surfaced as ReplicaFailure, and the requeue of a Deployment whose deadline is still ahead."""

from __future__ import annotations

from podlife.api.meta import Obj
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.controller_utils import (
    parse_time,
)
from podlife.controlplane.controllers.deployment.sync import Sync
from podlife.controlplane.controllers.deployment.util import (
    NEW_RS_AVAILABLE,
    REPLICA_SET_UPDATED,
    TIMED_OUT,
    Key,
    clean_status,
    deployment_complete,
    deployment_progressing,
    get_condition,
    has_progress_deadline,
    remove_condition,
    set_condition,
)


class Progress(Sync):
    """pkg/controller/deployment/progress.go."""

    # ---- the work queue ----------------------------------------------------------------------------------

    # ---- syncDeployment ------------------------------------------------------------------------------------

    def _park_progress_check(self, key: Key) -> None:
        """A progress check (requeueStuckDeployment's AddAfter) still due when the Deployment is complete
        would find nothing to do, but upstream's delaying queue keeps it, and it makes the next rollout's
        first check come early. It is kept here as a time instead of a timer, so that a finished scenario is
        idle, and re-armed by the next sync if that comes before it is due."""
        when = self.queue.take_after(key)
        if when is not None:
            self._parked[key] = min(when, self._parked.get(key, when))

    def _unpark_progress_check(self, key: Key) -> None:
        when = self._parked.pop(key, None)
        if when is not None and when > self.kernel.now:
            self.queue.add_after(key, when - self.kernel.now)

    # ---- progress.go -----------------------------------------------------------------------------------

    def _sync_rollout_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> None:
        st = self._calculate_status(all_rss, new_rs, d)
        if not has_progress_deadline(d):
            remove_condition(st, "Progressing")
        cur = get_condition(d["status"], "Progressing")
        complete = int(st.get("replicas") or 0) == int(st.get("updatedReplicas") or 0) and cur is not None and\
            cur.get("reason") == NEW_RS_AVAILABLE
        if has_progress_deadline(d) and not complete:
            if deployment_complete(d, st):
                msg = f'Deployment "{d["metadata"]["name"]}" has successfully progressed.'
                if new_rs is not None:
                    msg = f'ReplicaSet "{new_rs["metadata"]["name"]}" has successfully progressed.'
                set_condition(st, self._condition("Progressing", "True", NEW_RS_AVAILABLE, msg))
            elif deployment_progressing(d, st):
                msg = f'Deployment "{d["metadata"]["name"]}" is progressing.'
                if new_rs is not None:
                    msg = f'ReplicaSet "{new_rs["metadata"]["name"]}" is progressing.'
                cond = self._condition("Progressing", "True", REPLICA_SET_UPDATED, msg)
                if cur is not None:
                    if cur.get("status") == "True":
                        cond["lastTransitionTime"] = cur.get("lastTransitionTime")
                    remove_condition(st, "Progressing")
                set_condition(st, cond)
            elif self._timed_out(d, st):
                msg = f'Deployment "{d["metadata"]["name"]}" has timed out progressing.'
                if new_rs is not None:
                    msg = f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.'
                set_condition(st, self._condition("Progressing", "False", TIMED_OUT, msg))
        failures = self._replica_failures(all_rss, new_rs)
        if failures:
            set_condition(st, failures[0])
        else:
            remove_condition(st, "ReplicaFailure")
        st = clean_status(st)
        if deployment_complete(d, st):
            self._park_progress_check(_key(d))
        if st == clean_status(d["status"]):
            self._requeue_stuck_deployment(d, st)
            return
        d["status"] = st
        self._update_status(d)

    def _timed_out(self, d: Obj, st: Obj) -> bool:
        """DeploymentTimedOut: no progress reported for progressDeadlineSeconds (strictly after)."""
        if not has_progress_deadline(d):
            return False
        cond = get_condition(st, "Progressing")
        if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
            return False
        if cond.get("reason") == TIMED_OUT:
            return True
        since = parse_time(self.trace, cond.get("lastUpdateTime"))
        return since is not None and since + int(d["spec"]["progressDeadlineSeconds"]) < self.kernel.now

    @staticmethod
    def _replica_failures(all_rss: list[Obj | None], new_rs: Obj | None) -> list[Obj]:
        """getReplicaFailures: ReplicaFailure conditions of the new ReplicaSet, else of any ReplicaSet."""
        def conv(c: Obj) -> Obj:
            return {"type": c.get("type"), "status": c.get("status"), "lastUpdateTime": c.get("lastTransitionTime"),
                    "lastTransitionTime": c.get("lastTransitionTime"), "reason": c.get("reason"),
                    "message": c.get("message")}
        out = [conv(c) for c in ((new_rs or {}).get("status") or {}).get("conditions") or ()
               if c.get("type") == "ReplicaFailure"]
        if out:
            return out
        for rs in all_rss:
            if rs is not None:
                out += [conv(c) for c in (rs.get("status") or {}).get("conditions") or ()
                        if c.get("type") == "ReplicaFailure"]
        return out

    def _requeue_stuck_deployment(self, d: Obj, st: Obj) -> None:
        """requeueStuckDeployment: check again when progressDeadlineSeconds would run out (plus 1 s)."""
        cur = get_condition(d["status"], "Progressing")
        if not has_progress_deadline(d) or cur is None:
            return
        if deployment_complete(d, st) or cur.get("reason") == TIMED_OUT:
            return
        since = parse_time(self.trace, cur.get("lastUpdateTime"))
        if since is None:
            return
        after = since + int(d["spec"]["progressDeadlineSeconds"]) - self.kernel.now
        if after < 1.0:
            if cur.get("reason") == NEW_RS_AVAILABLE:
                # upstream requeues this rate-limited after every sync (Forget resets the backoff, so the
                # bucket limiter's 10 qps paces it) for as long as the rollout waits; such a sync cannot
                # write anything (DeploymentTimedOut is false for NewReplicaSetAvailable) and every change
                # that could matter comes with a watch event, so the loop is not simulated
                return
            self.queue.add_rate_limited(_key(d))
        else:
            self.queue.add_after(_key(d), after + 1.0)

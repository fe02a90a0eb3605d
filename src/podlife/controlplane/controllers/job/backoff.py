"""Pod failure back-off of the Job controller: pkg/controller/job/backoff_utils.go."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from podlife.api.meta import Obj

DEFAULT_POD_FAILURE_BACKOFF = 10.0   # DefaultJobPodFailureBackOff
MAX_POD_FAILURE_BACKOFF = 360.0      # MaxJobPodFailureBackOff (6 min)


def remaining_for(failures: int, last_failure_time: float | None, now: float) -> float:
    """getRemainingTimeForFailuresCount: 10 s * 2^(failures-1), at most 6 min, from the last failure."""
    if failures == 0 or last_failure_time is None:
        return 0.0
    d = DEFAULT_POD_FAILURE_BACKOFF
    for _ in range(1, failures):
        d *= 2
        if d >= MAX_POD_FAILURE_BACKOFF:
            d = MAX_POD_FAILURE_BACKOFF
            break
    elapsed = now - last_failure_time
    return 0.0 if d < elapsed else d - elapsed


@dataclass
class BackoffRecord:
    """A Job's failures since its last success and the last failure's time (backoffRecord)."""

    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def remaining(self, now: float) -> float:
        """backoffRecord.getRemainingTime."""
        return remaining_for(self.failures_after_last_success, self.last_failure_time, now)


def finished_time(pod: Obj, parse: Callable[[object], float | None], now: float | None = None) -> float:
    """getFinishedTime: the latest finishedAt once every app container (and sidecar) has terminated, else (1.28+,
    ``now`` None) the Ready=False condition's transition, else the moment of deletion (deletionTimestamp minus
    the deletion grace period), else the creation time; before 1.28 ``now``."""
    st = pod.get("status") or {}
    sidecars = {c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or ()
                if isinstance(c, dict) and c.get("restartPolicy") == "Always"}
    statuses = list(st.get("containerStatuses") or ()) + [
        c for c in st.get("initContainerStatuses") or () if c.get("name") in sidecars]
    latest: float | None = None
    for cs in statuses:
        t = parse(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        if t is None:
            latest = None
            break
        latest = t if latest is None else max(latest, t)
    if latest is not None:
        return latest
    if now is not None:
        return now
    for c in st.get("conditions") or ():
        if c.get("type") == "Ready" and c.get("status") == "False":
            t = parse(c.get("lastTransitionTime"))
            if t is not None:
                return t
    md = pod["metadata"]
    deleted = parse(md.get("deletionTimestamp"))
    if deleted is not None:
        return deleted - float(md.get("deletionGracePeriodSeconds") or 0)
    return parse(md.get("creationTimestamp")) or 0.0


def new_backoff_record(old: BackoffRecord | None, succeeded: list[float], failed: list[float]) -> BackoffRecord:
    """backoffStore.newBackoffRecord, from the finish times of the newly succeeded and failed pods."""
    old = old or BackoffRecord()
    succ, fail = sorted(succeeded), sorted(failed)
    if not succ:
        if not fail:
            return BackoffRecord(old.failures_after_last_success, old.last_failure_time)
        return BackoffRecord(old.failures_after_last_success + len(fail), fail[-1])
    rec = BackoffRecord()
    for t in reversed(fail):
        if not t > succ[-1]:
            break
        if rec.last_failure_time is None:
            rec.last_failure_time = t
        rec.failures_after_last_success += 1
    return rec

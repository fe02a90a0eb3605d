"""TTL-after-finished controller: pkg/controller/ttlafterfinished/ttlafterfinished_controller.go.

A finished Job (a Complete or Failed condition) with spec.ttlSecondsAfterFinished is deleted, Foreground (its
pods first, by the garbage collector), once the TTL has passed since it finished: the lastTransitionTime of that
condition (second precision). A Job that changes is looked at again (processTTL), with the UID as precondition.
From 1.21 (TTLAfterFinished beta, on by default; versions rule ``ttl_after_finished``).
"""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.store import DELETED, DeleteOptions, Store
from podlife.controlplane.controllers.controller_utils import Key, WorkQueue, parse_time
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.job import is_finished
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "ttl-after-finished-controller"


class TTLAfterFinishedController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.queue = WorkQueue(kernel, self.process_job, sync=True)

    def start(self) -> None:
        if not self.profile.ttl_after_finished:
            return
        self.store.watch("Job", self._on_job)

    def _on_job(self, type_: str, job: Obj, old: Obj | None) -> None:
        """addJob / updateJob: only Jobs that need cleaning up are queued."""
        if type_ != DELETED and _needs_cleanup(job):
            self.queue.add(_key(job))

    def process_job(self, key: Key) -> None:
        job = self.store.try_get("Job", key[0], key[1])
        if job is None or job["metadata"].get("deletionTimestamp") or not _needs_cleanup(job):
            return
        left = self._time_left(job)
        if left is None:
            return
        if left > 0:
            self.queue.add_after(key, left)   # "Found Job to be cleaned up": enqueueAfter
            return
        # the TTL has passed: delete with Foreground propagation and the UID as precondition
        try:
            self.store.delete("Job", key[0], key[1], by=COMPONENT,
                              options=DeleteOptions(propagation_policy="Foreground", uid=job["metadata"]["uid"]))
        except ApiError:
            pass

    def _time_left(self, job: Obj) -> float | None:
        """timeLeft: expireAt = the finish time (the finished condition's lastTransitionTime) + TTL."""
        finished = _finish_time(self.trace, job)
        if finished is None:
            return None
        return finished + int(job["spec"]["ttlSecondsAfterFinished"]) - self.kernel.now


def _needs_cleanup(job: Obj) -> bool:
    return job["spec"].get("ttlSecondsAfterFinished") is not None and is_finished(job)


def _finish_time(trace: Trace, job: Obj) -> float | None:
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return parse_time(trace, c.get("lastTransitionTime"))
    return None


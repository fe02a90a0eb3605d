"""The CronJob controller: pkg/controller/cronjob (cronjob_controllerv2.go from 1.21, cronjob_controller.go before).

At each time of its schedule a CronJob creates a Job named ``NAME-<scheduled time in Unix minutes>`` from its
jobTemplate, owned by it, and lists it in status.active; lastScheduleTime records the time. The v2 controller
requeues a CronJob for its next time plus 100 ms (nextScheduleDelta); the v1 controller (through 1.20) looks at
every CronJob every 10 s (syncAll), so a Job starts up to 10 s late. A time missed by more than
startingDeadlineSeconds is skipped (MissSchedule); more than 100 missed times are not caught up
(TooManyMissedTimes). concurrencyPolicy Forbid skips a time while a Job is active, Replace deletes the active
Jobs first. Finished Jobs beyond successfulJobsHistoryLimit (3) / failedJobsHistoryLimit (1) are deleted, oldest
start first. Schedules are evaluated in spec.timeZone, else in the controller manager's zone, UTC here.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import Any

from podlife.api import metatime
from podlife.api.cronschedule import parse_schedule
from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import DELETED, DeleteOptions, Store
from podlife.controlplane.controllers.controller_utils import WorkQueue, controller_ref
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "cronjob-controller"
NEXT_SCHEDULE_DELTA = 0.1   # nextScheduleDelta
V1_SYNC_PERIOD = 10.0       # cronjob_controller.go: wait.Until(jm.syncAll, 10*time.Second)
MAX_MISSED = 100
SCHEDULED_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
Key = tuple[str, str]


def is_finished(job: Obj) -> str | None:
    """Complete or Failed when the Job has finished (jobutil.FinishedCondition)."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return None


class CronJobController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.v2 = profile.cronjob_controller == "v2"
        self.events = EventRecorder(store, COMPONENT)
        self.queue = WorkQueue(kernel, self.sync, sync=True)

    def start(self) -> None:
        self.store.watch("CronJob", self._on_cronjob)
        self.store.watch("Job", self._on_job)
        self._origin = self.kernel.now
        self._pass: Any = None
        if self.v2:
            for cj in self.store.list("CronJob"):
                self.queue.add(_key(cj))
        else:
            self._schedule_pass()

    # ---- informers -----------------------------------------------------------------------------------------

    def _on_cronjob(self, type_: str, cj: Obj, old: Obj | None) -> None:
        if not self.v2:
            self._schedule_pass()
            return
        if type_ == DELETED:
            return
        if type_ == "ADDED" or old is None:
            self.queue.add(_key(cj))
            return
        spec, old_spec = cj.get("spec") or {}, old.get("spec") or {}
        if (spec.get("schedule"), spec.get("timeZone")) != (old_spec.get("schedule"), old_spec.get("timeZone")):
            # updateCronJob: a new schedule requeues for its next time
            delay = self._next_delay(cj, self._now())
            if delay is not None:
                self.queue.add_after(_key(cj), delay)
            return
        self.queue.add(_key(cj))

    def _on_job(self, type_: str, job: Obj, old: Obj | None) -> None:
        ref = owner_of(job)
        if not self.v2 or ref is None or ref.get("kind") != "CronJob":
            return
        if old is not None and type_ != DELETED and \
                job["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        cj = self.store.try_get("CronJob", job["metadata"]["namespace"], ref.get("name", ""))
        if cj is not None and cj["metadata"]["uid"] == ref.get("uid"):
            self.queue.add(_key(cj))

    def _schedule_pass(self) -> None:
        """The v1 controller's passes run on a 10 s grid from its start; podlife runs them only while there
        is a CronJob to look at, so an idle cluster stays idle."""
        if self._pass is not None or not self.store.count("CronJob"):
            return
        ticks = math.ceil((self.kernel.now - self._origin) / V1_SYNC_PERIOD - 1e-9)
        self._pass = self.kernel.call_at(self._origin + ticks * V1_SYNC_PERIOD, self._sync_all)

    def _sync_all(self) -> None:
        """The v1 controller: every CronJob, every 10 s."""
        self._pass = None
        for cj in self.store.list("CronJob"):
            try:
                self.sync(_key(cj))
            except ApiError:
                pass
        if self.store.count("CronJob"):
            self._pass = self.kernel.call_later(V1_SYNC_PERIOD, self._sync_all)

    # ---- time --------------------------------------------------------------------------------------------------

    def _now(self) -> datetime:
        return self.trace.start_time + timedelta(seconds=self.kernel.now)

    def _at(self, when: datetime) -> float:
        return (when - self.trace.start_time).total_seconds()

    def _parse(self, ts: str | None) -> datetime | None:
        if not ts:
            return None
        return metatime.parse(ts).replace(tzinfo=timezone.utc)

    def _since(self, cj: Obj) -> datetime:
        """The last schedule time, or the creation (which the API server always sets)."""
        status = cj.get("status") or {}
        created = metatime.parse(cj["metadata"]["creationTimestamp"])
        return self._parse(status.get("lastScheduleTime")) or created.replace(tzinfo=timezone.utc)

    def _zone(self, cj: Obj) -> Any:
        from zoneinfo import ZoneInfo  # on first use, as cronsim: most clusters have no CronJob

        name = (cj.get("spec") or {}).get("timeZone") if self.profile.cronjob_time_zone else None
        return ZoneInfo(name) if name else timezone.utc

    def _times(self, cj: Obj, after: datetime) -> Any:
        """The schedule's times strictly after ``after`` (robfig/cron Schedule.Next), in UTC."""
        expr = parse_schedule(cj["spec"]["schedule"])
        zone = self._zone(cj)
        start = after.astimezone(zone).replace(microsecond=0)
        from cronsim import CronSim

        for t in CronSim(expr, start):
            if t > after:
                yield t.astimezone(timezone.utc)

    def _unmet(self, cj: Obj, now: datetime, with_deadline: bool) -> tuple[datetime | None, int]:
        """mostRecentScheduleTime: the latest time not yet started, and how many were missed."""
        earliest = self._since(cj)
        deadline = cj["spec"].get("startingDeadlineSeconds")
        # (compared in seconds: a deadline near int64's limit reaches before any date a datetime holds)
        if with_deadline and deadline is not None and deadline < (now - earliest).total_seconds():
            earliest = now - timedelta(seconds=deadline)
        recent, count = None, 0
        for t in self._times(cj, earliest):
            if t > now:
                break
            recent, count = t, count + 1
            if count > MAX_MISSED:
                break
        return recent, count

    def _next_delay(self, cj: Obj, now: datetime) -> float | None:
        """nextScheduleTimeDuration: until the next time after the most recent one, plus 100 ms."""
        from zoneinfo import ZoneInfoNotFoundError

        try:
            recent, _ = self._unmet(cj, now, with_deadline=False)
            base = recent or self._since(cj)
            nxt = next(self._times(cj, max(base, now) if recent is None else recent), None)
        except (ValueError, ZoneInfoNotFoundError):
            return None
        if nxt is None:
            return None
        return max((nxt - now).total_seconds(), 0.0) + NEXT_SCHEDULE_DELTA

    # ---- sync ----------------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        cj = self.store.try_get("CronJob", *key)
        if cj is None:
            return
        jobs = [j for j in self.store.list("Job", key[0])
                if (owner_of(j) or {}).get("kind") == "CronJob" and (owner_of(j) or {}).get("name") == key[1]]
        copy = clone(cj)
        changed = self._cleanup_finished(copy, jobs)
        requeue, synced = self._sync_cronjob(copy, jobs)
        if changed or synced:
            self.store.update(copy, by=COMPONENT, subresource="status")
        if requeue is not None and self.v2:
            self.queue.add_after(key, requeue)

    def _completed_message(self, job: Obj, finished: str) -> str:
        word = self.profile.cronjob_completed_word
        return f"Saw completed job: {job['metadata']['name']}, {word}: {finished}"

    def _sync_cronjob(self, cj: Obj, jobs: list[Obj]) -> tuple[float | None, bool]:
        now = self._now()
        status = cj.setdefault("status", {})
        active = status.setdefault("active", [])
        update = False
        children = set()
        for j in jobs:
            uid = j["metadata"]["uid"]
            children.add(uid)
            listed = any(a.get("uid") == uid for a in active)
            finished = is_finished(j)
            if not listed and finished is None:
                self.events.event(cj, "Warning", "UnexpectedJob",
                                  f"Saw a job that the controller did not create or forgot: {j['metadata']['name']}")
            elif finished is not None:
                if listed:
                    active[:] = [a for a in active if a.get("uid") != uid]
                    self.events.event(cj, "Normal", "SawCompletedJob", self._completed_message(j, finished))
                    update = True
                completion = (j.get("status") or {}).get("completionTime")
                if finished == "Complete" and completion and \
                        (status.get("lastSuccessfulTime") is None or completion > status["lastSuccessfulTime"]):
                    status["lastSuccessfulTime"] = completion
                    update = True
        for a in list(active):
            if a.get("uid") not in children and \
                    self.store.try_get("Job", a.get("namespace"), a.get("name", "")) is None:
                self.events.event(cj, "Normal", "MissingJob", f"Active job went missing: {a.get('name')}")
                active.remove(a)
                update = True
        if not active:
            status.pop("active")
        if cj["metadata"].get("deletionTimestamp"):
            return None, update
        spec = cj["spec"]
        if spec.get("timeZone") and self.profile.cronjob_time_zone:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(spec["timeZone"])
            except (ZoneInfoNotFoundError, ValueError):
                self.events.event(cj, "Warning", "UnknownTimeZone",
                                  f'invalid timeZone: "{spec["timeZone"]}": unknown time zone {spec["timeZone"]}')
                return None, update
        if spec.get("suspend"):
            return None, update
        try:
            parse_schedule(spec.get("schedule", ""))
        except ValueError as e:
            self.events.event(cj, "Warning", "UnparseableSchedule",
                              f'unparseable schedule: "{spec.get("schedule", "")}" : {e}')
            return None, update
        scheduled, missed = self._unmet(cj, now, with_deadline=True)
        if missed > MAX_MISSED:
            self.events.event(cj, "Warning", "TooManyMissedTimes",
                              "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
                              "clock skew")
        delay = self._next_delay(cj, now)
        if scheduled is None:
            return delay, update
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and (now - scheduled).total_seconds() > deadline:
            self.events.event(cj, "Warning", "MissSchedule", "Missed scheduled time to start a job: "
                              + scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000"))
            return delay, update
        name = f"{cj['metadata']['name']}-{int(scheduled.timestamp()) // 60}"
        if any(a.get("name") == name for a in status.get("active") or ()) or \
                status.get("lastScheduleTime") == self.trace.timestamp(self._at(scheduled)):
            return delay, update
        policy = spec.get("concurrencyPolicy", "Allow")
        if policy == "Forbid" and status.get("active"):
            if self.v2:
                self.events.event(cj, "Normal", "JobAlreadyActive",
                                  "Not starting job because prior execution is running and concurrency policy is "
                                  "Forbid")
            return delay, update
        if policy == "Replace":
            for a in list(status.get("active") or ()):
                job = self.store.try_get("Job", a.get("namespace"), a.get("name", ""))
                if job is not None and self._delete_job(cj, job):
                    update = True
        job = self._job_from_template(cj, name, scheduled)
        try:
            created = self.store.create(job, by=COMPONENT)
        except ApiError as e:
            if e.reason == "AlreadyExists":
                return None, update
            self.events.event(cj, "Warning", "FailedCreate", f"Error creating job: {e.message}")
            raise
        self.events.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        status.setdefault("active", []).append(
            {"kind": "Job", "namespace": created["metadata"]["namespace"], "name": name,
             "uid": created["metadata"]["uid"], "apiVersion": "batch/v1",
             "resourceVersion": created["metadata"]["resourceVersion"]})
        status["lastScheduleTime"] = self.trace.timestamp(self._at(scheduled))
        return self._next_delay(cj, now), True

    def _job_from_template(self, cj: Obj, name: str, scheduled: datetime) -> Obj:
        """getJobFromTemplate2."""
        template = cj["spec"].get("jobTemplate") or {}
        tmd = template.get("metadata") or {}
        annotations = dict(tmd.get("annotations") or {})
        if self.profile.cronjob_scheduled_annotation:
            annotations[SCHEDULED_ANNOTATION] = scheduled.astimezone(self._zone(cj)).isoformat().replace(
                "+00:00", "Z")
        md: Obj = {"name": name, "namespace": cj["metadata"]["namespace"],
                   "ownerReferences": [controller_ref(cj)]}
        if tmd.get("labels"):
            md["labels"] = dict(tmd["labels"])
        if annotations:
            md["annotations"] = annotations
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": clone(template.get("spec") or {})}

    def _delete_job(self, cj: Obj, job: Obj) -> bool:
        try:
            self.store.delete("Job", job["metadata"]["namespace"], job["metadata"]["name"], by=COMPONENT,
                              options=DeleteOptions(propagation_policy="Background"))
        except ApiError as e:
            self.events.event(cj, "Warning", "FailedDelete", f"Deleted job: {e.message}")
            return False
        status = cj.setdefault("status", {})
        status["active"] = [a for a in status.get("active") or () if a.get("uid") != job["metadata"]["uid"]]
        if not status["active"]:
            status.pop("active")
        self.events.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {job['metadata']['name']}")
        return True

    def _cleanup_finished(self, cj: Obj, jobs: list[Obj]) -> bool:
        """cleanupFinishedJobs: the oldest finished Jobs beyond the history limits are deleted."""
        spec = cj["spec"]
        update = False
        for kind, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                            ("Failed", spec.get("failedJobsHistoryLimit"))):
            if limit is None:
                continue
            done = [j for j in jobs if is_finished(j) == kind]
            extra = len(done) - limit
            if extra <= 0:
                continue
            # byJobStartTime: by status.startTime (unset last), then name
            done.sort(key=lambda j: ((j.get("status") or {}).get("startTime") is None,
                                     (j.get("status") or {}).get("startTime") or "", j["metadata"]["name"]))
            for j in done[:extra]:
                if self._delete_job(cj, j):
                    update = True
        return update

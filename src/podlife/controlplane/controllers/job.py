"""Job controller: pkg/controller/job/job_controller.go (syncJob, manageJob, trackJobStatusAndRemoveFinalizers,
enactJobFinished) and backoff_utils.go, NonIndexed completion mode.

Pods are ``<job>-xxxxx`` from the template (the registry added job-name / controller-uid labels, see
podlife.api.registry.job). Pod events sync the Job after a batching period (1 s from 1.24, versions rule
``job_pod_update_batch``); Job events at once. A failed pod (Failed, or being deleted and not Succeeded) counts
towards backoffLimit; more failures than backoffLimit fail the Job (BackoffLimitExceeded), as does, with
restartPolicy OnFailure, a sum of container restarts of running pods reaching it. A replacement after failures
waits 10 s * 2^(failures-1) (at most 6 min) from the last failure's finish time (backoffRecord).

From 1.25 (``job_tracking_finalizer``) pods carry batch.kubernetes.io/job-tracking and are counted through
status.uncountedTerminatedPods: one status write lists the finished pods, their finalizers are removed, a second
write counts them. From 1.31 (``job_delay_terminal_condition``) FailureTarget / SuccessCriteriaMet come first and
Failed / Complete only once no pod is terminating.

From 1.26 (``job_pod_failure_policy``) a podFailurePolicy decides per failed pod: FailJob fails the Job
(FailureTarget first, reason PodFailurePolicy), Ignore keeps the failure out of the count, Count counts it; with a
policy only pods in phase Failed are failures.

From 1.29 a replacement waits for the pod it replaces to be terminal when podReplacementPolicy is Failed, the
default with a podFailurePolicy (onlyReplaceFailedPods).

A suspended Job (``job_suspend``, 1.22+) has no pods (its active ones are deleted), condition Suspended and no
startTime; resuming it restarts startTime.

Not modelled: Indexed completion mode (and FailIndex), successPolicy, managedBy.
ttlSecondsAfterFinished is the TTL-after-finished controller's (podlife.controlplane.controllers.ttlafterfinished). Before 1.25 pods are counted while they exist
(getStatus) and the backoff uses the same backoff record as later versions, not the old rate-limited requeue.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    Expectations,
    Key,
    WorkQueue,
    claim_pods,
    controller_ref,
    is_pod_active,
    is_pod_ready,
    label_selector,
    parse_time,
    pod_from_template,
    resolve_controller_ref,
    shared_pod_index,
    slow_start_batch,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.controller_utils import object_skey as _skey
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "job-controller"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
DEFAULT_POD_FAILURE_BACKOFF = 10.0   # DefaultJobPodFailureBackOff
MAX_POD_FAILURE_BACKOFF = 360.0      # MaxJobPodFailureBackOff (6 min)
MAX_POD_CREATE_DELETE_PER_SYNC = 500  # MaxPodCreateDeletePerSync
BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_MESSAGE = "Job was active longer than specified deadline"


@dataclass
class BackoffRecord:
    failures_after_last_success: int = 0
    last_failure_time: float | None = None

    def remaining(self, now: float) -> float:
        """getRemainingTimeForFailuresCount."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        d = DEFAULT_POD_FAILURE_BACKOFF
        for _ in range(1, self.failures_after_last_success):
            d *= 2
            if d >= MAX_POD_FAILURE_BACKOFF:
                d = MAX_POD_FAILURE_BACKOFF
                break
        elapsed = now - self.last_failure_time
        return 0.0 if d < elapsed else d - elapsed


def is_finished(job: Obj) -> bool:
    """util.IsJobFinished: a Complete or Failed condition that is True."""
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or ())


def has_finalizer(pod: Obj) -> bool:
    return TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or ())


class JobController:
    """pkg/controller/job Controller."""

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.tracking = bool(profile.job_tracking_finalizer)
        self.delay_terminal = bool(profile.job_delay_terminal_condition)
        self.batch = float(profile.job_pod_update_batch)
        self.events = EventRecorder(store, COMPONENT)
        self.expectations = Expectations(kernel)
        self.queue = WorkQueue(kernel, self.sync_job, sync=True)
        self.jobs: dict[Key, Obj] = {}
        self.index = shared_pod_index(store)
        self.backoff: dict[Key, BackoffRecord] = {}
        self.expected_rm_finalizers: dict[Key, set[str]] = {}
        self.seen_finished: dict[Key, set[str]] = {}   # legacy counting: finished pods already counted

    def start(self) -> None:
        for job in self.store.list("Job"):
            self.jobs[_key(job)] = job
            self.queue.add(_key(job))
        self.store.watch("Job", self._on_job)
        self.store.watch("Pod", self._on_pod)

    # ---- event handlers --------------------------------------------------------------------------------------

    def _on_job(self, type_: str, job: Obj, old: Obj | None) -> None:
        key = _key(job)
        if type_ == DELETED:
            self.jobs.pop(key, None)
            self.queue.add(key)
            return
        self.jobs[key] = job
        if type_ != "ADDED" and old is not None and \
                job["metadata"].get("generation") == old["metadata"].get("generation"):
            self._enqueue_batched(key)  # a status update: batched
        else:
            self.queue.add(key)

    def _enqueue_batched(self, key: Key) -> None:
        self.queue.add_after(key, self.batch)

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if not self.jobs and not has_finalizer(pod):
            # no Job: no owner resolves, no selector adopts, and without the tracking finalizer there is none to
            # remove; nothing to do (the pod index keeps itself)
            return
        if type_ == DELETED:
            self._pod_deleted(pod, final=True)
            return
        if type_ == "ADDED" or old is None:
            if pod["metadata"].get("deletionTimestamp"):
                self._pod_deleted(pod, final=False)
                return
            job = self._resolve(pod)
            if job is not None:
                self.expectations.creation_observed(_skey(job))
                self._enqueue_batched(_key(job))
            elif owner_of(pod) is None:
                self._enqueue_matching(pod)
            return
        if pod["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        if pod["metadata"].get("deletionTimestamp"):
            self._pod_deleted(pod, final=False)
            return
        if owner_of(old) != owner_of(pod) and owner_of(old) is not None:
            j = self._resolve(old)
            if j is not None:
                self._enqueue_batched(_key(j))
        job = self._resolve(pod)
        if job is not None:
            if not has_finalizer(pod):
                self.expected_rm_finalizers.get(_key(job), set()).discard(pod["metadata"]["uid"])
            self._enqueue_batched(_key(job))
        elif owner_of(pod) is None and (pod["metadata"].get("labels") != old["metadata"].get("labels")
                                        or owner_of(old) is not None):
            self._enqueue_matching(pod)

    def _pod_deleted(self, pod: Obj, final: bool) -> None:
        job = self._resolve(pod)
        if job is None or is_finished(job):
            if has_finalizer(pod) and not final:
                self._remove_orphan_finalizer(pod)
            return
        self.expectations.deletion_observed(_skey(job), f"{pod['metadata']['namespace']}/{pod['metadata']['name']}")
        if final or not has_finalizer(pod):
            self.expected_rm_finalizers.get(_key(job), set()).discard(pod["metadata"]["uid"])
        self._enqueue_batched(_key(job))

    def _enqueue_matching(self, pod: Obj) -> None:
        labels = pod["metadata"].get("labels") or {}
        for key in sorted(k for k in self.jobs if k[0] == pod["metadata"]["namespace"]):
            sel = label_selector(self.jobs[key]["spec"].get("selector"))
            if not sel.empty() and sel.matches(labels):
                self._enqueue_batched(key)

    def _resolve(self, pod: Obj) -> Obj | None:
        return resolve_controller_ref(self.jobs, pod["metadata"]["namespace"], owner_of(pod), "Job")

    def _remove_orphan_finalizer(self, pod: Obj) -> None:
        """syncOrphanPod: the finalizer of a pod no unfinished Job tracks is removed."""
        try:
            self._remove_finalizer(pod)
        except ApiError:
            pass

    # ---- syncJob -----------------------------------------------------------------------------------------------

    def sync_job(self, key: Key) -> None:
        job = self.jobs.get(key)
        skey = f"{key[0]}/{key[1]}"
        if job is None:
            self.expectations.delete(skey)
            self.expected_rm_finalizers.pop(key, None)
            self.backoff.pop(key, None)
            return
        if is_finished(job):
            self.backoff.pop(key, None)
            return
        job = clone(job)
        spec, st = job["spec"], job.setdefault("status", {})
        if self.tracking:
            st.setdefault("uncountedTerminatedPods", {})
        satisfied = self.expectations.satisfied(skey)
        selector = label_selector(spec.get("selector"))
        fins = (TRACKING_FINALIZER,) if self.tracking else ()
        pods = claim_pods(self.store, COMPONENT, job, selector, self.index.candidates(job), controller_ref(job),
                          finalizers=fins)
        active_pods = [p for p in pods if is_pod_active(p)]
        active = len(active_pods)
        ready = sum(1 for p in active_pods if is_pod_ready(p))
        terminating = sum(1 for p in pods if p["metadata"].get("deletionTimestamp") and
                          (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        expected_rm = self.expected_rm_finalizers.setdefault(key, set())
        uncounted = st.get("uncountedTerminatedPods") or {}
        unc_s, unc_f = set(uncounted.get("succeeded") or ()), set(uncounted.get("failed") or ())
        seen = self.seen_finished.setdefault(key, set())

        def is_new(p: Obj) -> bool:
            uid = p["metadata"]["uid"]
            if self.tracking:
                return has_finalizer(p) and uid not in unc_s and uid not in unc_f and uid not in expected_rm
            return uid not in seen

        new_succeeded = [p for p in pods if is_new(p) and (p.get("status") or {}).get("phase") == "Succeeded"]
        new_failed = [p for p in pods if is_new(p) and self._is_pod_failed(p, job)]
        # nonIgnoredFailedPodsCount: failures a podFailurePolicy rule Ignores do not count
        new_failed = [p for p in new_failed if match_pod_failure_policy(job, p)[1]]
        if self.tracking:
            succeeded = int(st.get("succeeded") or 0) + len(new_succeeded) + len(unc_s)
            failed = int(st.get("failed") or 0) + len(new_failed) + len(unc_f)
        else:
            # getStatus: pods counted by phase while they exist
            succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
            failed = max(int(st.get("failed") or 0) + len(new_failed),
                         sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed"))
        suspended = bool(spec.get("suspend")) and self.profile.job_suspend
        if not st.get("startTime") and not suspended:
            st["startTime"] = self.trace.timestamp()
        record = self._new_backoff_record(key, new_succeeded, new_failed)

        # an interim condition of an earlier sync stands (1.31+): SuccessCriteriaMet, or FailureTarget -> Failed
        conds = st.get("conditions") or []
        finished: Obj | None = next((dict(c) for c in conds if c.get("type") == "SuccessCriteriaMet"
                                     and c.get("status") == "True"), None)
        target = next((c for c in conds if c.get("type") == "FailureTarget" and c.get("status") == "True"), None)
        if finished is None and target is not None:
            finished = self._condition("Failed", target.get("reason", ""), target.get("message", ""))
        if finished is not None:
            pass
        elif (message := self._fail_job_message(job, pods)) is not None:
            # getFailJobMessage: a FailJob rule matched; the FailureTarget condition records why before the
            # finalizers go (from 1.26, whatever the version does for other failures)
            finished = self._condition("FailureTarget", "PodFailurePolicy", message)
        elif failed > int(spec.get("backoffLimit", 6)) or self._past_backoff_limit_on_failure(job, pods):
            finished = self._condition("FailureTarget" if self.delay_terminal else "Failed",
                                       "BackoffLimitExceeded", BACKOFF_MESSAGE)
        elif (left := self._active_deadline_left(job, st)) is not None:
            if left <= 0:  # pastActiveDeadline
                finished = self._condition("FailureTarget" if self.delay_terminal else "Failed",
                                           "DeadlineExceeded", DEADLINE_MESSAGE)
            else:          # "Job has activeDeadlineSeconds configuration. Will sync this job again"
                self.queue.add_after(key, left)
        err: ApiError | None = None
        suspend_changed = False
        if finished is not None:
            deleted, err = self._delete_pods(job, active_pods)
            if deleted != active or not satisfied:
                finished = None
            active -= deleted
            terminating += deleted
            ready -= sum(1 for p in active_pods[:deleted] if is_pod_ready(p))
            if not self.tracking:
                failed += deleted  # legacy: the active pods of a failed Job count as failed
        elif suspended:
            # manageJob of a suspended Job: its active pods are deleted, none is created
            deleted, err = self._delete_pods(job, active_pods)
            active -= deleted
            terminating += deleted
            suspend_changed = self._suspended_condition(job, True)
        else:
            suspend_changed = self._suspended_condition(job, False)
            if satisfied and not job["metadata"].get("deletionTimestamp"):
                active, err = self._manage_job(job, key, active_pods, succeeded, record, terminating)
            completions = spec.get("completions")
            if completions is None:
                complete = succeeded > 0 and active == 0
            else:
                complete = succeeded >= int(completions) and active == 0
            if complete:
                finished = self._condition("SuccessCriteriaMet" if self.delay_terminal else "Complete", "", "")
        needs_flush = suspend_changed or active != int(st.get("active") or 0)
        st["active"] = active
        if self.batch:  # status.ready arrived with JobReadyPods
            needs_flush = needs_flush or st.get("ready") != ready
            st["ready"] = ready
        if self.profile.job_status_terminating:
            needs_flush = needs_flush or st.get("terminating") != terminating
            st["terminating"] = terminating
        if not self.tracking:
            needs_flush = needs_flush or int(st.get("succeeded") or 0) != succeeded or \
                int(st.get("failed") or 0) != failed
            st["succeeded"], st["failed"] = succeeded, failed
            seen.update(p["metadata"]["uid"] for p in new_succeeded + new_failed)
        self._track_status(key, job, pods, finished, record, terminating, needs_flush)
        if err is not None:
            raise err

    def _suspended_condition(self, job: Obj, suspended: bool) -> bool:
        """ensureJobConditionStatus for Suspended: True (JobSuspended) when suspended; a Suspended condition
        turns False (JobResumed) on resume, which restarts startTime (the deadline counts active time)."""
        st = job["status"]
        conds = st.setdefault("conditions", [])
        cur = next((c for c in conds if c.get("type") == "Suspended"), None)
        want = "True" if suspended else "False"
        if (cur is None and not suspended) or (cur is not None and cur.get("status") == want):
            if not conds:
                st.pop("conditions")
            return False
        now = self.trace.timestamp()
        reason, message = ("JobSuspended", "Job suspended") if suspended else ("JobResumed", "Job resumed")
        new = {"type": "Suspended", "status": want, "lastProbeTime": now, "lastTransitionTime": now,
               "reason": reason, "message": message}
        if cur is None:
            conds.append(new)
        else:
            conds[conds.index(cur)] = new
        self.events.event(job, "Normal", "Suspended" if suspended else "Resumed", message)
        if not suspended:
            st["startTime"] = now
        return True

    def _active_deadline_left(self, job: Obj, st: Obj) -> float | None:
        """job_controller.go pastActiveDeadline: seconds until activeDeadlineSeconds have passed since
        status.startTime (as stored: whole seconds), or None without a deadline."""
        ads = job["spec"].get("activeDeadlineSeconds")
        if ads is None or not st.get("startTime") or job["spec"].get("suspend"):
            return None
        start = datetime.strptime(st["startTime"], "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=self.trace.start_time.tzinfo)
        return (start - self.trace.start_time).total_seconds() + int(ads) - self.kernel.now

    def _is_pod_failed(self, pod: Obj, job: Obj | None = None) -> bool:
        """isPodFailed: Failed, or (tracking with finalizers) being deleted and not Succeeded; with a
        podFailurePolicy only the Failed phase counts (the policy needs the pod's final status)."""
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Failed":
            return True
        if job is not None and job["spec"].get("podFailurePolicy"):
            return False
        return self.tracking and bool(pod["metadata"].get("deletionTimestamp")) and phase != "Succeeded"

    def _fail_job_message(self, job: Obj, pods: list[Obj]) -> str | None:
        """getFailJobMessage: the message of the first failed pod a FailJob rule matches."""
        if not job["spec"].get("podFailurePolicy"):
            return None
        for p in pods:
            if self._is_pod_failed(p, job):
                message = match_pod_failure_policy(job, p)[0]
                if message is not None:
                    return message
        return None

    def _past_backoff_limit_on_failure(self, job: Obj, pods: list[Obj]) -> bool:
        """pastBackoffLimitOnFailure: with restartPolicy OnFailure, the container restarts of running and pending
        pods reach backoffLimit (exceed 0)."""
        if ((job["spec"].get("template") or {}).get("spec") or {}).get("restartPolicy") != "OnFailure":
            return False
        total = 0
        for p in pods:
            st = p.get("status") or {}
            if st.get("phase") in ("Running", "Pending"):
                for c in (st.get("initContainerStatuses") or []) + (st.get("containerStatuses") or []):
                    total += int(c.get("restartCount") or 0)
        limit = int(job["spec"].get("backoffLimit", 6))
        return total > 0 if limit == 0 else total >= limit

    def _finished_time(self, pod: Obj) -> float:
        """getFinishedTime: the latest container finishedAt, else the deletion timestamp, else creation."""
        st = pod.get("status") or {}
        times = [parse_time(self.trace, (c.get("state") or {}).get("terminated", {}).get("finishedAt"))
                 for c in (st.get("initContainerStatuses") or []) + (st.get("containerStatuses") or [])
                 if (c.get("state") or {}).get("terminated")]
        times = [t for t in times if t is not None]
        if times:
            return max(times)
        for ts in (pod["metadata"].get("deletionTimestamp"), pod["metadata"].get("creationTimestamp")):
            t = parse_time(self.trace, ts)
            if t is not None:
                return t
        return 0.0

    def _new_backoff_record(self, key: Key, new_succeeded: list[Obj], new_failed: list[Obj]) -> BackoffRecord:
        """backoffStore.newBackoffRecord."""
        old = self.backoff.get(key) or BackoffRecord()
        succ = sorted(self._finished_time(p) for p in new_succeeded)
        fail = sorted(self._finished_time(p) for p in new_failed)
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

    def _only_replace_failed(self, job: Obj) -> bool:
        """onlyReplaceFailedPods (1.29+, JobPodReplacementPolicy): podReplacementPolicy Failed, the default
        when a podFailurePolicy is set: a replacement waits until the pod it replaces is terminal."""
        spec = job["spec"]
        return bool(self.profile.job_status_terminating) and (
            spec.get("podReplacementPolicy") == "Failed" or bool(spec.get("podFailurePolicy")))

    def _manage_job(self, job: Obj, key: Key, active_pods: list[Obj], succeeded: int,
                    record: BackoffRecord, terminating: int = 0) -> tuple[int, ApiError | None]:
        """manageJob (NonIndexed, not suspended)."""
        spec = job["spec"]
        active = len(active_pods)
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        if completions is None:
            want = active if succeeded > 0 else parallelism
        else:
            want = max(0, min(int(completions) - succeeded, parallelism))
        skey = _skey(job)
        if active > want:
            # activePodsForRemoval: not ready / unscheduled first (ActivePods order)
            to_delete = sorted(active_pods, key=lambda p: (bool(p["spec"].get("nodeName")), is_pod_ready(p)))
            to_delete = to_delete[:min(active - want, MAX_POD_CREATE_DELETE_PER_SYNC)]
            self.expectations.expect_deletions(skey, [f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                                                      for p in to_delete])
            deleted, err = self._delete_pods(job, to_delete)
            return active - deleted, err
        diff = want - active
        if self._only_replace_failed(job):
            diff -= terminating   # terminating pods still hold their place
        if diff <= 0:
            return active, None
        remaining = record.remaining(self.kernel.now)
        if remaining > 0:
            self.queue.add_after(key, max(remaining, self.batch))  # enqueueSyncJobWithDelay
            return 0, None  # as upstream: the sync reports no active pods
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        self.expectations.expect_creations(skey, diff)
        created, err = slow_start_batch(diff, 1, lambda: self._create_pod(job))
        for _ in range(diff - created):
            self.expectations.creation_observed(skey)
        return active + created, err

    def _create_pod(self, job: Obj) -> ApiError | None:
        pod = pod_from_template(job["spec"].get("template") or {}, job)
        if self.tracking:
            pod["metadata"]["finalizers"] = list(pod["metadata"].get("finalizers") or ()) + [TRACKING_FINALIZER]
        try:
            created = self.store.create(pod, by=COMPONENT)
        except ApiError as e:
            if "because it is being terminated" in e.message:
                return None
            self.events.event(job, "Warning", "FailedCreate", f"Error creating: {e.message}")
            return e
        self.events.event(job, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
        return None

    def _delete_pods(self, job: Obj, pods: list[Obj]) -> tuple[int, ApiError | None]:
        """deleteActivePods / deleteJobPods: DELETE each (finalizers stay until the pod is counted)."""
        deleted, first = len(pods), None
        for pod in pods:
            name = pod["metadata"]["name"]
            try:
                self.store.delete("Pod", pod["metadata"]["namespace"], name, by=COMPONENT)
            except ApiError as e:
                if e.reason != "NotFound":
                    deleted -= 1
                    first = first or e
                    self.events.event(job, "Warning", "FailedDelete", f"Error deleting: {e.message}")
                continue
            self.events.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return deleted, first

    def _condition(self, ctype: str, reason: str, message: str) -> Obj:
        now = self.trace.timestamp()
        c: dict[str, Any] = {"type": ctype, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
        if reason:
            c["reason"] = reason
        if message:
            c["message"] = message
        return c

    # ---- trackJobStatusAndRemoveFinalizers ---------------------------------------------------------------------

    def _track_status(self, key: Key, job: Obj, pods: list[Obj], finished: Obj | None, record: BackoffRecord,
                      terminating: int, needs_flush: bool) -> None:
        st = job["status"]
        to_remove: list[Obj] = []
        if self.tracking:
            expected_rm = self.expected_rm_finalizers.setdefault(key, set())
            unc = st["uncountedTerminatedPods"]
            unc_s, unc_f = list(unc.get("succeeded") or ()), list(unc.get("failed") or ())
            failing = finished is not None and finished["type"] != "SuccessCriteriaMet"
            for p in pods:
                uid = p["metadata"]["uid"]
                if not has_finalizer(p) or uid in expected_rm:
                    continue
                considered_failed = self._is_pod_failed(p, job)
                phase = (p.get("status") or {}).get("phase")
                if not (job["metadata"].get("deletionTimestamp") or finished is not None or phase == "Succeeded"
                        or considered_failed):
                    continue
                to_remove.append(p)
                if phase == "Succeeded" and uid not in unc_f:
                    if uid not in unc_s:
                        unc_s.append(uid)
                        needs_flush = True
                elif (considered_failed or failing) and uid not in unc_f and match_pod_failure_policy(job, p)[1]:
                    unc_f.append(uid)
                    needs_flush = True
            unc["succeeded"], unc["failed"] = unc_s, unc_f
            _tidy_uncounted(unc)
        if finished is not None and finished["type"] == "FailureTarget":
            st.setdefault("conditions", []).append(finished)
            needs_flush = True
            finished = self._condition("Failed", finished.get("reason", ""), finished.get("message", ""))
        if finished is not None and finished["type"] == "SuccessCriteriaMet":
            if not any(c.get("type") == "SuccessCriteriaMet" for c in st.get("conditions") or ()):
                st.setdefault("conditions", []).append(finished)
                needs_flush = True
            finished = self._condition("Complete", finished.get("reason", ""), finished.get("message", ""))
        # flushUncountedAndRemoveFinalizers (without tracking, one write at the end)
        if needs_flush and self.tracking:
            job = self._write_status(job)
            self.backoff[key] = record
            needs_flush = False
        if to_remove:
            removed: set[str] = set()
            self.expected_rm_finalizers.setdefault(key, set()).update(p["metadata"]["uid"] for p in to_remove)
            for p in to_remove:
                try:
                    self._remove_finalizer(p)
                except ApiError as e:
                    self.expected_rm_finalizers[key].discard(p["metadata"]["uid"])
                    if e.reason != "NotFound":
                        continue
                removed.add(p["metadata"]["uid"])
            st = job["status"]
            unc = st.setdefault("uncountedTerminatedPods", {})
            for field, counter in (("succeeded", "succeeded"), ("failed", "failed")):
                keep = [u for u in unc.get(field) or () if u not in removed]
                if len(keep) != len(unc.get(field) or ()):
                    st[counter] = int(st.get(counter) or 0) + len(unc.get(field) or ()) - len(keep)
                    unc[field] = keep
                    needs_flush = True
            _tidy_uncounted(unc)
        # enactJobFinished
        finished_now = False
        if finished is not None:
            unc = job["status"].get("uncountedTerminatedPods") or {}
            if not (unc.get("succeeded") or unc.get("failed")) and not (self.delay_terminal and terminating > 0):
                st = job["status"]
                conds = st.setdefault("conditions", [])
                conds.append(finished)
                if finished["type"] == "Complete":
                    st["completionTime"] = finished["lastTransitionTime"]
                finished_now = needs_flush = True
        if needs_flush:
            job = self._write_status(job)
            if not self.tracking:
                self.backoff[key] = record
        if finished_now:
            if finished["type"] == "Complete":  # type: ignore[index]
                completions = job["spec"].get("completions")
                if completions is not None and int(job["status"].get("succeeded") or 0) > int(completions):
                    self.events.event(job, "Warning", "TooManySucceededPods",
                                      "Too many succeeded pods running after completion count reached")
                self.events.event(job, "Normal", "Completed", "Job completed")
            else:
                self.events.event(job, "Warning", finished.get("reason", ""), finished.get("message", ""))  # type: ignore[union-attr]

    def _remove_finalizer(self, pod: Obj) -> None:
        """removeTrackingFinalizerPatch: a patch dropping the finalizer (with the pod's UID as precondition)."""
        md = pod["metadata"]
        latest = self.store.try_get("Pod", md["namespace"], md["name"])
        if latest is None or latest["metadata"]["uid"] != md["uid"]:
            raise ApiError(404, "NotFound", f'pods "{md["name"]}" not found')
        if not has_finalizer(latest):
            return
        new = clone(latest)
        fins = [f for f in new["metadata"].get("finalizers") or () if f != TRACKING_FINALIZER]
        if fins:
            new["metadata"]["finalizers"] = fins
        else:
            new["metadata"].pop("finalizers", None)
        self.store.update(new, by=COMPONENT, verb="patch")

    def _write_status(self, job: Obj) -> Obj:
        """updateJobStatus: one UpdateStatus with the job's resourceVersion (a conflict fails the sync)."""
        st = {k: v for k, v in job["status"].items() if v or k in ("ready", "terminating", "uncountedTerminatedPods")}
        obj = {"apiVersion": job.get("apiVersion"), "kind": "Job",
               "metadata": {"name": job["metadata"]["name"], "namespace": job["metadata"]["namespace"],
                            "uid": job["metadata"]["uid"], "resourceVersion": job["metadata"]["resourceVersion"]},
               "status": clone(st)}
        written = self.store.update_status(obj, by=COMPONENT)
        return clone(written)


def match_pod_failure_policy(job: Obj, pod: Obj) -> tuple[str | None, bool, str | None]:
    """matchPodFailurePolicy: (the FailJob message, whether the failure counts, the action), from the first rule
    whose onExitCodes (a container, init containers first, terminated with a non-zero code) or onPodConditions
    match the pod. No rule: counted, no action."""
    policy = job["spec"].get("podFailurePolicy") or {}
    st = pod.get("status") or {}
    md = pod["metadata"]
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None and not rule.get("onPodConditions"):
            req = rule["onExitCodes"]
            matched = _match_exit_codes(st, req)
            if matched is None:
                continue
            name, code = matched
            message = (f"Container {name} for pod {md['namespace']}/{md['name']} failed with exit code {code} "
                       f"matching {action} rule at index {index}")
        else:
            ctype = _match_pod_conditions(st, rule.get("onPodConditions") or ())
            if ctype is None:
                continue
            message = f"Pod {md['namespace']}/{md['name']} has condition {ctype} matching {action} rule at index {index}"
        if action == "Ignore":
            return None, False, action
        if action == "FailJob":
            return message, True, action
        return None, True, action
    return None, True, None


def _match_exit_codes(status: Obj, req: Obj) -> tuple[str, int] | None:
    values = set(req.get("values") or ())
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        term = (cs.get("state") or {}).get("terminated")
        if term is None or (req.get("containerName") and req["containerName"] != cs.get("name")):
            continue
        code = int(term.get("exitCode") or 0)
        if code != 0 and (code in values) == (req.get("operator") == "In"):
            return cs.get("name", ""), code
    return None


def _match_pod_conditions(status: Obj, patterns: Any) -> str | None:
    for c in status.get("conditions") or ():
        for pat in patterns:
            if c.get("type") == pat.get("type") and c.get("status") == pat.get("status", "True"):
                return c["type"]
    return None


def _tidy_uncounted(unc: Obj) -> None:
    """UncountedTerminatedPods lists are omitempty."""
    for f in ("succeeded", "failed"):
        if not unc.get(f):
            unc.pop(f, None)





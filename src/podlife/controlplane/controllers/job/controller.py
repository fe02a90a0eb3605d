"""Job controller: pkg/controller/job/job_controller.go (syncJob, manageJob, trackJobStatusAndRemoveFinalizers,
enactJobFinished); back-off, Indexed mode and the policies are the sibling modules.

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
(FailureTarget first, reason PodFailurePolicy), Ignore keeps the failure out of the count (from 1.28 not out of
the back-off: ``job_backoff_counts_ignored``), Count counts it; with a policy only pods in phase Failed are
failures.

A replacement waits for the pod it replaces to be terminal (onlyReplaceFailedPods) with a podFailurePolicy from
1.28 (``job_policy_replaces_failed_only``) and with podReplacementPolicy Failed from 1.29. Otherwise
(TerminatingOrFailed, the default) a pod being deleted counts as failed at once, its failure time being the
deletion's (getFinishedTime: deletionTimestamp minus the grace period), and its replacement waits only for the
back-off.

Indexed completion mode (``job_indexed``, 1.22+): each pod gets a completion index (annotation, and from 1.28 the
label with PodIndexLabel), the name ``<job>-<index>-xxxxx``, hostname ``<job>-<index>`` and JOB_COMPLETION_INDEX
from the downward API; the lowest pending indexes are created; succeeded indexes are status.completedIndexes.
With backoffLimitPerIndex (``job_backoff_limit_per_index``, 1.29+) failures count per index
(job-index-failure-count annotations, status.failedIndexes, per-index back-off, FailIndex rules,
maxFailedIndexes). A successPolicy (``job_success_policy``, 1.31+) ends an Indexed Job early: SuccessCriteriaMet
(reason SuccessPolicy), remaining pods deleted, then Complete.

A suspended Job (``job_suspend``, 1.22+) has no pods (its active ones are deleted), condition Suspended and no
startTime; resuming it restarts startTime.

Not modelled: managedBy (the built-in controller always manages the Job). ttlSecondsAfterFinished is the
TTL-after-finished controller's (podlife.controlplane.controllers.ttlafterfinished). Before 1.25 pods are
counted while they exist (getStatus) and the backoff uses the same backoff record as later versions, not the
old rate-limited requeue.
"""

from __future__ import annotations

from typing import Any

from podlife.api import metatime
from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    create_pod,
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
from podlife.controlplane.controllers.job import indexed
from podlife.controlplane.controllers.job.backoff import (
    BackoffRecord,
    finished_time,
    new_backoff_record,
    remaining_for,
)
from podlife.controlplane.controllers.job.policies import match_pod_failure_policy, match_success_policy
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "job-controller"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
MAX_POD_CREATE_DELETE_PER_SYNC = 500  # MaxPodCreateDeletePerSync
BACKOFF_MESSAGE = "Job has reached the specified backoff limit"
DEADLINE_MESSAGE = "Job was active longer than specified deadline"


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
        is_indexed = self._indexed(job)
        completions = int(spec["completions"]) if spec.get("completions") is not None else 0

        def is_new(p: Obj) -> bool:
            """getValidPodsWithFilter: not counted yet and, for an Indexed Job, with a valid index."""
            uid = p["metadata"]["uid"]
            if is_indexed and not 0 <= indexed.completion_index(p) < completions:
                return False
            if self.tracking:
                return has_finalizer(p) and uid not in unc_s and uid not in unc_f and uid not in expected_rm
            return uid not in seen

        new_succeeded = [p for p in pods if is_new(p) and (p.get("status") or {}).get("phase") == "Succeeded"]
        new_failed = [p for p in pods if is_new(p) and self._is_pod_failed(p, job)]
        # nonIgnoredFailedPodsCount: failures a podFailurePolicy rule Ignores do not count
        counted_failed = [p for p in new_failed if self._match_policy(job, p)[1]]
        if self.tracking:
            succeeded = int(st.get("succeeded") or 0) + len(new_succeeded) + len(unc_s)
            failed = int(st.get("failed") or 0) + len(counted_failed) + len(unc_f)
        else:
            # getStatus: pods counted by phase while they exist
            succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
            failed = max(int(st.get("failed") or 0) + len(counted_failed),
                         sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed"))
        suspended = bool(spec.get("suspend")) and self.profile.job_suspend
        if not st.get("startTime") and not suspended:
            st["startTime"] = self.trace.timestamp()
        # newBackoffRecord takes every newly failed pod, ignored ones included
        # newBackoffRecord: from 1.28 (PR #119434) failures an Ignore rule keeps out of the count still back off
        backing_off = new_failed if self.profile.job_backoff_counts_ignored else counted_failed
        record = new_backoff_record(self.backoff.get(key), [self._finished_time(p) for p in new_succeeded],
                                    [self._finished_time(p) for p in backing_off])

        # an interim condition of an earlier sync stands (1.31+): SuccessCriteriaMet, or FailureTarget -> Failed
        conds = st.get("conditions") or []
        finished: Obj | None = next((dict(c) for c in conds if c.get("type") == "SuccessCriteriaMet"
                                     and c.get("status") == "True"), None)
        target = next((c for c in conds if c.get("type") == "FailureTarget" and c.get("status") == "True"), None)
        if finished is None and target is not None:
            finished = self._condition("Failed", target.get("reason", ""), target.get("message", ""))
        elif finished is None and (message := self._fail_job_message(job, pods)) is not None:
            # getFailJobMessage: a FailJob rule matched; the FailureTarget condition records why before the
            # finalizers go (from 1.26, whatever the version does for other failures)
            finished = self._condition("FailureTarget", "PodFailurePolicy", message)
        if finished is None:
            if failed > int(spec.get("backoffLimit", 6)) or self._past_backoff_limit_on_failure(job, pods):
                finished = self._failure("BackoffLimitExceeded", BACKOFF_MESSAGE)
            elif (left := self._active_deadline_left(job, st)) is not None:
                if left <= 0:  # pastActiveDeadline
                    finished = self._failure("DeadlineExceeded", DEADLINE_MESSAGE)
                else:          # "Job has activeDeadlineSeconds configuration. Will sync this job again"
                    self.queue.add_after(key, left)
        ctx = _IndexedCtx()
        if is_indexed:
            ctx.prev_succeeded, ctx.succeeded = self._succeeded_indexes(job, pods, completions)
            succeeded = indexed.total(ctx.succeeded)
            if self._per_index(job):
                ctx.failed = self._failed_indexes(job, pods, completions)
                n_failed = indexed.total(ctx.failed)
                if finished is None:
                    max_failed = spec.get("maxFailedIndexes")
                    if max_failed is not None and n_failed > int(max_failed):
                        finished = self._failure("MaxFailedIndexesExceeded",
                                                 "Job has exceeded the specified maximal number of failed indexes")
                    elif n_failed > 0 and n_failed + succeeded >= completions:
                        finished = self._failure("FailedIndexes", "Job has failed indexes")
                ctx.delayed = self._pods_with_delayed_deletion(job, pods, active_pods, completions, ctx)
            if finished is None and self.profile.job_success_policy:
                message = match_success_policy(job, completions, ctx.succeeded)
                if message is not None:
                    finished = self._condition("SuccessCriteriaMet", "SuccessPolicy", message)
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
                active, terminating, err = self._manage_job(job, key, pods, active_pods, succeeded, record,
                                                            terminating, ctx)
            if spec.get("completions") is None:
                complete = succeeded > 0 and active == 0
            else:
                complete = succeeded >= completions and active == 0
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
            if is_indexed:
                needs_flush = needs_flush or st.get("completedIndexes", "") != indexed.to_string(ctx.succeeded)
                st["completedIndexes"] = indexed.to_string(ctx.succeeded)
            seen.update(p["metadata"]["uid"] for p in new_succeeded + new_failed)
        self._track_status(key, job, pods, finished, record, terminating, needs_flush, ctx)
        if err is not None:
            raise err

    # ---- Indexed Jobs (indexed_job_utils.go) ---------------------------------------------------------------

    def _indexed(self, job: Obj) -> bool:
        return bool(self.profile.job_indexed) and indexed.is_indexed(job) and job["spec"].get("completions") is not None

    def _per_index(self, job: Obj) -> bool:
        """hasBackoffLimitPerIndex."""
        return bool(self.profile.job_backoff_limit_per_index) and job["spec"].get("backoffLimitPerIndex") is not None

    def _succeeded_indexes(self, job: Obj, pods: list[Obj], completions: int
                           ) -> tuple[indexed.Intervals, indexed.Intervals]:
        """calculateSucceededIndexes: status.completedIndexes (tracking with finalizers only) and those plus the
        indexes of Succeeded pods not counted yet."""
        prev = indexed.parse(job["status"].get("completedIndexes"), completions) if self.tracking else []
        new = {indexed.completion_index(p) for p in pods
               if (p.get("status") or {}).get("phase") == "Succeeded"
               and 0 <= indexed.completion_index(p) < completions and (not self.tracking or has_finalizer(p))}
        return prev, indexed.with_indexes(prev, new)

    def _failed_indexes(self, job: Obj, pods: list[Obj], completions: int) -> indexed.Intervals:
        """calculateFailedIndexes: status.failedIndexes plus the indexes of failed pods not counted yet that
        matched FailIndex or used up backoffLimitPerIndex (isIndexFailed)."""
        prev = indexed.parse(job["status"].get("failedIndexes"), completions)
        limit = int(job["spec"]["backoffLimitPerIndex"])
        new = set()
        for p in pods:
            ix = indexed.completion_index(p)
            if not (0 <= ix < completions and has_finalizer(p) and self._is_pod_failed(p, job)):
                continue
            _, counts, action = self._match_policy(job, p)
            if action == "FailIndex" or (counts and indexed.failure_count(p) >= limit):
                new.add(ix)
        return indexed.with_indexes(prev, new)

    def _pods_with_delayed_deletion(self, job: Obj, pods: list[Obj], active_pods: list[Obj], completions: int,
                                    ctx: "_IndexedCtx") -> dict[int, Obj]:
        """getPodsWithDelayedDeletionPerIndex: per index neither succeeded, failed nor active, the last failed
        pod (most failures, latest finish), whose finalizer stays until its replacement carries the count."""
        active_ix = {indexed.completion_index(p) for p in active_pods}
        out: dict[int, Obj] = {}
        for p in pods:
            if not (has_finalizer(p) and p["metadata"]["uid"] not in self.expected_rm_finalizers.get(_key(job), ())
                    and self._is_pod_failed(p, job)):
                continue
            ix = indexed.completion_index(p)
            if not 0 <= ix < completions or indexed.has(ctx.succeeded, ix) or \
                    indexed.has(ctx.failed or [], ix) or ix in active_ix:
                continue
            last = out.get(ix)
            if last is None or (indexed.absolute_failure_count(last) <= indexed.absolute_failure_count(p)
                                and not self._finished_time(p) < self._finished_time(last)):
                out[ix] = p
        return out

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
        start = metatime.parse(st["startTime"]).replace(
            tzinfo=self.trace.start_time.tzinfo)
        return (start - self.trace.start_time).total_seconds() + int(ads) - self.kernel.now

    def _is_pod_failed(self, pod: Obj, job: Obj) -> bool:
        """isPodFailed: Failed, or (tracking with finalizers) being deleted and not Succeeded, unless only failed
        pods are replaced (a podFailurePolicy, or podReplacementPolicy Failed): then the pod must be Failed."""
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Failed":
            return True
        # (before 1.28 a podFailurePolicy alone made isPodFailed wait for the Failed phase)
        if self._only_replace_failed(job) or job["spec"].get("podFailurePolicy"):
            return False
        return self.tracking and bool(pod["metadata"].get("deletionTimestamp")) and phase != "Succeeded"

    def _match_policy(self, job: Obj, pod: Obj) -> tuple[str | None, bool, str | None]:
        return match_pod_failure_policy(job, pod, fail_index=bool(self.profile.job_backoff_limit_per_index))

    def _fail_job_message(self, job: Obj, pods: list[Obj]) -> str | None:
        """getFailJobMessage: the message of the first failed pod a FailJob rule matches."""
        if not job["spec"].get("podFailurePolicy"):
            return None
        for p in pods:
            if self._is_pod_failed(p, job):
                message = self._match_policy(job, p)[0]
                if message is not None:
                    return message
        return None

    def _failure(self, reason: str, message: str) -> Obj:
        """newFailureCondition: FailureTarget first from 1.31, else Failed at once."""
        return self._condition("FailureTarget" if self.delay_terminal else "Failed", reason, message)

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
        now = self.kernel.now if self.profile.job_finish_time_fallback == "now" else None
        return finished_time(pod, lambda ts: parse_time(self.trace, ts) if isinstance(ts, str) else None, now)

    def _only_replace_failed(self, job: Obj) -> bool:
        """onlyReplaceFailedPods: podReplacementPolicy Failed (1.29+, JobPodReplacementPolicy; the default with
        a podFailurePolicy), or any podFailurePolicy: a replacement waits until the pod it replaces is
        terminal."""
        spec = job["spec"]
        if self.profile.job_status_terminating and spec.get("podReplacementPolicy") == "Failed":
            return True
        return bool(self.profile.job_policy_replaces_failed_only) and bool(spec.get("podFailurePolicy"))

    def _manage_job(self, job: Obj, key: Key, pods: list[Obj], active_pods: list[Obj], succeeded: int,
                    record: BackoffRecord, terminating: int, ctx: "_IndexedCtx"
                    ) -> tuple[int, int, ApiError | None]:
        """manageJob (not suspended): (active, terminating, error)."""
        spec = job["spec"]
        active = len(active_pods)
        parallelism = int(spec.get("parallelism", 1))
        completions = spec.get("completions")
        if completions is None:
            want = active if succeeded > 0 else parallelism
        else:
            want = max(0, min(int(completions) - succeeded, parallelism))
        skey = _skey(job)
        is_indexed = self._indexed(job)
        to_delete = self._active_pods_for_removal(job, active_pods, max(0, active - want), is_indexed)
        if to_delete:
            to_delete = to_delete[:MAX_POD_CREATE_DELETE_PER_SYNC]
            self.expectations.expect_deletions(skey, [f"{p['metadata']['namespace']}/{p['metadata']['name']}"
                                                      for p in to_delete])
            deleted, err = self._delete_pods(job, to_delete)
            return active - deleted, terminating + deleted, err
        diff = want - active
        only_failed = self._only_replace_failed(job)
        if only_failed:
            diff -= terminating   # terminating pods still hold their place
        if diff <= 0:
            return active, terminating, None
        per_index = is_indexed and self._per_index(job)
        remaining = 0.0 if per_index else record.remaining(self.kernel.now)
        if remaining > 0:
            self.queue.add_after(key, max(remaining, self.batch))  # enqueueSyncJobWithDelay
            return 0, terminating, None  # as upstream: the sync reports no active pods
        diff = min(diff, MAX_POD_CREATE_DELETE_PER_SYNC)
        indexes: list[int] = []
        if is_indexed:
            non_pending = indexed.with_indexes(ctx.succeeded, [indexed.completion_index(p) for p in active_pods
                                                               if indexed.completion_index(p) >= 0])
            if only_failed:
                non_pending = indexed.with_indexes(non_pending, [
                    indexed.completion_index(p) for p in pods if indexed.completion_index(p) >= 0
                    and p["metadata"].get("deletionTimestamp")
                    and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")])
            if ctx.failed is not None:
                non_pending = indexed.merge(non_pending, ctx.failed)
            indexes = indexed.first_pending(diff, int(completions), non_pending)
            if per_index:
                indexes, wait = self._creatable_indexes(indexes, ctx.delayed)
                if wait > 0:
                    self.queue.add_after(key, max(wait, self.batch))
                    return 0, terminating, None
            diff = len(indexes)
            if diff == 0:
                return active, terminating, None
        self.expectations.expect_creations(skey, diff)
        pending = list(indexes)
        created, err = slow_start_batch(
            diff, 1, lambda: self._create_pod(job, pending.pop(0) if pending else -1, ctx))
        for _ in range(diff - created):
            self.expectations.creation_observed(skey)
        return active + created, terminating, err

    def _creatable_indexes(self, indexes: list[int], delayed: dict[int, Obj]) -> tuple[list[int], float]:
        """getPodCreationInfoForIndependentIndexes: the indexes whose own back-off (10 s * 2^(failures of the
        index - 1) from its last failed pod's finish) has passed, else the shortest wait."""
        now, ready, waits = self.kernel.now, [], []
        for ix in indexes:
            last = delayed.get(ix)
            wait = 0.0 if last is None else remaining_for(indexed.absolute_failure_count(last) + 1,
                                                          self._finished_time(last), now)
            if wait == 0:
                ready.append(ix)
            else:
                waits.append(wait)
        return (ready, 0.0) if ready else ([], min(waits, default=0.0))

    def _active_pods_for_removal(self, job: Obj, active_pods: list[Obj], at_least: int,
                                 is_indexed: bool) -> list[Obj]:
        """activePodsForRemoval: for an Indexed Job, pods without a valid index and all but one pod of each
        repeated index first; then the least advanced pods (unscheduled, not ready) first."""
        rm: list[Obj] = []
        left = list(active_pods)
        if is_indexed:
            completions = int(job["spec"]["completions"])
            left = []
            by_index: dict[int, list[Obj]] = {}
            for p in active_pods:
                ix = indexed.completion_index(p)
                if not 0 <= ix < completions:
                    rm.append(p)
                else:
                    by_index.setdefault(ix, []).append(p)
            for ix in sorted(by_index):
                same = sorted(by_index[ix], key=_activeness)
                rm += same[:-1]
                left.append(same[-1])
        if len(rm) < at_least:
            rm += sorted(left, key=_activeness)[:at_least - len(rm)]
        return rm

    def _create_pod(self, job: Obj, index: int = -1, ctx: "_IndexedCtx | None" = None) -> ApiError | None:
        template = clone(job["spec"].get("template") or {})
        if index >= 0:
            # manageJob of an Indexed Job: the index annotation (and label, PodIndexLabel), the hostname, the
            # generateName with the index, JOB_COMPLETION_INDEX, and the index's failure counts
            by_label = bool(self.profile.job_pod_index_label)
            indexed.add_index_env(template.setdefault("spec", {}), by_label)
            tmd = template.setdefault("metadata", {})
            ann = tmd.get("annotations") if isinstance(tmd.get("annotations"), dict) else {}
            ann = tmd["annotations"] = dict(ann, **{indexed.INDEX_ANNOTATION: str(index)})
            if by_label:
                tmd["labels"] = dict(tmd.get("labels") or {}, **{indexed.INDEX_ANNOTATION: str(index)})
            if self.profile.job_indexed_pod_names:
                template["spec"]["hostname"] = f"{job['metadata']['name']}-{index}"
            if ctx is not None and self._per_index(job):
                counted, ignored = self._new_index_failure_counts(job, ctx.delayed.get(index))
                ann[indexed.FAILURE_COUNT_ANNOTATION] = str(counted)
                if ignored > 0:
                    ann[indexed.IGNORED_FAILURE_COUNT_ANNOTATION] = str(ignored)
        pod = pod_from_template(template, job)
        if index >= 0 and self.profile.job_indexed_pod_names:
            pod["metadata"]["generateName"] = indexed.generate_name(job["metadata"]["name"], index)
        if self.tracking:
            pod["metadata"]["finalizers"] = list(pod["metadata"].get("finalizers") or ()) + [TRACKING_FINALIZER]
        return create_pod(self.store, self.events, COMPONENT, job, pod)

    def _new_index_failure_counts(self, job: Obj, replaced: Obj | None) -> tuple[int, int]:
        """getNewIndexFailureCounts: the replaced pod's counts plus its own failure (counted, or ignored by a
        podFailurePolicy rule)."""
        if replaced is None:
            return 0, 0
        counted = indexed.annotation_int(replaced, indexed.FAILURE_COUNT_ANNOTATION)
        ignored = indexed.annotation_int(replaced, indexed.IGNORED_FAILURE_COUNT_ANNOTATION)
        if self._match_policy(job, replaced)[1]:
            counted += 1
        else:
            ignored += 1
        return counted, ignored

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
                      terminating: int, needs_flush: bool, ctx: "_IndexedCtx") -> None:
        st = job["status"]
        to_remove: list[Obj] = []
        is_indexed = self._indexed(job)
        completions = int(job["spec"].get("completions") or 0)
        if self.tracking:
            expected_rm = self.expected_rm_finalizers.setdefault(key, set())
            unc = st["uncountedTerminatedPods"]
            unc_s, unc_f = list(unc.get("succeeded") or ()), list(unc.get("failed") or ())
            failing = finished is not None and finished["type"] != "SuccessCriteriaMet"
            new_indexes: list[int] = []
            if is_indexed:   # completed indexes are introduced in order
                pods = sorted(pods, key=indexed.completion_index)
            for p in pods:
                uid = p["metadata"]["uid"]
                if not has_finalizer(p) or uid in expected_rm:
                    continue
                considered_failed = self._is_pod_failed(p, job)
                if not self._can_remove_finalizer(job, p, finished, considered_failed, ctx):
                    continue
                phase = (p.get("status") or {}).get("phase")
                to_remove.append(p)
                ix = indexed.completion_index(p)
                if phase == "Succeeded" and uid not in unc_f:
                    if is_indexed:   # the index is enough not to count a pod twice
                        if 0 <= ix < completions and not indexed.has(ctx.prev_succeeded, ix):
                            new_indexes.append(ix)
                            needs_flush = True
                    elif uid not in unc_s:
                        unc_s.append(uid)
                        needs_flush = True
                elif (considered_failed or failing) and uid not in unc_f and \
                        (not is_indexed or 0 <= ix < completions) and self._match_policy(job, p)[1]:
                    unc_f.append(uid)
                    needs_flush = True
            unc["succeeded"], unc["failed"] = unc_s, unc_f
            _tidy_uncounted(unc)
            if is_indexed:
                ctx.succeeded = indexed.with_indexes(ctx.succeeded, new_indexes)
                text = indexed.to_string(ctx.succeeded)
                needs_flush = needs_flush or text != st.get("completedIndexes", "")
                st["succeeded"] = indexed.total(ctx.succeeded)
                st["completedIndexes"] = text
                failed_text = indexed.to_string(ctx.failed) if ctx.failed is not None else None
                if failed_text != st.get("failedIndexes"):
                    needs_flush = True
                    if failed_text is None:
                        st.pop("failedIndexes", None)
                    else:
                        st["failedIndexes"] = failed_text
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

    def _can_remove_finalizer(self, job: Obj, pod: Obj, finished: Obj | None, considered_failed: bool,
                              ctx: "_IndexedCtx") -> bool:
        """canRemoveFinalizer: the Job is being deleted or finished, or the pod succeeded or failed; with
        backoffLimitPerIndex a failed pod whose index awaits its replacement keeps its finalizer (the
        replacement copies its failure count)."""
        if job["metadata"].get("deletionTimestamp") or finished is not None or \
                (pod.get("status") or {}).get("phase") == "Succeeded":
            return True
        if not considered_failed:
            return False
        if self._indexed(job) and self._per_index(job):
            delayed = ctx.delayed.get(indexed.completion_index(pod))
            if delayed is not None and delayed["metadata"]["uid"] == pod["metadata"]["uid"]:
                return False
        return True

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
        st = {k: v for k, v in job["status"].items()
              if v or k in ("ready", "terminating", "uncountedTerminatedPods")
              or (k == "failedIndexes" and v is not None)}
        obj = {"apiVersion": job.get("apiVersion"), "kind": "Job",
               "metadata": job["metadata"],   # the job as read: jobStatusStrategy keeps its labels/annotations
               "status": clone(st)}
        written = self.store.update_status(obj, by=COMPONENT)
        return clone(written)


class _IndexedCtx:
    """The index sets of one sync of an Indexed Job (syncJobCtx)."""

    def __init__(self) -> None:
        self.prev_succeeded: indexed.Intervals = []
        self.succeeded: indexed.Intervals = []
        self.failed: indexed.Intervals | None = None      # with backoffLimitPerIndex only
        self.delayed: dict[int, Obj] = {}                 # podsWithDelayedDeletionPerIndex


def _activeness(pod: Obj) -> tuple[bool, bool]:
    """controller.ActivePods order, as far as it matters here: unscheduled before scheduled, not ready before
    ready."""
    return bool(pod["spec"].get("nodeName")), is_pod_ready(pod)


def _tidy_uncounted(unc: Obj) -> None:
    """UncountedTerminatedPods lists are omitempty."""
    for f in ("succeeded", "failed"):
        if not unc.get(f):
            unc.pop(f, None)





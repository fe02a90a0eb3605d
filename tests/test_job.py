"""The Job controller end to end (pkg/controller/job), NonIndexed.

Timing facts of the model: a container starts 0.1 s after its pod is created; the kubelet reports it Running
at the next whole-second PLEG relist; a `sleep N` container exits N s after it started; the relist after the
exit reports the container terminated (finishedAt with second precision), and the pod turns Succeeded/Failed
one relist later (the status manager holds a terminal phase back until the terminating sync). From 1.24 a pod
event syncs the Job 1 s later (syncJobBatchPeriod; a pending earlier sync absorbs later events); Job spec
events sync at once.
"""

from __future__ import annotations

import re

import pytest

from podlife.controlplane.controllers.job import BackoffRecord
from tests.helpers import records, run_text

GENERATED = r"[bcdfghjklmnpqrstvwxz2456789]{5}"


def _scenario(spec: str, version: str = "1.34", until: str = "60s") -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: job}}
spec:
  kubernetesVersion: "{version}"
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {{name: pi}}
      spec:
{spec}
  until: {until}
"""


def _job(command: str, extra: str = "", policy: str = "Never") -> str:
    return f"""{extra}
        template:
          spec:
            restartPolicy: {policy}
            containers: [{{name: work, image: busybox:1.36, command: {command}}}]"""


def _creates(r) -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb="create", by="job-controller")]


def _events(r) -> list[tuple[float, str, str]]:
    return [(e["t"], e["reason"], e["message"]) for e in records(r, "event", object="Job/default/pi")]


def _status(r) -> dict:
    return r.cluster.store.get("Job", "default", "pi")["status"]


def _cond_types(r) -> list[tuple[str, str]]:
    return [(c["type"], c["lastTransitionTime"][-3:-1]) for c in _status(r).get("conditions") or ()]


def test_completions_3_parallelism_2(tmp_path):
    """sleep 3 pods. 0: two pods (min(parallelism 2, completions 3)); they run 0.1-3.1, are reported exited at
    the 4 s relist and Succeeded at 5. The pod events of 4 sync the Job at 5 (ready 0); the Succeeded updates
    at 5 sync it at 6: 2 succeeded, 1 to go -> the third pod at 6, which runs 6.1-9.1, Succeeded at 11 ->
    sync at 12: 3 succeeded, none active -> SuccessCriteriaMet, then Complete (1.31+: no pod terminating)."""
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 3"]', "        completions: 3\n        parallelism: 2")))
    created = _creates(r)
    assert [t for t, _ in created] == [0.0, 0.0, 6.0]
    assert all(re.fullmatch(f"pi-{GENERATED}", n) for _, n in created)
    assert _events(r) == [(t, "SuccessfulCreate", f"Created pod: {n}") for t, n in created] + \
        [(12.0, "Completed", "Job completed")]
    # tracking with finalizers: at 6 one status write lists the two pods as uncounted, their finalizers are
    # removed, a second write counts them
    at6 = [(x["verb"], x["object"].split("/")[0]) for x in records(r, "api", by="job-controller") if x["t"] == 6.0]
    assert at6 == [("create", "Pod"), ("update", "Job"), ("patch", "Pod"), ("patch", "Pod"), ("update", "Job")]
    st = _status(r)
    assert _cond_types(r) == [("SuccessCriteriaMet", "12"), ("Complete", "12")]
    assert (st["succeeded"], st.get("failed"), st.get("active"), st["ready"], st["terminating"]) == \
        (3, None, None, 0, 0)
    assert st["startTime"].endswith(":00Z") and st["completionTime"].endswith(":12Z")
    assert st["uncountedTerminatedPods"] == {}
    job = r.cluster.store.get("Job", "default", "pi")
    uid = job["metadata"]["uid"]
    for _, name in created:
        pod = r.cluster.store.get("Pod", "default", name)
        assert pod["metadata"]["labels"] == {"batch.kubernetes.io/controller-uid": uid,
                                             "batch.kubernetes.io/job-name": "pi",
                                             "controller-uid": uid, "job-name": "pi"}
        assert pod["metadata"].get("finalizers") is None   # removed once counted
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


def test_backoff_limit_exceeded(tmp_path):
    """`sleep 1; exit 1`, restartPolicy Never, backoffLimit 2: each pod fails; a replacement waits
    10 s * 2^(failures-1) from the failure's finishedAt (second precision).
    pod 1: 0.1-1.1 (finishedAt 1), Failed at 3, synced at 4: 1 failure, 10 - (4 - 1) = 7 s left -> created at 11.
    pod 2: 11.1-12.1 (finishedAt 12), Failed at 14, synced at 15: 20 - 3 = 17 s -> created at 32.
    pod 3: 32.1-33.1, Failed at 35, synced at 36: 3 failures > 2 -> FailureTarget, and at once Failed (no pod
    terminating)."""
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 1; exit 1"]', "        backoffLimit: 2")))
    assert [t for t, _ in _creates(r)] == [0.0, 11.0, 32.0]
    assert _events(r)[-1] == (36.0, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert _cond_types(r) == [("FailureTarget", "36"), ("Failed", "36")]
    cond = _status(r)["conditions"][-1]
    assert (cond["reason"], cond["message"]) == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert _status(r)["failed"] == 3 and "completionTime" not in _status(r)


def test_failed_condition_at_once_before_1_31(tmp_path):
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 1; exit 1"]', "        backoffLimit: 0"),
                                     version="1.30", until="20s"))
    assert [c for c, _ in _cond_types(r)] == ["Failed"]
    assert _events(r)[-1][1:] == ("BackoffLimitExceeded", "Job has reached the specified backoff limit")


def test_on_failure_restarts_count_towards_the_backoff_limit(tmp_path):
    # restartPolicy OnFailure: the pod never fails; its container restarts. When the restart counts of the
    # running pods reach backoffLimit (2) the Job deletes the pod (FailureTarget); Failed comes only once the
    # pod is no longer terminating
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 1; exit 1"]', "        backoffLimit: 2",
                                          policy="OnFailure")))
    (_, pod), = _creates(r)
    deletes = records(r, "api", verb="delete", by="job-controller")
    assert [d["object"] for d in deletes] == [f"Pod/default/{pod}"]
    t_del = deletes[0]["t"]
    failed_at = [x["t"] for x in records(r, "phase", object=f"Pod/default/{pod}", to="Failed")]
    types = [c for c, _ in _cond_types(r)]
    assert types == ["FailureTarget", "Failed"]
    ft, fd = (r.cluster.store.get("Job", "default", "pi")["status"]["conditions"][i]["lastTransitionTime"]
              for i in (0, 1))
    assert ft.endswith(f":{int(t_del):02d}Z")
    # the pod turns Failed after the delete; the next batched sync (at most 1 s later) sees it terminal and
    # finishes the Job
    done = [e for e in _events(r) if e[1] == "BackoffLimitExceeded"]
    assert failed_at and failed_at[0] > t_del and done and failed_at[0] <= done[0][0] <= failed_at[0] + 1
    assert fd.endswith(f":{int(done[0][0]):02d}Z")
    assert _events(r)[-2:] == [(t_del, "SuccessfulDelete", f"Deleted pod: {pod}"),
                               (done[0][0], "BackoffLimitExceeded", "Job has reached the specified backoff limit")]


def test_job_with_a_native_sidecar_completes(tmp_path):
    # as tests/test_sidecars.py: proxy starts 0.1, work 1.1-6.1; the kubelet reports work exited at the 7 s
    # relist (sync at 8), stops the sidecar at 8 and reports the pod Succeeded at 8.1; that update joins the
    # sync already pending for 9 -> Complete at 9
    spec = """
        template:
          spec:
            restartPolicy: Never
            initContainers: [{name: proxy, image: proxy:1, restartPolicy: Always}]
            containers: [{name: work, image: busybox:1.36, command: ["sh", "-c", "sleep 5"]}]"""
    r = run_text(tmp_path, _scenario(spec, until="20s"))
    assert [x["t"] for x in records(r, "phase", to="Succeeded")] == [8.1]
    assert _events(r)[-1] == (9.0, "Completed", "Job completed")
    assert _status(r)["succeeded"] == 1


@pytest.mark.parametrize("version,prefixed,finalizer", [("1.24", False, False), ("1.26", False, True),
                                                        ("1.27", True, True)])
def test_labels_and_tracking_finalizer_by_version(tmp_path, version, prefixed, finalizer):
    r = run_text(tmp_path, _scenario(_job('["sleep", "30"]'), version=version, until="2s"))
    (_, name), = _creates(r)
    job = r.cluster.store.get("Job", "default", "pi")
    pod = r.cluster.store.get("Pod", "default", name)
    uid = job["metadata"]["uid"]
    labels = pod["metadata"]["labels"]
    assert labels["controller-uid"] == uid and labels["job-name"] == "pi"
    assert ("batch.kubernetes.io/controller-uid" in labels) is prefixed
    key = "batch.kubernetes.io/controller-uid" if prefixed else "controller-uid"
    assert job["spec"]["selector"] == {"matchLabels": {key: uid}}
    assert (pod["metadata"].get("finalizers") == ["batch.kubernetes.io/job-tracking"]) is finalizer


def test_backoff_record_remaining_time():
    rec = BackoffRecord(failures_after_last_success=3, last_failure_time=10.0)
    assert rec.remaining(15.0) == 35.0          # 10 s * 2^2 = 40 s after 10
    assert BackoffRecord(40, 0.0).remaining(100.0) == 260.0  # capped at 6 min
    assert BackoffRecord().remaining(5.0) == 0.0


JOB_DEADLINE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: jobads}
spec:
  until: 2m
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: j}
      spec:
        activeDeadlineSeconds: 15
        template:
          spec:
            restartPolicy: Never
            terminationGracePeriodSeconds: 5
            containers: [{name: w, image: busybox, command: [sleep, "600"]}]
"""


@pytest.mark.parametrize("version, conditions", [
    # 1.31+: FailureTarget when the deadline passes (startTime 0 + 15), Failed once the pod is gone (21: SIGKILL
    # at 20 after its 5 s grace, removed at the next relist)
    ("1.34", [(15.0, "FailureTarget"), (21.0, "Failed")]),
    ("1.30", [(15.0, "Failed")]),
])
def test_job_active_deadline(tmp_path, version, conditions):
    """job_controller.go pastActiveDeadline: the Job is requeued for when activeDeadlineSeconds will have
    passed since status.startTime; then it fails with DeadlineExceeded and its active pods are deleted."""
    r = run_text(tmp_path, JOB_DEADLINE, version=version)
    job = r.cluster.store.get("Job", "default", "j")
    got = [(c["lastTransitionTime"], c["type"], c["reason"], c["message"]) for c in job["status"]["conditions"]]
    assert got == [(f"2025-01-01T00:00:{int(at):02d}Z", t, "DeadlineExceeded",
                    "Job was active longer than specified deadline") for at, t in conditions]
    deletes = [x["t"] for x in records(r, "event", object="Job/default/j", reason="SuccessfulDelete")]
    assert deletes == [15.0]
    warn = [x["t"] for x in records(r, "event", object="Job/default/j", reason="DeadlineExceeded")]
    assert warn == [conditions[-1][0]]


POLICY = """
        backoffLimit: 6
        podFailurePolicy:
          rules:
          - action: FailJob
            onExitCodes: {containerName: work, operator: In, values: [42]}
            onPodConditions: []
          - action: Ignore
            onPodConditions: [{type: DisruptionTarget, status: "True"}]"""


@pytest.mark.parametrize("version, conditions", [
    ("1.34", [("FailureTarget", "04"), ("Failed", "04")]),
    ("1.30", [("FailureTarget", "04"), ("Failed", "04")]),   # FailureTarget is the policy's from 1.26
])
def test_pod_failure_policy_fail_job(tmp_path, version, conditions):
    """The container exits 42 at 1.1 (seen at 2); the pod is Failed at 3 and synced at 4: the FailJob rule matches
    (matchPodFailurePolicy), so the Job fails at once despite backoffLimit 6, FailureTarget first with reason
    PodFailurePolicy and upstream's message, then Failed when no pod is left to count."""
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 1; exit 42"]', POLICY), version=version))
    [(_, pod)] = _creates(r)
    assert _cond_types(r) == conditions
    message = f"Container work for pod default/{pod} failed with exit code 42 matching FailJob rule at index 0"
    cond = _status(r)["conditions"][-1]
    assert (cond["reason"], cond["message"]) == ("PodFailurePolicy", message)
    assert _events(r)[-1] == (4.0, "PodFailurePolicy", message)
    assert _status(r)["failed"] == 1


def test_pod_failure_policy_is_dropped_before_its_beta(tmp_path):
    """1.25: JobPodFailurePolicy alpha and off: the API server drops the field (the user is warned), so the
    exit 42 is an ordinary failure and the Job retries: a second pod after the 10 s back-off."""
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 1; exit 42"]', POLICY), version="1.25"))
    assert len(_creates(r)) >= 2
    assert not any(c == "Failed" for c, _ in _cond_types(r))
    assert any(w.endswith("spec.objects[0].spec.podFailurePolicy: dropped by the API server: the JobPodFailurePolicy "
                          "feature gate is off by default on Kubernetes 1.25; the field has no effect")
               for w in r.scenario.warnings)


@pytest.mark.parametrize("version, replaced", [("1.34", 45.0), ("1.28", 37.0), ("1.27", 6.0)])
def test_pod_failure_policy_ignores_an_eviction(tmp_path, version, replaced):
    """backoffLimit 0 would fail the Job at its first failure; the pod is evicted at 5 s (DisruptionTarget
    EvictionByEvictionAPI, then a delete with its 30 s grace; the shell ignores SIGTERM: SIGKILL at 35, and the
    terminating sync writes Failed at once, 1.27+ setting a terminal phase before removal). The Ignore rule
    matches the DisruptionTarget condition: the failure is not counted. 1.34: with a podFailurePolicy only a
    Failed pod is replaced, and since PR #119434 (1.28) an ignored failure still backs off: the sync at 36 sees
    the pod Failed with finishedAt 35, so the replacement waits 10 s from 35 (45). 1.28 (PR #117015): the
    replacement also waits for the Failed pod, but status.terminating does not exist yet, so the sync at 36 has
    nothing to write and the back-off record is not stored (it is stored with a status write); once the pod is
    gone (finalizer removed at 36) the sync at 37 finds no failure to back off from and creates it. 1.27: the
    pod stops being active at its deletion and its replacement comes with the next sync (6)."""
    text = _scenario(_job('["sh", "-c", "sleep 600"]', POLICY.replace("backoffLimit: 6", "backoffLimit: 0")),
                     until="50s", version=version)
    r0 = run_text(tmp_path, text)
    [(_, pod)] = _creates(r0)[:1]
    evict = f"  until: 50s\n  actions:\n    - {{at: 5s, evict: pod/{pod}}}"
    r = run_text(tmp_path, text.replace("  until: 50s", evict))
    assert [(x["t"], x["to"]) for x in records(r, "phase", object=f"Pod/default/{pod}")][-1] == (35.0, "Failed")
    assert [t for t, _ in _creates(r)] == [0.0, replaced]
    assert "failed" not in _status(r) and not _cond_types(r)


@pytest.mark.parametrize("version, complete_at, deleted_at", [("1.34", 6.0, 16.0), ("1.20", 4.0, None)])
def test_ttl_seconds_after_finished(tmp_path, version, complete_at, deleted_at):
    """ttlafterfinished_controller.go: the Job finished (Complete at 6 on 1.34, with the tracking finalizers'
    two writes) is deleted 10 s after that condition's lastTransitionTime, Foreground: the garbage collector
    deletes its pod (Succeeded: at once), then the Job. On 1.20 TTLAfterFinished is alpha and off: the field
    is dropped (with a warning) and the Job stays."""
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 3"]', "        ttlSecondsAfterFinished: 10"),
                                     version=version, until="30s"))
    complete = [x["t"] for x in records(r, "condition", object="Job/default/pi", conditionType="Complete")]
    assert complete == [complete_at]
    deleted = [x["t"] for x in records(r, "deleted", object="Job/default/pi")]
    assert deleted == ([deleted_at] if deleted_at else [])
    if deleted_at:
        assert [x["by"] for x in records(r, "api", verb="delete", object="Job/default/pi")] == [
            "ttl-after-finished-controller"]
        [pod] = [x for x in records(r, "deleted") if x["object"].startswith("Pod/")]
        assert pod["t"] == deleted_at
    else:
        assert any("ttlSecondsAfterFinished: dropped" in w for w in r.scenario.warnings)


SUSPENDED = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: job}
spec:
  kubernetesVersion: "VERSION"
  until: 30s
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: pi}
      spec:
        suspend: true
        parallelism: 2
        completions: 4
        template:
          spec:
            restartPolicy: Never
            containers: [{name: work, image: busybox:1.36, command: [sleep, "600"]}]
  actions:
    - {at: 10s, patch: job/pi, mergePatch: {spec: {suspend: false}}}
    - {at: 15s, patch: job/pi, mergePatch: {spec: {suspend: true}}}
"""


def test_suspended_job(tmp_path):
    """e2e job.go "should not create pods when created in suspend state" / "should delete pods when suspended":
    created suspended, the Job has no pods, no startTime and Suspended=True (JobSuspended, event Suspended).
    Resumed at 10: Suspended=False (JobResumed, event Resumed), startTime 10, two pods at once; suspended again at
    15: both active pods are deleted and the condition is True again."""
    r = run_text(tmp_path, SUSPENDED.replace("VERSION", "1.34"))
    assert [t for t, _ in _creates(r)] == [10.0, 10.0]
    assert [(t, reason) for t, reason, _ in _events(r) if reason in ("Suspended", "Resumed", "SuccessfulDelete")] == [
        (0.0, "Suspended"), (10.0, "Resumed"), (15.0, "SuccessfulDelete"), (15.0, "SuccessfulDelete"),
        (15.0, "Suspended")]
    cond = [(x["t"], x["status"], x["reason"]) for x in records(r, "condition", object="Job/default/pi",
                                                                conditionType="Suspended")]
    assert cond == [(0.0, "True", "JobSuspended"), (10.0, "False", "JobResumed"), (15.0, "True", "JobSuspended")]
    assert _status(r)["startTime"] == "2025-01-01T00:00:10Z"


def test_suspend_is_dropped_before_its_beta(tmp_path):
    """1.21: SuspendJob alpha, off: the field is dropped (with a warning) and the Job runs at once."""
    r = run_text(tmp_path, SUSPENDED.replace("VERSION", "1.21").split("  actions:")[0])
    assert [t for t, _ in _creates(r)] == [0.0, 0.0]
    assert any("spec.suspend: dropped" in w for w in r.scenario.warnings)


@pytest.mark.parametrize("version, expected", [
    # job_delay_terminal_condition (1.31, PR #125510 delayTerminalCondition):
    # FailureTarget at the deadline (15), Failed when the pod is gone (21)
    ("1.31", [("FailureTarget", "15s", True), ("Failed", "15s", False), ("Failed", "21s", True)]),
    # 1.30: Failed at once at the deadline
    ("1.30", [("FailureTarget", "15s", False), ("Failed", "15s", True)]),
])
def test_condition_expectations_on_a_job_across_the_1_31_boundary(tmp_path, version, expected):
    """`condition` expectations on a Job, checked at exact times on both sides of the release that delays a
    Job's terminal condition; a FailureTarget never written on 1.30 and a Failed not there yet at 15 on 1.31
    fail."""
    expect = "".join(f"    - object: job/j\n      condition: {{type: {t}, status: \"True\", "
                     f"reason: DeadlineExceeded}}\n      at: {at}\n" for t, at, _ in expected)
    r = run_text(tmp_path, JOB_DEADLINE + "  expect:\n" + expect, version=version)
    assert [v.passed for v in r.verdicts] == [ok for _, _, ok in expected]


# the Kubernetes documentation's shapes (job-pod-failure-policy-example.yaml): a rule with only onExitCodes, a
# pattern without status (the API server defaults it to True); 1.25-1.28 schemas list both as required, which
# the API server does not enforce at decoding
POLICY_DOC = """
        backoffLimit: 0
        podFailurePolicy:
          rules:
          - action: FailJob
            onExitCodes: {containerName: work, operator: In, values: [42]}
          - action: Ignore
            onPodConditions: [{type: DisruptionTarget}]"""


@pytest.mark.parametrize("version", ["1.26", "1.34"])
def test_pod_failure_policy_in_the_documentation_shape(tmp_path, version):
    """Accepted and acted on: exit 42 fails the Job through the FailJob rule (at 4, as in
    test_pod_failure_policy_fail_job); an eviction is ignored by the status-less DisruptionTarget pattern, so
    backoffLimit 0 is not exceeded and the Job goes on with a replacement."""
    r = run_text(tmp_path, _scenario(_job('["sh", "-c", "sleep 1; exit 42"]', POLICY_DOC), version=version))
    [(_, pod)] = _creates(r)
    assert (_status(r)["conditions"][-1]["reason"], _status(r)["conditions"][-1]["message"]) == (
        "PodFailurePolicy", f"Container work for pod default/{pod} failed with exit code 42 matching FailJob rule "
                            "at index 0")
    job = r.cluster.store.get("Job", "default", "pi")
    assert job["spec"]["podFailurePolicy"]["rules"][1]["onPodConditions"] == [{"type": "DisruptionTarget",
                                                                               "status": "True"}]
    text = _scenario(_job('["sh", "-c", "sleep 600"]', POLICY_DOC), version=version, until="50s")
    r = run_text(tmp_path, text + f"  actions:\n    - {{at: 5s, evict: pod/{pod}}}\n")
    assert len(_creates(r)) == 2 and not _cond_types(r) and "failed" not in _status(r)

"""Indexed Jobs, backoffLimitPerIndex, successPolicy and podReplacementPolicy (pkg/controller/job), with the
shapes of upstream's e2e tests (test/e2e/apps/job.go) and the timing of podlife's model (tests/test_job.py's
docstring: a `sleep 1` container runs 0.1-1.1, is seen exited at the 2 s relist and the pod is Succeeded or
Failed at 3; pod events sync the Job 1 s later).

A pod whose index is odd fails: `spec.behaviors` makes `pi-1-*` and `pi-3-*` exit 1 after 1 s (the e2e tests'
"failOddSucceedEven" pods).
"""

from __future__ import annotations

import re

import pytest

from podlife.api.defaults import apply_defaults
from podlife.api.validation import validate
from podlife.controlplane.controllers.job import indexed
from podlife.controlplane.controllers.job.policies import match_success_policy
from podlife.kubelet.envvars import make_environment
from tests.helpers import newest_rules, records, run_text  # noqa: F401  (newest_rules: a fixture)

pytestmark = pytest.mark.usefixtures("newest_rules")

SUFFIX = r"[bcdfghjklmnpqrstvwxz2456789]{5}"
INDEX = "batch.kubernetes.io/job-completion-index"
FAILURES = "batch.kubernetes.io/job-index-failure-count"
FAIL_ODD = """  behaviors:
    - {pod: "pi-1-*", behavior: {exitAfterSeconds: 1, exitCode: 1}}
    - {pod: "pi-3-*", behavior: {exitAfterSeconds: 1, exitCode: 1}}
"""


def _scenario(spec: str, version: str = "1.34", until: str = "60s", command: str = '["sh", "-c", "sleep 1"]',
              tail: str = "") -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: job}}
spec:
  kubernetesVersion: "{version}"
  until: {until}
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {{name: pi}}
      spec:
        completionMode: Indexed
{spec}
        template:
          spec:
            restartPolicy: Never
            containers: [{{name: work, image: busybox:1.36, command: {command}}}]
{tail}"""


def _creates(r) -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb="create", by="job-controller")]


def _status(r) -> dict:
    return r.cluster.store.get("Job", "default", "pi")["status"]


def _conditions(r) -> list[tuple[str, str, str | None, str | None]]:
    return [(c["type"], c["lastTransitionTime"][-3:-1], c.get("reason"), c.get("message"))
            for c in _status(r).get("conditions") or ()]


def _indexes(created: list[tuple[float, str]]) -> list[tuple[float, int]]:
    out = []
    for t, name in created:
        m = re.fullmatch(rf"pi-(\d+)-{SUFFIX}", name)
        assert m, name
        out.append((t, int(m.group(1))))
    return out


@pytest.mark.parametrize("version, label, second, conditions", [
    ("1.34", True, 4.0, [("SuccessCriteriaMet", "08"), ("Complete", "08")]),
    # 1.27: the kubelet reports the terminal phase a relist later; Complete at once (before 1.31)
    ("1.27", False, 5.0, [("Complete", "10")]),
])
def test_indexed_job_pods_have_index_name_hostname_and_env(tmp_path, version, label, second, conditions):
    """e2e "should create pods for an Indexed job with completion indexes and specified hostname" (parallelism 2,
    completions 4): indexes 0 and 1 at 0, 2 and 3 when the first two have succeeded (sync at 4); every pod is
    `pi-<index>-xxxxx` (podGenerateNameWithIndex) with hostname `pi-<index>`, the completion index annotation
    (and, from 1.28 with PodIndexLabel, the label) and JOB_COMPLETION_INDEX from the downward API (the label
    when it exists, else the annotation). Succeeded indexes are status.completedIndexes "0-3"."""
    r = run_text(tmp_path, _scenario("        completions: 4\n        parallelism: 2", version=version))
    created = _creates(r)
    assert _indexes(created) == [(0.0, 0), (0.0, 1), (second, 2), (second, 3)]
    where = "labels" if label else "annotations"
    for (_, name), ix in zip(created, range(4)):
        pod = r.cluster.store.get("Pod", "default", name)
        assert pod["metadata"]["annotations"] == {INDEX: str(ix)}
        assert (pod["metadata"]["labels"].get(INDEX) == str(ix)) is label
        assert INDEX in pod["metadata"]["labels"] or not label
        assert pod["spec"]["hostname"] == f"pi-{ix}"
        assert pod["spec"]["containers"][0]["env"] == [
            {"name": "JOB_COMPLETION_INDEX",
             "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.{where}['{INDEX}']"}}}]
        # what the kubelet gives the container (makeEnvironmentVariables, downward API)
        env = make_environment(r.cluster.store, pod, pod["spec"]["containers"][0], [], [], {})
        # then the service links of the kubernetes Service (always given)
        assert env[0] == ("JOB_COMPLETION_INDEX", str(ix))
        assert [k for k, _v in env[1:3]] == ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"]
        assert pod["status"]["phase"] == "Succeeded"
    st = _status(r)
    assert (st["completedIndexes"], st["succeeded"], st.get("failed")) == ("0-3", 4, None)
    assert "failedIndexes" not in st   # backoffLimitPerIndex not set
    assert [c[:2] for c in _conditions(r)] == conditions


def test_indexed_is_dropped_while_its_gate_is_off(tmp_path):
    """1.21: IndexedJob alpha and off: the API server drops completionMode; the Job runs NonIndexed pods. With
    the gate on, 1.21 pods have their index (annotation, JOB_COMPLETION_INDEX) but neither the index in their
    name nor a hostname (both from 1.22, PR #101601)."""
    r = run_text(tmp_path, _scenario("        completions: 2\n        parallelism: 2", version="1.21"))
    assert all(re.fullmatch(f"pi-{SUFFIX}", n) for _, n in _creates(r))
    assert any(w.endswith("spec.objects[0].spec.completionMode: dropped: Kubernetes 1.21 does not have this field "
                          "(its feature gate is off)") for w in r.scenario.warnings)
    text = _scenario("        completions: 2\n        parallelism: 2", version="1.21").replace(
        '  kubernetesVersion: "1.21"', '  kubernetesVersion: "1.21"\n  cluster: {featureGates: {IndexedJob: true}}')
    r = run_text(tmp_path, text)
    pods = [r.cluster.store.get("Pod", "default", n) for _, n in _creates(r)]
    assert all(re.fullmatch(f"pi-{SUFFIX}", p["metadata"]["name"]) and "hostname" not in p["spec"] for p in pods)
    assert sorted(p["metadata"]["annotations"][INDEX] for p in pods) == ["0", "1"]
    assert _status(r)["completedIndexes"] == "0,1"


def test_backoff_limit_per_index_executes_all_indexes(tmp_path):
    """e2e "should execute all indexes despite some failing when using backoffLimitPerIndex" (parallelism 2,
    completions 4, backoffLimitPerIndex 1): each odd index fails twice and is then failed; the Job fails with
    FailedIndexes once every index is succeeded or failed: failedIndexes "1,3", completedIndexes "0,2", failed 4,
    succeeded 2. Each index backs off on its own (10 s from its last failure's finishedAt) while the others go
    on: index 1 fails at 1 (finishedAt), is retried at 11; index 3 is first created at 8 (index 2 done at 7),
    fails at 9 and is retried at 19, failing at 20 (Failed at 22, synced at 23). A replacement carries the
    index's failure count."""
    r = run_text(tmp_path, _scenario("        completions: 4\n        parallelism: 2\n        backoffLimitPerIndex: 1",
                                     until="60s", tail=FAIL_ODD))
    created = _creates(r)
    assert _indexes(created) == [(0.0, 0), (0.0, 1), (4.0, 2), (8.0, 3), (11.0, 1), (19.0, 3)]
    counts = [r.cluster.store.get("Pod", "default", n)["metadata"]["annotations"][FAILURES] for _, n in created]
    assert counts == ["0", "0", "0", "0", "1", "1"]
    st = _status(r)
    assert (st["failedIndexes"], st["completedIndexes"], st["failed"], st["succeeded"]) == ("1,3", "0,2", 4, 2)
    assert _conditions(r) == [("FailureTarget", "23", "FailedIndexes", "Job has failed indexes"),
                              ("Failed", "23", "FailedIndexes", "Job has failed indexes")]
    assert int(r.cluster.store.get("Job", "default", "pi")["spec"]["backoffLimit"]) == 2 ** 31 - 1


def test_max_failed_indexes_terminates_the_job(tmp_path):
    """e2e "should terminate job execution when the number of failed indexes exceeds maxFailedIndexes"
    (parallelism 1, completions 4, backoffLimitPerIndex 0, maxFailedIndexes 0, failing pods): the first failure
    fails index 0 and, one failed index being more than 0, the Job: failedIndexes "0", failed 1, one pod."""
    r = run_text(tmp_path, _scenario("        completions: 4\n        parallelism: 1\n        backoffLimitPerIndex: 0\n"
                                     "        maxFailedIndexes: 0", command='["sh", "-c", "sleep 1; exit 1"]'))
    assert _indexes(_creates(r)) == [(0.0, 0)]
    st = _status(r)
    assert (st["failedIndexes"], st["failed"], st.get("succeeded"), st.get("completedIndexes")) == ("0", 1, None, None)
    message = "Job has exceeded the specified maximal number of failed indexes"
    assert _conditions(r) == [("FailureTarget", "04", "MaxFailedIndexesExceeded", message),
                              ("Failed", "04", "MaxFailedIndexesExceeded", message)]
    assert [(e["t"], e["reason"]) for e in records(r, "event", object="Job/default/pi")][-1] == (
        4.0, "MaxFailedIndexesExceeded")


def test_fail_index_rule(tmp_path):
    """e2e "should mark indexes as failed when the FailIndex action is matched in podFailurePolicy"
    (parallelism 2, completions 2, backoffLimitPerIndex 1, FailIndex on exit code 1): index 1 fails at once,
    without its retry: failedIndexes "1", completedIndexes "0", failed 1, succeeded 1."""
    spec = """        completions: 2
        parallelism: 2
        backoffLimitPerIndex: 1
        podFailurePolicy:
          rules:
          - action: FailIndex
            onExitCodes: {operator: In, values: [1]}"""
    r = run_text(tmp_path, _scenario(spec, tail=FAIL_ODD))
    assert _indexes(_creates(r)) == [(0.0, 0), (0.0, 1)]
    st = _status(r)
    assert (st["failedIndexes"], st["completedIndexes"], st["failed"], st["succeeded"]) == ("1", "0", 1, 1)
    assert [c[0] for c in _conditions(r)] == ["FailureTarget", "Failed"]


def test_backoff_limit_per_index_is_dropped_while_its_gate_is_off(tmp_path):
    """1.28: JobBackoffLimitPerIndex alpha and off: the fields are dropped (warned), backoffLimit defaults to 6
    and failures count globally."""
    r = run_text(tmp_path, _scenario("        completions: 2\n        parallelism: 2\n        backoffLimitPerIndex: 1\n"
                                     "        maxFailedIndexes: 1", version="1.28", until="5s"))
    job = r.cluster.store.get("Job", "default", "pi")
    assert "backoffLimitPerIndex" not in job["spec"] and job["spec"]["backoffLimit"] == 6
    assert sum("dropped: Kubernetes 1.28 does not have this field" in w for w in r.scenario.warnings) == 2
    assert "failedIndexes" not in _status(r)


SUCCESS_POLICY = """        completions: 5
        parallelism: 2
        successPolicy:
          rules:
          - succeededIndexes: "2-4"
          - {RULE}"""
LONG_ODD = """  behaviors:
    - {pod: "pi-1-*", behavior: {exitAfterSeconds: 600, onTerm: exit, termSeconds: 2}}
"""


@pytest.mark.parametrize("rule, message", [('succeededIndexes: "0"', "Matched rules at index 1"),
                                           ("succeededCount: 1", "Matched rules at index 1")])
def test_success_policy_ends_the_job_early(tmp_path, rule, message):
    """e2e "with successPolicy succeededIndexes rule / succeededCount rule should succeeded even when some
    indexes remain pending": index 0 succeeds (Succeeded at 3, synced at 4) and matches the second rule:
    SuccessCriteriaMet (reason SuccessPolicy, "Matched rules at index 1") at 4, the running pod of index 1 is
    deleted, not counted as failed; Complete with the same reason and message once it is gone (it exits 2 s
    after SIGTERM, at 6, and the sync at 7 sees it gone)."""
    r = run_text(tmp_path, _scenario(SUCCESS_POLICY.replace("{RULE}", rule), tail=LONG_ODD))
    created = _creates(r)
    assert _indexes(created) == [(0.0, 0), (0.0, 1)]
    assert [(e["t"], e["reason"], e["message"]) for e in records(r, "event", object="Job/default/pi")][-2:] == [
        (4.0, "SuccessfulDelete", f"Deleted pod: {created[1][1]}"), (7.0, "Completed", "Job completed")]
    assert _conditions(r) == [("SuccessCriteriaMet", "04", "SuccessPolicy", message),
                              ("Complete", "07", "SuccessPolicy", message)]
    st = _status(r)
    assert (st["completedIndexes"], st["succeeded"], st.get("failed"), st.get("active"), st["terminating"]) == \
        ("0", 1, None, None, 0)
    assert st["completionTime"].endswith(":07Z")


def test_success_policy_is_dropped_while_its_gate_is_off(tmp_path):
    """1.30: JobSuccessPolicy alpha and off: the field is dropped (warned) and every index runs."""
    r = run_text(tmp_path, _scenario(SUCCESS_POLICY.replace("{RULE}", "succeededCount: 1"), version="1.30"))
    assert [ix for _, ix in _indexes(_creates(r))] == [0, 1, 2, 3, 4]
    assert any("spec.successPolicy: dropped" in w for w in r.scenario.warnings)
    assert _status(r)["completedIndexes"] == "0-4"


def test_intervals_as_upstream_writes_them():
    """orderedIntervals.String and parseIndexesFromString (indexed_job_utils.go)."""
    assert indexed.to_string([(0, 0), (2, 4), (6, 7)]) == "0,2-4,6,7"
    assert indexed.parse("0,2-4,6,7", 10) == [(0, 0), (2, 4), (6, 7)]
    assert indexed.parse("1,2,x,5-9", 7) == [(1, 2), (5, 6)]   # adjacent merge, corrupt part skipped, cut
    assert indexed.with_indexes([(0, 1)], [3, 2, 7]) == [(0, 3), (7, 7)]
    assert indexed.first_pending(3, 6, [(0, 0), (2, 3)]) == [1, 4, 5]
    assert indexed.generate_name("a" * 60, 12) == "a" * 54 + "-12-"


def test_success_policy_rules():
    """matchSuccessPolicy: all of succeededIndexes, or succeededCount of them, or succeededCount in all."""
    job = {"spec": {"successPolicy": {"rules": [{"succeededIndexes": "0-2", "succeededCount": 2},
                                                {"succeededCount": 3}]}}}
    assert match_success_policy(job, 5, [(0, 0)]) is None
    assert match_success_policy(job, 5, [(0, 0), (4, 4)]) is None
    assert match_success_policy(job, 5, [(1, 2)]) == "Matched rules at index 0"
    assert match_success_policy(job, 5, [(0, 0), (3, 4)]) == "Matched rules at index 1"


def _job(spec: dict) -> dict:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "w", "image": "busybox"}]}}, **spec}}
    apply_defaults(job)
    return job


def test_pod_failure_policy_shapes_of_the_documentation_are_valid():
    """A rule with only onExitCodes, and onPodConditions patterns without status (defaulted to True)."""
    job = _job({"podFailurePolicy": {"rules": [
        {"action": "FailJob", "onExitCodes": {"containerName": "w", "operator": "In", "values": [42]}},
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}})
    assert validate(job) == []
    assert job["spec"]["podFailurePolicy"]["rules"][1]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}]
    assert job["spec"]["podReplacementPolicy"] == "Failed"


def test_indexed_fields_need_the_indexed_mode():
    """validateJobSpec's wording and order (pkg/apis/batch/validation/validation.go)."""
    errs = [str(e) for e in validate(_job({"completions": 3, "backoffLimitPerIndex": 1, "maxFailedIndexes": 4,
                                           "successPolicy": {"rules": [{"succeededCount": 4}]},
                                           "podFailurePolicy": {"rules": [
                                               {"action": "FailIndex", "onExitCodes": {"operator": "In",
                                                                                       "values": [1]}}]}}))]
    assert errs == [
        "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
        "spec.maxFailedIndexes: Invalid value: 4: requires indexed completion mode",
        "spec.successPolicy: Invalid value: {'rules': [{'succeededCount': 4}]}: requires indexed completion mode"]
    errs = [str(e) for e in validate(_job({
        "completionMode": "Indexed", "completions": 2, "parallelism": 100001, "maxFailedIndexes": 3,
        "successPolicy": {"rules": [{"succeededIndexes": "0-1", "succeededCount": 3}, {"succeededIndexes": "1,0"},
                                    {}]},
        "podFailurePolicy": {"rules": [
            {"action": "FailIndex", "onExitCodes": {"containerName": "x", "operator": "In", "values": [3, 1, 3]}},
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}]}]}}))]
    assert errs == [
        "spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified",
        "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion mode is "
        "Indexed",
        "spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions",
        'spec.podFailurePolicy.rules[0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be '
        "set",
        'spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "x": must be one of the container '
        "or initContainer names in the pod template",
        "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
        "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: [3, 1, 3]: must be ordered",
        'spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: '
        '"False", "True", "Unknown"',
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number "
        "of specified completions)",
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number "
        "of indexes in the specified succeededIndexes field)",
        'spec.successPolicy.rules[1].succeededIndexes: Invalid value: "1,0": error parsing succeededIndexes: '
        "non-increasing order, previous: 1, current: 0",
        "spec.successPolicy.rules[2]: Required value: at least one of succeededCount or succeededIndexes must be "
        "specified"]
    errs = [str(e) for e in validate(_job({"podFailurePolicy": {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "podReplacementPolicy": "TerminatingOrFailed"}))]
    assert errs == ['spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed"']
    job = _job({"completionMode": "Indexed", "completions": 10})
    job["metadata"]["name"] = "a" * 62
    assert [str(e) for e in validate(job)] == [
        f'metadata.name: Invalid value: "{"a" * 62}": will not able to create pod with invalid DNS label: '
        f'{"a" * 62}-9']


@pytest.mark.parametrize("version, policy, replaced, terminating", [
    # TerminatingOrFailed (the default without a podFailurePolicy): deleted at 10, counted as failed at the
    # next sync (11) with the deletion as its failure time (deletionTimestamp 40 - grace 30): replaced at 20
    ("1.34", "", 20.0, True),
    # Failed: only once the pod is Failed (SIGKILL at 40; synced at 41), then 10 s from its finishedAt (40)
    ("1.34", "        podReplacementPolicy: Failed\n", 50.0, True),
    # 1.28: JobPodReplacementPolicy alpha and off: no status.terminating, TerminatingOrFailed behaviour
    ("1.28", "", 20.0, False),
    # 1.27: getFinishedTime falls back to the sync's own time (11) for a pod whose containers still run
    # (PR #118413 changed that in 1.28)
    ("1.27", "", 21.0, False),
])
def test_pod_replacement_policy(tmp_path, version, policy, replaced, terminating):
    """e2e "should recreate pods only after they have failed if pod replacement policy is set to Failed": a
    Job pod (`sleep 600`, PID 1 ignoring SIGTERM, 30 s grace) is deleted at 10."""
    text = f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: job}}
spec:
  kubernetesVersion: "{version}"
  until: 60s
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {{name: pi}}
      spec:
{policy}        template:
          spec:
            restartPolicy: Never
            containers: [{{name: work, image: busybox:1.36, command: ["sleep", "600"]}}]
  actions:
    - {{at: 10s, delete: pod/PLACEHOLDER}}
"""
    r0 = run_text(tmp_path, text.split("  actions:")[0].replace("60s", "1s"))
    first = _creates(r0)[0][1]
    at12 = _status(run_text(tmp_path, text.replace("PLACEHOLDER", first).replace("until: 60s", "until: 12s")))
    # the sync at 11: the deleted pod is terminating (status.terminating from 1.29) and, unless only Failed pods
    # are replaced, already counted as failed
    assert (at12.get("failed"), at12.get("active"), at12.get("terminating")) == (
        None if policy else 1, None, 1 if terminating else None)
    r = run_text(tmp_path, text.replace("PLACEHOLDER", first))
    assert [t for t, _ in _creates(r)] == [0.0, replaced]
    assert [(x["t"], x["to"]) for x in records(r, "phase", object=f"Pod/default/{first}")][-1] == (40.0, "Failed")
    st = _status(r)
    assert (st["failed"], st["active"]) == (1, 1)
    assert ("terminating" in st) is terminating
    job = r.cluster.store.get("Job", "default", "pi")
    assert job["spec"].get("podReplacementPolicy") == ({"1.34": "TerminatingOrFailed"}.get(version) if not policy
                                                       else "Failed")


def test_indexed_pods_are_addressable_through_their_subdomain(tmp_path):
    """The controller sets the hostname; the template's subdomain names a headless Service, whose EndpointSlice
    then carries each pod's hostname (endpointslice controller, podToEndpoint): pi-0.workers, pi-1.workers."""
    text = _scenario("        completions: 2\n        parallelism: 2", command='["sleep", "600"]', until="5s")
    text = text.replace("            restartPolicy: Never\n",
                        "            restartPolicy: Never\n            subdomain: workers\n")
    text = text.replace("  objects:\n", """  objects:
    - apiVersion: v1
      kind: Service
      metadata: {name: workers}
      spec:
        clusterIP: None
        selector: {batch.kubernetes.io/job-name: pi}
""")
    r = run_text(tmp_path, text)
    slices = [s for s in r.cluster.store.list("EndpointSlice") if s["metadata"]["labels"].get(
        "kubernetes.io/service-name") == "workers"]
    assert sorted(ep.get("hostname") for s in slices for ep in s.get("endpoints") or ()) == ["pi-0", "pi-1"]


def test_index_parse_errors_quote_as_go_does():
    """parseIndexInterval's %q (pkg/apis/batch/validation/validation.go): a tab is written \\t and a non-ASCII
    letter stands for itself, as Go's strconv.Quote does."""
    errs = [str(e) for e in validate(_job({"completionMode": "Indexed", "completions": 5, "successPolicy": {
        "rules": [{"succeededIndexes": "0-\t1"}, {"succeededIndexes": "1-2-é"}]}}))]
    assert [e.split(": error parsing succeededIndexes: ")[1] for e in errs] == [
        'cannot convert string to integer for index: "\\t1"',
        "the fragment \"1-2-é\" violates the requirement that an index interval can have at most two parts "
        "separated by '-'"]

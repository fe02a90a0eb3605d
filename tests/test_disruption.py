"""PodDisruptionBudgets, the Eviction API and kubectl drain built on them."""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

BASE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: drain}
spec:
  kubernetesVersion: "VERSION"
  until: 60s
  cluster:
    nodes:
    - name: node-1
    - name: node-2
      taints: [{key: maintenance, effect: NoSchedule}]
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          terminationGracePeriodSeconds: 5
          containers: [{name: app, image: nginx, command: [nginx]}]
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web}
    spec:
      BUDGET
      selector: {matchLabels: {app: web}}
EXTRA
  actions:
  - at: 10s
    patch: node/node-2
    mergePatch: {spec: {taints: null}}
  - at: 20s
    drain: node-1
DRAIN
"""


def scenario(version: str = "1.34", budget: str = "minAvailable: 2", drain: str = "    ignoreDaemonSets: true",
             extra: str = "") -> str:
    return BASE.replace("VERSION", version).replace("BUDGET", budget).replace("DRAIN", drain) \
        .replace("EXTRA", extra)


def kubectl(r) -> list[tuple[float, str]]:
    return [(x["t"], x["message"]) for x in records(r, "log", component="kubectl")]


def test_budget_status(tmp_path):
    # all three pods land on node-1 (node-2 is tainted until 10 s); Ready at 1 s: 3 healthy, 2 desired, 1 allowed
    r = run_text(tmp_path, scenario())
    cond = [(x["t"], x["status"], x["reason"]) for x in
            records(r, "condition", object="PodDisruptionBudget/default/web", conditionType="DisruptionAllowed")]
    assert cond[:2] == [(0.0, "False", "InsufficientPods"), (1.0, "True", "SufficientPods")]
    r = run_text(tmp_path, scenario().replace("  - at: 20s\n    drain: node-1\n    ignoreDaemonSets: true\n", ""))
    status = r.cluster.store.get("PodDisruptionBudget", "default", "web")["status"]
    assert {k: status[k] for k in ("expectedPods", "currentHealthy", "desiredHealthy", "disruptionsAllowed",
                                   "observedGeneration")} == {
        "expectedPods": 3, "currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1, "observedGeneration": 1}


def test_drain_evicts_within_the_budget_and_retries_every_5_seconds(tmp_path):
    # 20 s: cordon; the first eviction uses the one allowed disruption, the other two get 429 and are retried
    # 5 s later. Each evicted pod's replacement (on node-2) is Ready 1 s later, which allows the next one.
    # waitForDelete polls every second from the eviction: a pod deleted at 21 s is seen gone at 22 s.
    r = run_text(tmp_path, scenario())
    evictions = [(x["t"], x.get("error") is None) for x in records(r, "api", verb="evict")]
    assert evictions == [(20.0, True), (20.0, False), (20.0, False), (25.0, True), (25.0, False), (30.0, True)]
    out = kubectl(r)
    assert out[0] == (20.0, "node/node-1 cordoned")
    retry = [m for t, m in out if m.startswith("error when evicting")]
    assert retry[0].endswith("(will retry after 5s): Cannot evict pod as it would violate the pod's disruption "
                             "budget.")
    assert out[-1] == (32.0, "node/node-1 drained")
    assert sum(1 for _, m in out if m.endswith(" evicted")) == 3
    # eviction.go: the 429 carries the budget's DisruptionBudget cause, from the status the eviction read: the
    # first eviction's write left disruptionsAllowed 0 and currentHealthy 3 (the controller has not synced since)
    refused = [(x["t"], x["code"], x["causes"]) for x in records(r, "api", verb="evict") if "error" in x]
    cause = [{"type": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 3 "
                                                     "currently"}]
    assert refused == [(20.0, 429, cause), (20.0, 429, cause), (25.0, 429, cause)]


def test_drain_grace_period_reaches_the_evicted_pods(tmp_path):
    """--grace-period on the eviction path: the Eviction's DeleteOptions carry 3 s, which become the pods'
    deletionGracePeriodSeconds instead of their own 30 s; the kubelet's SIGTERM allows 3 s and `sleep` (PID 1,
    no handler) is killed at 23. The pods are removed at the relist after (24)."""
    text = scenario(budget="maxUnavailable: 3", drain="    ignoreDaemonSets: true\n    gracePeriodSeconds: 3")
    text = text.replace("terminationGracePeriodSeconds: 5", "terminationGracePeriodSeconds: 30") \
        .replace("command: [nginx]", 'command: [sleep, "3600"]')
    r = run_text(tmp_path, text)
    evicted = [x["object"] for x in records(r, "api", verb="evict")]
    assert len(evicted) == 3 and all(x.get("gracePeriodSeconds") == 3 for x in records(r, "api", verb="evict"))
    for pod in evicted:
        assert [(x["t"], x["gracePeriodSeconds"]) for x in records(r, "terminating", object=pod)] == [(20.0, 3)]
        assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal", object=pod)] == [
            (20.0, "SIGTERM", 3), (23.0, "SIGKILL", None)]
        assert [x["t"] for x in records(r, "deleted", object=pod)] == [24.0]


@pytest.mark.parametrize("version, condition", [("1.25", False), ("1.26", True)])
def test_evicted_pods_get_disruption_target_from_1_26(tmp_path, version, condition):
    r = run_text(tmp_path, scenario(version))
    first = records(r, "api", verb="evict")[0]["object"]
    got = [(x["t"], x["reason"]) for x in records(r, "condition", object=first, conditionType="DisruptionTarget")]
    assert got == ([(20.0, "EvictionByEvictionAPI")] if condition else [])


def test_drain_refuses_bare_pods_and_daemonset_pods_without_their_flags(tmp_path):
    extra = """  - apiVersion: v1
    kind: Pod
    metadata: {name: scratch}
    spec:
      nodeName: node-1
      containers: [{name: app, image: busybox, command: [sleep, "3600"]}]
  - apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: agent}
    spec:
      selector: {matchLabels: {app: agent}}
      template:
        metadata: {labels: {app: agent}}
        spec:
          tolerations: [{operator: Exists}]
          containers: [{name: agent, image: agent:1}]"""
    # GetPodsForDeletion's errors, one per refusal, aggregated (utilerrors: several in brackets); RunDrain then
    # names the node left pending
    r = run_text(tmp_path, scenario(extra=extra, drain=""))
    out = [m for _, m in kubectl(r)]
    assert out[1].startswith('error: unable to drain node "node-1" due to error: [cannot delete '
                             "DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/agent-")
    assert out[1].endswith(", cannot delete Pods that declare no controller (use --force to override): "
                           "default/scratch], continuing command...")
    assert out[2:] == ["There are pending nodes to be drained:", " node-1"]
    assert records(r, "api", verb="evict") == []
    # with the flags: one warning line, the warnings of the filters joined by "; " (PodDeleteList.Warnings)
    r = run_text(tmp_path, scenario(extra=extra, drain="    ignoreDaemonSets: true\n    force: true"))
    [warning] = [m for _, m in kubectl(r) if m.startswith("Warning:")]
    assert warning.startswith("Warning: ignoring DaemonSet-managed Pods: default/agent-")
    assert warning.endswith("; deleting Pods that declare no controller: default/scratch")
    assert "Pod/default/scratch" in [x["object"] for x in records(r, "api", verb="evict")]
    # the DaemonSet's pod on node-1 is left running: no eviction, no deletion
    [agent] = [p for p in r.cluster.store.list("Pod", "default") if p["metadata"]["name"].startswith("agent-")
               and p["spec"]["nodeName"] == "node-1"]
    ref = f"Pod/default/{agent['metadata']['name']}"
    assert ref not in [x["object"] for x in records(r, "api")
                       if x["verb"] in ("evict", "delete")]
    assert records(r, "terminating", object=ref) == [] and agent["status"]["phase"] == "Running"


def test_drain_timeout(tmp_path):
    # maxUnavailable 0 never allows a disruption: 429 at 20, 25, 30. evictPods sleeps 5 s between tries
    # (time.Sleep) and checks the 12 s global timeout (due at 32) at the start of each round: the round at 35
    # prints "evicting pod" again and gives up. DeleteOrEvictPods' aggregated error; the pods still to go are
    # listed, then the node.
    r = run_text(tmp_path, scenario(budget="maxUnavailable: 0", drain="    ignoreDaemonSets: true\n    timeout: 12s"))
    assert sorted({x["t"] for x in records(r, "api", verb="evict")}) == [20.0, 25.0, 30.0]
    out = kubectl(r)
    pods = sorted({m.split("/")[-1] for _, m in out if m.startswith("evicting pod ")})
    assert len(pods) == 3
    errors = ", ".join(f'error when evicting pods/"{p}" -n "default": global timeout reached: 12s' for p in pods)
    assert out[-10:] == [(35.0, f"evicting pod default/{p}") for p in pods] + [
        (35.0, f'There are pending pods in node "node-1" when an error occurred: [{errors}]')] + [
        (35.0, f"pod/{p}") for p in pods] + [
        (35.0, f'error: unable to drain node "node-1" due to error: [{errors}], continuing command...'),
        (35.0, "There are pending nodes to be drained:"), (35.0, " node-1")]


def test_drain_of_a_node_without_a_node_object(tmp_path):
    # kubectl drain GETs the node first: NotFound is printed by cmdutil.CheckErr and nothing is cordoned or
    # evicted (the run used to crash with exit 3 when the error left the simulated kubectl process)
    r = run_text(tmp_path, scenario().replace("drain: node-1", "drain: node-9"))
    assert kubectl(r) == [(20.0, 'Error from server (NotFound): nodes "node-9" not found')]
    assert records(r, "api", verb="evict") == []
    assert not r.cluster.store.get("Node", None, "node-1")["spec"].get("unschedulable")


def test_evict_action(tmp_path):
    text = scenario(budget="maxUnavailable: 0", drain="").replace(
        "  - at: 20s\n    drain: node-1\n", "  - at: 20s\n    evict: pod/web-595f98c755-8qtw2\n")
    r = run_text(tmp_path, text)
    action = records(r, "action", action="evict")
    assert action[0]["error"] == "Cannot evict pod as it would violate the pod's disruption budget."


UNHEALTHY = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: unhealthy}
spec:
  kubernetesVersion: "VERSION"
  until: 40s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: ok, labels: {app: db}}
    spec:
      containers: [{name: app, image: nginx, command: [nginx]}]
  - apiVersion: v1
    kind: Pod
    metadata:
      name: stuck
      labels: {app: db}
      annotations:
        podlife/behavior: |
          app: {readySeconds: 3600}
    spec:
      containers:
      - name: app
        image: nginx
        command: [nginx]
        readinessProbe: {exec: {command: [check]}, periodSeconds: 5}
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: db}
    spec:
      minAvailable: 2
      selector: {matchLabels: {app: db}}
      POLICY
  actions:
  - {at: 20s, evict: pod/stuck}
"""


@pytest.mark.parametrize("version, policy, evicted", [
    ("1.34", "", False),                                            # IfHealthyBudget, the default
    ("1.34", "unhealthyPodEvictionPolicy: AlwaysAllow", True),
    ("1.26", "unhealthyPodEvictionPolicy: AlwaysAllow", False),     # PDBUnhealthyPodEvictionPolicy alpha, off
])
def test_unhealthy_pod_eviction_policy(tmp_path, version, policy, evicted):
    """eviction.go: the running but never Ready pod is unhealthy. With IfHealthyBudget it may skip the budget
    only while the budget is met (currentHealthy 1 < desiredHealthy 2: no), so the budget's 0 allowed
    disruptions answer 429; AlwaysAllow evicts it whatever the budget (1.27+; on 1.26 the field is dropped)."""
    r = run_text(tmp_path, UNHEALTHY.replace("VERSION", version).replace("POLICY", policy))
    [action] = records(r, "action", action="evict")
    if evicted:
        assert "error" not in action
        assert [x["t"] for x in records(r, "terminating", object="Pod/default/stuck")] == [20.0]
    else:
        assert action["error"] == "Cannot evict pod as it would violate the pod's disruption budget."
        assert records(r, "terminating", object="Pod/default/stuck") == []


def test_drain_local_storage_needs_its_flag_and_its_warning_is_dropped(tmp_path):
    """localStorageFilter refuses a pod with an emptyDir volume without --delete-emptydir-data. With it, the pod
    passes with a warning, but the next filter (unreplicatedFilter, Okay for a pod with a controller) replaces
    the pod's status, so kubectl prints no warning: only the last filter's message is kept (filters.go)."""
    text = scenario(budget="maxUnavailable: 3", drain="    ignoreDaemonSets: true\n    deleteEmptyDirData: DATA")
    text = text.replace("          containers: [{name: app, image: nginx, command: [nginx]}]",
                        "          volumes: [{name: scratch, emptyDir: {}}]\n"
                        "          containers: [{name: app, image: nginx, command: [nginx]}]")
    r = run_text(tmp_path, text.replace("DATA", "false"))
    out = [m for _, m in kubectl(r)]
    assert out[1].startswith('error: unable to drain node "node-1" due to error: cannot delete Pods with local '
                             "storage (use --delete-emptydir-data to override): default/web-")
    r = run_text(tmp_path, text.replace("DATA", "true"))
    out = [m for _, m in kubectl(r)]
    assert not any(m.startswith("Warning:") for m in out)
    assert out[-1] == "node/node-1 drained" and sum(m.endswith(" evicted") for m in out) == 3


def test_drain_with_disable_eviction_deletes_with_the_grace_given(tmp_path):
    """--disable-eviction: deletePods sends DELETEs (no Eviction API, no budget, no DisruptionTarget) with
    --grace-period; waitForDelete then prints each pod deleted. The pods (nginx: exits 0.1 s after SIGTERM)
    are removed at the next relist, 21, which the poll of that instant does not see yet: seen gone at 22."""
    r = run_text(tmp_path, scenario(budget="maxUnavailable: 0",
                                    drain="    ignoreDaemonSets: true\n    disableEviction: true\n"
                                          "    gracePeriodSeconds: 3"))
    assert records(r, "api", verb="evict") == []
    deletes = [(x["t"], x.get("gracePeriodSeconds")) for x in records(r, "api", verb="delete", by="kubectl")]
    assert deletes == [(20.0, 3)] * 3
    assert [x["status"] for x in records(r, "condition", conditionType="DisruptionTarget")] == []
    out = kubectl(r)
    assert [x["t"] for x in records(r, "deleted") if x["object"].startswith("Pod/")][:3] == [21.0] * 3
    assert [t for t, m in out if m.endswith(" deleted")] == [22.0] * 3
    assert out[-1] == (22.0, "node/node-1 drained")


# ---- the disruption controller: disruption.go trySync, getExpectedScale, buildDisruptedPodMap, failSafe ----

BUDGETED = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: budgets}
spec:
  kubernetesVersion: "VERSION"
  startTime: "2025-01-01T00:00:00Z"
  until: UNTIL
  objects:
OBJECTS
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: db}
    spec:
      BUDGET
      selector: {matchLabels: {app: db}}
  actions: ACTIONS
"""
BARE = """  - apiVersion: v1
    kind: Pod
    metadata: {name: bare, labels: {app: db}}
    spec:
      containers: [{name: app, image: nginx, command: [nginx]}]"""
JOB = """  - apiVersion: batch/v1
    kind: Job
    metadata: {name: batch}
    spec:
      template:
        metadata: {labels: {app: db}}
        spec:
          restartPolicy: Never
          containers: [{name: app, image: busybox, command: [sleep, "3600"]}]"""
RS = """  - apiVersion: apps/v1
    kind: ReplicaSet
    metadata: {name: db}
    spec:
      replicas: 2
      selector: {matchLabels: {app: db, tier: web}}
      template:
        metadata: {labels: {app: db, tier: web}}
        spec:
          containers: [{name: app, image: nginx, command: [nginx]}]"""


def budgeted(version: str, objects: str, budget: str, actions: str = "[]", until: str = "10s") -> str:
    return BUDGETED.replace("VERSION", version).replace("OBJECTS", objects).replace("BUDGET", budget) \
        .replace("ACTIONS", actions).replace("UNTIL", until)


def budget_events(r) -> list[tuple[float, str, str, str]]:
    return [(x["t"], x["eventType"], x["reason"], x["message"]) for x in records(r, "event")
            if x["object"] == "PodDisruptionBudget/default/db"]


def allowed_condition(r) -> dict:
    return r.cluster.store.get("PodDisruptionBudget", "default", "db")["status"]["conditions"][0]


def test_budget_without_pods_says_no_matching_pods(tmp_path):
    r = run_text(tmp_path, budgeted("1.34", "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}",
                                    "minAvailable: 1"))
    # once for the budget's creation, once for the update of its own status write (events aggregate: count 2)
    assert budget_events(r) == [(0.0, "Normal", "NoPods", "No matching pods found")] * 2


UNMANAGED_EVENT = ("Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string"
                   "{app: db,},MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a "
                   "result, the status of the PDB cannot be calculated correctly, which may result in undefined "
                   'behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an '
                   "integer value.")


@pytest.mark.parametrize("version", ["1.21", "1.22", "1.26", "1.27"])
def test_unmanaged_pod_under_a_scaled_budget(tmp_path, version):
    """maxUnavailable needs the controllers' scale. Through 1.21 a pod without a controller fails the sync
    (NoControllerRef, then trySync's CalculateExpectedPodCountFailed; failSafe: DisruptionAllowed False,
    SyncFailed); 1.22 (PR #103414) leaves it out of the count, 1.27 (PR #115861) says so in an event. The
    ReplicaSet's 2 replicas (its selector leaves the bare pod alone) are the expected count; the 3 pods Ready at
    1 s all count as healthy, maxUnavailable 1: desired 1, 2 allowed."""
    r = run_text(tmp_path, budgeted(version, BARE + "\n" + RS, "maxUnavailable: 1"))
    st = r.cluster.store.get("PodDisruptionBudget", "default", "db")["status"]
    events = {(e[1], e[2], e[3]) for e in budget_events(r)}
    if version == "1.21":
        message = 'found no controller ref for pod "bare"'
        assert events == {("Warning", "NoControllerRef", message),
                          ("Warning", "CalculateExpectedPodCountFailed",
                           f"Failed to calculate the number of expected pods: {message}")}
        assert st["disruptionsAllowed"] == 0 and st["expectedPods"] == 0   # not counted; Go encodes the 0
        assert {k: allowed_condition(r)[k] for k in ("status", "reason", "message")} == {
            "status": "False", "reason": "SyncFailed", "message": message}
        return
    assert events == ({("Warning", "UnmanagedPods", UNMANAGED_EVENT)} if version == "1.27" else set())
    assert (st["expectedPods"], st["desiredHealthy"], st["currentHealthy"], st["disruptionsAllowed"]) == (2, 1, 3, 2)


@pytest.mark.parametrize("budget, fails", [("maxUnavailable: 1", True), ('minAvailable: "50%"', True),
                                           ("minAvailable: 1", False)])
def test_job_pods_under_a_budget_that_needs_a_scale(tmp_path, budget, fails):
    """getScaleController: a Job has no scale subresource, so a budget that needs the scale fails its sync;
    an integer minAvailable counts the pods found and needs none."""
    r = run_text(tmp_path, budgeted("1.34", JOB, budget))
    st = r.cluster.store.get("PodDisruptionBudget", "default", "db")["status"]
    if not fails:
        assert budget_events(r) == [] and (st["expectedPods"], st["disruptionsAllowed"]) == (1, 0)
        assert allowed_condition(r)["reason"] == "InsufficientPods"
        return
    message = "jobs.batch does not implement the scale subresource"
    assert {e[2:] for e in budget_events(r)} == {
        ("CalculateExpectedPodCountFailed", f"Failed to calculate the number of expected pods: {message}")}
    assert {k: allowed_condition(r)[k] for k in ("status", "reason", "message")} == {
        "status": "False", "reason": "SyncFailed", "message": message}
    assert st["disruptionsAllowed"] == 0


def test_disrupted_pod_entry_kept_at_120s_and_dropped_after(tmp_path):
    """buildDisruptedPodMap keeps an entry while expectedDeletion (eviction + 120 s) is not Before now, and
    countHealthyPods stops skipping it once expectedDeletion is not After now: at exactly 130 the pod counts
    again while its entry stays; the recheck queued for 130 runs just after it (podlife: 1 ms) and drops the entry
    with NotDeleted on the pod (upstream's message names the budget's namespace twice)."""
    actions = """
  - at: 10s
    patch: poddisruptionbudget/db
    subresource: status
    mergePatch: {status: {disruptedPods: {bare: "2025-01-01T00:00:10Z"}}}
  - at: 130s
    patch: pod/bare
    mergePatch: {metadata: {labels: {touched: "yes"}}}"""
    r = run_text(tmp_path, budgeted("1.34", BARE, "minAvailable: 1", actions, until="140s"))
    # its writes: 10 (currentHealthy 1 → 0, the entry kept), 130 (the pod counts again: currentHealthy 1, the
    # entry still kept, or 130.001 would have nothing to write), 130.001 (the entry dropped)
    writes = [x["t"] for x in records(r, "api", verb="update", object="PodDisruptionBudget/default/db",
                                      by="disruption-controller") if x["t"] > 5]
    assert writes == [10.0, 130.0, 130.001]
    pdb_status = [(x["t"], x["status"], x["reason"]) for x in
                  records(r, "condition", object="PodDisruptionBudget/default/db", conditionType="DisruptionAllowed")]
    assert pdb_status == [(0.0, "False", "InsufficientPods")]
    not_deleted = [(x["t"], x["object"], x["message"]) for x in records(r, "event", reason="NotDeleted")]
    assert not_deleted == [(130.001, "Pod/default/bare",
                            "Pod was expected by PDB default/default to be deleted but it wasn't")]
    assert "disruptedPods" not in r.cluster.store.get("PodDisruptionBudget", "default", "db")["status"]


@pytest.mark.parametrize("version, api, passed", [("1.21", "policy/v1", True), ("1.20", "policy/v1beta1", False)])
def test_condition_expectation_on_a_budget_from_1_21(tmp_path, version, api, passed):
    """DisruptionAllowed came with policy/v1 in 1.21 (updatePdbStatus); a 1.20 budget has no conditions, so the
    same `condition` expectation fails there. Two ReplicaSet pods Ready at 1 s, minAvailable 1: 1 allowed."""
    text = budgeted(version, RS, "minAvailable: 1").replace("policy/v1", api) + (
        "  expect:\n    - object: poddisruptionbudget/db\n"
        "      condition: {type: DisruptionAllowed, status: \"True\", reason: SufficientPods}\n      by: 5s\n")
    r = run_text(tmp_path, text)
    assert [v.passed for v in r.verdicts] == [passed]
    assert r.cluster.store.get("PodDisruptionBudget", "default", "db")["status"]["disruptionsAllowed"] == 1

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


def test_evict_action(tmp_path):
    text = scenario(budget="maxUnavailable: 0", drain="").replace(
        "  - at: 20s\n    drain: node-1\n", "  - at: 20s\n    evict: pod/web-595f98c755-49sxw\n")
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

"""The HorizontalPodAutoscaler controller on CPU utilization declared by behaviours."""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: hpa}
spec:
  kubernetesVersion: "1.34"
  until: 15m
  behaviors:
  - container: app
    behavior: {cpu: {0: 400m, 5m: 50m}}
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers:
          - {name: app, image: nginx, resources: {requests: {cpu: 200m}}}
  - apiVersion: autoscaling/v2
    kind: HorizontalPodAutoscaler
    metadata: {name: web}
    spec:
      scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
      minReplicas: 2
      maxReplicas: 10
      metrics:
      - type: Resource
        resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
"""


@pytest.mark.parametrize("version, first", [("1.34", []), ("1.37", [(0.0, "False", "DesiredWithinRange")])])
def test_scale_up_by_policy_and_down_after_the_stabilization_window(tmp_path, version, first):
    # The autoscaler is synced every 15 s from its creation (AddRateLimited); 1.37 (PR #138294) also syncs it at
    # once when created, before any metric exists. metrics-server scrapes every 15 s. At 15 s: 2 Ready pods at
    # 400m of 200m requested = 200 %, ratio 200/50 = 4 → ceil(4 x 2) = 8, limited by the default scale-up
    # policies to max(2 + 4, 2 x 2) = 6 < maxReplicas: ScalingLimited True ScaleUpLimit
    # (convertDesiredReplicasWithBehaviorRate). At 30 s: 6 pods at 200 % → 24, limit max(6 + 4, 6 x 2) = 12,
    # above maxReplicas 10: capped at 10, TooManyReplicas.
    # Each container drops to 50m 5 min after its start; from the 345 s pass all 10 are at 25 %: ratio 0.5 →
    # 5. The scale-down window keeps the highest recommendation of the last 300 s, so 5 is applied at 645 s.
    r = run_text(tmp_path, SCENARIO.replace('"1.34"', f'"{version}"'))
    events = [(e["t"], e["message"]) for e in records(r, "event", reason="SuccessfulRescale")]
    up = "cpu resource utilization (percentage of request) above target"
    assert events == [(15.0, f"New size: 6; reason: {up}"), (30.0, f"New size: 10; reason: {up}"),
                      (645.0, "New size: 5; reason: All metrics below target")]
    limited = [(x["t"], x["status"], x["reason"]) for x in
               records(r, "condition", object="HorizontalPodAutoscaler/default/web", conditionType="ScalingLimited")]
    assert limited == first + [(15.0, "True", "ScaleUpLimit"), (30.0, "True", "TooManyReplicas"),
                               (345.0, "False", "DesiredWithinRange")]
    able = [(x["t"], x["reason"]) for x in
            records(r, "condition", object="HorizontalPodAutoscaler/default/web", conditionType="AbleToScale")]
    assert (345.0, "ScaleDownStabilized") in able and (645.0, "SucceededRescale") in able
    hpa = r.cluster.store.get("HorizontalPodAutoscaler", "default", "web")
    assert hpa["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"] == 25
    assert r.cluster.store.get("Deployment", "default", "web")["spec"]["replicas"] == 5


def test_undeclared_cpu_is_an_assumption(tmp_path):
    from podlife.scenario.assumptions import assumptions
    from podlife.scenario.load import load_scenario

    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO.replace("  behaviors:\n  - container: app\n    behavior: {cpu: {0: 400m, 5m: 50m}}\n", ""))
    texts = [a["assumption"] for a in assumptions(load_scenario(str(path)))]
    assert "cpu: none declared; assumed 0 in use (an autoscaler reads it; behaviour cpu sets it)" in texts


def test_memory_and_cpu_targets_take_the_larger_proposal(tmp_path):
    # cpu at 400m of 200m = 200 % against 50 % → 8; memory at 100Mi of 200Mi = 50 % against 40 % → ratio 1.25,
    # ceil(1.25 x 2) = 3. The larger (cpu) wins, limited to 2 + 4 = 6 by the scale-up policies.
    text = SCENARIO.replace("behavior: {cpu: {0: 400m, 5m: 50m}}", "behavior: {cpu: 400m, memory: 100Mi}") \
        .replace("resources: {requests: {cpu: 200m}}", "resources: {requests: {cpu: 200m, memory: 200Mi}}") \
        .replace("        resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}",
                 "        resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n"
                 "      - type: Resource\n"
                 "        resource: {name: memory, target: {type: Utilization, averageUtilization: 40}}") \
        .replace("until: 15m", "until: 20s")
    r = run_text(tmp_path, text)
    events = [(e["t"], e["message"]) for e in records(r, "event", reason="SuccessfulRescale")]
    assert events == [(15.0, "New size: 6; reason: cpu resource utilization (percentage of request) above target")]
    metrics = r.cluster.store.get("HorizontalPodAutoscaler", "default", "web")["status"]["currentMetrics"]
    assert [(m["resource"]["name"], m["resource"]["current"]["averageUtilization"]) for m in metrics] == [
        ("cpu", 200), ("memory", 50)]

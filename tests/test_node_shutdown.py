"""Graceful node shutdown (pkg/kubelet/nodeshutdown): regular pods first, then critical ones."""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import records, run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: shutdown}
spec:
  kubernetesVersion: "VERSION"
  until: 2m
  cluster:
    kubelet: {shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: app
        annotations:
          podlife/behavior: |
            app: {onTerm: ignore}
      spec:
        containers: [{name: app, image: app:1}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: agent}
      spec:
        priorityClassName: system-node-critical
        containers: [{name: agent, image: agent:1}]
  actions:
    - at: 10s
      fault: {type: NodeShutdown, node: node-1}
"""


def test_graceful_shutdown_order_and_status(tmp_path):
    r = run_text(tmp_path, SCENARIO.replace("VERSION", "1.29"))
    # regular pods get min(30 - 10, 30) = 20 s: the app ignores SIGTERM, SIGKILL at 30; the critical group
    # then gets min(10, 30) = 10 s: the agent exits 0.1 s after SIGTERM; then the machine goes down
    # (at 30 s the regular group's budget ends as the app's stop timeout does: the two coincide)
    sig = [(x["t"], x["object"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")]
    assert sig == [(10.0, "Pod/default/app", "SIGTERM", 20), (30.0, "Pod/default/agent", "SIGTERM", 10),
                   (30.0, "Pod/default/app", "SIGKILL", None)]
    app = records(r, "phase", object="Pod/default/app")
    assert app[-1]["to"] == "Failed"
    pod = r.cluster.store.get("Pod", "default", "app")
    assert (pod["status"]["reason"], pod["status"]["message"]) == (
        "Terminated", "Pod was terminated in response to imminent node shutdown.")
    assert any(c["type"] == "DisruptionTarget" and c["reason"] == "TerminationByKubelet"
               for c in pod["status"]["conditions"])
    ready = [(x["t"], x["status"]) for x in records(r, "condition", object="Node/node-1", conditionType="Ready")]
    # ... and once the machine is off (30 s) the node lifecycle controller notices the silence: last lease
    # renewal 30 s + grace 40 s (1.29), at the next 5 s monitor tick after that: Unknown at 75 s
    assert ready == [(0.0, "True"), (10.0, "False"), (75.0, "Unknown")]
    node = r.cluster.store.get("Node", None, "node-1")
    # the kubelet's "node is shutting down" was replaced at 75 s by the controller's Unknown
    assert next(c for c in node["status"]["conditions"] if c["type"] == "Ready")["message"] == \
        "Kubelet stopped posting node status."


def test_without_the_feature_the_node_just_goes_down(tmp_path):
    # 1.20's kubelet refuses shutdownGracePeriod without the (alpha, off) GracefulNodeShutdown gate
    # (ValidateKubeletConfiguration), so the node has none and simply powers off
    text = SCENARIO.replace("VERSION", "1.20")
    with pytest.raises(ScenarioError, match="requires feature gate GracefulNodeShutdown"):
        run_text(tmp_path, text)
    shutdown_config = "    kubelet: {shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}\n"
    r = run_text(tmp_path, text.replace(shutdown_config, "    kubelet: {}\n"))
    assert records(r, "signal") == []
    assert [x["detail"] for x in records(r, "runtime", op="exit")] == ["node powered off", "node powered off"]

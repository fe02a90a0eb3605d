"""Probes end to end (pkg/kubelet/prober/worker.go): readiness gates Ready, liveness restarts.

Workers start at the pod's first sync (t=0) and tick every periodSeconds from there; a container is probed
only once the kubelet reports it running (after the PLEG relist at t=1).
"""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

BASE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: probes}
spec:
  kubernetesVersion: "1.34"
  until: 60s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: web
        annotations:
          podlife/behavior: |
            app: {readySeconds: 5, failProbesAfterSeconds: 30}
      spec:
        containers:
          - name: app
            image: nginx:1.27
            readinessProbe: {httpGet: {path: /ready, port: 8080}}
            livenessProbe: {tcpSocket: {port: 8080}, periodSeconds: 5}
"""



def test_readiness_gates_ready_and_liveness_restarts(tmp_path):
    r = run_text(tmp_path, BASE)
    # Readiness ticks at 0 (not running yet: not probed) and 10: 9.9 s after the 0.1 s start, past
    # readySeconds 5 → Ready. Liveness (period 5) fails at 5 (4.9 s < readySeconds; one failure of 3
    # changes nothing), succeeds at 10, and fails from 30.1 s on (failProbesAfterSeconds): ticks 35, 40,
    # 45; the third failure kills the container at 45 and SyncPod starts it again at once (no backoff
    # yet). The new container has no readiness result: the status the kubelet writes after the PLEG relist
    # at 46 says not ready. From 1.21 (PR #98376) each status that finds a started container not ready
    # triggers a readiness probe at once: at 1.0 (0.9 s < readySeconds: fails) and at 46 (0.8 s: fails).
    ready = records(r, "condition", object="Pod/default/web", conditionType="Ready")
    assert [(x["t"], x["status"]) for x in ready] == [(0.0, "False"), (10.0, "True"), (46.0, "False")]
    unhealthy = [(e["t"], e["message"].split(":")[0]) for e in records(r, "event", reason="Unhealthy")]
    assert unhealthy[:7] == [(1.0, "Readiness probe failed"), (5.0, "Liveness probe failed"),
                             (35.0, "Liveness probe failed"), (40.0, "Readiness probe failed"),
                             (40.0, "Liveness probe failed"), (45.0, "Liveness probe failed"),
                             (46.0, "Readiness probe failed")]
    first = [e for e in records(r, "event", reason="Unhealthy") if e["t"] == 5.0][0]["message"]
    assert first == "Liveness probe failed: dial tcp 10.244.1.2:8080: connect: connection refused"
    killing = [(e["t"], e["message"]) for e in records(r, "event", reason="Killing")]
    assert killing == [(45.0, "Container app failed liveness probe, will be restarted")]
    sig = records(r, "signal")
    assert [(s["t"], s["signal"], s.get("timeoutSeconds")) for s in sig] == [(45.0, "SIGTERM", 30)]
    starts = [x["t"] for x in records(r, "runtime", op="start", container="app")]
    assert starts == [0.1, 45.2]
    restarts = [(x["t"], x["restartCount"]) for x in records(r, "container", object="Pod/default/web")]
    assert restarts[-1] == (46.0, 1)


def test_probe_free_pod_costs_no_ticks(tmp_path):
    text = BASE.replace("app: {readySeconds: 5, failProbesAfterSeconds: 30}", "app: {readySeconds: 5}")
    r = run_text(tmp_path, text.replace("until: 60s", "until: 1h"))
    # once ready and live, nothing is probed again: the Ready write at 10 s is the last thing that happens
    # in the hour (the kubelet's own status write is a RECONCILE for it, not a sync)
    assert max(x["t"] for x in r.cluster.trace.records) == 10.0


STARTUP = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: startup}
spec:
  kubernetesVersion: "1.34"
  until: 2m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: slow
        annotations:
          podlife/behavior: |
            app: {readySeconds: 25}
      spec:
        containers:
          - name: app
            image: app:1
            startupProbe: {exec: {command: [check]}, periodSeconds: 5, failureThreshold: 10}
            livenessProbe: {exec: {command: [check]}, periodSeconds: 5, terminationGracePeriodSeconds: 7}
"""


def test_startup_probe_holds_liveness_and_readiness(tmp_path):
    r = run_text(tmp_path, STARTUP)
    # the startup probe (period 5) fails at 5..25 (elapsed < 25 s since the 0.1 s start) and succeeds at 30;
    # liveness waits for it, so no liveness failure is ever reported; the container counts as started (and,
    # with no readiness probe, ready) from 30 s
    kinds = {e["message"].split(" ")[0] for e in records(r, "event", reason="Unhealthy")}
    assert kinds == {"Startup"}
    assert [e["t"] for e in records(r, "event", reason="Unhealthy")] == [5.0, 10.0, 15.0, 20.0, 25.0]
    ready = [(x["t"], x["status"]) for x in records(r, "condition", object="Pod/default/slow", conditionType="Ready")]
    assert ready == [(0.0, "False"), (30.0, "True")]


def test_liveness_uses_probe_grace_and_stops_on_delete(tmp_path):
    text = STARTUP.replace("app: {readySeconds: 25}", "app: {failProbesAfterSeconds: 20, onTerm: ignore}").replace(
        "            startupProbe: {exec: {command: [check]}, periodSeconds: 5, failureThreshold: 10}\n", "")
    r = run_text(tmp_path, text)
    # liveness fails at 25, 30, 35 (elapsed >= 20 s): the kill at 35 uses the probe's own
    # terminationGracePeriodSeconds (7), so SIGKILL at 42
    sig = [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")][:2]
    assert sig == [(35.0, "SIGTERM", 7), (42.0, "SIGKILL", None)]
    deleting = text.replace("  until: 2m", "  until: 2m\n  actions:\n    - {at: 22s, delete: pod/slow}")
    r = run_text(tmp_path, deleting)
    # deleted at 22, before the first failing tick (25): liveness stops probing a terminating pod, so there
    # is no failure at all and the only kill is the deletion's (grace 30)
    assert records(r, "event", reason="Unhealthy") == []
    assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")][:1] == [(22.0, "SIGTERM", 30)]


@pytest.mark.parametrize("version, grace", [("1.24", 30), ("1.25", 7)])
def test_probe_grace_needs_its_feature_gate(tmp_path, version, grace):
    """ProbeTerminationGracePeriod defaults to true only from 1.25 (pkg/features/kube_features.go); before, the
    API server drops the probe's field and the liveness kill at 35 uses the pod's 30 s."""
    text = STARTUP.replace("app: {readySeconds: 25}", "app: {failProbesAfterSeconds: 20, onTerm: ignore}").replace(
        "            startupProbe: {exec: {command: [check]}, periodSeconds: 5, failureThreshold: 10}\n", "")
    r = run_text(tmp_path, text, version=version)
    sig = [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")][:2]
    assert sig == [(35.0, "SIGTERM", grace), (35.0 + grace, "SIGKILL", None)]

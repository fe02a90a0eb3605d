"""Native sidecars (restartable init containers): start order, and the 1.29+ termination order.

The seed-000 pod written with a native sidecar: grace 5 s, both containers with a 3 s preStop, the app
ignoring SIGTERM, the sidecar needing 10 s to exit after SIGTERM. Under 1.29+ (kuberuntime_termination_order.go,
PR #120620) both preStops start at the DELETE; the app's grace is 5 - 3 = 2, so SIGKILL at +5; the sidecar
waits for the app (bounded by its remaining 2 s), then gets its 2 s minimum: SIGKILL at +7. The whole pod
stops in 7 s, against 21.6 s on the seed's kubelet.
"""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import records, run_text

POD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: native-sidecar}
spec:
  kubernetesVersion: "1.29"
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: db-0
        annotations:
          podlife/behavior: |
            app: {onTerm: ignore}
            agent: {termSeconds: 10.06}
      spec:
        terminationGracePeriodSeconds: 5
        initContainers:
          - name: init
            image: busybox:1.36
            command: ["sh", "-c", "sleep 2"]
          - name: agent
            image: agent:1
            restartPolicy: Always
            lifecycle: {preStop: {exec: {command: ["sh", "-c", "sleep 3"]}}}
        containers:
          - name: app
            image: app:1
            lifecycle: {preStop: {exec: {command: ["sh", "-c", "sleep 3"]}}}
  actions:
    - at: 20s
      delete: pod/db-0
"""


def test_start_order(tmp_path):
    r = run_text(tmp_path, POD)
    starts = [(x["t"], x["container"]) for x in records(r, "runtime", op="start")]
    # init: started 0.1 (0.1 s start), exits at 2.1, PLEG relist at 3 → next sync starts the sidecar (3.1);
    # the next sync waits for a relist after that one ended (4.0) and sees the sidecar started → app 4.1
    assert starts == [(0.1, "init"), (3.1, "agent"), (4.1, "app")]


def test_termination_order_1_29(tmp_path):
    r = run_text(tmp_path, POD)
    sig = [(x["t"], x["container"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")]
    # at 25.0 the sidecar's wait (bounded by its 2 s) and the app's SIGKILL coincide; either way the
    # sidecar has waited 2 s and gets the 2 s minimum
    assert sig == [(23.0, "app", "SIGTERM", 2), (25.0, "agent", "SIGTERM", 2),
                   (25.0, "app", "SIGKILL", None), (27.0, "agent", "SIGKILL", None)]
    hooks = [(x["t"], x["container"], x["phase"]) for x in records(r, "hook", hook="preStop")]
    assert sorted(hooks) == [(20.0, "agent", "started"), (20.0, "app", "started"),
                             (23.0, "agent", "completed"), (23.0, "app", "completed")]
    # everything has stopped 7 s after the DELETE; the pod worker's last sync waits for the next PLEG
    # relist (28.0), then the pod, Failed because the app was SIGKILLed, is removed
    assert [(x["t"], x["to"]) for x in records(r, "phase")][-1] == (27.0, "Failed")
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/db-0")] == [28.0]


def test_no_termination_order_in_1_28(tmp_path):
    # 1.28 with SidecarContainers on (alpha, off by default): restartable init containers exist but are killed in
    # parallel with the app: both preStops 20-23, then SIGTERM with the 2 s left, SIGKILL at 25
    r = run_text(tmp_path, POD.replace('"1.29"', '"1.28"\n  cluster: {featureGates: {SidecarContainers: true}}'))
    sig = [(x["t"], x["container"], x["signal"]) for x in records(r, "signal")]
    assert sig == [(23.0, "agent", "SIGTERM"), (23.0, "app", "SIGTERM"),
                   (25.0, "agent", "SIGKILL"), (25.0, "app", "SIGKILL")]


def test_1_28_refuses_this_pod_with_default_gates(tmp_path):
    # with the gate off the API server drops the agent's restartPolicy (dropDisabledFields), and validation then
    # refuses its lifecycle hook, which only a restartable init container may have (validateInitContainers)
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, POD.replace('"1.29"', '"1.28"'))
    assert str(e.value).endswith('spec.objects[0]: Pod "db-0" is invalid: spec.initContainers[1].lifecycle: '
                                 "Forbidden: may not be set for init containers without restartPolicy=Always")


JOB = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: job-sidecar}
spec:
  kubernetesVersion: "1.29"
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: job}
      spec:
        restartPolicy: Never
        initContainers:
          - {name: proxy, image: proxy:1, restartPolicy: Always}
        containers:
          - {name: work, image: busybox:1.36, command: ["sh", "-c", "sleep 5"]}
"""


def test_job_style_pod_stops_its_sidecar(tmp_path):
    # proxy starts 0.1, relist 1.0 → work starts 1.1, exits 0 at 6.1; relist 7.0: the regular containers are
    # done and will not restart, so the pod is Succeeded (getPhase ignores sidecars); the terminating sync
    # waits for the next relist (8.0, the "~1 s on every transition" of pod_workers.go) and stops the sidecar
    # (exits 0.1 s after SIGTERM). The API sees Succeeded only then, at 8.1: the status manager's mergePodStatus
    # holds a terminal phase back while the pod could still have running containers (1.22+)
    r = run_text(tmp_path, JOB)
    assert [(x["t"], x["container"]) for x in records(r, "runtime", op="start")] == [(0.1, "proxy"), (1.1, "work")]
    assert [(x["t"], x["container"], x["signal"]) for x in records(r, "signal")] == [(8.0, "proxy", "SIGTERM")]
    assert [(x["t"], x["to"]) for x in records(r, "phase")] == [(0.0, "Pending"), (2.0, "Running"),
                                                                (8.1, "Succeeded")]

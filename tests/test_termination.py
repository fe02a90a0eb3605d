"""Graceful pod termination end to end, per Kubernetes version, with exact times.

One pod, grace 30 s, preStop `sleep 2`, an app that exits 0.5 s after SIGTERM, deleted at t=10 s. The
expected numbers follow killContainer (pkg/kubelet/kuberuntime/kuberuntime_container.go) per version:
- 1.28+ (PR #115835): override (= effective grace 30) first, preStop takes 2 s → SIGTERM window 30 - 2 = 28.
- 1.22-1.27: preStop first (30 - 2 = 28), then the override puts the full 30 back (issue #117373).
- 1.18 (the seed-000 kubelet): no override; 30 - 2 = 28.
"""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import logs, records, run_text, times

POD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: term}
spec:
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: web
        annotations:
          podlife/behavior: |
            app: {startSeconds: 1, termSeconds: 0.5}
      spec:
        containers:
          - name: app
            image: nginx:1.27
            lifecycle:
              preStop: {exec: {command: ["sleep", "2"]}}
  actions:
    - at: 10s
      delete: pod/web
"""


@pytest.mark.parametrize("version,window", [("1.34", 28), ("1.28", 28), ("1.27", 30), ("1.22", 30), ("1.18", 28)])
def test_sigterm_window_per_version(tmp_path, version, window):
    r = run_text(tmp_path, POD, version=version)
    assert [(h["t"], h["phase"]) for h in records(r, "hook")] == [(10.0, "started"), (12.0, "completed")]
    sig = records(r, "signal")
    assert [(s["t"], s["signal"], s.get("timeoutSeconds")) for s in sig] == [(12.0, "SIGTERM", window)]
    assert times(r, "runtime", op="exit") == [12.5]


@pytest.mark.parametrize("version,phase", [("1.34", "Succeeded"), ("1.27", "Succeeded"), ("1.26", "Running")])
def test_terminal_phase_before_removal(tmp_path, version, phase):
    # 1.27+ (PR #115331): a deleted pod reaches a terminal phase before its removal; the app exited 0.
    # The containers are gone at 12.5; SyncTerminatedPod waits for the next PLEG relist (13.0), then the
    # status manager deletes the pod.
    r = run_text(tmp_path, POD, version=version)
    last = records(r, "phase", object="Pod/default/web")[-1]
    assert last["to"] == phase
    assert times(r, "deleted", object="Pod/default/web") == [13.0]


def test_start_path_records(tmp_path):
    r = run_text(tmp_path, POD, version="1.34")
    ref = "Pod/default/web"
    assert [(x["t"], x["verb"], x["by"]) for x in records(r, "api", object=ref)][:2] == [
        (0.0, "create", "kubectl"), (0.0, "bind", "default-scheduler")]
    # the container starts 1 s after creation (startSeconds), the PLEG relist sees it at the next second
    assert times(r, "runtime", op="start", object=ref) == [1.0]
    reasons = [(e["t"], e["reason"], e["message"]) for e in records(r, "event", object=ref)]
    assert reasons[:5] == [
        (0.0, "Scheduled", "Successfully assigned default/web to node-1"),
        (0.0, "Pulled", 'Container image "nginx:1.27" already present on machine'),
        (0.0, "Created", "Created container: app"),
        (1.0, "Started", "Started container app"),
        (10.0, "Killing", "Stopping container app"),
    ]
    # pleg/generic.go getContainersFromPods relists sandboxes as containers: the sandbox made at 0 is a
    # ContainerStarted event at the 1 s relist, the app container (started at 1) one at 2
    pleg = logs(r, "SyncLoop (PLEG)")
    sandbox = next(x["detail"].split()[1] for x in records(r, "runtime", op="create", object=ref)
                   if x["detail"].startswith("sandbox "))
    assert [t for t, _ in pleg[:2]] == [1.0, 2.0]
    assert f'Data:"{sandbox}' in pleg[0][1] and all('Type:"ContainerStarted"' in m for _, m in pleg[:2])


def test_pod_ip_from_node_cidr(tmp_path):
    r = run_text(tmp_path, POD, version="1.34")
    create = records(r, "runtime", op="create", container=None)[0]
    assert create["detail"].endswith("ip 10.244.1.2")  # host-local: .1 is the gateway


def test_force_delete_grace_per_version(tmp_path):
    text = POD.replace("      delete: pod/web", "      delete: pod/web\n      force: true")
    # 1.31+ (PR #124063): an explicit 0 is 1 s: the preStop gets 1 s, then the 2 s minimum
    r = run_text(tmp_path, text, version="1.34")
    assert [(h["t"], h["phase"]) for h in records(r, "hook")] == [(10.0, "started"), (11.0, "timedOut")]
    assert [(s["t"], s.get("timeoutSeconds")) for s in records(r, "signal")] == [(11.0, 2)]
    # the API object went at once
    assert times(r, "deleted", object="Pod/default/web") == [10.0]
    # 1.22-1.30 (issue #115819): the pod worker turns the explicit 0 into the spec grace (30) and passes
    # it as override; killContainer reads grace 0 from the pod, so it skips the preStop hook, and (1.22-
    # 1.27) applies the override afterwards: SIGTERM at once with 30 s
    r = run_text(tmp_path, text, version="1.25")
    assert records(r, "hook") == []
    assert [(s["t"], s.get("timeoutSeconds")) for s in records(r, "signal")] == [(10.0, 30)]


def test_shorter_grace_restarts_termination(tmp_path):
    text = POD.replace('app: {startSeconds: 1, termSeconds: 0.5}', 'app: {startSeconds: 1, onTerm: ignore}') + """
    - at: 20s
      delete: pod/web
      gracePeriodSeconds: 5
"""
    r = run_text(tmp_path, text, version="1.34")
    # the first termination: SIGTERM at 12 with 28 s; at 20 a 5 s grace cancels it and kills again
    assert [(s["t"], s["signal"], s.get("timeoutSeconds")) for s in records(r, "signal")][:1] == [
        (12.0, "SIGTERM", 28)]
    assert logs(r, "Cancelling current pod sync")[0][0] == 20.0
    term = records(r, "terminating")
    assert [(x["t"], x["gracePeriodSeconds"]) for x in term] == [(10.0, 30), (20.0, 5)]
    assert term[1]["deletionTimestamp"] == "2025-01-01T00:00:15Z"  # 10 - 30 + 5 + 30 → old - 30 + 5


@pytest.mark.parametrize("where", ["kubelet: {featureGates: {EventedPLEG: true}}",
                                   "featureGates: {EventedPLEG: true}",
                                   "featureGates: {EventedPLEG: false}, kubelet: {featureGates: {EventedPLEG: true}}"])
def test_evented_pleg_reports_at_once(tmp_path, where):
    # with the EventedPLEG gate (1.26+) the container-started event reaches the kubelet at once: Running at
    # 1.0 (the start) instead of the next relist (2.0); the deleted pod goes at 12.5, not at the relist (13).
    # The kubelet's own featureGates or every component's (spec.cluster.featureGates) turn it on; the kubelet's
    # win over the cluster's
    text = POD.replace("spec:\n  objects:", f"spec:\n  cluster: {{{where}}}\n  objects:")
    r = run_text(tmp_path, text, version="1.30")
    assert [(x["t"], x["to"]) for x in records(r, "phase")][:2] == [(0.0, "Pending"), (1.0, "Running")]
    assert times(r, "deleted", object="Pod/default/web") == [12.5]
    # before 1.26 the gate does not exist: the kubelet refuses to start (featuregate SetFromMap: unrecognized
    # feature gate), so the scenario is invalid
    with pytest.raises(ScenarioError, match="unrecognized feature gate: EventedPLEG"):
        run_text(tmp_path, text, version="1.25")


def test_evented_pleg_off_on_the_kubelet_keeps_the_relist(tmp_path):
    # the cluster's gate on, the kubelet's off: the generic PLEG's relist (every second) sees the start at 2.0
    text = POD.replace("spec:\n  objects:", "spec:\n  cluster: {featureGates: {EventedPLEG: true}, kubelet: "
                                            "{featureGates: {EventedPLEG: false}}}\n  objects:")
    r = run_text(tmp_path, text, version="1.30")
    assert [(x["t"], x["to"]) for x in records(r, "phase")][:2] == [(0.0, "Pending"), (2.0, "Running")]
    assert times(r, "deleted", object="Pod/default/web") == [13.0]

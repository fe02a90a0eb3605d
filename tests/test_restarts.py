"""Restarts and CrashLoopBackOff (kuberuntime_manager.go doBackOff, client-go flowcontrol.Backoff).

The container fails at once. The first restart is immediate; after that each restart waits for the
backoff (10 s, doubling to 300 s, from the previous attempt's finish) and for the pod worker's retry of the
failed sync, which comes every 10-15 s (wait.Jitter(10 s, 0.5)). So the gap between attempt n and n+1 is
at least the backoff and at most backoff + 15 s + 1 s of PLEG latency.
"""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

POD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: crash}
spec:
  kubernetesVersion: "1.34"
  until: 10m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: crash}
      spec:
        restartPolicy: RESTART
        containers:
          - {name: app, image: busybox:1.36, command: ["sh", "-c", "exit 1"]}
"""



@pytest.mark.parametrize("version", ["1.33", "1.34"])
def test_crash_loop_backoff(tmp_path, version):
    r = run_text(tmp_path, POD.replace("RESTART", "Always").replace('"1.34"', f'"{version}"'))
    starts = [x["t"] for x in records(r, "runtime", op="start", container="app")]
    assert starts[:2] == [0.1, 1.1]  # exit at 0.1, relist at 1.0, restarted at once
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    for backoff, gap in zip([10, 20, 40, 80, 160], gaps[1:]):
        if version == "1.33":
            # the failed sync is retried every 10-15 s (pod worker backOffPeriod, jitter 0.5): the restart
            # comes at most 15 s after the back-off expires (+1 s for the relist that saw the exit)
            assert backoff <= gap <= backoff + 16, (backoff, gap)
        else:
            # PR #133066: the retry waits for the back-off's expiry, jittered by up to half of what is left
            assert backoff <= gap <= backoff * 1.5 + 1, (backoff, gap)
    waiting = [x for x in records(r, "container", object="Pod/default/crash") if x["reason"] == "CrashLoopBackOff"]
    # the sync at 2.0 hits the backoff; SyncPod generates status before acting (reasonCache from the previous
    # sync), so the reason reaches the API at the next sync: the failed sync's retry, 10-15 s later
    assert 12.0 <= waiting[0]["t"] <= 17.0 and waiting[0]["restartCount"] == 1
    events = records(r, "event", reason="BackOff")
    assert events[0]["message"] == "Back-off restarting failed container app in pod crash_default(" + \
        r.cluster.store.get("Pod", "default", "crash")["metadata"]["uid"] + ")"
    if version == "1.33":   # at 10 m the container waits out the 5 m maximum
        status = r.cluster.store.get("Pod", "default", "crash")["status"]
        msg = status["containerStatuses"][0]["state"]["waiting"]["message"]
        assert msg.startswith("back-off 5m0s restarting failed container=app pod=crash_default(")


@pytest.mark.parametrize("policy,phase,attempts", [("Never", "Failed", 1), ("OnFailure", "Running", None)])
def test_restart_policy(tmp_path, policy, phase, attempts):
    r = run_text(tmp_path, POD.replace("RESTART", policy))
    starts = records(r, "runtime", op="start", container="app")
    if attempts is not None:
        assert len(starts) == attempts
    else:
        assert len(starts) > 3  # OnFailure restarts a failed container
    assert records(r, "phase", object="Pod/default/crash")[-1]["to"] == phase


def test_failed_post_start_hook_kills_and_restarts(tmp_path):
    text = POD.replace("RESTART", "Always").replace(
        'command: ["sh", "-c", "exit 1"]}',
        'lifecycle: {postStart: {exec: {command: ["sh", "-c", "sleep 1; exit 1"]}}}}')
    r = run_text(tmp_path, text)
    # started at 0.1; the hook fails at 1.1; the kubelet kills the container (it exits 0.1 s after SIGTERM)
    hooks = [(x["t"], x["phase"]) for x in records(r, "hook", hook="postStart")]
    assert hooks[:2] == [(0.1, "started"), (1.1, "failed")]
    assert [(e["t"], e["message"]) for e in records(r, "event", reason="FailedPostStartHook")][:1] == [
        (1.1, "PostStartHook failed")]
    assert [(x["t"], x["signal"]) for x in records(r, "signal")][:1] == [(1.1, "SIGTERM")]
    starts = [x["t"] for x in records(r, "runtime", op="start", container="app")]
    assert starts[0] == 0.1 and len(starts) > 2  # and it is started again, under the restart backoff


LIVENESS = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: live}
spec:
  kubernetesVersion: "1.34"
  until: 70s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: web
      annotations:
        podlife/behavior: |
          app: {failProbesAfterSeconds: 5}
    spec:
      containers:
      - name: app
        image: nginx
        command: [nginx]
        livenessProbe: {exec: {command: [check]}, periodSeconds: 10, failureThreshold: 1}
"""


def test_liveness_kill_back_off_follows_do_back_off(tmp_path):
    # kuberuntime_manager.go: SyncPod kills the unhealthy container and starts it again in the same sync, and
    # doBackOff reads the pod status that sync started from, in which the killed instance still runs; the
    # back-off is keyed on the finish time of the newest instance that had exited before (Backoff.Next sets
    # lastUpdate to the clock's now). Probes run every 10 s; nginx exits 0.1 s after SIGTERM; a start takes
    # 0.1 s; probes fail from 5 s after each start.
    #  10: no dead instance yet → no check, no entry: started again at 10.2
    #  20: dead instance finished 10.1, no entry → Next (10 s, lastUpdate 20.1): started at 20.2
    #  30: dead instance finished 20.1: 30.1 - 20.1 = 10 s is not < 10 s → Next (20 s, lastUpdate 30.1): 30.2
    #  40: dead instance finished 30.1: 10 s < 20 s → BackOff (40.1); the relist at 41 sees the instance killed
    #      at 40 (finished 40.1): BackOff again, expiry 40.1 + 20 = 60.1; from 1.34 (PR #133066) the pod worker
    #      retries at the expiry jittered by up to half of the 19.1 s left, + 0.1 s start
    r = run_text(tmp_path, LIVENESS)
    ev = [(e["t"], e["reason"]) for e in records(r, "event")
          if e["reason"] in ("Killing", "Started", "BackOff")]
    assert ev[:10] == [(0.1, "Started"), (10.0, "Killing"), (10.2, "Started"), (20.0, "Killing"),
                       (20.2, "Started"), (30.0, "Killing"), (30.2, "Started"), (40.0, "Killing"),
                       (40.1, "BackOff"), (41.0, "BackOff")]
    assert ev[10][1] == "Started" and 60.2 <= ev[10][0] <= 60.1 + 19.1 * 0.5 + 0.1


RULES = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: rules}
spec:
  kubernetesVersion: "VERSION"
  until: 30s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: train
      annotations:
        podlife/behavior: |
          trainer: {exitAfterSeconds: 5, exitCode: 42}
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: trainer:1
        restartPolicy: Never          # rules need the container's own policy, even when it matches the pod's
        restartPolicyRules:
        - action: Restart
          exitCodes: {operator: In, values: [42]}
"""


@pytest.mark.parametrize("version, restarted, phase", [("1.34", False, "Failed"), ("1.35", True, "Running")])
def test_container_restart_rules_from_1_35(tmp_path, version, restarted, phase):
    # KEP-5307: exit code 42 matches the Restart rule, so the container starts again although the pod's
    # restartPolicy is Never: the exit (5.1 s) is seen at the next relist (6 s) and, with no back-off entry yet,
    # the container starts at once (6.1 s). On 1.34 the gate is off and the API server drops the rules.
    r = run_text(tmp_path, RULES.replace("VERSION", version))
    starts = [x["t"] for x in records(r, "event", reason="Started", object="Pod/default/train")]
    assert starts[:2] == ([0.1, 6.1] if restarted else [0.1])
    assert [x["to"] for x in records(r, "phase", object="Pod/default/train")][-1] == phase

"""Scenarios of upstream's e2e tests, with the exact times podlife derives for them.

Each test names the upstream e2e case it follows (test/e2e/common/node/lifecycle_hook.go, container_probe.go,
init_container.go) and checks the outcome that case asserts, then the precise timeline podlife computes; the
derivation is in the docstring. Upstream only bounds the times (a real node is not exact); podlife's are
exact on its virtual clock: relists on whole seconds, a container starts 0.1 s after its sync, a probe worker
ticks every periodSeconds from the pod's first sync.
"""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

SLEEP_HOOK = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: sleep-hook}
spec:
  until: 3m
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: pod-with-prestop-sleep-hook}
    spec:
      terminationGracePeriodSeconds: 100
      RESTART
      containers:
      - name: pod-with-prestop-sleep-hook
        image: IMAGE
        lifecycle: {preStop: {sleep: {seconds: SLEEP}}}
  actions:
  - {at: 10s, delete: pod/pod-with-prestop-sleep-hook DELETE}
"""


def _sleep_hook(sleep: int = 50, delete: str = "", image: str = "registry.k8s.io/pause:3.10",
                restart: str = "") -> str:
    return (SLEEP_HOOK.replace("SLEEP", str(sleep)).replace(" DELETE", delete).replace("IMAGE", image)
            .replace("      RESTART\n", restart))


def _finished(r, container: str) -> list[float]:
    return [x["t"] for x in records(r, "runtime", op="exit", container=container)]


@pytest.mark.parametrize("delete, hook_end, phase, sigterm_timeout", [
    # "valid prestop hook using sleep action": grace 100, sleep 50: the hook completes at 10 + 50 = 60 and
    # SIGTERM follows with the 50 s left; pause exits at once (0.1 s): the sleep lasted 50 s, within [50, 100]
    ("", 60.0, "completed", 50),
    # "reduce GracePeriodSeconds during runtime": a DELETE with grace 30 cuts the 50 s sleep at 40; nothing is
    # left, so killContainer's 2 s minimum window: the container ends 30 s after the DELETE, within [30, 50]
    (", gracePeriodSeconds: 30", 40.0, "timedOut", 2),
])
def test_lifecycle_sleep_hook(tmp_path, delete, hook_end, phase, sigterm_timeout):
    r = run_text(tmp_path, _sleep_hook(delete=delete))
    name = "pod-with-prestop-sleep-hook"
    assert [(x["t"], x["phase"]) for x in records(r, "hook", container=name)] == [(10.0, "started"),
                                                                                  (hook_end, phase)]
    assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")] == [
        (hook_end, "SIGTERM", sigterm_timeout)]
    assert _finished(r, name) == [round(hook_end + 0.1, 3)]


def test_lifecycle_sleep_hook_ignores_a_terminated_container(tmp_path):
    """"ignore terminated container": the container (sh -c "sleep 3", restartPolicy Never) ends by itself
    before anyone deletes the pod; preStop hooks run only when the kubelet kills a running container, so the
    10 s sleep never runs: started 0.1, finished 3.1."""
    text = _sleep_hook(sleep=10, image="busybox", restart="      restartPolicy: Never\n").replace(
        "        lifecycle:", '        command: [/bin/sh, -c, "sleep 3"]\n        lifecycle:').replace(
        "  - {at: 10s, delete: pod/pod-with-prestop-sleep-hook}\n", "  - {at: 10s, cordon: node-1}\n")
    r = run_text(tmp_path, text)
    assert _finished(r, "pod-with-prestop-sleep-hook") == [3.1]
    assert records(r, "hook") == [] and records(r, "signal") == []
    [status] = r.cluster.store.get("Pod", "default", "pod-with-prestop-sleep-hook")["status"]["containerStatuses"]
    assert status["state"]["terminated"]["exitCode"] == 0


def test_lifecycle_sleep_hook_of_zero_seconds(tmp_path):
    """"prestop hook using sleep action with zero duration" (1.33+, PodLifecycleSleepActionAllowZero): the hook
    returns at once, SIGTERM with the whole 100 s grace, the pod is gone at the next relist (11)."""
    r = run_text(tmp_path, _sleep_hook(sleep=0))
    assert [(x["t"], x["phase"]) for x in records(r, "hook")] == [(10.0, "started"), (10.0, "completed")]
    assert [(x["t"], x.get("timeoutSeconds")) for x in records(r, "signal")] == [(10.0, 100)]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/pod-with-prestop-sleep-hook")] == [11.0]


PROBED = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: probes}
spec:
  until: 4m
  objects:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: liveness-exec
      annotations:
        podlife/behavior: |
          busybox: {failProbesAfterSeconds: FAIL}
    spec:
      containers:
      - name: busybox
        image: busybox
        command: [/bin/sh, -c, "CMD"]
PROBES
"""


def _starts(r) -> list[float]:
    return [x["t"] for x in records(r, "runtime", op="start", container="busybox")]


def test_liveness_exec_probe_restarts_the_container(tmp_path):
    """'should be restarted with a exec "cat /tmp/health" liveness probe' (restart count 1): the file is removed
    10 s after the start (0.1), so probes fail from 10.1. initialDelaySeconds 15, period 10 from the first sync
    (0): the probe at 10 is skipped (9.9 s < 15), the one at 20 fails, failureThreshold 1: killed at 20 with
    the pod's 30 s grace; /bin/sh as PID 1 ignores SIGTERM, so SIGKILL at 50; no dead instance before it, no
    back-off: started again at 50.1 (restartCount 1). The next failure is at 70 (the probe at 60 is 9.9 s after
    the start)."""
    text = PROBED.replace("FAIL", "10").replace("CMD", "echo ok >/tmp/health; sleep 10; rm -rf /tmp/health; "
                                                       "sleep 600").replace("PROBES", (
        "        livenessProbe: {exec: {command: [cat, /tmp/health]}, initialDelaySeconds: 15, timeoutSeconds: 5,"
        " failureThreshold: 1}"))
    r = run_text(tmp_path, text)
    kills = [x["t"] for x in records(r, "event", reason="Killing")]
    assert kills[:2] == [20.0, 70.0]
    assert [(x["t"], x["signal"]) for x in records(r, "signal")][:2] == [(20.0, "SIGTERM"), (50.0, "SIGKILL")]
    assert _starts(r)[:2] == [0.1, 50.1]
    running = [(x["t"], x["restartCount"]) for x in records(r, "container", container="busybox", state="running")]
    assert running[1] == (51.0, 1)
    assert records(r, "event", reason="Killing")[0]["message"] == \
        "Container busybox failed liveness probe, will be restarted"


@pytest.mark.parametrize("threshold, kills", [
    # "should be restarted startup probe fails": /bin/false, initialDelaySeconds 15, failureThreshold 3: failures
    # at 20, 30, 40 (10 is 9.9 s after the start): killed at 40, SIGKILL at 70, started again at 70.1
    (3, [40.0, 110.0, 180.0]),
    # "should *not* be restarted by liveness probe because startup probe delays it": failureThreshold 60 gives
    # the container 600 s; the liveness probe (/bin/false) never runs before the startup probe succeeds
    (60, []),
])
def test_startup_probe(tmp_path, threshold, kills):
    text = PROBED.replace("FAIL", "0").replace("CMD", "sleep 600").replace("PROBES", (
        "        livenessProbe: {exec: {command: [/bin/true]}, initialDelaySeconds: 15, failureThreshold: 1}\n"
        f"        startupProbe: {{exec: {{command: [/bin/false]}}, initialDelaySeconds: 15, "
        f"failureThreshold: {threshold}}}"))
    r = run_text(tmp_path, text)
    got = [(x["t"], x["message"]) for x in records(r, "event", reason="Killing")]
    assert got == [(t, "Container busybox failed startup probe, will be restarted") for t in kills]
    if kills:
        assert _starts(r)[:2] == [0.1, 70.1]
    else:
        assert _starts(r) == [0.1]
        assert [x["message"] for x in records(r, "event", reason="Unhealthy")][:1] == ["Startup probe failed: "]


def _ready(r) -> list[tuple[float, str]]:
    return [(x["t"], x["status"]) for x in records(r, "condition", object="Pod/default/liveness-exec",
                                                   conditionType="Ready")]


@pytest.mark.parametrize("version, ready_at", [
    # 1.21+ (PR #98376): the startup probe (period 1 from the first sync at 0) first succeeds at 11, 10.9 s
    # after the 0.1 start (readySeconds 10); its result syncs the pod at once, the status finds the container
    # started but not ready and triggers the readiness worker, whose probe (10.9 s) succeeds: Ready at 11
    ("1.37", 11.0),
    # before, the readiness worker only probes on its ticker (0, 60): Ready at 60
    ("1.20", 60.0),
])
def test_ready_immediately_after_the_startup_probe_succeeds(tmp_path, version, ready_at):
    """'should be ready immediately after startupProbe succeeds': readiness period 60, startup period 1; upstream
    asserts the pod is ready well before the readiness period would allow."""
    text = PROBED.replace("FAIL", "null").replace("{failProbesAfterSeconds: null}", "{readySeconds: 10}").replace(
        "CMD", "echo ok >/tmp/health; sleep 10; echo ok >/tmp/startup; sleep 600").replace("PROBES", (
            "        readinessProbe: {exec: {command: [cat, /tmp/health]}, periodSeconds: 60}\n"
            "        startupProbe: {exec: {command: [cat, /tmp/startup]}, periodSeconds: 1, failureThreshold: 60}"))
    r = run_text(tmp_path, text, version=version)
    assert _ready(r) == [(0.0, "False"), (ready_at, "True")]
    startup = [x["t"] for x in records(r, "event", reason="Unhealthy")]
    assert startup == [float(t) for t in range(1, 11)]  # 0.9 … 9.9 s after the start: not yet
    assert _starts(r) == [0.1]


@pytest.mark.parametrize("version, ready_at", [
    # the status at the relist after the start (1.0) triggers a readiness probe: 0.9 s < 20, nothing; the ticker
    # (0, 10, 20, 30 from the first sync) then probes at 30, the first tick 20 s after the 0.1 start: Ready at 30
    ("1.37", 30.0),
    ("1.20", 30.0),
])
def test_readiness_waits_for_its_initial_delay(tmp_path, version, ready_at):
    """'with readiness probe should not be ready before initial delay and never restart': initialDelaySeconds
    20; upstream asserts Ready no sooner than 20 s after the container started, and restartCount 0."""
    text = PROBED.replace("{failProbesAfterSeconds: FAIL}", "{}").replace("CMD", "sleep 600").replace(
        "PROBES", "        readinessProbe: {exec: {command: [cat, /tmp/health]}, initialDelaySeconds: 20}")
    r = run_text(tmp_path, text, version=version)
    assert _ready(r) == [(0.0, "False"), (ready_at, "True")]
    assert _starts(r) == [0.1] and not records(r, "event", reason="Unhealthy")


@pytest.mark.parametrize("version, ready_at", [
    # no delay: the probe the status at 1.0 triggers succeeds, Ready with the Running status at 1.0
    ("1.37", 1.0),
    ("1.21", 1.0),
    # 1.20: only the ticker probes: 10 (the tick at 0 found no running container)
    ("1.20", 10.0),
])
def test_readiness_probe_runs_as_soon_as_the_container_runs(tmp_path, version, ready_at):
    text = PROBED.replace("{failProbesAfterSeconds: FAIL}", "{}").replace("CMD", "sleep 600").replace(
        "PROBES", "        readinessProbe: {exec: {command: [cat, /tmp/health]}}")
    r = run_text(tmp_path, text, version=version)
    assert _ready(r) == [(0.0, "False"), (ready_at, "True")]


INIT = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: init}
spec:
  until: 100s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: pod-init}
    spec:
      restartPolicy: POLICY
      initContainers:
      - {name: init1, image: busybox, command: [INIT1]}
      - {name: init2, image: busybox, command: [INIT2]}
      containers:
      - {name: run1, image: RUN1}
"""


def _init(policy: str, init1: str, init2: str, run1: str) -> str:
    return INIT.replace("POLICY", policy).replace("INIT1", init1).replace("INIT2", init2).replace("RUN1", run1)


def test_failing_init_container_of_a_restart_always_pod(tmp_path):
    """"should not start app containers if init containers fail on a RestartAlways pod": init1 (/bin/false)
    restarts with back-off while init2 and run1 stay waiting PodInitializing with no restart, and the pod is
    not Initialized. init1 exits at 0.1 (seen at 1) and at once restarted (no back-off entry); it exits at 1.1,
    seen at 2: in back-off (10 s from 1.1), retried at the expiry (11.1) jittered by up to half the 9.1 s left
    (PR #133066), and so on, the back-off doubling."""
    r = run_text(tmp_path, _init("Always", "/bin/false", "/bin/true", "registry.k8s.io/pause:3.10"))
    starts = [x["t"] for x in records(r, "runtime", op="start")]
    assert starts[:2] == [0.1, 1.1] and 11.2 <= starts[2] <= 11.1 + 9.1 * 0.5 + 0.1
    assert {x["container"] for x in records(r, "runtime", op="start")} == {"init1"}
    for name in ("init2", "run1"):
        assert {(x["state"], x.get("reason"), x["restartCount"])
                for x in records(r, "container", container=name)} == {("waiting", "PodInitializing", 0)}
    status = r.cluster.store.get("Pod", "default", "pod-init")["status"]
    assert status["phase"] == "Pending"
    initialized = next(c for c in status["conditions"] if c["type"] == "Initialized")
    assert (initialized["status"], initialized["reason"], initialized["message"]) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [init1 init2]")
    assert status["initContainerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 1


def test_failing_init_container_of_a_restart_never_pod(tmp_path):
    """"should not start app containers and fail the pod if init containers fail on a RestartNever pod":
    init1 completes (0.1, seen at 1), init2 starts at 1.1 and fails (seen at 2): SyncPod finds the pod
    terminal; the Failed phase is written once the pod worker has terminated it (the next relist, 3). run1
    never leaves waiting PodInitializing; Initialized is False for init2."""
    r = run_text(tmp_path, _init("Never", "/bin/true", "/bin/false", "busybox"))
    assert [(x["t"], x["to"]) for x in records(r, "phase", object="Pod/default/pod-init")] == [
        (0.0, "Pending"), (3.0, "Failed")]
    status = r.cluster.store.get("Pod", "default", "pod-init")["status"]
    assert [s["state"]["terminated"]["exitCode"] for s in status["initContainerStatuses"]] == [0, 1]
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    initialized = next(c for c in status["conditions"] if c["type"] == "Initialized")
    assert (initialized["status"], initialized["reason"], initialized["message"]) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [init2]")


SIDECARS = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: sidecars}
spec:
  until: 2m
  objects:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: serialize-termination
      annotations:
        podlife/behavior: |
          restartable-init-1: {exitAfterSeconds: 60, onTerm: exit, termSeconds: 5, hookSeconds: {preStop: HOOK}}
          restartable-init-2: {exitAfterSeconds: 60, onTerm: exit, termSeconds: 5, hookSeconds: {preStop: HOOK}}
          restartable-init-3: {exitAfterSeconds: 60, onTerm: exit, termSeconds: 5, hookSeconds: {preStop: HOOK}}
          regular-1: {exitAfterSeconds: 5, exitCode: 0}
    spec:
      restartPolicy: Never
      initContainers:
      - {name: restartable-init-1, image: busybox, restartPolicy: Always PRESTOP}
      - {name: restartable-init-2, image: busybox, restartPolicy: Always PRESTOP}
      - {name: restartable-init-3, image: busybox, restartPolicy: Always PRESTOP}
      containers:
      - {name: regular-1, image: busybox}
"""
PRESTOP = ", lifecycle: {preStop: {exec: {command: [/bin/sh, -c, hook]}}}"


def _sidecar_pod(prestop_seconds: int | None) -> str:
    return SIDECARS.replace(" PRESTOP", PRESTOP if prestop_seconds is not None else "").replace(
        "HOOK", str(prestop_seconds or 0))


def _signals(r) -> list[tuple[float, str, str, int | None]]:
    return [(x["t"], x["container"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")]


def test_sidecars_start_in_order_and_stop_in_reverse(tmp_path):
    """e2e_node container_lifecycle_test.go "should terminate sidecars in reverse order after all main containers
    have exited" (restartPolicy Never). Each sidecar counts as started once a relist has seen it running, so
    the next init container starts a second later: 0.1, 1.1, 2.1, then regular-1 at 3.1. It exits 0 at 8.1
    (seen at 9): the pod is done (sidecars do not count for its phase), terminated at the next relist (10):
    sidecars in reverse order, each waiting for the later ones, sharing the 30 s grace; each exits 5 s after
    SIGTERM."""
    r = run_text(tmp_path, _sidecar_pod(None))
    assert [(x["t"], x["container"]) for x in records(r, "runtime", op="start")] == [
        (0.1, "restartable-init-1"), (1.1, "restartable-init-2"), (2.1, "restartable-init-3"), (3.1, "regular-1")]
    assert _signals(r) == [(10.0, "restartable-init-3", "SIGTERM", 30), (15.0, "restartable-init-2", "SIGTERM", 25),
                           (20.0, "restartable-init-1", "SIGTERM", 20)]
    assert [(x["t"], x["container"]) for x in records(r, "runtime", op="exit")] == [
        (8.1, "regular-1"), (15.0, "restartable-init-3"), (20.0, "restartable-init-2"), (25.0, "restartable-init-1")]
    assert [(x["t"], x["to"]) for x in records(r, "phase")][-1] == (25.0, "Succeeded")


def test_sidecar_prestop_hooks_run_together(tmp_path):
    """"should call sidecar container PreStop hook simultaneously": every preStop (1 s) starts at 10; then the
    reverse order, the grace less the second spent in the hook (and each later sidecar's 5 s)."""
    r = run_text(tmp_path, _sidecar_pod(1))
    assert [(x["t"], x["phase"]) for x in records(r, "hook")] == [(10.0, "started")] * 3 + [(11.0, "completed")] * 3
    assert _signals(r) == [(11.0, "restartable-init-3", "SIGTERM", 29), (16.0, "restartable-init-2", "SIGTERM", 24),
                           (21.0, "restartable-init-1", "SIGTERM", 19)]


def test_sidecar_prestop_hooks_that_never_end(tmp_path):
    """"should terminate sidecars simultaneously if prestop doesn't exit": the hooks loop; each is cut at the
    end of the 30 s grace, no time is left to wait for turns, so all three get SIGTERM with killContainer's 2 s
    minimum together and SIGKILL 2 s later: the hooks lived 32 s ("30 seconds + 2 second minimum grace")."""
    r = run_text(tmp_path, _sidecar_pod(3600))
    assert [(x["t"], x["phase"]) for x in records(r, "hook")] == [(10.0, "started")] * 3 + [(40.0, "timedOut")] * 3
    assert sorted(_signals(r)) == sorted(
        [(40.0, f"restartable-init-{i}", "SIGTERM", 2) for i in (1, 2, 3)] +
        [(42.0, f"restartable-init-{i}", "SIGKILL", None) for i in (1, 2, 3)])


def test_pod_deleted_during_initialization_does_not_wait_for_sidecars(tmp_path):
    """"should not hang in termination if terminated during initialization": the first init container runs
    (300 s) when the pod is deleted with grace 3 at 10; the sidecars never started, so nothing waits for them:
    the init container exits at SIGTERM, the pod is Failed (it was Pending and deleted) and removed at the next
    relist, 11, within grace + 2 s."""
    text = _sidecar_pod(1).replace(
        "      initContainers:\n", "      initContainers:\n      - {name: start-init, image: busybox}\n").replace(
        "          regular-1:", "          start-init: {exitAfterSeconds: 300, onTerm: exit, termSeconds: 0}\n"
                               "          regular-1:") \
        + "  actions:\n  - {at: 10s, delete: pod/serialize-termination, gracePeriodSeconds: 3}\n"
    r = run_text(tmp_path, text)
    assert [(x["t"], x["container"]) for x in records(r, "runtime", op="start")] == [(0.1, "start-init")]
    assert _signals(r) == [(10.0, "start-init", "SIGTERM", 3)]
    assert records(r, "hook") == []
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/serialize-termination")] == [11.0]


TAINTED = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: taints}
spec:
  until: 60s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: no-tol}
    spec:
      containers: [{name: app, image: nginx, command: [nginx]}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: tol-15}
    spec:
      tolerations: [{key: kubernetes.io/e2e-evict-taint-key, operator: Equal, value: evictTaintVal,
                     effect: NoExecute, tolerationSeconds: 15}]
      containers: [{name: app, image: nginx, command: [nginx]}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: tol-inf}
    spec:
      tolerations: [{key: kubernetes.io/e2e-evict-taint-key, operator: Equal, value: evictTaintVal,
                     effect: NoExecute}]
      containers: [{name: app, image: nginx, command: [nginx]}]
  actions:
  - {at: 10s, patch: node/node-1, mergePatch: {spec: {taints: [{key: kubernetes.io/e2e-evict-taint-key,
     value: evictTaintVal, effect: NoExecute}]}}}
"""


def test_no_execute_taint_evictions(tmp_path):
    """test/e2e/node/taints.go NoExecuteTaintManager: a NoExecute taint added at 10 evicts at once the pod that
    does not tolerate it, after its tolerationSeconds (15 s: 25) the one that tolerates it for a while, never the
    one that tolerates it for ever; each gets DisruptionTarget (DeletionByTaintManager) and is gone at the next
    relist after nginx exits."""
    r = run_text(tmp_path, TAINTED)
    marked = [(x["t"], x["object"]) for x in records(r, "event", reason="TaintManagerEviction")]
    assert marked == [(10.0, "Pod/default/no-tol"), (25.0, "Pod/default/tol-15")]
    assert [(x["t"], x["object"]) for x in records(r, "deleted")] == [(11.0, "Pod/default/no-tol"),
                                                                     (26.0, "Pod/default/tol-15")]
    assert r.cluster.store.try_get("Pod", "default", "tol-inf") is not None


def test_removing_the_taint_cancels_the_eviction(tmp_path):
    """taints.go "removing taint cancels eviction": the taint goes at 20, before the 15 s toleration ran out
    (25): the pending deletion is cancelled."""
    text = TAINTED + "  - {at: 20s, patch: node/node-1, mergePatch: {spec: {taints: null}}}\n"
    r = run_text(tmp_path, text)
    assert [(x["t"], x["message"]) for x in records(r, "event", reason="TaintManagerEviction")] == [
        (10.0, "Marking for deletion Pod default/no-tol"), (20.0, "Cancelling deletion of Pod default/tol-15")]
    assert [x["object"] for x in records(r, "deleted")] == ["Pod/default/no-tol"]


RECREATE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: recreate}
spec:
  until: 40s
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 3
      strategy: {type: Recreate}
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          terminationGracePeriodSeconds: 5
          containers: [{name: app, image: busybox, command: [sh, -c, "sleep 3600"]}]
  actions:
  - {at: 10s, patch: deployment/web, mergePatch: {spec: {template: {metadata: {labels: {app: web, v: "2"}}}}}}
"""


@pytest.mark.parametrize("version, new_at, wording", [
    ("1.37", 15.0, "Scaled up replica set {rs} from 0 to 3"),
    ("1.34", 16.0, "Scaled up replica set {rs} from 0 to 3"),
    ("1.26", 16.0, "Scaled up replica set {rs} to 3"),
])
def test_recreate_deployment_never_overlaps_old_and_new_pods(tmp_path, version, new_at, wording):
    """test/e2e/apps/deployment.go "RecreateDeployment should delete old pods and create new ones": the old
    ReplicaSet goes to 0 at 10 and its pods (a shell ignoring SIGTERM, grace 5) get SIGKILL at 15 and are gone
    at 16. recreate.go oldPodsRunning counts every old pod not Succeeded or Failed, and the Deployment syncs on
    ReplicaSet changes and pod deletions. From 1.35 the old set's terminatingReplicas drops when the kubelet marks
    its pods Failed (15, terminal phase before removal): that status update syncs the Deployment, which scales
    the new set up at once. Before, nothing the Deployment watches changes at 15: it scales up when the pods are
    deleted (16). Either way no new pod exists while an old one can run."""
    r = run_text(tmp_path, RECREATE, version=version)
    scaling = [(x["t"], x["message"]) for x in records(r, "event", reason="ScalingReplicaSet") if x["t"] >= 10]
    new_rs = [x["object"].split("/")[-1] for x in records(r, "api", verb="create", by="deployment-controller")][-1]
    assert scaling[1] == (new_at, wording.format(rs=new_rs))
    old_stopped = max(x["t"] for x in records(r, "runtime", op="exit"))
    new_pods = [x["t"] for x in records(r, "api", verb="create", by="replicaset-controller") if new_rs in x["object"]]
    assert old_stopped == 15.0 and new_pods == [new_at] * 3


IMAGE_UPDATE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: image-update}
spec:
  until: 100s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: pod-back-off-image}
    spec:
      containers:
      - {name: back-off, image: "busybox:1.36", command: [/bin/sh, -c, "sleep 5; exit 1"]}
  actions:
  - {at: 60s, patch: pod/pod-back-off-image, strategicMergePatch: {spec: {containers: [{name: back-off,
     image: "nginx:1.27", command: [/bin/sh, -c, "sleep 5; exit 1"]}]}}}
"""


def test_image_update_restarts_the_container_and_resets_its_back_off(tmp_path):
    """test/e2e/common/node/pods.go "should have their auto-restart back-off timer reset on image update": the
    container crash-loops (back-off 10 s, then 20 s); its image changes at 60 while it runs (started 57.418):
    computePodActions kills it, "definition changed, will be restarted" (the shell ignores SIGTERM and ends by
    itself at 62.418), and starts the new image at once: getStableKey hashes the container spec, so the new
    definition has no back-off yet. Its first crash (67.518) then waits the initial 10 s again (expiry 77.518,
    retried within half of the 9.518 s left), not the 40 s the old definition had reached."""
    r = run_text(tmp_path, IMAGE_UPDATE)
    killing = [(x["t"], x["message"]) for x in records(r, "event", reason="Killing")]
    assert killing == [(60.0, "Container back-off definition changed, will be restarted")]
    starts = [x["t"] for x in records(r, "runtime", op="start", container="back-off")]
    assert starts[:5] == [0.1, 6.1, starts[2], starts[3], 62.518]
    assert 21.2 <= starts[2] <= 21.1 + 9.1 * 0.5 + 0.1 and 50.843 <= starts[3] <= 50.743 + 19.743 * 0.5 + 0.1
    assert 77.618 <= starts[5] <= 77.518 + 9.518 * 0.5 + 0.1
    created = [x["detail"] for x in records(r, "runtime", op="create", container="back-off")]
    assert created[4].endswith("attempt 4")
    [status] = r.cluster.store.get("Pod", "default", "pod-back-off-image")["status"]["containerStatuses"]
    assert status["image"] == "nginx:1.27"


ROLLING_ADOPT = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: rolling-update-adopts}
spec:
  until: 60s
  objects:
  - apiVersion: apps/v1
    kind: ReplicaSet
    metadata:
      name: test-rolling-update-controller
      labels: {name: sample-pod, pod: httpd}
      annotations: {deployment.kubernetes.io/revision: "3546343826724305832"}
    spec:
      replicas: 1
      selector: {matchLabels: {name: sample-pod}}
      template:
        metadata: {labels: {name: sample-pod, pod: httpd}}
        spec:
          containers: [{name: httpd, image: "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"}]
  actions:
  - at: 10s
    create:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: test-rolling-update-deployment}
      spec:
        replicas: 1
        selector: {matchLabels: {name: sample-pod}}
        template:
          metadata: {labels: {name: sample-pod}}
          spec:
            containers: [{name: agnhost, image: "registry.k8s.io/e2e-test-images/agnhost:2.53"}]
"""


def test_rolling_update_deployment_adopts_the_old_replica_set(tmp_path):
    """'RollingUpdateDeployment should delete old pods and create new ones' (test/e2e/apps/deployment.go): an
    orphan ReplicaSet whose labels match is adopted (ClaimReplicaSets) at the Deployment's first sync, 10; its
    template differs, so a new ReplicaSet with the next revision (old + 1, as upstream asserts) is scaled up at
    once (maxSurge 25% of 1 rounds up to 1, maxUnavailable rounds down to 0). The new pod runs and is Ready at
    the relist at 11, and the old ReplicaSet is scaled to 0 then; its pod exits 0.1 s after SIGTERM and is
    gone at the next relist, 12. Upstream asserts the Deployment ends with one old ReplicaSet: the adopted one."""
    r = run_text(tmp_path, ROLLING_ADOPT)
    old = "ReplicaSet/default/test-rolling-update-controller"
    assert [x["t"] for x in records(r, "api", verb="patch", object=old)] == [10.0]
    scaling = [(e["t"], e["message"]) for e in records(r, "event", reason="ScalingReplicaSet")]
    new_rs = [rs for rs in r.cluster.store.list("ReplicaSet") if rs["metadata"]["name"] != old.split("/")[-1]][0]
    name = new_rs["metadata"]["name"]
    assert scaling == [(10.0, f"Scaled up replica set {name} from 0 to 1"),
                       (11.0, "Scaled down replica set test-rolling-update-controller from 1 to 0")]
    assert new_rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3546343826724305833"
    adopted = r.cluster.store.get("ReplicaSet", "default", "test-rolling-update-controller")
    assert [o["name"] for o in adopted["metadata"]["ownerReferences"]] == ["test-rolling-update-deployment"]
    assert adopted["spec"]["replicas"] == 0
    gone = [x["t"] for x in records(r, "deleted") if x["object"].startswith("Pod/default/test-rolling-update-c")]
    assert gone == [12.0]


SERIAL_SIDECARS = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: sidecar-startup}
spec:
  until: 60s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata:
      name: restartable-init-startup
      annotations:
        podlife/behavior: |
          restartable-init-1: {readySeconds: 5}
          restartable-init-2: {hookSeconds: {postStart: 3}}
    spec:
      restartPolicy: Never
      initContainers:
      - name: restartable-init-1
        image: busybox
        restartPolicy: Always
        startupProbe: {exec: {command: [test, -f, /tmp/started]}, periodSeconds: 1, failureThreshold: 30}
      - name: restartable-init-2
        image: busybox
        restartPolicy: Always
        lifecycle: {postStart: {exec: {command: [sleep, "3"]}}}
      containers:
      - {name: regular-1, image: busybox}
"""


def test_restartable_init_containers_launch_serially_after_startup_probe_and_post_start(tmp_path):
    """test/e2e_node/container_lifecycle_test.go 'should launch restartable init containers serially
    considering the startup probe' and '... with postStart hook serially': the next container starts only
    once the sidecar before it has started. restartable-init-1 starts at 0.1; its startup probe (period 1 from
    the first sync at 0) fails at 1-5 (0.9-4.9 s < readySeconds 5) and succeeds at 6; the result syncs the pod,
    which starts restartable-init-2 at 6.1; its postStart hook holds that sync until 9.1; the next sync, at the
    relist at 10, starts regular-1 at 10.1. It exits 1 s later (seen at 12); the pod is terminal and its worker
    terminates it at the following relist, 13: the sidecars stop in reverse order
    (kuberuntime_termination_order.go)."""
    r = run_text(tmp_path, SERIAL_SIDECARS)
    assert [(x["t"], x["container"]) for x in records(r, "runtime", op="start")] == [
        (0.1, "restartable-init-1"), (6.1, "restartable-init-2"), (10.1, "regular-1")]
    assert [(x["t"], x["phase"]) for x in records(r, "hook", container="restartable-init-2")] == [
        (6.1, "started"), (9.1, "completed")]
    assert [x["t"] for x in records(r, "event", reason="Unhealthy")] == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert [(x["t"], x["container"]) for x in records(r, "signal")] == [
        (13.0, "restartable-init-2"), (13.1, "restartable-init-1")]


def test_sidecar_failing_its_startup_probe_is_restarted_alone(tmp_path):
    """A sidecar that fails its startup probe (test/e2e_node/container_lifecycle_test.go's restartable init
    container probe cases; the regular container never starts): computeInitContainerActions kills it with 'Init
    container X failed startup probe' and puts it in InitContainersToStart once. The startup probe (period 1,
    failureThreshold 3) fails at 1, 2, 3 (readySeconds 5 never reached): killed at 3 and started again at once (no
    dead instance before it: no back-off check); killed at 6 (the instance before finished 3.1, no entry yet:
    started at 6.2); killed at 9: the instance before finished 6.1, 3 s < 10 s: BackOff at 9.1, once in that sync,
    and at the relist at 10."""
    text = SERIAL_SIDECARS.replace(", failureThreshold: 30}", "}").replace("until: 60s", "until: 20s")
    r = run_text(tmp_path, text)
    name = "restartable-init-1"
    assert [x["t"] for x in records(r, "runtime", op="start")][:3] == [0.1, 3.2, 6.2]
    assert {x["container"] for x in records(r, "runtime", op="start")} == {name}
    assert [(e["t"], e["message"]) for e in records(r, "event", reason="Killing")] == [
        (t, f"Init container {name} failed startup probe") for t in (3.0, 6.0, 9.0)]
    assert [e["t"] for e in records(r, "event", reason="BackOff")][:2] == [9.1, 10.0]


READINESS_GATES = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: readiness-gates}
spec:
  until: 30s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: pod-ready}
    spec:
      readinessGates:
      - conditionType: k8s.io/test-condition1
      - conditionType: k8s.io/test-condition2
      containers:
      - {name: pod-readiness-gate, image: registry.k8s.io/pause:3.10}
  actions:
  - at: 10s
    patch: pod/pod-ready
    subresource: status
    strategicMergePatch: {status: {conditions: [{type: k8s.io/test-condition1, status: "True"}]}}
  - at: 15s
    patch: pod/pod-ready
    subresource: status
    strategicMergePatch: {status: {conditions: [{type: k8s.io/test-condition2, status: "True"}]}}
  - at: 20s
    patch: pod/pod-ready
    subresource: status
    strategicMergePatch: {status: {conditions: [{type: k8s.io/test-condition1, status: "False"}]}}
"""


def test_pod_readiness_gates(tmp_path):
    """test/e2e/common/node/pods.go 'should support pod readiness gates': the container is ready at the relist
    after its start (1), but Ready stays False (ReadinessGatesNotReady, GeneratePodReadyCondition's messages
    joined with ', ') until both gate conditions, set through the status subresource, are True. A status-only
    change is a RECONCILE; NeedToReconcilePodReadiness syncs the pod when the gates change its Ready, at once
    here (the relist at the same instant is newer than the last sync)."""
    r = run_text(tmp_path, READINESS_GATES)
    got = [(x["t"], x["status"], x.get("reason")) for x in records(r, "condition", object="Pod/default/pod-ready",
                                                                   conditionType="Ready")]
    assert got == [(0.0, "False", "ContainersNotReady"), (1.0, "False", "ReadinessGatesNotReady"),
                   (15.0, "True", None), (20.0, "False", "ReadinessGatesNotReady")]
    ready = {c["type"]: c for c in r.cluster.store.get("Pod", "default", "pod-ready")["status"]["conditions"]}
    assert ready["Ready"]["message"] == \
        'the status of pod readiness gate "k8s.io/test-condition1" is not "True", but False'
    assert ready["ContainersReady"]["status"] == "True"
    early = run_text(tmp_path, READINESS_GATES.replace("until: 30s", "until: 5s"))
    conds = {c["type"]: c for c in early.cluster.store.get("Pod", "default", "pod-ready")["status"]["conditions"]}
    assert conds["Ready"]["message"] == (
        'corresponding condition of pod readiness gate "k8s.io/test-condition1" does not exist., '
        'corresponding condition of pod readiness gate "k8s.io/test-condition2" does not exist.')

"""Pod conditions the kubelet writes at the end of a pod's life (pkg/kubelet/status/generate.go)."""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

FAILING = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: fails}
spec:
  until: 20s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: job}
      spec:
        restartPolicy: Never
        containers: [{name: app, image: busybox, command: [sh, -c, "sleep 3; exit 1"]}]
"""


@pytest.mark.parametrize("version, reason", [("1.24", "ContainersNotReady"), ("1.25", "PodFailed"),
                                             ("1.34", "PodFailed")])
def test_failed_pod_ready_reason(tmp_path, version, reason):
    """The container exits 1 at 3.1 s (0.1 s start + sleep 3) and the pod ends Failed. The Ready condition
    written with the Failed phase says why: before PR #110256 ContainersNotReady, from 1.25 PodFailed."""
    r = run_text(tmp_path, FAILING, version=version)
    failed_at = [x["t"] for x in records(r, "phase", object="Pod/default/job", to="Failed")]
    assert len(failed_at) == 1
    ready = [(x["t"], x["status"], x.get("reason")) for x in records(r, "condition", object="Pod/default/job",
                                                                      conditionType="Ready")]
    assert ready[-1][1:] == ("False", reason) and ready[-1][0] <= failed_at[0]
    final = [c for c in r.cluster.store.get("Pod", "default", "job")["status"]["conditions"]
             if c["type"] in ("Ready", "ContainersReady")]
    assert [(c["status"], c.get("reason"), "message" in c) for c in final] == [
        ("False", reason, reason == "ContainersNotReady")] * 2


PENDING_DELETE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: pend}
spec:
  until: 2m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: p}
      spec:
        initContainers: [{name: init, image: busybox, command: [sleep, "3600"]}]
        containers: [{name: app, image: nginx:1.27}]
  actions:
    - {at: 10s, delete: pod/p}
"""


def test_pod_deleted_while_pending_is_marked_failed_and_removed(tmp_path):
    """1.27+ deletes a pod only in a terminal phase; status_manager.go TerminatePod (end of SyncTerminatedPod)
    marks a Pending pod Failed. The init container gets SIGKILL at 40 (10 + 30 s grace), the worker finishes at
    the next relist (41): Failed, then the final delete."""
    r = run_text(tmp_path, PENDING_DELETE, version="1.34")
    assert [(x["t"], x["from"], x["to"]) for x in records(r, "phase", object="Pod/default/p")] == [
        (0.0, None, "Pending"), (41.0, "Pending", "Failed")]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/p")] == [41.0]
    marks = [(x["t"], x["message"]) for x in records(r, "log") if "Marking terminal pod as failed" in x["message"]]
    assert len(marks) == 1 and marks[0][0] == 41.0
    assert marks[0][1].startswith('"Marking terminal pod as failed" oldPhase="Pending" pod="default/p" podUID=')
    # the app never started: it stays waiting (hasPodInitialized is false), not ContainerStatusUnknown
    app = records(r, "container", object="Pod/default/p", container="app")
    assert [(x["state"], x.get("reason")) for x in app] == [("waiting", "PodInitializing")]


INIT_FAILS = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: initfail}
spec:
  until: 20s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: p}
      spec:
        restartPolicy: Never
        initContainers: [{name: init, image: busybox, command: [sh, -c, "exit 1"]}]
        containers: [{name: app, image: nginx:1.27}]
"""


def test_failed_init_container_leaves_the_app_waiting(tmp_path):
    """restartPolicy Never and a failed init container: the pod is Failed (getPhase) and the app container,
    which never started, stays waiting PodInitializing (TerminatePod only marks containers of a pod that ever
    initialized)."""
    r = run_text(tmp_path, INIT_FAILS, version="1.34")
    assert [x["to"] for x in records(r, "phase", object="Pod/default/p")] == ["Pending", "Failed"]
    final = r.cluster.store.get("Pod", "default", "p")["status"]
    assert final["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert final["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 1


DEADLINE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: ads}
spec:
  until: 2m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: p}
      spec:
        activeDeadlineSeconds: 20
        terminationGracePeriodSeconds: 10
        containers: [{name: app, image: busybox, command: [sh, -c, "while true; do sleep 1; done"]}]
"""


@pytest.mark.parametrize("version, failed_at", [("1.34", 31.0), ("1.24", 31.0), ("1.23", 20.0), ("1.22", 20.0),
                                                ("1.21", 20.0), ("1.18", 20.0)])
def test_active_deadline_seconds(tmp_path, version, failed_at):
    """pkg/kubelet/active_deadline.go: startTime is set at the first status (0); at 20 s the sync loop syncs
    the pod, ShouldEvict records DeadlineExceeded and the status turns Failed. The pod worker terminates it
    after the next relist (21) with the pod's 10 s grace; the shell as PID 1 ignores SIGTERM → SIGKILL at 31.
    From 1.24 (PR #108366, CHANGELOG-1.24: mergePodStatus's couldHaveRunningContainers) the Failed phase is
    written only once no container can still run (31); through 1.23 (the 1.22 pod-worker rewrite included) the
    status manager writes it as generated, at 20."""
    r = run_text(tmp_path, DEADLINE, version=version)
    ev = [(x["t"], x["eventType"], x["message"]) for x in records(r, "event", object="Pod/default/p",
                                                                  reason="DeadlineExceeded")]
    assert ev == [(20.0, "Normal", "Pod was active on the node longer than the specified deadline")]
    assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")] == [
        (21.0, "SIGTERM", 10), (31.0, "SIGKILL", None)]
    assert [(x["t"], x["to"]) for x in records(r, "phase", object="Pod/default/p")][-1] == (failed_at, "Failed")
    status = r.cluster.store.get("Pod", "default", "p")["status"]
    assert (status["reason"], status["message"]) == (
        "DeadlineExceeded", "Pod was active on the node longer than the specified deadline")


PULL_FAILS = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: rts}
spec:
  until: 20s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        containers: [{name: app, image: "registry.example/app:1"}]
  actions:
    - at: 0s
      fault: {type: ImagePullFailure, image: "registry.example/app:1", for: 12s}
"""


@pytest.mark.parametrize("version, true_at", [("1.35", 1.0), ("1.36", 0.0)])
def test_ready_to_start_containers_once_the_sandbox_exists(tmp_path, version, true_at):
    """The sandbox is made at 0, then the pull fails (ErrImagePull). Before PR #134660 the condition follows the
    runtime state at the next SyncPod: the sandbox's own PLEG ContainerStarted event at the 1 s relist (the
    generic PLEG relists sandboxes as containers), whose sync reports ImagePullBackOff. From 1.36 the kubelet
    writes it right after creating the sandbox, before the pull."""
    r = run_text(tmp_path, PULL_FAILS, version=version)
    cond = [(x["t"], x["status"]) for x in records(r, "condition", object="Pod/default/web",
                                                   conditionType="PodReadyToStartContainers")]
    assert cond[-1] == (true_at, "True") and all(s == "False" for _, s in cond[:-1])
    events = [(x["t"], x["reason"], x["message"]) for x in records(r, "event", object="Pod/default/web")
              if x["reason"] in ("Failed", "BackOff")]
    assert events == [(0.0, "Failed", 'Failed to pull image "registry.example/app:1": '
                                      + events[0][2].split(": ", 1)[1]),
                      (0.0, "Failed", "Error: ErrImagePull"),
                      (1.0, "BackOff", 'Back-off pulling image "registry.example/app:1"'),
                      (1.0, "Failed", "Error: ImagePullBackOff")]


@pytest.mark.parametrize("version, phases", [("1.34", [(0.0, "Pending"), (21.0, "Failed")]),
                                             ("1.26", [(0.0, "Pending")])])
def test_pod_deleted_while_its_image_pull_backs_off_is_removed(tmp_path, version, phases):
    """The pull fails for ever (ErrImagePull, then ImagePullBackOff): no container ever runs. Deleted at 20, the
    pod worker terminates it at the next relist (21) with nothing to stop; 1.27+ marks it Failed there
    (TerminatePod) and the API server removes it; before, it is removed without a terminal phase."""
    text = PULL_FAILS.replace(", for: 12s}", "}") + "    - {at: 20s, delete: pod/web}\n"
    r = run_text(tmp_path, text.replace("until: 20s", "until: 60s"), version=version)
    assert [(x["t"], x["to"]) for x in records(r, "phase", object="Pod/default/web")] == phases
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [21.0]


@pytest.mark.parametrize("version", ["1.18", "1.37"])
def test_succeeded_pod_ready_reason(tmp_path, version):
    """status/generate.go GenerateContainersReadyCondition: a Succeeded pod whose containers are all known is not
    ready with reason PodCompleted and no message (long before PR #110256 added PodFailed)."""
    r = run_text(tmp_path, FAILING.replace("exit 1", "exit 0"), version=version)
    assert [x["to"] for x in records(r, "phase", object="Pod/default/job")][-1] == "Succeeded"
    final = [c for c in r.cluster.store.get("Pod", "default", "job")["status"]["conditions"]
             if c["type"] in ("Ready", "ContainersReady")]
    assert [(c["status"], c.get("reason"), "message" in c) for c in final] == [("False", "PodCompleted", False)] * 2

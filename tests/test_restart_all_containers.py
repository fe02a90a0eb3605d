"""RestartAllContainers (KEP-5532): a restartPolicyRules action that restarts the whole pod in place, 1.36+."""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import records, run_text

POD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: rac}
spec:
  kubernetesVersion: "VERSION"
  until: 19s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: worker
        annotations:
          podlife/behavior: |
            main: {exitAfterSeconds: 5, exitCode: 88}
      spec:
        restartPolicy: Never
        initContainers:
        - {name: setup, image: busybox, command: [sh, -c, "sleep 2"]}
        containers:
        - name: main
          image: trainer:1
          command: [train]
          restartPolicy: Never
          restartPolicyRules:
          - action: RestartAllContainers
            exitCodes: {operator: In, values: [88]}
        - {name: helper, image: busybox, command: [sh, -c, "sleep 3600"]}
"""


def test_exit_code_restarts_every_container_in_place(tmp_path):
    """The derivation (relists on whole seconds; SyncPod starts containers one after the other, each 0.1 s
    from create to start): setup runs 0.1-2.1 (sleep 2), seen at 3: main starts at 3.1 and helper at 3.2,
    Running at the 4 s relist. main exits
    88 at 8.1 (5 s), seen at 9: the exit matches the RestartAllContainers rule, so SyncPod writes
    AllContainersRestarting=True (RestartAllContainersStarted) and kills every running container with no grace:
    no preStop, killContainer's 2 s minimum, so helper (a shell as PID 1 ignores SIGTERM) gets SIGKILL at 11.
    Every container is then removed, the sandbox kept; the pod is synced again at the next relist (12): the
    condition turns False, the statuses say RestartingAllContainers with their restart counts + 1, the phase
    goes back to Pending, and setup starts again (12.1-14.1); main and helper start at 15.1 and 15.2, Running at 16."""
    r = run_text(tmp_path, POD.replace("VERSION", "1.36"))
    pod = "Pod/default/worker"
    assert [(x["t"], x["to"]) for x in records(r, "phase", object=pod)] == [
        (0.0, "Pending"), (4.0, "Running"), (12.0, "Pending"), (16.0, "Running")]
    assert [(x["t"], x["status"], x.get("reason")) for x in records(r, "condition", object=pod,
                                                                    conditionType="AllContainersRestarting")] == [
        (0.0, "False", None), (9.0, "True", "RestartAllContainersStarted"), (12.0, "False", None)]
    assert [(x["t"], x["container"], x["signal"]) for x in records(r, "signal")] == [
        (9.0, "helper", "SIGTERM"), (11.0, "helper", "SIGKILL")]
    assert [(x["t"], x["container"]) for x in records(r, "runtime", op="remove")] == [
        (11.0, "setup"), (11.0, "main"), (11.0, "helper")]
    starts = [(x["t"], x["container"]) for x in records(r, "runtime", op="start")]
    assert starts == [(0.1, "setup"), (3.1, "main"), (3.2, "helper"), (12.1, "setup"), (15.1, "main"),
                      (15.2, "helper")]
    # the sandbox (and with it the pod IP) survives the restart
    assert [x["container"] for x in records(r, "runtime", op="stop")] == ["helper"]
    restarting = [(x["container"], x["state"], x.get("reason"), x["restartCount"])
                  for x in records(r, "container", object=pod) if x["t"] == 12.0]
    assert restarting == [("setup", "waiting", "RestartingAllContainers", 1),
                          ("main", "waiting", "RestartingAllContainers", 1),
                          ("helper", "waiting", "RestartingAllContainers", 1)]
    # Initialized never goes back to False while the pod restarts in place
    assert [x["status"] for x in records(r, "condition", object=pod, conditionType="Initialized")] == ["False", "True"]
    main = next(cs for cs in r.cluster.store.get("Pod", "default", "worker")["status"]["containerStatuses"]
                if cs["name"] == "main")
    assert main["restartCount"] == 1 and main["lastState"]["terminated"]["reason"] == "RestartingAllContainers"


def test_refused_while_the_gate_is_off(tmp_path):
    """1.35 has RestartAllContainersOnContainerExits alpha and off: the action is not a supported value."""
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, POD.replace("VERSION", "1.35"))
    assert ('spec.containers[0].restartPolicyRules[0].action: Unsupported value: "RestartAllContainers": '
            'supported values: "Restart"') in str(e.value)


def test_rules_need_the_containers_own_restart_policy(tmp_path):
    """Container.restartPolicyRules: 'container MUST set RestartPolicy explicitly' when rules are given."""
    text = POD.replace("VERSION", "1.36").replace("          restartPolicy: Never\n          restartPolicyRules",
                                                  "          restartPolicyRules")
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, text)
    assert "spec.containers[0].restartPolicy: Required value" in str(e.value)

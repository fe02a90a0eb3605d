"""The manual clock: the cluster moves only on ``podlife advance``, so what clients see is exact."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.live.conftest import Live, rows, write

GRACEFUL = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: prestop}
spec:
  kubernetesVersion: "1.32"
  until: 130s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      terminationGracePeriodSeconds: 60
      containers:
      - name: app
        image: busybox
        command: ["sleep", "3600"]
        lifecycle:
          preStop:
            exec: {command: ["sleep", "30"]}
  actions:
  - at: 10s
    delete: pod/web
"""


def _comparable(records: list[dict]) -> list[dict]:
    """The records both runs share: a scenario's delete is also an ``action`` record, and kubectl's DELETE sends
    propagationPolicy Background, which the action leaves unset."""
    out = []
    for r in records:
        if r["type"] == "action" or r["t"] >= 130:
            continue
        if r["type"] == "api":
            r = {k: v for k, v in r.items() if k != "propagationPolicy"}
        out.append(r)
    return out


def test_delete_with_prestop_matches_podlife_run(live_factory, tmp_path) -> None:
    scenario = write(tmp_path, "prestop.yaml", GRACEFUL)
    ran = subprocess.run([sys.executable, "-m", "podlife.cli", "run", scenario, "--report", str(tmp_path / "r.json")],
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    expected = json.loads((tmp_path / "r.json").read_text())["records"]

    live: Live = live_factory("1.32", clock="manual", cluster=scenario)
    assert "spec.actions are not run by podlife up" in live.output()
    assert live.seconds() == 0
    advanced = live.podlife("advance", "10s")
    assert (advanced.returncode, advanced.stdout) == (0, "clock at 10s\n"), advanced.stderr
    assert live.kubectl("delete", "pod", "web", "--wait=false").stdout.strip() == 'pod "web" deleted'
    # frozen: the preStop hook runs, nothing else moves
    assert rows(live.kubectl("get", "pods").stdout)["web"][:2] == ["1/1", "Terminating"]
    live.advance("30s")   # 40 s: the hook has returned, SIGTERM sent; sleep ignores it (PID 1)
    assert rows(live.kubectl("get", "pods").stdout)["web"][:2] == ["1/1", "Terminating"]
    live.advance("90s")   # 130 s: SIGKILL at 70 s, the pod is gone
    assert live.kubectl("get", "pods", "web", check=False).returncode == 1
    got = live.trace()
    assert _comparable(got) == _comparable(expected)
    streamed = live.podlife("trace", "--no-follow")
    assert [json.loads(line) for line in streamed.stdout.splitlines()] == got
    # the upstream sequence, by time: DELETE at 10 s, preStop 10 → 40 s, SIGTERM at 40 s with the 30 s left of
    # the 60 s grace (kuberuntime_container.go killContainer), SIGKILL at 70 s
    pod = [r for r in got if r.get("object") == "Pod/default/web"]
    assert [r["t"] for r in pod if r["type"] == "hook"] == [10.0, 40.0]
    assert [(r["t"], r["signal"]) for r in pod if r["type"] == "signal"] == [(40.0, "SIGTERM"), (70.0, "SIGKILL")]


STATUSES = """\
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox, command: ["true"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers: [{name: c, image: busybox, command: ["false"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  initContainers: [{name: i, image: busybox, command: ["sleep", "3600"]}]
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: stopping}
spec:
  terminationGracePeriodSeconds: 60
  containers:
  - name: c
    image: busybox
    command: ["sleep", "3600"]
    lifecycle: {preStop: {exec: {command: ["sleep", "30"]}}}
"""

REFUSED = """\
apiVersion: v1
kind: Pod
metadata: {name: refused}
spec:
  nodeName: node-2
  containers: [{name: c, image: busybox, command: ["sleep", "3600"]}]
"""


def test_kubectl_status_column(live_factory, tmp_path) -> None:
    live: Live = live_factory("1.32", clock="manual")
    live.kubectl("apply", "-f", write(tmp_path, "pods.yaml", STATUSES))
    table = rows(live.kubectl("get", "pods").stdout)
    # an init container not yet created waits with PodInitializing (convertToAPIContainerStatuses'
    # defaultWaitingState in a pod with init containers), which kubectl's printPod shows as Init:0/1
    assert {n: r[1] for n, r in table.items()} == {"done": "ContainerCreating", "crash": "ContainerCreating",
                                                    "init": "Init:0/1", "stopping": "ContainerCreating"}
    live.advance("1m")
    live.kubectl("delete", "pod", "stopping", "--wait=false")
    # node-2 runs out of memory: a BestEffort pod sent there is refused by the kubelet's admission (Evicted)
    fault = live.podlife("fault", "MemoryUsage", "--node", "node-2", "--value", "32Gi")
    assert fault.stdout.strip() == "MemoryUsage started at 60s", fault.stderr
    live.advance("20s")
    live.kubectl("create", "-f", write(tmp_path, "refused.yaml", REFUSED))
    live.advance("10s")
    table = rows(live.kubectl("get", "pods").stdout)
    status = {n: r[1] for n, r in table.items()}
    assert status == {"done": "Completed", "crash": "CrashLoopBackOff", "init": "Init:0/1",
                      "stopping": "Terminating", "refused": "Evicted"}
    assert table["done"][3] == "90s" and table["refused"][3] == "10s"   # AGE on the virtual clock
    bad = live.podlife("fault", "MemoryUsage", "--node", "node-9", "--value", "1Gi")
    assert bad.returncode == 2
    assert 'fault.node: "node-9" is not a node of this scenario' in bad.stderr


def test_advance_on_a_realtime_clock_is_refused(live) -> None:
    p = live.podlife("advance", "1m")
    assert p.returncode == 1
    assert p.stderr.strip().endswith("advance: the clock is realtime; start podlife up with --clock manual")

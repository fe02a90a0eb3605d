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


# what the API server of podlife up creates at start and podlife run has no use for: the aggregator's local
# APIServices and front-proxy ConfigMap, and API Priority and Fairness's mandatory configuration
UP_ONLY = frozenset({"APIService", "FlowSchema", "PriorityLevelConfiguration"})
UP_ONLY_OBJECTS = frozenset({"ConfigMap/kube-system/extension-apiserver-authentication"})


def _comparable(records: list[dict]) -> list[dict]:
    """The records both runs share: a scenario's delete is also an ``action`` record, kubectl's DELETE sends
    propagationPolicy Background, which the action leaves unset, and podlife up's start-up objects (UP_ONLY)."""
    out = []
    for r in records:
        if r["type"] == "action" or r["t"] >= 130:
            continue
        if str(r.get("object", "")).split("/")[0] in UP_ONLY or r.get("object") in UP_ONLY_OBJECTS:
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


def test_a_fault_for_a_duration_heals_at_its_end_and_trace_follows(live_factory) -> None:
    import queue
    import threading

    from tests.live.conftest import PODLIFE

    live: Live = live_factory("1.32", clock="manual")
    follow = subprocess.Popen([*PODLIFE, "trace", "--kubeconfig", live.kubeconfig], stdout=subprocess.PIPE,
                              text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert follow.stdout is not None
    threading.Thread(target=lambda: [lines.put(line) for line in follow.stdout], daemon=True).start()
    try:
        live.advance("10s")
        fault = live.podlife("fault", "MemoryUsage", "--node", "node-2", "--value", "32Gi", "--for", "30s")
        assert (fault.returncode, fault.stdout) == (0, "MemoryUsage started at 10s\n"), fault.stderr
        faults = [{"t": 10.0, "type": "fault", "fault": "MemoryUsage", "node": "node-2", "op": "start",
                   "fields": {"value": "32Gi", "for": 30.0}}]
        live.advance("29s")   # 39 s: still on
        assert [r for r in live.trace() if r["type"] == "fault"] == faults
        live.advance("1s")    # 40 s: healed, exactly 30 s after it started
        faults.append({**faults[0], "t": 40.0, "op": "heal"})
        assert [r for r in live.trace() if r["type"] == "fault"] == faults
        # the follower streamed the same records as they came, in the same format, up to the heal
        streamed: list[dict] = []
        while not streamed or streamed[-1] != faults[1]:
            streamed.append(json.loads(lines.get(timeout=30)))
        assert streamed == live.trace()[:len(streamed)]
        assert follow.poll() is None   # and goes on following
    finally:
        follow.terminate()
        follow.wait(timeout=10)


def test_python_client_watch_sees_the_toleration_eviction_after_advancing(live_factory) -> None:
    """What an operator waits for: a pod on a node that stopped reporting is evicted once its default
    toleration of the unreachable taint (300 s, DefaultTolerationSeconds) has passed; on the manual clock
    the watch sees it at once, at the exact time."""
    import queue
    import threading
    from datetime import datetime

    import pytest

    pytest.importorskip("kubernetes")
    from kubernetes import client, config, watch

    live: Live = live_factory("1.32", clock="manual")
    v1 = client.CoreV1Api(config.new_client_from_config(live.kubeconfig))
    pod = v1.create_namespaced_pod("default", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tolerant"},
        "spec": {"nodeName": "node-2", "containers": [{"name": "app", "image": "nginx"}]}})
    assert [(t.key, t.effect, t.toleration_seconds) for t in pod.spec.tolerations] == [
        ("node.kubernetes.io/not-ready", "NoExecute", 300), ("node.kubernetes.io/unreachable", "NoExecute", 300)]
    created = pod.metadata.creation_timestamp   # at 0 s
    events: queue.Queue[tuple[str, object]] = queue.Queue()
    w = watch.Watch()

    def follow() -> None:
        from urllib3.exceptions import ProtocolError

        try:
            for ev in w.stream(v1.list_namespaced_pod, "default", field_selector="metadata.name=tolerant",
                               resource_version=pod.metadata.resource_version, timeout_seconds=120):
                events.put((ev["type"], ev["object"]))
        except ProtocolError:
            pass   # the server stopped at the end of the module, while this watch was left waiting
    threading.Thread(target=follow, daemon=True).start()
    live.advance("10s")
    assert live.podlife("fault", "KubeletStop", "--node", "node-2").stdout == "KubeletStop started at 10s\n"
    live.advance("2m")
    tainted = [r["t"] for r in live.trace() if r["type"] == "taint" and r["object"] == "Node/node-2"
               and r["key"] == "node.kubernetes.io/unreachable" and r["effect"] == "NoExecute" and r["op"] == "added"]
    assert len(tainted) == 1 and 10 < tainted[0] <= 130
    live.advance(f"{tainted[0] + 299 - 130:g}s")   # a second before the toleration ends
    assert v1.read_namespaced_pod("tolerant", "default").metadata.deletion_timestamp is None
    live.advance("1s")
    while True:
        kind, obj = events.get(timeout=30)
        if kind == "MODIFIED" and obj.metadata.deletion_timestamp is not None:   # type: ignore[attr-defined]
            break
    w.stop()
    # deleted 300 s after the taint, with the pod's 30 s grace period; the kubelet is down, so it stays
    # Terminating
    deleted = obj.metadata.deletion_timestamp  # type: ignore[attr-defined]
    assert (deleted - created).total_seconds() == tainted[0] + 300 + 30
    assert isinstance(deleted, datetime)
    evictions = [(r["t"], r["message"]) for r in live.trace() if r["type"] == "event"
                 and r["reason"] == "TaintManagerEviction"]
    assert evictions == [(tainted[0] + 300, "Marking for deletion Pod default/tolerant")]


ON_DELETE = '''
import kopf

@kopf.on.delete("", "v1", "pods", labels={"watched": "yes"})
def pod_deleted(meta, name, namespace, **_):
    import kubernetes
    kubernetes.config.load_kube_config()
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, {
        "metadata": {"name": f"{name}-deleted"}, "data": {"deletionTimestamp": meta["deletionTimestamp"]}})
'''


def test_a_kopf_delete_handler_runs_when_the_eviction_comes(live_factory, tmp_path) -> None:
    """A Kopf operator's delete handler (its finalizer holds the pod) runs once the manual clock passes the
    300 s toleration of a stopped node's unreachable taint, and lets the pod go."""
    import pytest

    pytest.importorskip("kopf")
    live: Live = live_factory("1.32", clock="manual")
    op = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone", "-n", "default",
                           write(tmp_path, "op.py", ON_DELETE)], env=live.env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    try:
        live.kubectl("run", "held", "--image=nginx", "--labels=watched=yes", "--overrides",
                     '{"spec": {"nodeName": "node-2"}}')
        live.wait_for("Kopf's finalizer", lambda: live.kubectl(
            "get", "pod", "held", "-o", "jsonpath={.metadata.finalizers}").stdout)
        live.advance("10s")
        live.podlife("fault", "KubeletStop", "--node", "node-2")
        live.advance("10m")
        tainted = next(r["t"] for r in live.trace() if r["type"] == "taint" and r["object"] == "Node/node-2"
                       and r["key"] == "node.kubernetes.io/unreachable" and r["effect"] == "NoExecute"
                       and r["op"] == "added")
        stamp = live.wait_for("the handler's ConfigMap", lambda: live.kubectl(
            "get", "cm", "held-deleted", "-o", "jsonpath={.data.deletionTimestamp}", check=False).stdout)
        created = live.kubectl("get", "node", "node-2", "-o", "jsonpath={.metadata.creationTimestamp}").stdout
        assert _seconds(stamp) - _seconds(created) == tainted + 300 + 30
        # the handler done, Kopf removes its finalizer: nothing else holds the pod, whose kubelet is gone
        assert live.wait_for("the finalizer gone", lambda: live.kubectl(
            "get", "pod", "held", "-o", "jsonpath={.metadata.finalizers}", check=False).stdout in ("", "[]")
            or "NotFound" in live.kubectl("get", "pod", "held", check=False).stderr)
    finally:
        op.terminate()
        out = op.communicate(timeout=30)[0]
    assert "Handler 'pod_deleted' succeeded." in out, out


def _seconds(rfc3339: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()

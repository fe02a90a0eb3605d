"""Seeds 001 and 002: the docker runtime chain, hung containers, lost exit events, node readiness."""

from __future__ import annotations

import pytest

from podlife.runtime.containerd import IPAM
from podlife.runtime.cri import RuntimeError_
from tests.helpers import logs, records, run_text

BASE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: chain}
spec:
  kubernetesVersion: "VERSION"
  until: UNTIL
  cluster:
    nodes: [{name: node-1, runtime: RUNTIME}]
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: stuck}, spec: {containers: [{name: app, image: app:1}]}}
    - {apiVersion: v1, kind: Pod, metadata: {name: other}, spec: {containers: [{name: app, image: app:1}]}}
  actions:
ACTIONS
"""


def scenario(actions: str, runtime: str = "docker-18.06", version: str = "1.18", until: str = "10m") -> str:
    return (BASE.replace("VERSION", version).replace("UNTIL", until).replace("RUNTIME", runtime)
            .replace("ACTIONS", actions))


HANG = """
    - at: 10s
      fault: {type: ContainerHang, node: node-1, pod: stuck, container: app}
"""


def node_ready(r):
    return [(x["t"], x["status"], x["reason"]) for x in records(r, "condition", object="Node/node-1",
                                                                 conditionType="Ready")]


def test_hang_alone_leaves_node_ready_and_other_pods_working(tmp_path):
    r = run_text(tmp_path, scenario(HANG + """
    - at: 20s
      delete: pod/stuck
    - at: 20s
      delete: pod/other
"""))
    assert node_ready(r) == [(0.0, "True", "KubeletReady")]   # only the registration
    # the other pod stops normally (0.1 s); 1.18 removes it on the 10 s status sync once reclaimed (30 s)
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/other")] == [30.0]
    # StopContainer for the hung container blocks on its lock; dockershim's docker client gives up after
    # max(30 s, runtimeRequestTimeout 2m) = 120 s (before the kubelet's own 2m30s deadline): at 140 s, and
    # the pod worker retries; the pod stays Terminating
    failed = logs(r, "from runtime service failed")
    assert failed[0][0] == 140.0
    assert failed[0][1].endswith("rpc error: code = Unknown desc = operation timeout: context deadline exceeded")
    assert records(r, "deleted", object="Pod/default/stuck") == []
    assert logs(r, "Error syncing pod")[0][0] == 140.0
    failed_kill = records(r, "event", reason="FailedKillPod")[0]
    assert (failed_kill["t"], failed_kill["message"]) == (
        140.0, 'error killing pod: failed to "KillContainer" for "app" with KillContainerError: '
               '"rpc error: code = Unknown desc = operation timeout: context deadline exceeded"')


@pytest.mark.parametrize("version,message", [
    ("1.18", "container runtime is down"),
    ("1.34", "container runtime status check may not have completed yet"),
])
def test_hang_then_kubelet_restart_makes_node_not_ready(tmp_path, version, message):
    r = run_text(tmp_path, scenario(HANG + """
    - at: 60s
      fault: {type: KubeletRestart, node: node-1}
""", version=version, until="90s"))
    # the new kubelet's one-time initialisation (cadvisor inspecting every container) hangs on the locked
    # container, so no runtime sync is ever recorded: the node status it posts at once says NotReady, and
    # the sync loop skips every 5 s
    assert node_ready(r) == [(0.0, "True", "KubeletReady"), (60.0, "False", "KubeletNotReady")]
    node = r.cluster.store.get("Node", None, "node-1")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert ready["message"] == message
    skips = logs(r, "kipping pod synchronization")
    assert [t for t, _ in skips] == [60.0, 65.0, 70.0, 75.0, 80.0, 85.0]
    if version == "1.18":
        assert skips[0][1] == "skipping pod synchronization - [container runtime is down]"
    events = [(e["t"], e["reason"]) for e in records(r, "event", object="Node/node-1", source="kubelet/node-1")]
    assert events == [(60.0, "NodeNotReady")]


def test_docker_1_13_hang_stalls_pleg(tmp_path):
    r = run_text(tmp_path, scenario(HANG, runtime="docker-1.13", until="5m"))
    # docker 1.13 locks every container in `docker ps`: the relist at 11 s hangs, the last good one was at
    # 10 s; PLEG is unhealthy strictly after 3 m, so at the sync loop's 191 s; the next node status (every
    # 10 s from 0) at 200 s says NotReady
    assert node_ready(r)[1] == (200.0, "False", "KubeletNotReady")
    node = r.cluster.store.get("Node", None, "node-1")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert ready["message"] == "PLEG is not healthy: pleg was last seen active 3m10s ago; threshold is 3m0s"
    first = logs(r, "kipping pod synchronization")[0]
    assert first == (191.0, "skipping pod synchronization - [PLEG is not healthy: pleg was last seen active "
                            "3m1s ago; threshold is 3m0s]")


def test_lost_exit_event_stuck_terminating_until_runtime_restart(tmp_path):
    r = run_text(tmp_path, scenario("""
    - at: 10s
      fault: {type: LostExitEvent, node: node-1, pod: stuck, container: app}
    - at: 20s
      delete: pod/stuck
    - at: 400s
      delete: pod/stuck
      force: true
    - at: 500s
      fault: {type: RuntimeRestart, node: node-1}
"""))
    # the process died at 10 s but dockerd still says Up: no PLEG event, the pod looks Running
    assert [(x["t"], x["detail"]) for x in records(r, "runtime", op="exit")][:1] == [(10.0, "exitCode 137")]
    # docker stop waits for an exit that never comes: dockershim gives up at 20 + max(30, 120) = 140 s
    assert logs(r, "from runtime service failed")[0][0] == 140.0
    # the force delete removes the API object; the container lives on in docker (a ghost) until dockerd
    # restarts and re-reads containerd: the stop in flight then returns and the sandbox is torn down
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/stuck")] == [400.0]
    stops = [x for x in records(r, "runtime", op="stop") if x["object"] == "Pod/default/stuck"]
    assert stops and stops[0]["t"] >= 500.0


def test_pod_ips_come_in_order_and_released_ones_come_back_last():
    # host-local: .1 is the bridge's, the broadcast address is never given; the allocator moves on past a
    # released address and comes back to it only after the end of the range
    ipam = IPAM("10.244.3.0/29")
    assert [ipam.allocate() for _ in range(4)] == ["10.244.3.2", "10.244.3.3", "10.244.3.4", "10.244.3.5"]
    ipam.release("10.244.3.3")
    assert ipam.allocate() == "10.244.3.6"
    assert ipam.allocate() == "10.244.3.3"
    with pytest.raises(RuntimeError_, match="no IP addresses available"):
        ipam.allocate()
    six = IPAM("fd00:10:244::/125")
    assert [six.allocate() for _ in range(2)] == ["fd00:10:244::2", "fd00:10:244::3"]
    six.release("fd00:10:244::2")
    assert [six.allocate() for _ in range(4)] == ["fd00:10:244::4", "fd00:10:244::5", "fd00:10:244::6",
                                                  "fd00:10:244::2"]

"""The behaviour both example operators must have, as checks on a podlife cluster with the operator running
(each suite starts its own operator and calls these). Each check covers minutes of cluster time in about a
second of wall time: the manual clock jumps to the instants that matter (``advance_until``), and the test
waits (wall time, ``wait_for``) only for the operator's reaction."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from policy import LAST_GOOD, OUT_OF_SERVICE
from workloads import deployment, statefulset


def powered_off_node_is_fenced(cluster: Any) -> str:
    """A StatefulSet's pod on a node that is powered off comes back on another node; without the operator it
    would stay Terminating for ever (nothing confirms its end on a dead node). Returns the fenced node."""
    apps = client.AppsV1Api(cluster.api_client())
    core = client.CoreV1Api(cluster.api_client())
    apps.create_namespaced_stateful_set("default", statefulset())
    cluster.advance_until("pod/web-0 condition Ready", timeout="5m")
    node = core.read_namespaced_pod("web-0", "default").spec.node_name

    cluster.fault("NodePowerOff", node=node)
    tainted = cluster.advance_until(f"node/{node} taint node.kubernetes.io/unreachable:NoExecute", timeout="10m")
    cluster.wait_for("the out-of-service taint", lambda: any(
        t.key == OUT_OF_SERVICE["key"] for t in core.read_node(node).spec.taints or ()))
    back = cluster.advance_until("pod/web-0 condition Ready", timeout="30m")
    assert core.read_namespaced_pod("web-0", "default").spec.node_name != node
    assert back - tainted < 60
    return str(node)


def stalled_rollout_is_rolled_back(cluster: Any) -> None:
    """A rollout whose new image cannot be pulled stalls after progressDeadlineSeconds; the operator goes back to
    the image of the last complete rollout, and the Deployment is complete again at once."""
    apps = client.AppsV1Api(cluster.api_client())
    apps.create_namespaced_deployment("default", deployment(image="registry.example/api:v1"))
    cluster.advance_until("deployment/api condition Progressing reason=NewReplicaSetAvailable", timeout="10m")
    cluster.wait_for("the last good image recorded", lambda: (
        (apps.read_namespaced_deployment("api", "default").metadata.annotations or {}).get(LAST_GOOD)
        == "registry.example/api:v1"))

    cluster.fault("ImagePullFailure", image="registry.example/api:v2")
    updated = cluster.now
    apps.patch_namespaced_deployment("api", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "registry.example/api:v2"}]}}}})
    stalled = cluster.advance_until("deployment/api condition Progressing=False reason=ProgressDeadlineExceeded",
                                    timeout="1h")
    # progress.go: stalled once progressDeadlineSeconds (120) passed since the last progress, found by the
    # requeue one second after
    assert stalled == updated + 121
    cluster.wait_for("the rollback", lambda: apps.read_namespaced_deployment("api", "default")
                     .spec.template.spec.containers[0].image == "registry.example/api:v1")
    # the old ReplicaSet never went below 3 ready: complete at the same instant
    assert cluster.advance_until("deployment/api condition Progressing reason=NewReplicaSetAvailable",
                                 timeout="10m") == stalled
    status = apps.read_namespaced_deployment("api", "default").status
    assert (status.ready_replicas, status.updated_replicas) == (3, 3)


def both_from_one_snapshot(cluster: Any) -> None:
    """The state both checks start from (an empty cluster here; a slow one to build in a real suite) is kept once
    and restored before each: the operator under test keeps running across the restores (its connections are
    cut, it reconnects and relists)."""
    base = cluster.snapshot("base")
    node = powered_off_node_is_fenced(cluster)
    assert cluster.restore(base) == base.seconds
    core = client.CoreV1Api(cluster.api_client())
    assert not any(t.key == OUT_OF_SERVICE["key"] for t in core.read_node(node).spec.taints or ())
    assert core.list_namespaced_pod("default").items == []
    stalled_rollout_is_rolled_back(cluster)

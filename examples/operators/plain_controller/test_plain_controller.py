"""The plain controller against a podlife cluster: a node powered off, a rollout that stalls, on two Kubernetes
versions. Each test covers minutes to hours of cluster time in a few seconds."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from conftest import eventually
from controller import Controller
from kubernetes import client
from policy import LAST_GOOD, OUT_OF_SERVICE
from workloads import deployment, statefulset

pytestmark = pytest.mark.podlife(versions=["1.29", "1.33"])


@pytest.fixture
def controller(podlife_cluster) -> Iterator[Controller]:
    c = Controller(podlife_cluster.api_client())
    stop = threading.Event()
    thread = threading.Thread(target=c.run, args=(stop,), daemon=True)
    thread.start()
    yield c
    stop.set()
    thread.join(timeout=10)


def test_a_powered_off_node_is_fenced_and_the_pod_comes_back_elsewhere(podlife_cluster, controller) -> None:
    apps = client.AppsV1Api(podlife_cluster.api_client())
    core = client.CoreV1Api(podlife_cluster.api_client())
    apps.create_namespaced_stateful_set("default", statefulset())
    podlife_cluster.advance_until("pod/web-0 condition Ready", timeout="5m")
    node = core.read_namespaced_pod("web-0", "default").spec.node_name

    podlife_cluster.fault("NodePowerOff", node=node)
    tainted = podlife_cluster.advance_until(f"node/{node} taint node.kubernetes.io/unreachable:NoExecute",
                                            timeout="10m")
    eventually("the out-of-service taint", lambda: any(
        t.key == OUT_OF_SERVICE["key"] for t in core.read_node(node).spec.taints or ()))
    back = podlife_cluster.advance_until("pod/web-0 condition Ready", timeout="30m")
    assert core.read_namespaced_pod("web-0", "default").spec.node_name != node
    assert back - tainted < 60   # without the fence: never (the pod stays Terminating on the dead node)
    assert f"fenced node/{node}" in controller.actions


def test_a_stalled_rollout_is_rolled_back(podlife_cluster, controller) -> None:
    apps = client.AppsV1Api(podlife_cluster.api_client())
    apps.create_namespaced_deployment("default", deployment(image="registry.example/api:v1"))
    podlife_cluster.advance_until("deployment/api condition Progressing reason=NewReplicaSetAvailable",
                                  timeout="10m")
    eventually("the last good image recorded", lambda: (
        apps.read_namespaced_deployment("api", "default").metadata.annotations.get(LAST_GOOD)
        == "registry.example/api:v1"))

    podlife_cluster.fault("ImagePullFailure", image="registry.example/api:v2")
    updated = podlife_cluster.now
    apps.patch_namespaced_deployment("api", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "registry.example/api:v2"}]}}}})
    stalled = podlife_cluster.advance_until(
        "deployment/api condition Progressing=False reason=ProgressDeadlineExceeded", timeout="1h")
    eventually("the rollback", lambda: apps.read_namespaced_deployment("api", "default")
               .spec.template.spec.containers[0].image == "registry.example/api:v1")
    done = podlife_cluster.advance_until("deployment/api condition Progressing reason=NewReplicaSetAvailable",
                                         timeout="10m")
    # progress.go: stalled once progressDeadlineSeconds (120) have passed since the last progress, found by the
    # requeue one second after; the rollback is complete at once, the old ReplicaSet never went below 3 ready
    assert stalled == updated + 121
    assert done == stalled
    status = apps.read_namespaced_deployment("api", "default").status
    assert (status.ready_replicas, status.updated_replicas) == (3, 3)
    assert "rolled back deployment/api" in controller.actions

"""The Kopf operator against a podlife cluster (run in the test's process with kopf.testing.KopfRunner): a node
powered off, a rollout that stalls, on two Kubernetes versions, in seconds of wall time."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kopf
import pytest
from conftest import eventually
from kopf.testing import KopfRunner
from kubernetes import client
from policy import LAST_GOOD, OUT_OF_SERVICE
from workloads import deployment, statefulset

pytestmark = pytest.mark.podlife(versions=["1.29", "1.33"])
OPERATOR = Path(__file__).with_name("operator.py")


def _load_handlers() -> None:
    """Register the handlers once per test process (Kopf's default registry is global)."""
    spec = importlib.util.spec_from_file_location("fencing_operator", OPERATOR)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


_load_handlers()


@kopf.on.login()
def login_to_the_test_cluster(**kwargs: Any) -> Any:
    """$KUBECONFIG as the fixture sets it, read at each login (the kubernetes package reads it once, at import)."""
    return kopf.login_with_kubeconfig(**kwargs)


@pytest.fixture
def kopf_runner(podlife_cluster, monkeypatch) -> Iterator[KopfRunner]:
    monkeypatch.setenv("KUBECONFIG", podlife_cluster.kubeconfig)
    with KopfRunner(["run", "--all-namespaces", "--standalone"], timeout=60) as runner:
        yield runner
    assert runner.exit_code == 0, runner.output


def test_a_powered_off_node_is_fenced_and_the_pod_comes_back_elsewhere(podlife_cluster, kopf_runner) -> None:
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


def test_a_stalled_rollout_is_rolled_back(podlife_cluster, kopf_runner) -> None:
    apps = client.AppsV1Api(podlife_cluster.api_client())
    apps.create_namespaced_deployment("default", deployment(image="registry.example/api:v1"))
    podlife_cluster.advance_until("deployment/api condition Progressing reason=NewReplicaSetAvailable",
                                  timeout="10m")
    eventually("the last good image recorded", lambda: (
        (apps.read_namespaced_deployment("api", "default").metadata.annotations or {}).get(LAST_GOOD)
        == "registry.example/api:v1"))

    podlife_cluster.fault("ImagePullFailure", image="registry.example/api:v2")
    updated = podlife_cluster.now
    apps.patch_namespaced_deployment("api", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "registry.example/api:v2"}]}}}})
    stalled = podlife_cluster.advance_until(
        "deployment/api condition Progressing=False reason=ProgressDeadlineExceeded", timeout="1h")
    assert stalled == updated + 121   # progress.go: the deadline (120 s), found by the requeue 1 s after
    eventually("the rollback", lambda: apps.read_namespaced_deployment("api", "default")
               .spec.template.spec.containers[0].image == "registry.example/api:v1")
    podlife_cluster.advance_until("deployment/api condition Progressing reason=NewReplicaSetAvailable",
                                  timeout="10m")
    status = apps.read_namespaced_deployment("api", "default").status
    assert (status.ready_replicas, status.updated_replicas) == (3, 3)

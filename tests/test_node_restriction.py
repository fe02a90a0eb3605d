"""NodeRestriction admission (plugin/pkg/admission/noderestriction): a kubelet writes only what is its own."""

from __future__ import annotations

import pytest

from podlife.api.errors import ApiError
from podlife.api.meta import clone
from podlife.api.store import DeleteOptions
from tests.helpers import run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: restrict}
spec:
  until: 5s
  cluster:
    nodes: [{name: node-1}, {name: node-2}]
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {nodeName: node-2, containers: [{name: app, image: a}]}}
"""


@pytest.fixture
def cluster(tmp_path):
    return run_text(tmp_path, SCENARIO).cluster


def test_kubelet_cannot_touch_another_nodes_pod(cluster):
    kubelet = cluster.kubelets["node-1"]
    pod = clone(cluster.store.get("Pod", "default", "a"))
    with pytest.raises(ApiError) as e:
        kubelet.store.update_status(pod, by="kubelet")
    assert (e.value.code, e.value.message) == (403, 'pods "a" is forbidden: node "node-1" can only update pod '
                                                    "status for pods with spec.nodeName set to itself")
    with pytest.raises(ApiError) as e:
        kubelet.store.delete("Pod", "default", "a", by="kubelet", options=DeleteOptions(grace_period_seconds=0))
    assert e.value.message == \
        'pods "a" is forbidden: node "node-1" can only delete pods with spec.nodeName set to itself'
    # its own node's kubelet may
    cluster.kubelets["node-2"].store.update_status(pod, by="kubelet")


def test_kubelet_cannot_modify_other_nodes_or_its_taints(cluster):
    kubelet = cluster.kubelets["node-1"]
    other = clone(cluster.store.get("Node", None, "node-2"))
    with pytest.raises(ApiError) as e:
        kubelet.store.update_status(other, by="kubelet")
    assert e.value.message == 'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"'
    own = clone(cluster.store.get("Node", None, "node-1"))
    own["spec"]["taints"] = [{"key": "x", "effect": "NoSchedule"}]
    with pytest.raises(ApiError) as e:
        kubelet.store.update(own, by="kubelet")
    assert e.value.message == 'nodes "node-1" is forbidden: node "node-1" is not allowed to modify taints'


def test_kubelet_creates_only_mirror_pods(cluster):
    kubelet = cluster.kubelets["node-1"]
    with pytest.raises(ApiError) as e:
        kubelet.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"},
                              "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "i"}]}},
                             by="kubelet")
    assert e.value.message == ('pods "x" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, '
                               'node "node-1" can only create mirror pods')

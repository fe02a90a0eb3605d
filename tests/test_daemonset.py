"""The DaemonSet controller end to end (pkg/controller/daemon).

The controller creates one pod per eligible node with a required node affinity on metadata.name (matchFields);
the scheduler binds it. A default container starts 0.1 s after its pod is created and the pod is Ready at the
kubelet's next relist (1 s).
"""

from __future__ import annotations

import re

from podlife.controlplane.controllers.daemonset import (
    daemon_tolerations,
    node_name_affinity,
)
from podlife.controlplane.controllers.deployment import compute_hash
from tests.helpers import records, run_text

GENERATED = r"[bcdfghjklmnpqrstvwxz2456789]{5}"

NODES = """  cluster:
    nodes:
      - {namePrefix: n, count: 3}
      - {name: infra, labels: {role: infra}, taints: [{key: dedicated, value: infra, effect: NoSchedule}]}
"""


def _scenario(template_extra: str = "", actions: str = "[]", until: str = "10s") -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: ds}}
spec:
  kubernetesVersion: "1.34"
{NODES}  objects:
    - apiVersion: apps/v1
      kind: DaemonSet
      metadata: {{name: agent}}
      spec:
        selector: {{matchLabels: {{app: agent}}}}
        template:
          metadata: {{labels: {{app: agent}}}}
          spec:
            containers: [{{name: app, image: agent:1}}]{template_extra}
  actions: {actions}
  until: {until}
"""


def _placement(r) -> dict[str, str]:
    """node -> pod, from the scheduler's bindings."""
    return {x["node"]: x["object"].split("/")[-1] for x in records(r, "api", verb="bind")}


def test_one_pod_per_node_but_not_on_the_tainted_one(tmp_path):
    r = run_text(tmp_path, _scenario())
    created = [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb="create", by="daemonset-controller")
               if x["object"].startswith("Pod/")]
    # three pods at 0 (slow start 1 + 2), none for infra: its dedicated:NoSchedule taint is not tolerated
    assert [t for t, _ in created] == [0.0, 0.0, 0.0]
    assert all(re.fullmatch(f"agent-{GENERATED}", n) for _, n in created)
    placement = _placement(r)
    assert sorted(placement) == ["n0", "n1", "n2"]
    assert [(e["t"], e["message"]) for e in records(r, "event", reason="SuccessfulCreate",
                                                   object="DaemonSet/default/agent")] == \
        [(0.0, f"Created pod: {n}") for _, n in created]
    store = r.cluster.store
    ds = store.get("DaemonSet", "default", "agent")
    for node, name in placement.items():
        pod = store.get("Pod", "default", name)
        assert pod["spec"]["nodeName"] == node  # bound by the scheduler, not by the controller
        assert pod["spec"]["affinity"] == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        assert pod["metadata"]["labels"] == {
            "app": "agent", "pod-template-generation": "1",
            "controller-revision-hash": compute_hash(ds["spec"]["template"], None)}
        assert pod["spec"]["tolerations"] == [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
            {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    # all Ready at the 1 s relist
    assert ds["status"] == {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                            "numberReady": 3, "observedGeneration": 1, "updatedNumberScheduled": 3,
                            "numberAvailable": 3}
    writes = records(r, "api", verb="update", object="DaemonSet/default/agent", subresource="status")
    assert writes[-1]["t"] == 1.0


def test_a_toleration_admits_the_tainted_node(tmp_path):
    r = run_text(tmp_path, _scenario("\n            tolerations: [{key: dedicated, operator: Exists}]"))
    assert sorted(_placement(r)) == ["infra", "n0", "n1", "n2"]
    assert r.cluster.store.get("DaemonSet", "default", "agent")["status"]["desiredNumberScheduled"] == 4


def test_node_selector_limits_the_nodes(tmp_path):
    extra = ("\n            nodeSelector: {role: infra}"
             "\n            tolerations: [{key: dedicated, operator: Equal, value: infra, effect: NoSchedule}]")
    r = run_text(tmp_path, _scenario(extra))
    assert sorted(_placement(r)) == ["infra"]


def test_cordoned_node_keeps_its_daemon_pod(tmp_path):
    # cordon adds spec.unschedulable and the node.kubernetes.io/unschedulable:NoSchedule taint, which every
    # daemon pod tolerates: nothing is deleted, the node still counts
    r = run_text(tmp_path, _scenario(actions="[{at: 5s, cordon: n0}]"))
    assert records(r, "api", verb="delete", by="daemonset-controller") == []
    assert r.cluster.store.get("DaemonSet", "default", "agent")["status"]["desiredNumberScheduled"] == 3


def test_daemon_tolerations_and_affinity_helpers():
    tols = daemon_tolerations({"hostNetwork": True, "tolerations": [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]})
    # an existing equal toleration is replaced in place (AddOrUpdateTolerationInPodSpec)
    assert tols[0] == {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
    assert tols[-1] == {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}
    assert len(tols) == 7
    aff = node_name_affinity({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "role", "operator": "In", "values": ["x"]}]}]}}}, "n1")
    # "Replace node selector with the new one": the template's terms were checked by the controller
    assert aff["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]


def test_a_node_created_without_spec_gets_its_pod(tmp_path):
    """A Node manifest may leave out spec (NodeSpec is a struct: it reads back as {}); the controller treats it
    as untainted and schedulable and creates its pod at once."""
    r = run_text(tmp_path, _scenario(actions="[{at: 5s, create: {apiVersion: v1, kind: Node, "
                                              "metadata: {name: extra}}}]"))
    created = [x["t"] for x in records(r, "api", verb="create", by="daemonset-controller")
               if x["object"].startswith("Pod/")]
    assert created == [0.0, 0.0, 0.0, 5.0]


def test_a_joining_node_registers_and_runs_pods(tmp_path):
    """A `join` action starts a node's kubelet: it registers the Node (Ready at once) and renews its Lease; the
    DaemonSet controller creates its pod and the scheduler binds it at the same instant; it runs at the next
    relist (21)."""
    text = _scenario(actions="[{at: 20s, join: {name: late, zone: z1}}]", until="30s")
    r = run_text(tmp_path, text)
    node_created = [x["t"] for x in records(r, "api", verb="create", object="Node/late")]
    assert node_created == [20.0]
    late_pod = [x["object"] for x in records(r, "api", verb="bind", node="late")]
    assert len(late_pod) == 1
    assert [(x["t"], x["to"]) for x in records(r, "phase", object=late_pod[0])] == [
        (20.0, "Pending"), (21.0, "Running")]
    node = r.cluster.store.get("Node", None, "late")
    assert node["metadata"]["labels"]["topology.kubernetes.io/zone"] == "z1"
    assert node["spec"]["podCIDR"] == "10.244.5.0/24"  # the fifth node: n0-n2 and infra have 1-4


def test_nodes_created_in_a_large_cluster_get_podcidrs_of_their_own(tmp_path):
    """Past 255 nodes the default podCIDRs leave 10.244.0.0/16 (node i has the (i+1)-th /24 after
    10.244.0.0/24: node 299 has 10.245.44.0/24); Nodes created during the run follow the same rule."""
    text = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: big}
spec:
  cluster: {nodes: [{namePrefix: n, count: 300}]}
  actions:
    - {at: 1s, create: {apiVersion: v1, kind: Node, metadata: {name: extra-a}}}
    - {at: 2s, create: {apiVersion: v1, kind: Node, metadata: {name: extra-b}}}
  until: 3s
"""
    r = run_text(tmp_path, text)
    cidrs = {n: r.cluster.store.get("Node", None, n)["spec"]["podCIDR"] for n in ("n0", "n299", "extra-a", "extra-b")}
    assert cidrs == {"n0": "10.244.1.0/24", "n299": "10.245.44.0/24", "extra-a": "10.245.45.0/24",
                     "extra-b": "10.245.46.0/24"}


def test_a_node_created_by_an_action_gets_a_kubelet(tmp_path):
    """A Node a create action makes during the run stands for a machine podlife assumes (a warning says so): its
    kubelet starts at once and registers against the existing Node (tryRegisterWithAPIServer: AlreadyExists;
    updateDefaultLabels adds its default labels; the first status update posts capacity and Ready), so the
    DaemonSet's pod is created and bound at 20 and runs at the next relist (21), as with a join action."""
    actions = ("[{at: 20s, create: {apiVersion: v1, kind: Node, metadata: {name: extra, "
               "labels: {topology.kubernetes.io/zone: z9}}}}]")
    r = run_text(tmp_path, _scenario(actions=actions, until="30s"))
    assert [(x["t"], x["conditionType"], x["status"]) for x in records(r, "condition", object="Node/extra")] == [
        (20.0, "MemoryPressure", "False"), (20.0, "DiskPressure", "False"), (20.0, "PIDPressure", "False"),
        (20.0, "Ready", "True")]
    bound = [x["object"] for x in records(r, "api", verb="bind", node="extra")]
    assert len(bound) == 1
    assert [(x["t"], x["to"]) for x in records(r, "phase", object=bound[0])] == [(20.0, "Pending"), (21.0, "Running")]
    node = r.cluster.store.get("Node", None, "extra")
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "extra"
    assert node["metadata"]["labels"]["topology.kubernetes.io/zone"] == "z9"
    assert node["status"]["allocatable"]["pods"] == "110"
    assert any("Node extra: podlife assumes a machine behind it" in w for w in r.scenario.warnings)

"""PodGC (pkg/controller/podgc/gc_controller.go), end to end.

The controller's pass runs every 20 s from its start at 0 (gcCheckPeriod; 0, 20, 40, ...). A pass that finds a
pod bound to a node its informer does not have queues the node for 40 s (quarantineTime); the first pass after
that checks the node with a GET and force-deletes (grace 0) the pods still bound to it. From 1.26
(PodDisruptionConditions) a pod not yet terminal is first patched to Failed, orphans with DisruptionTarget
(DeletionByPodGC).
"""

from __future__ import annotations

from podlife.api.meta import clone
from podlife.controlplane.controllers import podgc
from tests.helpers import records, run_text
from tests.test_nodelifecycle import cond_times, partition, run_with

ORPHAN = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: orphan}
spec:
  kubernetesVersion: "VERSION"
  until: 120s
  cluster:
    nodes:
      - {namePrefix: node-, count: 2}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        nodeName: node-1
        containers: [{name: app, image: nginx:1.27}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: ghost}
      spec:
        nodeName: ghost
        containers: [{name: app, image: nginx:1.27}]
  actions:
    - at: 25s
      delete: node/node-1
"""


def test_orphans_are_deleted_after_quarantine_1_34(tmp_path):
    r = run_text(tmp_path, ORPHAN.replace("VERSION", "1.34"))
    # "ghost" never existed: seen missing by the pass at 0, quarantined until 40, deleted by the pass at 40.
    # node-1 deleted at 25: first seen missing at 40, quarantined until 80, its pod deleted at 80
    deleted = [(x["t"], x["object"]) for x in records(r, "deleted") if x["object"].startswith("Pod/")]
    assert deleted == [(40.0, "Pod/default/ghost"), (80.0, "Pod/default/web")]
    for name, t in (("ghost", 40.0), ("web", 80.0)):
        writes = [(x["t"], x["verb"], x.get("subresource"), x.get("gracePeriodSeconds"))
                  for x in records(r, "api", object=f"Pod/default/{name}", by="pod-garbage-collector")]
        assert writes == [(t, "patch", "status", None), (t, "delete", None, 0)]
        assert cond_times(r, f"Pod/default/{name}", "DisruptionTarget") == [(t, "True", "DeletionByPodGC")]
        assert records(r, "phase", object=f"Pod/default/{name}")[-1] == {
            "t": t, "type": "phase", "object": f"Pod/default/{name}", "from": "Running" if name == "web" else "Pending",
            "to": "Failed"}
    # the node lifecycle controller says goodbye at its next pass
    ev = [(e["t"], e["message"]) for e in records(r, "event", object="Node/node-1", reason="RemovingNode")]
    assert ev == [(25.0, "Node node-1 event: Removing Node node-1 from Controller")]


def test_orphans_before_pod_disruption_conditions(tmp_path):
    r = run_text(tmp_path, ORPHAN.replace("VERSION", "1.25"))
    deleted = [(x["t"], x["object"]) for x in records(r, "deleted") if x["object"].startswith("Pod/")]
    assert deleted == [(40.0, "Pod/default/ghost"), (80.0, "Pod/default/web")]
    # no Failed patch, no condition: just the force delete
    writes = [(x["t"], x["verb"]) for x in records(r, "api", by="pod-garbage-collector")]
    assert writes == [(40.0, "delete"), (80.0, "delete")]
    assert cond_times(r, "Pod/default/web", "DisruptionTarget") == []


THRESHOLD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: threshold}
spec:
  kubernetesVersion: "1.34"
  until: 60s
  cluster:
    controllerManager: {terminatedPodGCThreshold: 1}
  objects:
    - &job
      apiVersion: v1
      kind: Pod
      metadata: {name: c}
      spec:
        restartPolicy: Never
        containers: [{name: app, image: busybox:1, command: [sleep, "1"]}]
    - {<<: *job, metadata: {name: a}}
    - {<<: *job, metadata: {name: b}}
"""


def test_terminated_pods_beyond_threshold(tmp_path):
    r = run_text(tmp_path, THRESHOLD)
    # three Succeeded pods, threshold 1: the pass at 20 deletes two, oldest first, names breaking the tie of
    # equal creation times (a, b); already terminal, they are not patched
    assert {x["object"]: x["t"] for x in records(r, "phase") if x["to"] == "Succeeded"}.keys() == \
        {"Pod/default/a", "Pod/default/b", "Pod/default/c"}
    assert [(x["t"], x["object"], x.get("gracePeriodSeconds")) for x in records(r, "api", by="pod-garbage-collector")] \
        == [(20.0, "Pod/default/a", 0), (20.0, "Pod/default/b", 0)]
    assert r.cluster.store.try_get("Pod", "default", "c") is not None


def _out_of_service(cluster):
    node = clone(cluster.store.get("Node", None, "node-1"))
    node["spec"]["taints"].append({"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown",
                                   "effect": "NoExecute"})
    cluster.store.update(node, by="kubectl")


def test_out_of_service_taint_force_deletes_terminating_pods(tmp_path):
    # partitioned at 10: taint eviction marks the pod Terminating at 370 (see test_nodelifecycle); the admin
    # then declares the node out of service at 385. The taint eviction controller deletes again (no effect,
    # the pod is already terminating); the PodGC pass at 400 finds a terminating pod on a NotReady node with
    # the out-of-service taint: Failed and deleted with grace 0
    r = run_with(tmp_path, partition("1.34", "420s"), [(385.0, _out_of_service)])
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/web")] == [370.0]
    assert [(e["t"], e["message"]) for e in records(r, "event", reason="TaintManagerEviction")] == \
        [(370.0, "Marking for deletion Pod default/web"), (385.0, "Marking for deletion Pod default/web")]
    assert [(x["t"], x["verb"]) for x in records(r, "api", by="pod-garbage-collector")] == \
        [(400.0, "patch"), (400.0, "delete")]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [400.0]


def test_out_of_service_before_1_26_leaves_the_pod(tmp_path):
    r = run_with(tmp_path, partition("1.25", "420s"), [(385.0, _out_of_service)])
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/web")] == [360.0]
    assert records(r, "api", by="pod-garbage-collector") == []
    assert records(r, "deleted", object="Pod/default/web") == []


UNSCHEDULED = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: unscheduled}
spec:
  kubernetesVersion: "1.34"
  until: 30s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: stuck, finalizers: [example.com/hold]}
      spec:
        nodeSelector: {disk: none}
        containers: [{name: app, image: nginx:1.27}]
  actions:
    - {at: 5s, delete: pod/stuck}
"""


def test_unscheduled_terminating_pod(tmp_path):
    r = run_text(tmp_path, UNSCHEDULED)
    # never scheduled: the delete at 5 is immediate but the finalizer holds the object; the pass at 20 marks it
    # Failed and deletes it again (the finalizer still holds it)
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/stuck")] == [5.0]
    assert [(x["t"], x["to"]) for x in records(r, "phase", object="Pod/default/stuck")][-1] == (20.0, "Failed")
    assert records(r, "api", by="pod-garbage-collector")[0]["t"] == 20.0


def test_no_pass_without_work(tmp_path, monkeypatch):
    passes: list[float] = []
    orig = podgc.PodGCController._gc

    def spy(self, tick):
        passes.append(tick)
        return orig(self, tick)
    monkeypatch.setattr(podgc.PodGCController, "_gc", spy)
    run_text(tmp_path, partition("1.34", "1h"))
    # a partitioned node, a Terminating pod from 370 on, nothing for PodGC to do: not one pass in an hour
    assert passes == []


LEAVE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: leave}
spec:
  kubernetesVersion: "1.34"
  until: 90s
  cluster:
    nodes: [{name: node-1}, {name: node-2}]
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      nodeName: node-2
      containers: [{name: app, image: nginx}]
  actions:
  - {at: 10s, VERB: node-2}
"""


def test_a_node_that_leaves_has_its_pods_collected_as_orphans(tmp_path):
    # leave: the machine stops and its Node is deleted at 10 s. PodGC's passes run every 20 s from 0: the one at
    # 20 s sees the pod's node missing and quarantines it for 40 s; the one at 60 s marks the pod Failed
    # (1.26+: DisruptionTarget DeletionByPodGC) and force-deletes it. The stopped kubelet sends no signal.
    r = run_text(tmp_path, LEAVE.replace("VERB", "leave"))
    assert [(x["t"], x["by"]) for x in records(r, "api", verb="delete", object="Node/node-2")] == [
        (10.0, "cloud-node-lifecycle-controller")]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [60.0]
    assert [(x["t"], x["to"]) for x in records(r, "phase", object="Pod/default/web")][-1] == (60.0, "Failed")
    assert records(r, "signal", object="Pod/default/web") == []


def test_deleting_only_the_node_object_leaves_the_kubelet_running(tmp_path):
    # delete node/NAME removes the object only: the same PodGC pass deletes the pod at 60 s, and the kubelet,
    # still running, stops the container it sees deleted
    r = run_text(tmp_path, LEAVE.replace("{at: 10s, VERB: node-2}", "{at: 10s, delete: node/node-2}"))
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [60.0]
    assert [x["t"] for x in records(r, "signal", object="Pod/default/web", signal="SIGTERM")] == [60.0]

"""The scheduler end to end: binding by requests vs allocatable, Unschedulable, retry when room appears."""

from __future__ import annotations

from tests.helpers import records, run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: sched}
spec:
  kubernetesVersion: "1.34"
  cluster:
    nodes:
      - {namePrefix: n, count: 2, capacity: {cpu: "1", memory: 1Gi, pods: "110"}}
  objects:
    - &pod
      apiVersion: v1
      kind: Pod
      metadata: {name: a}
      spec:
        containers: [{name: app, image: app:1, resources: {requests: {cpu: 600m}}}]
    - {<<: *pod, metadata: {name: b}}
    - {<<: *pod, metadata: {name: c}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: pinned}
      spec:
        nodeSelector: {disk: ssd}
        containers: [{name: app, image: app:1}]
  actions:
    - {at: 10s, delete: pod/a}
  until: 20s
"""


def test_fit_unschedulable_and_retry(tmp_path):
    r = run_text(tmp_path, SCENARIO)
    binds = [(x["t"], x["object"], x["node"]) for x in records(r, "api", verb="bind")]
    # a and b each take one node (least allocated: the emptier node wins, ties by name); c fits nowhere
    # until a is gone: a stops 0.1 s after SIGTERM at 10 s and is removed then, and c binds at once
    assert binds == [(0.0, "Pod/default/a", "n0"), (0.0, "Pod/default/b", "n1"), (10.1, "Pod/default/c", "n0")]
    failed = [(e["t"], e["object"], e["message"]) for e in records(r, "event", reason="FailedScheduling")]
    assert failed[0] == (0.0, "Pod/default/c", "0/2 nodes are available: 2 Insufficient cpu.")
    assert (0.0, "Pod/default/pinned",
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.") in failed
    cond = records(r, "condition", object="Pod/default/c", conditionType="PodScheduled")
    assert [(x["t"], x["status"], x["reason"]) for x in cond] == [(0.0, "False", "Unschedulable"),
                                                                   (10.1, "True", None)]

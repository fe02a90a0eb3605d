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
    # a: both nodes score the same (empty), so selectHost draws one (reservoir sampling, seeded); b then goes to
    # the other, emptier node (LeastAllocated: (1000-600-600)<0 → 0 on a's node vs (1000-600)*100/1000=40);
    # c fits nowhere until a is gone: a stops 0.1 s after SIGTERM at 10 s, and c binds at once to a's node
    (ta, pa, na), (tb, pb, nb), (tc, pc, nc) = binds
    assert (ta, pa, tb, pb, tc, pc) == (0.0, "Pod/default/a", 0.0, "Pod/default/b", 10.1, "Pod/default/c")
    assert {na, nb} == {"n0", "n1"} and nc == na
    failed = [(e["t"], e["object"], e["message"]) for e in records(r, "event", reason="FailedScheduling")]
    # 1.24+ (PR #107775): FitError + " " + DefaultPreemption's message; Insufficient cpu is Unschedulable
    # (preemption might help: "No preemption victims"), a selector mismatch is UnschedulableAndUnresolvable
    assert failed[0] == (0.0, "Pod/default/c", "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes "
                                               "are available: 2 No preemption victims found for incoming pod..")
    assert (0.0, "Pod/default/pinned",
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes "
            "are available: 2 Preemption is not helpful for scheduling..") in failed
    cond = records(r, "condition", object="Pod/default/c", conditionType="PodScheduled")
    assert [(x["t"], x["status"], x["reason"]) for x in cond] == [(0.0, "False", "Unschedulable"),
                                                                   (10.1, "True", None)]


def test_fit_error_before_1_24_has_no_preemption_suffix(tmp_path):
    r = run_text(tmp_path, SCENARIO, version="1.23")
    failed = [(e["object"], e["message"]) for e in records(r, "event", reason="FailedScheduling")]
    assert ("Pod/default/c", "0/2 nodes are available: 2 Insufficient cpu.") in failed

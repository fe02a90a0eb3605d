"""A loop of reactions between components that would never let time pass (each runs at once in podlife) is
broken by the controller's work queue: after WorkQueue.LOOP_LIMIT rounds of one key at one instant, each further
round waits WorkQueue.LOOP_DELAY, and the run lists that as an assumption."""

from __future__ import annotations

import collections
import textwrap

from podlife.controlplane.controllers.controller_utils import WorkQueue
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run
from podlife.report.assemble import outcome

# test/e2e/apps/statefulset.go "Should recreate evicted statefulset": a pod holds host port 21017 on node-1;
# the StatefulSet's pod, bound there too, is rejected by the kubelet's NodePorts admission (Failed), deleted by
# the controller (a terminal pod goes at once) and made again, over and over
SCENARIO = textwrap.dedent("""\
    apiVersion: podlife/v1alpha1
    kind: Scenario
    metadata: {name: loop}
    spec:
      until: 1s
      cluster: {nodes: [{name: node-1}]}
      objects:
      - apiVersion: v1
        kind: Pod
        metadata: {name: holder}
        spec:
          nodeName: node-1
          containers: [{name: c, image: app:1, ports: [{containerPort: 80, hostPort: 21017}]}]
      - apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: ss}
        spec:
          serviceName: ss
          replicas: 1
          selector: {matchLabels: {app: ss}}
          template:
            metadata: {labels: {app: ss}}
            spec:
              nodeName: node-1
              containers: [{name: c, image: app:1, ports: [{containerPort: 80, hostPort: 21017}]}]
    """)


def test_a_recreate_loop_at_one_instant_goes_on_in_time() -> None:
    result = run(load_scenario("loop.yaml", text=SCENARIO))
    creates = [r["t"] for r in result.cluster.trace.records
               if r["type"] == "api" and r["verb"] == "create" and r["object"] == "Pod/default/ss-0"]
    rejected = [r for r in result.cluster.trace.records
                if r["type"] == "event" and r["object"] == "Pod/default/ss-0" and r["reason"] == "NodePorts"]
    # LOOP_LIMIT rounds of the controller at an instant, three per pod (the pod's creation, its rejection, its
    # deletion each queue the StatefulSet), the first one making the pod; then the loop goes on LOOP_DELAY later
    per_instant = collections.Counter(creates)
    assert WorkQueue.LOOP_LIMIT == 100 and WorkQueue.LOOP_DELAY == 0.1
    assert sorted(per_instant) == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert per_instant[0.0] == 34 and all(n in (33, 34) for n in per_instant.values())
    assert len(rejected) == len(creates)
    notes = [a for a in outcome(result)["assumptions"] if a["object"] == "default/ss"]
    assert notes == [{"object": "default/ss", "container": "",
                      "assumption": "StatefulSetController processed it 100 times at one instant, a loop of "
                                    "reactions; podlife gives each further round 0.1 s"}]

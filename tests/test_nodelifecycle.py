"""The node lifecycle controller, taint-based eviction and DefaultTolerationSeconds, end to end.

Times are derived from the upstream rules (pkg/controller/nodelifecycle, pkg/controller/tainteviction):

- a kubelet renews its Lease every 10 s (0.25 × leaseDurationSeconds 40) from its registration at 0; a partition
  at 10 s keeps the renewal made at 10 (it happened before the partition);
- monitorNodeHealth runs every nodeMonitorPeriod, 5 s, from the controller's start at 0; a pass that finds a
  newer renewTime sets the node's probeTimestamp to its own time: renewal 10 → seen by the pass at 10;
- the node is past the grace when ``now.After(probeTimestamp + gracePeriod)``, strictly: with the 50 s grace of
  1.32+, the first pass with now > 60 is 65 (40 s before 1.32: 55);
- that pass writes Ready/MemoryPressure/DiskPressure/PIDPressure Unknown, records NodeNotReady and marks the
  node's pods not ready; processTaintBaseEviction works on the Ready condition as the pass *found* it (still
  True), so the node enters the zone's taint queue at the next pass, 70 (60 before 1.32), where the rate limiter's
  first token is there at once: NoExecute node.kubernetes.io/unreachable at 70. The NoSchedule unreachable taint
  follows the Node update at once (TaintNodesByCondition, doNoScheduleTaintingPass): 65;
- DefaultTolerationSeconds gave the pod 300 s of toleration: the taint eviction controller deletes it at
  70 + 300 = 370, gracefully (30 s): it stays Terminating while its kubelet is unreachable.
"""

from __future__ import annotations

import heapq
import textwrap

import orjson
import pytest

from podlife.controlplane.controllers import nodelifecycle
from podlife.controlplane.controllers.nodelifecycle import NodeLifecycleController, late_call_at
from podlife.kubelet.nodestatus import ensure_attempt
from podlife.scenario.actions import apply_action
from podlife.scenario.load import load_scenario
from podlife.scenario.run import Result, build
from tests.helpers import records, run_text

PARTITION = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: partition}
spec:
  kubernetesVersion: "VERSION"
  until: UNTIL
  cluster:
    nodes:
      - {namePrefix: node-, count: 3}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        nodeName: node-1
        containers: [{name: app, image: nginx:1.27}]
  actions:
    - at: 10s
      fault: {type: NetworkPartition, node: node-1}
"""


def partition(version: str, until: str = "420s") -> str:
    return PARTITION.replace("VERSION", version).replace("UNTIL", until)


def cond_times(r: Result, obj: str, ctype: str) -> list[tuple[float, str, str | None]]:
    return [(x["t"], x["status"], x["reason"]) for x in records(r, "condition", object=obj, conditionType=ctype)]


def taints(r: Result, obj: str = "Node/node-1") -> list[tuple[float, str, str, str]]:
    return [(x["t"], x["key"], x["effect"], x["op"]) for x in records(r, "taint", object=obj)]


def run_with(tmp_path, text: str, calls: list[tuple[float, object]] = ()) -> Result:
    """run() with extra callbacks on the kernel (what a component not yet modelled would do)."""
    path = tmp_path / "scenario.yaml"
    path.write_text(textwrap.dedent(text))
    sc = load_scenario(str(path), [])
    cluster = build(sc)
    for m in sc.objects:
        cluster.store.create(m.obj, by="kubectl")
    for a in sc.actions:
        cluster.kernel.call_at(a.at, lambda a=a: apply_action(cluster, a))
    for at, fn in calls:
        cluster.kernel.call_at(at, lambda fn=fn: fn(cluster))
    cluster.kernel.run(until=sc.until)
    return Result(sc, cluster, sc.until, [])


def test_partition_unknown_taint_and_eviction_1_34(tmp_path):
    r = run_text(tmp_path, partition("1.34"))
    # grace 50 s: renewal 10 → probe 10 → first tick after 60 is 65
    for ctype in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
        assert cond_times(r, "Node/node-1", ctype)[-1] == (65.0, "Unknown", "NodeStatusUnknown")
    node = r.cluster.store.get("Node", None, "node-1")
    ready = next(c for c in node["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["message"], ready["lastTransitionTime"]) == ("Kubelet stopped posting node status.",
                                                              "2025-01-01T00:01:05Z")
    node_events = [(e["t"], e["reason"], e["message"], e["source"]) for e in records(r, "event", object="Node/node-1")]
    assert node_events == [(0.0, "RegisteredNode", "Node node-1 event: Registered Node node-1 in Controller",
                            "node-controller"),
                           (65.0, "NodeNotReady", "Node node-1 status is now: NodeNotReady", "node-controller")]
    # MarkPodsNotReady at the same pass, with the pod event of 1.19+
    assert cond_times(r, "Pod/default/web", "Ready")[-1] == (65.0, "False", None)
    assert [(e["t"], e["eventType"], e["message"]) for e in records(r, "event", object="Pod/default/web",
                                                                    reason="NodeNotReady")] == \
        [(65.0, "Warning", "Node is not ready")]
    # NoSchedule at once from the condition; NoExecute from the taint queue at the next pass
    assert taints(r) == [(65.0, "node.kubernetes.io/unreachable", "NoSchedule", "added"),
                         (70.0, "node.kubernetes.io/unreachable", "NoExecute", "added")]
    noexec = next(t for t in node["spec"]["taints"] if t["effect"] == "NoExecute")
    assert noexec == {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                      "timeAdded": "2025-01-01T00:01:10Z"}
    # the other nodes are untouched
    assert taints(r, "Node/node-0") == [] and taints(r, "Node/node-2") == []
    # 300 s of toleration from 70: marked, DisruptionTarget, graceful delete; Terminating, never removed
    ev = [(e["t"], e["message"], e["source"]) for e in records(r, "event", reason="TaintManagerEviction")]
    assert ev == [(370.0, "Marking for deletion Pod default/web", "taint-eviction-controller")]
    assert cond_times(r, "Pod/default/web", "DisruptionTarget") == [(370.0, "True", "DeletionByTaintManager")]
    term = records(r, "terminating", object="Pod/default/web")
    assert [(x["t"], x["gracePeriodSeconds"], x["deletionTimestamp"]) for x in term] == \
        [(370.0, 30, "2025-01-01T00:06:40Z")]
    assert records(r, "deleted", object="Pod/default/web") == []
    pod = r.cluster.store.get("Pod", "default", "web")
    assert pod["status"]["phase"] == "Running"


def test_partition_1_31_grace_40(tmp_path):
    r = run_text(tmp_path, partition("1.31"))
    # grace 40 s: first tick after 50 is 55; NoExecute at 60; deletion at 360
    assert cond_times(r, "Node/node-1", "Ready")[-1] == (55.0, "Unknown", "NodeStatusUnknown")
    assert taints(r) == [(55.0, "node.kubernetes.io/unreachable", "NoSchedule", "added"),
                         (60.0, "node.kubernetes.io/unreachable", "NoExecute", "added")]
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/web")] == [360.0]
    assert cond_times(r, "Pod/default/web", "DisruptionTarget") == [(360.0, "True", "DeletionByTaintManager")]


def test_partition_1_25_no_disruption_condition(tmp_path):
    r = run_text(tmp_path, partition("1.25"))
    # before PodDisruptionConditions (beta in 1.26) the taint manager only deletes; its events come from
    # "taint-controller" (the NoExecuteTaintManager inside the node lifecycle controller, before 1.29)
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/web")] == [360.0]
    assert cond_times(r, "Pod/default/web", "DisruptionTarget") == []
    assert [e["source"] for e in records(r, "event", reason="TaintManagerEviction")] == ["taint-controller"]


def test_partition_1_18_no_pod_event(tmp_path):
    r = run_text(tmp_path, partition("1.18"))
    # MarkPodsNotReady recorded no pod event before 1.19 (PR #87743)
    assert cond_times(r, "Pod/default/web", "Ready")[-1] == (55.0, "False", None)
    assert records(r, "event", object="Pod/default/web", reason="NodeNotReady") == []


def test_default_toleration_seconds_admission(tmp_path):
    text = partition("1.34", "30s").replace("""  actions:
    - at: 10s
      fault: {type: NetworkPartition, node: node-1}
""", """    - apiVersion: v1
      kind: Pod
      metadata: {name: own}
      spec:
        tolerations: [{key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 5}]
        containers: [{name: app, image: nginx:1.27}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: all}
      spec:
        tolerations: [{operator: Exists}]
        containers: [{name: app, image: nginx:1.27}]
""").replace("cluster:\n", "cluster:\n    apiServer: {defaultUnreachableTolerationSeconds: 60}\n")
    r = run_text(tmp_path, text)
    tol = {n: r.cluster.store.get("Pod", "default", n)["spec"].get("tolerations") for n in ("web", "own", "all")}
    assert tol["web"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    # a pod that already tolerates one taint gets only the other; an empty key with no effect tolerates both
    assert tol["own"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    assert tol["all"] == [{"operator": "Exists"}]


HEAL = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: heal}
spec:
  kubernetesVersion: "1.34"
  until: 200s
  cluster:
    nodes:
      - {namePrefix: node-, count: 3}
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        nodeName: node-1
        containers: [{name: app, image: nginx:1.27}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: strict}
      spec:
        nodeName: node-1
        tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 0}]
        containers: [{name: app, image: nginx:1.27}]
  actions:
    - at: 100s
      fault: {type: NetworkPartition, node: node-1, for: 62s}
"""


def test_zero_toleration_deleted_at_once_and_ready_again_cancels(tmp_path):
    # the partition heals at 162. The kubelet's node-status loop (kubelet.go Run: wait.JitterUntil(syncNodeStatus,
    # nodeStatusUpdateFrequency 10 s, …)) kept its grid from the kubelet's start at 0 through the partition, its
    # updates failing at 110, 120, …, 160; its first update that gets through is the tick at 170, which
    # (kubelet_node_status.go tryUpdateNodeStatus) finds Ready=Unknown in the API and posts Ready=True
    r = run_text(tmp_path, HEAL)
    # renewal at 100 → Unknown at 155 (grace 50 s, pass at 155) → NoExecute at 160
    assert cond_times(r, "Node/node-1", "Ready")[1:] == [(155.0, "Unknown", "NodeStatusUnknown"),
                                                        (170.0, "True", "KubeletReady")]
    assert taints(r) == [(155.0, "node.kubernetes.io/unreachable", "NoSchedule", "added"),
                         (160.0, "node.kubernetes.io/unreachable", "NoExecute", "added"),
                         # Ready again at 170: NoSchedule goes with the Node update; NoExecute at the pass at 170
                         # (every 5 s), which runs after the kubelet's post of the same instant
                         (170.0, "node.kubernetes.io/unreachable", "NoSchedule", "removed"),
                         (170.0, "node.kubernetes.io/unreachable", "NoExecute", "removed")]
    # tolerationSeconds 0: deleted as the taint appears; web's deletion (due at 460) is cancelled with the taint
    ev = [(e["t"], e["object"], e["message"]) for e in records(r, "event", reason="TaintManagerEviction")]
    assert ev == [(160.0, "Pod/default/strict", "Marking for deletion Pod default/strict"),
                  (170.0, "Pod/default/web", "Cancelling deletion of Pod default/web")]
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/strict")] == [160.0]
    # the kubelet sees the deletion once the partition heals (its relist at 162) and stops the pod
    assert records(r, "deleted", object="Pod/default/strict")[0]["t"] > 162.0
    assert records(r, "terminating", object="Pod/default/web") == []
    # the kubelet's NodeReady event comes with its post at 170; its pod statuses are pushed again at the relist
    # (162), so web is Ready again before its node is
    assert [e["t"] for e in records(r, "event", object="Node/node-1", reason="NodeReady")] == [170.0]
    web_ready = [(x["t"], x["status"]) for x in records(r, "condition", object="Pod/default/web",
                                                         conditionType="Ready")]
    assert web_ready[-2:] == [(155.0, "False"), (162.0, "True")]
    # the Lease controller's sync at 110 failed and went into backoffEnsureLease: attempts at 110, 110.2, 110.6,
    # 111.4, 113, 116.2, 122.6, then every 7 s: 129.6, …, 157.6, 164.6, the first after the heal, renews; its
    # grid runs from there: 194.6 is the last renewal by 200
    assert r.cluster.store.get("Lease", "kube-node-lease", "node-1")["spec"]["renewTime"] == \
        "2025-01-01T00:03:14.600000Z"


def test_lease_backoff_attempts():
    assert [ensure_attempt(110.0, t) for t in (110.0, 110.1, 113.0, 122.7, 162.0)] == [
        110.0, 110.2, 113.0, 129.6, 164.6]


def test_partition_no_renewal_saw_leaves_the_lease_grid(tmp_path):
    # renewals at …, 100, 110: a partition from 101 to 105 fails no sync, so the grid goes on (200 by the end)
    r = run_text(tmp_path, HEAL.replace("fault: {type: NetworkPartition, node: node-1, for: 62s}",
                                        "fault: {type: NetworkPartition, node: node-1, for: 4s}").replace(
                                            "at: 100s", "at: 101s"))
    assert r.cluster.store.get("Lease", "kube-node-lease", "node-1")["spec"]["renewTime"] == \
        "2025-01-01T00:03:20.000000Z"


def test_node_that_never_posted_status_gets_the_startup_grace(tmp_path):
    # a Node object no kubelet runs for: no Ready condition, so the grace is nodeStartupGracePeriod (60 s) from
    # its creation (0): the pass at 65 adds the four conditions Unknown ("NodeStatusNeverUpdated"). The pass
    # found a made-up Unknown Ready condition, so the taint queue takes it in the same pass (65), and no
    # NodeNotReady event is recorded (the node was never seen Ready)
    text = zone_scenario("      - {namePrefix: n, count: 2}\n", [], until="100s").replace(
        "  actions:\n", "  objects:\n    - {apiVersion: v1, kind: Node, metadata: {name: bare}}\n  actions:\n")
    r = run_text(tmp_path, text)
    node = r.cluster.store.get("Node", None, "bare")
    assert [(c["type"], c["status"], c["reason"], c["lastHeartbeatTime"], c["lastTransitionTime"])
            for c in node["status"]["conditions"]] == [
        (t, "Unknown", "NodeStatusNeverUpdated", "2025-01-01T00:00:00Z", "2025-01-01T00:01:05Z")
        for t in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")]
    assert taints(r, "Node/bare") == [(65.0, "node.kubernetes.io/unreachable", "NoExecute", "added"),
                                      (65.0, "node.kubernetes.io/unreachable", "NoSchedule", "added")]
    assert [e["reason"] for e in records(r, "event", object="Node/bare")] == ["RegisteredNode"]


def zone_scenario(nodes: str, partitioned: list[str], version: str = "1.34", until: str = "200s",
                  extra: str = "") -> str:
    actions = "".join(f"    - at: 10s\n      fault: {{type: NetworkPartition, node: {n}}}\n" for n in partitioned)
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: zones}}
spec:
  kubernetesVersion: "{version}"
  until: {until}
  cluster:
{extra}    nodes:
{nodes}
  actions:
{actions}"""


def noexec_times(r: Result) -> list[tuple[float, str]]:
    return [(x["t"], x["object"]) for x in records(r, "taint", effect="NoExecute", op="added")]


def test_normal_zone_rate_one_node_per_10s(tmp_path):
    # 3 of 10 nodes down: 0.3 < 0.55, zone Normal, nodeEvictionRate 0.1: a taint every 10 s, first at once
    nodes = "      - {namePrefix: n, count: 10, zone: a}\n"
    r = run_text(tmp_path, zone_scenario(nodes, ["n1", "n2", "n3"]))
    assert noexec_times(r) == [(70.0, "Node/n1"), (80.0, "Node/n2"), (90.0, "Node/n3")]


def test_partial_disruption_small_zone_stops_tainting(tmp_path):
    # 3 of 4 down: 3 > 2 and 0.75 >= 0.55: PartialDisruption; the zone has 4 <= 50 nodes: rate 0
    nodes = "      - {namePrefix: n, count: 4, zone: a}\n"
    r = run_text(tmp_path, zone_scenario(nodes, ["n0", "n1", "n2"]))
    assert noexec_times(r) == []
    assert [x["t"] for x in records(r, "taint", effect="NoSchedule", op="added")] == [65.0, 65.0, 65.0]


def test_partial_disruption_large_zone_secondary_rate(tmp_path):
    # 40 of 60 down (0.67): PartialDisruption in a zone larger than 50: secondaryNodeEvictionRate 0.01. The
    # state changes at the pass of 65, whose limiter still held its token (SwapLimiter keeps a full new one):
    # the first taint at 70, then one every 100 s
    nodes = "      - {namePrefix: n, count: 60, zone: a}\n"
    down = [f"n{i}" for i in range(40)]
    r = run_text(tmp_path, zone_scenario(nodes, down, until="300s"))
    assert noexec_times(r) == [(70.0, "Node/n0"), (170.0, "Node/n1"), (270.0, "Node/n10")]


def test_full_disruption_of_every_zone_is_master_disruption(tmp_path):
    # both nodes of the only zone down: all zones fully disrupted, no NoExecute taint, no eviction
    nodes = "      - {namePrefix: n, count: 2}\n"
    r = run_text(tmp_path, zone_scenario(nodes, ["n0", "n1"], until="500s"))
    assert cond_times(r, "Node/n0", "Ready")[-1] == (65.0, "Unknown", "NodeStatusUnknown")
    assert noexec_times(r) == []


def test_fully_disrupted_zone_among_healthy_ones_is_tainted(tmp_path):
    # zone a (one node) fully disrupted, zone b fine: FullDisruption gets the normal rate (HealthyQPSFunc)
    nodes = "      - {name: a0, zone: a}\n      - {name: b0, zone: b}\n      - {name: b1, zone: b}\n"
    r = run_text(tmp_path, zone_scenario(nodes, ["a0"]))
    assert noexec_times(r) == [(70.0, "Node/a0")]


def test_kubelet_reported_not_ready_is_tainted_not_ready(tmp_path):
    # the kubelet itself posts Ready=False (runtime down: "container runtime is down" after 30 s without a
    # runtime sync, posted at the next 10 s status update): no NodeNotReady event from the controller (the
    # kubelet records its own), NoSchedule not-ready at once, NoExecute not-ready at the first pass after
    text = zone_scenario("      - {namePrefix: n, count: 3}\n", [], until="120s").replace(
        "  actions:\n", "  actions:\n    - at: 20s\n      fault: {type: RuntimeDown, node: n1}\n")
    r = run_text(tmp_path, text)
    ready = cond_times(r, "Node/n1", "Ready")
    assert ready[-1][1:] == ("False", "KubeletNotReady")
    t = ready[-1][0]
    assert taints(r, "Node/n1") == [(t, "node.kubernetes.io/not-ready", "NoSchedule", "added"),
                                    (t, "node.kubernetes.io/not-ready", "NoExecute", "added")]
    assert [e["source"] for e in records(r, "event", object="Node/n1", reason="NodeNotReady")] == ["kubelet/n1"]


# ---- the event-driven controller against the polling one -----------------------------------------------------

class PollingNodeLifecycle(NodeLifecycleController):
    """The upstream loop as written: every node at every tick (the reference the computed one must equal)."""

    def _arm(self) -> None:
        pass

    def start(self) -> None:
        super().start()
        late_call_at(self.kernel, 0.0, lambda: self._poll(0))

    def _poll(self, k: int) -> None:
        tick = self._tick(k)
        names = {n["metadata"]["name"] for n in self.store.list("Node")} | set(self.known)
        for n in names:
            if (tick, n) not in self._due_keys:
                self._due_keys.add((tick, n))
                heapq.heappush(self._due, (tick, n))
        self._run_pass(tick)
        late_call_at(self.kernel, self._tick(k + 1), lambda: self._poll(k + 1))


class NoOracleNodeLifecycle(NodeLifecycleController):
    def __init__(self, *args, heartbeats=None, **kwargs) -> None:
        super().__init__(*args, heartbeats=None, **kwargs)


def _observable(r: Result) -> list[bytes]:
    """The trace, each instant's records as a set: which of two timers due at the same instant fires first
    (the polling loop's or another component's) is scheduling, not behaviour."""
    return sorted(orjson.dumps([x["t"], x], option=orjson.OPT_SORT_KEYS) for x in r.cluster.trace.records)


EQUIVALENCE = [
    ("partition-1.34", partition("1.34", "400s")),
    ("partition-1.31", partition("1.31", "400s")),
    ("zones", zone_scenario("      - {namePrefix: n, count: 10, zone: a}\n      - {namePrefix: m, count: 2, zone: b}\n",
                            ["n1", "n2", "n3", "m0", "m1"], until="300s")),
    ("heal-and-restart", partition("1.34", "400s").replace(
        "fault: {type: NetworkPartition, node: node-1}",
        "fault: {type: NetworkPartition, node: node-1, for: 47s}\n    - at: 120s\n"
        "      fault: {type: KubeletStop, node: node-2}\n    - at: 173s\n"
        "      fault: {type: KubeletStart, node: node-2}\n    - at: 190s\n"
        "      fault: {type: NodePowerOff, node: node-0}")),
    # a Node write (cordon) on a renewing node between ticks, then a partition before its next renewal
    ("event-then-partition", partition("1.34", "300s").replace(
        "    - at: 10s\n      fault: {type: NetworkPartition, node: node-1}\n",
        "    - {at: 123s, cordon: node-2}\n    - at: 127s\n      fault: {type: NetworkPartition, node: node-2}\n")),
    # the kubelet posts NotReady itself (a status heartbeat without a new renewTime), then the machine goes
    ("not-ready-then-power-off", zone_scenario("      - {namePrefix: n, count: 4}\n", [], until="250s").replace(
        "  actions:\n", "  actions:\n    - at: 20s\n      fault: {type: RuntimeDown, node: n1, for: 100s}\n"
        "    - at: 93s\n      fault: {type: NodePowerOff, node: n1}\n")),
    ("status-heartbeat-without-renewal", None),
]


STATUS_WITHOUT_RENEWAL = zone_scenario(
    "      - {namePrefix: n, count: 3}\n", [], until="200s", extra="    kubelet: {nodeStatusUpdateFrequency: 4s}\n",
).replace("  actions:\n", "  actions:\n    - at: 20s\n      fault: {type: RuntimeDown, node: n1, for: 42s}\n"
          "    - at: 66s\n      fault: {type: NetworkPartition, node: n1}\n")
EQUIVALENCE[-1] = ("status-heartbeat-without-renewal", STATUS_WITHOUT_RENEWAL)


def test_status_heartbeat_without_renewal_resets_the_lease(tmp_path):
    # status posted every 4 s, Lease renewed every 10 s. The runtime heals at 62; the kubelet posts Ready at
    # 64. The pass at 65 sees a new lastHeartbeatTime but the renewTime (60) it already saw at 60: upstream
    # then keeps a nodeHealthData without a Lease, so the pass at 70 takes the Lease (still 60: partitioned
    # at 66) as new and sets the probe to 70. Unknown at the first tick after 70 + 50: 125 (not 120)
    r = run_text(tmp_path, STATUS_WITHOUT_RENEWAL)
    assert cond_times(r, "Node/n1", "Ready") == [(0.0, "True", "KubeletReady"), (52.0, "False", "KubeletNotReady"),
                                                 (64.0, "True", "KubeletReady"),
                                                 (125.0, "Unknown", "NodeStatusUnknown")]
    # Ready=False reported by the kubelet: not-ready NoSchedule at once, NoExecute at the next pass (55);
    # both go when it is Ready again (64, and the pass at 65)
    assert taints(r, "Node/n1")[:4] == [(52.0, "node.kubernetes.io/not-ready", "NoSchedule", "added"),
                                        (55.0, "node.kubernetes.io/not-ready", "NoExecute", "added"),
                                        (64.0, "node.kubernetes.io/not-ready", "NoSchedule", "removed"),
                                        (65.0, "node.kubernetes.io/not-ready", "NoExecute", "removed")]


@pytest.mark.parametrize("oracle", [True, False], ids=["renewing", "no-oracle"])
@pytest.mark.parametrize("name,text", EQUIVALENCE, ids=[e[0] for e in EQUIVALENCE])
def test_equals_polling_controller(tmp_path, monkeypatch, name, text, oracle):
    if not oracle:
        # without the kubelet side's word (nor its notices), every node is looked at when its grace could run
        # out, and its probe computed from the renewTime found then
        monkeypatch.setattr("podlife.cluster.controllers.NodeLifecycleController", NoOracleNodeLifecycle)
    computed = run_text(tmp_path, text)
    monkeypatch.setattr("podlife.cluster.controllers.NodeLifecycleController", PollingNodeLifecycle)
    polled = run_text(tmp_path, text)
    assert isinstance(next(c for c in polled.cluster.controllers if isinstance(c, NodeLifecycleController)),
                      PollingNodeLifecycle)
    assert _observable(computed) == _observable(polled)


def test_probe_is_the_tick_that_first_saw_the_renewal(tmp_path):
    # node-2 renews at 120; the cordon at 123 makes the controller look at it at 125, where the Lease says
    # 120: a polling controller saw that renewTime first at 120, so the probe is 120, not 125. Partitioned at
    # 127 (no renewal after 120): Unknown at the first tick after 120 + 50, 175
    text = partition("1.34", "200s").replace(
        "    - at: 10s\n      fault: {type: NetworkPartition, node: node-1}\n",
        "    - {at: 123s, cordon: node-2}\n    - at: 127s\n      fault: {type: NetworkPartition, node: node-2}\n")
    r = run_text(tmp_path, text)
    assert cond_times(r, "Node/node-2", "Ready")[-1] == (175.0, "Unknown", "NodeStatusUnknown")
    # the cordon itself: TaintNodesByCondition's unschedulable taint
    assert taints(r, "Node/node-2")[0] == (123.0, "node.kubernetes.io/unschedulable", "NoSchedule", "added")


def test_healthy_nodes_cost_nothing(tmp_path, monkeypatch):
    passes: list[tuple[float, list[str]]] = []
    orig = nodelifecycle.NodeLifecycleController._monitor_node_health

    def spy(self, now, names):
        passes.append((now, names))
        return orig(self, now, names)
    monkeypatch.setattr(nodelifecycle.NodeLifecycleController, "_monitor_node_health", spy)
    nodes = "      - {namePrefix: n, count: 50}\n"
    run_text(tmp_path, zone_scenario(nodes, [], until="1h"))
    # one pass at 0 registers the 50 nodes; nothing after that in an hour of healthy renewals
    assert [(t, len(n)) for t, n in passes] == [(0.0, 50)]


def test_partition_shorter_than_toleration_evicts_nothing(tmp_path):
    """The default 300 s unreachable toleration outlives a 100 s partition: the node is Ready again at the heal
    (160, a tick of the kubelet's 10 s node-status grid from 0), both taints go (NoSchedule with the update,
    NoExecute at the pass at 160), the pending eviction of the pod (due at 120 + 300 = 420) is cancelled and no pod
    is deleted."""
    text = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: heal}
spec:
  kubernetesVersion: "1.34"
  until: 10m
  cluster:
    nodes: [{namePrefix: n, count: 2}]
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        nodeName: n0
        containers: [{name: app, image: nginx:1.27}]
  actions:
    - {at: 60s, fault: {type: NetworkPartition, node: n0, for: 100s}}
"""
    r = run_text(tmp_path, text)
    # last renewal 60, grace 50 s (1.34) → Unknown at the pass at 115; NoExecute at 120; healed at 160
    assert cond_times(r, "Node/n0", "Ready")[1:] == [(115.0, "Unknown", "NodeStatusUnknown"),
                                                    (160.0, "True", "KubeletReady")]
    assert [(t, e, op) for t, _, e, op in taints(r, "Node/n0")] == [(115.0, "NoSchedule", "added"),
                                                          (120.0, "NoExecute", "added"),
                                                          (160.0, "NoSchedule", "removed"),
                                                          (160.0, "NoExecute", "removed")]
    ev = [(e["t"], e["message"]) for e in records(r, "event", reason="TaintManagerEviction")]
    assert ev == [(160.0, "Cancelling deletion of Pod default/web")]
    assert records(r, "terminating") == [] and records(r, "deleted", object="Pod/default/web") == []

"""Kubelet eviction (pkg/kubelet/eviction): signals, thresholds, ranking, grace per version, conditions, admission.

Timing facts used throughout (shared/reference/kubernetes-behavior.md §9, eviction_manager.go):
- the eviction manager starts with the kubelet (t = 0) and looks every evictionMonitoringPeriod (10 s), so a
  fault at 30.5 s or 35 s is first seen at 40 s; after evicting a pod it waits for the pod's clean-up (polled
  every 1 s) and looks again at once, which moves its 10 s grid;
- a pod's containers start at 0.1 s; by default a container exits 0.1 s after SIGTERM; the PLEG relists every
  1 s (the pod worker's "~1 s on every transition");
- node status is posted every 10 s from t = 0, so a condition the manager sets at 40 s is posted at 40 s; the
  node lifecycle controller then turns MemoryPressure/DiskPressure into NoSchedule taints at once.
"""

from __future__ import annotations

import pytest

from podlife.kubelet.eviction import EvictionManager
from tests.helpers import logs, records, run_text

NODE = """
  cluster:
    nodes: [{name: node-1, capacity: {cpu: "8", memory: 8Gi, pods: "110", ephemeral-storage: 100Gi}}]
    kubelet: KUBELET
"""


def scenario(version: str, until: str | None, kubelet: str, objects: str, actions: str) -> str:
    """A one-node scenario (8Gi memory, 100Gi ephemeral-storage); ``until`` None: run until nothing is pending."""
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: eviction}}
spec:
  kubernetesVersion: "{version}"
  {"" if until is None else f"until: {until}"}
{NODE.replace("KUBELET", kubelet)}
  objects:
{objects}
  actions:
{actions}
"""


def conditions(r, ctype: str) -> list[tuple[float, str]]:
    return [(x["t"], x["status"]) for x in records(r, "condition", object="Node/node-1", conditionType=ctype)]


def pod(r, name: str):
    return r.cluster.store.get("Pod", "default", name)


# ---- memory pressure: who goes first --------------------------------------------------------------------

RANKING_PODS = """
    - apiVersion: v1
      kind: Pod
      metadata: {name: guaranteed, annotations: {podlife/behavior: "app: {memory: 768Mi}"}}
      spec:
        containers: [{name: app, image: db,
                      resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: 500m, memory: 1Gi}}}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: burstable, annotations: {podlife/behavior: "app: {memory: 512Mi}"}}
      spec:
        containers: [{name: app, image: api, resources: {requests: {memory: 256Mi}}}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: besteffort, annotations: {podlife/behavior: "app: {memory: 1Gi}"}}
      spec:
        containers: [{name: app, image: cache}]
"""


def test_memory_pressure_evicts_besteffort_then_burstable_over_request_then_guaranteed(tmp_path):
    r = run_text(tmp_path, scenario("1.34", "420s", "{evictionHard: {memory.available: 500Mi}}", RANKING_PODS, """
    - {at: 30.5s, fault: {type: MemoryUsage, node: node-1, value: 7800Mi}}
    - {at: 65s, fault: {type: MemoryUsage, node: node-1, value: 7900Mi}}
    - {at: 95s, fault: {type: MemoryUsage, node: node-1, value: 8000Mi}}
"""))
    # MemoryUsage sets the node's memory in use, pods included: at 30.5 s 7800Mi of 8Gi, 392Mi available
    # (< 500Mi). The look at 40 s ranks: usage above request first (besteffort 1Gi > 0, burstable 512Mi >
    # 256Mi; guaranteed 768Mi < 1Gi), then priority (all 0), then usage minus request (1Gi > 256Mi).
    ranked = [m.split("pods=")[1] for _, m in logs(r, "pods ranked for eviction")]
    assert ranked == ['["default/besteffort","default/burstable","default/guaranteed"]',
                      '["default/burstable","default/guaranteed"]', '["default/guaranteed"]']
    # hard threshold, 1.34: grace 1 s, which killContainer raises to its 2 s minimum; the container exits 0.1 s
    # after SIGTERM; the pod worker is done at the next relist (41.0) and the 1 s clean-up poll sees it at
    # 41.1, where the manager looks again (1416Mi free) and then every 10 s: 51.1, 61.1, 71.1.
    # 65 s: 7900Mi with burstable + guaranteed (1280Mi) running → 292Mi available, seen at 71.1; burstable
    # goes (above its request), done at 72.0, seen at 72.2 → grid 82.2, 92.2, 102.2.
    # 95 s: 8000Mi → 192Mi available, seen at 102.2: guaranteed, the only pod left, goes too.
    sigterm = [(x["t"], x["object"], x["timeoutSeconds"]) for x in records(r, "signal", signal="SIGTERM")]
    assert sigterm == [(40.0, "Pod/default/besteffort", 2), (71.1, "Pod/default/burstable", 2),
                       (102.2, "Pod/default/guaranteed", 2)]
    # the API sees Failed once the containers have stopped (mergePodStatus holds a terminal phase back until
    # then), with reason Evicted and the DisruptionTarget condition (1.26+)
    failed = [(x["t"], x["object"]) for x in records(r, "phase", to="Failed")]
    assert failed == [(40.1, "Pod/default/besteffort"), (71.2, "Pod/default/burstable"),
                      (102.3, "Pod/default/guaranteed")]
    messages = {
        "besteffort": "The node was low on resource: memory. Threshold quantity: 500Mi, available: 392Mi. "
                      "Container app was using 1Gi, request is 0, has larger consumption of memory. ",
        "burstable": "The node was low on resource: memory. Threshold quantity: 500Mi, available: 292Mi. "
                     "Container app was using 512Mi, request is 256Mi, has larger consumption of memory. ",
        "guaranteed": "The node was low on resource: memory. Threshold quantity: 500Mi, available: 192Mi. ",
    }
    for name, message in messages.items():
        st = pod(r, name)["status"]
        assert (st["phase"], st["reason"], st["message"]) == ("Failed", "Evicted", message)
        dt = [c for c in st["conditions"] if c["type"] == "DisruptionTarget"]
        assert [(c["status"], c["reason"], c["message"]) for c in dt] == [("True", "TerminationByKubelet", message)]
        assert [(x["eventType"], x["message"]) for x in records(r, "event", object=f"Pod/default/{name}",
                                                                reason="Evicted")] == [("Warning", message)]
    # evicted pods stay in the API as records
    assert records(r, "deleted") == []
    # MemoryPressure from the first look that met the threshold (40 s) until evictionPressureTransitionPeriod
    # (5 m) after the last one (102.2): the first look at or after 402.2 is 403.3 (grid 103.3 + 10 k), posted
    # with the next node status, at 410 s; the taint follows the condition
    assert conditions(r, "MemoryPressure") == [(0.0, "False"), (40.0, "True"), (410.0, "False")]
    taints = [(x["t"], x["op"]) for x in records(r, "taint", key="node.kubernetes.io/memory-pressure")]
    assert taints == [(40.0, "added"), (410.0, "removed")]
    assert [m for _, m in logs(r, "attempting to reclaim")] == ['"Eviction manager: attempting to reclaim" '
                                                                'resourceName="memory"'] * 3


# ---- the transition period, and admission under pressure -------------------------------------------------

TRANSITION_ACTIONS = """
    - {at: 35s, fault: {type: MemoryUsage, node: node-1, value: 7800Mi, for: 10s}}
    - at: 50s
      create: {apiVersion: v1, kind: Pod, metadata: {name: besteffort},
               spec: {nodeName: node-1, containers: [{name: app, image: nginx}]}}
    - at: 50s
      create: {apiVersion: v1, kind: Pod, metadata: {name: burstable},
               spec: {nodeName: node-1, containers: [{name: app, image: nginx, resources: {requests: {memory: 64Mi}}}]}}
"""


@pytest.mark.parametrize("version, prefix", [("1.34", "Pod was rejected: "), ("1.25", "Pod ")])
def test_pressure_is_held_for_the_transition_period_and_refuses_besteffort_pods(tmp_path, version, prefix):
    r = run_text(tmp_path, scenario(version, None, "{evictionHard: {memory.available: 500Mi}}", "    []",
                                    TRANSITION_ACTIONS))
    # 35 s: 392Mi available, seen at 40 s; no pod to evict. The fault heals at 45 s: the look at 50 s finds
    # 8Gi free, but the condition is held for 5 m after 40 s: the first look with now - 40 >= 300 is 340 s
    assert [t for t, _ in logs(r, "no pods are active to evict")] == [40.0]
    assert conditions(r, "MemoryPressure") == [(0.0, "False"), (40.0, "True"), (340.0, "False")]
    assert [(x["t"], x["reason"]) for x in records(r, "event", object="Node/node-1")
            if x["reason"].startswith("NodeHas")] == [(40.0, "NodeHasInsufficientMemory"),
                                                       (340.0, "NodeHasSufficientMemory")]
    # the pods (bound directly, as the memory-pressure taint keeps the scheduler away) arrive at 50 s, still
    # under MemoryPressure: the BestEffort one is refused (Failed, Evicted), the Burstable one runs
    be, bu = pod(r, "besteffort")["status"], pod(r, "burstable")["status"]
    assert (be["phase"], be["reason"], be["message"]) == (
        "Failed", "Evicted", prefix + "The node had condition: [MemoryPressure]. ")
    assert [(x["t"], x["message"]) for x in records(r, "event", object="Pod/default/besteffort", reason="Evicted")] \
        == [(50.0, "The node had condition: [MemoryPressure]. ")]
    assert records(r, "runtime", object="Pod/default/besteffort") == []
    assert bu["phase"] == "Running"
    # then nothing is met and nothing held: the manager stops looking, and the run ends at 340 s
    assert r.end == 340.0


# ---- a soft threshold waits for its grace period --------------------------------------------------------

SOFT_KUBELET = """
      evictionHard: {memory.available: 100Mi}
      evictionSoft: {memory.available: 1Gi}
      evictionSoftGracePeriod: {memory.available: 30s}
      evictionMaxPodGracePeriod: 20"""

SOFT_POD = """
    - apiVersion: v1
      kind: Pod
      metadata: {name: app, annotations: {podlife/behavior: "app: {memory: 512Mi, onTerm: ignore}"}}
      spec:
        terminationGracePeriodSeconds: 10
        containers: [{name: app, image: app}]
"""


@pytest.mark.parametrize("version, grace", [
    ("1.34", 10),   # 1.32+ (PR #122890): min(evictionMaxPodGracePeriod 20, the pod's 10)
    ("1.31", 20),   # before: evictionMaxPodGracePeriod, even above the pod's own grace period
])
def test_soft_threshold_evicts_after_its_grace_period(tmp_path, version, grace):
    r = run_text(tmp_path, scenario(version, "120s", SOFT_KUBELET, SOFT_POD, """
    - {at: 35s, fault: {type: MemoryUsage, node: node-1, value: 7400Mi}}
"""))
    # 35 s: 8192Mi - 7400Mi = 792Mi available: below the soft 1Gi, above the hard 100Mi. First seen at 40 s:
    # MemoryPressure at once, but no eviction until the threshold has held for 30 s: the look at 70 s
    assert conditions(r, "MemoryPressure") == [(0.0, "False"), (40.0, "True")]
    assert [t for t, _ in logs(r, "attempting to reclaim")] == [70.0]
    # the pod ignores SIGTERM: SIGKILL when the grace period ends
    assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")] == [
        (70.0, "SIGTERM", grace), (70.0 + grace, "SIGKILL", None)]
    assert pod(r, "app")["status"]["message"] == (
        "The node was low on resource: memory. Threshold quantity: 1Gi, available: 792Mi. "
        "Container app was using 512Mi, request is 0, has larger consumption of memory. ")


# ---- a hard threshold's grace per version ---------------------------------------------------------------

HARD_POD = """
    - apiVersion: v1
      kind: Pod
      metadata: {name: app, annotations: {podlife/behavior: "app: {memory: 1Gi, onTerm: ignore}"}}
      spec:
        containers: [{name: app, image: app}]
"""


@pytest.mark.parametrize("version, signals, exceeded", [
    # 1.31+ (PR #124063): override 1 s, raised to killContainer's 2 s minimum
    ("1.34", [(40.0, "SIGTERM", 2), (42.0, "SIGKILL", None)], []),
    # 1.22-1.30: override 0, which the pod workers replace by the pod's own 30 s (issue #115819); killPodNow
    # waits max(10 s, 1.5 × 0) for the kill, then records ExceededGracePeriod
    ("1.30", [(40.0, "SIGTERM", 30), (70.0, "SIGKILL", None)], [50.0]),
    # <=1.21: override 0 reaches killContainer, which applies it after its 2 s minimum: StopContainer with
    # timeout 0, and containerd kills at once
    ("1.21", [(40.0, "SIGKILL", None)], []),
])
def test_hard_eviction_grace_per_version(tmp_path, version, signals, exceeded):
    r = run_text(tmp_path, scenario(version, "120s", "{evictionHard: {memory.available: 500Mi}}", HARD_POD, """
    - {at: 35s, fault: {type: MemoryUsage, node: node-1, value: 7800Mi}}
"""))
    assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")] == signals
    assert [x["t"] for x in records(r, "event", reason="ExceededGracePeriod")] == exceeded
    st = pod(r, "app")["status"]
    assert (st["phase"], st["reason"]) == ("Failed", "Evicted")
    disruption = [c["reason"] for c in st["conditions"] if c["type"] == "DisruptionTarget"]
    if version == "1.21":
        # before PR #111597 (1.26) the message named the request differently, with no threshold line, and
        # there was no DisruptionTarget condition (PodDisruptionConditions, on from 1.26)
        assert st["message"] == ("The node was low on resource: memory. "
                                 "Container app was using 1Gi, which exceeds its request of 0. ")
        assert disruption == []
    else:
        assert disruption == ["TerminationByKubelet"]


def test_legacy_log_lines(tmp_path):
    r = run_text(tmp_path, scenario("1.18", "60s", "{evictionHard: {memory.available: 500Mi}}", HARD_POD, """
    - {at: 35s, fault: {type: MemoryUsage, node: node-1, value: 7800Mi}}
"""))
    lines = [(x["t"], x["severity"], x["file"], x["message"]) for x in records(r, "log")
             if x["file"] == "eviction_manager.go"]
    uid = pod(r, "app")["metadata"]["uid"]
    assert lines[:4] == [
        (40.0, "W", "eviction_manager.go", "eviction manager: attempting to reclaim memory"),
        (40.0, "I", "eviction_manager.go", "eviction manager: must evict pod(s) to reclaim memory"),
        (40.0, "I", "eviction_manager.go", f"eviction manager: pods ranked for eviction: app_default({uid})"),
        (40.0, "I", "eviction_manager.go", f"eviction manager: pod app_default({uid}) is evicted successfully"),
    ]


# ---- disk pressure --------------------------------------------------------------------------------------

DISK_PODS = """
    - apiVersion: v1
      kind: Pod
      metadata: {name: app}
      spec:
        containers: [{name: app, image: app, resources: {requests: {memory: 64Mi}}}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: agent}
      spec:
        priorityClassName: system-node-critical
        containers: [{name: agent, image: agent}]
"""


def test_disk_pressure_reclaims_then_evicts_and_refuses_every_pod(tmp_path):
    # the default thresholds (nodefs.available 10%, imagefs.available 15%, ...)
    r = run_text(tmp_path, scenario("1.34", "70s", "{}", DISK_PODS, """
    - {at: 35s, fault: {type: DiskUsage, node: node-1, value: 95Gi}}
    - at: 60s
      create: {apiVersion: v1, kind: Pod, metadata: {name: late},
               spec: {nodeName: node-1, containers: [{name: app, image: nginx, resources: {requests: {memory: 64Mi}}}]}}
"""))
    assert conditions(r, "DiskPressure") == [(0.0, "False"), (40.0, "True")]
    # node-level reclaim first (container GC, image GC: nothing to free in podlife), then one pod
    assert [(t, m) for t, m in logs(r, "Attempting to delete unused")][:2] == [
        (40.0, '"Attempting to delete unused containers"'), (40.0, '"Attempting to delete unused images"')]
    # 10% of 100Gi as upstream computes it: float32(0.1) × 107374182400, truncated: 10737418400 bytes, not a
    # multiple of 1024, so printed as a plain number; 5Gi available
    assert pod(r, "app")["status"]["message"] == (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, available: 5Gi. ")
    # the critical pod is never evicted: every later look (41.1 after the clean-up, then every 10 s) gives up
    assert [t for t, _ in logs(r, "cannot evict a critical pod")] == [41.1, 51.1, 61.1]
    assert pod(r, "agent")["status"]["phase"] == "Running"
    # under disk pressure every (non-critical) pod is refused, Burstable too
    assert pod(r, "late")["status"]["message"] == "Pod was rejected: The node had condition: [DiskPressure]. "
    assert [x["t"] for x in records(r, "taint", key="node.kubernetes.io/disk-pressure", op="added")] == [40.0]


# ---- cost: a healthy node does not tick ------------------------------------------------------------------

def test_healthy_node_looks_only_when_usage_changes(tmp_path, monkeypatch):
    looks: list[float] = []
    real = EvictionManager._synchronize

    def spy(self):
        looks.append(self.kl.kernel.now)
        return (yield from real(self))

    monkeypatch.setattr(EvictionManager, "_synchronize", spy)
    r = run_text(tmp_path, scenario("1.34", "1h", "{}", """
    - apiVersion: v1
      kind: Pod
      metadata: {name: app, annotations: {podlife/behavior: "app: {memory: 100Mi}"}}
      spec:
        containers: [{name: app, image: app}]
""", """
    - {at: 600.5s, fault: {type: MemoryUsage, node: node-1, value: 2Gi, for: 10m}}
"""))
    # at start (0 s); the container's 100Mi at 0.1 s → the next tick, 10 s; the fault at 600.5 s → 610 s; its
    # heal at 1200.5 s → 1210 s. Nothing met, nothing held: no other look in the hour
    assert looks == [0.0, 10.0, 610.0, 1210.0]
    assert r.end == 3600.0


def test_restarted_kubelet_does_not_start_an_evicted_pod_again(tmp_path):
    r = run_text(tmp_path, scenario("1.34", "90s", "{evictionHard: {memory.available: 500Mi}}", HARD_POD, """
    - {at: 35s, fault: {type: MemoryUsage, node: node-1, value: 7800Mi, for: 10s}}
    - {at: 60s, fault: {type: KubeletRestart, node: node-1}}
"""))
    # evicted at 40 s; the new kubelet (60 s) sees a pod terminal in the API whose containers have all stopped:
    # it records it terminated and never starts it again (pod_workers.go UpdatePod, issue #105523)
    assert [x["t"] for x in records(r, "runtime", object="Pod/default/app", op="start")] == [0.1]
    assert pod(r, "app")["status"]["phase"] in ("Failed", "Succeeded")

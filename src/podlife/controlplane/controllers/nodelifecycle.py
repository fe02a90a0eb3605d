"""The node lifecycle controller: pkg/controller/nodelifecycle/node_lifecycle_controller.go.

Upstream polls. Every nodeMonitorPeriod (5 s, on a grid from the controller's start) ``monitorNodeHealth`` looks
at every node: a new Lease renewTime or a new Ready ``lastHeartbeatTime`` moves the node's probe timestamp to
the time of that look; a node whose probe is more than nodeMonitorGracePeriod old gets Ready, MemoryPressure,
DiskPressure and PIDPressure set to Unknown ("NodeStatusUnknown", "Kubelet stopped posting node status."), a
NodeNotReady event, and its pods' Ready condition False (MarkPodsNotReady). A node whose Ready condition, as
the pass found it, is False or Unknown is queued per zone for the NoExecute taint not-ready / unreachable; the
queues are drained by a rate limiter (doNoExecuteTaintingPass, every 100 ms) whose rate depends on the zone's
state (Normal, PartialDisruption, FullDisruption; all zones fully disrupted = "master disruption mode": no
taints). Independently, every Node update maps conditions to NoSchedule taints (TaintNodesByCondition).

podlife does not tick every node every 5 s (DESIGN.md principle 6). A pass on the same 5 s grid evaluates only
the nodes for which that tick could change something:

- a Node watch event (any write: kubelet status, taints, labels, additions, deletions): the next tick;
- the kubelet side telling that Lease renewals stopped or resumed (NodeStatus.renewals_changed): the next tick;
- a node whose heartbeats are not renewing: the first tick at which the grace period is exceeded.

For a node the polling controller would have looked at in between, that look only moved the probe timestamp to
the tick at which it first saw the newest renewTime; the evaluation computes that tick (the renewTime rounded
up to the grid), so the node's probe, and everything that follows from it, is the polling controller's
(tests/test_nodelifecycle.py runs both and compares the traces). A healthy node costs nothing: its kubelet's
renewals are computed, and ``renewing()`` says they go on.

Two timing facts worth knowing when reading a trace: the pass that sets a node Unknown queues its NoExecute
taint only at the next pass (processTaintBaseEviction looks at the Ready condition as the pass found it), and a
pass at tick t runs after every other event at t (``late_call_at``): it sees the writes made at t.
"""

from __future__ import annotations

import heapq
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import simpy

from podlife.api import metatime
from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, get_condition
from podlife.api.store import ADDED, DELETED, Store
from podlife.config import ControllerManagerConfiguration
from podlife.controlplane.controllers.controller_utils import (
    index_pod_by_node,
    pods_on_node,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "node-controller"   # the event source and API client of the controller

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
NOT_READY_TAINT = {"key": TAINT_NOT_READY, "effect": "NoExecute"}       # NotReadyTaintTemplate
UNREACHABLE_TAINT = {"key": TAINT_UNREACHABLE, "effect": "NoExecute"}   # UnreachableTaintTemplate

# nodeConditionToTaintKeyStatusMap (NoSchedule taints, doNoScheduleTaintingPass)
CONDITION_TAINTS: dict[str, dict[str, str]] = {
    "Ready": {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
CONDITION_TAINT_KEYS = frozenset(k for m in CONDITION_TAINTS.values() for k in m.values())
UNKNOWN_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")  # NetworkUnavailable is left alone

NODE_EVICTION_PERIOD = 0.1   # scheduler.NodeEvictionPeriod: how often doNoExecuteTaintingPass runs
NO_CONDITION_RETRY = 0.05    # the tainting pass retries a node without Ready condition after 50 ms
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"   # labelNodeDisruptionExclusion

INITIAL, NORMAL, FULL, PARTIAL = "Initial", "Normal", "FullDisruption", "PartialDisruption"


LATE = 2   # SimPy priority after NORMAL (1): see late_call_at


def late_call_at(kernel: Kernel, t: float, fn: Callable[[], Any]) -> simpy.Event:
    """Run ``fn`` at ``t`` after everything else that happens at ``t`` (writes and the watch deliveries they
    cause are NORMAL-priority events). A controller's periodic pass at t thus sees every write made at t, as a
    convention for what upstream leaves to goroutine timing. Cancel with ``kernel.cancel``."""
    ev = simpy.Event(kernel)
    ev._ok = True
    ev._value = None
    ev.callbacks.append(kernel._reap)
    ev.callbacks.append(lambda _ev: None if getattr(_ev, "cancelled", False) else fn())
    kernel.schedule(ev, priority=LATE, delay=max(t - kernel.now, 0.0))
    return ev


def _f32(x: float) -> float:
    """Go float32 arithmetic for the zone threshold comparison."""
    return struct.unpack("f", struct.pack("f", x))[0]


def zone_key(node: Obj) -> str:
    """k8s.io/component-helpers/node/topology GetZoneKey: "" when neither region nor zone is set."""
    labels = node["metadata"].get("labels") or {}
    beta_z, beta_r = "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"
    zone = labels[beta_z] if beta_z in labels else labels.get("topology.kubernetes.io/zone", "")
    region = labels[beta_r] if beta_r in labels else labels.get("topology.kubernetes.io/region", "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


def taint_exists(taints: list[Obj] | None, taint: Obj) -> bool:
    """pkg/util/taints TaintExists: same key and effect (Taint.MatchTaint)."""
    return any(t.get("key") == taint["key"] and t.get("effect") == taint["effect"] for t in taints or ())


def _taints(node: Obj) -> list[Obj]:
    return list(node.get("spec", {}).get("taints") or ())


def add_or_update_taint(taints: list[Obj], taint: Obj) -> tuple[list[Obj], bool]:
    """pkg/util/taints AddOrUpdateTaint: replace the taint with the same key and effect unless equal (timeAdded
    included), else append."""
    out: list[Obj] = []
    updated = False
    for t in taints:
        if t.get("key") == taint["key"] and t.get("effect") == taint["effect"]:
            if t == taint:
                return taints, False
            out.append(taint)
            updated = True
            continue
        out.append(t)
    if not updated:
        out.append(taint)
    return out, True


class HeartbeatSource(Protocol):
    """The kubelet side of a node's computed Lease renewals (podlife.kubelet.nodestatus.NodeStatus)."""

    @property
    def renew_interval(self) -> float: ...

    def renewing(self) -> bool: ...


@dataclass
class NodeHealth:
    """nodeHealthData: what the controller last observed of a node, with its own timestamps."""

    probe: float                 # probeTimestamp: when a heartbeat (status or Lease) was last seen to move
    ready_transition: float      # readyTransitionTimestamp
    status: Obj                  # the node status saved with it
    lease: float | None = None   # renewTime of the saved Lease (seconds since start); None: no Lease saved


# ---- the rate-limited taint queue: pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go ----------------

class TokenBucket:
    """client-go flowcontrol.NewTokenBucketRateLimiter(qps, burst=1) over golang.org/x/time/rate: full when
    created, refilled at qps, TryAccept takes a token when one is there."""

    def __init__(self, qps: float, now: float, burst: int = 1) -> None:
        self.qps = qps
        self.burst = burst
        self.tokens = float(burst)
        self.last = now

    def _tokens_at(self, now: float) -> float:
        return min(float(self.burst), self.tokens + max(0.0, now - self.last) * self.qps)

    def try_accept(self, now: float) -> bool:
        self.tokens = self._tokens_at(now)
        self.last = max(self.last, now)
        if self.tokens >= 1 - 1e-9:
            self.tokens -= 1
            return True
        return False

    def next_token(self, now: float) -> float:
        t = self._tokens_at(now)
        return now if t >= 1 - 1e-9 else now + (1 - t) / self.qps


class NeverLimiter:
    """flowcontrol.NewFakeNeverRateLimiter: what SwapLimiter(0) installs."""

    qps = 0.0

    def try_accept(self, now: float) -> bool:
        return False

    def next_token(self, now: float) -> float:
        return math.inf


class RateLimitedTimedQueue:
    """A unique queue ordered by processAt (ties by name: upstream's order among equal times is that of
    goroutines), drained through a rate limiter."""

    def __init__(self, limiter: TokenBucket | NeverLimiter) -> None:
        self.limiter = limiter
        self._set: set[str] = set()          # values added and not Removed (RemoveFromQueue keeps them)
        self._at: dict[str, float] = {}      # values in the heap → processAt
        self._heap: list[tuple[float, str]] = []

    def __len__(self) -> int:
        return len(self._at)

    def add(self, name: str, now: float) -> bool:
        if name in self._set:
            return False
        self._set.add(name)
        self._at[name] = now
        heapq.heappush(self._heap, (now, name))
        return True

    def remove(self, name: str) -> bool:
        """Remove: out of the queue and of the set, so it can be added again."""
        if name not in self._set:
            return False
        self._set.discard(name)
        self._at.pop(name, None)
        return True

    def remove_from_queue(self, name: str) -> bool:
        if name not in self._set:
            return False
        return self._at.pop(name, None) is not None

    def _replace(self, name: str, at: float) -> None:
        self._at[name] = at
        heapq.heappush(self._heap, (at, name))

    def head(self) -> tuple[float, str] | None:
        while self._heap:
            at, name = self._heap[0]
            if self._at.get(name) == at:
                return at, name
            heapq.heappop(self._heap)
        return None

    def try_(self, fn: Callable[[str], tuple[bool, float]], now: float) -> None:
        """Try: while the limiter gives a token, process the head if it is due."""
        while True:
            h = self.head()
            if h is None or not self.limiter.try_accept(now):
                return
            at, name = h
            if now < at - 1e-9:
                return
            ok, wait = fn(name)
            if not ok:
                self._replace(name, now + wait + 1e-9)
            else:
                self.remove_from_queue(name)

    def swap_limiter(self, qps: float, now: float) -> None:
        """SwapLimiter: a new bucket, drained if the old one had no token left (burst 1)."""
        if _f32(self.limiter.qps) == _f32(qps):
            return
        if qps <= 0:
            self.limiter = NeverLimiter()
            return
        new = TokenBucket(qps, now)
        if not self.limiter.try_accept(now):
            new.try_accept(now)
        self.limiter = new


# ---- the controller ------------------------------------------------------------------------------------------

class NodeLifecycleController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, config: ControllerManagerConfiguration,
                 profile: Profile, heartbeats: Callable[[str], HeartbeatSource | None] | None = None) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.period = float(config.nodeMonitorPeriod)
        self.grace = float(config.nodeMonitorGracePeriod if config.nodeMonitorGracePeriod is not None
                           else profile.node_monitor_grace_period)
        self.startup_grace = float(config.nodeStartupGracePeriod)
        self.eviction_qps = float(config.nodeEvictionRate)
        self.secondary_qps = float(config.secondaryNodeEvictionRate)
        self.large_cluster = int(config.largeClusterSizeThreshold)
        self.unhealthy_threshold = float(config.unhealthyZoneThreshold)
        # the kubelet side of each node's computed heartbeats, when there is one; without it every node is
        # checked at the ticks where its grace period could run out, as the polling controller would find it
        self.heartbeats = heartbeats
        self.events = EventRecorder(store, NAME)
        self.health: dict[str, NodeHealth] = {}        # nodeHealthMap
        self.known: dict[str, str] = {}                # knownNodeSet: name → uid
        self.zone_states: dict[str, str] = {}
        self.tainters: dict[str, RateLimitedTimedQueue] = {}   # zoneNoExecuteTainter
        self.pods_by_node: dict[str, dict[tuple[str, str], Obj]] = {}
        self._views: dict[str, tuple[str, bool]] = {}  # node → (zone, Ready is True), for the zone states
        self._counts: dict[str, list[int]] = {}        # zone → [ready, not ready]
        self._due: list[tuple[float, str]] = []        # (tick, node) evaluations to run
        self._due_keys: set[tuple[float, str]] = set()
        self._timer: Any = None
        self._timer_at = math.inf
        self._last_tick = -math.inf
        self._taint_timer: Any = None
        self._taint_at = math.inf

    def start(self) -> None:
        self.store.watch("Node", self._on_node)
        self.store.watch("Pod", self._on_pod)
        if self.heartbeats is not None:
            self.store.lease_observers.append(self._on_renewals_changed)
        # the informers' initial list; monitorNodeHealth runs at once, then every period (wait.Until)
        for pod in self.store.list("Pod"):
            self._index_pod(pod, None)
        for node in self.store.list("Node"):
            self._due_at(node["metadata"]["name"], self._next_tick(self.kernel.now))

    # ---- time ----------------------------------------------------------------------------------------

    def _tick(self, k: int) -> float:
        return round(k * self.period, 9)

    def _ceil_tick(self, t: float) -> float:
        """The first monitor tick at or after ``t``: when a polling pass first sees something written at t."""
        return self._tick(math.ceil(t / self.period - 1e-9))

    def _next_tick(self, t: float) -> float:
        """The first tick at or after ``t`` whose pass has not run yet."""
        tick = self._ceil_tick(t)
        if tick <= self._last_tick + 1e-9:
            tick = self._tick(round(self._last_tick / self.period) + 1)
        return tick

    def _parse(self, ts: str | None) -> float | None:
        if not ts:
            return None
        fmt = metatime.MICROS if "." in ts else metatime.SECONDS
        when = metatime.parse(ts, fmt).replace(tzinfo=self.trace.start_time.tzinfo)
        return (when - self.trace.start_time).total_seconds()

    # ---- informers -----------------------------------------------------------------------------------

    def _on_node(self, type_: str, node: Obj, old: Obj | None) -> None:
        name = node["metadata"]["name"]
        if type_ != DELETED:
            self._no_schedule_tainting_pass(name)
        self._due_at(name, self._next_tick(self.kernel.now))

    def _on_renewals_changed(self, name: str) -> None:
        if self.store.try_get("Node", None, name) is not None or name in self.known:
            self._due_at(name, self._next_tick(self.kernel.now))

    def _index_pod(self, pod: Obj, old: Obj | None) -> None:
        index_pod_by_node(self.pods_by_node, pod, old)

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            node = pod["spec"].get("nodeName")
            if node:
                self.pods_by_node.get(node, {}).pop((pod["metadata"]["namespace"], pod["metadata"]["name"]), None)
            return
        self._index_pod(pod, old if type_ != ADDED else None)
        # podUpdated: a pod newly assigned to a node is marked not ready if that node is not Ready (processPod)
        node = pod["spec"].get("nodeName")
        was = (old or {}).get("spec", {}).get("nodeName") if type_ != ADDED else None
        if node and node != was:
            self._process_pod(pod)

    def _pods_on(self, node: str) -> list[Obj]:
        return pods_on_node(self.pods_by_node, node)

    def _process_pod(self, pod: Obj) -> None:
        node_name = pod["spec"]["nodeName"]
        h = self.health.get(node_name)
        if h is None or self.store.try_get("Node", None, node_name) is None:
            return
        ready = get_condition({"status": h.status}, "Ready")
        if ready is None:
            return
        if ready.get("status") != "True":
            self._mark_pods_not_ready([pod], node_name)

    # ---- scheduling of passes ------------------------------------------------------------------------

    def _due_at(self, name: str, tick: float) -> None:
        key = (tick, name)
        if key in self._due_keys:
            return
        self._due_keys.add(key)
        heapq.heappush(self._due, key)
        self._arm()

    def _arm(self) -> None:
        if not self._due:
            return
        tick = self._due[0][0]
        if tick < self._timer_at - 1e-9:
            self.kernel.cancel(self._timer)
            self._timer_at = tick
            self._timer = late_call_at(self.kernel, tick, lambda: self._run_pass(tick))

    def _run_pass(self, tick: float) -> None:
        self._timer = None
        self._timer_at = math.inf
        names: set[str] = set()
        while self._due and self._due[0][0] <= tick + 1e-9:
            key = heapq.heappop(self._due)
            self._due_keys.discard(key)
            names.add(key[1])
        self._last_tick = tick
        if names:
            self._monitor_node_health(tick, sorted(names))
        self._arm()

    # ---- monitorNodeHealth ---------------------------------------------------------------------------

    def _monitor_node_health(self, now: float, names: list[str]) -> None:
        nodes = {n: self.store.try_get("Node", None, n) for n in names}
        added, deleted, new_zone = [], [], []
        for n in names:   # classifyNodes
            node = nodes[n]
            if node is None:
                if n in self.known:
                    deleted.append(n)
            elif n not in self.known:
                added.append(node)
            elif zone_key(node) not in self.zone_states:
                new_zone.append(node)
        for node in new_zone:
            self._add_evictor_for_new_zone(node, now)
        for node in added:
            name = node["metadata"]["name"]
            self._record_node_event(name, node["metadata"].get("uid", ""), "RegisteredNode",
                                    f"Registered Node {name} in Controller")
            self.known[name] = node["metadata"].get("uid", "")
            self._add_evictor_for_new_zone(node, now)
            self._mark_node_as_reachable(node)
        for name in deleted:
            self._record_node_event(name, self.known[name], "RemovingNode", f"Removing Node {name} from Controller")
            del self.known[name]
            self._set_view(name, None)
        for n in names:
            node = nodes[n]
            if node is not None:
                self._update_node(node, now)   # the stored node: read, copied only to be changed
        self._handle_disruption(now)
        self._tainting_pass()

    def _update_node(self, node: Obj, now: float) -> None:
        """monitorNodeHealth's updateNodeFunc for one node."""
        name = node["metadata"]["name"]
        try:
            observed, current, node = self._try_update_node_health(node, now)
        except ApiError:
            return  # "Update health of Node from Controller error, Skipping - no pods will be evicted"
        labels = node["metadata"].get("labels") or {}
        self._set_view(name, None if EXCLUDE_DISRUPTION in labels else
                       (zone_key(node), current is not None and current.get("status") == "True"))
        if current is not None:
            # (the pods as listed here: the index changes only when watch events are handed over, after this pass)
            self._process_taint_based_eviction(node, observed, now)
            if current.get("status") != "True" and observed.get("status") == "True":
                # RecordNodeStatusChange: once, when the controller itself turned the node not ready
                self.events.event(self._node_ref(name, node["metadata"].get("uid", "")), "Normal", "NodeNotReady",
                                  f"Node {name} status is now: NodeNotReady")
                self._mark_pods_not_ready(self._pods_on(name), name)
        self._schedule_checks(name, now)

    def _try_update_node_health(self, node: Obj, now: float) -> tuple[Obj, Obj | None, Obj]:
        """tryUpdateNodeHealth: returns the Ready condition as found (observed) and as left (current), and the
        node as left (``node`` is the stored one, never changed: a copy is, when conditions turn Unknown)."""
        name = node["metadata"]["name"]
        # the saved status is the stored one (stored objects are never changed in place), not a copy of it
        status = node.get("status") or {}
        h = self.health.get(name)
        ready = get_condition(node, "Ready")
        created_ts = node["metadata"].get("creationTimestamp")
        created = self._parse(created_ts) or 0.0
        if ready is None:
            # the kubelet never posted status: a fake Unknown condition from the creation time, startup grace
            observed: Obj = {"type": "Ready", "status": "Unknown", "lastHeartbeatTime": created_ts,
                             "lastTransitionTime": created_ts}
            grace = self.startup_grace
            if h is not None:
                h.status = status
            else:
                h = NodeHealth(created, created, status)
        else:
            observed = dict(ready)
            grace = self.grace
        saved = get_condition({"status": h.status}, "Ready") if h is not None else None
        saved_lease = h.lease if h is not None else None
        if h is None:
            h = NodeHealth(now, now, status)  # "Missing timestamp for Node. Assuming now as a timestamp"
        elif saved is None and ready is not None:
            h = NodeHealth(now, now, status)  # "Creating timestamp entry for newly observed Node"
        elif saved is not None and ready is None:
            h = NodeHealth(now, now, status)  # "ReadyCondition was removed from Status of Node"
        elif saved is not None and ready is not None and \
                saved.get("lastHeartbeatTime") != ready.get("lastHeartbeatTime"):
            transition = now if saved.get("lastTransitionTime") != ready.get("lastTransitionTime") \
                else h.ready_transition
            h = NodeHealth(now, transition, status)
        # "Always update the probe time if node lease is renewed." Read now, the Lease is brought up to date by
        # its materializer; a polling pass would have seen its renewTime first at the tick at or after it
        lease_obj = self.store.try_get("Lease", "kube-node-lease", name)
        observed_lease: float | None = None
        if lease_obj is not None:
            r = self._parse((lease_obj.get("spec") or {}).get("renewTime"))
            observed_lease = -math.inf if r is None else r
            if saved_lease is None or saved_lease < observed_lease:
                h.lease = observed_lease
                seen = now if saved_lease is None else min(now, self._ceil_tick(observed_lease))
                h.probe = max(h.probe, seen)
        self.health[name] = h
        current = get_condition(node, "Ready")
        if now > h.probe + grace + 1e-9 and any((c := get_condition(node, ctype)) is None or
                                                c.get("status") != "Unknown" for ctype in UNKNOWN_CONDITIONS):
            # conditions to turn Unknown (when all are, nothing changes and nothing is written): on a copy, as
            # nodeHealth.status and the store keep the node as it was
            node = clone(node)
            status = node.setdefault("status", {})
            ts = self.trace.timestamp(now)
            conds = status.setdefault("conditions", [])
            for ctype in UNKNOWN_CONDITIONS:
                c = get_condition(node, ctype)
                if c is None:
                    conds.append({"type": ctype, "status": "Unknown", "lastHeartbeatTime": created_ts,
                                  "lastTransitionTime": ts, "reason": "NodeStatusNeverUpdated",
                                  "message": "Kubelet never posted node status."})
                elif c.get("status") != "Unknown":
                    c.update(status="Unknown", reason="NodeStatusUnknown",
                             message="Kubelet stopped posting node status.", lastTransitionTime=ts)
            current = get_condition(node, "Ready")
            if current != observed:
                write = clone(node)
                write["metadata"].pop("resourceVersion", None)
                self.store.update(write, by=NAME, subresource="status")
                self.health[name] = NodeHealth(h.probe, now, clone(status), observed_lease)
        return observed, current, node

    def _schedule_checks(self, name: str, now: float) -> None:
        """When must this node be looked at again, if nothing else happens to it?"""
        h = self.health.get(name)
        node = self.store.try_get("Node", None, name)
        if h is None or node is None:
            return
        lease = self.store.try_get("Lease", "kube-node-lease", name)
        if h.lease is None and lease is not None:
            # the struct was replaced without the Lease (a status heartbeat moved but the renewTime did not):
            # the next pass takes the Lease as new and sets the probe to its own time
            self._due_at(name, self._tick(round(now / self.period) + 1))
        ready = get_condition(node, "Ready")
        if ready is not None and ready.get("status") == "Unknown":
            return  # past the grace a pass would write nothing more
        hb = self.heartbeats(name) if self.heartbeats is not None else None
        if hb is not None and lease is not None and hb.renewing():
            gap = math.ceil(hb.renew_interval / self.period - 1e-9) * self.period - self.period
            if gap <= self.grace + 1e-9:
                return  # renewals keep the probe within the grace; renewals_changed tells when they stop
        grace = self.startup_grace if ready is None else self.grace
        tick = self._tick(math.floor((h.probe + grace) / self.period + 1e-9) + 1)
        self._due_at(name, max(tick, self._tick(round(now / self.period) + 1)))

    # ---- taints ----------------------------------------------------------------------------------------

    def _process_taint_based_eviction(self, node: Obj, observed: Obj, now: float) -> None:
        status = observed.get("status")
        taints = _taints(node)
        if status == "False":
            if taint_exists(taints, UNREACHABLE_TAINT):
                self._swap_taints(node, [NOT_READY_TAINT], [UNREACHABLE_TAINT])
            else:
                self._mark_node_for_tainting(node, "False", now)
        elif status == "Unknown":
            if taint_exists(taints, NOT_READY_TAINT):
                self._swap_taints(node, [UNREACHABLE_TAINT], [NOT_READY_TAINT])
            else:
                self._mark_node_for_tainting(node, "Unknown", now)
        elif status == "True":
            self._mark_node_as_reachable(node)

    def _add_evictor_for_new_zone(self, node: Obj, now: float) -> None:
        zone = zone_key(node)
        if zone not in self.zone_states:
            self.zone_states[zone] = INITIAL
            self.tainters[zone] = RateLimitedTimedQueue(TokenBucket(self.eviction_qps, now))

    def _tainter(self, node: Obj) -> RateLimitedTimedQueue:
        zone = zone_key(node)
        if zone not in self.tainters:
            self._add_evictor_for_new_zone(node, self.kernel.now)
        return self.tainters[zone]

    def _mark_node_for_tainting(self, node: Obj, status: str, now: float) -> bool:
        q = self._tainter(node)
        name = node["metadata"]["name"]
        taints = _taints(node)
        if status == "False" and not taint_exists(taints, NOT_READY_TAINT):
            q.remove(name)
        if status == "Unknown" and not taint_exists(taints, UNREACHABLE_TAINT):
            q.remove(name)
        return q.add(name, now)

    def _mark_node_as_reachable(self, node: Obj) -> bool:
        self._remove_taints(node, [UNREACHABLE_TAINT])
        self._remove_taints(node, [NOT_READY_TAINT])
        return self._tainter(node).remove(node["metadata"]["name"])

    def _write_taints(self, name: str, change: Callable[[list[Obj]], tuple[list[Obj], bool]]) -> bool:
        """controller.AddOrUpdateTaintOnNode / RemoveTaintOffNode: get the node, change its taints, patch."""
        fresh = self.store.try_get("Node", None, name)
        if fresh is None:
            return False
        taints, changed = change(_taints(fresh))
        if not changed:
            return True
        new = clone(fresh)
        new["metadata"].pop("resourceVersion", None)
        if taints:
            new.setdefault("spec", {})["taints"] = taints
        else:
            new.get("spec", {}).pop("taints", None)
        try:
            self.store.update(new, by=NAME, verb="patch")
        except ApiError:
            return False
        return True

    def _add_taints(self, name: str, taints: list[Obj]) -> bool:
        ts = self.trace.timestamp()
        stamped = [{"key": t["key"], "effect": t["effect"], "timeAdded": ts} for t in taints]

        def change(cur: list[Obj]) -> tuple[list[Obj], bool]:
            any_changed = False
            for t in stamped:
                cur, ok = add_or_update_taint(cur, t)
                any_changed = any_changed or ok
            return cur, any_changed
        return self._write_taints(name, change) if taints else True

    def _remove_taints(self, node: Obj, taints: list[Obj]) -> bool:
        # short circuit on the caller's copy of the node, to limit API calls
        if not any(taint_exists(_taints(node), t) for t in taints):
            return True

        def change(cur: list[Obj]) -> tuple[list[Obj], bool]:
            out = [x for x in cur if not taint_exists(taints, x)]
            return out, len(out) != len(cur)
        return self._write_taints(node["metadata"]["name"], change)

    def _swap_taints(self, node: Obj, add: list[Obj], remove: list[Obj]) -> bool:
        """controllerutil.SwapNodeControllerTaint: add (timeAdded now), then remove."""
        if not self._add_taints(node["metadata"]["name"], add):
            return False
        return self._remove_taints(node, remove)

    def _no_schedule_tainting_pass(self, name: str) -> None:
        """doNoScheduleTaintingPass (TaintNodesByCondition), on every Node add and update."""
        node = self.store.try_get("Node", None, name)
        if node is None:
            return
        want: list[Obj] = []
        for c in node.get("status", {}).get("conditions") or ():
            key = CONDITION_TAINTS.get(c.get("type", ""), {}).get(c.get("status", ""))
            if key:
                want.append({"key": key, "effect": "NoSchedule"})
        if node.get("spec", {}).get("unschedulable"):
            want.append({"key": TAINT_UNSCHEDULABLE, "effect": "NoSchedule"})
        have = [t for t in _taints(node) if t.get("effect") == "NoSchedule" and
                (t.get("key") == TAINT_UNSCHEDULABLE or t.get("key") in CONDITION_TAINT_KEYS)]
        to_add = [t for t in want if not taint_exists(have, t)]
        to_del = [t for t in have if not taint_exists(want, t)]
        if to_add or to_del:
            self._swap_taints(node, to_add, to_del)

    def _tainting_pass(self) -> None:
        """doNoExecuteTaintingPass: every zone's queue, as far as its limiter allows."""
        now = self.kernel.now
        for zone in sorted(self.tainters):
            self.tainters[zone].try_(self._taint_node, now)
        self._schedule_tainting(now)

    def _schedule_tainting(self, now: float) -> None:
        at = math.inf
        for q in self.tainters.values():
            if len(q):
                at = min(at, q.limiter.next_token(now))
        if at == math.inf:
            return
        # the pass runs every 100 ms from the controller's start: the first one once a token is there
        at = round(math.ceil(at / NODE_EVICTION_PERIOD - 1e-6) * NODE_EVICTION_PERIOD, 6)
        if at <= now + 1e-9:
            at = round(now + NODE_EVICTION_PERIOD, 6)
        if self._taint_timer is not None and now < self._taint_at <= at + 1e-9:
            return
        self.kernel.cancel(self._taint_timer)
        self._taint_at = at
        self._taint_timer = late_call_at(self.kernel, at, self._taint_timer_fired)

    def _taint_timer_fired(self) -> None:
        self._taint_timer = None
        self._taint_at = math.inf
        self._tainting_pass()

    def _taint_node(self, name: str) -> tuple[bool, float]:
        node = self.store.try_get("Node", None, name)
        if node is None:
            return True, 0.0  # "Node no longer present in nodeLister"
        ready = get_condition(node, "Ready")
        if ready is None:
            return False, NO_CONDITION_RETRY
        # "unreachable" and "not ready" are mutually exclusive, as Ready's status is
        if ready.get("status") == "False":
            return self._swap_taints(node, [NOT_READY_TAINT], [UNREACHABLE_TAINT]), 0.0
        if ready.get("status") == "Unknown":
            return self._swap_taints(node, [UNREACHABLE_TAINT], [NOT_READY_TAINT]), 0.0
        return True, 0.0  # "Node was in a taint queue, but it's ready now. Ignoring taint request"

    # ---- pods --------------------------------------------------------------------------------------------

    def _mark_pods_not_ready(self, pods: list[Obj], node_name: str) -> None:
        """controllerutil.MarkPodsNotReady: each pod's Ready condition to False (transition time now)."""
        for listed in pods:
            if listed["spec"].get("nodeName") != node_name:
                continue
            md = listed["metadata"]
            pod = self.store.try_get("Pod", md["namespace"], md["name"])
            if pod is None or pod["spec"].get("nodeName") != node_name:
                continue
            ready = get_condition(pod, "Ready")
            if ready is None or ready.get("status") == "False":
                continue  # UpdatePodCondition: nothing changed
            # the stored pod with its own metadata (no resourceVersion), status and Ready condition; the rest is
            # the stored objects, as the kubelet's status writes send them
            md = dict(pod["metadata"])
            md.pop("resourceVersion", None)
            conds = list(pod["status"]["conditions"])
            for i, c in enumerate(conds):
                if c.get("type") == "Ready":
                    conds[i] = {**c, "status": "False", "lastTransitionTime": self.trace.timestamp()}
                    break
            new = {**pod, "metadata": md, "status": {**pod["status"], "conditions": conds}}
            try:
                updated = self.store.update(new, by=NAME, subresource="status")
            except ApiError as e:
                if e.code == 404:
                    continue
                updated = pod
            if self.profile.pod_not_ready_event:
                self.events.event(updated, "Warning", "NodeNotReady", "Node is not ready")

    # ---- zones -------------------------------------------------------------------------------------------

    def _set_view(self, name: str, view: tuple[str, bool] | None) -> None:
        old = self._views.get(name)
        if old == view:
            return
        if old is not None:
            c = self._counts[old[0]]
            c[0 if old[1] else 1] -= 1
            if c == [0, 0]:
                del self._counts[old[0]]
            del self._views[name]
        if view is not None:
            self._counts.setdefault(view[0], [0, 0])[0 if view[1] else 1] += 1
            self._views[name] = view

    def _zone_state(self, ready: int, not_ready: int) -> str:
        """ComputeZoneState."""
        if ready == 0 and not_ready > 0:
            return FULL
        if not_ready > 2 and _f32(_f32(not_ready) / _f32(not_ready + ready)) >= _f32(self.unhealthy_threshold):
            return PARTIAL
        return NORMAL

    def _set_limiter(self, zone: str, size: int, state: str, now: float) -> None:
        q = self.tainters[zone]
        if state == NORMAL:
            q.swap_limiter(self.eviction_qps, now)
        elif state == PARTIAL:   # ReducedQPSFunc
            q.swap_limiter(self.secondary_qps if size > self.large_cluster else 0.0, now)
        elif state == FULL:      # HealthyQPSFunc
            q.swap_limiter(self.eviction_qps, now)

    def _handle_disruption(self, now: float) -> None:
        new_states: dict[str, str] = {}
        all_are_full = True
        for zone in sorted(self._counts):
            ready, not_ready = self._counts[zone]
            state = self._zone_state(ready, not_ready)
            if state != FULL:
                all_are_full = False
            new_states[zone] = state
            if zone not in self.zone_states:
                self.zone_states[zone] = INITIAL   # "Setting initial state for unseen zone"
        for zone in [z for z in self.zone_states if z not in self._counts]:
            del self.zone_states[zone]
        all_were_full = all(v == FULL for v in self.zone_states.values())
        if all_are_full and all_were_full:
            return
        if all_are_full:
            # "Controller detected that all Nodes are not-Ready. Entering master disruption mode"
            for name in sorted(self.known):
                node = self.store.try_get("Node", None, name)
                if node is not None:
                    self._mark_node_as_reachable(node)
            for zone in sorted(self.zone_states):
                self.tainters[zone].swap_limiter(0.0, now)
            for zone in self.zone_states:
                self.zone_states[zone] = FULL
            return
        if all_were_full:
            # "Controller detected that some Nodes are Ready. Exiting master disruption mode": probe timestamps
            # of every node start again from now
            for name in sorted(self.known):
                h = self.health.get(name)
                if h is not None:
                    h.probe = now
                    h.ready_transition = now
            for zone in sorted(self.zone_states):
                self._set_limiter(zone, sum(self._counts.get(zone, [0, 0])), new_states[zone], now)
                self.zone_states[zone] = new_states[zone]
            for name in sorted(self.known):
                self._schedule_checks(name, now)
            return
        for zone in sorted(self.zone_states):
            state = new_states[zone]
            if self.zone_states[zone] == state:
                continue
            # "Controller detected that zone is now in new state"
            self._set_limiter(zone, sum(self._counts.get(zone, [0, 0])), state, now)
            self.zone_states[zone] = state

    # ---- events ------------------------------------------------------------------------------------------

    @staticmethod
    def _node_ref(name: str, uid: str) -> Obj:
        md: dict[str, Any] = {"name": name}
        if uid:
            md["uid"] = uid
        return {"kind": "Node", "apiVersion": "v1", "metadata": md}

    def _record_node_event(self, name: str, uid: str, reason: str, message: str) -> None:
        """controllerutil.RecordNodeEvent."""
        self.events.event(self._node_ref(name, uid), "Normal", reason, f"Node {name} event: {message}")

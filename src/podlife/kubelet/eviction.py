"""The kubelet's eviction manager: pkg/kubelet/eviction (eviction_manager.go, helpers.go, api/types.go).

Every evictionMonitoringPeriod (10 s) upstream's ``synchronize`` observes the node's signals, notes which
thresholds are met, turns them into node conditions (held for evictionPressureTransitionPeriod after the last
time they were met), and once a threshold has been met for its grace period (0 for a hard one) reclaims
node-level resources, then evicts at most one pod, ranked for the starved resource. It waits for an evicted
pod to be cleaned up (polled every 1 s, at most 30 s) and then looks again at once.

Signals (``observations``):

- memory.available = the node's memory capacity - its working set, where the working set is the memory the
  node uses outside its pods (set by the MemoryUsage fault) plus the working set of every running container
  (``podlife/behavior`` ``memory``);
- nodefs.available and imagefs.available = ephemeral-storage capacity - the disk in use (DiskUsage fault); one
  filesystem (no dedicated imagefs), so both read the same numbers and pods contribute nothing;
- nodefs.inodesFree / imagefs.inodesFree: one inode per 16 KiB of ephemeral-storage, none used;
- pid.available: pid_max (4194304) - one process per running container.

Cost (DESIGN principle 6): the signals only change when usage changes (a fault, a container with memory
starting or ending), so a healthy node runs no loop at all: a change wakes the manager, which looks at the next
instant of upstream's 10 s grid (counted from its start, or from the end of its last eviction round, as
upstream's ``time.Sleep`` after each look would place it). While a threshold is met or a pressure condition is
held, the loop ticks every 10 s as upstream's does.

Choices where upstream's order is a Go map iteration (random): thresholds are taken hard before soft, in the
order memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree,
pid.available; pods that rank equal keep the order in which the kubelet first saw them. evictionMinimumReclaim
and the allocatableMemory.available signal (enforceNodeAllocatable) are not modelled; node-level reclaim
(container and image GC) frees nothing, since podlife does not model image or container disk usage.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Generator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cmp_to_key
from typing import TYPE_CHECKING, Any

import simpy

from podlife.api.defaults import compute_qos_class, pod_requests
from podlife.api.meta import Obj, pod_full_name
from podlife.api.quantity import BINARY_SI, Quantity, canonical, parse, to_bytes
from podlife.kubelet.logsites import Raw
from podlife.kubelet.nodeshutdown import is_critical
from podlife.kubelet.podworkers import FINISHED, SYNC, TERMINATED, KillPodOptions, PodSyncStatus
from podlife.kubelet.status.manager import VOLUME_CLEANUP_DELAY

if TYPE_CHECKING:
    from podlife.config import KubeletConfiguration
    from podlife.kubelet.kubelet import Kubelet

Gen = Generator[simpy.Event, Any, Any]

# pkg/kubelet/eviction/api/types.go
MEMORY_AVAILABLE = "memory.available"
NODEFS_AVAILABLE = "nodefs.available"
NODEFS_INODES_FREE = "nodefs.inodesFree"
IMAGEFS_AVAILABLE = "imagefs.available"
IMAGEFS_INODES_FREE = "imagefs.inodesFree"
PID_AVAILABLE = "pid.available"
SIGNALS = (MEMORY_AVAILABLE, NODEFS_AVAILABLE, NODEFS_INODES_FREE, IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE,
           PID_AVAILABLE)

# helpers.go init(): signalToNodeCondition, signalToResource
SIGNAL_TO_CONDITION = {MEMORY_AVAILABLE: "MemoryPressure", NODEFS_AVAILABLE: "DiskPressure",
                       NODEFS_INODES_FREE: "DiskPressure", IMAGEFS_AVAILABLE: "DiskPressure",
                       IMAGEFS_INODES_FREE: "DiskPressure", PID_AVAILABLE: "PIDPressure"}
SIGNAL_TO_RESOURCE = {MEMORY_AVAILABLE: "memory", NODEFS_AVAILABLE: "ephemeral-storage",
                      NODEFS_INODES_FREE: "inodes", IMAGEFS_AVAILABLE: "ephemeral-storage",
                      IMAGEFS_INODES_FREE: "inodes", PID_AVAILABLE: "pids"}
CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")
# k8s.io/api/core/v1 well-known taints. The kubelet only posts the conditions; the node lifecycle controller
# turns them into NoSchedule taints (controlplane/controllers/nodelifecycle.py, TaintNodesByCondition)
CONDITION_TO_TAINT = {"MemoryPressure": "node.kubernetes.io/memory-pressure",
                      "DiskPressure": "node.kubernetes.io/disk-pressure",
                      "PIDPressure": "node.kubernetes.io/pid-pressure"}

REASON = "Evicted"                                   # helpers.go Reason
MONITORING_PERIOD = 10.0                             # kubelet.go evictionMonitoringPeriod
POD_CLEANUP_TIMEOUT = 30.0                           # eviction_manager.go podCleanupTimeout
POD_CLEANUP_POLL = 1.0                               # podCleanupPollFreq
KILL_TIMEOUT_MIN = 10                                # kubelet_pods.go killPodNow: minTimeout
BYTES_PER_INODE = 16384                              # mkfs.ext4's default inode ratio (podlife's assumption)
PID_MAX = 4194304                                    # /proc/sys/kernel/pid_max on 64-bit systemd hosts
EXCEEDED_GRACE_MESSAGE = "Container runtime did not kill the pod within specified grace period."


def _float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


@dataclass(frozen=True)
class Threshold:
    """evictionapi.Threshold: ``value`` as configured ("100Mi" or "10%"), ``grace`` 0 for a hard one."""

    signal: str
    value: str
    grace: float = 0.0

    @property
    def hard(self) -> bool:
        return self.grace == 0  # isHardEvictionThreshold

    def quantity(self, capacity: int) -> Fraction:
        """evictionapi.GetThresholdQuantity: the quantity, or capacity × the percentage (parsed as a float32,
        multiplied as float64, truncated to an integer, as upstream does)."""
        if self.value.endswith("%"):
            pct = _float32(_float32(float(self.value[:-1])) / 100)
            return Fraction(int(float(capacity) * pct))
        return parse(self.value).value

    def format_quantity(self, capacity: int) -> str:
        if self.value.endswith("%"):
            return str(Quantity(self.quantity(capacity), BINARY_SI))
        return canonical(self.value)


def parse_thresholds(config: KubeletConfiguration) -> list[Threshold]:
    """ParseThresholdConfig: hard thresholds, then soft ones with their grace periods; 0% and 100% are ignored
    (parseThresholdStatement)."""
    out = []
    for values, soft in ((config.evictionHard, False), (config.evictionSoft, True)):
        for signal in SIGNALS:
            v = values.get(signal)
            if v is None or v in ("0%", "100%"):
                continue
            grace = config.evictionSoftGracePeriod.get(signal, 0.0) if soft else 0.0
            out.append(Threshold(signal, str(v), float(grace)))
    return out


@dataclass
class Observation:
    """A signal's available amount and capacity."""

    available: int
    capacity: int


def _capacity(kl: Kubelet, resource: str) -> int | None:
    v = kl.node_spec.capacity.get(resource)
    return to_bytes(v) if v is not None else None


# scheduling.SystemPriorityClasses: what the Priority admission plugin writes into spec.priority
SYSTEM_PRIORITIES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


def pod_priority(pod: Obj) -> int:
    """corev1helpers.PodPriority: spec.priority, which the Priority admission plugin sets from the class (podlife
    does not model that plugin: the two system classes are resolved here, other classes count as 0)."""
    p = pod["spec"].get("priority")
    return p if p is not None else SYSTEM_PRIORITIES.get(pod["spec"].get("priorityClassName") or "", 0)


def _tolerates(tolerations: list[Obj], key: str, effect: str) -> bool:
    """TolerationsTolerateTaint / Toleration.ToleratesTaint for a taint with no value."""
    for t in tolerations or ():
        if (t.get("effect") and t["effect"] != effect) or (t.get("key") and t["key"] != key):
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" or (op == "Equal" and not t.get("value")):
            return True
    return False


def _cmp_bool(a: bool, b: bool) -> int:
    """helpers.go cmpBool: true before false."""
    return 0 if a == b else (-1 if not b else 1)


@dataclass
class _PodStats:
    """A pod's memory as cadvisor reports it."""

    found: bool                           # the pod has a cgroup (a sandbox): cadvisor reports it
    memory: int = 0                       # working set of its running containers
    containers: dict[str, int] = field(default_factory=dict)   # running container → working set
    processes: int = 0


class EvictionManager:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.thresholds = parse_thresholds(kubelet.config)
        self.node_conditions: list[str] = []                       # managerImpl.nodeConditions
        self.thresholds_first_observed: dict[Threshold, float] = {}
        self.node_conditions_last_observed: dict[str, float] = {}
        self.thresholds_met: list[Threshold] = []
        self.started = False
        self._anchor = 0.0                 # upstream's loop sleeps monitoringInterval from here
        self._idle: simpy.Event | None = None
        self._pod_ws: dict[str, int] = {}

    # ---- the loop ---------------------------------------------------------------------------------

    def start(self) -> None:
        """managerImpl.Start, from initializeRuntimeDependentModules (the first time the runtime is up)."""
        if self.started or not self.kl.running:
            return
        self.started = True
        self._anchor = self.kl.kernel.now
        self.kl.go(self._loop())
        # a new kubelet process knows no pressure: a condition an earlier one left True is posted False
        node = self.kl.store.try_get("Node", None, self.kl.node_name)
        if node is not None and any(c["type"] in CONDITION_TO_TAINT and c.get("status") == "True"
                                    for c in node["status"].get("conditions") or ()):
            self.kl.health.schedule_node_status()

    def wake(self) -> None:
        """Usage changed: a sleeping manager looks again at its next tick."""
        ev = self._idle
        if ev is not None and not ev.triggered:
            ev.succeed()

    def container_changed(self, uid: str) -> None:
        """Runtime listener: a container of the pod changed state; its working set may have changed."""
        ws = self.kl.runtime.pod_working_set(uid)
        if ws != self._pod_ws.get(uid, 0):
            if ws:
                self._pod_ws[uid] = ws
            else:
                self._pod_ws.pop(uid, None)
            self.wake()

    def _ticking(self) -> bool:
        return bool(self.thresholds_first_observed) or bool(self.node_conditions)

    def _loop(self) -> Gen:
        kl = self.kl
        # kubelet.go evictionMonitoringPeriod (a constant upstream; a non-positive setting falls back to it)
        period = kl.config.evictionMonitoringPeriod if kl.config.evictionMonitoringPeriod > 0 else MONITORING_PERIOD
        while True:
            evicted = yield from self._synchronize()
            if evicted:
                kl.log("ev_waiting_cleanup", None, **self._pods_ctx(evicted))
                yield from self._wait_for_pods_cleanup(evicted)
                continue  # upstream looks again at once
            self._anchor = kl.kernel.now
            if self._ticking():
                yield kl.kernel.timeout(period)
                continue
            # nothing met, no pressure held: the next look can only find something new after a change
            self._idle = kl.kernel.event()
            yield self._idle
            self._idle = None
            k = max(1, math.ceil((kl.kernel.now - self._anchor) / period - 1e-9))
            # (at least 0: a change a float rounding past the tick is at that tick)
            yield kl.kernel.timeout(max(0.0, self._anchor + k * period - kl.kernel.now))

    def _wait_for_pods_cleanup(self, pods: list[Obj]) -> Gen:
        """waitForPodsCleanup: poll every second whether the pods are cleaned up, for at most 30 s."""
        kl = self.kl
        start = kl.kernel.now
        while True:
            yield kl.kernel.timeout(POD_CLEANUP_POLL)
            if all(self._cleaned_up(p) for p in pods):
                kl.log("ev_cleaned", None, **self._pods_ctx(pods))
                return
            if kl.kernel.now - start >= POD_CLEANUP_TIMEOUT - 1e-9:
                kl.log("ev_cleanup_timeout", None, **self._pods_ctx(pods))
                return

    def _cleaned_up(self, pod: Obj) -> bool:
        """1.22+: PodIsFinished (the pod worker finished SyncTerminatedPod); before: podResourcesAreReclaimed
        (no container running, volumes cleaned up)."""
        kl = self.kl
        uid = pod["metadata"]["uid"]
        if kl.profile_modern_deletion():
            return kl.pod_workers.is_finished(uid)
        killed = kl.status_manager.killed_at.get(uid)
        return not kl.runtime_manager.running(uid) and killed is not None and \
            kl.kernel.now >= killed + VOLUME_CLEANUP_DELAY

    # ---- observations -----------------------------------------------------------------------------

    def observations(self) -> dict[str, Observation]:
        """makeSignalObservations from the node's summary stats."""
        kl = self.kl
        usage = kl.runtime.machine
        out: dict[str, Observation] = {}
        mem = _capacity(kl, "memory")
        if mem is not None:
            ws = usage.memory + kl.runtime.pods_working_set()
            out[MEMORY_AVAILABLE] = Observation(max(mem - ws, 0), mem)
        disk = _capacity(kl, "ephemeral-storage")
        if disk is not None:
            fs = Observation(max(disk - usage.disk, 0), disk)
            inodes = Observation(disk // BYTES_PER_INODE, disk // BYTES_PER_INODE)
            out.update({NODEFS_AVAILABLE: fs, IMAGEFS_AVAILABLE: fs, NODEFS_INODES_FREE: inodes,
                        IMAGEFS_INODES_FREE: inodes})
        running = kl.runtime.running_processes()
        out[PID_AVAILABLE] = Observation(PID_MAX - running, PID_MAX)
        return out

    def _pod_stats(self, pod: Obj, with_sandbox: set[str]) -> _PodStats:
        kl = self.kl
        uid = pod["metadata"]["uid"]
        if uid not in with_sandbox:
            return _PodStats(False)
        st = _PodStats(True)
        for name, ws in kl.runtime.container_working_sets(uid):
            st.containers[name] = ws
            st.memory += ws
            st.processes += 1
        return st

    @staticmethod
    def _met(thresholds: list[Threshold], obs: dict[str, Observation]) -> list[Threshold]:
        """thresholdsMet: the threshold quantity is above what is available (no observation: not met)."""
        out = []
        for t in thresholds:
            o = obs.get(t.signal)
            if o is not None and t.quantity(o.capacity) > o.available:
                out.append(t)
        return out

    # ---- synchronize ------------------------------------------------------------------------------

    def _synchronize(self) -> Gen:
        """managerImpl.synchronize; returns the evicted pods (a list of one) or None."""
        kl = self.kl
        now = kl.kernel.now
        if not self.thresholds:
            return None
        obs = self.observations()
        # thresholds met now; those met at the last look that have not reclaimed their evictionMinimumReclaim
        # would be merged in, but without a minimum reclaim they are the same set
        met = self._met(self.thresholds, obs)
        first = {t: self.thresholds_first_observed.get(t, now) for t in met}
        observed_now = [c for c in CONDITIONS if any(SIGNAL_TO_CONDITION[t.signal] == c for t in met)]
        last = dict(self.node_conditions_last_observed)
        last.update(dict.fromkeys(observed_now, now))
        period = kl.config.evictionPressureTransitionPeriod
        conditions = [c for c in CONDITIONS if c in last and now - last[c] < period - 1e-9]
        grace_met = [t for t in met if now - first[t] >= t.grace - 1e-9]
        changed = conditions != self.node_conditions
        self.node_conditions = conditions
        self.thresholds_first_observed = first
        self.node_conditions_last_observed = last
        self.thresholds_met = grace_met
        if changed:
            kl.health.schedule_node_status()
        if not grace_met:
            return None  # "Eviction manager: no resources are starved" (V(3))
        # byEvictionPriority: memory first (stable, hard before soft)
        ordered = sorted(grace_met, key=lambda t: t.signal != MEMORY_AVAILABLE)
        to_reclaim = ordered[0]
        resource = SIGNAL_TO_RESOURCE[to_reclaim.signal]
        kl.log("ev_attempt", None, resource=resource)
        kl.events.node_event("Warning", "EvictionThresholdMet", f"Attempting to reclaim {resource}")
        if self._reclaim_node_level(to_reclaim):
            kl.log("ev_reduced", None, resource=resource)
            return None
        kl.log("ev_must_evict", None, resource=resource)
        active = self.active_pods()
        if not active:
            kl.log("ev_no_pods", None)
            return None
        with_sandbox = kl.runtime.ready_sandbox_pods()
        stats = {p["metadata"]["uid"]: self._pod_stats(p, with_sandbox) for p in active}
        ranked = self.rank(to_reclaim.signal, active, stats)
        kl.log("ev_ranked", None, **self._pods_ctx(ranked))
        for pod in ranked:
            override = self._grace_override(to_reclaim, pod)
            message = self.eviction_message(resource, pod, stats[pod["metadata"]["uid"]], ordered, obs)
            evicted = yield from self._evict_pod(pod, override, message)
            if evicted:
                return [pod]
        kl.log("ev_unable", None)
        return None

    def _reclaim_node_level(self, threshold: Threshold) -> bool:
        """reclaimNodeLevelResources. Memory has no node-level reclaim; disk signals (no dedicated imagefs) run
        container GC and image GC, which free nothing in podlife, then look again at every threshold."""
        if threshold.signal in (MEMORY_AVAILABLE, PID_AVAILABLE):
            return False
        self.kl.log("container_gc", None)
        self.kl.log("image_gc", None)
        return not self._met(self.thresholds, self.observations())

    def _grace_override(self, threshold: Threshold, pod: Obj) -> int:
        """Hard: 0, from 1.31 immediateEvictionGracePeriodSeconds = 1 (PR #124063); soft:
        evictionMaxPodGracePeriod, from 1.32 no more than the pod's own grace (PR #122890)."""
        kl = self.kl
        if threshold.hard:
            return int(kl.profile.hard_eviction_grace)
        override = kl.config.evictionMaxPodGracePeriod
        spec = pod["spec"].get("terminationGracePeriodSeconds")
        if kl.profile.soft_eviction_grace == "min-of-max-and-pod" and spec is not None:
            override = min(override, spec)
        return override

    # ---- active pods and ranking --------------------------------------------------------------------

    def active_pods(self) -> list[Obj]:
        """GetActivePods: the kubelet's pods that are not known terminated and not terminal (a terminal pod
        still being stopped counts), in the order the kubelet first saw them."""
        kl = self.kl
        out = []
        for uid, pod in kl.pod_manager.items():
            st = kl.pod_workers.statuses.get(uid)
            if st is not None and st.state in (TERMINATED, FINISHED):
                continue
            phase = (kl.status_manager.get(uid) or pod.get("status") or {}).get("phase")
            if phase in ("Failed", "Succeeded") and (st is None or st.state == SYNC):
                continue
            out.append(pod)
        return out

    def rank(self, signal: str, pods: list[Obj], stats: dict[str, _PodStats]) -> list[Obj]:
        """rankMemoryPressure / rankDiskPressureFunc / rankPIDPressure (helpers.go)."""
        resource = "memory" if signal == MEMORY_AVAILABLE else "ephemeral-storage"

        def st(p: Obj) -> _PodStats:
            return stats[p["metadata"]["uid"]]

        def request(p: Obj) -> int:
            return pod_requests(p["spec"]).get(resource, 0)

        def usage(p: Obj) -> int:
            return st(p).memory if resource == "memory" else 0  # pods use no disk in podlife

        def missing(p1: Obj, p2: Obj) -> int | None:
            f1, f2 = st(p1).found, st(p2).found
            return None if f1 and f2 else _cmp_bool(not f1, not f2)  # no stats: evicted first

        def exceeds(p1: Obj, p2: Obj) -> int:
            m = missing(p1, p2)
            return m if m is not None else _cmp_bool(usage(p1) > request(p1), usage(p2) > request(p2))

        def priority(p1: Obj, p2: Obj) -> int:
            a, b = pod_priority(p1), pod_priority(p2)
            return 0 if a == b else (1 if a > b else -1)

        def above_request(p1: Obj, p2: Obj) -> int:
            m = missing(p1, p2)
            if m is not None:
                return m
            a, b = usage(p1) - request(p1), usage(p2) - request(p2)
            return 0 if a == b else (1 if b > a else -1)  # the larger consumer first

        def processes(p1: Obj, p2: Obj) -> int:
            m = missing(p1, p2)
            return m if m is not None else st(p2).processes - st(p1).processes

        cmps = [priority, processes] if signal == PID_AVAILABLE else [exceeds, priority, above_request]

        def multi(p1: Obj, p2: Obj) -> int:
            for c in cmps:
                r = c(p1, p2)
                if r:
                    return r
            return 0

        return sorted(pods, key=cmp_to_key(multi))

    def eviction_message(self, resource: str, pod: Obj, stats: _PodStats, thresholds: list[Threshold],
                         obs: dict[str, Observation]) -> str:
        """evictionMessage (helpers.go); its wording per version (``eviction_message`` rule)."""
        style = self.kl.profile.eviction_message
        message = f"The node was low on resource: {resource}. "
        if style != "exceeds-request":
            for t in thresholds:  # getThresholdMetInfo
                o = obs.get(t.signal)
                if SIGNAL_TO_RESOURCE[t.signal] == resource and o is not None:
                    available = str(Quantity(Fraction(o.available), BINARY_SI))
                    message += f"Threshold quantity: {t.format_quantity(o.capacity)}, available: {available}. "
                    break
        if not stats.found:
            return message
        containers = list(pod["spec"].get("containers") or ())
        if style == "with-init-containers":
            containers += list(pod["spec"].get("initContainers") or ())
        for c in containers:
            if c["name"] not in stats.containers or resource != "memory":
                continue  # pods use no disk in podlife: only memory can exceed a request
            used = stats.containers[c["name"]]
            req = ((c.get("resources") or {}).get("requests") or {}).get(resource)
            req_q = parse(req) if req is not None else Quantity(Fraction(0), BINARY_SI)
            if used > req_q.value:
                used_s = str(Quantity(Fraction(used), BINARY_SI))
                if style == "exceeds-request":
                    message += f"Container {c['name']} was using {used_s}, which exceeds its request of {req_q}. "
                else:
                    message += (f"Container {c['name']} was using {used_s}, request is {req_q}, "
                                f"has larger consumption of {resource}. ")
        return message

    # ---- evicting ---------------------------------------------------------------------------------

    def _evict_pod(self, pod: Obj, override: int, message: str) -> Gen:
        """managerImpl.evictPod and the kubelet's killPodNow: kill the pod with the override and wait until its
        containers have stopped, or for max(10 s, 1.5 × override). Returns False only for a critical pod."""
        kl = self.kl
        if is_critical(pod):
            kl.log("ev_critical", pod)
            return False
        kl.events.pod_event(pod, "Warning", REASON, message)
        if kl.profile.structured_logs:
            kl.log("ev_evicting", pod, message=message)
        uid = pod["metadata"]["uid"]
        kl.pod_workers.update_pod(kl.pod_manager.get(uid, pod), "kill", KillPodOptions(
            grace_override=override, reason=REASON, status_fn=lambda status: self._evicted_status(status, message)))
        done = kl.pod_workers.wait_terminated(uid)
        limit = kl.kernel.timer(max(KILL_TIMEOUT_MIN, override + int(override / 2)))
        yield done | limit
        kl.kernel.cancel(limit)
        if done.triggered:
            kl.log("ev_evicted", pod)
        else:
            kl.events.pod_event(pod, "Warning", "ExceededGracePeriod", EXCEEDED_GRACE_MESSAGE)
            kl.log("ev_evict_failed", pod, error="timeout waiting to kill pod")
        return True

    def _evicted_status(self, status: Obj, message: str) -> None:
        """The status function of an eviction: Failed, reason Evicted, and from 1.26 DisruptionTarget."""
        status["phase"] = "Failed"
        status["reason"] = REASON
        status["message"] = message
        if self.kl.profile.disruption_target_condition:
            conds = [c for c in status.get("conditions") or () if c["type"] != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
                          "message": message})
            status["conditions"] = conds

    # ---- admission --------------------------------------------------------------------------------

    def admit(self, pod: Obj) -> bool:
        """managerImpl.Admit, and kubelet.go rejectPod when it refuses: under memory pressure alone only
        BestEffort pods that do not tolerate the memory-pressure taint are refused; under any other pressure
        every pod; critical pods never."""
        conds = self.node_conditions
        if not conds or is_critical(pod):
            return True
        if conds == ["MemoryPressure"]:
            if compute_qos_class(pod) != "BestEffort":
                return True
            if _tolerates(pod["spec"].get("tolerations") or [], CONDITION_TO_TAINT["MemoryPressure"], "NoSchedule"):
                return True
        kl = self.kl
        cond_text = "[" + " ".join(conds) + "]"
        kl.log("ev_admit_failed", pod, conditions=cond_text, conditions_raw=Raw(cond_text))
        self.reject_pod(pod, REASON, f"The node had condition: {cond_text}. ")
        return False

    def reject_pod(self, pod: Obj, reason: str, message: str) -> None:
        """kubelet.go rejectPod: an event, and the status Failed; the pod never reaches a pod worker, which
        treats it as finished (so a later delete goes straight to the final removal)."""
        kl = self.kl
        uid = pod["metadata"]["uid"]
        kl.events.pod_event(pod, "Warning", reason, message)
        kl.status_manager.set_pod_status(pod, {
            "phase": "Failed", "reason": reason, "message": kl.profile.pod_rejected_message + message,
            "qosClass": (pod.get("status") or {}).get("qosClass") or compute_qos_class(pod)})
        kl.pod_workers.statuses[uid] = PodSyncStatus(uid, pod, state=FINISHED)
        # nothing ran, so nothing is left to reclaim (<=1.21 PodResourcesAreReclaimed)
        kl.status_manager.killed_at[uid] = kl.kernel.now - VOLUME_CLEANUP_DELAY

    # ---- node conditions --------------------------------------------------------------------------

    def under_pressure(self, condition: str) -> bool:
        """IsUnderMemoryPressure / IsUnderDiskPressure / IsUnderPIDPressure."""
        return condition in self.node_conditions

    # ---- logging ----------------------------------------------------------------------------------

    @staticmethod
    def _pods_ctx(pods: list[Obj]) -> dict[str, Any]:
        kobjs = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]
        return {"pods_kobj": Raw("[" + ",".join(f'"{k}"' for k in kobjs) + "]"),
                "pods_legacy": ", ".join(pod_full_name(p) for p in pods)}


# ---- usage changes (MemoryUsage / DiskUsage faults) ---------------------------------------------------

def set_usage(kl: Kubelet, kind: str, value: str) -> Any:
    """Set the node's memory (``memory``) or disk (``disk``) in use to ``value``, pods included, now; returns
    a function that undoes it. For memory the part beyond what the pods' containers use is the node's own
    (system daemons, kernel) and stays fixed, so pods that start or stop (evictions) change the total. The
    undo restores the usage from before, unless another fault has set it since."""
    usage = kl.runtime.machine
    total = to_bytes(value)
    before = getattr(usage, kind)
    if kind == "memory":
        pods = kl.runtime.pods_working_set()
        setattr(usage, kind, max(total - pods, 0))
    else:
        setattr(usage, kind, total)
    usage.generation[kind] += 1
    mine = usage.generation[kind]
    kl.eviction.wake()

    def undo(current: Kubelet) -> None:
        if usage.generation[kind] == mine:
            setattr(usage, kind, before)
            usage.generation[kind] += 1
            current.eviction.wake()
    return undo

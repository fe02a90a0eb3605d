"""The pod garbage collector: pkg/controller/podgc/gc_controller.go.

Every 20 s (gcCheckPeriod, on a grid from the controller's start) a pass force-deletes (grace 0):
- terminated pods (phase neither Pending, Running nor Unknown) beyond terminatedPodGCThreshold, oldest first
  (Evicted ones first from 1.27);
- terminating pods on NotReady nodes tainted node.kubernetes.io/out-of-service (from 1.26);
- orphans: pods bound to a node that does not exist, once the node has been missing for a quarantine of 40 s
  (the pass that first sees it queues the node for 40 s; the first pass after that checks it with a GET);
- terminating pods that were never scheduled.
From 1.26 (PodDisruptionConditions) a pod not yet terminal is first patched to phase Failed, orphans with the
DisruptionTarget condition (DeletionByPodGC, "PodGC: node no longer exists").

podlife keeps the controller's view indexed from the watches and runs a pass only at the grid ticks where one
would delete something; the quarantine queue (client-go's delaying queue) is kept as upstream keeps it, so the
40 s count from the pass that first saw the node missing.
"""

from __future__ import annotations

import math
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone, get_condition
from podlife.api.store import DELETED, DeleteOptions, Store
from podlife.config import ControllerManagerConfiguration
from podlife.controlplane.controllers.nodelifecycle import late_call_at
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "pod-garbage-collector"
GC_CHECK_PERIOD = 20.0   # gcCheckPeriod
QUARANTINE = 40.0        # quarantineTime
TAINT_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"

Key = tuple[str, str]


def _terminated(pod: Obj) -> bool:
    """isPodTerminated."""
    return pod.get("status", {}).get("phase") not in ("Pending", "Running", "Unknown")


def _indexed_alike(pod: Obj, other: Obj) -> bool:
    """Whether two revisions of a pod have the same place in every index (node, deletion, terminated)."""
    return pod["spec"].get("nodeName") == other["spec"].get("nodeName") and \
        bool(pod["metadata"].get("deletionTimestamp")) == bool(other["metadata"].get("deletionTimestamp")) and \
        _terminated(pod) == _terminated(other)


def _node_ready(node: Obj) -> bool:
    c = get_condition(node, "Ready")
    return c is not None and c.get("status") == "True"


def _out_of_service(node: Obj) -> bool:
    return any(t.get("key") == TAINT_OUT_OF_SERVICE for t in node.get("spec", {}).get("taints") or ())


class PodGCController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, config: ControllerManagerConfiguration,
                 profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.threshold = int(config.terminatedPodGCThreshold)
        # the informers' view
        self.nodes: dict[str, Obj] = {}
        self.pods: dict[Key, Obj] = {}
        self.by_node: dict[str, set[Key]] = {}
        self.terminated: set[Key] = set()
        self.terminating_by_node: dict[str, set[Key]] = {}
        self.unscheduled_terminating: set[Key] = set()
        self.orphan_nodes: set[str] = set()   # nodes pods are bound to that the node informer does not have
        self.oos_nodes: set[str] = set()      # NotReady nodes tainted out-of-service
        # nodeQueue, a delaying queue: nodes waiting out their quarantine, and nodes ready to be checked
        self.waiting: dict[str, float] = {}
        self.queued: dict[str, float] = {}   # node → when it became ready
        self._timer: Any = None
        self._timer_at = math.inf
        self._last_tick = -math.inf

    def start(self) -> None:
        self.store.watch("Node", self._on_node)
        self.store.watch("Pod", self._on_pod)
        for node in self.store.list("Node"):
            self._set_node(node["metadata"]["name"], node)
        for pod in self.store.list("Pod"):
            self._index(pod)
        self._arm()

    # ---- informers -----------------------------------------------------------------------------------

    def _on_node(self, type_: str, node: Obj, old: Obj | None) -> None:
        self._set_node(node["metadata"]["name"], None if type_ == DELETED else node)
        self._arm()

    def _set_node(self, name: str, node: Obj | None) -> None:
        if node is None:
            self.nodes.pop(name, None)
            self.oos_nodes.discard(name)
            if name in self.by_node:
                self.orphan_nodes.add(name)
            return
        self.nodes[name] = node
        self.orphan_nodes.discard(name)
        if self.profile.podgc_out_of_service and not _node_ready(node) and _out_of_service(node):
            self.oos_nodes.add(name)
        else:
            self.oos_nodes.discard(name)

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        md = pod["metadata"]
        key = (md["namespace"], md["name"])
        known = self.pods.get(key)
        if type_ != DELETED and known is not None and _indexed_alike(known, pod):
            # every index stays as it is, so the pass would be needed when it was (_needed_at reads only the
            # indexes, and the timer is re-armed whenever they or the nodes change)
            self.pods[key] = pod
            return
        self._unindex(key)
        if type_ != DELETED:
            self._index(pod)
        self._arm()

    def _index(self, pod: Obj) -> None:
        md = pod["metadata"]
        key = (md["namespace"], md["name"])
        node = pod["spec"].get("nodeName") or ""
        self.pods[key] = pod
        if node:
            self.by_node.setdefault(node, set()).add(key)
            if node not in self.nodes:
                self.orphan_nodes.add(node)
        if _terminated(pod):
            self.terminated.add(key)
        if md.get("deletionTimestamp"):
            if node:
                self.terminating_by_node.setdefault(node, set()).add(key)
            else:
                self.unscheduled_terminating.add(key)

    def _unindex(self, key: Key) -> None:
        pod = self.pods.pop(key, None)
        if pod is None:
            return
        node = pod["spec"].get("nodeName") or ""
        for index in (self.by_node, self.terminating_by_node):
            s = index.get(node)
            if s is not None:
                s.discard(key)
                if not s:
                    del index[node]
        if node not in self.by_node:
            self.orphan_nodes.discard(node)
        self.terminated.discard(key)
        self.unscheduled_terminating.discard(key)

    # ---- when a pass has work ------------------------------------------------------------------------

    def _tick(self, k: int) -> float:
        return round(k * GC_CHECK_PERIOD, 9)

    def _next_tick(self, t: float) -> float:
        tick = self._tick(math.ceil(t / GC_CHECK_PERIOD - 1e-9))
        if tick <= self._last_tick + 1e-9:
            tick = self._tick(round(self._last_tick / GC_CHECK_PERIOD) + 1)
        return tick

    def _oos_nodes(self) -> list[str]:
        return sorted(n for n in self.oos_nodes if n in self.terminating_by_node)

    def _needed_at(self) -> float:
        """The first tick at which a pass would delete something or change the quarantine queue."""
        # (the next tick is worked out only when a pass is needed: most pod events change no index that needs one)
        if (0 < self.threshold < len(self.terminated)) or self.unscheduled_terminating or \
                (self.oos_nodes and self._oos_nodes()):
            return self._next_tick(self.kernel.now)
        at = math.inf
        for node in self.orphan_nodes:
            if node in self.waiting:   # AddAfter keeps the earlier time: nothing happens before it is ready
                at = min(at, self._next_tick(self.waiting[node]))
            else:                      # a pass must queue it (or, if queued, check it now)
                return self._next_tick(self.kernel.now)
        return at

    def _arm(self) -> None:
        at = self._needed_at()
        if at < self._timer_at - 1e-9:
            self.kernel.cancel(self._timer)
            self._timer_at = at
            self._timer = late_call_at(self.kernel, at, lambda: self._gc(at))

    # ---- the pass ------------------------------------------------------------------------------------

    def _gc(self, tick: float) -> None:
        self._timer = None
        self._timer_at = math.inf
        self._last_tick = tick
        # the delaying queue's own goroutine: entries whose quarantine is over are in the queue by now; those
        # that became ready before an earlier tick were taken by a pass that found nothing to do
        for node, ready_at in list(self.waiting.items()):
            if ready_at <= tick + 1e-9:
                del self.waiting[node]
                self.queued.setdefault(node, ready_at)
        for node, ready_at in list(self.queued.items()):
            if self._next_tick_of(ready_at) < tick - 1e-9:
                del self.queued[node]
        pods = [self.pods[k] for k in sorted(self.pods)]
        existing = set(self.nodes)
        if self.threshold > 0:
            self._gc_terminated()
        if self.profile.podgc_out_of_service:
            self._gc_terminating()
        self._gc_orphaned(pods, existing, tick)
        self._gc_unscheduled_terminating()
        self._arm()

    def _next_tick_of(self, t: float) -> float:
        return self._tick(math.ceil(t / GC_CHECK_PERIOD - 1e-9))

    def _order(self, keys: list[Key]) -> list[Obj]:
        """byCreationTimestamp, Evicted pods first from 1.27 (byEvictionAndCreationTimestamp); names break ties."""
        pods = [self.pods[k] for k in keys if k in self.pods]

        def sort_key(p: Obj) -> tuple[Any, ...]:
            st = p.get("status", {})
            evicted = st.get("phase") == "Failed" and st.get("reason") == "Evicted"
            first = 0 if (evicted and self.profile.podgc_evicted_first) else 1
            return first, p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]
        return sorted(pods, key=sort_key)

    def _gc_terminated(self) -> None:
        count = len(self.terminated) - self.threshold
        if count <= 0:
            return
        for pod in self._order(sorted(self.terminated))[:count]:
            self._mark_failed_and_delete(pod)

    def _gc_terminating(self) -> None:
        keys = [k for n in self._oos_nodes() for k in self.terminating_by_node.get(n, ())]
        for pod in self._order(sorted(keys)):
            self._mark_failed_and_delete(pod)

    def _gc_orphaned(self, pods: list[Obj], existing: set[str], tick: float) -> None:
        for pod in pods:
            node = pod["spec"].get("nodeName")
            if node and node not in existing:
                ready_at = tick + QUARANTINE   # AddAfter: a waiting entry keeps the earlier time
                if self.waiting.get(node, math.inf) > ready_at:
                    self.waiting[node] = ready_at
        deleted: set[str] = set()
        for node in sorted(self.queued, key=lambda n: (self.queued[n], n)):   # discoverDeletedNodes
            del self.queued[node]
            if node not in existing and self.store.try_get("Node", None, node) is None:
                deleted.add(node)
        for pod in pods:
            if pod["spec"].get("nodeName") not in deleted:
                continue
            cond = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                    "message": "PodGC: node no longer exists"}
            self._mark_failed_and_delete(pod, cond)

    def _gc_unscheduled_terminating(self) -> None:
        for key in sorted(self.unscheduled_terminating):
            pod = self.pods.get(key)
            if pod is not None:
                self._mark_failed_and_delete(pod)

    def _mark_failed_and_delete(self, pod: Obj, condition: Obj | None = None) -> None:
        """markFailedAndDeletePodWithCondition: from 1.26 a pod not yet terminal is patched to Failed (with the
        condition, if any); then it is deleted with grace 0."""
        md = pod["metadata"]
        try:
            if self.profile.disruption_target_condition:
                cur = self.store.try_get("Pod", md["namespace"], md["name"])
                if cur is not None and cur["metadata"]["uid"] == md["uid"] and \
                        cur.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
                    new = clone(cur)
                    new["metadata"].pop("resourceVersion", None)
                    new["status"]["phase"] = "Failed"
                    if condition is not None:
                        self._update_condition(new, condition)
                    self.store.update(new, by=NAME, subresource="status", verb="patch")
            self.store.delete("Pod", md["namespace"], md["name"], by=NAME,
                              options=DeleteOptions(grace_period_seconds=0))
        except ApiError:
            pass   # not found: already gone

    def _update_condition(self, pod: Obj, condition: Obj) -> None:
        """apipod.UpdatePodCondition."""
        cond = {"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
                "lastTransitionTime": self.trace.timestamp(), "reason": condition["reason"],
                "message": condition["message"]}
        conds = list(pod["status"].get("conditions") or ())
        for i, c in enumerate(conds):
            if c.get("type") == cond["type"]:
                if c.get("status") == cond["status"]:
                    cond["lastTransitionTime"] = c.get("lastTransitionTime")
                conds[i] = cond
                break
        else:
            conds.append(cond)
        pod["status"]["conditions"] = conds

"""Taint-based eviction: pkg/controller/tainteviction/taint_eviction.go (until 1.28 the NoExecuteTaintManager,
pkg/controller/nodelifecycle/scheduler/taint_manager.go, inside the node lifecycle controller).

For every pod on a node with NoExecute taints: a pod that does not tolerate them all is deleted at once; a pod
that tolerates them with tolerationSeconds is deleted min(tolerationSeconds) after the controller saw the taints
(or the pod, if it came later); tolerations without seconds keep it forever. Removing the taints, or the pod
leaving, cancels a pending deletion ("Cancelling deletion of Pod ns/name"). The deletion is an ordinary graceful
delete, preceded by the DisruptionTarget condition (DeletionByTaintManager) where the version has it: on a node
whose kubelet cannot be reached the pod then stays Terminating.

The controller is driven by watch events only; pending deletions are kernel timers (the TimedWorkerQueue).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, get_condition
from podlife.api.store import ADDED, DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    index_pod_by_node,
    pods_on_node,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile


def no_execute_taints(node: Obj | None) -> list[Obj]:
    if node is None:
        return []
    return [t for t in node.get("spec", {}).get("taints") or () if t.get("effect") == "NoExecute"]


def tolerates_taint(toleration: Obj, taint: Obj) -> bool:
    """core/v1 Toleration.ToleratesTaint."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("key") and toleration["key"] != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def get_matching_tolerations(taints: list[Obj], tolerations: list[Obj]) -> tuple[bool, list[Obj]]:
    """pkg/apis/core/v1/helper GetMatchingTolerations: all tolerated, and the first toleration of each taint."""
    if not taints:
        return True, []
    if not tolerations:
        return False, []
    used: list[Obj] = []
    for taint in taints:
        for t in tolerations:
            if tolerates_taint(t, taint):
                used.append(t)
                break
        else:
            return False, []
    return True, used


def min_toleration_time(tolerations: list[Obj]) -> float:
    """getMinTolerationTime: the smallest tolerationSeconds (0 if any is <= 0), -1 for forever."""
    if not tolerations:
        return 0.0
    least = math.inf
    for t in tolerations:
        s = t.get("tolerationSeconds")
        if s is not None:
            if s <= 0:
                return 0.0
            least = min(least, s)
    return -1.0 if least == math.inf else float(least)


@dataclass
class _Worker:
    """TimedWorker: a deletion that fires at ``fire_at``; ``timer`` None while it runs (started at once)."""

    created_at: float
    fire_at: float
    timer: Any = None


class TaintEvictionController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.name = profile.taint_eviction_component   # taint-controller; taint-eviction-controller from 1.29
        self.events = EventRecorder(store, self.name)
        self.tainted: dict[str, list[Obj]] = {}        # taintedNodes: node → its NoExecute taints
        self.pods_by_node: dict[str, dict[tuple[str, str], Obj]] = {}
        self.workers: dict[str, _Worker | None] = {}   # taintEvictionQueue, keyed "namespace/name"

    def start(self) -> None:
        self.store.watch("Node", self._on_node)
        self.store.watch("Pod", self._on_pod)
        for pod in self.store.list("Pod"):
            self._index(pod, None)
        for node in self.store.list("Node"):
            self._handle_node_update(node["metadata"]["name"])

    # ---- informers -----------------------------------------------------------------------------------

    def _on_node(self, type_: str, node: Obj, old: Obj | None) -> None:
        """NodeUpdated: only a change of the NoExecute taints matters."""
        if type_ == "MODIFIED" and no_execute_taints(old) == no_execute_taints(node):
            return
        self._handle_node_update(node["metadata"]["name"])

    def _index(self, pod: Obj, old: Obj | None) -> None:
        index_pod_by_node(self.pods_by_node, pod, old)

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        """PodUpdated: additions, deletions, and changes of tolerations or node."""
        md = pod["metadata"]
        if type_ == DELETED:
            node = pod["spec"].get("nodeName")
            if node:
                self.pods_by_node.get(node, {}).pop((md["namespace"], md["name"]), None)
        else:
            self._index(pod, old if type_ != ADDED else None)
        if type_ == "MODIFIED" and old is not None and \
                (old["spec"].get("tolerations") or []) == (pod["spec"].get("tolerations") or []) and \
                old["spec"].get("nodeName") == pod["spec"].get("nodeName"):
            return
        self._handle_pod_update(md["namespace"], md["name"], pod["spec"].get("nodeName") or "")

    def _pods_on(self, node: str) -> list[Obj]:
        return pods_on_node(self.pods_by_node, node)

    # ---- handlers ------------------------------------------------------------------------------------

    def _handle_pod_update(self, namespace: str, name: str, node_name: str) -> None:
        key = f"{namespace}/{name}"
        pod = self.store.try_get("Pod", namespace, name)
        if pod is None:
            self._cancel_with_event(key)   # "Noticed pod deletion"
            return
        if pod["spec"].get("nodeName") != node_name or not node_name:
            return
        taints = self.tainted.get(node_name)
        if taints is None:
            return
        self._process_pod_on_node(key, pod["spec"].get("tolerations") or [], taints, self.kernel.now)

    def _handle_node_update(self, node_name: str) -> None:
        node = self.store.try_get("Node", None, node_name)
        if node is None:
            self.tainted.pop(node_name, None)   # "Noticed node deletion"
            return
        taints = no_execute_taints(node)
        if taints:
            self.tainted[node_name] = taints
        else:
            self.tainted.pop(node_name, None)
        pods = self._pods_on(node_name)
        if not pods:
            return
        if not taints:
            # "All taints were removed from the node. Cancelling all evictions..."
            for pod in pods:
                self._cancel_with_event(f"{pod['metadata']['namespace']}/{pod['metadata']['name']}")
            return
        now = self.kernel.now
        for pod in pods:
            md = pod["metadata"]
            self._process_pod_on_node(f"{md['namespace']}/{md['name']}", pod["spec"].get("tolerations") or [],
                                      taints, now)

    def _process_pod_on_node(self, key: str, tolerations: list[Obj], taints: list[Obj], now: float) -> None:
        if not taints:
            self._cancel_with_event(key)
        all_tolerated, used = get_matching_tolerations(taints, tolerations)
        if not all_tolerated:
            # "Not all taints are tolerated after update for pod on node": delete right away
            self._cancel_with_event(key)
            self._add_work(key, now, now)
            return
        least = min_toleration_time(used)
        if least < 0:
            # "Current tolerations for pod tolerate forever, cancelling any scheduled deletion"
            self._cancel_with_event(key)
            return
        start, trigger = now, now + least
        scheduled = self.workers.get(key)
        if scheduled is not None:
            start = scheduled.created_at
            if start + least < trigger:
                return   # an earlier deletion stays
            self._cancel_with_event(key)
        self._add_work(key, start, trigger)

    # ---- the timed worker queue ----------------------------------------------------------------------

    def _add_work(self, key: str, created_at: float, fire_at: float) -> None:
        if key in self.workers:
            return   # "Trying to add already existing work, skipping"
        delay = fire_at - created_at
        if delay <= 0:
            self.workers[key] = None   # runs at once; cannot be cancelled any more
            self.kernel.call_later(0.0, lambda: self._fire(key))
            return
        w = _Worker(created_at, fire_at)
        w.timer = self.kernel.call_later(delay, lambda: self._fire(key))
        self.workers[key] = w

    def _cancel_work(self, key: str) -> bool:
        if key not in self.workers:
            return False
        w = self.workers.pop(key)
        if w is None:
            return False
        self.kernel.cancel(w.timer)
        return True

    def _cancel_with_event(self, key: str) -> None:
        if self._cancel_work(key):
            self._event(key, f"Cancelling deletion of Pod {key}")

    def _event(self, key: str, message: str) -> None:
        namespace, _, name = key.partition("/")
        ref = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": namespace}}
        self.events.event(ref, "Normal", "TaintManagerEviction", message)

    def _fire(self, key: str) -> None:
        """deletePodHandler: the event, then the DisruptionTarget condition and a graceful delete."""
        try:
            self._event(key, f"Marking for deletion Pod {key}")
            namespace, _, name = key.partition("/")
            pod = self.store.try_get("Pod", namespace, name)
            if pod is None:
                return
            if self.profile.disruption_target_condition:
                self._add_disruption_condition(pod)
            try:
                self.store.delete("Pod", namespace, name, by=self.name)
            except ApiError:
                pass
        finally:
            self.workers.pop(key, None)

    def _add_disruption_condition(self, pod: Obj) -> None:
        """addConditionAndDeletePod: apipod.UpdatePodCondition(DisruptionTarget) and a status patch if it
        changed anything."""
        cond = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                "lastTransitionTime": self.trace.timestamp(), "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint"}
        old = get_condition(pod, "DisruptionTarget")
        if old is not None:
            if old.get("status") == cond["status"]:
                cond["lastTransitionTime"] = old.get("lastTransitionTime")
            if all(old.get(f) == cond[f] for f in ("status", "reason", "message", "lastProbeTime",
                                                     "lastTransitionTime")):
                return
        # the patch's body: the stored pod with its own metadata (no resourceVersion) and status (the conditions
        # replaced); what it leaves alone is the stored objects, as the kubelet's status writes send them
        md = dict(pod["metadata"])
        md.pop("resourceVersion", None)
        status = dict(pod["status"])
        conds = list(status.get("conditions") or ())
        if old is None:
            conds.append(cond)
        else:
            conds = [cond if c.get("type") == "DisruptionTarget" else c for c in conds]
        status["conditions"] = conds
        new = {**pod, "metadata": md, "status": status}
        try:
            self.store.update(new, by=self.name, subresource="status", verb="patch")
        except ApiError:
            pass

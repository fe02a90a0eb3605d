"""Filter and score plugins and the scheduler's node cache (pkg/scheduler/framework/plugins, internal/cache)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from podlife.api.defaults import pod_requests
from podlife.api.meta import Obj
from podlife.api.quantity import parse_quantity
from podlife.api.selectors import matches_node_selector_term

RESOURCES = ("cpu", "memory", "ephemeral-storage")


@dataclass
class NodeInfo:
    node: Obj
    allocatable: dict[str, int]
    requested: dict[str, int] = field(default_factory=lambda: {r: 0 for r in RESOURCES})
    pods: dict[str, dict[str, int]] = field(default_factory=dict)   # uid → requests


def _allocatable(node: Obj) -> dict[str, int]:
    alloc = node["status"].get("allocatable") or node["status"].get("capacity") or {}
    out = {}
    for r in RESOURCES + ("pods",):
        v = alloc.get(r)
        q = parse_quantity(v) if v is not None else 0
        out[r] = math.ceil(q * 1000) if r == "cpu" else math.ceil(q)
    return out


class NodeCache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}

    def node_count(self) -> int:
        return len(self.nodes)

    def set_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            self.nodes[name] = NodeInfo(node, _allocatable(node))
        else:
            info.node = node
            info.allocatable = _allocatable(node)

    def remove_node(self, name: str) -> None:
        self.nodes.pop(name, None)

    def add_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        node = pod["spec"]["nodeName"]
        if uid in self._pod_node:
            return
        info = self.nodes.get(node)
        if info is None:
            return
        req = pod_requests(pod["spec"])
        info.pods[uid] = req
        for r in RESOURCES:
            info.requested[r] += req.get(r, 0)
        self._pod_node[uid] = node

    def remove_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        node = self._pod_node.pop(uid, None)
        info = self.nodes.get(node) if node else None
        if info is None:
            return
        req = info.pods.pop(uid, {})
        for r in RESOURCES:
            info.requested[r] -= req.get(r, 0)


@dataclass
class Diagnosis:
    reasons: Counter[str] = field(default_factory=Counter)

    def message(self, total: int) -> str:
        """FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable."."""
        parts = sorted(f"{n} {reason}" for reason, n in self.reasons.items())
        return f"0/{total} nodes are available: {', '.join(parts)}."


def _tolerates(taint: Obj, tolerations: list[Obj]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def filter_node(pod: Obj, req: dict[str, int], info: NodeInfo) -> str | None:
    """The first failing filter's reason, or None when the pod fits."""
    spec = pod["spec"]
    node = info.node
    labels = node["metadata"].get("labels") or {}
    if node["spec"].get("unschedulable") and not any(
            t.get("key") == "node.kubernetes.io/unschedulable" and t.get("effect") in (None, "", "NoSchedule")
            for t in spec.get("tolerations") or ()):
        return "node(s) were unschedulable"
    if spec.get("nodeName") and spec["nodeName"] != node["metadata"]["name"]:
        return "node(s) didn't match the requested node name"
    sel = spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in sel.items()):
        return "node(s) didn't match Pod's node affinity/selector"
    req_aff = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
               .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = req_aff.get("nodeSelectorTerms") or []
    if terms and not any(matches_node_selector_term(t, labels) for t in terms):
        return "node(s) didn't match Pod's node affinity/selector"
    tolerations = spec.get("tolerations") or []
    for taint in node["spec"].get("taints") or ():
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(taint, tolerations):
            return f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"
    if len(info.pods) + 1 > info.allocatable.get("pods", 110):
        return "Too many pods"
    for r in RESOURCES:
        want = req.get(r, 0)
        if want and info.requested[r] + want > info.allocatable.get(r, 0):
            return f"Insufficient {r}"
    return None


def score(req: dict[str, int], info: NodeInfo) -> float:
    """NodeResourcesFit LeastAllocated (cpu and memory, equal weights)."""
    total = 0.0
    for r in ("cpu", "memory"):
        cap = info.allocatable.get(r, 0)
        if cap:
            total += (cap - info.requested[r] - req.get(r, 0)) * 100 / cap
    return total / 2


def find_node(pod: Obj, cache: NodeCache) -> tuple[str | None, Diagnosis]:
    req = pod_requests(pod["spec"])
    diag = Diagnosis()
    best: tuple[float, str] | None = None
    for name in sorted(cache.nodes):
        info = cache.nodes[name]
        why = filter_node(pod, req, info)
        if why is not None:
            diag.reasons[why] += 1
            continue
        s = score(req, info)
        if best is None or s > best[0]:
            best = (s, name)
    return (best[1] if best else None), diag

"""A run's aggregate figures, accumulated record by record as the trace is made (or read back from a report):
what a question about many pods wants to know without reading the records.

- ``pods``: pods created; ``startupP50Seconds`` / ``startupP99Seconds``: create → Running, by nearest rank;
- ``podsEvicted``: pods the taint manager or the kubelet evicted, or the Eviction API was asked to evict;
- ``firstEvictionSeconds``, ``replacements`` (pods created from the first eviction on) and
  ``replacementsRunningSeconds``: from the first eviction until every one of them was Running (null while
  one never was);
- ``deleteToStoppedSeconds`` / ``deleteToRemovedSeconds``: the longest delete → last container exit and
  delete → removal;
- ``zones``: per ``topology.kubernetes.io/zone`` of the nodes (``""`` for none, or a node gone by the end):
  nodes, pods placed there (bound to one of its nodes, or run there), pods evicted from there, pods Running
  there at the end.
"""

from __future__ import annotations

import math
from typing import Any

EVICTION_REASONS = ("Evicted", "TaintManagerEviction")
ZONE_LABEL = "topology.kubernetes.io/zone"
# what ``add`` reads
_COUNTED_TYPES = frozenset(("api", "phase", "terminating", "runtime", "deleted", "event", "restored"))


class Figures:
    def __init__(self) -> None:
        self.created: dict[str, float] = {}
        self.running: dict[str, float] = {}
        self.deleting: dict[str, float] = {}
        self.stopped: dict[str, float] = {}   # pod → its last container exit after the delete, since the delete
        self.longest_removal: float | None = None
        self.evicted: dict[str, None] = {}
        self.first_eviction: float | None = None
        self.replacements: dict[str, None] = {}
        self.node_of: dict[str, str] = {}

    def add(self, r: dict[str, Any]) -> None:
        typ = r["type"]
        if typ not in _COUNTED_TYPES:
            return
        obj = r.get("object")
        if not isinstance(obj, str) or not obj.startswith("Pod/"):
            return
        if typ == "api":
            verb = r["verb"]
            if verb == "create":
                self.created.setdefault(obj, r["t"])
                if self.first_eviction is not None:
                    self.replacements[obj] = None
            elif verb == "bind":
                self.node_of[obj] = r["node"]
            elif verb == "evict":
                self._evicted(obj, r["t"])
        elif typ == "phase":
            if r["to"] == "Running":
                self.running.setdefault(obj, r["t"])
        elif typ == "terminating":
            self.deleting.setdefault(obj, r["t"])
        elif typ == "runtime":
            self.node_of.setdefault(obj, r["node"])   # a pod created bound to its node has no bind record
            if r["op"] == "exit" and obj in self.deleting:
                self.stopped[obj] = r["t"] - self.deleting[obj]
        elif typ == "restored":   # a pod of an imported cluster, on its node from the start
            if r.get("node"):
                self.node_of.setdefault(obj, r["node"])
        elif typ == "deleted":
            if obj in self.deleting:
                took = r["t"] - self.deleting[obj]
                if self.longest_removal is None or took > self.longest_removal:
                    self.longest_removal = took
        elif typ == "event":
            if r["reason"] in EVICTION_REASONS:
                self._evicted(obj, r["t"])

    def add_all(self, records: list[dict[str, Any]]) -> None:
        """``add`` for each record (a Batched trace sink), past those of a type it does not read."""
        add = self.add
        for r in records:
            if r["type"] in _COUNTED_TYPES:
                add(r)

    def _evicted(self, obj: str, t: float) -> None:
        self.evicted[obj] = None
        if self.first_eviction is None:
            self.first_eviction = t

    def result(self, store: Any = None) -> dict[str, Any]:
        """The figures; with the cluster's ``store`` (at the end of the run) also the per-zone counts."""
        startup = sorted(self.running[p] - self.created[p] for p in self.running if p in self.created)
        out: dict[str, Any] = {
            "pods": len(self.created),
            "deleteToStoppedSeconds": _r(max(self.stopped.values())) if self.stopped else None,
            "deleteToRemovedSeconds": _r(self.longest_removal) if self.longest_removal is not None else None,
            "startupP50Seconds": _rank(startup, 0.50), "startupP99Seconds": _rank(startup, 0.99),
            "podsEvicted": len(self.evicted),
            "firstEvictionSeconds": self.first_eviction,
            "replacements": len(self.replacements),
            "replacementsRunningSeconds": self._replacements_running(),
        }
        if store is not None:
            out["zones"] = self._zones(store)
        return out

    def _replacements_running(self) -> float | None:
        if self.first_eviction is None or not self.replacements:
            return None
        if any(p not in self.running for p in self.replacements):
            return None
        return _r(max(self.running[p] for p in self.replacements) - self.first_eviction)

    def _zones(self, store: Any) -> dict[str, dict[str, int]]:
        zone_of = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get(ZONE_LABEL, "")
                   for n in store.list("Node")}
        zones: dict[str, dict[str, int]] = {}

        def zone(name: str | None) -> dict[str, int]:
            z = zone_of.get(name or "", "")
            if z not in zones:
                zones[z] = {"nodes": 0, "pods": 0, "podsEvicted": 0, "podsRunningAtEnd": 0}
            return zones[z]

        for name in zone_of:
            zone(name)["nodes"] += 1
        for node in self.node_of.values():
            zone(node)["pods"] += 1
        for pod in self.evicted:
            zone(self.node_of.get(pod))["podsEvicted"] += 1
        for pod in store.list("Pod"):
            if (pod.get("status") or {}).get("phase") == "Running" and pod["spec"].get("nodeName"):
                zone(pod["spec"]["nodeName"])["podsRunningAtEnd"] += 1
        return {z: zones[z] for z in sorted(zones)}


def _rank(xs: list[float], q: float) -> float | None:
    """Nearest-rank percentile."""
    if not xs:
        return None
    return _r(xs[max(0, math.ceil(q * len(xs)) - 1)])


def _r(x: float) -> float:
    return round(x, 3)

"""The scheduler's cache of nodes and the pods on them (pkg/scheduler/internal/cache, framework.NodeInfo).

Upstream keeps one NodeInfo per node (requested resources, pods, the pods' affinity terms), changed by each
bind, pod update and deletion. Here the per-node numbers are numpy arrays in node-tree order
(internal/cache/node_tree.go), so the plugins check a slice of nodes at once:

- allocatable and requested resources (also the 100m / 200Mi non-zero requests scoring uses), pod counts;
- per (namespace, label selector) the matching pods that are not terminating, per node and per topology domain
  (podtopologyspread countPodsMatchSelector and its per-domain sums), for the selectors scheduling asked about;
- per required pod anti-affinity term: the pods it selects and the pods that carry it, per node.

Every count moves with the pod that moves it: nothing is recounted per scheduling cycle. When nodes come or
go the arrays are permuted into the new node-tree order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import orjson

from podlife.api.defaults import pod_requests
from podlife.api.meta import Obj
from podlife.api.quantity import parse_quantity
from podlife.api.selectors import Selector, compiled

RESOURCES = ("cpu", "memory", "ephemeral-storage")
FIT = (*RESOURCES, "pods")   # the rows of the stacked fit arrays (requested "pods": the pods on the node)
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
# pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest / DefaultMemoryRequest (GetNonzeroRequests)
NON_MISSING = {"cpu": "100m", "memory": "200Mi"}
MAX_COUNTERS = 512   # kept selectors; the least recently used beyond this are dropped (and recounted if asked)
MAX_SPECS = 4096     # pod specs whose facts are kept
# resource amounts are int64 while every one stays below 2**53: then (value * 100) cannot overflow and float64
# divisions equal Python's exactly rounded int / int; beyond, the arrays hold Python ints
EXACT_INT64 = 2 ** 53
LARGE = 2 ** 40   # a pod asking less of everything cannot lift a node past EXACT_INT64 before 8,192 pods

# (namespace, labels, terminating) → does the counter count such a pod
Match = Callable[[str, dict, bool], bool]
# a required anti-affinity term on kubernetes.io/hostname: (selector, namespaces or None for the pod's own)
AntiTerm = tuple[Selector, "frozenset[str] | None", bytes]


def selector_key(selector: Any) -> bytes:
    return orjson.dumps(selector, option=orjson.OPT_SORT_KEYS)


def hostname_anti_terms(spec: dict) -> tuple[AntiTerm, ...]:
    """Required pod anti-affinity terms on kubernetes.io/hostname, their selectors parsed once."""
    aff = ((spec.get("affinity") or {}).get("podAntiAffinity") or {})
    out = []
    for t in aff.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
        if t.get("topologyKey") == HOSTNAME:
            sel = t.get("labelSelector") or {}
            out.append((compiled(sel), frozenset(t["namespaces"]) if t.get("namespaces") else None,
                        selector_key(sel)))
    return tuple(out)


def anti_term_matches(term: AntiTerm, owner_ns: str, ns: str, labels: dict) -> bool:
    """interpodaffinity: the term of a pod in ``owner_ns`` selects a pod in ``ns`` with these labels."""
    sel, namespaces, _ = term
    return (ns in namespaces if namespaces is not None else ns == owner_ns) and sel.matches(labels)


def _allocatable(node: Obj) -> dict[str, int]:
    status = node.get("status") or {}
    alloc = status.get("allocatable") or status.get("capacity") or {}
    out = {}
    for r in RESOURCES + ("pods",):
        v = alloc.get(r)
        q = parse_quantity(v) if v is not None else 0
        out[r] = math.ceil(q * 1000) if r == "cpu" else math.ceil(q)
    for r in sorted(alloc):   # extended resources (nvidia.com/gpu) and hugepages: integers of their unit
        if r not in out:
            out[r] = math.ceil(parse_quantity(alloc[r]))
    return out


class SpecFacts:
    """What the cache and the plugins read of a pod spec: requests (also with the non-zero defaults) and the
    required hostname anti-affinity terms."""
    __slots__ = ("req", "nz_cpu", "nz_mem", "anti", "huge", "large", "scalars", "fit", "nz")

    def __init__(self, spec: dict) -> None:
        self.req = pod_requests(spec)
        nz = pod_requests(spec, non_missing=NON_MISSING)
        self.nz_cpu, self.nz_mem = nz.get("cpu", 0), nz.get("memory", 0)
        self.anti = hostname_anti_terms(spec)
        amounts = (*self.req.values(), self.nz_cpu, self.nz_mem)
        self.huge = any(abs(v) >= EXACT_INT64 for v in amounts)
        self.large = any(abs(v) >= LARGE for v in amounts)
        self.scalars = tuple(r for r in self.req if r not in RESOURCES)
        self.fit = np.array([self.req.get(r, 0) for r in RESOURCES] + [1], object if self.huge else np.int64)
        self.nz = np.array([self.nz_cpu, self.nz_mem], object if self.huge else np.int64)


class PodEntry:
    """What the cache keeps of a pod on a node."""
    __slots__ = ("uid", "namespace", "labels", "labels_key", "facts", "anti", "terminating")

    def __init__(self, pod: Obj, facts: SpecFacts) -> None:
        md = pod["metadata"]
        self.uid = md["uid"]
        self.namespace = md.get("namespace", "")
        self.facts, self.anti = facts, facts.anti
        self.refresh(pod)

    def refresh(self, pod: Obj) -> None:
        md = pod["metadata"]
        self.labels = md.get("labels") or {}
        self.labels_key = frozenset(self.labels.items())
        self.terminating = bool(md.get("deletionTimestamp"))


class NodeInfo:
    __slots__ = ("name", "node", "labels", "allocatable", "unschedulable", "hard_taints", "soft_taints",
                 "zone_key", "pods", "pos", "_sig")

    def __init__(self, node: Obj) -> None:
        self.name = node["metadata"]["name"]
        self.pods: dict[str, PodEntry] = {}
        self.pos = -1        # position in the node-tree order (-1 until laid out)
        self._sig: Any = None
        self.update(node)

    def update(self, node: Obj) -> bool:
        """Recompute the per-node facts only when what they come from changed (heartbeats change neither).
        True when they changed."""
        self.node = node
        spec, md = node.get("spec") or {}, node["metadata"]
        sig = (spec.get("unschedulable"), str(spec.get("taints")), str(md.get("labels")),
               str((node.get("status") or {}).get("allocatable") or (node.get("status") or {}).get("capacity")))
        if sig == self._sig:
            return False
        self._sig = sig
        self.labels = md.get("labels") or {}
        self.allocatable = _allocatable(node)
        self.unschedulable = bool(spec.get("unschedulable"))
        taints = spec.get("taints") or []
        self.hard_taints = [t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute")]
        self.soft_taints = [t for t in taints if t.get("effect") == "PreferNoSchedule"]
        # pkg/util/node GetZoneKey: region + ":\x00:" + zone, "" when neither label is set
        zone = self.labels.get(ZONE) or self.labels.get("failure-domain.beta.kubernetes.io/zone", "")
        region = self.labels.get(REGION) or self.labels.get("failure-domain.beta.kubernetes.io/region", "")
        self.zone_key = f"{region}:\x00:{zone}" if (zone or region) else ""
        return True


class PodCounter:
    """The pods one predicate counts, per node position and (once asked) per topology domain."""
    __slots__ = ("match", "counts", "domains", "used")

    def __init__(self, match: Match, size: int) -> None:
        self.match = match
        self.counts = np.zeros(size, np.int64)
        self.domains: dict[str, np.ndarray] = {}   # topology key → matching pods per domain id
        self.used = 0


class NodeCache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}
        self._order: list[NodeInfo] | None = None   # None: nodes came or went, lay the arrays out again
        self.generation = 0                         # bumped at each layout
        self.epoch = 0                              # bumped when arrays or counters handed out may be stale
        self.changed: list[int] = []                # positions whose taints, labels or allocatable changed since
        self.anti_pods = 0                          # pods with required hostname anti-affinity, cluster-wide
        self.size = 0
        self.dtype: Any = np.int64                  # of the resource arrays (object: Python ints, see EXACT_INT64)
        # per position, rows FIT: allocatable, requested (the pods row: pods on the node), and their difference
        self.alloc_fit = self.req_fit = self.free_fit = np.zeros((len(FIT), 0), np.int64)
        # per position, rows cpu and memory: NonZeroRequested, and allocatable minus it
        self.nz = self.free_nz = np.zeros((2, 0), np.int64)
        self.scalar_alloc: dict[str, np.ndarray] = {}   # extended resources and hugepages asked about
        self.scalar_req: dict[str, np.ndarray] = {}
        self.has_host = np.zeros(0, bool)
        self.positive_cpu_mem = True                # every node has cpu and memory allocatable
        self._domain_ids: dict[str, tuple[np.ndarray, dict[str, int]]] = {}
        self._everywhere: dict[str, bool] = {}      # topology key → every node has the label
        self._counters: dict[Any, PodCounter] = {}
        self._matching: dict[tuple[str, frozenset, bool], tuple[PodCounter, ...]] = {}
        self._carriers: dict[tuple, tuple[AntiTerm, str, np.ndarray]] = {}   # anti term → carriers per position
        self._tick = 0
        self._facts: dict[bytes, SpecFacts] = {}
        self.templates: dict[Any, Any] = {}         # the plugins' per pod template state (plugins.PodTemplate)

    def spec_facts(self, spec: dict) -> SpecFacts:
        """The facts of a pod spec, worked out once per distinct spec (replicas share theirs; nodeName aside)."""
        try:
            key = orjson.dumps({k: v for k, v in spec.items() if k != "nodeName"}, option=orjson.OPT_SORT_KEYS)
        except TypeError:
            return SpecFacts(spec)
        facts = self._facts.get(key)
        if facts is None:
            if len(self._facts) >= MAX_SPECS:
                self._facts.clear()
            facts = self._facts[key] = SpecFacts(spec)
        return facts

    # ---- nodes ------------------------------------------------------------------------------------

    def node_count(self) -> int:
        return len(self.nodes)

    def set_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            self.nodes[name] = NodeInfo(node)
            self._order = None
            return
        old_zone, old_labels = info.zone_key, info.labels
        if not info.update(node) or self._order is None:
            return
        if info.zone_key != old_zone:
            self._order = None
            return
        pos = info.pos
        self._set_static(pos, info)
        self.free_fit[:, pos] = self.alloc_fit[:, pos] - self.req_fit[:, pos]
        self.free_nz[:, pos] = self.alloc_fit[:2, pos] - self.nz[:, pos]
        self.changed.append(pos)
        if info.labels != old_labels:
            for key, (ids, values) in self._domain_ids.items():
                v = info.labels.get(key)
                ids[pos] = -1 if v is None else values.setdefault(v, len(values))
                self._everywhere[key] = bool(ids.min(initial=0) >= 0)
                for c in self._counters.values():
                    c.domains.pop(key, None)

    def remove_node(self, name: str) -> None:
        if self.nodes.pop(name, None) is not None:
            self._order = None

    def ordered(self) -> list[NodeInfo]:
        """internal/cache/node_tree.go list(): zones in order of first appearance, nodes of a zone in order of
        addition, taken one per zone in turn (zones interleaved)."""
        if self._order is None:
            self._layout()
        assert self._order is not None
        return self._order

    def _layout(self) -> None:
        """Lay every per-node array out in the new node-tree order: kept nodes keep their numbers."""
        zones: dict[str, list[NodeInfo]] = {}
        for info in self.nodes.values():
            zones.setdefault(info.zone_key, []).append(info)
        order: list[NodeInfo] = []
        lists = list(zones.values())
        for i in range(max((len(x) for x in lists), default=0)):
            for z in lists:
                if i < len(z):
                    order.append(z[i])
        old = np.array([info.pos for info in order], np.int64)
        kept = old >= 0
        size = len(order)

        def permute(arr: np.ndarray) -> np.ndarray:   # along the last axis
            out = np.zeros((*arr.shape[:-1], size), arr.dtype)
            out[..., kept] = arr[..., old[kept]]
            return out

        self.req_fit, self.nz = permute(self.req_fit), permute(self.nz)
        self.scalar_req = {r: permute(a) for r, a in self.scalar_req.items()}
        for c in self._counters.values():
            c.counts = permute(c.counts)
            c.domains.clear()
        self._carriers = {k: (term, ns, permute(arr)) for k, (term, ns, arr) in self._carriers.items()}
        for pos, info in enumerate(order):
            info.pos = pos
        self._order, self.size = order, size
        self.alloc_fit = np.zeros((len(FIT), size), self.dtype)
        self.scalar_alloc = {r: np.zeros(size, a.dtype) for r, a in self.scalar_alloc.items()}
        self.has_host = np.zeros(size, bool)
        self.positive_cpu_mem = True
        for pos, info in enumerate(order):
            self._set_static(pos, info)
        self.free_fit = self.alloc_fit - self.req_fit
        self.free_nz = self.alloc_fit[:2] - self.nz
        self._domain_ids.clear()
        self.generation += 1
        self.epoch += 1
        self.changed = []

    def _set_static(self, pos: int, info: NodeInfo) -> None:
        if self.dtype is not object and any(v >= EXACT_INT64 for v in info.allocatable.values()):
            self.exact_ints()
        self.alloc_fit[:, pos] = [info.allocatable.get(r, 0) for r in FIT]
        for r, arr in self.scalar_alloc.items():
            arr[pos] = info.allocatable.get(r, 0)
        self.has_host[pos] = info.labels.get(HOSTNAME) is not None
        if not (info.allocatable["cpu"] > 0 and info.allocatable["memory"] > 0):
            self.positive_cpu_mem = False

    def positions(self, names: list[str]) -> np.ndarray:
        self.ordered()
        return np.array([self.nodes[n].pos for n in names], np.int64)

    def scalar(self, resource: str) -> tuple[np.ndarray, np.ndarray]:
        """Allocatable and requested per position of an extended resource or hugepages (0 where absent)."""
        self.ordered()
        if resource not in self.scalar_req:
            alloc = np.zeros(self.size, object)
            req = np.zeros(self.size, object)
            for info in self._order or ():
                alloc[info.pos] = info.allocatable.get(resource, 0)
                req[info.pos] = sum(e.facts.req.get(resource, 0) for e in info.pods.values())
            if self.dtype is not object and max(alloc.max(initial=0), req.max(initial=0)) < EXACT_INT64:
                alloc, req = alloc.astype(np.int64), req.astype(np.int64)
            self.scalar_alloc[resource], self.scalar_req[resource] = alloc, req
        return self.scalar_alloc[resource], self.scalar_req[resource]

    def domain_ids(self, key: str) -> np.ndarray:
        """Per position the id of the node's value of a topology label (-1: no such label)."""
        self.ordered()
        found = self._domain_ids.get(key)
        if found is None:
            values: dict[str, int] = {}
            ids = np.fromiter((-1 if (v := info.labels.get(key)) is None else values.setdefault(v, len(values))
                               for info in self._order or ()), np.int64, self.size)
            found = self._domain_ids[key] = (ids, values)
            self._everywhere[key] = bool(ids.min(initial=0) >= 0)
        return found[0]

    def everywhere(self, key: str) -> bool:
        """Every node has the label ``key``."""
        self.domain_ids(key)
        return self._everywhere[key]

    def domain_values(self, key: str) -> list[str]:
        """The values of a topology label, in the order of their ids."""
        self.domain_ids(key)
        return list(self._domain_ids[key][1])

    def domain_count(self, key: str) -> int:
        """How many distinct values of the label the ids of ``domain_ids(key)`` range over."""
        self.domain_ids(key)
        return len(self._domain_ids[key][1])

    # ---- counters ---------------------------------------------------------------------------------

    def counter(self, key: Any, match: Match) -> PodCounter:
        """The counter of ``key`` (made and counted over every pod the first time it is asked for)."""
        self.ordered()
        c = self._counters.get(key)
        if c is None:
            if len(self._counters) >= MAX_COUNTERS:
                del self._counters[min(self._counters, key=lambda k: self._counters[k].used)]
                self.epoch += 1
            c = self._counters[key] = PodCounter(match, self.size)
            seen: dict[tuple[str, frozenset, bool], bool] = {}   # pods with the same labels match alike
            for info in self._order or ():
                n = 0
                for e in info.pods.values():
                    k = (e.namespace, e.labels_key, e.terminating)
                    hit = seen.get(k)
                    if hit is None:
                        hit = seen[k] = match(e.namespace, e.labels, e.terminating)
                    n += hit
                if n:
                    c.counts[info.pos] = n
            self._matching.clear()
        return c

    def spread_counter(self, namespace: str, selector: Any, sel_key: bytes) -> PodCounter:
        """podtopologyspread countPodsMatchSelector: same namespace, not terminating, labels match."""
        key = ("spread", namespace, sel_key)
        c = self._counters.get(key)
        if c is None:
            sel = compiled(selector)
            c = self.counter(key, lambda ns, labels, terminating: ns == namespace and not terminating
                             and sel.matches(labels))
        self._tick += 1
        c.used = self._tick
        return c

    def anti_counter(self, term: AntiTerm, owner_ns: str) -> PodCounter:
        """The pods (terminating ones too) an incoming pod's anti-affinity term selects."""
        key = ("anti", owner_ns, term[1], term[2])
        c = self._counters.get(key)
        if c is None:
            c = self.counter(key, lambda ns, labels, terminating: anti_term_matches(term, owner_ns, ns, labels))
        self._tick += 1
        c.used = self._tick
        return c

    def domain_totals(self, c: PodCounter, key: str) -> np.ndarray:
        """The counter's pods per domain id of a topology key, kept up to date once asked for."""
        totals = c.domains.get(key)
        if totals is None:
            ids = self.domain_ids(key)
            has = ids >= 0
            totals = np.bincount(ids[has], weights=c.counts[has],
                                 minlength=self.domain_count(key)).astype(np.int64)
            c.domains[key] = totals
        return totals

    def carriers(self) -> list[tuple[AntiTerm, str, np.ndarray]]:
        """Anti-affinity terms of the pods in the cache: (term, its pod's namespace, carrier pods per position)."""
        self.ordered()
        return list(self._carriers.values())

    def _count(self, info: NodeInfo, entry: PodEntry, sign: int) -> None:
        key = (entry.namespace, entry.labels_key, entry.terminating)
        counters = self._matching.get(key)
        if counters is None:
            counters = self._matching[key] = tuple(
                c for c in self._counters.values() if c.match(entry.namespace, entry.labels, entry.terminating))
        pos = info.pos
        for c in counters:
            c.counts[pos] += sign
            for tkey, totals in c.domains.items():
                d = self._domain_ids[tkey][0][pos]
                if d >= 0:
                    totals[d] += sign

    # ---- pods -------------------------------------------------------------------------------------

    def add_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        if uid in self._pod_node:
            # internal/cache updatePod: a known pod's labels and deletion are refreshed
            known = self.nodes.get(self._pod_node[uid])
            entry = known.pods.get(uid) if known is not None else None
            md = pod["metadata"]
            if entry is not None and (entry.labels != (md.get("labels") or {}) or
                                      entry.terminating != bool(md.get("deletionTimestamp"))):
                self.ordered()
                self._count(known, entry, -1)
                entry.refresh(pod)
                self._count(known, entry, +1)
            return
        node = pod["spec"]["nodeName"]
        info = self.nodes.get(node)
        if info is None:
            return
        self.ordered()
        entry = PodEntry(pod, self.spec_facts(pod["spec"]))
        info.pods[uid] = entry
        self._account(info, entry, +1)
        self._pod_node[uid] = node

    def remove_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        node = self._pod_node.pop(uid, None)
        info = self.nodes.get(node) if node else None
        if info is None:
            return
        entry = info.pods.pop(uid, None)
        if entry is None:
            return
        self.ordered()
        self._account(info, entry, -1)

    def exact_ints(self) -> None:
        """From now on keep resource amounts as Python ints (some are too large for exact int64 arithmetic)."""
        if self.dtype is object:
            return
        self.dtype = object
        self.alloc_fit, self.req_fit, self.free_fit = (a.astype(object) for a in
                                                       (self.alloc_fit, self.req_fit, self.free_fit))
        self.nz, self.free_nz = self.nz.astype(object), self.free_nz.astype(object)
        self.scalar_alloc = {r: a.astype(object) for r, a in self.scalar_alloc.items()}
        self.scalar_req = {r: a.astype(object) for r, a in self.scalar_req.items()}

    def _account(self, info: NodeInfo, entry: PodEntry, sign: int) -> None:
        pos, facts = info.pos, entry.facts
        if facts.huge:
            self.exact_ints()
        if sign > 0:
            self.req_fit[:, pos] += facts.fit
            self.free_fit[:, pos] -= facts.fit
            self.nz[:, pos] += facts.nz
            self.free_nz[:, pos] -= facts.nz
        else:
            self.req_fit[:, pos] -= facts.fit
            self.free_fit[:, pos] += facts.fit
            self.nz[:, pos] -= facts.nz
            self.free_nz[:, pos] += facts.nz
        for r in facts.scalars:
            arr = self.scalar_req.get(r)
            if arr is not None:
                arr[pos] += sign * facts.req[r]
        if self.dtype is not object and (facts.large or self.req_fit[-1, pos] >= 8192):
            column = [*self.req_fit[:, pos], *self.alloc_fit[:, pos], *self.nz[:, pos]]
            column += [a[pos] for a in (*self.scalar_req.values(), *self.scalar_alloc.values())]
            if max(abs(v) for v in column) >= EXACT_INT64:
                self.exact_ints()
        if entry.anti:
            self.anti_pods += sign
            for term in entry.anti:
                key = (entry.namespace, term[1], term[2])
                found = self._carriers.get(key)
                if found is None:
                    found = self._carriers[key] = (term, entry.namespace, np.zeros(self.size, np.int64))
                found[2][pos] += sign
                if sign < 0 and not found[2].any():
                    del self._carriers[key]
        self._count(info, entry, sign)

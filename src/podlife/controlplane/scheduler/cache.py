"""The scheduler's cache of nodes and the pods on them (pkg/scheduler/internal/cache, framework.NodeInfo).

Upstream keeps one NodeInfo per node (requested resources, pods, the pods' affinity terms), changed by each
bind, pod update and deletion. Here the per-node numbers are numpy arrays in node-tree order
(internal/cache/node_tree.go), so the plugins check a slice of nodes at once:

- allocatable and requested resources (also the 100m / 200Mi non-zero requests scoring uses), pod counts;
- per (namespace, label selector) the matching pods that are not terminating, per node and per topology domain
  (podtopologyspread countPodsMatchSelector and its per-domain sums), for the selectors scheduling asked about;
- per required pod anti-affinity term: the pods it selects and the pods that carry it, per node;
- per set of required pod affinity terms: the pods matching all of them, per node.

Every count moves with the pod that moves it: nothing is recounted per scheduling cycle. When nodes come or
go the arrays are permuted into the new node-tree order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import numpy as np
import orjson

from podlife.api.defaults import pod_requests
from podlife.api.hostports import ALL_IPS, host_ports
from podlife.api.meta import Obj, kept
from podlife.api.quantity import parse_quantity
from podlife.api.selectors import Selector, compiled
from podlife.api.speckey import name_free, nodeless_key

RESOURCES = ("cpu", "memory", "ephemeral-storage")
FIT = (*RESOURCES, "pods")   # the rows of the stacked fit arrays (requested "pods": the pods on the node)
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
# pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest / DefaultMemoryRequest (GetNonzeroRequests)
NON_MISSING = {"cpu": "100m", "memory": "200Mi"}
MAX_COUNTERS = 2048  # kept selectors; the least recently used beyond this are dropped (and recounted if asked)
MAX_SPECS = 4096     # pod specs whose facts are kept
# resource amounts are int64 while every one stays below 2**53: then (value * 100) cannot overflow and float64
# divisions equal Python's exactly rounded int / int; beyond, the arrays hold Python ints
EXACT_INT64 = 2 ** 53
LARGE = 2 ** 40   # a pod asking less of everything cannot lift a node past EXACT_INT64 before 8,192 pods

# (namespace, labels, terminating) → does the counter count such a pod
Match = Callable[[str, dict, bool], bool]
Need = tuple[str, str, str]   # a namespace and a label's key and value


def selector_key(selector: Any) -> bytes:
    return orjson.dumps(selector, option=orjson.OPT_SORT_KEYS)


class Term(NamedTuple):
    """A required pod (anti-)affinity term (framework.AffinityTerm), its selector parsed once."""
    selector: Selector                    # labels.Nothing() when the term has no labelSelector
    namespaces: frozenset[str] | None     # None: the pod's own namespace; ALL_NAMESPACES: every one
    sel_key: bytes
    topology_key: str


ALL_NAMESPACES = frozenset({"*"})   # namespaceSelector {} selects every namespace ("*" names none)


def _terms(terms: Any) -> tuple[Term, ...]:
    out = []
    for t in terms or ():
        # metav1.LabelSelectorAsSelector: a missing labelSelector is labels.Nothing(), {} is Everything()
        sel = t.get("labelSelector")
        namespaces = frozenset(t.get("namespaces") or ())
        if t.get("namespaceSelector") == {}:
            namespaces = ALL_NAMESPACES
        out.append(Term(compiled(sel), namespaces or None, selector_key(sel), t.get("topologyKey", "")))
    return tuple(out)


def required_terms(spec: dict) -> tuple[tuple[Term, ...], tuple[Term, ...]]:
    """The pod's required anti-affinity and affinity terms (interpodaffinity, any topology key)."""
    aff = spec.get("affinity") or {}
    anti = (aff.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    affinity = (aff.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    return _terms(anti), _terms(affinity)


def weighted_terms(spec: dict) -> tuple[tuple[Term, int], ...]:
    """What InterPodAffinity scoring weighs of a pod's own terms, each with its signed weight: preferred
    affinity (+weight), preferred anti-affinity (-weight), required affinity (hardPodAffinityWeight, 1)."""
    aff = spec.get("affinity") or {}
    out: list[tuple[Term, int]] = []
    for kind, sign in (("podAffinity", 1), ("podAntiAffinity", -1)):
        for p in (aff.get(kind) or {}).get("preferredDuringSchedulingIgnoredDuringExecution") or ():
            for term in _terms([p.get("podAffinityTerm") or {}]):
                out.append((term, sign * int(p.get("weight") or 0)))
    return tuple(out)


HARD_POD_AFFINITY_WEIGHT = 1   # InterPodAffinityArgs default


def term_matches(term: Term, owner_ns: str, ns: str, labels: dict) -> bool:
    """AffinityTerm.Matches: the term of a pod in ``owner_ns`` selects a pod in ``ns`` with these labels."""
    sel, namespaces, _, _ = term
    if namespaces is None:
        ok = ns == owner_ns
    else:
        ok = namespaces is ALL_NAMESPACES or ns in namespaces
    return ok and sel.matches(labels)


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
    required pod anti-affinity and affinity terms."""
    __slots__ = ("req", "nz_cpu", "nz_mem", "anti", "affinity", "preferred", "huge", "large", "scalars", "fit",
                 "nz", "priority", "weighs", "ports")

    def __init__(self, spec: dict) -> None:
        self.priority = int(spec.get("priority") or 0)   # corev1helpers.PodPriority: 0 when unset
        self.req = pod_requests(spec)
        nz = pod_requests(spec, non_missing=NON_MISSING)
        self.nz_cpu, self.nz_mem = nz.get("cpu", 0), nz.get("memory", 0)
        self.anti, self.affinity = required_terms(spec)
        self.ports = host_ports(spec)
        self.preferred = weighted_terms(spec)   # the pod's own preferred terms (scoring an incoming pod)
        # the terms by which the pod, once on a node, weighs others (existing pods' terms in scoring)
        self.weighs = self.preferred + tuple((t, HARD_POD_AFFINITY_WEIGHT) for t in self.affinity)
        amounts = (*self.req.values(), self.nz_cpu, self.nz_mem)
        self.huge = any(abs(v) >= EXACT_INT64 for v in amounts)
        self.large = any(abs(v) >= LARGE for v in amounts)
        self.scalars = tuple(r for r in self.req if r not in RESOURCES)
        self.fit = np.array([self.req.get(r, 0) for r in RESOURCES] + [1], object if self.huge else np.int64)
        self.nz = np.array([self.nz_cpu, self.nz_mem], object if self.huge else np.int64)


class PodEntry:
    """What the cache keeps of a pod on a node."""
    __slots__ = ("uid", "namespace", "name", "labels", "labels_key", "facts", "anti", "terminating")

    def __init__(self, pod: Obj, facts: SpecFacts) -> None:
        md = pod["metadata"]
        self.uid = md["uid"]
        self.namespace = md.get("namespace", "")
        self.name = md.get("name", "")
        self.facts, self.anti = facts, facts.anti
        self.refresh(pod)

    def refresh(self, pod: Obj) -> None:
        md = pod["metadata"]
        self.labels = md.get("labels") or {}
        self.labels_key = frozenset(self.labels.items())
        self.terminating = bool(md.get("deletionTimestamp"))


class NodeInfo:
    __slots__ = ("name", "node", "labels", "allocatable", "unschedulable", "hard_taints", "soft_taints",
                 "zone_key", "pods", "pos", "_sig", "ports")

    def __init__(self, node: Obj) -> None:
        self.name = node["metadata"]["name"]
        self.pods: dict[str, PodEntry] = {}
        self.ports: Counter[tuple[str, str, int]] = Counter()   # framework.HostPortInfo: used host ports
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
    """The pods one predicate counts, per node position and (once asked) per topology domain. ``need``: a
    namespace and label (key, value) that every pod the predicate matches has, or None."""
    __slots__ = ("match", "need", "counts", "domains", "used")

    def __init__(self, match: Match, need: Need | None, size: int) -> None:
        self.match, self.need = match, need
        self.counts = np.zeros(size, np.int64)
        self.domains: dict[str, np.ndarray] = {}   # topology key → matching pods per domain id
        self.used = 0


class PodGroup:
    """The pods that any selector matches alike (same namespace, labels and terminating), per node: replicas of a
    template share one, so a new counter evaluates its selector once per group rather than once per pod."""
    __slots__ = ("namespace", "labels", "terminating", "nodes", "counters")

    def __init__(self, entry: PodEntry, counters: dict[PodCounter, None]) -> None:
        self.namespace, self.labels, self.terminating = entry.namespace, entry.labels, entry.terminating
        self.nodes: dict[NodeInfo, int] = {}   # counted node → pods of the group on it
        self.counters = counters                # the kept counters whose predicate matches the group (a set)


class NodeCache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._tree: dict[str, list[NodeInfo]] = {}   # node_tree.go: zone → nodes, zones in order of addition
        self._gone: dict[str, NodeInfo] = {}         # deleted nodes that still have pods (not scheduled onto)
        self._restored: list[NodeInfo] = []         # nodes back with pods, counted at the next layout
        self._pod_node: dict[str, str] = {}
        self._order: list[NodeInfo] | None = None   # None: nodes came or went, lay the arrays out again
        self.generation = 0                         # bumped at each layout
        self.epoch = 0                              # bumped when arrays or counters handed out may be stale
        self.resized: list[int] = []                # positions whose allocatable or requested amounts changed since
                                                    # the layout (a position may repeat)
        self.balances: Any = None                   # plugins.Balances, kept in step with ``resized``
        self.resource_scores: dict[tuple, Any] = {}  # request → plugins.ResourceScores, likewise
        self.changed: list[int] = []                # positions whose taints, labels or allocatable changed since
        self.anti_pods = 0                          # pods with required anti-affinity, cluster-wide
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
        self._per_node: dict[str, bool] = {}        # topology key → no two nodes share a value
        self._zone_ids: np.ndarray | None = None    # per position: the id of the node's zone key (-1: none)
        self._counters: dict[Any, PodCounter] = {}
        # the kept counters by their need (None: the counters without one); a group has a counter's need among
        # its labels or the counter does not match it, so a new group or counter is matched against only these
        self._counters_by_need: dict[Need | None, dict[PodCounter, None]] = {}
        self._groups: dict[tuple[str, frozenset, bool], PodGroup] = {}   # of the counted pods
        self._groups_by_label: dict[Need, dict[PodGroup, None]] = {}     # (namespace, key, value) → groups
        self._carriers: dict[tuple, tuple[Term, str, np.ndarray]] = {}   # anti term → carriers per position
        # weighted term (InterPodAffinity scoring) → (term, namespace, weight, carriers per position)
        self._weighing: dict[tuple, tuple[Term, str, int, np.ndarray]] = {}
        self._tick = 0
        self._port_users: dict[tuple[str, int], dict[str, int]] = {}   # (protocol, port) → node → pods using it
        self.priorities: dict[int, int] = {}        # priority → how many pods on the nodes have it
        self._facts: dict[bytes, SpecFacts] = {}
        self.templates: dict[Any, Any] = {}         # the plugins' per pod template state (plugins.PodTemplate)
        self.templates_by_identity: dict[tuple[str, int, int], tuple[dict, dict, Any]] = {}   # see plugins.template
        self.node_only: dict[bytes, Any] = {}       # node constraints → their per-node outcomes (plugins.NodeOnly)

    def spec_facts(self, spec: dict) -> SpecFacts:
        """The facts of a pod spec, worked out once per distinct spec (replicas share theirs; nodeName aside)."""
        # SpecFacts do not read volume names; a stored spec's key less nodeName is at hand (its JSON in its own
        # key order): equal keys of either kind are equal specs but for nodeName
        key = nodeless_key(spec)
        if key is None:
            try:
                key = name_free(orjson.dumps({k: v for k, v in spec.items() if k != "nodeName"},
                                             option=orjson.OPT_SORT_KEYS))
            except TypeError:
                return SpecFacts(spec)
        facts = self._facts.get(key)
        if facts is None:
            if len(self._facts) >= MAX_SPECS:
                self._facts.clear()
            facts = self._facts[kept(key)] = SpecFacts(spec)
        return facts

    # ---- nodes ------------------------------------------------------------------------------------

    def node_count(self) -> int:
        return len(self.nodes)

    def set_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            # cache.go AddNode: a node deleted while pods were still on it comes back with them
            info = self._gone.pop(name, None)
            if info is None:
                info = NodeInfo(node)
            else:
                info.update(node)
                self._restored.append(info)
            self.nodes[name] = info
            self._tree_add(info)
            self._order = None
            return
        old_zone, old_labels = info.zone_key, info.labels
        if not info.update(node):
            return
        if info.zone_key != old_zone:
            self._zone_ids = None
            # node_tree.go updateNode: out of the old zone, to the end of the new one; the scheduling order
            # (the snapshot's node list) is rebuilt from the tree only when a node comes or goes
            self._tree_remove(info, old_zone)
            self._tree_add(info)
        if self._order is None:
            return
        pos = info.pos
        self._set_static(pos, info)
        self.free_fit[:, pos] = self.alloc_fit[:, pos] - self.req_fit[:, pos]
        self.free_nz[:, pos] = self.alloc_fit[:2, pos] - self.nz[:, pos]
        self.changed.append(pos)
        self.resized.append(pos)
        if info.labels != old_labels:
            for key, (ids, values) in self._domain_ids.items():
                v = info.labels.get(key)
                ids[pos] = -1 if v is None else values.setdefault(v, len(values))
                self._everywhere[key] = bool(ids.min(initial=0) >= 0)
                self._per_node.pop(key, None)
                for c in self._counters.values():
                    c.domains.pop(key, None)

    def remove_node(self, name: str) -> None:
        """cache.go RemoveNode: the node leaves the tree; its pods stay known (the NodeInfo is kept while pods
        are on it, and a node of that name added again has them)."""
        info = self.nodes.pop(name, None)
        if info is None:
            return
        self._tree_remove(info, info.zone_key)
        if info in self._restored:
            self._restored.remove(info)   # re-added and removed again before its pods were counted
        else:   # the next layout drops its columns from every per-node array; the cluster-wide counts stay
            self.anti_pods -= sum(1 for e in info.pods.values() if e.anti)
            for e in info.pods.values():
                left = self.priorities.get(e.facts.priority, 0) - 1
                if left > 0:
                    self.priorities[e.facts.priority] = left
                else:
                    self.priorities.pop(e.facts.priority, None)
            for (_, protocol, port) in info.ports:
                self._port_users.get((protocol, port), {}).pop(name, None)
            info.ports.clear()
            for e in info.pods.values():
                self._group(info, e, -1)
        if info.pods:
            self._gone[name] = info
        info.pos = -1
        self._order = None

    def _tree_add(self, info: NodeInfo) -> None:
        self._tree.setdefault(info.zone_key, []).append(info)

    def _tree_remove(self, info: NodeInfo, zone: str) -> None:
        nodes = self._tree.get(zone, [])
        if info in nodes:
            nodes.remove(info)
        if not nodes:
            self._tree.pop(zone, None)   # node_tree.go removeZone

    def ordered(self) -> list[NodeInfo]:
        """internal/cache/node_tree.go list(): zones in the order they were added (a zone that emptied is
        forgotten), nodes of a zone in order of addition, taken one per zone in turn (zones interleaved)."""
        if self._order is None:
            self._layout()
        assert self._order is not None
        return self._order

    def _layout(self) -> None:
        """Lay every per-node array out in the new node-tree order: kept nodes keep their numbers."""
        order: list[NodeInfo] = []
        lists = list(self._tree.values())
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
        self._weighing = {k: (term, ns, w, permute(arr)) for k, (term, ns, w, arr) in self._weighing.items()}
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
        self._per_node.clear()
        self._zone_ids = None
        self.generation += 1
        self.epoch += 1
        self.changed = []
        self.resized = []
        restored, self._restored = self._restored, []
        for info in restored:
            for entry in info.pods.values():
                self._account(info, entry, +1)

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

    def zone_ids(self) -> np.ndarray:
        """Per position the id of the node's zone key (GetZoneKey: region and zone), -1 for a node without."""
        self.ordered()
        if self._zone_ids is None:
            values: dict[str, int] = {}
            self._zone_ids = np.fromiter((values.setdefault(i.zone_key, len(values)) if i.zone_key else -1
                                          for i in self._order or ()), np.int64, self.size)
        return self._zone_ids

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

    def counter(self, key: Any, match: Match, need: Need | None = None) -> PodCounter:
        """The counter of ``key`` (made and counted over every group of pods the first time it is asked for)."""
        self.ordered()
        c = self._counters.get(key)
        if c is None:
            if len(self._counters) >= MAX_COUNTERS:
                gone = self._counters.pop(min(self._counters, key=lambda k: self._counters[k].used))
                same_need = self._counters_by_need[gone.need]
                del same_need[gone]
                if not same_need:
                    del self._counters_by_need[gone.need]
                for g in self._candidate_groups(gone.need):
                    g.counters.pop(gone, None)
                self.epoch += 1
            c = self._counters[key] = PodCounter(match, need, self.size)
            self._counters_by_need.setdefault(need, {})[c] = None
            counts = c.counts
            for g in self._candidate_groups(need):
                if match(g.namespace, g.labels, g.terminating):
                    g.counters[c] = None
                    for info, n in g.nodes.items():
                        counts[info.pos] += n
        return c

    def _candidate_groups(self, need: Need | None) -> Iterable[PodGroup]:
        """The groups a counter with this need may match."""
        if need is None:
            return self._groups.values()
        return self._groups_by_label.get(need, {})

    def spread_counter(self, namespace: str, selector: Any, sel_key: bytes) -> PodCounter:
        """podtopologyspread countPodsMatchSelector: same namespace, not terminating, labels match."""
        key = ("spread", namespace, sel_key)
        c = self._counters.get(key)
        if c is None:
            sel = compiled(selector)
            pair = sel.required_pair()
            c = self.counter(key, lambda ns, labels, terminating: ns == namespace and not terminating
                             and sel.matches(labels), None if pair is None else (namespace, *pair))
        self._tick += 1
        c.used = self._tick
        return c

    def term_counter(self, term: Term, owner_ns: str) -> PodCounter:
        """The pods (terminating ones too) an incoming pod's (anti-)affinity term selects."""
        key = ("term", owner_ns, term.namespaces, term.sel_key)
        c = self._counters.get(key)
        if c is None:
            c = self.counter(key, lambda ns, labels, terminating: term_matches(term, owner_ns, ns, labels))
        self._tick += 1
        c.used = self._tick
        return c

    def affinity_counter(self, terms: tuple[Term, ...], owner_ns: str) -> PodCounter:
        """interpodaffinity getExistingAffinityCounts... podMatchesAllAffinityTerms: the pods (terminating ones
        too) that every one of an incoming pod's required affinity terms selects."""
        key = ("affinity", owner_ns, tuple((t.namespaces, t.sel_key) for t in terms))
        c = self._counters.get(key)
        if c is None:
            c = self.counter(key, lambda ns, labels, terminating: all(term_matches(t, owner_ns, ns, labels)
                                                                      for t in terms))
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

    def domain_sums(self, per_position: np.ndarray, key: str, sel: Any) -> np.ndarray:
        """For each selected node, ``per_position`` (a count per node position) summed over its domain (the
        nodes with the same value of the label ``key``); 0 for a node without the label."""
        ids = self.domain_ids(key)
        if self._per_node.get(key) is None:
            has = ids[ids >= 0]
            self._per_node[key] = len(has) == self.domain_count(key)
        mine = ids[sel]
        if self._per_node[key]:   # every value on one node (kubernetes.io/hostname): the domain is the node
            return np.where(mine >= 0, per_position[sel], 0)
        has = ids >= 0
        totals = np.bincount(ids[has], weights=per_position[has], minlength=self.domain_count(key)).astype(np.int64)
        if not len(totals):
            return np.zeros(len(mine), np.int64)
        return np.where(mine >= 0, totals[np.maximum(mine, 0)], 0)

    def occupied(self, per_position: np.ndarray, key: str, sel: Any) -> np.ndarray:
        """Of the selected nodes, those that carry the label ``key`` and whose domain holds at least one of
        ``per_position``."""
        return self.domain_sums(per_position, key, sel) > 0

    @property
    def weighs(self) -> bool:
        """Some pod in the cache has a term InterPodAffinity scoring weighs."""
        return bool(self._weighing)

    def weighing(self) -> list[tuple[Term, str, int, np.ndarray]]:
        """The weighted terms of the pods in the cache: (term, its pod's namespace, signed weight, carrier pods
        per position)."""
        self.ordered()
        return list(self._weighing.values())

    def port_conflicts(self, wanted: tuple[tuple[str, str, int], ...]) -> np.ndarray:
        """Per node position: a wanted host port is taken (HostPortInfo.CheckConflict: the same protocol and
        port, on the same IP or where either side binds every IP)."""
        self.ordered()
        taken = np.zeros(self.size, bool)
        for ip, protocol, port in wanted:
            for name in self._port_users.get((protocol, port), ()):
                info = self.nodes.get(name)
                if info is None or taken[info.pos]:
                    continue
                taken[info.pos] = any(p[1] == protocol and p[2] == port and
                                      (ip == ALL_IPS or p[0] in (ALL_IPS, ip)) for p in info.ports)
        return taken

    def carriers(self) -> list[tuple[Term, str, np.ndarray]]:
        """Anti-affinity terms of the pods in the cache: (term, its pod's namespace, carrier pods per position)."""
        self.ordered()
        return list(self._carriers.values())

    def _group(self, info: NodeInfo, entry: PodEntry, sign: int) -> PodGroup:
        """Count the pod in (sign 1) or out of (-1) its group on the node."""
        key = (entry.namespace, entry.labels_key, entry.terminating)
        g = self._groups.get(key)
        if g is None:
            ns, labels, terminating = entry.namespace, entry.labels, entry.terminating
            g = self._groups[key] = PodGroup(entry, {})
            by_need = self._counters_by_need
            for need in (None, *((ns, k, v) for k, v in labels.items())):
                for c in by_need.get(need, ()):
                    if c.match(ns, labels, terminating):
                        g.counters[c] = None
                if need is not None:
                    self._groups_by_label.setdefault(need, {})[g] = None
        n = g.nodes.get(info, 0) + sign
        if n:
            g.nodes[info] = n
        else:
            del g.nodes[info]
            if not g.nodes:
                del self._groups[key]
                for k, v in g.labels.items():
                    same = self._groups_by_label[(g.namespace, k, v)]
                    del same[g]
                    if not same:
                        del self._groups_by_label[(g.namespace, k, v)]
        return g

    def _count(self, info: NodeInfo, entry: PodEntry, sign: int) -> None:
        pos = info.pos
        for c in self._group(info, entry, sign).counters:
            c.counts[pos] += sign
            for tkey, totals in c.domains.items():
                d = self._domain_ids[tkey][0][pos]
                if d >= 0:
                    totals[d] += sign

    # ---- pods -------------------------------------------------------------------------------------

    def add_pod(self, pod: Obj, facts: SpecFacts | None = None) -> None:
        """``facts``: those of the pod's spec, if known."""
        uid = pod["metadata"]["uid"]
        if uid in self._pod_node:
            # internal/cache updatePod: a known pod's labels and deletion are refreshed. Its requests stay: an
            # in-place resize (InPlacePodVerticalScaling: alpha 1.27, on by default from 1.33) goes through the
            # pods/resize subresource, which podlife does not serve, and a plain update may not change them
            known = self.nodes.get(self._pod_node[uid])
            entry = known.pods.get(uid) if known is not None else None
            md = pod["metadata"]
            if known is None:   # on a deleted node: nothing counted to move
                ghost = self._gone.get(self._pod_node[uid])
                if ghost is not None and uid in ghost.pods:
                    ghost.pods[uid].refresh(pod)
                return
            labels = md.get("labels") or {}
            if entry is not None and ((entry.labels is not labels and entry.labels != labels) or
                                      entry.terminating != bool(md.get("deletionTimestamp"))):
                self.ordered()
                self._count(known, entry, -1)
                entry.refresh(pod)
                self._count(known, entry, +1)
            return
        node = pod["spec"]["nodeName"]
        info = self.nodes.get(node)
        if info is None:
            # cache.go AddPod: a pod bound to a node the cache does not have (deleted, or not yet seen) is kept
            # on a NodeInfo without node; the node, once added, has it
            ghost = self._gone.get(node)
            if ghost is None:
                ghost = self._gone[node] = NodeInfo({"metadata": {"name": node}})
            ghost.pods[uid] = PodEntry(pod, facts or self.spec_facts(pod["spec"]))
            self._pod_node[uid] = node
            return
        self.ordered()
        entry = PodEntry(pod, facts or self.spec_facts(pod["spec"]))
        info.pods[uid] = entry
        self._account(info, entry, +1)
        self._pod_node[uid] = node

    def remove_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        node = self._pod_node.pop(uid, None)
        info = self.nodes.get(node) if node else None
        if info is None:
            ghost = self._gone.get(node) if node else None
            if ghost is not None and node:
                ghost.pods.pop(uid, None)
                if not ghost.pods:   # cache.go RemovePod: the NodeInfo of a deleted node goes with its last pod
                    del self._gone[node]
            return
        if info in self._restored:   # back with its pods, not yet counted
            info.pods.pop(uid, None)
            return
        entry = info.pods.pop(uid, None)
        if entry is None:
            return
        self.ordered()
        self._account(info, entry, -1)

    # ---- what-if (preemption's dry runs, nominated pods) --------------------------------------------

    def take_pods(self, info: NodeInfo, entries: list[PodEntry]) -> None:
        """Count these pods off their node for a dry run (put_back undoes it exactly)."""
        self.ordered()
        for e in entries:
            del info.pods[e.uid]
            self._account(info, e, -1)

    def put_back(self, info: NodeInfo, entries: list[PodEntry], order: list[str]) -> None:
        """Count taken pods on their node again; ``order``: the node's pods in their order before."""
        for e in entries:
            info.pods[e.uid] = e
            self._account(info, e, +1)
        info.pods = {uid: info.pods[uid] for uid in order if uid in info.pods}

    def reserve(self, pos: int, facts: SpecFacts, sign: int) -> None:
        """Add (sign 1) or remove (-1) a nominated pod's requests on a node for the fit filter
        (framework.go addGEPriorityNominatedPods)."""
        if facts.huge:
            self.exact_ints()
        for r in facts.scalars:
            self.scalar(r)   # made (from the pods alone) before the reservation counts on it
        self.req_fit[:, pos] += sign * facts.fit
        self.free_fit[:, pos] -= sign * facts.fit
        self.resized.append(pos)
        for r in facts.scalars:
            arr = self.scalar_req.get(r)
            if arr is not None:
                arr[pos] += sign * facts.req[r]

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
        self.resized.append(pos)
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
                key = (entry.namespace, term.namespaces, term.sel_key, term.topology_key)
                found = self._carriers.get(key)
                if found is None:
                    found = self._carriers[key] = (term, entry.namespace, np.zeros(self.size, np.int64))
                found[2][pos] += sign
                if sign < 0 and not found[2].any():
                    del self._carriers[key]
        prio = self.priorities
        left = prio.get(facts.priority, 0) + sign
        if left > 0:
            prio[facts.priority] = left
        else:
            prio.pop(facts.priority, None)
        for port in facts.ports:
            info.ports[port] += sign
            if info.ports[port] <= 0:
                del info.ports[port]
            users = self._port_users.setdefault(port[1:], {})
            users[info.name] = users.get(info.name, 0) + sign
            if users[info.name] <= 0:
                del users[info.name]
        for term, weight in entry.facts.weighs:
            wkey = (entry.namespace, term.namespaces, term.sel_key, term.topology_key, weight)
            found2 = self._weighing.get(wkey)
            if found2 is None:
                found2 = self._weighing[wkey] = (term, entry.namespace, weight, np.zeros(self.size, np.int64))
            found2[3][pos] += sign
            if sign < 0 and not found2[3].any():
                del self._weighing[wkey]
        self._count(info, entry, sign)

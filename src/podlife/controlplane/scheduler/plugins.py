"""Filter and score plugins of the default profile (pkg/scheduler/framework/plugins), over arrays of nodes.

Each plugin checks or scores a selection of node positions (a slice or an index array into the cache's
node-tree order) at once, with the integer and float64 arithmetic of the Go code. What depends only on the
pod's spec and on the nodes' labels and taints (tolerated taints, node affinity, preferred terms) is computed
once per pod template (``PodTemplate``: the replicas of a ReplicaSet share one) and kept in step with node
changes; what changes with every binding (requested resources, matching pods per node and domain) is read from
the cache's arrays.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np
import orjson

from podlife.api.meta import Obj, kept
from podlife.api.selectors import NodeSelectorTermMatcher, compiled_node_selector_term, matches
from podlife.api.speckey import name_free, stored_key
from podlife.controlplane.scheduler.cache import (
    HOSTNAME,
    RESOURCES,
    ZONE,
    NodeCache,
    NodeInfo,
    PodCounter,
    SpecFacts,
    selector_key,
    term_matches,
)

MAX_NODE_SCORE = 100
# schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
MAX_TEMPLATES = 4096

# filter reasons (upstream wording, plugin files named)
R_UNSCHEDULABLE = "node(s) were unschedulable"                                   # nodeunschedulable
R_NODE_NAME = "node(s) didn't match the requested node name"                     # nodename
R_AFFINITY = "node(s) didn't match Pod's node affinity/selector"                 # nodeaffinity ErrReasonPod
R_TOO_MANY_PODS = "Too many pods"                                                # noderesources/fit.go
R_PORTS = "node(s) didn't have free ports for the requested pod ports"           # nodeports/node_ports.go
R_POD_AFFINITY = "node(s) didn't match pod affinity rules"                       # interpodaffinity/filtering.go
R_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"                 # interpodaffinity/filtering.go
R_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"     # interpodaffinity/filtering.go
R_SPREAD = "node(s) didn't match pod topology spread constraints"                # podtopologyspread/filtering.go
R_SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"

# system default constraints of PodTopologySpread (podtopologyspread/plugin.go systemDefaultConstraints)
SYSTEM_DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))

# the static filters' outcome per node, in the default filter order
OK, UNSCHEDULABLE, NODE_NAME, TAINT, AFFINITY = range(5)

Selection = Union[slice, np.ndarray]   # node positions: a slice of the node-tree order or an index array


def _tolerates(taint: Obj, tolerations: list[Obj]) -> bool:
    """core/v1 Toleration.ToleratesTaint."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator", "Equal") == "Exists":
            if not t.get("key") or t["key"] == taint["key"]:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", ""):
            return True
    return False


@dataclass
class SpreadConstraint:
    """A topology spread constraint of a pod, parsed."""

    key: str
    max_skew: int
    selector: dict
    self_match: int = 0
    sel_key: bytes = b""
    min_domains: int = 0          # below this many eligible domains the global minimum is 0
    honor_affinity: bool = True   # nodeAffinityPolicy Honor: only nodes the pod's node affinity admits count
    honor_taints: bool = False    # nodeTaintsPolicy Honor: only nodes whose taints the pod tolerates count

    def __post_init__(self) -> None:
        self.sel_key = selector_key(self.selector)


class NodeOnly:
    """The per-node outcomes of the node-only filters (NodeUnschedulable, NodeName, TaintToleration,
    NodeAffinity) and the node-only scores' raw values (TaintToleration, NodeAffinity) for one set of node
    constraints (nodeName, nodeSelector, node affinity, tolerations), kept in step with the cache's nodes. Every
    template with those constraints shares one: the replicas of different Deployments mostly have the same."""

    def __init__(self, spec: dict) -> None:
        self.tolerations = spec.get("tolerations") or []
        self.tolerates_unschedulable = any(
            t.get("key") == "node.kubernetes.io/unschedulable" and t.get("effect") in (None, "", "NoSchedule")
            or (t.get("operator") == "Exists" and not t.get("key") and t.get("effect") in (None, "", "NoSchedule"))
            for t in self.tolerations)
        self.tolerations_soft = [t for t in self.tolerations if t.get("effect") in (None, "", "PreferNoSchedule")]
        self.node_name = spec.get("nodeName")
        self.node_selector = spec.get("nodeSelector") or {}
        node_aff = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        req_aff = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        self.affinity_terms = [compiled_node_selector_term(t) for t in req_aff.get("nodeSelectorTerms") or []]
        self.preferred: list[tuple[int, NodeSelectorTermMatcher]] = [
            (int(t.get("weight", 0)), compiled_node_selector_term(t.get("preference") or {}))
            for t in node_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        # per node position
        self._generation = -1
        self._synced = 0
        self.code = np.zeros(0, np.int8)          # OK or the first static filter that fails
        self.taint_reason: dict[int, str] = {}    # position → the first untolerated taint's reason
        self.static_ok = np.zeros(0, bool)
        self.all_static_ok = True
        self.all_taint_ok = True
        self.aff_ok = np.zeros(0, bool)           # the node passes the pod's node selector and required affinity
        self.taint_ok = np.zeros(0, bool)         # the pod tolerates the node's NoSchedule / NoExecute taints
        self.taint_raw = np.zeros(0, np.int64)    # PreferNoSchedule taints not tolerated
        self.any_taint_raw = False
        self.pref_raw = np.zeros(0, np.int64)     # the weights of the preferred terms the node matches

    @staticmethod
    def key(spec: dict) -> bytes:
        """What the outcomes depend on (orjson.JSONEncodeError, a TypeError, if the spec is not JSON)."""
        return orjson.dumps([spec.get("nodeName"), spec.get("nodeSelector"),
                             (spec.get("affinity") or {}).get("nodeAffinity"), spec.get("tolerations")],
                            option=orjson.OPT_SORT_KEYS)

    def node_matches_affinity(self, info: NodeInfo) -> bool:
        labels = info.labels
        if any(labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        return not self.affinity_terms or any(t.matches(labels, info.name) for t in self.affinity_terms)

    def sync(self, cache: NodeCache) -> None:
        order = cache.ordered()
        if self._generation != cache.generation:
            n = len(order)
            self.code = np.zeros(n, np.int8)
            self.aff_ok = np.ones(n, bool)
            self.taint_ok = np.ones(n, bool)
            self.taint_raw = np.zeros(n, np.int64)
            self.pref_raw = np.zeros(n, np.int64)
            self.taint_reason = {}
            every = self.node_name or self.node_selector or self.affinity_terms or self.preferred
            for pos, info in enumerate(order):
                if every or info.unschedulable or info.hard_taints or info.soft_taints:
                    self._node(pos, info)
            self._generation, self._synced = cache.generation, len(cache.changed)
        elif self._synced < len(cache.changed):
            for pos in cache.changed[self._synced:]:
                self._node(pos, order[pos])
            self._synced = len(cache.changed)
        else:
            return
        self.static_ok = self.code == OK
        self.all_static_ok = bool(self.static_ok.all())
        self.all_taint_ok = bool(self.taint_ok.all())
        self.any_taint_raw = bool(self.taint_raw.any())

    def _node(self, pos: int, info: NodeInfo) -> None:
        """The node-only filters in the default order (NodeUnschedulable, NodeName, TaintToleration,
        NodeAffinity) and the node-only scores' raw values (TaintToleration, NodeAffinity)."""
        self.taint_reason.pop(pos, None)
        aff = self.node_matches_affinity(info)
        self.aff_ok[pos] = aff
        code = OK
        if info.unschedulable and not self.tolerates_unschedulable:
            code = UNSCHEDULABLE
        elif self.node_name and self.node_name != info.name:
            code = NODE_NAME
        else:
            for taint in info.hard_taints:
                if not _tolerates(taint, self.tolerations):
                    code = TAINT
                    self.taint_reason[pos] = \
                        f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}"
                    break
            else:
                if not aff:
                    code = AFFINITY
        self.code[pos] = code
        self.taint_ok[pos] = all(_tolerates(taint, self.tolerations) for taint in info.hard_taints)
        self.taint_raw[pos] = sum(1 for t in info.soft_taints if not _tolerates(t, self.tolerations_soft))
        self.pref_raw[pos] = sum(w for w, t in self.preferred if t.matches(info.labels, info.name))


class PodTemplate:
    """What the plugins need of a pod's namespace, labels and spec, computed once for all pods that share them;
    the per-node outcomes of its node constraints are its ``nodes``."""

    def __init__(self, namespace: str, labels: dict, spec: dict, facts: SpecFacts, nodes: NodeOnly) -> None:
        self.namespace, self.labels = namespace, labels
        self.facts = facts
        self.req, self.huge = facts.req, facts.huge
        # noderesources/fit.go checks only the resources the pod asks for (and always one more pod): a
        # resource it does not ask for is never short, whatever the node's free amount
        wants = [self.req.get(r, 0) for r in RESOURCES] + [1]
        self.fit_want_exact = np.array([[w if w else -math.inf] for w in wants], object)   # for Python ints
        self.fit_want = self.fit_want_exact if self.huge else \
            np.array([[w if w else np.iinfo(np.int64).min] for w in wants], np.int64)
        self.fit_rows = [(f"Insufficient {r}", i) for i, r in enumerate(RESOURCES) if wants[i]]
        self.nz = facts.nz[:, None]                                    # a column: cpu, memory
        self.requested = facts.fit[:2, None]                          # a column: cpu, memory
        self.best_effort = not (self.req.get("cpu") or self.req.get("memory"))   # requests no cpu, no memory
        # what the resource scores depend on (ResourceScores)
        self.request = (int(facts.nz[0]), int(facts.nz[1]), int(facts.fit[0]), int(facts.fit[1]), self.best_effort)
        self.scalar = sorted(r for r, v in self.req.items() if v and r not in RESOURCES and r != "pods")
        self.nodes = nodes
        self.node_selector, self.affinity_terms, self.preferred = nodes.node_selector, nodes.affinity_terms, \
            nodes.preferred
        self.anti, self.affinity, self.pod_preferred = facts.anti, facts.affinity, facts.preferred
        self.ports = facts.ports
        own = spec.get("topologySpreadConstraints") or []
        self.hard: list[SpreadConstraint] = []
        self.soft: list[SpreadConstraint] = []
        for c in own:
            sc = SpreadConstraint(c["topologyKey"], int(c.get("maxSkew", 1)), _with_label_keys(c, labels),
                                  min_domains=int(c.get("minDomains") or 0),
                                  honor_affinity=c.get("nodeAffinityPolicy", "Honor") == "Honor",
                                  honor_taints=c.get("nodeTaintsPolicy", "Ignore") == "Honor")
            sc.self_match = 1 if matches(sc.selector, labels) else 0
            (self.hard if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule" else self.soft).append(sc)
        self.system_defaulted = not own
        self._soft: dict[bytes | None, tuple[int, list[_Spread]]] = {}
        self.node_constraints = bool(nodes.node_name or self.node_selector or self.affinity_terms or self.anti
                                     or self.affinity
                                     or self.hard)

    def soft_spreads(self, cache: NodeCache, default_selector: dict | None) -> list[_Spread]:
        """The scoring constraints: the pod's own, else the system defaults with the selector of its Services /
        controllers (helper.DefaultSelector; none without one), with their counters (kept per selector while
        the cache's arrays stay valid)."""
        key = selector_key(default_selector) if default_selector else None
        found = self._soft.get(key)
        if found is None or found[0] != cache.epoch:
            soft = self.soft if key is None else [SpreadConstraint(k, s, default_selector or {})
                                                  for k, s in SYSTEM_DEFAULT_CONSTRAINTS]
            if len(self._soft) > 64:
                self._soft.clear()
            found = self._soft[key] = (cache.epoch, [
                _Spread(c, cache.spread_counter(self.namespace, c.selector, c.sel_key), cache.domain_ids(c.key))
                for c in soft])
        return found[1]


def template(cache: NodeCache, pod: Obj) -> PodTemplate:
    """The pod's template state, shared by every pod with the same namespace, labels and spec."""
    md, spec = pod["metadata"], pod["spec"]
    ns, labels = md.get("namespace", ""), md.get("labels") or {}
    # replicas waiting to be scheduled share their labels and spec objects in the store (Store._share), and
    # stored objects are never changed in place: the same objects are the same template
    same = cache.templates_by_identity.get((ns, id(labels), id(spec)))
    if same is not None and same[0] is labels and same[1] is spec:
        same[2].nodes.sync(cache)
        return same[2]
    try:
        # no plugin reads the name; a stored spec's key (its JSON in its own key order) is at hand: equal keys
        # of either kind are equal specs
        key: Any = (ns, orjson.dumps(labels, option=orjson.OPT_SORT_KEYS),
                    stored_key(spec) or name_free(orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)))
    except TypeError:
        key = None
    t = cache.templates.get(key) if key is not None else None
    if t is None:
        t = PodTemplate(ns, labels, spec, cache.spec_facts(spec), _node_only(cache, spec, key is not None))
        if key is not None:
            if len(cache.templates) >= MAX_TEMPLATES:
                cache.templates.clear()
                cache.templates_by_identity.clear()
                cache.node_only.clear()
            cache.templates[(key[0], kept(key[1]), kept(key[2]))] = t
    if key is not None:
        if len(cache.templates_by_identity) >= MAX_TEMPLATES:
            cache.templates_by_identity.clear()
        cache.templates_by_identity[(ns, id(labels), id(spec))] = (labels, spec, t)
    t.nodes.sync(cache)
    return t


def _node_only(cache: NodeCache, spec: dict, json: bool) -> NodeOnly:
    """The node constraints' state of templates with the spec's (one of its own if the spec is not JSON)."""
    if not json:
        return NodeOnly(spec)
    key = NodeOnly.key(spec)
    found = cache.node_only.get(key)
    if found is None:
        found = cache.node_only[kept(key)] = NodeOnly(spec)
    return found


class _Spread:
    """One spread constraint of one scheduling attempt: its counter and, for a filter constraint, the matching
    pods per domain over the eligible nodes and their minimum (podtopologyspread/filtering.go calPreFilterState)."""

    def __init__(self, c: SpreadConstraint, counter: PodCounter, ids: np.ndarray) -> None:
        self.c, self.counter, self.ids = c, counter, ids
        self.totals = np.zeros(0, np.int64)
        self.min_match = 0


class PodContext:
    """Everything about the pod the filters and scores need, for one scheduling attempt."""

    def __init__(self, pod: Obj, cache: NodeCache, default_selector: dict | None,
                 selector_spread: bool = False) -> None:
        t = self.t = template(cache, pod)
        if t.huge:
            cache.exact_ints()
        self.namespace, self.labels = t.namespace, t.labels
        self.check_existing_anti = cache.anti_pods > 0
        self.simple = not (t.node_constraints or self.check_existing_anti)
        # PodTopologySpread: the pod's own constraints, else the system defaults with the selector of its
        # Services / controllers (helper.DefaultSelector); an empty selector skips them
        self.system_defaulted = t.system_defaulted
        # before 1.20 the default spreading is the SelectorSpread plugin over the same selector
        self.selector_spread = cache.spread_counter(self.namespace, default_selector, selector_key(
            default_selector)) if selector_spread and default_selector and t.system_defaulted else None
        if selector_spread:
            default_selector = None
        self.soft = t.soft_spreads(cache, default_selector if t.system_defaulted else None)
        self.hard = [_Spread(c, cache.spread_counter(self.namespace, c.selector, c.sel_key), cache.domain_ids(c.key))
                     for c in t.hard]
        if self.hard:
            self._prefilter_spread(cache)

    def affinity_first(self, cache: NodeCache, counter: PodCounter) -> bool:
        """satisfyPodAffinity: no pod on a node with any of the terms' keys matches every term, and the pod
        matches all its own terms (podMatchesAllAffinityTerms)."""
        terms = self.t.affinity
        if not all(term_matches(term, self.namespace, self.namespace, self.labels) for term in terms):
            return False
        keyed = np.zeros(cache.size, bool)
        for term in terms:
            keyed |= cache.domain_ids(term.topology_key) >= 0
        return not counter.counts[keyed].any()

    def _prefilter_spread(self, cache: NodeCache) -> None:
        """filtering.go calPreFilterState: matching pods per domain over the nodes that carry every constraint's
        key and match the constraint's node inclusion policies; the global minimum over those domains (0 while
        there are fewer than minDomains of them)."""
        keyed = np.ones(cache.size, bool)
        for s in self.hard:
            keyed &= s.ids >= 0
        for s in self.hard:
            eligible = _included(s.c, self.t, keyed)
            ids = s.ids[eligible]
            size = cache.domain_count(s.c.key)
            s.totals = np.bincount(ids, weights=s.counter.counts[eligible], minlength=size).astype(np.int64)
            present = np.bincount(ids, minlength=size) > 0
            s.min_match = int(s.totals[present].min()) if present.any() else 0
            if int(np.count_nonzero(present)) < s.c.min_domains:
                s.min_match = 0


def _included(c: SpreadConstraint, t: PodTemplate, nodes: np.ndarray | None) -> np.ndarray:
    """common.go matchNodeInclusionPolicies: of ``nodes`` (a mask, None: all), those the constraint counts."""
    out = np.ones(len(t.nodes.aff_ok), bool) if nodes is None else nodes.copy()
    if c.honor_affinity:
        out &= t.nodes.aff_ok
    if c.honor_taints:
        out &= t.nodes.taint_ok
    return out


def _with_label_keys(c: dict, labels: dict) -> dict:
    """common.go filterTopologySpreadConstraints: matchLabelKeys add the pod's own values of those labels to
    the selector (from 1.34 the API server merges them in at creation, to the same effect)."""
    selector = c.get("labelSelector") or {}
    keys = [k for k in c.get("matchLabelKeys") or () if k in labels]
    if not keys:
        return selector
    exprs = list(selector.get("matchExpressions") or ())
    exprs += [{"key": k, "operator": "In", "values": [labels[k]]} for k in keys]
    return {**selector, "matchExpressions": exprs}


# ---- filters ---------------------------------------------------------------------------------------------

# one filter plugin's outcome over a selection: the nodes it fails, and (asked only for a diagnosis) the
# reasons, each with the nodes it applies to and whether preemption might help (Unschedulable rather than
# UnschedulableAndUnresolvable)
Reasons = Callable[[], list[tuple[str, np.ndarray, bool]]]


def _filters(ctx: PodContext, cache: NodeCache, sel: Selection) -> Iterator[tuple[np.ndarray, Reasons]]:
    """The default filters in order (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts,
    NodeResourcesFit, PodTopologySpread, InterPodAffinity): what each fails among the selected nodes."""
    t = ctx.t
    if not t.nodes.all_static_ok:
        code = t.nodes.code[sel]

        def static_reasons() -> list[tuple[str, np.ndarray, bool]]:
            out = [(R_UNSCHEDULABLE, code == UNSCHEDULABLE, False), (R_NODE_NAME, code == NODE_NAME, False),
                   (R_AFFINITY, code == AFFINITY, False)]
            positions = np.arange(cache.size)[sel]
            by_reason: dict[str, np.ndarray] = {}
            for i in np.flatnonzero(code == TAINT):
                reason = t.nodes.taint_reason[int(positions[i])]
                by_reason.setdefault(reason, np.zeros(len(code), bool))[i] = True
            return out + [(r, m, False) for r, m in by_reason.items()]

        yield code != OK, static_reasons
    if t.ports:   # NodePorts (before NodeResourcesFit in the default filter order)
        taken = cache.port_conflicts(t.ports)[sel]
        yield taken, lambda: [(R_PORTS, taken, True)]
    # noderesources/fit.go fitsRequest: requested + asked > allocatable, i.e. free < asked (pods: free < 1);
    # every insufficient resource is a reason of its own
    short = cache.free_fit[:, sel] < (t.fit_want if cache.dtype is not object else t.fit_want_exact)
    fails = np.logical_or.reduce(short)   # any over the resource rows
    scalar = []
    for r in t.scalar:   # ScalarResources: extended resources and hugepages, absent from a node = 0
        alloc, req = cache.scalar(r)
        scalar.append((f"Insufficient {r}", req[sel] + t.req[r] > alloc[sel]))
        fails = fails | scalar[-1][1]
    yield fails, lambda: [(r, m, True) for r, m in [(R_TOO_MANY_PODS, short[-1]),
                                                    *((r, short[i]) for r, i in t.fit_rows), *scalar]]
    if ctx.simple:
        return
    if ctx.hard:
        # skew = matching pods in the node's domain + the pod itself - global minimum; the first failing
        # constraint names the reason
        spread: list[tuple[str, np.ndarray, bool]] = []
        left = None
        for s in ctx.hard:
            ids = s.ids[sel]
            missing = ids < 0
            if len(s.totals):
                skewed = ~missing & (s.totals[np.maximum(ids, 0)] + s.c.self_match - s.min_match > s.c.max_skew)
            else:
                skewed = np.zeros(len(ids), bool)
            if left is not None:
                missing, skewed = missing & left, skewed & left
            spread += [(R_SPREAD_LABEL, missing, False), (R_SPREAD, skewed, True)]
            failed = missing | skewed
            left = ~failed if left is None else left & ~failed
        assert left is not None
        yield ~left, lambda: spread
    # interpodaffinity/filtering.go Filter: the pod's affinity (UnschedulableAndUnresolvable), its
    # anti-affinity, then existing pods' anti-affinity (Unschedulable); a domain is the nodes sharing the
    # term's topology label value
    if t.affinity:
        counter = cache.affinity_counter(t.affinity, ctx.namespace)
        unmet = np.zeros(len(cache.has_host[sel]), bool)
        for term in t.affinity:   # satisfyPodAffinity: every key on the node, matching pods in each domain
            unmet |= ~cache.occupied(counter.counts, term.topology_key, sel)
        if unmet.any() and ctx.affinity_first(cache, counter):
            # the first pod of a group with affinity to itself: nodes with every topology key pass
            for term in t.affinity:
                unmet &= cache.domain_ids(term.topology_key)[sel] < 0
        yield unmet, lambda: [(R_POD_AFFINITY, unmet, False)]
    if t.anti:
        hit = np.zeros(len(cache.has_host[sel]), bool)
        for term in t.anti:
            hit |= cache.occupied(cache.term_counter(term, ctx.namespace).counts, term.topology_key, sel)
        yield hit, lambda: [(R_ANTI_AFFINITY, hit, True)]
    if ctx.check_existing_anti:
        existing = np.zeros(len(cache.has_host[sel]), bool)
        for term, owner_ns, carriers in cache.carriers():
            if term_matches(term, owner_ns, ctx.namespace, ctx.labels):
                existing |= cache.occupied(carriers, term.topology_key, sel)
        yield existing, lambda: [(R_EXISTING_ANTI, existing, True)]


def feasible(ctx: PodContext, cache: NodeCache, sel: Selection) -> np.ndarray:
    """Which selected nodes pass every filter."""
    return ~_failing(ctx, cache, sel)


def _failing(ctx: PodContext, cache: NodeCache, sel: Selection) -> np.ndarray:
    """Which selected nodes fail some filter."""
    out = None
    for fails, _ in _filters(ctx, cache, sel):
        out = fails if out is None else out | fails
    assert out is not None
    return out


def filter_node(ctx: PodContext, cache: NodeCache, name: str) -> tuple[tuple[str, ...], bool] | None:
    """None when the pod fits the node; else the first failing plugin's reasons and whether preemption could
    help."""
    sel = cache.positions([name])
    for fails, reasons in _filters(ctx, cache, sel):
        if fails[0]:
            found = [(r, resolvable) for r, m, resolvable in reasons() if m[0]]
            return tuple(r for r, _ in found), all(resolvable for _, resolvable in found)
    return None


@dataclass
class Diagnosis:
    """Why a pod fits no node: the reasons and how many nodes gave each."""

    reasons: Counter[str] = field(default_factory=Counter)
    resolvable: int = 0      # nodes whose failure preemption might fix (Unschedulable)
    unresolvable: int = 0    # UnschedulableAndUnresolvable
    resolvable_nodes: np.ndarray | None = None   # per node position: failed Unschedulable (None: no node did)

    def message(self, total: int) -> str:
        """FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable."."""
        parts = sorted(f"{n} {reason}" for reason, n in self.reasons.items())
        return f"0/{total} nodes are available: {', '.join(parts)}."



def diagnose(ctx: PodContext, cache: NodeCache) -> Diagnosis:
    """Why no node fits: per node the first failing plugin, counted by reason (every node is checked)."""
    diag = Diagnosis()
    sel = slice(0, cache.size)
    left = np.ones(cache.size, bool)
    diag.resolvable_nodes = np.zeros(cache.size, bool)
    for fails, reasons in _filters(ctx, cache, sel):
        failed = fails & left
        if not failed.any():
            continue
        resolvable = np.zeros(cache.size, bool)
        for reason, m, res in reasons():
            hit = m & failed
            n = int(np.count_nonzero(hit))
            if n:
                diag.reasons[reason] += n
                if res:
                    resolvable |= hit
        diag.resolvable += int(np.count_nonzero(resolvable))
        diag.resolvable_nodes |= resolvable
        diag.unresolvable += int(np.count_nonzero(failed & ~resolvable))
        left &= ~failed
    return diag


def find_feasible(ctx: PodContext, cache: NodeCache, start: int, want: int) -> tuple[Selection, int, int]:
    """schedule_one.go findNodesThatPassFilters: from ``start`` round-robin over the node-tree order until
    ``want`` nodes pass the filters. Returns (the feasible positions in that order, how many, how many nodes
    were processed). Nodes are checked in chunks; the first chunk is the ``want`` nodes from ``start``."""
    n = cache.size
    parts: list[np.ndarray] = []
    found = processed = 0
    pos = start % n
    size = want
    while processed < n:
        size = min(size, n - processed, n - pos)
        failed = _failing(ctx, cache, slice(pos, pos + size))
        need = want - found
        if not parts and need == size and not np.count_nonzero(failed):
            return slice(pos, pos + size), want, size   # every node of the first chunk fits
        idx = (~failed).nonzero()[0]
        if len(idx) >= need:
            parts.append(idx[:need] + pos)
            processed += int(idx[need - 1]) + 1
            found = want
            break
        parts.append(idx + pos)
        found += len(idx)
        processed += size
        pos = (pos + size) % n
        size = max(2 * (want - found), 256)
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), found, processed


# ---- scores ----------------------------------------------------------------------------------------------


def least_allocated(ctx: PodContext, cache: NodeCache, sel: Selection) -> np.ndarray:
    """noderesources/least_allocated.go over NonZeroRequested (cpu, memory, weight 1 each): per resource
    (allocatable - requested) * 100 / allocatable (0 when over, or without allocatable), then the weighted
    mean; int64 arithmetic."""
    cap = cache.alloc_fit[:2, sel]
    free = cache.free_nz[:, sel] - ctx.t.nz
    if cache.positive_cpu_mem:
        score = np.maximum(free, 0) * MAX_NODE_SCORE // cap
    else:
        score = np.where(cap > 0, np.maximum(free, 0) * MAX_NODE_SCORE // np.maximum(cap, 1), 0)
    return (score[0] + score[1]) // 2


def _balance(cap: np.ndarray, used: np.ndarray, positive: bool) -> np.ndarray:
    """balancedResourceScorer: fractions (float64) capped at 1; with two resources std = |f_cpu - f_mem| / 2;
    score = int64((1 - std) * 100). A resource without allocatable is left out (with fewer than two, std 0)."""
    if positive:
        fraction = np.minimum(used / cap, 1.0)
        std = np.abs(fraction[0] - fraction[1]) / 2
    else:
        both = (cap[0] > 0) & (cap[1] > 0)
        fraction = np.minimum(used / np.where(both, cap, 1), 1.0)
        std = np.where(both, np.abs(fraction[0] - fraction[1]) / 2, 0.0)
    return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)


def _balance_of(cap_cpu: int, cap_mem: int, cpu: int, mem: int, positive: bool) -> int:
    """_balance of one node with int64 amounts, in Python floats: the same IEEE double operations as numpy's
    (an int64 quotient is of the two amounts as doubles), so the same score."""
    if not positive and not (cap_cpu > 0 and cap_mem > 0):
        return MAX_NODE_SCORE
    f_cpu = min(float(cpu) / float(cap_cpu), 1.0)
    f_mem = min(float(mem) / float(cap_mem), 1.0)
    return int((1 - abs(f_cpu - f_mem) / 2) * MAX_NODE_SCORE)


def _changed_since(kept: Balances | ResourceScores, cache: NodeCache) -> list[int]:
    """The positions whose amounts changed (``cache.resized``) since ``kept`` was last brought up to date, each
    once; ``kept`` counts as up to date from now."""
    changed = list(dict.fromkeys(cache.resized[kept.synced:]))
    kept.synced = len(cache.resized)
    return changed


class Balances:
    """Every node's balance without the pod (what ``by_change`` compares with), the same for every pod: worked
    out once per layout, then again only for the nodes whose amounts changed (a bind changes one)."""

    def __init__(self, cache: NodeCache) -> None:
        self.generation, self.dtype, self.positive = cache.generation, cache.dtype, cache.positive_cpu_mem
        self.values = _balance(cache.alloc_fit[:2], cache.req_fit[:2], cache.positive_cpu_mem)
        self.synced = len(cache.resized)

    @staticmethod
    def of(cache: NodeCache) -> np.ndarray:
        b = cache.balances
        if b is None or b.generation != cache.generation or b.dtype is not cache.dtype or \
                b.positive != cache.positive_cpu_mem:
            b = cache.balances = Balances(cache)
        elif b.synced < len(cache.resized):
            alloc, req = cache.alloc_fit, cache.req_fit
            for pos in _changed_since(b, cache):
                if cache.dtype is object:   # Python ints: the vector arithmetic, on the one node
                    b.values[pos] = _balance(alloc[:2, pos:pos + 1], req[:2, pos:pos + 1], b.positive)[0]
                else:
                    b.values[pos] = _balance_of(int(alloc[0, pos]), int(alloc[1, pos]), int(req[0, pos]),
                                                int(req[1, pos]), b.positive)
        return b.values


def balanced_allocation(ctx: PodContext, cache: NodeCache, sel: Selection, by_change: bool = False) -> np.ndarray:
    """noderesources/balanced_allocation.go, useRequested (Requested, not NonZero): the node's balance with the
    pod; ``by_change`` (PR #135573): 50 + (50 + with - without) / 2, the improvement of the balance."""
    cap = cache.alloc_fit[:2, sel]
    with_pod = _balance(cap, cache.req_fit[:2, sel] + ctx.t.requested, cache.positive_cpu_mem)
    if not by_change:
        return with_pod
    without = Balances.of(cache)[sel]
    return MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + with_pod - without) // 2


def _least_allocated_of(cap_cpu: int, cap_mem: int, free_cpu: int, free_mem: int) -> int:
    """least_allocated of one node with the pod (``free``: allocatable - NonZeroRequested - the pod's), in Python
    ints: the int64 arithmetic's result while amounts stay below EXACT_INT64."""
    cpu = max(free_cpu, 0) * MAX_NODE_SCORE // cap_cpu if cap_cpu > 0 else 0
    mem = max(free_mem, 0) * MAX_NODE_SCORE // cap_mem if cap_mem > 0 else 0
    return (cpu + mem) // 2


def _resource_scores(ctx: PodContext, cache: NodeCache, sel: Selection, w: Weights) -> np.ndarray:
    """NodeResourcesFit (LeastAllocated) and BalancedAllocation, weighted and summed."""
    totals = least_allocated(ctx, cache, sel)
    if w.fit != 1:
        totals *= w.fit
    # PR #130260: PreScore returns Skip for a pod that requests no cpu and no memory (every node scores 0)
    if not (w.balanced_skips_best_effort and ctx.t.best_effort):
        totals += w.balanced * balanced_allocation(ctx, cache, sel, w.balanced_by_change)
    return totals


class ResourceScores:
    """_resource_scores of every node for one request (NonZero and as requested, of cpu and memory). Pods share a
    few requests (each replica its template's), so each is kept as Balances is: worked out over all nodes once
    per layout, then again only for the nodes whose amounts changed since it was last used, one by one in Python
    when they are a few (a bind changes one), as arrays otherwise. Past KEPT requests, the others are scored as
    before, over the pod's feasible nodes only."""

    KEPT = 256   # requests kept
    FEW = 8      # changed nodes worked out one by one

    def __init__(self, ctx: PodContext, cache: NodeCache, w: Weights) -> None:
        self.generation, self.weights = cache.generation, w
        self.values = _resource_scores(ctx, cache, slice(0, cache.size), w)
        self.synced = len(cache.resized)

    @classmethod
    def of(cls, ctx: PodContext, cache: NodeCache, w: Weights) -> np.ndarray | None:
        """Every node's scores, or None where they are not kept (amounts kept as Python ints)."""
        t = ctx.t
        if cache.dtype is object or t.huge:
            return None
        kept = cache.resource_scores
        r = kept.get(t.request)
        if r is None or r.generation != cache.generation or r.weights is not w:
            if r is None and len(kept) >= cls.KEPT:
                return None   # the first requests met keep theirs; scoring every node anew for each would cost more
            r = kept[t.request] = cls(ctx, cache, w)
        elif r.synced < len(cache.resized):
            changed = _changed_since(r, cache)
            if len(changed) > cls.FEW:
                at = np.array(changed)
                r.values[at] = _resource_scores(ctx, cache, at, w)
            else:
                for pos in changed:
                    r.values[pos] = r._one(ctx, cache, pos)
        return r.values

    def _one(self, ctx: PodContext, cache: NodeCache, pos: int) -> int:
        t, w = ctx.t, self.weights
        nz_cpu, nz_mem, req_cpu, req_mem, _ = t.request
        cap_cpu, cap_mem = int(cache.alloc_fit[0, pos]), int(cache.alloc_fit[1, pos])
        score = w.fit * _least_allocated_of(cap_cpu, cap_mem, int(cache.free_nz[0, pos]) - nz_cpu,
                                            int(cache.free_nz[1, pos]) - nz_mem)
        if not (w.balanced_skips_best_effort and t.best_effort):
            positive = cache.positive_cpu_mem
            balance = _balance_of(cap_cpu, cap_mem, int(cache.req_fit[0, pos]) + req_cpu,
                                  int(cache.req_fit[1, pos]) + req_mem, positive)
            if w.balanced_by_change:
                balance = MAX_NODE_SCORE // 2 + (MAX_NODE_SCORE // 2 + balance - int(Balances.of(cache)[pos])) // 2
            score += w.balanced * balance
        return score


def _normalize(scores: np.ndarray, reverse: bool) -> np.ndarray:
    """helper.DefaultNormalizeScore."""
    top = int(scores[scores.argmax()]) if len(scores) else 0
    if top == 0:
        return np.full(len(scores), MAX_NODE_SCORE if reverse else 0, np.int64)
    if reverse:
        return MAX_NODE_SCORE - MAX_NODE_SCORE * scores // top
    return MAX_NODE_SCORE * scores // top


def spread_scores(ctx: PodContext, cache: NodeCache, sel: Selection, count: int) -> np.ndarray:
    """podtopologyspread/scoring.go: per constraint count * log(domains + 2) + (maxSkew - 1), summed in float64
    and rounded; then normalized as MaxNodeScore * (max + min - s) / max. Domain counts are over all nodes
    that pass the pod's node affinity; hostname counts the node's own pods; the domain count of hostname is
    the number of feasible nodes. A node without a constraint's label gets nothing for it; with the system
    defaults such nodes are scored and make one more domain (the value "") in the weight."""
    ids = [s.ids[sel] for s in ctx.soft]
    has = [None if cache.everywhere(s.c.key) else i >= 0 for s, i in zip(ctx.soft, ids)]
    ignored = None
    if not ctx.system_defaulted and any(h is not None for h in has):
        # requireAllTopologies: nodes without every key are not scored
        ok: np.ndarray | None = None
        for h in has:
            if h is not None:
                ok = h if ok is None else ok & h
        assert ok is not None   # some constraint has a key that not every node has
        ignored = ~ok
    raw = None
    for s, i, h in zip(ctx.soft, ids, has):
        c = s.c
        if c.key == HOSTNAME:
            size = count - (int(np.count_nonzero(ignored)) if ignored is not None else 0)
            term = s.counter.counts[sel] * math.log(size + 2)
            term += c.max_skew - 1
        else:
            valid = h if ignored is None else (~ignored if h is None else h & ~ignored)
            present = np.bincount(i if valid is None else i[valid])
            size = int(np.count_nonzero(present))
            if ignored is None and h is not None and np.count_nonzero(h) < len(h):
                # initPreScoreState: a scored node without the label (system defaults only; otherwise it is
                # ignored) adds the value "" to the domains counted for the weight, once
                empty = cache.domain_values(c.key).index("") if "" in cache.domain_values(c.key) else -1
                if not (0 <= empty < len(present) and present[empty]):
                    size += 1
            t = ctx.t
            if not (c.honor_affinity and (t.node_selector or t.affinity_terms)) and \
                    not (c.honor_taints and not t.nodes.all_taint_ok):
                totals = cache.domain_totals(s.counter, c.key)   # every node counts
            else:
                counted = _included(c, t, s.ids >= 0)
                totals = np.bincount(s.ids[counted], weights=s.counter.counts[counted],
                                     minlength=cache.domain_count(c.key)).astype(np.int64)
            # the constraint's score of each domain, then each node gets its domain's
            by_domain = totals * math.log(size + 2) + (c.max_skew - 1)
            term = by_domain[i if h is None else np.maximum(i, 0)] if len(totals) else np.zeros(count)
        if h is not None:
            term = np.where(h, term, 0.0)   # a node without the key gets nothing for the constraint
        if raw is None:   # 0.0 + term is term: the sum starts at the first term
            raw = term
        else:   # (every term is a new array of float64: the sums go in place)
            raw += term
    assert raw is not None
    raw += 0.5
    scores = raw.astype(np.int64)   # math.Round: scores are not negative, so truncating is flooring
    valid_scores = scores if ignored is None else scores[~ignored]
    # x[x.argmin()] is x.min() without the reduction's set-up cost (a third of it on a few hundred nodes)
    lo = int(valid_scores[valid_scores.argmin()]) if len(valid_scores) else 0
    hi = int(valid_scores[valid_scores.argmax()]) if len(valid_scores) else 0
    if hi == 0:
        out = np.full(count, MAX_NODE_SCORE, np.int64)
    else:   # (hi + lo - scores) * MAX_NODE_SCORE // hi, in place
        out = hi + lo - scores
        out *= MAX_NODE_SCORE
        out //= hi
    if ignored is not None:
        out[ignored] = 0
    return out


@dataclass
class Weights:
    """Default score plugin weights (pkg/scheduler/apis/config/v1*/default_plugins.go), and how
    BalancedAllocation scores (versions rules balanced_allocation_skips_best_effort and
    balanced_allocation_by_change)."""
    fit: int = 1
    balanced: int = 1
    node_affinity: int = 2
    taint: int = 3
    spread: int = 2
    inter_pod: int = 2
    selector_spread: int = 0   # SelectorSpread: 1 while DefaultPodTopologySpread is off (rule selector_spread_plugin)
    balanced_skips_best_effort: bool = True
    balanced_by_change: bool = True


def score_nodes(ctx: PodContext, cache: NodeCache, sel: Selection, count: int, w: Weights) -> np.ndarray:
    """Weighted sum of the default score plugins over the feasible nodes (ImageLocality is not modelled: it
    gives every node the same score while every node has the pod's images)."""
    t = ctx.t
    kept = ResourceScores.of(ctx, cache, w)
    totals = _resource_scores(ctx, cache, sel, w) if kept is None else kept[sel]
    # TaintToleration first, into a new array: kept[sel] may be a view of the kept scores, not to be added to
    if t.nodes.any_taint_raw:
        totals = totals + w.taint * _normalize(t.nodes.taint_raw[sel], True)
    else:   # no node has a PreferNoSchedule taint the pod does not tolerate: every node scores the maximum
        totals = totals + w.taint * MAX_NODE_SCORE
    if t.preferred:
        totals += w.node_affinity * _normalize(t.nodes.pref_raw[sel], False)
    if ctx.soft:
        spread = spread_scores(ctx, cache, sel, count)   # a new array: weighed in place
        spread *= w.spread
        totals += spread
    if ctx.selector_spread is not None:
        totals += w.selector_spread * selector_spread_scores(ctx, cache, sel, count)
    if t.pod_preferred or cache.weighs:
        totals += w.inter_pod * inter_pod_affinity_scores(ctx, cache, sel, count)
    return totals


ZONE_WEIGHTING = 2.0 / 3.0   # selector_spread.go zoneWeighting


def selector_spread_scores(ctx: PodContext, cache: NodeCache, sel: Selection, count: int) -> np.ndarray:
    """defaultpodtopologyspread (SelectorSpread, the default spreading before 1.20): per scored node the
    non-terminating pods its Services and controller select, as 100 * (max - n) / max; with zones (GetZoneKey),
    blended with the same over the scored nodes' zones, 1/3 node and 2/3 zone; float64, then int64."""
    assert ctx.selector_spread is not None
    counts = ctx.selector_spread.counts[sel].astype(np.float64)
    top = counts.max() if count else 0.0
    score = np.full(count, float(MAX_NODE_SCORE)) if top == 0 else float(MAX_NODE_SCORE) * ((top - counts) / top)
    zones = cache.zone_ids()[sel]
    zoned = zones >= 0
    if zoned.any():
        by_zone = np.bincount(zones[zoned], weights=counts[zoned])
        top_zone = by_zone.max()
        zone_score = np.full(count, float(MAX_NODE_SCORE)) if top_zone == 0 else \
            float(MAX_NODE_SCORE) * ((top_zone - by_zone[np.maximum(zones, 0)]) / top_zone)
        score = np.where(zoned, score * (1.0 - ZONE_WEIGHTING) + ZONE_WEIGHTING * zone_score, score)
    return score.astype(np.int64)


def inter_pod_affinity_scores(ctx: PodContext, cache: NodeCache, sel: Selection, count: int) -> np.ndarray:
    """interpodaffinity/scoring.go: per node, over the domain of each term's topology key, the pods the incoming
    pod's preferred terms select (times +weight for affinity, -weight for anti-affinity), plus the existing pods
    whose preferred terms (+/-weight) or required affinity terms (hardPodAffinityWeight 1) select the incoming
    pod; then int64(100 * (s - min) / (max - min)) over the scored nodes (all 0 when max = min)."""
    raw = np.zeros(count, np.int64)
    for term, weight in ctx.t.pod_preferred:
        raw += weight * cache.domain_sums(cache.term_counter(term, ctx.namespace).counts, term.topology_key, sel)
    for term, owner_ns, weight, carriers in cache.weighing():
        if term_matches(term, owner_ns, ctx.namespace, ctx.labels):
            raw += weight * cache.domain_sums(carriers, term.topology_key, sel)
    lo, hi = (int(raw.min()), int(raw.max())) if count else (0, 0)
    if hi == lo:
        return np.zeros(count, np.int64)
    return (float(MAX_NODE_SCORE) * ((raw - lo) / float(hi - lo))).astype(np.int64)


def num_feasible_nodes_to_find(percentage: int, num_all: int) -> int:
    """schedule_one.go numFeasibleNodesToFind."""
    if num_all < MIN_FEASIBLE_NODES_TO_FIND or percentage >= 100:
        return num_all
    adaptive = percentage
    if adaptive <= 0:
        adaptive = 50 - num_all // 125
        if adaptive < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:
            adaptive = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND
    n = num_all * adaptive // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)

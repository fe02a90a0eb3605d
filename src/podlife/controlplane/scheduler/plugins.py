"""Filter and score plugins and the scheduler's node cache (pkg/scheduler/framework/plugins, internal/cache).

Speed: what does not change per pod is computed once per node (taints split by effect, the unschedulable flag,
zone key, allocatable) and once per pod (requests, tolerations, selectors) in ``PodContext``; a node is checked
with a handful of attribute reads when the pod has no node constraints.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import orjson

from podlife.api.defaults import pod_requests
from podlife.api.meta import Obj
from podlife.api.quantity import parse_quantity
from podlife.api.selectors import compiled, matches, matches_node_selector_term

RESOURCES = ("cpu", "memory", "ephemeral-storage")
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
MAX_NODE_SCORE = 100
# pkg/scheduler/util/pod_resources.go DefaultMilliCPURequest / DefaultMemoryRequest (GetNonzeroRequests)
NON_MISSING = {"cpu": "100m", "memory": "200Mi"}
# schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5

# filter reasons (upstream wording, plugin files named)
R_UNSCHEDULABLE = "node(s) were unschedulable"                                   # nodeunschedulable
R_NODE_NAME = "node(s) didn't match the requested node name"                     # nodename
R_AFFINITY = "node(s) didn't match Pod's node affinity/selector"                 # nodeaffinity ErrReasonPod
R_TOO_MANY_PODS = "Too many pods"                                                # noderesources/fit.go
R_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"                 # interpodaffinity/filtering.go
R_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"     # interpodaffinity/filtering.go
R_SPREAD = "node(s) didn't match pod topology spread constraints"                # podtopologyspread/filtering.go
R_SPREAD_LABEL = "node(s) didn't match pod topology spread constraints (missing required label)"

# system default constraints of PodTopologySpread (podtopologyspread/plugin.go systemDefaultConstraints)
SYSTEM_DEFAULT_CONSTRAINTS = ((HOSTNAME, 3), (ZONE, 5))


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


def _hostname_anti_terms(spec: dict) -> list[tuple[dict, set[str] | None]]:
    """Required pod anti-affinity terms on kubernetes.io/hostname: (labelSelector, namespaces or None=own)."""
    aff = ((spec.get("affinity") or {}).get("podAntiAffinity") or {})
    out = []
    for t in aff.get("requiredDuringSchedulingIgnoredDuringExecution") or ():
        if t.get("topologyKey") == HOSTNAME:
            out.append((t.get("labelSelector") or {}, set(t["namespaces"]) if t.get("namespaces") else None))
    return out


class PodEntry:
    """What the cache keeps of a pod on a node."""
    __slots__ = ("uid", "namespace", "labels", "req", "anti", "terminating")

    def __init__(self, pod: Obj, req: dict[str, int]) -> None:
        md = pod["metadata"]
        self.uid = md["uid"]
        self.namespace = md.get("namespace", "")
        self.labels = md.get("labels") or {}
        self.req = req
        self.anti = _hostname_anti_terms(pod["spec"])
        self.terminating = bool(md.get("deletionTimestamp"))


def _term_matches(term: tuple[dict, set[str] | None], owner_ns: str, ns: str, labels: dict) -> bool:
    sel, namespaces = term
    return (ns in namespaces if namespaces is not None else ns == owner_ns) and matches(sel, labels)


class NodeInfo:
    __slots__ = ("name", "node", "labels", "allocatable", "requested", "nz_cpu", "nz_mem", "pods",
                 "unschedulable", "hard_taints", "soft_taints", "zone_key", "anti_pods", "_sig", "version",
                 "match_counts")

    def __init__(self, node: Obj) -> None:
        self.name = node["metadata"]["name"]
        self.requested = {r: 0 for r in RESOURCES}
        self.nz_cpu = 0      # NonZeroRequested: requests with the 100m / 200Mi defaults for unset ones
        self.nz_mem = 0
        self.pods: dict[str, PodEntry] = {}
        self.anti_pods = 0   # pods here with required hostname anti-affinity
        self.version = 0     # bumped whenever the node's pods change (the match count cache's key)
        self.match_counts: dict[tuple[str, bytes], tuple[int, int]] = {}
        self._sig: Any = None
        self.update(node)

    def update(self, node: Obj) -> None:
        """Recompute the per-node facts only when what they come from changed (heartbeats change neither)."""
        self.node = node
        spec, md = node.get("spec") or {}, node["metadata"]
        sig = (spec.get("unschedulable"), str(spec.get("taints")), str(md.get("labels")),
               str((node.get("status") or {}).get("allocatable") or (node.get("status") or {}).get("capacity")))
        if sig == self._sig:
            return
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


class NodeCache:
    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self._pod_node: dict[str, str] = {}
        self._order: list[NodeInfo] | None = None
        self.anti_pods = 0   # cluster-wide count of pods with required hostname anti-affinity
        # matching pods per topology value, kept up to date for the (namespace, selector, key) triples scoring
        # has asked about: the sum over all nodes that podtopologyspread computes for every pod
        self._domains: dict[tuple[str, bytes, str], dict[str, int]] = {}
        self._domain_selectors: dict[tuple[str, bytes], Any] = {}

    def domain_counts(self, ns: str, selector: dict, sel_key: bytes, topology_key: str) -> dict[str, int]:
        key = (ns, sel_key, topology_key)
        counts = self._domains.get(key)
        if counts is None:
            counts = {}
            for info in self.nodes.values():
                v = info.labels.get(topology_key)
                if v is not None:
                    counts[v] = counts.get(v, 0) + _count_matching(info, ns, selector, sel_key)
            self._domains[key] = counts
            self._domain_selectors.setdefault((ns, sel_key), compiled(selector))
        return counts

    def _count_entry(self, info: NodeInfo, entry: PodEntry, sign: int) -> None:
        """Add (+1) or take away (-1) one pod's contribution to the kept domain counts."""
        if not self._domains or entry.terminating:
            return
        for (ns, sel_key, topology_key), counts in self._domains.items():
            v = info.labels.get(topology_key)
            if v is None or entry.namespace != ns:
                continue
            if self._domain_selectors[(ns, sel_key)].matches(entry.labels):
                counts[v] = counts.get(v, 0) + sign

    def node_count(self) -> int:
        return len(self.nodes)

    def set_node(self, node: Obj) -> None:
        name = node["metadata"]["name"]
        info = self.nodes.get(name)
        if info is None:
            self.nodes[name] = NodeInfo(node)
            self._order = None
            self._domains.clear()
        else:
            old_zone, old_labels = info.zone_key, info.labels
            info.update(node)
            if info.zone_key != old_zone:
                self._order = None
            if info.labels != old_labels:
                self._domains.clear()

    def remove_node(self, name: str) -> None:
        if self.nodes.pop(name, None) is not None:
            self._order = None
            self._domains.clear()

    def ordered(self) -> list[NodeInfo]:
        """internal/cache/node_tree.go list(): zones in order of first appearance, nodes of a zone in order of
        addition, taken one per zone in turn (zones interleaved). Rebuilt only when nodes come or go."""
        if self._order is None:
            zones: dict[str, list[NodeInfo]] = {}
            for info in self.nodes.values():
                zones.setdefault(info.zone_key, []).append(info)
            out: list[NodeInfo] = []
            lists = list(zones.values())
            depth = max((len(x) for x in lists), default=0)
            for i in range(depth):
                for z in lists:
                    if i < len(z):
                        out.append(z[i])
            self._order = out
        return self._order

    def add_pod(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        node = pod["spec"]["nodeName"]
        if uid in self._pod_node:
            # internal/cache updatePod: a known pod's labels and deletion are refreshed
            known = self.nodes.get(self._pod_node[uid])
            entry = known.pods.get(uid) if known is not None else None
            md = pod["metadata"]
            if entry is not None and (entry.labels != (md.get("labels") or {}) or
                                      entry.terminating != bool(md.get("deletionTimestamp"))):
                self._count_entry(known, entry, -1)
                entry.labels = md.get("labels") or {}
                entry.terminating = bool(md.get("deletionTimestamp"))
                self._count_entry(known, entry, +1)
                known.version += 1
            return
        info = self.nodes.get(node)
        if info is None:
            return
        req = pod_requests(pod["spec"])
        nz = pod_requests(pod["spec"], non_missing=NON_MISSING)
        entry = PodEntry(pod, req)
        entry.req = dict(req, _nz_cpu=nz.get("cpu", 0), _nz_mem=nz.get("memory", 0))
        info.pods[uid] = entry
        for r, v in req.items():
            info.requested[r] = info.requested.get(r, 0) + v
        info.nz_cpu += nz.get("cpu", 0)
        info.nz_mem += nz.get("memory", 0)
        if entry.anti:
            info.anti_pods += 1
            self.anti_pods += 1
        info.version += 1
        self._count_entry(info, entry, +1)
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
        info.version += 1
        self._count_entry(info, entry, -1)
        for r, v in entry.req.items():
            if not r.startswith("_"):
                info.requested[r] -= v
        info.nz_cpu -= entry.req["_nz_cpu"]
        info.nz_mem -= entry.req["_nz_mem"]
        if entry.anti:
            info.anti_pods -= 1
            self.anti_pods -= 1


# ---- per-pod state (PreFilter / PreScore) ----------------------------------------------------------------


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


def _count_matching(info: NodeInfo, ns: str, selector: dict, key: bytes | None = None) -> int:
    """podtopologyspread countPodsMatchSelector: same namespace, not terminating, labels match. Counted once per
    node and selector until the node's pods change (``info.version``)."""
    cache_key = (ns, key if key is not None else selector_key(selector))
    hit = info.match_counts.get(cache_key)
    if hit is not None and hit[0] == info.version:
        return hit[1]
    sel = compiled(selector)
    n = sum(1 for p in info.pods.values() if p.namespace == ns and not p.terminating and sel.matches(p.labels))
    info.match_counts[cache_key] = (info.version, n)
    return n


def selector_key(selector: dict) -> bytes:
    return orjson.dumps(selector, option=orjson.OPT_SORT_KEYS)


@dataclass
class SpreadConstraint:
    key: str
    max_skew: int
    selector: dict
    self_match: int = 0
    counts: dict[str, int] = field(default_factory=dict)   # domain value → matching pods (filter)
    min_match: int = 0
    sel_key: bytes = b""

    def __post_init__(self) -> None:
        self.sel_key = selector_key(self.selector)


class PodContext:
    """Everything about the pod the filters and scores need, computed once per scheduling attempt."""

    def __init__(self, pod: Obj, cache: NodeCache, default_selector: dict | None) -> None:
        spec = pod["spec"]
        md = pod["metadata"]
        self.pod = pod
        self.namespace = md.get("namespace", "")
        self.labels = md.get("labels") or {}
        self.req = pod_requests(spec)
        self.scalar = sorted(r for r, v in self.req.items() if v and r not in RESOURCES and r != "pods")
        nz = pod_requests(spec, non_missing=NON_MISSING)
        self.nz_cpu, self.nz_mem = nz.get("cpu", 0), nz.get("memory", 0)
        self.tolerations = spec.get("tolerations") or []
        self.tolerates_unschedulable = any(
            t.get("key") == "node.kubernetes.io/unschedulable" and t.get("effect") in (None, "", "NoSchedule")
            or (t.get("operator") == "Exists" and not t.get("key") and t.get("effect") in (None, "", "NoSchedule"))
            for t in self.tolerations)
        self.node_name = spec.get("nodeName")
        self.node_selector = spec.get("nodeSelector") or {}
        node_aff = (spec.get("affinity") or {}).get("nodeAffinity") or {}
        req_aff = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        self.affinity_terms = req_aff.get("nodeSelectorTerms") or []
        self.preferred = node_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        self.anti = _hostname_anti_terms(spec)
        self.check_existing_anti = cache.anti_pods > 0
        self.tolerations_soft = [t for t in self.tolerations if t.get("effect") in (None, "", "PreferNoSchedule")]
        # PodTopologySpread: the pod's own constraints, else the system defaults with the selector of its
        # Services / controllers (helper.DefaultSelector); an empty selector skips them
        own = spec.get("topologySpreadConstraints") or []
        self.hard: list[SpreadConstraint] = []
        self.soft: list[SpreadConstraint] = []
        for c in own:
            sc = SpreadConstraint(c["topologyKey"], int(c.get("maxSkew", 1)), c.get("labelSelector") or {})
            sc.self_match = 1 if matches(sc.selector, self.labels) else 0
            (self.hard if c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule" else self.soft).append(sc)
        self.system_defaulted = not own
        if not own and default_selector:
            self.soft = [SpreadConstraint(k, s, default_selector) for k, s in SYSTEM_DEFAULT_CONSTRAINTS]
        self.simple = not (self.node_name or self.node_selector or self.affinity_terms or self.anti
                           or self.check_existing_anti or self.hard)
        if self.hard:
            self._prefilter_spread(cache)

    def node_matches_affinity(self, info: NodeInfo) -> bool:
        labels = info.labels
        if any(labels.get(k) != v for k, v in self.node_selector.items()):
            return False
        return not self.affinity_terms or any(
            matches_node_selector_term(t, labels, info.name) for t in self.affinity_terms)

    def _prefilter_spread(self, cache: NodeCache) -> None:
        """podtopologyspread/filtering.go calPreFilterState: matching pods per domain over the nodes that pass
        the pod's node affinity (nodeAffinityPolicy Honor) and carry every constraint's key; the global minimum
        over those domains."""
        keys = [c.key for c in self.hard]
        for info in cache.nodes.values():
            if not self.node_matches_affinity(info) or any(k not in info.labels for k in keys):
                continue
            for c in self.hard:
                v = info.labels[c.key]
                c.counts[v] = c.counts.get(v, 0) + _count_matching(info, self.namespace, c.selector, c.sel_key)
        for c in self.hard:
            c.min_match = min(c.counts.values()) if c.counts else 0


def filter_node(ctx: PodContext, info: NodeInfo) -> tuple[tuple[str, ...], bool] | None:
    """None when the pod fits; else (reasons, resolvable): the first failing plugin's reasons, in the default
    filter order (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodeResourcesFit,
    PodTopologySpread, InterPodAffinity), and whether preemption could help (Unschedulable rather than
    UnschedulableAndUnresolvable)."""
    if info.unschedulable and not ctx.tolerates_unschedulable:
        return (R_UNSCHEDULABLE,), False
    if not ctx.simple and ctx.node_name and ctx.node_name != info.name:
        return (R_NODE_NAME,), False
    for taint in info.hard_taints:
        if not _tolerates(taint, ctx.tolerations):
            return (f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}",), False
    if not ctx.simple and not ctx.node_matches_affinity(info):
        return (R_AFFINITY,), False
    # noderesources/fit.go fitsRequest: every insufficient resource is a reason of its own
    alloc = info.allocatable
    reasons: tuple[str, ...] = ()
    if len(info.pods) + 1 > alloc["pods"]:
        reasons = (R_TOO_MANY_PODS,)
    req, requested = ctx.req, info.requested
    for r in RESOURCES:
        want = req.get(r, 0)
        if want and requested[r] + want > alloc[r]:
            reasons += (f"Insufficient {r}",)
    for r in ctx.scalar:   # ScalarResources: extended resources and hugepages, absent from a node = 0
        if requested.get(r, 0) + req[r] > alloc.get(r, 0):
            reasons += (f"Insufficient {r}",)
    if reasons:
        return reasons, True
    if ctx.simple:
        return None
    for c in ctx.hard:
        v = info.labels.get(c.key)
        if v is None:
            return (R_SPREAD_LABEL,), False
        # skew = matching pods in the node's domain + the pod itself - global minimum
        if c.counts.get(v, 0) + c.self_match - c.min_match > c.max_skew:
            return (R_SPREAD,), True
    if ctx.anti and info.labels.get(HOSTNAME) is not None:
        for p in info.pods.values():
            if any(_term_matches(t, ctx.namespace, p.namespace, p.labels) for t in ctx.anti):
                return (R_ANTI_AFFINITY,), True
    if ctx.check_existing_anti and info.anti_pods and info.labels.get(HOSTNAME) is not None:
        for p in info.pods.values():
            if p.anti and any(_term_matches(t, p.namespace, ctx.namespace, ctx.labels) for t in p.anti):
                return (R_EXISTING_ANTI,), True
    return None


# ---- scoring --------------------------------------------------------------------------------------------


def least_allocated(ctx: PodContext, info: NodeInfo) -> int:
    """noderesources/least_allocated.go over NonZeroRequested (cpu, memory, weight 1 each):
    per resource (allocatable - requested) * 100 / allocatable (0 when over), then the weighted mean; integer
    arithmetic as upstream."""
    total = 0
    for cap, used in ((info.allocatable["cpu"], info.nz_cpu + ctx.nz_cpu),
                      (info.allocatable["memory"], info.nz_mem + ctx.nz_mem)):
        if cap and used <= cap:
            total += (cap - used) * MAX_NODE_SCORE // cap
    return total // 2


def balanced_allocation(ctx: PodContext, info: NodeInfo) -> int:
    """noderesources/balanced_allocation.go balancedResourceScorer, useRequested (Requested, not NonZero):
    fractions capped at 1; with two resources std = |f_cpu - f_mem| / 2; score = int((1 - std) * 100)."""
    fr = []
    for r in ("cpu", "memory"):
        cap = info.allocatable[r]
        if cap:
            fr.append(min((info.requested[r] + ctx.req.get(r, 0)) / cap, 1.0))
    std = abs(fr[0] - fr[1]) / 2 if len(fr) == 2 else 0.0
    return int((1 - std) * MAX_NODE_SCORE)


def _normalize(scores: list[int], reverse: bool) -> list[int]:
    """helper.DefaultNormalizeScore."""
    top = max(scores, default=0)
    if top == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in scores]
    if reverse:
        return [MAX_NODE_SCORE - MAX_NODE_SCORE * s // top for s in scores]
    return [MAX_NODE_SCORE * s // top for s in scores]


def _node_affinity_raw(ctx: PodContext, info: NodeInfo) -> int:
    """nodeaffinity Score: the sum of the weights of the preferred terms the node matches."""
    return sum(int(t.get("weight", 0)) for t in ctx.preferred
               if matches_node_selector_term(t.get("preference") or {}, info.labels, info.name))


def _taint_raw(ctx: PodContext, info: NodeInfo) -> int:
    """tainttoleration Score: PreferNoSchedule taints the pod does not tolerate."""
    return sum(1 for t in info.soft_taints if not _tolerates(t, ctx.tolerations_soft))


def _spread_scores(ctx: PodContext, feasible: list[NodeInfo], cache: NodeCache) -> list[int]:
    """podtopologyspread/scoring.go: per constraint count * log(domains + 2) + (maxSkew - 1), rounded; then
    normalized as MaxNodeScore * (max + min - s) / max. Zone counts are over all nodes; hostname counts the
    node's own pods; the domain count of hostname is the number of feasible nodes."""
    cons = ctx.soft
    require_all = not ctx.system_defaulted
    ignored = {i.name for i in feasible if require_all and any(c.key not in i.labels for c in cons)}
    weights = []
    for c in cons:
        if c.key == HOSTNAME:
            size = len(feasible) - len(ignored)
        else:
            size = len({i.labels[c.key] for i in feasible if c.key in i.labels and i.name not in ignored})
        weights.append(math.log(size + 2))
    zone_counts: list[dict[str, int] | None] = []
    for c in cons:
        if c.key == HOSTNAME:
            zone_counts.append(None)
            continue
        wanted = {i.labels[c.key] for i in feasible if c.key in i.labels}
        if not ctx.node_selector and not ctx.affinity_terms:
            # every node passes the pod's node affinity: the cache's running counts are the sum below
            kept = cache.domain_counts(ctx.namespace, c.selector, c.sel_key, c.key)
            zone_counts.append({v: kept.get(v, 0) for v in wanted})
            continue
        counts = {v: 0 for v in wanted}
        for info in cache.nodes.values():
            v = info.labels.get(c.key)
            if v in counts and ctx.node_matches_affinity(info):
                counts[v] += _count_matching(info, ctx.namespace, c.selector, c.sel_key)
        zone_counts.append(counts)
    raw = []
    for info in feasible:
        if info.name in ignored:
            raw.append(None)
            continue
        s = 0.0
        for c, w, zc in zip(cons, weights, zone_counts):
            v = info.labels.get(c.key)
            if v is None:
                continue
            cnt = _count_matching(info, ctx.namespace, c.selector, c.sel_key) if zc is None else zc[v]
            s += cnt * w + (c.max_skew - 1)
        raw.append(int(math.floor(s + 0.5)))   # math.Round
    valid = [s for s in raw if s is not None]
    lo, hi = min(valid, default=0), max(valid, default=0)
    out = []
    for s in raw:
        if s is None:
            out.append(0)
        elif hi == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(MAX_NODE_SCORE * (hi + lo - s) // hi)
    return out


@dataclass
class Weights:
    """Default score plugin weights (pkg/scheduler/apis/config/v1*/default_plugins.go)."""
    fit: int = 1
    balanced: int = 1
    node_affinity: int = 2
    taint: int = 3
    spread: int = 2


def score_nodes(ctx: PodContext, feasible: list[NodeInfo], cache: NodeCache, w: Weights) -> list[int]:
    """Weighted sum of the default score plugins over the feasible nodes (ImageLocality and InterPodAffinity
    scoring are not modelled: they give every node the same score for pods without images cached / without
    preferred pod affinity)."""
    totals = [w.fit * least_allocated(ctx, i) + w.balanced * balanced_allocation(ctx, i) for i in feasible]
    if ctx.preferred:
        for k, s in enumerate(_normalize([_node_affinity_raw(ctx, i) for i in feasible], False)):
            totals[k] += w.node_affinity * s
    if any(i.soft_taints for i in feasible):
        for k, s in enumerate(_normalize([_taint_raw(ctx, i) for i in feasible], True)):
            totals[k] += w.taint * s
    else:
        totals = [t + w.taint * MAX_NODE_SCORE for t in totals]
    if ctx.soft:
        for k, s in enumerate(_spread_scores(ctx, feasible, cache)):
            totals[k] += w.spread * s
    return totals


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


@dataclass
class Diagnosis:
    reasons: Counter[str] = field(default_factory=Counter)
    resolvable: int = 0      # nodes whose failure preemption might fix (Unschedulable)
    unresolvable: int = 0    # UnschedulableAndUnresolvable

    def message(self, total: int) -> str:
        """FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable."."""
        parts = sorted(f"{n} {reason}" for reason, n in self.reasons.items())
        return f"0/{total} nodes are available: {', '.join(parts)}."

    def preemption_message(self, total: int) -> str:
        """DefaultPreemption's PostFilter message when no candidate is found (preemption is not modelled:
        every node where it might help is reported as having no victims)."""
        parts = []
        if self.resolvable:
            parts.append(f"{self.resolvable} No preemption victims found for incoming pod")
        if self.unresolvable:
            parts.append(f"{self.unresolvable} Preemption is not helpful for scheduling")
        return f"preemption: 0/{total} nodes are available: {', '.join(sorted(parts))}.."

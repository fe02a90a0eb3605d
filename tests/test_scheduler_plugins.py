"""Scheduler plugins against upstream rules: node sampling, node order, scores, filters, selectHost, Priority
admission. Arithmetic in the comments follows the upstream formulas named in plugins.py."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from podlife.api import admission
from podlife.api.errors import ApiError
from podlife.api.store import Store, ensure_namespaces
from podlife.cluster.contracts import StoreOptions, no_admission
from podlife.versions import NEWEST, profile as version_profile
from podlife.config import ApiServerConfiguration, SchedulerConfiguration
from podlife.api.selectors import compiled
from podlife.controlplane.scheduler import plugins
from podlife.controlplane.scheduler.cache import ZONE, NodeCache, selector_key
from podlife.controlplane.scheduler.scheduler import Scheduler
from podlife.controlplane.scheduler.selecthost import HostSelector
from podlife.engine import Kernel
from podlife.trace.recorder import Trace

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
GI = 1024 ** 3
MI = 1024 ** 2


def node(name: str, cpu: str = "1", memory: str = "2000Mi", pods: str = "110", zone: str | None = None,
         taints: list | None = None, labels: dict | None = None) -> dict:
    lb = {"kubernetes.io/hostname": name, **(labels or {})}
    if zone:
        lb["topology.kubernetes.io/zone"] = zone
    return {"kind": "Node", "metadata": {"name": name, "labels": lb}, "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


_uid = iter(range(10 ** 9))


def pod(name: str = "p", cpu: str | None = None, memory: str | None = None, labels: dict | None = None,
        node_name: str | None = None, **spec) -> dict:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    c = {"name": "app", "image": "app:1", "resources": {"requests": req} if req else {}}
    s = {"containers": [c], **spec}
    if node_name:
        s["nodeName"] = node_name
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"u{next(_uid)}",
                                        "labels": labels or {}}, "spec": s, "status": {}}


def scheduler(nodes: list[dict], seed: int = 0, percentage: int = 0) -> Scheduler:
    kernel = Kernel(seed)
    store = Store(kernel, Trace(kernel, START), StoreOptions(profile=version_profile(NEWEST), admission=no_admission))
    s = Scheduler(kernel, Trace(kernel, START), store, SchedulerConfiguration(percentageOfNodesToScore=percentage))
    for n in nodes:
        s.cache.set_node(n)
    return s


def test_num_feasible_nodes_to_find():
    f = plugins.num_feasible_nodes_to_find
    assert f(0, 50) == 50            # fewer than minFeasibleNodesToFind (100): all
    assert f(0, 100) == 100          # 50% of 100 = 50, raised to the minimum 100
    assert f(0, 1000) == 420         # 50 - 1000/125 = 42 %
    assert f(0, 3000) == 780         # 50 - 24 = 26 %
    assert f(0, 5000) == 500         # 50 - 40 = 10 %
    assert f(0, 6000) == 300         # 50 - 48 = 2 % → floor 5 %
    assert f(30, 1000) == 300        # explicit percentage
    assert f(100, 1000) == 1000


def test_node_tree_interleaves_zones_in_order_of_appearance():
    s = scheduler([node("a1", zone="a"), node("a2", zone="a"), node("b1", zone="b"), node("a3", zone="a"),
                   node("b2", zone="b"), node("c1", zone="c")])
    assert [i.name for i in s.cache.ordered()] == ["a1", "b1", "c1", "a2", "b2", "a3"]
    s.cache.remove_node("b1")
    assert [i.name for i in s.cache.ordered()] == ["a1", "b2", "c1", "a2", "a3"]


def test_round_robin_start_and_sample_size():
    s = scheduler([node(f"n{i:03}") for i in range(200)])
    # 200 nodes: max(200 * 50 // 100, 100) = 100 feasible nodes are enough; the next pod starts after them
    name, _ = s.find_node(pod("p1"))
    assert s.next_start_node_index == 100 and int(name[1:]) < 100
    name, _ = s.find_node(pod("p2"))
    assert s.next_start_node_index == 0 and int(name[1:]) >= 100


def test_least_allocated_counts_non_zero_defaults():
    s = scheduler([node("a"), node("b")])
    s.cache.add_pod(pod("x", node_name="b"))      # no requests: counts as 100m / 200Mi for scoring
    ctx = plugins.PodContext(pod("new"), s.cache, None)
    ab = s.cache.positions(["a", "b"])
    # a: cpu (1000-100)*100/1000 = 90, memory (2000-200)Mi*100/2000Mi = 90 → 90
    # b: cpu (1000-200)*100/1000 = 80, memory (2000-400)*100/2000 = 80 → 80
    assert plugins.least_allocated(ctx, s.cache, ab).tolist() == [90, 80]
    # TaintToleration: no taints → 100 × 3; BalancedAllocation: from 1.33 (PR #130260) a pod requesting no cpu
    # and no memory is not scored by it (Skip: 0 everywhere) ...
    assert plugins.score_nodes(ctx, s.cache, ab, 2, s.weights).tolist() == [90 + 0 + 300, 80 + 0 + 300]
    # ... before, it used the real requests (all 0): fractions 0, 0 → 100
    old = plugins.Weights(balanced_skips_best_effort=False, balanced_by_change=False)
    assert plugins.score_nodes(ctx, s.cache, ab, 2, old).tolist() == [90 + 100 + 300, 80 + 100 + 300]
    assert s.find_node(pod("new"))[0] == "a"


def test_balanced_allocation_of_a_best_effort_pod_by_version():
    # x is unbalanced (cpu 3/4 requested, memory none), y is empty; LeastAllocated over non-zero requests (the
    # memory-less pods count 200Mi each): x cpu (4000-3100)*100//4000 = 22, memory (4096-400)*100//4096 = 90
    # → 56; y 97 and 95 → 96. BalancedAllocation over real requests, before 1.33: x 1 - |0.75-0|/2 → 62, y 100;
    # from 1.33 nothing.
    s = scheduler([node("x", cpu="4", memory="4Gi"), node("y", cpu="4", memory="4Gi")])
    s.cache.add_pod(pod("old", cpu="3", node_name="x"))
    ctx = plugins.PodContext(pod("new"), s.cache, None)
    xy = s.cache.positions(["x", "y"])
    assert plugins.score_nodes(ctx, s.cache, xy, 2, s.weights).tolist() == [56 + 300, 96 + 300]
    old = plugins.Weights(balanced_skips_best_effort=False, balanced_by_change=False)
    assert plugins.score_nodes(ctx, s.cache, xy, 2, old).tolist() == [56 + 62 + 300, 96 + 100 + 300]


def test_balanced_allocation():
    s = scheduler([node("x", cpu="4", memory="4Gi")])
    s.cache.add_pod(pod("old", cpu="2", node_name="x"))
    ctx = plugins.PodContext(pod("new", cpu="1", memory="1Gi"), s.cache, None)
    # cpu (2000+1000)/4000 = 0.75, memory 1Gi/4Gi = 0.25; std = |0.75-0.25|/2 = 0.25 → int(0.75*100) = 75
    assert plugins.balanced_allocation(ctx, s.cache, s.cache.positions(["x"])).tolist() == [75]
    # from 1.36 (PR #135573) the change counts: without the pod cpu 0.5, memory 0 → std 0.25 → 75, with it 75:
    # 50 + (50 + 75 - 75) // 2 = 75; a pod that evens the node out scores more
    assert plugins.balanced_allocation(ctx, s.cache, s.cache.positions(["x"]), True).tolist() == [75]
    even = plugins.PodContext(pod("mem", memory="2Gi"), s.cache, None)
    # with it: cpu 0.5, memory 0.5 → 100; 50 + (50 + 100 - 75) // 2 = 87 (before 1.36: 100)
    assert plugins.balanced_allocation(even, s.cache, s.cache.positions(["x"]), True).tolist() == [87]
    assert plugins.balanced_allocation(even, s.cache, s.cache.positions(["x"])).tolist() == [100]


def test_one_node_balance_is_the_vector_balance():
    # the kept per-node balance (Balances) is worked out in Python floats for one node at a time: it must give
    # the array arithmetic's score for every amount, also where doubles round (amounts above 2**53) and where a
    # node has no cpu or memory allocatable (std 0: 100)
    rng = np.random.default_rng(7)
    caps = rng.integers(1, 2**62, (2, 4000))
    used = rng.integers(0, 2**62, (2, 4000)) // rng.integers(1, 2**40, (2, 4000))
    caps[:, :1000] //= rng.integers(1, 2**50, (2, 1000))
    used[:, 1000:1200] = caps[:, 1000:1200] * rng.integers(1, 3, (2, 200)) // 2
    for positive in (True, False):
        if not positive:
            caps[0, :300] = 0
            caps[1, 200:500] = 0
        expected = plugins._balance(caps, used, positive).tolist()
        got = [plugins._balance_of(int(caps[0, i]), int(caps[1, i]), int(used[0, i]), int(used[1, i]), positive)
               for i in range(caps.shape[1])]
        assert got == expected


def test_kept_balances_follow_binds_and_node_changes():
    s = scheduler([node("x", cpu="4", memory="4Gi"), node("y", cpu="4", memory="4Gi")])
    xy = s.cache.positions(["x", "y"])
    assert plugins.Balances.of(s.cache)[xy].tolist() == [100, 100]
    old = pod("old", cpu="2", node_name="x")
    s.cache.add_pod(old)
    # x: cpu 0.5, memory 0 → 1 - 0.25 → 75
    assert plugins.Balances.of(s.cache)[xy].tolist() == [75, 100]
    s.cache.set_node(node("x", cpu="8", memory="4Gi"))
    # x: cpu 2/8 = 0.25 → 1 - 0.125 → 87
    assert plugins.Balances.of(s.cache)[xy].tolist() == [87, 100]
    s.cache.remove_pod(old)
    assert plugins.Balances.of(s.cache)[xy].tolist() == [100, 100]


def test_one_node_least_allocated_is_the_vector_score():
    # the kept resource scores (ResourceScores) work out LeastAllocated one node at a time in Python ints: the
    # int64 array arithmetic's score for every amount below 2**53, nodes over-requested (free < 0) and nodes
    # without cpu or memory allocatable (0) included
    rng = np.random.default_rng(11)
    n = 4000
    cap = rng.integers(0, 2**53, (2, n)) // rng.integers(1, 2**45, (2, n))
    cap[0, :200] = 0
    cap[1, 100:300] = 0
    free = cap - rng.integers(0, 2**53, (2, n)) // rng.integers(1, 2**44, (2, n))

    class Cache:   # what least_allocated reads of a NodeCache
        alloc_fit, free_nz, positive_cpu_mem = cap, free, False

    class Ctx:
        class t:
            nz = np.zeros((2, 1), np.int64)

    expected = plugins.least_allocated(Ctx, Cache, slice(0, n)).tolist()   # type: ignore[arg-type]
    got = [plugins._least_allocated_of(int(cap[0, i]), int(cap[1, i]), int(free[0, i]), int(free[1, i]))
           for i in range(n)]
    assert got == expected
    assert expected.count(0) > 100 and len(set(expected)) > 50   # the inputs reach zeros and many scores


@pytest.mark.parametrize("weights", [plugins.Weights(),
                                     plugins.Weights(fit=2, balanced=3, balanced_by_change=False),
                                     plugins.Weights(balanced_skips_best_effort=False)])
def test_kept_resource_scores_follow_binds_node_changes_and_reservations(weights):
    # every node's kept scores for a request must stay what scoring the node afresh gives, whichever way they
    # were brought up to date: a few changed nodes one by one, many as arrays, a new layout from scratch
    names = [f"n{i}" for i in range(40)]
    s = scheduler([node(n, cpu=str(2 + i % 5), memory=f"{2 + i % 3}Gi") for i, n in enumerate(names)])
    kinds = [pod("a", cpu="300m", memory="256Mi"), pod("b", cpu="1"), pod("c"), pod("d", memory="1Gi")]
    everything = slice(0, len(names))

    def check() -> None:
        for p in kinds:
            ctx = plugins.PodContext(p, s.cache, None)
            kept = plugins.ResourceScores.of(ctx, s.cache, weights)
            assert kept is not None
            assert kept.tolist() == plugins._resource_scores(ctx, s.cache, everything, weights).tolist()

    check()
    placed = []
    for i in range(3):   # one change: one by one
        placed.append(pod(f"x{i}", cpu="700m", memory="1Gi", node_name=names[i * 7]))
        s.cache.add_pod(placed[-1])
        check()
    for i in range(30):   # many changes between uses: as arrays
        placed.append(pod(f"y{i}", cpu="250m", memory="300Mi", node_name=names[(i * 3) % 40]))
        s.cache.add_pod(placed[-1])
    check()
    s.cache.remove_pod(placed[0])
    s.cache.set_node(node(names[5], cpu="1", memory="1Gi"))   # now over-requested
    check()
    facts = s.cache.spec_facts(kinds[1]["spec"])
    s.cache.reserve(s.cache.positions([names[9]])[0], facts, +1)
    check()
    s.cache.reserve(s.cache.positions([names[9]])[0], facts, -1)
    s.cache.set_node(node("n40", cpu="4", memory="8Gi"))   # a new node: a new layout
    everything = slice(0, 41)
    check()


def test_requests_past_the_kept_ones_are_scored_over_their_nodes(monkeypatch):
    monkeypatch.setattr(plugins.ResourceScores, "KEPT", 1)
    s = scheduler([node("x", cpu="4", memory="4Gi"), node("y", cpu="2", memory="4Gi")])
    xy = s.cache.positions(["x", "y"])
    first = plugins.PodContext(pod("a", cpu="1"), s.cache, None)
    second = plugins.PodContext(pod("b", cpu="1", memory="1Gi"), s.cache, None)
    assert plugins.ResourceScores.of(first, s.cache, s.weights) is not None
    assert plugins.ResourceScores.of(second, s.cache, s.weights) is None
    # b: fit x (3000*100//4000 = 75, 3Gi/4Gi 75) 75, y (50, 75) 62; balanced by change x 50 + (50 + 100 - 100)
    # // 2 = 75 (with: 1/4 and 1/4), y 50 + (50 + 87 - 100) // 2 = 68 (with: 1/2 and 1/4); taint 300
    assert plugins.score_nodes(second, s.cache, xy, 2, s.weights).tolist() == [75 + 75 + 300, 62 + 68 + 300]


def test_prefer_no_schedule_taint_and_preferred_node_affinity():
    soft = [{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]
    s = scheduler([node("t", taints=soft), node("u"), node("ssd", labels={"disk": "ssd"})])
    infos = s.cache.positions(["t", "u", "ssd"])
    pref = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}
    ctx = plugins.PodContext(pod("p", affinity=pref), s.cache, None)
    # fit 90 everywhere, balanced nothing (a best-effort pod, 1.33+); taint raw 1,0,0 → reversed normalize
    # 0,100,100 (× 3); node affinity raw 0,0,5 → 0,0,100 (× 2)
    assert plugins.score_nodes(ctx, s.cache, infos, 3, s.weights).tolist() == [90, 390, 590]
    # 1.18–1.22 weights (v1beta1/v1beta2): taint and node affinity weigh 1; balanced 100 everywhere
    old = plugins.Weights(node_affinity=1, taint=1, balanced_skips_best_effort=False, balanced_by_change=False)
    assert plugins.score_nodes(ctx, s.cache, infos, 3, old).tolist() == [190, 290, 390]


def test_default_topology_spread_keeps_replicas_apart():
    s = scheduler([node("n0", cpu="100", memory="1000Gi"), node("n1", cpu="100", memory="1000Gi")])
    for i in range(2):
        s.cache.add_pod(pod(f"web-{i}", labels={"app": "web"}, node_name="n0"))
    sel = {"matchLabels": {"app": "web"}}
    ctx = plugins.PodContext(pod("web-2", labels={"app": "web"}), s.cache, sel)
    infos = s.cache.positions(["n0", "n1"])
    # no zone labels: only the hostname constraint (maxSkew 3) counts; weight log(2 feasible + 2) = 1.386
    # n0: 2 * 1.386 + 2 = 4.77 → 5; n1: 0 + 2 = 2; normalized 100*(5+2-s)/5: n0 40, n1 100 (× 2)
    assert plugins.spread_scores(ctx, s.cache, infos, 2).tolist() == [40, 100]
    # fit: n0 (100000-300)*100//100000 = 99, memory 99; n1 99, 99 — a tie broken only by spreading (balanced:
    # nothing for a best-effort pod from 1.33)
    assert plugins.score_nodes(ctx, s.cache, infos, 2, s.weights).tolist() == [99 + 0 + 300 + 80,
                                                                                99 + 0 + 300 + 200]


def test_default_spreading_counts_nodes_without_a_zone_as_one_more_domain():
    s = scheduler([node("a1", zone="a"), node("b1", zone="b"), node("z")])
    for i in range(3):
        s.cache.add_pod(pod(f"web-{i}", labels={"app": "web"}, node_name="a1"))
    ctx = plugins.PodContext(pod("web-3", labels={"app": "web"}), s.cache, {"matchLabels": {"app": "web"}})
    # podtopologyspread/scoring.go initPreScoreState with the system defaults: z is scored (not ignored) and its
    # missing zone label counts as the value "", so the zone weight is log(3 domains + 2) = 1.609 (not log(4));
    # hostname: log(3 nodes + 2) = 1.609. a1: 3*1.609+2 + 3*1.609+4 = 15.66 → 16; b1: 2 + 4 = 6; z (no zone
    # term): 2. Normalized 100*(16+2-s)//16: 12, 75, 100 (with log(4) a1 would be 14.99 → 15: 13, 73, 100)
    assert plugins.spread_scores(ctx, s.cache, s.cache.positions(["a1", "b1", "z"]), 3).tolist() == [12, 75, 100]


def test_selector_spread_is_the_default_spreading_before_1_20():
    s = scheduler([node("a1", zone="a"), node("a2", zone="a"), node("b1", zone="b")])
    for i, n in enumerate(("a1", "a1", "b1")):
        s.cache.add_pod(pod(f"web-{i}", labels={"app": "web"}, node_name=n))
    sel = {"matchLabels": {"app": "web"}}
    ctx = plugins.PodContext(pod("web-3", labels={"app": "web"}), s.cache, sel, selector_spread=True)
    assert ctx.soft == []   # no system default constraints for PodTopologySpread then
    names = ["a1", "a2", "b1"]
    # defaultpodtopologyspread NormalizeScore: per node 100 * (2 - n) / 2: 0, 100, 50; per zone (a 2, b 1)
    # 100 * (2 - z) / 2: 0, 0, 50; blended n/3 + 2z/3: 0, 33.3 → 33, 50
    assert plugins.selector_spread_scores(ctx, s.cache, s.cache.positions(names), 3).tolist() == [0, 33, 50]
    # 1.18's weights: everything 1; a best-effort pod's BalancedAllocation is 100 everywhere then
    w18 = plugins.Weights(node_affinity=1, taint=1, spread=1, inter_pod=1, selector_spread=1,
                          balanced_skips_best_effort=False, balanced_by_change=False)
    least = plugins.least_allocated(ctx, s.cache, s.cache.positions(names)).tolist()
    assert plugins.score_nodes(ctx, s.cache, s.cache.positions(names), 3, w18).tolist() == [
        least[0] + 100 + 100 + 0, least[1] + 100 + 100 + 33, least[2] + 100 + 100 + 50]


def test_default_selector_from_service():
    s = scheduler([node("n0")])
    ensure_namespaces(s.store, ["default"])
    s.store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}, by="test")
    assert s.default_selector(pod(labels={"app": "web", "x": "1"})) == {"matchLabels": {"app": "web"},
                                                                        "matchExpressions": []}
    assert s.default_selector(pod(labels={"app": "db"})) is None


def test_required_anti_affinity_on_hostname():
    s = scheduler([node("n0"), node("n1"), node("n2")])
    s.cache.add_pod(pod("web-0", labels={"app": "web"}, node_name="n0"))
    anti_db = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}]}}
    s.cache.add_pod(pod("guard", labels={"app": "guard"}, node_name="n1", affinity=anti_db))
    anti_web = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
    p = pod("web-1", labels={"app": "web"}, affinity=anti_web)
    ctx = plugins.PodContext(p, s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "n0") == ((plugins.R_ANTI_AFFINITY,), True)
    assert plugins.filter_node(ctx, s.cache, "n1") is None
    db = plugins.PodContext(pod("db", labels={"app": "db"}), s.cache, None)
    assert plugins.filter_node(db, s.cache, "n1") == ((plugins.R_EXISTING_ANTI,), True)
    assert plugins.filter_node(db, s.cache, "n2") is None


def test_topology_spread_do_not_schedule():
    bare = {**node("bare"), "metadata": {"name": "bare"}}   # no labels at all
    s = scheduler([node("a0", zone="a"), node("b0", zone="b"), bare])
    for i in range(2):
        s.cache.add_pod(pod(f"w{i}", labels={"app": "w"}, node_name="a0"))
    tsc = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "w"}}}]
    ctx = plugins.PodContext(pod("w2", labels={"app": "w"}, topologySpreadConstraints=tsc), s.cache, None)
    # zone a: 2, zone b: 0 → min 0; a0: 2 + 1 (self) - 0 = 3 > 1; b0: 0 + 1 - 0 = 1 ≤ 1
    assert plugins.filter_node(ctx, s.cache, "a0") == ((plugins.R_SPREAD,), True)
    assert plugins.filter_node(ctx, s.cache, "b0") is None
    assert plugins.filter_node(ctx, s.cache, "bare") == ((plugins.R_SPREAD_LABEL,), False)


def test_fit_error_counts_every_insufficient_resource():
    s = scheduler([node("full", pods="1"), node("small", cpu="100m", memory="100Mi")])
    s.cache.add_pod(pod("x", node_name="full"))
    name, diag = s.find_node(pod("big", cpu="500m", memory="1Gi"))
    assert name is None
    # fit.go: full → Too many pods (cpu/memory fit there); small → Insufficient cpu and Insufficient memory
    assert diag.message(2) == ("0/2 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, "
                               "1 Too many pods.")
    # both failures are Unschedulable (preemption might help), but neither node has a lower-priority pod
    assert s.preemption.post_filter(pod("big", cpu="500m", memory="1Gi"), diag).message == \
        "0/2 nodes are available: 2 No preemption victims found for incoming pod."


def test_select_host_is_random_among_the_best_only():
    picks = set()
    for seed in range(20):
        s = scheduler([node("n0"), node("n1"), node("n2"), node("big", cpu="2")], seed=seed)
        s.cache.add_pod(pod("x", cpu="500m", node_name="n2"))
        name, _ = s.find_node(pod("p"))
        # big: cpu (2000-100)*100/2000 = 95, memory 90 → (95+90)//2 = 92 > 90 on n0/n1: no draw
        assert name == "big"
        s.cache.remove_node("big")
        name, _ = s.find_node(pod("q"))
        assert name in ("n0", "n1")   # n2 is worse (cpu 600m used); n0 and n1 tie
        picks.add(name)
    assert picks == {"n0", "n1"}


# ---- Priority admission --------------------------------------------------------------------------------


def admission_store() -> Store:
    kernel = Kernel(0)
    store = Store(kernel, Trace(kernel, START), StoreOptions(
        profile=version_profile(NEWEST), admission=lambda s: admission.default_plugins(ApiServerConfiguration(), s)))
    ensure_namespaces(store, ["default"])
    return store


def create_pod(store: Store, **spec) -> dict:
    return store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                         "spec": {"containers": [{"name": "a", "image": "a:1"}], **spec}}, by="test")


def test_priority_admission_classes():
    store = admission_store()
    assert create_pod(store, priorityClassName="system-node-critical")["spec"]["priority"] == 2000001000
    p = create_pod(admission_store())
    assert p["spec"]["priority"] == 0 and "priorityClassName" not in p["spec"]
    with pytest.raises(ApiError) as e:
        create_pod(admission_store(), priorityClassName="nope")
    assert (e.value.code, e.value.message) == (403, 'pods "p" is forbidden: no PriorityClass with name nope was found')


def test_priority_admission_user_and_default_class():
    store = admission_store()
    for name, value, default in (("low", 10, True), ("lower", 5, True), ("high", 1000, False)):
        pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
              "value": value, "globalDefault": default}
        if name == "high":
            pc["preemptionPolicy"] = "Never"
        store.create(pc, by="test")
    p = create_pod(store, priorityClassName="high")
    assert (p["spec"]["priority"], p["spec"]["preemptionPolicy"]) == (1000, "Never")
    store2_pod = admission.Priority(store)
    obj = {"kind": "Pod", "metadata": {"name": "d"}, "spec": {}}
    store2_pod.admit(obj)
    # two globalDefault classes: the lowest value wins (getDefaultPriorityClass), and its name is written
    assert (obj["spec"]["priorityClassName"], obj["spec"]["priority"]) == ("lower", 5)
    with pytest.raises(ApiError) as e:
        admission.Priority(store).admit({"kind": "Pod", "metadata": {"name": "x"},
                                         "spec": {"priorityClassName": "high", "priority": 7}})
    assert "the integer value of priority (7) must not be provided in pod spec" in e.value.message


def test_node_cache_refreshes_a_known_pod_and_its_match_counts():
    # internal/cache updatePod: a pod already on a node that gets a deletionTimestamp or new labels is refreshed;
    # countPodsMatchSelector skips terminating pods, so the count follows
    cache = NodeCache()
    cache.set_node({"metadata": {"name": "n1", "labels": {}}, "spec": {}, "status": {"allocatable": {"pods": "10"}}})
    p = {"metadata": {"uid": "u1", "name": "a", "namespace": "default", "labels": {"app": "web"}},
         "spec": {"nodeName": "n1", "containers": []}}
    cache.add_pod(p)
    web, api = {"matchLabels": {"app": "web"}}, {"matchLabels": {"app": "api"}}

    def count(sel: dict) -> int:
        return int(cache.spread_counter("default", sel, selector_key(sel)).counts[cache.nodes["n1"].pos])

    assert count(web) == 1
    cache.add_pod({**p, "metadata": {**p["metadata"], "deletionTimestamp": "2025-01-01T00:00:10Z"}})
    assert count(web) == 0
    cache.add_pod({**p, "metadata": {**p["metadata"], "labels": {"app": "api"}}})
    assert count(web) == 0 and count(api) == 1
    assert int(cache.req_fit[-1][0]) == 1   # refreshed, not added twice


def _pod(uid: str, node: str, app: str = "web", deleting: bool = False) -> dict:
    md = {"uid": uid, "name": uid, "namespace": "default", "labels": {"app": app}}
    if deleting:
        md["deletionTimestamp"] = "2025-01-01T00:00:01Z"
    return {"metadata": md, "spec": {"nodeName": node, "containers": []}}


def _recounted(cache: NodeCache, sel: dict, key: str) -> list[int]:
    """The per-domain counts of a counter made afresh from the cache's pods."""
    fresh = cache.counter(("fresh", selector_key(sel)), lambda ns, labels, terminating: ns == "default"
                          and not terminating and compiled(sel).matches(labels))
    return cache.domain_totals(fresh, key).tolist()


def test_kept_domain_counts_follow_pods():
    # the running per-zone counts equal a fresh count over the nodes after adds, relabels, deletions and removals
    cache = NodeCache()
    for i, zone in enumerate(("a", "a", "b")):
        cache.set_node({"metadata": {"name": f"n{i}", "labels": {ZONE: zone}},
                        "spec": {}, "status": {"allocatable": {"pods": "10"}}})
    sel = {"matchLabels": {"app": "web"}}
    web = cache.spread_counter("default", sel, selector_key(sel))
    cache.add_pod(_pod("p1", "n0"))
    assert cache.domain_totals(web, ZONE).tolist() == [1, 0]   # domain ids in node order: a, b
    cache.add_pod(_pod("p2", "n1"))
    cache.add_pod(_pod("p3", "n2"))
    cache.add_pod(_pod("p4", "n2", app="api"))
    cache.add_pod(_pod("p2", "n1", deleting=True))
    cache.add_pod(_pod("p4", "n2", app="web"))
    cache.remove_pod(_pod("p1", "n0"))
    assert cache.domain_totals(web, ZONE).tolist() == _recounted(cache, sel, ZONE) == [0, 2]


def test_counts_survive_nodes_coming_and_going_and_relabelled():
    # node-tree order changes (a node added in a new zone, one removed, one moved to another zone): the per-node
    # counts move with their nodes and the per-zone counts follow the labels
    cache = NodeCache()

    def add(name: str, zone: str) -> None:
        cache.set_node({"metadata": {"name": name, "labels": {ZONE: zone, "kubernetes.io/hostname": name}},
                        "spec": {}, "status": {"allocatable": {"pods": "10", "cpu": "4", "memory": "4Gi"}}})

    for name, zone in (("a0", "a"), ("a1", "a"), ("b0", "b")):
        add(name, zone)
    sel = {"matchLabels": {"app": "web"}}
    web = cache.spread_counter("default", sel, selector_key(sel))
    for i, node in enumerate(("a0", "a1", "a1", "b0")):
        cache.add_pod(_pod(f"p{i}", node))
    assert [i.name for i in cache.ordered()] == ["a0", "b0", "a1"]
    add("c0", "c")
    cache.remove_node("a0")
    assert [i.name for i in cache.ordered()] == ["a1", "b0", "c0"]
    assert web.counts.tolist() == [2, 1, 0] and cache.req_fit[-1].tolist() == [2, 1, 0]
    add("b0", "c")      # relabelled into zone c: the zone counts follow
    # node_tree.go updateNode moves b0 to the end of zone c (zone b, now empty, is forgotten), but the cache's
    # UpdateSnapshot rebuilds the node list from the tree only when a node comes or goes: the order stays
    assert [i.name for i in cache.ordered()] == ["a1", "b0", "c0"]
    assert web.counts.tolist() == [2, 1, 0]
    values = dict(zip(cache.domain_values(ZONE), cache.domain_totals(web, ZONE).tolist()))
    assert values == {"a": 2, "c": 1}
    assert cache.domain_totals(web, ZONE).tolist() == _recounted(cache, sel, ZONE)
    add("d0", "d")      # a node comes: zones a [a1], c [c0, b0], d [d0], interleaved
    assert [i.name for i in cache.ordered()] == ["a1", "c0", "d0", "b0"]
    assert web.counts.tolist() == [2, 0, 0, 1]


def test_counters_count_what_their_selectors_select_whatever_came_first(monkeypatch):
    # a spread counter is matched only against the pod groups that carry a label its selector requires (the
    # groups of one Deployment, not every group); its counts stay those of its selector over the pods on each
    # node, whether a group came before the counter or after it, and when counters are dropped and made again
    from podlife.controlplane.scheduler import cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_COUNTERS", 3)
    cache = NodeCache()
    for i in range(3):
        cache.set_node(node(f"n{i}"))
    pods: dict[str, dict] = {}

    def put(uid: str, on: str, labels: dict, namespace: str = "default", deleting: bool = False) -> None:
        p = _pod(uid, on)
        p["metadata"].update(namespace=namespace, labels=labels)
        if deleting:
            p["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:01Z"
        pods[uid] = p
        cache.add_pod(p)

    selectors = [{"matchLabels": {"app": "web"}},
                 {"matchLabels": {"app": "web", "tier": "front"}},
                 {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]},
                 {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]},
                 {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}]

    def check() -> None:
        for sel in selectors:
            counts = cache.spread_counter("default", sel, selector_key(sel)).counts.tolist()
            want = [sum(1 for p in pods.values() if p["spec"]["nodeName"] == info.name and
                        p["metadata"]["namespace"] == "default" and "deletionTimestamp" not in p["metadata"]
                        and compiled(sel).matches(p["metadata"]["labels"])) for info in cache.ordered()]
            assert counts == want, sel

    put("p1", "n0", {"app": "web", "tier": "front"})
    put("p2", "n1", {"app": "web"})
    put("p3", "n2", {"app": "api", "tier": "front"})
    put("p4", "n0", {"app": "web"}, namespace="other")
    check()
    assert cache.spread_counter("default", selectors[0], selector_key(selectors[0])).counts.tolist() == [1, 1, 0]
    put("p5", "n1", {"app": "web", "tier": "front"})   # into a group there is
    put("p6", "n2", {"app": "db"})                      # a group after the counters
    check()
    put("p2", "n1", {"app": "web"}, deleting=True)      # to the group of its terminating alike
    put("p3", "n2", {"app": "web"})                     # relabelled
    check()
    cache.remove_pod(pods.pop("p1"))
    check()
    assert cache.spread_counter("default", selectors[1], selector_key(selectors[1])).counts.tolist() == [0, 1, 0]


def test_templates_with_the_same_node_constraints_share_their_per_node_outcomes():
    # the node-only filters and scores depend on nodeName, nodeSelector, node affinity and tolerations: the
    # templates of two Deployments with the same share one state, which follows node changes for both
    cache = NodeCache()
    cache.set_node(node("n0", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]))
    cache.set_node(node("n1"))
    tolerating = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    a, b = pod("a", labels={"app": "a"}), pod("b", labels={"app": "b"}, priority=5)
    c = pod("c", labels={"app": "a"}, tolerations=tolerating)
    ta, tb, tc = (plugins.template(cache, p) for p in (a, b, c))
    assert ta is not tb and ta.nodes is tb.nodes and tc.nodes is not ta.nodes
    assert ta.nodes.code.tolist() == [plugins.TAINT, plugins.OK] and tc.nodes.code.tolist() == [plugins.OK] * 2
    cache.set_node(node("n1", taints=[{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]))
    assert plugins.template(cache, b).nodes.code.tolist() == [plugins.TAINT] * 2
    assert plugins.template(cache, a).nodes.taint_reason == {
        0: "node(s) had untolerated taint {dedicated: db}", 1: "node(s) had untolerated taint {dedicated: web}"}
    assert plugins.template(cache, c).nodes.code.tolist() == [plugins.OK] * 2


def test_zone_order_forgets_an_emptied_zone():
    # node_tree.go: zones in the order they were added; removeZone drops a zone whose last node went, so a zone
    # that comes back is last (not where its first node once was)
    cache = NodeCache()
    for name, zone in (("a0", "a"), ("b0", "b"), ("a1", "a")):
        cache.set_node({"metadata": {"name": name, "labels": {ZONE: zone}}, "spec": {}, "status": {}})
    cache.remove_node("a0")
    assert [i.name for i in cache.ordered()] == ["a1", "b0"]   # zone a kept its place: a1 is still in it
    cache.remove_node("a1")
    cache.set_node({"metadata": {"name": "a2", "labels": {ZONE: "a"}}, "spec": {}, "status": {}})
    cache.set_node({"metadata": {"name": "b1", "labels": {ZONE: "b"}}, "spec": {}, "status": {}})
    assert [i.name for i in cache.ordered()] == ["b0", "a2", "b1"]


def test_a_node_deleted_and_added_again_keeps_its_pods():
    # cache.go RemoveNode keeps the NodeInfo while pods are on it; AddNode of the same name finds them (the pods'
    # own deletions come through another watch, possibly later)
    cache = NodeCache()

    def add(name: str) -> None:
        cache.set_node({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": {},
                        "status": {"allocatable": {"pods": "10", "cpu": "4", "memory": "4Gi"}}})

    add("n0")
    add("n1")
    sel = {"matchLabels": {"app": "web"}}
    web = cache.spread_counter("default", sel, selector_key(sel))
    for i in range(3):
        cache.add_pod(_pod(f"p{i}", "n1"))
    cache.remove_node("n1")
    assert [i.name for i in cache.ordered()] == ["n0"] and web.counts.tolist() == [0]
    cache.remove_pod(_pod("p2", "n1"))          # one pod's deletion arrives while the node is gone
    add("n1")
    assert [i.name for i in cache.ordered()] == ["n0", "n1"]   # the arrays are laid out again, pods counted
    assert cache.req_fit[-1].tolist() == [0, 2] and web.counts.tolist() == [0, 2]
    assert cache.domain_totals(web, "kubernetes.io/hostname").tolist() == [0, 2]
    cache.add_pod(_pod("p9", "gone"))           # bound to a node the cache has not seen: kept for it
    add("gone")
    cache.ordered()
    assert cache.req_fit[-1].tolist() == [0, 2, 1] and web.counts.tolist() == [0, 2, 1]


def test_node_taint_change_reaches_the_filters():
    # a pod template's tolerated-taint outcome is kept per node and redone only for the node that changed
    s = scheduler([node("n0"), node("n1")])
    ctx = plugins.PodContext(pod("p"), s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "n0") is None
    s.cache.set_node(node("n0", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    ctx = plugins.PodContext(pod("p"), s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "n0") == (("node(s) had untolerated taint {k: v}",), False)
    assert s.find_node(pod("q"))[0] == "n1"
    s.cache.set_node(node("n1", pods="0"))
    name, diag = s.find_node(pod("r"))
    assert name is None and diag.message(2) == "0/2 nodes are available: 1 Too many pods, " \
                                               "1 node(s) had untolerated taint {k: v}."


def test_select_host_replays_the_reservoir_draws():
    # the reservoir sampling of selectHost with random.Random.randrange, as written in a plain loop; the
    # replayed draws must choose the same nodes and use up the generator the same way (the choices of later
    # calls would drift apart otherwise)
    import random

    def reference(rng: random.Random, scores: list[int]) -> int:
        best, chosen, count = scores[0], 0, 1
        for i in range(1, len(scores)):
            if scores[i] > best:
                best, chosen, count = scores[i], i, 1
            elif scores[i] == best:
                count += 1
                if rng.randrange(count) == 0:
                    chosen = i
        return chosen

    data = random.Random(7)
    for seed in range(4):
        ref_rng = random.Random(seed)
        selector = HostSelector(random.Random(seed))
        for _ in range(300):
            n = data.choice([1, 2, 3, 17, 300, 700])
            scores = [data.choice([0, 50, 99, 100, 100]) for _ in range(n)]
            if data.random() < 0.3:
                scores = [100] * n
            assert selector.select(np.array(scores, np.int64)) == reference(ref_rng, scores)


def test_watched_pod_updates_refresh_the_cache():
    # through the scheduler's informer: a bound pod that is relabelled or starts terminating is refreshed in the
    # cache (internal/cache updatePod), so spreading stops counting it (countPodsMatchSelector skips terminating
    # pods and pods the selector no longer matches); its requests still count until it is gone
    from podlife.api.store import DeleteOptions

    s = scheduler([])
    ensure_namespaces(s.store, ["default"])
    s.start()
    for n in (node("n0", zone="a"), node("n1", zone="a")):
        s.store.create(n, by="test")
    for i in range(3):
        p = pod(f"web-{i}", cpu="100m", labels={"app": "web"}, node_name="n0")
        del p["metadata"]["uid"]
        s.store.create({"apiVersion": "v1", **p}, by="test")
    s.kernel.run()
    sel = {"matchLabels": {"app": "web"}}
    web = s.cache.spread_counter("default", sel, selector_key(sel))
    n0 = s.cache.nodes["n0"].pos
    assert int(web.counts[n0]) == 3
    s.store.delete("Pod", "default", "web-0", by="test", options=DeleteOptions(grace_period_seconds=30))
    relabelled = s.store.get("Pod", "default", "web-1")
    relabelled = {**relabelled, "metadata": {**relabelled["metadata"], "labels": {"app": "api"}}}
    s.store.update(relabelled, by="test")
    s.kernel.run()
    assert int(web.counts[n0]) == 1
    assert int(s.cache.req_fit[-1][n0]) == 3 and int(s.cache.req_fit[0][n0]) == 300
    assert dict(zip(s.cache.domain_values(ZONE), s.cache.domain_totals(web, ZONE).tolist())) == {"a": 1}


def test_amounts_beyond_int64_stay_exact():
    # a node with 2**63 cores (millicores far beyond int64) and a pod asking more than any node has: the
    # arithmetic is Python's exact integers, as Go's would be on int64 for values that fit
    huge = 2 ** 63
    s = scheduler([node("huge", cpu=str(huge), memory="2000Mi"), node("small")])
    ctx = plugins.PodContext(pod("p", cpu="1", memory="1000Mi"), s.cache, None)
    both = s.cache.positions(["huge", "small"])
    cap = huge * 1000
    # least: cpu (cap - 1000) * 100 // cap = 99, memory (2000 - 1000) * 100 // 2000 = 50 → (99 + 50) // 2 = 74;
    # small: cpu 0 (1000 - 1000), memory 50 → 25
    assert plugins.least_allocated(ctx, s.cache, both).tolist() == [((cap - 1000) * 100 // cap + 50) // 2, 25]
    # balanced: huge |1000/cap - 0.5| / 2 → int((1 - 0.25) * 100) = 75; small |1 - 0.5| / 2 → 75
    assert plugins.balanced_allocation(ctx, s.cache, both).tolist() == [75, 75]
    assert s.find_node(pod("q", cpu="1", memory="1000Mi"))[0] == "huge"
    name, diag = s.find_node(pod("r", cpu=str(2 * huge)))
    assert name is None and diag.message(2) == "0/2 nodes are available: 2 Insufficient cpu."


def _ports(*ports: tuple) -> dict:
    return {"containers": [{"name": "app", "image": "app:1", "ports": [
        {"containerPort": p, "hostPort": p, **({"protocol": proto} if proto else {}), **({"hostIP": ip} if ip else {})}
        for p, proto, ip in ports]}]}


def test_node_ports_filter():
    s = scheduler([node("n0"), node("n1"), node("n2")])
    ingress = pod("ingress-0", node_name="n0")
    ingress["spec"]["containers"] = _ports((80, None, None), (443, None, None))["containers"]
    s.cache.add_pod(ingress)
    dns = pod("dns-0", node_name="n1")
    dns["spec"]["containers"] = _ports((53, "UDP", "10.0.0.1"))["containers"]
    s.cache.add_pod(dns)

    def fits(ports):
        p = pod("p")
        p["spec"]["containers"] = _ports(*ports)["containers"]
        ctx = plugins.PodContext(p, s.cache, None)
        return [n for n in ("n0", "n1", "n2") if plugins.filter_node(ctx, s.cache, n) is None]

    # HostPortInfo.CheckConflict: TCP 80 on every IP is taken on n0
    assert fits([(80, None, None)]) == ["n1", "n2"]
    # UDP 53 on 10.0.0.1 is taken on n1 for that IP and for every-IP binds, not for another IP or TCP
    assert fits([(53, "UDP", None)]) == ["n0", "n2"]
    assert fits([(53, "UDP", "10.0.0.1")]) == ["n0", "n2"]
    assert fits([(53, "UDP", "10.0.0.2")]) == ["n0", "n1", "n2"]
    assert fits([(53, None, None)]) == ["n0", "n1", "n2"]
    p = pod("p")
    p["spec"]["containers"] = _ports((443, None, None))["containers"]
    ctx = plugins.PodContext(p, s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "n0") == ((plugins.R_PORTS,), True)
    s.cache.remove_pod(ingress)
    assert fits([(80, None, None)]) == ["n0", "n1", "n2"]

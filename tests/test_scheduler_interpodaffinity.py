"""InterPodAffinity's filter (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go) on any topology key:
required affinity and anti-affinity of the incoming pod, and existing pods' anti-affinity, counted per domain
(the nodes that share the term's topologyKey value)."""

from __future__ import annotations

from podlife.controlplane.scheduler import plugins
from tests.test_scheduler_plugins import node, pod, scheduler

ZONE = "topology.kubernetes.io/zone"


def _anti(key: str, selector: dict | None, **extra) -> dict:
    term = {"topologyKey": key, **extra}
    if selector is not None:
        term["labelSelector"] = selector
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _affinity(key: str, selector: dict) -> dict:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": key, "labelSelector": selector}]}}


def _zones() -> list[dict]:
    return [node("a1", zone="a"), node("a2", zone="a"), node("b1", zone="b"), node("c1", zone="c")]


def _fits(s, p) -> list[str]:
    return [n for n in ("a1", "a2", "b1", "c1") if plugins.filter_node(plugins.PodContext(p, s.cache, None),
                                                                       s.cache, n) is None]


def test_zone_anti_affinity_keeps_the_whole_zone_free():
    s = scheduler(_zones())
    s.cache.add_pod(pod("db-0", labels={"app": "db"}, node_name="a1"))
    p = pod("db-1", labels={"app": "db"}, affinity=_anti(ZONE, {"matchLabels": {"app": "db"}}))
    # satisfyPodAntiAffinity: db-0 is in zone a, so both nodes of zone a fail, b and c do not
    assert _fits(s, p) == ["b1", "c1"]
    ctx = plugins.PodContext(p, s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "a2") == (("node(s) didn't match pod anti-affinity rules",), True)


def test_existing_pods_zone_anti_affinity():
    s = scheduler(_zones())
    s.cache.add_pod(pod("guard", labels={"app": "guard"}, node_name="b1",
                        affinity=_anti(ZONE, {"matchLabels": {"app": "web"}})))
    # satisfyExistingPodsAntiAffinity: guard's term selects web pods, so no web pod may enter zone b
    assert _fits(s, pod("web", labels={"app": "web"})) == ["a1", "a2", "c1"]
    ctx = plugins.PodContext(pod("web", labels={"app": "web"}), s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "b1") == (
        ("node(s) didn't satisfy existing pods anti-affinity rules",), True)
    assert _fits(s, pod("other", labels={"app": "other"})) == ["a1", "a2", "b1", "c1"]


def test_anti_affinity_term_without_label_selector_selects_nothing():
    s = scheduler(_zones())
    s.cache.add_pod(pod("x", labels={"app": "x"}, node_name="a1"))
    # LabelSelectorAsSelector(nil) is labels.Nothing(): a term without labelSelector repels no pod ...
    assert _fits(s, pod("p", affinity=_anti(ZONE, None))) == ["a1", "a2", "b1", "c1"]
    # ... while an empty labelSelector {} is labels.Everything() (in the pod's namespace)
    assert _fits(s, pod("p", affinity=_anti(ZONE, {}))) == ["b1", "c1"]
    # nor does an existing pod's term without labelSelector keep anything away
    s.cache.add_pod(pod("y", node_name="b1", affinity=_anti(ZONE, None)))
    assert _fits(s, pod("q", labels={"app": "q"})) == ["a1", "a2", "b1", "c1"]


def test_anti_affinity_namespaces_and_empty_namespace_selector():
    s = scheduler(_zones())
    other = pod("x", labels={"app": "x"}, node_name="a1")
    other["metadata"]["namespace"] = "other"
    s.cache.add_pod(other)
    sel = {"matchLabels": {"app": "x"}}
    # the term's namespaces default to the pod's own: the pod in "other" is not selected
    assert _fits(s, pod("p", affinity=_anti(ZONE, sel))) == ["a1", "a2", "b1", "c1"]
    assert _fits(s, pod("p", affinity=_anti(ZONE, sel, namespaces=["other"]))) == ["b1", "c1"]
    # namespaceSelector {} selects every namespace
    assert _fits(s, pod("p", affinity=_anti(ZONE, sel, namespaceSelector={}))) == ["b1", "c1"]


def test_required_pod_affinity_on_zone():
    s = scheduler([*_zones(), node("nozone")])
    cache_pod = {"matchLabels": {"app": "cache"}}
    # the first pod of a group with affinity to itself: no pod matches anywhere, the pod matches its own term,
    # so every node with the zone label passes (a node without it never does)
    p = pod("cache-0", labels={"app": "cache"}, affinity=_affinity(ZONE, cache_pod))
    assert _fits(s, p) == ["a1", "a2", "b1", "c1"]
    ctx = plugins.PodContext(p, s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "nozone") == (("node(s) didn't match pod affinity rules",), False)
    # a pod that does not match its own term has nowhere to go while no matching pod runs
    web = pod("web", labels={"app": "web"}, affinity=_affinity(ZONE, cache_pod))
    assert _fits(s, web) == []
    s.cache.add_pod(pod("cache-0", labels={"app": "cache"}, node_name="a2"))
    # now only zone a has a matching pod: a1 and a2 pass (a1 through its zone)
    assert _fits(s, web) == ["a1", "a2"]
    assert _fits(s, p) == ["a1", "a2"]


def test_zone_anti_affinity_in_the_scheduling_cycle():
    s = scheduler(_zones())
    spread = _anti(ZONE, {"matchLabels": {"app": "db"}})
    placed = []
    for i in range(4):
        p = pod(f"db-{i}", labels={"app": "db"}, affinity=spread)
        name, diagnosis = s.find_node(p)
        if name is None:
            # three zones, one db each: the fourth finds every node failing the pod's own anti-affinity term
            # (preemption might help: Unschedulable)
            assert diagnosis.reasons == {"node(s) didn't match pod anti-affinity rules": 4}
            assert diagnosis.resolvable == 4
            break
        p["spec"]["nodeName"] = name
        s.cache.add_pod(p)
        placed.append(s.cache.nodes[name].labels[ZONE])
    assert sorted(placed) == ["a", "b", "c"]


def _preferred(kind: str, weight: int, key: str, selector: dict) -> dict:
    return {kind: {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": weight, "podAffinityTerm": {"topologyKey": key, "labelSelector": selector}}]}}


def _scores(s, p, names):
    ctx = plugins.PodContext(p, s.cache, None)
    return plugins.inter_pod_affinity_scores(ctx, s.cache, s.cache.positions(names), len(names)).tolist()


def test_preferred_anti_affinity_of_the_incoming_pod():
    s = scheduler([node("n0"), node("n1"), node("n2")])
    s.cache.add_pod(pod("web-0", labels={"app": "web"}, node_name="n0"))
    s.cache.add_pod(pod("web-1", labels={"app": "web"}, node_name="n0"))
    s.cache.add_pod(pod("web-2", labels={"app": "web"}, node_name="n1"))
    p = pod("web-3", labels={"app": "web"},
            affinity=_preferred("podAntiAffinity", 100, "kubernetes.io/hostname", {"matchLabels": {"app": "web"}}))
    # interpodaffinity/scoring.go: n0 -200, n1 -100, n2 0; normalized 100 * (s - min) / (max - min): 0, 50, 100
    assert _scores(s, p, ["n0", "n1", "n2"]) == [0, 50, 100]
    # weighed 2 from 1.23 (v1beta3) in the total; the other plugins score the three nodes alike but for
    # LeastAllocated (n0 has two pods, n1 one, each counted as 100m / 200Mi): n2 is chosen
    assert s.find_node(p)[0] == "n2"


def test_existing_pods_preferred_and_required_terms_weigh_the_incoming_pod():
    s = scheduler(_zones())
    cache_sel = {"matchLabels": {"app": "cache"}}
    s.cache.add_pod(pod("api", labels={"app": "api"}, node_name="a1",
                        affinity=_preferred("podAffinity", 30, ZONE, cache_sel)))
    s.cache.add_pod(pod("worker", labels={"app": "worker"}, node_name="b1",
                        affinity=_affinity(ZONE, cache_sel)))
    s.cache.add_pod(pod("batch", labels={"app": "batch"}, node_name="c1",
                        affinity=_preferred("podAntiAffinity", 10, ZONE, cache_sel)))
    # a cache pod is pulled to zone a by api's preferred affinity (+30), to zone b by worker's required affinity
    # (hardPodAffinityWeight +1) and pushed from zone c by batch's preferred anti-affinity (-10):
    # a1 30, a2 30, b1 1, c1 -10 → 100 * (s + 10) / 40: 100, 100, 27 (27.5), 0
    assert _scores(s, pod("cache-0", labels={"app": "cache"}), ["a1", "a2", "b1", "c1"]) == [100, 100, 27, 0]
    # a pod none of the terms select: every node alike
    assert _scores(s, pod("other", labels={"app": "other"}), ["a1", "a2", "b1", "c1"]) == [0, 0, 0, 0]


def test_a_term_namespace_selector_with_labels_is_said_to_be_unmodelled():
    from podlife.api.warnings import unmodelled_fields

    term = {"topologyKey": ZONE, "labelSelector": {}, "namespaces": ["team-a"],
            "namespaceSelector": {"matchLabels": {"tier": "prod"}}}
    obj = {"kind": "Deployment", "spec": {"template": {"spec": {"affinity": {"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [term],
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "podAffinityTerm": {**term,
                                                                                            "namespaces": []}}]}}}}}}
    base = "spec.template.spec.affinity.podAffinity."
    assert unmodelled_fields(obj) == [
        (base + "requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector",
         "not modelled: podlife's scheduler does not match namespace labels; the term selects pods in team-a only"),
        (base + "preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaceSelector",
         "not modelled: podlife's scheduler does not match namespace labels; the term selects pods in the pod's "
         "own namespace only")]
    # an empty namespaceSelector (every namespace) is modelled: nothing to say
    term["namespaceSelector"] = {}
    obj["spec"]["template"]["spec"]["affinity"]["podAffinity"].pop("preferredDuringSchedulingIgnoredDuringExecution")
    assert unmodelled_fields(obj) == []

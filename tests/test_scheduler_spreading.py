"""PodTopologySpread's newer constraint fields (podtopologyspread/common.go, filtering.go): minDomains,
matchLabelKeys, nodeAffinityPolicy and nodeTaintsPolicy; the API server drops them while their gates are off."""

from __future__ import annotations

import copy

from podlife import versions
from podlife.controlplane.scheduler import plugins
from podlife.api.podutil import drop_disabled_fields
from tests.test_scheduler_plugins import node, pod, scheduler

ZONE = "topology.kubernetes.io/zone"


def _fits(s, p, names) -> list[str]:
    ctx = plugins.PodContext(p, s.cache, None)
    return [n for n in names if plugins.filter_node(ctx, s.cache, n) is None]


def _constraint(**extra) -> dict:
    return {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def test_min_domains_makes_the_global_minimum_zero():
    s = scheduler([node("a1", zone="a"), node("b1", zone="b")])
    for n in ("a1", "b1"):
        s.cache.add_pod(pod(f"web-{n}", labels={"app": "web"}, node_name=n))
    plain = pod("web", labels={"app": "web"}, topologySpreadConstraints=[_constraint()])
    # one web pod per zone: skew 1 + 1 - 1 = 1 ≤ 1 in both
    assert _fits(s, plain, ["a1", "b1"]) == ["a1", "b1"]
    # minDomains 3 with 2 eligible domains: the global minimum counts as 0, skew 2 > 1 everywhere
    wide = pod("web", labels={"app": "web"}, topologySpreadConstraints=[_constraint(minDomains=3)])
    assert _fits(s, wide, ["a1", "b1"]) == []
    ctx = plugins.PodContext(wide, s.cache, None)
    assert plugins.filter_node(ctx, s.cache, "a1") == ((plugins.R_SPREAD,), True)


def test_match_label_keys_count_only_the_same_revision():
    s = scheduler([node("a1", zone="a"), node("b1", zone="b")])
    for i in range(2):
        s.cache.add_pod(pod(f"old-{i}", labels={"app": "web", "pod-template-hash": "v1"}, node_name="a1"))
    s.cache.add_pod(pod("new-0", labels={"app": "web", "pod-template-hash": "v2"}, node_name="b1"))
    labels = {"app": "web", "pod-template-hash": "v2"}
    # app=web alone: a 2, b 1 → b1 (1 + 1 - 1 = 1) fits, a1 (2 + 1 - 1) does not
    assert _fits(s, pod("new-1", labels=labels, topologySpreadConstraints=[_constraint()]), ["a1", "b1"]) == ["b1"]
    # with the pod's pod-template-hash added: a 0, b 1 → only a1 (0 + 1 - 0 = 1)
    keyed = _constraint(matchLabelKeys=["pod-template-hash"])
    assert _fits(s, pod("new-1", labels=labels, topologySpreadConstraints=[keyed]), ["a1", "b1"]) == ["a1"]


def test_node_taints_policy_honor_leaves_untolerated_nodes_out_of_the_count():
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    s = scheduler([node("a1", zone="a"), node("b1", zone="b", taints=taint), node("c1", zone="c")])
    for n in ("a1", "c1"):
        s.cache.add_pod(pod(f"web-{n}", labels={"app": "web"}, node_name=n))
    names = ["a1", "b1", "c1"]
    # nodeTaintsPolicy Ignore (default): zone b counts with 0 pods, so the minimum is 0 and a and c are too full;
    # b itself fails TaintToleration
    assert _fits(s, pod("web", labels={"app": "web"}, topologySpreadConstraints=[_constraint()]), names) == []
    honor = _constraint(nodeTaintsPolicy="Honor")
    # Honor: b is not counted (its taint is not tolerated), the minimum is 1, a and c pass (1 + 1 - 1)
    assert _fits(s, pod("web", labels={"app": "web"}, topologySpreadConstraints=[honor]), names) == ["a1", "c1"]


def test_node_affinity_policy_ignore_counts_every_node():
    s = scheduler([node("a1", zone="a", labels={"pool": "x"}), node("b1", zone="b")])
    s.cache.add_pod(pod("web-a", labels={"app": "web"}, node_name="a1"))
    selector = {"pool": "x"}
    # Honor (default): only a1 passes the node selector, so only zone a counts (1 pod): 1 + 1 - 1 = 1 fits
    p = pod("web", labels={"app": "web"}, nodeSelector=selector, topologySpreadConstraints=[_constraint()])
    assert _fits(s, p, ["a1"]) == ["a1"]
    # Ignore: zone b counts too (0 pods): 1 + 1 - 0 = 2 > 1
    p = pod("web", labels={"app": "web"}, nodeSelector=selector,
            topologySpreadConstraints=[_constraint(nodeAffinityPolicy="Ignore")])
    assert _fits(s, p, ["a1"]) == []


def test_the_api_drops_the_fields_while_their_gates_are_off():
    spec = {"containers": [], "topologySpreadConstraints": [
        _constraint(minDomains=2, matchLabelKeys=["pod-template-hash"], nodeAffinityPolicy="Ignore",
                    nodeTaintsPolicy="Honor")]}
    kept = {}
    for version in ("1.25", "1.26", "1.27"):
        s = copy.deepcopy(spec)
        drop_disabled_fields(s, versions.profile(version))
        kept[version] = sorted(k for k in s["topologySpreadConstraints"][0]
                               if k in ("minDomains", "matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy"))
    assert kept == {"1.25": [], "1.26": ["nodeAffinityPolicy", "nodeTaintsPolicy"],
                    "1.27": ["matchLabelKeys", "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy"]}

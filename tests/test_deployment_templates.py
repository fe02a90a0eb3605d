"""A Deployment's template against its ReplicaSets' (EqualIgnoreHash): the in-place comparison agrees with the
comparison of copies without the pod-template-hash label, whichever way they differ."""

from __future__ import annotations

import copy
import itertools

from podlife.controlplane.controllers.deployment.util import DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY as HASH
from podlife.controlplane.controllers.deployment.util import _equal_but_hash, _equal_by_copies, equal_ignore_hash


BASE = {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "1"}},
        "spec": {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "100m"}}}]}}


def _variants() -> list[dict]:
    out = [copy.deepcopy(BASE)]
    t = copy.deepcopy(BASE)
    t["metadata"]["labels"][HASH] = "5d8f7c9b4"
    out.append(t)
    t = copy.deepcopy(BASE)
    t["metadata"]["labels"] = {HASH: "5d8f7c9b4", "app": "web"}   # another order
    out.append(t)
    t = copy.deepcopy(BASE)
    t["metadata"]["labels"]["app"] = "db"
    out.append(t)
    t = copy.deepcopy(BASE)
    del t["metadata"]["labels"]
    out.append(t)
    out.append({**copy.deepcopy(BASE), "metadata": {"labels": None, "annotations": {"a": "1"}}})
    t = copy.deepcopy(BASE)
    t["metadata"]["annotations"] = {}
    out.append(t)
    t = copy.deepcopy(BASE)
    t["spec"]["containers"][0]["image"] = "app:2"
    out.append(t)
    t = copy.deepcopy(BASE)
    t["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "0.1"   # semantically equal, not ==
    out.append(t)
    out.append({"spec": copy.deepcopy(BASE["spec"])})                   # no metadata at all
    out.append({"metadata": {}, "spec": copy.deepcopy(BASE["spec"])})
    out.append({"metadata": {"labels": {HASH: "x"}}, "spec": copy.deepcopy(BASE["spec"])})
    out.append({})
    return out


def test_agrees_with_the_copies_on_every_pair() -> None:
    variants = _variants()
    equal = 0
    for a, b in itertools.product(variants, repeat=2):
        want = _equal_by_copies(a, b)
        assert equal_ignore_hash(a, b) == want, (a, b)
        equal += want
    assert equal > len(variants)   # some pairs other than a template with itself compare equal
    # the ReplicaSet's template (the hash label added) against its Deployment's is decided in place
    assert _equal_but_hash(variants[1], variants[0]) and _equal_but_hash(variants[2], variants[0])

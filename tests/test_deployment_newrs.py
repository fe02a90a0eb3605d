"""FindNewReplicaSet (deployment util): the oldest ReplicaSet whose template equals the Deployment's by
EqualIgnoreHash, the Deployment's side normalized once a call; the same answer as EqualIgnoreHash on each."""

from __future__ import annotations

import copy
import itertools

from podlife.controlplane.controllers.deployment.util import equal_ignore_hash, find_new_replica_set

HASH = "pod-template-hash"


def _template(image: str = "nginx:1", cpu: object = "1", extra: dict | None = None, label: str | None = None) -> dict:
    labels = {"app": "web", **({HASH: label} if label else {})}
    container = {"name": "c", "image": image, "resources": {"requests": {"cpu": cpu}}, **(extra or {})}
    return {"metadata": {"labels": labels}, "spec": {"containers": [container]}}


VARIANTS = [
    _template(), _template(label="abc"), _template(image="nginx:2"), _template(cpu="1000m"), _template(cpu=1),
    _template(cpu="2"), _template(extra={"env": []}), _template(extra={"env": None}), _template(extra={"args": ["x"]}),
    _template(extra={"ports": [{"containerPort": 80, "hostIP": None}]}),
    _template(extra={"ports": [{"containerPort": 80}]}),
    {}, {"metadata": {}}, {"metadata": {"labels": {HASH: "x"}}},
]


def _reference(d: dict, rs_list: list[dict]) -> dict | None:
    for rs in rs_list:
        if equal_ignore_hash(rs["spec"].get("template") or {}, d["spec"].get("template") or {}):
            return rs
    return None


def test_same_answer_as_equal_ignore_hash_on_each_replica_set() -> None:
    rss = [{"metadata": {"name": f"rs-{i}"}, "spec": {"template": t}} for i, t in enumerate(VARIANTS)]
    for d_template in VARIANTS:
        d = {"spec": {"template": d_template}}
        before = copy.deepcopy(d)
        for n in range(len(rss) + 1):
            for rs_list in itertools.islice(itertools.permutations(rss, n), 40):
                assert find_new_replica_set(d, list(rs_list)) is _reference(d, list(rs_list))
        assert d == before   # nothing written into the Deployment
    # the hash label and a semantic difference (1 CPU as "1000m", a null list) do not tell templates apart
    d = {"spec": {"template": _template(cpu="1000m", extra={"env": None})}}
    found = find_new_replica_set(d, rss)
    assert found is not None and found["metadata"]["name"] == "rs-0"
    assert find_new_replica_set({"spec": {"template": _template(image="other")}}, rss) is None

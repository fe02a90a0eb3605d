"""Caches keyed by a pod spec without its token volume's name (api.speckey): replicas whose specs differ in that
name alone share the answers that do not read it, and nothing else is taken for the same."""

from __future__ import annotations

import orjson
import pytest

from podlife.api import admission
from podlife.api import speckey
from podlife.api.speckey import bound_spec, graft, name_free, name_paths, nodeless_key, share_spec, split, stored_key
from podlife.api.validation import core_pod
from podlife.controlplane.scheduler.cache import NodeCache

from tests.helpers import newest_rules  # noqa: F401  (a fixture)


def _spec(volume: str, mount: str | None = None, cpu: str = "100m") -> dict:
    return {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}},
                            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
                            "volumeMounts": [{"name": mount or volume, "readOnly": True,
                                              "mountPath": admission.TOKEN_MOUNT_PATH}]}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
            "volumes": [{"name": volume, "projected": admission.token_volume_source()}]}


def test_name_free_takes_out_one_generated_name_only() -> None:
    a, b = orjson.dumps(_spec("kube-api-access-bcdfg")), orjson.dumps(_spec("kube-api-access-x2z9q"))
    assert name_free(a) == name_free(b) != a
    assert name_free(a).startswith(b"\0") and b"bcdfg" not in name_free(a)
    assert name_free(a) != name_free(orjson.dumps(_spec("kube-api-access-x2z9q", cpu="200m")))
    # two different names, a name not of the generated form (a vowel, a length), the prefix inside another
    # string: the JSON as it is
    for json in (orjson.dumps(_spec("kube-api-access-bcdfg", mount="kube-api-access-bcdfh")),
                 orjson.dumps(_spec("kube-api-access-bcdfa")), orjson.dumps(_spec("kube-api-access-bcdfgh")),
                 b'{"a":"kube-api-access-bcdfg","b":"x kube-api-access-bcdfg"}',
                 b'{"a":"x\\"kube-api-access-bcdfg"}', b'{"a":1}'):
        assert name_free(json) is json


@pytest.mark.usefixtures("newest_rules")
def test_validation_keeps_only_clean_answers_across_names() -> None:
    core_pod._SPEC_ERRORS.clear()
    assert core_pod.validate_pod_spec(_spec("kube-api-access-bcdfg")) == []
    assert core_pod.validate_pod_spec(_spec("kube-api-access-x2z9q")) == []
    assert len(core_pod._SPEC_ERRORS) == 1
    # errors are not kept under a key without the name (they could name it)
    assert core_pod.validate_pod_spec(_spec("kube-api-access-bcdfg", cpu="-1"))
    assert len(core_pod._SPEC_ERRORS) == 1
    # a mount of a volume that is not there: an error naming it, worked out for each name
    bad = [core_pod.validate_pod_spec(_spec("kube-api-access-bcdfg", mount=f"kube-api-access-{s}"))
           for s in ("bcdfh", "bcdfj")]
    assert [e.value for errs in bad for e in errs if "volumeMounts" in e.path] == \
        ["kube-api-access-bcdfh", "kube-api-access-bcdfj"]


def test_scheduler_spec_facts_shared_across_names() -> None:
    cache = NodeCache()
    one, two = cache.spec_facts(_spec("kube-api-access-bcdfg")), cache.spec_facts(_spec("kube-api-access-x2z9q"))
    assert one is two and one.req["cpu"] == 100
    assert cache.spec_facts(_spec("kube-api-access-x2z9q", cpu="200m")) is not one


def test_graft_shares_every_part_but_the_paths_to_the_name() -> None:
    model, spec = _spec("kube-api-access-bcdfg"), _spec("kube-api-access-x2z9q")
    key, name = split(orjson.dumps(spec))
    assert (key, name) == (split(orjson.dumps(model))[0], "kube-api-access-x2z9q")
    paths = name_paths(model, "kube-api-access-bcdfg")
    assert paths == [("containers", 0, "volumeMounts", 0, "name"), ("volumes", 0, "name")]
    out = graft(model, paths, name)
    assert orjson.dumps(out) == orjson.dumps(spec)
    assert orjson.dumps(model) == orjson.dumps(_spec("kube-api-access-bcdfg"))   # the model is left alone
    assert out["volumes"][0]["projected"] is model["volumes"][0]["projected"]
    assert out["containers"][0]["resources"] is model["containers"][0]["resources"]
    assert out["restartPolicy"] is model["restartPolicy"]
    assert out["volumes"][0] is not model["volumes"][0]
    # the name also as a key, or inside another string: no paths (such specs are not shared)
    assert name_paths({**model, "nodeSelector": {"kube-api-access-bcdfg": "x"}}, "kube-api-access-bcdfg") is None
    assert name_paths({**model, "x": 'a"kube-api-access-bcdfg'}, "kube-api-access-bcdfg") is None


def test_store_shares_replicas_specs() -> None:
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run

    sc = load_scenario("s.yaml", text="""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  until: 1m
  cluster: {nodes: [{name: n1}]}
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 3
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: nginx}]}
""")
    pods = run(sc).cluster.store.list("Pod")
    names = {p["spec"]["volumes"][0]["name"] for p in pods}
    assert len(pods) == 3 and len(names) == 3 and all(n.startswith("kube-api-access-") for n in names)
    first, *rest = pods
    for p in rest:
        assert p["spec"]["volumes"][0]["projected"] is first["spec"]["volumes"][0]["projected"]
        assert p["spec"]["containers"][0]["volumeMounts"][0]["name"] == p["spec"]["volumes"][0]["name"]


def test_stored_specs_keep_their_keys() -> None:
    """share_spec remembers the key of each spec it returns (stored_key), so the scheduler's caches need not
    encode it again; a bound copy keeps the key less nodeName; a spec it did not return has none."""
    specs: dict = {}
    first = share_spec(specs, _spec("kube-api-access-bcdfg"), 10)
    second = share_spec(specs, _spec("kube-api-access-x2z9q"), 10)
    key = split(orjson.dumps(first))[0]
    assert key.startswith(b"\0") and stored_key(first) == stored_key(second) == key == nodeless_key(second)
    bound = bound_spec(second, "n1")
    assert bound["nodeName"] == "n1" and "nodeName" not in second
    assert stored_key(bound) is None and nodeless_key(bound) == key
    assert stored_key(_spec("kube-api-access-bcdfg")) is None   # equal, but not the object the store keeps
    with_node = share_spec(specs, {**_spec("kube-api-access-bcdfg"), "nodeName": "n1"}, 10)
    assert stored_key(with_node) is not None and nodeless_key(with_node) is None
    # the scheduler's facts of a stored spec and of an equal spec it encodes itself are the same facts
    cache = NodeCache()
    assert cache.spec_facts(bound).req == cache.spec_facts(_spec("kube-api-access-bcdfg")).req


def test_a_bound_spec_forgets_the_spec_it_replaced_once_nobody_holds_it() -> None:
    """A binding's old spec stays known while its revision may still be read; the pod writes after it look at it
    again (speckey.collect_superseded) and forget it once only the table holds it."""
    speckey._SUPERSEDED.clear()
    old = share_spec({}, _spec("kube-api-access-kq4wz"), 10)
    key = nodeless_key(old)
    bound = bound_spec(old, "n1")
    assert list(speckey._SUPERSEDED) == [id(old)]
    speckey.collect_superseded()   # the old revision still holds it: looked at again later
    assert nodeless_key(old) == key and list(speckey._SUPERSEDED) == [id(old)]
    old_id = id(old)
    del old
    speckey.collect_superseded()
    assert old_id not in speckey._STORED and not speckey._SUPERSEDED
    assert nodeless_key(bound) == key   # the bound one is kept


def test_split_matches_count_and_replace() -> None:
    """split's split-and-join gives what the count and replace of the name give, on every arrangement of
    names, near misses and escapes."""
    import itertools

    atoms = [b'"kube-api-access-bcdfg"', b'"kube-api-access-bcdf2"', b"kube-api-access-", b"\\", b'"', b"x",
             b'"kube-api-access-bcdfg', b'bcdfg"', b'"kube-api-access-bc"']
    prefix, hits = b"kube-api-access-", 0
    for n in range(5):
        for parts in itertools.product(atoms, repeat=n):
            json = b"{" + b"".join(parts)
            at = json.find(b'"' + prefix)
            name = json[at:at + 23]
            want: tuple = (json, None)
            if json.count(prefix) and at > 0 and json[at - 1] != 92 and name[22:] == b'"' and \
                    not name[17:22].strip(b"bcdfghjklmnpqrstvwxz2456789") and json.count(name) == json.count(prefix):
                want = (b"\0" + json.replace(name, b'"kube-api-access-"'), name[1:-1].decode())
                hits += 1
            assert split(json) == want, json
    assert hits > 100

"""The Event store (podlife.api.packed) and the store's sharing of what pods of one template have alike."""

from __future__ import annotations

import orjson
import pytest

from podlife.api import packed
from podlife.api.meta import kept
from podlife.api.packed import PackedObjects


def _event(i: int, count: int = 1) -> dict:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"web-{i:03d}.1", "namespace": "default"},
            "reason": "Pulled", "message": f'Container image "app:{i}" already present on machine', "count": count}


@pytest.fixture()
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    # small batches and runs, so a few objects exercise the compressed form
    monkeypatch.setattr(packed, "YOUNG", 8)
    monkeypatch.setattr(packed, "RUN", 3)


def test_objects_come_back_equal_in_the_order_first_set(small: None) -> None:
    p = PackedObjects()
    order = [17, 3, 11, 0, 5, 9, 14, 2, 8, 1, 12]    # 11 objects: one batch of 8 compressed, 3 young
    for i in order:
        p[("default", f"web-{i:03d}.1")] = _event(i)
    assert len(p._runs) == 3 and len(p._young) == 3          # 8 objects in runs of 3, 3, 2
    assert list(p) == [("default", f"web-{i:03d}.1") for i in order]
    for i in order:
        got = p[("default", f"web-{i:03d}.1")]
        assert got == _event(i) and list(got) == list(_event(i))
    assert p.get(("default", "nothing")) is None and ("default", "nothing") not in p
    assert len(p) == 11


def test_a_batch_is_compressed_in_key_order(small: None) -> None:
    p = PackedObjects()
    for i in (7, 6, 5, 4, 3, 2, 1, 0):
        p[("default", f"web-{i:03d}.1")] = _event(i)
    # runs of consecutive keys: reading in key order decodes each run once
    assert [p._at[("default", f"web-{i:03d}.1")] for i in range(8)] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert [packed._inflate(r) for r in p._runs] == [
        [orjson.dumps(_event(i)) for i in range(a, b)] for a, b in ((0, 3), (3, 6), (6, 8))]


def test_updates_and_deletes_of_compressed_objects(small: None) -> None:
    p = PackedObjects()
    for i in range(8):
        p[("default", f"web-{i:03d}.1")] = _event(i)
    p[("default", "web-002.1")] = _event(2, count=2)      # a count bump of a compressed Event
    del p[("default", "web-005.1")]
    assert p[("default", "web-002.1")]["count"] == 2
    assert ("default", "web-005.1") not in p and len(p) == 7
    assert list(p)[2] == ("default", "web-002.1")          # keeps its place, as a dict's key does
    p[("default", "web-005.1")] = _event(5, count=3)       # created again: last in the order
    assert list(p)[-1] == ("default", "web-005.1")
    for i in range(8, 14):                                 # the next batch: the two above go with it
        p[("default", f"web-{i:03d}.1")] = _event(i)
    assert p._young == []
    assert p[("default", "web-002.1")]["count"] == 2 and p[("default", "web-005.1")]["count"] == 3
    assert p.encoded(("default", "web-005.1")) == orjson.dumps(_event(5, count=3))


def test_kept_json_is_the_same_bytes_in_a_buffer_of_its_size() -> None:
    data = orjson.dumps(_event(1))
    assert kept(data) == data and kept(data) is not data


def test_pods_of_one_template_share_their_spec_labels_and_owner() -> None:
    from datetime import datetime, timezone

    from podlife.api.store import Store
    from podlife.cluster.contracts import StoreOptions, no_admission
    from podlife.engine import Kernel
    from podlife.trace.recorder import Trace
    from podlife.versions import NEWEST, profile

    kernel = Kernel(seed=1)
    store = Store(kernel, Trace(kernel, datetime(2025, 1, 1, tzinfo=timezone.utc)),
                  StoreOptions(profile=profile(NEWEST), admission=no_admission))
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}, by="test")
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u1", "controller": True}]

    def pod(name: str, image: str = "app:1") -> dict:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": {"app": "web"}, "ownerReferences": [dict(owner[0])]},
                "spec": {"containers": [{"name": "c", "image": image}]}}

    a, b, c = (store.create(pod("a"), by="test"), store.create(pod("b"), by="test"),
               store.create(pod("c", image="app:2"), by="test"))
    assert a["spec"] is b["spec"] and a["metadata"]["labels"] is b["metadata"]["labels"]
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert c["spec"] is not a["spec"] and c["spec"]["containers"][0]["image"] == "app:2"
    assert c["metadata"]["labels"] is a["metadata"]["labels"]
    # a write to one pod makes a revision of its own; the other keeps what it had
    store.bind("default", "a", "node-1", by="test")
    assert store.get("Pod", "default", "a")["spec"]["nodeName"] == "node-1"
    assert "nodeName" not in store.get("Pod", "default", "b")["spec"]

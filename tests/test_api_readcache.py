"""The live API's read cache (podlife.apiserver.cache): a LIST with equality label selectors is answered
from the label index alone only while the index has seen every write."""

from __future__ import annotations

from datetime import datetime, timezone

from podlife.api.meta import clone
from podlife.api.selectors import parse
from podlife.api.store import Store, ensure_namespaces
from podlife.cluster.contracts import StoreOptions, no_admission
from podlife.versions import NEWEST, profile as version_profile
from podlife.apiserver.cache import ReadCache
from podlife.engine import Kernel
from podlife.trace.recorder import Trace


def _pod(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}


def test_the_index_answers_equalities_exactly_once_every_write_reached_it() -> None:
    kernel = Kernel(seed=0)
    store = Store(kernel, Trace(kernel, datetime(2025, 1, 1, tzinfo=timezone.utc)),
                  StoreOptions(profile=version_profile(NEWEST), admission=no_admission))
    ensure_namespaces(store, ["default"])
    cache = ReadCache(store)
    cache.kind("Pod")
    store.create(_pod("a", app="web"), by="test")
    store.create(_pod("b", app="db"), by="test")
    kernel.run()
    eq, inset, neq = parse("app=web"), parse("app in (web,db)"), parse("app!=web")
    assert cache.exact(eq) and cache.exact(inset) and not cache.exact(neq)
    assert [o["metadata"]["name"] for o in cache.select("Pod", "default", eq, {})] == ["a"]
    # a relabel the index has not been told of yet (its watch event waits for this instant's flush): the
    # index's answer is stale, so it is not exact and the server matches what it returns again
    pod = clone(store.get("Pod", "default", "a"))   # stored objects are never changed in place
    pod["metadata"]["labels"] = {"app": "db"}
    store.update(pod, by="test")
    assert store.delivering() and not cache.exact(eq)
    kernel.run()
    assert not store.delivering() and cache.exact(eq)
    assert cache.select("Pod", "default", eq, {}) == []
    assert [o["metadata"]["name"] for o in cache.select("Pod", "default", parse("app=db"), {})] == ["a", "b"]


def test_a_read_at_a_revision_is_the_stored_objects_while_nothing_of_the_kind_was_written_since() -> None:
    """Store.current_at lets a continued LIST read the kind as stored instead of undoing the history."""
    kernel = Kernel(seed=0)
    store = Store(kernel, Trace(kernel, datetime(2025, 1, 1, tzinfo=timezone.utc)),
                  StoreOptions(profile=version_profile(NEWEST), admission=no_admission))
    ensure_namespaces(store, ["default"])
    store.create(_pod("a"), by="test")
    kernel.run()
    at = store.resource_version
    store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}},
                 by="test")
    assert store.current_at("Pod", at) and not store.current_at("ConfigMap", at)
    store.create(_pod("b"), by="test")
    assert not store.current_at("Pod", at)
    assert sorted(store.snapshot("Pod", at) or {}) == [("default", "a")]
    assert store.current_at("Pod", store.resource_version)

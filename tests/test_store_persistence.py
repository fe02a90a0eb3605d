"""The store's durable log (podlife.api.storage) and a cluster restarted from it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone

import pytest

from podlife.api import errors
from podlife.api.meta import clone
from podlife.api.storage import KEEP, Persisted, SqliteLog
from podlife.cluster import Cluster
from podlife.cluster.spec import NodeSpec

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _cluster(path, resume: bool, stream: int = 0) -> Cluster:
    log = SqliteLog(str(path))
    persisted = Persisted(log, resume, now=log.now() if resume else 0.0, stream=stream)
    return Cluster(version="1.32", seed=0, start_time=START, nodes=[NodeSpec("node-1")], persisted=persisted)


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


def _configmap(name: str, n: int = 0) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": {"n": str(n)}}


def _changed(c: Cluster, n: int) -> dict:
    cm = clone(c.store.get("ConfigMap", "default", "cm"))
    cm["data"] = {"n": str(n)}
    return cm


def test_a_restarted_cluster_has_the_objects_versions_and_time_it_had(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    c.store.create(_pod("web"), by="test")
    c.kernel.run(until=30)
    c.store.log.clock(c.kernel.now)
    c.store.log.commit(force=True)
    before = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in c.store.all_objects()}
    rv = c.store.resource_version
    pod = c.store.get("Pod", "default", "web")
    assert pod["status"]["phase"] == "Running"

    # the process ends without closing anything (kill -9): what was committed is what a restart finds
    r = _cluster(db, resume=True, stream=1)
    assert r.kernel.now == 30.0
    assert r.store.resource_version == rv
    after = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in r.store.all_objects()}
    assert after == before
    # the next write continues the resourceVersions
    cm = r.store.create(_configmap("next"), by="test")
    assert cm["metadata"]["resourceVersion"] == str(rv + 1)


def test_restarted_nodes_start_their_pods_again_as_after_a_power_off(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    uid = c.store.create(_pod("web"), by="test")["metadata"]["uid"]
    c.kernel.run(until=30)
    c.store.log.clock(c.kernel.now)
    c.store.log.commit(force=True)

    r = _cluster(db, resume=True, stream=1)
    r.kernel.run(until=40)
    recs = r.trace.records
    # each node comes back from a power-off at the restart instant (podlife.cluster Cluster._restart)
    assert recs[0] == {"t": 30.0, "type": "fault", "fault": "NodePowerOff", "node": "node-1", "op": "heal",
                       "fields": {"restart": True}}
    # the runtime lost its containers with the process: the kubelet finds no sandbox and starts the pod again
    # (kuberuntime_manager.go computePodActions: "No sandbox for pod can be found. Need to start a new one")
    ops = [(x["t"], x["op"], x["container"]) for x in recs if x["type"] == "runtime"]
    assert ops[:3] == [(30.0, "create", None), (30.0, "create", "app"), (30.1, "start", "app")]
    pod = r.store.get("Pod", "default", "web")
    assert pod["metadata"]["uid"] == uid
    assert pod["status"]["phase"] == "Running"


def test_a_restart_draws_other_uids(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    first = c.store.create(_configmap("a"), by="test")["metadata"]["uid"]
    c.store.log.commit()
    r = _cluster(db, resume=True, stream=1)
    assert r.store.create(_configmap("b"), by="test")["metadata"]["uid"] != first


def test_a_watch_from_a_resource_version_replays_across_a_restart(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    c.store.create(_configmap("cm"), by="test")
    since = c.store.resource_version
    for n in range(1, 4):
        cm = _changed(c, n)
        c.store.update(cm, by="test")
    c.store.delete("ConfigMap", "default", "cm", by="test")
    c.store.log.commit()
    last = c.store.resource_version

    r = _cluster(db, resume=True, stream=1)
    assert r.store.resource_version == last
    seen: list[tuple[str, str, str]] = []
    r.store.watch("ConfigMap", lambda t, o, old: seen.append((t, o["data"]["n"], (old or {}).get("data", {}).get("n"))),
                  since=since)
    r.kernel.run(until=r.kernel.now + 1)
    # three updates, each MODIFIED with its predecessor, then the delete with the last object
    assert seen == [("MODIFIED", "1", "0"), ("MODIFIED", "2", "1"), ("MODIFIED", "3", "2"), ("DELETED", "3", "3")]


def test_compaction_keeps_the_last_thousand_revisions_and_older_ones_are_gone(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    c.store.create(_configmap("cm"), by="test")
    c.store.log.commit()
    for n in range(1, 1600):
        cm = _changed(c, n)
        c.store.update(cm, by="test")
        c.store.log.commit()   # one commit per write, as requests do
    last = c.store.resource_version
    log = c.store.log
    # compaction runs once KEEP + 500 revisions have piled up (COMPACT_EVERY) and keeps the newest KEEP
    assert log.compacted >= last - KEEP - 500 and log.compacted <= last - KEEP
    rows = sqlite3.connect(str(db)).execute("SELECT count(*), min(rv) FROM revisions").fetchone()
    # the newest KEEP and more survive; the row before the oldest kept one stays as its predecessor
    assert rows[0] >= KEEP
    assert rows[1] == log.compacted

    r = _cluster(db, resume=True, stream=1)
    with pytest.raises(errors.ApiError) as e:
        r.store.watch("ConfigMap", lambda *a: None, since=last - KEEP - 1)
    assert e.value.code == 410
    # the store's own history (watchHistorySize, 1,000) decides the 410 within what the log keeps
    r.store.watch("ConfigMap", lambda *a: None, since=last - KEEP + 1)


def test_an_uncommitted_write_is_not_in_the_log(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    c.store.log.commit()
    committed = c.store.resource_version
    c.store.create(_configmap("lost"), by="test")   # never committed: the process dies before answering
    assert SqliteLog(str(db)).last_revision() == committed


def test_a_value_json_cannot_hold_never_reaches_the_store_or_the_log(tmp_path):
    # the API refuses such values before they get here (podlife.api.decoding); the store is the last guard:
    # it encodes before it changes anything, so neither memory nor state.db holds half a write
    c = _cluster(tmp_path / "state.db", resume=False)
    rv = c.store.resource_version
    bad = {**_configmap("huge"), "extra": 2 ** 70}
    with pytest.raises(errors.ApiError) as e:
        c.store.create(bad, by="test")
    assert e.value.code == 500
    assert e.value.message == ("Internal error occurred: ConfigMap default/huge cannot be stored: Integer exceeds "
                               "64-bit range; nothing was written")
    assert c.store.try_get("ConfigMap", "default", "huge") is None
    assert c.store.resource_version == rv
    c.store.log.commit(force=True)
    assert c.store.log.db.execute("SELECT count(*) FROM objects WHERE name = 'huge'").fetchone() == (0,)


def test_an_object_an_older_podlife_stored_unchecked_is_reported_and_not_loaded(tmp_path):
    db = tmp_path / "state.db"
    c = _cluster(db, resume=False)
    c.store.create(_configmap("cm"), by="test")
    c.store.log.commit(force=True)
    legacy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "big", "namespace": "default", "resourceVersion": "1"},
              "spec": {"replicas": 10_000_000, "selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}}}}
    raw = sqlite3.connect(db)
    raw.execute("INSERT INTO objects VALUES ('Deployment', 'default', 'big', 1, ?)",
                (json.dumps(legacy).encode(),))
    raw.commit()
    raw.close()
    r = _cluster(db, resume=True, stream=1)
    assert r.store.try_get("Deployment", "default", "big") is None
    assert r.store.get("ConfigMap", "default", "cm")["data"] == {"n": "0"}
    assert r.store.skipped == [f"{db}: Deployment default/big is not loaded: spec.replicas: 10,000,000 pods; podlife "
                               "runs workloads of at most 150,000 pods (it stays in the data directory; delete it "
                               "there or use another --data-dir)"]

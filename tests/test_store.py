"""The API store: create/update/bind/delete/watch against the upstream API server's rules.

Expected values come from kubernetes/kubernetes:
- staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go ``BeforeDelete``
- staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go ``Delete``,
  ``updateForGracefulDeletionAndFinalizers``, ``markAsDeleting``, ``ShouldDeleteDuringUpdate``
- pkg/registry/core/pod/strategy.go ``CheckGracefulDelete``, ``PrepareForCreate``
- pkg/registry/core/pod/storage/storage.go ``setPodHostAndAnnotations``, ``assignPod``
- pkg/registry/apps/deployment/strategy.go ``PrepareForUpdate``
- staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go ``getAllEventsSinceLocked``
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timezone
from typing import Any

import pytest

from podlife.api.errors import ApiError
from podlife.api.meta import clone
from podlife.api.store import ADDED, DELETED, MODIFIED, DeleteOptions, Store, Watch, ensure_namespaces
from podlife.cluster.contracts import StoreOptions, no_admission
from podlife.versions import profile as version_profile
from podlife.engine import Kernel
from podlife.trace.recorder import Trace

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
POD_REF = "Pod/default/web"


# ---- harness ------------------------------------------------------------------------------------------


def make_store(version: str = "1.32", history_size: int = 1000) -> Store:
    # 1.32: the last release whose pods have no metadata.generation (versions rule pod_generation), as these
    # tests assert
    kernel = Kernel(seed=0)
    store = Store(kernel, Trace(kernel, START), StoreOptions(profile=version_profile(version), admission=no_admission,
                                                             history_size=history_size))
    ensure_namespaces(store, ["default"])
    return store


def ts(seconds: int) -> str:
    """RFC 3339 (seconds) of a time after the trace start."""
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def advance(store: Store, t: float) -> None:
    store.kernel.run(until=t)


def settle(store: Store) -> None:
    """Run what is due now (watch deliveries are scheduled at the same simulated time)."""
    store.kernel.run(until=store.kernel.now + 0.001)


def pod(name: str = "web", *, node: str | None = None, grace: int | None = None,
        finalizers: list[str] | None = None, resources: dict | None = None, **spec: Any) -> dict:
    c: dict[str, Any] = {"name": "app", "image": "nginx:1.27"}
    if resources is not None:
        c["resources"] = resources
    s: dict[str, Any] = {"containers": [c], **spec}
    if node:
        s["nodeName"] = node
    if grace is not None:
        s["terminationGracePeriodSeconds"] = grace
    md: dict[str, Any] = {"name": name}
    if finalizers:
        md["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": s}


TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}


def workload(kind: str = "Deployment", name: str = "web", finalizers: list[str] | None = None) -> dict:
    md: dict[str, Any] = {"name": name}
    if finalizers:
        md["finalizers"] = finalizers
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": md,
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": clone(TEMPLATE)}}


def configmap(name: str = "cfg", finalizers: list[str] | None = None) -> dict:
    md: dict[str, Any] = {"name": name}
    if finalizers:
        md["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": {"k": "v"}}


def running(store: Store, name: str = "web", node: str = "n1", grace: int | None = None,
            finalizers: list[str] | None = None) -> dict:
    """A pod bound to a node and reported Running."""
    store.create(pod(name, grace=grace, finalizers=finalizers), by="kubectl")
    store.bind("default", name, node, by="default-scheduler")
    p = clone(store.get("Pod", "default", name))
    p["status"]["phase"] = "Running"
    return store.update_status(p, by="kubelet")


class Events:
    """A watch handler that remembers what it saw, and when."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: list[tuple[str, str, dict]] = []

    def __call__(self, type_: str, obj: dict, old: dict | None) -> None:
        self.seen.append((type_, obj["metadata"]["name"], clone(obj)))

    def types(self) -> list[tuple[str, str]]:
        return [(t, n) for t, n, _ in self.seen]


def records(store: Store, type_: str, **match: Any) -> list[dict]:
    return [r for r in store.trace.records
            if r["type"] == type_ and all(r.get(k) == v for k, v in match.items())]


def error_of(fn: Any, *args: Any, **kw: Any) -> ApiError:
    with pytest.raises(ApiError) as ei:
        fn(*args, **kw)
    return ei.value


# ---- create -------------------------------------------------------------------------------------------


def test_create_sets_uid_timestamp_and_global_resource_version():
    store = make_store()
    assert store.get("Namespace", None, "default")["metadata"]["resourceVersion"] == "1"
    advance(store, 12.7)
    p = store.create(pod(), by="kubectl")
    md = p["metadata"]
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", md["uid"])
    assert uuid.UUID(md["uid"]).version == 4
    # metav1.Time serialises whole seconds: start + 12.7 s → 00:00:12
    assert md["creationTimestamp"] == "2025-01-01T00:00:12Z"
    assert md["resourceVersion"] == "2"
    cm = store.create(configmap(), by="kubectl")
    assert cm["metadata"]["resourceVersion"] == "3"  # one counter for every kind, as etcd's revision
    assert cm["metadata"]["uid"] != md["uid"]
    assert store.resource_version == 3
    assert md["namespace"] == "default"
    assert store.get("Pod", "default", "web") is p


def test_create_is_deterministic_per_seed():
    a, b = make_store(), make_store()
    assert a.create(pod(), by="x")["metadata"]["uid"] == b.create(pod(), by="x")["metadata"]["uid"]


def test_generate_name():
    store = make_store()
    names = set()
    for _ in range(5):
        obj = pod(name="")
        obj["metadata"] = {"generateName": "web-"}
        names.add(store.create(obj, by="kubectl")["metadata"]["name"])
    assert len(names) == 5
    for n in names:
        # staging/src/k8s.io/apiserver/pkg/storage/names/generate.go: prefix + utilrand.String(5)
        assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", n), n
    assert store.count("Pod") == 5


def test_name_wins_over_generate_name():
    store = make_store()
    obj = pod()
    obj["metadata"]["generateName"] = "x-"
    assert store.create(obj, by="kubectl")["metadata"]["name"] == "web"


def test_create_already_exists():
    store = make_store()
    store.create(pod(), by="kubectl")
    rv = store.resource_version
    e = error_of(store.create, pod(), by="kubectl")
    assert (e.code, e.reason, e.message) == (409, "AlreadyExists", 'pods "web" already exists')
    store.create(workload(), by="kubectl")
    e = error_of(store.create, workload(), by="kubectl")
    assert (e.code, e.reason, e.message) == (409, "AlreadyExists", 'deployments.apps "web" already exists')
    assert store.resource_version == rv + 1  # only the first Deployment was written


def test_create_needs_the_namespace():
    store = make_store()
    obj = pod()
    obj["metadata"]["namespace"] = "x"
    e = error_of(store.create, obj, by="kubectl")
    assert (e.code, e.reason, e.message) == (404, "NotFound", 'namespaces "x" not found')
    assert store.count("Pod") == 0


def test_not_found_names_the_qualified_resource():
    store = make_store()
    e = error_of(store.get, "Pod", "default", "nope")
    assert (e.code, e.reason, e.message) == (404, "NotFound", 'pods "nope" not found')
    e = error_of(store.get, "Deployment", "default", "nope")
    assert e.message == 'deployments.apps "nope" not found'
    e = error_of(store.delete, "Lease", "default", "nope", by="x")
    assert e.message == 'leases.coordination.k8s.io "nope" not found'


@pytest.mark.parametrize("resources,qos", [
    (None, "BestEffort"),
    ({"requests": {"cpu": "100m"}}, "Burstable"),
    ({"limits": {"cpu": "100m", "memory": "64Mi"}}, "Guaranteed"),  # requests default to the limits
])
def test_pod_create_status_is_pending_with_qos(resources, qos):
    store = make_store()
    obj = pod(resources=resources)
    obj["status"] = {"phase": "Running", "podIP": "10.0.0.1"}  # PrepareForCreate throws a client status away
    p = store.create(obj, by="kubectl")
    assert p["status"] == {"phase": "Pending", "qosClass": qos}
    assert "generation" not in p["metadata"]  # pods have no generation (before PodObservedGenerationTracking)
    assert records(store, "phase", object=POD_REF) == [
        {"t": 0.0, "type": "phase", "object": POD_REF, "from": None, "to": "Pending"}]


def test_kinds_with_generation_start_at_one():
    store = make_store()
    assert store.create(workload(), by="kubectl")["metadata"]["generation"] == 1
    assert "generation" not in store.create(configmap(), by="kubectl")["metadata"]


# ---- update -------------------------------------------------------------------------------------------


def test_update_conflict_on_stale_resource_version():
    store = make_store()
    stale = clone(store.create(pod(), by="kubectl"))
    fresh = clone(stale)
    fresh["metadata"]["labels"] = {"a": "1"}
    store.update(fresh, by="kubectl")
    stale["metadata"]["labels"] = {"a": "2"}
    rv = store.resource_version
    e = error_of(store.update, stale, by="kubectl")
    assert (e.code, e.reason) == (409, "Conflict")
    assert e.message == ('Operation cannot be fulfilled on pods "web": the object has been modified; please apply '
                         "your changes to the latest version and try again")
    assert store.resource_version == rv
    assert store.get("Pod", "default", "web")["metadata"]["labels"] == {"a": "1"}
    # the same for a status write, and with the group for apps kinds
    stale["status"]["phase"] = "Running"
    assert error_of(store.update_status, stale, by="kubelet").code == 409
    d = clone(store.create(workload(), by="kubectl"))
    changed = clone(d)
    changed["metadata"]["labels"] = {"b": "2"}   # a write that changes nothing keeps the resourceVersion
    store.update(changed, by="kubectl")
    e = error_of(store.update, d, by="kubectl")
    assert e.message.startswith('Operation cannot be fulfilled on deployments.apps "web": the object has been '
                                "modified")


def test_update_without_resource_version_is_unconditional():
    store = make_store()
    p = clone(store.create(pod(), by="kubectl"))
    store.update(clone(p), by="kubectl")
    del p["metadata"]["resourceVersion"]
    p["metadata"]["labels"] = {"a": "1"}
    assert store.update(p, by="kubectl")["metadata"]["labels"] == {"a": "1"}


def test_update_uid_mismatch():
    store = make_store()
    p = clone(store.create(pod(), by="kubectl"))
    real = p["metadata"]["uid"]
    p["metadata"]["uid"] = "other"
    e = error_of(store.update, p, by="kubelet")
    assert (e.code, e.reason) == (409, "Conflict")
    # staging/src/k8s.io/apiserver/pkg/storage: Preconditions.Check → StorageError (invalid object, code 4)
    assert e.message == ('Operation cannot be fulfilled on pods "web": StorageError: invalid object, Code: 4, Key: '
                         "/registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
                         f"UID in precondition: other, UID in object meta: {real}")


def test_status_subresource_writes_only_status():
    store = make_store()
    p = clone(store.create(pod(), by="kubectl"))
    p["metadata"]["labels"] = {"changed": "yes"}
    p["spec"]["activeDeadlineSeconds"] = 5
    p["status"] = {"phase": "Running", "qosClass": "BestEffort"}
    advance(store, 3)
    out = store.update_status(p, by="kubelet")
    stored = store.get("Pod", "default", "web")
    assert out is stored
    assert stored["status"] == {"phase": "Running", "qosClass": "BestEffort"}
    # podStatusStrategy.PrepareForUpdate resets the spec only: labels written with the status stay
    assert stored["metadata"]["labels"] == {"changed": "yes"}
    assert "activeDeadlineSeconds" not in stored["spec"]
    assert stored["metadata"]["resourceVersion"] == "3"
    assert records(store, "api", object=POD_REF)[-1] == {
        "t": 3.0, "type": "api", "verb": "update", "object": POD_REF, "by": "kubelet", "subresource": "status"}
    assert records(store, "phase", object=POD_REF)[-1] == {
        "t": 3.0, "type": "phase", "object": POD_REF, "from": "Pending", "to": "Running"}


def test_status_write_keeps_labels_as_written():
    """Labels and annotations sent back with a status write as stored stay the stored objects (the revision
    shares them, as it shares the spec); sent reordered or changed, they are stored as written, in their order."""
    store = make_store()
    p = pod()
    p["metadata"]["labels"] = {"a": "1", "b": "2"}
    p["metadata"]["annotations"] = {"note": "x"}
    first = store.create(p, by="kubectl")
    second = store.update_status({**first, "status": {"phase": "Running"}}, by="kubelet")
    assert second["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]
    assert second["metadata"]["labels"] is first["metadata"]["labels"]
    assert second["metadata"]["annotations"] is first["metadata"]["annotations"]
    sent = clone(second)
    sent["metadata"]["labels"] = {"b": "2", "a": "1"}   # equal as a map, another order on the wire
    sent["status"] = {"phase": "Succeeded"}
    third = store.update_status(sent, by="kubelet")
    assert list(third["metadata"]["labels"]) == ["b", "a"]
    assert third["metadata"]["labels"] is not sent["metadata"]["labels"]   # the store keeps its own copy
    sent["metadata"]["labels"]["c"] = "3"
    assert store.get("Pod", "default", "web")["metadata"]["labels"] == {"b": "2", "a": "1"}


def test_main_update_keeps_status():
    store = make_store()
    p = clone(store.create(pod(), by="kubectl"))
    p["metadata"]["labels"] = {"a": "1"}
    p["status"] = {"phase": "Failed"}
    out = store.update(p, by="kubectl")
    assert out["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert out["metadata"]["labels"] == {"a": "1"}
    assert records(store, "phase", object=POD_REF) == [
        {"t": 0.0, "type": "phase", "object": POD_REF, "from": None, "to": "Pending"}]


def test_update_keeps_server_owned_metadata():
    store = make_store()
    orig = store.create(pod(), by="kubectl")
    p = clone(orig)
    del p["metadata"]["uid"]
    p["metadata"]["creationTimestamp"] = "2030-01-01T00:00:00Z"
    p["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    out = store.update(p, by="kubectl")
    assert out["metadata"]["uid"] == orig["metadata"]["uid"]
    assert out["metadata"]["creationTimestamp"] == "2025-01-01T00:00:00Z"
    assert "deletionTimestamp" not in out["metadata"]


def test_generation_bumps_on_spec_change_only():
    store = make_store()
    d = store.create(workload(), by="kubectl")
    rs = store.create(workload("ReplicaSet"), by="kubectl")

    def edit(obj: dict, fn: Any) -> dict:
        new = clone(store.get(obj["kind"], "default", obj["metadata"]["name"]))
        fn(new)
        return store.update(new, by="kubectl")

    assert edit(d, lambda o: o["spec"].update(replicas=3))["metadata"]["generation"] == 2
    assert edit(d, lambda o: o["metadata"].update(labels={"x": "y"}))["metadata"]["generation"] == 2
    # deployment/strategy.go: annotation changes bump a Deployment's generation too
    assert edit(d, lambda o: o["metadata"].update(annotations={"x": "y"}))["metadata"]["generation"] == 3
    assert edit(rs, lambda o: o["metadata"].update(annotations={"x": "y"}))["metadata"]["generation"] == 1
    assert edit(rs, lambda o: o["spec"].update(replicas=2))["metadata"]["generation"] == 2
    # status writes never change it
    st = clone(store.get("Deployment", "default", "web"))
    st["status"] = {"replicas": 3, "observedGeneration": 3}
    assert store.update_status(st, by="deployment-controller")["metadata"]["generation"] == 3
    # kinds without generation never get one
    p = store.create(pod(), by="kubectl")
    assert "generation" not in edit(p, lambda o: o["spec"].update(activeDeadlineSeconds=30))["metadata"]


# ---- graceful delete of pods ----------------------------------------------------------------------------


def test_delete_scheduled_pod_default_grace():
    store = make_store()
    running(store)
    advance(store, 5.4)
    rv = store.resource_version
    out = store.delete("Pod", "default", "web", by="kubectl")
    stored = store.get("Pod", "default", "web")
    assert out is stored
    md = stored["metadata"]
    assert md["deletionTimestamp"] == ts(35)  # now + 30, whole seconds
    assert md["deletionGracePeriodSeconds"] == 30
    assert md["resourceVersion"] == str(rv + 1)
    assert "generation" not in md  # BeforeDelete bumps the generation only when it is set
    assert stored["status"]["phase"] == "Running"
    assert records(store, "api", verb="delete") == [
        {"t": 5.4, "type": "api", "verb": "delete", "object": POD_REF, "by": "kubectl"}]
    assert records(store, "terminating") == [
        {"t": 5.4, "type": "terminating", "object": POD_REF, "gracePeriodSeconds": 30, "deletionTimestamp": ts(35)}]
    assert records(store, "deleted") == []


def test_delete_grace_from_options_and_from_spec():
    store = make_store()
    running(store, "a", grace=60)
    running(store, "b", grace=45)
    a = store.delete("Pod", "default", "a", by="kubectl", options=DeleteOptions(grace_period_seconds=10))
    b = store.delete("Pod", "default", "b", by="kubectl")
    assert (a["metadata"]["deletionGracePeriodSeconds"], a["metadata"]["deletionTimestamp"]) == (10, ts(10))
    assert (b["metadata"]["deletionGracePeriodSeconds"], b["metadata"]["deletionTimestamp"]) == (45, ts(45))
    assert records(store, "api", verb="delete", object="Pod/default/a")[0]["gracePeriodSeconds"] == 10
    assert "gracePeriodSeconds" not in records(store, "api", verb="delete", object="Pod/default/b")[0]


def test_never_scheduled_pod_is_removed_at_once():
    store = make_store()
    store.create(pod(grace=30), by="kubectl")
    ev = Events(store)
    store.watch("Pod", ev)
    advance(store, 7)
    rv = store.resource_version
    assert store.delete("Pod", "default", "web", by="kubectl",
                        options=DeleteOptions(grace_period_seconds=30)) is None
    assert store.try_get("Pod", "default", "web") is None
    assert store.resource_version == rv + 2
    # CheckGracefulDelete gives 0; the update with the deletion timestamp is written before the delete
    settle(store)
    assert ev.types() == [(MODIFIED, "web"), (DELETED, "web")]
    md = ev.seen[0][2]["metadata"]
    assert (md["deletionTimestamp"], md["deletionGracePeriodSeconds"]) == (ts(7), 0)
    assert records(store, "terminating") == []
    assert [(r["type"], r.get("verb")) for r in store.trace.records if r.get("object") == POD_REF][-2:] == [
        ("api", "delete"), ("deleted", None)]


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminated_pod_is_removed_at_once(phase):
    store = make_store()
    running(store)
    p = clone(store.get("Pod", "default", "web"))
    p["status"]["phase"] = phase
    store.update_status(p, by="kubelet")
    assert store.delete("Pod", "default", "web", by="kubectl",
                        options=DeleteOptions(grace_period_seconds=30)) is None
    assert store.try_get("Pod", "default", "web") is None
    assert records(store, "deleted") == [{"t": 0.0, "type": "deleted", "object": POD_REF}]


def test_shorter_grace_moves_the_deadline_back():
    store = make_store()
    running(store)
    store.delete("Pod", "default", "web", by="kubectl")
    advance(store, 10)
    rv = store.resource_version
    out = store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=5))
    md = out["metadata"]
    # old − oldGrace + newGrace = 30 − 30 + 5: in the past at t=10
    assert (md["deletionTimestamp"], md["deletionGracePeriodSeconds"]) == (ts(5), 5)
    assert md["resourceVersion"] == str(rv + 1)
    assert records(store, "terminating")[-1] == {
        "t": 10.0, "type": "terminating", "object": POD_REF, "gracePeriodSeconds": 5, "deletionTimestamp": ts(5)}
    # the API server has no timer: an expired deadline leaves the pod in place
    advance(store, 100)
    assert store.get("Pod", "default", "web")["metadata"]["deletionTimestamp"] == ts(5)


@pytest.mark.parametrize("grace", [None, 30, 60])
def test_equal_longer_or_no_grace_changes_nothing(grace):
    store = make_store()
    running(store)
    first = store.delete("Pod", "default", "web", by="kubectl")
    rv, n = store.resource_version, len(store.trace.records)
    advance(store, 10)
    out = store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=grace))
    assert out is first
    assert out["metadata"]["resourceVersion"] == str(rv)
    assert (out["metadata"]["deletionTimestamp"], out["metadata"]["deletionGracePeriodSeconds"]) == (ts(30), 30)
    assert store.resource_version == rv
    assert len(store.trace.records) == n


def test_second_delete_does_not_recompute_grace_from_the_pod():
    # CheckGracefulDelete is not consulted again: neither the spec grace nor a terminal phase shortens a pending
    # deletion, only an explicit shorter gracePeriodSeconds does
    store = make_store()
    running(store, grace=30)
    store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=60))
    p = clone(store.get("Pod", "default", "web"))
    p["status"]["phase"] = "Succeeded"
    store.update_status(p, by="kubelet")
    out = store.delete("Pod", "default", "web", by="kubectl")
    assert out["metadata"]["deletionGracePeriodSeconds"] == 60
    out = store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=20))
    assert (out["metadata"]["deletionTimestamp"], out["metadata"]["deletionGracePeriodSeconds"]) == (ts(20), 20)


def test_later_delete_with_grace_zero_removes():
    store = make_store()
    running(store)
    store.delete("Pod", "default", "web", by="kubectl")
    ev = Events(store)
    store.watch("Pod", ev)
    advance(store, 10)
    uid = store.get("Pod", "default", "web")["metadata"]["uid"]
    assert store.delete("Pod", "default", "web", by="kubelet",
                        options=DeleteOptions(grace_period_seconds=0, uid=uid)) is None
    assert store.try_get("Pod", "default", "web") is None
    settle(store)
    assert ev.types() == [(MODIFIED, "web"), (DELETED, "web")]
    md = ev.seen[0][2]["metadata"]
    assert (md["deletionTimestamp"], md["deletionGracePeriodSeconds"]) == (ts(0), 0)
    assert records(store, "api", verb="delete")[-1] == {
        "t": 10.0, "type": "api", "verb": "delete", "object": POD_REF, "by": "kubelet", "gracePeriodSeconds": 0}
    assert records(store, "deleted") == [{"t": 10.0, "type": "deleted", "object": POD_REF}]


def test_force_delete_of_a_running_pod_writes_the_update_then_deletes():
    store = make_store()
    running(store)
    ev = Events(store)
    store.watch("Pod", ev)
    node_ev = Events(store)
    store.watch("Pod", node_ev, node="n1")
    advance(store, 4)
    rv = store.resource_version
    assert store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=0)) is None
    assert store.resource_version == rv + 2
    assert ev.seen == []  # delivered after the write, not during it
    settle(store)
    for e in (ev, node_ev):
        assert e.types() == [(MODIFIED, "web"), (DELETED, "web")]
        md = e.seen[0][2]["metadata"]
        assert (md["deletionTimestamp"], md["deletionGracePeriodSeconds"], md["resourceVersion"]) == (
            ts(4), 0, str(rv + 1))
    assert records(store, "terminating") == []
    assert [r["type"] for r in store.trace.records if r.get("object") == POD_REF][-2:] == ["api", "deleted"]


def test_negative_grace_treated_as_one():
    store = make_store("1.27")   # negative_grace, negative_delete_grace: treated-as-one
    running(store)
    out = store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=-5))
    assert (out["metadata"]["deletionTimestamp"], out["metadata"]["deletionGracePeriodSeconds"]) == (ts(1), 1)
    assert records(store, "api", verb="delete")[0]["gracePeriodSeconds"] == -5  # what was asked
    # a negative spec grace too (CheckGracefulDelete: period < 0 → 1)
    running(store, "neg", grace=-5)
    out = store.delete("Pod", "default", "neg", by="kubectl")
    assert out["metadata"]["deletionGracePeriodSeconds"] == 1


def test_negative_grace_flows_through():
    # before kubernetes PR #98866 nothing clamped it: the update carries the negative grace (the kubelet sees it),
    # and as the grace is not > 0 (updateForGracefulDeletionAndFinalizers lastGraceful) the pod is deleted at once
    store = make_store("1.21")   # negative_grace, negative_delete_grace: flows-through
    running(store)
    ev = Events(store)
    store.watch("Pod", ev)
    advance(store, 10)
    assert store.delete("Pod", "default", "web", by="kubectl",
                        options=DeleteOptions(grace_period_seconds=-5)) is None
    settle(store)
    assert ev.types() == [(MODIFIED, "web"), (DELETED, "web")]
    md = ev.seen[0][2]["metadata"]
    assert (md["deletionTimestamp"], md["deletionGracePeriodSeconds"]) == (ts(5), -5)


def test_negative_grace_flows_through_and_sticks_with_a_finalizer():
    # kubernetes issue #98506: once stored negative, a grace-0 delete is not shorter, so nothing happens
    store = make_store("1.21")   # negative_grace, negative_delete_grace: flows-through
    running(store, finalizers=["example.com/hold"])
    out = store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=-5))
    assert out["metadata"]["deletionGracePeriodSeconds"] == -5
    rv = store.resource_version
    again = store.delete("Pod", "default", "web", by="kubelet", options=DeleteOptions(grace_period_seconds=0))
    assert again is out and store.resource_version == rv


def test_pod_with_finalizer_stays_after_grace_zero_delete():
    store = make_store()
    running(store, finalizers=["example.com/hold"])
    advance(store, 3)
    out = store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=0))
    assert out is store.get("Pod", "default", "web")
    md = out["metadata"]
    assert (md["deletionTimestamp"], md["deletionGracePeriodSeconds"], md["finalizers"]) == (
        ts(3), 0, ["example.com/hold"])
    assert records(store, "terminating") == [
        {"t": 3.0, "type": "terminating", "object": POD_REF, "gracePeriodSeconds": 0, "deletionTimestamp": ts(3)}]
    # a second delete while finalizers are pending writes nothing
    rv = store.resource_version
    assert store.delete("Pod", "default", "web", by="kubectl",
                        options=DeleteOptions(grace_period_seconds=0)) is out
    assert store.resource_version == rv
    # removing the last finalizer deletes it: the update itself is not written (deleteWithoutFinalizers)
    ev = Events(store)
    store.watch("Pod", ev)
    advance(store, 5)
    p = clone(out)
    p["metadata"]["finalizers"] = []
    store.update(p, by="controller")
    assert store.try_get("Pod", "default", "web") is None
    assert store.resource_version == rv + 1
    settle(store)
    assert ev.types() == [(DELETED, "web")]
    assert ev.seen[0][2]["metadata"]["finalizers"] == ["example.com/hold"]  # the object as it was stored
    assert records(store, "api", object=POD_REF)[-1] == {
        "t": 5.0, "type": "api", "verb": "update", "object": POD_REF, "by": "controller"}
    assert records(store, "deleted") == [{"t": 5.0, "type": "deleted", "object": POD_REF}]


def test_removing_finalizer_of_a_pod_still_in_its_grace_period_keeps_it():
    # ShouldDeleteDuringUpdate: only when the stored deletionGracePeriodSeconds is 0 (or unset)
    store = make_store()
    running(store, finalizers=["example.com/hold"])
    store.delete("Pod", "default", "web", by="kubectl")
    p = clone(store.get("Pod", "default", "web"))
    p["metadata"]["finalizers"] = []
    out = store.update(p, by="controller")
    assert store.get("Pod", "default", "web") is out
    assert out["metadata"]["finalizers"] == []
    assert out["metadata"]["deletionGracePeriodSeconds"] == 30
    # the kubelet's final delete then removes it
    assert store.delete("Pod", "default", "web", by="kubelet", options=DeleteOptions(grace_period_seconds=0)) is None


def test_unscheduled_pod_with_finalizer_stays_deleting():
    store = make_store()
    store.create(pod(finalizers=["example.com/hold"]), by="kubectl")
    out = store.delete("Pod", "default", "web", by="kubectl")
    assert (out["metadata"]["deletionTimestamp"], out["metadata"]["deletionGracePeriodSeconds"]) == (ts(0), 0)


def test_delete_uid_precondition():
    store = make_store()
    p = running(store)
    rv = store.resource_version
    e = error_of(store.delete, "Pod", "default", "web", by="kubelet",
                 options=DeleteOptions(grace_period_seconds=0, uid="0000"))
    assert (e.code, e.reason) == (409, "Conflict")
    # BeforeDelete: GroupResource{Resource: gvk.Kind}, hence "Pod"
    assert e.message == ('Operation cannot be fulfilled on Pod "web": the UID in the precondition (0000) does not '
                         f'match the UID in record ({p["metadata"]["uid"]}). The object might have been deleted '
                         "and then recreated")
    assert store.resource_version == rv
    e = error_of(store.delete, "Pod", "default", "web", by="kubelet",
                 options=DeleteOptions(resource_version="1"))
    assert e.message == ('Operation cannot be fulfilled on Pod "web": the ResourceVersion in the precondition (1) '
                         f"does not match the ResourceVersion in record ({rv}). The object might have been modified")
    d = store.create(workload(), by="kubectl")
    e = error_of(store.delete, "Deployment", "default", "web", by="kubectl", options=DeleteOptions(uid="x"))
    assert e.message.startswith('Operation cannot be fulfilled on Deployment.apps "web": the UID in the '
                                f"precondition (x) does not match the UID in record ({d['metadata']['uid']})")


@pytest.mark.parametrize("obj", [configmap(), workload()], ids=["ConfigMap", "Deployment"])
def test_kinds_without_graceful_deletion_go_at_once(obj):
    store = make_store()
    store.create(clone(obj), by="kubectl")
    ev = Events(store)
    store.watch(obj["kind"], ev)
    ref = f"{obj['kind']}/default/{obj['metadata']['name']}"
    assert store.delete(obj["kind"], "default", obj["metadata"]["name"], by="kubectl",
                        options=DeleteOptions(grace_period_seconds=30)) is None
    assert store.try_get(obj["kind"], "default", obj["metadata"]["name"]) is None
    settle(store)
    assert [t for t, _ in ev.types()] == [DELETED]
    assert records(store, "api", verb="delete") == [
        {"t": 0.0, "type": "api", "verb": "delete", "object": ref, "by": "kubectl", "gracePeriodSeconds": 30}]
    assert records(store, "deleted") == [{"t": 0.0, "type": "deleted", "object": ref}]
    assert records(store, "terminating") == []


def test_kinds_without_graceful_deletion_wait_for_finalizers():
    # store.go markAsDeleting: deletionTimestamp now, grace 0, generation bumped once
    store = make_store()
    store.create(workload(finalizers=["example.com/hold"]), by="kubectl")
    store.create(configmap(finalizers=["example.com/hold"]), by="kubectl")
    advance(store, 2)
    d = store.delete("Deployment", "default", "web", by="kubectl")
    cm = store.delete("ConfigMap", "default", "cfg", by="kubectl")
    assert (d["metadata"]["deletionTimestamp"], d["metadata"]["deletionGracePeriodSeconds"]) == (ts(2), 0)
    assert d["metadata"]["generation"] == 2
    assert (cm["metadata"]["deletionTimestamp"], cm["metadata"]["deletionGracePeriodSeconds"]) == (ts(2), 0)
    assert "generation" not in cm["metadata"]
    rv = store.resource_version
    advance(store, 4)
    assert store.delete("Deployment", "default", "web", by="kubectl") is d  # nothing to change
    assert store.resource_version == rv and d["metadata"]["generation"] == 2
    new = clone(d)
    new["metadata"]["finalizers"] = []
    store.update(new, by="controller")
    assert store.try_get("Deployment", "default", "web") is None


def test_foreground_propagation_adds_its_finalizer():
    store = make_store()
    store.create(workload(), by="kubectl")
    d = store.delete("Deployment", "default", "web", by="kubectl",
                     options=DeleteOptions(propagation_policy="Foreground"))
    assert d["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert d["metadata"]["deletionGracePeriodSeconds"] == 0
    assert records(store, "api", verb="delete")[0]["propagationPolicy"] == "Foreground"


# ---- bind ---------------------------------------------------------------------------------------------


def test_bind_sets_node_once():
    store = make_store()
    store.create(pod(), by="kubectl")
    advance(store, 2)
    out = store.bind("default", "web", "n1", by="default-scheduler")
    assert out is store.get("Pod", "default", "web")
    assert out["spec"]["nodeName"] == "n1"
    # setPodHostAndAnnotations also sets PodScheduled=True
    assert out["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": ts(2)}]
    assert records(store, "api", verb="bind") == [
        {"t": 2.0, "type": "api", "verb": "bind", "object": POD_REF, "by": "default-scheduler", "node": "n1"}]
    rv = store.resource_version
    e = error_of(store.bind, "default", "web", "n2", by="default-scheduler")
    assert (e.code, e.reason) == (409, "Conflict")
    assert e.message == 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "n1"'
    assert store.resource_version == rv


def test_bind_replaces_an_unschedulable_condition():
    store = make_store()
    p = clone(store.create(pod(), by="kubectl"))
    p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                  "message": "0/1 nodes are available", "lastProbeTime": None,
                                  "lastTransitionTime": ts(0)}]
    store.update_status(p, by="default-scheduler")
    advance(store, 9)
    out = store.bind("default", "web", "n1", by="default-scheduler")
    assert out["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": ts(9)}]
    assert records(store, "condition")[-1] == {"t": 9.0, "type": "condition", "object": POD_REF,
                                               "conditionType": "PodScheduled", "status": "True", "reason": None}


def test_bind_of_a_deleting_pod_conflicts():
    store = make_store()
    store.create(pod(finalizers=["example.com/hold"]), by="kubectl")
    store.delete("Pod", "default", "web", by="kubectl")
    e = error_of(store.bind, "default", "web", "n1", by="default-scheduler")
    assert (e.code, e.reason) == (409, "Conflict")
    assert e.message == ('Operation cannot be fulfilled on pods/binding "web": pod web is being deleted, cannot be '
                         "assigned to a host")


def test_bind_uid_precondition():
    store = make_store()
    p = store.create(pod(), by="kubectl")
    e = error_of(store.bind, "default", "web", "n1", by="default-scheduler", uid="other")
    assert e.message == ('Operation cannot be fulfilled on pods "web": StorageError: invalid object, Code: 4, Key: '
                         "/registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
                         f"UID in precondition: other, UID in object meta: {p['metadata']['uid']}")
    assert store.bind("default", "web", "n1", by="s", uid=p["metadata"]["uid"])["spec"]["nodeName"] == "n1"


# ---- watch --------------------------------------------------------------------------------------------


def test_watch_delivers_in_order_after_the_write_at_the_same_time():
    store = make_store()
    ev = Events(store)
    store.watch("Pod", ev)
    cm_ev = Events(store)
    store.watch("ConfigMap", cm_ev)
    advance(store, 5)
    store.create(pod(), by="kubectl")
    store.create(configmap(), by="kubectl")
    p = clone(store.get("Pod", "default", "web"))
    p["metadata"]["labels"] = {"a": "1"}
    store.update(p, by="kubectl")
    store.delete("Pod", "default", "web", by="kubectl")  # unscheduled: MODIFIED then DELETED
    assert ev.seen == []
    times: list[float] = []
    store.watch("Pod", lambda *_: times.append(store.kernel.now))
    store.create(pod("other"), by="kubectl")
    settle(store)
    assert ev.types() == [(ADDED, "web"), (MODIFIED, "web"), (MODIFIED, "web"), (DELETED, "web"), (ADDED, "other")]
    assert [int(o["metadata"]["resourceVersion"]) for _, _, o in ev.seen] == sorted(
        int(o["metadata"]["resourceVersion"]) for _, _, o in ev.seen)
    assert times == [5.0]
    assert cm_ev.types() == [(ADDED, "cfg")]


def test_informers_of_a_kind_take_each_event_in_the_order_they_were_started():
    # every watch of the kind is an informer (the whole kind): each event goes to each, in the order they were
    # started; one stopped while the events of an instant are handed over gets none of the rest, and one started
    # then gets only the events written after it started
    store = make_store()
    seen: list[tuple[str, str, str]] = []
    late: list[Watch] = []

    def informer(label: str):
        def handler(type_: str, obj: dict, old: dict | None) -> None:
            seen.append((label, type_, obj["metadata"]["name"]))
            if label == "first" and obj["metadata"]["name"] == "a" and type_ == ADDED:
                second.stop()
                late.append(store.watch("Pod", informer("late")))
                store.create(pod("c"), by="kubectl")
        return handler

    store.watch("Pod", informer("first"))
    second = store.watch("Pod", informer("second"))
    store.watch("Pod", informer("third"))
    store.create(pod("a"), by="kubectl")
    store.create(pod("b"), by="kubectl")
    settle(store)
    assert seen == [("first", ADDED, "a"), ("third", ADDED, "a"), ("first", ADDED, "b"), ("third", ADDED, "b"),
                    ("first", ADDED, "c"), ("third", ADDED, "c"), ("late", ADDED, "c")]
    # a filtered watch among them keeps the order too
    seen.clear()
    store.watch("Pod", lambda t, o, old: seen.append(("default", t, o["metadata"]["name"])), namespace="default")
    store.unwatch(late[0])
    store.delete("Pod", "default", "b", by="kubectl")
    settle(store)
    assert seen == [("first", MODIFIED, "b"), ("third", MODIFIED, "b"), ("default", MODIFIED, "b"),
                    ("first", DELETED, "b"), ("third", DELETED, "b"), ("default", DELETED, "b")]


def test_watch_namespace_filter_and_stop():
    store = make_store()
    ensure_namespaces(store, ["other"])
    ev = Events(store)
    w = store.watch("Pod", ev, namespace="other")
    store.create(pod("a"), by="kubectl")
    b = pod("b")
    b["metadata"]["namespace"] = "other"
    store.create(b, by="kubectl")
    settle(store)
    assert ev.types() == [(ADDED, "b")]
    w.stop()
    store.delete("Pod", "other", "b", by="kubectl")
    settle(store)
    assert ev.types() == [(ADDED, "b")]


def test_node_watch_sees_pods_bound_to_its_node_only():
    store = make_store()
    ev = Events(store)
    store.watch("Pod", ev, node="n1")
    store.create(pod("a"), by="kubectl")
    store.create(pod("b"), by="kubectl")
    store.create(pod("c", node="n1"), by="kubectl")  # created bound
    settle(store)
    assert ev.types() == [(ADDED, "c")]
    store.bind("default", "a", "n1", by="default-scheduler")
    store.bind("default", "b", "n2", by="default-scheduler")
    settle(store)
    # the field selector spec.nodeName=n1 starts matching: the watcher sees ADDED
    assert ev.types() == [(ADDED, "c"), (ADDED, "a")]
    assert ev.seen[-1][2]["spec"]["nodeName"] == "n1"
    p = clone(store.get("Pod", "default", "a"))
    p["status"]["phase"] = "Running"
    store.update_status(p, by="kubelet")
    p = clone(store.get("Pod", "default", "b"))
    p["status"]["phase"] = "Running"
    store.update_status(p, by="kubelet")
    store.delete("Pod", "default", "b", by="kubectl")
    store.delete("Pod", "default", "a", by="kubectl")
    settle(store)
    assert ev.types() == [(ADDED, "c"), (ADDED, "a"), (MODIFIED, "a"), (MODIFIED, "a")]
    assert ev.seen[-1][2]["metadata"]["deletionGracePeriodSeconds"] == 30


def test_watch_since_replays_history():
    store = make_store()
    store.create(pod("a"), by="kubectl")
    since = store.resource_version
    store.create(pod("b"), by="kubectl")
    store.create(configmap(), by="kubectl")
    store.bind("default", "b", "n1", by="default-scheduler")
    store.delete("Pod", "default", "a", by="kubectl")
    ev = Events(store)
    store.watch("Pod", ev, since=since)
    assert ev.seen == []
    settle(store)
    assert ev.types() == [(ADDED, "b"), (MODIFIED, "b"), (MODIFIED, "a"), (DELETED, "a")]
    # then live events follow
    store.create(pod("c"), by="kubectl")
    settle(store)
    assert ev.types()[-1] == (ADDED, "c")
    # a node watch replays with its filter
    node_ev = Events(store)
    store.watch("Pod", node_ev, node="n1", since=since)
    settle(store)
    assert node_ev.types() == [(ADDED, "b")]
    # since = now: nothing to replay
    now_ev = Events(store)
    store.watch("Pod", now_ev, since=store.resource_version)
    settle(store)
    assert now_ev.seen == []


def test_watch_since_older_than_history_is_expired():
    store = make_store(history_size=3)  # the namespace is rv 1
    for n in "abcd":
        store.create(configmap(n), by="kubectl")  # rv 2..5; history keeps 3, 4, 5
    assert store.resource_version == 5
    store.watch("ConfigMap", Events(store), since=2)  # the oldest kept event minus one is still fine
    e = error_of(store.watch, "ConfigMap", Events(store), since=1)
    assert (e.code, e.reason) == (410, "Expired")
    # watch_cache.go: too old resource version: <requested> (<oldest kept - 1>)
    assert e.message == "too old resource version: 1 (2)"


# ---- trace --------------------------------------------------------------------------------------------


def test_trace_records_of_a_pod_life():
    store = make_store()
    store.create(pod(), by="kubectl")
    advance(store, 1)
    store.bind("default", "web", "n1", by="default-scheduler")
    p = clone(store.get("Pod", "default", "web"))
    p["status"]["phase"] = "Running"
    advance(store, 2)
    store.update_status(p, by="kubelet")
    advance(store, 3)
    store.delete("Pod", "default", "web", by="kubectl", options=DeleteOptions(grace_period_seconds=10))
    advance(store, 4)
    p = clone(store.get("Pod", "default", "web"))
    p["status"]["phase"] = "Succeeded"
    store.update_status(p, by="kubelet")
    uid = p["metadata"]["uid"]
    store.delete("Pod", "default", "web", by="kubelet", options=DeleteOptions(grace_period_seconds=0, uid=uid))
    got = [dict(r) for r in store.trace.records if r.get("object") == POD_REF]
    assert got == [
        {"t": 0.0, "type": "api", "verb": "create", "object": POD_REF, "by": "kubectl", "initContainers": [],
         "containers": ["app"]},
        {"t": 0.0, "type": "phase", "object": POD_REF, "from": None, "to": "Pending"},
        {"t": 1.0, "type": "api", "verb": "bind", "object": POD_REF, "by": "default-scheduler", "node": "n1"},
        {"t": 1.0, "type": "condition", "object": POD_REF, "conditionType": "PodScheduled", "status": "True",
         "reason": None},
        {"t": 2.0, "type": "api", "verb": "update", "object": POD_REF, "by": "kubelet", "subresource": "status"},
        {"t": 2.0, "type": "phase", "object": POD_REF, "from": "Pending", "to": "Running"},
        {"t": 3.0, "type": "api", "verb": "delete", "object": POD_REF, "by": "kubectl", "gracePeriodSeconds": 10},
        {"t": 3.0, "type": "terminating", "object": POD_REF, "gracePeriodSeconds": 10, "deletionTimestamp": ts(13)},
        {"t": 4.0, "type": "api", "verb": "update", "object": POD_REF, "by": "kubelet", "subresource": "status"},
        {"t": 4.0, "type": "phase", "object": POD_REF, "from": "Running", "to": "Succeeded"},
        {"t": 4.0, "type": "api", "verb": "delete", "object": POD_REF, "by": "kubelet", "gracePeriodSeconds": 0},
        {"t": 4.0, "type": "deleted", "object": POD_REF},
    ]


def test_an_event_repeats_only_for_the_same_object_uid() -> None:
    """client-go events_cache.go getEventKey includes the involved object's UID: the same reason and message
    about a pod recreated under the same name (a StatefulSet's web-0) is a new Event, not a second count of
    the old pod's."""
    from podlife.api.events import EventRecorder

    store = make_store()
    rec = EventRecorder(store, "default-scheduler")
    old = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default", "uid": "u-1"}}
    new = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default", "uid": "u-2"}}
    msg = "Successfully assigned default/web-0 to node-1"
    rec.event(old, "Normal", "Scheduled", msg)
    rec.event(old, "Normal", "Scheduled", msg)
    rec.event(new, "Normal", "Scheduled", msg)
    events = store.list("Event", namespace="default")
    assert sorted((e["involvedObject"]["uid"], e["count"]) for e in events) == [("u-1", 2), ("u-2", 1)]


def test_a_namespace_lists_its_own_objects_in_key_order_however_its_name_sorts() -> None:
    """A namespace's objects are read as one range of the sorted keys (etcd3/store.go GetList reads the prefix
    /registry/configmaps/NAMESPACE/); namespaces whose names start with another's, or sort between its keys as
    strings, are not in it, before or after writes and deletes since the last list."""
    store = make_store()
    names = ("team", "team-1", "team-1-x", "team1", "te", "zz")
    ensure_namespaces(store, list(names))
    for ns in names:
        for name in ("b", "a", "c"):
            store.create({**configmap(name), "metadata": {"name": name, "namespace": ns}}, by="kubectl")

    def listed(ns: str) -> list[tuple[str, str]]:
        return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("ConfigMap", ns)]
    for ns in (*names, "default", "absent", "tea"):
        want = sorted((ns, n) for n in ("a", "b", "c")) if ns in names else []
        assert listed(ns) == want
    store.delete("ConfigMap", "team-1", "b", by="kubectl")
    store.create({**configmap("a0"), "metadata": {"name": "a0", "namespace": "team-1"}}, by="kubectl")
    assert listed("team-1") == [("team-1", "a"), ("team-1", "a0"), ("team-1", "c")]
    assert listed("team") == [("team", "a"), ("team", "b"), ("team", "c")]
    assert [o["metadata"]["name"] for o in store.list("Namespace", "")] == sorted((*names, "default"))


@pytest.mark.parametrize("batch", [1, 5, 200])
def test_a_list_after_creates_and_deletes_holds_exactly_the_stored_keys_in_order(batch: int) -> None:
    """Keys written since the last list are put in or taken out of the kept order (one by one when few,
    merged or filtered when many), including a name deleted and created again, or created and deleted again,
    between two lists: every list is the stored objects in key order, as sorting them all gives."""
    import random

    store = make_store()
    ensure_namespaces(store, ["a", "b"])
    rnd = random.Random(batch)
    live: set[tuple[str, str]] = set()
    for _ in range(1500 // batch):
        for _ in range(batch):
            ns, name = rnd.choice("ab"), f"cm-{rnd.randrange(120)}"
            if (ns, name) in live:
                store.delete("ConfigMap", ns, name, by="kubectl")
                live.discard((ns, name))
            else:
                store.create({**configmap(name), "metadata": {"name": name, "namespace": ns}}, by="kubectl")
                live.add((ns, name))
        got = [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in store.list("ConfigMap")]
        assert got == sorted(live)
        assert [o["metadata"]["name"] for o in store.list("ConfigMap", "b")] == sorted(n for s, n in live if s == "b")

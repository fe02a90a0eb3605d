"""The garbage collector end to end (pkg/controller/garbagecollector): Background, Foreground and Orphan
propagation, dangling owner references.

A Deployment of 2 replicas runs from t=0; its pods exit 0.1 s after SIGTERM, so a pod deleted at 10 s is
removed at 11 s (the kubelet's next relist). Deployments and ReplicaSets have no grace period: deleted without
finalizers they are removed at once.
"""

from __future__ import annotations

from tests.helpers import records, run_text

DEPLOYMENT = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: gc}
spec:
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 2
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: app, image: nginx:1.27}]
  actions: [ACTION]
  until: 30s
"""


def _run(tmp_path, action: str):
    return run_text(tmp_path, DEPLOYMENT.replace("ACTION", action))


def _names(r, kind: str) -> list[str]:
    return [x["object"] for x in records(r, "api", verb="create") if x["object"].startswith(f"{kind}/")]


def _gc_deletes(r) -> list[tuple[float, str, str]]:
    return [(x["t"], x["object"], x.get("propagationPolicy"))
            for x in records(r, "api", verb="delete", by="generic-garbage-collector")]


def _deleted(r, obj: str) -> list[float]:
    return [x["t"] for x in records(r, "deleted", object=obj)]


def test_background_deletes_dependents_after_the_owner(tmp_path):
    # kubectl's default for apps/v1 is Background: the Deployment goes at once; its ReplicaSet, then (once
    # the ReplicaSet is gone) its pods lose their only owner and are deleted with propagationPolicy Background
    r = _run(tmp_path, "{at: 10s, delete: deployment/web}")
    (rs,) = _names(r, "ReplicaSet")
    pods = _names(r, "Pod")
    assert _deleted(r, "Deployment/default/web") == [10.0]
    assert _gc_deletes(r) == [(10.0, rs, "Background")] + [(10.0, p, "Background") for p in sorted(pods)]
    assert _deleted(r, rs) == [10.0]
    for p in pods:
        assert [x["t"] for x in records(r, "terminating", object=p)] == [10.0]
        assert _deleted(r, p) == [11.0]


def test_foreground_deletes_dependents_first(tmp_path):
    # the Deployment gets deletionTimestamp and the foregroundDeletion finalizer; its ReplicaSet has dependents
    # of its own, so the GC deletes it in Foreground too; the pods (no dependents) in Background. When the pods
    # are gone (11 s) nothing blocks the ReplicaSet any more: its finalizer goes, it is removed, and then the
    # Deployment's: all in the same instant, dependents first
    r = _run(tmp_path, "{at: 10s, delete: deployment/web, propagationPolicy: Foreground}")
    (rs,) = _names(r, "ReplicaSet")
    pods = _names(r, "Pod")
    term = records(r, "terminating", object="Deployment/default/web")
    assert [(x["t"], x["gracePeriodSeconds"]) for x in term] == [(10.0, 0)]
    assert _gc_deletes(r) == [(10.0, rs, "Foreground")] + [(10.0, p, "Background") for p in sorted(pods)]
    removed = [(x["t"], x["object"]) for x in records(r, "deleted")]
    assert removed == [(11.0, p) for p in sorted(pods)] + [(11.0, rs), (11.0, "Deployment/default/web")]
    patches = [(x["t"], x["object"]) for x in records(r, "api", verb="patch", by="generic-garbage-collector")]
    assert patches == [(11.0, rs), (11.0, "Deployment/default/web")]
    # a ReplicaSet being deleted does not replace its pods
    assert [x["t"] for x in records(r, "api", verb="create", by="replicaset-controller")] == [0.0, 0.0]


def test_orphan_keeps_the_dependents(tmp_path):
    r = _run(tmp_path, "{at: 10s, delete: deployment/web, propagationPolicy: Orphan}")
    (rs,) = _names(r, "ReplicaSet")
    # attemptToOrphan: the owner's UID out of the ReplicaSet's ownerReferences, then the orphan finalizer out
    patches = [(x["t"], x["object"]) for x in records(r, "api", verb="patch", by="generic-garbage-collector")]
    assert patches == [(10.0, rs), (10.0, "Deployment/default/web")]
    assert _deleted(r, "Deployment/default/web") == [10.0]
    assert _gc_deletes(r) == []
    obj = r.cluster.store.get("ReplicaSet", "default", rs.split("/")[-1])
    assert "ownerReferences" not in obj["metadata"]
    assert obj["status"]["readyReplicas"] == 2
    assert not [x for x in records(r, "terminating") if x["object"].startswith("Pod/")]


def test_orphaned_pods_of_a_replica_set(tmp_path):
    (rs,) = _names(_run(tmp_path, ""), "ReplicaSet")
    r = _run(tmp_path, f"{{at: 10s, delete: replicaset/{rs.split('/')[-1]}, propagationPolicy: Orphan}}")
    pods = _names(r, "Pod")
    assert _deleted(r, rs) == [10.0]
    # the Deployment then creates the same ReplicaSet again (same name: same template hash) and it adopts the
    # orphans, which match its selector: no pod is created or deleted
    assert _gc_deletes(r) == []
    assert [x["t"] for x in records(r, "api", verb="create", by="deployment-controller")] == [0.0, 10.0]
    assert [x["t"] for x in records(r, "api", verb="create", by="replicaset-controller")] == [0.0, 0.0]
    new_rs = r.cluster.store.get("ReplicaSet", "default", rs.split("/")[-1])
    for p in pods:
        refs = r.cluster.store.get("Pod", "default", p.split("/")[-1])["metadata"]["ownerReferences"]
        assert [x["uid"] for x in refs] == [new_rs["metadata"]["uid"]]


BARE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: gc}
spec:
  objects:
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}}
  actions:
    - at: 5s
      create:
        apiVersion: v1
        kind: Pod
        metadata:
          name: lone
          ownerReferences: [OWNERS]
        spec:
          containers: [{name: app, image: nginx:1.27}]
  until: 20s
"""
GHOST = "{apiVersion: apps/v1, kind: ReplicaSet, name: ghost, uid: 6c1f3d6e-0000-4000-8000-000000000000}"


def test_dangling_owner_reference(tmp_path):
    # an owner the graph has never seen becomes a virtual node, looked up at once; absent, its dependents are
    # garbage: the pod is deleted when it is created (Background)
    r = run_text(tmp_path, BARE.replace("OWNERS", GHOST))
    assert _gc_deletes(r) == [(5.0, "Pod/default/lone", "Background")]
    assert len(_deleted(r, "Pod/default/lone")) == 1  # once the kubelet has stopped it


def test_dangling_reference_removed_when_another_owner_exists(tmp_path):
    # the ConfigMap's UID is learnt from a first run (the seeded API server gives the same one again)
    first = run_text(tmp_path, BARE.replace("OWNERS", GHOST))
    uid = first.cluster.store.get("ConfigMap", "default", "cfg")["metadata"]["uid"]
    owners = f"{{apiVersion: v1, kind: ConfigMap, name: cfg, uid: {uid}}}, {GHOST}"
    r = run_text(tmp_path, BARE.replace("OWNERS", owners))
    # a solid owner remains: attemptToDeleteItem only patches the dangling reference away
    assert _gc_deletes(r) == []
    assert [(x["t"], x["object"]) for x in records(r, "api", verb="patch", by="generic-garbage-collector")] == \
        [(5.0, "Pod/default/lone")]
    refs = r.cluster.store.get("Pod", "default", "lone")["metadata"]["ownerReferences"]
    assert [x["name"] for x in refs] == ["cfg"]

"""PersistentVolumeClaims, PersistentVolumes and StorageClasses: binding, provisioning, scheduling, StatefulSet
claims."""

from __future__ import annotations

import pytest

from podlife.scenario.assumptions import assumptions
from podlife.scenario.load import load_scenario
from tests.helpers import records, run_text, times

HEAD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: storage}
spec:
  kubernetesVersion: "VERSION"
  until: 20s
  objects:
"""

DEFAULT_WFFC = """
  - apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: standard
      annotations: {storageclass.kubernetes.io/is-default-class: "true"}
    provisioner: disk.csi.example.com
    volumeBindingMode: WaitForFirstConsumer
"""

STATEFULSET = """
  - apiVersion: apps/v1
    kind: StatefulSet
    metadata: {name: db}
    spec:
      serviceName: db
      replicas: 2
      selector: {matchLabels: {app: db}}
      template:
        metadata: {labels: {app: db}}
        spec:
          containers:
          - name: db
            image: postgres
            volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
      volumeClaimTemplates:
      - metadata: {name: data}
        spec:
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
"""


def scenario(body: str, version: str = "1.34") -> str:
    return HEAD.replace("VERSION", version) + body


def events(r, obj: str) -> list[tuple[float, str]]:
    return [(e["t"], e["reason"]) for e in records(r, "event") if e["object"] == obj]


def test_statefulset_claims_are_provisioned_when_each_pod_is_scheduled(tmp_path):
    # the set creates data-db-0 then db-0 (createPersistentVolumeClaims); the default class (admission) waits for
    # the first consumer: the scheduler picks node-1 and annotates the claim, the provisioner answers after its
    # 2 s, the binder binds, then the pod is bound. OrderedReady: db-1 after db-0 is Ready (3 s), bound at 5 s.
    r = run_text(tmp_path, scenario(DEFAULT_WFFC + STATEFULSET))
    assert events(r, "PersistentVolumeClaim/default/data-db-0") == [
        (0.0, "WaitForFirstConsumer"), (0.0, "ExternalProvisioning"), (0.0, "Provisioning"),
        (2.0, "ProvisioningSucceeded")]
    assert [(x["t"], x["object"]) for x in records(r, "api", verb="bind")] == [
        (2.0, "Pod/default/db-0"), (5.0, "Pod/default/db-1")]
    claim = r.cluster.store.get("PersistentVolumeClaim", "default", "data-db-1")
    assert claim["spec"]["storageClassName"] == "standard"
    assert claim["metadata"]["labels"] == {"app": "db"}
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-1"
    assert claim["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    pv = r.cluster.store.get("PersistentVolume", None, claim["spec"]["volumeName"])
    assert pv["status"]["phase"] == "Bound" and pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    set_events = [e["message"] for e in records(r, "event", object="StatefulSet/default/db")]
    assert set_events[:2] == ["create Claim data-db-0 Pod db-0 in StatefulSet db success",
                              "create Pod db-0 in StatefulSet db successful"]


def test_immediate_claim_holds_the_pod_until_bound(tmp_path):
    r = run_text(tmp_path, scenario("""
  - apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: fast
      annotations: {podlife/provisioning-seconds: "5"}
    provisioner: disk.csi.example.com
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: cache}
    spec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 2Gi}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      volumes: [{name: cache, persistentVolumeClaim: {claimName: cache}}]
      containers: [{name: app, image: app:1}]
"""))
    # the binder's update of the claim (the provisioner annotation) sends the pod back to the queue: it is tried
    # again after its 1 s backoff and fails the same way; the bound claim (5 s) lets it through
    failed = records(r, "event", reason="FailedScheduling")
    assert [(e["t"], e["message"]) for e in failed] == [
        (t, "0/1 nodes are available: 1 pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes "
            "are available: 1 Preemption is not helpful for scheduling..") for t in (0.0, 1.0)]
    assert [x["t"] for x in records(r, "api", verb="bind")] == [5.0]


def test_static_volumes_bind_to_the_smallest_that_fits(tmp_path):
    r = run_text(tmp_path, scenario("""
  - apiVersion: v1
    kind: PersistentVolume
    metadata: {name: big}
    spec: {capacity: {storage: 10Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /big}}
  - apiVersion: v1
    kind: PersistentVolume
    metadata: {name: small}
    spec: {capacity: {storage: 5Gi}, accessModes: [ReadWriteOnce, ReadOnlyMany], hostPath: {path: /small}}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data}
    spec: {storageClassName: "", accessModes: [ReadWriteOnce], resources: {requests: {storage: 3Gi}}}
"""))
    claim = r.cluster.store.get("PersistentVolumeClaim", "default", "data")
    assert claim["spec"]["volumeName"] == "small"
    assert claim["status"]["capacity"] == {"storage": "5Gi"}
    assert r.cluster.store.get("PersistentVolume", None, "big")["status"]["phase"] == "Available"
    assert r.cluster.store.get("PersistentVolume", None, "small")["spec"]["claimRef"]["name"] == "data"


def test_missing_claim_is_unschedulable(tmp_path):
    r = run_text(tmp_path, scenario("""
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      volumes: [{name: data, persistentVolumeClaim: {claimName: nowhere}}]
      containers: [{name: app, image: app:1}]
"""))
    assert [e["message"] for e in records(r, "event", reason="FailedScheduling")] == [
        '0/1 nodes are available: 1 persistentvolumeclaim "nowhere" not found. preemption: 0/1 nodes are available: '
        "1 Preemption is not helpful for scheduling.."]


def test_external_provisioning_wording_before_1_28(tmp_path):
    r = run_text(tmp_path, scenario(DEFAULT_WFFC + STATEFULSET, version="1.27"))
    msg = next(e["message"] for e in records(r, "event", reason="ExternalProvisioning"))
    assert msg == ('waiting for a volume to be created, either by external provisioner "disk.csi.example.com" or '
                   "manually created by system administrator")


def test_the_provisioning_delay_is_listed_as_an_assumption(tmp_path):
    path = tmp_path / "scenario.yaml"
    path.write_text(scenario(DEFAULT_WFFC))
    assert assumptions(load_scenario(str(path))) == [
        {"object": "StorageClass/standard", "container": "",
         "assumption": "provisioner disk.csi.example.com: assumed to provision a volume 2 s after it is asked "
                       "(podlife/provisioning-seconds sets it)"}]


@pytest.mark.parametrize("version, kept", [("1.26", 2), ("1.27", 1)])
def test_claims_deleted_on_scale_down_by_retention_policy(tmp_path, version, kept):
    # whenScaled: Delete (StatefulSetAutoDeletePVC on from 1.27): scaling 2 → 1 makes db-1 the owner of data-db-1,
    # and the garbage collector deletes the claim once the pod is gone; on 1.26 the policy is not honoured
    text = scenario(DEFAULT_WFFC + STATEFULSET.replace(
        "      serviceName: db\n", "      serviceName: db\n"
                                  "      persistentVolumeClaimRetentionPolicy: {whenScaled: Delete}\n"), version)
    text = text.replace("  until: 20s\n", "  until: 40s\n") \
        + "  actions:\n  - {at: 20s, scale: statefulset/db, replicas: 1}\n"
    r = run_text(tmp_path, text)
    claims = [c["metadata"]["name"] for c in r.cluster.store.list("PersistentVolumeClaim")]
    assert len(claims) == kept and claims[0] == "data-db-0"


@pytest.mark.parametrize("version, gate, honoured", [
    ("1.26", None, False),   # StatefulSetAutoDeletePVC alpha (1.23-1.26), off: the policy is dropped, claims stay
    ("1.26", True, True),    # ... unless the cluster turns the gate on
    ("1.27", None, True),    # beta, on by default (GA and locked from 1.32)
    ("1.34", None, True),
])
def test_claims_deleted_with_the_set_by_retention_policy(tmp_path, version, gate, honoured):
    # whenDeleted: Delete: the controller makes the set the owner of each claim it creates
    # (updateClaimOwnerRefForSetAndPod), so deleting the set lets the garbage collector delete the claims with
    # its pods at 20 s; with whenDeleted: Retain (the default) or the gate off they outlive the set. A deleted
    # claim keeps its kubernetes.io/pvc-protection finalizer while its scheduled pod exists (podUsesPVC, whatever
    # the pod's phase): the pods are removed at 21 s, and only then does each claim go, and its Delete-policy
    # volume after it (Released, so not in use for the PV protection controller)
    text = scenario(DEFAULT_WFFC + STATEFULSET.replace(
        "      serviceName: db\n", "      serviceName: db\n"
                                  "      persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}\n"), version)
    if gate is not None:
        text = text.replace("  until: 20s\n", f"  cluster: {{featureGates: {{StatefulSetAutoDeletePVC: {gate}}}}}\n"
                                              "  until: 20s\n")
    text = text.replace("  until: 20s\n", "  until: 40s\n") + "  actions:\n  - {at: 20s, delete: statefulset/db}\n"
    r = run_text(tmp_path, text)
    claims = [c["metadata"]["name"] for c in r.cluster.store.list("PersistentVolumeClaim")]
    deleted = [(x["object"], x["by"]) for x in records(r, "api", verb="delete")
               if x["object"].startswith("PersistentVolumeClaim/")]
    assert times(r, "deleted", object="Pod/default/db-0") == [21.0]   # the set's pods go either way
    if honoured:
        assert claims == [] and r.cluster.store.list("PersistentVolume") == []
        assert deleted == [("PersistentVolumeClaim/default/data-db-0", "generic-garbage-collector"),
                           ("PersistentVolumeClaim/default/data-db-1", "generic-garbage-collector")]
        for i in (0, 1):
            claim = f"PersistentVolumeClaim/default/data-db-{i}"
            assert times(r, "terminating", object=claim) == [20.0]
            assert times(r, "deleted", object=f"Pod/default/db-{i}") == [21.0]
            assert [(x["t"], x["verb"], x["by"]) for x in records(r, "api", object=claim) if x["t"] > 20.0] == [
                (21.0, "update", "pvc-protection-controller")]
            assert times(r, "deleted", object=claim) == [21.0]
        assert [x["t"] for x in records(r, "deleted") if x["object"].startswith("PersistentVolume/")] == [21.0, 21.0]
    else:
        assert claims == ["data-db-0", "data-db-1"] and deleted == []


STATIC = """
  - apiVersion: v1
    kind: PersistentVolume
    metadata: {name: vol}
    spec:
      capacity: {storage: 5Gi}
      accessModes: [ReadWriteOnce]
      persistentVolumeReclaimPolicy: POLICY
      hostPath: {path: /vol}
  - apiVersion: v1
    kind: PersistentVolumeClaim
    metadata: {name: data}
    spec: {storageClassName: "", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""

POD = """
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
      containers: [{name: app, image: app:1}]
"""


def test_created_claims_and_volumes_carry_the_protection_finalizers(tmp_path):
    # StorageObjectInUseProtection (on by default in every modelled version) adds them at creation
    r = run_text(tmp_path, scenario(DEFAULT_WFFC + STATEFULSET + STATIC.replace("POLICY", "Retain")))
    store = r.cluster.store
    claims = store.list("PersistentVolumeClaim")
    volumes = store.list("PersistentVolume")
    assert [c["metadata"]["name"] for c in claims] == ["data", "data-db-0", "data-db-1"]
    assert [c["metadata"]["finalizers"] for c in claims] == [["kubernetes.io/pvc-protection"]] * 3
    assert len(volumes) == 3   # vol and the two provisioned for the set
    assert [v["metadata"]["finalizers"] for v in volumes] == [["kubernetes.io/pv-protection"]] * 3
    # written at creation by the apiserver, not added later by the protection controllers
    assert [x for x in records(r, "api") if x["by"] in ("pvc-protection-controller", "pv-protection-controller")] == []


def test_claim_in_use_by_a_running_pod_stays_terminating_until_the_pod_is_gone(tmp_path):
    # the claim is deleted at 5 s while web (Running) uses it: it is Terminating and keeps its finalizer; web is
    # deleted at 10 s, its container exits 0.1 s after SIGTERM and the pod is removed at 11 s (as the set's pods
    # above, 1 s after their delete); that DELETED event queues the claim, now unused, whose finalizer the PVC
    # protection controller removes at 11 s, and the claim goes. Its volume (Retain) is Released then.
    text = scenario(STATIC.replace("POLICY", "Retain") + POD).replace("  until: 20s\n", "  until: 20s\n  actions:\n"
        "  - {at: 5s, delete: persistentvolumeclaim/data}\n  - {at: 10s, delete: pod/web}\n")
    r = run_text(tmp_path, text)
    assert times(r, "terminating", object="PersistentVolumeClaim/default/data") == [5.0]
    assert times(r, "deleted", object="Pod/default/web") == [11.0]
    assert [(x["t"], x["verb"], x["by"]) for x in records(r, "api", object="PersistentVolumeClaim/default/data")
            if x["t"] >= 5.0] == [(5.0, "delete", "kubectl"), (11.0, "update", "pvc-protection-controller")]
    assert times(r, "deleted", object="PersistentVolumeClaim/default/data") == [11.0]
    pv = r.cluster.store.get("PersistentVolume", None, "vol")
    assert pv["status"]["phase"] == "Released"
    assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"] and "deletionTimestamp" not in pv["metadata"]


@pytest.mark.parametrize("policy, delete_pv_at, terminating, gone", [
    # Retain: the claim's deletion (10 s) only makes the volume Released; it keeps its finalizer and stays
    ("Retain", None, [], []),
    # Delete: Released, then deleted by the PersistentVolume controller; not Bound, so the finalizer goes at once
    ("Delete", None, [10.0], [10.0]),
    # a volume deleted while Bound (5 s) is kept Terminating until its claim is deleted and it is Released
    ("Retain", 5, [5.0], [10.0]),
    ("Delete", 5, [5.0], [10.0]),
])
def test_volume_protection_follows_the_bound_phase(tmp_path, policy, delete_pv_at, terminating, gone):
    actions = "  - {at: 10s, delete: persistentvolumeclaim/data}\n"
    if delete_pv_at is not None:
        actions = f"  - {{at: {delete_pv_at}s, delete: persistentvolume/vol}}\n" + actions
    text = scenario(STATIC.replace("POLICY", policy)).replace("  until: 20s\n", "  until: 20s\n  actions:\n" + actions)
    r = run_text(tmp_path, text)
    # no pod uses the claim: the PVC protection controller lets it go at once
    assert times(r, "deleted", object="PersistentVolumeClaim/default/data") == [10.0]
    assert times(r, "terminating", object="PersistentVolume/vol") == terminating
    assert times(r, "deleted", object="PersistentVolume/vol") == gone
    if gone:
        assert [(x["t"], x["verb"], x["by"]) for x in records(r, "api", object="PersistentVolume/vol")][-1] == (
            10.0, "update", "pv-protection-controller")
    else:
        pv = r.cluster.store.get("PersistentVolume", None, "vol")
        assert pv["status"]["phase"] == "Released" and pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]

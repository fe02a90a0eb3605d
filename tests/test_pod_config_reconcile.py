"""The kubelet's pod config on a status-only update (pkg/kubelet/config/config.go checkAndUpdatePod): a RECONCILE
sets ``existing.Status = ref.Status`` on the object the pod worker holds, nothing else."""

from __future__ import annotations

from tests.helpers import run_text

ONE_POD = """
    apiVersion: podlife/v1alpha1
    kind: Scenario
    metadata: {name: s}
    spec:
      until: 1m
      cluster: {nodes: [{name: n1}]}
      objects:
      - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: nginx}]}}
    """


def test_a_status_only_update_reaches_the_pod_worker_and_keeps_its_resource_version(tmp_path):
    r = run_text(tmp_path, ONE_POD)
    pod = r.cluster.store.get("Pod", "default", "p")
    held = r.cluster.kubelets["n1"].pod_workers.statuses[pod["metadata"]["uid"]].pod
    assert pod["status"]["phase"] == "Running"
    # the kubelet's own status writes came back as reconciles: the worker has the status the API has now
    assert held["status"] is pod["status"]
    assert held["spec"] is pod["spec"]
    # and the metadata of the last update it was given (the binding), older than the API's
    md, api_md = held["metadata"], pod["metadata"]
    assert int(md["resourceVersion"]) < int(api_md["resourceVersion"])
    assert {**md, "resourceVersion": api_md["resourceVersion"]} == api_md


def test_the_stored_status_is_the_status_managers_own_when_nothing_was_merged_in(tmp_path):
    """status_manager.go mergePodStatus with no condition of another writer: the status written is the kubelet's,
    kept once (the store and the status manager share it; neither changes it in place)."""
    r = run_text(tmp_path, ONE_POD)
    pod = r.cluster.store.get("Pod", "default", "p")
    assert r.cluster.kubelets["n1"].status_manager.get(pod["metadata"]["uid"]) is pod["status"]

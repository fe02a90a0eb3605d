"""Namespace deletion, from test/e2e/apimachinery/namespace.go and the code it exercises:
staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go (what may be deleted or
created), pkg/controller/namespace/namespace_controller.go (when a namespace is looked at: 5 s after each event
it is seen in, estimate/2 + 1 s after content remained, the 5 ms..60 s back-off after an error) and
pkg/controller/namespace/deletion (what is deleted, the five conditions, the finalizer)."""

from __future__ import annotations

from typing import Any

import podlife.scenario.run as runmod
from tests.helpers import records, run_text

HEAD = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: ns}
spec:
  kubernetesVersion: "1.34"
"""


def _watching(monkeypatch, name: str) -> list[tuple[float, dict[str, Any]]]:
    """Every state of namespace ``name`` as the store commits it: (time, status)."""
    seen: list[tuple[float, dict[str, Any]]] = []
    build = runmod.build

    def watching_build(sc, **kw):
        cluster = build(sc, **kw)

        def on_namespace(type_, obj, old):
            if obj["metadata"]["name"] == name:
                seen.append((cluster.kernel.now, obj.get("status") or {}))
        cluster.store.watch("Namespace", on_namespace)
        return cluster

    monkeypatch.setattr(runmod, "build", watching_build)
    return seen


def _ok(type_: str, t: str) -> dict[str, Any]:
    reason, message = {
        "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
        "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions",
                                                        "All legacy kube types successfully parsed"),
        "NamespaceDeletionContentFailure": ("ContentDeleted",
                                            "All content successfully deleted, may be waiting on finalization"),
        "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
        "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
    }[type_]
    return {"type": type_, "status": "False", "lastTransitionTime": t, "reason": reason, "message": message}


def _writes(result, name: str) -> list[tuple[float, str, str | None]]:
    """The namespace controller's writes to namespace ``name`` and its removal: (time, verb, subresource)."""
    out = [(r["t"], r["verb"], r.get("subresource")) for r in records(result, "api", object=f"Namespace/{name}",
                                                                      by="namespace-controller")]
    return out + [(r["t"], "deleted", None) for r in records(result, "deleted", object=f"Namespace/{name}")]


def test_all_pods_are_removed_when_a_namespace_is_deleted(tmp_path):
    """Conformance "should ensure that all pods are removed when a namespace is deleted": a running pod's
    namespace is deleted; the namespace is gone within 60 s + the pod's grace period, and once it is created
    again the pod is not there. Upstream's times: the deletion is processed 5 s after it is seen (15 s): the
    pod is deleted (graceful, its 30 s grace) and the conditions are written; the pod's process stops on
    SIGTERM, so at the next look (20 s, 5 s after the conditions' write was seen) nothing remains: the
    namespace is finalized and purged."""
    r = run_text(tmp_path, HEAD + """\
  until: 60s
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: nsdeletetest}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: test-pod, namespace: nsdeletetest}
      spec: {containers: [{name: nginx, image: "registry.k8s.io/pause:3.10"}]}
  actions:
    - {at: 10s, delete: namespace/nsdeletetest}
    - {at: 30s, create: {apiVersion: v1, kind: Namespace, metadata: {name: nsdeletetest}}}
""")
    assert [(x["t"], x["gracePeriodSeconds"]) for x in records(r, "terminating", object="Pod/nsdeletetest/test-pod")] \
        == [(15.0, 30)]
    # deleted by the controller; the kubelet's final delete (grace 0) removes it
    assert [x["by"] for x in records(r, "api", object="Pod/nsdeletetest/test-pod", verb="delete")] == \
        ["namespace-controller", "kubelet"]
    pod_gone = [x["t"] for x in records(r, "deleted", object="Pod/nsdeletetest/test-pod")]
    assert len(pod_gone) == 1 and 15.0 < pod_gone[0] < 20.0
    assert _writes(r, "nsdeletetest") == [(15.0, "update", "status"), (20.0, "update", "status"),
                                          (20.0, "update", "finalize"), (20.0, "deleted", None)]
    # recreated: the pod is not there
    assert not [x for x in records(r, "action") if x.get("error")]
    assert not r.cluster.store.list("Pod", "nsdeletetest")
    assert r.cluster.store.get("Namespace", None, "nsdeletetest")["status"] == {"phase": "Active"}


def test_all_services_are_removed_when_a_namespace_is_deleted(tmp_path):
    """Conformance "should ensure that all services are removed when a namespace is deleted": with nothing
    that takes time to go, the first look (5 s after the delete) removes the content and finalizes the
    namespace, well within the test's 60 s."""
    r = run_text(tmp_path, HEAD + """\
  until: 60s
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: nsdeletetest}}
    - apiVersion: v1
      kind: Service
      metadata: {name: test-service, namespace: nsdeletetest}
      spec:
        selector: {foo: bar, baz: blah}
        ports: [{port: 80, targetPort: 80}]
  actions:
    - {at: 10s, delete: namespace/nsdeletetest}
    - {at: 30s, create: {apiVersion: v1, kind: Namespace, metadata: {name: nsdeletetest}}}
""")
    assert [x["t"] for x in records(r, "deleted", object="Service/nsdeletetest/test-service")] == [15.0]
    assert _writes(r, "nsdeletetest") == [(15.0, "update", "status"), (15.0, "update", "finalize"),
                                          (15.0, "deleted", None)]
    assert not r.cluster.store.list("Service", "nsdeletetest")


def test_all_of_100_namespaces_are_deleted_fast(tmp_path):
    """"should always delete fast (ALL of 100 namespaces in 150 seconds)": 100 namespaces deleted 10 s after
    they were created are all gone 5 s after their deletes."""
    names = [f"nslifetest-{n}" for n in range(100)]
    objects = "".join(f"    - {{apiVersion: v1, kind: Namespace, metadata: {{name: {n}}}}}\n" for n in names)
    actions = "".join(f"    - {{at: 10s, delete: namespace/{n}}}\n" for n in names)
    r = run_text(tmp_path, HEAD + "  until: 160s\n  objects:\n" + objects + "  actions:\n" + actions)
    gone = {x["object"]: x["t"] for x in records(r, "deleted") if x["object"].startswith("Namespace/nslifetest-")}
    assert len(gone) == 100 and set(gone.values()) == {15.0}
    assert not [n for n in r.cluster.store.list("Namespace") if "nslifetest" in n["metadata"]["name"]]


def test_the_namespaces_the_api_server_keeps_are_not_deleted(tmp_path):
    """NamespaceLifecycle admission: deleting default, kube-system or kube-public is Forbidden ("this namespace
    may not be deleted"); the namespace and its pods stay. kube-node-lease is not among them."""
    r = run_text(tmp_path, HEAD + """\
  until: 30s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec: {containers: [{name: app, image: nginx}]}
  actions:
    - {at: 5s, delete: namespace/default}
    - {at: 5s, delete: namespace/kube-system}
    - {at: 5s, delete: namespace/kube-public}
    - {at: 5s, delete: namespace/kube-node-lease}
""")
    errors = {x["object"]: x.get("error") for x in records(r, "action")}
    assert errors == {
        "Namespace/default": 'namespaces "default" is forbidden: this namespace may not be deleted',
        "Namespace/kube-system": 'namespaces "kube-system" is forbidden: this namespace may not be deleted',
        "Namespace/kube-public": 'namespaces "kube-public" is forbidden: this namespace may not be deleted',
        "Namespace/kube-node-lease": None}
    assert r.cluster.store.get("Pod", "default", "web")["status"]["phase"] == "Running"
    for name in ("default", "kube-system", "kube-public"):
        ns = r.cluster.store.get("Namespace", None, name)
        assert "deletionTimestamp" not in ns["metadata"] and ns["status"] == {"phase": "Active"}
    # the node's Lease went with kube-node-lease (its content), and the kubelet cannot write it back there
    assert r.cluster.store.try_get("Namespace", None, "kube-node-lease") is None


def test_no_new_content_in_a_terminating_namespace_and_none_in_a_missing_one(tmp_path):
    """NamespaceLifecycle admission: a create in a Terminating namespace is Forbidden ("unable to create new
    content in namespace X because it is being terminated"); in a namespace that does not exist it is NotFound
    (namespaces "X" not found)."""
    r = run_text(tmp_path, HEAD + """\
  until: 30s
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: held, namespace: team, finalizers: [example.com/hold]}}
  actions:
    - {at: 5s, delete: namespace/team}
    - {at: 6s, create: {apiVersion: v1, kind: ConfigMap, metadata: {name: late, namespace: team}}}
    - {at: 6s, create: {apiVersion: v1, kind: ConfigMap, metadata: {generateName: late-, namespace: team}}}
    - {at: 6s, create: {apiVersion: v1, kind: ConfigMap, metadata: {name: lost, namespace: nowhere}}}
""")
    assert [x.get("error") for x in records(r, "action", action="create")] == [
        'configmaps "late" is forbidden: unable to create new content in namespace team because it is being '
        "terminated",
        'configmaps "late-" is forbidden: unable to create new content in namespace team because it is being '
        "terminated",
        'namespaces "nowhere" not found']


def test_conditions_while_a_finalizer_holds_content(tmp_path, monkeypatch):
    """deletion/status_condition_utils.go: the five conditions are written at the first look (15 s), in their
    order, each with its reason and message; while a ConfigMap's finalizer holds it the estimate is
    finalizerEstimateSeconds (15): looked at again after 15/2 + 1 = 8 s. The pod, gone by 20 s, leaves the
    message of NamespaceContentRemaining (its status, so its lastTransitionTime, unchanged). Once the finalizer
    is removed (60 s) the next look (65 s) turns both conditions False and finalizes the namespace."""
    seen = _watching(monkeypatch, "team")
    r = run_text(tmp_path, HEAD + """\
  until: 90s
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: a, namespace: team}
      spec: {containers: [{name: app, image: nginx}]}
    - {apiVersion: v1, kind: ConfigMap, metadata: {name: held, namespace: team, finalizers: [example.com/hold]}}
  actions:
    - {at: 10s, delete: namespace/team}
    - {at: 60s, patch: configmap/held, namespace: team, mergePatch: {metadata: {finalizers: null}}}
""")
    t15, t20 = "2025-01-01T00:00:15Z", "2025-01-01T00:00:20Z"
    by_time = dict(seen)
    assert by_time[15.0] == {"phase": "Terminating", "conditions": [
        _ok("NamespaceDeletionDiscoveryFailure", t15), _ok("NamespaceDeletionGroupVersionParsingFailure", t15),
        _ok("NamespaceDeletionContentFailure", t15),
        {"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": t15,
         "reason": "SomeResourcesRemain",
         "message": "Some resources are remaining: configmaps. has 1 resource instances, pods. has 1 resource "
                    "instances"},
        {"type": "NamespaceFinalizersRemaining", "status": "True", "lastTransitionTime": t15,
         "reason": "SomeFinalizersRemain",
         "message": "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource "
                    "instances"}]}
    assert by_time[20.0]["conditions"][3] == {
        "type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": t15,
        "reason": "SomeResourcesRemain",
        "message": "Some resources are remaining: configmaps. has 1 resource instances"}
    assert by_time[20.0]["conditions"][:3] + by_time[20.0]["conditions"][4:] == \
        by_time[15.0]["conditions"][:3] + by_time[15.0]["conditions"][4:]
    assert t20 not in str(by_time[20.0])
    assert _writes(r, "team") == [(15.0, "update", "status"), (20.0, "update", "status"),
                                  (65.0, "update", "status"), (65.0, "update", "finalize"), (65.0, "deleted", None)]
    assert by_time[65.0]["conditions"][3:] == [
        _ok("NamespaceContentRemaining", "2025-01-01T00:01:05Z"),
        _ok("NamespaceFinalizersRemaining", "2025-01-01T00:01:05Z")]


def test_content_left_past_its_grace_is_a_content_failure_retried_with_back_off(tmp_path, monkeypatch):
    """A pod deleted earlier with a 100 s grace (its process ignores SIGTERM: killed at 105 s) outlasts the 30 s
    estimate of its terminationGracePeriodSeconds. Looks: 15 s (estimate 30; its conditions' write brings the next
    look to 20 s), 20 s (nothing changed, nothing written; 30/2 + 1 = 16 s later: 36 s), 36 s (26 s since the
    deletion: still 30 → 52 s), 52 s: 42 s since the deletion, the estimate is 0 but the pod remains without a
    finalizer: "unexpected items still remain", NamespaceDeletionContentFailure True, and the item is retried with
    the controller's back-off (5 ms doubling: 52.005 s, 52.015 s, … 92.955 s, 133.915 s). The pod is gone at 106 s;
    the look at 133.915 s clears the failure and finalizes the namespace."""
    seen = _watching(monkeypatch, "team")
    r = run_text(tmp_path, HEAD + """\
  until: 200s
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: a, namespace: team}
      spec: {containers: [{name: app, image: busybox, command: [sleep, "3600"]}]}
  actions:
    - {at: 5s, delete: pod/a, namespace: team, gracePeriodSeconds: 100}
    - {at: 10s, delete: namespace/team}
""")
    assert [x["t"] for x in records(r, "deleted", object="Pod/team/a")] == [106.0]
    writes = _writes(r, "team")
    assert writes == [(15.0, "update", "status"), (52.0, "update", "status"),
                      (133.915, "update", "status"), (133.915, "update", "finalize"), (133.915, "deleted", None)]
    by_time = dict(seen)
    assert by_time[52.0]["conditions"][2] == {
        "type": "NamespaceDeletionContentFailure", "status": "True", "lastTransitionTime": "2025-01-01T00:00:52Z",
        "reason": "ContentDeletionFailed",
        "message": "Failed to delete all resource types, 1 remaining: unexpected items still remain in namespace: "
                   "team for gvr: /v1, Resource=pods"}
    assert by_time[133.915]["conditions"][2] == _ok("NamespaceDeletionContentFailure", "2025-01-01T00:02:13Z")

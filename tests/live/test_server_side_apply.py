"""Server-side apply with the real clients: kubectl apply --server-side (with and without --force-conflicts,
--field-manager), the Python client's dynamic ``server_side_apply`` and raw PATCH requests. The cases follow
upstream's test/integration/apiserver/apply/apply_test.go (TestApplyAlsoCreates, TestApplyManagedFields,
TestApplyRemovesEmptyManagedFields, TestClearManagedFields, TestApplyUpdateApplyConflictForced,
TestApplyRemoveContainerPort) and the co-ownership rules of the server-side apply documentation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.live.conftest import Live

APPLY = "application/apply-patch+yaml"
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                                                   "ports": [{"containerPort": 80}]}]}}},
}
PORT = 'k:{"containerPort":80,"protocol":"TCP"}'


@pytest.fixture(scope="module")
def live(live_factory) -> Live:
    return live_factory("1.32", clock="manual")   # no controller writes in between


def _get(live: Live, path: str) -> dict[str, Any]:
    code, obj = live.json("GET", path)
    assert code == 200, obj
    return obj


def _managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """The entries of the main resource (the controllers' status entries left out)."""
    return {(m["manager"], m["operation"]): m for m in obj["metadata"].get("managedFields") or ()
            if m.get("subresource") is None}


def _containers_fields(entry: dict[str, Any]) -> dict[str, Any]:
    return entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']


def test_apply_after_create_co_owns_equal_values_and_conflicts_on_others(live: Live) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/web"
    live.kubectl("create", "-f", "-", input=json.dumps(DEPLOYMENT))
    created = _get(live, path)
    # the create's entry holds the defaulted object's fields (handlers/create.go: the field manager runs on the
    # decoded, defaulted body): the port's protocol and the template's defaults included
    mine = _managers(created)[("kubectl-create", "Update")]
    assert _containers_fields(mine)["f:ports"] == {PORT: {".": {}, "f:containerPort": {}, "f:protocol": {}}}
    assert {"f:imagePullPolicy", "f:terminationMessagePath"} <= set(_containers_fields(mine))
    assert {"f:progressDeadlineSeconds", "f:revisionHistoryLimit", "f:strategy"} <= set(mine["fieldsV1"]["f:spec"])

    # the same values applied by another manager: no conflict, the fields are co-owned; the port the
    # configuration names without its protocol is the defaulted TCP port (its list-map key defaults)
    p = live.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(DEPLOYMENT))
    assert p.stdout.strip() == "deployment.apps/web serverside-applied"
    obj = _get(live, path)
    managers = _managers(obj)
    assert set(managers) == {("kubectl-create", "Update"), ("kubectl", "Apply")}
    applied = managers[("kubectl", "Apply")]
    assert (applied["apiVersion"], applied["fieldsType"]) == ("apps/v1", "FieldsV1")
    assert _containers_fields(applied)["f:ports"] == {PORT: {".": {}, "f:containerPort": {}}}
    assert "f:replicas" in applied["fieldsV1"]["f:spec"]
    assert "f:replicas" in managers[("kubectl-create", "Update")]["fieldsV1"]["f:spec"]
    assert obj["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]

    # another value: a conflict with each owner, in upstream's words and body
    changed = json.loads(json.dumps(DEPLOYMENT))
    changed["spec"]["replicas"] = 3
    p = live.kubectl("apply", "--server-side", "--field-manager=ci", "-f", "-", input=json.dumps(changed),
                     check=False)
    assert p.returncode == 1
    assert p.stderr.startswith('error: Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.replicas\n'
                               'conflicts with "kubectl-create" using apps/v1:\n- .spec.replicas\n')
    code, _, raw = live.request("PATCH", path + "?fieldManager=ci", json.dumps(changed).encode(),
                                {"Content-Type": APPLY})
    body = json.loads(raw)
    assert code == 409
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.replicas\n'
                               'conflicts with "kubectl-create" using apps/v1:\n- .spec.replicas',
                    "reason": "Conflict",
                    "details": {"causes": [
                        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl"',
                         "field": ".spec.replicas"},
                        {"reason": "FieldManagerConflict", "message": 'conflict with "kubectl-create" using apps/v1',
                         "field": ".spec.replicas"}]},
                    "code": 409}

    # --force-conflicts: ci takes .spec.replicas from both, the port list keeps its one item
    p = live.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=ci", "-f", "-",
                     input=json.dumps(changed))
    assert p.stdout.strip() == "deployment.apps/web serverside-applied"
    obj = _get(live, path)
    assert obj["spec"]["replicas"] == 3
    assert obj["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    managers = _managers(obj)
    assert "f:replicas" in managers[("ci", "Apply")]["fieldsV1"]["f:spec"]
    assert "f:replicas" not in managers[("kubectl", "Apply")]["fieldsV1"]["f:spec"]
    assert "f:replicas" not in managers[("kubectl-create", "Update")]["fieldsV1"]["f:spec"]


def test_apply_update_apply_conflict_forced(live: Live) -> None:
    """TestApplyUpdateApplyConflictForced, then TestApplyRemoveContainerPort."""
    path = "/apis/apps/v1/namespaces/default/deployments/forced"
    config = json.loads(json.dumps(DEPLOYMENT))
    config["metadata"]["name"] = "forced"
    config["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "protocol": "TCP"}]
    code, obj = live.json("PATCH", path + "?fieldManager=apply_test", config, APPLY)
    assert code == 201, obj   # the apply created it
    code, obj = live.json("PATCH", path, {"spec": {"replicas": 5}}, "application/merge-patch+json")
    assert code == 200
    code, obj = live.json("PATCH", path + "?fieldManager=apply_test", config, APPLY)
    assert code == 409 and obj["details"]["causes"][0]["field"] == ".spec.replicas"
    # the merge patch's manager is the user agent's first part (Python-urllib)
    assert obj["details"]["causes"][0]["message"] == 'conflict with "Python-urllib" using apps/v1'
    code, obj = live.json("PATCH", path + "?fieldManager=apply_test&force=true", config, APPLY)
    assert code == 200 and obj["spec"]["replicas"] == 2
    assert list(_managers(obj)) == [("apply_test", "Apply")]   # the patcher lost its only field
    # the applier stops applying the port, which nobody else owns: it goes
    del config["spec"]["template"]["spec"]["containers"][0]["ports"]
    code, obj = live.json("PATCH", path + "?fieldManager=apply_test", config, APPLY)
    assert code == 200 and "ports" not in obj["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("resource,body", [
    ("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod"},
              "spec": {"containers": [{"name": "test-container", "image": "test-image"}]}}),
    ("services", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "test-svc"},
                  "spec": {"ports": [{"port": 8080, "protocol": "UDP"}]}}),
])
def test_apply_also_creates(live: Live, resource: str, body: dict[str, Any]) -> None:
    """TestApplyAlsoCreates: an apply of what does not exist creates it; the same body applied by another
    manager then does not conflict."""
    path = f"/api/v1/namespaces/default/{resource}/{body['metadata']['name']}"
    code, obj = live.json("PATCH", path + "?fieldManager=apply_test", body, APPLY)
    assert code == 201, obj
    assert [(m["manager"], m["operation"]) for m in obj["metadata"]["managedFields"]] == [("apply_test", "Apply")]
    code, obj = live.json("PATCH", path + "?fieldManager=apply_test_2", body, APPLY)
    assert code == 200, obj
    assert sorted(_managers(obj)) == [("apply_test", "Apply"), ("apply_test_2", "Apply")]


def test_apply_with_a_uid_does_not_create(live: Live) -> None:
    """TestCreateOnApplyFailsWithUID."""
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "test-pod-uid", "uid": "88e00824-7f0e-11e8-94a1-c8d3ffb15800"},
            "spec": {"containers": [{"name": "test-container", "image": "test-image"}]}}
    code, obj = live.json("PATCH", "/api/v1/namespaces/default/pods/test-pod-uid?fieldManager=apply_test", body,
                          APPLY)
    assert code == 409, obj
    assert (obj["reason"], obj["message"], obj["details"]) == (
        "Conflict", 'Operation cannot be fulfilled on pods "test-pod-uid": uid mismatch: the provided object '
                    "specified uid 88e00824-7f0e-11e8-94a1-c8d3ffb15800, and no existing object was found",
        {"name": "test-pod-uid", "kind": "pods"})
    assert live.json("GET", "/api/v1/namespaces/default/pods/test-pod-uid")[0] == 404


def test_python_dynamic_client_managed_fields(live: Live) -> None:
    """TestApplyManagedFields through the Python client's dynamic server_side_apply, then
    TestClearManagedFields and TestApplyRemovesEmptyManagedFields."""
    kubernetes = pytest.importorskip("kubernetes")
    from kubernetes import config, dynamic

    dyn = dynamic.DynamicClient(config.new_client_from_config(live.kubeconfig))
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "test-cm", "namespace": "default", "labels": {"test-label": "test"}},
            "data": {"key": "value"}}
    cms.server_side_apply(body=body, field_manager="apply_test")
    cms.patch(body={"data": {"new-key": "value"}}, name="test-cm", namespace="default",
              content_type="application/merge-patch+json", field_manager="updater")
    live.advance("1s")   # the updater's entry takes its latest write's time
    cms.patch(body={"data": {"key": "new value"}}, name="test-cm", namespace="default",
              content_type="application/merge-patch+json", field_manager="updater")
    obj = cms.get(name="test-cm", namespace="default").to_dict()
    managed = obj["metadata"]["managedFields"]
    assert [(m["manager"], m["operation"], m["apiVersion"], m["fieldsType"], m["fieldsV1"]) for m in managed] == [
        ("apply_test", "Apply", "v1", "FieldsV1", {"f:metadata": {"f:labels": {"f:test-label": {}}}}),
        ("updater", "Update", "v1", "FieldsV1", {"f:data": {"f:key": {}, "f:new-key": {}}})]
    assert managed[0]["time"] != managed[1]["time"]
    assert obj["data"] == {"key": "new value", "new-key": "value"}

    # applying the old value again conflicts with the updater; forced, the applier owns it again
    with pytest.raises(kubernetes.dynamic.exceptions.ConflictError) as e:
        cms.server_side_apply(body=body, field_manager="apply_test")
    assert json.loads(e.value.body)["message"] == \
        'Apply failed with 1 conflict: conflict with "updater" using v1: .data.key'
    obj = cms.server_side_apply(body=body, field_manager="apply_test", force_conflicts=True).to_dict()
    assert obj["data"] == {"key": "value", "new-key": "value"}
    assert [(m["manager"], m["fieldsV1"]) for m in obj["metadata"]["managedFields"]] == [
        ("apply_test", {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}}),
        ("updater", {"f:data": {"f:new-key": {}}})]

    # TestClearManagedFields: a merge patch of managedFields [{}] clears them
    obj = cms.patch(body={"metadata": {"managedFields": [{}]}}, name="test-cm", namespace="default",
                    content_type="application/merge-patch+json").to_dict()
    assert obj["metadata"].get("managedFields") is None

    # TestApplyRemovesEmptyManagedFields: an apply that sets nothing leaves no entry
    empty = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "empty-cm", "namespace": "default"}}
    cms.server_side_apply(body=empty, field_manager="apply_test")
    obj = cms.server_side_apply(body=empty, field_manager="apply_test").to_dict()
    assert obj["metadata"].get("managedFields") is None


def test_apply_to_the_status_subresource(live: Live) -> None:
    """An apply to pods/status is recorded in an entry with subresource "status"."""
    path = "/api/v1/namespaces/default/pods/status-pod"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "status-pod"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert live.json("PATCH", path + "?fieldManager=apply_test", pod, APPLY)[0] == 201
    status = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "status-pod"},
              "status": {"conditions": [{"type": "Example", "status": "True"}]}}
    code, obj = live.json("PATCH", path + "/status?fieldManager=status_test", status, APPLY)
    assert code == 200, obj
    assert {"type": "Example", "status": "True"} in obj["status"]["conditions"]
    entry = next(m for m in obj["metadata"]["managedFields"] if m["manager"] == "status_test")
    assert (entry["operation"], entry["subresource"]) == ("Apply", "status")
    assert entry["fieldsV1"] == {"f:status": {"f:conditions": {'k:{"type":"Example"}': {
        ".": {}, "f:status": {}, "f:type": {}}}}}


def test_server_side_apply_after_client_side_apply(live: Live) -> None:
    """An object kubectl applied client-side: a server-side apply of another value conflicts with
    "kubectl-client-side-apply" (kubectl migrates that entry only after a successful apply); applying the same
    values succeeds, and kubectl then moves the client-side entry to its own (csaupgrade, after saving the
    annotation under "kubectl-last-applied"), after which kubectl alone owns the fields and changes them."""
    config = json.loads(json.dumps(DEPLOYMENT))
    config["metadata"]["name"] = "csa"
    live.kubectl("apply", "-f", "-", input=json.dumps(config))
    changed = json.loads(json.dumps(config))
    changed["spec"]["replicas"] = 4
    p = live.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(changed), check=False)
    assert p.returncode == 1
    assert p.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                               "using apps/v1: .spec.replicas\n")
    p = live.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(config))
    assert p.stdout.strip() == "deployment.apps/csa serverside-applied"
    obj = _get(live, "/apis/apps/v1/namespaces/default/deployments/csa")
    assert set(_managers(obj)) == {("kubectl", "Apply"), ("kubectl-last-applied", "Apply")}
    # another manager's apply leaves the annotation as it was (lastappliedupdater.go: kubectl's only)
    annotation = "kubectl.kubernetes.io/last-applied-configuration"
    before = obj["metadata"]["annotations"][annotation]
    labelled = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "csa", "labels": {"x": "y"}}}
    live.kubectl("apply", "--server-side", "--field-manager=labeller", "-f", "-", input=json.dumps(labelled))
    assert _get(live, "/apis/apps/v1/namespaces/default/deployments/csa")["metadata"]["annotations"][annotation] \
        == before
    p = live.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(changed))
    obj = _get(live, "/apis/apps/v1/namespaces/default/deployments/csa")
    assert obj["spec"]["replicas"] == 4
    assert json.loads(obj["metadata"]["annotations"][annotation])["spec"]["replicas"] == 4
    assert obj["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


def test_apply_replaces_the_entry_a_create_sent(live: Live) -> None:
    """TestApplyConvertsManagedFieldsVersion: a create that sends an entry it cannot have written (no
    fieldsType) keeps the creator's own; the named manager's apply then holds exactly what it applied."""
    body = {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "sidecar", "labels": {"app": "nginx"}, "managedFields": [{
                "manager": "sidecar_controller", "operation": "Apply", "apiVersion": "extensions/v1beta1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:sidecar_version": {}}}}}]},
            "spec": {"selector": {"matchLabels": {"app": "nginx"}},
                     "template": {"metadata": {"labels": {"app": "nginx"}},
                                  "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}}
    path = "/apis/apps/v1/namespaces/default/deployments"
    assert live.json("POST", path, body)[0] == 201
    config = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "sidecar", "labels": {"sidecar_version": "release"}},
              "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "sidecar:latest"}]}}}}
    code, obj = live.json("PATCH", path + "/sidecar?fieldManager=sidecar_controller", config, APPLY)
    assert code == 200, obj
    managers = _managers(obj)
    assert set(managers) == {("Python-urllib", "Update"), ("sidecar_controller", "Apply")}
    entry = managers[("sidecar_controller", "Apply")]
    assert (entry["apiVersion"], entry["fieldsType"]) == ("apps/v1", "FieldsV1")
    assert entry["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:sidecar_version": {}}},
        "f:spec": {"f:template": {"f:spec": {"f:containers": {'k:{"name":"sidecar"}': {
            ".": {}, "f:image": {}, "f:name": {}}}}}}}


def test_kubectl_scale_takes_replicas_through_the_scale_subresource(live: Live) -> None:
    """kubectl scale writes deployments/scale: its entry is an Update with subresource "scale" holding
    .spec.replicas, and an apply of the old count then conflicts with it, as the server-side apply
    documentation shows."""
    config = json.loads(json.dumps(DEPLOYMENT))
    config["metadata"]["name"] = "scaled"
    live.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(config))
    live.kubectl("scale", "deployment/scaled", "--replicas=5")
    obj = _get(live, "/apis/apps/v1/namespaces/default/deployments/scaled")
    entry = next(m for m in obj["metadata"]["managedFields"] if m.get("subresource") == "scale")
    assert (entry["manager"], entry["operation"], entry["apiVersion"], entry["fieldsV1"]) == \
        ("kubectl", "Update", "apps/v1", {"f:spec": {"f:replicas": {}}})
    p = live.kubectl("apply", "--server-side", "-f", "-", input=json.dumps(config), check=False)
    assert p.returncode == 1
    assert p.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl" with subresource '
                               '"scale" using apps/v1: .spec.replicas\n')

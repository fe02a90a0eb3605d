"""Custom resources against their CRD's structural schema, over raw HTTP on a manual clock: enum validation,
defaulting on write and on read, pruning and field validation, and the CRD's status subresource (the steps of
test/e2e/apimachinery/custom_resource_definition.go and field_validation.go, asserted the same way)."""

from __future__ import annotations

import json

import pytest

from tests.live.conftest import Live

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GIZMOS = "/apis/example.com/v1/namespaces/default/gizmos"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "gizmos.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
                "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                  "spec": {"type": "object", "properties": {
                                      "color": {"type": "string", "enum": ["red", "blue"]},
                                      "size": {"type": "integer", "default": 3},
                                      "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}},
                                  "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


@pytest.fixture(scope="module")
def frozen(live_factory) -> Live:
    live = live_factory("1.32", clock="manual")
    assert live.json("POST", CRDS, CRD)[0] == 201
    return live


def _gizmo(name: str, **spec) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec}


def test_enum_is_enforced_on_create_update_and_patch(frozen: Live) -> None:
    code, body = frozen.json("POST", GIZMOS, _gizmo("green", color="green"))
    assert code == 422 and body["reason"] == "Invalid"
    assert body["message"] == ('Gizmo.example.com "green" is invalid: spec.color: Unsupported value: "green": '
                               'supported values: "red", "blue"')
    assert body["details"]["causes"] == [{"reason": "FieldValueNotSupported", "field": "spec.color",
                                          "message": 'Unsupported value: "green": supported values: "red", "blue"'}]
    code, body = frozen.json("POST", GIZMOS, _gizmo("tagged", color="red", tags=["a", "c"]))
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.tags[1]"
    code, made = frozen.json("POST", GIZMOS, _gizmo("red", color="red"))
    assert code == 201
    made["spec"]["color"] = "pink"
    code, body = frozen.json("PUT", f"{GIZMOS}/red", made)
    assert code == 422 and 'spec.color: Unsupported value: "pink"' in body["message"]
    code, body = frozen.json("PATCH", f"{GIZMOS}/red", {"spec": {"color": "teal"}}, "application/merge-patch+json")
    assert code == 422 and 'spec.color: Unsupported value: "teal"' in body["message"]
    _, got = frozen.json("GET", f"{GIZMOS}/red")
    assert got["spec"]["color"] == "red" and got["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]


def test_defaults_apply_on_create_and_on_read(frozen: Live) -> None:
    """custom_resource_definition.go "custom resource defaulting for requests and from storage works"."""
    code, first = frozen.json("POST", GIZMOS, _gizmo("first", color="blue"))
    assert code == 201 and first["spec"] == {"color": "blue", "size": 3}
    assert frozen.json("POST", GIZMOS, _gizmo("sized", color="blue", size=7))[1]["spec"]["size"] == 7
    code, _ = frozen.json("PATCH", f"{CRDS}/gizmos.example.com", [
        {"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/shape",
         "value": {"type": "string", "default": "round"}}], "application/json-patch+json")
    assert code == 200
    _, got = frozen.json("GET", f"{GIZMOS}/first")           # stored before the default: defaulted on read
    assert got["spec"] == {"color": "blue", "size": 3, "shape": "round"}
    _, listed = frozen.json("GET", GIZMOS)
    assert all(i["spec"].get("shape") == "round" for i in listed["items"])
    code, _ = frozen.json("PATCH", f"{CRDS}/gizmos.example.com", [
        {"op": "remove", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/shape"}],
        "application/json-patch+json")
    assert code == 200
    assert "shape" not in frozen.json("GET", f"{GIZMOS}/first")[1]["spec"]   # never stored: gone with its default


def test_unknown_fields_by_field_validation(frozen: Live) -> None:
    body = json.dumps(_gizmo("strict", color="red", foo=1)).encode()
    headers = {"Content-Type": "application/json"}
    code, _, raw = frozen.request("POST", f"{GIZMOS}?fieldValidation=Strict", body, headers)
    assert code == 400 and json.loads(raw)["message"] == ('Gizmo in version "v1" cannot be handled as a Gizmo: '
                                                          'strict decoding error: unknown field "spec.foo"')
    code, h, raw = frozen.request("POST", f"{GIZMOS}?fieldValidation=Warn", body, headers)
    assert code == 201 and h["Warning"] == '299 - "unknown field \\"spec.foo\\""'
    assert json.loads(raw)["spec"] == {"color": "red", "size": 3}    # pruned (structural pruning)
    ignored = json.dumps(_gizmo("ignored", color="red", foo=1)).encode()
    code, h, raw = frozen.request("POST", f"{GIZMOS}?fieldValidation=Ignore", ignored, headers)
    assert code == 201 and "Warning" not in h and json.loads(raw)["spec"] == {"color": "red", "size": 3}
    _, got = frozen.json("GET", f"{GIZMOS}/ignored")
    assert got["spec"] == {"color": "red", "size": 3}


def test_crd_status_update_and_patch(frozen: Live) -> None:
    """custom_resource_definition.go "getting/updating/patching custom resource definition status sub-resource
    works": conditions without a type are kept (the JSON patch answered 500 before)."""
    path = f"{CRDS}/gizmos.example.com/status"
    code, crd = frozen.json("GET", path)
    assert code == 200
    crd["status"]["conditions"].append({"type": "", "status": "", "lastTransitionTime": None, "message": "updated"})
    code, updated = frozen.json("PUT", path, crd)
    assert code == 200 and updated["status"]["conditions"][-1]["message"] == "updated"
    code, patched = frozen.json("PATCH", path, [{"op": "add", "path": "/status/conditions",
                                                 "value": [{"message": "patched"}]}], "application/json-patch+json")
    assert code == 200 and [c.get("message") for c in patched["status"]["conditions"]] == ["patched"]
    # the naming and establishing controllers set their conditions again beside it (SetCRDCondition appends)
    conditions = frozen.json("GET", path)[1]["status"]["conditions"]
    assert [(c.get("type"), c.get("message")) for c in conditions] == [
        (None, "patched"), ("NamesAccepted", "no conflicts found"),
        ("Established", "the initial names have been accepted")]

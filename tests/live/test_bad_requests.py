"""Bad requests get the API server's Status (code, reason, message) and the server stays up."""

from __future__ import annotations

import json

import pytest

from tests.live.conftest import Live

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}], "terminationGracePeriodSeconds": 0}}
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture(autouse=True)
def stays_up(live: Live):
    yield
    assert live.request("GET", "/readyz")[0] == 200


def _status(live: Live, method: str, path: str, body: bytes | None, content_type: str = "application/json"):
    code, _, raw = live.request(method, path, body, {"Content-Type": content_type})
    doc = json.loads(raw)
    assert doc["kind"] == "Status" and doc["status"] == "Failure" and doc["code"] == code
    return code, doc.get("reason"), doc["message"]


def test_malformed_json(live: Live) -> None:
    # handlers/rest.go transformDecodeError and summarizeData: a body that is not an object is shown in hex
    assert _status(live, "POST", PODS, b"hello") == (
        400, "BadRequest", "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; "
                           "json parse error: invalid character 'h' looking for beginning of value (68656c6c6f)")


def test_unknown_resource(live: Live) -> None:
    assert _status(live, "GET", "/apis/example.com/v1/namespaces/default/gadgets", None) == (
        404, "NotFound", "the server could not find the requested resource")
    p = live.kubectl("get", "gadgets", check=False)
    assert p.returncode == 1 and p.stderr.strip() == 'error: the server doesn\'t have a resource type "gadgets"'


LEGACY = 'in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"'


def test_unknown_kind(live: Live) -> None:
    # the JSON serializer makes the body's type from the scheme before anything else: a kind, or a group
    # version of a kind, that no built-in type has is notRegisteredErr (apimachinery runtime/error.go)
    body = json.dumps({**POD, "kind": "Gadget"}).encode()
    assert _status(live, "POST", PODS, body) == (
        400, "BadRequest", f'Gadget in version "v1" cannot be handled as a Pod: no kind "Gadget" is registered for '
                           f'version "v1" {LEGACY}')
    body = json.dumps({**POD, "apiVersion": "apps/v1"}).encode()
    assert _status(live, "POST", PODS, body) == (
        400, "BadRequest", f'Pod in version "v1" cannot be handled as a Pod: no kind "Pod" is registered for '
                           f'version "apps/v1" {LEGACY}')
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    body = json.dumps({"apiVersion": "apps/v1", "kind": "Gadget", "metadata": {"name": "g"}}).encode()
    assert _status(live, "POST", deployments, body) == (
        400, "BadRequest", f'Gadget in version "v1" cannot be handled as a Deployment: no kind "Gadget" is '
                           f'registered for version "apps/v1" {LEGACY}')


def test_kind_not_matching_the_url(live: Live) -> None:
    # a registered kind of another type fails its conversion to the endpoint's internal type
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}).encode()
    assert _status(live, "POST", PODS, body) == (
        400, "BadRequest", 'ConfigMap in version "v1" cannot be handled as a Pod: converting (v1.ConfigMap) to '
                           "(core.Pod): unknown conversion")
    # the same kind in another served group version decodes, and the request's scope refuses it
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"}}
    assert _status(live, "POST", "/api/v1/namespaces/default/events", json.dumps(event).encode()) == (
        400, "BadRequest", "the API version in the data (events.k8s.io/v1) does not match the expected API version "
                           "(v1)")


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "gizmos.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "schema": {"openAPIV3Schema": {"type": "object",
                                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_unknown_kind_of_a_custom_resource(live: Live) -> None:
    # a custom resource decodes as unstructured whatever its kind: its strategy's validation refuses another
    # kind (ValidateTypeMeta), naming the object by the kind it has
    assert live.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)[0] == 201
    gizmos = "/apis/example.com/v1/namespaces/default/gizmos"
    live.wait_for("gizmos served", lambda: live.json("GET", gizmos)[0] == 200)
    body = json.dumps({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}).encode()
    assert _status(live, "POST", gizmos, body) == (
        422, "Invalid", 'Gadget.example.com "g" is invalid: kind: Invalid value: "Gadget": must be Gizmo')
    body = json.dumps({"apiVersion": "example.com/v2", "kind": "Gizmo", "metadata": {"name": "g"}}).encode()
    assert _status(live, "POST", gizmos, body) == (
        400, "BadRequest", "the API version in the data (example.com/v2) does not match the expected API version "
                           "(example.com/v1)")
    assert live.json("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.example.com")[0] \
        == 200


def test_invalid_object(live: Live) -> None:
    body = json.dumps({**POD, "metadata": {"name": "bad"}, "spec": {"containers": []}}).encode()
    code, reason, message = _status(live, "POST", PODS, body)
    assert (code, reason) == (422, "Invalid")
    assert message == 'Pod "bad" is invalid: spec.containers: Required value'


def test_stale_resource_version_is_a_conflict(live: Live) -> None:
    cms = "/api/v1/namespaces/default/configmaps"   # nothing but this test writes to it
    code, created = live.json("POST", cms, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ok"}})
    assert code == 201
    rv = created["metadata"]["resourceVersion"]
    stale = {**created, "metadata": {**created["metadata"], "resourceVersion": "1"}, "data": {"a": "b"}}
    assert _status(live, "PUT", f"{cms}/ok", json.dumps(stale).encode()) == (
        409, "Conflict", 'Operation cannot be fulfilled on configmaps "ok": the object has been modified; please '
                         "apply your changes to the latest version and try again")
    pre = json.dumps({"preconditions": {"resourceVersion": "1"}}).encode()
    # rest/delete.go BeforeDelete names the kind, not the resource
    assert _status(live, "DELETE", f"{cms}/ok", pre) == (
        409, "Conflict", 'Operation cannot be fulfilled on ConfigMap "ok": the ResourceVersion in the precondition '
                         f"(1) does not match the ResourceVersion in record ({rv}). The object might have been "
                         "modified")
    code, body = live.json("DELETE", f"{cms}/ok")
    assert code == 200 and body["status"] == "Success" and body["details"]["name"] == "ok"


def test_oversized_body(live: Live) -> None:
    body = b'{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"' + b"x" * (3 * 1024 * 1024) + b'"}}'
    assert _status(live, "POST", "/api/v1/namespaces/default/configmaps", body) == (
        413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")


def test_unknown_patch_type(live: Live) -> None:
    assert _status(live, "PATCH", f"{PODS}/whatever", b"{}", "text/plain") == (
        415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types "
                                     "include: application/json-patch+json, application/merge-patch+json, "
                                     "application/strategic-merge-patch+json, application/apply-patch+yaml")


def test_not_found_and_already_exists(live: Live) -> None:
    assert _status(live, "GET", f"{PODS}/nope", None) == (404, "NotFound", 'pods "nope" not found')
    assert _status(live, "GET", "/apis/apps/v1/namespaces/default/deployments/nope", None) == (
        404, "NotFound", 'deployments.apps "nope" not found')
    assert live.json("POST", PODS, {**POD, "metadata": {"name": "twice"}})[0] == 201
    assert _status(live, "POST", PODS, json.dumps({**POD, "metadata": {"name": "twice"}}).encode()) == (
        409, "AlreadyExists", 'pods "twice" already exists')
    live.json("DELETE", f"{PODS}/twice")


def test_strict_unknown_field(live: Live) -> None:
    body = json.dumps({**POD, "metadata": {"name": "strict"}, "spec": {**POD["spec"], "bogus": True}}).encode()
    assert _status(live, "POST", f"{PODS}?fieldValidation=Strict", body) == (
        400, "BadRequest", 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
                           '"spec.bogus"')

"""fieldValidation=Strict|Warn|Ignore on the live API as upstream words it (KEP-2885; the conformance suite's
test/e2e/apimachinery/field_validation.go and test/integration/apiserver/field_validation_test.go): unknown
and duplicate fields of typed objects and custom resources, JSON and YAML bodies, server-side apply of custom
resources (typed against the CRD's schema, then go-yaml's strict check of the body), and the apiextensions
server's own rules for a custom resource (required properties, unqualified finalizers)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from tests.live.conftest import Live

GROUP = "strict.example.org"


@pytest.fixture(scope="module")
def api(live_factory) -> Live:
    live = live_factory("1.32", clock="manual")
    spec = {
        "type": "object",
        "properties": {
            "size": {"type": "string"},
            "slots": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["slot", "proto"],
                      "items": {"type": "object", "required": ["slot", "proto"],
                                "properties": {"slot": {"type": "integer"}, "proto": {"type": "string"},
                                               "label": {"type": "string"}}}},
            "inner": {"type": "object", "x-kubernetes-embedded-resource": True,
                      "properties": {"metadata": {"type": "object"}, "data": {"type": "object"}}},
        },
    }
    loose = {**spec, "x-kubernetes-preserve-unknown-fields": True}
    for plural, kind, s in (("gadgets", "Gadget", spec), ("loose", "Loose", loose)):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": f"{plural}.{GROUP}"},
               "spec": {"group": GROUP, "scope": "Namespaced",
                        "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                        "versions": [{"name": "v1", "served": True, "storage": True,
                                      "schema": {"openAPIV3Schema": {
                                          "type": "object", "description": f"{kind} for strict decoding tests",
                                          "properties": {"spec": s}}}}]}}
        code, out = live.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert code == 201, out
    return live


def send(live: Live, method: str, path: str, body: str, content_type: str = "application/json"
         ) -> tuple[int, list[str], dict]:
    """The status, every Warning header's text (unquoted) and the JSON answer."""
    req = urllib.request.Request(live.url + path, data=body.encode(), method=method,
                                 headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            code, headers, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        code, headers, raw = e.code, e.headers, e.read()
    warnings = [json.loads(w.split(" - ", 1)[1]) for w in headers.get_all("Warning") or ()]
    return code, warnings, json.loads(raw)


DEPLOYMENT = """{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "%s", "name": "%s", "bogusMeta": 1, "labels": {"run": "w"}},
 "spec": {"zeta": 1, "replicas": 1, "replicas": 2, "zeta": 2, "selector": {"matchLabels": {"run": "w"}},
  "template": {"metadata": {"labels": {"run": "w"}},
   "spec": {"containers": [{"name": "w", "image": "busybox", "image": "busybox:1", "extra": true}]}}}}"""

TYPED_JSON_ERRORS = ['duplicate field "metadata.name"', 'unknown field "metadata.bogusMeta"',
                     'unknown field "spec.zeta"', 'duplicate field "spec.replicas"',
                     'duplicate field "spec.template.spec.containers[0].image"',
                     'unknown field "spec.template.spec.containers[0].extra"']


def test_typed_json_strict_names_unknown_and_duplicate_fields_in_the_order_written(api):
    # sigs.k8s.io/json: as met, each message once (zeta twice is one unknown field, never a duplicate)
    code, _, out = send(api, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict",
                        DEPLOYMENT % ("first", "w1"))
    assert code == 400 and out["reason"] == "BadRequest"
    assert out["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
                              + ", ".join(TYPED_JSON_ERRORS))


def test_typed_json_warn_creates_the_object_with_one_warning_per_error(api):
    code, warnings, out = send(api, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Warn",
                               DEPLOYMENT % ("first", "w2"))
    assert code == 201 and warnings == TYPED_JSON_ERRORS
    assert out["metadata"]["name"] == "w2" and out["spec"]["replicas"] == 2   # the last one wins
    assert "zeta" not in out["spec"]
    code, warnings, _ = send(api, "POST", "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Ignore",
                             DEPLOYMENT % ("first", "w3"))
    assert (code, warnings) == (201, [])


TYPED_YAML = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: y1
  name: y1
  labels: {run: y}
spec:
  zeta: 1
  replicas: 1
  alpha: 2
  replicas: 2
  selector:
    matchLabels: {run: y}
  template:
    metadata:
      labels: {run: y}
    spec:
      containers:
      - {name: y, image: busybox, image: busybox}
"""


def test_typed_yaml_puts_go_yaml_s_repeated_keys_first_then_unknown_fields_by_key(api):
    path = "/apis/apps/v1/namespaces/default/deployments?fieldValidation="
    code, _, out = send(api, "POST", path + "Strict", TYPED_YAML, "application/yaml")
    assert code == 400
    assert out["message"].endswith(
        'strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n'
        '  line 11: key "replicas" already set in map\n  line 19: key "image" already set in map, '
        'unknown field "spec.alpha", unknown field "spec.zeta"')
    code, warnings, _ = send(api, "POST", path + "Warn", TYPED_YAML, "application/yaml")
    assert code == 201
    assert warnings == ['line 5: key "name" already set in map', 'line 11: key "replicas" already set in map',
                        'line 19: key "image" already set in map', 'unknown field "spec.alpha"',
                        'unknown field "spec.zeta"']


GADGET = """{"apiVersion": "strict.example.org/v1", "kind": "%s",
 "metadata": {"name": "%s", "stray": 1, "name": "%s"},
 "spec": {"zz": 1, "size": "s", "size": "m", "aa": 2,
  "slots": [{"slot": 1, "proto": "TCP", "label": "a", "label": "b", "junk": 1}],
  "inner": {"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t", "odd": true}, "data": {}}}}"""


def test_custom_resource_json_strict_lists_duplicates_then_unknown_fields(api):
    # customresource_handler.go: the serializer's duplicates; then metadata, pruned fields (sorted) and
    # embedded metadata
    code, _, out = send(api, "POST", f"/apis/{GROUP}/v1/namespaces/default/gadgets?fieldValidation=Strict",
                        GADGET % ("Gadget", "g0", "g1"))
    assert code == 400
    assert out["message"] == (
        'Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: duplicate field '
        '"metadata.name", duplicate field "spec.size", duplicate field "spec.slots[0].label", unknown field '
        '"metadata.stray", unknown field "spec.aa", unknown field "spec.slots[0].junk", unknown field "spec.zz", '
        'unknown field "spec.inner.metadata.odd"')


def test_custom_resource_preserving_unknown_fields_still_reports_duplicates_and_metadata(api):
    code, warnings, out = send(api, "POST", f"/apis/{GROUP}/v1/namespaces/default/loose?fieldValidation=Warn",
                               GADGET % ("Loose", "l0", "l1"))
    assert code == 201, out
    assert warnings == ['duplicate field "metadata.name"', 'duplicate field "spec.size"',
                        'duplicate field "spec.slots[0].label"', 'unknown field "metadata.stray"',
                        'unknown field "spec.slots[0].junk"', 'unknown field "spec.inner.metadata.odd"']
    assert out["spec"]["zz"] == 1 and out["spec"]["size"] == "m"
    # the metadata is decoded as an ObjectMeta (GetObjectMeta/SetObjectMeta, CoerceWithOptions): what it does not
    # declare is dropped, in the root and in embedded resources
    assert "stray" not in out["metadata"] and out["spec"]["inner"]["metadata"] == {"name": "t"}


def _apply(api: Live, plural: str, name: str, body: str, mode: str = "Strict") -> tuple[int, list[str], dict]:
    return send(api, "PATCH", f"/apis/{GROUP}/v1/namespaces/default/{plural}/{name}?fieldManager=t&"
                              f"fieldValidation={mode}", body, "application/apply-patch+yaml")


def test_apply_of_a_custom_resource_is_typed_against_its_schema(api):
    body = f"""apiVersion: {GROUP}/v1
kind: Gadget
metadata:
  name: a1
  wrong: 1
top: 1
spec:
  inner:
    kind: Thing
    metadata: {{name: t, odd: 1}}
"""
    code, _, out = _apply(api, "gadgets", "a1", body, "Ignore")
    assert code == 500
    assert out["message"] == (
        f"failed to create typed patch object (default/a1; {GROUP}/v1, Kind=Gadget): errors:\n"
        "  .metadata.wrong: field not declared in schema\n  .top: field not declared in schema\n"
        "  .spec.inner.metadata.odd: field not declared in schema")


def test_apply_checks_repeated_keys_after_applying(api):
    body = f"""apiVersion: {GROUP}/v1
kind: Loose
metadata:
  name: a2
spec:
  size: s
  size: m
  other: x
"""
    code, _, out = _apply(api, "loose", "a2", body)
    assert (code, out["message"]) == (400, 'error strict decoding YAML: error converting YAML to JSON: yaml: '
                                            'unmarshal errors:\n  line 7: key "size" already set in map')
    code, warnings, out = _apply(api, "loose", "a2", body, "Warn")
    assert (code, warnings, out["spec"]) == (201, ['line 7: key "size" already set in map'],
                                             {"size": "m", "other": "x"})


def test_custom_resource_rules_required_properties_and_finalizers(api):
    cr = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget",
          "metadata": {"name": "r1", "finalizers": ["cleanup", "gadgets.example.org", "example.org/done"]},
          "spec": {"slots": [{"slot": 1}]}}
    code, _, out = send(api, "POST", f"/apis/{GROUP}/v1/namespaces/default/gadgets", json.dumps(cr))
    assert (code, out["message"]) == (422, f'Gadget.{GROUP} "r1" is invalid: spec.slots[0].proto: Required value')
    cr["spec"]["slots"][0]["proto"] = "UDP"
    code, warnings, out = send(api, "POST", f"/apis/{GROUP}/v1/namespaces/default/gadgets", json.dumps(cr))
    assert code == 201, out
    assert warnings == [
        'metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts '
        'with other finalizer writers',
        'metadata.finalizers: "gadgets.example.org": prefer a domain-qualified finalizer name to avoid accidental '
        'conflicts with other finalizer writers']   # 1.32: the wording naming the path (/) came later


def test_kubectl_explain_describes_a_custom_resource_s_metadata(api):
    out = api.kubectl("explain", "gadgets.metadata").stdout
    assert "Standard object's metadata. More info:" in out and "creationTimestamp\t<string>" in out
    out = api.kubectl("explain", "gadgets.spec.slots").stdout
    assert "proto\t<string> -required-" in out


def _definitions(api: Live) -> dict:
    code, _, raw = api.request("GET", "/openapi/v2")
    assert code == 200
    return json.loads(raw)["definitions"]


def test_openapi_v2_publishes_each_served_version_as_the_e2e_suite_expects(api):
    # crd_publish_openapi.go: definitionName is ToRESTFriendlyName("group/version/kind"); the definition minus
    # apiVersion, kind, metadata and x-kubernetes-group-version-kind is the CRD's schema; a schema preserving
    # unknown fields at its root is a bare object (builder.go buildKubeNative, v2)
    body = {"description": "Widget for publishing tests", "type": "object",
            "properties": {"spec": {"type": "object", "description": "Widget spec",
                                    "properties": {"parts": {"type": "array", "items": {
                                        "type": "object", "required": ["id"],
                                        "properties": {"id": {"type": "string", "description": "Part id."}}}}}}}}
    versions = [{"name": n, "served": True, "storage": n == "v1", "schema": {"openAPIV3Schema": s}}
                for n, s in (("v1", body), ("v2", body),
                             ("v3", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}))]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.publish.example.org"},
           "spec": {"group": "publish.example.org", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"}, "versions": versions}}
    assert api.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    defs = _definitions(api)
    name = "org.example.publish.{}.Widget"
    for version in ("v1", "v2"):
        d = dict(defs[name.format(version)])
        assert d.pop("x-kubernetes-group-version-kind") == [{"group": "publish.example.org", "kind": "Widget",
                                                             "version": version}]
        props = dict(d.pop("properties"))
        assert props.pop("metadata")["description"].startswith("Standard object's metadata.")
        assert sorted(props.pop(k)["type"] for k in ("apiVersion", "kind")) == ["string", "string"]
        assert {**d, "properties": props} == body
    assert defs[name.format("v3")] == {"type": "object", "x-kubernetes-group-version-kind": [
        {"group": "publish.example.org", "kind": "Widget", "version": "v3"}]}

    patch = [{"op": "test", "path": "/spec/versions/1/name", "value": "v2"},
             {"op": "replace", "path": "/spec/versions/1/name", "value": "v2beta1"},
             {"op": "replace", "path": "/spec/versions/2/served", "value": False}]
    code, out = api.json("PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.publish.example.org",
                         patch, content_type="application/json-patch+json")
    assert code == 200, out
    assert sorted(k for k in _definitions(api) if k.startswith("org.example.publish.")) == [
        "org.example.publish.v1.Widget", "org.example.publish.v1.WidgetList",
        "org.example.publish.v2beta1.Widget", "org.example.publish.v2beta1.WidgetList"]


def test_kubectl_create_and_apply_refuse_a_custom_resource_without_a_required_property(api, tmp_path):
    path = tmp_path / "cr.json"
    path.write_text(json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "k1"},
                                "spec": {"slots": [{"slot": 1}]}}))
    for verb in ("create", "apply"):
        p = api.kubectl(verb, "--validate=true", "-n", "default", "-f", str(path), check=False)
        assert p.returncode == 1 and "spec.slots[0].proto: Required value" in p.stderr, p.stderr


def test_a_patch_body_s_own_strict_errors_come_before_the_patched_object_s(api):
    # handlers/patch.go: kjson.UnmarshalStrict of a merge / strategic merge patch into a map, of a JSON patch into
    # []jsonPatchOp (prefixed "json patch"); then the patched object's unknown fields
    dep = json.loads(DEPLOYMENT.replace('"zeta": 2, ', "").replace('"zeta": 1, ', "") % ("p1", "p1"))
    dep["metadata"].pop("bogusMeta")
    dep["spec"]["template"]["spec"]["containers"][0].pop("extra")
    assert send(api, "POST", "/apis/apps/v1/namespaces/default/deployments", json.dumps(dep))[0] == 201
    path = "/apis/apps/v1/namespaces/default/deployments/p1?fieldValidation="
    merge = '{"spec": {"paused": true, "paused": false, "omega": 1, "minReadySeconds": 1, "minReadySeconds": 2}}'
    expect = ['duplicate field "spec.paused"', 'duplicate field "spec.minReadySeconds"', 'unknown field "spec.omega"']
    for ct in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        code, _, out = send(api, "PATCH", path + "Strict", merge, ct)
        assert code == 422 and out["message"].endswith("strict decoding error: " + ", ".join(expect)), out
        code, warnings, _ = send(api, "PATCH", path + "Warn", merge, ct)
        assert (code, warnings) == (200, expect)
    ops = ('[{"op": "replace", "path": "/spec/paused", "value": true, "note": "x"},'
           ' {"op": "add", "path": "/spec/omega", "path": "/spec/psi", "value": {"a": 1, "a": 2}}]')
    code, warnings, out = send(api, "PATCH", path + "Warn", ops, "application/json-patch+json")
    assert code == 200, out
    assert warnings == ['json patch unknown field "[0].note"', 'json patch duplicate field "[1].path"',
                        'json patch duplicate field "[1].value.a"', 'unknown field "spec.psi"']


def test_only_the_finalizers_a_write_adds_are_warned_about(api):
    # strategy.go WarningsOnUpdate: the finalizers the new object has and the old one had not
    base = f"/apis/{GROUP}/v1/namespaces/default/loose"
    cr = {"apiVersion": f"{GROUP}/v1", "kind": "Loose", "metadata": {"name": "f1", "finalizers": ["keep"]}}
    assert send(api, "POST", base, json.dumps(cr))[:2] == (201, [
        'metadata.finalizers: "keep": prefer a domain-qualified finalizer name to avoid accidental conflicts with '
        'other finalizer writers'])
    patch = json.dumps({"metadata": {"finalizers": ["keep", "more", "example.org/fine"]}})
    code, warnings, _ = send(api, "PATCH", base + "/f1", patch, "application/merge-patch+json")
    assert (code, warnings) == (200, [
        'metadata.finalizers: "more": prefer a domain-qualified finalizer name to avoid accidental conflicts with '
        'other finalizer writers'])
    code, warnings, out = send(api, "PATCH", base + "/f1", json.dumps({"metadata": {"finalizers": None}}),
                               "application/merge-patch+json")
    assert (code, warnings) == (200, []) and "finalizers" not in out["metadata"]

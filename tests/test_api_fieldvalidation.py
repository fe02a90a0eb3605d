"""Server-side field validation and pruning (KEP-2885; handlers/rest.go, create.go, runtime/converter.go)."""

from __future__ import annotations

import pytest

from podlife.api.errors import ApiError
from podlife.api.fieldvalidation import decode_body, directive, prune, unknown_fields
from podlife.api.schema import type_schema
from podlife.versions import profile

DEPLOYMENT = type_schema(32, "apps/v1", "Deployment")
BODY = {"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"any-key": "kept"}, "colour": "red"},
        "spec": {"replicas": 1, "foo": {"x": 1}, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always",
                                                       "bogus": 1, "resources": {"limits": {"cpu": "1"}}}]}}}}


def test_unknown_fields_are_named_by_path_in_document_order():
    assert unknown_fields(BODY, DEPLOYMENT) == [
        'unknown field "metadata.colour"', 'unknown field "spec.foo"',
        'unknown field "spec.template.spec.containers[0].bogus"']


def test_prune_keeps_map_keys_and_drops_undeclared_struct_fields():
    out = prune(BODY, DEPLOYMENT)
    assert out["metadata"] == {"name": "web", "labels": {"any-key": "kept"}}
    assert "foo" not in out["spec"]
    assert out["spec"]["template"]["spec"]["containers"][0] == {
        "name": "c", "image": "i", "imagePullPolicy": "Always", "resources": {"limits": {"cpu": "1"}}}
    assert BODY["spec"]["foo"] == {"x": 1}, "the input is left alone"


def test_decode_body_per_directive():
    with pytest.raises(ApiError) as e:
        decode_body(BODY, DEPLOYMENT, "Strict")
    # transformDecodeError: "<kind> in version <version> cannot be handled as a <type>: <strict decoding error>"
    assert (e.value.code, e.value.reason) == (400, "BadRequest")
    assert e.value.message == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "metadata.colour", unknown field "spec.foo", '
        'unknown field "spec.template.spec.containers[0].bogus"')
    obj, warnings = decode_body(BODY, DEPLOYMENT, "Warn")
    assert len(warnings) == 3 and "foo" not in obj["spec"]
    obj, warnings = decode_body(BODY, DEPLOYMENT, "Ignore")
    assert warnings == [] and "foo" not in obj["spec"]


def test_directive_defaults_and_bad_values():
    assert directive(None, profile("1.32")) == "Warn"          # handlers/rest.go fieldValidation: "" means Warn
    assert directive("Strict", profile("1.32")) == "Strict"
    assert directive("Strict",
                     profile("1.24")) == "Ignore"    # before the ServerSideFieldValidation beta: no such parameter
    with pytest.raises(ApiError) as e:
        directive("strict", profile("1.30"), "PatchOptions")
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert e.value.message == ('PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                               '"strict": supported values: "", "Ignore", "Strict", "Warn"')

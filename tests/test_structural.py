"""podlife.api.structural: pruning, defaulting and enum validation of custom resources, each case checked
against apiextensions-apiserver's algorithms (schema/pruning, schema/defaulting, validation)."""

from __future__ import annotations

from podlife.api import structural
from podlife.api.errors import FieldError
from podlife.api.statusdiff import status_records

SCHEMA = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "n": {"type": "integer", "nullable": True, "default": 1},
        "m": {"type": "integer", "default": 2},
        "ports": {"type": "array", "items": {"type": "object", "properties": {
            "protocol": {"type": "string", "default": "TCP"}}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "enum": ["x"]}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"known": {"type": "object", "properties": {"k": {"type": "string"}}}}},
        "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                     "properties": {"spec": {"type": "object"}}}}}}}


def test_prune_keeps_what_the_schema_knows():
    obj = {"apiVersion": "v", "kind": "K", "metadata": {"name": "x"}, "extra": 1,
           "spec": {"mode": "a", "junk": 2, "ports": [{"protocol": "UDP", "junk": 3}], "labels": {"any": "x"},
                    "free": {"anything": [1], "known": {"k": "v", "junk": 4}},
                    "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {"x": 1}, "junk": 5}}}
    structural.prune(obj, SCHEMA)
    assert obj == {"apiVersion": "v", "kind": "K", "metadata": {"name": "x"},
                   "spec": {"mode": "a", "ports": [{"protocol": "UDP"}], "labels": {"any": "x"},
                            "free": {"anything": [1], "known": {"k": "v"}},
                            "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}}}


def test_default_fills_absent_fields_and_non_nullable_nulls():
    obj = {"spec": {"n": None, "m": None, "ports": [{}, {"protocol": "UDP"}]}}
    structural.default(obj, SCHEMA)
    # n is nullable: its null stays; m is not: its null is defaulted (defaulting/algorithm.go isNonNullableNull)
    assert obj == {"spec": {"mode": "a", "n": None, "m": 2, "ports": [{"protocol": "TCP"}, {"protocol": "UDP"}]}}
    assert structural.has_defaults(SCHEMA) and not structural.has_defaults({"type": "object"})


def test_enum_errors_name_the_field_and_the_supported_values():
    errs = structural.enum_errors({"spec": {"mode": "c", "labels": {"k": "y"}}}, SCHEMA)
    assert errs == [FieldError("spec.mode", "Unsupported value", 'supported values: "a", "b"', "c"),
                    FieldError("spec.labels.k", "Unsupported value", 'supported values: "x"', "y")]
    assert str(errs[0]) == 'spec.mode: Unsupported value: "c": supported values: "a", "b"'
    assert structural.enum_errors({"spec": {"mode": 5}}, SCHEMA)[0].value == "5"   # non-strings as JSON


def test_conditions_without_a_type_make_a_record_not_an_error():
    new = {"kind": "CustomResourceDefinition", "metadata": {"name": "c"}, "status": {"conditions": [{"message": "m"}]}}
    records = status_records("CustomResourceDefinition", None, new)
    assert [(r["conditionType"], r["status"]) for r in records] == [("", None)]
    assert status_records("Gizmo", None, {"kind": "Gizmo", "metadata": {"name": "g"}, "status": "odd"}) == []

"""podlife.api.duplicates: repeated keys as sigs.k8s.io/json and go-yaml report them."""

from __future__ import annotations

from podlife.api import decoding
from podlife.api.duplicates import json_duplicates, json_pairs, patch_duplicates, yaml_error


def test_a_body_without_repeated_keys_needs_no_second_reading():
    assert json_pairs(b'{"a": {"b": [{"c": 1}, {"c": 2}]}}') is None
    assert json_pairs(b"not json") is None


def test_repeated_keys_are_named_by_path_in_the_order_written_each_once():
    tree = json_pairs(b'{"x": [{"k": 1, "k": 2, "k": 3}], "a": {"b": 1, "b": 2}, "a": {"b": 3}}')
    assert json_duplicates(tree) == ['duplicate field "x[0].k"', 'duplicate field "a.b"', 'duplicate field "a"']


def test_yaml_lines_count_from_one_and_an_alias_is_read_once():
    found: list[str] = []
    value = decoding.parse_yaml("base: &b {p: 1, p: 2}\nuse: *b\nuse: 3\n", found)
    assert value == {"base": {"p": 2}, "use": 3}
    assert found == ['line 1: key "p" already set in map', 'line 3: key "use" already set in map']
    assert yaml_error(found) == ('yaml: unmarshal errors:\n  line 1: key "p" already set in map\n'
                                 '  line 3: key "use" already set in map')


def test_a_json_patch_s_own_fields():
    body = b'[{"op": "add", "op": "add", "path": "/a", "value": {"v": 1, "v": 2}, "why": 1}, "odd"]'
    assert patch_duplicates(body, json_patch=True) == [
        'json patch duplicate field "[0].op"', 'json patch duplicate field "[0].value.v"',
        'json patch unknown field "[0].why"']
    assert patch_duplicates(b'{"spec": {"a": 1, "a": 2}}', json_patch=False) == ['duplicate field "spec.a"']


def test_custom_finalizer_warnings_by_version_style():
    from podlife.api.validation.objectmeta import custom_finalizer_warnings
    from podlife.versions import profile

    names = ["orphan", "a.example.org", "plain", "example.org/x"]
    assert custom_finalizer_warnings(names, None, profile("1.28").custom_finalizer_warning) == []
    tail = "to avoid accidental conflicts with other finalizer writers"
    assert custom_finalizer_warnings(names, ["plain"], profile("1.32").custom_finalizer_warning) == [
        f'metadata.finalizers: "a.example.org": prefer a domain-qualified finalizer name {tail}']
    assert custom_finalizer_warnings(names, None, profile("1.33").custom_finalizer_warning) == [
        f'metadata.finalizers: "a.example.org": prefer a domain-qualified finalizer name including a path (/) {tail}',
        f'metadata.finalizers: "plain": prefer a domain-qualified finalizer name {tail}']

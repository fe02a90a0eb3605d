"""The live API's request decoder (podlife.api.decoding): Go's decoding words and podlife's limits."""

from __future__ import annotations

import time

import pytest

from podlife.api import decoding
from podlife.api.schema import type_schema

DEPLOYMENT = type_schema(32, "apps/v1", "Deployment")
POD = type_schema(32, "v1", "Pod")


def _err(obj: dict) -> str | None:
    return decoding.type_error(obj, DEPLOYMENT)


@pytest.mark.parametrize("value, words", [
    ("3", "string"), (1.5, "number 1.5"), (3.0, "number 3.0"), (-2147483649, "number -2147483649"),
    (2 ** 70, "number 1180591620717411303424"), (False, "bool"), ({}, "object")])
def test_an_int32_holds_only_integers_in_its_range(value, words):
    assert _err({"spec": {"replicas": value}}) == (
        f"json: cannot unmarshal {words} into Go struct field DeploymentSpec.spec.replicas of type int32")


def test_the_boundaries_and_null_decode():
    assert _err({"spec": {"replicas": 2147483647, "revisionHistoryLimit": -2147483648}}) is None
    assert _err({"spec": {"replicas": None}, "metadata": None}) is None


def test_the_first_error_in_document_order_wins_unless_a_custom_decoder_fails():
    # decode.go saveError keeps the first UnmarshalTypeError; an UnmarshalJSON error ends decoding at once
    assert _err({"spec": {"replicas": "3", "paused": "no"}}).endswith("DeploymentSpec.spec.replicas of type int32")
    assert _err({"spec": {"replicas": "3", "strategy": {"rollingUpdate": {"maxSurge": True}}}}) == (
        "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate."
        "maxSurge of type int32")


def test_go_type_names():
    assert _err({"spec": "x"}) == ("json: cannot unmarshal string into Go struct field Deployment.spec of type "
                                   "v1.DeploymentSpec")
    assert _err({"spec": {"template": {"spec": {"containers": {}}}}}) == (
        "json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type "
        "[]v1.Container")
    assert decoding.type_error({"metadata": {"annotations": []}}, POD) == (
        "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of type map[string]string")
    assert decoding.type_error({"spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}, POD) == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_unknown_fields_are_not_decoded():
    assert _err({"spec": {"replicaz": "3"}, "extra": {"deep": [1, 2]}}) is None


def test_the_unstructured_converter_wraps_integers_as_go_converts_them():
    # runtime/converter.go fromUnstructured: int64 -> int32 is a Go conversion (the low 32 bits)
    assert decoding.convert_unstructured({"spec": {"replicas": 2 ** 32 + 3}}, DEPLOYMENT)["spec"]["replicas"] == 3
    assert decoding.convert_unstructured({"spec": {"replicas": 2 ** 31}}, DEPLOYMENT)["spec"]["replicas"] == -2 ** 31
    assert decoding.convert_unstructured({"spec": {"replicas": 4.0}}, DEPLOYMENT)["spec"]["replicas"] == 4
    for value, words in (("3", "unrecognized type: int32"), (1.5, "cannot convert float64 to int32")):
        with pytest.raises(decoding.DecodeError) as e:
            decoding.convert_unstructured({"spec": {"replicas": value}}, DEPLOYMENT)
        assert str(e.value) == words
    with pytest.raises(decoding.DecodeError) as e:
        decoding.convert_unstructured({"spec": []}, DEPLOYMENT)
    assert str(e.value) == "cannot restore struct from: slice"


def test_untyped_integers_beyond_int64_become_floats():
    assert decoding.untyped_numbers({"a": [2 ** 64, 2 ** 63 - 1, True]}) == {"a": [1.8446744073709552e19,
                                                                                 2 ** 63 - 1, True]}


def test_json_limits():
    assert decoding.parse_json(b'{"n":1180591620717411303424}') == {"n": 2 ** 70}   # exact, not a float
    with pytest.raises(decoding.DecodeError, match="exceeded max depth of 200"):
        decoding.parse_json(b"[" * 201 + b"]" * 201)
    assert decoding.depth_of(decoding.parse_json(b"[" * 200 + b"]" * 200)) == 200
    with pytest.raises(decoding.DecodeError, match="exceeded max depth of 200"):
        decoding.parse_json(b"[" * 5000 + b"]" * 5000)


def test_yaml_limits():
    bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))
    start = time.monotonic()
    with pytest.raises(decoding.DecodeError, match="^yaml: document contains excessive aliasing$"):
        decoding.parse_yaml(bomb)
    with pytest.raises(decoding.DecodeError, match="^yaml: exceeded max depth of 200$"):
        decoding.parse_yaml("a: " + "[" * 100_000 + "]" * 100_000)
    with pytest.raises(decoding.DecodeError, match="^yaml: exceeded max depth of 200$"):
        decoding.parse_yaml("".join(" " * i + "k:\n" for i in range(250)))
    assert time.monotonic() - start < 10
    # aliases a document may use: shared values are copies afterwards, as in the JSON upstream makes
    doc = decoding.parse_yaml("a: &x {k: [1]}\nb: *x\n")
    assert doc == {"a": {"k": [1]}, "b": {"k": [1]}} and doc["a"] is not doc["b"]


def test_yaml_as_sigs_k8s_io_yaml_makes_it_json():
    assert decoding.parse_yaml("1: a\ntrue: b\nnull: c\nt: 2026-01-01\nx: !!binary aGk=\n") == {
        "1": "a", "true": "b", "null": "c", "t": "2026-01-01", "x": "hi"}
    with pytest.raises(decoding.DecodeError, match=r"^json: unsupported value: \+Inf$"):
        decoding.parse_yaml("a: .inf\n")


def test_brackets_inside_strings_and_block_scalars_do_not_count_as_nesting():
    text = "a: |\n  " + "[" * 300 + "\nb: '" + "{" * 300 + "'\nc: \"" + "[" * 300 + "\"\n"
    assert decoding.parse_yaml(text) == {"a": "[" * 300 + "\n", "b": "{" * 300, "c": "[" * 300}


def test_a_data_directory_object_is_checked_as_a_body_is():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 1.1805916207174113e21}}
    assert decoding.stored_problem(32, "Deployment", deployment) == (
        "json: cannot unmarshal number 1.1805916207174113e+21 into Go struct field DeploymentSpec.spec.replicas of "
        "type int32")
    deployment["spec"]["replicas"] = 3
    assert decoding.stored_problem(32, "Deployment", deployment) is None


@pytest.mark.parametrize("text, words", [
    ("a: !!int abc\n", "yaml: cannot decode !!str `abc` as a !!int"),
    ("a: !!int 1.5\n", "yaml: cannot decode !!float `1.5` as a !!int"),
    ("a: !!bool maybe\n", "yaml: cannot decode !!str `maybe` as a !!bool"),
    ("a: !!float x\n", "yaml: cannot decode !!str `x` as a !!float"),
    # PyYAML takes the pattern for a date, go-yaml parses it: a date that does not exist is text
    ("a: !!timestamp 2021-02-30\n", "yaml: cannot decode !!str `2021-02-30` as a !!timestamp"),
    ("? !!int abc\n: 1\n", "yaml: cannot decode !!str `abc` as a !!int"),
])
def test_a_value_its_tag_refuses_is_a_decode_error_as_go_yaml_words_it(text, words):
    """go-yaml resolve.go resolve's failf (sigs.k8s.io/yaml reports it after "error converting YAML to JSON: "):
    a 400 for the body, not a 500 from PyYAML's ValueError."""
    with pytest.raises(decoding.DecodeError) as e:
        decoding.parse_yaml(text)
    assert str(e.value) == words

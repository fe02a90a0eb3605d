"""api.quickcheck: a manifest it passes is one jsonschema finds no error in, and one it fails is one jsonschema
does find an error in (its verdicts checked against jsonschema's on the examples' manifests and on variants of
them with a value of another type, a required field removed or an unknown field added)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from podlife.api import schema
from podlife.api.schema import GroupVersionKind

ROOT = Path(__file__).resolve().parent.parent
VALUES: list[Any] = [None, True, 7, 7.0, 7.5, 2 ** 40, "x", "1Gi", "a quantity?", [], {}, ["a"], {"a": 1},
                     1e308, "2024-05-01T12:00:00Z"]


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("apiVersion"), str) and isinstance(node.get("kind"), str) \
                and node["kind"] != "Scenario":
            yield node
        for v in node.values():
            yield from _objects(v)
    elif isinstance(node, list):
        for v in node:
            yield from _objects(v)


def _manifests() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            out.extend(_objects(doc))
    return out


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, path + (k,))


def _variants(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The object, then for every field path: each other value there, the field removed, an unknown field."""
    yield obj
    for n, path in enumerate(list(_paths(obj))[1:]):
        if path[:1] in (("apiVersion",), ("kind",)):
            continue
        changes = [("set", VALUES[n % len(VALUES)]), ("set", VALUES[(n * 7 + 3) % len(VALUES)]), ("del", None),
                   ("add", None)]
        for how, value in changes:
            out = copy.deepcopy(obj)
            parent = out
            for k in path[:-1]:
                parent = parent[k]
            if how == "set":
                parent[path[-1]] = value
            elif how == "del" and isinstance(parent, dict):
                del parent[path[-1]]
            elif how == "add" and isinstance(parent, dict):
                parent["notAField"] = 1
            yield out


def _cases(minor: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(definition, variant) of every example manifest of a built-in kind, within int64."""
    catalog = schema._catalog(minor)
    for obj in _manifests():
        definition = catalog.get(GroupVersionKind(obj["apiVersion"], obj["kind"]))
        if definition is not None:
            yield from ((definition, v) for v in _variants(obj) if schema._out_of_range(v) is None)


@pytest.mark.parametrize("minor", [25, 30])
def test_quickcheck_agrees_with_jsonschema(minor: int) -> None:
    decided = {True: 0, False: 0, None: 0}
    for definition, variant in _cases(minor):
        verdict = schema._quick(minor).valid(definition, variant)
        validator, _ = schema._builtin_validator(minor, definition)
        errors = list(validator.iter_errors(variant))
        if verdict is not None:
            assert verdict == (not errors), (definition, variant, [e.message for e in errors])
        decided[verdict] += 1
    # every kind of verdict was reached, and most variants are decided here without jsonschema
    assert decided[True] > 100 and decided[False] > 500, decided
    assert decided[None] < decided[True] + decided[False], decided


def test_the_examples_valid_manifests_pass_without_jsonschema() -> None:
    passed = 0
    for obj in _manifests():
        definition = schema._catalog(30).get(GroupVersionKind(obj["apiVersion"], obj["kind"]))
        if definition is not None and not list(schema._builtin_validator(30, definition)[0].iter_errors(obj)):
            assert schema._quick(30).valid(definition, obj) is True, obj
            passed += 1
    assert passed > 20


def _kept_by_check_patch(errors: list[Any]) -> list[Any]:
    """The errors schema.check_patch reports (it drops required fields and nulls: a patch deletes with null)."""
    return [e for e in errors if e.validator != "required" and e.instance is not None
            and not (e.validator in ("oneOf", "anyOf") and any(s.validator == "required" for s in e.context or ()))]


def test_quickcheck_of_a_merge_patch_agrees_with_check_patch() -> None:
    passed = 0
    for definition, variant in _cases(30):
        verdict = schema._quick(30, patch=True).valid(definition, variant)
        kept = _kept_by_check_patch(list(schema._builtin_validator(30, definition)[0].iter_errors(variant)))
        if verdict is True:
            assert not kept, (definition, variant, [e.message for e in kept])
            passed += 1
        elif verdict is False:
            assert kept, (definition, variant)
    assert passed > 500

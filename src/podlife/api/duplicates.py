"""Duplicate keys in a request body, as the API server's strict decoders report them.

Public API:

- ``json_pairs(data) -> Any | None``: the JSON body as a tree whose objects are ``Pairs`` (every key/value in
  the order written, duplicates kept), or None when no object repeats a key (the common case, checked first
  with a cheap pass) or the body is not JSON the standard library reads.
- ``json_duplicates(tree) -> list[str]``: ``duplicate field "spec.foo"`` for each repeated key of every
  object, in document order (sigs.k8s.io/json objectInterface: an unstructured body, e.g. a custom resource).
- ``yaml_duplicates(node) -> list[str]``: ``line 11: key "foo" already set in map`` for each repeated key of
  a YAML node tree (gopkg.in/yaml.v2 decode.go d.mapping, reached through sigs.k8s.io/yaml YAMLToJSONStrict
  and UnmarshalStrict), in document order.
- ``Body``: a create or update body's bytes and, for YAML, those lines (filled by ``bodies.decode``).
- ``patch_duplicates(data, json_patch) -> list[str]``: the strict errors of a merge or JSON patch body itself.
- ``yaml_error(lines) -> str``: those lines as go-yaml's TypeError prints them (``yaml: unmarshal errors:``
  and each line indented by two spaces).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from podlife.engine.slices import pause

MAX_STRICT_ERRORS = 100   # sigs.k8s.io/json kubernetes_patch.go saveStrictError: at most 100, each once


@dataclass
class Body:
    """What a create or update body's strict decoding needs besides the decoded object: its bytes, and for a
    YAML body the repeated keys its reader found."""

    data: bytes = b""
    yaml: bool = False
    yaml_lines: list[str] = field(default_factory=list)


class Pairs(list[tuple[str, Any]]):
    """A JSON object with its keys in the order written, repeated keys kept."""


def json_pairs(data: bytes) -> Any | None:
    repeated = False

    def check(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        d = dict(pairs)
        repeated = repeated or len(d) != len(pairs)
        return d

    try:
        json.loads(data, object_pairs_hook=check)
        return json.loads(data, object_pairs_hook=Pairs) if repeated else None
    except (ValueError, RecursionError):
        return None


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def json_duplicates(tree: Any) -> list[str]:
    out: list[str] = []
    # depth first in document order: a repeated key is met after the values of the keys before it
    stack: list[tuple[Any, str, str | None]] = [(tree, "", None)]   # (value, path, or an error to report)
    while stack:
        pause()
        node, path, error = stack.pop()
        if error is not None:
            out.append(error)
            continue
        steps: list[tuple[Any, str, str | None]] = []
        if isinstance(node, Pairs):
            seen: set[str] = set()
            for key, value in node:
                if key in seen:
                    steps.append((None, "", f'duplicate field "{join(path, key)}"'))
                seen.add(key)
                steps.append((value, join(path, key), None))
        elif isinstance(node, list):
            steps = [(v, f"{path}[{i}]", None) for i, v in enumerate(node)]
        stack += reversed(steps)
    return capped(out)


def capped(errors: list[str]) -> list[str]:
    """Each message once, at most MAX_STRICT_ERRORS of them."""
    return list(dict.fromkeys(errors))[:MAX_STRICT_ERRORS]


def yaml_duplicates(root: yaml.Node | None) -> list[str]:
    """Each node once: go-yaml decodes an aliased mapping again at each alias (repeating its errors), podlife
    reports them at the anchor only."""
    out: list[str] = []
    seen_nodes: set[int] = set()
    stack: list[tuple[yaml.Node | None, str | None]] = [(root, None)] if root is not None else []
    while stack:
        pause()
        node, error = stack.pop()
        if error is not None:
            out.append(error)
            continue
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        steps: list[tuple[yaml.Node | None, str | None]] = []
        if isinstance(node, yaml.MappingNode):
            keys: set[tuple[str, Any]] = set()
            for k, v in node.value:
                ident = (k.tag, k.value) if isinstance(k, yaml.ScalarNode) else (k.tag, id(k))
                if ident in keys:
                    steps.append((None, f'line {k.start_mark.line + 1}: key "{k.value}" already set in map'))
                keys.add(ident)
                steps += [(k, None), (v, None)]
        elif isinstance(node, yaml.SequenceNode):
            steps = [(c, None) for c in node.value]
        stack += reversed(steps)
    return out


def yaml_error(lines: list[str]) -> str:
    return "yaml: unmarshal errors:\n" + "\n".join("  " + line for line in lines)


_JSON_PATCH_FIELDS = ("op", "path", "from", "value")   # handlers/patch.go jsonPatchOp


def patch_duplicates(data: bytes, json_patch: bool) -> list[str]:
    """handlers/patch.go: the strict errors of a patch body itself, reported before the patched object's. A merge
    or strategic merge patch is decoded into a map (its repeated keys); a JSON patch into []jsonPatchOp (fields
    other than op, path, from and value, repeated ones, repeated keys inside a value), each prefixed
    ``json patch``."""
    if not json_patch:
        tree = json_pairs(data)
        return json_duplicates(tree) if tree is not None else []
    try:
        ops = json.loads(data, object_pairs_hook=Pairs)
    except (ValueError, RecursionError):
        return []
    if not isinstance(ops, list):
        return []
    out: list[str] = []
    for i, op in enumerate(ops):
        if not isinstance(op, Pairs):
            continue
        seen: set[str] = set()
        for key, value in op:
            if key not in _JSON_PATCH_FIELDS:
                out.append(f'unknown field "[{i}].{key}"')
                continue
            if key in seen:
                out.append(f'duplicate field "[{i}].{key}"')
            seen.add(key)
            if key == "value":
                out += [e.replace('field "', f'field "[{i}].value.', 1) for e in json_duplicates(value)]
    return ["json patch " + e for e in capped(out)]

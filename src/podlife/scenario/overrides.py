"""``--set PATH=VALUE`` and the keyword overrides (``--seed``, ``--until``, ``--kubernetes-version``) applied to
the raw tree before validation; the values they set remember where they came from."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from podlife.scenario.errors import ScenarioError
from podlife.scenario.fieldpath import count_items, describe, is_under, join_path
from podlife.scenario.yamlread import Builder, Raw, compose

_SET_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[([^\[\]]+)\]")


def _set_segments(expr: str, file: str) -> list[str | int]:
    """`spec.actions[0].at` → ["spec", "actions", 0, "at"]; [key] addresses a map key with dots in it."""
    segments: list[str | int] = []
    pos = 0
    text = "." + expr if expr and expr[0] != "[" else expr
    while pos < len(text):
        m = _SET_SEGMENT.match(text, pos)
        if not m:
            raise ScenarioError(file, None, f"--set {expr}",
                                "invalid path; expected dotted field names with optional [index], "
                                "e.g. spec.actions[0].at")
        name, bracket = m.group(1), m.group(2)
        segments.append(name if name is not None else (int(bracket) if bracket.isdigit() else bracket))
        pos = m.end()
    return segments


def _replace(raw: Raw, segments: Sequence[str | int], value: Any, texts: dict[str, str], origin: str,
             expr: str) -> None:
    """Set the value at segments, creating missing mapping keys."""
    where = f"{origin} {expr}"
    node, path = raw.data, ""
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if isinstance(node, dict):
            key = str(seg)
            child = join_path(path, key)
            if last:
                node[key] = value
            elif not isinstance(node.get(key), (dict, list)):
                if node.get(key) is not None:
                    raise ScenarioError(raw.file, None, where, f"cannot go into {child}: it is "
                                        f"{describe(node[key])}, not a mapping or list")
                node[key] = {}
            node, path = (node[key] if not last else None), child
        elif isinstance(node, list):
            if not isinstance(seg, int):
                raise ScenarioError(raw.file, None, where,
                                    f"{path or 'the scenario'} is a list; expected an [index], not .{seg}")
            if seg >= len(node):
                raise ScenarioError(raw.file, None, where,
                                    f"index {seg} out of range; {path} has {count_items(len(node))}")
            child = join_path(path, seg)
            if last:
                node[seg] = value
            node, path = (node[seg] if not last else None), child
        else:
            raise ScenarioError(raw.file, None, where,
                                f"cannot index {path or 'the scenario'}: it is {describe(node)}, "
                                "not a mapping or list")
    _forget(raw, path)
    raw.origins[path] = origin
    raw.texts.update({(path + p if p.startswith("[") or not p else f"{path}.{p}"): t
                      for p, t in texts.items()})


def _forget(raw: Raw, path: str) -> None:
    for table in (raw.lines, raw.texts, raw.origins):
        for p in [p for p in table if is_under(p, path)]:
            del table[p]


def apply_set(raw: Raw, expr: str) -> None:
    if "=" not in expr:
        raise ScenarioError(raw.file, None, "--set", f'"{expr}": expected PATH=VALUE')
    target, text = expr.split("=", 1)
    if not target:
        raise ScenarioError(raw.file, None, "--set", f'"{expr}": empty path; expected PATH=VALUE')
    segments = _set_segments(target, raw.file)
    canonical = ""
    for seg in segments:
        canonical = join_path(canonical, seg)
    try:
        nodes = compose(text, raw.file)
        lines: dict[str, int] = {}
        texts: dict[str, str] = {}
        value = Builder(raw.file, lines, texts).tree(nodes[0]) if nodes else None
    except ScenarioError as exc:
        raise ScenarioError(raw.file, None, f"--set {canonical}",
                            f'invalid value "{text}": {exc.message}') from None
    if len(nodes) > 1:
        raise ScenarioError(raw.file, None, f"--set {canonical}", "expected one YAML value")
    if not isinstance(raw.data, dict):
        return  # validation reports the root
    _replace(raw, segments, value, texts, "--set", canonical)


def apply_keyword(raw: Raw, field: str, value: Any, flag: str) -> None:
    if not isinstance(raw.data, dict):
        return
    spec = raw.data.get("spec")
    if spec is None:
        raw.data["spec"] = {}
    elif not isinstance(spec, dict):
        return  # validation reports spec
    _replace(raw, ["spec", field], value, {}, flag, f"spec.{field}")



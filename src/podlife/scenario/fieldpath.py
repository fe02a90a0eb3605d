"""Field paths as k8s field.Path prints them (``a.b``, ``a[0]``, ``a[some.key]``), and how a value is shown in a
message."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def join_path(path: str, key: str | int) -> str:
    """Child path, as k8s field.Path prints it: a.b, a[0], a[some.key]."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key}]"


def parent_path(path: str) -> str:
    if path.endswith("]"):
        return path[:path.rfind("[")]
    return path[:max(path.rfind("."), 0)]


def is_under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def schema_path(path: str, segments: Sequence[str | int]) -> str:
    """``path`` followed by the segments of a schema error's path."""
    for seg in segments:
        path = join_path(path, seg)
    return path


def count_items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= SHOWN else f'"{value[:SHOWN]}…" ({len(value):,} characters)'
    return repr(value)


SHOWN = 80   # characters of a value quoted in a message

"""The validation helpers every part of the scenario uses: shapes, scalars, names and quantities, each failure a
ScenarioError naming the file, the line and the field path."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from podlife.api.quantity import parse_quantity
from podlife.scenario.durations import parse_duration
from podlife.scenario.errors import ScenarioError
from podlife.scenario.fieldpath import describe, join_path, parent_path
from podlife.scenario.model import Source
from podlife.scenario.yamlread import Raw

CONDITION_STATUSES = ("True", "False", "Unknown")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_QUANTITY = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?\Z")
KIND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9.]*\Z")
DURATION_HINT = "e.g. 500ms, 3s, 1m30s, 2h or a number of seconds"
_LABEL_HINT = "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
SUBDOMAIN_HINT = ("lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, "
                   "at most 253 characters")


class Check:
    """Validation helpers that turn a field path into a ScenarioError with its line."""

    def __init__(self, raw: Raw):
        self.raw = raw
        self.file = raw.file
        self.warnings: list[str] = []

    # -- locations
    def line(self, path: str) -> int | None:
        p = path
        while True:
            if p in self.raw.origins:
                return None
            if p in self.raw.lines:
                return self.raw.lines[p]
            if not p:
                return None
            p = parent_path(p)

    def origin(self, path: str) -> str | None:
        p = path
        while True:
            if p in self.raw.origins:
                return self.raw.origins[p]
            if not p:
                return None
            p = parent_path(p)

    def error(self, path: str, message: str) -> ScenarioError:
        origin = self.origin(path)
        return ScenarioError(self.file, self.line(path), path,
                             f"{message} (set by {origin})" if origin else message)

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(str(self.error(path, message)))

    def source(self, path: str) -> Source:
        return Source(self.file, self.line(path), path)

    # -- shapes
    def mapping(self, value: Any, path: str, known: Sequence[str] | None = None,
                optional: bool = True) -> dict[str, Any]:
        if value is None and optional:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"expected a mapping, got {describe(value)}")
        if known is not None:
            self.known(value, path, known)
        return value

    def known(self, mapping: dict[str, Any], path: str, known: Iterable[str]) -> None:
        known = list(known)
        for key in mapping:
            if key not in known:
                raise self.error(join_path(path, key), f"unknown field; known fields: {', '.join(known)}")

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(path, f"expected a list, got {describe(value)}")
        return value

    def required(self, mapping: dict[str, Any], key: str, path: str, what: str) -> Any:
        if mapping.get(key) is None:
            raise self.error(join_path(path, key), f"required field missing; expected {what}")
        return mapping[key]

    def string(self, value: Any, path: str, what: str = "a string") -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected {what}, got {describe(value)}")
        return value

    def nonempty(self, value: Any, path: str, what: str) -> str:
        s = self.string(value, path, what)
        if not s:
            raise self.error(path, f"expected {what}, got an empty string")
        return s

    def integer(self, value: Any, path: str, minimum: int | None = None, bits: int = 64) -> int:
        """An integer >= minimum that fits the Go field it stands for (int64, or int32)."""
        what = ("an integer" if minimum is None else f"an integer >= {minimum}") + (" (int32)" if bits == 32 else "")
        if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
            raise self.error(path, f"expected {what}, got {describe(value)}")
        if not -2 ** (bits - 1) <= value < 2 ** (bits - 1):
            raise self.error(path, f"{value} does not fit in an int{bits}; expected {what}")
        return value

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise self.error(path, f"expected a finite number >= 0, got {describe(value)}")
        return float(value)

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {describe(value)}")
        return value

    def duration(self, value: Any, path: str) -> float:
        if isinstance(value, str):
            try:
                seconds = parse_duration(value)
            except ValueError:
                raise self.error(path, f"{describe(value)} is not a duration; expected {DURATION_HINT}") from None
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                seconds = parse_duration(value)
            except ValueError:
                raise self.error(path, f"{value!r} is not a duration; expected {DURATION_HINT}") from None
        else:
            raise self.error(path, f"expected a duration ({DURATION_HINT}), got {describe(value)}")
        if seconds < 0:
            raise self.error(path, f"{describe(value)} is negative; expected a duration >= 0")
        return seconds

    def one_of(self, value: Any, path: str, allowed: Sequence[str], what: str) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise self.error(path, f"{describe(value)} is not a valid {what}; expected one of: "
                                   f"{', '.join(allowed)}")
        return value

    def status(self, value: Any, path: str) -> str:
        """"True"/"False"/"Unknown"; an unquoted YAML true/false is taken as "True"/"False"."""
        if isinstance(value, bool):
            return "True" if value else "False"
        return self.one_of(value, path, CONDITION_STATUSES, "status")

    def dns_label(self, value: Any, path: str) -> str:
        s = self.string(value, path, "a DNS-1123 label")
        if len(s) > 63 or not DNS_LABEL.match(s):
            raise self.error(path, f'"{s}" is not a valid DNS-1123 label; expected {_LABEL_HINT}')
        return s

    def dns_subdomain(self, value: Any, path: str) -> str:
        s = self.string(value, path, "a DNS-1123 subdomain")
        if not is_subdomain(s):
            raise self.error(path, f'"{s}" is not a valid DNS-1123 subdomain; expected {SUBDOMAIN_HINT}')
        return s

    def quantity(self, value: Any, path: str) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
            raise self.error(path, f"{value} does not fit in an int64; expected a quantity such as 1Gi")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # cpu: 8 is a quantity too
        if not isinstance(value, str) or not _QUANTITY.match(value) or value.startswith("-"):
            raise self.error(path, f"{describe(value)} is not a quantity; expected e.g. 250m, 2, 1Gi, 500Mi")
        try:
            parse_quantity(value)
        except ValueError as e:
            raise self.error(path, f"{describe(value)} is not a quantity: {e}") from None
        return value

    def resource_name(self, key: str, path: str) -> None:
        """validateResourceName for node capacity: a standard name or a fully-qualified extended resource."""
        standard = key in ("cpu", "memory", "pods", "ephemeral-storage", "storage") or key.startswith("hugepages-")
        prefix, slash, name = key.partition("/")
        if standard or (slash and "." in prefix and is_subdomain(prefix) and is_qualified_name(name)):
            return
        raise self.error(path, "unknown resource name; expected cpu, memory, pods, ephemeral-storage, "
                               "hugepages-<size> or a fully-qualified extended resource such as nvidia.com/gpu")

    def str_map(self, value: Any, path: str, check_key: Callable[[str, str], None] | None = None,
                check_value: Callable[[Any, str], str] | None = None) -> dict[str, str]:
        out = {}
        for key, v in self.mapping(value, path).items():
            child = join_path(path, key)
            if check_key:
                check_key(key, child)
            out[key] = check_value(v, child) if check_value else self.string(v, child)
        return out

    def label_key(self, key: str, path: str) -> None:
        if not is_qualified_name(key):
            raise self.error(path, f'"{key}" is not a valid label key; expected a name (at most 63 '
                                   "characters: letters, digits, '-', '_', '.') with an optional DNS "
                                   "subdomain prefix and '/'")

    def label_value(self, value: Any, path: str) -> str:
        s = self.string(value, path, "a string (label values are strings: quote numbers and booleans)")
        if s and (len(s) > 63 or not _QUALIFIED_NAME.match(s)):
            raise self.error(path, f'"{s}" is not a valid label value; expected at most 63 characters: '
                                   "letters, digits, '-', '_', '.', starting and ending with a letter or digit")
        return s


def is_subdomain(s: str) -> bool:
    return len(s) <= 253 and bool(_DNS_SUBDOMAIN.match(s))


def is_qualified_name(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in key and not is_subdomain(prefix):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))



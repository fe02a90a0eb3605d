"""What every group's validation shares: the field-error constructors with upstream wording
(k8s.io/apimachinery/pkg/util/validation/field), the common messages and limits, Go-style reads of a decoded
field (absent means the zero value), the small value checks several groups call (IP, CIDR, port, quantity,
base64, path segment) and semantic equality (apiequality.Semantic.DeepEqual)."""

from __future__ import annotations

import base64
import binascii
import ipaddress
from collections.abc import Callable
from typing import TypeGuard

from podlife.api import names, quantity
from podlife.api.errors import FieldError

REQUIRED, INVALID, UNSUPPORTED = "Required value", "Invalid value", "Unsupported value"
DUPLICATE, FORBIDDEN, NOT_FOUND = "Duplicate value", "Forbidden", "Not found"
TOO_MANY = "Too many"
TOO_LONG = "Too long"

IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
IS_NOT_POSITIVE_ERROR_MSG = "must be greater than zero"
FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"
MAX_INT32 = 2**31 - 1
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}

NameFn = Callable[[str, bool], list[str]]
Errs = list[FieldError]


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, REQUIRED, detail)


def invalid(path: str, value: object, detail: str) -> FieldError:
    return FieldError(path, INVALID, detail, value)


def not_supported(path: str, value: object, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(f'"{v}"' for v in supported) if supported else ""
    return FieldError(path, UNSUPPORTED, detail, value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, FORBIDDEN, detail)


def as_dict(x: object) -> dict:
    return x if isinstance(x, dict) else {}


def as_list(x: object) -> list:
    return x if isinstance(x, list) else []


def as_str(x: object) -> str:
    """A Go string field: absent means ""; a non-string is kept visible via str()."""
    return x if isinstance(x, str) else ("" if x is None else str(x))


def as_int(x: object) -> int:
    """A Go integer field: absent means 0."""
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def nonnegative(value: object, path: str) -> Errs:
    """ValidateNonnegativeField."""
    return [invalid(path, value, IS_NEGATIVE_ERROR_MSG)] if as_int(value) < 0 else []


def invalid_each(path: str, value: object, messages: list[str]) -> Errs:
    return [invalid(path, value, m) for m in messages]


def ip_errors(value: object, path: str) -> Errs:
    import ipaddress

    try:
        ipaddress.ip_address(as_str(value))
    except ValueError:
        return [invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


# --- semantic equality (apiequality.Semantic.DeepEqual on dicts) ------------------------------

_QUANTITY_MAPS = frozenset({"limits", "requests", "overhead", "capacity", "allocatable"})


def normalize(x: object, quantities: bool = False) -> object:
    """Drop empty/None values (nil == empty upstream) and compare quantities by value."""
    if isinstance(x, dict):
        out = {}
        for k in sorted(x):
            v = normalize(x[k], k in _QUANTITY_MAPS)
            if v not in (None, {}, []):
                out[k] = v
        if quantities:
            return {k: (quantity.parse_quantity(v) if quantity.is_quantity(v) else v) for k, v in out.items()}
        return out
    if isinstance(x, list):
        return [normalize(v) for v in x]
    return x


def semantic_equal(a: object, b: object) -> bool:
    return a == b or normalize(a) == normalize(b)


def base64_errors(value: object) -> str | None:
    """A []byte field's JSON form is base64 (encoding/json: "illegal base64 data at input byte N")."""
    if not isinstance(value, str):
        return None
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        bad = next((i for i, ch in enumerate(value) if not (ch.isalnum() or ch in "+/=")), len(value) - len(value) % 4)
        return f"illegal base64 data at input byte {bad}"
    return None


def path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """ValidatePathSegmentName (RBAC objects): anything that can be a URL path segment."""
    out = []
    if not prefix and name in (".", ".."):
        out.append(f"may not be '{name}'")
    for bad in ("/", "%"):
        if bad in name:
            out.append(f"may not contain '{bad}'")
    return out


def quantity_errors(value: object, path: str, *, positive: bool = False) -> Errs:
    """A quantity that parses and is not negative (ValidateResourceQuantityValue), or > 0."""
    try:
        q = quantity.parse(value)  # type: ignore[arg-type]
    except quantity.QuantityError as e:
        return [invalid(path, value, str(e))]
    if positive and q.value <= 0:
        return [invalid(path, str(q), "must be greater than zero")]
    if q.value < 0:
        return [invalid(path, str(q), "must be greater than or equal to 0")]
    return []


def cidr_errors(value: object, path: str) -> Errs:
    try:
        ipaddress.ip_network(as_str(value), strict=False)
        if "/" not in as_str(value):
            raise ValueError
    except ValueError:
        return [invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    return []


def port_number_errors(value: object, path: str) -> Errs:
    return invalid_each(path, value, names.port_num_errors(as_int(value)))


def too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, "Too long", f"must have at most {limit} bytes")

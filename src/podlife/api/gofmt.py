"""Go's renderings of decoded JSON values, for error messages that print them as upstream does.

``go_quote`` is strconv.Quote (fmt ``%q``), ``go_value`` is fmt ``%v`` of a ``map[string]interface{}`` tree
(maps print with sorted keys as ``map[k:v]``, lists as ``[a b]``, null as ``<nil>``), ``go_json`` is
encoding/json.Marshal of such a tree (sorted keys, compact, ``<``, ``>`` and ``&`` escaped), ``rfc3339`` a
metav1.Time decoded and encoded again.
"""

from __future__ import annotations

import json
import math
import unicodedata
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v",
            "\\": "\\\\", '"': '\\"'}


def _printable(c: str) -> bool:
    # unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space
    return c == " " or unicodedata.category(c)[0] in "LMNPS"


def go_quote(s: str) -> str:
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'   # printable ASCII (space to ~) stands for itself but for these two
    return _quote(s)


def _quote(s: str) -> str:
    out = ['"']
    for c in s:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif _printable(c):
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        elif ord(c) < 0x10000:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    out.append('"')
    return "".join(out)


def go_float(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64), which fmt %v uses: shortest digits, exponent below 1e-4 and
    from 1e6 on (shortest precision decides with 6)."""
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if math.isnan(f):
        return "NaN"
    if f == 0:
        return "-0" if math.copysign(1, f) < 0 else "0"
    digits, exp = _shortest(abs(f))
    sign = "-" if f < 0 else ""
    x = exp + len(digits) - 1   # decimal exponent of the first digit
    if x < -4 or x >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if exp >= 0:
        return sign + digits + "0" * exp
    point = len(digits) + exp
    if point > 0:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}0.{'0' * -point}{digits}"


def _shortest(f: float) -> tuple[str, int]:
    """The shortest round-trip digits of ``f`` (repr's) and the exponent of the last one."""
    sign, digits, exp = Decimal(repr(f)).normalize().as_tuple()
    return "".join(map(str, digits)), int(exp)


def go_value(v: Any) -> str:
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_float(v)
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_value(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_value(x) for x in v) + "]"
    return str(v)


def go_json(v: Any) -> str:
    text = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def go_type(v: Any) -> str:
    """reflect.TypeOf of a decoded JSON value (ints decoded with UseNumber/PreserveInts are int64)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def rfc3339(t: str) -> str:
    """A metav1.Time as the API server stores it after decoding: UnmarshalJSON parses RFC 3339 (any offset,
    any fraction), MarshalJSON writes it in UTC with whole seconds. So a client sending back
    ``2026-01-01T00:00:00+00:00`` (the Python client's isoformat) writes the time it read. A string that
    does not parse is left for validation."""
    if len(t) == 20 and t.endswith("Z"):
        return t
    try:
        when = datetime.fromisoformat(t.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return t
    if when.tzinfo is None:
        return t
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

"""Go-style durations (time.ParseDuration / time.Duration.String), in float seconds.

Values are handled as whole nanoseconds internally, as Go does, so "1.1s" + "100ms" style arithmetic done by
callers on the returned floats starts from the correctly rounded value.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

_NS_PER_UNIT = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign, as Go prints it
    "\u03bcs": 1_000,  # U+03BC Greek mu, also accepted by Go
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_MAX_NS = 2**63 - 1  # Go's time.Duration is an int64 of nanoseconds
_BARE_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\Z")
_TERM = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")


def parse_duration(s: str | int | float) -> float:
    """Seconds in a Go duration ("500ms", "1m30s", "-2h", "1.5s", "100us", "0") or a bare number of seconds.

    Ints and floats are taken as seconds. Raises ValueError for anything else (booleans, empty strings,
    unknown units, a missing unit between terms as in "1m30", NaN, infinities, more than Go's ~292 years).
    """
    if isinstance(s, bool):
        raise ValueError(f"invalid duration {s!r}")
    if isinstance(s, (int, float)):
        if not math.isfinite(s):
            raise ValueError(f"invalid duration {s!r}")
        return float(s)
    if not isinstance(s, str):
        raise ValueError(f"invalid duration {s!r}")
    text = s
    sign = 1
    if text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return 0.0
    if _BARE_NUMBER.match(text):
        value = float(text)
        if not math.isfinite(value):   # more digits than a float holds
            raise ValueError(f'invalid duration "{s}"')
        return sign * value
    if not text:
        raise ValueError(f'invalid duration "{s}"')
    total = 0
    while text:
        m = _TERM.match(text)
        if m is None:
            raise ValueError(f'invalid duration "{s}"')
        whole, frac, unit = m.group(1), m.group(2) or "", m.group(3)
        if not whole and not frac:
            raise ValueError(f'invalid duration "{s}"')
        if not unit:
            raise ValueError(f'missing unit in duration "{s}"')
        if unit not in _NS_PER_UNIT:
            raise ValueError(f'unknown unit "{unit}" in duration "{s}"')
        per = _NS_PER_UNIT[unit]
        total += int(whole or 0) * per
        if frac:
            total += int(frac) * per // 10 ** len(frac)  # Go truncates below a nanosecond
        if total > _MAX_NS:
            raise ValueError(f'invalid duration "{s}"')
        text = text[m.end():]
    return sign * total / 1e9


def _to_ns(seconds: float) -> int:
    # Decimal(str()) keeps what the float prints as: 0.1 → 100000000 ns, not 100000000.00000001.
    return int(round(Decimal(str(seconds)) * 1_000_000_000))


def _split(v: int, prec: int) -> tuple[int, str]:
    """v / 10**prec as (integer part, ".fraction" without trailing zeros, or "")."""
    whole, frac = divmod(v, 10**prec)
    digits = f"{frac:0{prec}d}".rstrip("0")
    return whole, f".{digits}" if digits else ""


def format_duration(seconds: float) -> str:
    """Go's time.Duration.String: 90 → "1m30s", 0.5 → "500ms", 300 → "5m0s", 7200 → "2h0m0s", 0 → "0s"."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise ValueError(f"not a number of seconds: {seconds!r}")
    ns = _to_ns(seconds)
    sign, u = ("-" if ns < 0 else ""), abs(ns)
    if u == 0:
        return "0s"
    if u < 1_000:
        return f"{sign}{u}ns"
    if u < 1_000_000:
        whole, frac = _split(u, 3)
        return f"{sign}{whole}{frac}\u00b5s"
    if u < 1_000_000_000:
        whole, frac = _split(u, 6)
        return f"{sign}{whole}{frac}ms"
    secs, frac = _split(u, 9)
    out = f"{secs % 60}{frac}s"
    minutes = secs // 60
    if minutes:
        out = f"{minutes % 60}m{out}"
        if minutes // 60:
            out = f"{minutes // 60}h{out}"
    return sign + out

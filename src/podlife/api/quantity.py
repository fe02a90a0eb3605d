"""Kubernetes resource quantities, exact.

A port of k8s.io/apimachinery/pkg/api/resource (quantity.go: ParseQuantity,
parseQuantityString, CanonicalizeBytes; suffix.go; amount.go AsCanonicalBytes)
onto ``fractions.Fraction``.  No floating point is used anywhere.
"""

from __future__ import annotations

from functools import lru_cache

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeGuard

DECIMAL_SI = "DecimalSI"  # 12M  (12 * 10^6)
BINARY_SI = "BinarySI"  # 12Mi (12 * 2^20)
DECIMAL_EXPONENT = "DecimalExponent"  # 12e6

SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC_BY_EXP = {e: s for s, e in _DEC_SUFFIXES.items()}
_BIN_BY_EXP = {e // 10: s for s, e in _BIN_SUFFIXES.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANO = Fraction(1, 10**9)
_MAX_ALLOWED = Fraction(2**63 - 1)


class QuantityError(ValueError):
    """A string that ParseQuantity rejects; ``str()`` is the upstream error text."""

    def __init__(self, value: object, message: str):
        super().__init__(message)
        self.value = value
        self.message = message


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity: exact value plus the suffix family it was written in."""

    value: Fraction
    format: str

    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    def milli_value(self) -> int:
        """MilliValue: value * 1000, a fraction rounded away from zero (negativeScaleInt64)."""
        return _away_from_zero(self.value * 1000)

    def int_value(self) -> int:
        """Value: the integer value, a fraction rounded away from zero."""
        return _away_from_zero(self.value)


def _away_from_zero(v: Fraction) -> int:
    return math.ceil(v) if v >= 0 else -math.ceil(-v)


def _split(s: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix); raises on bad format."""
    positive, pos, end = True, 0, len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] == "+"
        pos += 1
    while pos < end and s[pos] == "0":  # strip leading zeros
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[start:pos] or "0"
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        start = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[start:pos]
        if pos >= end:
            return positive, s, num, denom, ""
    value = s[:pos]
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(s, ERR_FORMAT_WRONG)
    return positive, value, num, denom, s[suffix_start:]


MAX_EXPONENT = 60   # 10^60 dwarfs any resource amount; beyond it a quantity is refused, not computed


def _interpret(suffix: str) -> tuple[int, int, str] | None:
    """suffixHandler.interpret: (base, exponent, format) or None."""
    if suffix in _DEC_SUFFIXES:
        return 10, _DEC_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BIN_SUFFIXES:
        return 2, _BIN_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        exp = suffix[1:]
        body = exp[1:] if exp[0] in "+-" else exp
        if body and all(c in _DIGITS for c in body) and len(body) <= 10:   # strconv.ParseInt(…, 10, 32)
            e = int(exp)
            if -(2 ** 31) <= e < 2 ** 31:
                return 10, e, DECIMAL_EXPONENT
    return None


def _round_up(v: Fraction, unit: Fraction) -> Fraction:
    """Round the magnitude up to a multiple of ``unit`` (inf.RoundUp after taking abs)."""
    mag = math.ceil(abs(v) / unit) * unit
    return mag if v >= 0 else -mag


def parse(v: str | int | float | Fraction) -> Quantity:
    """Parse a quantity (cached for strings: the same few values recur on every pod)."""
    if isinstance(v, str):
        return _parse_str(v)
    return _parse(v)


@lru_cache(maxsize=4096)
def _parse_str(v: str) -> Quantity:
    return _parse(v)


def _parse(v: str | int | float | Fraction) -> Quantity:
    """ParseQuantity, accepting ints and floats the way a JSON number is read."""
    if isinstance(v, bool) or not isinstance(v, (str, int, float, Fraction)):
        raise QuantityError(v, ERR_FORMAT_WRONG)
    if isinstance(v, Fraction):
        return Quantity(_round_up(v, _NANO), DECIMAL_SI)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise QuantityError(v, ERR_FORMAT_WRONG)
        v = repr(v)
    s = str(v).strip() if not isinstance(v, str) else v
    if not s:
        raise QuantityError(v, ERR_FORMAT_WRONG)
    if s == "0":
        return Quantity(Fraction(0), DECIMAL_SI)
    positive, value, num, denom, suf = _split(s)
    interpreted = _interpret(suf)
    if interpreted is None:
        raise QuantityError(v, ERR_SUFFIX)
    base, exponent, fmt = interpreted
    if abs(exponent) > MAX_EXPONENT:
        # upstream keeps such a value as an arbitrary-precision decimal; exact arithmetic on it here would not end
        raise QuantityError(v, f"an exponent of {exponent} is beyond what podlife computes (at most "
                               f"±{MAX_EXPONENT})")
    try:
        amount = Fraction(int(num + denom or "0"), 10 ** len(denom))
    except ValueError as exc:  # pragma: no cover - the scanner only admits digits
        raise QuantityError(v, ERR_NUMERIC) from exc
    amount *= Fraction(base) ** exponent
    if amount != 0:
        amount = _round_up(amount, _NANO)
    if fmt == BINARY_SI and amount > _MAX_ALLOWED:
        amount = _MAX_ALLOWED
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    return Quantity(amount if positive else -amount, fmt)


def parse_quantity(v: str | int | float | Fraction) -> Fraction:
    """The exact value of a quantity; raises QuantityError (a ValueError) on bad input."""
    return parse(v).value


def is_quantity(v: object) -> TypeGuard[str | int | float | Fraction]:
    try:
        parse(v)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True


def cpu_millis(v: str | int | float) -> int:
    """MilliValue: millicores, rounded up (away from zero)."""
    return parse(v).milli_value()


def to_bytes(v: str | int | float) -> int:
    """Value: the integer value (bytes for memory), rounded up (away from zero)."""
    return parse(v).int_value()


def round_up_milli(q: Quantity) -> Quantity:
    """Quantity.RoundUp(-3), as SetDefaults_ResourceList applies to every v1 resource list."""
    return Quantity(_round_up(q.value, Fraction(1, 1000)), q.format) if q.value else q


def canonical(v: str | int | float | Quantity, *, milli: bool = False) -> str:
    """Quantity.String(): the canonical form the API server serializes (e.g. "1.5" -> "1500m")."""
    q = v if isinstance(v, Quantity) else parse(v)
    if milli:
        q = round_up_milli(q)
    return str(q)


# --- canonical formatting (CanonicalizeBytes) -----------------------------------


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    while value != 0 and value % base == 0:
        value //= base
        times += 1
    return value, times


def _canonical(value: Fraction, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI:
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = DECIMAL_SI  # avoid rounding: show as DecimalSI
        else:
            mantissa, exp = _remove_factors(int(value), 1024)
            while exp > 6:  # beyond Ei: fold back into the mantissa
                mantissa, exp = mantissa * 1024, exp - 1
            return f"{mantissa}{_BIN_BY_EXP.get(exp, '')}"
    # AsCanonicalBytes: integer mantissa, base-10 exponent a multiple of 3.
    if (10**9) % value.denominator:
        value = _round_up(value, _NANO)
    exp = 0
    scaled = value
    while scaled.denominator != 1:
        scaled *= 10
        exp -= 1
    mantissa, times = _remove_factors(int(scaled), 10)
    exp += times
    shift = exp % 3  # Python's % is floor-mod: move down to a multiple of 3
    mantissa, exp = mantissa * 10**shift, exp - shift
    if fmt == DECIMAL_EXPONENT:
        return str(mantissa) if exp == 0 else f"{mantissa}e{exp}"
    while exp > 18:  # beyond E: fold back into the mantissa
        mantissa, exp = mantissa * 1000, exp - 3
    return f"{mantissa}{_DEC_BY_EXP[exp]}"


def format_bytes(n: int) -> str:
    """A byte count with the largest exact binary suffix: 209715200 -> "200Mi", 1000 -> "1000".

    Same as Quantity.String() for BinarySI except that values below 1024 stay
    plain integers (upstream would print 1000 as "1k").
    """
    n = int(n)
    mantissa, exp = _remove_factors(abs(n), 1024)
    while exp > 6:
        mantissa, exp = mantissa * 1024, exp - 1
    sign = "-" if n < 0 else ""
    return f"{sign}{mantissa}{_BIN_BY_EXP.get(exp, '')}" if n else "0"

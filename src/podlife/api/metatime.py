"""metav1.Time and MicroTime strings as datetimes: ``datetime.strptime`` with the formats podlife writes, without
its cost for the strings podlife itself wrote.

The first ``strptime`` of a process imports ``_strptime`` (with calendar and locale) and builds a regular
expression for each new format: about 36M instructions, 3 % of a small run from start to exit (bench/README.md,
"The command line, start to exit"). The stored timestamps are the one fixed shape ``2025-01-01T00:00:00Z``
(``.000000`` before the Z for a MicroTime), whose fields sit at fixed places; any other text, and any value the
datetime constructor refuses, goes to ``strptime`` itself, which gives its result or its error as before.
tests/test_metatime.py compares both on valid, invalid and odd strings.
"""

from __future__ import annotations

from datetime import datetime

SECONDS = "%Y-%m-%dT%H:%M:%SZ"
MICROS = "%Y-%m-%dT%H:%M:%S.%fZ"
_DIGITS = frozenset("0123456789")


def parse(ts: str, fmt: str = SECONDS) -> datetime:
    """``datetime.strptime(ts, fmt)`` (a naive datetime) for ``fmt`` SECONDS or MICROS."""
    if fmt == SECONDS:
        fast = _fast(ts, 20) if len(ts) == 20 else None
    elif fmt == MICROS:
        fast = _fast(ts, len(ts)) if 22 <= len(ts) <= 27 and ts[19] == "." else None
    else:
        fast = None
    return fast if fast is not None else datetime.strptime(ts, fmt)


def _fast(ts: str, end: int) -> datetime | None:
    """``YYYY-MM-DDTHH:MM:SS``, then ``.F{1,6}`` when ``end`` > 20, then ``Z``; None for any other text, and for
    a day or an hour out of range, which strptime refuses in its own words."""
    if (ts[4] != "-" or ts[7] != "-" or ts[10] != "T" or ts[13] != ":" or ts[16] != ":" or ts[end - 1] != "Z"
            or not _DIGITS.issuperset(ts[0:4] + ts[5:7] + ts[8:10] + ts[11:13] + ts[14:16] + ts[17:19])):
        return None
    micro = 0
    if end > 20:
        frac = ts[20:end - 1]
        if not _DIGITS.issuperset(frac):
            return None
        micro = int(frac.ljust(6, "0"))   # %f: one to six digits, padded on the right
    try:
        return datetime(int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]), int(ts[17:19]),
                        micro)
    except ValueError:
        return None

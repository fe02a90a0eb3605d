"""podlife.api.metatime.parse gives what datetime.strptime gives (the same datetime, or a ValueError with the same
message) for both formats, on the stored shape and on everything near it."""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import datetime

import pytest

from podlife.api import metatime


def _outcome(fn: object, ts: str, fmt: str) -> tuple[str, object]:
    try:
        return "ok", fn(ts, fmt)  # type: ignore[operator]
    except ValueError as e:
        return "error", str(e)


def _strings() -> list[str]:
    out = ["2025-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-02-29T12:30:45Z",
           "2025-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "2025-13-01T00:00:00Z", "2025-00-10T00:00:00Z",
           "2025-01-00T00:00:00Z", "2025-01-01T24:00:00Z", "2025-01-01T00:60:00Z", "2025-01-01T00:00:60Z",
           "2025-01-01T00:00:61Z", "0000-01-01T00:00:00Z", "2025-01-01t00:00:00z", "2025-01-01T00:00:00",
           "2025-1-01T00:00:00Z", "2025-01-01T0:00:00Z", "2025-01-01 00:00:00Z", "2025-01-01T00:00:00+00:00",
           "２０２５-01-01T00:00:00Z", "2025-0١-01T00:00:00Z", "2025-0²-01T00:00:00Z", "", "Z", "x" * 20,
           "2025-01-01T00:00:00.Z", "2025-01-01T00:00:00.1Z", "2025-01-01T00:00:00.123456Z",
           "2025-01-01T00:00:00.1234567Z", "2025-01-01T00:00:00.000000Z", "2025-01-01T00:00:00.12a456Z",
           "2025-01-01T00:00:00.123 56Z", "2025-01-01T00:00:00,123456Z", "2025-12-31T23:59:59.999999Z",
           "2025-01-01T00:00:00.٣Z", "-025-01-01T00:00:00Z", "+025-01-01T00:00:00Z", "2025-01-01T00:00:0 Z"]
    rng = random.Random(31)
    shape = "2025-06-15T12:34:56.123456Z"
    for _ in range(3000):
        s = list(shape if rng.random() < 0.5 else shape[:19] + "Z")
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(len(s))
            s[i] = rng.choice("0123456789-:.TZtz ١²x")
        out.append("".join(s))
    for _ in range(500):
        out.append(datetime(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                            rng.randint(0, 59), rng.randint(0, 59)).strftime(metatime.SECONDS))
    return out


@pytest.mark.parametrize("fmt", [metatime.SECONDS, metatime.MICROS])
def test_same_as_strptime(fmt: str) -> None:
    for ts in _strings():
        assert _outcome(metatime.parse, ts, fmt) == _outcome(datetime.strptime, ts, fmt), ts


def test_other_formats_go_to_strptime() -> None:
    assert metatime.parse("2025-01-01", "%Y-%m-%d") == datetime(2025, 1, 1)


def test_stored_shape_does_not_load_strptime() -> None:
    code = ("import sys; from podlife.api import metatime; "
            "metatime.parse('2025-01-01T00:00:00Z'); metatime.parse('2025-01-01T00:00:00.5Z', metatime.MICROS); "
            "print('_strptime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"

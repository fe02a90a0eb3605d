"""Running scenarios from tests and picking records out of their traces."""

from __future__ import annotations

import textwrap
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import pytest

from podlife.scenario.load import load_scenario
from podlife.scenario.run import Result, run
from podlife.api.validation import reset_rules, set_rules
from podlife.versions import NEWEST, profile


@pytest.fixture
def newest_rules() -> Iterator[None]:
    """Validation called directly (not through a store's write) with the newest release's rules."""
    token = set_rules(profile(NEWEST))
    yield
    reset_rules(token)


def run_text(tmp_path: Path, text: str, *overrides: str, version: str | None = None) -> Result:
    path = tmp_path / "scenario.yaml"
    path.write_text(textwrap.dedent(text))
    return run(load_scenario(str(path), list(overrides), kubernetes_version=version))


def records(result: Result, type_: str, **match: Any) -> list[dict[str, Any]]:
    return [r for r in result.cluster.trace.records
            if r["type"] == type_ and all(r.get(k) == v for k, v in match.items())]


def times(result: Result, type_: str, **match: Any) -> list[float]:
    return [r["t"] for r in records(result, type_, **match)]


def logs(result: Result, contains: str) -> list[tuple[float, str]]:
    return [(r["t"], r["message"]) for r in records(result, "log") if contains in r["message"]]


class _Slow(BaseException):
    """Raised by the alarm of ``within``: not an Exception (nor an OSError, as TimeoutError is), so nothing the
    code under test catches can swallow a hang."""


def within(seconds: int, fn: Any, *args: Any, what: str = "") -> Any:
    """``fn(*args)``, failing the test if it is still running after ``seconds`` (SIGALRM)."""
    import signal

    def alarm(*_: object) -> None:
        raise _Slow

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return fn(*args)
    except _Slow:
        raise AssertionError(f"{what}: still running after {seconds} s".lstrip(": ")) from None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def processes_in_groups(pgids: "list[int] | set[int]") -> list[int]:
    """The pids of the running processes whose process group is one of ``pgids`` (from /proc)."""
    import os

    out = []
    for pid in map(int, filter(str.isdigit, os.listdir("/proc"))):
        try:
            if os.getpgid(pid) in pgids:
                out.append(pid)
        except OSError:
            pass
    return out

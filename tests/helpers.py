"""Running scenarios from tests and picking records out of their traces."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from podlife.scenario.load import load_scenario
from podlife.scenario.run import Result, run


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

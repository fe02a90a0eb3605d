"""One point of a sweep: one `podlife run` with the point's values, reduced to a row of figures."""

from __future__ import annotations

import time
from typing import Any

from podlife.report.figures import Figures
from podlife.sweep.points import SEED_KEY, VERSION_KEY

_FIGURES = ("pods", "deleteToStoppedSeconds", "deleteToRemovedSeconds", "startupP50Seconds", "startupP99Seconds",
            "podsEvicted")


def figures(rep: dict[str, Any]) -> dict[str, Any]:
    """The run's summary figures (podlife.report.figures): pod delete → containers stopped and delete → removed
    (the longest of each), startup latency (create → Running) p50/p99, pods evicted."""
    acc = Figures()
    for r in rep["records"]:
        acc.add(r)
    result = acc.result()
    return {k: result[k] for k in _FIGURES}


def run_point(scenario: str, base_sets: list[str], point: dict[str, Any], until: str | None = None
              ) -> dict[str, Any]:
    """Run one point; a failure is a row with its error, never an exception."""
    from podlife.report.outputs import ReportWriter
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run

    sets = list(base_sets) + [f"{k}={v}" for k, v in point.items() if k not in (VERSION_KEY, SEED_KEY)]
    row: dict[str, Any] = dict(point)
    start = time.perf_counter()
    try:
        sc = load_scenario(scenario, sets, kubernetes_version=point.get(VERSION_KEY),
                           seed=point.get(SEED_KEY), until=until)
        writer = ReportWriter(sc)
        result = run(sc, **writer.run_options())
        rep = writer.finish(result)
        row["exit"] = 0 if result.passed else 1
        row["error"] = None
        for i, v in enumerate(result.verdicts):
            row[f"expect[{i}].passed"] = v.passed
            row[f"expect[{i}].atSeconds"] = v.at
        row.update(figures(rep))
    except ScenarioError as e:
        row["exit"], row["error"] = 2, str(e)
    except Exception as e:  # noqa: BLE001 - one point's internal error must not end the sweep
        row["exit"], row["error"] = 3, f"{type(e).__name__}: {e}"
    row["wallSeconds"] = round(time.perf_counter() - start, 4)
    return row


def run_batch(scenario: str, base_sets: list[str], batch: list[tuple[int, dict[str, Any]]],
              until: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Several points in one task: an engine's per-task cost is paid once per batch."""
    return [(i, run_point(scenario, base_sets, p, until)) for i, p in batch]

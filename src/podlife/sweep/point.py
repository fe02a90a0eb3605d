"""One point of a sweep: one `podlife run` with the point's values, reduced to a row of figures."""

from __future__ import annotations

import contextlib
import pickle
import time
from typing import TYPE_CHECKING, Any

from podlife.sweep.points import SEED_KEY, VERSION_KEY

if TYPE_CHECKING:
    from podlife.scenario.model import Scenario
    from podlife.scenario.run import Result

# a batch's points that differ only in their seed share one loading of the scenario: (the --set values, the
# version, whether a seed is given) -> the Scenario loaded for the first of them, pickled before it ran
Loaded = dict[tuple[tuple[str, ...], Any, bool], bytes]
_SEEDS = range(2 ** 63)   # the seeds spec.seed accepts (fieldcheck.Check.integer: >= 0, an int64)

# the run's summary figures (podlife.report.figures) a row has: pod delete → containers stopped and delete →
# removed (the longest of each), startup latency (create → Running) p50/p99, pods evicted
FIGURES = ("pods", "deleteToStoppedSeconds", "deleteToRemovedSeconds", "startupP50Seconds", "startupP99Seconds",
           "podsEvicted")


def point_scenario(scenario: str, sets: list[str], point: dict[str, Any], until: str | None = None,
                   loaded: Loaded | None = None) -> Scenario:
    """The point's Scenario, as ``podlife run --set ... --kubernetes-version ... --seed ...`` loads it. A seed is
    read into Scenario.seed and nothing else (scenariospec), so a point whose other values an earlier point of the
    batch had gets a copy of that point's Scenario with its own seed, without reading and validating the file
    again (a fifth of a small scenario's point). A copy (unpickled: half a deep copy's time), because a run
    changes the Scenario it is given. A seed the file would refuse is loaded, to be refused with its message."""
    from podlife.scenario.load import load_scenario

    seed = point.get(SEED_KEY)
    key = (tuple(sets), point.get(VERSION_KEY), seed is None)
    if loaded is None or not (seed is None or (type(seed) is int and seed in _SEEDS)):
        loaded = None   # neither taken nor kept
    elif (kept := loaded.get(key)) is not None:
        sc: Scenario = pickle.loads(kept)
        if seed is not None:
            sc.seed = seed
        return sc
    sc = load_scenario(scenario, sets, kubernetes_version=point.get(VERSION_KEY), seed=seed, until=until)
    if loaded is not None:
        # deeper than pickling can follow, or something that does not pickle: each point loads it
        with contextlib.suppress(RecursionError, pickle.PicklingError, TypeError, AttributeError):
            loaded[key] = pickle.dumps(sc, pickle.HIGHEST_PROTOCOL)
    return sc


def point_run(scenario: str, sets: list[str], point: dict[str, Any], until: str | None = None,
              loaded: Loaded | None = None) -> Result:
    """The point's run as ``podlife run --trace summary`` makes it: every record but the component logs, none
    kept, the figures counted as they are made. Its figures and verdicts are those of a run at every level
    (podlife.trace.recorder; tests/test_trace_levels.py), and a row needs nothing else."""
    from podlife.scenario.run import run

    return run(point_scenario(scenario, sets, point, until, loaded), trace_level="summary", keep_trace=False)


def run_point(scenario: str, base_sets: list[str], point: dict[str, Any], until: str | None = None,
              loaded: Loaded | None = None) -> dict[str, Any]:
    """Run one point; a failure is a row with its error, never an exception. ``loaded`` keeps the scenarios
    loaded for earlier points of the same batch (point_scenario)."""
    from podlife.scenario.errors import ScenarioError

    sets = list(base_sets) + [f"{k}={v}" for k, v in point.items() if k not in (VERSION_KEY, SEED_KEY)]
    row: dict[str, Any] = dict(point)
    start = time.perf_counter()
    try:
        result = point_run(scenario, sets, point, until, loaded)
        row["exit"] = 0 if result.passed else 1
        row["error"] = None
        for i, v in enumerate(result.verdicts):
            row[f"expect[{i}].passed"] = v.passed
            row[f"expect[{i}].atSeconds"] = v.at
        figures = result.figures or {}
        row.update((k, figures[k]) for k in FIGURES)
    except ScenarioError as e:
        row["exit"], row["error"] = 2, str(e)
    except Exception as e:  # noqa: BLE001 - one point's internal error must not end the sweep
        row["exit"], row["error"] = 3, f"{type(e).__name__}: {e}"
    row["wallSeconds"] = round(time.perf_counter() - start, 4)
    return row


def run_batch(scenario: str, base_sets: list[str], batch: list[tuple[int, dict[str, Any]]],
              until: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Several points in one task: an engine's per-task cost is paid once per batch, and the scenario is read
    once per batch and per set of values other than the seed (point_scenario)."""
    from podlife.engine.gcpolicy import one_point

    loaded: Loaded = {}
    rows = []
    for i, p in batch:
        with one_point():
            rows.append((i, run_point(scenario, base_sets, p, until, loaded)))
    return rows

"""A sweep's points share what does not change between them (the loaded scenario, the version profiles), run
without the records a row does not read, and each row still holds what `podlife run` of that point reports."""

from __future__ import annotations

import gc
import json
import pickle
import weakref
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from podlife.cli import main
from podlife.engine.gcpolicy import one_point
from podlife.report.figures import Figures
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run
from podlife.sweep.point import FIGURES, Loaded, point_run, point_scenario, run_batch, run_point
from podlife.versions import profile

HELLO = str(Path("examples/hello.yaml").resolve())
EVICTION = str(Path("examples/seed-004-memory-pressure-eviction.yaml").resolve())
GRACE = "spec.objects[0].spec.terminationGracePeriodSeconds"


def _sets(point: dict[str, Any]) -> list[str]:
    return [f"{k}={v}" for k, v in point.items() if k not in ("kubernetesVersion", "seed")]


def test_a_batch_loads_once_and_each_point_gets_the_scenario_podlife_run_loads() -> None:
    """Points in the order a batch runs them: the later seeds on 1.33 and the later point with the grace period
    set reuse the Scenario loaded for the first such point, each with its own seed, equal to what loading the
    file with the point's flags gives (as `podlife run` does)."""
    points: list[dict[str, Any]] = [
        {"kubernetesVersion": "1.33", "seed": 0}, {"kubernetesVersion": "1.33", "seed": 5},
        {"kubernetesVersion": "1.34", "seed": 5}, {"kubernetesVersion": "1.33", "seed": 9},
        {GRACE: 1, "seed": 2}, {GRACE: 1, "seed": 3}, {GRACE: 1}, {GRACE: 1}]
    loaded: Loaded = {}
    for point in points:
        ours = point_scenario(HELLO, _sets(point), point, None, loaded)
        fresh = load_scenario(HELLO, _sets(point), kubernetes_version=point.get("kubernetesVersion"),
                              seed=point.get("seed"))
        assert ours == fresh and pickle.dumps(ours) == pickle.dumps(fresh), point
    assert [point_scenario(HELLO, [], p, None, loaded).seed for p in points[:4]] == [0, 5, 5, 9]
    # one loading per version and --set values (and whether a seed is given), not one per point
    assert sorted(loaded, key=repr) == sorted([((), "1.33", False), ((), "1.34", False),
                                               ((f"{GRACE}=1",), None, False), ((f"{GRACE}=1",), None, True)],
                                              key=repr)


def _podlife_run(tmp_path: Path, scenario: str, point: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Exit code and report of `podlife run` (every record) with the point's flags."""
    flags = [a for k, v in point.items() for a in (
        ["--kubernetes-version", str(v)] if k == "kubernetesVersion" else
        ["--seed", str(v)] if k == "seed" else ["--set", f"{k}={v}"])]
    out = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["run", scenario, "--quiet", "--report", str(out), *flags])
    return r.exit_code, json.loads(out.read_text())


def test_each_row_holds_what_podlife_run_reports(tmp_path: Path) -> None:
    """Rows of one batch against `podlife run` of each point: exit code, each expectation's verdict (the instant
    from a run at every level, as the report has no instants), and the figures counted over the report's
    records. The points differ in those: a grace period cut short (1 s: stopped 1.5 s and removed 2 s after the
    delete, tests/test_sweep.py), an expectation missed (exit 1), two evictions."""
    batches: dict[str, list[dict[str, Any]]] = {
        HELLO: [{GRACE: 30, "seed": 1}, {GRACE: 1, "seed": 1}, {GRACE: 1, "seed": 4},
                {"spec.expect[1].by": "12s", "seed": 0}],
        EVICTION: [{"seed": 0}, {"kubernetesVersion": "1.30", "seed": 2}]}
    seen = set()
    for scenario, points in batches.items():
        for (_, row), point in zip(run_batch(scenario, [], list(enumerate(points))), points, strict=True):
            code, report = _podlife_run(tmp_path, scenario, point)
            acc = Figures()
            for r in report["records"]:
                acc.add(r)
            full = run(load_scenario(scenario, _sets(point), kubernetes_version=point.get("kubernetesVersion"),
                                     seed=point.get("seed")))
            expected = {**point, "exit": code, "error": None,
                        **{f"expect[{i}].{k}": v for i, e in enumerate(report["expectations"])
                           for k, v in (("passed", e["passed"]), ("atSeconds", full.verdicts[i].at))},
                        **{k: acc.result()[k] for k in FIGURES}}
            assert {k: v for k, v in row.items() if k != "wallSeconds"} == expected, point
            seen.add((row["exit"], row["deleteToStoppedSeconds"], row["podsEvicted"]))
    assert {(0, 2.5, 0), (0, 1.5, 0), (1, 2.5, 0), (0, None, 2)} <= seen


def test_a_seed_the_file_refuses_is_refused_after_a_good_one() -> None:
    """A negative seed is not taken from an earlier point's loading: its row has the error `podlife run --seed -1`
    gives."""
    rows = dict(run_batch(HELLO, [], [(0, {"seed": 1}), (1, {"seed": -1})]))
    alone = run_point(HELLO, [], {"seed": -1})
    assert (rows[0]["exit"], rows[1]["exit"], rows[1]["error"]) == (0, 2, alone["error"])
    assert "spec.seed" in alone["error"] and "-1" in alone["error"]


def test_a_points_cluster_is_freed_when_the_point_ends() -> None:
    """No collection while the point runs, one when it ends: the point's cluster (its store, in a web of cycles)
    is gone then, and the collector is on again as it was."""
    assert gc.isenabled()
    with one_point():
        assert not gc.isenabled()
        result = point_run(HELLO, [], {"seed": 1})
        store = weakref.ref(result.cluster.store)
        del result
        assert store() is not None   # in cycles: not freed by reference counts alone
    assert store() is None and gc.isenabled()


def test_one_profile_per_version_and_gates() -> None:
    assert profile("1.30") is profile("1.30")
    gated = profile("1.30", {"SidecarContainers": False})
    assert gated is profile("1.30", {"SidecarContainers": False}) and gated is not profile("1.30")
    assert (gated.gates["SidecarContainers"], profile("1.30").gates["SidecarContainers"]) == (False, True)

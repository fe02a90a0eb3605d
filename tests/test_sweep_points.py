"""A sweep's points share what does not change between them (the loaded scenario, the version profiles) and
each still reports exactly what `podlife run` of that point reports."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import orjson
from click.testing import CliRunner

from podlife.cli import main
from podlife.engine.gcpolicy import one_point
from podlife.sweep.point import Loaded, point_run, run_batch, run_point
from podlife.versions import profile

HELLO = str(Path("examples/hello.yaml").resolve())
GRACE = "spec.objects[0].spec.terminationGracePeriodSeconds"


def _podlife_run(tmp_path: Path, *args: str) -> bytes:
    out = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["run", HELLO, "--quiet", "--report", str(out), *args])
    assert r.exit_code in (0, 1), r.output
    return out.read_bytes()


def test_each_point_of_a_batch_reports_the_bytes_podlife_run_writes(tmp_path: Path) -> None:
    """Points in one batch, in the order a batch runs them: the second and third seed on 1.33 and the second
    point with the grace period set reuse the Scenario loaded for the first such point. Each point's report is
    byte for byte the one `podlife run` writes with the same flags; the seed is in it (UIDs, names), so reports
    of two seeds differ."""
    points: list[tuple[dict[str, object], list[str]]] = [
        ({"kubernetesVersion": "1.33", "seed": 0}, ["--kubernetes-version", "1.33", "--seed", "0"]),
        ({"kubernetesVersion": "1.33", "seed": 5}, ["--kubernetes-version", "1.33", "--seed", "5"]),
        ({"kubernetesVersion": "1.34", "seed": 5}, ["--kubernetes-version", "1.34", "--seed", "5"]),
        ({"kubernetesVersion": "1.33", "seed": 9}, ["--kubernetes-version", "1.33", "--seed", "9"]),
        ({GRACE: 1, "seed": 2}, ["--set", f"{GRACE}=1", "--seed", "2"]),
        ({GRACE: 1, "seed": 3}, ["--set", f"{GRACE}=1", "--seed", "3"]),
        ({GRACE: 1}, ["--set", f"{GRACE}=1"]),
    ]
    loaded: Loaded = {}
    reports = []
    for point, flags in points:
        sets = [f"{k}={v}" for k, v in point.items() if k not in ("kubernetesVersion", "seed")]
        with one_point():
            _, rep = point_run(HELLO, sets, point, None, loaded)
            ours = orjson.dumps(rep, option=orjson.OPT_INDENT_2) + b"\n"
        assert ours == _podlife_run(tmp_path, *flags), point
        reports.append(ours)
    assert reports[0] != reports[1] and reports[4] != reports[5]
    # one loading per version and --set values (and whether a seed is given), not one per point
    assert sorted(loaded, key=repr) == sorted([((), "1.33", False), ((), "1.34", False), ((f"{GRACE}=1",), None, False),
                                               ((f"{GRACE}=1",), None, True)], key=repr)


def test_a_seed_the_file_refuses_is_refused_after_a_good_one() -> None:
    """A negative seed is not taken from an earlier point's loading: its row has the error `podlife run --seed -1`
    gives."""
    rows = dict(run_batch(HELLO, [], [(0, {"seed": 1}), (1, {"seed": -1})]))
    alone = run_point(HELLO, [], {"seed": -1})
    assert (rows[0]["exit"], rows[1]["exit"], rows[1]["error"]) == (0, 2, alone["error"])
    assert "spec.seed" in alone["error"] and "-1" in alone["error"]


def test_a_points_cluster_is_freed_when_the_point_ends() -> None:
    """No collection while the point runs, one when it ends: the point's cluster (its store, in a web of cycles) is gone then,
    and the collector is on again as it was."""
    assert gc.isenabled()
    with one_point():
        assert not gc.isenabled()
        result, _ = point_run(HELLO, [], {"seed": 1})
        store = weakref.ref(result.cluster.store)
        del result, _
        assert store() is not None   # in cycles: not freed by reference counts alone
    assert store() is None and gc.isenabled()


def test_one_profile_per_version_and_gates() -> None:
    assert profile("1.30") is profile("1.30")
    gated = profile("1.30", {"SidecarContainers": False})
    assert gated is profile("1.30", {"SidecarContainers": False}) and gated is not profile("1.30")
    assert (gated.gates["SidecarContainers"], profile("1.30").gates["SidecarContainers"]) == (False, True)

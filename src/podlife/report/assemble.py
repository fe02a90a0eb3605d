"""The trace report of a run (docs/scenario-format.md section 4) as one JSON-ready mapping, in three parts a
streamed report writes at different moments: the header (known before the run), the records and final
objects (made during it), the outcome (known once it has ended)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podlife.scenario.assumptions import assumptions

if TYPE_CHECKING:
    from podlife.scenario.model import Scenario
    from podlife.scenario.run import Result

FORMAT = "podlife-trace/v1"

Report = dict[str, Any]


def header(sc: Scenario) -> Report:
    """The report's fields known before the run."""
    return {
        "format": FORMAT,
        "scenario": sc.name,
        "kubernetesVersion": sc.kubernetes_version,
        "seed": sc.seed,
        "startTime": sc.start_time.strftime("%Y-%m-%dT%H:%M:%S") + (
            f".{sc.start_time.microsecond:06d}".rstrip("0") if sc.start_time.microsecond else "") + "Z",
    } | _gates(sc)


def _gates(sc: Scenario) -> dict[str, Any]:
    """``featureGates``: the gates the scenario sets against its release's defaults (absent when none)."""
    from podlife import features

    c = sc.cluster
    changed = features.differences(int(sc.kubernetes_version.split(".")[1]), c.featureGates, c.kubelet.featureGates)
    return {"featureGates": changed} if changed else {}


def outcome(result: Result) -> Report:
    """The report's fields known once the run has ended (but its records and final objects)."""
    sc = result.scenario
    out = {
        "endSeconds": round(result.end, 3),
        "expectations": [v.as_dict() for v in result.verdicts],
        "assumptions": assumptions(sc) + list(result.cluster.kernel.notes.values()),
        "warnings": list(sc.warnings),
        # kubectl get pods at each --at instant and at the end, as the summary prints them
        "podTables": [{"t": round(t, 3), "rows": rows} for t, rows in result.pods_at],
    }
    if result.figures is not None:
        out["trace"] = result.cluster.trace.level
        out["figures"] = result.figures
    return out


def report(result: Result, final: bool = True) -> Report:
    """The trace report; below ``--trace full`` it also names the level and carries the figures, and at
    ``summary`` it has neither records nor final objects (nor without ``final``: a streamed report writes them
    one by one)."""
    rep = header(result.scenario)
    rest = outcome(result)
    rep["endSeconds"] = rest.pop("endSeconds")
    rep["records"] = result.cluster.trace.records
    rep.update(rest)
    objects = final and result.cluster.trace.level != "summary"
    rep["final"] = {"objects": result.cluster.store.all_objects() if objects else []}
    return rep

"""podlife.report.outputs: the one way from a run to its outputs. A streamed run (NDJSON report, klog written
record by record, nothing kept) must write what a run that keeps its records writes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from podlife.report import stream
from podlife.report.outputs import Outputs, ReportWriter
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run

EXAMPLE = "examples/seed-001-hung-container-kubelet-restart.yaml"


def _write(outputs: Outputs) -> dict:
    sc = load_scenario(EXAMPLE)
    writer = ReportWriter(sc, outputs)
    return writer.finish(run(sc, **writer.run_options()))


def test_a_streamed_run_writes_what_a_kept_run_writes(tmp_path: Path) -> None:
    kept = Outputs(report=str(tmp_path / "kept.json"), klog=str(tmp_path / "kept.log"))
    streamed = Outputs(report=str(tmp_path / "streamed.ndjson"), klog=str(tmp_path / "streamed.log"))
    assert kept.keep and not streamed.keep
    _write(kept)
    rep = _write(streamed)
    assert rep["records"] == [] and rep["final"] == {"objects": []}   # written as they came, none kept
    klog = (tmp_path / "kept.log").read_bytes()
    assert klog.count(b"\n") > 10 and (tmp_path / "streamed.log").read_bytes() == klog
    back = stream.read((tmp_path / "streamed.ndjson").read_bytes())
    assert back.pop("trace") == "full" and back.pop("figures")["pods"] == 4   # what a streamed run adds
    assert back == orjson.loads((tmp_path / "kept.json").read_bytes())


def test_no_outputs_writes_nothing_and_keeps_every_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    sc = load_scenario(str(Path(__file__).resolve().parent.parent / EXAMPLE))
    writer = ReportWriter(sc)
    assert writer.run_options() == {"trace_level": "full", "keep_trace": True, "sinks": []}
    rep = writer.finish(run(sc, **writer.run_options()))
    assert list(tmp_path.iterdir()) == []
    assert rep["records"] and rep["final"]["objects"] and "figures" not in rep

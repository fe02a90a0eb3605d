"""--trace levels, the streamed (newline-delimited JSON) report and the run's figures."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from podlife.cli import main
from podlife.report import stream

EXAMPLES = Path(__file__).parent.parent / "examples"
NOTREADY = EXAMPLES / "seed-004-node-notready-recreate.yaml"

# an eviction the budget refuses: its `api` record gets its `error` after the records of the attempt
REFUSED_EVICTION = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: refused}
spec:
  until: 30s
  cluster:
    nodes: [{name: node-1}]
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          containers: [{name: app, image: nginx, command: [nginx]}]
  - apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web}
    spec:
      maxUnavailable: 0
      selector: {matchLabels: {app: web}}
  actions:
  - at: 20s
    evict: pod/web-7dd57c7855-8zz49
"""


def _run(*args: str):
    res = CliRunner().invoke(main, ["run", *args])
    return res


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def test_streamed_report_is_the_json_report_line_by_line(tmp_path):
    for example in (EXAMPLES / "seed-000-sidecar-graceful-exit.yaml", NOTREADY):
        a = _run(str(example), "--quiet", "--report", str(tmp_path / "a.json"), "--klog", str(tmp_path / "a.log"))
        b = _run(str(example), "--quiet", "--report", str(tmp_path / "b.ndjson"), "--klog", str(tmp_path / "b.log"))
        assert a.exit_code == b.exit_code == 0, (a.output, b.output)
        lines = (tmp_path / "b.ndjson").read_bytes().splitlines()
        head, last = json.loads(lines[0]), json.loads(lines[-1])
        assert head == {"format": "podlife-trace/v1", "scenario": _json(tmp_path / "a.json")["scenario"],
                        "kubernetesVersion": "1.34" if example == NOTREADY else "1.18", "seed": 0,
                        "startTime": _json(tmp_path / "a.json")["startTime"], "trace": "full",
                        "stream": "ndjson"}
        assert "endSeconds" in last and "figures" in last
        streamed = stream.read((tmp_path / "b.ndjson").read_bytes())
        del streamed["trace"], streamed["figures"]
        assert streamed == _json(tmp_path / "a.json")
        assert (tmp_path / "a.log").read_bytes() == (tmp_path / "b.log").read_bytes()


def test_a_record_completed_later_is_streamed_in_its_place(tmp_path):
    (tmp_path / "s.yaml").write_text(REFUSED_EVICTION)
    _run(str(tmp_path / "s.yaml"), "--quiet", "--report", str(tmp_path / "a.json"))
    _run(str(tmp_path / "s.yaml"), "--quiet", "--report", str(tmp_path / "b.ndjson"))
    records = _json(tmp_path / "a.json")["records"]
    evict = [r for r in records if r["type"] == "api" and r["verb"] == "evict"]
    assert evict == [{"t": 20.0, "type": "api", "verb": "evict", "object": "Pod/default/web-7dd57c7855-8zz49",
                      "by": "kubectl", "error": "Cannot evict pod as it would violate the pod's disruption budget.",
                      "code": 429, "causes": [{"type": "DisruptionBudget",
                                               "message": "The disruption budget web needs 2 healthy pods and has 2 "
                                                          "currently"}]}]
    assert stream.read((tmp_path / "b.ndjson").read_bytes())["records"] == records


def test_objects_level_makes_every_record_but_the_logs(tmp_path):
    _run(str(NOTREADY), "--quiet", "--report", str(tmp_path / "full.json"))
    res = _run(str(NOTREADY), "--quiet", "--trace", "objects", "--report", str(tmp_path / "objects.json"))
    assert res.exit_code == 0, res.output
    full, objects = _json(tmp_path / "full.json"), _json(tmp_path / "objects.json")
    assert objects["records"] == [r for r in full["records"] if r["type"] != "log"]
    assert objects["final"] == full["final"] and objects["expectations"] == full["expectations"]
    assert objects["trace"] == "objects"


def test_summary_level_keeps_figures_and_verdicts_only(tmp_path):
    _run(str(NOTREADY), "--quiet", "--report", str(tmp_path / "full.json"))
    res = _run(str(NOTREADY), "--trace", "summary", "--report", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    full, summary = _json(tmp_path / "full.json"), _json(tmp_path / "s.json")
    assert summary["records"] == [] and summary["final"] == {"objects": []}
    assert summary["expectations"] == full["expectations"] and summary["podTables"] == full["podTables"]
    # the example: worker-0 is partitioned from 0 s, its Ready is Unknown at 115 s, the unreachable NoExecute
    # taint comes at 120 s and the three pods on it tolerate it for the default 300 s (DefaultTolerationSeconds
    # admission): TaintManagerEviction at 420 s. Every pod's container is running at the PLEG relist 1 s after
    # its creation. Nothing replaces the evicted pods: their ReplicaSets' pods are only Terminating (the node never
    # confirms the kill), and the bare pod has no controller.
    assert summary["figures"] == {
        "pods": 6, "deleteToStoppedSeconds": None, "deleteToRemovedSeconds": None,
        "startupP50Seconds": 1.0, "startupP99Seconds": 1.0, "podsEvicted": 3, "firstEvictionSeconds": 420.0,
        "replacements": 0, "replacementsRunningSeconds": None,
        "zones": {"a": {"nodes": 3, "pods": 6, "podsEvicted": 3, "podsRunningAtEnd": 6}}}
    assert "pods evicted: 3" in res.output and "first eviction at: 420s" in res.output


def test_klog_needs_the_full_trace(tmp_path):
    res = _run(str(NOTREADY), "--trace", "objects", "--klog", str(tmp_path / "k.log"))
    assert res.exit_code == 2
    assert "--klog: the component logs are not recorded at --trace objects; use --trace full" in res.output


def test_a_streamed_report_draws_as_html(tmp_path):
    _run(str(NOTREADY), "--quiet", "--trace", "objects", "--report", str(tmp_path / "r.ndjson"))
    res = CliRunner().invoke(main, ["report", str(tmp_path / "r.ndjson"), "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    assert "Pod/default/agent" in (tmp_path / "r.html").read_text()
    lines = (tmp_path / "r.ndjson").read_bytes().splitlines()
    (tmp_path / "cut.ndjson").write_bytes(b"\n".join(lines[:-1]) + b"\n")
    res = CliRunner().invoke(main, ["report", str(tmp_path / "cut.ndjson"), "--html", str(tmp_path / "r.html")])
    assert res.exit_code == 2
    assert "the report has no outcome line: the run did not end" in res.output

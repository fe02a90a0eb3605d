"""The GitHub Action (action.yml): its steps run here as the runner runs them — each ``run`` script through bash
with the step's environment, ``${{ inputs.* }}`` and ``${{ runner.temp }}`` filled in, the ``if`` conditions
evaluated — with the inputs of the documented workflow; and that workflow uses only inputs the action declares."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from podlife.testing.cluster import _alive, port_open

ROOT = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
WORKFLOW = yaml.safe_load((ROOT / "docs" / "github-action-workflow.yml").read_text())

CLUSTER = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: ci-cluster}
spec:
  cluster:
    nodes:
    - {name: worker-a}
    - {name: worker-b}
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: app, image: nginx}]
"""


def _expr(text: str, inputs: dict[str, str], temp: str) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1).strip()
        if name == "runner.temp":
            return temp
        assert name.startswith("inputs."), name
        return inputs[name[len("inputs."):]]
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", one, text)


def _condition(cond: str, inputs: dict[str, str]) -> bool:
    """The conditions action.yml uses: inputs.X == 'v' / != 'v', joined by &&."""
    ok = True
    for part in cond.split("&&"):
        m = re.fullmatch(r"\s*inputs\.([\w-]+)\s*(==|!=)\s*'([^']*)'\s*", part)
        assert m, f"unexpected condition {cond!r}"
        equal = inputs[m.group(1)] == m.group(3)
        ok = ok and (equal if m.group(2) == "==" else not equal)
    return ok


def run_action(with_: dict[str, str], tmp: Path) -> tuple[list[dict[str, Any]], str]:
    """Run the action's steps; returns the ``uses`` steps it would have run, with their inputs filled in, and
    what the ``run`` steps printed."""
    declared = ACTION["inputs"]
    assert set(with_) <= set(declared), set(with_) - set(declared)
    inputs = {k: str(v.get("default", "")) for k, v in declared.items()} | with_
    env = {**os.environ, "GITHUB_ENV": str(tmp / "github_env"), "GITHUB_OUTPUT": str(tmp / "github_output"),
           "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    used = []
    printed = ""
    for step in ACTION["runs"]["steps"]:
        if "if" in step and not _condition(step["if"], inputs):
            continue
        if "uses" in step:
            used.append({"uses": step["uses"], "with": {k: _expr(str(v), inputs, str(tmp))
                                                        for k, v in step.get("with", {}).items()}})
            continue
        step_env = {k: _expr(str(v), inputs, str(tmp)) for k, v in step.get("env", {}).items()}
        done = subprocess.run([step["shell"], "-e", "-c", _expr(step["run"], inputs, str(tmp))],
                              env={**env, **step_env}, check=False, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"step {step['id']}: {done.stdout}\n{done.stderr}"
        printed += done.stdout
    return used, printed


def _workflow_with(command: str) -> dict[str, str]:
    steps = [s for s in WORKFLOW["jobs"]["e2e"]["steps"] if str(s.get("uses", "")).endswith("/podlife@main")]
    return next(dict(s["with"]) for s in steps if s["with"].get("command", "start") == command)


def test_the_documented_workflow_uses_declared_inputs() -> None:
    for command in ("start", "stop"):
        assert set(_workflow_with(command)) <= set(ACTION["inputs"])
    doc = (ROOT / "docs" / "github-action.md").read_text()
    embedded = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert yaml.safe_load(embedded) == WORKFLOW


def test_the_action_starts_a_cluster_and_keeps_its_trace_and_report(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    start = _workflow_with("start") | {"kubernetes-version": "1.29", "cluster-file": str(tmp_path / "cluster.yaml"),
                                       "install": ""}   # podlife is installed here already
    used, printed = run_action(start, tmp_path)
    assert used == []
    kubeconfig = str(tmp_path / "podlife" / "kubeconfig")
    assert (tmp_path / "github_env").read_text() == f"KUBECONFIG={kubeconfig}\n"
    assert (tmp_path / "github_output").read_text() == f"kubeconfig={kubeconfig}\n"
    url = yaml.safe_load(Path(kubeconfig).read_text())["clusters"][0]["cluster"]["server"]
    with urllib.request.urlopen(url + "/version") as resp:
        assert json.loads(resp.read())["gitVersion"].startswith("v1.29.")
    with urllib.request.urlopen(url + "/api/v1/nodes") as resp:
        assert [n["metadata"]["name"] for n in json.loads(resp.read())["items"]] == ["worker-a", "worker-b"]
    log = (tmp_path / "podlife" / "podlife.log").read_text()
    assert "realtime clock ×10" in log

    uploads, _ = run_action(_workflow_with("stop") | {"artifact-name": "podlife-1.29"}, tmp_path)
    out = tmp_path / "podlife"
    assert uploads == [{"uses": "actions/upload-artifact@v4",
                        "with": {"name": "podlife-1.29", "path": str(out), "if-no-files-found": "warn"}}]
    trace = json.loads((out / "podlife-trace.json").read_text())
    assert (trace["format"], trace["kubernetesVersion"]) == ("podlife-trace/v1", "1.29")
    assert any(r.get("object") == "Pod/default/web" for r in trace["records"])
    assert (out / "podlife-report.html").read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in out.iterdir()) == ["podlife-report.html", "podlife-trace.json", "podlife.log"]
    found = re.search(r"running in the background \(pid (\d+)", printed)
    assert found, printed
    pid = int(found.group(1))
    assert not _alive(pid)
    assert not port_open(url)


def test_stop_without_a_cluster_is_not_an_error(tmp_path: Path) -> None:
    assert len(run_action({"command": "stop"}, tmp_path)[0]) == 1
    assert not (tmp_path / "podlife" / "podlife-trace.json").exists()

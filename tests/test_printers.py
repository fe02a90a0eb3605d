"""kubectl's pod columns (pkg/printers/internalversion/printers.go printPod) and HumanDuration."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from podlife.printers import human_duration, pod_row

NOW = datetime(2025, 1, 1, 0, 10, tzinfo=timezone.utc)


def _pod(containers: list[dict[str, Any]], phase: str = "Running", init: list[dict[str, Any]] | None = None,
         init_specs: list[dict[str, Any]] | None = None, deleting: bool = False, reason: str | None = None,
         conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"name": "web", "creationTimestamp": "2025-01-01T00:00:00Z"}
    if deleting:
        md["deletionTimestamp"] = "2025-01-01T00:10:30Z"
    status: dict[str, Any] = {"phase": phase, "containerStatuses": containers, "conditions": conditions or []}
    if init is not None:
        status["initContainerStatuses"] = init
    if reason:
        status["reason"] = reason
    return {"metadata": md, "spec": {"nodeName": "node-1", "containers": [{"name": c["name"]} for c in containers],
                                     "initContainers": init_specs or [{"name": c["name"]} for c in init or []]},
            "status": status}


def _c(name: str = "app", ready: bool = False, restarts: int = 0, **state: Any) -> dict[str, Any]:
    return {"name": name, "ready": ready, "restartCount": restarts, "state": state}


RUNNING = {"running": {"startedAt": "2025-01-01T00:00:02Z"}}


@pytest.mark.parametrize("pod, status, ready", [
    (_pod([_c(ready=True, **RUNNING)]), "Running", "1/1"),
    (_pod([_c(ready=True, **RUNNING)], deleting=True), "Terminating", "1/1"),
    (_pod([_c(waiting={"reason": "CrashLoopBackOff"})]), "CrashLoopBackOff", "0/1"),
    (_pod([_c(waiting={"reason": "ContainerCreating"})], phase="Pending"), "ContainerCreating", "0/1"),
    (_pod([_c(waiting={"reason": "ImagePullBackOff"})], phase="Pending"), "ImagePullBackOff", "0/1"),
    (_pod([_c(terminated={"exitCode": 0, "reason": "Completed"})], phase="Succeeded"), "Completed", "0/1"),
    (_pod([_c(terminated={"exitCode": 1, "reason": "Error"})], phase="Failed"), "Error", "0/1"),
    (_pod([_c(terminated={"exitCode": 2})], phase="Failed"), "ExitCode:2", "0/1"),
    # an evicted pod: status.reason wins while no container status says otherwise
    (_pod([], phase="Failed", reason="Evicted"), "Evicted", "0/0"),
    # the first init container still running: Init:0/1; the app waits in PodInitializing
    (_pod([_c(waiting={"reason": "PodInitializing"})], phase="Pending", init=[_c("init", **RUNNING)]),
     "Init:0/1", "0/1"),
    (_pod([_c(waiting={"reason": "PodInitializing"})], phase="Pending",
          init=[_c("init", waiting={"reason": "CrashLoopBackOff"})]), "Init:CrashLoopBackOff", "0/1"),
    (_pod([_c(waiting={"reason": "PodInitializing"})], phase="Pending",
          init=[_c("init", terminated={"exitCode": 0, "reason": "Completed"})]), "PodInitializing", "0/1"),
    (_pod([_c(waiting={"reason": "PodInitializing"})], phase="Failed",
          init=[_c("init", terminated={"exitCode": 3, "reason": "Error"})]), "Init:Error", "0/1"),
    # a node lost: the node lifecycle controller set reason NodeLost and the pod is being deleted
    (_pod([_c(ready=False, **RUNNING)], deleting=True, reason="NodeLost"), "Unknown", "0/1"),
    (_pod([], phase="Pending", conditions=[{"type": "PodScheduled", "status": "False",
                                            "reason": "SchedulingGated"}]), "SchedulingGated", "0/0"),
    # a finished container beside a running one: back to Running (or NotReady without the Ready condition)
    (_pod([_c("a", ready=True, **RUNNING), _c("b", terminated={"exitCode": 0, "reason": "Completed"})]),
     "NotReady", "1/2"),
    (_pod([_c("a", ready=True, **RUNNING), _c("b", terminated={"exitCode": 0, "reason": "Completed"})],
          conditions=[{"type": "Ready", "status": "True"}]), "Running", "1/2"),
    # a native sidecar counts in READY once started and ready
    (_pod([_c(ready=True, **RUNNING)], init=[dict(_c("proxy", ready=True, **RUNNING), started=True)],
          init_specs=[{"name": "proxy", "restartPolicy": "Always"}],
          conditions=[{"type": "Initialized", "status": "True"}]), "Running", "2/2"),
])
def test_status_and_ready(pod: dict[str, Any], status: str, ready: str) -> None:
    row = pod_row(pod, NOW)
    assert (row["STATUS"], row["READY"]) == (status, ready)


def test_restarts_show_how_long_ago() -> None:
    c = _c(ready=True, restarts=3, **RUNNING)
    c["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": "2025-01-01T00:09:15Z"}}
    row = pod_row(_pod([c]), NOW)
    assert (row["RESTARTS"], row["AGE"], row["NODE"]) == ("3 (45s ago)", "10m", "node-1")


@pytest.mark.parametrize("seconds, text", [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119.9, "119s"), (120, "2m"), (125, "2m5s"), (599, "9m59s"),
    (600, "10m"), (3 * 3600 - 1, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (8 * 3600, "8h"),
    (50 * 3600, "2d2h"), (48 * 3600, "2d"), (9 * 86400, "9d"), (3 * 365 * 86400, "3y"),
    (3 * 365 * 86400 + 86400, "3y1d"), (9 * 365 * 86400, "9y"),
])
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_run_prints_pod_tables_at_instants() -> None:
    from click.testing import CliRunner

    from podlife.cli import main

    r = CliRunner().invoke(main, ["run", "examples/seed-000-native-sidecar.yaml", "--at", "5s,8s"])
    assert r.exit_code == 0, r.output
    lines = [" ".join(x.split()) for x in r.output.splitlines()]
    # running at 5 s; the DELETE at 6.408 makes it Terminating by 8 s; removed at 14 s, so none at the end
    i = lines.index("pods at 5s")
    assert lines[i + 1:i + 3] == ["NAME READY STATUS RESTARTS AGE NODE",
                                  "kirovpre-krds-sf-f3dec-0 2/2 Running 0 5s node-1"]
    i = lines.index("pods at 8s")
    assert lines[i + 2] == "kirovpre-krds-sf-f3dec-0 2/2 Terminating 0 8s node-1"
    assert "pods at 21.468s (end): none" in lines


@pytest.mark.parametrize("at", ["40s", "1m"])
def test_an_instant_at_or_after_the_end_is_the_end_table(at: str) -> None:
    from click.testing import CliRunner

    from podlife.cli import main

    # seed 000 runs until nothing is left to happen: the pod is removed at 40 s (test_seed_000.py). Asking for a
    # table at 40 s or later neither prints a second table for the same state nor keeps the run going to 60 s
    r = CliRunner().invoke(main, ["run", "examples/seed-000-sidecar-graceful-exit.yaml", "--at", at])
    assert r.exit_code == 0, r.output
    lines = [" ".join(x.split()) for x in r.output.splitlines()]
    assert "sidecar-graceful-exit (Kubernetes 1.18, seed 0, 40s simulated)" in lines
    assert [x for x in lines if x.startswith("pods at")] == ["pods at 40s (end): none"]


def test_report_carries_the_pod_tables():
    # the summary's kubectl-style tables (at each --at instant, then at the end) are in the report too
    from podlife.report.assemble import report
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run

    rep = report(run(load_scenario("examples/hello.yaml"), [5.0]))
    assert rep["podTables"][0] == {"t": 5.0, "rows": [{"NAME": "web", "READY": "1/1", "STATUS": "Running",
                                                        "RESTARTS": "0", "AGE": "5s", "NODE": "node-1"}]}
    assert rep["podTables"][-1]["t"] == rep["endSeconds"]


FLEET = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: fleet}
spec:
  cluster: {nodes: [{namePrefix: n, count: 4}]}
  objects:
""" + "".join(f"""
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: web-{i}}}
      spec:
        replicas: {replicas}
        selector: {{matchLabels: {{app: web-{i}}}}}
        template:
          metadata: {{labels: {{app: web-{i}}}}}
          spec: {{containers: [{{name: app, image: web:1}}]}}
""" for i, replicas in enumerate([100, 1, 1, 1])) + """
  until: 30s
"""


def test_a_cluster_sized_summary_cuts_its_table_and_names_alike_workloads_once(tmp_path) -> None:
    """103 pods: the summary's table shows 100 rows and says how many more the report has; four Deployments of
    one template with the same assumptions are named once (the report lists each, and every row)."""
    import json

    from click.testing import CliRunner

    from podlife.cli import main

    (tmp_path / "fleet.yaml").write_text(FLEET)
    r = CliRunner().invoke(main, ["run", str(tmp_path / "fleet.yaml"), "--report", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    lines = [" ".join(x.split()) for x in r.output.splitlines()]
    i = lines.index("pods at 30s (end)")
    assert lines[i + 1] == "NAME READY STATUS RESTARTS AGE NODE"
    assert all(x.startswith("web-0-") and x.endswith(" 1/1 Running 0 30s " + x.split()[-1]) for x in
               lines[i + 2:i + 102])
    assert lines[i + 102] == "… and 3 more pods (the report's podTables has every row)"
    text = " ".join(r.output.split())
    assert ("Deployment/default/web-0 (and 3 more alike) app: no command (image entrypoint unknown); assumed: "
            "runs until stopped; SIGTERM: assumed handled, exits in 0.1 s") in text
    assert "Deployment/default/web-1 " not in text
    rep = json.loads((tmp_path / "r.json").read_text())
    assert [len(t["rows"]) for t in rep["podTables"]] == [103]
    assert sorted({a["object"] for a in rep["assumptions"]}) == [f"Deployment/default/web-{i}" for i in range(4)]

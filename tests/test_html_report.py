"""The HTML report: its timeline data for the seed-000 pod, and that it draws in a real browser."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main

SEED = "examples/seed-000-sidecar-graceful-exit.yaml"
POD = "default/kirovpre-krds-sf-f3dec-0"
APP, SIDECAR = "kirovpre-krds-ys02", "agent-kirovpre-krds-ys02"


def _page(tmp_path: Path) -> str:
    out = tmp_path / "r.html"
    r = CliRunner().invoke(main, ["run", SEED, "--html", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    return out.read_text(encoding="utf-8")


def _report(tmp_path: Path) -> str:
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["run", SEED, "--report", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    return out.read_text(encoding="utf-8")


def _timeline(page: str) -> dict:
    m = re.search(r"<script type='application/json' id='podlife-timeline'>(.*?)</script>", page, re.S)
    assert m
    return json.loads(m.group(1))


def test_seed_000_lanes_and_markers(tmp_path: Path) -> None:
    tl = _timeline(_page(tmp_path))
    lanes = [ln["lane"] for ln in tl["lanes"]]
    # the spec lists the sidecar (an app container on 1.18) first: each container is followed by its hooks
    assert lanes == ["node-1 · Ready", f"{POD} · pod", f"{POD} · {SIDECAR}", f"{POD} · {SIDECAR} hooks",
                     f"{POD} · {APP}", f"{POD} · {APP} hooks"]
    marks = {(m["lane"].split(" · ")[1], m["kind"], m["t"]) for m in tl["markers"]}
    # the delete at 6.408 (deletionTimestamp), the app's 2 s override at 12.542 then SIGKILL at 14.542,
    # the sidecar's -3 s override at 17.779, removal at 40.000 — the seed log's instants (test_seed_000.py)
    assert {("pod", "terminating", 6.408), (APP, "SIGTERM", 12.542), (APP, "SIGKILL", 14.542),
            (SIDECAR, "SIGTERM", 17.779), ("pod", "removed", 40.0)} <= marks
    sigterm = {m["lane"].split(" · ")[1]: m for m in tl["markers"] if m["kind"] == "SIGTERM"}
    assert sigterm[APP]["detail"] == "grace 2 s" and sigterm[SIDECAR]["detail"] == "grace -3 s"
    assert "but using -3 second grace period override" in sigterm[SIDECAR]["log"]
    hooks = sorted((s["lane"].split(" · ")[1], s["start"], s["end"]) for s in tl["segments"]
                   if s["state"] == "preStop")
    # the sidecar's preStop runs twice (6.408-9.475 and again 14.712-17.779), the app's once (9.475-12.542)
    assert hooks == [(f"{SIDECAR} hooks", 6.408, 9.475), (f"{SIDECAR} hooks", 14.712, 17.779),
                     (f"{APP} hooks", 9.475, 12.542)]
    # each hook bar's log line is the kubelet's for that container (it names the runtime's id): at 9.475 the
    # sidecar's hook completes and the app's starts
    ids = {r["container"]: r["detail"].split()[0] for r in json.loads(_report(tmp_path))["records"]
           if r["type"] == "runtime" and r["op"] == "create"}
    for seg in (s for s in tl["segments"] if s["state"] == "preStop"):
        who = SIDECAR if SIDECAR in seg["lane"] else APP
        assert seg["log"].endswith(f'Running preStop hook for container "{ids[who]}"'), seg["log"]
    # the app's process is gone at 14.542 but the kubelet reports it terminated only at 28.009
    exited = [s for s in tl["segments"] if s["lane"] == f"{POD} · {APP}" and s["state"] == "exited"]
    assert [(s["start"], s["end"]) for s in exited] == [(14.542, 28.009)]


def _scenario_page(tmp_path: Path, text: str) -> tuple[dict, dict]:
    """The timeline the page embeds and the trace report of a scenario given as text."""
    src, out, trace = tmp_path / "s.yaml", tmp_path / "s.html", tmp_path / "s.json"
    src.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(main, ["run", str(src), "--html", str(out), "--report", str(trace), "--quiet"])
    assert r.exit_code == 0, r.output
    return _timeline(out.read_text(encoding="utf-8")), json.loads(trace.read_text(encoding="utf-8"))


SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: report}
spec:
  kubernetesVersion: "1.34"
  until: UNTIL
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: POD
"""

CRASH_LOOP = SCENARIO.replace("UNTIL", "2m").replace("POD", """{name: crash}
      spec:
        containers:
          - {name: app, image: busybox:1.36, command: ["sh", "-c", "exit 1"]}""")

FAILING_LIVENESS = SCENARIO.replace("UNTIL", "1m").replace("POD", """
        name: live
        annotations:
          podlife/behavior: |
            app: {failProbesAfterSeconds: 10}
      spec:
        containers:
          - name: app
            image: nginx:1.27
            livenessProbe: {tcpSocket: {port: 8080}, periodSeconds: 5}""")


def _on(tl: dict, lane_end: str, kind: str) -> list[dict]:
    return [m for m in tl["markers"] if m["lane"].endswith(lane_end) and m["kind"] == kind]


def test_crash_loop_restarts_and_back_offs(tmp_path: Path) -> None:
    tl, rep = _scenario_page(tmp_path, CRASH_LOOP)
    app = "default/crash · app"
    # a restart marker wherever the runtime creates the container again (attempt 1, 2, …), whether or not the
    # kubelet ever reported it running (it never does: it exits at once)
    creates = [(r["t"], r["detail"].rsplit(" ", 1)[1]) for r in rep["records"]
               if r["type"] == "runtime" and r["op"] == "create" and r.get("container") == "app"]
    restarts = _on(tl, " · app", "restart")
    assert [(m["t"], m["label"]) for m in restarts] == [(t, f"app: restart {n}") for t, n in creates[1:]]
    assert len(restarts) == 4 and restarts[0]["t"] == 1.0   # the first restart is immediate: the relist at 1.0
    assert '"op": "create"' in restarts[0]["record"]
    # each BackOff Warning (on the container's lane: its fieldPath names it) opens a wait that the next restart
    # ends; the status reports its length at that start: 10 s, doubling (kubelet backoff 10 s, max 300 s), the
    # last still going at the end of the run
    back_offs = _on(tl, " · app", "warning")
    assert [m["label"] for m in back_offs] == ["BackOff"] * 4 and not _on(tl, " · pod", "warning")
    waits = [(s["start"], s["end"], s["label"]) for s in tl["segments"] if s["state"] == "back-off"]
    ends = [t for t, _ in creates[2:]] + [120.0]
    assert waits == [(m["t"], e, f"app: {x}") for m, e, x in
                     zip(back_offs, ends, ["back-off 10 s", "back-off 20 s", "back-off 40 s", "back-off"])]
    assert all(s["lane"] == app and 'reason="BackOff"' in s["log"] for s in tl["segments"] if s["state"] == "back-off")
    # the CrashLoopBackOff waiting state is labelled with the back-off its message names
    clbo = [s["label"] for s in tl["segments"] if s["lane"] == app and "CrashLoopBackOff" in s["label"]]
    assert clbo == ["app: waiting (CrashLoopBackOff, back-off 10 s)", "app: waiting (CrashLoopBackOff, back-off 20 s)",
                    "app: waiting (CrashLoopBackOff, back-off 40 s)"]


def test_failing_liveness_probe_on_the_container_lane(tmp_path: Path) -> None:
    tl, _ = _scenario_page(tmp_path, FAILING_LIVENESS)
    # probes fail from 10.1 s (started at 0.1); liveness ticks every 5 s, the third failure (failureThreshold 3)
    # kills the container at 25 with the pod's 30 s grace; it exits at 25.1 and is started again at once; the
    # new one fails from 35.2, so at 40, 45 and 50
    unhealthy = _on(tl, " · app", "warning")
    assert [m["t"] for m in unhealthy] == [15.0, 20.0, 25.0, 40.0, 45.0, 50.0]
    assert all(m["detail"].startswith("Liveness probe failed: dial tcp") and 'reason="Unhealthy"' in m["log"]
               and '"fieldPath": "spec.containers{app}"' in m["record"] for m in unhealthy)
    assert not _on(tl, " · pod", "warning")
    assert [(m["t"], m["detail"]) for m in _on(tl, " · app", "SIGTERM")] == [(25.0, "grace 30 s"), (50.0, "grace 30 s")]
    assert "Killing container with a grace period" in _on(tl, " · app", "SIGTERM")[0]["log"]
    assert [(m["t"], m["label"]) for m in _on(tl, " · app", "restart")] == [(25.1, "app: restart 1"),
                                                                          (50.1, "app: restart 2")]
    # bars carry their record and the upstream log line, as markers do
    running = [s for s in tl["segments"] if s["lane"] == "default/live · app" and s["state"] == "running"]
    assert [(s["start"], s["end"]) for s in running] == [(1.0, 25.0), (26.0, 50.0), (51.0, 60.0)]
    assert '"state": "running"' in running[0]["record"]
    assert '"Status for pod updated successfully" pod="default/live"' in running[0]["log"]


def test_lanes_follow_the_pod_spec(tmp_path: Path) -> None:
    # status lists app containers by name (kubelet SortedContainerStatuses) and each first appears there, so
    # first-record order would put cache before web; the lanes follow the spec: init containers (the sidecar
    # among them, in its place), then the app containers, each followed by its hooks
    pod = SCENARIO.replace("UNTIL", "30s").replace("POD", """{name: ordered}
      spec:
        initContainers:
          - {name: zz-setup, image: busybox:1.36, command: ["true"]}
          - {name: migrate, image: busybox:1.36, command: ["true"]}
          - name: proxy
            image: envoy:1.30
            restartPolicy: Always
            lifecycle: {postStart: {exec: {command: ["true"]}}}
        containers:
          - name: web
            image: nginx:1.27
            lifecycle: {postStart: {exec: {command: ["true"]}}}
          - {name: cache, image: redis:7}""")
    tl, _ = _scenario_page(tmp_path, pod)
    lanes = [ln["lane"].split(" · ")[1] for ln in tl["lanes"] if ln["object"] == "Pod/default/ordered"]
    assert lanes == ["pod", "zz-setup", "migrate", "proxy", "proxy hooks", "web", "web hooks", "cache"]


def test_seed_004_node_lanes_and_verdicts(tmp_path: Path) -> None:
    # examples/seed-004-node-notready-recreate.yaml: worker-0 is cut off at 65 s. The node lifecycle controller
    # (every 5 s) marks it Unknown on the first look more than 50 s (nodeMonitorGracePeriod) after it last saw
    # its Lease renewed, at 115 s (the example's expectation: after 105 s, by 125 s), the pods on it not ready in
    # the same pass, and the NoSchedule taint follows the condition. The
    # NoExecute taint comes on the next pass, 120 s (processTaintBaseEviction looks at the Ready condition
    # observed before the pass updated it), and the taint eviction deletes the pods 300 s later (the
    # DefaultTolerationSeconds toleration), at 420 s, with their 30 s grace
    tl, rep = _scenario_page(tmp_path, Path("examples/seed-004-node-notready-recreate.yaml").read_text())
    assert [ln["lane"] for ln in tl["lanes"] if ln["kind"] == "node"] == [
        "worker-0 · Ready", "worker-0 · faults", "worker-1 · Ready", "worker-2 · Ready"]

    def bars(lane: str) -> list[tuple]:
        return [(s["start"], s["end"], s["label"], s["detail"]) for s in tl["segments"] if s["lane"] == lane]

    assert bars("worker-0 · Ready") == [(0.0, 115.0, "Ready=True", "KubeletReady"),
                                        (115.0, 600.0, "Ready=Unknown", "NodeStatusUnknown")]
    assert bars("worker-1 · Ready") == bars("worker-2 · Ready") == [(0.0, 600.0, "Ready=True", "KubeletReady")]
    assert bars("worker-0 · faults") == [(65.0, 600.0, "NetworkPartition", "{}")]
    marks = {(m["lane"], m["t"], m["label"]) for m in tl["markers"]}
    assert {("worker-0 · Ready", 115.0, "taint node.kubernetes.io/unreachable:NoSchedule added"),
            ("worker-0 · Ready", 120.0, "taint node.kubernetes.io/unreachable:NoExecute added")} <= marks
    assert {(f"worker-{i} · Ready", 0.0, "registered by kubelet") for i in range(3)} <= marks
    agent = "default/agent · pod"
    assert {(agent, 0.0, "created by kubectl"), (agent, 115.0, "Ready=False"),
            (agent, 420.0, "DisruptionTarget=True"), (agent, 420.0, "deletionTimestamp set, grace 30 s")} <= marks
    assert not [m for m in tl["markers"] if m["lane"] == agent and m["kind"] == "scheduled"]  # spec.nodeName
    (db,) = [ln["object"] for ln in tl["lanes"] if ln["object"].startswith("Pod/default/db-") and ln["kind"] == "pod"]
    db_marks = [(m["t"], m["label"]) for m in tl["markers"] if m["lane"] == f"{db[4:]} · pod"
                and m["kind"] in ("created", "scheduled")]
    assert db_marks == [(0.0, "created by replicaset-controller"), (0.0, "scheduled to worker-0")]
    # the verdicts at the top, in the scenario's order, each with its detail
    page = html.unescape((tmp_path / "s.html").read_text(encoding="utf-8"))
    rows = re.findall(r"<tr class='(pass|fail)'><td>\\u2713</td><td>(.*?)</td><td>(.*?)</td></tr>", page)
    assert [(d, x) for _, d, x in rows] == [(v["description"], v["detail"]) for v in rep["expectations"]]
    assert len(rows) == 10 and {p for p, _, _ in rows} == {"pass"}
    assert [x for _, _, x in rows if x.startswith("held at")] == ["held at 115s", "held at 120s", "held at 115s",
                                                                    "held at 115s", "held at 420s"]


def test_same_report_same_bytes(tmp_path: Path) -> None:
    a = _page(tmp_path)
    assert a == _page(tmp_path)
    assert len(a.encode()) < 5_000_000


def test_report_command_draws_a_saved_trace(tmp_path: Path) -> None:
    trace, out = tmp_path / "t.json", tmp_path / "t.html"
    assert CliRunner().invoke(main, ["run", SEED, "--report", str(trace), "--quiet"]).exit_code == 0
    r = CliRunner().invoke(main, ["report", str(trace), "--html", str(out)])
    assert r.exit_code == 0 and _timeline(out.read_text(encoding="utf-8"))["end"] == 40.0
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = CliRunner().invoke(main, ["report", str(bad), "--html", str(out)])
    assert r.exit_code == 2 and "expected a podlife-trace/v1 report" in r.output


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def headless_dom(page: Path, tmp_path: Path) -> str:
    """The <html> tag of PAGE as headless Chromium leaves it once its scripts ran (10 s of virtual time), with
    its data-* marks."""
    assert CHROMIUM is not None, "Chromium is required here"
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120).stdout
    return dom[:dom.index("<head>")]


# CI installs Chromium and sets PODLIFE_REQUIRE_CHROMIUM, so there a missing browser fails instead of skipping
needs_chromium = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PODLIFE_REQUIRE_CHROMIUM"),
                                    reason="Chromium is not installed (.ci/run installs it)")


@needs_chromium
def test_renders_in_headless_chromium_without_script_errors(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    page.write_text(_page(tmp_path), encoding="utf-8")
    head = headless_dom(page, tmp_path)
    assert 'data-podlife-rendered="1"' in head
    assert "data-podlife-error" not in head


# Clicks as a mouse would: a pointer down and up on the plot's event area at the pixel of (t, lane), which
# Bokeh's gesture handling turns into a tap, its TapTool into a selection and the page's callback into a
# filter of the lanes; then a click of the "show every pod and node" button. Each step's lanes (the y range's
# factors) are left on <html> for --dump-dom.
CLICKS = """<script>
(function go(n) {
  const root = document.documentElement, doc = window.Bokeh && Bokeh.documents[0];
  const plot = doc && doc.get_model_by_name("podlife-timeline"), view = plot && Bokeh.index.find_one(plot);
  if (view == null || !view.canvas_view.events_el.isConnected) { if (n > 0) setTimeout(() => go(n - 1), 50); return; }
  const steps = [["pod", 50, "default/agent · pod"], ["show-all"], ["node", 300, "worker-0 · faults"]];
  const lanes = {};
  (function step(i) {
    if (i == steps.length) { root.dataset.lanes = JSON.stringify(lanes); return; }
    const [what, t, lane] = steps[i];
    if (what == "show-all") {
      Bokeh.index.find_one(doc.get_model_by_name("podlife-timeline-show-all")).button_el.click();
    } else {
      const area = view.canvas_view.events_el, box = area.getBoundingClientRect();
      const at = {clientX: box.left + view.frame.x_scale.compute(t),
                  clientY: box.top + view.frame.y_scale.compute(lane),
                  pointerId: 1, pointerType: "mouse", isPrimary: true, bubbles: true, composed: true, button: 0};
      area.dispatchEvent(new PointerEvent("pointerdown", {...at, buttons: 1}));
      area.dispatchEvent(new PointerEvent("pointerup", {...at, buttons: 0}));
    }
    setTimeout(() => { lanes[what] = [...plot.y_range.factors]; step(i + 1); }, 500);  // past a double tap
  })(0);
})(200);
</script>"""


@needs_chromium
def test_clicking_a_pod_shows_only_its_lanes_in_headless_chromium(tmp_path: Path) -> None:
    tl, _ = _scenario_page(tmp_path, Path("examples/seed-004-node-notready-recreate.yaml").read_text())
    text = (tmp_path / "s.html").read_text(encoding="utf-8")
    at = text.rindex("</body>")
    page = tmp_path / "clicks.html"
    page.write_text(text[:at] + CLICKS + text[at:], encoding="utf-8")
    head = headless_dom(page, tmp_path)
    assert "data-podlife-error" not in head
    lanes = json.loads(html.unescape(re.search(r'data-lanes="(.*?)"', head).group(1)))
    every = [ln["lane"] for ln in reversed(tl["lanes"])]   # the plot lists lanes bottom up
    # the agent pod's phase bar at 50 s: its two lanes only; the button: all of them again; worker-0's
    # partition bar at 300 s: the node's two lanes
    assert lanes == {"pod": ["default/agent · agent", "default/agent · pod"], "show-all": every,
                     "node": ["worker-0 · faults", "worker-0 · Ready"]}

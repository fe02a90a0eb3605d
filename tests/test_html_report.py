"""The HTML report: its timeline data for the seed-000 pod, and that it draws in a real browser."""

from __future__ import annotations

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


def _timeline(page: str) -> dict:
    m = re.search(r"<script type='application/json' id='podlife-timeline'>(.*?)</script>", page, re.S)
    assert m
    return json.loads(m.group(1))


def test_seed_000_lanes_and_markers(tmp_path: Path) -> None:
    tl = _timeline(_page(tmp_path))
    lanes = [ln["lane"] for ln in tl["lanes"]]
    assert lanes == ["node-1 · Ready", f"{POD} · pod", f"{POD} · {SIDECAR}", f"{POD} · {APP}",
                     f"{POD} · {SIDECAR} hooks", f"{POD} · {APP} hooks"]
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
    # the app's process is gone at 14.542 but the kubelet reports it terminated only at 28.009
    exited = [s for s in tl["segments"] if s["lane"] == f"{POD} · {APP}" and s["state"] == "exited"]
    assert [(s["start"], s["end"]) for s in exited] == [(14.542, 28.009)]


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
    """The <html> tag of PAGE as headless Chromium leaves it (with its data-podlife-* marks)."""
    assert CHROMIUM is not None
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120).stdout
    return dom[:dom.index("<head>")]


# CI installs Chromium and sets PODLIFE_REQUIRE_CHROMIUM, so there a missing browser fails instead of skipping
@pytest.mark.skipif(CHROMIUM is None and not os.environ.get("PODLIFE_REQUIRE_CHROMIUM"),
                    reason="Chromium is not installed (.ci/run installs it)")
def test_renders_in_headless_chromium_without_script_errors(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    page.write_text(_page(tmp_path), encoding="utf-8")
    assert CHROMIUM is not None, "Chromium is required here"
    head = headless_dom(page, tmp_path)
    assert 'data-podlife-rendered="1"' in head
    assert "data-podlife-error" not in head

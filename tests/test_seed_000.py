"""Seed 000: the sidecar graceful-exit incident, against the seed's real kubelet log.

DELETE at 20:39:37.908. Log (seed) → podlife:
  sidecar preStop completed       40.975805 → 40.975
  app "... with 5 second grace"   40.975845 → 40.975
  app preStop completed, "2 second grace period override"   44.044590 → 44.042
  app "exited normally"           46.217074 → 46.212
  sidecar preStop completed (2nd), "-3 second grace period override"  49.282611 → 49.279
  sidecar exited normally         59.515700 → 59.509  (21.6 s after the DELETE)
  removed from etcd               20:40:11.518521 → 11.500
Relative to the DELETE, the seed's numbers are 3.068, 6.136, 8.309, 11.375, 21.607 and 33.610.
"""

from __future__ import annotations

from pathlib import Path

from podlife.scenario.load import load_scenario
from podlife.scenario.run import run
from tests.helpers import logs, records

EXAMPLE = Path(__file__).parent.parent / "examples" / "seed-000-sidecar-graceful-exit.yaml"
DELETE = 6.408  # 20:39:37.908 with startTime 20:39:31.5


def _run():
    return run(load_scenario(str(EXAMPLE)))


def _kuberuntime(r, contains):
    return [(round(x["t"] - DELETE, 3), x["line"], x["message"]) for x in records(r, "log")
            if x["file"] == "kuberuntime_container.go" and contains in x["message"]]


def test_seed_000_kubelet_log_times():
    r = _run()
    assert r.passed
    assert [(t, line) for t, line, m in _kuberuntime(r, "Killing container")] == [
        (3.067, 563), (6.134, 580), (8.304, 563), (11.371, 580)]
    assert [m.rsplit(",", 1)[-1].strip() for t, line, m in _kuberuntime(r, "override")] == [
        "but using 2 second grace period override", "but using -3 second grace period override"]
    # the sidecar's preStop runs twice: first alone, then again when the sidecar itself is killed
    assert [(t, line) for t, line, m in _kuberuntime(r, "preStop hook")] == [
        (0.0, 468), (3.067, 485), (3.067, 468), (6.134, 485), (8.304, 468), (11.371, 485)]
    assert [t for t, line, m in _kuberuntime(r, "exited normally")] == [8.304, 21.601]
    assert round(logs(r, "tear down pod")[0][0] - DELETE, 3) == 21.601
    assert round(logs(r, "removed from etcd")[0][0] - DELETE, 3) == 33.592
    # the status manager's reclaim checks, on its 10 s grid: the seed shows 37.917, 41.402 and 51.402
    assert [round(t + 31.5, 3) for t, _ in logs(r, "some containers are still running")] == [37.908, 41.5, 51.5]


def test_seed_000_signals():
    r = _run()
    sig = [(round(s["t"] - DELETE, 3), s["container"], s["signal"], s.get("timeoutSeconds"))
           for s in records(r, "signal")]
    assert sig == [
        (6.134, "kirovpre-krds-ys02", "SIGTERM", 2),
        (8.134, "kirovpre-krds-ys02", "SIGKILL", None),
        (11.371, "agent-kirovpre-krds-ys02", "SIGTERM", -3),   # docker: a negative timeout waits for ever
    ]


def test_seed_000_klog_line_format():
    r = _run()
    from podlife.report.klog import render

    text = render(r.cluster.trace.records, r.scenario.start_time)
    line = next(x for x in text.splitlines() if "but using -3 second" in x)
    assert line.startswith("node-1 kubelet[3033]: I0603 20:39:49.279000    3033 kuberuntime_container.go:580] "
                           'Killing container {"docker" "')
    assert "Killing container with id docker://agent-kirovpre-krds-ys02" in text
    assert "Killing container with id docker://kirovpre-krds-ys02:Need to kill Pod" in text

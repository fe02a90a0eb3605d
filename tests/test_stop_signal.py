"""lifecycle.stopSignal (KEP-4960, ContainerStopSignals): the runtime sends it instead of SIGTERM, from 1.37."""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import records, run_text

POD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: stopsignal}
spec:
  until: 1m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        os: {name: linux}
        terminationGracePeriodSeconds: 20
        containers:
        - name: nginx
          image: nginx:1.27
          command: [nginx, -g, "daemon off;"]
          lifecycle: {stopSignal: SIGQUIT}
  actions:
    - {at: 5s, delete: pod/web}
"""


@pytest.mark.parametrize("version, signal, dropped", [("1.36", "SIGTERM", True), ("1.37", "SIGQUIT", False)])
def test_stop_signal_replaces_sigterm(tmp_path, version, signal, dropped):
    """The DELETE at 5 s: StopContainer sends the container's stop signal with the 20 s grace; nginx (a known
    handler, podlife's behaviour table) exits 0.1 s later, seen at the 6 s relist, and the pod is removed.
    On 1.36 the gate is off: the API server drops the field, the runtime sends SIGTERM, the user is warned."""
    r = run_text(tmp_path, POD, version=version)
    assert [(x["t"], x["signal"], x.get("timeoutSeconds")) for x in records(r, "signal")] == [(5.0, signal, 20)]
    assert [x["t"] for x in records(r, "runtime", op="exit")] == [5.1]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [6.0]
    warned = [w for w in r.scenario.warnings if "lifecycle.stopSignal" in w]
    assert bool(warned) == dropped
    if dropped:
        assert warned[0].endswith("spec.objects[0].spec.containers[0].lifecycle.stopSignal: dropped: Kubernetes "
                                  "1.36 does not have this field (its feature gate is off)")


def test_stop_signal_reported_in_the_status(tmp_path):
    r = run_text(tmp_path, POD.replace("delete: pod/web", "cordon: node-1"), version="1.37")
    [cs] = r.cluster.store.get("Pod", "default", "web")["status"]["containerStatuses"]
    assert cs["stopSignal"] == "SIGQUIT"


def test_sigkill_as_stop_signal_kills_at_once(tmp_path):
    r = run_text(tmp_path, POD.replace("SIGQUIT", "SIGKILL"), version="1.37")
    assert [(x["t"], x["signal"]) for x in records(r, "signal")] == [(5.0, "SIGKILL")]
    assert [(x["t"], x["detail"]) for x in records(r, "runtime", op="exit")] == [(5.0, "exitCode 137")]


@pytest.mark.parametrize("change, message", [
    ("        os: {name: linux}\n", "spec.containers[0].lifecycle.stopSignal: Forbidden: may not be set for "
                                   "containers with empty `spec.os.name`"),
    ("linux", 'spec.containers[0].lifecycle.stopSignal: Unsupported value: "SIGQUIT": supported values: '
              '"SIGKILL", "SIGTERM"'),
])
def test_validation_needs_the_pod_os(tmp_path, change, message):
    """validateContainerStopSignal: spec.os.name must be set; a Windows pod may only name SIGKILL or SIGTERM."""
    text = POD.replace(change, "") if change.startswith(" ") else POD.replace(change, "windows")
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, text, version="1.37")
    assert message in str(e.value)


def test_html_timeline_marks_the_stop_signal(tmp_path):
    """The stop signal opens the container's shutdown in the report like SIGTERM does, under its own name."""
    from podlife.report.assemble import report
    from podlife.report.html import timeline

    tl = timeline(report(run_text(tmp_path, POD, version="1.37")))
    [mark] = [m for m in tl["markers"] if m["t"] == 5.0 and m["kind"] == "SIGTERM"]
    assert mark["label"] == "nginx: SIGQUIT" and mark["detail"] == "grace 20 s"
    assert any(s["state"] == "terminating" and s["start"] == 5.0 for s in tl["segments"])

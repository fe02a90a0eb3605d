"""lifecycle.stopSignal (KEP-4960, ContainerStopSignals alpha from 1.33): with the gate, StopContainer sends
the container's own stop signal; without it, the image's (SIGTERM)."""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import records, run_text

SCENARIO = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: stop-signal}}
spec:
  kubernetesVersion: "{version}"
  cluster:
    nodes: [{{name: node-1}}]
    kubelet:
      featureGates: {gates}
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {{name: web}}
    spec:
      os: {{name: linux}}
      containers:
      - name: app
        image: nginx:1.27
        lifecycle: {{stopSignal: SIGQUIT}}
  actions:
  - at: 5s
    delete: pod/web
"""


@pytest.mark.parametrize("gates, sent", [("{ContainerStopSignals: true}", "SIGQUIT"), ("{}", "SIGTERM")])
def test_the_stop_signal_follows_the_gate(tmp_path, gates: str, sent: str) -> None:
    result = run_text(tmp_path, SCENARIO.format(version="1.33", gates=gates))
    got = [(r["t"], r["signal"], r.get("timeoutSeconds")) for r in records(result, "signal", container="app")]
    assert got == [(5.0, sent, 30)]   # deleted at 5 s, the default 30 s grace


def test_the_gate_is_unknown_before_1_33(tmp_path) -> None:
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, SCENARIO.format(version="1.32", gates="{ContainerStopSignals: true}"))
    assert "unrecognized feature gate: ContainerStopSignals" in str(e.value)
    assert "exists from 1.33" in str(e.value)

"""A lifecycle hook's sleep action (KEP-3960 PodLifecycleSleepAction: beta and on by default from 1.30)."""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: sleep}
spec:
  until: 60s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        terminationGracePeriodSeconds: 30
        containers:
          - name: app
            image: nginx:1.27
            lifecycle: {preStop: {sleep: {seconds: 5}}}
  actions:
    - {at: 10s, delete: pod/web}
"""


@pytest.mark.parametrize("version, hook_end, timeout", [("1.30", 15.0, 25), ("1.34", 15.0, 25), ("1.29", 10.0, 30)])
def test_prestop_sleep_delays_sigterm(tmp_path, version, hook_end, timeout):
    """Delete at 10 s with 30 s of grace. From 1.30 the hook sleeps 5 s, then SIGTERM comes with 30 - 5 = 25 s
    (executePreStopHook's whole seconds); on 1.29 the gate is off and the hook returns at once."""
    r = run_text(tmp_path, SCENARIO, version=version)
    hooks = [(x["t"], x["phase"]) for x in records(r, "hook", object="Pod/default/web", hook="preStop")]
    assert hooks == [(10.0, "started"), (hook_end, "completed")]
    sigterm = records(r, "signal", object="Pod/default/web", signal="SIGTERM")
    assert [(x["t"], x["timeoutSeconds"]) for x in sigterm] == [(hook_end, timeout)]

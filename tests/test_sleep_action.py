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


@pytest.mark.parametrize("version, hook_end, timeout", [("1.30", 15.0, 25), ("1.34", 15.0, 25), ("1.29", None, 30)])
def test_prestop_sleep_delays_sigterm(tmp_path, version, hook_end, timeout):
    """Delete at 10 s with 30 s of grace. From 1.30 the hook sleeps 5 s, then SIGTERM comes with 30 - 5 = 25 s
    (executePreStopHook's whole seconds); on 1.29 the gate is off: the API server drops the sleep action, and the
    preStop hook with it since sleep was its only handler (dropPodLifecycleSleepAction), so SIGTERM comes at once
    with the whole 30 s."""
    r = run_text(tmp_path, SCENARIO, version=version)
    hooks = [(x["t"], x["phase"]) for x in records(r, "hook", object="Pod/default/web", hook="preStop")]
    assert hooks == ([(10.0, "started"), (hook_end, "completed")] if hook_end else [])
    hook_end = hook_end or 10.0
    sigterm = records(r, "signal", object="Pod/default/web", signal="SIGTERM")
    assert [(x["t"], x["timeoutSeconds"]) for x in sigterm] == [(hook_end, timeout)]


@pytest.mark.parametrize("version, ok", [("1.32", False), ("1.33", True), ("1.34", True)])
def test_sleep_zero_needs_allow_zero(tmp_path, version, ok):
    """validateSleepAction: 0 s is refused until PodLifecycleSleepActionAllowZero is on by default (beta, 1.33)."""
    from podlife.scenario.errors import ScenarioError

    text = SCENARIO.replace("seconds: 5", "seconds: 0")
    if ok:
        r = run_text(tmp_path, text, version=version)
        assert [x["t"] for x in records(r, "signal", signal="SIGTERM")] == [10.0]
        return
    with pytest.raises(ScenarioError) as exc:
        run_text(tmp_path, text, version=version)
    assert str(exc.value).endswith(
        'spec.objects[0]: Pod "web" is invalid: spec.containers[0].lifecycle.preStop.sleep: Invalid value: 0: '
        "must be greater than 0 and less than terminationGracePeriodSeconds (30)")

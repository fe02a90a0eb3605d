"""Pod conditions the kubelet writes at the end of a pod's life (pkg/kubelet/status/generate.go)."""

from __future__ import annotations

import pytest

from tests.helpers import records, run_text

FAILING = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: fails}
spec:
  until: 20s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: job}
      spec:
        restartPolicy: Never
        containers: [{name: app, image: busybox, command: [sh, -c, "sleep 3; exit 1"]}]
"""


@pytest.mark.parametrize("version, reason", [("1.24", "ContainersNotReady"), ("1.25", "PodFailed"),
                                             ("1.34", "PodFailed")])
def test_failed_pod_ready_reason(tmp_path, version, reason):
    """The container exits 1 at 3.1 s (0.1 s start + sleep 3) and the pod ends Failed. The Ready condition
    written with the Failed phase says why: before PR #110256 ContainersNotReady, from 1.25 PodFailed."""
    r = run_text(tmp_path, FAILING, version=version)
    failed_at = [x["t"] for x in records(r, "phase", object="Pod/default/job", to="Failed")]
    assert len(failed_at) == 1
    ready = [(x["t"], x["status"], x.get("reason")) for x in records(r, "condition", object="Pod/default/job",
                                                                      conditionType="Ready")]
    assert ready[-1][1:] == ("False", reason) and ready[-1][0] <= failed_at[0]
    final = [c for c in r.cluster.store.get("Pod", "default", "job")["status"]["conditions"]
             if c["type"] in ("Ready", "ContainersReady")]
    assert [(c["status"], c.get("reason"), "message" in c) for c in final] == [
        ("False", reason, reason == "ContainersNotReady")] * 2

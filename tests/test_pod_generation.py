"""KEP-5067: pods carry metadata.generation (1.33) and the kubelet reports status.observedGeneration (1.34)."""

from __future__ import annotations

import pytest

from tests.helpers import run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: gen}
spec:
  kubernetesVersion: "VERSION"
  until: 20s
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: app, image: nginx:1.27, command: [nginx]}]
  actions:
  - {at: 5s, patch: pod/web, mergePatch: {spec: {activeDeadlineSeconds: 3600}}}
"""


@pytest.mark.parametrize("version, generation, observed", [("1.32", None, None), ("1.33", 2, None),
                                                             ("1.34", 2, 2)])
def test_generation_follows_the_spec(tmp_path, version, generation, observed):
    # created with generation 1; setting activeDeadlineSeconds at 5 s is a spec change: 2. The kubelet's next
    # status reports the generation it acted on (1.34+).
    r = run_text(tmp_path, SCENARIO.replace("VERSION", version))
    pod = r.cluster.store.get("Pod", "default", "web")
    assert pod["metadata"].get("generation") == generation
    assert pod["status"].get("observedGeneration") == observed

"""LimitRanger, ResourceQuota and RuntimeClass admission: what they change in a pod and when they refuse it,
worded as upstream's plugins word it."""

from __future__ import annotations

import pytest

from podlife.scenario.errors import ScenarioError
from tests.helpers import records, run_text

HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: adm}\nspec:\n  until: 30s\n  objects:\n"
POD = ("  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: app, image: x%s}]}}\n")


def test_quota_on_pods_limits_a_deployment(tmp_path):
    """pods: 3 lets three of four replicas in; the fourth is refused (exceeded quota: NAME, requested, used,
    limited) and the ReplicaSet controller retries it with its rate-limited back-off, each time refused again.
    status.used sums the three pods' requests and limits."""
    r = run_text(tmp_path, HEAD + """\
  - {apiVersion: v1, kind: ResourceQuota, metadata: {name: compute}, spec: {hard: {pods: "3", requests.cpu: "1",
     limits.memory: 1Gi}}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 4
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: nginx, resources: {requests: {cpu: 200m}, limits: {memory: 256Mi}}}]}
""")
    assert len([x for x in records(r, "api", verb="create") if x["object"].startswith("Pod/")]) == 3
    failed = records(r, "event", reason="FailedCreate")
    assert failed and all(x["message"].endswith("is forbidden: exceeded quota: compute, requested: pods=1, used: "
                                                "pods=3, limited: pods=3") for x in failed)
    quota = r.cluster.store.get("ResourceQuota", "default", "compute")
    assert quota["status"]["used"] == {"limits.memory": "768Mi", "pods": "3", "requests.cpu": "600m"}


def test_quota_on_cpu_needs_every_container_to_say(tmp_path):
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, HEAD + "  - {apiVersion: v1, kind: ResourceQuota, metadata: {name: compute}, spec: {hard: "
                                  "{limits.cpu: '2', requests.memory: 1Gi}}}\n" + POD % "")
    assert str(e.value).endswith('pods "p" is forbidden: failed quota: compute: must specify limits.cpu for: app; '
                                 "requests.memory for: app")


def test_quota_counts_other_kinds(tmp_path):
    # the namespace's kube-root-ca.crt (root CA publisher) is one of the configmaps counted, as upstream
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, HEAD + """\
  - {apiVersion: v1, kind: ResourceQuota, metadata: {name: objects}, spec: {hard: {configmaps: "2"}}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
""")
    assert str(e.value).endswith('configmaps "b" is forbidden: exceeded quota: objects, requested: configmaps=1, '
                                 "used: configmaps=2, limited: configmaps=2")


LIMITS = ("  - {apiVersion: v1, kind: LimitRange, metadata: {name: l}, spec: {limits: [{type: Container, "
          "min: {cpu: 100m}, max: {memory: 1Gi}, maxLimitRequestRatio: {cpu: '4'}}]}}\n")


@pytest.mark.parametrize("resources, message", [
    # min: a request below it; max: a limit above it; the ratio of limit to request (LimitRange defaulting made
    # max the default limit, so a container without a memory limit gets 1Gi and passes the max)
    ("{requests: {cpu: 50m}, limits: {cpu: 200m}}", "minimum cpu usage per Container is 100m, but request is 50m"),
    ("{requests: {cpu: 100m}, limits: {cpu: 100m, memory: 2Gi}}",
     "maximum memory usage per Container is 1Gi, but limit is 2Gi"),
    ("{requests: {cpu: 100m}, limits: {cpu: '1'}}",   # 1000m / 100m = 10 > 4
     "cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000"),
])
def test_limit_range_bounds(tmp_path, resources, message):
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, HEAD + LIMITS + POD % f", resources: {resources}")
    assert str(e.value).endswith(f'pods "p" is forbidden: {message}')


def test_limit_range_defaults_the_limit_from_max(tmp_path):
    r = run_text(tmp_path, HEAD + LIMITS + POD % ", resources: {requests: {cpu: 100m}, limits: {cpu: 100m}}")
    pod = r.cluster.store.get("Pod", "default", "p")
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "1Gi"},
                                                         "limits": {"cpu": "100m", "memory": "1Gi"}}
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == \
        "LimitRanger plugin set: memory request for container app; memory limit for container app"


def test_limit_range_on_claims(tmp_path):
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, HEAD + """\
  - {apiVersion: v1, kind: LimitRange, metadata: {name: l}, spec: {limits: [{type: PersistentVolumeClaim,
     max: {storage: 10Gi}}]}}
  - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data}, spec: {accessModes: [ReadWriteOnce],
     resources: {requests: {storage: 20Gi}}}}
""")
    assert str(e.value).endswith('persistentvolumeclaims "data" is forbidden: maximum storage usage per '
                                 "PersistentVolumeClaim is 10Gi, but request is 20Gi")


@pytest.mark.parametrize("extra, message", [
    (", runtimeClassName: kata", 'pod rejected: RuntimeClass "kata" not found'),
    (", overhead: {cpu: 100m}", "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"),
])
def test_runtime_class_refusals(tmp_path, extra, message):
    with pytest.raises(ScenarioError) as e:
        run_text(tmp_path, HEAD + (POD % "").replace("}]}}", "}]" + extra + "}}"))
    assert str(e.value).endswith(f'pods "p" is forbidden: {message}')

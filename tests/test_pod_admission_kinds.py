"""What other kinds do to a pod's start: ServiceAccount admission, scheduling gates, extended resources."""

from __future__ import annotations

from tests.helpers import records, run_text

HEAD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: kinds}
spec:
  kubernetesVersion: "VERSION"
  until: 20s
"""


def scenario(body: str, version: str = "1.34") -> str:
    return HEAD.replace("VERSION", version) + body


DEPLOYMENT = """
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: mesh}
    spec:
      replicas: 1
      selector: {matchLabels: {app: mesh}}
      template:
        metadata: {labels: {app: mesh}}
        spec:
          serviceAccountName: mesh-sa
          containers: [{name: app, image: app:1}]
"""

SERVICE_ACCOUNT = """
  - apiVersion: v1
    kind: ServiceAccount
    metadata: {name: mesh-sa}
"""


def test_every_namespace_gets_a_default_service_account_and_pods_use_it(tmp_path):
    r = run_text(tmp_path, scenario("""
  objects:
  - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: web, namespace: team}
    spec: {containers: [{name: app, image: app:1}]}
"""))
    created = [x["object"] for x in records(r, "api", verb="create", by="service-account-controller")]
    assert created == ["ServiceAccount/default/default", "ServiceAccount/kube-node-lease/default",
                       "ServiceAccount/kube-public/default", "ServiceAccount/kube-system/default",
                       "ServiceAccount/team/default"]
    pod = r.cluster.store.get("Pod", "team", "web")
    assert (pod["spec"]["serviceAccountName"], pod["spec"]["serviceAccount"]) == ("default", "default")


def test_missing_service_account_is_forbidden_until_it_exists(tmp_path):
    # plugin/pkg/admission/serviceaccount: the ReplicaSet's create is Forbidden; its controller records
    # FailedCreate and retries with the rate limiter's backoff until the account appears (created at 3 s)
    r = run_text(tmp_path, scenario(DEPLOYMENT + """
  actions:
  - at: 3s
    create: {apiVersion: v1, kind: ServiceAccount, metadata: {name: mesh-sa}}
"""))
    failed = records(r, "event", reason="FailedCreate")
    assert failed and failed[0]["t"] == 0.0
    assert failed[0]["message"].startswith('Error creating: pods "mesh-')
    assert failed[0]["message"].endswith('" is forbidden: error looking up service account default/mesh-sa: '
                                         'serviceaccount "mesh-sa" not found')
    assert all(e["t"] < 3.0 for e in failed)
    pods = [x for x in records(r, "api", verb="create") if x["object"].startswith("Pod/")]
    assert len(pods) == 1 and pods[0]["t"] >= 3.0


def test_existing_service_account_admits(tmp_path):
    r = run_text(tmp_path, scenario(DEPLOYMENT + SERVICE_ACCOUNT))
    assert not records(r, "event", reason="FailedCreate")
    assert [x["t"] for x in records(r, "api", verb="bind")] == [0.0]


GATED = """
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      schedulingGates: [{name: example.com/quota}]
      containers: [{name: app, image: app:1}]
  actions:
  - at: 10s
    patch: pod/web
    mergePatch: {spec: {schedulingGates: null}}
"""


def test_scheduling_gates_hold_the_pod_until_removed(tmp_path):
    # pkg/registry/core/pod/strategy.go applySchedulingGatedCondition; plugins/schedulinggates PreEnqueue
    r = run_text(tmp_path, scenario(GATED))
    cond = [(x["t"], x["status"], x["reason"]) for x in
            records(r, "condition", object="Pod/default/web", conditionType="PodScheduled")]
    assert cond == [(0.0, "False", "SchedulingGated"), (10.0, "True", None)]
    assert [x["t"] for x in records(r, "api", verb="bind")] == [10.0]
    assert not records(r, "event", reason="FailedScheduling")


def test_scheduling_gates_are_dropped_while_the_feature_is_off(tmp_path):
    # 1.26: PodSchedulingReadiness alpha, off by default: the API server drops the field
    r = run_text(tmp_path, scenario(GATED, "1.26"))
    assert [x["t"] for x in records(r, "api", verb="bind")] == [0.0]
    assert "schedulingGates" not in r.cluster.store.get("Pod", "default", "web")["spec"]


def test_extended_resources_are_scheduled_by_node_capacity(tmp_path):
    # noderesources/fit.go: a scalar resource a node does not have counts as 0 allocatable
    r = run_text(tmp_path, scenario("""
  cluster:
    nodes:
    - name: cpu-1
    - name: gpu-1
      capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "1"}
  objects:
  - &pod
    apiVersion: v1
    kind: Pod
    metadata: {name: infer-a}
    spec:
      containers: [{name: model, image: infer:1, resources: {limits: {nvidia.com/gpu: 1}}}]
  - {<<: *pod, metadata: {name: infer-b}}
"""))
    assert [(x["object"], x["node"]) for x in records(r, "api", verb="bind")] == [("Pod/default/infer-a", "gpu-1")]
    failed = records(r, "event", reason="FailedScheduling", object="Pod/default/infer-b")
    assert failed[0]["message"] == ("0/2 nodes are available: 2 Insufficient nvidia.com/gpu. preemption: 0/2 nodes "
                                    "are available: 2 No preemption victims found for incoming pod..")

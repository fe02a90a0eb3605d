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


REFS = """
  objects:
  - apiVersion: v1
    kind: Pod
    metadata: {name: env}
    spec:
      containers:
      - name: app
        image: app:1
        env:
        - {name: MODE, valueFrom: {configMapKeyRef: {name: settings, key: mode}}}
        - {name: TOKEN, valueFrom: {secretKeyRef: {name: absent, key: token, optional: true}}}
  - apiVersion: v1
    kind: Pod
    metadata: {name: vol}
    spec:
      volumes:
      - {name: cfg, configMap: {name: settings}}
      - {name: extra, secret: {secretName: absent, optional: true}}
      containers:
      - name: app
        image: app:1
        volumeMounts: [{name: cfg, mountPath: /etc/app}]
  actions:
  - at: 5s
    create: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings}, data: {mode: fast}}
"""


def test_missing_config_map_in_env_is_create_container_config_error(tmp_path):
    # kubelet_pods.go makeEnvironmentVariables → startContainer: Warning Failed "Error: configmap ... not found",
    # waiting CreateContainerConfigError; the optional Secret is skipped. The sandbox made at 0 is a PLEG
    # ContainerStarted event at the 1 s relist (generic.go relists sandboxes as containers), whose sync fails the
    # same way; that failed sync is retried after the pod worker's backoff (10 s, jitter 0.5: 11-16 s), by which
    # time the ConfigMap (5 s) exists
    r = run_text(tmp_path, scenario(REFS))
    failed = [(e["t"], e["message"]) for e in records(r, "event", reason="Failed", object="Pod/default/env")]
    assert failed == [(0.0, 'Error: configmap "settings" not found'), (1.0, 'Error: configmap "settings" not found')]
    waiting = [(x["t"], x["state"], x.get("reason")) for x in
               records(r, "container", object="Pod/default/env", container="app")]
    assert waiting[:2] == [(0.0, "waiting", "ContainerCreating"), (1.0, "waiting", "CreateContainerConfigError")]
    [created] = [e["t"] for e in records(r, "event", reason="Created", object="Pod/default/env")]
    assert 11.0 <= created <= 16.0
    started = records(r, "event", reason="Started", object="Pod/default/env")
    assert [e["t"] for e in started] == [round(created + 0.1, 3)]


def test_missing_config_map_volume_fails_mount_with_backoff(tmp_path):
    # MountVolume.SetUp retried by the reconciler with 500 ms doubling backoff: 0, 0.5, 1.5, 3.5, then 7.5 s
    # finds the ConfigMap (created at 5 s); the containers start in the sync that follows, reported at the
    # next PLEG relist (8 s). The optional Secret volume does not block.
    r = run_text(tmp_path, scenario(REFS))
    mounts = [(e["t"], e["message"]) for e in records(r, "event", reason="FailedMount")]
    assert mounts == [(t, 'MountVolume.SetUp failed for volume "cfg" : configmap "settings" not found')
                      for t in (0.0, 0.5, 1.5, 3.5)]
    assert [x["t"] for x in records(r, "phase", object="Pod/default/vol", to="Running")] == [8.0]

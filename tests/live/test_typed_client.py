"""The official Python client's typed API against ``podlife up``: every kind round-trips through create, read,
list, patch, watch and delete with the client deserializing each answer into its model classes (which refuse an
object missing a field the OpenAPI marks required, as Go encodes it), and writes that change nothing keep the
resourceVersion and wake no watcher (etcd3 store.go GuaranteedUpdate)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.live.conftest import Live

kubernetes = pytest.importorskip("kubernetes")

NS = "typed"
POD_SPEC = {"terminationGracePeriodSeconds": 0, "containers": [{"name": "c", "image": "nginx"}]}
TEMPLATE = {"metadata": {"labels": {"app": "t"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "t"}}

# kind → (API class, method stem, namespaced, body without apiVersion/kind/metadata.name)
KINDS: dict[str, tuple[str, str, bool, str, dict[str, Any]]] = {
    "ConfigMap": ("CoreV1Api", "config_map", True, "v1", {"data": {"a": "1"}}),
    "Secret": ("CoreV1Api", "secret", True, "v1", {"stringData": {"a": "1"}}),
    "Pod": ("CoreV1Api", "pod", True, "v1", {"spec": POD_SPEC}),
    "Service": ("CoreV1Api", "service", True, "v1", {"spec": {"selector": {"app": "t"},
                                                               "ports": [{"port": 80}]}}),
    "ServiceAccount": ("CoreV1Api", "service_account", True, "v1", {}),
    "Endpoints": ("CoreV1Api", "endpoints", True, "v1", {"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                                                                        "ports": [{"port": 80}]}]}),
    "Event": ("CoreV1Api", "event", True, "v1", {"involvedObject": {"kind": "Pod", "name": "x", "namespace": NS},
                                                  "reason": "Test", "message": "m", "type": "Normal"}),
    "LimitRange": ("CoreV1Api", "limit_range", True, "v1", {"spec": {"limits": [
        {"type": "Container", "default": {"cpu": "100m"}}]}}),
    "ResourceQuota": ("CoreV1Api", "resource_quota", True, "v1", {"spec": {"hard": {"pods": "10"}}}),
    "PersistentVolumeClaim": ("CoreV1Api", "persistent_volume_claim", True, "v1", {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": "none"}}),
    "ReplicationController": ("CoreV1Api", "replication_controller", True, "v1", {"spec": {
        "replicas": 0, "selector": {"app": "t"}, "template": TEMPLATE}}),
    "PodTemplate": ("CoreV1Api", "pod_template", True, "v1", {"template": TEMPLATE}),
    "Node": ("CoreV1Api", "node", False, "v1", {}),
    "PersistentVolume": ("CoreV1Api", "persistent_volume", False, "v1", {"spec": {
        "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/x"}}}),
    "Namespace": ("CoreV1Api", "namespace", False, "v1", {}),
    "Deployment": ("AppsV1Api", "deployment", True, "apps/v1", {"spec": {
        "replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}),
    "ReplicaSet": ("AppsV1Api", "replica_set", True, "apps/v1", {"spec": {
        "replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}),
    "StatefulSet": ("AppsV1Api", "stateful_set", True, "apps/v1", {"spec": {
        "replicas": 0, "serviceName": "t", "selector": SELECTOR, "template": TEMPLATE}}),
    "DaemonSet": ("AppsV1Api", "daemon_set", True, "apps/v1", {"spec": {"selector": SELECTOR, "template": {
        "metadata": TEMPLATE["metadata"], "spec": {**POD_SPEC, "nodeSelector": {"none": "none"}}}}}),
    "ControllerRevision": ("AppsV1Api", "controller_revision", True, "apps/v1", {"revision": 1, "data": {}}),
    "Job": ("BatchV1Api", "job", True, "batch/v1", {"spec": {"suspend": True, "template": {
        "spec": {**POD_SPEC, "restartPolicy": "Never"}}}}),
    "CronJob": ("BatchV1Api", "cron_job", True, "batch/v1", {"spec": {"schedule": "0 0 * * *", "jobTemplate": {
        "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}}}}),
    "HorizontalPodAutoscaler": ("AutoscalingV2Api", "horizontal_pod_autoscaler", True, "autoscaling/v2", {"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "none"}, "maxReplicas": 3}}),
    "HorizontalPodAutoscalerV1": ("AutoscalingV1Api", "horizontal_pod_autoscaler", True, "autoscaling/v1", {
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "none"},
                 "maxReplicas": 3}}),
    "PodDisruptionBudget": ("PolicyV1Api", "pod_disruption_budget", True, "policy/v1", {"spec": {
        "minAvailable": 0, "selector": SELECTOR}}),
    "Lease": ("CoordinationV1Api", "lease", True, "coordination.k8s.io/v1", {"spec": {"holderIdentity": "me"}}),
    "EndpointSlice": ("DiscoveryV1Api", "endpoint_slice", True, "discovery.k8s.io/v1", {
        "addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}]}),
    "Ingress": ("NetworkingV1Api", "ingress", True, "networking.k8s.io/v1", {"spec": {"defaultBackend": {
        "service": {"name": "t", "port": {"number": 80}}}}}),
    "IngressClass": ("NetworkingV1Api", "ingress_class", False, "networking.k8s.io/v1", {"spec": {
        "controller": "example.com/x"}}),
    "NetworkPolicy": ("NetworkingV1Api", "network_policy", True, "networking.k8s.io/v1", {"spec": {
        "podSelector": {}}}),
    "Role": ("RbacAuthorizationV1Api", "role", True, "rbac.authorization.k8s.io/v1", {"rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
    "RoleBinding": ("RbacAuthorizationV1Api", "role_binding", True, "rbac.authorization.k8s.io/v1", {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NS}]}),
    "ClusterRole": ("RbacAuthorizationV1Api", "cluster_role", False, "rbac.authorization.k8s.io/v1", {"rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
    "ClusterRoleBinding": ("RbacAuthorizationV1Api", "cluster_role_binding", False,
                           "rbac.authorization.k8s.io/v1", {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": NS}]}),
    "PriorityClass": ("SchedulingV1Api", "priority_class", False, "scheduling.k8s.io/v1", {"value": 1000}),
    "StorageClass": ("StorageV1Api", "storage_class", False, "storage.k8s.io/v1", {"provisioner": "x.io/y"}),
    "CSIDriver": ("StorageV1Api", "csi_driver", False, "storage.k8s.io/v1", {"spec": {}}),
    "RuntimeClass": ("NodeV1Api", "runtime_class", False, "node.k8s.io/v1", {"handler": "runc"}),
    "EventV1": ("EventsV1Api", "event", True, "events.k8s.io/v1", {
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/x",
        "reportingInstance": "x", "action": "Test", "reason": "Test", "type": "Normal",
        "regarding": {"kind": "Pod", "name": "x", "namespace": NS}}),
    "ValidatingWebhookConfiguration": ("AdmissionregistrationV1Api", "validating_webhook_configuration", False,
                                       "admissionregistration.k8s.io/v1", {}),
    "MutatingWebhookConfiguration": ("AdmissionregistrationV1Api", "mutating_webhook_configuration", False,
                                     "admissionregistration.k8s.io/v1", {}),
    "ValidatingAdmissionPolicy": ("AdmissionregistrationV1Api", "validating_admission_policy", False,
                                  "admissionregistration.k8s.io/v1", {"spec": {"validations": [
                                      {"expression": "true"}]}}),
    "ValidatingAdmissionPolicyBinding": ("AdmissionregistrationV1Api", "validating_admission_policy_binding", False,
                                         "admissionregistration.k8s.io/v1", {"spec": {
                                             "policyName": "p", "validationActions": ["Deny"]}}),
    "FlowSchema": ("FlowcontrolApiserverV1Api", "flow_schema", False, "flowcontrol.apiserver.k8s.io/v1", {
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}}}),
    "PriorityLevelConfiguration": ("FlowcontrolApiserverV1Api", "priority_level_configuration", False,
                                   "flowcontrol.apiserver.k8s.io/v1", {"spec": {"type": "Limited", "limited": {
                                       "limitResponse": {"type": "Reject"}}}}),
    "CSINode": ("StorageV1Api", "csi_node", False, "storage.k8s.io/v1", {"spec": {"drivers": []}}),
    "CSIStorageCapacity": ("StorageV1Api", "csi_storage_capacity", True, "storage.k8s.io/v1", {
        "storageClassName": "none"}),
    "VolumeAttachment": ("StorageV1Api", "volume_attachment", False, "storage.k8s.io/v1", {"spec": {
        "attacher": "x.io/y", "nodeName": "none", "source": {"persistentVolumeName": "none"}}}),
    "APIService": ("ApiregistrationV1Api", "api_service", False, "apiregistration.k8s.io/v1", {"spec": {
        "group": "example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10,
        "service": {"namespace": NS, "name": "t"}, "insecureSkipTLSVerify": True}}),
    "CustomResourceDefinition": ("ApiextensionsV1Api", "custom_resource_definition", False,
                                 "apiextensions.k8s.io/v1", {"spec": {
        "group": "typed.example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}),
    "CertificateSigningRequest": ("CertificatesV1Api", "certificate_signing_request", False,
                                  "certificates.k8s.io/v1", {"spec": {
        "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==",
        "signerName": "example.com/x", "usages": ["digital signature"]}}),
}


def _kind(key: str) -> str:
    return key.removesuffix("V1")   # HorizontalPodAutoscalerV1, EventV1: the same kind in another version


_CLUSTERS: dict[str, Live] = {}


def _cluster(live_factory: Callable[..., Live], version: str) -> Live:
    if version not in _CLUSTERS:
        live = live_factory(version, clock="manual")
        code, body = live.json("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                              "metadata": {"name": NS}})
        assert code == 201, body
        _CLUSTERS[version] = live
    return _CLUSTERS[version]


@pytest.fixture(scope="module")
def cluster(live_factory: Callable[..., Live]) -> Live:
    return _cluster(live_factory, "1.32")


def _client(live: Live) -> Any:
    from kubernetes import config

    return config.new_client_from_config(live.kubeconfig)


@pytest.mark.parametrize("version", ["1.27", "1.32"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_typed_round_trip(live_factory: Callable[..., Live], version: str, kind: str) -> None:
    from kubernetes import client, watch

    from podlife.api.schema import GroupVersionKind, builtin_kinds

    cls, stem, namespaced, api_version, extra = KINDS[kind]
    if GroupVersionKind(api_version, _kind(kind)) not in builtin_kinds(int(version.split(".")[1])):
        pytest.skip(f"{api_version} {_kind(kind)} is not served by {version}")
    cluster = _cluster(live_factory, version)
    api = getattr(client, cls)(_client(cluster))
    name = {"APIService": "v1.example.com", "CustomResourceDefinition": "widgets.typed.example.com"}.get(
        kind, f"t-{stem.replace('_', '-')}")
    ns_args: tuple[str, ...] = (NS,) if namespaced else ()
    scope = "namespaced_" if namespaced else ""

    def call(verb: str, *args: Any, **kw: Any) -> Any:
        return getattr(api, f"{verb}_{scope}{stem}")(*args, **kw)

    body = {"apiVersion": api_version, "kind": _kind(kind), "metadata": {"name": name}, **extra}
    listed = call("list", *ns_args, field_selector=f"metadata.name={name}")
    assert listed.items == []
    created = call("create", *ns_args, body)   # the typed client deserializes: a missing required field raises
    assert created.metadata.name == name
    got = call("read", name, *ns_args)
    assert got.metadata.uid == created.metadata.uid
    items = call("list", *ns_args, field_selector=f"metadata.name={name}").items
    assert [i.metadata.name for i in items] == [name]
    patched = call("patch", name, *ns_args, {"metadata": {"labels": {"typed": "yes"}}})
    assert patched.metadata.labels["typed"] == "yes"
    # the same patch again changes nothing: the object keeps its resourceVersion
    again = call("patch", name, *ns_args, {"metadata": {"labels": {"typed": "yes"}}})
    assert again.metadata.resource_version == patched.metadata.resource_version
    events = [(ev["type"], ev["object"]) for ev in watch.Watch().stream(
        getattr(api, f"list_{scope}{stem}"), *ns_args, field_selector=f"metadata.name={name}",
        resource_version=listed.metadata.resource_version, timeout_seconds=1)]
    assert events[0][0] == "ADDED" and events[0][1].metadata.name == name
    assert all(type(o) is type(created) for _, o in events)
    assert [o.metadata.resource_version for t, o in events if t == "MODIFIED"][-1:] == \
        [patched.metadata.resource_version]
    call("delete", name, *ns_args)
    if kind not in ("Namespace", "Pod"):   # those go after their finalization / grace period
        with pytest.raises(client.ApiException) as e:
            call("read", name, *ns_args)
        assert e.value.status == 404


def test_create_answers_the_encoded_zero_status(cluster: Live) -> None:
    """Go encodes status fields without omitempty: a new DaemonSet, ReplicaSet, StatefulSet,
    ReplicationController, HPA (v1 and v2), PodDisruptionBudget and VolumeAttachment answer them as 0 (false),
    a Service its loadBalancer struct."""
    cases = {
        "/apis/apps/v1/namespaces/typed/daemonsets": ("DaemonSet", {"currentNumberScheduled": 0,
                                                                    "numberMisscheduled": 0,
                                                                    "desiredNumberScheduled": 0, "numberReady": 0}),
        "/apis/apps/v1/namespaces/typed/replicasets": ("ReplicaSet", {"replicas": 0}),
        "/apis/apps/v1/namespaces/typed/statefulsets": ("StatefulSet", {"replicas": 0, "availableReplicas": 0}),
        "/api/v1/namespaces/typed/replicationcontrollers": ("ReplicationController", {"replicas": 0}),
        "/apis/autoscaling/v2/namespaces/typed/horizontalpodautoscalers": (
            "HorizontalPodAutoscaler", {"desiredReplicas": 0, "currentMetrics": None}),
        "/apis/autoscaling/v1/namespaces/typed/horizontalpodautoscalers": (
            "HorizontalPodAutoscalerV1", {"currentReplicas": 0, "desiredReplicas": 0}),
        "/apis/policy/v1/namespaces/typed/poddisruptionbudgets": (
            "PodDisruptionBudget", {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                                    "expectedPods": 0}),
        "/api/v1/namespaces/typed/services": ("Service", {"loadBalancer": {}}),
        "/apis/storage.k8s.io/v1/volumeattachments": ("VolumeAttachment", {"attached": False}),
    }
    for path, (kind, status) in cases.items():
        _, _, _, api_version, extra = KINDS[kind]
        name = f"zero-{kind.lower()}"
        code, obj = cluster.json("POST", path, {"apiVersion": api_version, "kind": _kind(kind),
                                                "metadata": {"name": name}, **extra})
        assert code == 201, obj
        # a StatefulSet without pods and an HPA without its target are not touched by their controllers on
        # a manual clock that has not moved
        assert {k: obj["status"].get(k, "absent") for k in status} == status, (kind, obj["status"])
        code, got = cluster.json("GET", f"{path}/{name}")
        assert {k: got["status"].get(k, "absent") for k in status} == status, (kind, got["status"])


def test_node_info_has_every_system_field(live_factory: Callable[..., Live]) -> None:
    """NodeSystemInfo's strings have no omitempty; a kubelet fills them all (machineID, systemUUID, bootID
    from the seed and the node's name), so list_node deserializes."""
    from kubernetes import client

    live = live_factory("1.32", clock="manual")
    nodes = client.CoreV1Api(_client(live)).list_node().items
    assert nodes
    for n in nodes:
        info = n.status.node_info
        assert len(info.machine_id) == 32 and len(info.system_uuid) == 36 and len(info.boot_id) == 36
        assert info.kernel_version and info.os_image and info.kubelet_version == "v1.32.0"
    assert len({n.status.node_info.machine_id for n in nodes}) == len(nodes)
    # the same seed and names: the same identities on another start
    again = client.CoreV1Api(_client(live_factory("1.32", clock="manual"))).list_node().items
    assert [n.status.node_info.machine_id for n in again] == [n.status.node_info.machine_id for n in nodes]


def test_writes_that_change_nothing_keep_the_resource_version(cluster: Live) -> None:
    """A no-op PUT, patch, label, scale and status write: no new resourceVersion, no MODIFIED to a watcher,
    and kubectl says ``(no change)`` (kubectl's patch compares the resourceVersions)."""
    from kubernetes import client, watch

    api = _client(cluster)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    cm = core.create_namespaced_config_map(NS, {"metadata": {"name": "noop"}, "data": {"a": "1"}})
    rv = cm.metadata.resource_version
    assert core.replace_namespaced_config_map("noop", NS, cm).metadata.resource_version == rv
    assert core.patch_namespaced_config_map("noop", NS, {"data": {"a": "1"}}).metadata.resource_version == rv
    out = cluster.kubectl("-n", NS, "label", "configmap", "noop", "x=1").stdout
    assert out.strip() == "configmap/noop labeled"
    labeled = core.read_namespaced_config_map("noop", NS).metadata.resource_version
    assert labeled != rv
    out = cluster.kubectl("-n", NS, "label", "--overwrite", "configmap", "noop", "x=1").stdout
    assert out.strip() == "configmap/noop not labeled"
    out = cluster.kubectl("-n", NS, "patch", "configmap", "noop", "-p", '{"data":{"a":"1"}}').stdout
    assert out.strip() == "configmap/noop patched (no change)"
    events = [(ev["type"], ev["object"].metadata.resource_version) for ev in watch.Watch().stream(
        core.list_namespaced_config_map, NS, field_selector="metadata.name=noop", resource_version=rv,
        timeout_seconds=1)]
    assert events == [("MODIFIED", labeled)]

    # a server-side apply of what the manager already applied (managedfieldsupdater.go keeps its time)
    applied = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"},
                          "data": {"a": "1"}}).encode()
    path = f"/api/v1/namespaces/{NS}/configmaps/ssa?fieldManager=me"
    first = cluster.request("PATCH", path, applied, {"Content-Type": "application/apply-patch+yaml"})
    second = cluster.request("PATCH", path, applied, {"Content-Type": "application/apply-patch+yaml"})
    assert (first[0], second[0]) == (201, 200) and second[2] == first[2]

    # scale to the replicas it has, and a status write of the status it has
    rs = apps.create_namespaced_replica_set(NS, {"metadata": {"name": "noop"}, "spec": {
        "replicas": 0, "selector": SELECTOR, "template": TEMPLATE}})
    cluster.advance("1s")
    rs = apps.read_namespaced_replica_set("noop", NS)
    rv = rs.metadata.resource_version
    scale = apps.patch_namespaced_replica_set_scale("noop", NS, {"spec": {"replicas": 0}})
    assert scale.metadata.resource_version == rv
    status = apps.replace_namespaced_replica_set_status("noop", NS, rs)
    assert status.metadata.resource_version == rv
    out = cluster.kubectl("-n", NS, "scale", "replicaset", "noop", "--replicas=0").stdout
    assert out.strip() == "replicaset.apps/noop scaled"
    assert apps.read_namespaced_replica_set("noop", NS).metadata.resource_version == rv
    # the typed client sends times back as isoformat (+00:00): metav1.Time decodes them to the same time
    apps.create_namespaced_deployment(NS, {"metadata": {"name": "noop"}, "spec": {
        "replicas": 0, "selector": SELECTOR, "template": TEMPLATE}})
    cluster.advance("1s")
    dep = apps.read_namespaced_deployment("noop", NS)
    assert dep.status.conditions and dep.metadata.managed_fields
    assert apps.replace_namespaced_deployment("noop", NS, dep).metadata.resource_version == \
        dep.metadata.resource_version
    assert apps.replace_namespaced_deployment_status("noop", NS, dep).metadata.resource_version == \
        dep.metadata.resource_version
    # a change still is one
    assert apps.patch_namespaced_replica_set_scale("noop", NS, {"spec": {"replicas": 1}}) \
        .metadata.resource_version != rv


def test_status_error_bodies(cluster: Live) -> None:
    """metav1.Status as the API server encodes it: its fields in the struct's order (details before code), an
    AlreadyExists on a create naming the object in details, and the encoder's trailing newline."""
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "dup"}, "spec": {
        "replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}
    path = f"/apis/apps/v1/namespaces/{NS}/deployments"
    data = json.dumps(body).encode()
    code, _, _ = cluster.request("POST", path, data, {"Content-Type": "application/json"})
    assert code == 201
    code, _, raw = cluster.request("POST", path, data, {"Content-Type": "application/json"})
    assert code == 409
    assert raw == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                   b'"message":"deployments.apps \\"dup\\" already exists","reason":"AlreadyExists",'
                   b'"details":{"name":"dup","group":"apps","kind":"deployments"},"code":409}\n')
    code, _, raw = cluster.request("GET", f"/api/v1/namespaces/{NS}/configmaps/missing")
    assert code == 404
    assert raw == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                   b'"message":"configmaps \\"missing\\" not found","reason":"NotFound",'
                   b'"details":{"name":"missing","kind":"configmaps"},"code":404}\n')
    # NewBadRequest carries no details
    code, _, raw = cluster.request("POST", path, b"{", {"Content-Type": "application/json"})
    assert code == 400
    doc = json.loads(raw)
    assert doc["reason"] == "BadRequest" and "details" not in doc and list(doc)[-1] == "code"

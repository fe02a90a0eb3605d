"""API-server defaulting, QoS class and effective pod requests.

Defaulting follows pkg/apis/core/v1/defaults.go (SetDefaults_Pod,
SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_Probe,
SetDefaults_HTTPGetAction, SetDefaults_Service, SetDefaults_Volume, ...),
the +default markers of k8s.io/api/core/v1/types.go (ports' protocol TCP),
pkg/apis/apps/v1/defaults.go, pkg/apis/batch/v1/defaults.go and
pkg/apis/scheduling/v1/defaults.go.  Everything mutates the dict in place.

Quantity strings are left as written: canonical re-serialization (and the
milli round-up of SetDefaults_ResourceList) is available as
``podlife.api.quantity.canonical(v, milli=True)`` for whoever serializes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from podlife.api import quantity
from podlife.api.selectors import once

if TYPE_CHECKING:
    from podlife.versions import Profile

NAMESPACED_KINDS = frozenset({
    "Pod", "Event", "Lease", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob",
    "Service", "Endpoints", "ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim",
    "PodTemplate", "ReplicationController", "ControllerRevision", "EndpointSlice", "PodDisruptionBudget",
    "ResourceQuota", "LimitRange",
})
CLUSTER_SCOPED_KINDS = frozenset({"Namespace", "Node", "PriorityClass", "PersistentVolume", "StorageClass",
                                  "RuntimeClass"})
TEMPLATED_KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController",
                             "PodTemplate"})

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30
TERMINATION_MESSAGE_PATH_DEFAULT = "/dev/termination-log"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
_MAX_INT32 = 2**31 - 1


def _setdefault(d: dict, key: str, value: object) -> None:
    """Set ``d[key]`` when absent or empty, like Go's zero-value checks."""
    if d.get(key) in (None, ""):
        d[key] = value


def _as_dict(x: object) -> dict:
    return x if isinstance(x, dict) else {}


def _as_list(x: object) -> list:
    return x if isinstance(x, list) else []


def _child(d: dict, key: str) -> dict:
    """``d[key]`` as a dict, created when missing (a non-dict value is replaced, as decoding would reject it)."""
    v = d.get(key)
    if not isinstance(v, dict):
        v = d[key] = {}
    return v


# --- images (pkg/util/parsers.ParseImageName + distribution reference grammar) ------

_ALNUM = r"[a-z0-9]+"
_SEP = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = _ALNUM + r"(?:" + _SEP + _ALNUM + r")*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = _DOMAIN_COMPONENT + r"(?:\." + _DOMAIN_COMPONENT + r")*(?::[0-9]+)?"
_IMAGE_RE = re.compile(
    r"(?:" + _DOMAIN + r"/)?" + _PATH_COMPONENT + r"(?:/" + _PATH_COMPONENT + r")*"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?"
)


def image_tag(image: str) -> str:
    """The tag ParseImageName reports: "latest" when neither tag nor digest; "" if unparsable or digest-only."""
    if not isinstance(image, str):
        return ""
    m = _IMAGE_RE.fullmatch(image)
    if m is None or len(image) > 255 + 128 + 80:
        return ""
    tag, digest = m.group("tag"), m.group("digest")
    if not tag and not digest:
        return "latest"
    return tag or ""


def default_image_pull_policy(image: str) -> str:
    """SetDefaults_Container: Always for the :latest (or implicit latest) tag, else IfNotPresent."""
    return "Always" if image_tag(image) == "latest" else "IfNotPresent"


# --- pod spec pieces -----------------------------------------------------------------


def _default_http_get(action: dict | None) -> None:
    """SetDefaults_HTTPGetAction: path "/" and scheme HTTP."""
    if isinstance(action, dict):
        _setdefault(action, "path", "/")
        _setdefault(action, "scheme", "HTTP")


def _default_probe(probe: dict | None) -> None:
    """SetDefaults_Probe; initialDelaySeconds has no default."""
    if not isinstance(probe, dict):
        return
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
        if not probe.get(key):
            probe[key] = value
    _default_http_get(probe.get("httpGet"))


def _default_container(c: dict) -> None:
    """SetDefaults_Container plus the nested defaults reached from a Container."""
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = default_image_pull_policy(c.get("image") or "")
    _setdefault(c, "terminationMessagePath", TERMINATION_MESSAGE_PATH_DEFAULT)
    _setdefault(c, "terminationMessagePolicy", "File")
    for port in _as_list(c.get("ports")):
        if isinstance(port, dict):
            _setdefault(port, "protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(probe))
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            if isinstance(lifecycle.get(hook), dict):
                _default_http_get(lifecycle[hook].get("httpGet"))
    for env in _as_list(c.get("env")):
        field_ref = _as_dict(_as_dict(env).get("valueFrom")).get("fieldRef")
        if isinstance(field_ref, dict):
            _setdefault(field_ref, "apiVersion", "v1")  # SetDefaults_ObjectFieldSelector


_VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI",
    "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
    "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)


def _default_volume(vol: dict) -> None:
    """SetDefaults_Volume and the per-source defaults (file modes 0644 = 420)."""
    if not any(vol.get(k) is not None for k in _VOLUME_SOURCES):  # SetDefaults_Volume
        vol["emptyDir"] = {}
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        if isinstance(vol.get(source), dict):
            _setdefault(vol[source], "defaultMode", 420)
    if isinstance(vol.get("hostPath"), dict):
        vol["hostPath"].setdefault("type", "")
    for src in _as_list(_as_dict(vol.get("projected")).get("sources")):
        token = _as_dict(src).get("serviceAccountToken")
        if isinstance(token, dict):
            _setdefault(token, "expirationSeconds", 3600)
    for item in _as_list(_as_dict(vol.get("downwardAPI")).get("items")):
        if isinstance(_as_dict(item).get("fieldRef"), dict):
            _setdefault(item["fieldRef"], "apiVersion", "v1")


def _null_strings(c: dict) -> None:
    """encoding/json decodes a null item of a []string as "": commands and arguments, and the exec commands of
    probes and hooks."""
    lists = [c, *(_as_dict(c.get(k)).get("exec") for k in ("livenessProbe", "readinessProbe", "startupProbe")),
             *(_as_dict(_as_dict(c.get("lifecycle")).get(h)).get("exec") for h in ("postStart", "preStop"))]
    for holder in lists:
        if not isinstance(holder, dict):
            continue
        for key in ("command", "args"):
            if isinstance(holder.get(key), list):
                holder[key] = ["" if x is None else x for x in holder[key]]
    # a null Quantity in a ResourceList decodes as the zero quantity
    for key in ("requests", "limits"):
        values = _as_dict(c.get("resources")).get(key)
        if isinstance(values, dict):
            for name, q in list(values.items()):
                if q is None:
                    values[name] = "0"


def default_pod_spec(spec: dict) -> None:
    """SetDefaults_PodSpec and everything nested in a PodSpec; shared by Pods and pod templates."""
    _setdefault(spec, "dnsPolicy", "ClusterFirst")
    _setdefault(spec, "restartPolicy", "Always")
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
    _setdefault(spec, "schedulerName", DEFAULT_SCHEDULER_NAME)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _as_list(spec.get(key)):
            if isinstance(c, dict):
                _null_strings(c)
                _default_container(c)
    for vol in _as_list(spec.get("volumes")):
        if isinstance(vol, dict):
            _default_volume(vol)


def _default_requests_from_limits(c: dict) -> None:
    """SetDefaults_Pod: per resource, a missing request takes the limit's value."""
    resources = c.get("resources")
    if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
        return
    requests = resources.get("requests")
    if not isinstance(requests, dict):
        requests = resources["requests"] = {}
    for name, value in resources["limits"].items():
        requests.setdefault(name, value)


def _default_pod(obj: dict) -> None:
    """SetDefaults_Pod (pod only, not templates) on top of default_pod_spec."""
    spec = _child(obj, "spec")
    default_pod_spec(spec)
    for key in ("containers", "initContainers"):
        for c in _as_list(spec.get(key)):
            if isinstance(c, dict):
                _default_requests_from_limits(c)
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):  # defaultHostNetworkPorts
        for key in ("containers", "initContainers"):
            for c in _as_list(spec.get(key)):
                for port in _as_list(_as_dict(c).get("ports")):
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")


def _default_template(obj: dict) -> None:
    template = _child(_child(obj, "spec"), "template")
    default_pod_spec(_child(template, "spec"))


# --- workloads -------------------------------------------------------------------------


def _default_deployment(obj: dict) -> None:
    """apps/v1 SetDefaults_Deployment."""
    spec = _child(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = _child(spec, "strategy")
    _setdefault(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = _child(strategy, "rollingUpdate")
        if ru.get("maxUnavailable") is None:
            ru["maxUnavailable"] = "25%"
        if ru.get("maxSurge") is None:
            ru["maxSurge"] = "25%"
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = 600
    _default_template(obj)


def _default_replicaset(obj: dict) -> None:
    spec = _child(obj, "spec")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _default_template(obj)


def _default_statefulset(obj: dict) -> None:
    """apps/v1 SetDefaults_StatefulSet (StatefulSetAutoDeletePVC is GA: retention policy Retain/Retain)."""
    spec = _child(obj, "spec")
    _setdefault(spec, "podManagementPolicy", "OrderedReady")
    strategy = _child(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
        if strategy.get("rollingUpdate") is None:
            strategy["rollingUpdate"] = {}
    ru = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(ru, dict) and ru.get("partition") is None:
        ru["partition"] = 0
    policy = _child(spec, "persistentVolumeClaimRetentionPolicy")
    _setdefault(policy, "whenDeleted", "Retain")
    _setdefault(policy, "whenScaled", "Retain")
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _default_template(obj)


def _default_daemonset(obj: dict) -> None:
    """apps/v1 SetDefaults_DaemonSet."""
    spec = _child(obj, "spec")
    strategy = _child(spec, "updateStrategy")
    _setdefault(strategy, "type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        ru = _child(strategy, "rollingUpdate")
        if ru.get("maxUnavailable") is None:
            ru["maxUnavailable"] = 1
        if ru.get("maxSurge") is None:
            ru["maxSurge"] = 0
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _default_template(obj)


def _default_job(obj: dict) -> None:
    """batch/v1 SetDefaults_Job."""
    spec = _child(obj, "spec")
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = _MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    labels = _as_dict(_as_dict(spec.get("template")).get("metadata")).get("labels")
    meta = _child(obj, "metadata")
    if isinstance(labels, dict) and not meta.get("labels"):
        meta["labels"] = dict(labels)
    _setdefault(spec, "completionMode", "NonIndexed")
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
    # a podFailurePolicy pattern's status defaults to True
    pfp = spec.get("podFailurePolicy")
    for rule in (pfp.get("rules") or ()) if isinstance(pfp, dict) and isinstance(pfp.get("rules"), list) else ():
        conds = rule.get("onPodConditions") if isinstance(rule, dict) else None
        for pattern in conds if isinstance(conds, list) else ():
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    _default_template(obj)


# --- other kinds -------------------------------------------------------------------------


def externally_accessible(spec: Mapping[str, Any], profile: Profile | None) -> bool:
    """pkg/api/v1/service.ExternallyAccessible: whether externalTrafficPolicy applies (``profile`` None: the
    newest rule); before 1.29 needsExternalTrafficPolicy, NodePort and LoadBalancer only."""
    t = spec.get("type")
    if t in ("LoadBalancer", "NodePort"):
        return True
    with_ips = profile is None or profile.external_traffic_policy_external_ips
    return with_ips and t == "ClusterIP" and bool(spec.get("externalIPs"))


def _default_service(obj: dict, profile: Profile | None = None) -> None:
    """SetDefaults_Service. clusterIP(s)/ipFamilies are allocated by the registry, not defaulted."""
    spec = _child(obj, "spec")
    _setdefault(spec, "sessionAffinity", "None")
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        cfg = spec.get("sessionAffinityConfig") or {}
        if ((cfg.get("clientIP") or {}).get("timeoutSeconds")) is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    _setdefault(spec, "type", "ClusterIP")
    for port in _as_list(spec.get("ports")):
        if not isinstance(port, dict):
            continue
        _setdefault(port, "protocol", "TCP")
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if externally_accessible(spec, profile):
        _setdefault(spec, "externalTrafficPolicy", "Cluster")
    if spec.get("internalTrafficPolicy") is None and spec["type"] in ("NodePort", "LoadBalancer", "ClusterIP"):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True


def _default_endpoints(obj: dict) -> None:
    """SetDefaults_Endpoints: a port's protocol is TCP unless given."""
    for subset in _as_list(obj.get("subsets")):
        for port in _as_list(_as_dict(subset).get("ports")):
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def _default_namespace(obj: dict) -> None:
    """SetDefaults_Namespace, SetDefaults_NamespaceStatus and the registry's "kubernetes" finalizer.

    The finalizer is added only to a namespace that has no status.phase yet
    (i.e. on create, as pkg/registry/core/namespace PrepareForCreate does), so
    re-defaulting a namespace whose finalizer was already removed keeps it removed.
    """
    meta = _child(obj, "metadata")
    if meta.get("name"):
        _child(meta, "labels")[NAMESPACE_NAME_LABEL] = meta["name"]
    status = _child(obj, "status")
    if not status.get("phase"):
        spec = _child(obj, "spec")
        if not isinstance(spec.get("finalizers"), list):
            spec["finalizers"] = []
        finalizers = spec["finalizers"]
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
    _setdefault(status, "phase", "Active")


def _default_node(obj: dict) -> None:
    """SetDefaults_NodeStatus: allocatable defaults to capacity. NodeSpec is a struct, not a pointer, in
    k8s.io/api/core/v1 types.go: a Node written without one reads back with ``spec: {}``."""
    _setdefault(obj, "spec", {})
    status = obj.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None and isinstance(status.get("capacity"), dict):
        status["allocatable"] = dict(status["capacity"])


def _default_priority_class(obj: dict) -> None:
    """scheduling/v1 SetDefaults_PriorityClass."""
    if obj.get("preemptionPolicy") is None:
        obj["preemptionPolicy"] = "PreemptLowerPriority"


def _default_cronjob(obj: dict) -> None:
    """batch/v1 SetDefaults_CronJob (the Job template is defaulted when its Job is created)."""
    spec = _child(obj, "spec")
    _setdefault(spec, "concurrencyPolicy", "Allow")
    _setdefault(spec, "suspend", False)
    _setdefault(spec, "successfulJobsHistoryLimit", 3)
    _setdefault(spec, "failedJobsHistoryLimit", 1)
    _default_template(_child(spec, "jobTemplate"))   # the generated defaulters reach the nested pod template


def _default_pvc(obj: dict) -> None:
    """SetDefaults_PersistentVolumeClaimSpec."""
    _setdefault(_child(obj, "spec"), "volumeMode", "Filesystem")


def _default_pv(obj: dict) -> None:
    """SetDefaults_PersistentVolume: Retain unless given, Filesystem; SetDefaults_HostPathVolumeSource on a
    hostPath source as on a pod's volume (type "")."""
    spec = _child(obj, "spec")
    _setdefault(spec, "persistentVolumeReclaimPolicy", "Retain")
    _setdefault(spec, "volumeMode", "Filesystem")
    if isinstance(spec.get("hostPath"), dict):
        spec["hostPath"].setdefault("type", "")


def _default_storage_class(obj: dict) -> None:
    """storage/v1 SetDefaults_StorageClass."""
    _setdefault(obj, "reclaimPolicy", "Delete")
    _setdefault(obj, "volumeBindingMode", "Immediate")


def _default_replication_controller(obj: dict) -> None:
    """core/v1 SetDefaults_ReplicationController: selector and labels from the template's labels, 1 replica."""
    spec = _child(obj, "spec")
    template = spec.get("template")
    labels = _as_dict(_as_dict(_as_dict(template).get("metadata")).get("labels"))
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        md = _child(obj, "metadata")
        if not md.get("labels"):
            md["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if isinstance(template, dict):
        default_pod_spec(_child(template, "spec"))


def _default_pod_template(obj: dict) -> None:
    template = obj.get("template")
    if isinstance(template, dict):
        default_pod_spec(_child(template, "spec"))


def _default_limit_range(obj: dict) -> None:
    """core/v1 SetDefaults_LimitRangeItem: for Container items the default limit is the max, the default
    request the default limit, else the min."""
    for item in _as_list(_as_dict(obj.get("spec")).get("limits")):
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default, request = _child(item, "default"), _child(item, "defaultRequest")
        for key, value in _as_dict(item.get("max")).items():
            default.setdefault(key, value)
        for key, value in default.items():
            request.setdefault(key, value)
        for key, value in _as_dict(item.get("min")).items():
            request.setdefault(key, value)


def _default_role_binding(obj: dict) -> None:
    """rbac/v1 SetDefaults_RoleBinding / SetDefaults_ClusterRoleBinding: an empty roleRef.apiGroup is the RBAC
    group; SetDefaults_Subject: User and Group subjects without an apiGroup get it too (a ServiceAccount's
    stays "", omitted) (pkg/apis/rbac/v1/defaults.go; v1beta1, served until 1.21, defaults the same)."""
    ref = obj.get("roleRef")
    if isinstance(ref, dict) and not ref.get("apiGroup"):
        ref["apiGroup"] = "rbac.authorization.k8s.io"
    for subject in _as_list(obj.get("subjects")):
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
            subject["apiGroup"] = "rbac.authorization.k8s.io"


def _default_apiservice(obj: dict) -> None:
    """kube-aggregator apiregistration/v1 SetDefaults_ServiceReference: the Service's port is 443."""
    service = _as_dict(obj.get("spec")).get("service")
    if isinstance(service, dict):
        _setdefault(service, "port", 443)


def _default_webhook(hook: dict, mutating: bool) -> None:
    """admissionregistration/v1 SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook, SetDefaults_Rule
    (scope "*") and SetDefaults_ServiceReference (port 443) (pkg/apis/admissionregistration/v1/defaults.go)."""
    _setdefault(hook, "failurePolicy", "Fail")
    _setdefault(hook, "matchPolicy", "Equivalent")
    _setdefault(hook, "namespaceSelector", {})
    _setdefault(hook, "objectSelector", {})
    _setdefault(hook, "timeoutSeconds", 10)
    if mutating:
        _setdefault(hook, "reinvocationPolicy", "Never")
    for rule in _as_list(hook.get("rules")):
        if isinstance(rule, dict):
            _setdefault(rule, "scope", "*")
    service = _as_dict(hook.get("clientConfig")).get("service")
    if isinstance(service, dict):
        _setdefault(service, "port", 443)


def _default_webhook_configuration(obj: dict) -> None:
    for hook in _as_list(obj.get("webhooks")):
        if isinstance(hook, dict):
            _default_webhook(hook, obj.get("kind") == "MutatingWebhookConfiguration")


def _default_match_resources(match: object) -> None:
    """admissionregistration/v1 SetDefaults_MatchResources (with SetDefaults_Rule on its rules)."""
    if not isinstance(match, dict):
        return
    _setdefault(match, "matchPolicy", "Equivalent")
    _setdefault(match, "namespaceSelector", {})
    _setdefault(match, "objectSelector", {})
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in _as_list(match.get(key)):
            if isinstance(rule, dict):
                _setdefault(rule, "scope", "*")


def _default_admission_policy(obj: dict) -> None:
    """SetDefaults_ValidatingAdmissionPolicySpec (failurePolicy Fail) / MutatingAdmissionPolicySpec, and
    SetDefaults_ParamRef (parameterNotFoundAction Deny) on bindings."""
    spec = _child(obj, "spec")
    if obj.get("kind") in ("ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"):
        _setdefault(spec, "failurePolicy", "Fail")
        _default_match_resources(spec.get("matchConstraints"))
    else:
        _default_match_resources(spec.get("matchResources"))
        ref = spec.get("paramRef")
        if isinstance(ref, dict):
            _setdefault(ref, "parameterNotFoundAction", "Deny")


_CSI_DRIVER_DEFAULTS: dict[str, object] = {
    "attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
    "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
    "requiresRepublish": False, "seLinuxMount": False}


def default_csi_driver(obj: dict, fields: tuple[str, ...]) -> None:
    """storage/v1 SetDefaults_CSIDriver: the fields the version defaults (``Profile.csi_driver_defaults``)."""
    spec = _child(obj, "spec")
    for name in fields:
        current = spec.get(name)
        if current is None or (name == "volumeLifecycleModes" and not current):   # len(...) == 0 there
            value = _CSI_DRIVER_DEFAULTS[name]
            spec[name] = list(value) if isinstance(value, list) else value


_BY_KIND: dict[str, Callable[[dict], None]] = {
    "RoleBinding": _default_role_binding,
    "APIService": _default_apiservice,
    "ClusterRoleBinding": _default_role_binding,
    "ReplicationController": _default_replication_controller,
    "PodTemplate": _default_pod_template,
    "LimitRange": _default_limit_range,
    "CronJob": _default_cronjob,
    "PersistentVolumeClaim": _default_pvc,
    "PersistentVolume": _default_pv,
    "StorageClass": _default_storage_class,
    "Pod": _default_pod,
    "Deployment": _default_deployment,
    "ReplicaSet": _default_replicaset,
    "StatefulSet": _default_statefulset,
    "DaemonSet": _default_daemonset,
    "Job": _default_job,
    "Endpoints": _default_endpoints,
    "Namespace": _default_namespace,
    "Node": _default_node,
    "PriorityClass": _default_priority_class,
    "ValidatingWebhookConfiguration": _default_webhook_configuration,
    "MutatingWebhookConfiguration": _default_webhook_configuration,
    "ValidatingAdmissionPolicy": _default_admission_policy,
    "ValidatingAdmissionPolicyBinding": _default_admission_policy,
    "MutatingAdmissionPolicy": _default_admission_policy,
    "MutatingAdmissionPolicyBinding": _default_admission_policy,
}


def apply_defaults(obj: dict, profile: Profile | None = None) -> None:
    """Default ``obj`` in place as the API server does for its kind (unknown kinds: namespace only), with
    ``profile``'s rules where defaults differ by version (None: the newest)."""
    kind = obj.get("kind")
    if not isinstance(kind, str):
        return
    if kind in NAMESPACED_KINDS:
        _setdefault(_child(obj, "metadata"), "namespace", "default")
    if kind == "Service":
        _default_service(obj, profile)
        return
    if kind == "CSIDriver" and profile is not None:   # the defaulted fields depend on the release's gates
        default_csi_driver(obj, profile.csi_driver_defaults)
    fn = _BY_KIND.get(kind)
    if fn is not None:
        fn(obj)


# --- QoS (pkg/apis/core/v1/helper/qos/qos.go) -----------------------------------------

_QOS_RESOURCES = ("cpu", "memory")


def _effective_requests(c: object) -> dict:
    """Container requests as they look after SetDefaults_Pod (missing requests = limits)."""
    res = _as_dict(_as_dict(c).get("resources"))
    out = dict(_as_dict(res.get("limits")))
    out.update(_as_dict(res.get("requests")))
    return out


def _positive(values: dict, acc: dict[str, Fraction], found: set[str] | None = None) -> None:
    for name in _QOS_RESOURCES:
        if name in values:
            q = quantity.parse_quantity(values[name])
            if q > 0:
                acc[name] = acc.get(name, Fraction(0)) + q
                if found is not None:
                    found.add(name)


_QOS_SEEN: dict[bytes, str] = {}   # the class of each distinct set of resources (a Deployment's pods share one)


def compute_qos_class(pod: dict) -> str:
    """ComputePodQOS: Guaranteed, Burstable or BestEffort from containers and init containers.

    Pod-level resources (spec.resources, PodLevelResources) decide when set.
    """
    spec = _as_dict(pod.get("spec"))
    containers = _as_list(spec.get("containers")) + _as_list(spec.get("initContainers"))
    return once(_QOS_SEEN, [spec.get("resources"), [_as_dict(c).get("resources") for c in containers]],
                lambda _: _compute_qos_class(spec))


def _compute_qos_class(spec: dict) -> str:
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    pod_res = spec.get("resources")
    if isinstance(pod_res, dict) and (pod_res.get("requests") or pod_res.get("limits")):
        _positive(_as_dict(pod_res.get("requests")), requests)
        if isinstance(pod_res.get("limits"), dict) and pod_res["limits"]:
            found: set[str] = set()
            _positive(pod_res["limits"], limits, found)
            guaranteed = found == set(_QOS_RESOURCES)
    else:
        for c in _as_list(spec.get("containers")) + _as_list(spec.get("initContainers")):
            _positive(_effective_requests(c), requests)
            found = set()
            _positive(_as_dict(_as_dict(_as_dict(c).get("resources")).get("limits")), limits, found)
            if found != set(_QOS_RESOURCES):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == req for name, req in requests.items()) and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"


def qos_class(pod: dict) -> str:
    """GetPodQOS: status.qosClass when already set (it is immutable), else computed."""
    return _as_dict(pod.get("status")).get("qosClass") or compute_qos_class(pod)


# --- effective requests (component-helpers/resource PodRequests) ------------------------


def _add(acc: dict[str, Fraction], values: dict[str, Fraction]) -> None:
    for name, q in values.items():
        acc[name] = acc.get(name, Fraction(0)) + q


def _max_into(acc: dict[str, Fraction], values: dict[str, Fraction]) -> None:
    for name, q in values.items():
        if name not in acc or q > acc[name]:
            acc[name] = q


def _parsed(values: dict | None) -> dict[str, Fraction]:
    return {name: quantity.parse_quantity(v) for name, v in (values or {}).items()}


def _container_requests(c: object, non_missing: dict[str, Fraction]) -> dict[str, Fraction]:
    reqs = _parsed(_effective_requests(c))
    for name, q in non_missing.items():  # applyNonMissing: only for resources not set at all
        reqs.setdefault(name, q)
    return reqs


def _to_units(name: str, q: Fraction) -> int:
    return math.ceil(q * 1000) if name == "cpu" else math.ceil(q)


def pod_requests(pod_spec: dict, *, non_missing: dict | None = None, exclude_overhead: bool = False) -> dict[str, int]:
    """Effective pod requests for scheduling: cpu in millicores, everything else in base units (bytes).

    Port of PodRequests / AggregateContainerRequests in
    staging/src/k8s.io/component-helpers/resource/helpers.go (formerly
    pkg/api/v1/resource/helpers.go PodRequests): the sum of regular containers,
    raised to the largest init-container footprint, where restartable init
    containers (native sidecars, restartPolicy Always) keep running and so add
    to every later init container and to the regular sum; then pod-level
    requests (spec.resources) replace cpu/memory/hugepages when set, and
    spec.overhead is added. ``non_missing`` is NonMissingContainerRequests (the
    scheduler's scoring defaults for containers that set no request).
    Requests default from limits as SetDefaults_Pod would.
    """
    pod_spec = _as_dict(pod_spec)
    fill = _parsed(non_missing)
    result: dict[str, Fraction] = {}
    for c in _as_list(pod_spec.get("containers")):
        _add(result, _container_requests(c, fill))
    sidecars: dict[str, Fraction] = {}
    init_max: dict[str, Fraction] = {}
    for c in _as_list(pod_spec.get("initContainers")):
        reqs = _container_requests(c, fill)
        if _as_dict(c).get("restartPolicy") == "Always":
            _add(result, reqs)
            _add(sidecars, reqs)
            use = dict(sidecars)
        else:
            use = dict(reqs)
            _add(use, sidecars)
        _max_into(init_max, use)
    _max_into(result, init_max)
    pod_res = _as_dict(pod_spec.get("resources"))
    for name, q in _parsed(_as_dict(pod_res.get("requests"))).items():
        if name in ("cpu", "memory") or name.startswith("hugepages-"):
            result[name] = q
    if not exclude_overhead:
        _add(result, _parsed(_as_dict(pod_spec.get("overhead"))))
    return {name: _to_units(name, q) for name, q in sorted(result.items())}

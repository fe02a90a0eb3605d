"""Kinds and object helpers. Objects are plain JSON-like dicts, exactly as in manifests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

Obj = dict[str, Any]


@dataclass(frozen=True)
class KindInfo:
    """A built-in or custom kind: its names, API version and scope."""

    kind: str
    api_version: str
    resource: str          # plural, as in error messages: pods "web-0" not found
    namespaced: bool
    has_generation: bool   # metadata.generation is set on create and bumped on spec changes
    has_status: bool       # status is written through its own subresource
    custom: bool = False   # a custom resource (its CRD's), validated by the apiextensions server's rules


KINDS: dict[str, KindInfo] = {k.kind: k for k in (
    KindInfo("Namespace", "v1", "namespaces", False, False, True),
    KindInfo("Node", "v1", "nodes", False, False, True),
    KindInfo("Pod", "v1", "pods", True, False, True),
    KindInfo("Event", "v1", "events", True, False, False),
    KindInfo("Service", "v1", "services", True, False, True),
    KindInfo("Endpoints", "v1", "endpoints", True, False, False),
    KindInfo("EndpointSlice", "discovery.k8s.io/v1", "endpointslices", True, False, False),
    KindInfo("ConfigMap", "v1", "configmaps", True, False, False),
    KindInfo("Secret", "v1", "secrets", True, False, False),
    KindInfo("ServiceAccount", "v1", "serviceaccounts", True, False, False),
    KindInfo("Lease", "coordination.k8s.io/v1", "leases", True, False, False),
    KindInfo("Deployment", "apps/v1", "deployments", True, True, True),
    KindInfo("ReplicaSet", "apps/v1", "replicasets", True, True, True),
    KindInfo("StatefulSet", "apps/v1", "statefulsets", True, True, True),
    KindInfo("DaemonSet", "apps/v1", "daemonsets", True, True, True),
    KindInfo("Job", "batch/v1", "jobs", True, True, True),
    KindInfo("CronJob", "batch/v1", "cronjobs", True, True, True),
    KindInfo("HorizontalPodAutoscaler", "autoscaling/v2", "horizontalpodautoscalers", True, False, True),
    KindInfo("PodDisruptionBudget", "policy/v1", "poddisruptionbudgets", True, True, True),
    KindInfo("PriorityClass", "scheduling.k8s.io/v1", "priorityclasses", False, False, False),
    KindInfo("PersistentVolumeClaim", "v1", "persistentvolumeclaims", True, False, True),
    KindInfo("PersistentVolume", "v1", "persistentvolumes", False, False, True),
    KindInfo("StorageClass", "storage.k8s.io/v1", "storageclasses", False, False, False),
    KindInfo("LimitRange", "v1", "limitranges", True, False, False),
    KindInfo("ReplicationController", "v1", "replicationcontrollers", True, True, True),
    KindInfo("ResourceQuota", "v1", "resourcequotas", True, False, True),
    KindInfo("RuntimeClass", "node.k8s.io/v1", "runtimeclasses", False, False, False),
    # the DaemonSet and StatefulSet controllers' history; the garbage collector removes it with its owner
    KindInfo("ControllerRevision", "apps/v1", "controllerrevisions", True, False, False),
)}

# kinds served outside a namespace (each type's +genclient:nonNamespaced in staging/src/k8s.io/api)
CLUSTER_SCOPED = frozenset({
    "APIService", "CertificateSigningRequest", "ClusterRole", "ClusterRoleBinding", "ClusterTrustBundle",
    "ComponentStatus", "CSIDriver", "CSINode", "CustomResourceDefinition", "DeviceClass", "DeviceTaintRule",
    "FlowSchema", "IngressClass", "IPAddress", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration", "Namespace", "Node", "PersistentVolume", "PriorityClass",
    "PriorityLevelConfiguration", "ResourceSlice", "RuntimeClass", "SelfSubjectAccessReview", "SelfSubjectReview",
    "SelfSubjectRulesReview", "ServiceCIDR", "StorageClass", "StorageVersion", "StorageVersionMigration",
    "SubjectAccessReview", "TokenReview", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration", "VolumeAttachment", "VolumeAttributesClass",
})


def plural(kind: str) -> str:
    """The resource name of a built-in kind (the lower-cased plural the API's discovery lists)."""
    low = kind.lower()
    if low.endswith("s"):
        return low + "es"            # ingresses, componentstatuses
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return low[:-1] + "ies"      # networkpolicies
    return low + "s"


def builtin_kind_info(kind: str, api_version: str) -> KindInfo:
    """A built-in kind podlife stores but does not model: kept as given, nothing acts on it."""
    return KindInfo(kind, api_version, plural(kind), kind not in CLUSTER_SCOPED, False, False)


def custom_kind_info(crd: Obj, kind: str, api_version: str) -> KindInfo | None:
    """The kind a stored CustomResourceDefinition serves, if it is ``kind`` in ``api_version``."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, _, version = api_version.rpartition("/")
    if names.get("kind") != kind or spec.get("group") != group:
        return None
    if not any(isinstance(v, dict) and v.get("name") == version and v.get("served", True)
               for v in spec.get("versions") or ()):
        return None
    return KindInfo(kind, api_version, names.get("plural") or plural(kind), spec.get("scope") != "Cluster",
                    True, False)


# kubectl-style names accepted in scenario references (pod/web-0, deploy/web, rs/x, sts/x, ...)
_ALIASES = {"po": "Pod", "no": "Node", "ns": "Namespace", "deploy": "Deployment", "rs": "ReplicaSet",
            "sts": "StatefulSet", "ds": "DaemonSet", "svc": "Service", "cm": "ConfigMap", "ev": "Event",
            "pc": "PriorityClass", "sa": "ServiceAccount", "cj": "CronJob", "pvc": "PersistentVolumeClaim",
            "pv": "PersistentVolume",
            "sc": "StorageClass", "hpa": "HorizontalPodAutoscaler", "pdb": "PodDisruptionBudget",
            "ep": "Endpoints", "eps": "EndpointSlice", "rc": "ReplicationController", "ing": "Ingress",
            "netpol": "NetworkPolicy", "quota": "ResourceQuota", "limits": "LimitRange",
            "crd": "CustomResourceDefinition", "crds": "CustomResourceDefinition"}


def kind_aliases(kind: str) -> list[str]:
    """kubectl's short names of a kind (deploy, sts, ...)."""
    return [a for a, k in _ALIASES.items() if k == kind]


def kind_from_name(name: str) -> str | None:
    """``pod``, ``pods``, ``po``, ``Pod`` → ``Pod``; None when unknown."""
    low = name.lower()
    if low in _ALIASES:
        return _ALIASES[low]
    for k in KINDS.values():
        if low in (k.kind.lower(), k.resource):
            return k.kind
    return None


def kept(data: bytes) -> bytes:
    """orjson's output in a buffer of its own size, for keeping: orjson hands out the buffer it wrote in, at
    least 4 KiB whatever the length (a 700-byte Event's JSON holds 8 KiB)."""
    return memoryview(data).tobytes()


def clone(obj: Any) -> Any:
    """A deep copy of JSON-like data (several times faster than copy.deepcopy)."""
    return orjson.loads(orjson.dumps(obj))


def ref(obj: Obj) -> str:
    """``Kind/namespace/name``, or ``Kind/name`` for cluster-scoped kinds (the trace's object field)."""
    md = obj["metadata"]
    ns = md.get("namespace")
    return f"{obj['kind']}/{ns}/{md['name']}" if ns else f"{obj['kind']}/{md['name']}"


def ref_of(kind: str, namespace: str | None, name: str) -> str:
    return f"{kind}/{namespace}/{name}" if namespace and KINDS[kind].namespaced else f"{kind}/{name}"


def pod_full_name(pod: Obj) -> str:
    """The kubelet's format: ``name_namespace(uid)``."""
    md = pod["metadata"]
    return f'{md["name"]}_{md["namespace"]}({md["uid"]})'


def get_condition(obj: Obj, ctype: str) -> Obj | None:
    for c in obj.get("status", {}).get("conditions") or ():
        if c.get("type") == ctype:
            return c
    return None


def owner_of(obj: Obj) -> Obj | None:
    """The controller ownerReference, if any."""
    for o in obj["metadata"].get("ownerReferences") or ():
        if o.get("controller"):
            return o
    return None

"""The fields the API server always writes, because Go encodes them even at their zero value.

Upstream an object is a Go struct: a status field without ``omitempty`` in its json tag is encoded when it is 0,
"" or nil (``"replicas": 0``), and a struct-typed field is encoded even when empty (omitempty does not apply to
structs: ``"loadBalancer": {}``). A new DaemonSet's status is therefore ``{"currentNumberScheduled": 0, ...}``,
never ``{}``, and clients generated from the OpenAPI (the Python client, lightkube) refuse an object without
them. Stored objects here are dicts, so a status gets those fields when it is written (create or a status
write), exactly as the Go struct round-trip through etcd would give it. Field lists and their order are the
structs' in staging/src/k8s.io/api (apps/v1, core/v1, autoscaling/v2, policy/v1, networking/v1 types.go).
"""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj
from podlife.versions import Profile

_ZERO = object()   # a field that is omitempty: kept in its place when present, never added

# kind → the status struct's fields in Go order, each with the value encoded when unset (or _ZERO)
_NODE_INFO = dict.fromkeys(("machineID", "systemUUID", "bootID", "kernelVersion", "osImage",
                            "containerRuntimeVersion", "kubeletVersion", "kubeProxyVersion",
                            "operatingSystem", "architecture"), "")
STATUS: dict[str, tuple[tuple[str, Any], ...]] = {
    # apps/v1 DaemonSetStatus
    "DaemonSet": (("currentNumberScheduled", 0), ("numberMisscheduled", 0), ("desiredNumberScheduled", 0),
                  ("numberReady", 0), ("observedGeneration", _ZERO), ("updatedNumberScheduled", _ZERO),
                  ("numberAvailable", _ZERO), ("numberUnavailable", _ZERO), ("collisionCount", _ZERO),
                  ("conditions", _ZERO)),
    # apps/v1 ReplicaSetStatus
    "ReplicaSet": (("replicas", 0), ("fullyLabeledReplicas", _ZERO), ("readyReplicas", _ZERO),
                   ("availableReplicas", _ZERO), ("terminatingReplicas", _ZERO), ("observedGeneration", _ZERO),
                   ("conditions", _ZERO)),
    # apps/v1 StatefulSetStatus (availableReplicas: see StatefulSet below, from 1.22)
    "StatefulSet": (("observedGeneration", _ZERO), ("replicas", 0), ("readyReplicas", _ZERO),
                    ("currentReplicas", _ZERO), ("updatedReplicas", _ZERO), ("currentRevision", _ZERO),
                    ("updateRevision", _ZERO), ("collisionCount", _ZERO), ("conditions", _ZERO),
                    ("availableReplicas", 0)),
    # core/v1 ReplicationControllerStatus
    "ReplicationController": (("replicas", 0), ("fullyLabeledReplicas", _ZERO), ("readyReplicas", _ZERO),
                              ("availableReplicas", _ZERO), ("observedGeneration", _ZERO), ("conditions", _ZERO)),
    # autoscaling/v2 HorizontalPodAutoscalerStatus (the stored version): currentMetrics has no omitempty, so a
    # nil slice is encoded as null
    "HorizontalPodAutoscaler": (("observedGeneration", _ZERO), ("lastScaleTime", _ZERO),
                                ("currentReplicas", _ZERO), ("desiredReplicas", 0), ("currentMetrics", None),
                                ("conditions", _ZERO)),
    # policy/v1 PodDisruptionBudgetStatus
    "PodDisruptionBudget": (("observedGeneration", _ZERO), ("disruptedPods", _ZERO), ("disruptionsAllowed", 0),
                            ("currentHealthy", 0), ("desiredHealthy", 0), ("expectedPods", 0),
                            ("conditions", _ZERO)),
    # core/v1 ServiceStatus, networking/v1 IngressStatus: LoadBalancer is a struct
    "Service": (("loadBalancer", {}), ("conditions", _ZERO)),
    "Ingress": (("loadBalancer", {}),),
    # storage/v1 VolumeAttachmentStatus: attached is a bool without omitempty
    "VolumeAttachment": (("attached", False), ("attachmentMetadata", _ZERO), ("attachError", _ZERO),
                         ("detachError", _ZERO)),
    # core/v1 NodeStatus: DaemonEndpoints and NodeSystemInfo are structs, NodeSystemInfo's strings not omitempty
    "Node": (("capacity", _ZERO), ("allocatable", _ZERO), ("phase", _ZERO), ("conditions", _ZERO),
             ("addresses", _ZERO), ("daemonEndpoints", {"kubeletEndpoint": {"Port": 0}}), ("nodeInfo", _NODE_INFO),
             ("images", _ZERO), ("volumesInUse", _ZERO), ("volumesAttached", _ZERO), ("config", _ZERO),
             ("runtimeHandlers", _ZERO), ("features", _ZERO)),
}


def _filled(value: Any, zero: Any) -> Any:
    """``value`` with the always-encoded fields of a nested struct (``zero`` a dict template) added."""
    if not isinstance(zero, dict) or not isinstance(value, dict) or all(k in value for k in zero):
        return value
    out = {k: value.get(k, z) for k, z in zero.items()}
    out.update((k, v) for k, v in value.items() if k not in zero)
    return out


def fill_status(obj: Obj, profile: Profile | None = None) -> None:
    """Give ``obj``'s status the fields its Go struct always encodes (a new dict when any is added; the one
    there is never changed in place, it may be shared with a stored object)."""
    fields = STATUS.get(str(obj.get("kind")))
    if fields is None:
        return
    # each of these kinds' Status is a struct, not a pointer: encoded even when nothing set it
    status = obj.get("status") if obj.get("status") is not None else {}
    if not isinstance(status, dict):
        return
    if obj["kind"] == "StatefulSet" and profile is not None and \
            not profile.statefulset_status_available_replicas:
        fields = tuple(f for f in fields if f[0] != "availableReplicas")
    missing = False
    for name, zero in fields:
        if zero is _ZERO:
            continue
        if name not in status or _filled(status[name], zero) is not status[name]:
            missing = True
            break
    if not missing:
        return
    out: dict[str, Any] = {}
    for name, zero in fields:
        if name in status:
            out[name] = _filled(status[name], zero) if zero is not _ZERO else status[name]
        elif zero is not _ZERO:
            out[name] = _copy(zero)
    out.update((k, v) for k, v in status.items() if k not in out)
    obj["status"] = out


def _copy(v: Any) -> Any:
    return {k: _copy(x) for k, x in v.items()} if isinstance(v, dict) else v

"""Kinds served in a version other than the one stored, converted on the way out and in.

- events.k8s.io/v1 Events are the stored core/v1 Events (pkg/apis/events/v1/conversion.go: note ↔ message,
  regarding ↔ involvedObject, reportingController ↔ reportingComponent, deprecated* ↔ the core timestamps,
  count and source).
- autoscaling/v1 HorizontalPodAutoscalers are the stored autoscaling/v2 ones (pkg/apis/autoscaling/v1
  conversion.go): targetCPUUtilizationPercentage ↔ a cpu Resource metric with an Utilization target, and
  currentCPUUtilizationPercentage ↔ its current value. Other metrics, which v1 keeps in annotations upstream,
  are not carried (an assumption the README names).
- flowcontrol.apiserver.k8s.io FlowSchemas and PriorityLevelConfigurations are served in each version the
  minor serves (podlife.versions.SERVED_BETAS, and v1) and stored in its preferred one; the versions differ only
  in a PriorityLevelConfiguration's spec.limited.assuredConcurrencyShares (v1beta1, v1beta2), named
  nominalConcurrencyShares from v1beta3 (pkg/apis/flowcontrol/v1beta2/conversion.go), and in v1beta3's annotation
  that keeps an explicit zero of it from defaulting (pkg/apis/flowcontrol/v1beta3/conversion.go).
"""

from __future__ import annotations

from collections.abc import Callable

from podlife.api.meta import Obj, clone

# (stored → served, served → stored)
Conversion = tuple[Callable[[Obj], Obj], Callable[[Obj], Obj]]

# ---- Events --------------------------------------------------------------------------------------------------

# events.k8s.io field → core/v1 field
_RENAMED = {"note": "message", "regarding": "involvedObject", "reportingController": "reportingComponent",
            "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
            "deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count"}
_SAME = ("metadata", "eventTime", "series", "reportingInstance", "action", "reason", "related", "type")


def _convert(obj: Obj, api_version: str, renamed: dict[str, str]) -> Obj:
    out: Obj = {"kind": "Event", "apiVersion": api_version}
    for k in _SAME:
        if k in obj:
            out[k] = obj[k]
    for src, dst in renamed.items():
        if src in obj:
            out[dst] = obj[src]
    return out


def to_events_v1(core: Obj) -> Obj:
    out = _convert(core, "events.k8s.io/v1", {old: new for new, old in _RENAMED.items()})
    out.setdefault("eventTime", None)
    return out


def from_events_v1(ev: Obj) -> Obj:
    out = _convert(ev, "v1", _RENAMED)
    out.setdefault("involvedObject", {})
    return out


# ---- HorizontalPodAutoscaler ---------------------------------------------------------------------------------

def _cpu(metrics: list[Obj] | None, key: str) -> int | None:
    for m in metrics or ():
        res = m.get("resource") or {}
        if m.get("type") == "Resource" and res.get("name") == "cpu":
            value = (res.get(key) or {}).get("averageUtilization")
            if value is not None:
                return value
    return None


def to_hpa_v1(v2: Obj) -> Obj:
    out = clone(v2)
    out["apiVersion"] = "autoscaling/v1"
    spec, status = out.get("spec") or {}, out.get("status") or {}
    metrics = spec.pop("metrics", None)
    spec.pop("behavior", None)
    target = _cpu(metrics, "target")
    if target is not None:
        spec["targetCPUUtilizationPercentage"] = target
    current = _cpu(status.pop("currentMetrics", None), "current")
    status.pop("conditions", None)
    if current is not None:
        status["currentCPUUtilizationPercentage"] = current
    if "status" in out:
        # autoscaling/v1 HorizontalPodAutoscalerStatus: currentReplicas and desiredReplicas have no omitempty
        # (v2's currentReplicas has), so they are encoded as 0; the struct's field order
        order = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas",
                 "currentCPUUtilizationPercentage")
        v1 = {k: status.get(k, 0) for k in order if k in status or k in ("currentReplicas", "desiredReplicas")}
        v1.update((k, v) for k, v in status.items() if k not in v1)
        out["status"] = v1
    return out


def from_hpa_v1(v1: Obj) -> Obj:
    out = clone(v1)
    out["apiVersion"] = "autoscaling/v2"
    spec = out.setdefault("spec", {})
    target = spec.pop("targetCPUUtilizationPercentage", None)
    if target is not None:
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": target}}}]
    status = out.get("status") or {}
    current = status.pop("currentCPUUtilizationPercentage", None)
    if current is not None:
        status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": current}}}]
    return out


# ---- flowcontrol.apiserver.k8s.io ------------------------------------------------------------------------------

FLOWCONTROL = "flowcontrol.apiserver.k8s.io"
# v1beta1 and v1beta2 name nominalConcurrencyShares assuredConcurrencyShares
_ASSURED = frozenset({"v1beta1", "v1beta2"})
# staging/src/k8s.io/api/flowcontrol/v1beta3 PriorityLevelPreserveZeroConcurrencySharesKey
PRESERVE_ZERO = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"


def to_flowcontrol(obj: Obj, api_version: str) -> Obj:
    """A FlowSchema or PriorityLevelConfiguration of any flowcontrol version in ``api_version``."""
    if obj.get("apiVersion") == api_version:
        return obj
    source = str(obj.get("apiVersion", "")).rpartition("/")[2]
    target = api_version.rpartition("/")[2]
    out = clone(obj)
    out["apiVersion"] = api_version
    if out.get("kind") != "PriorityLevelConfiguration":
        return out
    if source == "v1beta3":   # v1beta3 → internal drops the annotation
        annotations = (out.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict) and PRESERVE_ZERO in annotations:
            del annotations[PRESERVE_ZERO]
            if not annotations:
                del out["metadata"]["annotations"]
    spec = out.get("spec")
    limited = spec.get("limited") if isinstance(spec, dict) else None
    if not isinstance(limited, dict):
        return out
    have, want = (_shares_field(source), _shares_field(target))
    if have != want and have in limited:
        spec["limited"] = limited = {want if k == have else k: v for k, v in limited.items()}
    if source == "v1" and target == "v1beta3" and limited.get("nominalConcurrencyShares") == 0:
        # v1 → v1beta3: v1's explicit zero is marked, or v1beta3's defaulting would read it back as 30
        out.setdefault("metadata", {}).setdefault("annotations", {}).setdefault(PRESERVE_ZERO, "")
    return out


def _shares_field(version: str) -> str:
    return "assuredConcurrencyShares" if version in _ASSURED else "nominalConcurrencyShares"


# ---- beta versions with the fields of the stored one ----------------------------------------------------------

def relabel(obj: Obj, api_version: str) -> Obj:
    """A kind whose beta version has the same fields as the version stored (the generated conversions only
    copy): only apiVersion changes."""
    return obj if obj.get("apiVersion") == api_version else {**obj, "apiVersion": api_version}


def to_hpa_v2beta2(v2: Obj) -> Obj:
    """autoscaling/v2beta2 has v2's fields, but its status's currentReplicas and conditions have no omitempty
    (staging/src/k8s.io/api/autoscaling/v2beta2/types.go): a zero and an empty list are written."""
    out = relabel(v2, "autoscaling/v2beta2")
    status = out.get("status")
    if isinstance(status, dict) and ("currentReplicas" not in status or "conditions" not in status):
        order = ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas", "currentMetrics",
                 "conditions")
        zero = {"currentReplicas": 0, "conditions": None}
        out["status"] = {k: status.get(k, zero.get(k)) for k in order if k in status or k in zero}
        out["status"].update((k, v) for k, v in status.items() if k not in out["status"])
    return out


def _relabelled(served: str, stored: str) -> Conversion:
    return (lambda obj: relabel(obj, served)), (lambda obj: relabel(obj, stored))


# (group, version, kind) served → (stored → served, served → stored)
CONVERSIONS: dict[tuple[str, str, str], Conversion] = {
    ("events.k8s.io", "v1", "Event"): (to_events_v1, from_events_v1),
    ("autoscaling", "v1", "HorizontalPodAutoscaler"): (to_hpa_v1, from_hpa_v1),
    # the same fields (staging/src/k8s.io/api: v2beta2 became v2, batch/v1beta1's CronJob batch/v1's; the
    # v1beta1 Lease, PriorityClass, StorageClass and RuntimeClass are their v1's)
    ("autoscaling", "v2beta2", "HorizontalPodAutoscaler"): (to_hpa_v2beta2, lambda o: relabel(o, "autoscaling/v2")),
    ("batch", "v1beta1", "CronJob"): _relabelled("batch/v1beta1", "batch/v1"),
    ("node.k8s.io", "v1beta1", "RuntimeClass"): _relabelled("node.k8s.io/v1beta1", "node.k8s.io/v1"),
    ("coordination.k8s.io", "v1beta1", "Lease"): _relabelled("coordination.k8s.io/v1beta1", "coordination.k8s.io/v1"),
    ("scheduling.k8s.io", "v1beta1", "PriorityClass"): _relabelled("scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1"),
    ("storage.k8s.io", "v1beta1", "StorageClass"): _relabelled("storage.k8s.io/v1beta1", "storage.k8s.io/v1"),
}
# kinds served in several versions of their group, converted between any two: kind → (group, to version)
VERSIONED: dict[str, tuple[str, Callable[[Obj, str], Obj]]] = {
    "FlowSchema": (FLOWCONTROL, to_flowcontrol),
    "PriorityLevelConfiguration": (FLOWCONTROL, to_flowcontrol),
    # rbac.authorization.k8s.io/v1beta1 and storage.k8s.io/v1beta1 CSIStorageCapacity: v1's fields
    **dict.fromkeys(("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"),
                    ("rbac.authorization.k8s.io", relabel)),
    "CSIStorageCapacity": ("storage.k8s.io", relabel),
}


def converter(group: str, version: str, kind: str, stored: str) -> Conversion | None:
    """How a kind served at ``group/version`` converts to and from the version it is stored in (``stored``, an
    apiVersion), or None when served as stored."""
    fixed = CONVERSIONS.get((group, version, kind))
    if fixed is not None:
        return fixed
    versioned = VERSIONED.get(kind)
    if versioned is None or versioned[0] != group:
        return None
    served, convert = f"{group}/{version}", versioned[1]
    return (lambda obj: convert(obj, served)), (lambda obj: convert(obj, stored))

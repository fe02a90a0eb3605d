"""ResourceQuota: the admission plugin (plugin/pkg/admission/resourcequota, with the evaluators of
pkg/quota/v1/evaluator/core) and the usage the quota controller writes into status (pkg/controller/resourcequota).

A create is refused when, for some quota of the namespace whose scopes match the object, a resource the quota
limits would go past ``hard`` (``exceeded quota: NAME, requested: …, used: …, limited: …``), or when the quota
limits cpu or memory and a container does not say how much (``failed quota: NAME: must specify …``). Usage is
the namespace's live objects: pods that are not terminal (their requests, limits, overhead included, and counts),
and counts of other kinds (``count/<resource>[.<group>]`` and the legacy names).

What podlife simplifies: the controller's status is computed at once (it takes the real controller milliseconds
after a change, and the admission plugin keeps it current between its syncs), so the "status unknown for quota"
refusal right after a quota is created does not happen.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from podlife.api import quantity
from podlife.api.defaults import pod_requests
from podlife.api.errors import forbidden
from podlife.api.meta import KINDS, Obj, builtin_kind_info

COMPONENT = "resourcequota-controller"
_VALIDATION = ("cpu", "limits.cpu", "limits.memory", "memory", "requests.cpu", "requests.memory")
_LEGACY_COUNTS = {"configmaps": "ConfigMap", "secrets": "Secret", "services": "Service",
                  "persistentvolumeclaims": "PersistentVolumeClaim", "replicationcontrollers": "ReplicationController",
                  "resourcequotas": "ResourceQuota"}


def _q(v: Any) -> Fraction:
    return quantity.parse_quantity(v)


def _pod_limits(spec: dict[str, Any]) -> dict[str, Fraction]:
    """PodLimits: regular containers summed, each init container a floor, plus the overhead."""
    out: dict[str, Fraction] = {}
    for c in spec.get("containers") or ():
        for name, v in ((c.get("resources") or {}).get("limits") or {}).items():
            out[name] = out.get(name, Fraction(0)) + _q(v)
    for c in spec.get("initContainers") or ():
        for name, v in ((c.get("resources") or {}).get("limits") or {}).items():
            out[name] = max(out.get(name, Fraction(0)), _q(v))
    for name, v in (spec.get("overhead") or {}).items():
        if name in out:
            out[name] += _q(v)
    return out


def pod_usage(pod: Obj) -> dict[str, Fraction]:
    """podEvaluator.Usage: the resources a pod holds."""
    spec = pod.get("spec") or {}
    usage: dict[str, Fraction] = {"pods": Fraction(1), "count/pods": Fraction(1)}
    for name, value in pod_requests(spec).items():   # cpu in millicores, the rest in base units
        amount = Fraction(value, 1000) if name == "cpu" else Fraction(value)
        usage[f"requests.{name}"] = amount
        if name in ("cpu", "memory", "ephemeral-storage"):
            usage[name] = amount
    for name, amount in _pod_limits(spec).items():
        usage[f"limits.{name}"] = amount
    return usage


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _best_effort(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return all(not (c.get("resources") or {}).get(k)
               for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())
               for k in ("requests", "limits"))


def _scope_matches(quota: Obj, pod: Obj) -> bool:
    spec = quota.get("spec") or {}
    scopes = list(spec.get("scopes") or ())
    exprs = list((spec.get("scopeSelector") or {}).get("matchExpressions") or ())
    checks = [(s, "Exists", []) for s in scopes] + [(e.get("scopeName"), e.get("operator"), e.get("values") or [])
                                                     for e in exprs]
    for scope, op, values in checks:
        pspec = pod.get("spec") or {}
        if scope == "Terminating":
            ok = pspec.get("activeDeadlineSeconds") is not None
        elif scope == "NotTerminating":
            ok = pspec.get("activeDeadlineSeconds") is None
        elif scope == "BestEffort":
            ok = _best_effort(pod)
        elif scope == "NotBestEffort":
            ok = not _best_effort(pod)
        elif scope == "PriorityClass":
            cls = pspec.get("priorityClassName")
            ok = {"Exists": cls is not None, "DoesNotExist": cls is None, "In": cls in values,
                  "NotIn": cls not in values}.get(op, False)
        else:
            ok = True   # CrossNamespacePodAffinity, VolumeAttributesClass: not podlife's concern
        if not ok:
            return False
    return True


def _count_key(obj: Obj) -> list[str]:
    """The count resources an object of another kind adds to: count/<resource>[.<group>] and legacy names."""
    kind = obj.get("kind", "")
    info = KINDS.get(kind) or builtin_kind_info(kind, obj.get("apiVersion", "v1"))
    group = (obj.get("apiVersion") or "").rpartition("/")[0]
    keys = [f"count/{info.resource}" + (f".{group}" if group else "")]
    keys += [name for name, k in _LEGACY_COUNTS.items() if k == kind]
    if kind == "Service":
        stype = (obj.get("spec") or {}).get("type")
        if stype in ("NodePort", "LoadBalancer"):
            keys.append("services.nodeports")
        if stype == "LoadBalancer":
            keys.append("services.loadbalancers")
    return keys


def object_usage(obj: Obj) -> dict[str, Fraction]:
    if obj.get("kind") == "Pod":
        return pod_usage(obj)
    usage = {k: Fraction(1) for k in _count_key(obj)}
    if obj.get("kind") == "PersistentVolumeClaim":
        storage = (((obj.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            usage["requests.storage"] = _q(storage)
            cls = (obj.get("spec") or {}).get("storageClassName")
            if cls:
                usage[f"{cls}.storageclass.storage.k8s.io/requests.storage"] = _q(storage)
                usage[f"{cls}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
    return usage


def used(store: Any, quota: Obj) -> dict[str, Fraction]:
    """What the quota's resources hold in its namespace now."""
    ns = quota["metadata"]["namespace"]
    hard = set((quota.get("spec") or {}).get("hard") or {})
    total = {name: Fraction(0) for name in hard}
    kinds = {"Pod"} | {k for name, k in _LEGACY_COUNTS.items() if name in hard}
    kinds |= {kind for kind in list(store.kinds) if any(key in hard for key in _count_key(
        {"kind": kind, "apiVersion": store.kinds[kind].api_version}))}
    for kind in sorted(kinds):
        for obj in store.list(kind, ns):
            if kind == "Pod" and (_terminal(obj) or not _scope_matches(quota, obj)):
                continue
            for name, amount in object_usage(obj).items():
                if name in total:
                    total[name] += amount
    return total


def _show(name: str, amount: Fraction) -> str:
    """A usage as Quantity.String() prints it: cpu in cores or millicores, bytes with a binary suffix when
    exact (the containers' own quantities are usually written so), counts as integers."""
    if name.endswith("cpu"):
        return quantity.canonical(f"{int(amount * 1000)}m")
    if amount.denominator == 1 and any(word in name for word in ("memory", "storage", "hugepages")):
        return quantity.format_bytes(int(amount))
    return quantity.canonical(str(int(amount)) if amount.denominator == 1 else str(float(amount)))


def _pretty(values: dict[str, Fraction]) -> str:
    return ",".join(f"{k}={_show(k, v)}" for k, v in sorted(values.items()))


class ResourceQuota:
    """The admission plugin, on create."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def admit(self, obj: Obj) -> None:
        if self.store is None or obj.get("kind") in (None, "Namespace", "Event") or \
                "ResourceQuota" not in self.store.kinds:
            return
        md = obj.get("metadata") or {}
        ns = md.get("namespace")
        if not ns:
            return
        quotas = self.store.list("ResourceQuota", ns)
        if not quotas:
            return
        delta = object_usage(obj)
        for quota in quotas:
            hard = (quota.get("spec") or {}).get("hard") or {}
            if obj["kind"] == "Pod":
                if not _scope_matches(quota, obj):
                    continue
                missing = _missing(obj, [r for r in _VALIDATION if r in hard])
                if missing:
                    raise forbidden(_resource(obj), md.get("name") or "",
                                    f"failed quota: {quota['metadata']['name']}: must specify {missing}")
            requested = {k: v for k, v in delta.items() if k in hard}
            if not requested:
                continue
            now = used(self.store, quota)
            exceeded = [k for k in requested if now[k] + requested[k] > _q(hard[k])]
            if exceeded:
                raise forbidden(_resource(obj), md.get("name") or "",
                                f"exceeded quota: {quota['metadata']['name']}, "
                                f"requested: {_pretty({k: requested[k] for k in exceeded})}, "
                                f"used: {_pretty({k: now[k] for k in exceeded})}, "
                                f"limited: {_pretty({k: _q(hard[k]) for k in exceeded})}")


def _resource(obj: Obj) -> str:
    kind = obj.get("kind", "")
    return (KINDS.get(kind) or builtin_kind_info(kind, obj.get("apiVersion", "v1"))).resource


def _missing(pod: Obj, required: list[str]) -> str:
    """podEvaluator.Constraints: with cpu or memory quota'd, every container states its request (and limit)."""
    by_resource: dict[str, list[str]] = {}
    spec = pod.get("spec") or {}
    for c in list(spec.get("containers") or ()) + list(spec.get("initContainers") or ()):
        res = c.get("resources") or {}
        for r in required:
            kind, _, name = r.rpartition(".")
            have = (res.get(kind or "requests") or {})
            if name not in have:
                by_resource.setdefault(r, []).append(c.get("name", ""))
    return "; ".join(f"{r} for: {','.join(sorted(names))}" for r, names in sorted(by_resource.items()))

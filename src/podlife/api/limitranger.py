"""The LimitRanger admission plugin (plugin/pkg/admission/limitranger/admission.go), on pod and claim create.

Mutating: every container (and init container) gets the default limits and default requests of each
``type: Container`` item of its namespace's LimitRanges for the resources it does not set, and the pod the
``kubernetes.io/limit-ranger`` annotation saying so. A pod's own limits were already copied to missing requests
by API defaulting, before admission, so a default limit does not become a request: that changes the pod's QoS
class, hence its eviction order and OOM score.

Validating: min, max and maxLimitRequestRatio of Container and Pod items (a Pod item on the sums over the
containers), and storage min/max of PersistentVolumeClaim items; a violation is Forbidden with upstream's words.
LimitRange defaulting (default from max, defaultRequest from default or min) is podlife.api.defaults'.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from podlife.api import quantity
from podlife.api.errors import ApiError
from podlife.api.meta import Obj

ANNOTATION = "kubernetes.io/limit-ranger"


def _q(value: Any) -> Fraction:
    return quantity.parse_quantity(value)


def _show(value: Any) -> str:
    return quantity.canonical(value)


class LimitRanger:
    def __init__(self, store: Any) -> None:
        self.store = store

    def _items(self, namespace: str, ltype: str) -> list[dict[str, Any]]:
        return [item for lr in self.store.list("LimitRange", namespace)
                for item in (lr.get("spec") or {}).get("limits") or () if item.get("type") == ltype]

    def admit(self, obj: Obj) -> None:
        if self.store is None or obj.get("kind") not in ("Pod", "PersistentVolumeClaim"):
            return
        md = obj.get("metadata") or {}
        namespace = md.get("namespace") or "default"
        if obj["kind"] == "PersistentVolumeClaim":
            errors = self._claim_errors(obj, namespace)
        else:
            self._default(obj, namespace)
            errors = self._pod_errors(obj, namespace)
        if errors:
            resource = "pods" if obj["kind"] == "Pod" else "persistentvolumeclaims"
            why = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
            raise ApiError(403, "Forbidden", f'{resource} "{md.get("name") or ""}" is forbidden: {why}')

    # -- mutating: defaultContainerResourceRequirements + mergePodResourceRequirements
    def _default(self, pod: Obj, namespace: str) -> None:
        limits: dict[str, Any] = {}
        requests: dict[str, Any] = {}
        for item in self._items(namespace, "Container"):
            limits.update(item.get("default") or {})
            requests.update(item.get("defaultRequest") or {})
        if not limits and not requests:
            return
        notes: list[str] = []
        spec = pod.get("spec") or {}
        for key, what in (("containers", "container"), ("initContainers", "init container")):
            for c in spec.get(key) or ():
                res = c.setdefault("resources", {})
                set_requests = _merge(res, "requests", requests)
                set_limits = _merge(res, "limits", limits)
                if set_requests:
                    notes.append(f"{', '.join(sorted(set_requests))} request for {what} {c.get('name', '')}")
                if set_limits:
                    notes.append(f"{', '.join(sorted(set_limits))} limit for {what} {c.get('name', '')}")
        if notes:
            pod.setdefault("metadata", {}).setdefault("annotations", {})[ANNOTATION] = \
                "LimitRanger plugin set: " + "; ".join(notes)

    # -- validating: PodValidateLimitFunc
    def _pod_errors(self, pod: Obj, namespace: str) -> list[str]:
        errors: list[str] = []
        spec = pod.get("spec") or {}
        containers = list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
        for item in self._items(namespace, "Container"):
            for c in containers:
                res = c.get("resources") or {}
                errors += _constraints(item, "Container", res.get("requests") or {}, res.get("limits") or {})
        pod_items = self._items(namespace, "Pod")
        if pod_items:
            requests, limits = _pod_totals(spec)
            for item in pod_items:
                errors += _constraints(item, "Pod", requests, limits)
        return errors

    def _claim_errors(self, claim: Obj, namespace: str) -> list[str]:
        requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
        limits = ((claim.get("spec") or {}).get("resources") or {}).get("limits") or {}
        errors: list[str] = []
        for item in self._items(namespace, "PersistentVolumeClaim"):
            errors += _constraints({"min": item.get("min"), "max": item.get("max")}, "PersistentVolumeClaim",
                                   requests, limits, claim=True)
        return errors


def _merge(res: dict[str, Any], key: str, defaults: dict[str, Any]) -> list[str]:
    """mergeContainerResources: the defaults a container's own list lacks."""
    added = []
    for name, value in defaults.items():
        own = res.setdefault(key, {})
        if name not in own:
            own[name] = value
            added.append(name)
    if not res.get(key):
        res.pop(key, None)
    return added


def _pod_totals(spec: dict[str, Any]) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
    """The pod's requests and limits as the limitranger sums them: regular containers added, each init container
    a floor."""
    totals: list[dict[str, Fraction]] = [{}, {}]
    for i, key in enumerate(("requests", "limits")):
        for c in spec.get("containers") or ():
            for name, value in ((c.get("resources") or {}).get(key) or {}).items():
                totals[i][name] = totals[i].get(name, Fraction(0)) + _q(value)
        for c in spec.get("initContainers") or ():
            for name, value in ((c.get("resources") or {}).get(key) or {}).items():
                totals[i][name] = max(totals[i].get(name, Fraction(0)), _q(value))
    return totals[0], totals[1]


def _constraints(item: dict[str, Any], ltype: str, requests: dict[str, Any], limits: dict[str, Any], *,
                 claim: bool = False) -> list[str]:
    """minConstraint, maxConstraint and limitRequestRatioConstraint."""
    out: list[str] = []
    for name, enforced in (item.get("min") or {}).items():
        req, lim = requests.get(name), limits.get(name)
        if req is None:
            out.append(f"minimum {name} usage per {ltype} is {_show(enforced)}.  No request is specified")
        elif _q(req) < _q(enforced):
            out.append(f"minimum {name} usage per {ltype} is {_show(enforced)}, but request is {_show(req)}")
        elif lim is not None and _q(lim) < _q(enforced):
            out.append(f"minimum {name} usage per {ltype} is {_show(enforced)}, but limit is {_show(lim)}")
    for name, enforced in (item.get("max") or {}).items():
        req, lim = requests.get(name), limits.get(name)
        if claim:   # a claim is checked on its storage request
            if req is not None and _q(req) > _q(enforced):
                out.append(f"maximum {name} usage per {ltype} is {_show(enforced)}, but request is {_show(req)}")
            continue
        if lim is None:
            out.append(f"maximum {name} usage per {ltype} is {_show(enforced)}.  No limit is specified")
        elif _q(lim) > _q(enforced):
            out.append(f"maximum {name} usage per {ltype} is {_show(enforced)}, but limit is {_show(lim)}")
        elif req is not None and _q(req) > _q(enforced):
            out.append(f"maximum {name} usage per {ltype} is {_show(enforced)}, but request is {_show(req)}")
    for name, enforced in (item.get("maxLimitRequestRatio") or {}).items():
        req, lim = requests.get(name), limits.get(name)
        if req is None or _q(req) == 0:
            out.append(f"{name} max limit to request ratio per {ltype} is {_show(enforced)}, but no request is "
                       "specified or request is 0")
        elif lim is None or _q(lim) == 0:
            out.append(f"{name} max limit to request ratio per {ltype} is {_show(enforced)}, but no limit is "
                       "specified or limit is 0")
        elif _q(lim) / _q(req) > _q(enforced):
            out.append(f"{name} max limit to request ratio per {ltype} is {_show(enforced)}, but provided ratio is "
                       f"{float(_q(lim) / _q(req)):f}")
    return out

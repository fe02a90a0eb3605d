"""policy/v1 PodDisruptionBudget (pkg/apis/policy/validation)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names, selectors
from podlife.api.validation.common import Errs, as_dict, invalid, nonnegative, not_supported
from podlife.api.validation.objectmeta import validate_object_meta


def validate_pod_disruption_budget(obj: Mapping) -> Errs:
    """ValidatePodDisruptionBudgetSpec: not both minAvailable and maxUnavailable; non-negative values,
    percentages at most 100 %; a valid selector."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(invalid("spec", dict(spec), "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        v = spec.get(key)
        if isinstance(v, str):
            if not (v.endswith("%") and v[:-1].isdigit()):
                errs.append(invalid(f"spec.{key}", v, "a valid percent string must be a numeric string followed "
                                                       "by an ending '%'"))
            elif int(v[:-1]) > 100:
                errs.append(invalid(f"spec.{key}", v, "must not be greater than 100%"))
        elif v is not None:
            errs += nonnegative(v, f"spec.{key}")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("IfHealthyBudget", "AlwaysAllow"):
        errs.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, ["AlwaysAllow", "IfHealthyBudget"]))
    if spec.get("selector") is not None:
        errs += selectors.validate_selector(as_dict(spec["selector"]), "spec.selector")
    return errs

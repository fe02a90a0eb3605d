"""scheduling.k8s.io PriorityClass (pkg/apis/scheduling/validation)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    SYSTEM_PRIORITY_CLASSES,
    Errs,
    as_dict,
    as_int,
    as_str,
    forbidden,
)
from podlife.api.validation.core_pod import PREEMPTION_POLICIES, validate_enum
from podlife.api.validation.objectmeta import validate_object_meta


def validate_priority_class(obj: Mapping) -> Errs:
    """ValidatePriorityClass (scheduling/validation)."""
    meta = as_dict(obj.get("metadata"))
    errs = validate_object_meta(meta, namespaced=False, name_fn=names.name_is_dns_subdomain)
    name, value = as_str(meta.get("name")), as_int(obj.get("value"))
    if name.startswith("system-"):
        problem = _system_priority_class_error(name, value, bool(obj.get("globalDefault")))
        if problem:
            errs.append(forbidden("metadata.name",
                                  "priority class names with 'system-' prefix are reserved for system use only. "
                                  f"error: {problem}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden("value",
                              f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if obj.get("preemptionPolicy") is not None:
        errs += validate_enum(obj["preemptionPolicy"], "preemptionPolicy", PREEMPTION_POLICIES)
    return errs


def _system_priority_class_error(name: str, value: int, global_default: bool) -> str:
    """IsKnownSystemPriorityClass (scheduling/v1 helpers)."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if SYSTEM_PRIORITY_CLASSES[name] != value:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""

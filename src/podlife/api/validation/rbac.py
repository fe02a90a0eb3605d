"""rbac.authorization.k8s.io (pkg/apis/rbac/validation): Role, ClusterRole and their bindings. RBAC names are
path segments (ValidateRBACName), not DNS names."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api.validation.common import (
    Errs,
    as_dict,
    as_list,
    as_str,
    invalid,
    invalid_each,
    not_supported,
    path_segment_name,
    required,
)
from podlife.api.validation.objectmeta import meta

GROUP = "rbac.authorization.k8s.io"


def _rules(obj: Mapping, namespaced: bool) -> Errs:
    """ValidatePolicyRule: verbs, api groups with resources, non-resource URLs only cluster-wide."""
    errs: Errs = []
    for i, rule in enumerate(as_list(obj.get("rules"))):
        rule, p = as_dict(rule), f"rules[{i}]"
        if not as_list(rule.get("verbs")):
            errs.append(required(f"{p}.verbs", "verbs must contain at least one value"))
        urls = as_list(rule.get("nonResourceURLs"))
        if urls:
            if namespaced:
                errs.append(invalid(f"{p}.nonResourceURLs", urls,
                                          "namespaced rules cannot apply to non-resource URLs"))
            if as_list(rule.get("apiGroups")) or as_list(rule.get("resources")):
                errs.append(invalid(f"{p}.nonResourceURLs", urls,
                                          "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not as_list(rule.get("apiGroups")):
            errs.append(required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
        if not as_list(rule.get("resources")):
            errs.append(required(f"{p}.resources", "resource rules must supply at least one resource"))
    return errs


def validate_role(obj: Mapping) -> Errs:
    return meta(obj, True, path_segment_name) + _rules(obj, True)


def validate_cluster_role(obj: Mapping) -> Errs:
    errs = meta(obj, False, path_segment_name)
    if obj.get("aggregationRule") is None or as_list(obj.get("rules")):
        errs += _rules(obj, False)
    return errs


def _binding(obj: Mapping, namespaced: bool) -> Errs:
    """ValidateRoleBinding / ValidateClusterRoleBinding: the roleRef and each subject."""
    errs = meta(obj, namespaced, path_segment_name)
    ref = as_dict(obj.get("roleRef"))
    if as_str(ref.get("apiGroup")) != GROUP:
        errs.append(not_supported("roleRef.apiGroup", as_str(ref.get("apiGroup")), [GROUP]))
    kinds = ["ClusterRole", "Role"] if namespaced else ["ClusterRole"]
    if as_str(ref.get("kind")) not in kinds:
        errs.append(not_supported("roleRef.kind", as_str(ref.get("kind")), kinds))
    name = as_str(ref.get("name"))
    if not name:
        errs.append(required("roleRef.name"))
    else:
        errs += invalid_each("roleRef.name", name, path_segment_name(name))
    for i, subject in enumerate(as_list(obj.get("subjects"))):
        subject, p = as_dict(subject), f"subjects[{i}]"
        kind = as_str(subject.get("kind"))
        if not as_str(subject.get("name")):
            errs.append(required(f"{p}.name"))
        if kind == "ServiceAccount":
            if as_str(subject.get("apiGroup")):
                errs.append(not_supported(f"{p}.apiGroup", subject["apiGroup"], [""]))
            if not namespaced and not as_str(subject.get("namespace")):
                errs.append(required(f"{p}.namespace"))
        elif kind in ("User", "Group"):
            if as_str(subject.get("apiGroup")) != GROUP:
                errs.append(not_supported(f"{p}.apiGroup", as_str(subject.get("apiGroup")), [GROUP]))
        else:
            errs.append(not_supported(f"{p}.kind", kind, ["Group", "ServiceAccount", "User"]))
    return errs


VALIDATORS = {
    "Role": validate_role,
    "ClusterRole": validate_cluster_role,
    "RoleBinding": lambda obj: _binding(obj, True),
    "ClusterRoleBinding": lambda obj: _binding(obj, False),
}

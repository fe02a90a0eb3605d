"""rbac.authorization.k8s.io (pkg/apis/rbac/validation): Role, ClusterRole and their bindings. RBAC names are
path segments (ValidateRBACName), not DNS names."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api.validators.common import (
    Errs,
    _d,
    _invalid,
    _l,
    _msgs,
    _not_supported,
    _required,
    _s,
    meta,
    path_segment_name,
)

GROUP = "rbac.authorization.k8s.io"


def _rules(obj: Mapping, namespaced: bool) -> Errs:
    """ValidatePolicyRule: verbs, api groups with resources, non-resource URLs only cluster-wide."""
    errs: Errs = []
    for i, rule in enumerate(_l(obj.get("rules"))):
        rule, p = _d(rule), f"rules[{i}]"
        if not _l(rule.get("verbs")):
            errs.append(_required(f"{p}.verbs", "verbs must contain at least one value"))
        urls = _l(rule.get("nonResourceURLs"))
        if urls:
            if namespaced:
                errs.append(_invalid(f"{p}.nonResourceURLs", urls,
                                          "namespaced rules cannot apply to non-resource URLs"))
            if _l(rule.get("apiGroups")) or _l(rule.get("resources")):
                errs.append(_invalid(f"{p}.nonResourceURLs", urls,
                                          "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not _l(rule.get("apiGroups")):
            errs.append(_required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
        if not _l(rule.get("resources")):
            errs.append(_required(f"{p}.resources", "resource rules must supply at least one resource"))
    return errs


def validate_role(obj: Mapping) -> Errs:
    return meta(obj, True, path_segment_name) + _rules(obj, True)


def validate_cluster_role(obj: Mapping) -> Errs:
    errs = meta(obj, False, path_segment_name)
    if obj.get("aggregationRule") is None or _l(obj.get("rules")):
        errs += _rules(obj, False)
    return errs


def _binding(obj: Mapping, namespaced: bool) -> Errs:
    """ValidateRoleBinding / ValidateClusterRoleBinding: the roleRef and each subject."""
    errs = meta(obj, namespaced, path_segment_name)
    ref = _d(obj.get("roleRef"))
    if _s(ref.get("apiGroup")) != GROUP:
        errs.append(_not_supported("roleRef.apiGroup", _s(ref.get("apiGroup")), [GROUP]))
    kinds = ["ClusterRole", "Role"] if namespaced else ["ClusterRole"]
    if _s(ref.get("kind")) not in kinds:
        errs.append(_not_supported("roleRef.kind", _s(ref.get("kind")), kinds))
    name = _s(ref.get("name"))
    if not name:
        errs.append(_required("roleRef.name"))
    else:
        errs += _msgs("roleRef.name", name, path_segment_name(name))
    for i, subject in enumerate(_l(obj.get("subjects"))):
        subject, p = _d(subject), f"subjects[{i}]"
        kind = _s(subject.get("kind"))
        if not _s(subject.get("name")):
            errs.append(_required(f"{p}.name"))
        if kind == "ServiceAccount":
            if _s(subject.get("apiGroup")):
                errs.append(_not_supported(f"{p}.apiGroup", subject["apiGroup"], [""]))
            if not namespaced and not _s(subject.get("namespace")):
                errs.append(_required(f"{p}.namespace"))
        elif kind in ("User", "Group"):
            if _s(subject.get("apiGroup")) != GROUP:
                errs.append(_not_supported(f"{p}.apiGroup", _s(subject.get("apiGroup")), [GROUP]))
        else:
            errs.append(_not_supported(f"{p}.kind", kind, ["Group", "ServiceAccount", "User"]))
    return errs


VALIDATORS = {
    "Role": validate_role,
    "ClusterRole": validate_cluster_role,
    "RoleBinding": lambda obj: _binding(obj, True),
    "ClusterRoleBinding": lambda obj: _binding(obj, False),
}

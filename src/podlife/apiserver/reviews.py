"""Requests that are answered rather than stored: access and token reviews (pkg/registry/authorization,
pkg/registry/authentication). podlife serves one user, allowed everything: there is no RBAC to model the
answer."""

from __future__ import annotations

from podlife.api.meta import Obj, clone

REVIEWS = frozenset({"SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview",
                     "SelfSubjectRulesReview", "SelfSubjectReview", "TokenReview"})
USER = {"username": "podlife-admin", "groups": ["system:masters", "system:authenticated"]}


def review(obj: Obj) -> Obj:
    out = clone(obj)
    out.setdefault("metadata", {})
    kind = obj.get("kind")
    if kind == "SelfSubjectRulesReview":
        out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                         "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    elif kind == "SelfSubjectReview":
        out["status"] = {"userInfo": USER}
    elif kind == "TokenReview":
        out["status"] = {"authenticated": True, "user": USER}
    else:
        out["status"] = {"allowed": True}
    return out

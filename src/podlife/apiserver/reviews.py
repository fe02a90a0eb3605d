"""Requests that are answered rather than stored: access and token reviews (pkg/registry/authorization,
pkg/registry/authentication). podlife serves one user, allowed everything: there is no RBAC to model the
answer. A TokenReview authenticates the service account tokens the cluster signed (checked as the API server
checks them: podlife.api.registry.tokenrequest) and the server's own bearer token; any other token is refused."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj, clone
from podlife.api.registry import tokenrequest

REVIEWS = frozenset({"SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview",
                     "SelfSubjectRulesReview", "SelfSubjectReview", "TokenReview"})
USER = {"username": "podlife-admin", "groups": ["system:masters", "system:authenticated"]}


def user_info(user: Obj | None) -> tuple[str, list[str], dict[str, list[str]]]:
    """(name, groups, extra) of a TokenReview's user, or of the server's own user for None."""
    u: Obj = user if user is not None else dict(USER)
    extra = u.get("extra") or {}
    return str(u.get("username", "")), list(u.get("groups") or []), {k: list(v) for k, v in extra.items()}


def review(obj: Obj, store: Any, admin_token: str | None) -> Obj:
    """``admin_token``: the server's bearer token (None when it asks for none)."""
    out = clone(obj)
    out.setdefault("metadata", {})
    kind = obj.get("kind")
    if kind == "SelfSubjectRulesReview":
        out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                         "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    elif kind == "SelfSubjectReview":
        out["status"] = {"userInfo": USER}
    elif kind == "TokenReview":
        spec = obj.get("spec") or {}
        token = str(spec.get("token") or "")
        status = tokenrequest.review(store, token, spec.get("audiences")) if token else None
        if status is None:
            admin = admin_token is not None and token == admin_token
            # the union authenticator's answer when no authenticator knows the token
            status = {"authenticated": True, "user": USER} if admin else {"user": {}, "error": "invalid bearer token"}
        out["status"] = status
    else:
        out["status"] = {"allowed": True}
    return out

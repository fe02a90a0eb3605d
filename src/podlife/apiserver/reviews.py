"""Requests that are answered rather than stored: access and token reviews (pkg/registry/authorization,
pkg/registry/authentication). No RBAC is modelled: whoever authenticates (podlife.apiserver.authn) is allowed
everything, as --authorization-mode=AlwaysAllow answers (staging/src/k8s.io/apiserver/pkg/authorization/
authorizerfactory/builtin.go alwaysAllowAuthorizer: allowed, no reason). A SelfSubjectReview shows the requester
(pkg/registry/authentication/selfsubjectreview/rest.go); a TokenReview authenticates the service account tokens
the cluster signed (checked as the API server checks them: podlife.api.registry.tokenrequest) and the server's
own bearer token; any other token is refused."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj, clone
from podlife.api.registry import tokenrequest
from podlife.apiserver.authn import ADMIN

REVIEWS = frozenset({"SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview",
                     "SelfSubjectRulesReview", "SelfSubjectReview", "TokenReview"})


def user_info(user: Obj) -> tuple[str, list[str], dict[str, list[str]]]:
    """(name, groups, extra) of a UserInfo, as the front proxy passes them on (podlife.apiserver.aggregator)."""
    extra = user.get("extra") or {}
    return str(user.get("username", "")), list(user.get("groups") or []), {k: list(v) for k, v in extra.items()}


def review(obj: Obj, store: Any, admin_token: str | None, user: Obj) -> Obj:
    """``admin_token``: the server's bearer token (None when it asks for none); ``user``: the requester's
    UserInfo."""
    out = clone(obj)
    out.setdefault("metadata", {})
    kind = obj.get("kind")
    if kind == "SelfSubjectRulesReview":
        out["status"] = {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                         "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}
    elif kind == "SelfSubjectReview":
        out["status"] = {"userInfo": clone(user)}
    elif kind == "TokenReview":
        spec = obj.get("spec") or {}
        token = str(spec.get("token") or "")
        status = tokenrequest.review(store, token, spec.get("audiences")) if token else None
        if status is None:
            admin = admin_token is not None and token == admin_token
            # the union authenticator's answer when no authenticator knows the token
            status = {"authenticated": True, "user": clone(ADMIN)} if admin else \
                {"user": {}, "error": "invalid bearer token"}
        out["status"] = status
    else:
        out["status"] = {"allowed": True}
    return out

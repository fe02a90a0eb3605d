"""Who a request is: the API server's request authentication (staging/src/k8s.io/apiserver/pkg/endpoints/filters/
authentication.go WithAuthentication over the union of pkg/kubeapiserver/authenticator/config.go).

Two authenticators, as a kubeadm cluster has them for these credentials: the server's own bearer token (like a
--token-auth-file entry: the admin, system:masters) and the service account tokens this cluster's issuer signed
(pkg/serviceaccount/jwt.go AuthenticateToken, claims.go validator.Validate: podlife.api.registry.tokenrequest),
for the API audiences. A token neither knows, or one the issuer signed that no longer holds, is refused with
NewUnauthorized("Unauthorized") (filters/authentication.go Unauthorized). No RBAC is modelled: whoever
authenticates is allowed everything (as --authorization-mode=AlwaysAllow); the identity shows in SelfSubjectReview
and TokenReview (podlife.apiserver.reviews).

Without a server token (plain HTTP on loopback, nothing to authenticate with), a request that presents no token is
the admin, as before; a token of the issuer is still checked, so an in-cluster client is its account there too.
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from podlife.api import satokens
from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.registry import tokenrequest

log = logging.getLogger("podlife.apiserver")

# the admin the server's token (or no token, on an open server) authenticates as
ADMIN: Obj = {"username": "podlife-admin", "groups": ["system:masters", "system:authenticated"]}
USER_KEY = "podlife.user"   # where the request keeps its user (aiohttp's request mapping)


def bearer(header: str) -> str | None:
    """request/bearertoken/bearertoken.go AuthenticateRequest: the token of ``Authorization: Bearer <token>``
    (the scheme in any case, a third space-separated part ignored), None when there is none or it is empty."""
    parts = header.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def authenticate(header: str, store: Any, admin_token: str | None, at: float | None = None) -> Obj:
    """The user (authentication.k8s.io/v1 UserInfo) the Authorization header ``header`` authenticates, or
    ApiError 401. ``at``: the request's instant on the model's clock (the live clock's, which the kernel may not
    have caught up with yet), by default the kernel's."""
    token = bearer(header)
    if token is None:
        if admin_token is None:
            return ADMIN
        raise unauthorized()
    if admin_token is not None and hmac.compare_digest(token.encode(), admin_token.encode()):
        return ADMIN
    # the API audiences: claims.go's checks at the request's instant on the model's clock
    status = tokenrequest.review(store, token, None, at) if satokens.has_issuer(store) else None
    if status is None:   # not a token of this issuer (jwt.go hasCorrectIssuer)
        if admin_token is None:
            return ADMIN
        log.info('"Unable to authenticate the request" err="invalid bearer token"')
        raise unauthorized()
    if not status.get("authenticated"):
        log.info('"Unable to authenticate the request" err="%s"', status.get("error"))
        raise unauthorized()
    user: Obj = status["user"]
    return user


class _PathForbidden(ApiError):
    # NewForbidden of an empty GroupResource and name: the Status's details are there, empty
    details_always = True


def require_admin(user: Obj, method: str, path: str) -> None:
    """podlife's own endpoints (/podlife/...: stop, clock, snapshots) are the admin's alone: a pod's token does
    not stop the server. Refused as the authorization filter refuses a non-resource path (filters/authorization.go,
    responsewriters.Forbidden: forbiddenMessage with no reason)."""
    if user is not ADMIN:
        raise _PathForbidden(403, "Forbidden", f'forbidden: User "{user.get("username", "")}" cannot '
                                               f'{method.lower()} path "{path}"')

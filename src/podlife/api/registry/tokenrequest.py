"""serviceaccounts/token and the service-account half of TokenReview.

TokenRequest: pkg/registry/core/serviceaccount/storage/token.go (TokenREST.Create) with the validation of
pkg/apis/authentication/validation and the claims of pkg/serviceaccount/claims.go. TokenReview of those tokens:
pkg/serviceaccount/jwt.go AuthenticateToken and claims.go validator.Validate.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from podlife.api.errors import ApiError, FieldError, conflict, invalid
from podlife.api.meta import Obj, clone
from podlife.api.satokens import API_AUDIENCES, TokenError, issuer_of
from podlife.api.gofmt import go_quote

MIN_EXPIRATION = 600          # validation.go MinTokenAgeSec
MAX_EXPIRATION = 1 << 32      # MaxTokenAgeSec
DEFAULT_EXPIRATION = 3600     # SetDefaults_TokenRequestSpec
WARN_ONLY_EXPIRATION = 3607   # claims.go WarnOnlyBoundTokenExpirationSeconds
EXTENDED_EXPIRATION = 24 * 365 * 60 * 60   # ExpirationExtensionSeconds (--service-account-extend-token-expiration)
LEEWAY = 60                   # go-jose jwt.DefaultLeeway
GROUP_KIND = "TokenRequest.authentication.k8s.io"
EXTRA = "authentication.kubernetes.io/"   # the user extras' prefix (serviceaccount/util.go PodNameKey ...)


def _now(store: Any, at: float | None = None) -> datetime:
    return store.trace.start_time + timedelta(seconds=store.kernel.now if at is None else at)


def _bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def create_token(store: Any, namespace: str, name: str, body: Obj) -> Obj:
    """TokenREST.Create: a TokenRequest for the account ``namespace/name`` with status.token and
    status.expirationTimestamp. ``body``: the decoded authentication.k8s.io/v1 TokenRequest."""
    req = clone(body)
    md = req.setdefault("metadata", {})
    if md.get("name") and md["name"] != name:
        raise invalid(GROUP_KIND, name, [FieldError("metadata.name", "Invalid value",
                                                    "must match the service account name if specified",
                                                    md["name"])])
    if md.get("namespace") and md["namespace"] != namespace:
        raise invalid(GROUP_KIND, name, [FieldError("metadata.namespace", "Invalid value",
                                                    "must match the service account namespace if specified",
                                                    md["namespace"])])
    sa = store.get("ServiceAccount", namespace, name)
    spec = req.setdefault("spec", {})
    spec.setdefault("expirationSeconds", DEFAULT_EXPIRATION)
    if not spec.get("audiences"):
        spec["audiences"] = list(API_AUDIENCES)
    md["name"], md["namespace"] = name, namespace
    now = _now(store)
    md["creationTimestamp"] = store.trace.timestamp()
    req.pop("status", None)
    exp_s = spec["expirationSeconds"]
    if not isinstance(exp_s, int) or exp_s < MIN_EXPIRATION:
        raise invalid(GROUP_KIND, "", [FieldError("spec.expirationSeconds", "Invalid value",
                                                  "may not specify a duration less than 10 minutes", exp_s)])
    if exp_s > MAX_EXPIRATION:
        raise invalid(GROUP_KIND, "", [FieldError("spec.expirationSeconds", "Invalid value",
                                                  "may not specify a duration larger than 2^32 seconds", exp_s)])
    private: Obj = {"namespace": namespace, "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]}}
    pod = None
    ref = spec.get("boundObjectRef")
    if ref:
        kind, api_version = ref.get("kind", ""), ref.get("apiVersion", "")
        group = api_version.rpartition("/")[0]
        if group == "" and kind == "Pod":
            pod = store.get("Pod", namespace, ref.get("name", ""))
            if pod["spec"].get("serviceAccountName") != name:
                raise _bad_request(f'cannot bind token for serviceaccount "{name}" to pod running with different '
                                   "serviceaccount name.")
            bound = pod
            private["pod"] = {"name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
            node_name = pod["spec"].get("nodeName")
            if store.profile.service_account_token_pod_node_info and node_name:
                # token.go: the pod's node, by name alone when the Node is not there
                node = store.try_get("Node", None, node_name)
                private["node"] = {"name": node_name, **({"uid": node["metadata"]["uid"]} if node else {})}
        elif group == "" and kind == "Secret":
            bound = store.get("Secret", namespace, ref.get("name", ""))
            private["secret"] = {"name": bound["metadata"]["name"], "uid": bound["metadata"]["uid"]}
        else:
            version = api_version.rpartition("/")[2]
            raise _bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
        if ref.get("uid") and ref["uid"] != bound["metadata"]["uid"]:
            raise conflict(f"{kind}", ref.get("name", ""),
                           f"the UID in the bound object reference ({ref['uid']}) does not match the UID in record. "
                           "The object might have been deleted and then recreated")
    # token.go: the injected volume's 1h7s pod-bound token for the API's audiences is valid a year and warns after
    exp, iat = exp_s, int(now.timestamp())
    if pod is not None and exp_s == WARN_ONLY_EXPIRATION and set(spec["audiences"]) <= set(API_AUDIENCES):
        private["warnafter"] = iat + exp_s
        exp = EXTENDED_EXPIRATION
    claims = {"sub": f"system:serviceaccount:{namespace}:{name}", "aud": list(spec["audiences"]), "iat": iat,
              "nbf": iat, "exp": iat + exp, "kubernetes.io": private}
    if store.profile.service_account_token_jti:   # claims.go: uuid.NewString, from a seeded stream of its own
        claims["jti"] = str(uuid.UUID(int=store.kernel.rng("satokens:jti").getrandbits(128), version=4))
    req["status"] = {"token": issuer_of(store).sign(claims),
                     "expirationTimestamp": store.trace.timestamp(store.kernel.now + exp_s)}
    req["apiVersion"], req["kind"] = "authentication.k8s.io/v1", "TokenRequest"
    return req


def review(store: Any, token: str, audiences: list[str] | None, at: float | None = None) -> Obj | None:
    """TokenReview status for a service account token of this cluster's issuer, or None for a token that is not
    one (not a JWT of the issuer: the caller tries its other authenticators). ``at``: the instant (the kernel's
    seconds) the times are checked at, by default the kernel's."""
    try:
        claims = issuer_of(store).verify(token)
    except TokenError as e:
        return {"user": {}, "error": str(e)} if str(e) != "invalid bearer token" else None
    try:
        return _authenticate(store, claims, list(audiences or API_AUDIENCES), at)
    except TokenError as e:
        return {"user": {}, "error": str(e)}


def _go_quote(items: list[str]) -> str:
    """Go's %q of a []string."""
    return "[" + " ".join(go_quote(a) for a in items) + "]"


def _authenticate(store: Any, claims: Obj, requested: list[str], at: float | None = None) -> Obj:
    now = _now(store, at).timestamp()
    token_auds = claims.get("aud") or list(API_AUDIENCES)
    token_auds = [token_auds] if isinstance(token_auds, str) else list(token_auds)
    auds = [a for a in token_auds if a in requested]
    if not auds:
        raise TokenError(f"token audiences {_go_quote(token_auds)} is invalid for the target audiences "
                         f"{_go_quote(requested)}")
    # go-jose jwt.Claims.ValidateWithLeeway, in its order; an absent claim is not checked (claims.go Validate's
    # messages; the issued-in-the-future one is 1.28's: podlife's iat never runs ahead of its clock)
    nbf, exp, iat = claims.get("nbf"), claims.get("exp"), claims.get("iat")
    if isinstance(nbf, (int, float)) and now + LEEWAY < nbf:
        raise TokenError("service account token is not valid yet")
    if isinstance(exp, (int, float)) and now - LEEWAY > exp:
        raise TokenError("service account token has expired")
    if isinstance(iat, (int, float)) and now + LEEWAY < iat:
        raise TokenError("service account token is issued in the future")
    k8s = claims.get("kubernetes.io") or {}
    ns, saref = k8s.get("namespace", ""), k8s.get("serviceaccount") or {}
    deleted_before = store.kernel.now - LEEWAY   # on the store's clock, as its timestamps are read

    def gone(obj: Obj) -> bool:
        ts = obj["metadata"].get("deletionTimestamp")
        return bool(ts) and store._parse_time(ts) < deleted_before

    sa = store.try_get("ServiceAccount", ns, saref.get("name", ""))
    if sa is None:
        raise TokenError(f'serviceaccounts "{saref.get("name", "")}" not found')
    if gone(sa):
        raise TokenError(f"service account {ns}/{saref.get('name')} has been deleted")
    if sa["metadata"]["uid"] != saref.get("uid"):
        raise TokenError(f"service account UID ({sa['metadata']['uid']}) does not match claim ({saref.get('uid')})")
    for key, kind in (("secret", "Secret"), ("pod", "Pod")):
        ref = k8s.get(key)
        if not ref:
            continue
        obj = store.try_get(kind, ns, ref.get("name", ""))
        if obj is None or gone(obj):
            raise TokenError("service account token has been invalidated")
        if obj["metadata"]["uid"] != ref.get("uid"):
            what = "secret" if kind == "Secret" else "pod"
            raise TokenError(f"{what} UID ({obj['metadata']['uid']}) does not match service account {what} ref "
                             f"claim ({ref.get('uid')})")
    user: Obj = {"username": f"system:serviceaccount:{ns}:{saref['name']}", "uid": saref["uid"],
                 "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"]}
    extra = _extra(store.profile, claims, k8s)
    if extra:
        user["extra"] = extra
    return {"authenticated": True, "user": user, "audiences": auds}


def _extra(profile: Any, claims: Obj, k8s: Obj) -> dict[str, list[str]]:
    """staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go ServiceAccountInfo.UserInfo: the
    pod's name and uid, the credential id of the jti (ServiceAccountTokenJTI), a pod-bound token's node
    (ServiceAccountTokenPodNodeInfo); in the JSON map's key order."""
    out: dict[str, list[str]] = {}
    pod, node = k8s.get("pod") or {}, k8s.get("node") or {}
    if pod.get("name") and pod.get("uid"):
        out[f"{EXTRA}pod-name"], out[f"{EXTRA}pod-uid"] = [pod["name"]], [pod["uid"]]
    if profile.service_account_token_jti and claims.get("jti"):
        out[f"{EXTRA}credential-id"] = [f"JTI={claims['jti']}"]   # CredentialIDForJTI
    if pod and profile.service_account_token_pod_node_info and node.get("name"):
        out[f"{EXTRA}node-name"] = [node["name"]]
        if node.get("uid"):
            out[f"{EXTRA}node-uid"] = [node["uid"]]
    return dict(sorted(out.items()))

"""The API server authenticates the service account tokens its issuer signed (podlife.apiserver.authn), as
kube-apiserver's authenticator chain does (pkg/serviceaccount/jwt.go, claims.go): with the official Python client
and kubectl, on ``podlife up --tls --clock manual`` (so the token's expiry is checked to the second), and on an
open loopback server."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.live.conftest import Live

kubernetes = pytest.importorskip("kubernetes")

AUDIENCE = "https://kubernetes.default.svc.cluster.local"
# filters/authentication.go Unauthorized: NewUnauthorized("Unauthorized"), as JSON
UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
GROUPS = ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]


@pytest.fixture(scope="module")
def secured(live_factory: Callable[..., Live]) -> Live:
    return live_factory("1.28", clock="manual", extra=("--tls",))


def _admin(live: Live) -> Any:
    from kubernetes import config

    return config.new_client_from_config(live.kubeconfig)


def _as(live: Live, token: str) -> Any:
    """The official client with the kubeconfig's server and CA, and ``token`` for credentials."""
    api = _admin(live)
    api.configuration.refresh_api_key_hook = None   # the kubeconfig loader's: it would put the admin's back
    api.configuration.api_key = {"BearerToken": f"Bearer {token}"}
    return api


def _whoami(live: Live, token: str) -> Any:
    from kubernetes import client

    return client.AuthenticationV1Api(_as(live, token)).create_self_subject_review({}).status.user_info


def _refused(live: Live, token: str) -> tuple[int, Any]:
    code, _, raw = live.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
                                {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}, auth=False)
    return code, json.loads(raw)


def _token(live: Live, account: str, spec: dict[str, Any]) -> str:
    from kubernetes import client

    v1 = client.CoreV1Api(_admin(live))
    return str(v1.create_namespaced_service_account_token(account, "default", {"spec": spec}).status.token)


def _part(token: str, i: int) -> dict[str, Any]:
    p = token.split(".")[i]
    return dict(json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))))


def test_bound_token_authenticates_as_its_account(secured: Live) -> None:
    """A TokenRequest token bound to a pod is the account (ServiceAccountInfo.UserInfo: the account's uid, its
    groups, the pod as extra; system:authenticated from the authenticated-group adder); every authenticated user
    is allowed everything (no RBAC); podlife's own endpoints are the admin's."""
    from kubernetes import client

    admin = client.CoreV1Api(_admin(secured))
    sa = admin.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    pod = admin.create_namespaced_pod("default", {"metadata": {"name": "robot-pod"}, "spec": {
        "serviceAccountName": "robot", "containers": [{"name": "c", "image": "nginx"}]}})
    token = _token(secured, "robot", {"expirationSeconds": 600, "boundObjectRef": {
        "kind": "Pod", "apiVersion": "v1", "name": "robot-pod"}})
    me = _whoami(secured, token)
    assert (me.username, me.uid, me.groups) == ("system:serviceaccount:default:robot", sa.metadata.uid, GROUPS)
    assert me.extra == {"authentication.kubernetes.io/pod-name": ["robot-pod"],
                        "authentication.kubernetes.io/pod-uid": [pod.metadata.uid]}
    # kubectl auth whoami with the token in place of the kubeconfig's
    out = json.loads(secured.kubectl("auth", "whoami", "--token", token, "-o", "json").stdout)
    assert out["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    assert out["status"]["userInfo"]["groups"] == GROUPS
    # the admin is still the admin
    admin_me = client.AuthenticationV1Api(_admin(secured)).create_self_subject_review({}).status.user_info
    assert (admin_me.username, admin_me.groups) == ("podlife-admin", ["system:masters", "system:authenticated"])
    # allowed everything: reads, writes, an access review (alwaysAllowAuthorizer: allowed, no reason)
    as_robot = client.CoreV1Api(_as(secured, token))
    assert [p.metadata.name for p in as_robot.list_namespaced_pod("default").items] == ["robot-pod"]
    as_robot.create_namespaced_config_map("default", {"metadata": {"name": "by-robot"}})
    review = client.AuthorizationV1Api(_as(secured, token)).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    assert review.status.allowed is True and review.status.reason is None
    # TokenReview by the admin: the same user
    tr = client.AuthenticationV1Api(_admin(secured)).create_token_review({"spec": {"token": token}})
    assert tr.status.authenticated and tr.status.user.username == me.username and tr.status.audiences == [AUDIENCE]
    # podlife's own endpoints (the clock, stop) are the admin's
    code, _, raw = secured.request("POST", "/podlife/stop", headers={"Authorization": f"Bearer {token}"}, auth=False)
    assert (code, json.loads(raw)) == (403, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'forbidden: User "system:serviceaccount:default:robot" cannot post path "/podlife/stop"',
        "reason": "Forbidden", "details": {}, "code": 403})
    assert secured.json("GET", "/podlife/clock")[0] == 200


def test_refused_tokens_get_401(secured: Live) -> None:
    """Another audience, a changed payload, an expired token, a token whose pod is gone: NewUnauthorized."""
    from kubernetes import client

    admin = client.CoreV1Api(_admin(secured))
    admin.create_namespaced_service_account("default", {"metadata": {"name": "fleeting"}})
    admin.create_namespaced_pod("default", {"metadata": {"name": "fleeting-pod"}, "spec": {
        "serviceAccountName": "fleeting", "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "nginx"}]}})
    # another audience (jwt.go: the token's audiences must meet the API audiences)
    vault = _token(secured, "fleeting", {"audiences": ["vault"], "expirationSeconds": 600})
    assert _refused(secured, vault) == (401, UNAUTHORIZED)
    # the payload changed under the issuer's signature: another account's name
    good = _token(secured, "fleeting", {"expirationSeconds": 600})
    head, body, sig = good.split(".")
    claims = _part(good, 1)
    claims["sub"] = "system:serviceaccount:kube-system:default"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert _refused(secured, f"{head}.{forged}.{sig}") == (401, UNAUTHORIZED)
    assert _refused(secured, "not-a-token") == (401, UNAUTHORIZED)
    # exp + go-jose's minute of leeway: on the manual clock, to the second
    assert _whoami(secured, good).username == "system:serviceaccount:default:fleeting"
    secured.advance("660s")
    assert _whoami(secured, good).username == "system:serviceaccount:default:fleeting"
    secured.advance("1s")
    assert _refused(secured, good) == (401, UNAUTHORIZED)
    # bound to a pod that is then deleted: invalidated once it is gone
    bound = _token(secured, "fleeting", {"expirationSeconds": 600, "boundObjectRef": {
        "kind": "Pod", "apiVersion": "v1", "name": "fleeting-pod"}})
    assert _whoami(secured, bound).username == "system:serviceaccount:default:fleeting"
    admin.delete_namespaced_pod("fleeting-pod", "default", grace_period_seconds=0)
    secured.wait_for("pod gone", lambda: not [p for p in admin.list_namespaced_pod("default").items
                                              if p.metadata.name == "fleeting-pod"])
    assert _refused(secured, bound) == (401, UNAUTHORIZED)
    tr = client.AuthenticationV1Api(_admin(secured)).create_token_review({"spec": {"token": bound}})
    assert tr.status.error == "service account token has been invalidated"
    # the account deleted and made again: another uid
    still = _token(secured, "fleeting", {"expirationSeconds": 600})
    old_uid = _part(still, 1)["kubernetes.io"]["serviceaccount"]["uid"]
    admin.delete_namespaced_service_account("fleeting", "default")
    new = admin.create_namespaced_service_account("default", {"metadata": {"name": "fleeting"}})
    assert _refused(secured, still) == (401, UNAUTHORIZED)
    tr = client.AuthenticationV1Api(_admin(secured)).create_token_review({"spec": {"token": still}})
    assert tr.status.error == f"service account UID ({new.metadata.uid}) does not match claim ({old_uid})"


def test_open_server_checks_the_issuers_tokens(live_factory: Callable[..., Live]) -> None:
    """Plain HTTP on loopback asks for no token (a request without one is the admin), but a token of the issuer
    is still checked: an in-cluster client is its account there too, and a spoiled token is refused."""
    from kubernetes import client

    live = live_factory("1.28")
    admin = client.CoreV1Api(_admin(live))
    live.wait_for("default account", lambda: admin.list_namespaced_service_account("default").items)
    token = _token(live, "default", {"expirationSeconds": 600})
    assert _whoami(live, token).username == "system:serviceaccount:default:default"
    me = client.AuthenticationV1Api(_admin(live)).create_self_subject_review({}).status.user_info
    assert me.username == "podlife-admin"
    head, body, sig = token.split(".")
    assert _refused(live, f"{head}.{body}.{sig[:-4]}AAAA") == (401, UNAUTHORIZED)


def test_jti_and_node_info_from_1_30(live_factory: Callable[..., Live]) -> None:
    """1.30 (ServiceAccountTokenJTI, ServiceAccountTokenPodNodeInfo beta and on): a pod-bound token carries a jti
    and the pod's node, and its user has them as the credential-id, node-name and node-uid extras
    (serviceaccount/util.go UserInfo). 1.28's user has the pod alone (test_bound_token_authenticates_as_its_account)."""
    import re

    from kubernetes import client

    live = live_factory("1.30", speed=10.0)
    admin = client.CoreV1Api(_admin(live))
    live.wait_for("default account", lambda: admin.list_namespaced_service_account("default").items)
    pod = admin.create_namespaced_pod("default", {"metadata": {"name": "placed"}, "spec": {
        "containers": [{"name": "c", "image": "nginx"}]}})
    node_name = live.wait_for("scheduled", lambda: admin.read_namespaced_pod("placed", "default").spec.node_name)
    node = admin.read_node(node_name)
    token = _token(live, "default", {"expirationSeconds": 600, "boundObjectRef": {
        "kind": "Pod", "apiVersion": "v1", "name": "placed"}})
    claims = _part(token, 1)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", claims["jti"])
    assert claims["kubernetes.io"]["node"] == {"name": node_name, "uid": node.metadata.uid}
    me = _whoami(live, token)
    assert me.extra == {"authentication.kubernetes.io/credential-id": [f"JTI={claims['jti']}"],
                        "authentication.kubernetes.io/node-name": [node_name],
                        "authentication.kubernetes.io/node-uid": [node.metadata.uid],
                        "authentication.kubernetes.io/pod-name": ["placed"],
                        "authentication.kubernetes.io/pod-uid": [pod.metadata.uid]}
    # an unbound token: the jti alone
    unbound = _token(live, "default", {"expirationSeconds": 600})
    assert "node" not in _part(unbound, 1)["kubernetes.io"]
    assert _whoami(live, unbound).extra == {
        "authentication.kubernetes.io/credential-id": [f"JTI={_part(unbound, 1)['jti']}"]}

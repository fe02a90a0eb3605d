"""The ServiceAccount admission plugin's token volume (plugin/pkg/admission/serviceaccount), TokenRequest and
TokenReview of the tokens (pkg/registry/core/serviceaccount/storage/token.go, pkg/serviceaccount) and the
kubelet's token manager (pkg/kubelet/token), on a cluster in memory."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

import pytest

from podlife.api.errors import ApiError
from podlife.api.registry.tokenrequest import create_token, review
from podlife.cluster import Cluster
from podlife.cluster.spec import NodeSpec
from podlife.kubelet.tokens import TokenManager
from tests.helpers import records, run_text

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _cluster(version: str = "1.28", seed: int = 0, **kw: Any) -> Cluster:
    return Cluster(version=version, seed=seed, start_time=START, nodes=[NodeSpec("n1")], **kw)


def _pod(c: Cluster, name: str, **spec: Any) -> dict:
    body = {"containers": [{"name": "c", "image": "x"}], **spec}
    return c.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                           "spec": body}, by="test")


def _claims(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_every_container_and_init_container_mounts_one_volume() -> None:
    c = _cluster()
    pod = _pod(c, "p", initContainers=[{"name": "i", "image": "x"}],
               containers=[{"name": "a", "image": "x"}, {"name": "b", "image": "x"}])
    (vol,) = pod["spec"]["volumes"]
    assert vol["name"].startswith("kube-api-access-") and len(vol["name"]) == len("kube-api-access-") + 5
    assert vol["projected"]["defaultMode"] == 420
    assert [s for src in vol["projected"]["sources"] for s in src] == ["serviceAccountToken", "configMap",
                                                                      "downwardAPI"]
    for c_ in pod["spec"]["initContainers"] + pod["spec"]["containers"]:
        assert c_["volumeMounts"] == [{"name": vol["name"], "readOnly": True, "mountPath": MOUNT}]
    # the same seed draws the same name
    assert _pod(_cluster(), "p", initContainers=[{"name": "i", "image": "x"}])["spec"]["volumes"][0]["name"] \
        == vol["name"]


def test_an_existing_mount_at_the_path_and_an_existing_volume_are_kept() -> None:
    c = _cluster()
    mine = {"name": "mine", "emptyDir": {}}
    pod = _pod(c, "p", volumes=[mine], containers=[
        {"name": "a", "image": "x", "volumeMounts": [{"name": "mine", "mountPath": MOUNT}]}])
    assert pod["spec"]["volumes"] == [mine]   # no container needed the token: no volume
    pod = _pod(c, "q", volumes=[{"name": "kube-api-access-own", "emptyDir": {}}])
    assert [v["name"] for v in pod["spec"]["volumes"]] == ["kube-api-access-own"]
    assert pod["spec"]["containers"][0]["volumeMounts"] == [
        {"name": "kube-api-access-own", "readOnly": True, "mountPath": MOUNT}]


@pytest.mark.parametrize(("pod_says", "account_says", "mounted"), [
    (None, None, True), (None, True, True), (None, False, False), (True, False, True), (False, True, False)])
def test_pod_preference_wins_then_the_account(pod_says: bool | None, account_says: bool | None,
                                              mounted: bool) -> None:
    c = _cluster()
    sa: dict = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "default"}}
    if account_says is not None:
        sa["automountServiceAccountToken"] = account_says
    c.store.create(sa, by="test")
    spec: dict = {"serviceAccountName": "sa"}
    if pod_says is not None:
        spec["automountServiceAccountToken"] = pod_says
    assert bool(_pod(c, "p", **spec)["spec"].get("volumes")) is mounted


def test_no_token_volume_before_bound_tokens_or_with_the_gate_off() -> None:
    assert "volumes" not in _pod(_cluster("1.20"), "p")["spec"]
    off = _cluster("1.21", feature_gates={"BoundServiceAccountTokenVolume": False})
    assert "volumes" not in _pod(off, "p")["spec"]
    assert _pod(_cluster("1.21"), "p")["spec"]["volumes"]


def test_run_mode_pods_get_the_volume_and_mount_it(tmp_path: Any) -> None:
    r = run_text(tmp_path, """\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: sa}
        spec:
          kubernetesVersion: "1.28"
          until: 30s
          objects:
          - apiVersion: apps/v1
            kind: Deployment
            metadata: {name: web}
            spec:
              replicas: 2
              selector: {matchLabels: {app: web}}
              template:
                metadata: {labels: {app: web}}
                spec: {containers: [{name: web, image: nginx}]}
        """)
    pods = r.cluster.store.list("Pod")
    assert len(pods) == 2 and all(p["status"]["phase"] == "Running" for p in pods)
    names = {p["spec"]["volumes"][0]["name"] for p in pods}
    assert len(names) == 2 and not records(r, "event", reason="FailedMount")


def test_token_request_claims_and_review() -> None:
    c = _cluster()
    pod = _pod(c, "p")
    c.kernel.run(until=5)
    tr = create_token(c.store, "default", "default", {"spec": {
        "expirationSeconds": 3607, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}})
    assert tr["metadata"] == {"name": "default", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:05Z"}
    assert tr["status"]["expirationTimestamp"] == "2026-01-01T01:00:12Z"
    claims = _claims(tr["status"]["token"])
    sa = c.store.get("ServiceAccount", "default", "default")
    assert claims == {"aud": ["https://kubernetes.default.svc.cluster.local"], "iat": 1767225605,
                      "nbf": 1767225605, "exp": 1767225605 + 365 * 86400,
                      "iss": "https://kubernetes.default.svc.cluster.local",
                      "sub": "system:serviceaccount:default:default",
                      "kubernetes.io": {"namespace": "default", "warnafter": 1767225605 + 3607,
                                        "pod": {"name": "p", "uid": pod["metadata"]["uid"]},
                                        "serviceaccount": {"name": "default", "uid": sa["metadata"]["uid"]}}}
    status = review(c.store, tr["status"]["token"], None)
    assert status is not None and status["authenticated"] is True
    assert status["user"]["username"] == "system:serviceaccount:default:default"
    # tampered: the signature no longer matches
    head, body, sig = tr["status"]["token"].split(".")
    forged = base64.urlsafe_b64encode(json.dumps({**claims, "sub": "x"}).encode()).rstrip(b"=").decode()
    bad = review(c.store, f"{head}.{forged}.{sig}", None)
    assert bad is not None and not bad.get("authenticated")
    assert review(c.store, "not-a-jwt", None) is None   # for the server's other authenticators


def test_token_expires_past_the_leeway() -> None:
    c = _cluster()
    tr = create_token(c.store, "default", "default", {"spec": {"expirationSeconds": 600}})
    c.kernel.run(until=660)
    assert review(c.store, tr["status"]["token"], None)["authenticated"] is True
    c.kernel.run(until=661)
    assert review(c.store, tr["status"]["token"], None) == {"user": {},
                                                            "error": "service account token has expired"}


def test_token_request_refusals() -> None:
    c = _cluster()
    _pod(c, "p")
    with pytest.raises(ApiError) as e:
        create_token(c.store, "default", "default", {"spec": {"expirationSeconds": 1 << 33}})
    assert e.value.code == 422 and e.value.message.endswith(
        "spec.expirationSeconds: Invalid value: 8589934592: may not specify a duration larger than 2^32 seconds")
    with pytest.raises(ApiError) as e:
        create_token(c.store, "default", "default", {"metadata": {"name": "other"}, "spec": {}})
    assert e.value.message == ('TokenRequest.authentication.k8s.io "default" is invalid: metadata.name: Invalid '
                               'value: "other": must match the service account name if specified')
    with pytest.raises(ApiError) as e:
        create_token(c.store, "default", "default", {"spec": {"boundObjectRef": {
            "kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "stale"}}})
    assert e.value.code == 409 and "the UID in the bound object reference (stale) does not match" in e.value.message
    with pytest.raises(ApiError) as e:
        create_token(c.store, "default", "default", {"spec": {"boundObjectRef": {
            "kind": "Deployment", "apiVersion": "apps/v1", "name": "d"}}})
    assert e.value.code == 400 and e.value.message == "cannot bind token to object of type apps/v1, Kind=Deployment"


def test_kubelet_token_manager_refreshes_past_80_percent() -> None:
    c = _cluster()
    pod = _pod(c, "p")
    mgr = TokenManager(c.store, c.kernel.rng("test-tokens"))
    source = {"path": "token", "expirationSeconds": 1000}
    first = mgr.token(pod, source)
    c.kernel.run(until=700)
    assert mgr.token(pod, source) == first   # 700 s < 800 s − jitter (≤ 10 s)
    c.kernel.run(until=801)
    again = mgr.token(pod, source)
    assert again != first and _claims(again.decode())["iat"] - _claims(first.decode())["iat"] == 801
    mgr.forget(pod["metadata"]["uid"])
    assert not mgr._cache


def test_a_signature_once_verified_is_not_trusted_for_other_bytes() -> None:
    """Issuer.verify keeps the tokens whose signature it checked: the same token verifies again, a token with
    the same header and claims but another signature, or another signed part, is refused as before."""
    from podlife.api.satokens import Issuer, TokenError

    issuer = Issuer()
    token = issuer.sign({"sub": "system:serviceaccount:default:default", "exp": 4102444800})
    head, body, sig = token.split(".")
    assert issuer.verify(token)["sub"] == issuer.verify(token)["sub"] == "system:serviceaccount:default:default"
    other_sig = issuer.sign({"sub": "system:serviceaccount:default:other", "exp": 4102444800}).split(".")[2]
    forged_body = base64.urlsafe_b64encode(json.dumps(
        {"iss": "https://kubernetes.default.svc.cluster.local", "sub": "system:serviceaccount:kube-system:admin",
         "exp": 4102444800}).encode()).decode().rstrip("=")
    for forged in (f"{head}.{body}.{other_sig}", f"{head}.{forged_body}.{sig}"):
        with pytest.raises(TokenError, match="error in cryptographic primitive"):
            issuer.verify(forged)


def test_a_request_is_authenticated_at_its_own_instant() -> None:
    """The live server checks a token's times at the clock's instant (LiveClock.target), which the kernel reaches
    only after authentication: an expired token is refused though the kernel still stands before its expiry."""
    from podlife.apiserver.authn import authenticate

    c = _cluster()
    token = create_token(c.store, "default", "default", {"spec": {"expirationSeconds": 600}})["status"]["token"]
    header = f"Bearer {token}"
    assert authenticate(header, c.store, "admin-secret", 660)["username"] == "system:serviceaccount:default:default"
    with pytest.raises(ApiError) as e:
        authenticate(header, c.store, "admin-secret", 661)
    assert e.value.code == 401 and c.kernel.now == 0
    assert authenticate(header, c.store, "admin-secret")["username"] == "system:serviceaccount:default:default"

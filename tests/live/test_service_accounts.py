"""Service account token plumbing against ``podlife up --kubernetes-version 1.28``, with the official Python
client and kubectl, asserting what test/e2e/auth/service_accounts.go asserts: the kube-api-access volume and
mount the ServiceAccount admission plugin adds (and the automount opt-outs), TokenRequest, TokenReview of the
tokens it issues, the OIDC discovery documents, and the kube-root-ca.crt ConfigMap kept in every namespace."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.live.conftest import Live, write

kubernetes = pytest.importorskip("kubernetes")

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
NAME = re.compile(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}")
AUDIENCE = "https://kubernetes.default.svc.cluster.local"


@pytest.fixture(scope="module")
def live(live_factory: Callable[..., Live]) -> Live:
    return live_factory("1.28", speed=10.0)


def _client(live: Live) -> Any:
    from kubernetes import config

    return config.new_client_from_config(live.kubeconfig)


def _claims(token: str) -> dict[str, Any]:
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


def test_automount_opt_out_table(live: Live) -> None:
    """'should allow opting out of API token automount': the pod's automountServiceAccountToken wins, then the
    account's; only then is the projected volume added, named kube-api-access-<5>, with upstream's sources."""
    from kubernetes import client

    v1 = client.CoreV1Api(_client(live))
    ns = "optout"
    v1.create_namespace({"metadata": {"name": ns}})
    live.wait_for("default account", lambda: v1.list_namespaced_service_account(ns).items)
    v1.create_namespaced_service_account(ns, {"metadata": {"name": "mount"}, "automountServiceAccountToken": True})
    v1.create_namespaced_service_account(ns, {"metadata": {"name": "nomount"}, "automountServiceAccountToken": False})
    cases = [("defaultsa", "default", None, True), ("mountsa", "mount", None, True),
             ("nomountsa", "nomount", None, False), ("defaultsa-mountspec", "default", True, True),
             ("mountsa-mountspec", "mount", True, True), ("nomountsa-mountspec", "nomount", True, True),
             ("defaultsa-nomountspec", "default", False, False), ("mountsa-nomountspec", "mount", False, False),
             ("nomountsa-nomountspec", "nomount", False, False)]
    for name, account, pod_says, expected in cases:
        spec: dict[str, Any] = {"serviceAccountName": account, "restartPolicy": "Never",
                                "containers": [{"name": "token-test", "image": "agnhost"}]}
        if pod_says is not None:
            spec["automountServiceAccountToken"] = pod_says
        pod = v1.create_namespaced_pod(ns, {"metadata": {"name": f"pod-service-account-{name}"}, "spec": spec})
        mounts = [m for c in pod.spec.containers for m in c.volume_mounts or () if m.mount_path == MOUNT]
        assert bool(mounts) == expected, name
        if expected:
            (mount,) = mounts
            assert NAME.fullmatch(mount.name) and mount.read_only is True
            (vol,) = [v for v in pod.spec.volumes if v.name == mount.name]
            sources = client.ApiClient().sanitize_for_serialization(vol.projected)
            assert sources == {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                            "path": "namespace"}]}}]}
        else:
            assert not pod.spec.volumes
    names = {m.name for p in v1.list_namespaced_pod(ns).items for c in p.spec.containers
             for m in c.volume_mounts or ()}
    assert len(names) == 5   # each pod its own random name


def test_missing_account_is_refused(live: Live) -> None:
    from kubernetes import client

    v1 = client.CoreV1Api(_client(live))
    with pytest.raises(client.ApiException) as e:
        v1.create_namespaced_pod("default", {"metadata": {"name": "nosa"}, "spec": {
            "serviceAccountName": "absent", "containers": [{"name": "c", "image": "x"}]}})
    assert e.value.status == 403
    assert json.loads(e.value.body)["message"] == ('pods "nosa" is forbidden: error looking up service account '
                                                   'default/absent: serviceaccount "absent" not found')


def test_token_request_and_review(live: Live) -> None:
    """TokenRequest bound to a pod: a JWT whose claims name the account and pod; TokenReview authenticates it
    as the account (the groups 'should mount an API token into pods' checks), and stops once the pod is gone."""
    from kubernetes import client

    api = _client(live)
    v1, auth = client.CoreV1Api(api), client.AuthenticationV1Api(api)
    v1.create_namespaced_service_account("default", {"metadata": {"name": "tr"}})
    pod = v1.create_namespaced_pod("default", {"metadata": {"name": "tr-pod"}, "spec": {
        "serviceAccountName": "tr", "terminationGracePeriodSeconds": 0,
        "containers": [{"name": "c", "image": "nginx"}]}})
    tr = v1.create_namespaced_service_account_token("tr", "default", {"spec": {
        "expirationSeconds": 600, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "tr-pod"}}})
    assert tr.spec.audiences == [AUDIENCE] and tr.spec.expiration_seconds == 600
    assert (tr.status.expiration_timestamp - tr.metadata.creation_timestamp).total_seconds() == 600
    claims = _claims(tr.status.token)
    assert claims["sub"] == "system:serviceaccount:default:tr" and claims["iss"] == AUDIENCE
    assert claims["exp"] - claims["iat"] == 600 and claims["aud"] == [AUDIENCE]
    assert claims["kubernetes.io"]["pod"] == {"name": "tr-pod", "uid": pod.metadata.uid}
    review = auth.create_token_review({"spec": {"token": tr.status.token}})
    assert review.status.authenticated is True and not review.status.error
    assert review.status.user.username == "system:serviceaccount:default:tr"
    assert set(review.status.user.groups) >= {"system:authenticated", "system:serviceaccounts",
                                              "system:serviceaccounts:default"}
    assert review.status.user.extra == {"authentication.kubernetes.io/pod-name": ["tr-pod"],
                                        "authentication.kubernetes.io/pod-uid": [pod.metadata.uid]}
    other = auth.create_token_review({"spec": {"token": tr.status.token, "audiences": ["vault"]}})
    assert not other.status.authenticated
    assert other.status.error == f'token audiences ["{AUDIENCE}"] is invalid for the target audiences ["vault"]'
    # the injected volume's 1h7s token is valid a year and warns after its hour (token.go)
    long = v1.create_namespaced_service_account_token("tr", "default", {"spec": {
        "expirationSeconds": 3607, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "tr-pod"}}})
    c = _claims(long.status.token)
    assert c["exp"] - c["iat"] == 365 * 24 * 3600 and c["kubernetes.io"]["warnafter"] - c["iat"] == 3607
    # refusals, worded as upstream's
    with pytest.raises(client.ApiException) as e:
        v1.create_namespaced_service_account_token("tr", "default", {"spec": {"expirationSeconds": 599}})
    assert e.value.status == 422 and json.loads(e.value.body)["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: may not '
        "specify a duration less than 10 minutes")
    with pytest.raises(client.ApiException) as e:
        v1.create_namespaced_service_account_token("default", "default", {"spec": {
            "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "tr-pod"}}})
    assert e.value.status == 400 and json.loads(e.value.body)["message"] == (
        'cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.')
    with pytest.raises(client.ApiException) as e:
        v1.create_namespaced_service_account_token("ghost", "default", {"spec": {}})
    assert e.value.status == 404
    # a token of a deleted pod stops authenticating once the deletion is past the minute's leeway
    v1.delete_namespaced_pod("tr-pod", "default", grace_period_seconds=0)
    live.wait_for("pod gone", lambda: not [p for p in v1.list_namespaced_pod("default").items
                                           if p.metadata.name == "tr-pod"])
    gone = auth.create_token_review({"spec": {"token": tr.status.token}})
    assert not gone.status.authenticated and gone.status.error == "service account token has been invalidated"


def test_kubectl_create_token_and_oidc_discovery(live: Live) -> None:
    out = live.kubectl("create", "token", "default", "--duration", "20m").stdout.strip()
    claims = _claims(out)
    assert claims["sub"] == "system:serviceaccount:default:default" and claims["exp"] - claims["iat"] == 1200
    code, headers, raw = live.request("GET", "/.well-known/openid-configuration")
    assert code == 200 and headers["Cache-Control"] == "public, max-age=3600"
    assert json.loads(raw) == {"issuer": AUDIENCE, "jwks_uri": f"{AUDIENCE}/openid/v1/jwks",
                               "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                               "id_token_signing_alg_values_supported": ["RS256"]}
    code, headers, raw = live.request("GET", "/openid/v1/jwks")
    assert code == 200 and headers["Content-Type"] == "application/jwk-set+json"
    (key,) = json.loads(raw)["keys"]
    header = json.loads(base64.urlsafe_b64decode(out.split(".")[0] + "=="))
    assert header == {"alg": "RS256", "kid": key["kid"]} and key["kty"] == "RSA" and key["use"] == "sig"
    # the signature checks out with the published key
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    def num(s: str) -> int:
        return int.from_bytes(base64.urlsafe_b64decode(s + "=" * (-len(s) % 4)), "big")

    pub = rsa.RSAPublicNumbers(num(key["e"]), num(key["n"])).public_key()
    head, body, sig = out.split(".")
    pub.verify(base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)), f"{head}.{body}".encode(),
               padding.PKCS1v15(), hashes.SHA256())


def test_root_ca_configmap_kept(live: Live) -> None:
    """'should guarantee kube-root-ca.crt exist in any namespace': created, recreated when deleted, reconciled
    when changed."""
    from kubernetes import client

    v1 = client.CoreV1Api(_client(live))
    v1.create_namespace({"metadata": {"name": "rootca"}})
    first = live.wait_for("configmap", lambda: [c for c in v1.list_namespaced_config_map("rootca").items
                                                 if c.metadata.name == "kube-root-ca.crt"])[0]
    v1.delete_namespaced_config_map("kube-root-ca.crt", "rootca", grace_period_seconds=0)
    again = live.wait_for("recreated", lambda: [c for c in v1.list_namespaced_config_map("rootca").items
                                                 if c.metadata.name == "kube-root-ca.crt"])[0]
    assert again.metadata.uid != first.metadata.uid and again.data == first.data
    v1.replace_namespaced_config_map("kube-root-ca.crt", "rootca", {"metadata": {"name": "kube-root-ca.crt"},
                                                                    "data": {"ca.crt": ""}})
    live.wait_for("reconciled", lambda: v1.read_namespaced_config_map("kube-root-ca.crt", "rootca").data
                  == first.data)



def test_root_ca_verifies_the_api_server(live_factory: Callable[..., Live]) -> None:
    """kube-root-ca.crt "can be used to verify the kube-apiserver" (publisher.go's description): its ca.crt is the
    certificate podlife up --tls serves, the one its kubeconfig trusts, and a TLS handshake verified by it alone
    passes. (Without TLS it is the placeholder, test_root_ca_configmap_kept.)"""
    import ssl
    import urllib.request

    import yaml
    from kubernetes import client

    live = live_factory("1.28", extra=("--tls",))
    v1 = client.CoreV1Api(_client(live))
    ca = v1.read_namespaced_config_map("kube-root-ca.crt", "default").data["ca.crt"]
    with open(live.kubeconfig, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    cluster, token = config["clusters"][0]["cluster"], config["users"][0]["user"]["token"]
    assert ca.encode() == base64.b64decode(cluster["certificate-authority-data"])
    ctx = ssl.create_default_context(cadata=ca)
    request = urllib.request.Request(cluster["server"] + "/livez", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, context=ctx) as resp:
        assert resp.read() == b"ok"

# ---- the process runtime: the files a container reads ------------------------------------------------------

PROCESS_CLUSTER = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: tokens}
spec:
  kubernetesVersion: "1.28"
  cluster:
    nodes: [{name: node-1}]
"""


@pytest.fixture(scope="module")
def process(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from podlife.runtime import mountns
    from tests.live.test_process_volumes import Cluster

    why = mountns.available()
    if why is not None:
        pytest.skip(f"no mount namespaces here: {why}")
    tmp = tmp_path_factory.mktemp("tokens")
    c = Cluster.__new__(Cluster)
    c.tmp = tmp
    Live.__init__(c, tmp, "1.28", cluster=write(tmp, "cluster.yaml", PROCESS_CLUSTER),
                  extra=("--runtime", "process", "--data-dir", str(tmp / "data")))
    yield c
    c.stop()


def test_process_pod_reads_its_token_ca_and_namespace(process: Any) -> None:
    """'should mount an API token into pods': the three files at the default path; ca.crt is the ConfigMap's,
    namespace the pod's, and the token authenticates as the pod's account."""
    from kubernetes import client

    api = _client(process)
    v1, auth = client.CoreV1Api(api), client.AuthenticationV1Api(api)
    v1.create_namespaced_service_account("default", {"metadata": {"name": "mount-test"}})
    pod = v1.create_namespaced_pod("default", {"metadata": {"name": "pod-service-account"}, "spec": {
        "serviceAccountName": "mount-test", "terminationGracePeriodSeconds": 0, "restartPolicy": "Never",
        "containers": [{"name": "test", "image": "busybox", "command": ["sleep", "100000"]}]}})
    process.wait_for("Running", lambda: process.running("pod-service-account"), 30)

    def run(*command: str) -> str:
        # ReadFileViaContainer is kubectl exec; the kubectl a 1.28 server gets speaks SPDY, which podlife does not
        # serve: the client's exec (WebSocket) reads the same files
        from kubernetes.stream import stream

        return stream(v1.connect_get_namespaced_pod_exec, "pod-service-account", "default", container="test",
                      command=list(command), stderr=True, stdin=False, stdout=True, tty=False)

    def read(name: str) -> str:
        return run("cat", f"{MOUNT}/{name}")

    token, ca, namespace = read("token"), read("ca.crt"), read("namespace")
    assert ca == v1.read_namespaced_config_map("kube-root-ca.crt", "default").data["ca.crt"]
    assert namespace == "default"
    assert re.fullmatch(r"[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*", token)
    claims = _claims(token)
    assert claims["kubernetes.io"]["pod"] == {"name": "pod-service-account", "uid": pod.metadata.uid}
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607   # the injected 1h7s request
    review = auth.create_token_review({"spec": {"token": token}})
    assert review.status.authenticated is True and review.status.error is None
    assert review.status.user.username == "system:serviceaccount:default:mount-test"
    assert {"system:authenticated", "system:serviceaccounts", "system:serviceaccounts:default"} <= \
        set(review.status.user.groups)
    assert run("stat", "-L", "-c", "%a", f"{MOUNT}/token") == "644\n"
    v1.delete_namespaced_pod("pod-service-account", "default", grace_period_seconds=0)


def test_process_pod_projected_token_at_its_own_path(process: Any) -> None:
    """'should mount projected service account token': a projected serviceAccountToken of 1 h at /test-volume;
    the container prints a JWT."""
    process.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: projected-token}
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox
            command: ["sh", "-c", "echo content: $(cat /test-volume/token)"]
            volumeMounts: [{name: test-volume, mountPath: /test-volume, readOnly: true}]
          volumes:
          - name: test-volume
            projected:
              sources: [{serviceAccountToken: {path: token, expirationSeconds: 3600}}]
        """)
    process.wait_for("Succeeded", lambda: (process.pod("projected-token").get("status") or {}).get("phase")
                     == "Succeeded", 30)
    out = process.kubectl("logs", "projected-token").stdout
    token = out.removeprefix("content: ").strip()
    assert re.fullmatch(r"[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*", token), out
    claims = _claims(token)
    assert claims["exp"] - claims["iat"] == 3600 and "warnafter" not in claims["kubernetes.io"]


# a container's in-cluster client: its own mounted token and ca.crt, as rest.InClusterConfig reads them
IN_CLUSTER = """\
import http.client, json, ssl
base = "/var/run/secrets/kubernetes.io/serviceaccount/"
token = open(base + "token").read()
ctx = ssl.create_default_context(cafile=base + "ca.crt")
conn = http.client.HTTPSConnection("kubernetes.default.svc", 443, context=ctx, timeout=20)
for method, path, body in (
        ("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
         '{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}'),
        ("GET", "/api/v1/namespaces/default/pods/in-cluster", None),
        ("GET", "/api/v1/namespaces", None)):
    for auth in ({"Authorization": "Bearer " + token}, {"Authorization": "Bearer " + token[:-4] + "AAAA"}):
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **auth})
        r = conn.getresponse()
        out = json.loads(r.read())
        shown = out["message"] if out["kind"] == "Status" else \
            out["status"]["userInfo"] if out["kind"] == "SelfSubjectReview" else out["metadata"].get("name")
        print(r.status, json.dumps(shown, sort_keys=True))
"""


def test_process_pod_reaches_the_api_server_with_its_own_token(process: Any) -> None:
    """The kube-api-access volume is enough for an in-cluster client: ca.crt verifies the API server at
    https://kubernetes.default.svc and the token authenticates as the pod's account (a spoiled one gets 401).
    The pod reaches the API server by a Service of its own, named kubernetes.default.svc in its /etc/hosts: the
    kubernetes Service's 10.96.0.1 may be another podlife up's, on a machine where several run."""
    import os

    from kubernetes import client

    if os.geteuid() != 0:
        pytest.skip("needs root (an interface for the Service addresses)")
    v1 = client.CoreV1Api(_client(process))
    v1.create_namespaced_service_account("default", {"metadata": {"name": "in-cluster"}})
    # the API server's endpoint as default/kubernetes lists it (kube-proxy connects it to where it listens)
    endpoints = v1.read_namespaced_endpoints("kubernetes", "default").subsets[0]
    address, port = endpoints.addresses[0].ip, endpoints.ports[0].port
    svc = v1.create_namespaced_service("default", {"metadata": {"name": "apiserver-again"}, "spec": {
        "clusterIP": "10.96.213.17", "ports": [{"name": "https", "port": 443, "targetPort": port}]}})
    client.DiscoveryV1Api(_client(process)).create_namespaced_endpoint_slice("default", {
        "metadata": {"name": "apiserver-again", "labels": {"kubernetes.io/service-name": "apiserver-again"}},
        "addressType": "IPv4", "endpoints": [{"addresses": [address]}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}]})
    pod = v1.create_namespaced_pod("default", {"metadata": {"name": "in-cluster"}, "spec": {
        "serviceAccountName": "in-cluster", "restartPolicy": "Never",
        "hostAliases": [{"ip": svc.spec.cluster_ip, "hostnames": ["kubernetes.default.svc"]}],
        "containers": [{"name": "c", "image": "python", "command": ["python3", "-c", IN_CLUSTER]}]}})
    process.wait_for("Succeeded", lambda: (process.pod("in-cluster").get("status") or {}).get("phase")
                     in ("Succeeded", "Failed"), 60)
    out = process.kubectl("logs", "in-cluster").stdout
    me = {"extra": {"authentication.kubernetes.io/pod-name": ["in-cluster"],
                    "authentication.kubernetes.io/pod-uid": [pod.metadata.uid]},
          "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
          "uid": v1.read_namespaced_service_account("in-cluster", "default").metadata.uid,
          "username": "system:serviceaccount:default:in-cluster"}
    assert out.splitlines() == [f"201 {json.dumps(me, sort_keys=True)}", '401 "Unauthorized"',
                                '200 "in-cluster"', '401 "Unauthorized"',
                                '200 null', '401 "Unauthorized"'], out
    v1.delete_namespaced_pod("in-cluster", "default", grace_period_seconds=0)

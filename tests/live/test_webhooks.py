"""Admission webhooks in ``podlife up``: a small HTTPS webhook server in the test process (its own CA, made with
``cryptography``), registered by URL, and the API server calling it on writes (staging/src/k8s.io/apiserver/pkg/
admission/plugin/webhook), seen through kubectl and the raw API."""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live.conftest import Live, write

crypto = pytest.importorskip("cryptography")


def _ca_cert(host: str, ip: str | None = None) -> tuple[bytes, bytes]:
    """A self-signed CA certificate that is also the server's (its SANs ``host`` and ``ip``): cert and key PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
    sans: list[x509.GeneralName] = [x509.DNSName(host)]
    if ip is not None:
        sans.append(x509.IPAddress(ipaddress.ip_address(ip)))
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def _self_signed(tmp: Path) -> tuple[str, str, bytes]:
    """The test webhook's certificate (localhost, 127.0.0.1) as files: cert file, key file, and its PEM."""
    pem, key = _ca_cert("localhost", "127.0.0.1")
    (tmp / "tls.crt").write_bytes(pem)
    (tmp / "tls.key").write_bytes(key)
    return str(tmp / "tls.crt"), str(tmp / "tls.key"), pem


def serve_json(tmp: Path, answer: Callable[[str, dict[str, Any]], dict[str, Any]]
               ) -> tuple[http.server.ThreadingHTTPServer, bytes]:
    """An HTTPS server on 127.0.0.1 (its certificate ``_self_signed``'s) answering each POSTed JSON document with
    ``answer(path with query, document)``: the server (started) and its certificate's PEM."""
    cert, key, pem = _self_signed(tmp)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            data = json.dumps(answer(self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                              ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, pem


class Hook:
    """The webhook server: each path an answer to an AdmissionReview; every review it gets is kept."""

    def __init__(self, tmp: Path) -> None:
        self.reviews: list[tuple[str, dict[str, Any]]] = []

        def review(path: str, body: dict[str, Any]) -> dict[str, Any]:
            self.reviews.append((path, body["request"]))
            return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                    "response": self.answer(path.split("?")[0], body["request"])}
        self.server, self.pem = serve_json(tmp, review)
        self.port = self.server.server_address[1]

    @staticmethod
    def answer(path: str, req: dict[str, Any]) -> dict[str, Any]:
        uid = req["uid"]
        if path == "/deny":
            return {"uid": uid, "allowed": False, "status": {"message": "no pods here", "code": 403}}
        if path == "/mutate":
            patch = [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]
            return {"uid": uid, "allowed": True, "patchType": "JSONPatch",
                    "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
                    "warnings": ["mutated by the test webhook"]}
        if path == "/sidecar":   # a container, undefaulted, for the API server to default
            patch = [{"op": "add", "path": "/spec/containers/-", "value": {"name": "sidecar", "image": "busybox"}}]
            return {"uid": uid, "allowed": True, "patchType": "JSONPatch",
                    "patch": base64.b64encode(json.dumps(patch).encode()).decode()}
        if path == "/data":   # one field the schema has, one it does not (pruned)
            patch = [{"op": "add", "path": "/data/kept", "value": "yes"},
                     {"op": "add", "path": "/data/unknown", "value": "yes"}]
            return {"uid": uid, "allowed": True, "patchType": "JSONPatch",
                    "patch": base64.b64encode(json.dumps(patch).encode()).decode()}
        if path == "/slow":
            time.sleep(3)
        return {"uid": uid, "allowed": True}

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        self.server.shutdown()


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hook]:
    h = Hook(tmp_path_factory.mktemp("hook"))
    yield h
    h.stop()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _config(kind: str, name: str, url: str, ca: bytes, resources: list[str], **extra: Any) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "name": name, "admissionReviewVersions": ["v1"], "sideEffects": "None",
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca).decode()},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": resources}],
        **extra}
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": [hook]}


def _apply(live: Live, tmp_path: Path, *objs: dict[str, Any]) -> None:
    path = write(tmp_path, "objs.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objs)}))
    live.kubectl("create", "-f", path)


@pytest.fixture
def cleanup(live: Live) -> Iterator[Callable[[str, str], None]]:
    made: list[tuple[str, str]] = []
    yield lambda kind, name: made.append((kind, name))
    for kind, name in made:
        live.kubectl("delete", kind, name, "--wait=false", check=False)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def test_validating_webhook_denies_in_selected_namespaces(live: Live, hook: Hook, tmp_path: Path,
                                                         cleanup: Callable[[str, str], None]) -> None:
    cfg = _config("ValidatingWebhookConfiguration", "deny.podlife.test", hook.url("/deny"), hook.pem, ["pods"],
                  namespaceSelector={"matchLabels": {"webhook": "on"}})
    cleanup("validatingwebhookconfiguration", "deny.podlife.test")
    p = live.kubectl("create", "-f", write(tmp_path, "cfg.json", json.dumps(cfg)))
    # podlife says which writes are not sent to webhooks
    assert "admission webhooks are called for API requests only" in p.stderr
    live.kubectl("create", "namespace", "wh-on")
    live.kubectl("label", "namespace", "wh-on", "webhook=on")
    live.kubectl("create", "namespace", "wh-off")
    cleanup("namespace", "wh-on")
    cleanup("namespace", "wh-off")
    pod = write(tmp_path, "pod.json", json.dumps(POD))
    p = live.kubectl("create", "-n", "wh-on", "-f", pod, check=False)
    assert p.returncode == 1
    # no reason in the Status: kubectl names none, as against a real cluster
    assert p.stderr.strip() == ('Error from server: error when creating "' + pod + '": admission '
                                'webhook "deny.podlife.test" denied the request: no pods here')
    code, body = live.json("POST", "/api/v1/namespaces/wh-on/pods", POD)
    assert (code, body["message"], body.get("reason"), body["code"]) == (
        403, 'admission webhook "deny.podlife.test" denied the request: no pods here', None, 403)
    assert live.kubectl("get", "pods", "-n", "wh-on", "-o", "name").stdout == ""
    live.kubectl("create", "-n", "wh-off", "-f", pod)   # the namespace does not match
    req = hook.reviews[-2][1]
    assert req["object"]["metadata"]["uid"] and req["object"]["metadata"]["creationTimestamp"]
    assert (req["operation"], req["namespace"], req["kind"], req["resource"], req["object"]["metadata"]["name"],
            req["dryRun"], req["oldObject"]) == ("CREATE", "wh-on", {"group": "", "version": "v1", "kind": "Pod"},
                                                 {"group": "", "version": "v1", "resource": "pods"}, "p", False, None)
    # the requester as authenticated (admissionreview.go: attributes' UserInfo): the admin of an open server
    assert req["userInfo"] == {"username": "podlife-admin", "groups": ["system:masters", "system:authenticated"]}
    assert hook.reviews[-1][0] == "/deny?timeout=10s"


def test_mutating_webhook_patches_with_object_selector(live: Live, hook: Hook, tmp_path: Path,
                                                       cleanup: Callable[[str, str], None]) -> None:
    cfg = _config("MutatingWebhookConfiguration", "mutate.podlife.test", hook.url("/mutate"), hook.pem,
                  ["configmaps"], objectSelector={"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
                  namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "default"}})
    cleanup("mutatingwebhookconfiguration", "mutate.podlife.test")
    live.kubectl("create", "-f", write(tmp_path, "cfg.json", json.dumps(cfg)))
    cleanup("configmap", "cm1")
    cleanup("configmap", "cm2")
    p = live.kubectl("create", "configmap", "cm1", "--from-literal=a=b")
    assert "Warning: mutated by the test webhook" in p.stderr
    got = json.loads(live.kubectl("get", "configmap", "cm1", "-o", "json").stdout)
    assert got["metadata"]["labels"] == {"mutated": "yes"}
    cm2 = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2", "labels": {"skip": "1"}}}
    live.kubectl("create", "-f", write(tmp_path, "cm2.json", json.dumps(cm2)))
    got = json.loads(live.kubectl("get", "configmap", "cm2", "-o", "json").stdout)
    assert got["metadata"]["labels"] == {"skip": "1"}


def test_failure_policy_and_timeout(live: Live, hook: Hook, tmp_path: Path,
                                    cleanup: Callable[[str, str], None]) -> None:
    port = _closed_port()
    fail = _config("ValidatingWebhookConfiguration", "fail.podlife.test", f"https://127.0.0.1:{port}/x",
                   hook.pem, ["secrets"], failurePolicy="Fail")
    ignore = _config("ValidatingWebhookConfiguration", "ignore.podlife.test", f"https://127.0.0.1:{port}/x",
                     hook.pem, ["serviceaccounts"], failurePolicy="Ignore")
    slow = _config("ValidatingWebhookConfiguration", "slow.podlife.test", hook.url("/slow"), hook.pem,
                   ["persistentvolumeclaims"], timeoutSeconds=1)
    for c in (fail, ignore, slow):
        cleanup("validatingwebhookconfiguration", c["metadata"]["name"])
    _apply(live, tmp_path, fail, ignore, slow)
    code, body = live.json("POST", "/api/v1/namespaces/default/secrets",
                           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert (code, body["reason"], body["message"]) == (
        500, "InternalError", f'Internal error occurred: failed calling webhook "fail.podlife.test": failed to '
                              f'call webhook: Post "https://127.0.0.1:{port}/x?timeout=10s": dial tcp '
                              f"127.0.0.1:{port}: connect: connection refused")
    cleanup("serviceaccount", "sa1")
    live.kubectl("create", "serviceaccount", "sa1")   # failing open
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    code, body = live.json("POST", "/api/v1/namespaces/default/persistentvolumeclaims", claim)
    assert (code, body["message"]) == (
        500, 'Internal error occurred: failed calling webhook "slow.podlife.test": failed to call webhook: Post '
             f'"{hook.url("/slow")}?timeout=1s": context deadline exceeded')
    assert live.json("GET", "/api/v1/namespaces/default/persistentvolumeclaims/c")[0] == 404


def test_webhook_configurations_are_never_sent_to_webhooks(live: Live, hook: Hook, tmp_path: Path) -> None:
    """A webhook that fails closed on every write of everything: webhook configurations can still be written
    and deleted (rules.go IsExemptAdmissionConfigurationResource), which is how a cluster is repaired."""
    cfg = _config("ValidatingWebhookConfiguration", "all.podlife.test", f"https://127.0.0.1:{_closed_port()}/",
                  hook.pem, ["*"])
    cfg["webhooks"][0]["rules"] = [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                                    "resources": ["*/*"]}]
    live.kubectl("create", "-f", write(tmp_path, "cfg.json", json.dumps(cfg)))
    other = _config("MutatingWebhookConfiguration", "other.podlife.test", hook.url("/mutate"), hook.pem, ["pods"])
    live.kubectl("create", "-f", write(tmp_path, "other.json", json.dumps(other)))
    p = live.kubectl("create", "configmap", "refused", check=False)
    assert 'failed calling webhook "all.podlife.test"' in p.stderr
    p = live.kubectl("delete", "configmap", "kube-root-ca.crt", check=False)
    assert 'failed calling webhook "all.podlife.test"' in p.stderr
    live.kubectl("delete", "mutatingwebhookconfiguration", "other.podlife.test")
    live.kubectl("delete", "validatingwebhookconfiguration", "all.podlife.test")
    live.kubectl("create", "configmap", "accepted")
    live.kubectl("delete", "configmap", "accepted")


def test_a_service_webhook_of_the_simulated_runtime_cannot_answer(live: Live, hook: Hook, tmp_path: Path,
                                                                   cleanup: Callable[[str, str], None]) -> None:
    """The simulated runtime's pods serve nothing: the call fails as against an unreachable webhook, and the
    message says why."""
    cfg = _config("ValidatingWebhookConfiguration", "svc.podlife.test", "", hook.pem, ["secrets"])
    cfg["webhooks"][0]["clientConfig"] = {"service": {"namespace": "default", "name": "wh", "path": "/check"},
                                          "caBundle": base64.b64encode(hook.pem).decode()}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "wh"},
           "spec": {"selector": {"app": "wh"}, "ports": [{"port": 443, "targetPort": 8443}]}}
    cleanup("validatingwebhookconfiguration", "svc.podlife.test")
    cleanup("service", "wh")
    _apply(live, tmp_path, cfg, svc)
    code, body = live.json("POST", "/api/v1/namespaces/default/secrets",
                           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert (code, body["message"]) == (
        500, 'Internal error occurred: failed calling webhook "svc.podlife.test": failed to call webhook: Post '
             '"https://wh.default.svc:443/check?timeout=10s": dial tcp wh.default.svc:443: connect: connection '
             "refused (podlife: the simulated runtime's pods serve nothing; a webhook behind a Service answers "
             "with podlife up --runtime process)")


# the webhook a pod runs: HTTPS on its pod address, the certificate and key from the environment
POD_WEBHOOK = """
import http.server, json, os, ssl
d = "/certs"   # an emptyDir: the machine's root is read-only in the container
for name in ("CERT", "KEY"):
    open(os.path.join(d, name), "w").write(os.environ[name])
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["request"]
        out = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
            "uid": req["uid"], "allowed": False,
            "status": {"message": "refused by the pod at " + os.environ["POD_IP"], "code": 422}}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
s = http.server.HTTPServer((os.environ["POD_IP"], 8443), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(os.path.join(d, "CERT"), os.path.join(d, "KEY"))
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()
"""


def test_a_webhook_pod_behind_a_service_of_the_process_runtime(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.live.test_process_runtime import ProcessCluster

    tmp = tmp_path_factory.mktemp("proc")
    cluster = ProcessCluster(tmp)
    try:
        cert, key = _ca_cert("wh.default.svc")
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "wh", "labels": {"app": "wh"}},
               "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                   "name": "hook", "image": "python:3", "command": ["python3", "-c", POD_WEBHOOK],
                   "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                           {"name": "CERT", "value": cert.decode()}, {"name": "KEY", "value": key.decode()}],
                   "ports": [{"name": "https", "containerPort": 8443}],
                   "volumeMounts": [{"name": "certs", "mountPath": "/certs"}],
                   "readinessProbe": {"tcpSocket": {"port": "https"}, "periodSeconds": 1}}],
                   "volumes": [{"name": "certs", "emptyDir": {}}]}}
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "wh"},
               "spec": {"selector": {"app": "wh"}, "ports": [{"port": 443, "targetPort": 8443}]}}
        _apply(cluster, tmp, pod, svc)
        try:
            cluster.wait_for("wh Ready", lambda: cluster.ready("wh"), 30)
        except AssertionError:
            log = cluster.kubectl("logs", "wh", check=False).stdout
            raise AssertionError(f"wh not Ready; its log:\n{log}") from None
        cfg = _config("ValidatingWebhookConfiguration", "pod.podlife.test", "", cert, ["configmaps"])
        cfg["webhooks"][0]["clientConfig"] = {"service": {"namespace": "default", "name": "wh", "path": "/v"},
                                              "caBundle": base64.b64encode(cert).decode()}
        cluster.kubectl("create", "-f", write(tmp, "cfg.json", json.dumps(cfg)))

        def refused() -> str:
            p = cluster.kubectl("create", "configmap", "c", check=False)
            return p.stderr if p.returncode and "refused by the pod" in p.stderr else ""
        # the EndpointSlice may lag the pod's readiness by a sync
        err = cluster.wait_for("the webhook pod's answer", refused, 20)
        ip = cluster.pod("wh")["status"]["podIP"]
        assert err.strip() == ('error: failed to create configmap: admission webhook "pod.podlife.test" denied '
                               f"the request: refused by the pod at {ip}")
    finally:
        cluster.stop()


def test_deletes_and_dry_runs(live: Live, hook: Hook, tmp_path: Path,
                                               cleanup: Callable[[str, str], None]) -> None:
    guard = _config("ValidatingWebhookConfiguration", "guard.podlife.test", hook.url("/deny"), hook.pem,
                    ["configmaps"], objectSelector={"matchLabels": {"protect": "yes"}},
                    matchConditions=[{"name": "always", "expression": "true"}])
    guard["webhooks"][0]["rules"][0]["operations"] = ["DELETE"]
    effects = _config("MutatingWebhookConfiguration", "effects.podlife.test", hook.url("/mutate"), hook.pem,
                      ["services"], sideEffects="NoneOnDryRun")
    cleanup("validatingwebhookconfiguration", "guard.podlife.test")
    cleanup("mutatingwebhookconfiguration", "effects.podlife.test")
    p = live.kubectl("create", "-f", write(tmp_path, "guard.json", json.dumps(guard)))
    assert 'Warning: podlife: webhooks[].matchConditions are not evaluated: "guard.podlife.test" is called' \
        in p.stderr
    p = live.kubectl("create", "-f", write(tmp_path, "effects.json", json.dumps(effects)))
    assert "admission webhooks are called for API requests only" in p.stderr
    cleanup("configmap", "kept")
    live.kubectl("create", "configmap", "kept")
    live.kubectl("label", "configmap", "kept", "protect=yes")
    code, body = live.json("DELETE", "/api/v1/namespaces/default/configmaps/kept")
    assert (code, body["message"]) == (403, 'admission webhook "guard.podlife.test" denied the request: no pods here')
    code, body = live.json("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=protect%3Dyes")
    assert code == 403
    assert live.kubectl("get", "configmap", "kept", "-o", "name").stdout == "configmap/kept\n"
    req = hook.reviews[-1][1]
    assert (req["operation"], req["object"], req["oldObject"]["metadata"]["name"], req["options"]["kind"]) == (
        "DELETE", None, "kept", "DeleteOptions")
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dry"}, "spec": {"ports": [{"port": 80}]}}
    code, body = live.json("POST", "/api/v1/namespaces/default/services?dryRun=All", svc)
    assert (code, body["metadata"]["labels"]) == (201, {"mutated": "yes"})
    req = hook.reviews[-1][1]
    assert (req["dryRun"], req["options"]) == (True, {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                                                      "dryRun": ["All"]})
    assert live.json("GET", "/api/v1/namespaces/default/services/dry")[0] == 404


def test_a_patched_object_is_defaulted_and_a_reinvoked_webhook_sees_later_changes(
        live: Live, hook: Hook, tmp_path: Path, cleanup: Callable[[str, str], None]) -> None:
    """mutating/dispatcher.go: the patched object is defaulted; reinvocation.go: a webhook with
    reinvocationPolicy IfNeeded is called once more when a later webhook changed the object."""
    first = _config("MutatingWebhookConfiguration", "a-labels.podlife.test", hook.url("/mutate"), hook.pem,
                    ["pods"], reinvocationPolicy="IfNeeded",
                    namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "wh-sidecar"}})
    second = _config("MutatingWebhookConfiguration", "b-sidecar.podlife.test", hook.url("/sidecar"), hook.pem,
                     ["pods"], namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "wh-sidecar"}})
    for c in (first, second):
        cleanup("mutatingwebhookconfiguration", c["metadata"]["name"])
    _apply(live, tmp_path, first, second)
    live.kubectl("create", "namespace", "wh-sidecar")
    cleanup("namespace", "wh-sidecar")
    before = len(hook.reviews)
    live.kubectl("create", "-n", "wh-sidecar", "-f", write(tmp_path, "pod.json", json.dumps(POD)))
    assert [p.split("?")[0] for p, _ in hook.reviews[before:]] == ["/mutate", "/sidecar", "/mutate"]
    # the reinvoked webhook saw the sidecar the later one added
    assert [c["name"] for c in hook.reviews[-1][1]["object"]["spec"]["containers"]] == ["c", "sidecar"]
    pod = json.loads(live.kubectl("get", "pod", "p", "-n", "wh-sidecar", "-o", "json").stdout)
    sidecar = pod["spec"]["containers"][1]
    assert (pod["metadata"]["labels"], sidecar["name"], sidecar["imagePullPolicy"],
            sidecar["terminationMessagePath"]) == ({"mutated": "yes"}, "sidecar", "Always", "/dev/termination-log")


def test_connect_is_admitted_with_its_options(live: Live, hook: Hook, tmp_path: Path,
                                              cleanup: Callable[[str, str], None]) -> None:
    """handlers/rest.go ConnectResource: a pods/attach goes through admission as CONNECT, its object the
    PodAttachOptions of the query, before the connection (the e2e test "should be able to deny attaching pod")."""
    cfg = _config("ValidatingWebhookConfiguration", "attach.podlife.test", hook.url("/deny"), hook.pem,
                  ["pods/attach"])
    cfg["webhooks"][0]["rules"][0]["operations"] = ["CONNECT"]
    cleanup("validatingwebhookconfiguration", "attach.podlife.test")
    live.kubectl("create", "-f", write(tmp_path, "cfg.json", json.dumps(cfg)))
    code, _, raw = live.request("POST", "/api/v1/namespaces/default/pods/any/attach?container=c&stdin=true"
                                        "&stdout=true")
    assert (code, json.loads(raw)["message"]) == (
        403, 'admission webhook "attach.podlife.test" denied the request: no pods here')
    req = hook.reviews[-1][1]
    assert (req["operation"], req["kind"], req["resource"]["resource"], req["subResource"], req["name"],
            req["object"], "options" in req) == (
        "CONNECT", {"group": "", "version": "v1", "kind": "PodAttachOptions"}, "pods", "attach", "any",
        {"kind": "PodAttachOptions", "apiVersion": "v1", "stdin": True, "stdout": True, "container": "c"}, True)
    # exec is another subresource: not matched
    code, _, raw = live.request("POST", "/api/v1/namespaces/default/pods/any/exec?command=true")
    assert code != 403


def test_a_patched_custom_resource_is_pruned(live: Live, hook: Hook, tmp_path: Path,
                                             cleanup: Callable[[str, str], None]) -> None:
    """The e2e test "should mutate custom resource with pruning": a field the webhook adds outside the
    schema is dropped, as decoding the patched object prunes it."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.podlife.test"},
           "spec": {"group": "podlife.test", "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"data": {"type": "object", "properties": {
                            "given": {"type": "string"}, "kept": {"type": "string"}}}}}}}]}}
    cfg = _config("MutatingWebhookConfiguration", "data.podlife.test", hook.url("/data"), hook.pem, ["gadgets"])
    cfg["webhooks"][0]["rules"][0].update({"apiGroups": ["podlife.test"], "apiVersions": ["v1"]})
    cleanup("customresourcedefinition", "gadgets.podlife.test")
    cleanup("mutatingwebhookconfiguration", "data.podlife.test")
    _apply(live, tmp_path, crd, cfg)
    path = "/apis/podlife.test/v1/namespaces/default/gadgets"
    live.wait_for("gadgets served", lambda: live.json("GET", path)[0] == 200)
    code, body = live.json("POST", path, {"apiVersion": "podlife.test/v1", "kind": "Gadget",
                                          "metadata": {"name": "g"}, "data": {"given": "1"}})
    assert (code, body["data"]) == (201, {"given": "1", "kept": "yes"})
    assert live.json("GET", path + "/g")[1]["data"] == {"given": "1", "kept": "yes"}


def test_a_webhook_whose_certificate_the_ca_bundle_does_not_sign(live: Live, hook: Hook, tmp_path: Path,
                                                                  cleanup: Callable[[str, str], None]) -> None:
    other, _ = _ca_cert("elsewhere.podlife.test")
    cfg = _config("ValidatingWebhookConfiguration", "tls.podlife.test", hook.url("/allow"), other, ["secrets"])
    cleanup("validatingwebhookconfiguration", "tls.podlife.test")
    live.kubectl("create", "-f", write(tmp_path, "cfg.json", json.dumps(cfg)))
    code, body = live.json("POST", "/api/v1/namespaces/default/secrets",
                           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}})
    assert (code, body["message"]) == (
        500, 'Internal error occurred: failed calling webhook "tls.podlife.test": failed to call webhook: Post '
             f'"{hook.url("/allow")}?timeout=10s": tls: failed to verify certificate: x509: certificate signed by '
             "unknown authority")


def test_reads_are_served_while_a_webhook_is_called(live: Live, hook: Hook, tmp_path: Path,
                                                    cleanup: Callable[[str, str], None]) -> None:
    """The call is awaited on the event loop: a read during a slow webhook's 3 s is answered at once."""
    cfg = _config("ValidatingWebhookConfiguration", "slow-ok.podlife.test", hook.url("/slow"), hook.pem,
                  ["replicationcontrollers"], timeoutSeconds=10)
    cleanup("validatingwebhookconfiguration", "slow-ok.podlife.test")
    live.kubectl("create", "-f", write(tmp_path, "cfg.json", json.dumps(cfg)))
    before = len(hook.reviews)
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
          "spec": {"replicas": 0, "selector": {"a": "b"}, "template": {"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    cleanup("replicationcontroller", "rc")
    result: list[int] = []
    writer = threading.Thread(target=lambda: result.append(
        live.json("POST", "/api/v1/namespaces/default/replicationcontrollers", rc)[0]))
    writer.start()
    live.wait_for("the webhook called", lambda: len(hook.reviews) > before, 10)
    started = time.monotonic()
    assert live.json("GET", "/api/v1/namespaces")[0] == 200
    took = time.monotonic() - started
    writer.join(30)
    assert result == [201]
    assert took < 2.0, took   # the webhook answers 3 s after it was called


def test_scale_and_eviction_are_sent_as_their_own_kinds(live: Live, hook: Hook, tmp_path: Path,
                                                        cleanup: Callable[[str, str], None]) -> None:
    cfg = _config("ValidatingWebhookConfiguration", "subs.podlife.test", hook.url("/deny"), hook.pem,
                  ["replicationcontrollers/scale", "pods/eviction"],
                  namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "wh-subs"}})
    cfg["webhooks"][0]["rules"][0]["operations"] = ["*"]
    cleanup("validatingwebhookconfiguration", "subs.podlife.test")
    live.kubectl("create", "namespace", "wh-subs")
    cleanup("namespace", "wh-subs")
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc", "namespace": "wh-subs"},
          "spec": {"replicas": 0, "selector": {"a": "b"}, "template": {"metadata": {"labels": {"a": "b"}},
                   "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    pod = {**POD, "metadata": {"name": "p", "namespace": "wh-subs"}}
    _apply(live, tmp_path, cfg, rc, pod)
    p = live.kubectl("scale", "-n", "wh-subs", "rc/rc", "--replicas=2", check=False)
    assert 'admission webhook "subs.podlife.test" denied the request: no pods here' in p.stderr
    req = hook.reviews[-1][1]
    assert (req["operation"], req["kind"], req["resource"], req["subResource"], req["object"]["spec"],
            req["oldObject"]["spec"]) == (
        "UPDATE", {"group": "autoscaling", "version": "v1", "kind": "Scale"},
        {"group": "", "version": "v1", "resource": "replicationcontrollers"}, "scale", {"replicas": 2},
        {"replicas": 0})
    assert live.json("GET", "/api/v1/namespaces/wh-subs/replicationcontrollers/rc")[1]["spec"]["replicas"] == 0
    code, body = live.json("POST", "/api/v1/namespaces/wh-subs/pods/p/eviction",
                           {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}})
    assert (code, body["message"]) == (403, 'admission webhook "subs.podlife.test" denied the request: no pods here')
    assert (hook.reviews[-1][1]["operation"], hook.reviews[-1][1]["kind"]) == (
        "CREATE", {"group": "policy", "version": "v1", "kind": "Eviction"})
    assert live.json("GET", "/api/v1/namespaces/wh-subs/pods/p")[0] == 200

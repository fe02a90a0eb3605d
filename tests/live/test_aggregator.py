"""The aggregation layer of ``podlife up`` (staging/src/k8s.io/kube-aggregator): the local APIServices, the
Available condition through each of upstream's reasons, the proxy to an extension API server run as a
process-runtime pod (tests/live/extension_server.py) with the front proxy's identity, discovery of its group,
the 503 when it is gone; with the simulated runtime, the condition that says no pod serves anything."""

from __future__ import annotations

import base64
import json
import os
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podlife.runtime import mountns
from tests.live.conftest import Live, write
from tests.live.extension_server import PROGRAM

pytest.importorskip("cryptography")
from tests.live.test_webhooks import _ca_cert  # noqa: E402

NAME = "v1alpha1.wardle.example.com"
GV = "/apis/wardle.example.com/v1alpha1"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def _apiservice(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": NAME},
            "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 2000,
                     "versionPriority": 200, "service": {"namespace": "default", "name": "ext", "port": 443},
                     **spec}}


def _condition(live: Live) -> dict[str, Any]:
    code, obj = live.json("GET", f"/apis/apiregistration.k8s.io/v1/apiservices/{NAME}")
    assert code == 200, obj
    conds = (obj.get("status") or {}).get("conditions") or [{}]
    return {k: v for k, v in conds[0].items() if k != "lastTransitionTime"}


def _wait_condition(live: Live, reason: str, timeout: float = 30.0) -> dict[str, Any]:
    return live.wait_for(f"the APIService's condition {reason}",
                         lambda: (c := _condition(live)).get("reason") == reason and c, timeout)


def _create(live: Live, tmp: Path, obj: dict[str, Any]) -> None:
    live.kubectl("create", "-f", write(tmp, f"{obj['kind']}.json", json.dumps(obj)))


def test_local_apiservices_and_the_simulated_runtime(live_factory: Callable[..., Live], tmp_path: Path) -> None:
    live = live_factory("1.28")
    out = live.kubectl("get", "apiservices").stdout.splitlines()
    assert out[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    names = [line.split()[:3] for line in out[1:]]
    assert names[:3] == [["v1.", "Local", "True"], ["v1.admissionregistration.k8s.io", "Local", "True"],
                         ["v1.apiextensions.k8s.io", "Local", "True"]]
    # 1.28 serves flowcontrol's v1beta2 and v1beta3 by default (legacyBetaEnabledByDefaultResources)
    assert len(names) == 21 and ["v2.autoscaling", "Local", "True"] in names
    assert ["v1beta3.flowcontrol.apiserver.k8s.io", "Local", "True"] in names
    assert ["v1beta2.flowcontrol.apiserver.k8s.io", "Local", "True"] in names
    code, apps = live.json("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")
    assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    assert apps["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15}
    assert [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in apps["status"]["conditions"]] == [
        {"type": "Available", "status": "True", "reason": "Local",
         "message": "Local APIServices are always available"}]
    # a CustomResourceDefinition's served versions get theirs, for as long as it serves them
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gizmos.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                    "versions": [{"name": v, "served": True, "storage": v == "v1", "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}} for v in ("v1", "v2")]}}
    _create(live, tmp_path, crd)
    code, v2 = live.json("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v2.example.com")
    assert (code, v2["metadata"]["labels"], v2["spec"]) == (
        200, {"kube-aggregator.kubernetes.io/automanaged": "true"},
        {"group": "example.com", "version": "v2", "groupPriorityMinimum": 1000, "versionPriority": 100})
    assert v2["status"]["conditions"][0]["reason"] == "Local"
    live.kubectl("patch", "crd", "gizmos.example.com", "--type=json", "-p",
                 '[{"op": "replace", "path": "/spec/versions/1/served", "value": false}]')
    assert live.json("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v2.example.com")[0] == 404
    assert live.json("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com")[0] == 200
    live.kubectl("delete", "crd", "gizmos.example.com")
    live.wait_for("v1.example.com gone",
                  lambda: live.json("GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1.example.com")[0] == 404)

    # ValidateAPIService: the name is version.group
    bad = _apiservice()
    bad["metadata"]["name"] = "v1.wardle.example.com"
    code, body = live.json("POST", "/apis/apiregistration.k8s.io/v1/apiservices", bad)
    assert code == 422 and body["message"].endswith(
        '"v1.wardle.example.com" is invalid: metadata.name: Invalid value: "v1.wardle.example.com": must be '
        '`spec.version+"."+spec.group`: "v1alpha1.wardle.example.com"')

    _create(live, tmp_path, _apiservice(insecureSkipTLSVerify=True))
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
           "spec": {"selector": {"app": "ext"}, "ports": [{"name": "https", "port": 443, "targetPort": 8443}]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ext", "labels": {"app": "ext"}},
           "spec": {"containers": [{"name": "ext", "image": "wardle", "ports": [{"containerPort": 8443}]}]}}
    _create(live, tmp_path, svc)
    _create(live, tmp_path, pod)
    ip = live.wait_for("the pod's IP", lambda: (live.json("GET", "/api/v1/namespaces/default/pods/ext")[1]
                                                 .get("status") or {}).get("podIP"))
    url = f"https://{ip}:8443{GV}"
    assert _wait_condition(live, "FailedDiscoveryCheck") == {
        "type": "Available", "status": "False", "reason": "FailedDiscoveryCheck",
        "message": f'failing or missing response from {url}: Get "{url}": dial tcp {ip}:8443: connect: connection '
                   "refused (podlife: the simulated runtime's pods serve nothing; an extension API server answers "
                   "with podlife up --runtime process)"}
    code, headers, body = live.request("GET", f"{GV}/namespaces/default/flunders")
    assert (code, headers["Content-Type"], body) == (503, "text/plain; charset=utf-8", b"service unavailable\n")
    # listed in legacy discovery whether available or not (handler_apis.go), stale in aggregated discovery
    groups = [g["name"] for g in live.json("GET", "/apis")[1]["groups"]]
    assert groups[-2:] == ["flowcontrol.apiserver.k8s.io", "wardle.example.com"]   # 16100 > 2000 > custom (1000)
    code, _, raw = live.request("GET", "/apis", headers={"Accept": AGGREGATED})
    entry = json.loads(raw)["items"][-1]
    assert entry == {"metadata": {"name": "wardle.example.com", "creationTimestamp": None},
                     "versions": [{"version": "v1alpha1", "freshness": "Stale", "resources": []}]}


needs_root = pytest.mark.skipif(os.geteuid() != 0 or mountns.available() is not None,
                                reason="needs root (process-runtime pods on their own addresses)")


@needs_root
def test_an_extension_api_server_pod(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.live.test_process_runtime import ProcessCluster

    tmp = tmp_path_factory.mktemp("agg")
    cluster = ProcessCluster(tmp)
    try:
        _extension_server(cluster, tmp)
    finally:
        cluster.stop()


def _get(live: Live, path: str, accept: str = "application/json") -> tuple[int, dict[str, str], bytes]:
    return live.request("GET", path, headers={"Accept": accept})


def _extension_server(live: Live, tmp: Path) -> None:
    code, cm = live.json("GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication")
    data = cm["data"]
    assert sorted(data) == ["requestheader-allowed-names", "requestheader-client-ca-file",
                            "requestheader-extra-headers-prefix", "requestheader-group-headers",
                            "requestheader-username-headers"]
    assert (data["requestheader-allowed-names"], data["requestheader-extra-headers-prefix"],
            data["requestheader-group-headers"], data["requestheader-username-headers"]) == (
        '["front-proxy-client"]', '["X-Remote-Extra-"]', '["X-Remote-Group"]', '["X-Remote-User"]')
    front_ca = data["requestheader-client-ca-file"]
    assert front_ca.startswith("-----BEGIN CERTIFICATE-----")

    cert, key = _ca_cert("ext.default.svc")
    # the Available condition through upstream's checks, in their order (available_controller.go sync)
    _create(live, tmp, _apiservice(caBundle=base64.b64encode(cert).decode()))
    assert _wait_condition(live, "ServiceNotFound") == {
        "type": "Available", "status": "False", "reason": "ServiceNotFound",
        "message": 'service/ext in "default" is not present'}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
           "spec": {"ports": [{"name": "https", "port": 80, "targetPort": 8443}]}}
    _create(live, tmp, svc)
    assert _wait_condition(live, "ServicePortError")["message"] == \
        'service/ext in "default" is not listening on port 443'
    live.kubectl("patch", "service", "ext", "--type=json", "-p",
                 '[{"op": "replace", "path": "/spec/ports/0/port", "value": 443}]')
    # no selector: nothing writes its Endpoints
    assert _wait_condition(live, "EndpointsNotFound")["message"] == \
        'cannot find endpoints for service/ext in "default"'
    live.kubectl("patch", "service", "ext", "-p", '{"spec": {"selector": {"app": "ext"}}}')
    assert _wait_condition(live, "MissingEndpoints")["message"] == \
        'endpoints for service/ext in "default" have no addresses with port name "https"'
    code, headers, body = _get(live, f"{GV}/namespaces/default/flunders")
    assert (code, body) == (503, b"service unavailable\n")

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ext", "labels": {"app": "ext"}},
           "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
               "name": "ext", "image": "python:3", "command": ["python3", "-c", PROGRAM],
               "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                       {"name": "CERT", "value": cert.decode()}, {"name": "KEY", "value": key.decode()},
                       {"name": "FRONT_CA", "value": front_ca}],
               "ports": [{"name": "https", "containerPort": 8443}],
               "volumeMounts": [{"name": "certs", "mountPath": "/certs"}],
               "readinessProbe": {"tcpSocket": {"port": "https"}, "periodSeconds": 1}}],
               "volumes": [{"name": "certs", "emptyDir": {}}]}}
    _create(live, tmp, pod)
    try:
        assert _wait_condition(live, "Passed", 60) == {"type": "Available", "status": "True", "reason": "Passed",
                                                        "message": "all checks passed"}
    except AssertionError:
        log = live.kubectl("logs", "ext", check=False)
        raise AssertionError(f"the extension server's log:\n{log.stdout}{log.stderr}") from None
    assert live.kubectl("get", "apiservice", NAME).stdout.split()[4:7] == [NAME, "default/ext", "True"]

    # the proxy: the user in the request-header headers, the front proxy's certificate, no bearer token
    code, _, raw = _get(live, f"{GV}/namespaces/default/flunders/echo?x=1")
    assert code == 200, raw
    echo = json.loads(raw)["spec"]
    assert echo["clientCN"] == "front-proxy-client"
    assert echo["query"] == "x=1"
    assert echo["headers"]["x-remote-user"] == ["podlife-admin"]
    assert echo["headers"]["x-remote-group"] == ["system:masters", "system:authenticated"]
    assert "authorization" not in echo["headers"]
    assert echo["discovery"]["clientCN"] == "front-proxy-client"
    assert echo["discovery"]["headers"]["x-remote-user"] == ["system:kube-aggregator"]
    assert echo["discovery"]["headers"]["x-remote-group"] == ["system:masters"]
    # a caller's own request-header headers do not pass
    code, _, raw = live.request("GET", f"{GV}/namespaces/default/flunders/echo",
                                headers={"X-Remote-User": "mallory", "X-Remote-Extra-Scopes": "all"})
    echo2 = json.loads(raw)["spec"]["headers"]
    assert echo2["x-remote-user"] == ["podlife-admin"] and "x-remote-extra-scopes" not in echo2

    # delegated authentication and authorization answer as upstream for the pod's service account token
    pod_obj = live.json("GET", "/api/v1/namespaces/default/pods/ext")[1]
    sa_uid = live.json("GET", "/api/v1/namespaces/default/serviceaccounts/default")[1]["metadata"]["uid"]
    node = live.json("GET", f"/api/v1/nodes/{pod_obj['spec']['nodeName']}")[1]
    body = echo["token"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    code, review = live.json("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": echo["token"]}})
    assert code == 201, review
    assert review["status"] == {
        "authenticated": True, "audiences": ["https://kubernetes.default.svc.cluster.local"],
        "user": {"username": "system:serviceaccount:default:default", "uid": sa_uid,
                 "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
                 # from 1.30 (ServiceAccountTokenJTI, ServiceAccountTokenPodNodeInfo) the token's jti and node too
                 "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={claims['jti']}"],
                           "authentication.kubernetes.io/node-name": [node["metadata"]["name"]],
                           "authentication.kubernetes.io/node-uid": [node["metadata"]["uid"]],
                           "authentication.kubernetes.io/pod-name": ["ext"],
                           "authentication.kubernetes.io/pod-uid": [pod_obj["metadata"]["uid"]]}}}
    # the extension server's own calls: its token is a user of the API server, and kube-root-ca.crt verifies it
    code, _, raw = live.request("GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication",
                                headers={"Authorization": f"Bearer {echo['token']}"})
    assert code == 200, raw
    assert live.request("GET", "/api/v1/namespaces", headers={"Authorization": "Bearer a.b.c"})[0] == 401
    root_ca = live.json("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt")[1]["data"]["ca.crt"]
    import yaml

    kubeconfig = yaml.safe_load(Path(live.kubeconfig).read_text())
    assert root_ca == base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    code, sar = live.json("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "system:serviceaccount:default:default", "groups": review["status"]["user"]["groups"],
                 "resourceAttributes": {"group": "wardle.example.com", "resource": "flunders", "verb": "list",
                                        "namespace": "default"}}})
    assert (code, sar["status"]) == (201, {"allowed": True})

    # discovery: the group in /apis and its resources in aggregated discovery
    groups = live.json("GET", "/apis")[1]["groups"]
    assert groups[-1] == {"name": "wardle.example.com",
                          "versions": [{"groupVersion": "wardle.example.com/v1alpha1", "version": "v1alpha1"}],
                          "preferredVersion": {"groupVersion": "wardle.example.com/v1alpha1",
                                               "version": "v1alpha1"}}
    code, _, raw = _get(live, "/apis", AGGREGATED)
    assert json.loads(raw)["items"][-1] == {
        "metadata": {"name": "wardle.example.com", "creationTimestamp": None},
        "versions": [{"version": "v1alpha1", "freshness": "Current", "resources": [{
            "resource": "flunders", "singularResource": "flunder", "scope": "Namespaced",
            "verbs": ["get", "list", "watch"], "shortNames": ["fl"],
            "responseKind": {"group": "wardle.example.com", "version": "v1alpha1", "kind": "Flunder"},
            "subresources": [{"subresource": "status", "verbs": ["get"], "responseKind": {
                "group": "wardle.example.com", "version": "v1alpha1", "kind": "Flunder"}}]}]}]}
    assert "flunders" in live.kubectl("api-resources", "--api-group", "wardle.example.com").stdout

    # a body without a Content-Type goes on without one (client-go's Body([]byte) sets none; the extension server
    # then decodes its first media type, JSON): the proxy adds no header of its HTTP library's
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(live.url)
    conn = http.client.HTTPSConnection(where.hostname or "", where.port, context=live.ssl, timeout=30)
    conn.request("POST", f"{GV}/namespaces/default/flunders/echo", body=b'{"kind":"Flunder"}',
                 headers={"Authorization": f"Bearer {live.token}", "User-Agent": "e2e.test/v1.28"})
    answer = conn.getresponse()
    seen = json.loads(answer.read())["spec"]["headers"]
    conn.close()
    assert answer.status == 201
    assert "content-type" not in seen and "accept" not in seen and seen["user-agent"] == ["e2e.test/v1.28"]
    assert seen["content-length"] == ["18"]

    # a watch streams through: the first event arrives while the server holds the stream open
    req = urllib.request.Request(live.url + f"{GV}/namespaces/default/flunders?watch=true",
                                 headers={"Authorization": f"Bearer {live.token}"})
    with urllib.request.urlopen(req, timeout=20, context=live.ssl) as stream:
        first = json.loads(stream.readline())
        code, _, raw = live.request("POST", f"{GV}/namespaces/default/flunders/release", b"{}",
                                    {"Content-Type": "application/json"})
        assert code == 201, raw
        second = json.loads(stream.readline())
        assert stream.readline() == b""
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in (first, second)] == \
        [("ADDED", "first"), ("ADDED", "second")]

    # the server gone: MissingEndpoints and 503
    live.kubectl("delete", "pod", "ext", "--grace-period=0", "--force")
    assert _wait_condition(live, "MissingEndpoints")["status"] == "False"
    code, headers, body = _get(live, f"{GV}/namespaces/default/flunders/echo")
    assert (code, headers["Content-Type"], body) == (503, "text/plain; charset=utf-8", b"service unavailable\n")
    code, _, raw = _get(live, "/apis", AGGREGATED)
    assert json.loads(raw)["items"][-1]["versions"][0]["freshness"] == "Stale"




def test_a_built_in_group_is_never_handed_to_a_service(live_factory: Callable[..., Live]) -> None:
    """podlife serves its own groups whatever their APIService says: without RBAC, any pod's token could otherwise
    point apps/v1 at a Service of its own and receive everyone's requests (upstream: RBAC guards the APIService)."""
    live = live_factory("1.28")
    code, body = live.json("PATCH", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
                           {"spec": {"service": {"namespace": "default", "name": "thief", "port": 443},
                                     "insecureSkipTLSVerify": True}}, content_type="application/merge-patch+json")
    assert code == 200, body
    code, listed = live.json("GET", "/apis/apps/v1/namespaces/default/deployments")
    assert code == 200 and listed["kind"] == "DeploymentList"

"""OpenAPI v2 and v3 documents, checked by their structure and by real kubectl reading them from a small
test server that serves only /version, discovery and /openapi (explain, and apply deciding to send
fieldValidation=Strict after finding the parameter on the kind's PATCH operation)."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from podlife.api import openapi
from podlife.api.meta import builtin_kind_info
from podlife.api.protobuf import _fields
from podlife.api.schema import builtin_kinds

CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "crontabs.stable.example.com"},
       "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "kind": "CronTab", "singular": "crontab"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "description": "When and what.",
                                                              "properties": {"cronSpec": {"type": "string"}}}}}}}]}}


def test_v2_document():
    doc = openapi.v2_document(32, [CRD])
    dep = doc["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert dep["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert dep["properties"]["metadata"] == {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                                             "description": dep["properties"]["metadata"]["description"]}
    # the strict schema's null types and additionalProperties: false are not published
    spec = doc["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]
    assert spec["properties"]["replicas"] == {"description": spec["properties"]["replicas"]["description"],
                                              "format": "int32", "type": "integer"}
    assert "additionalProperties" not in spec
    assert doc["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] == {
        "type": "string", "format": "int-or-string"}
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation").items()
    assert "application/strategic-merge-patch+json" in patch["consumes"]
    crontab = doc["definitions"]["com.example.stable.v1.CronTab"]
    assert crontab["x-kubernetes-group-version-kind"] == [{"group": "stable.example.com", "kind": "CronTab",
                                                            "version": "v1"}]
    crd_patch = doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in crd_patch["consumes"]


def test_v2_protobuf_is_a_gnostic_document():
    doc = openapi.v2_document(32)
    top = {}
    for num, _, value in _fields(openapi.v2_protobuf(doc)):
        top.setdefault(num, []).append(value)
    assert bytes(top[1][0]) == b"2.0"
    definitions = [_fields(bytes(v)) for _, _, v in _fields(bytes(top[9][0]))]   # NamedSchema entries
    names = [bytes(entry[0][2]).decode() for entry in definitions]
    assert len(names) == len(doc["definitions"]) and "io.k8s.api.core.v1.PodSpec" in names


def test_v3_index_and_documents():
    index = openapi.v3_index(32, [CRD])
    paths = index["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/stable.example.com/v1"} <= set(paths)
    doc = openapi.v3_document(32, "apps/v1", [CRD])
    digest = openapi.etag(openapi.encode(doc))
    assert len(digest) == 128 and digest == digest.upper()   # %X of a SHA-512
    assert paths["apis/apps/v1"]["serverRelativeURL"] == f"/openapi/v3/apis/apps/v1?hash={digest}"
    schemas = doc["components"]["schemas"]
    assert "io.k8s.api.apps.v1.Deployment" in schemas and "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    assert "io.k8s.api.batch.v1.Job" not in schemas   # only what the group-version's paths reach
    assert all(p.startswith("/apis/apps/v1/") for p in doc["paths"])
    assert openapi.v3_document(32, "nosuch/v1") is None


# ------------------------------------------------------------------------------------------------ real kubectl

class _Server(BaseHTTPRequestHandler):
    minor = 32
    posts: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, code: int, body: object, ctype: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _groups(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for gvk in builtin_kinds(self.minor):
            group, _, version = gvk.api_version.rpartition("/")
            out.setdefault(group, {}).setdefault(version, []).append(gvk.kind)
        return out

    def do_GET(self) -> None:   # noqa: N802 (http.server's name)
        path = self.path.partition("?")[0]
        groups = self._groups()
        if path == "/version":
            return self._send(200, {"major": "1", "minor": str(self.minor), "gitVersion": f"v1.{self.minor}.0"})
        if path == "/api":
            return self._send(200, {"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            return self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in sorted(vs)],
                 "preferredVersion": {"groupVersion": f"{g}/{sorted(vs)[-1]}", "version": sorted(vs)[-1]}}
                for g, vs in sorted(groups.items()) if g]})
        if path == "/openapi/v2":
            doc = openapi.v2_document(self.minor)
            if any(t in (self.headers.get("Accept") or "") for t in openapi.V2_PROTOBUF_ACCEPTED):
                return self._send(200, openapi.v2_protobuf(doc), openapi.V2_PROTOBUF)
            return self._send(200, openapi.encode(doc))
        if path == "/openapi/v3":
            return self._send(200, openapi.v3_index(self.minor))
        if path.startswith("/openapi/v3/"):
            doc = openapi.v3_document(self.minor, path.split("/", 4)[4])
            return self._send(200, openapi.encode(doc)) if doc else self._send(404, {})
        parts = path.strip("/").split("/")
        gv = parts[1] if parts[0] == "api" and len(parts) == 2 else "/".join(parts[1:3]) if len(parts) == 3 else None
        if gv is not None:
            group, _, version = gv.rpartition("/")
            kinds = groups.get(group, {}).get(version)
            if kinds:
                resources = [{"name": builtin_kind_info(k, gv).resource, "singularName": "", "kind": k,
                              "namespaced": builtin_kind_info(k, gv).namespaced,
                              "verbs": ["create", "delete", "get", "list", "patch", "update"]} for k in kinds]
                return self._send(200, {"kind": "APIResourceList", "groupVersion": gv, "resources": resources})
        self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                         "code": 404, "message": "not found", "details": {}})

    def do_POST(self) -> None:   # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.posts.append(self.path)
        self._send(201, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})


@pytest.fixture
def kubectl(tmp_path: Path):
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    servers = []

    def run(minor: int, *args: str) -> tuple[str, list[str]]:
        handler = type("Handler", (_Server,), {"minor": minor, "posts": []})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        config = tmp_path / f"kubeconfig-{minor}"
        config.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
            "users": [{"name": "u", "user": {}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "default"}}]}))
        done = subprocess.run(["kubectl", "--kubeconfig", str(config), "--cache-dir", str(tmp_path / "cache"),
                               *args], capture_output=True, text=True, timeout=120)
        server.shutdown()
        return done.stdout + done.stderr, handler.posts

    yield run
    for server in servers:
        server.server_close()


@pytest.mark.parametrize("minor", [32, 27])   # 1.32 reads /openapi/v3; 1.27 reads /openapi/v2 as protobuf
def test_kubectl_explain(kubectl, minor):
    out, _ = kubectl(minor, "explain", "deployment.spec.strategy")
    assert "KIND:       Deployment" in out and "VERSION:    v1" in out
    assert "FIELD: strategy <DeploymentStrategy>" in out
    assert "rollingUpdate\t<RollingUpdateDeployment>" in out


@pytest.mark.parametrize("minor", [32, 27])
def test_kubectl_apply_sends_strict_field_validation(kubectl, minor, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n")
    out, posts = kubectl(minor, "apply", "--dry-run=server", "-f", str(manifest))
    assert "configmap/c created (server dry run)" in out
    assert len(posts) == 1 and "fieldValidation=Strict" in posts[0] and "dryRun=All" in posts[0]

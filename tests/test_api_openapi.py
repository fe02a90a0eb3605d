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

from podlife.api.meta import builtin_kind_info
from podlife.api.schema import builtin_kinds
from podlife.apiserver import openapispec as openapi
from podlife.apiserver.protobuf import _fields

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
    # the field's own description: in v3 its $ref is wrapped in allOf beside it (builder3/util WrapRefs)
    assert "The deployment strategy to use to replace existing pods with new ones." in out


@pytest.mark.parametrize("minor", [32, 27])
def test_kubectl_apply_sends_strict_field_validation(kubectl, minor, tmp_path):
    manifest = tmp_path / "cm.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '1'}\n")
    out, posts = kubectl(minor, "apply", "--dry-run=server", "-f", str(manifest))
    assert "configmap/c created (server dry run)" in out
    assert len(posts) == 1 and "fieldValidation=Strict" in posts[0] and "dryRun=All" in posts[0]


# ------------------------------------------------------------------------------------------------ completeness

def _ops(doc):
    return {(path, method): op for path, item in doc["paths"].items() for method, op in item.items()
            if method != "parameters"}


def test_every_route_of_the_server_is_a_path_and_nothing_else():
    from podlife.apiserver.resources import builtin_resources, custom_resources
    from podlife.apiserver.routes import routes

    doc = openapi.v2_document(32, [CRD])
    served = {(rt.path, op.method) for rt in routes([*builtin_resources(32), *custom_resources([CRD])])
              for op in rt.operations}
    documented = {key for key in _ops(doc) if not key[0].endswith("/")}   # "/apis/apps/" etc. are discovery
    assert documented == served
    ids = [op["operationId"] for op in _ops(doc).values()]
    assert len(ids) == len(set(ids))
    discovery = {path for path, _ in _ops(doc) if path.endswith("/")}
    assert {"/api/", "/api/v1/", "/apis/", "/apis/apps/", "/apis/apps/v1/", "/version/",
            "/apis/stable.example.com/v1/"} <= discovery


def test_verbs_subresources_and_response_codes_as_upstream():
    doc = openapi.v2_document(32, [CRD])
    ops = _ops(doc)

    def summary(path, method):
        op = ops[(path, method)]
        return op["operationId"], op["x-kubernetes-action"], sorted(op["responses"])

    pods = "/api/v1/namespaces/{namespace}/pods"
    assert summary(pods, "get") == ("listCoreV1NamespacedPod", "list", ["200", "401"])
    assert summary(pods, "post") == ("createCoreV1NamespacedPod", "post", ["200", "201", "202", "401"])
    assert summary(pods, "delete") == ("deleteCollectionCoreV1NamespacedPod", "deletecollection", ["200", "401"])
    assert summary(pods + "/{name}", "get") == ("readCoreV1NamespacedPod", "get", ["200", "401"])
    assert summary(pods + "/{name}", "put") == ("replaceCoreV1NamespacedPod", "put", ["200", "201", "401"])
    assert summary(pods + "/{name}", "patch") == ("patchCoreV1NamespacedPod", "patch", ["200", "201", "401"])
    assert summary(pods + "/{name}", "delete") == ("deleteCoreV1NamespacedPod", "delete", ["200", "202", "401"])
    assert summary("/api/v1/pods", "get") == ("listCoreV1PodForAllNamespaces", "list", ["200", "401"])
    assert [m for p, m in ops if p == "/api/v1/pods"] == ["get"]
    assert summary(pods + "/{name}/binding", "post") == ("createCoreV1NamespacedPodBinding", "post",
                                                         ["200", "201", "202", "401"])
    assert summary(pods + "/{name}/eviction", "post")[0] == "createCoreV1NamespacedPodEviction"
    assert summary(pods + "/{name}/log", "get") == ("readCoreV1NamespacedPodLog", "get", ["200", "401"])
    assert summary(pods + "/{name}/exec", "get") == ("connectCoreV1GetNamespacedPodExec", "connect", ["200", "401"])
    assert summary(pods + "/{name}/exec", "post")[0] == "connectCoreV1PostNamespacedPodExec"
    assert summary(pods + "/{name}/portforward", "get")[0] == "connectCoreV1GetNamespacedPodPortforward"
    assert summary("/api/v1/namespaces/{name}/finalize", "put") == ("replaceCoreV1NamespaceFinalize", "put",
                                                                    ["200", "201", "401"])
    assert [m for p, m in ops if p == "/api/v1/namespaces/{name}/finalize"] == ["put"]
    # pods/proxy and services/proxy are connecters for every method (served for the process runtime's pods)
    assert summary(pods + "/{name}/proxy", "get") == ("connectCoreV1GetNamespacedPodProxy", "connect", ["200", "401"])
    # every method of upstream's proxyMethods, HEAD and OPTIONS included (api/openapi-spec/swagger.json of 1.28)
    assert sorted(m for p, m in ops if p == pods + "/{name}/proxy") == ["delete", "get", "head", "options", "patch",
                                                                        "post", "put"]
    assert summary(pods + "/{name}/proxy", "head") == ("connectCoreV1HeadNamespacedPodProxy", "connect",
                                                       ["200", "401"])
    assert summary(pods + "/{name}/proxy", "options")[0] == "connectCoreV1OptionsNamespacedPodProxy"
    assert summary("/api/v1/namespaces/{namespace}/services/{name}/proxy", "delete")[0] == \
        "connectCoreV1DeleteNamespacedServiceProxy"
    # nodes/proxy is listed by discovery but not served: not documented (ephemeralcontainers, a CSR's approval
    # and a service account's token are served, with upstream's operations)
    assert not [p for p, _ in ops if p.endswith("/nodes/{name}/proxy")]
    token = "/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"
    assert [m for p, m in ops if p == token] == ["post"]
    assert summary(token, "post") == ("createCoreV1NamespacedServiceAccountToken", "post", ["200", "201", "202", "401"])
    assert sorted(m for p, m in ops if p == pods + "/{name}/ephemeralcontainers") == ["get", "patch", "put"]
    assert summary(pods + "/{name}/ephemeralcontainers", "patch") == (
        "patchCoreV1NamespacedPodEphemeralcontainers", "patch", ["200", "201", "401"])
    assert summary("/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}/approval", "put") == (
        "replaceCertificatesV1CertificateSigningRequestApproval", "put", ["200", "201", "401"])
    scale = ops[("/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale", "patch")]
    assert scale["operationId"] == "patchAppsV1NamespacedDeploymentScale"
    assert scale["x-kubernetes-group-version-kind"] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert scale["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.autoscaling.v1.Scale"}
    assert "application/apply-patch+yaml" not in scale["consumes"]   # podlife's scale takes no apply
    # the wrong plural of the old documents is gone
    assert "/api/v1/namespaces/{namespace}/endpoints/{name}" in doc["paths"]
    assert not [p for p in doc["paths"] if "endpointses" in p]
    # create-only and read-only kinds
    assert [m for p, m in ops if p.startswith("/apis/authentication.k8s.io/v1/tokenreviews")] == ["post"]
    assert sorted(m for p, m in ops if "componentstatuses" in p) == ["get", "get"]
    assert "watch" not in [x["name"] for x in ops[("/api/v1/componentstatuses", "get")]["parameters"]]
    # schemas of lists, deletes and custom resources
    assert ops[(pods, "get")]["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.PodList"}
    assert ops[(pods + "/{name}", "delete")]["responses"]["202"]["schema"] == {
        "$ref": "#/definitions/io.k8s.api.core.v1.Pod"}   # ReturnDeletedObject
    assert ops[("/api/v1/namespaces/{namespace}/configmaps/{name}", "delete")]["responses"]["200"]["schema"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Status"}
    crontabs = "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs"
    assert summary(crontabs, "get") == ("listStableExampleComV1NamespacedCronTab", "list", ["200", "401"])
    assert doc["definitions"]["com.example.stable.v1.CronTabList"]["properties"]["items"]["items"] == {
        "$ref": "#/definitions/com.example.stable.v1.CronTab"}


def test_query_parameters_follow_the_version():
    def names(minor, path, method):
        op = openapi.v2_document(minor)["paths"][path][method]
        return [p["name"] for p in op["parameters"]]

    pods = "/api/v1/namespaces/{namespace}/pods"
    assert names(32, pods, "get") == ["allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
                                      "resourceVersion", "resourceVersionMatch", "sendInitialEvents",
                                      "timeoutSeconds", "watch"]
    assert "sendInitialEvents" not in names(26, pods, "get")
    assert names(32, pods + "/{name}", "delete") == [
        "body", "dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
        "orphanDependents", "propagationPolicy"]
    assert "ignoreStoreReadErrorWithClusterBreakingPotential" not in names(31, pods + "/{name}", "delete")
    assert names(32, pods + "/{name}", "patch") == ["body", "dryRun", "fieldManager", "fieldValidation", "force"]


def _validate_defs(minor: int) -> dict:
    from importlib import resources

    root = resources.files("kubernetes_validate").joinpath("kubernetes-json-schema", f"v1.{minor}.0-local")
    return json.loads(root.joinpath("_definitions.json").read_text())["$defs"]


def _types(schema: dict) -> list[str]:
    t = schema.get("type")
    return sorted(x for x in (t if isinstance(t, list) else [t] if t else []) if x != "null")


@pytest.mark.parametrize("minor", [27, 32, 37])
def test_definitions_match_kubernetes_validate(minor):
    """Every definition kubernetes-validate ships for the version is published with the same properties, types,
    required fields and GVK; every $ref of the document resolves; each operation's object schema is of the
    operation's kind."""
    doc = openapi.v2_document(minor, [CRD])
    defs = doc["definitions"]
    theirs = _validate_defs(minor)
    assert set(theirs) <= set(defs)
    for name, want in theirs.items():
        have = defs[name]
        assert sorted(have.get("properties") or {}) == sorted(want.get("properties") or {}), name
        assert sorted(have.get("required") or []) == sorted(want.get("required") or []), name
        assert have.get("x-kubernetes-group-version-kind") == want.get("x-kubernetes-group-version-kind"), name
        for prop, w in (want.get("properties") or {}).items():
            h = have["properties"][prop]
            if "$ref" in w:
                assert h["$ref"] == "#/definitions/" + w["$ref"].rpartition("/")[2], (name, prop)
            elif _types(w):
                assert _types(h) == _types(w), (name, prop)
    refs = set()
    todo = [doc]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.add(node["$ref"])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    assert all(r.startswith("#/definitions/") and r[len("#/definitions/"):] in defs for r in refs)
    for (path, method), op in _ops(doc).items():
        gvk = op.get("x-kubernetes-group-version-kind")
        schema = (op["responses"]["200"].get("schema") or {}).get("$ref", "")
        if gvk is None or not schema:
            continue
        target = defs[schema.rpartition("/")[2]].get("x-kubernetes-group-version-kind") or []
        kind = gvk["kind"] + ("List" if op["x-kubernetes-action"] == "list" else "")
        if op["x-kubernetes-action"] in ("delete", "deletecollection") and schema.endswith(".Status"):
            continue
        assert {**gvk, "kind": kind} in target, (path, method)


def test_v3_index_lists_only_served_group_versions():
    from podlife.apiserver.resources import Catalog

    index = openapi.v3_index(32, [CRD])
    catalog = Catalog(32)
    served = {f"apis/{g}/{v}" if g else f"api/{v}" for g, vs in catalog.groups().items() for v in vs}
    groups = {f"apis/{g}" for g in catalog.groups() if g}
    assert set(index["paths"]) == served | groups | {"apis/stable.example.com/v1", "apis/stable.example.com",
                                                     "api", "apis", "version"}
    assert not [p for p in index["paths"] if "alpha" in p or "beta" in p]
    core = openapi.v3_document(32, "v1")
    watch = core["paths"]["/api/v1/namespaces/{namespace}/pods"]["get"]
    assert set(watch["responses"]["200"]["content"]) == {"application/json", "application/json;stream=watch"}
    assert watch["parameters"][-1] == {"description": watch["parameters"][-1]["description"], "in": "query",
                                       "name": "watch", "schema": {"type": "boolean", "uniqueItems": True}}
    patch = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert sorted(patch["requestBody"]["content"]) == sorted(
        ["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json",
         "application/apply-patch+yaml"])


def test_v3_wraps_refs_with_siblings_in_all_of():
    """kube-openapi builder3/util WrapRefs: a $ref beside other keys is wrapped; a bare $ref is kept."""
    schemas = openapi.v3_document(32, "apps/v1")["components"]["schemas"]
    spec = schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]
    assert spec["strategy"] == {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}],
                                "description": "The deployment strategy to use to replace existing pods with new "
                                               "ones.",
                                "x-kubernetes-patch-strategy": "retainKeys"}
    items = schemas["io.k8s.api.apps.v1.DeploymentList"]["properties"]["items"]["items"]
    assert items == {"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"}
    v2 = openapi.v2_document(32)["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert v2["$ref"] == "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy"     # v2 keeps siblings


def test_documents_are_valid_swagger_and_openapi():
    """The v2 document against the Swagger 2.0 meta-schema and every v3 document against OpenAPI 3.0's (the
    ones schemathesis ships, evaluated by jsonschema-rs, which it brings)."""
    definitions = pytest.importorskip("schemathesis.specs.openapi.definitions")
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    swagger = jsonschema_rs.Draft4Validator(definitions.SWAGGER_20)
    doc = json.loads(openapi.encode(openapi.v2_document(32, [CRD])))
    assert [e.message for e in swagger.iter_errors(doc)] == []
    doc["paths"]["/api/v1/pods"]["get"]["responses"]["200"]["schema"] = 5   # and the check can fail
    assert len(list(swagger.iter_errors(doc))) == 1
    v3 = jsonschema_rs.Draft4Validator(definitions.OPENAPI_30)
    for path, doc in openapi.v3_documents(32, [CRD]).items():
        assert [e.message for e in v3.iter_errors(json.loads(openapi.encode(doc)))] == [], path

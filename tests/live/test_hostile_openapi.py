"""The OpenAPI documents against the live server they describe: every documented operation answers (with a
sample object where one exists), every route the server answers is documented, and a schema-driven fuzzer
(schemathesis) sends bounded, derandomized requests built from the v2 document without a 5xx while the server
stays ready."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.live.conftest import Live

ROUTE_NOT_FOUND = "the server could not find the requested resource"   # the mux's 404 (no such path)
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
PATCH_TYPE = "application/merge-patch+json"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "crontabs.stable.example.com"},
       "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "kind": "CronTab", "singular": "crontab"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                                       "statusReplicasPath": ".status.replicas"}},
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                                  "type": "object", "properties": {"cronSpec": {"type": "string"},
                                                                   "replicas": {"type": "integer"}}}}}}}]}}


def _samples(live: Live, namespace: str) -> None:
    """A namespace holding an object named "sample" of a few kinds (pods, configmaps, deployments, crontabs)."""
    pod_spec = {"containers": [{"name": "c", "image": "nginx"}], "terminationGracePeriodSeconds": 0}
    for path, body in (
            ("/api/v1/namespaces", {"metadata": {"name": namespace}}),
            (f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": "sample"}, "data": {"a": "1"}}),
            (f"/api/v1/namespaces/{namespace}/pods", {"metadata": {"name": "sample"}, "spec": pod_spec}),
            (f"/apis/apps/v1/namespaces/{namespace}/deployments",
             {"metadata": {"name": "sample"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "s"}},
                                                       "template": {"metadata": {"labels": {"app": "s"}},
                                                                    "spec": pod_spec}}}),
            (f"/apis/stable.example.com/v1/namespaces/{namespace}/crontabs",
             {"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "sample"},
              "spec": {"cronSpec": "* * * * *", "replicas": 1}})):
        code, doc = live.json("POST", path, body)
        assert code == 201, (path, doc)


@pytest.fixture(scope="module")
def live(live_factory: Any) -> Live:
    live = live_factory("1.32", clock="manual")
    assert live.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)[0] == 201
    live.wait_for("crontabs served", lambda: live.json("GET", "/apis/stable.example.com/v1/crontabs")[0] == 200)
    _samples(live, "oa")
    return live


@pytest.fixture(scope="module")
def v2(live: Live) -> dict[str, Any]:
    code, _, raw = live.request("GET", "/openapi/v2")
    assert code == 200
    return json.loads(raw)


def _documented(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {(path, method.upper()) for path, item in doc["paths"].items() for method in item if method != "parameters"}


def _routed(live: Live, method: str, path: str) -> tuple[bool, int, Any]:
    """Send a request that changes nothing (an unparseable body, dryRun=All) and say whether a route took it:
    anything but the mux's 404 and a 405."""
    sep = "&" if "?" in path else "?"
    body = None if method == "GET" else b"{"
    ctype = PATCH_TYPE if method == "PATCH" else "application/json"
    code, _, raw = live.request(method, f"{path}{sep}dryRun=All", body, {"Content-Type": ctype})
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = raw
    unrouted = code == 405 or (code == 404 and isinstance(doc, dict) and doc.get("message") == ROUTE_NOT_FOUND
                               and "details" not in doc)
    return not unrouted, code, doc


def test_v3_documents_hold_the_same_operations(live: Live, v2: dict[str, Any]) -> None:
    code, _, raw = live.request("GET", "/openapi/v3")
    assert code == 200
    ops: set[tuple[str, str]] = set()
    for entry in json.loads(raw)["paths"].values():
        code, _, doc = live.request("GET", entry["serverRelativeURL"])
        assert code == 200
        ops |= _documented(json.loads(doc))
    assert ops == _documented(v2)
    assert "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/scale" in v2["paths"]


def test_every_documented_operation_answers(live: Live, v2: dict[str, Any]) -> None:
    failures = []
    for path, method in sorted(_documented(v2)):
        concrete = path.replace("{namespace}", "oa").replace("{name}", "oa" if path.startswith(
            "/api/v1/namespaces/{name}") else "sample")
        routed, code, doc = _routed(live, method, concrete)
        if not routed or code >= 500:
            failures.append((method, concrete, code, doc))
    assert failures == []
    # the sample objects are there, and the dry runs changed nothing
    assert live.json("GET", "/api/v1/namespaces/oa/configmaps/sample")[1]["data"] == {"a": "1"}
    assert live.json("GET", "/apis/apps/v1/namespaces/oa/deployments/sample/scale")[1]["spec"] == {"replicas": 1}


def _resources(live: Live) -> list[tuple[str, dict[str, Any]]]:
    """(group-version base path, APIResource) of every resource the server's discovery lists."""
    out = []
    bases = ["/api/v1"] + [f"/apis/{gv['groupVersion']}" for g in live.json("GET", "/apis")[1]["groups"]
                           for gv in g["versions"]]
    for base in bases:
        out.extend((base, r) for r in live.json("GET", base)[1]["resources"])
    return out


def test_every_route_the_server_answers_is_documented(live: Live, v2: dict[str, Any]) -> None:
    """Probe each discovered resource's collection, all-namespaces, item, subresource (discovered and made up)
    and deprecated watch paths with every method: whatever a route answers must be in the document."""
    documented = _documented(v2)
    resources = _resources(live)
    subs: dict[tuple[str, str], set[str]] = {}
    for base, r in resources:
        if "/" in r["name"]:
            parent, _, sub = r["name"].partition("/")
            subs.setdefault((base, parent), set()).add(sub)
    candidates: list[tuple[str, str]] = []   # (template, concrete)
    for base, r in resources:
        name = r["name"]
        if "/" in name:
            continue
        if name == "namespaces":
            collections = [(f"{base}/namespaces", f"{base}/namespaces")]
            item_name = "{name}", "oa"
        elif r["namespaced"]:
            collections = [(f"{base}/namespaces/{{namespace}}/{name}", f"{base}/namespaces/oa/{name}"),
                           (f"{base}/{name}", f"{base}/{name}")]
            item_name = "{name}", "sample"
        else:
            collections = [(f"{base}/{name}", f"{base}/{name}")]
            item_name = "{name}", "sample"
        candidates.append((f"{base}/watch/{name}", f"{base}/watch/{name}"))
        for template, concrete in collections:
            candidates.append((template, concrete))
            item = (f"{template}/{item_name[0]}", f"{concrete}/{item_name[1]}")
            candidates.append(item)
            for sub in sorted(subs.get((base, name), set()) | {"bogus"}):
                candidates.append((f"{item[0]}/{sub}", f"{item[1]}/{sub}"))
    undocumented, seen = [], 0
    for template, concrete in candidates:
        for method in METHODS:
            routed, code, doc = _routed(live, method, concrete)
            seen += 1
            assert code < 500, (method, concrete, doc)
            if routed and (template, method) not in documented:
                undocumented.append((method, template, code))
    assert undocumented == []
    assert seen > 1500   # the probe covered the catalog


def test_schema_driven_fuzzing_gets_no_server_error(live: Live) -> None:
    """schemathesis generates requests from the served v2 document for the operations of a few kinds and their
    subresources (bounded and derandomized: the same requests every run); none may get a 5xx or leave the
    server unready."""
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, Phase, given, settings

    _samples(live, "fuzz")
    started = time.monotonic()
    schema = schemathesis.openapi.from_url(live.url + "/openapi/v2")
    schema.config.update(base_url=live.url)
    pattern = (r"^/api/v1/namespaces/\{namespace\}/(pods|configmaps)(/\{name\}(/(status|binding|eviction|log))?)?$"
               r"|^/apis/apps/v1/namespaces/\{namespace\}/deployments(/\{name\}(/(scale|status))?)?$"
               r"|^/apis/stable\.example\.com/v1/namespaces/\{namespace\}/crontabs(/\{name\})?$")
    operations = [result.ok() for result in schema.include(path_regex=pattern).get_all_operations()]
    assert len(operations) == 40
    codes: dict[int, int] = {}
    server_errors = []
    for operation in operations:
        @settings(max_examples=5, derandomize=True, database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])
        @given(case=operation.as_strategy())
        def send(case: Any) -> None:
            params = case.path_parameters or {}
            if "namespace" in params:
                params["namespace"] = "fuzz"   # requests reach the objects rather than a missing namespace
            if "name" in params and re.fullmatch(r"[a-m].*", params["name"] or ""):
                params["name"] = "sample"
            response = case.call(timeout=10)
            codes[response.status_code] = codes.get(response.status_code, 0) + 1
            if response.status_code >= 500:
                server_errors.append((case.method, case.formatted_path, response.status_code, response.text[:500]))

        send()
    assert server_errors == []
    assert sum(codes.values()) == 5 * len(operations)
    assert {200, 400, 404} <= set(codes)   # the requests reached handlers, not only the router
    before = time.monotonic()
    assert live.request("GET", "/readyz")[0] == 200
    assert time.monotonic() - before < 0.1
    assert "Traceback" not in live.output() and "internal error" not in live.output()
    assert time.monotonic() - started < 60


def test_a_warning_with_control_characters_is_dropped(live: Live) -> None:
    """Found by the fuzzer: an unknown field whose name holds a control character made a Warning header aiohttp
    refuses to send, and the connection closed without an answer. The API server drops such a warning
    (apimachinery util/net NewWarningHeader) and escapes quotes and backslashes in the others."""
    body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warned"},
                       "bell\u0007": 1, 'say"hi\\': 2}).encode()
    code, headers, raw = live.request("POST", "/api/v1/namespaces/oa/configmaps", body,
                                      {"Content-Type": "application/json"})
    assert code == 201, raw
    assert headers.get("Warning") == '299 - "unknown field \\"say\\"hi\\\\\\""'
    assert live.request("GET", "/readyz")[0] == 200


def test_what_the_route_table_does_not_hold_is_refused(live: Live) -> None:
    """A method a path is not registered with is go-restful's 405, a path no route has the mux's 404; a watch
    of a resource without one is the handler's 405."""
    def status(method: str, path: str) -> tuple[int, str]:
        code, _, raw = live.request(method, path, b"{}" if method != "GET" else None,
                                    {"Content-Type": "application/json"})
        return code, json.loads(raw)["message"]

    not_allowed = (405, "the server does not allow this method on the requested resource")
    assert status("GET", "/apis/authentication.k8s.io/v1/tokenreviews") == not_allowed   # create only
    assert status("POST", "/api/v1/pods") == not_allowed          # only list and watch across namespaces
    assert status("DELETE", "/api/v1/configmaps") == not_allowed
    assert status("GET", "/api/v1/namespaces/oa/finalize") == not_allowed   # finalize is update only
    assert status("PUT", "/api/v1/namespaces/oa/configmaps") == not_allowed
    assert status("GET", "/api/v1/componentstatuses?watch=true") == (
        405, 'watch is not supported on resources of kind "componentstatuses"')
    assert status("GET", "/apis/authentication.k8s.io/v1/tokenreviews/x") == (404, ROUTE_NOT_FOUND)
    assert status("GET", "/api/v1/watch/pods") == (404, ROUTE_NOT_FOUND)   # the deprecated watch paths
    assert status("GET", "/api/v1/namespaces/oa/pods/sample/bogus") == (404, ROUTE_NOT_FOUND)


def test_documents_follow_the_custom_resource_definitions(live: Live) -> None:
    """Built once and kept, the documents are rebuilt when a CRD comes, changes its schema, or goes."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.org"},
           "spec": {"group": "example.org", "scope": "Cluster",
                    "names": {"plural": "gadgets", "kind": "Gadget", "singular": "gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "size": {"type": "integer"}}}}}}}]}}

    def index() -> dict[str, Any]:
        return json.loads(live.request("GET", "/openapi/v3")[2])["paths"]

    def spec_properties() -> list[str]:
        doc = json.loads(live.request("GET", index()["apis/example.org/v1"]["serverRelativeURL"])[2])
        return sorted(doc["components"]["schemas"]["org.example.v1.Gadget"]["properties"]["spec"]["properties"])

    assert "apis/example.org/v1" not in index()
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert live.json("POST", crds, crd)[0] == 201
    live.wait_for("gadgets served", lambda: "apis/example.org/v1" in index())
    assert spec_properties() == ["size"]
    v2 = json.loads(live.request("GET", "/openapi/v2")[2])
    assert sorted(m for m in v2["paths"]["/apis/example.org/v1/gadgets"] if m != "parameters") == [
        "delete", "get", "post"]
    patch = [{"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color",
              "value": {"type": "string"}}]
    assert live.json("PATCH", f"{crds}/gadgets.example.org", patch, "application/json-patch+json")[0] == 200
    assert spec_properties() == ["color", "size"]
    assert live.json("DELETE", f"{crds}/gadgets.example.org")[0] == 200
    live.wait_for("gadgets gone", lambda: "apis/example.org/v1" not in index())
    assert "/apis/example.org/v1/gadgets" not in json.loads(live.request("GET", "/openapi/v2")[2])["paths"]

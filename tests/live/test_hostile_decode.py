"""Hostile request bodies and query parameters against the live API: each gets the API server's Status (code,
reason, message), the server keeps answering, nothing reaches the store or the data directory, and the data
directory still opens afterwards. One manual-clock server for the module: nothing changes unless a request
changes it, so the data directory must hold exactly what it held before the hostile requests."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.live.conftest import Live
from tests.live.test_bad_requests import CRD   # a Gizmo kind that keeps unknown fields

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
WEB = f"{DEPLOYMENTS}/web"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _deployment(name: str, replicas: Any = 1) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def _objects(data: Path) -> dict[tuple[str, str, str], tuple[int, bytes]]:
    """The store's current objects as the data directory holds them."""
    db = sqlite3.connect(f"file:{data / 'state.db'}?mode=ro", uri=True)
    try:
        return {(k, ns, n): (rv, bytes(v)) for k, ns, n, rv, v in
                db.execute("SELECT kind, namespace, name, rv, value FROM objects")}
    finally:
        db.close()


class Hostile:
    def __init__(self, live: Live) -> None:
        self.live = live
        self.data = Path(live.kubeconfig).parent / "data"

    def status(self, method: str, path: str, body: bytes | str | None,
               content_type: str = "application/json") -> tuple[int, str, str, float]:
        """The Status of a refused request, and how long it took to come."""
        data = body.encode() if isinstance(body, str) else body
        start = time.monotonic()
        code, _, raw = self.live.request(method, path, data, {"Content-Type": content_type})
        took = time.monotonic() - start
        doc = json.loads(raw)
        assert doc["kind"] == "Status" and doc["status"] == "Failure" and doc["code"] == code, doc
        return code, doc.get("reason", ""), doc["message"], took


@pytest.fixture(scope="module")
def hostile(live_factory) -> Hostile:
    live = live_factory("1.32", clock="manual")
    h = Hostile(live)
    assert live.json("POST", DEPLOYMENTS, _deployment("web", 2))[0] == 201
    assert live.json("POST", CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
                                          "data": {"a": "1"}})[0] == 201
    return h


@pytest.fixture(autouse=True)
def stays_up(hostile: Hostile, request: pytest.FixtureRequest):
    """Every hostile request leaves the server answering, and the store and the data directory as they were."""
    if request.node.name.startswith("test_zz_"):
        yield
        return
    writes = "_accepted" in request.node.name   # a test of what is accepted writes on purpose
    live = hostile.live
    code, _, web = live.request("GET", WEB)
    assert code == 200
    before = _objects(hostile.data)
    yield
    start = time.monotonic()
    assert live.request("GET", "/readyz")[0] == 200
    assert time.monotonic() - start < 1.0
    if not writes:
        assert live.request("GET", WEB)[2] == web
        assert _objects(hostile.data) == before


def _go_json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


# ------------------------------------------------------------------------------------------------ types

TYPE_ERROR = ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal {} into Go '
              "struct field DeploymentSpec.spec.replicas of type int32")


@pytest.mark.parametrize("replicas, value", [
    ("3", "string"), (1.5, "number 1.5"), (2147483648, "number 2147483648"),
    (2 ** 70, "number 1180591620717411303424"), (True, "bool"), ([1], "array")])
@pytest.mark.parametrize("validation", ["", "?fieldValidation=Strict", "?fieldValidation=Ignore"])
def test_create_decodes_into_the_go_types(hostile: Hostile, replicas: Any, value: str, validation: str) -> None:
    # handlers/create.go: the body is decoded into apps/v1.Deployment before anything else (encoding/json
    # through sigs.k8s.io/json), whatever fieldValidation says; transformDecodeError wraps the error
    body = json.dumps(_deployment("hostile", replicas))
    assert hostile.status("POST", DEPLOYMENTS + validation, body)[:3] == (400, "BadRequest", TYPE_ERROR.format(value))


def test_yaml_bodies_decode_the_same_way(hostile: Hostile) -> None:
    body = json.dumps(_deployment("hostile", 2 ** 70))   # JSON is YAML
    assert hostile.status("POST", DEPLOYMENTS, body, "application/yaml")[:3] == (
        400, "BadRequest", TYPE_ERROR.format("number 1180591620717411303424"))


def test_nested_fields_name_their_struct_and_path(hostile: Hostile) -> None:
    d = _deployment("hostile")
    d["spec"]["template"]["spec"]["containers"][0]["name"] = 5
    assert hostile.status("POST", DEPLOYMENTS, json.dumps(d))[2] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number into Go struct '
        "field Container.spec.template.spec.containers.name of type string")
    d = _deployment("hostile")
    d["metadata"]["labels"] = {"a": True}
    assert hostile.status("POST", DEPLOYMENTS, json.dumps(d))[2] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct '
        "field ObjectMeta.metadata.labels of type string")
    d = _deployment("hostile")
    d["spec"]["strategy"] = {"rollingUpdate": {"maxSurge": 1.5}}
    assert hostile.status("POST", DEPLOYMENTS, json.dumps(d))[2] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go '
        "struct field RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32")


def test_update_decodes_into_the_go_types(hostile: Hostile) -> None:
    live = hostile.live
    current = live.json("GET", WEB)[1]
    current["spec"]["replicas"] = "3"
    assert hostile.status("PUT", WEB, json.dumps(current))[:3] == (400, "BadRequest", TYPE_ERROR.format("string"))
    current["spec"]["replicas"] = 2
    current["status"] = {"replicas": "many"}
    assert hostile.status("PUT", WEB + "/status", json.dumps(current))[2] == (
        'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct '
        "field DeploymentStatus.status.replicas of type int32")


def test_patched_objects_are_decoded_too(hostile: Hostile) -> None:
    live = hostile.live
    current = live.json("GET", WEB)[1]
    # handlers/patch.go jsonPatcher: the patched JSON is decoded into the type; a failure is 422 on "patch"
    code, reason, message, _ = hostile.status("PATCH", WEB, '{"spec":{"replicas":"3"}}',
                                              "application/merge-patch+json")
    assert (code, reason) == (422, "Invalid")
    assert message.startswith(' "" is invalid: patch: Invalid value: "{')
    assert message.endswith('": json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of '
                            "type int32")
    assert '\\"replicas\\":\\"3\\"' in message and current["metadata"]["uid"] in message
    code, _, message, _ = hostile.status("PATCH", WEB, '[{"op":"replace","path":"/spec/replicas","value":1.5}]',
                                         "application/json-patch+json")
    assert code == 422 and message.endswith(": json: cannot unmarshal number 1.5 into Go struct field "
                                            "DeploymentSpec.spec.replicas of type int32")
    # smpPatcher: the patched map goes through the unstructured converter, which has its own words
    assert hostile.status("PATCH", WEB, '{"spec":{"replicas":"3"}}', "application/strategic-merge-patch+json")[:3] \
        == (422, "Invalid", ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:3]]": unrecognized '
                            "type: int32")
    assert hostile.status("PATCH", WEB, '{"spec":{"replicas":1.5}}', "application/strategic-merge-patch+json")[2] \
        == ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:1.5]]": cannot convert float64 to int32'


def test_apply_checks_types_as_structured_merge_diff(hostile: Hostile) -> None:
    body = json.dumps(_deployment("web", "3"))
    code, reason, message, _ = hostile.status("PATCH", WEB + "?fieldManager=hostile", body,
                                              "application/apply-patch+yaml")
    assert (code, message) == (500, "failed to create typed patch object (/web; apps/v1, Kind=Deployment): "
                                    ".spec.replicas: expected numeric (int or float), got string")
    # structured-merge-diff takes any number; the object made from its result does not hold 1.5 in an int32
    body = json.dumps(_deployment("web", 1.5))
    assert hostile.status("PATCH", WEB + "?fieldManager=hostile&force=true", body,
                          "application/apply-patch+yaml")[:3] == (
        500, "", "failed to convert new object (/web; apps/v1, Kind=Deployment) to proper version: cannot convert "
                 "float64 to int32")


def test_scale_subresource(hostile: Hostile) -> None:
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": "3"}}
    assert hostile.status("PUT", WEB + "/scale", json.dumps(scale))[:3] == (
        400, "BadRequest", 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into '
                           "Go struct field ScaleSpec.spec.replicas of type int32")
    assert hostile.status("PATCH", WEB + "/scale", '{"spec":{"replicas":2147483648}}',
                          "application/merge-patch+json")[:2] == (422, "Invalid")
    scale["spec"]["replicas"] = 150_001
    assert hostile.status("PUT", WEB + "/scale", json.dumps(scale))[:3] == (
        422, "Invalid", 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: 150001: podlife runs '
                        "workloads of at most 150,000 pods")


def test_subresources_that_take_bodies(hostile: Hostile) -> None:
    pods = "/api/v1/namespaces/default/pods"
    pod = hostile.live.json("GET", pods)[1]["items"][0]["metadata"]["name"]
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod},
                "deleteOptions": {"gracePeriodSeconds": "now"}}
    assert hostile.status("POST", f"{pods}/{pod}/eviction", json.dumps(eviction))[:3] == (
        400, "BadRequest", 'Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal string '
                           "into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64")
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pod}, "target": {"name": ["node-1"]}}
    assert hostile.status("POST", f"{pods}/{pod}/binding", json.dumps(binding))[:3] == (
        400, "BadRequest", 'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal array '
                           "into Go struct field ObjectReference.target.name of type string")


def test_workloads_larger_than_podlife_holds_are_refused_naming_the_field(hostile: Hostile) -> None:
    # valid upstream (an int32), but more pods than podlife models: the limit podlife run applies
    assert hostile.status("POST", DEPLOYMENTS, json.dumps(_deployment("hostile", 10_000_000)))[:3] == (
        422, "Invalid", 'Deployment.apps "hostile" is invalid: spec.replicas: Invalid value: 10000000: podlife runs '
                        "workloads of at most 150,000 pods")
    assert hostile.status("PATCH", WEB, '{"spec":{"replicas":150001}}', "application/merge-patch+json")[:3] == (
        422, "Invalid", 'Deployment.apps "web" is invalid: spec.replicas: Invalid value: 150001: podlife runs '
                        "workloads of at most 150,000 pods")


# ------------------------------------------------------------------------------------------------ limits

def _alias_bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: hostile}", "bomb:",
             f"  a0: &a0 [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_a_yaml_alias_bomb_is_refused_at_once(hostile: Hostile) -> None:
    body = _alias_bomb()
    assert 400 < len(body) < 1700   # 9^9 values once expanded
    code, reason, message, took = hostile.status("POST", CONFIGMAPS, body, "application/yaml")
    assert (code, reason) == (400, "BadRequest")
    assert message.startswith("the object provided is unrecognized (must be of type ConfigMap): error converting "
                              "YAML to JSON: yaml: document contains excessive aliasing (")
    assert took < 3.0
    # the same through server-side apply
    code, _, message, took = hostile.status("PATCH", f"{CONFIGMAPS}/hostile?fieldManager=x", body,
                                            "application/apply-patch+yaml")
    assert (code, message) == (400, "error decoding YAML: error converting YAML to JSON: yaml: document contains "
                                    "excessive aliasing")
    assert took < 3.0


def test_deep_nesting_is_refused(hostile: Hostile) -> None:
    deep_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hostile}\nx: " + "[" * 100_000 + "]" * 100_000
    code, _, message, took = hostile.status("POST", CONFIGMAPS, deep_yaml, "application/yaml")
    assert code == 400 and "error converting YAML to JSON: yaml: exceeded max depth of 200 (" in message
    assert took < 5.0
    deep_json = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hostile"},"x":' + "[" * 300 + "]" * 300 + "}"
    assert hostile.status("POST", CONFIGMAPS, deep_json)[2].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
        "error: exceeded max depth of 200 (")
    smp = '{"metadata":' + '{"labels":' * 900 + "{}" + "}" * 900 + "}"
    assert hostile.status("PATCH", WEB, smp, "application/strategic-merge-patch+json")[:3] == (
        400, "BadRequest", "exceeded max depth of 200")


def test_a_json_patch_that_doubles_a_value_is_stopped(hostile: Hostile) -> None:
    # each copy doubles the annotations' list: 40 of them would make 2^40 values; evanphx/json-patch stops
    # at the API server's JSONPatchMaxCopyBytes (3 MiB) and the patch is 422
    ops = [{"op": "add", "path": "/metadata/annotations", "value": {}},
           {"op": "add", "path": "/metadata/annotations/x", "value": ["y" * 1000]}]
    ops += [{"op": "copy", "from": "/metadata/annotations/x", "path": "/metadata/annotations/x/-"}] * 40
    code, reason, message, took = hostile.status("PATCH", WEB, json.dumps(ops), "application/json-patch+json")
    assert (code, reason, message) == (422, "Invalid", "the server rejected our request due to an error in our "
                                                       "request")
    assert took < 5.0


def test_control_bodies_have_the_same_limits(hostile: Hostile) -> None:
    deep = '{"nodePowerOff":' + "[" * 300 + "]" * 300 + "}"
    assert hostile.status("POST", "/podlife/faults", deep)[:3] == (
        400, "BadRequest", "fault: not JSON: exceeded max depth of 200")


def test_the_body_size_limit(hostile: Hostile) -> None:
    body = json.dumps({**_deployment("hostile"), "x": "a" * (3 * 1024 * 1024)})
    code, reason, _, _ = hostile.status("POST", DEPLOYMENTS, body)
    assert (code, reason) == (413, "RequestEntityTooLarge")


def test_not_a_number_is_not_json(hostile: Hostile) -> None:
    code, _, message, _ = hostile.status("POST", DEPLOYMENTS, '{"spec":{"replicas":NaN}}')
    assert code == 400 and "couldn't get version/kind; json parse error" in message
    code, _, message, _ = hostile.status("POST", CONFIGMAPS, "apiVersion: v1\nkind: ConfigMap\nmetadata: "
                                                             "{name: hostile}\ndata: {a: .inf}\n", "application/yaml")
    assert code == 400 and "json: unsupported value: +Inf" in message


# ------------------------------------------------------------------------------------------------ query parameters

def test_list_options_are_validated(hostile: Hostile) -> None:
    # handlers/get.go ListResource: the query converted into ListOptions (400), then validated (422); the
    # storage parses resourceVersion (storage.ValidateListOptions: 400 "invalid resource version")
    assert hostile.status("GET", DEPLOYMENTS + "?limit=abc", None)[:3] == (
        400, "BadRequest", 'strconv.ParseInt: parsing "abc": invalid syntax')
    assert hostile.status("GET", DEPLOYMENTS + "?resourceVersion=-5&resourceVersionMatch=Exact", None)[:3] == (
        400, "BadRequest", 'invalid resource version: resourceVersion: Invalid value: "-5": strconv.ParseUint: '
                           'parsing "-5": invalid syntax')
    assert hostile.status("GET", DEPLOYMENTS + "?resourceVersion=abc&resourceVersionMatch=NotOlderThan", None)[1] \
        == "BadRequest"
    assert hostile.status("GET", DEPLOYMENTS + "?resourceVersionMatch=Exact", None)[:3] == (
        422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch '
                        "is forbidden unless resourceVersion is provided")
    assert hostile.status("GET", DEPLOYMENTS + "?resourceVersion=1&resourceVersionMatch=Sometime", None)[:3] == (
        422, "Invalid", 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Sometime": '
                        'supported values: "Exact", "NotOlderThan", ""')
    assert hostile.live.request("GET", DEPLOYMENTS + "?limit=1")[0] == 200


# ------------------------------------------------------------------------------------------------ accepted

def test_deep_and_huge_values_without_a_go_type_are_accepted(hostile: Hostile) -> None:
    # a custom resource decodes as unstructured (util/json): an integer beyond int64 is a float64, and nesting
    # up to podlife's limit is stored, served, patched and applied
    live = hostile.live
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    assert live.json("POST", crds, CRD)[0] == 201
    gizmos = "/apis/example.com/v1/namespaces/default/gizmos"
    live.wait_for("gizmos served", lambda: live.json("GET", gizmos)[0] == 200)
    deep: Any = {"n": 2 ** 70}
    for _ in range(190):
        deep = {"d": deep}
    body = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": deep}
    code, created = live.json("POST", gizmos, body)
    assert code == 201, created
    inner = created["spec"]
    for _ in range(190):
        inner = inner["d"]
    assert inner == {"n": 1.1805916207174113e21}
    assert live.json("GET", f"{gizmos}/g")[1]["spec"] == created["spec"]
    assert live.json("PATCH", f"{gizmos}/g", {"spec": {"m": 2 ** 64}}, "application/merge-patch+json")[1]["spec"]["m"] \
        == 1.8446744073709552e19
    applied = {**body, "spec": {"m": 1}}
    code, out = live.json("PATCH", f"{gizmos}/g?fieldManager=hostile&force=true", applied,
                          "application/apply-patch+yaml")
    assert code == 200 and out["spec"]["m"] == 1
    assert live.request("GET", gizmos)[0] == 200
    assert live.json("DELETE", f"{gizmos}/g")[0] == 200
    assert live.json("DELETE", f"{crds}/gizmos.example.com")[0] == 200


# ------------------------------------------------------------------------------------------------ data at rest

def test_zz_the_data_directory_opens_again_unchanged(hostile: Hostile, live_factory) -> None:
    """Last in the module: the server stops, an older podlife's value is planted, and it starts again."""
    live = hostile.live
    before = _objects(hostile.data)
    assert not [k for k in before if k[2].startswith("hostile")]
    assert live.stop() == 0
    # what an older podlife stored after `replicas: 2^70` (orjson read it as a float, the controller crashed on
    # it at every start): a Deployment the store can neither serve nor run
    bad = _deployment("legacy", 1.1805916207174113e21)
    bad["metadata"].update(namespace="default", uid="u-legacy", resourceVersion="999999")
    db = sqlite3.connect(hostile.data / "state.db")
    db.execute("INSERT INTO objects (kind, namespace, name, rv, value) VALUES (?, ?, ?, ?, ?)",
               ("Deployment", "default", "legacy", 999999, json.dumps(bad).encode()))
    db.commit()
    db.close()
    Path(live.kubeconfig).unlink()   # the new server's kubeconfig says when it serves
    again = Live(Path(live.kubeconfig).parent, "1.32", clock="manual")
    try:
        assert again.request("GET", "/readyz")[0] == 200
        assert again.json("GET", f"{DEPLOYMENTS}/legacy")[0] == 404
        assert again.json("GET", WEB)[1]["spec"]["replicas"] == 2
        # the restart runs the nodes' kubelets again (their pods' status moves on); what the requests wrote is
        # as it was, and the planted object is left where it was
        after = _objects(hostile.data)
        assert after[("ConfigMap", "default", "cfg")] == before[("ConfigMap", "default", "cfg")]
        assert after[("Deployment", "default", "legacy")] == (999999, json.dumps(bad).encode())
        assert not [k for k in after if k[2].startswith("hostile")]
        assert again.json("GET", CONFIGMAPS + "/cfg")[1]["data"] == {"a": "1"}
    finally:
        code = again.stop()
    out = again.output()
    assert code == 0, out
    assert (f"warning: {hostile.data / 'state.db'}: Deployment default/legacy is not loaded: json: cannot unmarshal "
            "number 1.1805916207174113e+21 into Go struct field DeploymentSpec.spec.replicas of type int32 (it stays "
            "in the data directory; delete it there or use another --data-dir)") in out

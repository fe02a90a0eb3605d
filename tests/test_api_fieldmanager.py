"""managedFields and server-side apply (apimachinery managedfields/internal over structured-merge-diff).

Expected field sets follow the schema's list and map types: Deployment.spec.selector is a LabelSelector
(x-kubernetes-map-type atomic: one leaf), containers are a map list keyed by name, ports by containerPort
and protocol; stripmeta.go never records apiVersion, kind, metadata.name or metadata.namespace.
"""

from __future__ import annotations

import copy

import pytest

from podlife.api.errors import ApiError
from podlife.api.schema import type_schema
from podlife.apiserver import fieldmanager as fm

SCHEMA = type_schema(32, "apps/v1", "Deployment")
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"
DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "nginx", "image": "nginx:1",
                                                   "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}},
    "status": {"replicas": 2},
}
CREATED_FIELDS = {
    "f:metadata": {"f:labels": {"f:app": {}}},
    "f:spec": {"f:replicas": {}, "f:selector": {},
               "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                              "f:spec": {"f:containers": {'k:{"name":"nginx"}': {
                                  ".": {}, "f:image": {}, "f:name": {},
                                  "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {
                                      ".": {}, "f:containerPort": {}, "f:protocol": {}}}}}}}},
}


def created() -> dict:
    return fm.update({}, DEPLOYMENT, "kubectl-create", SCHEMA, T0)


def entries(obj: dict) -> list[tuple]:
    return [(e["manager"], e["operation"], e.get("time")) for e in obj["metadata"]["managedFields"]]


def test_create_records_every_field_but_status_and_identity():
    obj = created()
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1", "time": T0,
        "fieldsType": "FieldsV1", "fieldsV1": CREATED_FIELDS}]
    assert "managedFields" not in DEPLOYMENT["metadata"]


def test_update_moves_changed_fields_to_the_writer():
    live = created()
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 5
    obj = fm.update(live, new, "kubectl", SCHEMA, T1)
    assert entries(obj) == [("kubectl-create", "Update", T0), ("kubectl", "Update", T1)]
    assert obj["metadata"]["managedFields"][1]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in obj["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]


def test_status_subresource_owns_only_status():
    live = created()
    new = copy.deepcopy(live)
    new["status"] = {"replicas": 3, "readyReplicas": 3}
    obj = fm.update(live, new, "kube-controller-manager", SCHEMA, T1, subresource="status")
    mine = obj["metadata"]["managedFields"][-1]
    assert (mine["manager"], mine["subresource"]) == ("kube-controller-manager", "status")
    assert mine["fieldsV1"] == {"f:status": {"f:readyReplicas": {}, "f:replicas": {}}}


def test_existing_untracked_object_stays_untracked():
    # skipnonapplied.go: an update of an object that has a uid and no managedFields records nothing
    live = copy.deepcopy(DEPLOYMENT)
    live["metadata"]["uid"] = "u1"
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 4
    assert "managedFields" not in fm.update(live, new, "kubectl", SCHEMA, T1)["metadata"]


def test_empty_managed_fields_in_the_request_reset_them():
    live = created()
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = []
    new["spec"]["replicas"] = 9
    obj = fm.update(live, new, "kubectl", SCHEMA, T1)
    assert entries(obj) == [("kubectl", "Update", T1)]
    assert obj["metadata"]["managedFields"][0]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


def test_apply_conflict_then_force():
    live = created()
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    live = fm.update(live, scaled, "kubectl", SCHEMA, T1)
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"replicas": 3}}
    with pytest.raises(ApiError) as e:
        fm.apply(live, config, "ci", SCHEMA, T2)
    assert (e.value.code, e.value.reason) == (409, "Conflict")
    assert e.value.message == 'Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas'
    obj = fm.apply(live, config, "ci", SCHEMA, T2, force=True)
    assert obj["spec"]["replicas"] == 3
    assert entries(obj) == [("ci", "Apply", T2), ("kubectl-create", "Update", T0)]   # kubectl lost its only field


def test_apply_of_an_equal_value_shares_ownership():
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    obj = fm.apply(created(), config, "ci", SCHEMA, T1)
    # nothing changed: no conflict, both own .spec.replicas, and a no-op apply stamps no time
    assert [(m, op) for m, op, _ in entries(obj)] == [("ci", "Apply"), ("kubectl-create", "Update")]
    assert obj["metadata"]["managedFields"][0].get("time") is None
    assert "f:replicas" in obj["metadata"]["managedFields"][1]["fieldsV1"]["f:spec"]


def test_several_conflicts_are_listed_per_manager():
    live = created()
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "x"}},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}}}}
    with pytest.raises(ApiError) as e:
        fm.apply(live, config, "ci", SCHEMA, T1)
    # Set.Iterate order: metadata's subtree before spec's; within spec the leaves sorted
    assert e.value.message == ('Apply failed with 3 conflicts: conflicts with "kubectl-create" using apps/v1:\n'
                               "- .metadata.labels.app\n- .spec.replicas\n- .spec.selector")


def test_apply_removes_what_the_manager_stopped_applying():
    first = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
             "spec": {"replicas": 1, "minReadySeconds": 5, "selector": {"matchLabels": {"app": "web"}},
                      "template": {"metadata": {"labels": {"app": "web"}},
                                   "spec": {"containers": [{"name": "a", "image": "a:1"},
                                                           {"name": "b", "image": "b:1"}]}}}}
    obj = fm.apply({}, first, "ci", SCHEMA, T0)
    assert entries(obj) == [("ci", "Apply", T0)]
    second = copy.deepcopy(first)
    del second["spec"]["minReadySeconds"]
    second["spec"]["template"]["spec"]["containers"] = [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c"}]
    obj = fm.apply(obj, second, "ci", SCHEMA, T1)
    assert "minReadySeconds" not in obj["spec"]
    assert [(c["name"], c["image"]) for c in obj["spec"]["template"]["spec"]["containers"]] == \
        [("b", "b:2"), ("c", "c")]


def test_apply_keeps_live_only_list_items_in_place():
    live = created()
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "s"}]}}}}
    obj = fm.apply(live, config, "ci", SCHEMA, T1)
    assert [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]] == ["nginx", "sidecar"]


def test_apply_errors():
    with pytest.raises(ApiError) as e:
        fm.apply(created(), {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                             "spec": {"replicaz": 1}}, "ci", SCHEMA, T1)
    assert (e.value.code, e.value.message) == (500, "failed to create typed patch object (/web; apps/v1, "
                                                    "Kind=Deployment): .spec.replicaz: field not declared in schema")
    with pytest.raises(ApiError) as e:
        fm.apply(created(), {"apiVersion": "apps/v1beta1", "kind": "Deployment"}, "ci", SCHEMA, T1)
    assert (e.value.code, e.value.message) == (400, "Incorrect version specified in apply patch. Specified patch "
                                                    "version: apps/v1beta1, expected: apps/v1")
    with pytest.raises(ApiError) as e:
        fm.apply(created(), {"apiVersion": "apps/v1", "kind": "Deployment",
                             "metadata": {"managedFields": []}}, "ci", SCHEMA, T1)
    assert (e.value.code, e.value.message) == (400, "metadata.managedFields must be nil")


def test_first_apply_to_an_untracked_object():
    live = copy.deepcopy(DEPLOYMENT)
    obj = fm.apply(live, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                          "spec": {"replicas": 2}}, "ci", SCHEMA, T1)
    assert [(m, op) for m, op, _ in entries(obj)] == [("ci", "Apply"), ("before-first-apply", "Update")]


def test_update_managers_are_capped_at_ten():
    obj = created()
    for i in range(11):
        new = copy.deepcopy(obj)
        new["metadata"].setdefault("annotations", {})[f"a{i}"] = "x"
        obj = fm.update(obj, new, f"m{i:02d}", SCHEMA, f"2026-01-01T01:{i:02d}:00Z")
    names = [e["manager"] for e in obj["metadata"]["managedFields"]]
    # the 11th updater (m09) makes the oldest, kubectl-create, the bucket, which takes in m00 (time 01:00);
    # the 12th (m10) has the bucket take in the next oldest, m01, and its time 01:01
    assert names == ["ancient-changes"] + [f"m{i:02d}" for i in range(2, 11)]
    bucket = obj["metadata"]["managedFields"][0]
    assert bucket["time"] == "2026-01-01T01:01:00Z"
    assert {"f:a0", "f:a1"} <= set(bucket["fieldsV1"]["f:metadata"]["f:annotations"])
    assert "f:replicas" in bucket["fieldsV1"]["f:spec"]


def test_manager_name_from_user_agent():
    assert fm.manager_name("", "kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd") == "kubectl"
    assert fm.manager_name("helm", "kubectl/v1.32.4") == "helm"
    assert fm.manager_name(None, "a\x00b/1") == "ab"
    assert fm.manager_name(None, "x" * 200) == "x" * 128


def test_fields_v1_round_trip():
    obj = created()
    fields = obj["metadata"]["managedFields"][0]["fieldsV1"]
    assert fm.fields_v1(fm.parse_fields_v1(fields)) == fields
    assert fm.parse_fields_v1({"f:spec": {"f:list": {"v:\"a\"": {}, "i:0": {}}}}) == {
        (("f", "spec"), ("f", "list"), ("v", '"a"')), (("f", "spec"), ("f", "list"), ("i", 0))}


def _naive_fields_v1(paths):
    """The definition, written out: a path is marked "." when another path extends it (quadratic; the
    module's version finds the same parents in one pass)."""
    root = {}
    for p in paths:
        node = root
        for pe in p:
            node = node.setdefault(fm._pe_text(pe), {})
        if any(len(q) > len(p) and q[:len(p)] == p for q in paths):
            node["."] = {}
    return fm._sort_fields(root)


def _naive_iterate(paths):
    out = []

    def walk(prefix, subset):
        d = len(prefix)
        out.extend(prefix + (pe,) for pe in sorted({p[d] for p in subset if len(p) == d + 1},
                                                   key=fm._pe_sort_key))
        for pe in sorted({p[d] for p in subset if len(p) > d + 1}, key=fm._pe_sort_key):
            walk(prefix + (pe,), {p for p in subset if len(p) > d + 1 and p[d] == pe})
    walk((), paths)
    return out


def test_field_sets_encode_and_iterate_as_defined():
    # members with children ("."), map-list items, set items and indexes mixed at several depths
    import random

    rng = random.Random(7)
    pes = [("f", "metadata"), ("f", "spec"), ("f", "labels"), ("k", '{"name":"a"}'), ("k", '{"name":"b"}'),
           ("v", '"x"'), ("i", 0), ("i", 3), ("f", "z"), ("f", "a")]
    paths = {tuple(rng.choice(pes) for _ in range(rng.randint(1, 4))) for _ in range(400)}
    assert fm.fields_v1(paths) == _naive_fields_v1(paths)
    assert fm._iterate(paths) == _naive_iterate(paths)
    assert fm.parse_fields_v1(fm.fields_v1(paths)) == paths


def test_many_labels_are_all_owned():
    schema = type_schema(32, "v1", "ConfigMap")
    labels = {f"k{i}": "v" for i in range(20000)}
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big", "namespace": "default",
                                                                 "labels": labels}}
    out = fm.update({}, obj, "kubectl", schema, "2026-01-01T00:00:00Z")
    owned = out["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]
    assert owned == {f"f:k{i}": {} for i in sorted(range(20000), key=lambda i: f"k{i}")}
    assert list(owned) == sorted(owned)


# ---- list-map keys with defaults, co-ownership, the shapes structured-merge-diff distinguishes

POD = type_schema(32, "v1", "Pod")


def _pod(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}], **spec}}


def test_a_port_without_protocol_is_keyed_by_the_default_tcp():
    # typed/helpers.go keyedAssociativeListItemToPathElement: an omitted key field takes its schema default
    # (ContainerPort.Protocol +default="TCP"), so 53/UDP and 53 are two items, 53 the same as 53/TCP
    obj = _pod()
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53}]
    fields = fm.apply({}, obj, "m", POD, T0)["metadata"]["managedFields"][0]["fieldsV1"]
    ports = fields["f:spec"]["f:containers"]['k:{"name":"c"}']["f:ports"]
    assert ports == {'k:{"containerPort":53,"protocol":"TCP"}': {".": {}, "f:containerPort": {}},
                     'k:{"containerPort":53,"protocol":"UDP"}': {".": {}, "f:containerPort": {}, "f:protocol": {}}}


def test_apply_after_a_defaulted_create_co_owns_the_port_and_force_keeps_one_item():
    from podlife.api.defaults import apply_defaults

    config = copy.deepcopy(DEPLOYMENT)
    del config["status"]
    config["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    sent = copy.deepcopy(config)
    apply_defaults(sent)   # the create's body as decoded (handlers/create.go)
    live = fm.update({}, sent, "kubectl-create", SCHEMA, T0)
    obj = fm.apply(live, config, "kubectl", SCHEMA, T1)   # equal values: no conflict
    by = {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}
    port = 'k:{"containerPort":80,"protocol":"TCP"}'
    for manager in ("kubectl", "kubectl-create"):
        assert port in by[manager]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']["f:ports"]
        assert "f:replicas" in by[manager]["f:spec"]
    changed = copy.deepcopy(config)
    changed["spec"]["replicas"] = 3
    with pytest.raises(ApiError) as e:
        fm.apply(obj, changed, "ci", SCHEMA, T2)
    assert e.value.message == ('Apply failed with 2 conflicts: conflicts with "kubectl":\n- .spec.replicas\n'
                               'conflicts with "kubectl-create" using apps/v1:\n- .spec.replicas')
    # conflict.go NewConflictError: one FieldManagerConflict cause per field and manager
    assert [(c.type, c.path, c.detail) for c in e.value.causes] == [
        ("FieldManagerConflict", ".spec.replicas", 'conflict with "kubectl"'),
        ("FieldManagerConflict", ".spec.replicas", 'conflict with "kubectl-create" using apps/v1')]
    forced = fm.apply(obj, changed, "ci", SCHEMA, T2, force=True)
    assert forced["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert forced["spec"]["replicas"] == 3


def _custom_schema(proto_default: str | None):
    from podlife.api.schema import TypeSchema

    proto = {"type": "string", **({"default": proto_default} if proto_default else {})}
    routes = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "proto"],
              "items": {"type": "object", "properties": {"port": {"type": "integer"}, "proto": proto,
                                                         "note": {"type": "string"}}}}
    return TypeSchema({}, {"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
        "spec": {"type": "object", "properties": {"routes": routes}}}})


def test_a_custom_resource_key_default_comes_from_its_schema():
    cr = {"apiVersion": "x.io/v1", "kind": "R", "metadata": {"name": "r"}, "spec": {"routes": [{"port": 1}]}}
    fields = fm.apply({}, cr, "m", _custom_schema("tcp"), T0)["metadata"]["managedFields"][0]["fieldsV1"]
    assert list(fields["f:spec"]["f:routes"]) == ['k:{"port":1,"proto":"tcp"}']
    # without a default the key is the fields present; an item with none of them is refused
    fields = fm.apply({}, cr, "m", _custom_schema(None), T0)["metadata"]["managedFields"][0]["fieldsV1"]
    assert list(fields["f:spec"]["f:routes"]) == ['k:{"port":1}']
    cr["spec"]["routes"] = [{"note": "x"}]
    with pytest.raises(ApiError) as e:
        fm.apply({}, cr, "m", _custom_schema(None), T0)
    assert e.value.code == 500
    assert "omits all key fields" in e.value.message


def test_sets_map_lists_and_atomic_fields_when_another_manager_applies():
    # finalizers are a set (items by value), env and volumes map lists keyed by name, nodeSelector an atomic map
    first = _pod(nodeSelector={"a": "1"}, volumes=[{"name": "v", "emptyDir": {}}])
    first["metadata"]["finalizers"] = ["x.io/a"]
    first["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    live = fm.apply({}, first, "m1", POD, T0)
    second = _pod(nodeSelector={"a": "1"})
    second["metadata"]["finalizers"] = ["x.io/b"]
    second["spec"]["containers"][0]["env"] = [{"name": "B", "value": "2"}]
    obj = fm.apply(live, second, "m2", POD, T1)
    assert obj["metadata"]["finalizers"] == ["x.io/a", "x.io/b"]
    assert obj["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    m2 = obj["metadata"]["managedFields"][1]
    assert m2["manager"] == "m2"
    assert m2["fieldsV1"]["f:metadata"] == {"f:finalizers": {'v:"x.io/b"': {}}}
    assert m2["fieldsV1"]["f:spec"]["f:nodeSelector"] == {}   # +mapType=atomic: one leaf, co-owned
    # an atomic map applied with another value conflicts as a whole
    third = _pod(nodeSelector={"a": "2"})
    with pytest.raises(ApiError) as e:
        fm.apply(obj, third, "m3", POD, T2)
    assert e.value.message == ('Apply failed with 2 conflicts: conflicts with "m1":\n- .spec.nodeSelector\n'
                               'conflicts with "m2":\n- .spec.nodeSelector')
    # m1 stops applying its finalizer, env item and volume: nobody else owns them, they go; nodeSelector and
    # the container stay (m2 owns them too)
    obj = fm.apply(obj, _pod(), "m1", POD, T2)
    assert obj["metadata"]["finalizers"] == ["x.io/b"]
    assert obj["spec"]["containers"][0]["env"] == [{"name": "B", "value": "2"}]
    assert "volumes" not in obj["spec"] and obj["spec"]["nodeSelector"] == {"a": "1"}


def test_apply_to_status_records_a_status_entry_only():
    live = fm.apply({}, _pod(), "m", POD, T0)
    config = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "status": {"phase": "Running"}}
    obj = fm.apply(live, config, "s", POD, T1, subresource="status")
    entry = obj["metadata"]["managedFields"][-1]
    assert (entry["manager"], entry["operation"], entry["subresource"], entry["time"]) == ("s", "Apply", "status", T1)
    assert entry["fieldsV1"] == {"f:status": {"f:phase": {}}}


def test_granular_map_keys_belong_to_their_appliers():
    # metadata.labels is a granular map: each applier owns its keys; a key its applier stops applying goes
    cm = type_schema(32, "v1", "ConfigMap")

    def config(**labels):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": labels}}
    obj = fm.apply({}, config(a="1"), "m1", cm, T0)
    obj = fm.apply(obj, config(b="2"), "m2", cm, T1)
    assert obj["metadata"]["labels"] == {"a": "1", "b": "2"}
    assert [e["fieldsV1"] for e in obj["metadata"]["managedFields"]] == [
        {"f:metadata": {"f:labels": {"f:a": {}}}}, {"f:metadata": {"f:labels": {"f:b": {}}}}]
    obj = fm.apply(obj, config(), "m1", cm, T2)
    assert obj["metadata"]["labels"] == {"b": "2"}
    assert [e["manager"] for e in obj["metadata"]["managedFields"]] == ["m2"]   # m1 owns nothing: no entry


def test_atomic_lists_are_owned_whole():
    # Container.args has no list type and no patch strategy: atomic (schemaconv), one leaf co-owned when equal,
    # a conflict as a whole when not, and replaced whole when forced
    def config(*args):
        obj = _pod()
        obj["spec"]["containers"][0]["args"] = list(args)
        return obj
    obj = fm.apply({}, config("a", "b"), "m1", POD, T0)
    obj = fm.apply(obj, config("a", "b"), "m2", POD, T1)
    for entry in obj["metadata"]["managedFields"]:
        assert entry["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}']["f:args"] == {}
    with pytest.raises(ApiError) as e:
        fm.apply(obj, config("c"), "m3", POD, T2)
    assert e.value.message == ('Apply failed with 2 conflicts: conflicts with "m1":\n'
                               '- .spec.containers[name="c"].args\nconflicts with "m2":\n'
                               '- .spec.containers[name="c"].args')
    assert fm.apply(obj, config("c"), "m3", POD, T2, force=True)["spec"]["containers"][0]["args"] == ["c"]


def test_a_port_keyed_by_two_fields_changes_alone():
    # ports[containerPort=53,protocol="UDP"] and [..."TCP"] are separate items: one applier's hostPort on the UDP
    # port conflicts with nobody, and the TCP port keeps its owner
    obj = _pod()
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 53, "protocol": "UDP"}, {"containerPort": 53}]
    live = fm.apply({}, obj, "m1", POD, T0)
    other = _pod()
    other["spec"]["containers"][0]["ports"] = [{"containerPort": 53, "protocol": "UDP", "hostPort": 5353}]
    out = fm.apply(live, other, "m2", POD, T1)
    assert out["spec"]["containers"][0]["ports"] == [{"containerPort": 53, "protocol": "UDP", "hostPort": 5353},
                                                     {"containerPort": 53}]
    m2 = out["metadata"]["managedFields"][1]["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}']["f:ports"]
    assert m2 == {'k:{"containerPort":53,"protocol":"UDP"}': {
        ".": {}, "f:containerPort": {}, "f:hostPort": {}, "f:protocol": {}}}


POD_STATUS = {
    "phase": "Running", "podIP": "10.0.0.9", "podIPs": [{"ip": "10.0.0.9"}], "startTime": T0,
    "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
    "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0, "state": {"running": {"startedAt": T0}}}],
}


@pytest.mark.parametrize("status", [POD_STATUS, {}, None])
@pytest.mark.parametrize("typed", [True, False])
def test_a_status_writes_field_set_is_the_whole_objects_under_status(status, typed):
    # _status_set walks .status alone: the paths under .status of the whole object's walk, nothing else
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}, "status": status}
    t = fm._Type(type_schema(32, "v1", "Pod") if typed else None)
    whole = {p: v for p, v in fm._field_set(pod, t).items() if p[:1] == (("f", "status"),)}
    assert fm._status_set(pod, t) == whole
    st = ("f", "status")
    if not status:   # an empty or null struct is a member itself (a comparison's set)
        assert set(whole) == {(st,)}
    elif typed:   # conditions and podIPs are map lists (their items and fields), containerStatuses atomic
        ready, scheduled, ip = ("k", '{"type":"Ready"}'), ("k", '{"type":"PodScheduled"}'), ("k", '{"ip":"10.0.0.9"}')
        conditions = ("f", "conditions")
        assert set(whole) == {
            (st, ("f", "phase")), (st, ("f", "podIP")), (st, ("f", "startTime")), (st, ("f", "containerStatuses")),
            (st, ("f", "podIPs"), ip), (st, ("f", "podIPs"), ip, ("f", "ip")),
            *((st, conditions, k) + f for k in (ready, scheduled) for f in ((), (("f", "type"),), (("f", "status"),)))}
    else:   # deduced: lists are atomic, and the object is a map, whose keys are members
        assert set(whole) == {(st,), *((st, ("f", f)) for f in POD_STATUS)}


def test_a_status_write_leaves_the_other_managers_fields_as_they_were():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    schema = type_schema(32, "v1", "Pod")
    live = fm.update({}, pod, "kube-controller-manager", schema, T0)
    new = copy.deepcopy(live)
    new["status"] = POD_STATUS
    out = fm.update(live, new, "kubelet", schema, T1, subresource="status")
    kcm, kubelet = out["metadata"]["managedFields"]
    assert kcm == live["metadata"]["managedFields"][0]
    assert (kubelet["manager"], kubelet["subresource"], kubelet["time"]) == ("kubelet", "status", T1)
    assert list(kubelet["fieldsV1"]) == ["f:status"]   # the status subresource owns only status
    assert set(kubelet["fieldsV1"]["f:status"]) == {f"f:{f}" for f in POD_STATUS}
    assert set(kubelet["fieldsV1"]["f:status"]["f:conditions"]) == {'k:{"type":"PodScheduled"}', 'k:{"type":"Ready"}'}
    # a second status write that changes nothing takes nothing: the entries and their bytes stay
    again = fm.update(out, copy.deepcopy(out), "kubelet", schema, T2, subresource="status")
    assert again["metadata"]["managedFields"] == out["metadata"]["managedFields"]

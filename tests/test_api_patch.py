"""PATCH bodies as kube-apiserver applies them (pkg/endpoints/handlers/patch.go).

Strategic merge cases use a small type shaped like the test type of apimachinery's strategicpatch tests (a
merging list keyed by name, merging and non-merging scalar lists, retainKeys maps): the expected results are
the facts those upstream cases state for applying a patch to the current object. The rest run on the real
Pod and Deployment schemas of the Kubernetes version.
"""

from __future__ import annotations

import json

import pytest

from podlife.api.errors import ApiError
from podlife.api.patch import (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, apply_patch, patch_type,
                               patch_types)
from podlife.api.schema import TypeSchema, type_schema

ITEM = "test.MergeItem"
DEFS = {
    ITEM: {"type": "object", "properties": {
        "name": {"type": "string"}, "value": {"type": "string"}, "other": {"type": "string"},
        "mergingList": {"type": "array", "items": {"$ref": f"#/$defs/{ITEM}"},
                        "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
        "nonMergingList": {"type": "array", "items": {"$ref": f"#/$defs/{ITEM}"}},
        "mergingIntList": {"type": "array", "items": {"type": "integer"}, "x-kubernetes-patch-strategy": "merge"},
        "nonMergingIntList": {"type": "array", "items": {"type": "integer"}},
        "simpleMap": {"type": "object", "additionalProperties": {"type": "string"}},
        "replacingItem": {"$ref": f"#/$defs/{ITEM}", "x-kubernetes-patch-strategy": "replace"},
        "retainKeysMap": {"$ref": "#/$defs/test.RetainKeysStruct", "x-kubernetes-patch-strategy": "retainKeys"},
        "retainKeysMergingList": {"type": "array", "items": {"$ref": f"#/$defs/{ITEM}"},
                                  "x-kubernetes-patch-strategy": "merge,retainKeys",
                                  "x-kubernetes-patch-merge-key": "name"},
    }},
    "test.RetainKeysStruct": {"type": "object", "properties": {
        "name": {"type": "string"}, "value": {"type": "string"}, "other": {"type": "string"},
        "simpleMap": {"type": "object", "additionalProperties": {"type": "string"}},
        "mergingList": {"type": "array", "items": {"$ref": f"#/$defs/{ITEM}"},
                        "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
        "nonMergingList": {"type": "array", "items": {"$ref": f"#/$defs/{ITEM}"}},
    }},
}
MERGE_ITEM = TypeSchema(DEFS, DEFS[ITEM], ITEM)


def smp(current: dict, patch: dict, schema: TypeSchema = MERGE_ITEM) -> dict:
    return apply_patch(current, json.dumps(patch).encode(), STRATEGIC_MERGE_PATCH, schema).object


def smp_error(current: dict, patch: object, schema: TypeSchema = MERGE_ITEM) -> ApiError:
    with pytest.raises(ApiError) as e:
        apply_patch(current, json.dumps(patch).encode(), STRATEGIC_MERGE_PATCH, schema)
    return e.value


def names(items: list[dict]) -> list:
    return [i["name"] for i in items]


# ------------------------------------------------------------------------------------------------ strategic merge

def test_merging_list_merges_by_key_and_adds_new_items():
    current = {"mergingList": [{"name": 1, "value": "a"}, {"name": 2, "value": "b"}]}
    out = smp(current, {"mergingList": [{"name": 2, "other": "x"}, {"name": 3}]})
    # 1 (live only) precedes 2 (patched) in the live list; 3 is new and follows 2 in the patch
    assert out == {"mergingList": [{"name": 1, "value": "a"}, {"name": 2, "value": "b", "other": "x"}, {"name": 3}]}
    assert current["mergingList"][1] == {"name": 2, "value": "b"}, "the stored object is not mutated"


def test_non_merging_list_is_replaced():
    out = smp({"nonMergingList": [{"name": 1}, {"name": 2}]}, {"nonMergingList": [{"name": 3}]})
    assert out == {"nonMergingList": [{"name": 3}]}


def test_delete_directive_in_a_merging_list_removes_every_match():
    current = {"mergingList": [{"name": 1}, {"name": 2}, {"name": 1, "value": "dup"}]}
    assert smp(current, {"mergingList": [{"$patch": "delete", "name": 1}]}) == {"mergingList": [{"name": 2}]}


def test_replace_directive_in_a_list_makes_the_patch_the_list():
    current = {"mergingList": [{"name": 1, "value": "a"}, {"name": 2}]}
    out = smp(current, {"mergingList": [{"name": 3}, {"$patch": "replace"}]})
    assert out == {"mergingList": [{"name": 3}]}


def test_merge_directive_in_a_list_is_refused():
    e = smp_error({"mergingList": [{"name": 1}]}, {"mergingList": [{"$patch": "merge"}]})
    assert (e.code, e.reason, e.message) == (500, "", "merging lists cannot yet be specified in the patch")


def test_map_directives():
    current = {"replacingItem": {"name": "a", "value": "1"}, "simpleMap": {"k": "v", "j": "w"}}
    # $patch: replace drops the live map's other keys; $patch: delete leaves an empty map
    assert smp(current, {"simpleMap": {"$patch": "replace", "n": "1"}})["simpleMap"] == {"n": "1"}
    assert smp(current, {"simpleMap": {"$patch": "delete"}})["simpleMap"] == {}
    # a key the object does not have: a map with a directive disappears (removeDirectives)
    assert "retainKeysMap" not in smp(current, {"retainKeysMap": {"$patch": "delete"}})
    # $patch: merge is no map directive
    e = smp_error(current, {"simpleMap": {"$patch": "merge"}})
    assert (e.code, e.message) == (500, "unknown patch type: merge in map: map[$patch:merge]")


def test_replace_strategy_replaces_the_whole_struct():
    out = smp({"replacingItem": {"name": "a", "value": "1"}}, {"replacingItem": {"other": "x"}})
    assert out == {"replacingItem": {"other": "x"}}


def test_null_deletes_a_field_and_is_dropped_from_added_values():
    out = smp({"name": "a", "value": "v"}, {"value": None, "simpleMap": {"k": "v", "gone": None}})
    assert out == {"name": "a", "simpleMap": {"k": "v"}}


def test_merging_scalar_list_unions_and_keeps_patch_order_among_live_items():
    # mergeSortedSlice: a patch item the live list does not have goes before the live items not yet placed
    # (kubectl sends $setElementOrder to place it; "merge lists of scalars" below)
    assert smp({"mergingIntList": [1, 2, 3]}, {"mergingIntList": [4]}) == {"mergingIntList": [4, 1, 2, 3]}
    # "merge lists of scalars": current 1 2 4, patch 3 in the order 1 2 3 → 1 2 3 4
    assert smp({"mergingIntList": [1, 2, 4]}, {"$setElementOrder/mergingIntList": [1, 2, 3],
                                               "mergingIntList": [3]}) == {"mergingIntList": [1, 2, 3, 4]}
    assert smp({"mergingIntList": [1, 2]}, {"mergingIntList": [2, 2, 5]}) == {"mergingIntList": [1, 2, 5]}


def test_delete_from_primitive_list():
    # upstream cases: with and without merge strategy; absent items and absent or null lists stay so
    assert smp({"mergingIntList": [1, 2, 3]}, {"$deleteFromPrimitiveList/mergingIntList": [2]}) == \
        {"mergingIntList": [1, 3]}
    assert smp({"nonMergingIntList": [1, 2, 3]}, {"$deleteFromPrimitiveList/nonMergingIntList": [2]}) == \
        {"nonMergingIntList": [1, 3]}
    assert smp({"mergingIntList": [1, 2]}, {"$deleteFromPrimitiveList/mergingIntList": [3]}) == \
        {"mergingIntList": [1, 2]}
    assert smp({"mergingIntList": None}, {"$deleteFromPrimitiveList/mergingIntList": [3]}) == \
        {"mergingIntList": None}
    assert smp({"name": "x"}, {"$deleteFromPrimitiveList/mergingIntList": [3]}) == {"name": "x"}
    e = smp_error({"mergingIntList": [1]}, {"$deleteFromPrimitiveListX/mergingIntList": [1]})
    assert (e.code, e.reason, e.message) == (400, "BadRequest", "invalid patch format of primitive list")


def test_delete_from_primitive_list_removes_duplicates_and_set_order_keeps_server_only_items():
    # "delete all duplicate items in lists of scalars": current 1 2 3 3 4 → 1 2 4
    patch = {"$setElementOrder/mergingIntList": [1, 2], "$deleteFromPrimitiveList/mergingIntList": [3]}
    assert smp({"mergingIntList": [1, 2, 3, 3, 4]}, patch) == {"mergingIntList": [1, 2, 4]}


@pytest.mark.parametrize("current, order, expected", [
    # "set elements order in a list": the order wins, fields of live items stay
    ([1, 3, 4, 2], [4, 2, 3, 1], [4, 2, 3, 1]),
    # "... with server-only items": 9 is only on the server and stays last
    ([1, 3, 4, 2, 9], [4, 2, 3, 1], [4, 2, 3, 1, 9]),
    # "... 2": a server-only item keeps its place after the items it followed
    ([1, 2, 9, 3, 4], [2, 1, 4, 3], [2, 1, 9, 4, 3]),
    # "... 3"
    ([1, 2, 7, 9, 8, 3, 4], [2, 1, 4, 3], [2, 1, 7, 9, 8, 4, 3]),
])
def test_set_element_order(current, order, expected):
    live = {"mergingList": [{"name": n, "value": str(n)} for n in current]}
    out = smp(live, {"$setElementOrder/mergingList": [{"name": n} for n in order]})
    assert names(out["mergingList"]) == expected
    assert all(i["value"] == str(i["name"]) for i in out["mergingList"])


def test_set_element_order_with_duplicate_merge_keys():
    # "behavior of set element order for a merging list with duplicate": both 2s move to the front
    live = {"mergingList": [{"name": 1}, {"name": 2, "value": "dup1"}, {"name": 3}, {"name": 2, "value": "dup2"},
                            {"name": 4}]}
    out = smp(live, {"$setElementOrder/mergingList": [{"name": n} for n in (2, 1, 4, 3, 2)]})
    assert out["mergingList"] == [{"name": 2, "value": "dup1"}, {"name": 2, "value": "dup2"}, {"name": 1},
                                  {"name": 4}, {"name": 3}]


def test_set_element_order_must_agree_with_the_patch_list():
    # "should check if order in $setElementOrder and patch list match"
    patch = {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}, {"name": 3}],
             "mergingList": [{"name": 3, "value": "3"}, {"name": 1, "value": "1"}]}
    e = smp_error({"mergingList": [{"name": 1}, {"name": 3}, {"name": 2}]}, patch)
    assert e.code == 500 and "doesn't match $setElementOrder list" in e.message


def test_set_element_order_with_an_item_missing_from_the_list():
    # "$setElementOrder contains item that is not present in the list to be merged": 2 is ignored
    patch = {"$setElementOrder/mergingList": [{"name": 3}, {"name": 2}, {"name": 1}],
             "mergingList": [{"name": 3, "value": "3"}, {"name": 1, "value": "1"}]}
    out = smp({"mergingList": [{"name": 1}, {"name": 3}]}, patch)
    assert out == {"mergingList": [{"name": 3, "value": "3"}, {"name": 1, "value": "1"}]}


def test_missing_merge_key():
    e = smp_error({"mergingList": [{"name": 1, "value": "a"}]}, {"mergingList": [{"value": "b"}]})
    assert (e.code, e.reason, e.message) == (500, "", "map: map[value:b] does not contain declared merge key: name")


def test_retain_keys_clears_fields_not_listed():
    # "retainKeys map should clear defaulted field"
    current = {"retainKeysMap": {"name": "foo", "value": "bar", "other": "x"}}
    out = smp(current, {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "baz"}})
    assert out == {"retainKeysMap": {"name": "foo", "value": "baz"}}
    # "retainKeys list of maps clears a field": within each merged item of a merge,retainKeys list
    current = {"retainKeysMergingList": [{"name": "a", "value": "1", "other": "o"}, {"name": "b", "value": "2"}]}
    out = smp(current, {"retainKeysMergingList": [{"name": "a", "$retainKeys": ["name", "other"]}]})
    assert out == {"retainKeysMergingList": [{"name": "a", "other": "o"}, {"name": "b", "value": "2"}]}


def test_retain_keys_must_list_every_field_the_patch_sets():
    e = smp_error({"retainKeysMap": {"name": "a"}}, {"retainKeysMap": {"$retainKeys": ["name"], "value": "v"}})
    assert (e.code, e.reason, e.message) == (400, "BadRequest", "invalid patch format of retainKeys")
    e = smp_error({"retainKeysMap": {"name": "a"}}, {"retainKeysMap": {"$retainKeys": "name"}})
    assert e.message == "invalid patch format of retainKeys"


def test_lists_of_lists_and_mixed_lists():
    e = smp_error({"mergingIntList": [[1]]}, {"mergingIntList": [[2]]})
    assert (e.code, e.reason) == (422, "Invalid")   # ErrNoListOfLists through NewGenericServerResponse
    e = smp_error({"mergingIntList": [1]}, {"mergingIntList": ["a"]})
    assert (e.code, e.message) == (500, "list element types are not identical: [[1] [a]]")


def test_unknown_field_with_both_sides_objects():
    e = smp_error({"mystery": {"a": "1"}}, {"mystery": {"b": "2"}})
    assert e.message == 'unable to find api field in struct MergeItem for the json field "mystery"'


# ------------------------------------------------------------------------------------------------ real kinds

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "finalizers": ["a", "b"]},
       "spec": {"containers": [{"name": "app", "image": "nginx:1", "ports": [{"containerPort": 80}]},
                               {"name": "log", "image": "busybox"}],
                "volumes": [{"name": "data", "emptyDir": {}}]}}
POD_SCHEMA = type_schema(32, "v1", "Pod")


def test_pod_containers_merge_by_name():
    out = apply_patch(POD, b'{"spec":{"containers":[{"name":"log","image":"busybox:2"}]}}',
                      STRATEGIC_MERGE_PATCH, POD_SCHEMA).object
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [("app", "nginx:1"), ("log", "busybox:2")]


def test_volumes_retain_keys_swaps_the_volume_source():
    # PodSpec.volumes is patchStrategy merge,retainKeys: kubectl sends $retainKeys when the source changes
    body = b'{"spec":{"volumes":[{"name":"data","$retainKeys":["hostPath","name"],"hostPath":{"path":"/d"}}]}}'
    out = apply_patch(POD, body, STRATEGIC_MERGE_PATCH, POD_SCHEMA).object
    assert out["spec"]["volumes"] == [{"name": "data", "hostPath": {"path": "/d"}}]


def test_finalizers_merge_as_a_set():
    # ObjectMeta.finalizers is patchStrategy merge (a list of scalars)
    out = apply_patch(POD, b'{"metadata":{"finalizers":["b","c"]}}', STRATEGIC_MERGE_PATCH, POD_SCHEMA).object
    assert out["metadata"]["finalizers"] == ["a", "b", "c"]


def test_deployment_strategy_retain_keys():
    schema = type_schema(32, "apps/v1", "Deployment")
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
           "spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    body = b'{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}'
    assert apply_patch(dep, body, STRATEGIC_MERGE_PATCH, schema).object["spec"]["strategy"] == {"type": "Recreate"}


def test_strict_field_validation_of_a_strategic_merge_patch():
    body = b'{"spec":{"foo":1,"containers":[{"name":"app","bar":true}]}}'
    with pytest.raises(ApiError) as e:
        apply_patch(POD, body, STRATEGIC_MERGE_PATCH, POD_SCHEMA, "Strict")
    # NewInvalid(GroupKind{}, "", [patch: Invalid value: fmt %+v of the patch map: strict decoding error])
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert e.value.message == (
        ' "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[bar:true name:app]] foo:1]]": '
        'strict decoding error: unknown field "spec.containers[0].bar", unknown field "spec.foo"')
    warned = apply_patch(POD, body, STRATEGIC_MERGE_PATCH, POD_SCHEMA, "Warn")
    assert warned.warnings == ['unknown field "spec.containers[0].bar"', 'unknown field "spec.foo"']
    assert "foo" not in warned.object["spec"] and "bar" not in warned.object["spec"]["containers"][0]
    ignored = apply_patch(POD, body, STRATEGIC_MERGE_PATCH, POD_SCHEMA, "Ignore")
    assert ignored.warnings == [] and "foo" not in ignored.object["spec"]


def test_status_fields_unknown_to_the_type_are_pruned():
    body = b'{"status":{"kopf":{"progress":{}},"phase":"Running"}}'
    out = apply_patch(POD, body, MERGE_PATCH, POD_SCHEMA).object
    assert out["status"] == {"phase": "Running"}


def test_strategic_merge_body_must_be_an_object():
    e = smp_error(POD, [1], POD_SCHEMA)
    assert (e.code, e.message) == (400, "json: cannot unmarshal array into Go value of type map[string]interface {}")
    with pytest.raises(ApiError) as err:
        apply_patch(POD, b"{not json", STRATEGIC_MERGE_PATCH, POD_SCHEMA)
    assert (err.value.code, err.value.message) == (400, "invalid JSON patch")
    assert apply_patch(POD, b"null", STRATEGIC_MERGE_PATCH, POD_SCHEMA).object == POD


# ------------------------------------------------------------------------------------------------ content types

def test_patch_types_and_custom_resources():
    assert patch_type("application/merge-patch+json; charset=utf-8", custom=False) == MERGE_PATCH
    with pytest.raises(ApiError) as e:
        patch_type(STRATEGIC_MERGE_PATCH, custom=True)
    assert (e.value.code, e.value.reason) == (415, "UnsupportedMediaType")
    assert e.value.message == ("the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, "
                               "application/apply-patch+yaml")
    assert STRATEGIC_MERGE_PATCH in patch_types(custom=False)
    with pytest.raises(ApiError) as e:
        apply_patch({}, b"{}", "text/plain", None)
    assert e.value.code == 415


# ------------------------------------------------------------------------------------------------ merge patch

def test_merge_patch_rfc7386():
    doc = {"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]}
    out = apply_patch(doc, b'{"a":"z","c":{"f":null,"n":{"x":null,"y":1}},"l":[3,null]}', MERGE_PATCH, None).object
    # nulls delete; a new object loses its nulls; arrays replace whole and keep their nulls
    assert out == {"a": "z", "c": {"d": "e", "n": {"y": 1}}, "l": [3, None]}


def test_merge_patch_refuses_null_and_scalars():
    for body in (b"null", b'"x"', b"3"):
        with pytest.raises(ApiError) as e:
            apply_patch({"a": 1}, body, MERGE_PATCH, None)
        assert (e.value.code, e.value.message) == (400, "Invalid JSON Patch")


# ------------------------------------------------------------------------------------------------ JSON patch

def jp(doc: object, ops: list) -> object:
    return apply_patch(doc, json.dumps(ops).encode(), JSON_PATCH, None).object


def jp_fails(doc: object, ops: object) -> ApiError:
    with pytest.raises(ApiError) as e:
        apply_patch(doc, json.dumps(ops).encode(), JSON_PATCH, None)
    return e.value


def test_json_patch_operations():
    doc = {"spec": {"replicas": 1, "list": ["a", "b"]}, "metadata": {"labels": {"x/y": "1"}}}
    out = jp(doc, [{"op": "replace", "path": "/spec/replicas", "value": 3},
                   {"op": "add", "path": "/spec/list/1", "value": "c"},
                   {"op": "add", "path": "/spec/list/-", "value": "z"},
                   {"op": "remove", "path": "/metadata/labels/x~1y"},
                   {"op": "copy", "from": "/spec/replicas", "path": "/spec/copied"},
                   {"op": "move", "from": "/spec/copied", "path": "/spec/moved"},
                   {"op": "test", "path": "/spec/moved", "value": 3}])
    assert out == {"spec": {"replicas": 3, "list": ["a", "c", "b", "z"], "moved": 3}, "metadata": {"labels": {}}}


def test_json_patch_v4_quirks():
    # replace of a missing object key sets it; negative indexes count from the end; a missing value is null
    assert jp({"a": {}}, [{"op": "replace", "path": "/a/b", "value": 1}]) == {"a": {"b": 1}}
    assert jp({"l": [1, 2, 3]}, [{"op": "remove", "path": "/l/-1"}]) == {"l": [1, 2]}
    assert jp({"a": {}}, [{"op": "add", "path": "/a/b"}]) == {"a": {"b": None}}
    # test of an absent key with a null value passes
    assert jp({"a": {}}, [{"op": "test", "path": "/a/b", "value": None}]) == {"a": {}}


@pytest.mark.parametrize("ops", [
    [{"op": "remove", "path": "/missing"}],
    [{"op": "add", "path": "/a/b/c", "value": 1}],
    [{"op": "replace", "path": "/l/5", "value": 1}],
    [{"op": "add", "path": "/l/4", "value": 1}],
    [{"op": "test", "path": "/l/0", "value": 2}],
    [{"op": "frobnicate", "path": "/l"}],
    [{"op": "add", "value": 1}],
    [{"op": "add", "path": "", "value": {}}],
])
def test_json_patch_failures_are_422(ops):
    e = jp_fails({"l": [1, 2]}, ops)
    assert (e.code, e.reason, e.message) == (422, "Invalid",
                                             "the server rejected our request due to an error in our request")


def test_json_patch_decoding_errors_are_400():
    e = jp_fails({}, {"op": "add"})
    assert (e.code, e.message) == (400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    e = jp_fails({}, [1])
    assert (e.code, e.message) == (400, "json: cannot unmarshal number into Go value of type jsonpatch.Operation")


def test_json_patch_operation_limit():
    e = jp_fails({}, [{"op": "test", "path": "/a"}] * 10001)
    assert (e.code, e.reason) == (413, "RequestEntityTooLarge")
    assert e.message == ("Request entity too large: The allowed maximum operations in a JSON patch is 10000, "
                         "got 10001")

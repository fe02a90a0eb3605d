"""PATCH bodies: strategic merge patch, JSON merge patch (RFC 7386) and JSON patch (RFC 6902), as
kube-apiserver applies them (k8s.io/apiserver pkg/endpoints/handlers/patch.go).

Public API:

- ``patch_types(custom) -> list[str]``: the Content-Types a PATCH accepts, in upstream's order (installer.go
  for built-in kinds; customresource_handler.go for custom resources, which have no strategic merge patch).
- ``patch_type(content_type, custom) -> str``: the Content-Type without its parameters; anything not accepted
  is 415 UnsupportedMediaType "the body of the request was in an unknown format - accepted media types
  include: …" (how a strategic merge patch of a custom resource is refused).
- ``apply_patch(original, patch, content_type, schema, validation="Ignore") -> Patched``: the patched object
  (pruned to the built-in type when ``schema`` is given) and the strict-decoding warnings when ``validation``
  is ``Warn``. ``schema`` is ``podlife.api.schema.type_schema(...)`` of the object's kind, or None for a custom
  resource. Server-side apply (application/apply-patch+yaml) is ``podlife.apiserver.fieldmanager.apply``.
  Errors are ``ApiError`` with upstream's codes and messages: 400 for malformed bodies and bad directives,
  422 when a JSON patch does not apply, 413 beyond 10,000 operations, 500 (reason empty) for the strategic
  merge patch errors upstream does not classify.

The strategic merge follows apimachinery pkg/util/strategicpatch/patch.go (mergeMap, mergeSlice and the
directives $patch, $retainKeys, $deleteFromPrimitiveList/<list>, $setElementOrder/<list>), with patch
strategies and merge keys read from the schema's x-kubernetes-patch-strategy / x-kubernetes-patch-merge-key,
which are generated from the same struct tags upstream reads. The JSON patch follows
gopkg.in/evanphx/json-patch.v4, the library kube-apiserver applies JSON patches with (its quirks included:
``replace`` of a missing object key adds it, negative array indexes count from the end, a missing ``value``
is null, the segment before a path's first ``/`` is ignored).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from podlife.api import decoding
from podlife.api.duplicates import patch_duplicates
from podlife.api.errors import ApiError
from podlife.api.fieldvalidation import IGNORE, patched_body
from podlife.api.gofmt import go_json, go_quote, go_type, go_value
from podlife.api.schema import TypeSchema

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

MAX_JSON_PATCH_OPERATIONS = 10000   # handlers/patch.go maxJSONPatchOperations
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024   # apiserver server/config.go JSONPatchMaxCopyBytes


@dataclass
class Patched:
    object: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    strict: list[str] = field(default_factory=list)   # a custom resource's: the patch body's own strict errors


def patch_types(custom: bool) -> list[str]:
    """installer.go (built-in) and apiextensions customresource_handler.go supportedTypes; application/apply-
    patch+cbor only with the CBORServingAndStorage gate, which no modelled version enables by default."""
    if custom:
        return [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]
    return [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH]


def patch_type(content_type: str, custom: bool) -> str:
    """handlers/patch.go PatchResource: the part before ';' must be one of the accepted types."""
    base = content_type.split(";", 1)[0] if content_type.find(";") > 0 else content_type
    accepted = patch_types(custom)
    if base not in accepted:
        # negotiation.NewUnsupportedMediaTypeError
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                                    f"accepted media types include: {', '.join(accepted)}")
    return base


def apply_patch(original: dict[str, Any], patch: bytes, content_type: str, schema: TypeSchema | None,
                validation: str = IGNORE, typed: bool = False) -> Patched:
    """The patched object; ``typed``: decoded into the kind's Go types as the API server's patch handler does
    (a value of the wrong type is 422), with the live API's limits."""
    kind = patch_type(content_type, custom=schema is None)
    if kind == APPLY_PATCH:
        raise ValueError("server-side apply goes through podlife.apiserver.fieldmanager.apply")
    try:   # validateAndTranscodePatch: the body must be JSON before anything else
        doc = decoding.parse_json(patch.encode() if isinstance(patch, str) else bytes(patch))
    except decoding.DecodeError as e:   # util/json: deeper than the decoder follows
        raise ApiError(400, "BadRequest", str(e)) from None
    except ValueError:
        raise ApiError(400, "BadRequest", "invalid JSON patch") from None
    # the body's own strict errors (repeated keys; a JSON patch's unknown op fields) come first
    strict = patch_duplicates(patch, kind == JSON_PATCH) if validation != IGNORE else []
    current = copy.deepcopy(original)
    if kind == STRATEGIC_MERGE_PATCH:
        if not isinstance(doc, dict) and doc is not None:
            # kjson.UnmarshalCaseSensitivePreserveInts into map[string]interface{}
            raise ApiError(400, "BadRequest", f"json: cannot unmarshal {decoding.json_kind(doc)} into Go value of type "
                                              "map[string]interface {}")
        patch_map = doc or {}
        try:
            result = _merge_map(current, patch_map, schema)
        except _SmpError as e:
            raise e.api_error() from None
        return _finish(result, schema, validation, lambda: go_value(patch_map), strict, smp=True, typed=typed)
    if kind == MERGE_PATCH:
        result = merge_patch(current, doc)
    else:
        result = json_patch(current, doc)
    return _finish(result, schema, validation, lambda: go_json(result), strict, typed=typed)


def _finish(result: Any, schema: TypeSchema | None, validation: str, shown: Any, strict: list[str],
            smp: bool = False, typed: bool = False) -> Patched:
    if not isinstance(result, dict):
        # the patched document must decode into the kind's type (runtime.DecodeInto)
        raise ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: {json.dumps(go_json(result))}: '
                                       f"json: cannot unmarshal {decoding.json_kind(result)} into Go value of type "
                                       "map[string]interface {}")
    if decoding.depth_of(result) > decoding.MAX_DEPTH:   # a JSON patch can move a value under itself
        raise ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: "": exceeded max depth of '
                                       f"{decoding.MAX_DEPTH}")
    if schema is None:
        return Patched(decoding.untyped_numbers(result) if typed else result, strict=strict)
    if not typed:
        obj, warnings = patched_body(result, schema, validation, shown() if validation != IGNORE else "", strict)
        return Patched(obj, warnings)
    # the patched object decoded into the Go type: the JSON of a JSON or merge patch (jsonPatcher
    # applyPatchToCurrentObject: runtime.DecodeInto), the map of a strategic merge patch (applyPatchToObject:
    # DefaultUnstructuredConverter.FromUnstructuredWithValidation); either failure is 422 on "patch"
    if smp:
        try:
            result = decoding.convert_unstructured(result, schema)
        except decoding.DecodeError as e:
            raise ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: {go_quote(shown())}: {e}') from None
    else:
        err = decoding.type_error(result, schema)
        if err is not None:
            raise ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: {go_quote(shown())}: {err}')
    decoding.untyped_numbers(result)
    obj, warnings = patched_body(result, schema, validation, shown() if validation != IGNORE else "", strict)
    return Patched(obj, warnings)


# ------------------------------------------------------------------------------------------------ merge patch

def merge_patch(doc: Any, patch: Any) -> Any:
    """RFC 7386 as evanphx/json-patch v4 MergePatch: a null patch is refused, an array patch replaces the
    document, nulls inside added values are dropped (but kept inside arrays)."""
    if patch is None or not isinstance(patch, (dict, list)):
        raise ApiError(400, "BadRequest", "Invalid JSON Patch")   # jsonpatch.ErrBadJSONPatch
    if isinstance(patch, list):
        _prune_nulls(patch)
        return patch
    _merge_docs(doc, patch)
    return doc


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    for k, v in patch.items():
        if v is None:
            doc.pop(k, None)
        elif doc.get(k) is None:
            _prune_nulls(v)
            doc[k] = v
        else:
            doc[k] = _merge_value(doc[k], v)


def _merge_value(cur: Any, patch: Any) -> Any:
    if not isinstance(cur, dict):
        _prune_nulls(patch)
        return patch
    if not isinstance(patch, dict):
        return patch
    _merge_docs(cur, patch)
    return cur


def _prune_nulls(n: Any) -> None:
    if isinstance(n, dict):
        for k in [k for k, v in n.items() if v is None]:
            del n[k]
        for v in n.values():
            _prune_nulls(v)
    elif isinstance(n, list):
        for v in n:
            if v is not None:
                _prune_nulls(v)


# ------------------------------------------------------------------------------------------------ JSON patch

class _OpFailed(Exception):
    pass


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902 as evanphx/json-patch v4 (DecodePatch, Patch.Apply). A failing operation is 422 with
    NewGenericServerResponse's fixed message (upstream does not pass the library's error text on)."""
    if ops is None:
        return doc
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", f"json: cannot unmarshal {decoding.json_kind(ops)} into Go value of type "
                                          "jsonpatch.Patch")
    for op in ops:
        if not isinstance(op, dict) and op is not None:
            raise ApiError(400, "BadRequest", f"json: cannot unmarshal {decoding.json_kind(op)} into Go value of type "
                                              "jsonpatch.Operation")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum operations "
                                                     f"in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}")
    root = [doc]   # a box, so that replacing the whole document works
    copied = [0]   # bytes the copy operations added so far
    try:
        for op in ops:
            _apply_op(root, op or {}, copied)
    except _OpFailed:
        raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request") from None
    return root[0]


_INT = re.compile(r"[+-]?[0-9]+")


def _index(container: list[Any], key: str, size: int) -> int:
    """strconv.Atoi plus SupportNegativeIndices (on by default): -1 is the last element."""
    if not _INT.fullmatch(key):
        raise _OpFailed
    idx = int(key)
    if idx < 0:
        if idx < -size:
            raise _OpFailed
        idx += size
    return idx


def _get(con: Any, key: str) -> Any:
    if isinstance(con, dict):
        return con.get(key)
    idx = _index(con, key, len(con))
    if idx >= len(con):
        raise _OpFailed
    return con[idx]


def _find(root: list[Any], path: str) -> tuple[Any, str]:
    """findObject: walks every segment but the first (before the leading '/') and the last."""
    split = path.split("/")
    if len(split) < 2:
        raise _OpFailed
    doc = root[0]
    for part in split[1:-1]:
        nxt = _get(doc, _unescape(part))
        if not isinstance(nxt, (dict, list)):
            raise _OpFailed
        doc = nxt
    return doc, _unescape(split[-1])


def _unescape(k: str) -> str:
    return k.replace("~1", "/").replace("~0", "~")


def _add(con: Any, key: str, val: Any) -> None:
    if isinstance(con, dict):
        con[key] = val
        return
    if key == "-":
        con.append(val)
        return
    if not _INT.fullmatch(key):
        raise _OpFailed
    idx = int(key)
    size = len(con) + 1
    if idx >= size:
        raise _OpFailed
    if idx < 0:
        if idx < -size:
            raise _OpFailed
        idx += size
    con.insert(idx, val)


def _remove(con: Any, key: str) -> None:
    if isinstance(con, dict):
        if key not in con:
            raise _OpFailed
        del con[key]
        return
    if not _INT.fullmatch(key):
        raise _OpFailed
    idx = int(key)
    if idx >= len(con):
        raise _OpFailed
    if idx < 0:
        if idx < -len(con):
            raise _OpFailed
        idx += len(con)
    del con[idx]


def _str_field(op: dict[str, Any], name: str) -> str:
    v = op.get(name)
    if not isinstance(v, str):
        raise _OpFailed
    return v


def _apply_op(root: list[Any], op: dict[str, Any], copied: list[int]) -> None:
    kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
    if kind == "add":
        con, key = _find(root, _str_field(op, "path"))
        _add(con, key, op.get("value"))
    elif kind == "remove":
        con, key = _find(root, _str_field(op, "path"))
        _remove(con, key)
    elif kind == "replace":
        path = _str_field(op, "path")
        if path == "":
            if not isinstance(op.get("value"), (dict, list)):
                raise _OpFailed
            root[0] = op["value"]
            return
        con, key = _find(root, path)
        _get(con, key)   # a missing object key is no error: the value is set
        if isinstance(con, dict):
            con[key] = op.get("value")
        else:
            con[_index(con, key, len(con))] = op.get("value")
    elif kind == "move":
        con, key = _find(root, _str_field(op, "from"))
        val = _get(con, key)
        _remove(con, key)
        con, key = _find(root, _str_field(op, "path"))
        _add(con, key, val)
    elif kind == "copy":
        con, key = _find(root, _str_field(op, "from"))
        val = _get(con, key)
        # AccumulatedCopySizeLimit, which the API server sets to JSONPatchMaxCopyBytes (3 MiB): copies that
        # double a value would otherwise grow the object exponentially (AccumulatedCopySizeError, 422)
        copied[0] += len(json.dumps(val, separators=(",", ":")))
        if copied[0] > MAX_JSON_PATCH_COPY_BYTES:
            raise _OpFailed
        con, key = _find(root, _str_field(op, "path"))
        _add(con, key, copy.deepcopy(val))
    elif kind == "test":
        path = _str_field(op, "path")
        if path == "":
            if not _json_equal(root[0], op.get("value")):
                raise _OpFailed
            return
        con, key = _find(root, path)
        val = _get(con, key)
        if val is None or op.get("value") is None:
            if val is not None or op.get("value") is not None:
                raise _OpFailed
            return
        if not _json_equal(val, op["value"]):
            raise _OpFailed
    else:
        raise _OpFailed   # "Unexpected kind"


def _json_equal(a: Any, b: Any) -> bool:
    """lazyNode.equal: objects and arrays structurally, other values by their JSON text."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                and all(_json_equal(a[k], b[k]) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)
                and all(_json_equal(x, y) for x, y in zip(a, b)))
    return json.dumps(a) == json.dumps(b)


# ------------------------------------------------------------------------------------------------ strategic merge

DIRECTIVE = "$patch"
DELETE, REPLACE, MERGE = "delete", "replace", "merge"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"


class _SmpError(Exception):
    """A strategic merge patch error and how interpretStrategicMergePatchError classifies it."""

    def __init__(self, message: str, code: int = 500):
        super().__init__(message)
        self.message, self.code = message, code

    def api_error(self) -> ApiError:
        if self.code == 400:
            return ApiError(400, "BadRequest", self.message)
        if self.code == 422:   # NewGenericServerResponse(422, ...) keeps only its fixed message
            return ApiError(422, "Invalid", "the server rejected our request due to an error in our request")
        return ApiError(500, "", self.message)   # not a Status error: ErrorToAPIStatus, reason Unknown ("")


# mergepatch/errors.go
def _bad_primitive_list() -> _SmpError:
    return _SmpError("invalid patch format of primitive list", 400)


def _bad_retain_keys() -> _SmpError:
    return _SmpError("invalid patch format of retainKeys", 400)


def _bad_set_element_order() -> _SmpError:
    return _SmpError("invalid patch format of setElementOrder list", 400)


def _no_merge_key(m: dict[str, Any], key: str) -> _SmpError:
    return _SmpError(f"map: {go_value(m)} does not contain declared merge key: {key}")


def _bad_arg_type(expected: str, actual: Any) -> _SmpError:
    return _SmpError(f"expected a {expected}, but received a {go_type(actual)}")


def _bad_patch_type(t: Any, m: dict[str, Any]) -> _SmpError:
    shown = t if isinstance(t, str) else f"%!s({go_type(t)}={go_value(t)})"
    return _SmpError(f"unknown patch type: {shown} in map: {go_value(m)}")


_MAP, _SLICE = "map[string]interface {}", "[]interface {}"


@dataclass(frozen=True)
class _Meta:
    strategies: tuple[str, ...]
    merge_key: str


def _lookup_struct(schema: TypeSchema | None, key: str) -> tuple[TypeSchema | None, _Meta]:
    """PatchMetaFromStruct.LookupPatchMetadataForStruct (forked encoding/json field lookup: exact name first,
    then case-insensitive)."""
    if schema is None:
        return None, _Meta(("",), "")
    if schema.is_map:
        raise _SmpError("merging an object in json but data type is not struct, instead is: map")
    if schema.is_list:
        raise _SmpError("merging an object in json but data type is not struct, instead is: slice")
    hit = schema.field(key)
    if hit is None:
        folded = [k for k in schema.fields() if k.lower() == key.lower()]
        hit = schema.field(folded[0]) if folded else None
    if hit is None:
        raise _SmpError(f'unable to find api field in struct {schema.go_name} for the json field "{key}"')
    child, prop = hit
    strategies = tuple(str(prop.get("x-kubernetes-patch-strategy", "")).split(","))
    return child, _Meta(strategies, str(prop.get("x-kubernetes-patch-merge-key", "")))


def _lookup_slice(schema: TypeSchema | None, key: str) -> tuple[TypeSchema | None, _Meta]:
    child, meta = _lookup_struct(schema, key)
    if child is None:
        return None, meta
    if not child.is_list:
        raise _SmpError("expected slice or array type, but got: struct")
    items = child.items()
    if items.is_list:
        raise _SmpError("unexpected slice of slice")
    return items, meta


def _strategy(strategies: tuple[str, ...]) -> str:
    """extractRetainKeysPatchStrategy: the strategy other than retainKeys."""
    if len(strategies) == 1:
        return "" if strategies[0] == "retainKeys" else strategies[0]
    if len(strategies) == 2 and "retainKeys" in strategies:
        return strategies[1] if strategies[0] == "retainKeys" else strategies[0]
    raise _SmpError(f"unexpected patch strategy: [{' '.join(strategies)}]")


def _same_type(a: Any, b: Any) -> bool:
    return go_type(a) == go_type(b)


def _eq(a: Any, b: Any) -> bool:
    """Go's == on interface values: same dynamic type and value."""
    return _same_type(a, b) and not isinstance(a, (dict, list)) and a == b


def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], schema: TypeSchema | None) -> dict[str, Any]:
    """mergeMap with MergeParallelList and IgnoreUnmatchedNulls, as the API server applies a patch."""
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == REPLACE:
            del patch[DIRECTIVE]
            return patch
        if directive == DELETE:
            return {}
        raise _bad_patch_type(directive, patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for k in list(patch):
        if k not in patch:
            continue
        patch_v = patch[k]
        is_delete_list = False
        if k.startswith(DELETE_FROM_PRIMITIVE_LIST):
            k = _extract_key(k, DELETE_FROM_PRIMITIVE_LIST)
            is_delete_list = True
        if patch_v is None:
            original.pop(k, None)
            continue
        if k not in original or not _same_type(original[k], patch_v):
            if not is_delete_list:
                _discard_nulls(patch_v)
                keep, value = _remove_directives(patch_v)
                if keep:
                    original[k] = value
                else:
                    original.pop(k, None)
            continue
        if isinstance(patch_v, dict):
            sub, meta = _lookup_struct(schema, k)
            if _strategy(meta.strategies) != REPLACE:
                original[k] = _merge_map(original[k], patch_v, sub)
            else:
                original[k] = patch_v
        elif isinstance(patch_v, list):
            sub, meta = _lookup_slice(schema, k)
            original[k] = _merge_slice_handler(original[k], patch_v, sub, _strategy(meta.strategies),
                                               meta.merge_key, is_delete_list)
        else:
            keep, value = _remove_directives(patch_v)
            if keep:
                original[k] = value
            else:
                original.pop(k, None)
    return original


def _extract_key(s: str, prefix: str) -> str:
    parts = s.split("/", 1)
    if len(parts) <= 1 or parts[0] != prefix:
        raise _bad_primitive_list() if prefix == DELETE_FROM_PRIMITIVE_LIST else _bad_set_element_order()
    return parts[1]


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """applyRetainKeysDirective: keys of ``original`` not listed are cleared; the patch may set only listed
    keys."""
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _bad_retain_keys()
    for k, v in patch.items():
        if v is None or k.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if not any(_eq(k, r) for r in retain):
            raise _bad_retain_keys()
    for k in list(original):
        if not any(_eq(k, r) for r in retain):
            del original[k]


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], schema: TypeSchema | None) -> None:
    """mergePatchIntoOriginal: each $setElementOrder/<list> with its list, merged and put in that order."""
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _bad_arg_type(_SLICE, order)
        list_key = _extract_key(key, SET_ELEMENT_ORDER)
        found_original, found_patch = list_key in original, list_key in patch
        original_list = original.get(list_key)
        patch_list = patch.get(list_key)
        if found_original and not isinstance(original_list, list):
            raise _bad_arg_type(_SLICE, original_list)
        if found_patch and not isinstance(patch_list, list):
            raise _bad_arg_type(_SLICE, patch_list)
        sub, meta = _lookup_slice(schema, list_key)
        strategy = _strategy(meta.strategies)
        _validate_order(patch_list or [], order, meta.merge_key)
        if found_original and not found_patch:
            assert isinstance(original_list, list)   # found_original: a non-list was refused above
            merged = original_list
        elif not found_original and found_patch:
            merged = _remove_directives(patch_list)[1]
        elif found_original and found_patch:
            merged = _merge_slice_handler(original_list, patch_list, sub, strategy, meta.merge_key, False)
        else:
            continue
        if not meta.merge_key:
            in_patch, server_only = _partition_primitives(merged, order)
        else:
            in_patch, server_only = _partition_maps(merged, order, meta.merge_key)
        is_map = _element_type(original_list or [], patch_list or []) == _MAP
        original[list_key] = _normalize_order(in_patch, server_only, order, original_list or [], meta.merge_key,
                                              is_map)
        patch.pop(list_key, None)


def _validate_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """validatePatchWithSetOrderList: the patch's items appear in $setElementOrder, in the same order."""
    if not order or not patch_list:
        return
    items = _split_deletions(patch_list)[0] if merge_key else patch_list
    p = s = 0
    while p < len(items) and s < len(order):
        if isinstance(items[p], dict) and DIRECTIVE in items[p]:
            p += 1
            continue
        if _merge_key_equal(items[p], order[s], merge_key):
            p += 1
        s += 1
    if p < len(items) and s >= len(order):
        raise _SmpError(f"The order in patch list:\n{go_value(patch_list)}\n doesn't match {SET_ELEMENT_ORDER} "
                        f"list:\n{go_value(order)}\n")


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _eq(left, right)
    if not isinstance(left, dict):
        raise _bad_arg_type(_MAP, left)
    if not isinstance(right, dict):
        raise _bad_arg_type(_MAP, right)
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return _eq(left[merge_key], right[merge_key])


def _merge_slice_handler(original: Any, patch: Any, schema: TypeSchema | None, strategy: str, merge_key: str,
                         is_delete_list: bool) -> list[Any]:
    if not isinstance(original, list):
        raise _bad_arg_type(_SLICE, original)
    if not isinstance(patch, list):
        raise _bad_arg_type(_SLICE, patch)
    if strategy == MERGE or is_delete_list:
        return _merge_slice(original, patch, schema, merge_key, is_delete_list)
    return patch


def _element_type(*lists: list[Any]) -> str:
    """sliceElementType: every element of the same Go type, not a list."""
    prev: str | None = None
    for values in lists:
        for v in values:
            current = go_type(v)
            if prev is None:
                prev = current
                if prev == _SLICE:
                    raise _SmpError("lists of lists are not supported", 422)   # ErrNoListOfLists
            elif prev != current:
                raise _SmpError(f"list element types are not identical: {go_value(list(lists))}")
    if prev is None:
        raise _SmpError("no elements in any of the given slices")
    return prev


def _merge_slice(original: list[Any], patch: list[Any], schema: TypeSchema | None, merge_key: str,
                 is_delete_list: bool) -> list[Any]:
    if not original and not patch:
        return original
    is_map = _element_type(original, patch) == _MAP
    if not is_map:
        if is_delete_list:
            return [v for v in original if not any(_eq(v, d) for d in patch)]
        merged = _dedup_scalars(original + patch)
    else:
        if not merge_key:
            raise _SmpError("cannot merge lists without merge key for struct")
        original, patch = _merge_special_elements(original, patch, merge_key)
        merged = _merge_without_special_elements(original, patch, schema, merge_key)
    if not merge_key:
        in_patch, server_only = _partition_primitives(merged, patch)
    else:
        in_patch, server_only = _partition_maps(merged, patch, merge_key)
    return _normalize_order(in_patch, server_only, patch, original, merge_key, is_map)


def _dedup_scalars(s: list[Any]) -> list[Any]:
    """deduplicateScalars, including the way it moves the last element into a duplicate's place (the order is
    normalized afterwards)."""
    s = list(s)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _eq(s[i], s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def _merge_special_elements(original: list[Any], patch: list[Any], merge_key: str
                            ) -> tuple[list[Any], list[Any]]:
    """mergeSliceWithSpecialElements: {$patch: delete, key: v} removes the matching items, {$patch: replace}
    makes the rest of the patch the list."""
    plain: list[Any] = []
    replace = False
    for v in patch:
        if DIRECTIVE not in v:
            plain.append(v)
            continue
        directive = v[DIRECTIVE]
        if directive == DELETE:
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
            original = [o for o in original if not (merge_key in o and _eq(o[merge_key], v[merge_key]))]
        elif directive == REPLACE:
            replace = True
        elif directive == MERGE:
            raise _SmpError("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, v)
    if replace:
        return plain, []
    return original, plain


def _find_by_key(items: list[Any], key: str, value: Any) -> int:
    for i, v in enumerate(items):
        if not isinstance(v, dict):
            raise _SmpError(f"value for key {i} is not a map")
        if key in v and _eq(v[key], value):
            return i
    return -1


def _merge_without_special_elements(original: list[Any], patch: list[Any], schema: TypeSchema | None,
                                    merge_key: str) -> list[Any]:
    merged = list(original)
    for v in patch:
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        i = _find_by_key(merged, merge_key, v[merge_key])
        if i >= 0:
            merged[i] = _merge_map(merged[i], v, schema)
            if i < len(original):
                original[i] = merged[i]   # upstream writes through the shared slice
        else:
            merged.append(v)
    return merged


def _partition_primitives(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    in_by = [v for v in items if any(_eq(v, b) for b in by)]
    rest = [v for v in items if not any(_eq(v, b) for b in by)]
    return in_by, rest


def _partition_maps(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    in_by: list[Any] = []
    rest: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type(_MAP, v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        (in_by if _find_by_key(by, merge_key, v[merge_key]) >= 0 else rest).append(v)
    return in_by, rest


def _position(items: list[Any], value: Any, merge_key: str, is_map: bool) -> int:
    """index(): by merge key for maps (a non-map item has none), by value otherwise."""
    def val(x: Any) -> Any:
        return (x.get(merge_key) if isinstance(x, dict) else None) if is_map else x
    target = val(value)
    for i, v in enumerate(items):
        if _eq(val(v), target) or (val(v) is None and target is None):
            return i
    return -1


def _split_deletions(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """extractToDeleteItems."""
    keep: list[Any] = []
    delete: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type(_MAP, v)
        (delete if v.get(DIRECTIVE) == DELETE else keep).append(v)
    return keep, delete


def _sort_by(items: list[Any], order: list[Any], merge_key: str, is_map: bool) -> list[Any]:
    """normalizeSliceOrder: stable sort by position in ``order``; deletions last."""
    deletions: list[Any] = []
    if is_map:
        for values in (items, order):
            for item in values:
                if not isinstance(item, dict):
                    raise _bad_arg_type(_MAP, item)
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
        items, deletions = _split_deletions(items)
    positions = [_position(order, v, merge_key, is_map) for v in items]
    ranked = sorted(range(len(items)), key=lambda i: positions[i] if positions[i] >= 0 else len(order))
    return [items[i] for i in ranked] + deletions


def _normalize_order(in_patch: list[Any], server_only: list[Any], patch_order: list[Any], server_order: list[Any],
                     merge_key: str, is_map: bool) -> list[Any]:
    """normalizeElementOrder and mergeSortedSlice: patch items keep the patch's order, server-only items the
    live order, and a server-only item goes before a patch item when the live list had it first."""
    right = _sort_by(in_patch, patch_order, merge_key, is_map)
    left = _sort_by(server_only, server_order, merge_key, is_map)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _position(server_order, left[i], merge_key, is_map)
            ri = _position(server_order, right[j], merge_key, is_map)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _remove_directives(obj: Any) -> tuple[bool, Any]:
    """removeDirectives: a map holding $patch disappears, recursively (other directive keys stay)."""
    if isinstance(obj, dict):
        if DIRECTIVE in obj:
            return False, None
        for k in list(obj):
            keep, value = _remove_directives(obj[k])
            if keep:
                obj[k] = value
            else:
                del obj[k]
        return True, obj
    if isinstance(obj, list):
        return True, [v for keep, v in map(_remove_directives, obj) if keep]
    return True, obj


def _discard_nulls(v: Any) -> None:
    if isinstance(v, dict):
        for k in list(v):
            if v[k] is None:
                del v[k]
            else:
                _discard_nulls(v[k])
    elif isinstance(v, list):
        for x in v:
            _discard_nulls(x)

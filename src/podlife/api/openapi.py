"""The OpenAPI documents kube-apiserver serves, for the modelled version: /openapi/v2 (JSON, and protobuf in
gnostic's openapi_v2 encoding, which kubectl 1.27–1.28 ask for) and /openapi/v3 (an index of per-group-version
documents, each addressed by its hash).

Public API:

- ``v2_document(minor, crds=()) -> dict``: swagger 2.0 with every built-in definition of the version (from the
  kubernetes-validate schemas), each kind's ``x-kubernetes-group-version-kind``, the custom resources of the
  given CustomResourceDefinitions, and paths whose PATCH carries the ``fieldValidation`` query parameter
  (kubectl's query-param verifier looks for it before sending ``fieldValidation=Strict``).
- ``v2_protobuf(doc) -> bytes``: that document as a gnostic openapi_v2.Document message
  (asked for as ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` or ``…spec.v2.v1.0+protobuf``,
  answered with Content-Type ``V2_PROTOBUF``, the latter).
- ``v3_index(minor, crds=()) -> dict``: ``{"paths": {"api/v1": {"serverRelativeURL":
  "/openapi/v3/api/v1?hash=<HASH>"}, …}}`` (kube-openapi handler3).
- ``v3_document(minor, group_version, crds=()) -> dict | None``: one group-version's document (its paths and
  the component schemas they reach), None when the version does not serve it.
- ``encode(doc) -> bytes`` and ``etag(data) -> str``: the bytes to serve and their hash (upper-case hex
  SHA-512, handler3 computeETag); the server sends it quoted as the ETag and redirects a stale ``?hash=``.

Definitions are named as upstream names them (io.k8s.api.apps.v1.Deployment; a custom resource's group
reversed: com.example.stable.v1.CronTab).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any, Iterable

from podlife.api.meta import builtin_kind_info
from podlife.api.schema import builtin_kinds, definitions

# kube-openapi pkg/handler: asked for as either, answered with the second
V2_PROTOBUF_ACCEPTED = ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
                        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

_VERBS = {"get": "read", "put": "replace", "patch": "patch", "delete": "delete", "post": "create"}
_PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json",
                "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
_CUSTOM_PATCH_TYPES = ["application/json-patch+json", "application/merge-patch+json",
                       "application/apply-patch+yaml"]


# ------------------------------------------------------------------------------------------------ schemas

def _swagger_schema(s: Any, ref_prefix: str) -> Any:
    """A kubernetes-validate schema node back in OpenAPI form: no null in types, no additionalProperties: false
    (the strict variant's), Quantity and IntOrString as the API documents them, refs to the document."""
    if isinstance(s, list):
        return [_swagger_schema(x, ref_prefix) for x in s]
    if not isinstance(s, dict):
        return s
    out: dict[str, Any] = {}
    one_of = s.get("oneOf")
    if isinstance(one_of, list):
        kinds = sorted({t for x in one_of if isinstance(x, dict)
                        for t in ([x.get("type")] if isinstance(x.get("type"), str) else x.get("type") or [])
                        if t != "null"})
        if kinds == ["integer", "string"]:
            out.update({"type": "string", "format": "int-or-string"})
        elif kinds == ["number", "string"]:
            out["type"] = "string"
    for k, v in s.items():
        if k in ("oneOf", "$schema", "$id") or (k == "additionalProperties" and v is False):
            continue
        if k == "$ref":
            out["$ref"] = ref_prefix + v.rpartition("/")[2]
        elif k == "type":
            types = [t for t in (v if isinstance(v, list) else [v]) if t != "null"]
            if types:
                out["type"] = types[0]
        elif k == "format" and v == "quantity":
            continue
        elif k in ("properties",) and isinstance(v, dict):
            out[k] = {name: _swagger_schema(x, ref_prefix) for name, x in v.items()}
        elif k == "enum" and isinstance(v, list):
            out[k] = [x for x in v if x is not None]
        else:
            out[k] = _swagger_schema(v, ref_prefix) if isinstance(v, (dict, list)) else v
    return out


@lru_cache(maxsize=4)
def _builtin_definitions(minor: int, ref_prefix: str) -> dict[str, Any]:
    defs = definitions(minor)
    return {name: _swagger_schema(d, ref_prefix) for name, d in sorted(defs.items())}


def _reverse_group(group: str) -> str:
    return ".".join(reversed(group.split(".")))


def _custom(crds: Iterable[dict[str, Any]], ref_prefix: str) -> list[dict[str, Any]]:
    """Each served version of each CRD: its definition name, GVK, plural, scope and schema."""
    out = []
    for crd in crds:
        spec = crd.get("spec") or {}
        group, names = spec.get("group", ""), spec.get("names") or {}
        kind = names.get("kind", "")
        for v in spec.get("versions") or ():
            if not isinstance(v, dict) or not v.get("served", True):
                continue
            version = v.get("name", "")
            raw = ((v.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object",
                                                                         "x-kubernetes-preserve-unknown-fields": True}
            schema = _v2_from_structural(raw)
            props = schema.setdefault("properties", {})
            props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of "
                                   "this representation of an object."}
            props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST "
                             "resource this object represents."}
            props["metadata"] = {"$ref": ref_prefix + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
            schema["x-kubernetes-group-version-kind"] = [{"group": group, "kind": kind, "version": version}]
            out.append({"name": f"{_reverse_group(group)}.{version}.{kind}", "group": group, "version": version,
                        "kind": kind, "plural": names.get("plural") or kind.lower() + "s",
                        "namespaced": spec.get("scope") != "Cluster", "schema": schema})
    return out


def _v2_from_structural(s: Any) -> Any:
    """apiextensions' conversion of a structural schema for publishing: nullable dropped, the rest kept."""
    if isinstance(s, list):
        return [_v2_from_structural(x) for x in s]
    if not isinstance(s, dict):
        return s
    return {k: _v2_from_structural(v) for k, v in s.items() if k != "nullable"}


# ------------------------------------------------------------------------------------------------ paths

def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


def _query(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {"uniqueItems": True, "type": type_, "description": description, "name": name, "in": "query"}


_FIELD_VALIDATION = _query(
    "fieldValidation", "fieldValidation instructs the server on how to handle objects in the request "
    "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict.")
_FIELD_MANAGER = _query("fieldManager", "fieldManager is a name associated with the actor or entity that is "
                                        "making these changes.")
_DRY_RUN = _query("dryRun", "When present, indicates that modifications should not be persisted.")
_FORCE = _query("force", "Force is going to \"force\" Apply requests.", "boolean")


def _resource_paths(group: str, version: str, kind: str, plural: str, namespaced: bool, definition: str,
                    ref_prefix: str, custom: bool, v3: bool) -> dict[str, Any]:
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    scope = "Namespaced" if namespaced else ""
    collection = f"{base}/namespaces/{{namespace}}/{plural}" if namespaced else f"{base}/{plural}"
    ext = {"x-kubernetes-group-version-kind": _gvk(group, version, kind)}
    ref = {"$ref": ref_prefix + definition}

    def body(required: bool = True) -> dict[str, Any]:
        if v3:
            return {}
        return {"name": "body", "in": "body", "required": required, "schema": ref}

    def op(verb: str, params: list[dict[str, Any]], consumes: list[str] | None = None) -> dict[str, Any]:
        o: dict[str, Any] = {"description": f"{_VERBS[verb]} the specified {kind}",
                             "operationId": f"{_VERBS[verb]}{scope}{kind}", "x-kubernetes-action": verb}
        if v3:
            o["parameters"] = [{"name": p["name"], "in": p["in"], "description": p["description"],
                                "schema": {"type": p["type"], "uniqueItems": True}} for p in params if p]
            if verb in ("post", "put", "patch"):
                types = consumes or ["application/json"]
                o["requestBody"] = {"content": {t: {"schema": ref} for t in types}, "required": True}
            o["responses"] = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}
        else:
            o["consumes"] = consumes or ["*/*"]
            o["produces"] = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
            o["parameters"] = [p for p in params if p]
            o["responses"] = {"200": {"description": "OK", "schema": ref}}
        o.update(ext)
        return o

    write = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
    patch_types = _CUSTOM_PATCH_TYPES if custom else _PATCH_TYPES
    item: dict[str, Any] = {
        "get": op("get", []),
        "put": op("put", [body()] + write),
        "patch": op("patch", [body()] + write + [_FORCE], patch_types),
        "delete": op("delete", [_DRY_RUN]),
    }
    name_param = {"name": "name", "in": "path", "required": True, "type": "string", "uniqueItems": True,
                  "description": f"name of the {kind}"}
    params = [name_param] + ([{"name": "namespace", "in": "path", "required": True, "type": "string",
                               "uniqueItems": True, "description": "object name and auth scope"}]
                             if namespaced else [])
    if v3:
        params = [{"name": p["name"], "in": "path", "required": True, "description": p["description"],
                   "schema": {"type": "string", "uniqueItems": True}} for p in params]
    item["parameters"] = params
    collection_item = {"post": op("post", [body()] + write)}
    if namespaced:
        collection_item["parameters"] = params[1:]
    return {collection: collection_item, f"{collection}/{{name}}": item}


def _kinds(minor: int) -> list[tuple[str, str, str, str]]:
    """(group, version, kind, definition) of every kind the version serves, sorted."""
    out = []
    for gvk, definition in sorted(builtin_kinds(minor).items(), key=lambda kv: (kv[0].api_version, kv[0].kind)):
        group, _, version = gvk.api_version.rpartition("/")
        out.append((group, version, gvk.kind, definition))
    return out


_SUBRESOURCE_KINDS = frozenset({"Binding", "Eviction", "Scale", "TokenRequest"})


def _paths(minor: int, custom: list[dict[str, Any]], ref_prefix: str, v3: bool,
           only: str | None = None) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for group, version, kind, definition in _kinds(minor):
        gv = f"{group}/{version}" if group else version
        if (only is not None and gv != only) or kind in _SUBRESOURCE_KINDS:
            continue
        info = builtin_kind_info(kind, gv)
        paths.update(_resource_paths(group, version, kind, info.resource, info.namespaced, definition, ref_prefix,
                                     False, v3))
    for c in custom:
        if only is not None and f"{c['group']}/{c['version']}" != only:
            continue
        paths.update(_resource_paths(c["group"], c["version"], c["kind"], c["plural"], c["namespaced"], c["name"],
                                     ref_prefix, True, v3))
    return dict(sorted(paths.items()))


# ------------------------------------------------------------------------------------------------ documents

def _info(minor: int) -> dict[str, str]:
    return {"title": "Kubernetes", "version": f"v1.{minor}.0"}


def v2_document(minor: int, crds: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    prefix = "#/definitions/"
    custom = _custom(crds, prefix)
    published = dict(_builtin_definitions(minor, prefix))
    for c in custom:
        published[c["name"]] = c["schema"]
    return {"swagger": "2.0", "info": _info(minor), "paths": _paths(minor, custom, prefix, v3=False),
            "definitions": dict(sorted(published.items()))}


def _group_versions(minor: int, custom: list[dict[str, Any]]) -> list[str]:
    gvs = {f"{g}/{v}" if g else v for g, v, k, _ in _kinds(minor) if k not in _SUBRESOURCE_KINDS}
    gvs |= {f"{c['group']}/{c['version']}" for c in custom}
    return sorted(gvs)


def _index_path(gv: str) -> str:
    return f"api/{gv}" if "/" not in gv else f"apis/{gv}"


def v3_document(minor: int, group_version: str, crds: Iterable[dict[str, Any]] = ()) -> dict[str, Any] | None:
    prefix = "#/components/schemas/"
    custom = _custom(crds, prefix)
    if group_version not in _group_versions(minor, custom):
        return None
    paths = _paths(minor, custom, prefix, v3=True, only=group_version)
    schemas = dict(_builtin_definitions(minor, prefix))
    for c in custom:
        schemas[c["name"]] = c["schema"]
    reached = _reachable(paths, schemas, prefix)
    return {"openapi": "3.0.0", "info": _info(minor), "paths": paths,
            "components": {"schemas": {name: schemas[name] for name in sorted(reached)}}}


def _reachable(root: Any, schemas: dict[str, Any], prefix: str) -> set[str]:
    seen: set[str] = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                name = ref[len(prefix):]
                if name not in seen and name in schemas:
                    seen.add(name)
                    todo.append(schemas[name])
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return seen


def encode(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def etag(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest().upper()


def v3_index(minor: int, crds: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    crds = list(crds)
    custom = _custom(crds, "#/components/schemas/")
    paths = {}
    for gv in _group_versions(minor, custom):
        doc = v3_document(minor, gv, crds)
        assert doc is not None
        paths[_index_path(gv)] = {"serverRelativeURL": f"/openapi/v3/{_index_path(gv)}?hash={etag(encode(doc))}"}
    return {"paths": paths}


# ------------------------------------------------------------------------------------------------ gnostic protobuf

def _key(num: int, wire: int) -> bytes:
    return _varint((num << 3) | wire)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _str(num: int, s: str) -> bytes:
    data = s.encode()
    return _key(num, 2) + _varint(len(data)) + data if s else b""


def _msg(num: int, data: bytes, keep_empty: bool = False) -> bytes:
    return _key(num, 2) + _varint(len(data)) + data if data or keep_empty else b""


def _bool(num: int, v: bool) -> bytes:
    return _key(num, 0) + b"\x01" if v else b""


def _int(num: int, v: Any) -> bytes:
    return _key(num, 0) + _varint(int(v)) if v else b""


def _double(num: int, v: Any) -> bytes:
    import struct
    return _key(num, 1) + struct.pack("<d", float(v)) if v is not None else b""


def _any(num: int, value: Any) -> bytes:
    """Any{yaml}: gnostic keeps arbitrary values as YAML text (JSON is YAML)."""
    return _msg(num, _str(2, json.dumps(value, ensure_ascii=False)), keep_empty=True)


def _extensions(num: int, node: dict[str, Any]) -> bytes:
    return b"".join(_msg(num, _str(1, k) + _any(2, v), keep_empty=True)
                    for k, v in node.items() if k.startswith("x-"))


def _schema(s: dict[str, Any]) -> bytes:
    """openapi_v2.Schema."""
    out = [_str(1, s.get("$ref", "")), _str(2, s.get("format", "")), _str(3, s.get("title", "")),
           _str(4, s.get("description", ""))]
    if "default" in s:
        out.append(_any(5, s["default"]))
    for num, key in ((6, "multipleOf"), (7, "maximum")):
        if key in s:
            out.append(_double(num, s[key]))
    out.append(_bool(8, s.get("exclusiveMaximum", False)))
    if "minimum" in s:
        out.append(_double(9, s["minimum"]))
    out.append(_bool(10, s.get("exclusiveMinimum", False)))
    for num, key in ((11, "maxLength"), (12, "minLength")):
        out.append(_int(num, s.get(key)))
    out.append(_str(13, s.get("pattern", "")))
    for num, key in ((14, "maxItems"), (15, "minItems")):
        out.append(_int(num, s.get(key)))
    out.append(_bool(16, s.get("uniqueItems", False)))
    for num, key in ((17, "maxProperties"), (18, "minProperties")):
        out.append(_int(num, s.get(key)))
    out.extend(_str(19, r) for r in s.get("required") or ())
    out.extend(_any(20, e) for e in s.get("enum") or ())
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        out.append(_msg(21, _msg(1, _schema(extra), keep_empty=True), keep_empty=True))
    elif isinstance(extra, bool):
        out.append(_msg(21, _key(2, 0) + (b"\x01" if extra else b"\x00"), keep_empty=True))
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        out.append(_msg(22, b"".join(_str(1, t) for t in types), keep_empty=True))
    if isinstance(s.get("items"), dict):
        out.append(_msg(23, _msg(1, _schema(s["items"]), keep_empty=True), keep_empty=True))
    out.extend(_msg(24, _schema(x), keep_empty=True) for x in s.get("allOf") or ())
    if isinstance(s.get("properties"), dict):
        named = b"".join(_msg(1, _str(1, k) + _msg(2, _schema(v), keep_empty=True), keep_empty=True)
                         for k, v in s["properties"].items())
        out.append(_msg(25, named, keep_empty=True))
    out.append(_extensions(31, s))
    return b"".join(out)


def _parameter(p: dict[str, Any]) -> bytes:
    """ParametersItem{parameter: Parameter{body_parameter | non_body_parameter{query|path sub-schema}}}."""
    if p["in"] == "body":
        body = (_str(2, p["name"]) + _str(3, "body") + _bool(4, p.get("required", False))
                + _msg(5, _schema(p["schema"]), keep_empty=True))
        param = _msg(1, body, keep_empty=True)
    else:
        fields = (_bool(1, p.get("required", False)) + _str(2, p["in"]) + _str(3, p.get("description", ""))
                  + _str(4, p["name"]))
        if p["in"] == "query":   # QueryParameterSubSchema: type 6, unique_items 20
            sub = _msg(3, fields + _str(6, p.get("type", "")) + _bool(20, p.get("uniqueItems", False)),
                       keep_empty=True)
        else:                     # PathParameterSubSchema: required 1, in 2, description 3, name 4, type 5
            sub = _msg(4, fields + _str(5, p.get("type", "")) + _bool(19, p.get("uniqueItems", False)),
                       keep_empty=True)
        param = _msg(2, sub, keep_empty=True)
    return _msg(1, param, keep_empty=True)


def _operation(o: dict[str, Any]) -> bytes:
    out = [_str(3, o.get("description", "")), _str(5, o.get("operationId", ""))]
    out.extend(_str(6, x) for x in o.get("produces") or ())
    out.extend(_str(7, x) for x in o.get("consumes") or ())
    out.extend(_msg(8, _parameter(p), keep_empty=True) for p in o.get("parameters") or ())
    codes = b""
    for code, resp in (o.get("responses") or {}).items():
        response = _str(1, resp.get("description", ""))
        if "schema" in resp:
            response += _msg(2, _msg(1, _schema(resp["schema"]), keep_empty=True), keep_empty=True)
        codes += _msg(1, _str(1, code) + _msg(2, _msg(1, response, keep_empty=True), keep_empty=True),
                      keep_empty=True)
    out.append(_msg(9, codes, keep_empty=True))
    out.append(_extensions(13, o))
    return b"".join(out)


_OPERATIONS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def v2_protobuf(doc: dict[str, Any]) -> bytes:
    """gnostic openapi_v2.Document: swagger 1, info 2, paths 8, definitions 9."""
    info = doc.get("info") or {}
    paths = b""
    for name, item in (doc.get("paths") or {}).items():
        body = b"".join(_msg(num, _operation(item[verb]), keep_empty=True)
                        for verb, num in _OPERATIONS.items() if verb in item)
        body += b"".join(_msg(9, _parameter(p), keep_empty=True) for p in item.get("parameters") or ())
        paths += _msg(2, _str(1, name) + _msg(2, body, keep_empty=True), keep_empty=True)
    definitions = b"".join(_msg(1, _str(1, name) + _msg(2, _schema(s), keep_empty=True), keep_empty=True)
                           for name, s in (doc.get("definitions") or {}).items())
    return (_str(1, doc.get("swagger", "2.0")) + _msg(2, _str(1, info.get("title", "")) + _str(2, info.get(
        "version", "")), keep_empty=True) + _msg(8, paths, keep_empty=True) + _msg(9, definitions, keep_empty=True))


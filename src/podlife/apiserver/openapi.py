"""The OpenAPI endpoints: /openapi/v3 (an index of one document per group-version) and /openapi/v2.

The documents come from podlife.api.openapi when it is present. Without it, the v3 documents are made here
from the version's schemas (components.schemas, and one path per resource whose operations carry their
group-version-kind and the fieldValidation parameter): enough for kubectl 1.29+ to see that the server validates
fields itself (it then sends fieldValidation=Strict) and for `kubectl explain`. /openapi/v2 is then 404, which
kubectl 1.27 and 1.28 need for apply and explain.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Any

import orjson
from aiohttp import web

from podlife.apiserver.status import not_found_path

_PARAMS = [{"name": n, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
           for n in ("dryRun", "fieldManager", "fieldValidation", "force")]


def _library() -> Any:
    try:
        from podlife.api import openapi as lib
    except ImportError:
        return None
    return lib


async def serve(server: Any, request: web.Request, parts: list[str]) -> web.Response:
    lib = _library()
    if lib is not None and hasattr(lib, "serve"):
        return await lib.serve(server, request, parts)
    if parts == ["v3"]:
        return server._json(_index(server))
    if parts and parts[0] == "v3" and len(parts) > 1:
        doc = _document(server, "/".join(parts[1:]))
        if doc is None:
            raise not_found_path()
        return web.Response(body=doc, headers={"Content-Type": "application/json",
                                               "Cache-Control": "public, immutable"})
    raise not_found_path()


def _gv_paths(server: Any) -> dict[str, tuple[str, str]]:
    out = {}
    for r in server.catalog.all():
        key = f"apis/{r.group}/{r.version}" if r.group else f"api/{r.version}"
        out[key] = (r.group, r.version)
    return out


def _index(server: Any) -> dict[str, Any]:
    paths = {}
    for key in sorted(_gv_paths(server)):
        doc = _document(server, key) or b""
        digest = hashlib.sha512(doc).hexdigest()[:128].upper()
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def _document(server: Any, key: str) -> bytes | None:
    gv = _gv_paths(server).get(key)
    if gv is None:
        return None
    rs = server.catalog.in_version(*gv)
    if any(r.custom for r in rs):
        return orjson.dumps(_build(server.minor, gv, rs))
    return _cached(server.minor, gv, tuple(rs))


@lru_cache(maxsize=64)
def _cached(minor: int, gv: tuple[str, str], rs: tuple[Any, ...]) -> bytes:
    return orjson.dumps(_build(minor, gv, list(rs)))


def _build(minor: int, gv: tuple[str, str], rs: list[Any]) -> dict[str, Any]:
    schemas = dict(_schemas(minor))
    group, version = gv
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    paths: dict[str, Any] = {}
    for r in rs:
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        if r.custom and r.crd is not None:
            for v in (r.crd.get("spec") or {}).get("versions") or ():
                if v.get("name") == r.version:
                    s = ((v.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
                    schemas[f"{_reverse(r.group)}.{r.version}.{r.kind}"] = {**s, "x-kubernetes-group-version-kind": [gvk]}
        base = f"{prefix}/namespaces/{{namespace}}/{r.resource}" if r.namespaced else f"{prefix}/{r.resource}"
        op = {"x-kubernetes-group-version-kind": gvk, "parameters": _PARAMS, "responses": {}}
        paths[f"{base}/{{name}}"] = {"get": {**op, "x-kubernetes-action": "get"},
                                     "put": {**op, "x-kubernetes-action": "put"},
                                     "patch": {**op, "x-kubernetes-action": "patch"},
                                     "delete": {**op, "x-kubernetes-action": "delete"}}
        paths[base] = {"post": {**op, "x-kubernetes-action": "post"},
                       "get": {**op, "x-kubernetes-action": "list"}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": f"v1.{minor}.0"}, "paths": paths,
            "components": {"schemas": schemas}}


def _reverse(group: str) -> str:
    return ".".join(reversed(group.split("."))) if group else "core"


@lru_cache(maxsize=2)
def _schemas(minor: int) -> dict[str, Any]:
    from podlife.api.schema import _definitions

    defs = _definitions(minor)["$defs"]
    return {name: _oas3(d) for name, d in defs.items()}


def _oas3(s: Any) -> Any:
    """JSON Schema (kubernetes-validate's form) → OpenAPI 3.0: refs under components, no type lists."""
    if isinstance(s, list):
        return [_oas3(x) for x in s]
    if not isinstance(s, dict):
        return s
    out: dict[str, Any] = {}
    for k, v in s.items():
        if k == "$ref" and isinstance(v, str):
            out["allOf"] = [{"$ref": "#/components/schemas/" + v.rpartition("/")[2]}]
        elif k == "type" and isinstance(v, list):
            types = [t for t in v if t != "null"]
            if len(types) == 1:
                out["type"] = types[0]
        elif k == "oneOf" and isinstance(v, list) and _scalar_union(v):
            out["x-kubernetes-int-or-string"] = True
        elif k in ("additionalProperties",) and v is False:
            continue
        else:
            out[k] = _oas3(v)
    return out


def _scalar_union(v: list[Any]) -> bool:
    """int-or-string (and quantities): a oneOf of scalar types."""
    types = [x.get("type") for x in v if isinstance(x, dict)]
    return bool(types) and all(isinstance(t, str) and t in ("string", "integer", "number") for t in types)

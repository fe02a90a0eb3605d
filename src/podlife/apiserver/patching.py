"""PATCH bodies: JSON patch (RFC 6902), JSON merge patch (RFC 7386), strategic merge patch and apply
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go).

The patch algorithms themselves live in the API library (podlife.api.patch, podlife.api.fieldmanager); this
module picks one by media type and words the errors as the API server does.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import orjson
import yaml

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.apiserver.status import bad_request, unsupported_media

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
APPLY_CBOR = "application/apply-patch+cbor"
BUILTIN_TYPES = [JSON_PATCH, MERGE_PATCH, STRATEGIC, APPLY]
CUSTOM_TYPES = [JSON_PATCH, MERGE_PATCH, APPLY]   # no strategic merge for custom resources


def patch_type(content_type: str | None, custom: bool) -> str:
    mt = (content_type or "").split(";")[0].strip().lower()
    allowed = CUSTOM_TYPES if custom else BUILTIN_TYPES
    if mt not in allowed:
        raise unsupported_media(allowed)
    return mt


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return clone(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def _decode_patch(data: bytes, ptype: str) -> Any:
    try:
        return yaml.safe_load(data) if ptype == APPLY else orjson.loads(data)
    except (orjson.JSONDecodeError, yaml.YAMLError) as e:
        raise bad_request(f"error decoding patch: {str(e).splitlines()[0]}") from None


def apply_patch(ptype: str, current: Obj, data: bytes, *, kind: str, api_version: str) -> Obj:
    """The patched object (not yet stored)."""
    body = _decode_patch(data, ptype)
    if ptype == JSON_PATCH:
        if not isinstance(body, list):
            raise bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
        try:
            return jsonpatch.apply_patch(current, body)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError,
                TypeError) as e:
            raise ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: {e}") \
                from None
    if not isinstance(body, dict):
        raise bad_request(f"json: cannot unmarshal {type(body).__name__} into Go value of type map[string]interface {{}}")
    if ptype == MERGE_PATCH:
        return _merge(current, body)
    if ptype == STRATEGIC:
        return strategic_merge(current, body, kind, api_version)
    return _merge(current, {k: v for k, v in body.items() if k not in ("status",)})


def strategic_merge(current: Obj, patch: Obj, kind: str, api_version: str) -> Obj:
    try:
        from podlife.api import patch as smp   # the schema-driven implementation, when present
    except ImportError:
        return _merge(current, _strip_directives(patch))
    return smp.strategic_merge_patch(current, patch, kind=kind, api_version=api_version)


def _strip_directives(p: Any) -> Any:
    """Without the schemas' merge keys: a merge patch of the patch less its $-directives."""
    if isinstance(p, dict):
        return {k: _strip_directives(v) for k, v in p.items() if not k.startswith("$")}
    if isinstance(p, list):
        return [_strip_directives(v) for v in p]
    return p

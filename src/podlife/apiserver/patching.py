"""PATCH requests: the patch (podlife.api.patch) or the server-side apply (podlife.apiserver.fieldmanager) of the
current object, and the managedFields of every write (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
patch.go, create.go, update.go)."""

from __future__ import annotations

from typing import Any

import yaml
from aiohttp import web

from podlife.api import decoding, defaults, errors, structural
from podlife.api.duplicates import yaml_error
from podlife.api.fieldvalidation import IGNORE, STRICT
from podlife.api.schema import custom_type_schema
from podlife.api import patch as patches
from podlife.api.errors import ApiError, FieldError
from podlife.api.meta import Obj
from podlife.apiserver import fieldmanager, fieldvalidation

APPLY = patches.APPLY_PATCH
_PARSE_BOOL_TRUE = ("1", "t", "T", "TRUE", "true", "True")


def patch_type(content_type: str | None, custom: bool) -> str:
    return patches.patch_type(content_type or "", custom)


def manager(request: web.Request, ptype: str | None = None) -> str:
    q = request.query
    name = fieldmanager.manager_name(q.get("fieldManager"), request.headers.get("User-Agent"))
    # apimachinery pkg/apis/meta/v1/validation ValidatePatchOptions
    if ptype == APPLY and not q.get("fieldManager"):
        raise errors.invalid("PatchOptions.meta.k8s.io", "", [FieldError("fieldManager", "Required value",
                                                                         "is required for apply patch")])
    if ptype is not None and ptype != APPLY and "force" in q:
        raise errors.invalid("PatchOptions.meta.k8s.io", "", [FieldError("force", "Forbidden",
                                                                         "may not be specified for non-apply patch")])
    return name


def decode_apply(data: bytes, duplicates: list[str] | None = None) -> Obj:
    """handlers/patch.go applyPatcher: yaml.Unmarshal (sigs.k8s.io/yaml) of the body, with podlife's limits;
    ``duplicates`` receives go-yaml's strict errors for repeated keys."""
    try:
        doc = decoding.parse_yaml(data, duplicates)
    except decoding.DecodeError as e:
        raise ApiError(400, "BadRequest", f"error decoding YAML: error converting YAML to JSON: {e}") from None
    except yaml.YAMLError as e:
        raise ApiError(400, "BadRequest", f"error decoding YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise ApiError(400, "BadRequest", "error decoding YAML: the apply configuration is not an object")
    return doc


def _apply_strict(repeated: list[str], m: str) -> list[str]:
    """handlers/patch.go applyPatcher, after the apply: yaml.UnmarshalStrict of the body, refused (Strict) or
    warned about a line at a time (Warn)."""
    if not repeated or m == IGNORE:
        return []
    if m == STRICT:
        raise ApiError(400, "BadRequest", "error strict decoding YAML: error converting YAML to JSON: "
                                          f"{yaml_error(repeated)}")
    return list(repeated)


def patched(server: Any, request: web.Request, target: Any, live: Obj, shown: Obj, data: bytes, ptype: str,
            subresource: str | None) -> tuple[Obj, list[str]]:
    """The patched object with its managedFields, and the field validation warnings."""
    r = target.resource
    schema = fieldvalidation.type_schema(server, r)
    now = server.cluster.trace.timestamp()
    who = manager(request, ptype)
    has_status = any(s[0] == "status" for s in r.subresources)
    m = fieldvalidation.mode(server, request, "PatchOptions")
    if ptype == APPLY:
        repeated: list[str] = []
        applied = decode_apply(data, repeated)
        # a bool query parameter is read with strconv.ParseBool (the Python client sends "True")
        force = request.query.get("force") in _PARSE_BOOL_TRUE
        if not live and r.namespaced and target.namespace:
            applied.setdefault("metadata", {}).setdefault("namespace", target.namespace)
        if r.custom and r.crd is not None:
            # the CR's type converter is built from its structural schema (customresource_handler.go): the
            # typed configuration refuses undeclared fields, whatever the fieldValidation
            fieldmanager.typed_patch(applied, custom_type_schema(server.minor, structural.version_schema(
                r.crd, r.version)))
        out = fieldmanager.apply(shown, applied, who, schema, now, force=force, subresource=subresource or "",
                                 has_status=has_status)
        if schema is not None:
            # the applied object becomes the Go type again (fieldmanager structuredmerge.go Apply: toUnversioned,
            # through the unstructured converter): smd took any number for an integer, the conversion refuses
            # 1.5 and wraps an int32 as Go does; the error is not an API status, so 500
            try:
                out = decoding.convert_unstructured(out, schema)
            except decoding.DecodeError as e:
                raise ApiError(500, "", f"failed to convert new object ({fieldmanager.object_gvknn(applied)}) "
                                        f"to proper version: {e}") from None
        out = decoding.untyped_numbers(out)
        if r.custom:
            fieldvalidation.custom_write(server, r, out)
        return out, _apply_strict(repeated, m)
    result = patches.apply_patch(shown, data, ptype, schema, m, typed=True)
    warnings = list(result.warnings)
    if r.custom:
        warnings += fieldvalidation.check_custom(server, r, result.object, m, first=result.strict)
        fieldvalidation.custom_write(server, r, result.object)
    # handlers/patch.go: the patched object is decoded and defaulted before the field manager sees it
    defaults.apply_defaults(result.object, server.cluster.profile)
    out = fieldmanager.update(shown, result.object, who, schema, now, subresource=subresource or "",
                              has_status=has_status)
    return out, warnings


def managed_on_write(server: Any, request: web.Request, target: Any, live: Obj, new: Obj,
                     subresource: str | None) -> Obj:
    """managedFields of a create (``live`` = {}) or an update, recorded on the defaulted object: the body is
    decoded with the scheme's defaults before the field manager runs (handlers/create.go, update.go:
    UpdateNoErrors on the decoded object, before admission), so the defaults are the writer's fields."""
    r = target.resource
    defaults.apply_defaults(new, server.cluster.profile)
    return fieldmanager.update(live, new, manager(request), fieldvalidation.type_schema(server, r),
                               server.cluster.trace.timestamp(), subresource=subresource or "",
                               has_status=any(s[0] == "status" for s in r.subresources))

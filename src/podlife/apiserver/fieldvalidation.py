"""Field validation of create, update and patch bodies (the fieldValidation query parameter, KEP-2885).

Strict: an unknown or duplicated field is a 400 ("strict decoding error: unknown field …"). Warn (the
default): the same findings come back as Warning headers. Ignore: nothing is checked. A value of the wrong
type is a decoding error whatever the mode (400 for built-in kinds; 422 for custom resources, whose schema
the apiextensions server validates). The checks are podlife.api.schema's strict decoding.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from podlife.api import schema
from podlife.api.errors import ApiError, FieldError
from podlife.api.meta import Obj

MODES = ("Strict", "Warn", "Ignore")


def _path(p: tuple[str | int, ...]) -> str:
    out = ""
    for seg in p:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else str(seg))
    return out


def check(server: Any, request: web.Request, target: Any, obj: Obj) -> list[str]:
    mode = request.query.get("fieldValidation", "Warn")
    if mode not in MODES:
        raise ApiError(400, "BadRequest", f'fieldValidation: Unsupported value: "{mode}": supported values: '
                                          '"Ignore", "Strict", "Warn"')
    if mode == "Ignore":
        return []
    r = target.resource
    if not isinstance(obj.get("apiVersion"), str) or not isinstance(obj.get("kind"), str):
        return []
    custom = schema.custom_schemas(r.crd) if r.crd is not None else None
    if custom is None and r.kind == "Event" and r.group == "events.k8s.io":
        return []   # checked as the core Event it was converted to
    # decoding knows nothing of required fields or allowed values: those are the registry's validation
    errs = [e for e in schema.check(obj, server.minor, custom)
            if e.message != "required field missing" and " is not supported; expected one of " not in e.message]
    unknown = [e for e in errs if e.message.startswith("unknown field")]
    typed = [e for e in errs if e not in unknown]
    if typed:
        if r.custom:
            causes = [FieldError(_path(e.path), "Invalid value", e.message) for e in typed]
            name = (obj.get("metadata") or {}).get("name", "")
            body = "; ".join(str(c) for c in causes)
            raise ApiError(422, "Invalid", f'{r.kind}.{r.group} "{name}" is invalid: {body}', causes)
        first = typed[0]
        raise ApiError(400, "BadRequest", f'{r.kind} in version "{r.version}" cannot be handled as a {r.kind}: '
                                          f"{_path(first.path)}: {first.message}")
    found = [f'unknown field "{_path(e.path)}"' for e in unknown]
    if found and mode == "Strict":
        raise ApiError(400, "BadRequest", f'{r.kind} in version "{r.version}" cannot be handled as a {r.kind}: '
                                          f"strict decoding error: {', '.join(found)}")
    return found

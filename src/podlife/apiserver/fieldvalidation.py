"""Field validation of create and update bodies (the fieldValidation query parameter, KEP-2885).

Built-in kinds go through podlife.api.fieldvalidation (strict decoding and pruning as the Go types do it).
Custom resources are checked against their CRD's structural schema (podlife.api.schema): an unknown field
is reported as for built-in kinds (400 in Strict, a warning in Warn), a value of the wrong type is 422
Invalid, as the apiextensions server's validation answers.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from podlife.api import decoding, schema, structural
from podlife.api import fieldvalidation as fv
from podlife.api.duplicates import Body, capped, json_duplicates, json_pairs, yaml_error
from podlife.api.errors import ApiError, FieldError, invalid
from podlife.api.meta import Obj
from podlife.api.validation.objectmeta import custom_finalizer_warnings


def mode(server: Any, request: web.Request, options_kind: str) -> str:
    return fv.directive(request.query.get("fieldValidation"), server.cluster.profile, options_kind)


def type_schema(server: Any, r: Any) -> schema.TypeSchema | None:
    return None if r.custom else schema.type_schema(server.minor, r.api_version, r.kind)


def _path(p: tuple[str | int, ...]) -> str:
    out = ""
    for seg in p:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else str(seg))
    return out


def decode(server: Any, request: web.Request, target: Any, obj: Obj, options_kind: str,
           body: Body | None = None) -> tuple[Obj, list[str]]:
    """The body as it will be stored (pruned for built-in kinds) and the warnings to send; ``body`` is what
    bodies.decode kept for strict decoding (repeated keys)."""
    m = mode(server, request, options_kind)
    r = target.resource
    if not r.custom:
        ts = schema.type_schema(server.minor, str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        if ts is not None:
            obj, warnings = fv.decode_body(obj, ts, m, body)
            return decoding.untyped_numbers(obj), warnings
        return decoding.untyped_numbers(obj), []
    obj = decoding.untyped_numbers(obj)   # first: an integer beyond int64 decodes as a float64 (util/json)
    warnings = check_custom(server, r, obj, m, body)
    custom_write(server, r, obj)
    return obj, warnings


def strategy_warnings(server: Any, r: Any, new: Obj, old: Obj | None, subresource: str | None) -> list[str]:
    """A custom resource's strategy warnings (apiextensions-apiserver registry/customresource/strategy.go
    WarningsOnCreate, WarningsOnUpdate): the finalizers a write adds that are not domain-qualified."""
    if not r.custom or subresource is not None:
        return []

    def finalizers(o: Obj | None) -> list[Any]:
        f = ((o or {}).get("metadata") or {}).get("finalizers")
        return list(f) if isinstance(f, list) else []
    return custom_finalizer_warnings(finalizers(new), finalizers(old) if old is not None else None,
                                     server.cluster.profile.custom_finalizer_warning)


def custom_write(server: Any, r: Any, obj: Obj) -> None:
    """A custom resource body as the apiextensions server decodes and validates it, in place: unknown fields
    pruned, the metadata (the root's and each embedded resource's) decoded as an ObjectMeta, and the schema's
    defaults set (customresource_handler.go unstructuredSchemaCoercer.apply, then structural defaulting), then
    each missing required property and each value outside its enum is 422 (pkg/registry/customresource/
    validator.go, whatever the fieldValidation)."""
    if r.crd is None:
        return
    s = structural.version_schema(r.crd, r.version)
    metas: list[tuple[str, Any]] = [("metadata", obj.get("metadata"))]
    if s is not None:
        structural.prune(obj, s, metas=metas)
    object_meta = schema.object_meta(server.minor)
    for _, meta in metas:
        if isinstance(meta, dict):
            kept = fv.prune(meta, object_meta)
            meta.clear()
            meta.update(kept)
    if s is None:
        return
    structural.default(obj, s)
    errs = structural.required_errors(obj, s) + structural.enum_errors(obj, s)
    if errs:
        raise invalid(f"{r.kind}.{r.group}", str((obj.get("metadata") or {}).get("name", "")), errs)


def check_types(obj: Obj, ts: schema.TypeSchema) -> None:
    """The body decoded into the kind's Go types (handlers/create.go, update.go: decoder.Decode, then
    transformDecodeError): a value of the wrong type or out of its integer's range is 400, whatever the
    fieldValidation."""
    err = decoding.type_error(obj, ts)
    if err is not None:
        kind = str(obj.get("kind", ""))
        version = str(obj.get("apiVersion", "")).rpartition("/")[2]
        raise ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {ts.go_name}: '
                                          f"{err}")


# podlife's own limit, the one `podlife run` applies to manifests and scale actions (scenario/manifests.py)
_SIZED = (("spec",), ("spec", "jobTemplate", "spec"))
_SIZES = ("replicas", "parallelism", "completions", "minReplicas", "maxReplicas")


def workload_size(r: Any, obj: Obj) -> None:
    """A workload larger than podlife can hold is refused, naming the field (valid upstream up to int32)."""
    from podlife.api.decoding import MAX_REPLICAS

    causes = []
    for where in _SIZED:
        spec: Any = obj
        for seg in where:
            spec = spec.get(seg) if isinstance(spec, dict) else None
        if not isinstance(spec, dict):
            continue
        for key in _SIZES:
            n = spec.get(key)
            if isinstance(n, int) and not isinstance(n, bool) and n > MAX_REPLICAS:
                causes.append(FieldError(".".join(where + (key,)), "Invalid value",
                                         f"podlife runs workloads of at most {MAX_REPLICAS:,} pods", n))
    if causes:
        name = (obj.get("metadata") or {}).get("name", "")
        group = f".{r.group}" if r.group else ""
        raise invalid(f"{r.kind}{group}", str(name), causes)


def _custom_duplicates(body: Body | None) -> list[str]:
    """The serializer's strict errors for an unstructured body: repeated keys of every object (JSON,
    sigs.k8s.io/json objectInterface), or go-yaml's list of them (YAML, YAMLToJSONStrict)."""
    if body is None:
        return []
    if body.yaml:
        return [yaml_error(body.yaml_lines)] if body.yaml_lines else []
    tree = json_pairs(body.data) if body.data else None
    return json_duplicates(tree) if tree is not None else []


def check_custom(server: Any, r: Any, obj: Obj, m: str, body: Body | None = None,
                 first: list[str] | None = None) -> list[str]:
    """A custom resource against its version's schema: a value of the wrong type is 422; the serializer's
    duplicates, then the unknown fields (customresource_handler.go schemaCoercingDecoder) are 400 in Strict,
    warnings in Warn. ``first``: a patch body's own strict errors, reported before the patched object's."""
    if m == fv.IGNORE or r.crd is None or not isinstance(obj.get("apiVersion"), str):
        return []
    errs = [e for e in schema.check(obj, 0, schema.custom_schemas(r.crd))
            if e.message != "required field missing" and " is not supported; expected one of " not in e.message
            and not e.message.startswith("unknown field")]
    if errs:
        causes = [FieldError(_path(e.path), "Invalid value", e.message) for e in errs]
        name = (obj.get("metadata") or {}).get("name", "")
        raise ApiError(422, "Invalid", f'{r.kind}.{r.group} "{name}" is invalid: '
                                       f'{"; ".join(str(c) for c in causes)}', causes)
    found = list(first or ()) + _custom_duplicates(body) + structural.unknown_fields(
        obj, structural.version_schema(r.crd, r.version), schema.object_meta(server.minor))
    found = capped(found)
    if found and m == fv.STRICT:
        raise ApiError(400, "BadRequest", f'{r.kind} in version "{r.version}" cannot be handled as a {r.kind}: '
                                          f"{fv.strict_decoding_error(found)}")
    return fv.as_warnings(found)

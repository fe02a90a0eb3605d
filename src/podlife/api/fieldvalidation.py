"""Server-side field validation and pruning of the bodies the API server decodes into built-in types.

Public functions (what the HTTP layer calls):

- ``directive(value, profile, options_kind) -> str``: the effective ``fieldValidation`` of a create, update or
  patch request (``Ignore``, ``Warn`` or ``Strict``), refusing a value upstream does not allow (422).
- ``unknown_fields(obj, schema) -> list[str]``: every field a built-in type does not have, as upstream's
  strict decoders name them (``unknown field "spec.template.spec.containers[0].foo"``).
- ``prune(obj, schema) -> dict``: a copy without those fields, which is what decoding into the Go types and
  encoding back stores (the real server drops them silently, e.g. status fields Kopf patches into a Pod).
- ``decode_body(obj, schema, directive) -> (obj, warnings)``: the create/update path: strict → 400
  ``Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field …``;
  warn → the errors as warnings; ignore → nothing; the object comes back pruned.
- ``patched_body(obj, schema, directive, patch_value, strict_errors) -> (obj, warnings)``: the patch path
  (handlers/patch.go): strict → 422 ``"" is invalid'' (after a space: the empty kind): patch: Invalid value: "…":
  strict decoding error: …``.

Custom resources are not pruned here: their structural schema decides (apiextensions-apiserver).
"""

from __future__ import annotations

from typing import Any

from podlife.api.duplicates import Body, Pairs, capped, join, json_pairs, yaml_error
from podlife.api.errors import ApiError
from podlife.api.gofmt import go_quote, rfc3339
from podlife.api.schema import TypeSchema
from podlife.engine.slices import pause
from podlife.versions import Profile

IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"
_ALLOWED = ("", IGNORE, STRICT, WARN)   # sets.NewString(...).List(): sorted


def directive(value: str | None, prof: Profile, options_kind: str = "CreateOptions") -> str:
    """handlers/rest.go fieldValidation: empty means the version's default. With the ServerSideFieldValidation
    gate off (before its beta, 1.25) the parameter did nothing: decoding ignored unknown fields whatever the
    client sent."""
    default = prof.field_validation_default
    if default == IGNORE:
        return IGNORE
    value = value or ""
    if value not in _ALLOWED:
        # apis/meta/v1/validation ValidateFieldValidation → field.NotSupported, wrapped by NewInvalid
        supported = ", ".join(go_quote(v) for v in _ALLOWED)
        raise ApiError(422, "Invalid", f'{options_kind}.meta.k8s.io "" is invalid: fieldValidation: '
                                       f'Unsupported value: {go_quote(value)}: supported values: {supported}')
    return value or default


def unknown_fields(obj: Any, schema: TypeSchema) -> list[str]:
    """runtime/converter.go and sigs.k8s.io/json strict decoding: fields a struct does not declare, depth first
    in the object's own order, each message once."""
    out: list[str] = []
    _walk(obj, schema, "", out)
    return capped(out)


def strict_errors(obj: Any, schema: TypeSchema, body: Body | None = None) -> list[str]:
    """The strict decoding errors of a create or update body (runtime/serializer/json/json.go Decode).

    JSON: sigs.k8s.io/json UnmarshalStrict reports unknown and duplicate fields as it meets them (a repeated
    field the struct does not declare is only unknown). YAML: the body is decoded from YAMLToJSON's output,
    whose keys are sorted, and YAMLToJSONStrict's error about repeated keys comes first."""
    if body is not None and body.yaml:
        head = [yaml_error(body.yaml_lines)] if body.yaml_lines else []
        return head + unknown_fields(sorted_keys(obj), schema)
    tree = json_pairs(body.data) if body is not None and body.data else None
    return unknown_fields(tree if tree is not None else obj, schema)


def as_warnings(errors: list[str]) -> list[str]:
    """Strict errors as Warn sends them (handlers/rest.go addStrictDecodingWarnings): go-yaml's list of
    errors becomes one warning a line."""
    out: list[str] = []
    for e in errors:
        if e.startswith(YAML_ERRORS):
            out += [line.strip() for line in e[len(YAML_ERRORS):].splitlines() if line.strip()]
        else:
            out.append(e)
    return out


YAML_ERRORS = "yaml: unmarshal errors:\n"


def sorted_keys(value: Any) -> Any:
    """The value with every mapping's keys in sorted order (as encoding/json writes a Go map)."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def _walk(value: Any, schema: TypeSchema, path: str, out: list[str]) -> None:
    pause()   # a large body is walked in slices (podlife.engine.slices)
    if isinstance(value, (dict, Pairs)):
        items = value if isinstance(value, Pairs) else value.items()
        seen: set[str] = set()
        if schema.is_struct:
            for key, v in items:
                hit = schema.field(key)
                if hit is None:
                    out.append(f'unknown field "{join(path, key)}"')
                    continue
                if key in seen:
                    out.append(f'duplicate field "{join(path, key)}"')
                seen.add(key)
                if v is not None:
                    _walk(v, hit[0], join(path, key), out)
        elif schema.is_map:
            values = schema.values()
            for key, v in items:
                if key in seen:
                    out.append(f'duplicate field "{join(path, key)}"')
                seen.add(key)
                if v is not None:
                    _walk(v, values, join(path, key), out)
    elif isinstance(value, list) and schema.is_list:
        items_schema = schema.items()
        for i, v in enumerate(value):
            if v is not None:
                _walk(v, items_schema, f"{path}[{i}]", out)


def prune(value: Any, schema: TypeSchema) -> Any:
    """A copy of ``value`` holding only what the Go type can hold (structs keep their declared fields; maps,
    lists and values decoded whole keep everything)."""
    pause()
    if isinstance(value, dict):
        if schema.is_struct:
            out = {}
            for key, v in value.items():
                hit = schema.field(key)
                if hit is not None:
                    out[key] = prune(v, hit[0]) if v is not None else None
            return out
        if schema.is_map:
            values = schema.values()
            return {k: prune(v, values) if v is not None else None for k, v in value.items()}
        return value
    if isinstance(value, list) and schema.is_list:
        items = schema.items()
        return [prune(v, items) if v is not None else None for v in value]
    if isinstance(value, str) and schema.name == _TIME:
        return rfc3339(value)
    return value


_TIME = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"


def strict_decoding_error(errors: list[str]) -> str:
    """runtime/error.go strictDecodingError.Error."""
    return "strict decoding error: " + ", ".join(errors)


def decode_body(obj: dict[str, Any], schema: TypeSchema, mode: str, body: Body | None = None
                ) -> tuple[dict[str, Any], list[str]]:
    """The body of a create or update (handlers/create.go, update.go: decoder.Decode, transformDecodeError)."""
    errors = strict_errors(obj, schema, body) if mode != IGNORE else []
    if errors and mode == STRICT:
        kind = str(obj.get("kind", ""))
        version = str(obj.get("apiVersion", "")).rpartition("/")[2]
        raise ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {schema.go_name}: '
                                          f"{strict_decoding_error(errors)}")
    return prune(obj, schema), (as_warnings(errors) if mode == WARN else [])


def patched_body(obj: dict[str, Any], schema: TypeSchema, mode: str, patch_value: str,
                 strict_errors: list[str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The result of a patch (handlers/patch.go applyPatchToObject, jsonPatcher.applyPatchToCurrentObject):
    the patch's own strict errors come first, then the unknown fields of the patched object."""
    errors = list(strict_errors or []) + (unknown_fields(obj, schema) if mode != IGNORE else [])
    if errors and mode == STRICT:
        raise ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: {go_quote(patch_value)}: '
                                       f"{strict_decoding_error(errors)}")
    return prune(obj, schema), (errors if mode == WARN else [])

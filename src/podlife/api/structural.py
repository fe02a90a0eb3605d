"""What the apiextensions server does to a custom resource with its version's structural schema, besides the
type checks of podlife.api.schema: pruning of unknown fields, defaulting, and enum validation.

Public API:

- ``version_schema(crd, version) -> dict | None``: the raw ``openAPIV3Schema`` of a served version.
- ``has_defaults(schema) -> bool``: whether any node of the schema carries a ``default``.
- ``prune(obj, schema)``: drops, in place, the fields the schema does not know (apiextensions-apiserver
  pkg/apiserver/schema/pruning/algorithm.go): kept under ``x-kubernetes-preserve-unknown-fields``, and
  apiVersion/kind/metadata at the root and in an ``x-kubernetes-embedded-resource``.
- ``unknown_fields(obj, schema, object_meta) -> list[str]``: ``unknown field "spec.foo"`` for each field the
  decoder drops, in upstream's order.
- ``default(obj, schema)``: sets, in place, the schema's defaults where a field is absent or a non-nullable
  null (pkg/apiserver/schema/defaulting/algorithm.go Default); applied to request bodies and to every read
  from storage, so a default added to a CRD shows on objects stored before it.
- ``enum_errors(obj, schema) -> list[FieldError]``: ``Unsupported value`` for each value outside its ``enum``
  (pkg/apiserver/validation/validation.go: EnumFailCode becomes field.NotSupported).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from podlife.api.errors import FieldError

Schema = dict[str, Any]
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")


def version_schema(crd: dict[str, Any], version: str) -> Schema | None:
    for v in (crd.get("spec") or {}).get("versions") or ():
        if isinstance(v, dict) and v.get("name") == version:
            s = (v.get("schema") or {}).get("openAPIV3Schema") if isinstance(v.get("schema"), dict) else None
            return s if isinstance(s, dict) else None
    return None


def has_defaults(s: Any) -> bool:
    if isinstance(s, dict):
        return "default" in s or any(has_defaults(v) for k, v in s.items() if k != "enum")
    if isinstance(s, list):
        return any(has_defaults(v) for v in s)
    return False


def _props(s: Schema | None) -> dict[str, Any]:
    p = (s or {}).get("properties")
    return p if isinstance(p, dict) else {}


def _additional(s: Schema | None) -> Schema | None:
    a = (s or {}).get("additionalProperties")
    return a if isinstance(a, dict) else None


def _items(s: Schema | None) -> Schema | None:
    i = (s or {}).get("items")
    return i if isinstance(i, dict) else None


def prune(x: Any, s: Schema | None, root: bool = True, path: str = "", pruned: list[str] | None = None,
          metas: list[tuple[str, Any]] | None = None) -> None:
    """``pruned`` receives the path of each field dropped (pruning/algorithm.go TrackUnknownFieldPaths), ``metas``
    the path and value of each embedded resource's metadata (checked as an ObjectMeta, objectmeta/coerce.go)."""
    preserve = bool(s and s.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(s and s.get("x-kubernetes-embedded-resource"))
    if isinstance(x, dict):
        props, extra = _props(s), _additional(s)
        for k in list(x):
            p = _path(path, k)
            if (root or embedded) and k in _ROOT_FIELDS:
                if k == "metadata" and not root and metas is not None:
                    metas.append((p, x[k]))
                continue
            if k in props and isinstance(props[k], dict):
                prune(x[k], props[k], False, p, pruned, metas)
            elif extra is not None:
                prune(x[k], extra, False, p, pruned, metas)
            elif not preserve:
                if pruned is not None:
                    pruned.append(p)
                del x[k]
    elif isinstance(x, list):
        for i, v in enumerate(x):
            prune(v, _items(s), False, _path(path, i), pruned, metas)


def unknown_fields(obj: dict[str, Any], s: Schema | None, object_meta: Any) -> list[str]:
    """The unknown fields of a custom resource, in the order the apiextensions decoder reports them
    (customresource_handler.go unstructuredSchemaCoercer.apply): the root metadata's (GetObjectMetaWithOptions),
    then the pruned ones, sorted (PruneWithOptions), then those of embedded resources' metadata
    (CoerceWithOptions). ``object_meta`` is the ObjectMeta TypeSchema."""
    from podlife.api.fieldvalidation import unknown_fields as struct_unknown

    def meta_errors(path: str, meta: Any) -> list[str]:
        return [e.replace('field "', f'field "{path}.', 1) for e in struct_unknown(meta, object_meta)]

    out = meta_errors("metadata", obj.get("metadata")) if isinstance(obj.get("metadata"), dict) else []
    if s is None:
        return out
    pruned: list[str] = []
    metas: list[tuple[str, Any]] = []
    prune(copy.deepcopy(obj), s, pruned=pruned, metas=metas)
    out += [f'unknown field "{p}"' for p in sorted(pruned)]
    for path, meta in metas:
        if isinstance(meta, dict):
            out += meta_errors(path, meta)
    return out


def _non_nullable_null(v: Any, s: Schema | None) -> bool:
    return v is None and s is not None and not s.get("nullable", False)


def default(x: Any, s: Schema | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = _props(s)
        for k in sorted(props):
            prop = props[k]
            if isinstance(prop, dict) and prop.get("default") is not None and (
                    k not in x or _non_nullable_null(x[k], prop)):
                x[k] = copy.deepcopy(prop["default"])
        extra = _additional(s)
        for k in list(x):
            if isinstance(props.get(k), dict):
                default(x[k], props[k])
            elif extra is not None:
                if _non_nullable_null(x[k], extra) and extra.get("default") is not None:
                    x[k] = copy.deepcopy(extra["default"])
                default(x[k], extra)
    elif isinstance(x, list):
        items = _items(s)
        for i, v in enumerate(x):
            if items is not None and _non_nullable_null(v, items) and items.get("default") is not None:
                x[i] = copy.deepcopy(items["default"])
            default(x[i], items)


def _path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def _supported(v: Any) -> str:
    # validation.go: a string as it is, anything else as its JSON
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))


def enum_errors(x: Any, s: Schema | None, path: str = "") -> list[FieldError]:
    return _value_errors(x, s, path, _enum_here)


def required_errors(x: Any, s: Schema | None, path: str = "") -> list[FieldError]:
    """``Required value`` for each ``required`` property an object lacks (kube-openapi validate object_validator,
    turned into field.Required by apiextensions validation.go ValidateCustomResource), depth first; the root's
    apiVersion, kind and metadata are not the schema's."""
    return _value_errors(x, s, path, _required_here)


def _enum_here(x: Any, s: Schema, path: str) -> list[FieldError]:
    enum = s.get("enum")
    if isinstance(enum, list) and x is not None and x not in enum:
        detail = "supported values: " + ", ".join(f'"{_supported(v)}"' for v in enum)
        return [FieldError(path, "Unsupported value", detail, _supported(x))]
    return []


def _required_here(x: Any, s: Schema, path: str) -> list[FieldError]:
    required = s.get("required")
    if not isinstance(x, dict) or not isinstance(required, list):
        return []
    return [FieldError(_path(path, n), "Required value") for n in required if isinstance(n, str) and n not in x]


def _value_errors(x: Any, s: Schema | None, path: str,
                  here: Callable[[Any, Schema, str], list[FieldError]]) -> list[FieldError]:
    if not isinstance(s, dict):
        return []
    out: list[FieldError] = here(x, s, path)
    if isinstance(x, dict):
        props, extra = _props(s), _additional(s)
        for k, v in x.items():
            if path == "" and k in _ROOT_FIELDS:
                continue
            sub = props.get(k) if isinstance(props.get(k), dict) else extra
            out += _value_errors(v, sub, _path(path, k), here)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out += _value_errors(v, _items(s), _path(path, i), here)
    return out

"""Decoding a request body as the API server does, with the limits ``podlife run`` applies to manifests.

One decoder for every write of the live API (create, update, patch results, apply, subresources):

- ``parse_json`` / ``parse_yaml``: the bytes as plain data, refusing what podlife cannot hold: nesting deeper
  than ``MAX_DEPTH`` (upstream's decoders stop at 10,000 levels, util/json maxDepth; podlife's own code and
  its JSON encoder follow fewer), YAML aliases expanding past ``MAX_YAML_VALUES`` values (the scenario loader's
  limit; go-yaml refuses such a document as "excessive aliasing"), NaN and Infinity.
- ``type_error``: the first value a built-in kind's Go types cannot hold, worded as encoding/json (through
  sigs.k8s.io/json) words it: ``json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas
  of type int32``. The types come from the version's schema (podlife.api.schema.TypeSchema).
- ``convert_unstructured``: the same walk as runtime.DefaultUnstructuredConverter.FromUnstructured (the
  strategic merge patch and apply paths): its words, and Go's integer conversions (an int64 into an int32 wraps).
- ``smd_errors``: structured-merge-diff's scalar checks of an apply configuration (typed/helpers.go
  validateScalar).
- ``untyped_numbers``: util/json convertNumber: an integer beyond int64 where no Go type is declared (custom
  resources, RawExtension) is a float64, so nothing the store cannot encode is kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import orjson
import yaml

from podlife.api import gofmt
from podlife.api.schema import TypeSchema
from podlife.api.yamlread import CONSTRUCT_ERRORS, MAX_YAML_VALUES, Loader, event_loader, expanded_sizes, tag_mismatch
from podlife.engine.slices import pause

MAX_DEPTH = 200          # levels of nesting a body may have (the store's JSON encoder stops at 254)
MAX_REPLICAS = 150_000   # pods one workload may ask for (scenarios and stored objects alike)
INT32 = (-(2 ** 31), 2 ** 31 - 1)
INT64 = (-(2 ** 63), 2 ** 63 - 1)


class DecodeError(Exception):
    """The body is not what the decoder can read; ``str`` is upstream's reason (without the wrapping)."""


# ------------------------------------------------------------------------------------------------ parsing

def parse_json(data: bytes) -> Any:
    """JSON as the API server reads it. orjson first (fast, and it refuses NaN, Infinity and 1,024 levels);
    a body with an integer beyond 64 bits is read again exactly (orjson makes it a float), so the error can
    name the number as written."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        if "depth limit" in str(e):
            raise DecodeError(f"exceeded max depth of {MAX_DEPTH}") from None
        raise
    deepest, huge = _measure(value)
    if deepest > MAX_DEPTH:
        raise DecodeError(f"exceeded max depth of {MAX_DEPTH}")
    if huge:
        value = json.loads(data)
    return value


def _measure(value: Any) -> tuple[int, bool]:
    """(nesting depth, holds a number beyond int64), without recursion."""
    deepest, huge = 0, False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for v in node.values() if isinstance(v, (dict, list, int, float))]
        elif isinstance(node, list):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for v in node if isinstance(v, (dict, list, int, float))]
        elif isinstance(node, float):
            huge = huge or (node.is_integer() and not INT64[0] <= node <= INT64[1])
        elif isinstance(node, int) and not isinstance(node, bool):
            huge = huge or not INT64[0] <= node <= INT64[1]
        if deepest > MAX_DEPTH:
            break
    return deepest, huge


def parse_yaml(data: bytes | str, duplicates: list[str] | None = None) -> Any:
    """YAML as sigs.k8s.io/yaml turns it into JSON (timestamps stay strings), read with the scenario loader's
    composer and its alias budget; ``DecodeError`` worded as go-yaml. ``duplicates`` receives go-yaml's strict
    errors for repeated mapping keys (podlife.api.duplicates.yaml_duplicates)."""
    text = data.decode("utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
    if text.count("[") + text.count("{") > MAX_DEPTH and _flow_depth(text) > MAX_DEPTH:
        # PyYAML's scanner takes time quadratic in the nesting of flow collections: refused before it reads
        raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
    loader = _body_loader()(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}") from None
        if node is None:
            return None
        depth = _node_depth(node)
        if depth > MAX_DEPTH:
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        if "*" in text and expanded_sizes(node)[id(node)] > MAX_YAML_VALUES:   # an alias is written *name
            # go-yaml decode.go: "document contains excessive aliasing"
            raise DecodeError("yaml: document contains excessive aliasing")
        if duplicates is not None:
            from podlife.api.duplicates import yaml_duplicates

            duplicates += yaml_duplicates(node)
        try:
            value = loader.construct_document(node)
        except RecursionError:   # a recursive alias (&a [*a])
            raise DecodeError("yaml: document contains excessive aliasing") from None
    finally:
        loader.dispose()
    value = _as_json(value)
    if _measure(value)[0] > MAX_DEPTH:   # an alias placed deep makes the document deeper than its text
        raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
    # aliases become copies, as in the JSON upstream makes of them (orjson: a fifth of the time, for all but
    # integers beyond 64 bits, which json keeps for the type check to refuse)
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return json.loads(json.dumps(value))


@lru_cache(maxsize=1)
def _body_loader() -> type:
    """The scenario loader's YAML reading (timestamps stay strings), with mapping keys as their text. libyaml
    reads the events when it is there (several times faster on a large body, and it stops at 1,000 levels on
    its own); the nodes are composed in Python, whose recursion limit ends a deep document cleanly."""
    base = event_loader() or Loader

    class BodyLoader(base):  # type: ignore[misc,valid-type]
        def compose_node(self, parent: Any, index: Any) -> Any:
            pause()   # a large body is read in slices (podlife.engine.slices)
            return super().compose_node(parent, index)

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            pause()
            try:
                return super().construct_object(node, deep)
            except CONSTRUCT_ERRORS:
                if not isinstance(node, yaml.ScalarNode):
                    raise
                raise DecodeError(f"yaml: {tag_mismatch(node, self)}") from None

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
            # go-yaml keeps 1 and true apart as keys (Python's dict would merge them); YAMLToJSON makes both text
            self.flatten_mapping(node)
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, (list, dict)):
                    raise yaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                            "found unacceptable key", key_node.start_mark)
                out[_key(key)] = self.construct_object(value_node, deep=deep)
            return out
    return BodyLoader


def _key(k: Any) -> str:
    """sigs.k8s.io/yaml YAMLToJSON: a mapping key that is not a string becomes its text."""
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if k is None:
        return "null"
    return repr(k) if isinstance(k, float) else str(k)


def _as_json(value: Any) -> Any:
    """What YAMLToJSON makes of a constructed document: string keys, no binary, sets as mappings of nulls,
    and no NaN or Infinity (json.Marshal refuses them)."""
    def fix(v: Any) -> Any:
        if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
            raise DecodeError(f"json: unsupported value: {'NaN' if v != v else '+Inf' if v > 0 else '-Inf'}")
        if isinstance(v, (bytes, bytearray)):
            return bytes(v).decode("utf-8", "replace")
        if isinstance(v, (set, frozenset)):
            return {_key(k): None for k in v}
        if isinstance(v, tuple):
            return list(v)
        return v
    root = [fix(value)]
    stack: list[Any] = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if any(not isinstance(k, str) for k in node):
                items = [(_key(k), v) for k, v in node.items()]
                node.clear()
                node.update(items)
            for k, v in node.items():
                pause()
                node[k] = fix(v)
                if isinstance(node[k], (dict, list)):
                    stack.append(node[k])
        elif isinstance(node, list):
            for i, v in enumerate(node):
                pause()
                node[i] = fix(v)
                if isinstance(node[i], (dict, list)):
                    stack.append(node[i])
    return root[0]


def _flow_depth(text: str) -> int:
    """The deepest nesting of [ and { in the text, outside quoted strings, comments and block scalars."""
    deepest = depth = 0
    block_indent: int | None = None   # inside a block scalar: lines indented more than this belong to it
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        quote = ""
        prev = " "
        for c in stripped:
            if quote:
                if c == quote:
                    quote = ""
            elif c in "\"'" and prev in " \t[{,:-":
                quote = c
            elif c == "#" and prev in " \t":
                break
            elif c in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif c in "]}":
                depth = max(depth - 1, 0)
            prev = c
        tail = stripped.split(" #")[0].rstrip()
        if depth == 0 and tail[-1:] in ("|", ">") or tail[-2:-1] in ("|", ">") and tail[-1:] in "+-123456789":
            block_indent = indent
    return deepest


def _node_depth(root: yaml.Node) -> int:
    """Nesting of a YAML node tree, each distinct node once (aliases share nodes)."""
    deepest = 0
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        pause()
        node, depth = stack.pop()
        if id(node) in seen or depth > MAX_DEPTH + 1:
            deepest = max(deepest, depth)
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            deepest = max(deepest, depth)
            stack += [(c, depth + 1) for c in node.value]
        elif isinstance(node, yaml.MappingNode):
            deepest = max(deepest, depth)
            stack += [(v, depth + 1) for _, v in node.value]
    return deepest


def depth_of(value: Any) -> int:
    return _measure(value)[0]


# ------------------------------------------------------------------------------------------------ Go types

_CUSTOM = {   # types with their own UnmarshalJSON, by schema definition
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "time",
}


def _types(ts: TypeSchema) -> list[str]:
    t = ts.node.get("type")
    return [x for x in (t if isinstance(t, list) else [t] if t else []) if x != "null"]


def go_type(ts: TypeSchema) -> str:
    """reflect.Type.String() of the Go type behind a schema node (v1.PodSpec, []v1.Container, int32, ...)."""
    if ts.name and (ts.is_struct or ts.name in _CUSTOM):
        parts = ts.name.split(".")
        return f"{parts[-2]}.{parts[-1]}"
    if ts.is_list:
        return "[]" + go_type(ts.items())
    if ts.is_map:
        return "map[string]" + go_type(ts.values())
    types = _types(ts)
    fmt = ts.node.get("format")
    if types == ["integer"]:
        return fmt if fmt in ("int32", "int64") else "int64"
    if types == ["number"]:
        return "float64"
    if types == ["boolean"]:
        return "bool"
    if types == ["string"]:
        return "[]uint8" if fmt == "byte" else "string"
    return "interface {}"


# encoding/json's name for a decoded value's type (UnmarshalTypeError.Value)
JSON_KINDS: dict[type, str] = {str: "string", list: "array", dict: "object"}
_GO_KINDS: dict[type, str] = {str: "string", list: "slice", dict: "map"}


def json_kind(v: Any) -> str:
    """encoding/json UnmarshalTypeError.Value of a decoded value."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return JSON_KINDS.get(type(v), "null")


def number_literal(v: Any) -> str:
    """A number as encoding/json names it ("number 1.5")."""
    return f"number {v!r}" if isinstance(v, float) else f"number {v}"


@dataclass
class _Ctx:
    """Where in the Go struct the decoder is, for its error messages."""

    struct: str = ""
    fields: tuple[str, ...] = ()

    def error(self, value: str, type_: str) -> str:
        if self.struct or self.fields:
            return (f"json: cannot unmarshal {value} into Go struct field {self.struct}.{'.'.join(self.fields)} "
                    f"of type {type_}")
        return f"json: cannot unmarshal {value} into Go value of type {type_}"


class _Fatal(Exception):
    """An UnmarshalJSON method's error: decoding stops there (decode.go returns it at once)."""


def type_error(obj: Any, ts: TypeSchema) -> str | None:
    """The error encoding/json returns decoding ``obj`` into the Go type of ``ts``: the first UnmarshalTypeError
    in document order, unless a custom UnmarshalJSON fails, which ends decoding at once."""
    saved: list[str] = []
    try:
        _walk(obj, _plan(ts), _Ctx(), saved)
    except _Fatal as e:
        return str(e)
    return saved[0] if saved else None


_STRUCT, _MAP, _LIST, _SCALAR, _ANY = range(5)


class _Plan:
    """A schema node as the walk needs it, made once per node (a restart checks every stored object)."""

    __slots__ = ("ts", "shape", "custom", "go", "go_name", "want", "range", "_fields", "_child")

    def __init__(self, ts: TypeSchema) -> None:
        self.ts = ts
        self.custom = _CUSTOM.get(ts.name)
        self.shape = _STRUCT if ts.is_struct else _MAP if ts.is_map else _LIST if ts.is_list else _SCALAR
        self.go = go_type(ts)
        self.go_name = ts.go_name
        types = _types(ts)
        self.want = types[0] if len(types) == 1 else None
        if self.shape == _SCALAR and self.want is None:
            self.shape = _ANY   # untyped (interface{}, RawExtension, apiextensions JSON): anything goes
        self.range = INT32 if ts.node.get("format") == "int32" else INT64
        self._fields: dict[str, _Plan | None] = {}
        self._child: _Plan | None = None

    def field(self, key: str) -> _Plan | None:
        try:
            return self._fields[key]
        except KeyError:
            hit = self.ts.field(key)
            plan = self._fields[key] = _plan(hit[0]) if hit is not None else None
            return plan

    def child(self) -> _Plan:
        if self._child is None:
            self._child = _plan(self.ts.items() if self.shape == _LIST else self.ts.values())
        return self._child


_PLANS: dict[int, _Plan] = {}


def _plan(ts: TypeSchema) -> _Plan:
    """The plan of a schema node; nodes live as long as their version's definitions (lru-cached)."""
    plan = _PLANS.get(id(ts.node))
    if plan is None or plan.ts.node is not ts.node:
        plan = _PLANS[id(ts.node)] = _Plan(ts)
    return plan


def _walk(value: Any, plan: _Plan, ctx: _Ctx, saved: list[str]) -> None:
    if value is None:
        return
    if plan.custom is not None:
        _custom(value, plan.custom, ctx)
        return
    shape = plan.shape
    if shape == _STRUCT:
        if type(value) is not dict:
            saved.append(ctx.error(json_kind(value), plan.go))
            return
        for key, v in value.items():
            if v is not None:
                child = plan.field(key)
                if child is not None:
                    _walk(v, child, _Ctx(plan.go_name, ctx.fields + (key,)), saved)
        return
    if shape == _MAP or shape == _LIST:
        if type(value) is not (dict if shape == _MAP else list):
            saved.append(ctx.error(json_kind(value), plan.go))
            return
        child = plan.child()
        if child.shape == _SCALAR and child.want == "string" and child.custom is None:
            for v in (value.values() if isinstance(value, dict) else value):   # labels, annotations, args: the hot case
                if type(v) is not str and v is not None:
                    saved.append(ctx.error(json_kind(v), child.go))
            return
        for v in (value.values() if isinstance(value, dict) else value):
            _walk(v, child, ctx, saved)
        return
    if shape == _SCALAR:
        problem = _scalar(value, plan.want, plan.range)
        if problem is not None:
            saved.append(ctx.error(problem, plan.go))


def _scalar(value: Any, want: str | None, bounds: tuple[int, int]) -> str | None:
    """decode.go literalStore: what is wrong with a literal for a scalar Go type, as UnmarshalTypeError.Value."""
    if want == "string":
        return None if type(value) is str else json_kind(value)
    if want == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return json_kind(value)
        if isinstance(value, float) or not bounds[0] <= value <= bounds[1]:
            return number_literal(value)
        return None
    if want == "number":
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else json_kind(value)
    if want == "boolean":
        return None if isinstance(value, bool) else json_kind(value)
    if want in ("object", "array") and not isinstance(value, dict if want == "object" else list):
        return json_kind(value)
    return None


def _custom(value: Any, custom: str, ctx: _Ctx) -> None:
    if custom == "intstr":
        # intstr.IntOrString.UnmarshalJSON: a string, else json.Unmarshal into its int32
        if isinstance(value, str):
            return
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Fatal(ctx.error(json_kind(value), "int32"))
        if isinstance(value, float) or not INT32[0] <= value <= INT32[1]:
            raise _Fatal(ctx.error(number_literal(value), "int32"))
    elif custom == "time":
        # metav1.Time.UnmarshalJSON: json.Unmarshal into a string first
        if not isinstance(value, str):
            raise _Fatal(ctx.error("number" if isinstance(value, (int, float)) and not isinstance(value, bool)
                                   else json_kind(value), "string"))
    elif custom == "quantity":
        # resource.Quantity.UnmarshalJSON: ParseQuantity of the string, or of the literal's text
        from podlife.api.quantity import parse_quantity

        text = value if isinstance(value, str) else "true" if value is True else "false" if value is False \
            else repr(value) if isinstance(value, float) else str(value) if isinstance(value, int) else "{"
        try:
            parse_quantity(text.strip())
        except ValueError as e:
            raise _Fatal(str(e)) from None


# ------------------------------------------------------------------------------------------------ unstructured

def _go_kind(v: Any) -> str:
    """reflect.Kind of a decoded JSON value (kjson keeps integers as int64)."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, float):
        return "float64"
    return _GO_KINDS.get(type(v), "invalid")


def _wrap(n: int, bits: int) -> int:
    """Go's integer conversion: the low bits, two's complement."""
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


def convert_unstructured(value: Any, ts: TypeSchema) -> Any:
    """runtime/converter.go fromUnstructured: the value as the Go type holds it (integers converted as Go
    converts them), or DecodeError with the converter's words. Struct fields in the schema's order."""
    if value is None:
        return None
    custom = _CUSTOM.get(ts.name)
    if custom is not None:
        err = type_error(value, ts)   # the type's UnmarshalJSON of the value's JSON
        if err is not None:
            raise DecodeError(err)
        return value
    if ts.is_struct:
        if not isinstance(value, dict):
            raise DecodeError(f"cannot restore struct from: {_go_kind(value)}")
        for key in ts.fields():
            if key in value and value[key] is not None:
                hit = ts.field(key)
                assert hit is not None
                value[key] = convert_unstructured(value[key], hit[0])
        return value
    if ts.is_map:
        if not isinstance(value, dict):
            raise DecodeError(f"cannot restore map from {_go_kind(value)}")
        values = ts.values()
        for k in value:
            value[k] = convert_unstructured(value[k], values)
        return value
    if ts.is_list:
        if isinstance(value, str) and go_type(ts) == "[]uint8":
            return value
        if not isinstance(value, list):
            raise DecodeError(f"cannot restore slice from {_go_kind(value)}")
        items = ts.items()
        return [convert_unstructured(v, items) for v in value]
    return _convert_scalar(value, ts)


def _convert_scalar(value: Any, ts: TypeSchema) -> Any:
    types = _types(ts)
    if len(types) != 1 or types[0] not in ("integer", "number", "string", "boolean"):
        return value
    want, dt = types[0], go_type(ts)
    kind = _go_kind(value)
    same = {"integer": kind == "int64" and dt == "int64", "number": kind == "float64",
            "string": kind == "string", "boolean": kind == "bool"}[want]
    if same:
        return value
    if want == "integer" and kind == "int64":
        return _wrap(value, 32 if dt == "int32" else 64)
    if want == "integer" and kind == "float64":
        if value.is_integer():
            # a float64 out of the integer's range converts to the "integer indefinite" value on amd64
            lo, hi = INT32 if dt == "int32" else INT64
            return int(value) if lo <= value <= hi else lo
        raise DecodeError(f"cannot convert float64 to {dt}")
    if want == "number" and kind == "int64":
        return float(value)
    if want == "string" and kind == "int64":
        raise DecodeError(f"cannot convert int64 to {dt}")   # convertible in Go, refused as JSON would
    raise DecodeError(f"unrecognized type: {dt}")


# ------------------------------------------------------------------------------------------------ apply

def _go_v(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def smd_scalar_error(value: Any, ts: TypeSchema) -> str | None:
    """structured-merge-diff typed/helpers.go validateScalar, for a scalar of the schema (None: fine)."""
    if value is None or _CUSTOM.get(ts.name) is not None:
        return None
    types = _types(ts)
    if len(types) != 1:
        return None
    want = types[0]
    if want in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected numeric (int or float), got {gofmt.go_type(value)}"
    elif want == "string":
        if not isinstance(value, str):
            return f"expected string, got &value.valueUnstructured{{Value:{_go_v(value)}}}"
    elif want == "boolean":
        if not isinstance(value, bool):
            return f"expected boolean, got &{{{_go_v(value)}}}"
    return None


# ------------------------------------------------------------------------------------------------ numbers

def untyped_numbers(value: Any) -> Any:
    """util/json convertNumber: an integer that does not fit int64 becomes a float64 (in place)."""
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in list(items):
            if isinstance(v, int) and not isinstance(v, bool) and not INT64[0] <= v <= INT64[1]:
                node[k] = float(v)
            elif isinstance(v, (dict, list)):
                stack.append(v)
    return value


# ------------------------------------------------------------------------------------------------ data at rest

def stored_problem(minor: int, kind: str, obj: Any) -> str | None:
    """Why an object read back from a data directory cannot be served (an older podlife stored it without
    these checks), or None."""
    from podlife.api.schema import type_schema

    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return "not an object with metadata"
    if depth_of(obj) > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    api_version = obj.get("apiVersion")
    ts = type_schema(minor, api_version, kind) if isinstance(api_version, str) else None
    if ts is not None:
        err = type_error(obj, ts)
        if err is not None:
            return err
    for where in (("spec",), ("spec", "jobTemplate", "spec")):
        spec: Any = obj
        for seg in where:
            spec = spec.get(seg) if isinstance(spec, dict) else None
        if isinstance(spec, dict):
            for key in ("replicas", "parallelism", "completions", "minReplicas", "maxReplicas"):
                n = spec.get(key)
                if isinstance(n, int) and not isinstance(n, bool) and n > MAX_REPLICAS:
                    return (f"{'.'.join(where + (key,))}: {n:,} pods; podlife runs workloads of at most "
                            f"{MAX_REPLICAS:,} pods")
    return None

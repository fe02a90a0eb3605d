"""Strict decoding of manifests against the OpenAPI schema of a Kubernetes version.

``kubectl apply`` asks the API server for ``fieldValidation=Strict``: a field the version's types do not have,
or a value of the wrong JSON type, rejects the object (staging/src/k8s.io/apimachinery/pkg/runtime/serializer/
json: strict decoding; encoding/json: "cannot unmarshal string into Go struct field … of type int32").
The schemas are the ones kubernetes-validate ships, generated from each release's OpenAPI document
(1.25 onward). Older minors use the 1.25 schema with the changes listed in ``versions.SCHEMA_CHANGES``.

Custom resources are checked against the ``openAPIV3Schema`` of their CustomResourceDefinition version, as
the apiextensions API server does for structural schemas (unknown fields rejected unless
``x-kubernetes-preserve-unknown-fields``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable

import orjson

from podlife.api.meta import KindInfo, builtin_kind_info
from podlife.api.quickcheck import QuickCheck
from podlife.versions import SCHEMA_CHANGES, SCHEMA_FLOOR

if TYPE_CHECKING:
    import jsonschema

_INT_RANGES = {"int32": (-(2 ** 31), 2 ** 31 - 1), "int64": (-(2 ** 63), 2 ** 63 - 1)}


@dataclass(frozen=True)
class SchemaError:
    """A manifest's schema error: where in the manifest, and what."""

    path: tuple[str | int, ...]   # inside the manifest
    message: str


@dataclass(frozen=True)
class GroupVersionKind:
    """A kind in an API group version."""

    api_version: str   # "apps/v1", "v1"
    kind: str


# ------------------------------------------------------------------------------------------------ schemas

@lru_cache(maxsize=1)
def _schemas_root() -> str:
    """kubernetes-validate's schema files, found without importing the package (its ``__init__`` loads its own
    command line's dependencies: a third of a small run's start-up once). Paths are strings: pathlib (with
    urllib.parse) is 12M instructions to import, which a run need not pay for."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("kubernetes_validate")
    return os.path.join(next(iter(spec.submodule_search_locations)), "kubernetes-json-schema")


def _definitions_bytes(minor: int) -> bytes:
    """The ``_definitions.json`` file of a shipped schema release."""
    with open(os.path.join(_schemas_root(), f"v1.{minor}.0-local-strict", "_definitions.json"), "rb") as f:
        return f.read()


def schema_minor(minor: int) -> int:
    """The schema release a minor is checked against (the newest shipped one not newer than it)."""
    shipped = _shipped_minors()
    return max([m for m in shipped if m <= minor] or [SCHEMA_FLOOR])


@lru_cache(maxsize=None)
def _shipped_minors() -> tuple[int, ...]:
    out = []
    for name in os.listdir(_schemas_root()):
        m = re.fullmatch(r"v1\.(\d+)\.0-local-strict", name)
        if m:
            out.append(int(m.group(1)))
    return tuple(sorted(out))


# fields the OpenAPI document lists as required that the API server accepts absent: decoding leaves them empty,
# then defaulting or validation (pkg/apis/batch/validation) decide
_NOT_REQUIRED_AT_DECODING = (
    # a rule with only onExitCodes (1.25-1.28 documents onPodConditions as required; validatePodFailurePolicyRule
    # wants exactly one of the two)
    ("io.k8s.api.batch.v1.PodFailurePolicyRule", "onPodConditions"),
    # SetDefaults_Job: a pattern's status defaults to True
    ("io.k8s.api.batch.v1.PodFailurePolicyOnPodConditionsPattern", "status"),
)


@lru_cache(maxsize=4)
def _definitions(minor: int) -> dict[str, Any]:
    """The ``$defs`` document of a minor, with the changes for minors older than the schemas applied."""
    shipped = schema_minor(minor)
    # orjson: the same objects as json.loads, in half the time (1.5 MB a minor, read by every run)
    doc = orjson.loads(_definitions_bytes(shipped))
    # resource.Quantity's UnmarshalJSON parses the string at decoding: a malformed one is a decode error
    quantity = doc["$defs"].get("io.k8s.apimachinery.pkg.api.resource.Quantity")
    if quantity is not None:
        quantity["format"] = "quantity"
    relaxed: dict[str, list[str]] = {}
    doc["x-podlife-published-required"] = relaxed   # as upstream publishes them (the OpenAPI documents)
    for definition, field in _NOT_REQUIRED_AT_DECODING:
        d = doc["$defs"].get(definition)
        if d is not None and field in (d.get("required") or ()):
            relaxed.setdefault(definition, d["required"])
            d["required"] = [f for f in d["required"] if f != field]
    # intstr.IntOrString's UnmarshalJSON decodes a number into IntVal, an int32 (1.0e+308 or 2^40 is refused)
    intstr = doc["$defs"].get("io.k8s.apimachinery.pkg.util.intstr.IntOrString")
    for branch in (intstr or {}).get("oneOf") or ():
        if "integer" in (branch.get("type") or ()):
            branch["format"] = "int32"
    if minor >= shipped:
        return doc
    defs = doc["$defs"]
    for change in SCHEMA_CHANGES:   # still served, gone from the schema (before removals: they share definitions)
        if change.until is not None and minor <= change.until:
            if change.field is None:
                base = defs[change.schema]
                gvk = dict(base["x-kubernetes-group-version-kind"][0], version=change.definition.split(".")[-2])
                defs[change.definition] = {**base, "x-kubernetes-group-version-kind": [gvk],
                                           "properties": {**base["properties"], "apiVersion": {"type": "string"}}}
            else:
                defs[change.definition]["properties"][change.field] = change.schema
    for change in SCHEMA_CHANGES:   # not there yet
        if change.until is None and change.since > minor:
            if change.field is None:
                defs.pop(change.definition, None)
            else:
                defs[change.definition]["properties"].pop(change.field, None)
    return doc


@lru_cache(maxsize=4)
def _catalog(minor: int) -> dict[GroupVersionKind, str]:
    """Every kind the version's API serves, with its schema definition's name."""
    out: dict[GroupVersionKind, str] = {}
    for name, d in _definitions(minor)["$defs"].items():
        for gvk in d.get("x-kubernetes-group-version-kind", ()):
            if name.startswith("io.k8s.apimachinery.") or gvk["kind"].endswith("List"):
                continue
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            out[GroupVersionKind(api_version, gvk["kind"])] = name
    return out


def builtin_kinds(minor: int) -> dict[GroupVersionKind, str]:
    return _catalog(minor)


@lru_cache(maxsize=4)
def definitions(minor: int) -> dict[str, Any]:
    """Every schema definition of the version, by name (io.k8s.api.apps.v1.Deployment), as upstream publishes
    them: with the required fields decoding lets pass (_NOT_REQUIRED_AT_DECODING); do not modify."""
    doc = _definitions(minor)
    published = dict(doc["$defs"])
    for name, required in doc["x-podlife-published-required"].items():
        published[name] = {**published[name], "required": required}
    return published


def discovery(minor: int) -> Callable[[str, str], KindInfo | None]:
    """What the store asks about a kind outside podlife's model: is it served, and how."""
    return lambda kind, api_version: (builtin_kind_info(kind, api_version)
                                      if GroupVersionKind(api_version, kind) in _catalog(minor) else None)


@dataclass(frozen=True)
class ServedKind:
    """A kind the API server serves: its scope and its schema definition."""

    kind: str
    namespaced: bool
    definition: str | None            # the built-in schema definition, None for a custom resource
    api_versions: tuple[str, ...]


@lru_cache(maxsize=4)
def _builtin_kind_names(minor: int) -> dict[str, ServedKind]:
    """kind_names of the built-in kinds (the same for every scenario of a minor: kept; do not modify)."""
    from podlife.api.meta import CLUSTER_SCOPED, KINDS, kind_aliases, plural

    out: dict[str, ServedKind] = {}
    by_kind: dict[str, list[GroupVersionKind]] = {}
    for gvk in _catalog(minor):
        by_kind.setdefault(gvk.kind, []).append(gvk)
    for kind, gvks in sorted(by_kind.items()):
        preferred = min(gvks, key=lambda g: (KINDS[kind].api_version != g.api_version if kind in KINDS else 0,
                                             g.api_version))
        served = ServedKind(kind, kind not in CLUSTER_SCOPED, _catalog(minor)[preferred],
                            tuple(sorted(g.api_version for g in gvks)))
        for name in (kind.lower(), plural(kind), *kind_aliases(kind)):
            out.setdefault(name, served)
    return out


def kind_names(minor: int, crds: list[dict[str, Any]]) -> dict[str, ServedKind]:
    """What kubectl resolves a resource name to (pod, pods, po, Pod; a CRD's plural, singular, kind and short
    names): each lower-cased name → the served kind."""
    out = dict(_builtin_kind_names(minor))
    for crd in crds:
        spec = spec_ if isinstance(spec_ := crd.get("spec"), dict) else {}
        names = names_ if isinstance(names_ := spec.get("names"), dict) else {}
        crd_kind = names.get("kind")
        if not isinstance(crd_kind, str) or not crd_kind:
            continue
        versions = tuple(sorted(f"{spec.get('group')}/{v.get('name')}" for v in spec.get("versions") or ()
                                if isinstance(v, dict)))
        served = ServedKind(crd_kind, spec.get("scope") != "Cluster", None, versions)
        for name in (crd_kind, names.get("plural"), names.get("singular"), *(names.get("shortNames") or ())):
            if isinstance(name, str) and name:
                out[name.lower()] = served
    return out


def check_patch(patch: dict[str, Any], definition: str, minor: int) -> list[SchemaError]:
    """Strict decoding of a JSON merge patch: the fields it sets must exist with the right types (null deletes
    a field; required fields may be absent, the stored object has them)."""
    if _quick(minor, patch=True).valid(definition, patch):
        return []
    validator, names = _builtin_validator(minor, definition)
    out: list[SchemaError] = []
    for e in validator.iter_errors(patch):
        if e.validator == "required" or e.instance is None:
            continue
        if e.validator in ("oneOf", "anyOf") and any(
                sub.validator == "required" for sub in e.context or ()):
            continue
        out.extend(_explain(e, names, definition.rpartition(".")[2], minor))
    return sorted(set(out), key=lambda s: [str(p) for p in s.path])


def served_versions(minor: int, kind: str) -> list[str]:
    """apiVersions that serve ``kind`` in this minor, sorted."""
    return sorted(g.api_version for g in _catalog(minor) if g.kind == kind)


def _int_in(lo: int, hi: int) -> Callable[[Any], bool]:
    # (a float with no fraction is an "integer" to JSON Schema: 1.0e+308 must not pass as an int32; upstream,
    # kubectl's YAML-to-JSON writes it as 1e+308, which does not decode into an integer field at all)
    return lambda v: not isinstance(v, (int, float)) or isinstance(v, bool) or lo <= v <= hi


def _date_time(v: Any) -> bool:
    # metav1.Time's UnmarshalJSON parses RFC 3339 at decoding
    return not isinstance(v, str) or bool(_RFC3339.fullmatch(v))


def _format_tests() -> dict[str, Callable[[Any], bool]]:
    """The formats decoding checks; ``quantity`` raises ValueError with upstream's message."""
    tests = {fmt: _int_in(lo, hi) for fmt, (lo, hi) in _INT_RANGES.items()}
    return {**tests, "quantity": _quantity, "date-time": _date_time}


@lru_cache(maxsize=1)
def _format_checker() -> jsonschema.FormatChecker:
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    for fmt, test in _FORMAT_TESTS.items():
        checker.checks(fmt, raises=ValueError if fmt == "quantity" else ())(test)
    return checker


_RFC3339 = re.compile(r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)"
                      r"(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)")


def _quantity(value: Any) -> bool:
    from podlife.api.quantity import parse_quantity

    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        parse_quantity(str(value))   # raises ValueError (QuantityError) with upstream's message
    return True


_FORMAT_TESTS = _format_tests()

# ------------------------------------------------------------------------------------------------ patterns

@lru_cache(maxsize=1)
def _re2_options() -> Any:
    import re2   # on first use: most runs check no pattern

    options = re2.Options()
    options.log_errors = False   # its errors are reported as field errors, not logged to stderr
    return options


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> Any:
    """A schema's pattern as the API server compiles it: Go's regexp, RE2 syntax, matching in linear time (a
    backtracking engine takes exponential time on '^(a+)+$' against 'aaaa…a!')."""
    import re2

    return re2.compile(pattern, options=_re2_options())


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` does not compile (RE2's wording), or None."""
    import re2

    try:
        _regex(pattern)
        return None
    except re2.error as e:
        text = e.args[0] if e.args else e
        return text.decode(errors="replace") if isinstance(text, bytes) else str(text)


def _pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Any:
    """The ``pattern`` keyword (jsonschema/_keywords.py pattern) with RE2 in place of Python's re."""
    if validator.is_type(instance, "string") and pattern_error(pattern) is None \
            and not _regex(pattern).search(instance):
        import jsonschema

        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@lru_cache(maxsize=1)
def _validator_class() -> type[jsonschema.Validator]:
    """Draft 2020-12 with RE2 patterns; jsonschema is imported here, on the first manifest QuickCheck does not
    pass or the first custom resource (most small runs never do: a fifth of their start-up)."""
    import jsonschema

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


def _validator(schema: dict[str, Any], **kwargs: Any) -> jsonschema.Validator:
    return _validator_class()(schema, format_checker=_format_checker(), **kwargs)


@lru_cache(maxsize=1)
def _schema_format_checker() -> jsonschema.FormatChecker:
    """The metaschema's format checks, with ``regex`` meaning RE2 (which has \\pL and no look-ahead)."""
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    checker.checkers = dict(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("regex")(lambda v: not isinstance(v, str) or pattern_error(v) is None)
    return checker


@lru_cache(maxsize=256)
def _builtin_validator(minor: int, definition: str) -> tuple[jsonschema.Validator, dict[int, str]]:
    from referencing import Registry, Resource

    doc = _definitions(minor)
    registry = Resource.from_contents(doc) @ Registry()
    schema = {"$ref": f"{doc['$id']}#/$defs/{definition}"}
    names = {id(d): n for n, d in doc["$defs"].items()}
    return _validator(schema, registry=registry), names


@lru_cache(maxsize=8)
def _quick(minor: int, patch: bool = False) -> QuickCheck:
    return QuickCheck(_definitions(minor)["$defs"], _FORMAT_TESTS, patch)


@lru_cache(maxsize=64)
def _field_since(definition: str, field: str) -> int | None:
    """The first minor whose API has ``definition.field`` (read on the error path only)."""
    for change in SCHEMA_CHANGES:
        if change.definition == definition and change.field == field and change.until is None:
            return change.since
    for minor in _shipped_minors():
        props = _properties(minor).get(definition)
        if props is not None and field in props:
            return minor
    return None


@lru_cache(maxsize=None)
def _properties(minor: int) -> dict[str, frozenset[str]]:
    doc = orjson.loads(_definitions_bytes(minor))
    return {n: frozenset(d.get("properties") or ()) for n, d in doc["$defs"].items()}


# ------------------------------------------------------------------------------------------------ checking

def _out_of_range(node: Any, path: tuple[str | int, ...] = ()) -> SchemaError | None:
    """A JSON integer no Kubernetes field can hold (beyond int64, the widest; quantities included)."""
    if isinstance(node, bool):
        return None
    if isinstance(node, int):
        lo, hi = _INT_RANGES["int64"]
        return None if lo <= node <= hi else SchemaError(path, f"{node} does not fit in an int64")
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        err = _out_of_range(v, path + (k,))
        if err is not None:
            return err
    return None


def check(obj: dict[str, Any], minor: int, custom: dict[GroupVersionKind, dict[str, Any]] | None = None
          ) -> list[SchemaError]:
    """Errors of strict decoding; the caller has checked apiVersion and kind are strings."""
    huge = _out_of_range(obj)
    if huge is not None:
        return [huge]
    gvk = GroupVersionKind(obj["apiVersion"], obj["kind"])
    try:
        if custom and gvk in custom:
            return _errors(_validator(custom[gvk]), obj, {}, gvk.kind)
        definition = _catalog(minor).get(gvk)
        if definition is None:
            return [SchemaError(("apiVersion",), unknown_kind_message(gvk, minor, custom))]
        if _quick(minor).valid(definition, obj):
            return []
        validator, names = _builtin_validator(minor, definition)
        return _errors(validator, obj, names, definition.rpartition(".")[2], minor)
    except RecursionError:   # jsonschema recurses a few frames per level (a CRD's schema is two levels a field)
        return [_too_deep(obj)]


def _too_deep(obj: Any) -> SchemaError:
    """The deepest point of an object the validator could not follow, as the error's place."""
    deepest: tuple[str | int, ...] = ()
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(obj, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > len(deepest):
            deepest = path
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        stack += [(v, path + (k,)) for k, v in items]
    return SchemaError(deepest, f"nested {len(deepest)} levels deep, deeper than podlife can check against the "
                                "schema; expected fewer levels")


def unknown_kind_message(gvk: GroupVersionKind, minor: int, custom: dict[GroupVersionKind, Any] | None) -> str:
    """kubectl's resource mapping error, with the apiVersions that do serve the kind."""
    versions = served_versions(minor, gvk.kind) + sorted(g.api_version for g in custom or () if g.kind == gvk.kind)
    text = f'no matches for kind "{gvk.kind}" in version "{gvk.api_version}" on Kubernetes 1.{minor}'
    if versions:
        return f"{text}; expected apiVersion {' or '.join(versions)}"
    return f"{text}; expected a built-in kind or a kind defined by a CustomResourceDefinition in the scenario"


def _errors(validator: jsonschema.Validator, obj: dict[str, Any], names: dict[int, str], top: str,
            minor: int | None = None) -> list[SchemaError]:
    out: list[SchemaError] = []
    for e in validator.iter_errors(obj):
        out.extend(_explain(e, names, top, minor))
    return sorted(set(out), key=lambda s: [str(p) for p in s.path])


def _first_type(branch: dict[str, Any]) -> list[Any]:
    """A oneOf/anyOf branch's type (its first, if a list; "?" if none)."""
    t = branch.get("type")
    return [t] if isinstance(t, str) else (t or ["?"])[:1]


def _explain(e: jsonschema.ValidationError, names: dict[int, str], top: str, minor: int | None
             ) -> list[SchemaError]:
    path = tuple(e.absolute_path)
    definition = names.get(id(e.schema), "")
    owner = definition.rpartition(".")[2] or (top if not path else "")
    where = f" in {owner}" if owner else ""
    if e.validator == "additionalProperties" and isinstance(e.instance, dict):
        known = list((e.schema.get("properties") or {}))
        out = []
        for key in e.instance:
            if key in known:
                continue
            since = _field_since(definition, key) if definition and minor is not None else None
            if since is not None and minor is not None and since > minor:
                out.append(SchemaError(path + (key,), f"unknown field in {owner}: Kubernetes 1.{minor} does not "
                                                      f"have it (it exists from 1.{since})"))
                continue
            import difflib   # only for a manifest with an unknown field

            hint = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            tail = f'; did you mean "{hint[0]}"?' if hint else (
                f"; known fields: {', '.join(sorted(known))}" if known else "")
            out.append(SchemaError(path + (key,), f"unknown field{where}{tail}"))
        return out
    if e.validator == "type":
        want = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        want = [w for w in want if w != "null"]
        fmt = e.schema.get("format")
        return [SchemaError(path, f"expected {_a(want, fmt)}, got {_describe(e.instance)}")]
    if e.validator == "format" and e.validator_value == "quantity":
        return [SchemaError(path, f"{_describe(e.instance)} is not a quantity: {e.cause or 'malformed'}")]
    if e.validator == "format" and e.validator_value == "date-time":
        return [SchemaError(path, f"{_describe(e.instance)} is not an RFC 3339 time; expected e.g. "
                                  '"2024-05-01T12:00:00Z"')]
    if e.validator == "format":
        return [SchemaError(path, f"{e.instance} does not fit in an {e.validator_value}")]
    if e.validator in ("oneOf", "anyOf"):
        if e.instance is None:   # both branches allow null: an unset int-or-string or quantity
            return []
        kinds = [t for s in e.validator_value if isinstance(s, dict) for t in _first_type(s)]
        if sorted(kinds) == ["integer", "string"]:
            v = e.instance
            if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer():
                text = f"{v:g}" if isinstance(v, float) else str(v)
                return [SchemaError(path, f"{text} does not fit in an int32; expected an integer (int32) or a "
                                          "string (int-or-string)")]
            return [SchemaError(path, f"expected an integer or a string (int-or-string), got {_describe(e.instance)}")]
        if sorted(kinds) == ["number", "string"]:
            return [SchemaError(path, f"expected a quantity (a string such as 500m or 1Gi, or a number), "
                                      f"got {_describe(e.instance)}")]
        return [SchemaError(path, e.message)]
    if e.validator == "enum":
        allowed = [v for v in e.validator_value if v is not None]
        return [SchemaError(path, f"{_describe(e.instance)} is not supported; expected one of "
                                  f"{', '.join(json.dumps(v) for v in allowed)}")]
    if e.validator == "required":
        missing = re.search(r"'([^']+)' is a required property", e.message)
        field = missing.group(1) if missing else "?"
        return [SchemaError(path + (field,), "required field missing")]
    return [SchemaError(path, e.message)]


_ARTICLE = {"integer": "an integer", "string": "a string", "boolean": "a boolean", "number": "a number",
            "array": "a list", "object": "a mapping"}


def _a(types: list[str], fmt: str | None) -> str:
    words = [_ARTICLE.get(t, t) for t in types]
    text = " or ".join(words) or "null"
    return f"{text} ({fmt})" if fmt in _INT_RANGES else text


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f'the string "{value}"' if len(value) <= 40 else "a string"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "null"


# ------------------------------------------------------------------------------------------------ CRDs

def custom_schemas(crd: dict[str, Any]) -> dict[GroupVersionKind, dict[str, Any]]:
    """Schemas of each served version of a CustomResourceDefinition (apiextensions.k8s.io/v1)."""
    spec = crd.get("spec") or {}
    group, kind = spec.get("group", ""), (spec.get("names") or {}).get("kind", "")
    out: dict[GroupVersionKind, dict[str, Any]] = {}
    for v in spec.get("versions") or ():
        if not isinstance(v, dict) or not v.get("served", True):
            continue
        schema = ((v.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object",
                                                                          "x-kubernetes-preserve-unknown-fields": True}
        out[GroupVersionKind(f"{group}/{v.get('name', '')}", kind)] = _structural(schema, top=True)
    return out


def invalid_custom_schemas(crd: dict[str, Any]) -> list[tuple[int, tuple[str | int, ...], str]]:
    """(version index, path inside its openAPIV3Schema, problem) for each schema that is not usable (the
    apiextensions validation refuses those CRDs)."""
    out = []
    for i, v in enumerate((crd.get("spec") or {}).get("versions") or ()):
        raw = ((v.get("schema") or {}).get("openAPIV3Schema")) if isinstance(v, dict) else None
        if raw is None:
            continue
        bad = _bad_patterns(raw)
        if bad:
            out.append((i, *bad[0]))
            continue
        try:
            problem = _schema_problem(_structural(raw, top=True))
        except RecursionError:   # deeper than the YAML reader allows; reachable through the API server's JSON
            problem = "nested too deeply for podlife to read; expected fewer levels"
        if problem is not None:
            out.append((i, (), problem))
    return out


def _bad_patterns(raw: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """apiextensions validation.go validateValueValidation: each pattern must compile (regexp.Compile)."""
    out = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(raw, ())]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict):
            continue
        pattern = node.get("pattern")
        problem = pattern_error(pattern) if isinstance(pattern, str) and pattern else None
        if problem is not None:
            out.append((path + ("pattern",), f"{json.dumps(pattern)} must be a valid regular expression, but "
                                              f"isn't: {problem}"))
        for key in ("properties", "patternProperties", "definitions"):
            if isinstance(node.get(key), dict):
                stack += [(v, path + (key, k)) for k, v in node[key].items()]
        for key in ("items", "additionalProperties", "additionalItems", "not"):
            sub = node.get(key)
            stack += [(x, path + (key, j)) for j, x in enumerate(sub)] if isinstance(sub,
                                                                                     list) else [(sub, path + (key,))]
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                stack += [(x, path + (key, j)) for j, x in enumerate(node[key])]
    return sorted(out, key=lambda e: [str(p) for p in e[0]])


_SUBSCHEMAS = ("properties", "items", "additionalProperties", "allOf", "anyOf", "oneOf")


def _schema_problem(structural: dict[str, Any]) -> str | None:
    """What makes a structural schema unusable, or None. The metaschema check recurses about ten frames per
    level, so a schema nested a hundred levels deep (which upstream accepts) is checked node by node."""
    import jsonschema

    try:
        _validator_class().check_schema(structural, format_checker=_schema_format_checker())
        return None
    except jsonschema.SchemaError as e:
        return e.message
    except RecursionError:
        pass
    stack = [structural]
    while stack:   # each node with its subschemas stubbed out; _structural made them all dicts or False
        node = stack.pop()
        shallow = {k: v for k, v in node.items() if k not in _SUBSCHEMAS}
        for key in _SUBSCHEMAS:
            sub = node.get(key)
            if isinstance(sub, dict):
                shallow[key] = {k: {} for k in sub} if key == "properties" else {}
                stack += list(sub.values()) if key == "properties" else [sub]
            elif isinstance(sub, list):
                shallow[key] = [{} for _ in sub]
                stack += sub
            elif sub is not None:
                shallow[key] = sub
        try:
            _validator_class().check_schema(shallow, format_checker=_schema_format_checker())
        except jsonschema.SchemaError as e:
            return e.message
    return None


_META = {"type": "object"}


def _structural(s: Any, top: bool = False) -> dict[str, Any]:
    """An OpenAPI v3 structural schema as JSON Schema: objects without ``x-kubernetes-preserve-unknown-fields``
    reject unknown properties (apiextensions-apiserver: pruning, reported as unknown fields in strict mode);
    int-or-string and embedded resources are honoured."""
    if not isinstance(s, dict):
        return {}
    out: dict[str, Any] = {}
    for key in ("type", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems",
                "maxItems", "required", "format", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        if key in s:
            out[key] = s[key]
    if s.get("nullable") and "type" in s:
        out["type"] = [s["type"], "null"]
    if s.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        # intstr.IntOrString's integer is an int32 (its UnmarshalJSON decodes into IntVal)
        out["anyOf"] = [{"type": "integer", "format": "int32"}, {"type": "string"}]
    if out.get("format") not in _INT_RANGES:
        out.pop("format", None)
    props = s.get("properties")
    if isinstance(props, dict):
        out["properties"] = {k: _structural(v) for k, v in props.items()}
    if top:
        out.setdefault("properties", {})
        for key in ("apiVersion", "kind"):
            out["properties"].setdefault(key, {"type": "string"})
        out["properties"]["metadata"] = _META
    if "items" in s:
        out["items"] = _structural(s["items"])
    extra = s.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _structural(extra)
    elif s.get("type") == "object" and not s.get("x-kubernetes-preserve-unknown-fields") \
            and not s.get("x-kubernetes-embedded-resource") and (isinstance(props, dict) or top):
        out["additionalProperties"] = False
    for key in ("allOf", "anyOf", "oneOf"):
        if key in s and key not in out:
            out[key] = [_structural(x) for x in s[key]]
    return out


# ------------------------------------------------------------------------------------------------ types

class TypeSchema:
    """One node of a built-in type's schema, seen as the Go type behind it: a struct (``properties``), a map
    (``additionalProperties``), a list (``items``), or a value decoded whole (scalars, Quantity, IntOrString,
    RawExtension). Strategic merge patch, server-side apply and pruning walk objects with it."""

    __slots__ = ("_defs", "node", "name")

    def __init__(self, defs: dict[str, Any], node: dict[str, Any], name: str = "") -> None:
        while True:
            if node.get("allOf"):
                node = node["allOf"][0]
            ref = node.get("$ref")
            if not ref:
                break
            name = ref.rpartition("/")[2]
            node = defs[name]
        self._defs, self.node, self.name = defs, node, name

    @property
    def go_name(self) -> str:
        """The Go type's name, as upstream's errors print it (``PodSpec``)."""
        return self.name.rpartition(".")[2]

    @property
    def is_struct(self) -> bool:
        return "properties" in self.node

    @property
    def is_map(self) -> bool:
        return isinstance(self.node.get("additionalProperties"), dict)

    @property
    def is_list(self) -> bool:
        return "items" in self.node

    def field(self, key: str) -> tuple[TypeSchema, dict[str, Any]] | None:
        """A struct field's schema and its property node (where the x-kubernetes extensions are)."""
        prop = (self.node.get("properties") or {}).get(key)
        return None if prop is None else (TypeSchema(self._defs, prop), prop)

    def fields(self) -> dict[str, Any]:
        return self.node.get("properties") or {}

    def items(self) -> TypeSchema:
        return TypeSchema(self._defs, self.node.get("items") or {})

    def values(self) -> TypeSchema:
        extra = self.node.get("additionalProperties")
        return TypeSchema(self._defs, extra if isinstance(extra, dict) else {})


def type_schema(minor: int, api_version: str, kind: str) -> TypeSchema | None:
    """The schema of a built-in kind in this minor, or None when the version does not serve it."""
    definition = _catalog(minor).get(GroupVersionKind(api_version, kind))
    if definition is None:
        return None
    defs = _definitions(minor)["$defs"]
    return TypeSchema(defs, defs[definition], definition)


OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def object_meta(minor: int) -> TypeSchema:
    """ObjectMeta's schema in this minor (a custom resource's metadata decodes into it)."""
    defs = _definitions(minor)["$defs"]
    return TypeSchema(defs, defs[OBJECT_META], OBJECT_META)


def custom_type_schema(minor: int, raw: dict[str, Any] | None) -> TypeSchema | None:
    """A custom resource version's openAPIV3Schema as the field manager's type converter sees it: the root and
    each x-kubernetes-embedded-resource carry apiVersion, kind and an ObjectMeta metadata (kube-openapi
    builder, apiextensions-apiserver pkg/controller/openapi/builder). None without a schema."""
    if not isinstance(raw, dict):
        return None
    defs = _definitions(minor)["$defs"]
    return TypeSchema(defs, _with_meta(raw, True))


def _with_meta(s: Any, resource: bool) -> Any:
    if not isinstance(s, dict):
        return s
    out = dict(s)
    props = {k: _with_meta(v, bool(isinstance(v, dict) and v.get("x-kubernetes-embedded-resource")))
             for k, v in (s.get("properties") or {}).items()} if isinstance(s.get("properties"), dict) else None
    if resource:
        props = props or {}
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props["metadata"] = {"$ref": f"#/$defs/{OBJECT_META}"}
    if props is not None:
        out["properties"] = props
    for key in ("items", "additionalProperties"):
        if isinstance(s.get(key), dict):
            out[key] = _with_meta(s[key], bool(s[key].get("x-kubernetes-embedded-resource")))
    return out

"""The scenario's objects (``spec.objects``, ``objectsFrom`` files, create/apply manifests): shape, strict
decoding against the version's schema, and the warnings about what podlife does not model."""

from __future__ import annotations

import copy
import os
from typing import Any

from podlife.api import schema
from podlife.api.meta import KINDS
from podlife.api.warnings import manifest_warnings as api_warnings
from podlife.api.warnings import missing_references, unmodelled_fields
from podlife.scenario.fieldcheck import Check
from podlife.scenario.fieldpath import join_path, schema_path
from podlife.scenario.model import Manifest
from podlife.api.decoding import MAX_REPLICAS
from podlife.scenario.yamlread import Builder, Raw, compose, read_text
from podlife.versions import Profile



def manifest_shape(ck: Check, value: Any, path: str) -> dict[str, Any]:
    """Only the shape: a mapping with apiVersion, kind and metadata.name or generateName (the API validates)."""
    obj = ck.mapping(value, path or "", optional=False)
    for key in ("apiVersion", "kind"):
        ck.nonempty(ck.required(obj, key, path, "a non-empty string"), join_path(path, key), "a non-empty string")
    meta = ck.mapping(ck.required(obj, "metadata", path, "a mapping with name or generateName"),
                      join_path(path, "metadata"), optional=False)
    mpath = join_path(path, "metadata")
    if meta.get("name") is None and meta.get("generateName") is None:
        raise ck.error(join_path(mpath, "name"), "required field missing; expected metadata.name or "
                                             "metadata.generateName")
    for key in ("name", "generateName", "namespace"):
        if meta.get(key) is not None:
            ck.nonempty(meta[key], join_path(mpath, key), "a non-empty string")
    return obj


# (the check that knows the manifest's lines, the manifest, its path): strict decoding waits for the version
# and for every CustomResourceDefinition of the scenario
Pending = list[tuple[Check, dict[str, Any], str]]


def _manifests(ck: Check, value: Any, path: str, out: list[Manifest], pending: Pending) -> None:
    """One manifest, or each item of a ``kind: List`` (kubectl accepts v1 List and any ``…List`` with items)."""
    obj = ck.mapping(value, path or "", optional=False)
    kind = obj.get("kind")
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list)):
        ck.known(obj, path, ("apiVersion", "kind", "metadata", "items"))
        for i, item in enumerate(ck.sequence(ck.required(obj, "items", path, "a list of manifests"),
                                             join_path(path, "items"))):
            _manifests(ck, item, join_path(join_path(path, "items"), i), out, pending)
        return
    json_numbers(obj)
    out.append(Manifest(manifest_shape(ck, obj, path), ck.source(path)))
    pending.append((ck, obj, path))


def json_numbers(node: Any) -> None:
    """What kubectl's YAML-to-JSON conversion does to numbers: a float with no fraction below 1e21 is written
    without a decimal point (encoding/json's float format), so the API server reads it as an integer (``5.0``
    is 5, and ``-5.0`` fails validation as -5 does); a larger one keeps its exponent and does not decode into an
    integer field. In place, keeping the mapping's order."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in list(items):
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            node[k] = int(v)
        elif isinstance(v, (dict, list)):
            json_numbers(v)


def read_objects(ck: Check, inline: Any, files: Any) -> tuple[list[Manifest], Pending]:
    out: list[Manifest] = []
    pending: Pending = []
    for i, obj in enumerate(ck.sequence(inline, "spec.objects")):
        _manifests(ck, obj, f"spec.objects[{i}]", out, pending)
    base = os.path.dirname(ck.file)
    for i, rel in enumerate(ck.sequence(files, "spec.objectsFrom")):
        path = f"spec.objectsFrom[{i}]"
        rel = ck.nonempty(rel, path, "a file path relative to the scenario")
        _objects_file(ck, rel if rel in ck.raw.sources else os.path.normpath(os.path.join(base, rel)), path, out,
                      pending)
    return out, pending


def _objects_file(ck: Check, file: str, path: str, out: list[Manifest], pending: Pending) -> None:
    try:
        text = ck.raw.sources[file] if file in ck.raw.sources else read_text(file)
    except OSError as exc:
        raise ck.error(path, f'cannot read "{file}": {exc.strerror or exc}') from None
    for node in compose(text, file):
        lines: dict[str, int] = {}
        texts: dict[str, str] = {}
        obj = Builder(file, lines, texts).tree(node)
        if obj is None:
            continue  # an empty document, as kubectl skips them
        lines[""] = node.start_mark.line + 1
        doc = Check(Raw(file, obj, lines, texts))
        doc.warnings = ck.warnings
        _manifests(doc, obj, "", out, pending)


def decode_strictly(pending: Pending, prof: Profile, notes: list[tuple[dict[str, Any], str, str]]
            ) -> list[dict[str, Any]]:
    """Decode every manifest strictly against the version's schema (kubectl apply --validate=strict), custom
    resources against their CustomResourceDefinition; then one warning per kind podlife does not model, and one
    per not-modelled field a manifest sets (also added to ``notes``: manifest, field path, message)."""
    minor = prof.minor
    custom: dict[schema.GroupVersionKind, dict[str, Any]] = {}
    for c, obj, path in pending:
        if obj.get("kind") == "CustomResourceDefinition":
            _strict_one(c, obj, path, minor, {})
            for i, where, problem in schema.invalid_custom_schemas(obj):
                field = schema_path(path, ("spec", "versions", i, "schema", "openAPIV3Schema", *where))
                raise c.error(field, problem if where else f"not a valid structural schema: {problem}")
            custom.update(schema.custom_schemas(obj))
    unmodelled: dict[tuple[str, str], list[tuple[Check, str]]] = {}
    dropped: list[list[str]] = []
    for c, obj, path in pending:
        if obj.get("kind") != "CustomResourceDefinition":
            _strict_one(c, obj, path, minor, custom)
            dropped.append(_gated_fields(c, obj, path, prof))
        else:
            dropped.append([])
        if obj["kind"] not in KINDS and obj["kind"] != "CustomResourceDefinition":
            unmodelled.setdefault((obj["kind"], obj["apiVersion"]), []).append((c, path))
    for (c, obj, path), gone in zip(pending, dropped):
        said = api_warnings(obj, prof)
        told = [sub for sub, _ in said] + gone   # a field the version drops needs no "not modelled" as well
        for sub, message in said:
            c.warn(f"{path}.{sub}" if path else sub, message)
        for sub, message in unmodelled_fields(obj):
            if not any(sub == t or sub.startswith((f"{t}.", f"{t}[")) for t in told):
                c.warn(f"{path}.{sub}" if path else sub, message)
                notes.append((obj, sub, message))
    objs = [obj for _, obj, _ in pending]
    for i, sub, message in missing_references(objs):
        c, _, path = pending[i]
        c.warn(f"{path}.{sub}" if path else sub, message)
    for (kind, api_version), places in unmodelled.items():
        c, path = places[0]
        what = "custom resource" if schema.GroupVersionKind(api_version, kind) in custom else "kind"
        count = f"{len(places)} objects" if len(places) > 1 else "1 object"
        if kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            # podlife.apiserver.webhooks: podlife up calls them on API requests; nothing calls them in a run
            c.warn(path, f"kind {kind} ({api_version}) is stored and validated but no webhook is called by podlife "
                         f"run or by podlife's own controllers (podlife up calls them on API requests): its {count} "
                         "assumed to allow every write unchanged")
            continue
        c.warn(path, f"{what} {kind} ({api_version}) is stored and validated but not modelled: nothing acts on "
                     f"its {count}")
    return [obj for _, obj, _ in pending if obj.get("kind") == "CustomResourceDefinition"]


def _gated_fields(ck: Check, obj: dict[str, Any], path: str, prof: Profile) -> list[str]:
    """Fields the version's API server drops because their feature gate is off (dropDisabledFields): said, not
    silently lost. Returns them."""
    from podlife.api.warnings import manifest_warnings

    covered = {p for p, _ in manifest_warnings(obj, prof)}   # said there, in its own words
    fields = _dropped_fields(obj, prof)
    for field in fields:
        if field in covered:
            continue
        ck.warn(f"{path}.{field}" if path else field,
                f"dropped: Kubernetes {prof.version} does not have this field (its feature gate is off)")
    return fields


def _dropped_fields(obj: dict[str, Any], prof: Profile) -> list[str]:
    """The paths (from the object's root) of the gated fields the version drops: in a pod spec (a Pod, a pod
    template, a CronJob's job template), a Job spec, a StatefulSet's update strategy."""
    from podlife.api.registry.job import drop_disabled_job_fields
    from podlife.api.podutil import drop_disabled_fields

    def at(*keys: str) -> Any:
        node: Any = obj
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    out: list[str] = []
    kind = obj.get("kind")
    keys: tuple[str, ...]
    for keys in ((("spec",),) if kind == "Job" else (("spec", "jobTemplate", "spec"),) if kind == "CronJob" else ()):
        if isinstance(at(*keys), dict):
            prefix = ".".join(keys[:-1])
            out += [f"{prefix}.{d}" if prefix else d for d in drop_disabled_job_fields(copy.deepcopy(at(*keys)), prof)]
    if kind == "StatefulSet" and "maxUnavailable" in (at("spec", "updateStrategy", "rollingUpdate") or {}) and \
            not prof.statefulset_max_unavailable:
        out.append("spec.updateStrategy.rollingUpdate.maxUnavailable")
    for keys in (("spec",), ("spec", "template", "spec"), ("spec", "jobTemplate", "spec", "template", "spec")):
        spec = at(*keys)
        if isinstance(spec, dict) and "containers" in spec:
            prefix = ".".join(keys[:-1])
            out += [f"{prefix}.{d}" if prefix else d for d in drop_disabled_fields(copy.deepcopy(spec), prof)]
            break
    return out


def _strict_one(ck: Check, obj: dict[str, Any], path: str, minor: int,
                custom: dict[schema.GroupVersionKind, dict[str, Any]]) -> None:
    errors = schema.check(obj, minor, custom)
    if errors:
        first = min(errors, key=lambda e: (ck.line(schema_path(path, e.path)) or 0, [str(p) for p in e.path]))
        raise ck.error(schema_path(path, first.path), first.message)
    workload_size(ck, obj, path)


def workload_size(ck: Check, obj: dict[str, Any], path: str) -> None:
    """Valid upstream up to int32, but no simulation of a billion pods ends: podlife's own limit, said plainly.
    ``obj`` is a manifest or a patch of one: a workload's replicas, a Job's (or CronJob's Job template's)
    parallelism and completions, a HorizontalPodAutoscaler's replica bounds."""
    for where in (("spec",), ("spec", "jobTemplate", "spec")):
        spec: Any = obj
        for seg in where:
            spec = spec.get(seg) if isinstance(spec, dict) else None
        if not isinstance(spec, dict):
            continue
        for key in ("replicas", "parallelism", "completions", "minReplicas", "maxReplicas"):
            n = spec.get(key)
            if isinstance(n, int) and not isinstance(n, bool) and n > MAX_REPLICAS:
                raise ck.error(schema_path(path, where + (key,)), f"{n:,} pods; podlife runs workloads of at "
                                                                  f"most {MAX_REPLICAS:,} pods")



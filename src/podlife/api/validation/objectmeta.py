"""ObjectMeta validation, on create and on update (k8s.io/apimachinery/pkg/api/validation/objectmeta.go:
names, generateName, labels, annotations and their total size, ownerReferences, finalizers)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names, selectors
from podlife.api.errors import FieldError
from podlife.api.gofmt import go_quote
from podlife.api.validation.common import (
    FIELD_IMMUTABLE_ERROR_MSG,
    Errs,
    NameFn,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    invalid_each,
    nonnegative,
    required,
)
from podlife.engine.slices import pause

# --- ObjectMeta (apimachinery api/validation/objectmeta.go) -------------------------------

STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_object_meta(meta: Mapping | None, *, namespaced: bool, name_fn: NameFn, path: str = "metadata",
                         kube_finalizers: bool = True) -> Errs:
    """ValidateObjectMeta (+ core's validateKubeFinalizerName unless ``kube_finalizers`` is False)."""
    meta = as_dict(meta)
    errs: Errs = []
    name, generate_name = meta.get("name") or "", meta.get("generateName") or ""
    if generate_name:
        errs += invalid_each(f"{path}.generateName", generate_name, name_fn(generate_name, True))
    if not name:
        if not generate_name:  # the registry generates the name from generateName before validating
            errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errs += invalid_each(f"{path}.name", name, name_fn(name, False))
    errs += _validate_meta_common(meta, namespaced, path, kube_finalizers)
    return errs


def _validate_meta_common(meta: Mapping, namespaced: bool, path: str, kube_finalizers: bool = True) -> Errs:
    errs: Errs = []
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            errs.append(required(f"{path}.namespace"))
        else:
            errs += invalid_each(f"{path}.namespace", ns, names.name_is_dns_label(ns))
    elif ns:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    errs += nonnegative(meta.get("generation"), f"{path}.generation")
    errs += selectors.validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += _validate_owner_references(as_list(meta.get("ownerReferences")), f"{path}.ownerReferences")
    errs += _validate_finalizers(as_list(meta.get("finalizers")), f"{path}.finalizers", kube_finalizers)
    return errs


def validate_annotations(annotations: Mapping | None, path: str) -> Errs:
    """ValidateAnnotations: keys are qualified names, case-insensitively."""
    if annotations is not None and not isinstance(annotations, Mapping):
        return [invalid(path, annotations, "must be a map of string keys to string values")]
    errs: Errs = []
    for k in sorted(annotations or {}):
        pause()   # many annotations are checked in slices (podlife.engine.slices)
        errs += invalid_each(path, k, names.qualified_name_errors(k.lower()))
    size = sum(len(str(k)) + len(str(v)) for k, v in (annotations or {}).items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(FieldError(path, "Too long", f"must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return errs


TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024   # TotalAnnotationSizeLimitB


def _validate_owner_references(refs: list, path: str) -> Errs:
    errs: Errs = []
    controller = ""
    for ref in refs:
        ref = as_dict(ref)
        api_version = as_str(ref.get("apiVersion"))
        if not api_version.rsplit("/", 1)[-1]:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(invalid(f"{path}.{key}", ref.get(key) or "", "must not be empty"))
        if api_version == "v1" and ref.get("kind") == "Event":
            errs.append(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                detail = ('Only one reference can have Controller set to true. Found "true" in references for '
                          f"{controller} and {current}")
                errs.append(invalid(path, refs, detail))
            else:
                controller = current
    return errs


def kube_finalizer_errors(value: str, path: str) -> Errs:
    """validateKubeFinalizerName: unqualified finalizers must be standard ones."""
    if "/" not in value and value not in STANDARD_FINALIZERS:
        return [invalid(path, value, "name is neither a standard finalizer name nor is it fully qualified")]
    return []


def custom_finalizer_warnings(finalizers: list, old: list | None, style: str,
                              path: str = "metadata.finalizers") -> list[str]:
    """apiextensions-apiserver registry/customresource/validator.go validateKubeFinalizerName, as warnings for the
    finalizers a write adds (strategy.go generateWarningsFromObj), sorted; ``style`` is the version's
    ``custom_finalizer_warning`` (podlife.versions)."""
    out: list[str] = []
    if style == "none":
        return out
    for f in sorted({str(f) for f in finalizers} - {str(f) for f in old or ()}):
        if "/" not in f and f not in STANDARD_FINALIZERS:
            # newer versions name the path (/) for a name that has a domain but no path
            hint = " including a path (/)" if style == "path" and "." in f else ""
            out.append(f"{path}: {go_quote(f)}: prefer a domain-qualified finalizer name{hint} to avoid accidental "
                       "conflicts with other finalizer writers")
    return out


def _validate_finalizers(finalizers: list, path: str, kube_finalizers: bool = True) -> Errs:
    errs: Errs = []
    for f in finalizers:
        errs += invalid_each(path, f, names.qualified_name_errors(str(f)))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"))
    for i, f in enumerate(finalizers if kube_finalizers else ()):
        errs += kube_finalizer_errors(str(f), f"{path}[{i}]")
    return errs


def validate_object_meta_update(new: Mapping | None, old: Mapping | None, path: str = "metadata", *,
                                require_resource_version: bool = False, kube_finalizers: bool = True) -> Errs:
    """ValidateObjectMetaUpdate.

    Upstream's store fills in the stored resourceVersion for unconditional
    updates before validating, so its "must be specified for an update" check
    only bites callers that validate without a store; it is off unless asked for.
    """
    new, old = as_dict(new), as_dict(old)
    errs: Errs = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(as_list(new.get("finalizers"))) - set(as_list(old.get("finalizers"))))
        if extra:
            listed = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(forbidden(f"{path}.finalizers",
                                  "no new finalizers can be added if the object is being deleted, found new "
                                  f"finalizers {listed}"))
    if require_resource_version and not new.get("resourceVersion"):
        errs.append(invalid(f"{path}.resourceVersion", new.get("resourceVersion") or "",
                            "must be specified for an update"))
    if as_int(new.get("generation")) < as_int(old.get("generation")):
        errs.append(invalid(f"{path}.generation", as_int(new.get("generation")), "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if (new.get(key) or None) != (old.get(key) or None):
            errs.append(invalid(f"{path}.{key}", new.get(key), FIELD_IMMUTABLE_ERROR_MSG))
    errs += selectors.validate_labels(new.get("labels"), f"{path}.labels")
    errs += validate_annotations(new.get("annotations"), f"{path}.annotations")
    errs += _validate_owner_references(as_list(new.get("ownerReferences")), f"{path}.ownerReferences")
    errs += _validate_finalizers(as_list(new.get("finalizers")), f"{path}.finalizers", kube_finalizers)
    return errs


def meta(obj: Mapping, namespaced: bool, name_fn=names.name_is_dns_subdomain) -> Errs:
    return validate_object_meta(obj.get("metadata"), namespaced=namespaced, name_fn=name_fn)

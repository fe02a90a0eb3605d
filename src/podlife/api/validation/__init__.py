"""Create/update validation with upstream field paths and wording, one module per API group as upstream keeps
it (pkg/apis/<group>/validation), the helpers they share public in ``common`` and ObjectMeta's rules in
``objectmeta`` (k8s.io/apimachinery/pkg/api/validation/objectmeta.go); this module dispatches by kind, as the
registry strategies' Validate and ValidateUpdate do.

Objects are validated as the API server does: *after* defaulting (see
``podlife.api.defaults.apply_defaults``), so fields that defaulting always
fills (restartPolicy, dnsPolicy, imagePullPolicy, ...) are "Required" when
missing. Unknown fields are ignored (e.g. the legacy ``lifecycle: {type:
Sidecar}`` marker on a container is accepted). Errors are sorted only where
upstream walks a Go map (map keys are visited in sorted order here). Kinds
without a validator of their own get ObjectMeta validation with a DNS-subdomain
name, as most upstream kinds (and custom resources) have.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from podlife.api import names
from podlife.api.errors import FieldError
from podlife.api.meta import CLUSTER_SCOPED
from podlife.api.validation import (
    admissionregistration,
    apiregistration,
    apiextensions,
    autoscaling,
    core,
    networking,
    rbac,
    storage,
)
from podlife.api.validation.apps import (
    validate_daemonset,
    validate_deployment,
    validate_replicaset,
    validate_statefulset,
    validate_statefulset_update,
)
from podlife.api.validation.batch import validate_cronjob, validate_job
from podlife.api.validation.common import (
    FIELD_IMMUTABLE_ERROR_MSG,
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    semantic_equal,
)
from podlife.api.validation.coordination import validate_lease
from podlife.api.validation.core import (
    validate_namespace,
    validate_node,
    validate_node_resources,
    validate_persistent_volume_claim,
    validate_service,
    validate_taints,
)
from podlife.api.validation.core_events import validate_event
from podlife.api.validation.core_pod import validate_pod, validate_pod_update
from podlife.api.validation.objectmeta import validate_object_meta, validate_object_meta_update
from podlife.api.validation.options import reset_rules, set_rules
from podlife.api.validation.policy import validate_pod_disruption_budget
from podlife.api.validation.scheduling import validate_priority_class

__all__ = ["Errs", "reset_rules", "semantic_equal", "set_rules", "update_validator", "validate",
           "validate_node_resources", "validate_update", "validator"]

_CREATE: dict[str, Callable[[Mapping], Errs]] = {
    "CronJob": validate_cronjob,
    "PodDisruptionBudget": validate_pod_disruption_budget,
    "PersistentVolumeClaim": validate_persistent_volume_claim,
    "Pod": validate_pod,
    "Deployment": validate_deployment,
    "ReplicaSet": validate_replicaset,
    "StatefulSet": validate_statefulset,
    "DaemonSet": validate_daemonset,
    "Job": validate_job,
    "Service": validate_service,
    "Node": validate_node,
    "Namespace": validate_namespace,
    "PriorityClass": validate_priority_class,
    "Lease": validate_lease,
    "Event": validate_event,
}


def validate(obj: Mapping, *, old: Mapping | None = None, namespaced: bool | None = None,
             custom: bool = False) -> Errs:
    """Validate a (defaulted) object on create, or on update when ``old`` is given. Kinds without a validator
    of their own (custom resources, most kinds podlife only stores) get ObjectMeta validation with a
    DNS-subdomain name; ``namespaced`` is their scope. A custom resource's metadata gets apimachinery's rules
    only (apiextensions-apiserver registry/customresource/validator.go: ValidateObjectMetaAccessor), so an
    unqualified finalizer is a warning there (custom_finalizer_warnings), not an error."""
    if custom:
        if old is not None:
            return validate_object_meta_update(obj.get("metadata"), old.get("metadata"), kube_finalizers=False)
        return validate_object_meta(obj.get("metadata"), namespaced=_namespaced(obj, namespaced),
                                    name_fn=names.name_is_dns_subdomain, kube_finalizers=False)
    if old is not None:
        return validate_update(obj, old, namespaced=namespaced)
    if not isinstance(obj.get("kind"), str):
        return []
    fn = _create_fn(obj["kind"])
    if fn is not None:
        return fn(obj)
    return validate_object_meta(obj.get("metadata"), namespaced=_namespaced(obj, namespaced),
                                name_fn=names.name_is_dns_subdomain)


def _create_fn(kind: str) -> Callable[[Mapping], Errs] | None:
    return _CREATE.get(kind) or validator(kind)


def _namespaced(obj: Mapping, namespaced: bool | None) -> bool:
    return namespaced if namespaced is not None else as_str(obj.get("kind")) not in CLUSTER_SCOPED


def _immutable(new: object, old: object, path: str) -> Errs:
    return [] if semantic_equal(new, old) else [invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]


def validate_update(new: Mapping, old: Mapping, *, namespaced: bool | None = None) -> Errs:
    """Update validation per kind (the registry strategies' ValidateUpdate)."""
    kind = as_str(new.get("kind"))
    if kind == "Pod":
        return validate_pod_update(new, old)
    if kind == "Event":
        return validate_event(new)
    if kind not in _CREATE:
        errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
        upd = update_validator(kind)
        if upd is not None:
            errs += upd(new, old)
        fn = _create_fn(kind)
        return errs + [e for e in (fn(new) if fn is not None else []) if not e.path.startswith("metadata.")]
    errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    new_spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    if kind == "Namespace":
        return errs
    if kind == "Node":
        taints = as_list(new_spec.get("taints"))
        return (errs + (validate_taints(taints, "metadata.taints") if taints else [])
                + validate_node_resources(as_dict(new.get("status"))))
    if kind == "PriorityClass":  # ValidatePriorityClassUpdate: only value/preemptionPolicy immutability
        if as_int(new.get("value")) != as_int(old.get("value")):
            errs.append(forbidden("value", "may not be changed in an update."))
        return errs + _immutable(new.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy")
    errs += [e for e in _CREATE[kind](new) if not e.path.startswith("metadata.")]  # metadata checked above
    if kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        errs += _immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector")
    elif kind == "StatefulSet":
        errs += validate_statefulset_update(new_spec, old_spec)
    elif kind == "Job":
        for key in ("completions", "selector", "template"):
            errs += _immutable(new_spec.get(key), old_spec.get(key), f"spec.{key}")
    return errs


Validator = Callable[[Mapping], list[FieldError]]

VALIDATORS: dict[str, Validator] = {
    **core.VALIDATORS,
    **autoscaling.VALIDATORS,
    **storage.VALIDATORS,
    **networking.VALIDATORS,
    **rbac.VALIDATORS,
    **apiextensions.VALIDATORS,
    **admissionregistration.VALIDATORS,
    **apiregistration.VALIDATORS,
}


UpdateValidator = Callable[[Mapping, Mapping], list[FieldError]]
UPDATE_VALIDATORS: dict[str, UpdateValidator] = {**core.UPDATE_VALIDATORS}


def update_validator(kind: str) -> UpdateValidator | None:
    """The update-only rules of a kind (new, old), run between ObjectMeta update and create validation."""
    return UPDATE_VALIDATORS.get(kind)


def validator(kind: str) -> Validator | None:
    return VALIDATORS.get(kind)

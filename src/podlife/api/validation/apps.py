"""apps/v1 workloads (pkg/apis/apps/validation/validation.go): Deployment, ReplicaSet, StatefulSet (with
its update rules) and DaemonSet, and the selector/template agreement they share."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names, selectors
from podlife.api.errors import FieldError
from podlife.api.validation import options
from podlife.api.validation.common import (
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    invalid_each,
    is_int,
    nonnegative,
    not_supported,
    required,
    semantic_equal,
)
from podlife.api.validation.core import validate_persistent_volume_claim
from podlife.api.validation.core_pod import (
    always_restart_template,
    validate_pod_annotations,
    validate_pod_template_spec,
)
from podlife.api.validation.objectmeta import validate_annotations, validate_object_meta


def selector_for(sel: object) -> selectors.Selector | None:
    """LabelSelectorAsSelector; None when it errors."""
    try:
        return selectors.label_selector_as_selector(sel if isinstance(sel, dict) else None)
    except ValueError:
        return None


def template_labels(spec: Mapping) -> dict:
    return as_dict(as_dict(as_dict(spec.get("template")).get("metadata")).get("labels"))


def _validate_workload_selector(spec: Mapping, kind: str) -> tuple[Errs, selectors.Selector | None]:
    """Selector required, valid and non-empty; returns the parsed selector."""
    errs: Errs = []
    sel = spec.get("selector")
    if sel is None:
        errs.append(required("spec.selector"))
    else:
        errs += selectors.validate_selector(as_dict(sel), "spec.selector")
        if not as_dict(sel).get("matchLabels") and not as_dict(sel).get("matchExpressions"):
            errs.append(invalid("spec.selector", sel, f"empty selector is invalid for {kind}"))
    return errs, selector_for(sel)


def _validate_template_for_rs(spec: Mapping, selector: selectors.Selector, kind: str) -> Errs:
    """ValidatePodTemplateSpecForReplicaSet."""
    errs: Errs = []
    labels = template_labels(spec)
    if not selector.empty() and not selector.matches(labels):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    errs += validate_pod_template_spec(spec.get("template"), "spec.template")
    errs += always_restart_template(spec, kind)
    return errs


def _int_or_percent(value: object, path: str) -> Errs:
    """ValidatePositiveIntOrPercent."""
    if isinstance(value, str):
        return invalid_each(path, value, names.percent_errors(value))
    if is_int(value) or value is None:
        return nonnegative(as_int(value), path)
    return [invalid(path, value, "must be an integer or percentage (e.g '5%%')")]


def _int_or_percent_value(value: object) -> int:
    if isinstance(value, str):
        return int(value[:-1]) if not names.percent_errors(value) else 0
    return as_int(value)


def _not_more_than_100_percent(value: object, path: str) -> Errs:
    if isinstance(value, str) and not names.percent_errors(value) and int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _validate_deployment_strategy(strategy: Mapping, path: str) -> Errs:
    kind = strategy.get("type") or ""
    ru = strategy.get("rollingUpdate")
    if kind == "Recreate":
        return [forbidden(f"{path}.rollingUpdate",
                          "may not be specified when strategy `type` is 'Recreate'")] if ru is not None else []
    if kind == "RollingUpdate":
        if ru is None:
            return [required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
        ru, rp = as_dict(ru), f"{path}.rollingUpdate"
        errs = _int_or_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
        errs += _int_or_percent(ru.get("maxSurge"), f"{rp}.maxSurge")
        if _int_or_percent_value(ru.get("maxUnavailable")) == 0 and _int_or_percent_value(ru.get("maxSurge")) == 0:
            errs.append(invalid(f"{rp}.maxUnavailable", ru.get("maxUnavailable"), "may not be 0 when `maxSurge` is 0"))
        return errs + _not_more_than_100_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
    return [not_supported(path, strategy, ["Recreate", "RollingUpdate"])]


def validate_deployment(obj: Mapping) -> Errs:
    """ValidateDeployment (apps/v1)."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    sel_errs, selector = _validate_workload_selector(spec, "deployment")
    errs += sel_errs
    if selector is None:
        errs.append(invalid("spec.selector", spec.get("selector"), "invalid label selector"))
    else:
        errs += _validate_template_for_rs(spec, selector, "ReplicaSet")
    errs += _validate_deployment_strategy(as_dict(spec.get("strategy")), "spec.strategy")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    if spec.get("revisionHistoryLimit") is not None:
        errs += nonnegative(spec["revisionHistoryLimit"], "spec.revisionHistoryLimit")
    pds = spec.get("progressDeadlineSeconds")
    if pds is not None:
        errs += nonnegative(pds, "spec.progressDeadlineSeconds")
        if as_int(pds) <= as_int(spec.get("minReadySeconds")):
            errs.append(invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds"))
    return errs


def validate_replicaset(obj: Mapping) -> Errs:
    """ValidateReplicaSet (its empty-selector message says "deployment", as upstream's does)."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    sel_errs, selector = _validate_workload_selector(spec, "deployment")
    errs += sel_errs
    if selector is None:
        errs.append(invalid("spec.selector", spec.get("selector"), "invalid label selector"))
    else:
        errs += _validate_template_for_rs(spec, selector, "ReplicaSet")
    return errs


def validate_statefulset(obj: Mapping) -> Errs:
    """ValidateStatefulSet. Upstream does not validate the template's pod spec (only labels,
    annotations, restartPolicy and activeDeadlineSeconds) - see ValidatePodTemplateSpecForStatefulSet."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_label)
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errs.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    errs += _validate_sts_update_strategy(as_dict(spec.get("updateStrategy")))
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        for key in ("whenDeleted", "whenScaled"):
            value = as_dict(retention).get(key) or ""
            if value not in ("Retain", "Delete"):
                errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", value,
                                          ["Retain", "Delete"]))
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    if spec.get("ordinals") is not None:
        errs += nonnegative(as_dict(spec["ordinals"]).get("start"), "spec.ordinals.start")
    sel_errs, selector = _validate_workload_selector(spec, "statefulset")
    errs += sel_errs
    if selector is None:
        errs.append(invalid("spec.selector", spec.get("selector"), ""))
    else:
        template = as_dict(spec.get("template"))
        labels = template_labels(spec)
        if not selector.empty() and not selector.matches(labels):
            errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
        meta = as_dict(template.get("metadata"))
        errs += selectors.validate_labels(meta.get("labels"), "spec.template.labels")
        errs += validate_annotations(meta.get("annotations"), "spec.template.annotations")
        errs += validate_pod_annotations(meta.get("annotations"), as_dict(template.get("spec")),
                                         "spec.template.annotations")
    # validateVolumeClaimTemplates: each is a named claim with access modes and a storage request
    for k, t in enumerate(as_list(spec.get("volumeClaimTemplates"))):
        tpath = f"spec.volumeClaimTemplates[{k}]"
        name = as_str(as_dict(as_dict(t).get("metadata")).get("name"))
        if not name:
            errs.append(required(f"{tpath}.metadata.name"))
        claim = {"metadata": {"name": name or "x", "namespace": "x"}, "spec": as_dict(as_dict(t).get("spec"))}
        for e in validate_persistent_volume_claim(claim):
            if e.path.startswith("spec"):
                errs.append(FieldError(f"{tpath}.{e.path}", e.type, e.detail, e.value))

    return errs + always_restart_template(spec, "StatefulSet")


def _validate_sts_update_strategy(strategy: Mapping) -> Errs:
    path = "spec.updateStrategy"
    kind = strategy.get("type") or ""
    ru = strategy.get("rollingUpdate")
    if not kind:
        return [required(path)]
    if kind == "OnDelete":
        return [invalid(f"{path}.rollingUpdate", ru,
                        "only allowed for updateStrategy 'RollingUpdate'")] if ru is not None else []
    if kind == "RollingUpdate":
        if ru is None:
            return []
        errs = nonnegative(as_dict(ru).get("partition"), f"{path}.rollingUpdate.partition")
        mu = as_dict(ru).get("maxUnavailable")
        if mu is not None:
            errs += _int_or_percent(mu, f"{path}.rollingUpdate.maxUnavailable")
            if _int_or_percent_value(mu) == 0:
                errs.append(invalid(f"{path}.rollingUpdate.maxUnavailable", mu, "cannot be 0"))
            errs += _not_more_than_100_percent(mu, f"{path}.rollingUpdate.maxUnavailable")
        return errs
    return [invalid(path, strategy, "must be 'RollingUpdate' or 'OnDelete'")]


def validate_daemonset(obj: Mapping) -> Errs:
    """ValidateDaemonSet. A missing selector shows up as a template-label mismatch, as upstream."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    sel = spec.get("selector")
    errs += selectors.validate_selector(as_dict(sel) if sel is not None else None, "spec.selector")
    selector = selector_for(sel)
    labels = template_labels(spec)
    if selector is not None and not selector.matches(labels):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    if sel is not None and not as_dict(sel).get("matchLabels") and not as_dict(sel).get("matchExpressions"):
        errs.append(invalid("spec.selector", sel, "empty selector is invalid for daemonset"))
    errs += validate_pod_template_spec(spec.get("template"), "spec.template")
    errs += always_restart_template(spec, "DaemonSet")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errs += _validate_ds_update_strategy(as_dict(spec.get("updateStrategy")), "spec.updateStrategy")
    if spec.get("revisionHistoryLimit") is not None:
        errs += nonnegative(spec["revisionHistoryLimit"], "spec.revisionHistoryLimit")
    return errs


def _validate_ds_update_strategy(strategy: Mapping, path: str) -> Errs:
    kind = strategy.get("type") or ""
    if kind == "OnDelete":
        return []
    if kind != "RollingUpdate":
        return [not_supported(path, strategy, ["RollingUpdate", "OnDelete"])]
    ru = strategy.get("rollingUpdate")
    if ru is None:
        return [required(f"{path}.rollingUpdate")]
    ru, rp = as_dict(ru), f"{path}.rollingUpdate"
    errs = _int_or_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
    errs += _not_more_than_100_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
    if not options.rules().daemonset_max_surge:
        # ValidateRollingUpdateDaemonSet without DaemonSetUpdateSurge (1.21): maxSurge is not looked at
        if _int_or_percent_value(ru.get("maxUnavailable")) == 0:
            errs.append(invalid(f"{rp}.maxUnavailable", ru.get("maxUnavailable"), "cannot be 0"))
        return errs
    errs += _int_or_percent(ru.get("maxSurge"), f"{rp}.maxSurge")
    errs += _not_more_than_100_percent(ru.get("maxSurge"), f"{rp}.maxSurge")
    has_unavailable = _int_or_percent_value(ru.get("maxUnavailable")) != 0
    has_surge = _int_or_percent_value(ru.get("maxSurge")) != 0
    if has_unavailable and has_surge:
        errs.append(invalid(f"{rp}.maxSurge", ru.get("maxSurge"), "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{rp}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy",
                "minReadySeconds")


def _without_mutable_sts_fields(spec: Mapping) -> dict:
    return {k: v for k, v in spec.items() if k not in _STS_MUTABLE}


def validate_statefulset_update(new: Mapping, old: Mapping) -> Errs:
    """ValidateStatefulSetUpdate: only the listed spec fields may change."""
    if semantic_equal(_without_mutable_sts_fields(new), _without_mutable_sts_fields(old)):
        return []
    return [forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                               "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
                               "forbidden")]

"""HorizontalPodAutoscaler, autoscaling/v1 and v2 (pkg/apis/autoscaling/validation/validation.go)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api.validation.common import (
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    invalid_each,
    not_supported,
    quantity_errors,
    required,
)
from podlife.api.validation.objectmeta import meta

MIN_REPLICAS = 1                 # 0 only with the HPAScaleToZero gate (alpha, off)
MAX_STABILIZATION_WINDOW = 3600  # MaxStabilizationWindowSeconds
MAX_PERIOD = 1800                # MaxPeriodSeconds
_METRIC_TYPES = {"Object": "object", "Pods": "pods", "Resource": "resource", "ContainerResource": "containerResource",
                 "External": "external"}
_TARGET_TYPES = ("Utilization", "Value", "AverageValue")


def _target_ref(ref: Mapping, path: str) -> Errs:
    """ValidateCrossVersionObjectReference."""
    errs: Errs = []
    for key in ("kind", "name"):
        value = as_str(ref.get(key))
        if not value:
            errs.append(required(f"{path}.{key}"))
        else:
            errs += invalid_each(f"{path}.{key}", value, [m for m in ("may not contain '/'",) if "/" in value])
    return errs


def _metric_target(target: Mapping, path: str) -> Errs:
    """validateMetricTarget."""
    errs: Errs = []
    ttype = as_str(target.get("type"))
    if not ttype:
        errs.append(required(f"{path}.type", "must specify a metric target type"))
    elif ttype not in _TARGET_TYPES:
        errs.append(invalid(f"{path}.type", ttype, "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        if target.get(key) is not None:
            errs += quantity_errors(target[key], f"{path}.{key}", positive=True)
    util = target.get("averageUtilization")
    if util is not None and as_int(util) < 1:
        errs.append(invalid(f"{path}.averageUtilization", util, "must be greater than 0"))
    return errs


def _resource_source(src: Mapping, path: str) -> Errs:
    """validateResourceSource / validateContainerResourceSource."""
    errs: Errs = []
    if not as_str(src.get("name")):
        errs.append(required(f"{path}.name", "must specify a resource name"))
    target = as_dict(src.get("target"))
    errs += _metric_target(target, f"{path}.target")
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        errs.append(required(f"{path}.target.averageUtilization", "must set either a target raw value or a "
                                                                   "target utilization"))
    elif target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        errs.append(forbidden(f"{path}.target.averageValue", "may not set both a target raw value and a target "
                                                              "utilization"))
    return errs


def _metrics(metrics: list, path: str) -> Errs:
    errs: Errs = []
    for i, m in enumerate(metrics):
        m, p = as_dict(m), f"{path}[{i}]"
        mtype = as_str(m.get("type"))
        field = _METRIC_TYPES.get(mtype)
        if field is None:
            errs.append(invalid(f"{p}.type", mtype, "must be either External, Object, Pods, Resource or "
                                                     "ContainerResource"))
            continue
        given = [f for f in _METRIC_TYPES.values() if m.get(f) is not None]
        if field not in given:
            errs.append(required(f"{p}.{field}", "must populate information for the given metric source"))
            continue
        if given != [field]:
            errs.append(forbidden(p, "must populate the given metric source only"))
        src = as_dict(m[field])
        if field in ("resource", "containerResource"):
            errs += _resource_source(src, f"{p}.{field}")
            if field == "containerResource" and not as_str(src.get("container")):
                errs.append(required(f"{p}.{field}.container", "must specify a container"))
        else:
            if not as_str(as_dict(src.get("metric")).get("name")):
                errs.append(required(f"{p}.{field}.metric.name", "must specify a metric name"))
            errs += _metric_target(as_dict(src.get("target")), f"{p}.{field}.target")
    return errs


def _rules(rules: object, path: str) -> Errs:
    """validateScalingRules: window 0-3600 s, a known select policy, policies of Pods/Percent with value > 0 and
    a period of 1-1800 s."""
    if rules is None:
        return []
    rules = as_dict(rules)
    errs: Errs = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None:
        if as_int(window) < 0:
            errs.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
        elif as_int(window) > MAX_STABILIZATION_WINDOW:
            errs.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                                 f"must be less than or equal to {MAX_STABILIZATION_WINDOW}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in ("Disabled", "Max", "Min"):
        errs.append(not_supported(f"{path}.selectPolicy", select, ["Disabled", "Max", "Min"]))
    policies = rules.get("policies")
    if policies is not None and not as_list(policies):
        errs.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, pol in enumerate(as_list(policies)):
        pol, p = as_dict(pol), f"{path}.policies[{i}]"
        if as_str(pol.get("type")) not in ("Pods", "Percent"):
            errs.append(invalid(f"{p}.type", as_str(pol.get("type")), "must be either Pods or Percent"))
        if as_int(pol.get("value")) <= 0:
            errs.append(invalid(f"{p}.value", pol.get("value"), "must be greater than zero"))
        period = as_int(pol.get("periodSeconds"))
        if period <= 0:
            errs.append(invalid(f"{p}.periodSeconds", pol.get("periodSeconds"), "must be greater than zero"))
        elif period > MAX_PERIOD:
            errs.append(invalid(f"{p}.periodSeconds", period, f"must be less than or equal to {MAX_PERIOD}"))
    return errs


def validate_hpa(obj: Mapping) -> Errs:
    """ValidateHorizontalPodAutoscaler (v2, and v1's targetCPUUtilizationPercentage)."""
    errs = meta(obj, True)
    spec = as_dict(obj.get("spec"))
    errs += _target_ref(as_dict(spec.get("scaleTargetRef")), "spec.scaleTargetRef")
    low = spec.get("minReplicas")
    if low is not None and as_int(low) < MIN_REPLICAS:
        errs.append(invalid("spec.minReplicas", low, f"must be greater than or equal to {MIN_REPLICAS}"))
    high = as_int(spec.get("maxReplicas"))
    if high < 1:
        errs.append(invalid("spec.maxReplicas", spec.get("maxReplicas"), "must be greater than 0"))
    if low is not None and high < as_int(low):
        errs.append(invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None and as_int(cpu) < 1:
        errs.append(invalid("spec.targetCPUUtilizationPercentage", cpu, "must be greater than 0"))
    errs += _metrics(as_list(spec.get("metrics")), "spec.metrics")
    behavior = as_dict(spec.get("behavior"))
    errs += _rules(behavior.get("scaleUp"), "spec.behavior.scaleUp")
    errs += _rules(behavior.get("scaleDown"), "spec.behavior.scaleDown")
    return errs


VALIDATORS = {"HorizontalPodAutoscaler": validate_hpa}

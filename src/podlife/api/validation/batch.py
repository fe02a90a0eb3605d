"""batch/v1 (pkg/apis/batch/validation/validation.go): Job, with indexed completion, success and pod
failure policies, and CronJob."""

from __future__ import annotations

import re
from collections.abc import Mapping

from podlife.api import names, selectors
from podlife.api.cronschedule import parse_schedule
from podlife.api.errors import FieldError
from podlife.api.gofmt import go_quote
from podlife.api.validation.apps import selector_for, template_labels
from podlife.api.validation.common import (
    DUPLICATE,
    TOO_LONG,
    TOO_MANY,
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    invalid,
    is_int,
    nonnegative,
    not_supported,
    required,
)
from podlife.api.validation.core_pod import validate_pod_template_spec
from podlife.api.validation.objectmeta import validate_object_meta


def validate_job(obj: Mapping) -> Errs:
    """ValidateJob / validateJobSpec (batch/v1, pkg/apis/batch/validation/validation.go), in upstream's order.
    The registry's generated selector (controller-uid labels) is not checked here."""
    spec = as_dict(obj.get("spec"))
    md = as_dict(obj.get("metadata"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                "backoffLimitPerIndex", "maxFailedIndexes"):
        if spec.get(key) is not None:
            errs += nonnegative(spec[key], f"spec.{key}")
            if key == "maxFailedIndexes" and spec.get("backoffLimitPerIndex") is None:
                errs.append(required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    mode = spec.get("completionMode")
    indexed = mode == "Indexed"
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(not_supported("spec.completionMode", mode, ["NonIndexed", "Indexed"]))
    if indexed:
        errs += _validate_indexed_limits(spec)
    else:
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                errs.append(invalid(f"spec.{key}", spec[key], "requires indexed completion mode"))
    policy = as_dict(as_dict(spec.get("template")).get("spec")).get("restartPolicy") or ""
    if spec.get("podFailurePolicy") is not None:
        errs += _validate_pod_failure_policy(spec)
    if spec.get("successPolicy") is not None:
        if not indexed:
            errs.append(invalid("spec.successPolicy", spec["successPolicy"], "requires indexed completion mode"))
        else:
            errs += _validate_success_policy(spec)
    errs += _validate_pod_replacement_policy(spec)
    errs += validate_pod_template_spec(spec.get("template"), "spec.template")
    if policy not in ("OnFailure", "Never"):
        errs.append(not_supported("spec.template.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and policy != "Never":
        errs.append(invalid("spec.template.spec.restartPolicy", policy,
                             'only "Never" is supported when podFailurePolicy is specified'))
    sel = spec.get("selector")
    if sel is None:
        errs.append(required("spec.selector"))
    else:
        errs += selectors.validate_selector(as_dict(sel), "spec.selector")
    selector = selector_for(sel)
    labels = template_labels(spec)
    if selector is not None and not selector.matches(labels):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    completions = spec.get("completions")
    if indexed and is_int(completions) and completions > 0 and isinstance(md.get("name"), str):
        # the controller names each pod's hostname <job>-<index>
        hostname = f"{md['name']}-{completions - 1}"
        if not names.is_dns1123_label(hostname):
            errs.append(invalid("metadata.name", md["name"], "will not able to create pod with invalid DNS label: "
                                                             f"{hostname}"))
    return errs


_MAX_PARALLELISM_INDEXED = 100000       # maxParallelismForIndexedJob
_MAX_FAILED_INDEXES = 100000            # maxFailedIndexesForIndexedJob
_COMPLETIONS_SOFT_LIMIT = 100000        # completionsSoftLimit
_HIGH_COMPLETIONS_LIMIT = 10000         # parallelismLimitForHighCompletions, maxFailedIndexesLimitForHighCompletions


def _validate_indexed_limits(spec: Mapping) -> Errs:
    """validateJobSpec for completionMode Indexed."""
    errs: Errs = []
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    max_failed, per_index = spec.get("maxFailedIndexes"), spec.get("backoffLimitPerIndex")
    if completions is None:
        errs.append(required("spec.completions", "when completion mode is Indexed"))
    if is_int(parallelism) and parallelism > _MAX_PARALLELISM_INDEXED:
        errs.append(invalid("spec.parallelism", parallelism,
                             f"must be less than or equal to {_MAX_PARALLELISM_INDEXED} when completion mode is "
                             "Indexed"))
    if is_int(completions) and is_int(max_failed) and max_failed > completions:
        errs.append(invalid("spec.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
    if is_int(max_failed) and max_failed > _MAX_FAILED_INDEXES:
        errs.append(invalid("spec.maxFailedIndexes", max_failed,
                            f"must be less than or equal to {_MAX_FAILED_INDEXES}"))
    if is_int(completions) and completions > _COMPLETIONS_SOFT_LIMIT and per_index is not None:
        high = (f"must be less than or equal to {_HIGH_COMPLETIONS_LIMIT} when completions are above "
                f"{_COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index")
        if max_failed is None:
            errs.append(required("spec.maxFailedIndexes", f"must be specified when completions is above "
                                                           f"{_COMPLETIONS_SOFT_LIMIT}"))
        if is_int(parallelism) and parallelism > _HIGH_COMPLETIONS_LIMIT:
            errs.append(invalid("spec.parallelism", parallelism, high))
        if is_int(max_failed) and max_failed > _HIGH_COMPLETIONS_LIMIT:
            errs.append(invalid("spec.maxFailedIndexes", max_failed, high))
    return errs


def _validate_success_policy(spec: Mapping) -> Errs:
    """validateSuccessPolicy / validateSuccessPolicyRule."""
    errs: Errs = []
    rules = as_list(as_dict(spec.get("successPolicy")).get("rules"))
    completions = as_int(spec.get("completions"))
    if not rules:
        errs.append(required("spec.successPolicy.rules",
                              "at least one rules must be specified when the successPolicy is specified"))
    if len(rules) > 20:
        errs.append(FieldError("spec.successPolicy.rules", TOO_MANY, "must have at most 20 items", len(rules)))
    for i, rule in enumerate(rules):
        rule, rp = as_dict(rule), f"spec.successPolicy.rules[{i}]"
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            errs.append(required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
        total = 0
        if isinstance(indexes, str):
            if len(indexes) > 64 * 1024:   # maxJobSuccessPolicySucceededIndexesLimit
                errs.append(FieldError(f"{rp}.succeededIndexes", TOO_LONG, "may not be more than 65536 bytes"))
            total, problem = _indexes_format(indexes, completions)
            if problem:
                errs.append(invalid(f"{rp}.succeededIndexes", indexes, f"error parsing succeededIndexes: {problem}"))
        if count is not None:
            errs += nonnegative(count, f"{rp}.succeededCount")
            if is_int(count) and count > completions:
                errs.append(invalid(f"{rp}.succeededCount", count, f"must be less than or equal to {completions} "
                                                                    "(the number of specified completions)"))
            if is_int(count) and indexes is not None and count > total:
                errs.append(invalid(f"{rp}.succeededCount", count, f"must be less than or equal to {total} (the "
                                     "number of indexes in the specified succeededIndexes field)"))
    return errs


def _indexes_format(text: str, completions: int) -> tuple[int, str]:
    """validateIndexesFormat / parseIndexInterval: (the number of indexes, the error or "")."""
    if not text:
        return 0, ""
    last: int | None = None
    total = 0
    for part in text.split(","):
        limits = part.split("-")
        if len(limits) > 2:
            return 0, (f"the fragment {go_quote(part)} violates the requirement that an index interval can have at "
                       "most two parts separated by '-'")
        bounds = []
        for limit in limits:
            if not re.fullmatch(r"[+-]?\d+", limit):
                return 0, f"cannot convert string to integer for index: {go_quote(limit)}"
            value = int(limit)
            if value >= completions:
                return 0, f"too large index: {go_quote(limit)}"
            bounds.append(value)
        x, y = bounds[0], bounds[-1]
        if len(bounds) == 2 and x >= y:
            return 0, f"non-increasing order, previous: {x}, current: {y}"
        if last is not None and last >= x:
            return 0, f"non-increasing order, previous: {last}, current: {x}"
        total += y - x + 1
        last = y
    return total, ""


def _validate_pod_replacement_policy(spec: Mapping) -> Errs:
    """validatePodReplacementPolicy: Failed only with a podFailurePolicy."""
    value = spec.get("podReplacementPolicy")
    if value is None:
        return []
    if spec.get("podFailurePolicy") is not None:
        return [] if value == "Failed" else [not_supported("spec.podReplacementPolicy", value, ["Failed"])]
    if value not in ("Failed", "TerminatingOrFailed"):
        return [not_supported("spec.podReplacementPolicy", value, ["Failed", "TerminatingOrFailed"])]
    return []


_PFP_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]


def _validate_pod_failure_policy(spec: Mapping) -> Errs:
    """validatePodFailurePolicy / validatePodFailurePolicyRule: each rule has a known action (FailIndex only
    with backoffLimitPerIndex) and exactly one of onExitCodes / onPodConditions; exit code rules name In or
    NotIn, a container of the template, and distinct ordered values, never 0 with In; condition patterns have
    a status True, False or Unknown."""
    errs: Errs = []
    rules = as_list(as_dict(spec.get("podFailurePolicy")).get("rules"))
    if len(rules) > 20:   # maxPodFailurePolicyRules
        errs.append(FieldError("spec.podFailurePolicy.rules", TOO_MANY, "must have at most 20 items", len(rules)))
    tspec = as_dict(as_dict(spec.get("template")).get("spec"))
    containers = {as_dict(c).get("name") for key in ("containers", "initContainers") for c in as_list(tspec.get(key))}
    for i, rule in enumerate(rules):
        rule, rp = as_dict(rule), f"spec.podFailurePolicy.rules[{i}]"
        action = as_str(rule.get("action"))
        if not action:
            errs.append(required(f"{rp}.action",
                                 "valid values: [" + " ".join(go_quote(a) for a in _PFP_ACTIONS) + "]"))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.append(invalid(f"{rp}.action", action, "requires the backoffLimitPerIndex to be set"))
        elif action not in _PFP_ACTIONS:
            errs.append(not_supported(f"{rp}.action", action, _PFP_ACTIONS))
        codes, conds = rule.get("onExitCodes"), as_list(rule.get("onPodConditions"))
        if codes is not None:
            errs += _validate_on_exit_codes(as_dict(codes), f"{rp}.onExitCodes", containers)
        for j, pattern in enumerate(conds):
            status = as_str(as_dict(pattern).get("status"))
            if status not in ("False", "True", "Unknown"):
                errs.append(not_supported(f"{rp}.onPodConditions[{j}].status", status, ["False", "True", "Unknown"]))
        if codes is not None and conds:
            errs.append(invalid(rp, None, "specifying both OnExitCodes and OnPodConditions is not supported"))
        elif codes is None and not conds:
            errs.append(invalid(rp, None, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _validate_on_exit_codes(codes: Mapping, path: str, containers: set) -> Errs:
    """validatePodFailurePolicyRuleOnExitCodes."""
    errs: Errs = []
    op = as_str(codes.get("operator"))
    if op not in ("In", "NotIn"):
        errs.append(not_supported(f"{path}.operator", op, ["In", "NotIn"]))
    name = codes.get("containerName")
    if name is not None and name not in containers:
        errs.append(invalid(f"{path}.containerName", name,
                             "must be one of the container or initContainer names in the pod template"))
    values = as_list(codes.get("values"))
    if not values:
        errs.append(invalid(f"{path}.values", values, "at least one value is required"))
    elif len(values) > 255:   # maxPodFailurePolicyOnExitCodesValues
        errs.append(FieldError(f"{path}.values", TOO_MANY, "must have at most 255 items", len(values)))
    seen: set = set()
    ordered = True
    for j, value in enumerate(values):
        if op == "In" and value == 0:
            errs.append(invalid(f"{path}.values[{j}]", 0, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(FieldError(f"{path}.values[{j}]", DUPLICATE, "", value))
        seen.add(value)
        if j > 0 and is_int(value) and is_int(values[j - 1]) and values[j - 1] > value:
            ordered = False
    if not ordered:
        errs.append(invalid(f"{path}.values", values, "must be ordered"))
    return errs


def validate_cronjob(obj: Mapping) -> Errs:
    """ValidateCronJob: the schedule parses (robfig/cron ParseStandard), no TZ inside it, a loadable timeZone,
    the usual policy and the Job template's restart policy; names at most 52 characters (the Job name adds 11)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError   # on first use: most scenarios have no CronJob

    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    name = as_str(as_dict(obj.get("metadata")).get("name"))
    if len(name) > 52:
        errs.append(invalid("metadata.name", name, "must be no more than 52 characters"))
    schedule = as_str(spec.get("schedule"))
    if not schedule:
        errs.append(required("spec.schedule"))
    elif "TZ" in schedule:
        errs.append(invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field "
                                                         "instead"))
    else:
        try:
            parse_schedule(schedule)
        except ValueError as e:
            errs.append(invalid("spec.schedule", schedule, str(e)))
    tz = spec.get("timeZone")
    if tz is not None:
        try:
            ZoneInfo(as_str(tz))
        except (ZoneInfoNotFoundError, ValueError):
            errs.append(invalid("spec.timeZone", tz, "unknown time zone " + as_str(tz)))
    policy = spec.get("concurrencyPolicy")
    if policy not in ("Allow", "Forbid", "Replace"):
        errs.append(not_supported("spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"]))
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.get(key) is not None:
            errs += nonnegative(spec[key], f"spec.{key}")
    job_spec = as_dict(as_dict(spec.get("jobTemplate")).get("spec"))
    errs += validate_pod_template_spec(job_spec.get("template"), "spec.jobTemplate.spec.template")
    restart = as_dict(as_dict(job_spec.get("template")).get("spec")).get("restartPolicy") or ""
    if restart not in ("OnFailure", "Never"):
        errs.append(not_supported("spec.jobTemplate.spec.template.spec.restartPolicy", restart,
                                   ["OnFailure", "Never"]))
    return errs

"""A Job's podFailurePolicy and successPolicy: pkg/controller/job/pod_failure_policy.go (matchPodFailurePolicy)
and success_policy.go (matchSuccessPolicy)."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj
from podlife.controlplane.controllers.job import indexed


def match_pod_failure_policy(job: Obj, pod: Obj, fail_index: bool = True) -> tuple[str | None, bool, str | None]:
    """matchPodFailurePolicy: (the FailJob message, whether the failure counts, the action) of the first rule
    whose onExitCodes (a container, app containers before init containers, terminated with a non-zero code)
    or onPodConditions match the pod. A FailIndex rule matches only while JobBackoffLimitPerIndex is on
    (``fail_index``); otherwise the next rule is tried. No rule: counted, no action."""
    policy = job["spec"].get("podFailurePolicy")
    if not isinstance(policy, dict):
        return None, True, None
    st = pod.get("status") or {}
    md = pod["metadata"]
    for index, rule in enumerate(policy.get("rules") or ()):
        action = rule.get("action")
        if rule.get("onExitCodes") is not None:
            matched = _match_exit_codes(st, rule["onExitCodes"])
            if matched is None:
                continue
            name, code = matched
            message = (f"Container {name} for pod {md['namespace']}/{md['name']} failed with exit code {code} "
                       f"matching {action} rule at index {index}")
        elif rule.get("onPodConditions") is not None:
            ctype = _match_pod_conditions(st, rule["onPodConditions"])
            if ctype is None:
                continue
            message = (f"Pod {md['namespace']}/{md['name']} has condition {ctype} matching {action} rule "
                       f"at index {index}")
        else:
            continue
        if action == "Ignore":
            return None, False, action
        if action == "FailIndex":
            if fail_index:
                return None, True, action
            continue
        if action == "Count":
            return None, True, action
        if action == "FailJob":
            return message, True, action
    return None, True, None


def _match_exit_codes(status: Obj, req: Obj) -> tuple[str, int] | None:
    values = set(req.get("values") or ())
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            term = (cs.get("state") or {}).get("terminated")
            if term is None or (req.get("containerName") and req["containerName"] != cs.get("name")):
                continue
            code = int(term.get("exitCode") or 0)
            op = req.get("operator")
            if code != 0 and ((op == "In" and code in values) or (op == "NotIn" and code not in values)):
                return cs.get("name", ""), code
    return None


def _match_pod_conditions(status: Obj, patterns: Any) -> str | None:
    # the API server defaults a pattern's status to True (SetDefaults_Job)
    for c in status.get("conditions") or ():
        for pat in patterns:
            if c.get("type") == pat.get("type") and c.get("status") == (pat.get("status") or "True"):
                return c["type"]
    return None


SUCCESS_POLICY_MESSAGE = "Matched rules at index"


def match_success_policy(job: Obj, completions: int, succeeded: indexed.Intervals) -> str | None:
    """matchSuccessPolicy: the message of the first rule the succeeded indexes meet: all its succeededIndexes
    (or succeededCount of them), or succeededCount indexes in all."""
    policy = job["spec"].get("successPolicy")
    if not isinstance(policy, dict) or not succeeded:
        return None
    for index, rule in enumerate(policy.get("rules") or ()):
        count = rule.get("succeededCount")
        if rule.get("succeededIndexes") is not None:
            required = indexed.parse(rule["succeededIndexes"], completions)
            if not required:
                continue
            contains = sum(max(0, min(l1, l2) - max(f1, f2) + 1) for f1, l1 in required for f2, l2 in succeeded)
            if contains == indexed.total(required) or (count is not None and contains >= int(count)):
                return f"{SUCCESS_POLICY_MESSAGE} {index}"
        elif count is not None and indexed.total(succeeded) >= int(count):
            return f"{SUCCESS_POLICY_MESSAGE} {index}"
    return None

"""Whether a regular container that exited is started again: the pod's restartPolicy, or from 1.35
(ContainerRestartRules, KEP-5307, beta and on by default; alpha in 1.34) the container's own restartPolicy and
its restartPolicyRules, the first rule whose exit codes match deciding (pkg/kubelet/container/helpers.go
ShouldContainerBeRestarted and the rules' evaluation in pkg/kubelet/kuberuntime); from 1.36 a rule's action
RestartAllContainers restarts every container of the pod in place (KEP-5532, helpers.go
ShouldAllContainersRestart)."""

from __future__ import annotations

from podlife.api.meta import Obj
from podlife.versions import Profile


def matching_rule(container: Obj, exit_code: int, profile: Profile | None) -> Obj | None:
    """The first of the container's restartPolicyRules whose exit codes match (findMatchingContainerRestartRule),
    or None; always None where the rules are not available."""
    if profile is None or not profile.container_restart_rules:
        return None
    for rule in container.get("restartPolicyRules") or ():
        codes = rule.get("exitCodes") or {}
        values = set(codes.get("values") or ())
        if (exit_code in values) == (codes.get("operator") == "In"):
            return rule
    return None


def restarts_all(container: Obj, exit_code: int, profile: Profile | None) -> bool:
    """KEP-5532: the exit matches a rule whose action is RestartAllContainers (1.36+)."""
    rule = matching_rule(container, exit_code, profile)
    return rule is not None and rule.get("action") == "RestartAllContainers" and profile is not None \
        and profile.restart_all_containers


def could_restart_all(pod: Obj, profile: Profile | None) -> bool:
    """podutil.AllContainersCouldRestart: some container has a RestartAllContainers rule (1.36+)."""
    return bool(profile is not None and profile.restart_all_containers) and any(
        rule.get("action") == "RestartAllContainers"
        for c in (pod["spec"].get("initContainers") or []) + (pod["spec"].get("containers") or [])
        for rule in c.get("restartPolicyRules") or ())


def restarts(pod: Obj, container: Obj, exit_code: int, profile: Profile | None) -> bool:
    """The container runs again: alone (Restart) or with the whole pod (RestartAllContainers)."""
    policy = pod["spec"].get("restartPolicy", "Always")
    if profile is not None and profile.container_restart_rules:
        rule = matching_rule(container, exit_code, profile)
        if rule is not None:
            return rule.get("action") == "Restart" or restarts_all(container, exit_code, profile)
        policy = container.get("restartPolicy") or policy
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)

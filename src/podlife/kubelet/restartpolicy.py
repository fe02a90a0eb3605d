"""Whether a regular container that exited is started again: the pod's restartPolicy, or from 1.35
(ContainerRestartRules, KEP-5307, beta and on by default; alpha in 1.34) the container's own restartPolicy and
its restartPolicyRules, the first rule whose exit codes match deciding (pkg/kubelet/container/helpers.go
ShouldContainerBeRestarted and the rules' evaluation in pkg/kubelet/kuberuntime)."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj


def restarts(pod: Obj, container: Obj, exit_code: int, profile: Any) -> bool:
    policy = pod["spec"].get("restartPolicy", "Always")
    if profile is not None and profile.container_restart_rules:
        for rule in container.get("restartPolicyRules") or ():
            codes = rule.get("exitCodes") or {}
            values = set(codes.get("values") or ())
            matched = exit_code in values if codes.get("operator") == "In" else exit_code not in values
            if matched:
                return rule.get("action") == "Restart"
        policy = container.get("restartPolicy") or policy
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def drop_sleep_action(pod_spec: Obj, profile: Any) -> None:
    """pkg/api/pod/util.go dropPodLifecycleSleepAction: with PodLifecycleSleepAction off (1.29) a hook's sleep
    action is dropped, and the hook with it when sleep was its only handler."""
    if profile is None or "lifecycle_sleep" not in profile.dropped_fields:
        return
    for c in list(pod_spec.get("initContainers") or ()) + list(pod_spec.get("containers") or ()):
        lifecycle = c.get("lifecycle") if isinstance(c, dict) else None
        if not isinstance(lifecycle, dict):
            continue
        for hook in ("preStop", "postStart"):
            handler = lifecycle.get(hook)
            if isinstance(handler, dict) and handler.get("sleep") is not None:
                del handler["sleep"]
                if not any(handler.get(k) is not None for k in ("exec", "httpGet", "tcpSocket")):
                    del lifecycle[hook]


def drop_disabled_fields(pod_spec: Obj, profile: Any) -> list[str]:
    """pkg/api/pod/util.go dropDisabledFields: with the gate off (1.34) the API server drops a regular container's
    restartPolicy and restartPolicyRules (init containers keep restartPolicy: Always, the sidecar marker).
    Returns the dropped field paths, for the user's warning."""
    if profile is None or "container_restart_rules" not in profile.dropped_fields:
        return []   # on, or (before 1.34) no such gate: validation refuses the fields on regular containers
    dropped = []
    for i, c in enumerate(pod_spec.get("containers") or ()):
        for key in ("restartPolicy", "restartPolicyRules"):
            if isinstance(c, dict) and key in c:
                del c[key]
                dropped.append(f"spec.containers[{i}].{key}")
    for i, c in enumerate(pod_spec.get("initContainers") or ()):
        if isinstance(c, dict) and "restartPolicyRules" in c:
            del c["restartPolicyRules"]
            dropped.append(f"spec.initContainers[{i}].restartPolicyRules")
    return dropped

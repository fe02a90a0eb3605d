"""The pod fields the API server drops when their feature gate is off (pkg/api/pod/util.go: dropDisabledFields,
DropDisabledPodFields, DropDisabledTemplateFields), on a new pod or pod template before validation."""

from __future__ import annotations

from podlife.api.meta import Obj
from podlife.versions import Profile


def drop_sleep_action(pod_spec: Obj, profile: Profile | None) -> None:
    """pkg/api/pod/util.go dropPodLifecycleSleepAction: with PodLifecycleSleepAction off (1.29) a hook's sleep
    action is dropped, and the hook with it when sleep was its only handler."""
    if profile is None or not profile.drops("lifecycle_sleep"):
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


def drop_disabled_fields(pod_spec: Obj, profile: Profile | None) -> list[str]:
    """pkg/api/pod/util.go dropDisabledFields: with the gate off (1.34) the API server drops a regular container's
    restartPolicy and restartPolicyRules (init containers keep restartPolicy: Always, the sidecar marker).
    Returns the dropped field paths, for the user's warning."""
    if profile is None:
        return []
    dropped = []
    if profile.drops("sidecar_restart_policy"):
        # SidecarContainers off (1.28's default): an init container's restartPolicy goes, so a would-be sidecar
        # is an ordinary init container (and validation then refuses its probes and lifecycle hooks)
        for i, c in enumerate(pod_spec.get("initContainers") or ()):
            if isinstance(c, dict) and "restartPolicy" in c:
                del c["restartPolicy"]
                dropped.append(f"spec.initContainers[{i}].restartPolicy")
    # on, or (before 1.34) no such gate: validation refuses the fields on regular containers
    if profile.drops("container_restart_rules"):
        for i, c in enumerate(pod_spec.get("containers") or ()):
            for key in ("restartPolicy", "restartPolicyRules"):
                if isinstance(c, dict) and key in c:
                    del c[key]
                    dropped.append(f"spec.containers[{i}].{key}")
        for i, c in enumerate(pod_spec.get("initContainers") or ()):
            if isinstance(c, dict) and "restartPolicyRules" in c:
                del c["restartPolicyRules"]
                dropped.append(f"spec.initContainers[{i}].restartPolicyRules")
    kept = {"minDomains"} if profile.spread_min_domains else set()
    kept |= {"matchLabelKeys"} if profile.spread_match_label_keys else set()
    kept |= {"nodeAffinityPolicy", "nodeTaintsPolicy"} if profile.spread_node_inclusion_policies else set()
    for i, c in enumerate(pod_spec.get("topologySpreadConstraints") or ()):
        # pkg/api/pod/util.go dropDisabledFields: the scheduling fields of a constraint whose gate is off
        for key in ("minDomains", "matchLabelKeys", "nodeAffinityPolicy", "nodeTaintsPolicy"):
            if isinstance(c, dict) and key in c and key not in kept:
                del c[key]
                dropped.append(f"spec.topologySpreadConstraints[{i}].{key}")
    if not profile.container_stop_signals:
        # KEP-4960: with ContainerStopSignals off (1.33-1.36) lifecycle.stopSignal is dropped
        for field in ("initContainers", "containers"):
            for i, c in enumerate(pod_spec.get(field) or ()):
                lifecycle = c.get("lifecycle") if isinstance(c, dict) else None
                if isinstance(lifecycle, dict) and "stopSignal" in lifecycle:
                    del lifecycle["stopSignal"]
                    dropped.append(f"spec.{field}[{i}].lifecycle.stopSignal")
    return dropped


def drop_disabled_pod_fields(pod_spec: Obj, profile: Profile | None) -> None:
    """pkg/api/pod/util.go dropDisabledFields on a new pod or pod template (DropDisabledPodFields,
    DropDisabledTemplateFields): every field whose feature gate is off in the API server."""
    if profile is None or not isinstance(pod_spec, dict):
        return
    drop_disabled_fields(pod_spec, profile)
    drop_sleep_action(pod_spec, profile)
    if pod_spec.get("schedulingGates") and not profile.scheduling_gates:
        del pod_spec["schedulingGates"]


def container_names(spec: Obj) -> list[str]:
    """Every container's name, init and ephemeral ones too (pkg/api/v1/pod/util.go VisitContainers with
    AllContainers), as the pod strategy's podHasContainerWithName checks a streaming request's container."""
    kinds = ("initContainers", "containers", "ephemeralContainers")
    return [c["name"] for k in kinds for c in spec.get(k) or ()]


def container_statuses(status: Obj) -> list[Obj]:
    """Every container status: regular, init and ephemeral (ValidateContainerLogStatus looks in all three)."""
    kinds = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")
    return [s for k in kinds for s in status.get(k) or ()]

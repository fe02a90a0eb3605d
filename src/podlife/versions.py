"""Behaviour that changed between Kubernetes minor versions: one table, consulted where each rule lives.

The table is the body of ``Profile``: each rule is a typed field (a ``Literal`` of its values, or bool, int,
float) whose ``rule(...)`` lists the value per version range with the upstream change that set it.
``profile("1.27").terminal_phase_before_removal`` is the value for that minor. A rule that is a feature gate's
behaviour names the gate (podlife.features): its table gives the value with the release's default gates, and
``profile("1.28", {"SidecarContainers": True})`` the value with the gates a scenario sets. Nothing else in
podlife compares versions; a misspelled rule, or a comparison with a value the rule never takes, fails mypy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, Literal, TypeVar, cast

OLDEST_MINOR = 18
NEWEST_MINOR = 37
MODELLED_VERSIONS: tuple[str, ...] = tuple(f"1.{m}" for m in range(OLDEST_MINOR, NEWEST_MINOR + 1))
NEWEST = MODELLED_VERSIONS[-1]


def normalize_version(text: str) -> str:
    """``v1.34``, ``1.34`` and ``1.34.2`` all name the minor ``1.34`` (behaviour is modelled per minor);
    anything else is returned unchanged, for the scenario check to reject with the list of versions."""
    t = text.strip()
    t = t[1:] if t[:1] in ("v", "V") else t
    parts = t.split(".")
    if len(parts) in (2, 3) and all(p.isdigit() for p in parts):
        return f"{int(parts[0])}.{int(parts[1])}"
    return text


_SAFE_SYSCTLS_18 = ("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                    "net.ipv4.ping_group_range")
_SAFE_SYSCTLS_29 = _SAFE_SYSCTLS_18 + (
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes")
T = TypeVar("T")
# the values of negative_grace and negative_delete_grace (the registries' check_graceful_delete takes one)
NegativeGrace = Literal["flows-through", "treated-as-one"]


@dataclass(frozen=True)
class Change(Generic[T]):
    """A rule's value from one minor version on."""

    since: int        # first minor with this value
    value: T
    source: str       # upstream PR or file that made the change


@dataclass(frozen=True)
class Rule:
    """A behaviour that differs between versions: its values over the minors."""

    name: str
    summary: str
    changes: tuple[Change[Any], ...]  # ascending by ``since``; the first one starts at OLDEST_MINOR
    # the feature gate (or gates, any of which) switching this behaviour (podlife.features); ``changes`` give
    # the value with every gate at its default, ``on`` / ``off`` the value when a scenario sets the gates
    # the other way
    gate: str | tuple[str, ...] | None = None
    on: Any = True
    off: Any = False
    gate_since: int = OLDEST_MINOR   # the first minor whose code consults the gate for this behaviour

    def at(self, minor: int) -> Any:
        value = self.changes[0].value
        for c in self.changes:
            if minor >= c.since:
                value = c.value
        return value

    def gates(self) -> tuple[str, ...]:
        return (self.gate,) if isinstance(self.gate, str) else tuple(self.gate or ())

    def value(self, minor: int, gates: Mapping[str, bool], defaults: Mapping[str, bool]) -> Any:
        """The value with the release's gates set as given (``gates`` and ``defaults`` name only the gates the
        release knows; a rule none of whose gates it knows takes the table's value)."""
        names = [g for g in self.gates() if g in defaults]
        if names and minor >= self.gate_since:
            state = any(gates[g] for g in names)
            if state != any(defaults[g] for g in names):
                return self.on if state else self.off
        return self.at(minor)


def rule(summary: str, changes: tuple[Change[T], ...], *, gate: str | tuple[str, ...] | None = None,
         on: T | None = None, off: T | None = None, gate_since: int = OLDEST_MINOR) -> T:
    """A row of the table: a ``Profile`` field whose value per version the changes give (typed as the field,
    so mypy checks each value against the field's type). ``on``/``off`` default to True/False."""
    spec = Rule("", summary, changes, gate, True if on is None else on, False if off is None else off, gate_since)
    return cast(T, field(metadata={"rule": spec}))


# __init__ and __repr__ written out: dataclass would compile them for the hundred-odd rule fields at every start
# of podlife (about 25M instructions, 2 % of a small run)
@dataclass(frozen=True, eq=False, init=False, repr=False)
class Profile:
    """The behaviour of one Kubernetes minor version with its feature gates (defaults, or the values a
    scenario sets): ``profile(version, gates)`` makes one. After the version and its gates, every field is a
    rule of the table."""

    version: str
    minor: int
    gates: Mapping[str, bool]        # every modelled gate the release knows, with the scenario's values
    set_gates: Mapping[str, bool]    # the gates set against the release's defaults
    dropped_fields: frozenset[DroppedField]   # DROPPED_FIELD_GATES keys whose gate exists and is off

    def __init__(self, version: str, minor: int, gates: Mapping[str, bool], set_gates: Mapping[str, bool],
                 dropped_fields: frozenset[DroppedField], **rules: Any) -> None:
        if rules.keys() != _RULE_NAMES:
            missing, unknown = sorted(_RULE_NAMES - rules.keys()), sorted(rules.keys() - _RULE_NAMES)
            raise TypeError(f"Profile(): missing rules {missing}, unknown rules {unknown}")
        assign = object.__setattr__   # frozen
        for name, value in (("version", version), ("minor", minor), ("gates", gates), ("set_gates", set_gates),
                            ("dropped_fields", dropped_fields), *rules.items()):
            assign(self, name, value)

    def __repr__(self) -> str:   # dataclass's
        return f"{type(self).__qualname__}({', '.join(f'{f.name}={getattr(self, f.name)!r}' for f in fields(self))})"

    grace_override: Literal["after-prestop-unclamped", "effective-after-prestop", "before-prestop"] = rule(
        "where killContainer applies a grace-period override", (
        Change(18, "after-prestop-unclamped",
               "<=1.21: only eviction and killPodNow pass an override; applied after preStop, not clamped"),
        Change(22, "effective-after-prestop",
               "pod workers pass the effective grace as override, still after preStop (#117373)"),
        Change(28, "before-prestop", "PR #115835: override replaces the grace before the preStop hook"),
    ))
    negative_grace: NegativeGrace = rule("a negative spec.terminationGracePeriodSeconds", (
        Change(18, "flows-through", "negative values reach the kubelet and the runtime unchanged"),
        Change(27, "treated-as-one", "PR #115606: negative grace is treated as 1 s, with an API warning"),
    ))
    negative_delete_grace: NegativeGrace = rule("a negative gracePeriodSeconds in DeleteOptions", (
        Change(18, "flows-through", "the negative value becomes deletionGracePeriodSeconds"),
        Change(22, "treated-as-one", "PR #98866: rest/delete.go BeforeDelete treats it as 1 s"),
    ))
    zero_grace: Literal["as-is", "spec-grace", "one-second"] = rule(
        "grace used by the kubelet for an explicit 0 (force delete, hard eviction)", (
        Change(18, "as-is", "<=1.21: killContainer gets 0: no preStop, then its 2 s minimum"),
        Change(22, "spec-grace", "pod workers fall back to the pod's spec grace (issue #115819)"),
        Change(31, "one-second", "PR #124063: an explicit 0 becomes 1 s"),
    ))
    terminal_phase_waits_for_containers: bool = rule(
        "a terminal phase reaches the API only once the containers stopped", (
        Change(18, False, "status_manager.go mergePodStatus: the phase is written as generated"),
        Change(24, True, "PR #108366: mergePodStatus keeps phase, reason and message while the pod could have "
                         "running containers"),
    ))
    terminal_phase_before_removal: bool = rule("a deleted pod reaches Failed/Succeeded before it is removed", (
        Change(18, False, "removal needs only reclaimed resources"),
        Change(27, True, "PR #115331: kubelet sets a terminal phase before the final delete"),
    ))
    statefulset_status_available_replicas: bool = rule("StatefulSetStatus.availableReplicas exists (always encoded)", (
        Change(18, False, "not in staging/src/k8s.io/api/apps/v1/types.go before 1.22"),
        Change(22, True, "PR #100842 (StatefulSetMinReadySeconds): AvailableReplicas int32 "
                         "`json:\"availableReplicas\"`, "
                         "no omitempty"),
    ))
    failed_pod_ready_reason: Literal["ContainersNotReady", "PodFailed"] = rule(
        "reason of Ready/ContainersReady False on a Failed pod", (
        Change(18, "ContainersNotReady", "status/generate.go: the unready containers are listed"),
        Change(25, "PodFailed", "PR #110256 (in 1.25; backported to 1.22-1.24 patch releases): "
                                "generateContainersReadyConditionForTerminalPhase, no message"),
    ))
    exec_probe_timeout: bool = rule("an exec probe's timeoutSeconds ends the command (ExecProbeTimeout)", (
        Change(18, False, "the timeout is not enforced: an exec probe waits for its command (issue #26895)"),
        Change(20, True, "KEP-1972 (PR #94115): the probe fails when the command outlives timeoutSeconds"),
    ), gate="ExecProbeTimeout")
    lifecycle_http_like_probe: bool = rule(
        "an httpGet lifecycle hook is sent as a probe's request is (ConsistentHTTPGetHandlers)", (
        Change(18, False, "lifecycle/handlers.go runHTTPHandler: GET http://host:port/ + path, the scheme and "
                          "httpHeaders not used, Go's own User-Agent"),
        Change(26, True, "lifecycle/handlers.go: probe/http NewRequestForHTTPGetAction (scheme, httpHeaders, "
                         "User-Agent kube-lifecycle/1.x), HTTPS unverified and retried as HTTP when an HTTP "
                         "server answers (LifecycleHTTPFallback)"),
    ), gate="ConsistentHTTPGetHandlers")
    lifecycle_sleep_action: bool = rule("a lifecycle hook's sleep action waits its seconds (PodLifecycleSleepAction)", (
        Change(18, False, "no sleep handler: the hook returns at once (alpha and off by default in 1.29)"),
        Change(30, True, "KEP-3960 beta, on by default: runSleepHandler waits, SIGTERM follows with the rest"),
    ), gate="PodLifecycleSleepAction")
    sleep_action_allow_zero: bool = rule("a lifecycle sleep action of 0 s passes validation", (
        Change(18, False, "validateSleepAction: must be greater than 0 (PodLifecycleSleepActionAllowZero alpha, "
                          "off, in 1.32)"),
        Change(33, True, "pkg/features/kube_features.go: PodLifecycleSleepActionAllowZero beta, on by default in 1.33"),
    ), gate="PodLifecycleSleepActionAllowZero")
    probe_termination_grace_period: bool = rule("a probe's own terminationGracePeriodSeconds is honoured", (
        Change(18, False, "ProbeTerminationGracePeriod off by default (alpha 1.21, beta off 1.22): the field is "
                          "dropped and a liveness/startup kill uses the pod's grace"),
        Change(25, True, "pkg/features/kube_features.go: ProbeTerminationGracePeriod defaults to true in 1.25"),
    ), gate="ProbeTerminationGracePeriod")
    readiness_probe_triggered: bool = rule(
        "a started container that is not yet ready gets an immediate readiness probe", (
        Change(18, False, "the readiness worker probes on its ticker only"),
        Change(21, True, "PR #98376: prober_manager.go UpdatePodStatus triggers the worker (manualTriggerCh) when a "
                         "started, running container's readiness is not Success"),
    ))
    legacy_sidecar_type: bool = rule("container lifecycle.type: Sidecar of the unmerged PR #80744", (
        Change(18, True, "the seed-000 kubelet carried PR #80744"),
        Change(19, False, "not part of any release"),
    ))
    cronjob_controller: Literal["v1", "v2"] = rule("which CronJob controller runs", (
        Change(18, "v1", "cronjob_controller.go: every CronJob looked at every 10 s (syncAll)"),
        Change(21, "v2", "CronJobControllerV2 on by default (beta, 1.21): requeued for the next time + 100 ms"),
    ), gate="CronJobControllerV2", on="v2", off="v1")
    cronjob_time_zone: bool = rule("a CronJob's spec.timeZone is honoured", (
        Change(18, False, "not available; on 1.24 CronJobTimeZone is alpha and off (the field is dropped)"),
        Change(25, True, "pkg/features/kube_features.go: CronJobTimeZone beta, on by default in 1.25"),
    ), gate="CronJobTimeZone")
    cronjob_scheduled_annotation: bool = rule(
        "Jobs of a CronJob carry batch.kubernetes.io/cronjob-scheduled-timestamp", (
        Change(18, False, "not set"),
        Change(28, True, "CronJobsScheduledAnnotation beta, on by default in 1.28"),
    ), gate="CronJobsScheduledAnnotation")
    cronjob_completed_word: Literal["status", "condition"] = rule(
        "wording of the SawCompletedJob event (\"…, status: Complete\")", (
        Change(18, "status", "PR #75712: \"Saw completed job: NAME, status: TYPE\""),
        Change(31, "condition", "cronjob_controllerv2.go: \"…, condition: TYPE\" (jobutil.FinishedCondition); the "
                                "release that switched is not confirmed, 1.31 assumed"),
    ))
    external_provisioning_message: str = rule("the PersistentVolume controller's ExternalProvisioning event", (
        Change(18, 'waiting for a volume to be created, either by external provisioner "{provisioner}" or manually '
                   "created by system administrator", "pv_controller.go provisionClaim"),
        Change(28, "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually "
                   "by the system administrator. If volume creation is delayed, please verify that the provisioner "
                   "is running and correctly registered.",
               "pv_controller.go: reworded message (1.28 assumed; the exact release is not confirmed)"),
    ))
    statefulset_pvc_retention: bool = rule("StatefulSet persistentVolumeClaimRetentionPolicy is honoured", (
        Change(18, False, "not available (1.23-1.26: StatefulSetAutoDeletePVC alpha, off)"),
        Change(27, True, "pkg/features/kube_features.go: StatefulSetAutoDeletePVC beta, on by default in 1.27"),
    ), gate="StatefulSetAutoDeletePVC")
    scheduling_gates: bool = rule("spec.schedulingGates hold a pod back from scheduling (PodSchedulingReadiness)", (
        Change(18, False, "not available; on 1.26 alpha and off by default, the API server drops the field"),
        Change(27, True, "pkg/features/kube_features.go: PodSchedulingReadiness beta, on by default in 1.27"),
    ), gate="PodSchedulingReadiness")
    container_restart_rules: bool = rule("a regular container's own restartPolicy and restartPolicyRules", (
        Change(18, False, "not available (1.34: ContainerRestartRules alpha, off: the API server drops them)"),
        Change(35, True, "KEP-5307: ContainerRestartRules beta, on by default in 1.35"),
    ), gate="ContainerRestartRules")
    terminating_replicas_status: bool = rule("ReplicaSet and Deployment status.terminatingReplicas", (
        Change(18, False, "not reported (1.33-1.34: DeploymentReplicaSetTerminatingReplicas alpha, off)"),
        Change(35, True, "KEP-3973: DeploymentReplicaSetTerminatingReplicas beta, on by default in 1.35: pods "
                         "deleted but not yet Succeeded or Failed"),
    ), gate="DeploymentReplicaSetTerminatingReplicas")
    restart_all_containers: bool = rule("a restartPolicyRules action RestartAllContainers restarts the pod in place", (
        Change(18, False, "not available (1.35: RestartAllContainersOnContainerExits alpha, off: validation "
                          "refuses the action)"),
        Change(36, True, "KEP-5532: RestartAllContainersOnContainerExits beta, on by default in 1.36 (PR #136681)"),
    ), gate="RestartAllContainersOnContainerExits")
    container_stop_signals: bool = rule("a container's lifecycle.stopSignal replaces SIGTERM", (
        Change(18, False, "not available (1.33-1.36: ContainerStopSignals alpha, off: the API server drops it)"),
        Change(37, True, "KEP-4960: ContainerStopSignals beta, on by default in 1.37"),
    ), gate="ContainerStopSignals")
    ready_to_start_at_sandbox: bool = rule("PodReadyToStartContainers turns True right after the sandbox is created", (
        Change(18, False, "the condition follows the runtime state at the next SyncPod (after the image pulls and "
                          "container starts of the first one)"),
        Change(36, True, "PR #134660: the kubelet writes the condition as soon as the sandbox exists"),
    ))
    hpa_sync_on_change: bool = rule("a new HorizontalPodAutoscaler, or one whose spec changed, is synced at once", (
        Change(18, False, "horizontal.go enqueueHPA: AddRateLimited, the first sync one resync period (15 s) later"),
        Change(37, True, "PR #138294 (v1.37.0-alpha.1): newly created and spec-changed autoscalers reconciled "
                         "immediately"),
    ))
    relaxed_env_var_names: bool = rule("environment variable names may be any printable ASCII but '='", (
        Change(18, False, "IsEnvVarName: letters, digits, '_', '-' and '.', not starting with a digit"),
        Change(32, True, "RelaxedEnvironmentVariableValidation beta, on by default in 1.32 (alpha 1.30, GA 1.34)"),
    ), gate="RelaxedEnvironmentVariableValidation")
    crashloop_requeue_at_expiry: bool = rule("a pod in CrashLoopBackOff is synced again when its back-off expires", (
        Change(18, False, "pod_workers.go: a failed sync, a back-off included (its succeeded ConfigPodSandbox "
                          "result keeps kubelet.go SyncPod from dropping the error), is retried after the "
                          "worker's 10 s (jitter 0.5)"),
        Change(34, True, "PR #133066 (BackoffError): the retry waits until the back-off expiry, at most the 1 min "
                         "resync interval (jitter 0.5)"),
    ))
    pod_generation: bool = rule("pods carry metadata.generation, bumped when their spec changes", (
        Change(18, False, "pods have no generation"),
        Change(33, True, "KEP-5067 (1.33): the API server sets and bumps a pod's metadata.generation"),
    ))
    pod_observed_generation: bool = rule("the kubelet reports status.observedGeneration of a pod", (
        Change(18, False, "not reported (1.33: PodObservedGenerationTracking alpha, off)"),
        Change(34, True, "KEP-5067: PodObservedGenerationTracking beta, on by default in 1.34 (GA 1.35)"),
    ), gate="PodObservedGenerationTracking")
    created_event_colon: bool = rule("wording of the kubelet's Created event", (
        Change(18, False, "kuberuntime_container.go startContainer: \"Created container NAME\""),
        Change(32, True, "kuberuntime_container.go startContainer: \"Created container: NAME\" (1.32)"),
    ))
    backoff_event_names_pod: bool = rule("the BackOff event names the container and its pod", (
        Change(18, False, "doBackOff: \"Back-off restarting failed container\""),
        Change(26, True, "doBackOff: \"Back-off restarting failed container NAME in pod POD\" (1.26)"),
    ))
    pod_host_ips: bool = rule("pod status reports hostIPs", (
        Change(18, False, "only hostIP (1.28: PodHostIPs alpha, off)"),
        Change(29, True, "KEP-2681: PodHostIPs beta, on by default in 1.29"),
    ), gate="PodHostIPs")
    pod_ready_to_start_containers: bool = rule("the PodReadyToStartContainers condition", (
        Change(18, False, "not reported (PodHasNetwork alpha from 1.25, renamed in 1.28, off)"),
        Change(29, True, "KEP-3085: PodReadyToStartContainersCondition beta, on by default in 1.29"),
    ), gate="PodReadyToStartContainersCondition")
    native_sidecars: Literal["off", "ordered", "unordered"] = rule("init containers with restartPolicy: Always", (
        Change(18, "off", "not available; 1.28: SidecarContainers alpha and off, the API server drops restartPolicy "
                          "(dropDisabledFields) and the container is an ordinary init container. With the gate on, "
                          "1.28 runs sidecars without a termination order (KEP-753 alpha)"),
        Change(29, "ordered", "SidecarContainers beta, on; PR #120620: sidecars stop after the main containers, in "
                              "reverse order"),
    ), gate="SidecarContainers", on="unordered", off="off")
    node_monitor_grace_period: float = rule("kube-controller-manager --node-monitor-grace-period default (s)", (
        Change(18, 40.0, "pkg/controller/nodelifecycle defaults"),
        Change(32, 50.0, "PR #126287"),
    ))
    pod_not_ready_event: bool = rule("MarkPodsNotReady records a Warning NodeNotReady event on each pod", (
        Change(18, False, "pkg/controller/util/node MarkPodsNotReady: status update only"),
        Change(19, True, "PR #87743: 'Node is not ready'"),
    ))
    taint_eviction_component: Literal["taint-controller", "taint-eviction-controller"] = rule(
        "source component of the taint-based eviction controller's events", (
        Change(18, "taint-controller", "NoExecuteTaintManager inside the node lifecycle controller"),
        Change(29, "taint-eviction-controller", "KEP-3902 SeparateTaintEvictionController beta"),
    ), gate="SeparateTaintEvictionController", on="taint-eviction-controller", off="taint-controller")
    podgc_out_of_service: bool = rule("PodGC force-deletes terminating pods on NotReady out-of-service nodes", (
        Change(18, False, "not available (alpha, off, in 1.24-1.25)"),
        Change(26, True, "KEP-2268 NodeOutOfServiceVolumeDetach beta, on by default"),
    ), gate="NodeOutOfServiceVolumeDetach")
    podgc_evicted_first: bool = rule("PodGC over terminatedPodGCThreshold deletes Evicted pods first", (
        Change(18, False, "oldest creationTimestamp first (byCreationTimestamp)"),
        Change(27, True, "PR #116167: byEvictionAndCreationTimestamp"),
    ))
    soft_eviction_grace: Literal["max-pod-grace", "min-of-max-and-pod"] = rule(
        "grace given to a pod evicted on a soft threshold", (
        Change(18, "max-pod-grace", "evictionMaxPodGracePeriod"),
        Change(32, "min-of-max-and-pod", "PR #122890: min(evictionMaxPodGracePeriod, pod grace)"),
    ), gate="AllowOverwriteTerminationGracePeriodSeconds", on="max-pod-grace", off="min-of-max-and-pod")
    hard_eviction_grace: int = rule("grace override the eviction manager passes for a hard threshold (s)", (
        Change(18, 0, "eviction_manager.go: 0, which the pod workers then treat per zero_grace"),
        Change(31, 1, "PR #124063: immediateEvictionGracePeriodSeconds = 1"),
    ))
    eviction_message: Literal["exceeds-request", "larger-consumption", "with-init-containers"] = rule(
        "wording of the kubelet's eviction message (helpers.go evictionMessage)", (
        Change(18, "exceeds-request", "PR #63415: 'Container X was using Y, which exceeds its request of Z. '"),
        Change(26, "larger-consumption", "PR #111597 'request is Z, has larger consumption of R. ', with "
               "'Threshold quantity: Q, available: A. ' (the version of the latter unverified)"),
        Change(31, "with-init-containers", "PR #124947: init and sidecar containers are named too"),
    ))
    pod_rejected_message: str = rule("prefix of the status message of a pod the kubelet rejects (rejectPod)", (
        Change(18, "Pod ", "kubelet.go rejectPod: 'Pod ' + message"),
        Change(26, "Pod was rejected: ", "PR #112644"),
    ))
    # pkg/kubelet/sysctl/safe_sysctls.go SafeSysctlAllowlist (whitelist.go SafeSysctlWhitelist before 1.22); from
    # 1.27 some need a minimum kernel (ip_local_reserved_ports 3.16, tcp_keepalive_time 4.5, tcp_rmem 4.15 ...):
    # podlife assumes a kernel new enough for every one
    safe_sysctls: tuple[str, ...] = rule("the kubelet's safe sysctls, allowed without --allowed-unsafe-sysctls", (
        Change(18, _SAFE_SYSCTLS_18, "PR #85463 added net.ipv4.ping_group_range to 1.17's three"),
        Change(22, _SAFE_SYSCTLS_18 + ("net.ipv4.ip_unprivileged_port_start",), "PR #103326"),
        Change(27, _SAFE_SYSCTLS_18 + ("net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports"),
               "PR #115374"),
        Change(29, _SAFE_SYSCTLS_29, "PR #118846 tcp_keepalive_time; PR #121240 tcp_fin_timeout, "
               "tcp_keepalive_intvl, tcp_keepalive_probes"),
        Change(32, _SAFE_SYSCTLS_29 + ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"), "PR #127489"),
        Change(37, _SAFE_SYSCTLS_29 + ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle",
                                       "net.ipv4.tcp_notsent_lowat"), "PR #138389"),
    ))
    sysctl_forbidden_word: Literal["whitelisted", "allowlisted"] = rule(
        "the kubelet's SysctlForbidden message: 'forbidden sysctl: \"x\" not <word>'", (
            Change(18, "whitelisted", "pkg/kubelet/sysctl/whitelist.go validateSysctl"),
            Change(22, "allowlisted", "PR #102298: allowlist.go"),
        ))
    sysctl_slash_names: bool = rule("the kubelet reads a sysctl name with slashes as its dotted form "
                                    "(allowlist.go convertSysctlVariableToDotsSeparator)", (
        Change(18, False, "whitelist.go compares the name as given"),
        Change(23, True, "PR #102393"),
    ))
    killing_event: Literal["legacy", "stopping"] = rule("message of the Killing event", (
        Change(18, "legacy", "the seed-000 kubelet: 'Killing container with id docker://NAME:Need to kill Pod'"),
        Change(19, "stopping", "'Stopping container NAME'"),
    ))
    runtime_not_synced_message: str = rule("runtimeErrors() before the first runtime sync", (
        Change(18, "container runtime is down", "the seed-001 kubelet (pre PR #69613)"),
        Change(19, "container runtime status check may not have completed yet", "PR #69613"),
    ))
    pleg_never_relisted: str = rule("PLEG health message when no relist ever succeeded", (
        Change(18, "pleg was last seen active 2562047h47m16.854775807s ago; threshold is 3m0s",
               "the seed-era kubelet: time since the zero time"),
        Change(19, "pleg has yet to be successful", "pkg/kubelet/pleg/generic.go Healthy: relistTime.IsZero()"),
    ))
    graceful_node_shutdown: bool = rule("the kubelet's graceful node shutdown manager (GracefulNodeShutdown)", (
        Change(18, False, "not available: a shutdown is a power-off for the pods"),
        Change(21, True, "beta, on by default (KEP-2000); active when shutdownGracePeriod > 0"),
    ), gate="GracefulNodeShutdown")
    pdb_condition: bool = rule("PodDisruptionBudget status carries the DisruptionAllowed condition", (
        Change(18, False, "no conditions in PodDisruptionBudgetStatus"),
        Change(21, True, "policy/v1 (1.21): disruption.go updatePdbStatus sets DisruptionAllowed"),
    ))
    pdb_unmanaged_pods: Literal["error", "skipped", "event"] = rule(
        "a pod without a controller under a budget that needs its controllers' scale", (
        Change(18, "error", "disruption.go getExpectedScale: NoControllerRef event, the sync fails (failSafe)"),
        Change(22, "skipped", "PR #103414: unmanaged pods are left out of the expected count, logged only"),
        Change(27, "event", "PR #115861: skipped, with an UnmanagedPods warning event on the budget"),
    ))
    pdb_unhealthy_pod_eviction_policy: bool = rule("spec.unhealthyPodEvictionPolicy is honoured by evictions", (
        Change(18, False, "not available; IfHealthyBudget behaviour (1.26: alpha, off, the field is dropped)"),
        Change(27, True, "pkg/features/kube_features.go: PDBUnhealthyPodEvictionPolicy beta, on by default in 1.27"),
    ), gate="PDBUnhealthyPodEvictionPolicy")
    disruption_target_condition: bool = rule("pods stopped by the kubelet or a controller get DisruptionTarget", (
        Change(18, False, "no such condition"),
        Change(26, True, "KEP-3329 PodDisruptionConditions beta, on by default"),
    ), gate="PodDisruptionConditions")
    evented_pleg: bool = rule("the kubelet takes container events from the runtime (EventedPLEG)", (
        Change(18, False, "generic relist only; EventedPLEG exists from 1.26 (KEP-3386), off by default"),
    ), gate="EventedPLEG")
    pulled_duration: bool = rule("the Pulled event says how long the pull took", (
        Change(18, False, "'Successfully pulled image \"X\"'"),
        Change(19, True, "PR #91563: '... in 1.2s'"),
    ))
    structured_logs: bool = rule("kubelet log lines use structured logging (klog InfoS)", (
        Change(18, False, "printf-style klog"),
        Change(21, True, "KEP-1602 structured logging in the kubelet"),
    ))
    pod_deletion_cost: bool = rule(
        "ReplicaSet scale-down ranks by the controller.kubernetes.io/pod-deletion-cost annotation", (
        Change(18, False, "not available (1.21: KEP-2255 alpha, feature gate PodDeletionCost off)"),
        Change(22, True, "PodDeletionCost beta, on by default "
                         "(pkg/controller/controller_utils.go ActivePodsWithRanks)"),
    ), gate="PodDeletionCost")
    logarithmic_scale_down: bool = rule(
        "ReplicaSet scale-down compares ready/creation times in log2 buckets, ties by UID", (
        Change(18, False, "exact timestamps, newer first (1.21: KEP-2185 alpha, LogarithmicScaleDown off)"),
        Change(22, True, "LogarithmicScaleDown beta, on by default; GA 1.31 (controller_utils.go logarithmicRankDiff)"),
    ), gate="LogarithmicScaleDown")
    scaling_replica_set_message: Literal["to", "to-from", "from-to"] = rule(
        "wording of the deployment controller's ScalingReplicaSet events", (
        Change(18, "to", "sync.go scaleReplicaSet: 'Scaled up replica set X to N'"),
        Change(23, "to-from", "PR #101142 (release unverified): 'Scaled up replica set X to N from M'; a new "
                              "replica set's event stays 'Scaled up replica set X to N'"),
        Change(32, "from-to", "PR #125118 (v1.32.0-alpha.2): 'Scaled up replica set X from M to N'; a new "
                              "replica set: 'from 0 to N'"),
    ))
    fit_error_preemption_suffix: bool = rule(
        "FailedScheduling message ends with DefaultPreemption's 'preemption: ...'", (
        Change(18, False, "the PostFilter message is not part of the FitError"),
        Change(24, True, "PR #107775: FitError.Error() appends Diagnosis.PostFilterMsg"),
    ))
    priority_preemption_policy: bool = rule("the Priority admission plugin copies the class's preemptionPolicy", (
        Change(18, False, "NonPreemptingPriority alpha, off"),
        Change(19, True, "NonPreemptingPriority beta, on by default (KEP-902); GA 1.24"),
    ), gate="NonPreemptingPriority")
    score_weights: Mapping[str, int] = rule(
        "default weights of the score plugins (pkg/scheduler/apis/config/*/default_plugins.go)", (
        Change(18, {"fit": 1, "balanced": 1, "node_affinity": 1, "taint": 1, "spread": 1, "inter_pod": 1},
               "v1alpha2: PodTopologySpread 1"),
        Change(19, {"fit": 1, "balanced": 1, "node_affinity": 1, "taint": 1, "spread": 2, "inter_pod": 1},
               "PR #91258: PodTopologySpread 2 (v1beta1/v1beta2)"),
        Change(23, {"fit": 1, "balanced": 1, "node_affinity": 2, "taint": 3, "spread": 2, "inter_pod": 2},
               "v1beta3 (kept in v1): TaintToleration 3, NodeAffinity 2, InterPodAffinity 2"),
    ))
    selector_spread_plugin: bool = rule("SelectorSpread scores in the default profile (weight 1)", (
        Change(18, True, "default_plugins.go: SelectorSpread; 1.19: DefaultPodTopologySpread alpha, off"),
        Change(20, False, "PR #91793: DefaultPodTopologySpread beta, on: PodTopologySpread's system default "
                          "constraints replace SelectorSpread (GA 1.24)"),
    ), gate="DefaultPodTopologySpread", on=False, off=True)
    balanced_allocation_skips_best_effort: bool = rule("NodeResourcesBalancedAllocation does not score a pod "
        "requesting no cpu and no memory", (
        Change(18, False, "balanced_allocation.go: the node's balance with the pod's zero requests added"),
        Change(33, True, "PR #130260 (issue #129138): PreScore returns Skip for best-effort pods"),
    ))
    balanced_allocation_by_change: bool = rule("NodeResourcesBalancedAllocation scores how much the pod improves "
        "the node's balance", (
        Change(18, False, "balanced_allocation.go: the balance with the pod, int64((1 - std) * 100)"),
        Change(36, True, "PR #135573: 50 + (50 + with - without) / 2 (no change: 75)"),
    ))
    # pkg/api/pod/util.go dropDisabledFields: a topologySpreadConstraints field whose gate is off is dropped
    spread_min_domains: bool = rule("topologySpreadConstraints[].minDomains is kept (else dropped)", (
        Change(18, False, "MinDomainsInPodTopologySpread alpha 1.24, beta but off 1.25-1.26"),
        Change(27, True, "KEP-3022: MinDomainsInPodTopologySpread on by default (GA 1.30)"),
    ), gate="MinDomainsInPodTopologySpread")
    spread_match_label_keys: bool = rule("topologySpreadConstraints[].matchLabelKeys is kept (else dropped)", (
        Change(18, False, "MatchLabelKeysInPodTopologySpread alpha, off, in 1.25-1.26"),
        Change(27, True, "KEP-3243: MatchLabelKeysInPodTopologySpread beta, on by default"),
    ), gate="MatchLabelKeysInPodTopologySpread")
    spread_node_inclusion_policies: bool = rule("topologySpreadConstraints[].nodeAffinityPolicy and nodeTaintsPolicy "
        "are kept (else dropped)", (
        Change(18, False, "NodeInclusionPolicyInPodTopologySpread alpha, off, in 1.25"),
        Change(26, True, "KEP-3094: NodeInclusionPolicyInPodTopologySpread beta, on by default (GA 1.33)"),
    ), gate="NodeInclusionPolicyInPodTopologySpread")
    prefer_nominated_node: bool = rule("a pod nominated by preemption is tried on its nominated node first", (
        Change(18, False, "schedule_one: the nominated node only holds the pod's requests (PreferNominatedNode "
                          "alpha and off in 1.21)"),
        Change(22, True, "KEP-1923 PreferNominatedNode beta, on by default (GA 1.24): evaluateNominatedNode"),
    ), gate="PreferNominatedNode")
    async_preemption: bool = rule("preemption deletes the victims after the scheduling cycle has handled the failure", (
        Change(18, False, "prepareCandidate inside PostFilter: victims deleted before the FailedScheduling Event "
                          "and the nomination (1.32: SchedulerAsyncPreemption alpha, off)"),
        Change(33, True, "KEP-4832 SchedulerAsyncPreemption beta, on by default: prepareCandidateAsync"),
    ), gate="SchedulerAsyncPreemption")
    preempted_event_message: Literal["name", "anonymous", "uid"] = rule("message of the Preempted Event on a victim", (
        Change(18, "name", "prepareCandidate: 'Preempted by NAMESPACE/NAME on node NODE'"),
        Change(23, "anonymous", "PR #114923 (in 1.23-1.26 patch releases): 'Preempted by a pod on node NODE'"),
        Change(29, "uid", "PR #119971: 'Preempted by pod UID on node NODE'"),
    ))
    daemonset_max_surge: bool = rule("a DaemonSet rolling update honours rollingUpdate.maxSurge", (
        Change(18, False, "no surge: 1.18-1.20 have no maxSurge field; 1.21 DaemonSetUpdateSurge alpha, off "
                          "(util.SurgeCount is 0 and the API server drops the field)"),
        Change(22, True, "KEP-1591 DaemonSetUpdateSurge beta, on by default (GA 1.25, gate removed in 1.27)"),
    ), gate="DaemonSetUpdateSurge")
    daemonset_skips_deleted_terminal: bool = rule("the DaemonSet controller ignores terminal pods being deleted", (
        Change(18, False, "getNodesToDaemonPods: a deleted pod counts until it leaves the store"),
        Change(28, True, "PR #118716: terminal pods with a deletionTimestamp are skipped (replaced at once)"),
    ))
    statefulset_max_unavailable: bool = rule(
        "a StatefulSet rolling update replaces up to rollingUpdate.maxUnavailable pods", (
        Change(18, False, "one pod at a time (1.24-1.34: MaxUnavailableStatefulSet alpha, off)"),
        Change(35, True, "KEP-961: MaxUnavailableStatefulSet beta, on by default in 1.35"),
        Change(36, False, "PR #137904: off by default again in 1.36 (a regression with Parallel pod management)"),
        Change(37, True, "PR #139466: on by default in 1.37"),
    ), gate="MaxUnavailableStatefulSet")
    statefulset_start_ordinal: bool = rule("a StatefulSet numbers its pods from spec.ordinals.start", (
        Change(18, False, "from 0 (1.26: StatefulSetStartOrdinal alpha, off)"),
        Change(27, True, "KEP-3335 StatefulSetStartOrdinal beta, on by default (GA 1.31)"),
    ), gate="StatefulSetStartOrdinal")
    statefulset_pod_index_label: bool = rule("StatefulSet pods get the apps.kubernetes.io/pod-index label", (
        Change(18, False, "not available (the label and its PodIndexLabel gate arrive in 1.28, already beta)"),
        Change(28, True, "KEP-4017 PodIndexLabel beta, on by default (stateful_set_utils.go initIdentity)"),
    ), gate="PodIndexLabel")
    statefulset_available_replicas: bool = rule("StatefulSet status.availableReplicas and spec.minReadySeconds", (
        Change(18, False, "not available (1.22: KEP-2599 alpha, StatefulSetMinReadySeconds off)"),
        Change(23, True, "KEP-2599 StatefulSetMinReadySeconds beta, on by default"),
    ), gate="StatefulSetMinReadySeconds")
    job_prefixed_labels: bool = rule(
        "the Job registry labels pods batch.kubernetes.io/controller-uid and job-name too", (
        Change(18, False, "pkg/registry/batch/job/strategy.go generateSelector: controller-uid, job-name"),
        Change(27, True, "PR #114930: batch.kubernetes.io/ prefixed labels added; selector on the prefixed uid"),
    ))
    job_tracking_finalizer: bool = rule(
        "Job pods carry batch.kubernetes.io/job-tracking; counts via uncountedTerminatedPods", (
        Change(18, False, "pods counted while they exist (1.22 alpha; beta but off in 1.23-1.24, PR #109491)"),
        Change(25, True, "PR #110948: JobTrackingWithFinalizers re-enabled by default (GA 1.26)"),
    ), gate="JobTrackingWithFinalizers")
    job_delay_terminal_condition: bool = rule(
        "Job gets FailureTarget/SuccessCriteriaMet first, Failed/Complete when no pod terminates", (
        Change(18, False, "Failed/Complete set at once (job_controller.go newFailureCondition)"),
        Change(31, True, "PR #125510: delayTerminalCondition (JobPodReplacementPolicy/JobManagedBy on)"),
    ), gate=("JobPodReplacementPolicy", "JobManagedBy"), gate_since=31)
    job_pod_failure_policy: bool = rule(
        "Job spec.podFailurePolicy (FailJob, Ignore, Count on exit codes and pod conditions)", (
        Change(18, False, "not available (1.25: JobPodFailurePolicy alpha, off: the API server drops the field)"),
        Change(26, True, "KEP-3329: JobPodFailurePolicy beta, on by default in 1.26 (GA 1.31)"),
    ), gate="JobPodFailurePolicy")
    job_indexed: bool = rule("Job spec.completionMode Indexed (completion indexes, index pod names and hostnames)", (
        Change(18, False, "not available (1.21: IndexedJob alpha, off: the API server drops completionMode)"),
        Change(22, True, "KEP-2214 IndexedJob beta, on by default (GA 1.24); PR #101601 index in pod names"),
    ), gate="IndexedJob")
    job_indexed_pod_names: bool = rule("Indexed Job pods are named <job>-<index>-xxxxx with hostname <job>-<index>", (
        Change(18, False, "1.21 (IndexedJob alpha): <job>-xxxxx, no hostname"),
        Change(22, True, "PR #101601: podGenerateNameWithIndex and spec.hostname"),
    ))
    job_pod_index_label: bool = rule("Indexed Job pods get the batch.kubernetes.io/job-completion-index label", (
        Change(18, False, "the index is an annotation only (JOB_COMPLETION_INDEX from the annotation)"),
        Change(28, True, "KEP-4017 PodIndexLabel beta, PR #118883; JOB_COMPLETION_INDEX reads the label while the "
                         "gate is on (indexed_job_utils.go as read; the release that switched it is not pinned)"),
    ), gate="PodIndexLabel")
    job_backoff_limit_per_index: bool = rule("Job spec.backoffLimitPerIndex / maxFailedIndexes and FailIndex rules", (
        Change(18, False, "not available (1.28: JobBackoffLimitPerIndex alpha, off: the fields are dropped)"),
        Change(29, True, "KEP-3850 JobBackoffLimitPerIndex beta, on by default (GA 1.33)"),
    ), gate="JobBackoffLimitPerIndex")
    job_success_policy: bool = rule(
        "Job spec.successPolicy ends an Indexed Job early (SuccessCriteriaMet, SuccessPolicy)", (
        Change(18, False, "not available (1.30: JobSuccessPolicy alpha, off: the field is dropped)"),
        Change(31, True, "KEP-3998 JobSuccessPolicy beta, on by default (GA 1.33)"),
    ), gate="JobSuccessPolicy")
    job_finish_time_fallback: Literal["now", "pod"] = rule(
        "a failed pod's finish time when not all its containers have terminated", (
        Change(18, "now", "getFinishedTime (PR #114768): the sync's own time"),
        Change(28, "pod", "PR #118413: the Ready=False transition, else deletionTimestamp minus the grace "
                          "period, else creationTimestamp"),
    ))
    job_policy_replaces_failed_only: bool = rule(
        "with a podFailurePolicy a Job replaces a pod only once it is Failed", (
        Change(18, False, "a terminating pod stops being active and is replaced at once (issue #115844)"),
        Change(28, True, "PR #117015 onlyReplaceFailedPods: terminating pods hold their place"),
    ))
    job_backoff_counts_ignored: bool = rule(
        "pod failures an Ignore rule keeps out of backoffLimit still delay replacements", (
        Change(18, False, "job_controller.go: the backoff record takes the counted failures only"),
        Change(28, True, "PR #119434: ignored failures are part of the backoff delay (issue #119378)"),
    ))
    job_suspend: bool = rule("spec.suspend of a Job holds it without pods", (
        Change(18, False, "not available (1.21: SuspendJob alpha, off: the API server drops the field)"),
        Change(22, True, "KEP-2232: SuspendJob beta, on by default in 1.22 (GA 1.24)"),
    ), gate="SuspendJob")
    ttl_after_finished: bool = rule("a finished Job with ttlSecondsAfterFinished is deleted once its TTL has passed", (
        Change(18, False, "TTLAfterFinished alpha and off (1.12-1.20): the API server drops the field"),
        Change(21, True, "KEP-592: TTLAfterFinished beta, on by default in 1.21 (GA 1.23)"),
    ), gate="TTLAfterFinished")
    job_pod_update_batch: float = rule(
        "seconds the Job controller waits to batch a pod event into one sync; status.ready", (
        Change(18, 0.0, "pod events enqueue the Job at once; no status.ready"),
        Change(24, 1.0, "KEP-2879 JobReadyPods beta: podUpdateBatchPeriod 1 s (later syncJobBatchPeriod)"),
    ), gate="JobReadyPods", on=1.0, off=0.0)
    job_status_terminating: bool = rule("Job status.terminating counts pods being deleted", (
        Change(18, False, "no such field"),
        Change(29, True, "KEP-3939 JobPodReplacementPolicy beta, on by default"),
    ), gate="JobPodReplacementPolicy")
    endpoint_terminating_condition: bool = rule("EndpointSlices keep terminating pods with serving/terminating", (
        Change(18, False, "ShouldPodBeInEndpoints drops pods with a deletionTimestamp; conditions: ready only"),
        Change(22, True, "KEP-1672 EndpointSliceTerminatingCondition beta, on by default (alpha 1.20, GA 1.26)"),
    ), gate="EndpointSliceTerminatingCondition")
    field_validation_default: Literal["Ignore", "Warn"] = rule("fieldValidation of a write that names none", (
        Change(18, "Ignore", "unknown fields are dropped while decoding; no fieldValidation parameter"),
        Change(25, "Warn", "KEP-2885 ServerSideFieldValidation beta (handlers/rest.go fieldValidation)"),
    ), gate="ServerSideFieldValidation", on="Warn", off="Ignore")
    custom_finalizer_warning: Literal["none", "unqualified", "path"] = rule(
            "a write adding an unqualified finalizer to a custom resource gets a warning", (
                Change(18, "none", "apiextensions registry/customresource strategy.go WarningsOnCreate/Update: nil"),
                Change(29, "unqualified", "validator.go validateKubeFinalizerName as warnings: 'prefer a domain-"
                                          "qualified finalizer name to avoid accidental conflicts with other "
                                          "finalizer writers' (release unconfirmed: absent from 1.28's source, "
                                          "seen from 1.29 clusters)"),
                Change(33, "path", "a name with a '.' and no '/' gets '... finalizer name including a path (/) "
                                   "...' (release unconfirmed: seen from 2025 clusters, not on 1.29-1.31 ones)"),
            ))
    job_status_column: bool = rule("the Jobs table (kubectl get jobs) has a Status column", (
        Change(18, False, "pkg/printers/internalversion: Name, Completions, Duration, Age"),
        Change(30, True, "PR #123226: Status (Complete, Failed, Terminating, Suspended, ..., else Running) "
                         "before Completions"),
    ))
    service_ip_static_subrange: bool = rule("dynamic ClusterIPs come from the upper band of the range first", (
        Change(18, False, "bitmap randomScanStrategy over the whole range"),
        Change(25, True, "KEP-3070 ServiceIPStaticSubrange beta, on by default (alpha 1.24, GA 1.26)"),
    ), gate="ServiceIPStaticSubrange")
    service_node_port_static_subrange: bool = rule("dynamic NodePorts come from the upper band of the range first", (
        Change(18, False, "bitmap randomScanStrategy over the whole range"),
        Change(28, True, "KEP-3668 ServiceNodePortStaticSubrange beta, on by default (alpha 1.27, GA 1.29)"),
    ), gate="ServiceNodePortStaticSubrange")
    root_ca_configmap: bool = rule("every namespace gets the ConfigMap kube-root-ca.crt", (
        Change(18, False, "RootCAConfigMap alpha and off (1.13-1.19)"),
        Change(20, True, "KEP-1205 RootCAConfigMap beta, on by default (GA 1.21)"),
    ), gate="RootCAConfigMap")
    root_ca_description: bool = rule("kube-root-ca.crt carries the kubernetes.io/description annotation", (
        Change(18, False, "publisher.go before GA: data only"),
        Change(21, True, "publisher.go DescriptionAnnotation (RootCAConfigMap GA; release unconfirmed, present "
                         "in 1.22+)"),
    ))
    bound_service_account_token_volume: bool = rule(
            "ServiceAccount admission mounts a projected kube-api-access-* volume (a bound token, kube-root-ca.crt "
            "and the namespace) instead of the account's token Secret", (
        Change(18, False, "plugin/pkg/admission/serviceaccount: the legacy token Secret volume (BoundServiceAccount"
                          "TokenVolume alpha and off, 1.13-1.20)"),
        Change(21, True, "KEP-1205 BoundServiceAccountTokenVolume beta, on by default (GA 1.22)"),
    ), gate="BoundServiceAccountTokenVolume")
    service_account_issuer_discovery: bool = rule(
            "the API server serves /.well-known/openid-configuration and /openid/v1/jwks", (
        Change(18, False, "ServiceAccountIssuerDiscovery alpha and off (1.18-1.19)"),
        Change(20, True, "KEP-1393 ServiceAccountIssuerDiscovery beta, on by default (GA 1.21)"),
    ))
    service_account_token_jti: bool = rule(
            "a service account token carries a jti (a UUID); its user has the credential-id extra JTI=<jti>", (
        Change(18, False, "pkg/serviceaccount/claims.go: no jti"),
        Change(30, True, "KEP-4193 ServiceAccountTokenJTI beta, on by default (alpha 1.29, GA 1.32)"),
    ), gate="ServiceAccountTokenJTI", gate_since=29)
    service_account_token_pod_node_info: bool = rule(
            "a pod-bound token names the pod's node (name, uid); its user has the node-name and node-uid extras", (
        Change(18, False, "pkg/serviceaccount/claims.go: the pod only"),
        Change(30, True, "KEP-4193 ServiceAccountTokenPodNodeInfo beta, on by default (alpha 1.29, GA 1.32)"),
    ), gate="ServiceAccountTokenPodNodeInfo", gate_since=29)
    apiserver_endpointslice: bool = rule("the API server writes the EndpointSlice of default/kubernetes", (
        Change(18, False, "pkg/master/reconcilers: Endpoints only"),
        Change(19, True, "pkg/master/reconcilers endpointsAdapter: an EndpointSlice beside the Endpoints, which "
                         "carry endpointslice.kubernetes.io/skip-mirror (KEP-752 EndpointSliceMirroring)"),
    ))
    external_traffic_policy_external_ips: bool = rule(
            "externalTrafficPolicy is allowed (and defaulted) on a ClusterIP Service with externalIPs", (
        Change(18, False, "needsExternalTrafficPolicy: NodePort and LoadBalancer only"),
        Change(29, True, "PR #119150: ExternallyAccessible (a ClusterIP Service with externalIPs too)"),
    ))
    endpointslice_mirroring: bool = rule("the endpointslice-mirroring-controller mirrors selectorless Services' "
                                         "Endpoints into EndpointSlices", (
        Change(18, False, "no such controller"),
        Change(19, True, "KEP-752 EndpointSliceMirroring: pkg/controller/endpointslicemirroring (beta, no gate)"),
    ))
    endpointslice_api: Literal["v1beta1", "v1"] = rule("EndpointSlice version the controller writes", (
        Change(18, "v1beta1", "discovery.k8s.io/v1beta1: endpoints[].topology (hostname, zone, region)"),
        Change(21, "v1", "discovery.k8s.io/v1 GA: endpoints[].nodeName and zone"),
    ))
    openapi_query_parameters: tuple[str, ...] = rule("query parameters the OpenAPI documents list beyond 1.18's", (
        Change(18, (), "api/openapi-spec/swagger.json of 1.18"),
        Change(19, ("resourceVersionMatch",), "KEP-1904 ListOptions.resourceVersionMatch"),
        Change(23, ("resourceVersionMatch", "fieldValidation"), "KEP-2885 server-side field validation"),
        Change(27, ("resourceVersionMatch", "fieldValidation", "sendInitialEvents"),
               "KEP-3157 watch-list: ListOptions.sendInitialEvents"),
        Change(32, ("resourceVersionMatch", "fieldValidation", "sendInitialEvents",
                    "ignoreStoreReadErrorWithClusterBreakingPotential"),
               "KEP-3926 DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential"),
    ))
    default_ingress_class_newest_wins: bool = rule("DefaultIngressClass with several default IngressClasses", (
        Change(18, False, "plugin/pkg/admission/network/defaultingressclass: \"N default IngressClasses were found, "
                          "only 1 allowed\", the Ingress create is refused"),
        Change(25, True, "PR #110974: the newest default is chosen, then the lower name"),
    ))
    csi_driver_defaults: tuple[str, ...] = rule("CSIDriver spec fields SetDefaults_CSIDriver fills when unset", (
        Change(18, ("attachRequired", "podInfoOnMount", "volumeLifecycleModes"),
               "pkg/apis/storage/v1/defaults.go SetDefaults_CSIDriver (CSIInlineVolume beta, on, since 1.16)"),
        Change(20, ("attachRequired", "podInfoOnMount", "fsGroupPolicy", "volumeLifecycleModes"),
               "CSIVolumeFSGroupPolicy beta (on by default) in 1.20: fsGroupPolicy ReadWriteOnceWithFSType"),
        Change(21, ("attachRequired", "podInfoOnMount", "storageCapacity", "fsGroupPolicy", "volumeLifecycleModes",
                    "requiresRepublish"),
               "CSIStorageCapacity and CSIServiceAccountToken beta in 1.21: storageCapacity and requiresRepublish "
               "false"),
        Change(28, ("attachRequired", "podInfoOnMount", "storageCapacity", "fsGroupPolicy", "volumeLifecycleModes",
                    "requiresRepublish", "seLinuxMount"),
               "SELinuxMountReadWriteOncePod on by default from 1.28: seLinuxMount false"),
    ))

    def enabled(self, gate: str) -> bool:
        return self.gates.get(gate, False)

    def drops(self, key: DroppedField) -> bool:
        """The API server drops this field before storing: its gate exists and is off (checked by name, where
        ``key in dropped_fields`` would not be)."""
        return key in self.dropped_fields


# the table's rows, in its order (``podlife versions``, ``podlife explain``)
RULES: tuple[Rule, ...] = tuple(replace(r, name=f.name) for f in fields(Profile) if (r := f.metadata.get("rule")))
_RULE_NAMES = frozenset(r.name for r in RULES)


# --- API schema differences ----------------------------------------------------------------------------
# Manifests are decoded strictly against the schema of their minor (podlife.api.schema). Schemas ship from
# 1.25 (SCHEMA_FLOOR); an older minor uses the 1.25 schema with these differences, read from each field's
# "+featureGate"/release notes in staging/src/k8s.io/api and the API removal guide.
SCHEMA_FLOOR = 25


@dataclass(frozen=True)
class SchemaChange:
    """A field or kind of the API schema added or removed in a minor version."""

    definition: str               # schema definition, e.g. io.k8s.api.core.v1.PodSpec
    field: str | None             # None: the whole kind of that group-version
    since: int = OLDEST_MINOR     # first minor whose API has it
    until: int | None = None      # last minor that serves it, for what 1.25 no longer has
    schema: Any = None            # for a retired field: its schema; for a retired kind: the definition it shares
    source: str = ""


SCHEMA_CHANGES: tuple[SchemaChange, ...] = (
    SchemaChange("io.k8s.api.core.v1.PodSpec", "setHostnameAsFQDN", 19, source="KEP-1797 alpha in 1.19"),
    SchemaChange("io.k8s.api.core.v1.PodSecurityContext", "seccompProfile", 19, source="seccomp GA fields, 1.19"),
    SchemaChange("io.k8s.api.core.v1.SecurityContext", "seccompProfile", 19, source="seccomp GA fields, 1.19"),
    SchemaChange("io.k8s.api.core.v1.Volume", "ephemeral", 19, source="generic ephemeral volumes alpha, 1.19"),
    SchemaChange("io.k8s.api.core.v1.Probe", "terminationGracePeriodSeconds", 21,
                 source="ProbeTerminationGracePeriod alpha, 1.21"),
    SchemaChange("io.k8s.api.core.v1.Probe", "grpc", 23, source="GRPCContainerProbe alpha, 1.23"),
    SchemaChange("io.k8s.api.core.v1.PodSpec", "os", 23, source="IdentifyPodOS alpha, 1.23"),
    SchemaChange("io.k8s.api.core.v1.PodSpec", "hostUsers", 25, source="UserNamespacesStatelessPodsSupport, 1.25"),
    SchemaChange("io.k8s.api.core.v1.TopologySpreadConstraint", "minDomains", 24,
                 source="MinDomainsInPodTopologySpread alpha, 1.24"),
    SchemaChange("io.k8s.api.core.v1.WindowsSecurityContextOptions", "hostProcess", 22,
                 source="WindowsHostProcessContainers alpha, 1.22"),
    SchemaChange("io.k8s.api.apps.v1.StatefulSetSpec", "minReadySeconds", 22,
                 source="StatefulSetMinReadySeconds alpha, 1.22"),
    SchemaChange("io.k8s.api.apps.v1.StatefulSetSpec", "persistentVolumeClaimRetentionPolicy", 23,
                 source="StatefulSetAutoDeletePVC alpha, 1.23"),
    SchemaChange("io.k8s.api.apps.v1.RollingUpdateDaemonSet", "maxSurge", 21,
                 source="DaemonSetUpdateSurge alpha, 1.21"),
    SchemaChange("io.k8s.api.batch.v1.JobSpec", "completionMode", 21, source="IndexedJob alpha, 1.21"),
    SchemaChange("io.k8s.api.batch.v1.JobSpec", "suspend", 21, source="SuspendJob alpha, 1.21"),
    SchemaChange("io.k8s.api.batch.v1.JobSpec", "podFailurePolicy", 25, source="JobPodFailurePolicy alpha, 1.25"),
    SchemaChange("io.k8s.api.core.v1.ServiceSpec", "clusterIPs", 20, source="IPv6DualStack rework, 1.20"),
    SchemaChange("io.k8s.api.core.v1.ServiceSpec", "ipFamilies", 20, source="IPv6DualStack rework, 1.20"),
    SchemaChange("io.k8s.api.core.v1.ServiceSpec", "ipFamilyPolicy", 20, source="IPv6DualStack rework, 1.20"),
    SchemaChange("io.k8s.api.core.v1.ServiceSpec", "allocateLoadBalancerNodePorts", 20,
                 source="ServiceLBNodePortControl alpha, 1.20"),
    SchemaChange("io.k8s.api.core.v1.ServiceSpec", "loadBalancerClass", 21,
                 source="ServiceLoadBalancerClass alpha, 1.21"),
    SchemaChange("io.k8s.api.core.v1.ServiceSpec", "internalTrafficPolicy", 21,
                 source="ServiceInternalTrafficPolicy alpha, 1.21"),
    SchemaChange("io.k8s.api.core.v1.PersistentVolumeClaimSpec", "dataSourceRef", 22,
                 source="AnyVolumeDataSource alpha, 1.22"),
    SchemaChange("io.k8s.api.batch.v1.CronJob", None, 21, source="batch/v1 CronJob GA, 1.21"),
    SchemaChange("io.k8s.api.batch.v1.CronJobSpec", "timeZone", 24, source="CronJobTimeZone alpha, 1.24"),
    SchemaChange("io.k8s.api.policy.v1.PodDisruptionBudget", None, 21, source="policy/v1 PodDisruptionBudget GA, 1.21"),
    SchemaChange("io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler", None, 23, source="autoscaling/v2 GA, 1.23"),
    SchemaChange("io.k8s.api.networking.v1.Ingress", None, 19, source="networking.k8s.io/v1 Ingress GA, 1.19"),
    SchemaChange("io.k8s.api.networking.v1.IngressClass", None, 19, source="networking.k8s.io/v1 IngressClass, 1.19"),
    SchemaChange("io.k8s.api.node.v1.RuntimeClass", None, 20, source="node.k8s.io/v1 RuntimeClass GA, 1.20"),
    SchemaChange("io.k8s.api.storage.v1.CSIStorageCapacity", None, 24,
                 source="storage.k8s.io/v1 CSIStorageCapacity, 1.24"),
    SchemaChange("io.k8s.api.events.v1.Event", None, 19, source="events.k8s.io/v1 GA, 1.19"),
    SchemaChange("io.k8s.api.certificates.v1.CertificateSigningRequest", None, 19,
                 source="certificates.k8s.io/v1, 1.19"),
    # served by old minors, removed before 1.25; checked against the definition they share with their successor
    SchemaChange("io.k8s.api.core.v1.Lifecycle", "type", until=18,
                 schema={"type": ["string", "null"], "enum": ["Sidecar"]},
                 source="the unmerged sidecar PR #80744 carried by the seed-000 kubelet (rule legacy_sidecar_type)"),
    SchemaChange("io.k8s.api.batch.v1beta1.CronJob", None, until=24, schema="io.k8s.api.batch.v1.CronJob",
                 source="batch/v1beta1 CronJob removed in 1.25"),
    SchemaChange("io.k8s.api.policy.v1beta1.PodDisruptionBudget", None, until=24,
                 schema="io.k8s.api.policy.v1.PodDisruptionBudget", source="policy/v1beta1 removed in 1.25"),
    SchemaChange("io.k8s.api.rbac.v1beta1.Role", None, until=21, schema="io.k8s.api.rbac.v1.Role",
                 source="rbac.authorization.k8s.io/v1beta1 removed in 1.22"),
    SchemaChange("io.k8s.api.rbac.v1beta1.RoleBinding", None, until=21, schema="io.k8s.api.rbac.v1.RoleBinding",
                 source="rbac.authorization.k8s.io/v1beta1 removed in 1.22"),
    SchemaChange("io.k8s.api.rbac.v1beta1.ClusterRole", None, until=21, schema="io.k8s.api.rbac.v1.ClusterRole",
                 source="rbac.authorization.k8s.io/v1beta1 removed in 1.22"),
    SchemaChange("io.k8s.api.rbac.v1beta1.ClusterRoleBinding", None, until=21,
                 schema="io.k8s.api.rbac.v1.ClusterRoleBinding",
                 source="rbac.authorization.k8s.io/v1beta1 removed in 1.22"),
    SchemaChange("io.k8s.api.scheduling.v1beta1.PriorityClass", None, until=21,
                 schema="io.k8s.api.scheduling.v1.PriorityClass", source="scheduling.k8s.io/v1beta1 removed in 1.22"),
    SchemaChange("io.k8s.api.storage.v1beta1.StorageClass", None, until=21, schema="io.k8s.api.storage.v1.StorageClass",
                 source="storage.k8s.io/v1beta1 StorageClass removed in 1.22"),
    SchemaChange("io.k8s.api.coordination.v1beta1.Lease", None, until=21, schema="io.k8s.api.coordination.v1.Lease",
                 source="coordination.k8s.io/v1beta1 removed in 1.22"),
    SchemaChange("io.k8s.api.node.v1beta1.RuntimeClass", None, until=24, schema="io.k8s.api.node.v1.RuntimeClass",
                 source="node.k8s.io/v1beta1 removed in 1.25"),
)


# fields the API server drops before storing while their gate is off (dropDisabledFields): what to look for
# in a manifest → the gate
DroppedField = Literal[
    "probe_grace", "probe_grpc", "sts_pvc_retention", "cronjob_time_zone", "scheduling_gates",
    "pdb_unhealthy_policy", "lifecycle_sleep", "container_restart_rules", "job_pod_failure_policy", "job_indexed",
    "job_backoff_limit_per_index", "job_success_policy", "job_pod_replacement_policy", "sidecar_restart_policy",
    "ds_max_surge", "sts_start_ordinal"]
DROPPED_FIELD_GATES: dict[DroppedField, str] = {
    "probe_grace": "ProbeTerminationGracePeriod",
    "probe_grpc": "GRPCContainerProbe",
    "sts_pvc_retention": "StatefulSetAutoDeletePVC",
    "cronjob_time_zone": "CronJobTimeZone",
    "scheduling_gates": "PodSchedulingReadiness",
    "pdb_unhealthy_policy": "PDBUnhealthyPodEvictionPolicy",
    "lifecycle_sleep": "PodLifecycleSleepAction",
    "container_restart_rules": "ContainerRestartRules",
    "job_pod_failure_policy": "JobPodFailurePolicy",
    "job_indexed": "IndexedJob",
    "job_backoff_limit_per_index": "JobBackoffLimitPerIndex",
    "job_success_policy": "JobSuccessPolicy",
    "job_pod_replacement_policy": "JobPodReplacementPolicy",
    "sidecar_restart_policy": "SidecarContainers",
    "ds_max_surge": "DaemonSetUpdateSurge",
    "sts_start_ordinal": "StatefulSetStartOrdinal",
}


def profile(version: str, gates: Mapping[str, bool] | None = None) -> Profile:
    """The rules of ``version`` with ``gates`` set over the release's defaults (a gate the release refuses,
    or a version podlife does not model, is a ValueError). A Profile is immutable and depends on nothing else,
    so one is made once per version and gates (a cluster asks for four; a sweep builds one cluster a point)."""
    key = (version, tuple(sorted((gates or {}).items())))
    made = _profiles.get(key)
    if made is None:
        made = _profiles[key] = _profile(version, gates)
    return made


_profiles: dict[tuple[str, tuple[tuple[str, bool], ...]], Profile] = {}


def _profile(version: str, gates: Mapping[str, bool] | None) -> Profile:
    from podlife import features

    if version not in MODELLED_VERSIONS:
        raise ValueError(f'Kubernetes version "{version}" is not modelled (modelled: {OLDEST_MINOR}..{NEWEST_MINOR})')
    minor = int(version.split(".")[1])
    for name, value in sorted((gates or {}).items()):
        problem = features.check(name, value, minor)
        if problem is not None:
            raise ValueError(problem)
    defaults = features.defaults(minor)
    effective = features.effective(minor, dict(gates or {}))
    set_gates = {k: v for k, v in sorted((gates or {}).items()) if defaults[k] != v}
    # a field is dropped where its gate exists and is off
    dropped = frozenset(key for key, gate in DROPPED_FIELD_GATES.items() if gate in effective and not effective[gate])
    values = {r.name: r.value(minor, effective, defaults) for r in RULES}
    return Profile(version, minor, effective, set_gates, dropped, **values)


def describe() -> list[tuple[str, str, str, str, str]]:
    """Rows (rule, versions, value, feature gate, source) for ``podlife versions``: a gated rule names its gate,
    and the values it takes when a scenario sets the gate on or off where they are not plain true/false."""
    rows = []
    for r in RULES:
        gate = " or ".join(r.gates())
        if gate and (r.on, r.off) != (True, False):
            gate += f" (turned on: {_show(r.on)}; turned off: {_show(r.off)})"
        if gate and r.gate_since > OLDEST_MINOR:
            gate += f" from 1.{r.gate_since}"
        for i, c in enumerate(r.changes):
            end = r.changes[i + 1].since - 1 if i + 1 < len(r.changes) else NEWEST_MINOR
            span = f"1.{c.since}" if c.since == end else f"1.{c.since}-1.{end}"
            rows.append((r.name, span, _show(c.value), gate, c.source))
    return rows


def _show(value: Any) -> str:
    return (", ".join(sorted(value)) or "none") if isinstance(value, frozenset) else str(value)


# --- API versions served by default ---------------------------------------------------------------------------
# GA versions are served from the minor whose schema has them. Alpha versions never are by default. Beta versions:
# those that existed before 1.24 stayed on by default until removed, and the few listed in
# pkg/controlplane/instance.go legacyBetaEnabledByDefaultResources (KEP-3136: betas new from 1.24 are off).
# The beta kinds podlife serves, each converted to the version it is stored in (podlife.api.conversion),
# (group, version, kind) -> (first minor, last minor) served by default; the other betas upstream served by
# default are listed in the README (API section) as not served.
_FC = "flowcontrol.apiserver.k8s.io"
_RBAC = "rbac.authorization.k8s.io"
SERVED_BETAS: dict[tuple[str, str, str], tuple[int, int]] = {
    # pkg/registry/flowcontrol/rest/storage_flowcontrol.go; APF beta in 1.20, v1beta2 in 1.23, v1beta3 in 1.26
    # (in legacyBetaEnabledByDefaultResources); removed in 1.26, 1.29 and 1.32 (deprecation guide)
    **{(_FC, v, k): span for v, span in (("v1beta1", (20, 25)), ("v1beta2", (23, 28)), ("v1beta3", (26, 31)))
       for k in ("FlowSchema", "PriorityLevelConfiguration")},
    # removed in 1.22 (deprecation guide), beta since before 1.18
    **{(_RBAC, "v1beta1", k): (OLDEST_MINOR, 21) for k in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")},
    ("scheduling.k8s.io", "v1beta1", "PriorityClass"): (OLDEST_MINOR, 21),
    ("coordination.k8s.io", "v1beta1", "Lease"): (OLDEST_MINOR, 21),
    ("storage.k8s.io", "v1beta1", "StorageClass"): (OLDEST_MINOR, 21),
    # removed in 1.25
    ("batch", "v1beta1", "CronJob"): (OLDEST_MINOR, 24),
    ("node.k8s.io", "v1beta1", "RuntimeClass"): (OLDEST_MINOR, 24),
    # removed in 1.26
    ("autoscaling", "v2beta2", "HorizontalPodAutoscaler"): (OLDEST_MINOR, 25),
    # beta in 1.21 (CSIStorageCapacity, KEP-1472); removed in 1.27
    ("storage.k8s.io", "v1beta1", "CSIStorageCapacity"): (21, 26),
}


def beta_served(group: str, version: str, kind: str, minor: int) -> bool:
    """Whether a beta version of a kind is served by default at ``minor`` (SERVED_BETAS)."""
    span = SERVED_BETAS.get((group, version, kind))
    return span is not None and span[0] <= minor <= span[1]

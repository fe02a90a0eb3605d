"""Feature gates: pkg/features/kube_features.go (defaultVersionedKubernetesFeatureGates) and
component-base/featuregate, for the gates whose behaviour podlife models.

A gate exists from its first stage to ``last`` (the last release that still knows it; None: every modelled
release from its first stage on). Its default is the stage's. A stage locked to its default (LockToDefault: most
GA stages, not all) refuses the other value, as ``featuregate.SetFromMap`` does; a gate the release does not
know is refused as upstream's components refuse to start, and so is a gate podlife does not model (its
behaviour would silently be missing). The behaviour each gate switches is a rule in ``podlife.versions`` that
names the gate, or a field the API server drops while the gate is off (``DROPPED_FIELD_GATES``).
"""

from __future__ import annotations

from dataclasses import dataclass

ALPHA, BETA, GA, DEPRECATED = "Alpha", "Beta", "GA", "Deprecated"


@dataclass(frozen=True)
class Stage:
    """A feature gate's stage and default from one minor version on."""

    since: int                 # first minor of this stage
    default: bool
    prerelease: str
    locked: bool = False       # LockToDefault


@dataclass(frozen=True)
class Gate:
    """A feature gate: its stages over the minors."""

    name: str
    stages: tuple[Stage, ...]  # ascending by ``since``
    last: int | None = None    # last minor that knows the gate
    source: str = ""

    def stage(self, minor: int) -> Stage | None:
        if minor < self.stages[0].since or (self.last is not None and minor > self.last):
            return None
        current = self.stages[0]
        for s in self.stages:
            if minor >= s.since:
                current = s
        return current


def _g(name: str, *stages: tuple, last: int | None = None, source: str = "") -> Gate:
    return Gate(name, tuple(Stage(*s) for s in stages), last, source)


# where each row's facts were read: kube_features.go (defaultKubernetesFeatureGates) as released in 1.25, 1.27,
# 1.28, 1.30 (development) and 1.31, and the versioned specs of 1.32 (versioned_kube_features.go), 1.33 and
# 1.35 (kube_features.go); the first and last release of a removed gate from its kubernetes.io feature-gate
# page. A gate in the 1.33 specs but not in 1.35's is taken to be gone from 1.34 when its "remove in" comment
# says 1.34 or earlier, else from 1.35. Stages after 1.35 follow the gate's KEP and the PR named.
_KF = "pkg/features/kube_features.go"
_PAGE = "kubernetes.io feature gate page (stages; last release)"

GATES: tuple[Gate, ...] = (
    _g("AllowOverwriteTerminationGracePeriodSeconds", (32, False, DEPRECATED),
       source=f"{_KF} 1.32-1.33: added deprecated and off (PR #122890)"),
    _g("BoundServiceAccountTokenVolume", (18, False, ALPHA), (21, True, BETA), (22, True, GA, True), last=23,
       source=_PAGE),
    _g("CronJobControllerV2", (20, False, ALPHA), (21, True, BETA), (22, True, GA, True), last=23, source=_PAGE),
    _g("CronJobTimeZone", (24, False, ALPHA), (25, True, BETA), (27, True, GA, True), last=28,
       source=f"{_KF} 1.25, 1.27, 1.28 (remove in 1.29)"),
    _g("CronJobsScheduledAnnotation", (28, True, BETA), (32, True, GA, True), last=34,
       source=f"{_KF} 1.28, 1.31, 1.33 (remove in 1.35), absent from 1.35"),
    _g("ConsistentHTTPGetHandlers", (26, True, GA), (30, True, GA, True), last=30,
       source=f"{_KF} 1.28 (GA, not locked); added in 1.26; locked by PR #122578 (1.30), removed by PR #124463"),
    _g("ContainerRestartRules", (34, False, ALPHA), (35, True, BETA), source=f"{_KF} 1.35"),
    _g("ContainerStopSignals", (33, False, ALPHA), (37, True, BETA), source=f"{_KF} 1.33, 1.35; KEP-4960 beta in 1.37"),
    _g("DaemonSetUpdateSurge", (21, False, ALPHA), (22, True, BETA), (25, True, GA, True), last=26,
       source=f"{_PAGE}; {_KF} 1.25 (GA, locked; remove in 1.27)"),
    _g("DefaultPodTopologySpread", (19, False, ALPHA), (20, True, BETA), (24, True, GA, True), last=25,
       source=f"{_PAGE}; {_KF} 1.25 (GA, locked)"),
    _g("DeploymentReplicaSetTerminatingReplicas", (33, False, ALPHA), (35, True, BETA),
       source=f"{_KF} 1.33, 1.35"),
    _g("EndpointSliceTerminatingCondition", (20, False, ALPHA), (22, True, BETA), (26, True, GA, True), last=27,
       source=f"{_PAGE}; {_KF} 1.25, 1.27"),
    # 1.27.0 called it beta (still off); a 1.27 patch release and the versioned specs say alpha
    _g("EventedPLEG", (26, False, ALPHA), source=f"{_KF} 1.27-1.35"),
    # GA but never locked: a cluster may still turn the timeout off
    _g("ExecProbeTimeout", (20, True, GA), (35, True, GA, True), source=f"{_KF} 1.25-1.35 (locked in 1.35)"),
    _g("GRPCContainerProbe", (23, False, ALPHA), (24, True, BETA), (27, True, GA, True), last=28,
       source=f"{_KF} 1.25, 1.27, 1.28 (remove in 1.29)"),
    _g("GracefulNodeShutdown", (20, False, ALPHA), (21, True, BETA), source=f"{_KF} 1.33"),
    _g("IndexedJob", (21, False, ALPHA), (22, True, BETA), (24, True, GA, True), last=25,
       source=f"{_PAGE}; KEP-2214 (removed in 1.26)"),
    _g("JobBackoffLimitPerIndex", (28, False, ALPHA), (29, True, BETA), (33, True, GA, True),
       source=f"{_KF} 1.28-1.35; KEP-3850"),
    _g("JobManagedBy", (30, False, ALPHA), (32, True, BETA), (35, True, GA, True), source=f"{_KF} 1.31, 1.33, 1.35"),
    _g("JobPodFailurePolicy", (25, False, ALPHA), (26, True, BETA), (31, True, GA, True), last=32,
       source=f"{_KF} 1.25-1.32 (absent from 1.33)"),
    _g("JobPodReplacementPolicy", (28, False, ALPHA), (29, True, BETA), (34, True, GA, True),
       source=f"{_KF} 1.28-1.35"),
    _g("JobReadyPods", (23, False, ALPHA), (24, True, BETA), (29, True, GA, True), last=30,
       source=f"{_PAGE}; {_KF} 1.25-1.30 (absent from 1.31)"),
    _g("JobSuccessPolicy", (30, False, ALPHA), (31, True, BETA), (33, True, GA, True),
       source=f"{_KF} 1.30-1.35; KEP-3998"),
    _g("JobTrackingWithFinalizers", (22, False, ALPHA), (23, False, BETA), (25, True, BETA), (26, True, GA, True),
       last=28, source=f"{_PAGE}; {_KF} 1.25-1.28"),
    _g("LogarithmicScaleDown", (21, False, ALPHA), (22, True, BETA), (31, True, GA, True), source=f"{_KF} 1.31, 1.33"),
    _g("MatchLabelKeysInPodTopologySpread", (25, False, ALPHA), (27, True, BETA), source=f"{_KF} 1.25-1.33"),
    _g("MaxUnavailableStatefulSet", (24, False, ALPHA), (35, True, BETA), (36, False, BETA), (37, True, BETA),
       source=f"{_KF} 1.25-1.35; off again in 1.36 (PR #137904), on in 1.37 (PR #139466)"),
    _g("MinDomainsInPodTopologySpread", (24, False, ALPHA), (25, False, BETA), (27, True, BETA),
       (30, True, GA, True), last=31, source=f"{_PAGE}; {_KF} 1.25, 1.27, 1.31"),
    _g("NodeInclusionPolicyInPodTopologySpread", (25, False, ALPHA), (26, True, BETA), (33, True, GA, True),
       source=f"{_KF} 1.25-1.33"),
    _g("NodeOutOfServiceVolumeDetach", (24, False, ALPHA), (26, True, BETA), (28, True, GA, True), last=31,
       source=f"{_PAGE}; {_KF} 1.25-1.31"),
    _g("NonPreemptingPriority", (18, False, ALPHA), (19, True, BETA), (24, True, GA, True), last=25,
       source=f"{_PAGE}; {_KF} 1.25"),
    _g("PDBUnhealthyPodEvictionPolicy", (26, False, ALPHA), (27, True, BETA), (31, True, GA, True), last=32,
       source=f"{_KF} 1.27-1.32 (absent from 1.33)"),
    _g("PodDeletionCost", (21, False, ALPHA), (22, True, BETA), source=f"{_KF} 1.25-1.33"),
    _g("PodDisruptionConditions", (25, False, ALPHA), (26, True, BETA), (31, True, GA, True), last=33,
       source=f"{_KF} 1.25-1.33 (remove in 1.33), absent from 1.35"),
    _g("PodHostIPs", (28, False, ALPHA), (29, True, BETA), (30, True, GA, True), last=31,
       source=f"{_PAGE}; {_KF} 1.28-1.31"),
    _g("PodIndexLabel", (28, True, BETA), (32, True, GA, True), last=34,
       source=f"{_KF} 1.28-1.33 (remove in 1.35), absent from 1.35"),
    _g("PodLifecycleSleepAction", (29, False, ALPHA), (30, True, BETA), (34, True, GA, True),
       source=f"{_KF} 1.31-1.35"),
    _g("PodLifecycleSleepActionAllowZero", (32, False, ALPHA), (33, True, BETA), (34, True, GA, True),
       source=f"{_KF} 1.33, 1.35"),
    _g("PodObservedGenerationTracking", (33, False, ALPHA), (34, True, BETA), (35, True, GA, True),
       source=f"{_KF} 1.33, 1.35"),
    _g("PodReadyToStartContainersCondition", (28, False, ALPHA), (29, True, BETA), source=f"{_KF} 1.28-1.35"),
    _g("PodSchedulingReadiness", (26, False, ALPHA), (27, True, BETA), (30, True, GA, True),
       source=f"{_KF} 1.27-1.35"),
    _g("PreferNominatedNode", (21, False, ALPHA), (22, True, BETA), (24, True, GA, True), last=25,
       source=f"{_PAGE}; {_KF} 1.25"),
    _g("ProbeTerminationGracePeriod", (21, False, ALPHA), (22, False, BETA), (25, True, BETA), (28, True, GA, True),
       last=28, source=f"{_KF} 1.25, 1.27, 1.28 (remove in 1.29)"),
    _g("RelaxedEnvironmentVariableValidation", (30, False, ALPHA), (32, True, BETA), (34, True, GA, True),
       source=f"{_KF} 1.31-1.35"),
    _g("RestartAllContainersOnContainerExits", (35, False, ALPHA), (36, True, BETA),
       source=f"{_KF} 1.35; KEP-5532, PR #136681"),
    _g("RootCAConfigMap", (18, False, ALPHA), (20, True, BETA), (21, True, GA, True), last=22, source=_PAGE),
    _g("SchedulerAsyncPreemption", (32, False, ALPHA), (33, True, BETA), source=f"{_KF} 1.32-1.35"),
    _g("StatefulSetStartOrdinal", (26, False, ALPHA), (27, True, BETA), (31, True, GA, True), last=33,
       source=f"{_KF} 1.27, 1.31 (GA, locked; remove in 1.33); KEP-3335"),
    _g("SeparateTaintEvictionController", (29, True, BETA), (34, True, GA, True), source=f"{_KF} 1.29-1.35"),
    _g("ServerSideFieldValidation", (23, False, ALPHA), (25, True, BETA), (27, True, GA, True), last=31,
       source=f"{_PAGE}; {_KF} 1.25-1.31 (generic apiserver gate)"),
    _g("ServiceAccountTokenJTI", (29, False, ALPHA), (30, True, BETA), (32, True, GA, True),
       source=f"{_KF} 1.29-1.35"),
    _g("ServiceAccountTokenPodNodeInfo", (29, False, ALPHA), (30, True, BETA), (32, True, GA, True),
       source=f"{_KF} 1.29-1.35"),
    _g("ServiceIPStaticSubrange", (24, False, ALPHA), (25, True, BETA), (26, True, GA, True), last=27,
       source=f"{_PAGE}; {_KF} 1.25, 1.27"),
    _g("ServiceNodePortStaticSubrange", (27, False, ALPHA), (28, True, BETA), (29, True, GA, True), last=30,
       source=f"{_PAGE}; {_KF} 1.27, 1.28"),
    _g("SidecarContainers", (28, False, ALPHA), (29, True, BETA), (33, True, GA, True),
       source=f"{_KF} 1.28-1.35 (remove in 1.36: kept here, unconfirmed)"),
    _g("StatefulSetAutoDeletePVC", (23, False, ALPHA), (27, True, BETA), (32, True, GA, True), last=34,
       source=f"{_KF} 1.25-1.33 (remove in 1.35), absent from 1.35"),
    _g("StatefulSetMinReadySeconds", (22, False, ALPHA), (23, True, BETA), (25, True, GA, True), last=26,
       source=f"{_KF} 1.25 (remove in 1.27), absent from 1.27"),
    _g("SuspendJob", (21, False, ALPHA), (22, True, BETA), (24, True, GA, True), last=25,
       source=f"{_PAGE}; {_KF} 1.25"),
    _g("TTLAfterFinished", (18, False, ALPHA), (21, True, BETA), (23, True, GA, True), last=24,
       source=f"{_PAGE} (alpha since 1.12)"),
)

BY_NAME: dict[str, Gate] = {g.name: g for g in GATES}


def known(minor: int) -> list[str]:
    """The modelled gates the release knows, by name."""
    return [g.name for g in GATES if g.stage(minor) is not None]


def defaults(minor: int) -> dict[str, bool]:
    return {g.name: s.default for g in GATES if (s := g.stage(minor)) is not None}


def check(name: str, value: bool, minor: int) -> str | None:
    """Why a release refuses ``name=value`` (featuregate SetFromMap), or None."""
    gate = BY_NAME.get(name)
    stage = gate.stage(minor) if gate is not None else None
    if stage is None:
        if gate is not None:
            first = gate.stages[0].since
            when = f"it exists in 1.{first}-1.{gate.last}" if gate.last is not None else f"it exists from 1.{first}"
            return f"unrecognized feature gate: {name} (Kubernetes 1.{minor} has no such gate; {when})"
        return (f"unrecognized feature gate: {name} (not a gate podlife models; modelled on 1.{minor}: "
                f"{', '.join(known(minor)) or 'none'})")
    if stage.locked and value != stage.default:
        return (f"cannot set feature gate {name} to {str(value).lower()}, feature is locked to "
                f"{str(stage.default).lower()}")
    return None


def departure(name: str, value: bool, minor: int) -> str:
    """``name=value`` against the release's default, in words."""
    stage = BY_NAME[name].stage(minor)
    assert stage is not None
    state = "on" if value else "off"
    stage_word = stage.prerelease if stage.prerelease == GA else stage.prerelease.lower()
    return (f"feature gate {name} turned {state}: Kubernetes 1.{minor} has it {stage_word} and "
            f"{'on' if stage.default else 'off'} by default")


def differences(minor: int, cluster: dict[str, bool], kubelet: dict[str, bool]) -> list[str]:
    """The gates set against the release's defaults, in name order: ``Name=true``, ``Name=true (kubelet)`` when
    only the kubelets have it so, ``Name=true (kubelet: false)`` when the kubelets keep the other value."""
    base = defaults(minor)
    out = []
    for name in sorted(set(cluster) | set(kubelet)):
        plane = cluster.get(name, base[name])
        node = kubelet.get(name, plane)
        word = str(plane).lower()
        if plane != base[name]:
            out.append(f"{name}={word}" if node == plane else f"{name}={word} (kubelet: {str(node).lower()})")
        elif node != base[name]:
            out.append(f"{name}={str(node).lower()} (kubelet)")
    return out


def effective(minor: int, overrides: dict[str, bool] | None) -> dict[str, bool]:
    """Every modelled gate the release knows, with the given values over the defaults."""
    out = defaults(minor)
    for name, value in (overrides or {}).items():
        if name in out:
            out[name] = value
    return out


def describe(oldest_minor: int, newest_minor: int) -> list[tuple[str, str, str, str]]:
    """Rows (gate, versions, stage and default, source) for ``podlife versions``, over the modelled minors
    (podlife.versions, which builds on this table, gives them)."""
    rows = []
    for g in GATES:
        end_of_gate = newest_minor if g.last is None else g.last
        for i, s in enumerate(g.stages):
            end = g.stages[i + 1].since - 1 if i + 1 < len(g.stages) else end_of_gate
            start = max(s.since, oldest_minor)
            if end < oldest_minor or start > newest_minor:
                continue
            span = f"1.{start}" if start == end else f"1.{start}-1.{end}"
            value = f"{s.prerelease}, {'on' if s.default else 'off'}{' (locked)' if s.locked else ''}"
            rows.append((g.name, span, value, g.source))
    return rows

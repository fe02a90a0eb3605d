"""Component configuration, named as upstream names it (KubeletConfiguration, kube-controller-manager flags, …).

Each field's metadata says how a scenario value is parsed: ``duration`` (Go duration → seconds), ``int32`` /
``int64`` (the Go field's type bounds it), ``float``, ``bool``, ``positive duration`` / ``positive int32`` (> 0,
as the component's config validation demands), ``signals`` (eviction thresholds map signal → "100Mi" / "10%"),
``durations`` (map signal → duration). Defaults that change between Kubernetes versions are ``None`` here and filled
from ``podlife.versions`` when the cluster is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


def _f(default: Any, kind: str) -> Any:
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata={"kind": kind})
    return field(default=default, metadata={"kind": kind})


@dataclass
class KubeletConfiguration:
    """The kubelet's configuration (KubeletConfiguration) with upstream's defaults."""

    # pkg/kubelet/apis/config/v1beta1/defaults.go
    syncFrequency: float = _f(60.0, "positive duration")
    nodeStatusUpdateFrequency: float = _f(10.0, "positive duration")
    nodeStatusReportFrequency: float = _f(300.0, "positive duration")
    nodeLeaseDurationSeconds: int = _f(40, "positive int32")
    runtimeRequestTimeout: float = _f(120.0, "duration")
    maxPods: int = _f(110, "int32")
    evictionHard: dict[str, str] = _f(
        {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%",
         "imagefs.available": "15%"}, "signals")
    evictionSoft: dict[str, str] = _f({}, "signals")
    evictionSoftGracePeriod: dict[str, float] = _f({}, "durations")
    evictionMaxPodGracePeriod: int = _f(0, "int32")
    evictionPressureTransitionPeriod: float = _f(300.0, "duration")
    evictionMonitoringPeriod: float = _f(10.0, "positive duration")  # housekeeping interval of the eviction manager
    shutdownGracePeriod: float = _f(0.0, "duration")
    shutdownGracePeriodCriticalPods: float = _f(0.0, "duration")
    serializeImagePulls: bool = _f(True, "bool")
    imageMinimumGCAge: float = _f(120.0, "duration")
    # --allowed-unsafe-sysctls: sysctls or patterns (ending in *) allowed beyond the safe ones (pkg/kubelet/sysctl)
    allowedUnsafeSysctls: list[str] = field(default_factory=list, metadata={"kind": "sysctl patterns"})
    featureGates: dict[str, bool] = _f({}, "gates")   # over spec.cluster.featureGates (podlife.features)


@dataclass
class ControllerManagerConfiguration:
    """kube-controller-manager's options with upstream's defaults."""

    # cmd/kube-controller-manager/app/options; nodeMonitorGracePeriod default is per version (40s, 50s from 1.32)
    nodeMonitorGracePeriod: float | None = _f(None, "positive duration")
    nodeMonitorPeriod: float = _f(5.0, "positive duration")
    nodeStartupGracePeriod: float = _f(60.0, "positive duration")
    podEvictionTimeout: float = _f(300.0, "duration")
    nodeEvictionRate: float = _f(0.1, "float")
    secondaryNodeEvictionRate: float = _f(0.01, "float")
    unhealthyZoneThreshold: float = _f(0.55, "float")
    largeClusterSizeThreshold: int = _f(50, "int32")
    terminatedPodGCThreshold: int = _f(12500, "int32")


@dataclass
class ApiServerConfiguration:
    """kube-apiserver's options with upstream's defaults."""

    # plugin/pkg/admission/defaulttolerationseconds
    defaultNotReadyTolerationSeconds: int = _f(300, "int64")
    defaultUnreachableTolerationSeconds: int = _f(300, "int64")
    watchHistorySize: int = _f(1000, "int32")  # events kept for watch resume before 410 Expired


@dataclass
class SchedulerConfiguration:
    """kube-scheduler's configuration with upstream's defaults."""

    # pkg/scheduler/apis/config/v1 defaults
    podInitialBackoffSeconds: int = _f(1, "positive int64")
    podMaxBackoffSeconds: int = _f(10, "int64")
    percentageOfNodesToScore: int = _f(0, "int32")  # 0 = adaptive, as upstream


def field_kinds(cls: type) -> dict[str, str]:
    """Field name → parse kind, for the scenario loader."""
    return {f.name: f.metadata["kind"] for f in fields(cls)}

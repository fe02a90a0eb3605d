"""The shape of a cluster to build: its nodes and its components' configuration (spec.cluster of a scenario,
or the cluster file of ``podlife up``)."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from podlife.config import (
    ApiServerConfiguration,
    ControllerManagerConfiguration,
    KubeletConfiguration,
    SchedulerConfiguration,
)
from podlife.runtime.profiles import PROFILES

RUNTIMES = tuple(PROFILES)   # a node's spec.cluster.nodes[].runtime: the simulated runtime's profiles


@dataclass
class NodeSpec:
    """One node of the cluster: name, zone, labels, capacity and runtime."""

    name: str
    zone: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict[str, Any]] = field(default_factory=list)
    capacity: dict[str, str] = field(
        default_factory=lambda: {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"})
    runtime: str = "containerd"
    podCIDR: str | None = None  # filled by the loader: 10.244.<index>.0/24 when not given (default_pod_cidr)
    # the node's kubelet's version where it differs from the cluster's (an imported cluster mid-upgrade, whose
    # kubelets may be older than the control plane: version skew policy); None: the cluster's
    kubelet_version: str | None = None


_POD_CIDR_BASE = int(ipaddress.IPv4Address("10.244.0.0")) >> 8


def default_pod_cidr(index: int, offset: int, taken: Sequence[ipaddress.IPv4Network | ipaddress.IPv6Network]
                     ) -> tuple[ipaddress.IPv4Network, int] | None:
    """The podCIDR of node ``index`` (0-based) that was given none: the (index + 1 + offset)-th /24 after
    10.244.0.0/24, wrapping inside 10.0.0.0/8, moving on (``offset`` + 1) past any that overlaps ``taken`` (an
    IPv6 network never does).
    Returns it and the offset reached, which the next node starts from; None when no /24 is left."""
    while offset <= 0xFFFF:
        block = 0x0A0000 | ((_POD_CIDR_BASE + index + 1 + offset) & 0xFFFF)
        net = ipaddress.IPv4Network((block << 8, 24))
        if not any(net.overlaps(t) for t in taken):
            return net, offset
        offset += 1
    return None


@dataclass
class ClusterSpec:
    """The cluster a scenario runs on: its nodes and its components' configurations."""

    nodes: list[NodeSpec]
    kubelet: KubeletConfiguration = field(default_factory=KubeletConfiguration)
    controllerManager: ControllerManagerConfiguration = field(default_factory=ControllerManagerConfiguration)
    apiServer: ApiServerConfiguration = field(default_factory=ApiServerConfiguration)
    scheduler: SchedulerConfiguration = field(default_factory=SchedulerConfiguration)
    featureGates: dict[str, bool] = field(default_factory=dict)   # every component's (podlife.features)

"""metrics-server: pod CPU and memory usage for the metrics.k8s.io API, scraped from the kubelets every 15 s
(--metric-resolution, on a grid from the cluster's start). A container's usage is what its node's stats say
(NodeStats.pod_usage_at: its behaviour's ``cpu`` and ``memory``); a pod has a metric once it has been running at a
scrape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from podlife.cluster.contracts import NodeStats

RESOLUTION = 15.0


class MetricsServer:
    def __init__(self, nodes: Callable[[], Iterable[NodeStats]]) -> None:
        """``nodes``: the stats of every node whose kubelet answers a scrape now."""
        self.nodes = nodes

    def last_scrape(self, now: float) -> float:
        return math.floor(now / RESOLUTION + 1e-9) * RESOLUTION

    def pod_usage(self, uid: str, now: float, resource: str) -> int | None:
        """The pod's usage at the last scrape (cpu in millicores, memory working set in milli-bytes, the unit of
        the autoscaler's request sums), or None when it has no metric yet."""
        at = self.last_scrape(now)
        total, seen = 0, False
        for stats in self.nodes():
            used = stats.pod_usage_at(uid, at, resource)
            if used is not None:
                total, seen = total + used, True
        return total if seen else None

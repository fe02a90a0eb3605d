"""metrics-server: pod CPU and memory usage for the metrics.k8s.io API, scraped from the kubelets every 15 s
(--metric-resolution, on a grid from the cluster's start). A container's usage is what its behaviour declares
(``cpu``); a pod has a metric once it has been running at a scrape.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from podlife.runtime.behavior import cpu_at

if TYPE_CHECKING:
    from podlife.cluster import Cluster

RESOLUTION = 15.0


class MetricsServer:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def last_scrape(self, now: float) -> float:
        return math.floor(now / RESOLUTION + 1e-9) * RESOLUTION

    def pod_usage(self, uid: str, now: float, resource: str) -> int | None:
        """The pod's usage at the last scrape (cpu in millicores, memory working set in milli-bytes, the unit of
        the autoscaler's request sums), or None when it has no metric yet."""
        at = self.last_scrape(now)
        total, seen = 0, False
        for kl in self.cluster.kubelets.values():
            if not kl.running:
                continue
            for c in kl.runtime.pod_containers(uid):
                if c.started_at is None or c.started_at > at or (c.finished_at is not None and c.finished_at <= at):
                    continue
                seen = True
                total += cpu_at(c.behavior, at - c.started_at) if resource == "cpu" else (c.behavior.memory or 0) * 1000
        return total if seen else None

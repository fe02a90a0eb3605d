"""Graceful node shutdown: pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go.

When systemd announces a shutdown, the kubelet (holding an inhibitor lock for shutdownGracePeriod) reports
the node not ready, then stops regular pods with at most shutdownGracePeriod - shutdownGracePeriodCriticalPods
and critical pods with at most shutdownGracePeriodCriticalPods, and lets the machine go.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from podlife.api.meta import Obj
from podlife.kubelet.podworkers import KillPodOptions

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

CRITICAL_PRIORITY = 2_000_000_000  # scheduling.SystemCriticalPriority
MESSAGE = "Pod was terminated in response to imminent node shutdown."


def is_critical(pod: Obj) -> bool:
    return (pod["spec"].get("priority") or 0) >= CRITICAL_PRIORITY or pod["spec"].get("priorityClassName") in (
        "system-node-critical", "system-cluster-critical")


class ShutdownManager:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.shutting_down = False

    def enabled(self) -> bool:
        return self.kl.profile.graceful_node_shutdown and self.kl.config.shutdownGracePeriod > 0

    def start(self, power_off: Any) -> None:
        """processShutdownEvent; ``power_off`` is called when the inhibitor lock is released."""
        self.shutting_down = True
        self.kl.health.evaluate()
        self.kl.go(self._run(power_off))

    def _run(self, power_off: Any) -> Generator[simpy.Event, Any, None]:
        kl = self.kl
        cfg = kl.config
        critical_budget = cfg.shutdownGracePeriodCriticalPods
        groups = [(False, cfg.shutdownGracePeriod - critical_budget), (True, critical_budget)]
        pods = [p for _, p in sorted(kl.pod_manager.items())]
        for critical, budget in groups:
            members = [p for p in pods if is_critical(p) == critical]
            if not members:
                continue
            for pod in members:
                grace = min(int(budget), pod["spec"].get("terminationGracePeriodSeconds", 30))
                kl.pod_workers.update_pod(pod, "kill", KillPodOptions(
                    grace_override=grace, reason="Terminated", status_fn=self._status))
            # killPods: the group's pods are waited for, at most for the group's budget
            deadline = kl.kernel.timer(budget)
            yield kl.kernel.all_of([kl.pod_workers.wait_terminated(p["metadata"]["uid"]) for p in members]) | deadline
            kl.kernel.cancel(deadline)
        power_off()

    def _status(self, status: Obj) -> None:
        """The status of a pod stopped for the shutdown: Failed, reason Terminated."""
        status["phase"] = "Failed"
        status["reason"] = "Terminated"
        status["message"] = MESSAGE
        if self.kl.profile.disruption_target_condition:
            conds = [c for c in status.get("conditions") or () if c["type"] != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
                          "message": MESSAGE})
            status["conditions"] = conds

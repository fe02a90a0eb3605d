"""Termination order of native sidecars (1.29+): pkg/kubelet/kuberuntime/kuberuntime_termination_order.go.

Main containers stop first; each sidecar (restartable init container) waits for every main container and
for the sidecar declared after it, so sidecars stop in reverse spec order. Waiting is bounded by the grace
period left to that container.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import simpy

from podlife.api.meta import Obj
from podlife.engine import Kernel


def is_restartable_init(c: Obj) -> bool:
    return c.get("restartPolicy") == "Always"


class TerminationOrdering:
    def __init__(self, kernel: Kernel, pod: Obj, running: list[str]) -> None:
        self.kernel = kernel
        self.terminated: dict[str, simpy.Event] = {}
        self.prereqs: dict[str, list[simpy.Event]] = {}
        mains = []
        for c in pod["spec"].get("containers") or ():
            ev = self.terminated[c["name"]] = kernel.event()
            mains.append(ev)
            if c["name"] not in running:
                ev.succeed()
        previous: str | None = None
        for ic in reversed(pod["spec"].get("initContainers") or []):
            ev = self.terminated[ic["name"]] = kernel.event()
            if ic["name"] not in running:
                ev.succeed()
            if is_restartable_init(ic):
                self.prereqs[ic["name"]] = list(mains)
                if previous is not None:
                    self.prereqs[ic["name"]].append(self.terminated[previous])
                previous = ic["name"]

    def wait_for_turn(self, name: str, grace: int) -> Generator[simpy.Event, Any, float]:
        """Seconds spent waiting (the caller truncates them)."""
        if grace <= 0:
            return 0.0
        start = self.kernel.now
        deadline = self.kernel.timer(grace)
        for ev in self.prereqs.get(name, ()):
            if not ev.triggered:
                yield ev | deadline
                if deadline.triggered and not ev.triggered:
                    break
        self.kernel.cancel(deadline)
        return self.kernel.now - start

    def container_terminated(self, name: str) -> None:
        ev = self.terminated.get(name)
        if ev is not None and not ev.triggered:
            ev.succeed()

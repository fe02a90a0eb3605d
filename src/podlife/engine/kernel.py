"""The discrete-event kernel: a SimPy environment on a virtual clock.

Model code asks the kernel for the time and for randomness; it never reads the wall clock. A live driver
(later) advances the same kernel to the wall clock with ``run(until=...)``.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Callable, Generator
from typing import Any

import simpy

from podlife.engine.gcpolicy import (YOUNG_COLLECTION_THRESHOLD, at_exit, few_collections,  # noqa: F401
                                      one_run_process)
from podlife.engine.sha256 import sha256

Process = Generator[simpy.Event, Any, Any]


class Kernel(simpy.Environment):
    """SimPy environment plus seeded per-component randomness and cheap callbacks."""

    def __init__(self, seed: int = 0, start: float = 0.0, stream: int = 0) -> None:
        """``start``: the clock's first reading (a restarted live cluster goes on from where it stopped);
        ``stream``: which of the seed's sets of generators to draw from (a restart must not draw the UIDs and
        names of the run before it again)."""
        super().__init__(initial_time=start)
        self.seed = seed
        self.stream = stream
        self._rngs: dict[str, random.Random] = {}
        self._cancelled = 0  # cancelled timers still in the queue
        # what the run assumed as it went (podlife.report shows them beside the scenario's assumptions)
        self.notes: dict[str, dict[str, str]] = {}

    # simpy's Environment.now is a Python property read for every trace record, timestamp and timer; the same
    # attribute read through a C getter costs no Python frame
    now = property(operator.attrgetter("_now"), doc="The current simulated time.")

    def note(self, obj: str, text: str) -> None:
        """An assumption the run made, once per object and text, in the order made."""
        self.notes.setdefault(f"{obj}\0{text}", {"object": obj, "container": "", "assumption": text})

    def rng(self, component: str) -> random.Random:
        """A generator of its own per component, so one component's draws never shift another's."""
        r = self._rngs.get(component)
        if r is None:
            name = f"{self.seed}/{component}" if not self.stream else f"{self.seed}/{self.stream}/{component}"
            digest = sha256(name.encode()).digest()
            r = self._rngs[component] = random.Random(int.from_bytes(digest[:8], "big"))
        return r

    def timer(self, delay: float) -> simpy.Timeout:
        """A timeout that can be cancelled, so a deadline nobody waits for any more is not pending work."""
        ev = self.timeout(max(delay, 0.0))
        ev.callbacks.append(self._reap)
        return ev

    def call_later(self, delay: float, fn: Callable[[], Any]) -> simpy.Event:
        """Run ``fn`` after ``delay`` without the cost of a process. The returned event can be cancelled."""
        ev = self.timer(delay)
        ev.callbacks.append(lambda _ev: None if getattr(_ev, "cancelled", False) else fn())
        return ev

    def call_at(self, t: float, fn: Callable[[], Any]) -> simpy.Event:
        return self.call_later(t - self.now, fn)

    def cancel(self, ev: simpy.Event | None) -> None:
        if ev is not None and not ev.processed and not getattr(ev, "cancelled", False):
            ev.cancelled = True  # type: ignore[attr-defined]
            self._cancelled += 1

    def _reap(self, ev: simpy.Event) -> None:
        if getattr(ev, "cancelled", False):
            self._cancelled -= 1

    def idle(self) -> bool:
        """Nothing but cancelled timers is left to happen."""
        return len(self._queue) <= self._cancelled

    def next_live(self) -> float:
        """Time of the next event, skipping cancelled timers at the head of the queue."""
        while not self.idle():
            t = self.peek()
            head = self._queue[0][3]
            if getattr(head, "cancelled", False):
                self.step()
                continue
            return t
        return float("inf")

    def move_to(self, t: float) -> None:
        """Set the clock to ``t`` when nothing is due before it (the live driver between events).
        ``run(until=t)`` would leave its stop event scheduled at ``t`` behind it."""
        if self.peek() < t:
            raise ValueError(f"events are due before {t}")
        self._now = max(self._now, t)

    def spawn(self, gen: Process, name: str = "") -> simpy.Process:
        """Start a goroutine-like process."""
        return self.process(gen)

"""Generic PLEG: pkg/kubelet/pleg/generic.go.

The kubelet relists the runtime every second and turns differences into pod lifecycle events. podlife does
not relist when nothing changed: the runtime marks a pod dirty, and the next relist on the 1-second grid
(aligned to the scenario start) reports it, so events arrive up to a second late, as upstream.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from podlife.runtime.cri import CREATED, EXITED, RUNNING

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

RELIST_PERIOD = 1.0
RELIST_THRESHOLD = 180.0  # relist health: 3 m


class GenericPLEG:
    def __init__(self, kubelet: Kubelet, period: float = RELIST_PERIOD) -> None:
        self.kl = kubelet
        self.period = period
        self.dirty: dict[str, None] = {}
        self.records: dict[str, dict[str, str]] = {}   # pod uid → container id → state
        self._scheduled = False
        self.last_relist = 0.0

    def next_relist_after(self, t: float) -> float:
        """The first relist on the grid strictly after ``t``: the pod cache is fresh from then on."""
        if t == float("-inf"):
            return t
        return math.floor(t / self.period + 1e-9) * self.period + self.period

    def mark_dirty(self, pod_uid: str) -> None:
        self.dirty[pod_uid] = None
        if not self._scheduled:
            self._scheduled = True
            now = self.kl.kernel.now
            tick = math.floor(now / self.period + 1e-9) * self.period + self.period
            self.kl.kernel.call_at(tick, self.relist)

    def relist(self) -> None:
        self._scheduled = False
        self.last_relist = self.kl.kernel.now
        if not self.kl.running:
            return
        uids, self.dirty = list(self.dirty), {}
        for uid in uids:
            old = self.records.get(uid, {})
            new = {c.id: c.state for c in self.kl.runtime.pod_containers(uid)}
            events = []
            for cid, state in new.items():
                was = old.get(cid)
                if was == state:
                    continue
                if state == RUNNING:
                    events.append(("ContainerStarted", cid))
                elif state == EXITED:
                    events.append(("ContainerDied", cid))
                elif state == CREATED and was is None:
                    continue
            for cid in old:
                if cid not in new:
                    events.append(("ContainerRemoved", cid))
            if new:
                self.records[uid] = new
            else:
                self.records.pop(uid, None)
            for etype, cid in events:
                self.kl.handle_pleg_event(uid, etype, cid)

"""Generic PLEG: pkg/kubelet/pleg/generic.go.

The kubelet relists the runtime every second and turns differences into pod lifecycle events. podlife does
not relist when nothing changed: the runtime marks a pod dirty, and the next relist on the 1-second grid
(aligned to the scenario start) reports it, so events arrive up to a second late, as upstream.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from podlife.runtime.cri import CREATED, EXITED, RUNNING, SANDBOX_READY

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

RELIST_PERIOD = 1.0
RELIST_THRESHOLD = 180.0  # relist health: 3 m
# pkg/kubelet/pleg/evented.go: with CRI container events, the generic relist only backs them up
EVENTED_RELIST_PERIOD = 300.0
EVENTED_RELIST_THRESHOLD = 600.0


class GenericPLEG:
    def __init__(self, kubelet: Kubelet, period: float = RELIST_PERIOD) -> None:
        self.kl = kubelet
        self.evented = bool(kubelet.profile.evented_pleg)   # the kubelet's EventedPLEG gate
        self.period = EVENTED_RELIST_PERIOD if self.evented else period
        self.threshold = EVENTED_RELIST_THRESHOLD if self.evented else RELIST_THRESHOLD
        self.dirty: dict[str, None] = {}
        self.records: dict[str, dict[str, str]] = {}   # pod uid → container id → state
        self._scheduled = False
        self.last_relist = 0.0
        self.started_at = kubelet.kernel.now
        self.blocked_since: float | None = None   # the relist that hung (listing blocked in the runtime)

    def next_relist_after(self, t: float) -> float:
        """The first relist on the grid strictly after ``t``: the pod cache is fresh from then on."""
        if t == float("-inf") or self.evented:
            return t  # evented: the cache is updated by each event, never stale
        return math.floor(t / self.period + 1e-9) * self.period + self.period

    def mark_dirty(self, pod_uid: str) -> None:
        self.dirty[pod_uid] = None
        if not self._scheduled:
            self._scheduled = True
            now = self.kl.kernel.now
            if self.evented:
                self.kl.kernel.call_later(0.0, self.relist)  # the runtime's event arrives at once
                return
            tick = math.floor(now / self.period + 1e-9) * self.period + self.period
            self.kl.kernel.call_at(tick, self.relist)

    # ---- health (Healthy) ---------------------------------------------------------------------------

    def runtime_changed(self) -> None:
        """Listing may have started or stopped blocking: relists hang from the next one on."""
        now = self.kl.kernel.now
        blocked = self.kl.runtime.list_blocked()
        if blocked and self.blocked_since is None:
            self.blocked_since = max(self.next_relist_after(now - 1e-9), self.started_at)
        elif not blocked and self.blocked_since is not None:
            self.blocked_since = None
            if self.dirty:
                self._scheduled = False
                self.mark_dirty(next(iter(self.dirty)))

    def last_active(self) -> float | None:
        """When a relist last completed (None: never, since this kubelet started)."""
        if self.blocked_since is None:
            return self.kl.kernel.now
        last = self.blocked_since - self.period
        return last if last >= self.started_at - 1e-9 else None

    def unhealthy_from(self) -> float | None:
        if self.blocked_since is None:
            return None
        last = self.last_active()
        return self.blocked_since if last is None else last + self.threshold

    def healthy(self, now: float) -> str | None:
        """None when healthy, else the reason (relist not seen for over the threshold)."""
        from podlife.kubelet.runtimehealth import go_duration

        if self.blocked_since is None or now < self.blocked_since:
            return None
        last = self.last_active()
        if last is None:
            return self.kl.profile.pleg_never_relisted
        if now - last > self.threshold:
            return (f"pleg was last seen active {go_duration(now - last)} ago; "
                    f"threshold is {go_duration(self.threshold)}")
        return None

    def relist(self) -> None:
        self._scheduled = False
        self.last_relist = self.kl.kernel.now
        if not self.kl.running or self.blocked_since is not None:
            return  # a hung relist: the dirty pods wait for the runtime to answer again
        uids, self.dirty = list(self.dirty), {}
        for uid in uids:
            old = self.records.get(uid, {})
            new = {c.id: c.state for c in self.kl.runtime.pod_containers(uid)}
            # getContainersFromPods: sandboxes are relisted as containers, so a new sandbox is a ContainerStarted
            # event of its own (and a stopped one a ContainerDied)
            new.update((sb.id, RUNNING if sb.state == SANDBOX_READY else EXITED)
                       for sb in self.kl.runtime.pod_sandboxes(uid))
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

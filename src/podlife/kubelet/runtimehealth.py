"""Runtime health and node readiness: pkg/kubelet/runtime.go (runtimeState), kubelet.go (updateRuntimeUp,
syncLoop), pkg/kubelet/nodestatus/setters.go (ReadyCondition), pkg/kubelet/pleg (Healthy).

updateRuntimeUp runs every 5 s; the first time the runtime answers it runs initializeRuntimeDependentModules
once (cadvisor's start inspects every container), and only then records a runtime sync. If that inspect hangs,
no sync is ever recorded. The sync loop skips all pod work while runtimeErrors() is non-empty, logging it every
5 s, and the node's Ready condition carries the errors. podlife computes the sync times while the runtime
answers and evaluates only at the instants where an error can start or end.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.kubelet.nodestatus import PRESSURE_FALSE, set_pressure_condition

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

UPDATE_RUNTIME_UP_PERIOD = 5.0
BASE_RUNTIME_SYNC_THRESHOLD = 30.0   # maxWaitForContainerRuntime
PLEG_RELIST_THRESHOLD = 180.0
SKIP_SLEEP = 5.0                     # syncLoop: time.Sleep(5 s) after "skipping pod synchronization"


def go_duration(seconds: float) -> str:
    """time.Duration.String for durations of a second or more."""
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    sec = f"{s:.9f}".rstrip("0").rstrip(".") + "s"
    if h:
        return f"{int(h)}h{int(m)}m{sec}"
    return f"{int(m)}m{sec}" if m else sec


class RuntimeHealth:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.initialized = False
        self.synced_from: float | None = None     # updateRuntimeUp ticks from here while the runtime answers
        self.frozen_at: float | None = None       # the last sync before the runtime stopped answering
        self.errors: list[str] = []
        self._eval: Any = None
        self._skip_timer: Any = None
        self.deferred: dict[str, tuple[str, Obj, Obj | None]] = {}
        self._post_at: float | None = None

    # ---- updateRuntimeUp --------------------------------------------------------------------------

    def start(self) -> None:
        self.update_runtime_up()

    def update_runtime_up(self) -> None:
        """Runs now and whenever something that blocked it is healed."""
        kl = self.kl
        if not kl.running:
            return
        rt = kl.runtime
        now = kl.kernel.now
        if rt.down:
            if self.synced_from is not None and self.frozen_at is None:
                self.frozen_at = self.last_sync(now)
        elif not self.initialized:
            if not rt.inspect_blocked():
                self.initialized = True  # oneTimeInitializer.Do(initializeRuntimeDependentModules)
                self.synced_from = now
                kl.eviction.start()      # evictionManager.Start, one of the runtime-dependent modules
        elif self.frozen_at is not None:
            self.frozen_at = None
            self.synced_from = now
        self.evaluate()

    def last_sync(self, now: float) -> float | None:
        """lastBaseRuntimeSync as of ``now``."""
        if self.synced_from is None:
            return None
        if self.frozen_at is not None:
            return self.frozen_at
        k = math.floor((now - self.synced_from) / UPDATE_RUNTIME_UP_PERIOD + 1e-9)
        return self.synced_from + k * UPDATE_RUNTIME_UP_PERIOD

    # ---- runtimeErrors ----------------------------------------------------------------------------

    def runtime_errors(self, now: float) -> list[str]:
        errs = []
        last = self.last_sync(now)
        if last is None:
            errs.append(self.kl.profile.runtime_not_synced_message)
        elif last + BASE_RUNTIME_SYNC_THRESHOLD <= now:
            errs.append("container runtime is down")
        pleg = self.kl.pleg.healthy(now)
        if pleg is not None:
            errs.append(f"PLEG is not healthy: {pleg}")
        if self.kl.shutdown.shutting_down:
            errs.append("node is shutting down")  # nodeShutdownManagerErrors, in the Ready condition
        return errs

    def next_change(self, now: float) -> float | None:
        """The next sync-loop iteration (1 s ticker) at which runtime_errors can change by time alone:
        the runtime sync is stale from lastBaseRuntimeSync + 30 s on, PLEG strictly after 3 m."""
        times: list[float] = []
        if self.frozen_at is not None:
            times.append(math.ceil(self.frozen_at + BASE_RUNTIME_SYNC_THRESHOLD - 1e-9))
        t = self.kl.pleg.unhealthy_from()
        if t is not None:
            times.append(math.floor(t + 1e-9) + 1.0)
        future = [x for x in times if x > now + 1e-9]
        return min(future) if future else None

    def evaluate(self) -> None:
        kl = self.kl
        if not kl.running:
            return
        now = kl.kernel.now
        errs = self.runtime_errors(now)
        if bool(errs) != bool(self.errors):
            if errs:
                self._skip()
            else:
                kl.kernel.cancel(self._skip_timer)
                self._skip_timer = None
                for kind, pod, old in self.deferred.values():
                    kl.dispatch(kind, pod, old)
                self.deferred.clear()
            self.schedule_node_status()
        self.errors = errs
        kl.kernel.cancel(self._eval)
        nxt = self.next_change(now)
        self._eval = kl.kernel.call_at(nxt, self.evaluate) if nxt is not None else None

    def _skip(self) -> None:
        """syncLoop: while the runtime is unhealthy nothing is synced; it says so every 5 s."""
        kl = self.kl
        if not kl.running:
            return
        errs = self.runtime_errors(kl.kernel.now)
        if not errs:
            self._skip_timer = None
            return
        kl.log("skipping_pod_sync", None, errors="[" + ", ".join(errs) + "]")
        self._skip_timer = kl.kernel.call_later(SKIP_SLEEP, self._skip)

    @property
    def blocking(self) -> bool:
        return bool(self.errors)

    # ---- the node's Ready condition ---------------------------------------------------------------

    def schedule_node_status(self) -> None:
        """The next node status update (every nodeStatusUpdateFrequency) carries the new Ready condition, and
        the pressure conditions the eviction manager reports (once per update however many changes ask)."""
        kl = self.kl
        at = kl.node_status.status_tick(kl.kernel.now, after=True)
        if self._post_at == at:
            return
        self._post_at = at
        kl.kernel.call_at(at, self.post_ready_condition)

    def post_ready_condition(self) -> None:
        kl = self.kl
        self._post_at = None
        if not kl.running or not kl.can_reach_api():
            return
        node = kl.store.try_get("Node", None, kl.node_name)
        if node is None:
            return
        errs = self.runtime_errors(kl.kernel.now)
        new = clone(node)
        now_ts = kl.trace.timestamp()
        for c in new["status"]["conditions"]:
            if c["type"] in PRESSURE_FALSE:
                set_pressure_condition(kl, c, now_ts)
            if c["type"] != "Ready":
                continue
            status = "False" if errs else "True"
            if errs:
                msg = ",".join(errs) if not kl.profile.structured_logs else (
                    errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]")
                reason = "KubeletNotReady"
            else:
                reason, msg = "KubeletReady", "kubelet is posting ready status"
            if c["status"] != status:
                c["lastTransitionTime"] = now_ts
                kl.events.node_event("Normal", "NodeNotReady" if errs else "NodeReady",
                                     f"Node {kl.node_name} status is now: {'NodeNotReady' if errs else 'NodeReady'}")
            c.update(status=status, reason=reason, message=msg, lastHeartbeatTime=now_ts)
        try:
            kl.store.update(new, by="kubelet", subresource="status")
        except ApiError:
            pass

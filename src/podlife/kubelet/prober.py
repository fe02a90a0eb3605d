"""Probes: pkg/kubelet/prober (prober_manager.go, worker.go, prober.go).

One worker per container and probe type probes every periodSeconds from the pod's first sync, after
initialDelaySeconds from the container's start; liveness and readiness wait for the startup probe. A result
changes only after failureThreshold failures or successThreshold successes in a row. What a probe finds is
the runtime's answer (``probe``): a simulated container answers from its behaviour (readySeconds,
failProbesAfterSeconds) at once, and the runtime says when that answer can next change, so a worker whose
result is settled sleeps until then instead of ticking: a probe that keeps succeeding costs nothing. A real
process is probed for real; its answer comes later, at the instant it arrives, and may change at any time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from podlife.api.meta import Obj
from podlife.kubelet.kuberuntime.container import container_spec
from podlife.runtime.cri import RUNNING, Container

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

SUCCESS, FAILURE, UNKNOWN = "Success", "Failure", "Unknown"
KINDS = (("startup", "startupProbe"), ("liveness", "livenessProbe"), ("readiness", "readinessProbe"))
INITIAL = {"startup": UNKNOWN, "liveness": SUCCESS, "readiness": FAILURE}
TITLE = {"startup": "Startup", "liveness": "Liveness", "readiness": "Readiness"}


@dataclass
class Worker:
    """The probe worker of one probe of one container."""

    uid: str
    container: str
    kind: str
    spec: Obj
    added_at: float
    result: str = ""
    last: str = ""          # the last raw probe outcome
    run: int = 0            # how many times in a row
    container_id: str = ""
    timer: Any = None
    timer_at: float = -1.0
    manual: Any = None      # a pending manual run (readiness only)
    probed_at: float = -1.0
    on_hold: bool = False   # liveness/startup after a failure: wait for the container to restart
    stopped: bool = False
    probing: bool = False   # a probe is under way (its answer has not come yet)

    def __post_init__(self) -> None:
        self.result = INITIAL[self.kind]

    @property
    def period(self) -> float:
        return float(self.spec.get("periodSeconds", 10))


@dataclass
class ProbeManager:
    """The kubelet's probe workers and their results."""

    kl: Kubelet
    workers: dict[tuple[str, str, str], Worker] = field(default_factory=dict)
    # results a kubelet that adopted a running pod carries on with (Kubelet.adopt): (uid, container, kind) ->
    # (container ID, result), taken by the worker AddPod makes
    carried: dict[tuple[str, str, str], tuple[str, str]] = field(default_factory=dict)

    # ---- the kubelet's questions ------------------------------------------------------------------

    def result(self, uid: str, container: str, kind: str) -> str | None:
        """The current result, or None when the container has no such probe."""
        w = self.workers.get((uid, container, kind))
        return w.result if w else None

    def is_ready(self, uid: str, c: Container) -> bool:
        """UpdatePodStatus: readiness counts only once the container has started."""
        return self._holds(uid, c, "startup") and self._holds(uid, c, "readiness")

    def trigger_readiness(self, uid: str, c: Container) -> None:
        """prober_manager.go UpdatePodStatus (1.21+, PR #98376): generating the status of a started, running
        container whose readiness is not Success sends its readiness worker a manual trigger: it probes at
        once, off its ticker, whose phase stays. A probe already made at this instant absorbs the trigger."""
        w = self.workers.get((uid, c.name, "readiness"))
        if (w is None or w.manual is not None or not self.kl.profile.readiness_probe_triggered
                or c.state != RUNNING or not self.is_started(uid, c) or self._holds(uid, c, "readiness")):
            return
        w.manual = self.kl.kernel.call_at(self.kl.kernel.now, lambda: self._manual(w))

    def _manual(self, w: Worker) -> None:
        w.manual = None
        now = self.kl.kernel.now
        if w.probed_at == now or (w.timer is not None and w.timer_at == now) or w.probing:
            return   # (a probe under way gives its answer soon: the trigger adds nothing)
        self._tick(w, manual=True)  # a pending tick stays armed: the ticker keeps running

    def is_started(self, uid: str, c: Container) -> bool:
        return self._holds(uid, c, "startup")

    def _holds(self, uid: str, c: Container, kind: str) -> bool:
        """prober_manager.go UpdatePodStatus: results are per container ID; a container with such a probe
        but no result yet (a new one) is not ready / not started; without the probe it is."""
        if c.state != RUNNING:
            return False
        w = self.workers.get((uid, c.name, kind))
        return w is None or (w.container_id == c.id and w.result == SUCCESS)

    # ---- workers ----------------------------------------------------------------------------------

    def add_pod(self, pod: Obj) -> None:
        """AddPod: a worker per probe; each probes at once and then every period."""
        uid = pod["metadata"]["uid"]
        for field_name in ("initContainers", "containers"):
            for c in pod["spec"].get(field_name) or ():
                if field_name == "initContainers" and c.get("restartPolicy") != "Always":
                    continue
                for kind, key in KINDS:
                    if c.get(key) and (uid, c["name"], kind) not in self.workers:
                        w = Worker(uid, c["name"], kind, c[key], self.kl.kernel.now)
                        carried = self.carried.pop((uid, c["name"], kind), None)
                        if carried is not None:
                            w.container_id, w.result = carried
                        self.workers[(uid, c["name"], kind)] = w
                        self._arm(w, self.kl.kernel.now)

    def remove_pod(self, uid: str) -> None:
        for key in [k for k in self.workers if k[0] == uid]:
            w = self.workers.pop(key)
            w.stopped = True
            self.kl.kernel.cancel(w.timer)
            self.kl.kernel.cancel(w.manual)

    def container_changed(self, uid: str) -> None:
        """A container of the pod started or stopped: settled workers look again at their next tick."""
        for key, w in self.workers.items():
            if key[0] == uid and w.timer is None and not w.probing:
                self._arm(w, self.kl.kernel.now)

    def _arm(self, w: Worker, not_before: float) -> None:
        k = max(0, math.ceil((not_before - w.added_at) / w.period - 1e-9))
        self.kl.kernel.cancel(w.timer)
        w.timer_at = w.added_at + k * w.period
        w.timer = self.kl.kernel.call_at(w.timer_at, lambda: self._tick(w))

    def _arm_next(self, w: Worker) -> None:
        """The ticker's next tick after now (a manual run happens between ticks)."""
        now = self.kl.kernel.now
        self._arm(w, w.added_at + (math.floor((now - w.added_at) / w.period + 1e-9) + 1) * w.period)

    # ---- one probe (worker.doProbe) ---------------------------------------------------------------

    def _tick(self, w: Worker, manual: bool = False) -> None:
        if not manual:
            w.timer = None
        if w.stopped or not self.kl.running:
            return
        kl = self.kl
        now = kl.kernel.now
        pod = kl.pod_manager.get(w.uid)
        c = kl.runtime_manager.latest(w.uid).get(w.container)
        if pod is None or c is None or c.state != RUNNING or not kl.reported_running(w.uid, c):
            w.result = INITIAL[w.kind] if w.kind != "liveness" else w.result
            return  # a container that is not running is not probed; its next start wakes the worker
        if c.id != w.container_id:
            w.container_id, w.run, w.last, w.on_hold = c.id, 0, "", False
            w.result = INITIAL[w.kind]
        if w.on_hold:
            return
        if w.kind != "readiness" and pod["metadata"].get("deletionTimestamp"):
            return  # liveness and startup stop once the pod is being deleted
        if w.kind == "startup" and w.result == SUCCESS:
            return  # a startup probe that succeeded is done
        if w.kind != "startup" and not self.is_started(w.uid, c):
            self._arm_next(w)
            return
        elapsed = now - (c.started_at or now)
        delay = float(w.spec.get("initialDelaySeconds", 0))
        if elapsed < delay:
            self._arm(w, (c.started_at or now) + delay)
            return
        w.probed_at = now
        w.probing = True
        kl.runtime.probe(c, w.spec, container_spec(pod, c.name) or {},
                         (kl.status_manager.get(w.uid) or {}).get("podIP", ""), elapsed,
                         lambda outcome, output: self._probed(w, c, outcome, output))

    def _probed(self, w: Worker, c: Container, outcome: str, output: str) -> None:
        """The probe's answer (worker.doProbe, from the result on)."""
        w.probing = False
        kl = self.kl
        pod = kl.pod_manager.get(w.uid)
        if w.stopped or not kl.running or pod is None:
            return
        if c.state != RUNNING:
            self._arm(w, kl.kernel.now)   # the container stopped while it was probed: look again
            return
        w.run = w.run + 1 if outcome == w.last else 1
        w.last = outcome
        if c.id not in kl.refs:
            # a kubelet that adopted the container after a restart has no reference for events about it
            kl.log("prober_no_ref", pod, **kl.container_ctx(pod, c))
        elif outcome == FAILURE:
            kl.events.container_event(pod, w.container, "Warning", "Unhealthy",
                                      f"{TITLE[w.kind]} probe failed: {output}")
        threshold = int(w.spec.get("failureThreshold" if outcome == FAILURE else "successThreshold",
                                   3 if outcome == FAILURE else 1))
        if w.run >= threshold and w.result != outcome:
            w.result = outcome
            self._result_changed(w, pod, c)
        self._next(w, c, outcome)

    def _next(self, w: Worker, c: Container, outcome: str) -> None:
        """Tick again only while the outcome or the result can still change."""
        now = self.kl.kernel.now
        if w.on_hold:
            return
        if outcome == FAILURE or w.result != outcome or c.id not in self.kl.refs:
            # failures, pending thresholds and "No ref" warnings show at every probe
            self._arm_next(w)
        elif w.kind == "startup" and w.result == SUCCESS:
            return
        else:
            t = self.kl.runtime.probe_answers_change(c, now)
            if t is not None:
                self._arm(w, t) if t > now else self._arm_next(w)   # later, or at any moment: the next tick

    def _result_changed(self, w: Worker, pod: Obj, c: Container) -> None:
        kl = self.kl
        if w.kind in ("liveness", "startup") and w.result == FAILURE:
            w.on_hold = True  # the container is killed and restarted; the new one gets a fresh worker state
            kl.restart_unhealthy(pod, c, w.kind, w.spec)
        else:
            kl.probe_result_changed(pod, c if w.kind == "readiness" else None, w.result == SUCCESS)

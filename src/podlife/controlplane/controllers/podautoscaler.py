"""The HorizontalPodAutoscaler controller: pkg/controller/podautoscaler (horizontal.go, replica_calculator.go).

Every 15 s (--horizontal-pod-autoscaler-sync-period) from its creation (at once from 1.37) each autoscaler
reads its target's scale and the CPU metrics of the target's pods. For a Utilization target the ratio is
(sum of usage / sum of requests) / target; within the 0.1 tolerance nothing changes, else the recommendation is
ceil(ratio x pods with metrics), pods without metrics counting as 100 % of their request when scaling down and 0
when scaling up, and unready pods (not Ready within the 5 min CPU initialisation period) as 0 when scaling up.
The recommendation is stabilised (scale-down: the highest of the last 300 s, scale-up: the lowest of its
window, 0 s by default) and limited by the scaling policies (defaults: up by max(4 pods, 100 %) per 15 s, down
by 100 % per 15 s) and min/maxReplicas; a change is written to the target's scale with SuccessfulRescale.
CPU and memory Resource metrics with Utilization targets are modelled (usage from the behaviours' cpu and memory);
other metrics (AverageValue targets, Pods, Object, External) are left out of the computation.
"""

from __future__ import annotations

import math
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone
from podlife.api.selectors import compiled
from podlife.controlplane.controllers.controller_utils import parse_time
from podlife.controlplane.metrics import MetricsServer
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "horizontal-pod-autoscaler"
SYNC_PERIOD = 15.0
TOLERANCE = 0.1
CPU_INITIALIZATION_PERIOD = 300.0
DOWN_STABILIZATION = 300
_DEFAULT_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
               "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                            {"type": "Percent", "value": 100, "periodSeconds": 15}]}
_DEFAULT_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}

Key = tuple[str, str]


def _milli(q: Any) -> int:
    from podlife.api.quantity import parse_quantity

    return int(round(parse_quantity(str(q)) * 1000))


def utilization_targets(hpa: Obj) -> list[tuple[str, int]]:
    """(resource, averageUtilization) of each Resource metric with a Utilization target (autoscaling/v2), or
    targetCPUUtilizationPercentage (v1; 80 % when unset, as is v2 without metrics)."""
    spec = hpa.get("spec") or {}
    if "targetCPUUtilizationPercentage" in spec or hpa.get("apiVersion") == "autoscaling/v1":
        return [("cpu", int(spec.get("targetCPUUtilizationPercentage") or 80))]
    if not spec.get("metrics"):
        return [("cpu", 80)]   # autoscaling/v2 SetDefaults_HorizontalPodAutoscaler
    out = []
    for m in spec.get("metrics") or ():
        res = m.get("resource") or {}
        target = res.get("target") or {}
        if m.get("type") == "Resource" and res.get("name") in ("cpu", "memory") and \
                target.get("type") == "Utilization":
            out.append((res["name"], int(target.get("averageUtilization", 0))))
    return out


class HorizontalPodAutoscalerController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Any, profile: Profile, metrics: MetricsServer) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.metrics = metrics
        self.events = EventRecorder(store, COMPONENT)
        self.recommendations: dict[Key, list[tuple[float, int]]] = {}
        self.scale_events: dict[Key, list[tuple[float, int]]] = {}   # (time, replicas changed by; + up, - down)
        self._timers: dict[Key, Any] = {}   # autoscaler → its next sync

    def start(self) -> None:
        self.store.watch("HorizontalPodAutoscaler", self._on_hpa)

    def _on_hpa(self, etype: str, obj: Obj, old: Obj | None) -> None:
        """horizontal.go enqueueHPA: every autoscaler is in the work queue with the resync period's fixed
        interval (AddRateLimited), so its first sync comes 15 s after it is created, then every 15 s after each
        sync; from 1.37 (PR #138294) a new autoscaler, or one whose spec changed, is synced at once."""
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        if etype == "DELETED":
            self.kernel.cancel(self._timers.pop(key, None))
            return
        now_too = self.profile.hpa_sync_on_change and (
            etype == "ADDED" or (old is not None and old.get("spec") != obj.get("spec")))
        if now_too:
            self._enqueue(key, 0.0)
        elif etype == "ADDED":
            self._enqueue(key, SYNC_PERIOD)

    def _enqueue(self, key: Key, delay: float) -> None:
        self.kernel.cancel(self._timers.pop(key, None))
        self._timers[key] = self.kernel.call_later(delay, lambda: self._sync(key))

    def _sync(self, key: Key) -> None:
        self._timers.pop(key, None)
        hpa = self.store.try_get("HorizontalPodAutoscaler", key[0], key[1])
        if hpa is None:
            return
        try:
            self.reconcile(hpa)
        except ApiError:
            pass
        self._enqueue(key, SYNC_PERIOD)   # processNextWorkItem: AddRateLimited again

    # ---- reconcileAutoscaler -------------------------------------------------------------------------------

    def reconcile(self, hpa: Obj) -> None:
        md, spec = hpa["metadata"], hpa["spec"]
        key = (md["namespace"], md["name"])
        ref = spec.get("scaleTargetRef") or {}
        target = self.store.try_get(ref.get("kind", ""), md["namespace"], ref.get("name", "")) \
            if ref.get("kind") in ("Deployment", "ReplicaSet", "StatefulSet") else None
        if target is None:
            self.events.event(hpa, "Warning", "FailedGetScale",
                              f'{(ref.get("kind") or "").lower()}s "{ref.get("name", "")}" not found')
            return
        current = int(target["spec"].get("replicas", 1))
        min_r, max_r = int(spec.get("minReplicas", 1)), int(spec["maxReplicas"])
        utilization: dict[str, int] | None = None
        self._limited = ""
        self._stabilized = False
        if current == 0 and min_r != 0:
            desired, reason = 0, ""          # scaling is disabled
        elif current > max_r:
            desired, reason = max_r, "Current number of replicas above Spec.MaxReplicas"
        elif current < min_r:
            desired, reason = min_r, "Current number of replicas below Spec.MinReplicas"
        else:
            # computeReplicasForMetrics: the largest proposal of the metrics that could be computed
            results = [(resource,) + self._resource_replicas(target, current, resource, goal)
                       for resource, goal in utilization_targets(hpa)]
            computed = [(res, n, util) for res, n, util in results if util is not None]
            utilization = {res: util for res, _, util in computed} or None
            best = max(computed, key=lambda r: r[1], default=None)
            proposal = best[1] if best else current
            reason = f"{best[0] if best else 'cpu'} resource utilization (percentage of request) above target"
            # without a metric computeReplicasForMetrics fails: no recommendation, no change
            desired = current if best is None else self._normalize(key, hpa, current, proposal, min_r, max_r)
            if desired < current:
                reason = "All metrics below target"
        if desired != current:
            new = clone(target)
            new["spec"]["replicas"] = desired
            self.store.update(new, by=COMPONENT, subresource="scale")
            self.events.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            self.scale_events.setdefault(key, []).append((self.kernel.now, desired - current))
        self._status(hpa, current, desired, utilization, desired != current)

    def _pods(self, target: Obj) -> list[Obj]:
        sel = compiled(target["spec"].get("selector"))
        return [p for p in self.store.list("Pod", target["metadata"]["namespace"])
                if sel.matches(p["metadata"].get("labels") or {})]

    def _resource_replicas(self, target: Obj, current: int, resource: str, goal: int) -> tuple[int, int | None]:
        """replica_calculator.go GetResourceReplicas for a Utilization target (cpu or memory)."""
        if goal <= 0:
            return current, None
        now = self.kernel.now
        ready: dict[str, int] = {}
        unready, missing = [], []
        requests: dict[str, int] = {}
        for pod in self._pods(target):
            md, status = pod["metadata"], pod.get("status") or {}
            if md.get("deletionTimestamp") or status.get("phase") == "Failed":
                continue   # ignoredPods
            uid = md["uid"]
            requests[uid] = sum(_milli(((c.get("resources") or {}).get("requests") or {}).get(resource, 0))
                                for c in pod["spec"].get("containers") or ())
            usage = self.metrics.pod_usage(uid, now, resource)
            if usage is None:
                missing.append(uid)
                continue
            if resource == "cpu" and not self._ready_for_cpu(pod, now):   # groupPods: only CPU sets unready aside
                unready.append(uid)
                continue
            ready[uid] = usage
        if not ready or any(requests[u] == 0 for u in ready):
            return current, None
        utilization = sum(ready.values()) * 100 // sum(requests[u] for u in ready)
        ratio = utilization / goal
        rebalance = bool(unready) and ratio > 1.0
        if not rebalance and not missing:
            if abs(1.0 - ratio) <= TOLERANCE:
                return current, utilization
            return math.ceil(ratio * len(ready)), utilization
        assumed = dict(ready)   # missing and unready pods at their assumed usage
        for uid in missing:
            assumed[uid] = requests[uid] if ratio < 1.0 else 0
        if rebalance:
            for uid in unready:
                assumed[uid] = 0
        new_util = sum(assumed.values()) * 100 // max(sum(requests[u] for u in assumed), 1)
        new_ratio = new_util / goal
        if abs(1.0 - new_ratio) <= TOLERANCE or (ratio > 1.0 > new_ratio) or (ratio < 1.0 < new_ratio):
            return current, utilization
        proposal = math.ceil(new_ratio * len(assumed))
        if (new_ratio < 1.0 and proposal > current) or (new_ratio > 1.0 and proposal < current):
            return current, utilization
        return proposal, utilization

    def _ready_for_cpu(self, pod: Obj, now: float) -> bool:
        """groupPods: within the CPU initialisation period after its start a pod counts only when Ready."""
        ready = next((c for c in (pod.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)
        start = (pod.get("status") or {}).get("startTime")
        started = parse_time(self.trace, start)   # None: no startTime yet
        if started is None:
            started = now
        if now - started < CPU_INITIALIZATION_PERIOD:
            return ready is not None and ready.get("status") == "True"
        return ready is not None

    def _normalize(self, key: Key, hpa: Obj, current: int, proposal: int, min_r: int, max_r: int) -> int:
        """normalizeDesiredReplicasWithBehaviors: stabilisation windows, then the scaling policies' limits."""
        behavior = (hpa["spec"].get("behavior") or {})
        up = {**_DEFAULT_UP, **(behavior.get("scaleUp") or {})}
        down = {**_DEFAULT_DOWN, **(behavior.get("scaleDown") or {})}
        now = self.kernel.now
        recs = self.recommendations.setdefault(key, [])
        recs.append((now, proposal))
        up_window = int(up.get("stabilizationWindowSeconds") or 0)
        down_window = int(down.get("stabilizationWindowSeconds", DOWN_STABILIZATION)
                          if down.get("stabilizationWindowSeconds") is not None else DOWN_STABILIZATION)
        up_rec = min([r for t, r in recs if now - t <= up_window] or [proposal])
        down_rec = max([r for t, r in recs if now - t <= down_window] or [proposal])
        longest = max(up_window, down_window)
        recs[:] = [(t, r) for t, r in recs if now - t <= longest]
        stabilized = current
        if stabilized < up_rec:
            stabilized = up_rec
        if stabilized > down_rec:
            stabilized = down_rec
        self._stabilized = stabilized > proposal
        # convertDesiredReplicasWithBehaviorRate: the rate limit or the replica bound, whichever is tighter,
        # names why ScalingLimited is True
        events = self.scale_events.setdefault(key, [])
        if stabilized > current:
            limit = max(self._limit(up, current, events, now, up=True), current)
            allowed, why = (limit, "ScaleUpLimit") if max_r > limit else (max_r, "TooManyReplicas")
            if stabilized > allowed:
                self._limited = why
                return allowed
        elif stabilized < current:
            limit = min(self._limit(down, current, events, now, up=False), current)
            allowed, why = (limit, "ScaleDownLimit") if min_r < limit else (min_r, "TooFewReplicas")
            if stabilized < allowed:
                self._limited = why
                return allowed
        return stabilized

    @staticmethod
    def _limit(rules: dict, current: int, events: list[tuple[float, int]], now: float, up: bool) -> int:
        """calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors."""
        select = rules.get("selectPolicy", "Max")
        if select == "Disabled":
            return current
        limits = []
        for pol in rules.get("policies") or ():
            period = int(pol.get("periodSeconds", 15))
            changed = sum(d for t, d in events if now - t < period and (d > 0) == up)
            start = current - changed
            value = int(pol.get("value", 0))
            if pol.get("type") == "Pods":
                limits.append(start + value if up else start - value)
            else:
                limits.append(math.ceil(start * (1 + value / 100)) if up else math.ceil(start * (1 - value / 100)))
        if not limits:
            return current
        pick_max = (select == "Max") == up
        return max(limits) if pick_max else min(limits)

    def _status(self, hpa: Obj, current: int, desired: int, utilization: dict[str, int] | None,
                rescaled: bool) -> None:
        new = clone(hpa)
        status = new.setdefault("status", {})
        status["currentReplicas"] = current
        status["desiredReplicas"] = desired
        if rescaled:
            status["lastScaleTime"] = self.trace.timestamp()
        if utilization is not None:
            status["currentMetrics"] = [{"type": "Resource", "resource": {
                "name": name, "current": {"averageUtilization": value}}} for name, value in utilization.items()]
        # horizontal.go setCondition: AbleToScale, ScalingActive, ScalingLimited
        if rescaled:
            able = ("SucceededRescale", f"the HPA controller was able to update the target scale to {desired}")
        elif self._stabilized:
            able = ("ScaleDownStabilized", "recent recommendations were higher than current one, applying the "
                                           "highest recent recommendation")
        else:
            able = ("ReadyForNewScale", "recommended size matches current size")
        active = ("True", "ValidMetricFound", "the HPA was able to successfully calculate a replica count from cpu "
                                              "resource utilization (percentage of request)") \
            if utilization is not None else ("False", "FailedGetResourceMetric",
                                             "the HPA was unable to compute the replica count: no metrics returned "
                                             "from resource metrics API")
        limited = {"TooManyReplicas": ("True", "TooManyReplicas",
                                       "the desired replica count is more than the maximum replica count"),
                   "TooFewReplicas": ("True", "TooFewReplicas",
                                      "the desired replica count is less than the minimum replica count"),
                   "ScaleUpLimit": ("True", "ScaleUpLimit",
                                    "the desired replica count is increasing faster than the maximum scale rate"),
                   "ScaleDownLimit": ("True", "ScaleDownLimit",
                                      "the desired replica count is decreasing faster than the maximum scale rate"),
                   }.get(self._limited, ("False", "DesiredWithinRange", "the desired count is within the acceptable "
                                                                        "range"))
        old = {c["type"]: c for c in status.get("conditions") or ()}
        conds = []
        for ctype, (cstatus, creason, cmessage) in (("AbleToScale", ("True",) + able), ("ScalingActive", active),
                                                   ("ScalingLimited", limited)):
            prev = old.get(ctype)
            since = prev["lastTransitionTime"] if prev and prev.get("status") == cstatus else self.trace.timestamp()
            conds.append({"type": ctype, "status": cstatus, "lastTransitionTime": since, "reason": creason,
                          "message": cmessage})
        status["conditions"] = conds
        if status != (hpa.get("status") or {}):
            try:
                self.store.update(new, by=COMPONENT, subresource="status", quiet=True)
            except ApiError:
                pass

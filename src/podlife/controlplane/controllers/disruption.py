"""The disruption controller: pkg/controller/disruption/disruption.go (trySync, getExpectedPodCount,
countHealthyPods, buildDisruptedPodMap, updatePdbStatus).

For each PodDisruptionBudget: the pods its selector matches; expectedPods and desiredHealthy from minAvailable
(an integer: the pods found; a percentage: of the controllers' scale, rounded up) or maxUnavailable (always of
the controllers' scale); currentHealthy counts Ready pods that are not being deleted and not in disruptedPods;
disruptionsAllowed = max(currentHealthy - desiredHealthy, 0). disruptedPods entries (written by evictions) are
dropped once the pod is deleted or after the 2 min DeletionTimeout. The DisruptionAllowed condition says
SufficientPods or InsufficientPods. Syncs follow pod and budget changes at once.
"""

from __future__ import annotations

import math
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone, get_condition
from podlife.api.selectors import compiled
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import WorkQueue, parse_time
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "disruption-controller"
DELETION_TIMEOUT = 120.0

Key = tuple[str, str]


def _int_or_percent(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1])
        scaled = total * pct / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    return int(value)


class DisruptionController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.queue = WorkQueue(kernel, self.sync, sync=True)

    def start(self) -> None:
        self.store.watch("PodDisruptionBudget", self._on_budget)
        self.store.watch("Pod", self._on_pod)

    def _on_budget(self, type_: str, pdb: Obj, old: Obj | None) -> None:
        if type_ != DELETED:
            self.queue.add((pdb["metadata"]["namespace"], pdb["metadata"]["name"]))

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        labels = pod["metadata"].get("labels") or {}
        for pdb in self.store.list("PodDisruptionBudget", pod["metadata"]["namespace"]):
            sel = (pdb.get("spec") or {}).get("selector")
            try:
                if sel and compiled(sel).matches(labels):
                    self.queue.add((pdb["metadata"]["namespace"], pdb["metadata"]["name"]))
            except ValueError:
                continue

    # ---- trySync ---------------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        pdb = self.store.try_get("PodDisruptionBudget", *key)
        if pdb is None:
            return
        spec = pdb.get("spec") or {}
        try:
            sel = compiled(spec.get("selector")) if spec.get("selector") else None
        except ValueError:
            sel = None
        pods = [p for p in self.store.list("Pod", key[0])
                if sel is not None and sel.matches(p["metadata"].get("labels") or {})]
        expected, desired = self._expected(pdb, pods)
        now = self.kernel.now
        disrupted, recheck = self._disrupted(pdb, pods, now)
        healthy = sum(1 for p in pods if not p["metadata"].get("deletionTimestamp")
                      and p["metadata"]["name"] not in disrupted and self._ready(p))
        allowed = max(healthy - desired, 0) if expected > 0 else 0
        self._update_status(pdb, healthy, desired, expected, allowed, disrupted)
        if recheck is not None:
            self.queue.add_after(key, recheck)

    @staticmethod
    def _ready(pod: Obj) -> bool:
        c = get_condition(pod, "Ready")
        return c is not None and c.get("status") == "True"

    def _expected(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int]:
        """getExpectedPodCount: (expectedCount, desiredHealthy); with neither field both stay 0 (no disruption
        allowed), except that policy/v1beta1 defaults minAvailable to 1."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected = self._scale(pods)
            unavailable = _int_or_percent(spec["maxUnavailable"], expected, round_up=True)
            return expected, max(expected - unavailable, 0)
        min_available = spec.get("minAvailable")
        if min_available is None:
            if pdb.get("apiVersion") != "policy/v1beta1":
                return 0, 0
            min_available = 1
        if isinstance(min_available, str) and min_available.endswith("%"):
            expected = self._scale(pods)
            return expected, _int_or_percent(min_available, expected, round_up=True)
        return len(pods), int(min_available)

    def _scale(self, pods: list[Obj]) -> int:
        """getExpectedScale: the sum of the replicas of each distinct controller of the pods (Deployments through
        their ReplicaSets); a pod without a controller makes the budget unusable (0 here)."""
        seen: dict[tuple[str, str], int] = {}
        for pod in pods:
            ref = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)
            if ref is None:
                return 0
            ns = pod["metadata"]["namespace"]
            owner = self.store.try_get(ref.get("kind", ""), ns, ref.get("name", "")) \
                if ref.get("kind") in ("ReplicaSet", "StatefulSet", "ReplicationController", "Job") else None
            if owner is None:
                continue
            if ref["kind"] == "ReplicaSet":
                dep = next((r for r in owner["metadata"].get("ownerReferences") or ()
                            if r.get("controller") and r.get("kind") == "Deployment"), None)
                if dep is not None:
                    d = self.store.try_get("Deployment", ns, dep.get("name", ""))
                    if d is not None:
                        seen[("Deployment", d["metadata"]["uid"])] = int(d["spec"].get("replicas", 1))
                        continue
            seen[(ref["kind"], owner["metadata"]["uid"])] = int((owner.get("spec") or {}).get("replicas", 1))
        return sum(seen.values())

    def _disrupted(self, pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None]:
        """buildDisruptedPodMap: entries stay while the pod exists undeleted and the eviction is recent."""
        by_name = {p["metadata"]["name"]: p for p in pods}
        out: dict[str, str] = {}
        recheck = None
        for name, ts in ((pdb.get("status") or {}).get("disruptedPods") or {}).items():
            pod = by_name.get(name)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            since = now - (parse_time(self.trace, ts) or 0.0)
            if since >= DELETION_TIMEOUT:
                continue
            out[name] = ts
            left = DELETION_TIMEOUT - since
            recheck = left if recheck is None else min(recheck, left)
        return out, recheck

    def _update_status(self, pdb: Obj, healthy: int, desired: int, expected: int, allowed: int,
                       disrupted: dict[str, str]) -> None:
        new = clone(pdb)
        st = new.setdefault("status", {})
        old = clone(st)
        st.update(currentHealthy=healthy, desiredHealthy=desired, expectedPods=expected, disruptionsAllowed=allowed,
                  observedGeneration=pdb["metadata"].get("generation", 1))
        if disrupted:
            st["disruptedPods"] = disrupted
        else:
            st.pop("disruptedPods", None)
        if self.profile.pdb_condition:
            status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
            prev = next((c for c in st.get("conditions") or () if c.get("type") == "DisruptionAllowed"), None)
            since = prev["lastTransitionTime"] if prev and prev.get("status") == status else self.trace.timestamp()
            st["conditions"] = [{"type": "DisruptionAllowed", "status": status, "reason": reason, "message": "",
                                 "observedGeneration": pdb["metadata"].get("generation", 1),
                                 "lastTransitionTime": since}]
        if st == old:
            return
        try:
            self.store.update(new, by=COMPONENT, subresource="status")
        except ApiError:
            self.queue.add_rate_limited((pdb["metadata"]["namespace"], pdb["metadata"]["name"]))

"""The disruption controller: pkg/controller/disruption/disruption.go (trySync, getExpectedPodCount,
countHealthyPods, buildDisruptedPodMap, updatePdbStatus).

For each PodDisruptionBudget: the pods its selector matches; expectedPods and desiredHealthy from minAvailable
(an integer: the pods found; a percentage: of the controllers' scale, rounded up) or maxUnavailable (always of
the controllers' scale); currentHealthy counts Ready pods that are not being deleted and not in disruptedPods;
disruptionsAllowed = max(currentHealthy - desiredHealthy, 0). disruptedPods entries (written by evictions) are
dropped once the pod is deleted or strictly after the 2 min DeletionTimeout (NotDeleted on the pod). The
DisruptionAllowed condition says SufficientPods or InsufficientPods. A sync that fails (a pod whose controller
has no scale subresource, or, before 1.22, no controller at all) sets disruptionsAllowed 0 and the condition
False with reason SyncFailed (failSafe). Syncs follow pod and budget changes at once.
"""

from __future__ import annotations

import math
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, get_condition, owner_of, plural
from podlife.api.selectors import compiled
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import WorkQueue, parse_time
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "disruption-controller"
DELETION_TIMEOUT = 120.0
# enqueuePdbForRecheck's timer fires at an entry's expectedDeletion; the sync it starts reads a clock that has
# moved on (time.Before is then true). podlife's clock does not move by itself: the recheck runs this much later
RECHECK_LAG = 0.001
# the owners the finders know (disruption.go finders); their scale is spec.replicas
SCALED_KINDS = ("ReplicationController", "ReplicaSet", "StatefulSet", "Deployment")

Key = tuple[str, str]


def _int_or_percent(value: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, str) and value.endswith("%"):
        pct = int(value[:-1])
        scaled = total * pct / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    return int(value)


def _match_labels(pdb: Obj) -> dict[str, str]:
    ml = ((pdb.get("spec") or {}).get("selector") or {}).get("matchLabels")
    return {str(k): str(v) for k, v in ml.items()} if isinstance(ml, dict) else {}


class _LabelIndex:
    """Objects of each namespace by the (key, value) pairs of their labels (a budget: of its matchLabels):
    which objects a selector can match, without reading every object of the namespace."""

    def __init__(self) -> None:
        self._by_pair: dict[tuple[str, str, str], dict[str, None]] = {}
        self._pairs: dict[tuple[str, str], dict[str, str]] = {}      # (namespace, name) -> its labels
        self._bare: dict[str, dict[str, None]] = {}                  # namespace -> names with no labels

    def put(self, obj: Obj, labels: dict[str, str]) -> None:
        md = obj["metadata"]
        ns, name = md.get("namespace") or "", md["name"]
        held = self._pairs.get((ns, name))
        if held is labels or held == labels:   # (revisions share the labels a write left alone)
            return
        self.drop(obj)
        self._pairs[(ns, name)] = labels   # stored objects are never changed in place
        if not labels:
            self._bare.setdefault(ns, {})[name] = None
        for k, v in labels.items():
            self._by_pair.setdefault((ns, k, v), {})[name] = None

    def drop(self, obj: Obj) -> None:
        md = obj["metadata"]
        ns, name = md.get("namespace") or "", md["name"]
        labels = self._pairs.pop((ns, name), None)
        if labels is None:
            return
        if not labels:
            self._bare.get(ns, {}).pop(name, None)
        for k, v in labels.items():
            held = self._by_pair.get((ns, k, v))
            if held is not None:
                held.pop(name, None)
                if not held:
                    del self._by_pair[(ns, k, v)]

    def holding(self, ns: str, labels: dict[str, str]) -> list[str]:
        """Budgets whose matchLabels are all among ``labels`` could match, and those without matchLabels: the
        names, sorted (the order a list gives)."""
        out: set[str] = set(self._bare.get(ns, ()))
        for k, v in labels.items():
            out.update(self._by_pair.get((ns, k, str(v)), ()))
        return sorted(out)

    def held_by(self, ns: str, match_labels: Any) -> list[str] | None:
        """Pods that hold every matchLabels pair, sorted by name; None without matchLabels (list them all)."""
        if not isinstance(match_labels, dict) or not match_labels:
            return None
        sets = [self._by_pair.get((ns, str(k), str(v)), {}) for k, v in match_labels.items()]
        smallest = min(sets, key=len)
        return sorted(n for n in smallest if all(n in other for other in sets))


class SyncFailed(Exception):
    """trySync's error: the sync ends in failSafe."""


class DisruptionController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.queue = WorkQueue(kernel, self.sync, sync=True)
        self.events = EventRecorder(store, COMPONENT)

    def start(self) -> None:
        # the lookups upstream's listers make by selector, indexed by label so that a large cluster does not
        # match every pod against every budget: pods by their labels (kept by this controller's pod watch, so
        # current whenever no write waits to be delivered), budgets by the pairs of their matchLabels (read
        # again from the store whenever a budget was written)
        self._pods = _LabelIndex()
        self._budgets: dict[str, _LabelIndex] = {}
        self._budget_writes = -1
        for pod in self.store.list("Pod"):
            self._pods.put(pod, pod["metadata"].get("labels") or {})
        self.store.watch("PodDisruptionBudget", self._on_budget)
        self.store.watch("Pod", self._on_pod)

    def _on_budget(self, type_: str, pdb: Obj, old: Obj | None) -> None:
        if type_ != DELETED:
            self.queue.add((pdb["metadata"]["namespace"], pdb["metadata"]["name"]))

    def _budgets_in(self, ns: str) -> _LabelIndex:
        writes = self.store.writes["PodDisruptionBudget"]
        if writes != self._budget_writes:
            self._budgets.clear()
            self._budget_writes = writes
        index = self._budgets.get(ns)
        if index is None:
            index = self._budgets[ns] = _LabelIndex()
            for pdb in self.store.list("PodDisruptionBudget", ns):
                index.put(pdb, _match_labels(pdb))
        return index

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        labels = pod["metadata"].get("labels") or {}
        self._pods.drop(pod) if type_ == DELETED else self._pods.put(pod, labels)
        if not self.store.count("PodDisruptionBudget"):
            return
        ns = pod["metadata"]["namespace"]
        # the budgets whose matchLabels the pod's labels hold, and those without matchLabels: in name order
        for name in self._budgets_in(ns).holding(ns, labels):
            pdb = self.store.try_get("PodDisruptionBudget", ns, name)
            sel = (pdb.get("spec") or {}).get("selector") if pdb is not None else None
            try:
                if sel and compiled(sel).matches(labels):
                    self.queue.add((ns, name))
            except ValueError:
                continue

    # ---- trySync ---------------------------------------------------------------------------------------------

    def sync(self, key: Key) -> None:
        pdb = self.store.try_get("PodDisruptionBudget", *key)
        if pdb is None:
            return
        try:
            self._try_sync(key, pdb)
        except SyncFailed as e:
            self._fail_safe(pdb, str(e))

    def _try_sync(self, key: Key, pdb: Obj) -> None:
        """trySync."""
        spec = pdb.get("spec") or {}
        try:
            sel = compiled(spec.get("selector")) if spec.get("selector") else None
        except ValueError:
            sel = None
        names = self._pods.held_by(key[0], (spec.get("selector") or {}).get("matchLabels")) \
            if sel is not None and not self.store.delivering() else None
        listed = self.store.list("Pod", key[0]) if names is None else \
            [p for p in (self.store.try_get("Pod", key[0], n) for n in names) if p is not None]
        pods = [p for p in listed if sel is not None and sel.matches(p["metadata"].get("labels") or {})]
        if not pods:
            self.events.event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = self._expected(pdb, pods)
        except SyncFailed as e:
            self.events.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                              f"Failed to calculate the number of expected pods: {e}")
            raise
        if unmanaged and self.profile.pdb_unmanaged_pods == "event":
            self.events.event(pdb, "Warning", "UnmanagedPods",
                              f"Pods selected by this PodDisruptionBudget (selector: {go_selector(spec['selector'])}) "
                              "were found to be unmanaged. As a result, the status of the PDB cannot be calculated "
                              "correctly, which may result in undefined behavior. To account for these pods please "
                              'set ".spec.minAvailable" field of the PDB to an integer value.')
        now = self.kernel.now
        disrupted, recheck = self._disrupted(pdb, pods, now)
        # countHealthyPods: a disrupted pod stops counting once DeletionTimeout has passed (time.After), so at
        # exactly 120 s it counts while buildDisruptedPodMap still keeps its entry (time.Before)
        healthy = sum(1 for p in pods if not p["metadata"].get("deletionTimestamp")
                      and not (p["metadata"]["name"] in disrupted
                               and (parse_time(self.trace, disrupted[p["metadata"]["name"]]) or 0.0)
                               + DELETION_TIMEOUT > now)
                      and self._ready(p))
        allowed = max(healthy - desired, 0) if expected > 0 else 0
        self._update_status(pdb, healthy, desired, expected, allowed, disrupted)
        if recheck is not None:
            self.queue.add_after(key, recheck + RECHECK_LAG)

    @staticmethod
    def _ready(pod: Obj) -> bool:
        c = get_condition(pod, "Ready")
        return c is not None and c.get("status") == "True"

    def _expected(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """getExpectedPodCount: (expectedCount, desiredHealthy, unmanaged pods); with neither field both stay 0
        (no disruption allowed), except that policy/v1beta1 defaults minAvailable to 1."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self._scale(pdb, pods)
            unavailable = _int_or_percent(spec["maxUnavailable"], expected, round_up=True)
            return expected, max(expected - unavailable, 0), unmanaged
        min_available = spec.get("minAvailable")
        if min_available is None:
            if pdb.get("apiVersion") != "policy/v1beta1":
                return 0, 0, []
            min_available = 1
        if isinstance(min_available, str) and min_available.endswith("%"):
            expected, unmanaged = self._scale(pdb, pods)
            return expected, _int_or_percent(min_available, expected, round_up=True), unmanaged
        return len(pods), int(min_available), []

    def _scale(self, pdb: Obj, pods: list[Obj]) -> tuple[int, list[str]]:
        """getExpectedScale: the sum of the replicas of each distinct controller of the pods (Deployments through
        their ReplicaSets). A pod without a controller is unmanaged (left out from 1.22; before, the sync
        fails); a controller the finders do not know fails the sync: getScaleController finds no scale
        subresource on it, or no object for a kind that has one."""
        seen: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            name = pod["metadata"]["name"]
            ref = owner_of(pod)
            if ref is None:
                if self.profile.pdb_unmanaged_pods == "error":
                    message = f'found no controller ref for pod "{name}"'
                    self.events.event(pdb, "Warning", "NoControllerRef", message)
                    raise SyncFailed(message)
                unmanaged.append(name)
                continue
            found = self._controller_scale(ref, pod["metadata"]["namespace"])
            if found is None:
                raise SyncFailed(f'found no controllers for pod "{name}"')
            seen[found[0]] = found[1]
        return sum(seen.values()), unmanaged

    def _controller_scale(self, ref: Obj, ns: str) -> tuple[str, int] | None:
        """The finders (getPodReplicationController, getPodDeployment, getPodReplicaSet, getPodStatefulSet,
        getScaleController): (uid, replicas) of the pod's scalable controller, None if it is gone."""
        kind = ref.get("kind", "")
        group = (ref.get("apiVersion") or "").rpartition("/")[0]
        if kind not in SCALED_KINDS:
            resource = plural(kind) + (f".{group}" if group else "")
            raise SyncFailed(f"{resource} does not implement the scale subresource")
        owner = self.store.try_get(kind, ns, ref.get("name", ""))
        if owner is None or owner["metadata"]["uid"] != ref.get("uid", owner["metadata"]["uid"]):
            return None
        if kind == "ReplicaSet":
            dep_ref = next((r for r in owner["metadata"].get("ownerReferences") or ()
                            if r.get("controller") and r.get("kind") == "Deployment"), None)
            dep = self.store.try_get("Deployment", ns, dep_ref.get("name", "")) if dep_ref else None
            if dep is not None and dep_ref is not None and \
                    dep["metadata"]["uid"] == dep_ref.get("uid", dep["metadata"]["uid"]):
                return dep["metadata"]["uid"], int((dep.get("spec") or {}).get("replicas", 1))
            # the Deployment is gone: getScaleController still reads the ReplicaSet's own scale
        return owner["metadata"]["uid"], int((owner.get("spec") or {}).get("replicas", 1))

    def _disrupted(self, pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None]:
        """buildDisruptedPodMap: an entry stays while its pod exists undeleted and its eviction is not older than
        DeletionTimeout (kept at exactly 120 s: expectedDeletion.Before(now) is false); one that has timed out
        goes with a NotDeleted event on the pod."""
        by_name = {p["metadata"]["name"]: p for p in pods}
        out: dict[str, str] = {}
        recheck = None
        for name, ts in ((pdb.get("status") or {}).get("disruptedPods") or {}).items():
            pod = by_name.get(name)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                continue
            left = (parse_time(self.trace, ts) or 0.0) + DELETION_TIMEOUT - now
            if left < 0:
                # upstream's message names the budget's namespace twice (pdb.Namespace, pdb.Namespace)
                ns = pdb["metadata"]["namespace"]
                self.events.event(pod, "Warning", "NotDeleted",
                                  f"Pod was expected by PDB {ns}/{ns} to be deleted but it wasn't")
                continue
            out[name] = ts
            recheck = left if recheck is None else min(recheck, left)
        return out, recheck

    def _fail_safe(self, pdb: Obj, message: str) -> None:
        """failSafe: disruptionsAllowed 0 and (from 1.21) DisruptionAllowed False, reason SyncFailed; the rest of
        the status is left as it was (observedGeneration too)."""
        new = clone(pdb)
        st = new.setdefault("status", {})
        st["disruptionsAllowed"] = 0
        if self.profile.pdb_condition:
            conds = st.setdefault("conditions", [])
            prev, cond = self._allowed(st, "False", "SyncFailed", message, st.get("observedGeneration", 0))
            # meta.SetStatusCondition: replaced in place, or appended
            st["conditions"] = [cond if c is prev else c for c in conds] if prev else conds + [cond]
        self._write(pdb, new)

    def _update_status(self, pdb: Obj, healthy: int, desired: int, expected: int, allowed: int,
                       disrupted: dict[str, str]) -> None:
        new = clone(pdb)
        st = new.setdefault("status", {})
        st.update(currentHealthy=healthy, desiredHealthy=desired, expectedPods=expected, disruptionsAllowed=allowed,
                  observedGeneration=pdb["metadata"].get("generation", 1))
        if disrupted:
            st["disruptedPods"] = disrupted
        else:
            st.pop("disruptedPods", None)
        if self.profile.pdb_condition:
            status, reason = ("True", "SufficientPods") if allowed > 0 else ("False", "InsufficientPods")
            st["conditions"] = [self._allowed(st, status, reason, "", pdb["metadata"].get("generation", 1))[1]]
        self._write(pdb, new)

    def _allowed(self, st: Obj, status: str, reason: str, message: str, generation: int) -> tuple[Obj | None, Obj]:
        """The DisruptionAllowed condition to write (its lastTransitionTime kept while its status stays) and the
        one it replaces, if any."""
        prev = next((c for c in st.get("conditions") or () if c.get("type") == "DisruptionAllowed"), None)
        since = prev["lastTransitionTime"] if prev and prev.get("status") == status else self.trace.timestamp()
        return prev, {"type": "DisruptionAllowed", "status": status, "reason": reason, "message": message,
                      "observedGeneration": generation, "lastTransitionTime": since}

    def _write(self, pdb: Obj, new: Obj) -> None:
        """The status update, when it changes anything; a failed one is retried rate-limited."""
        if new == pdb:
            return
        try:
            self.store.update(new, by=COMPONENT, subresource="status")
        except ApiError:
            self.queue.add_rate_limited((pdb["metadata"]["namespace"], pdb["metadata"]["name"]))


def go_selector(sel: Obj) -> str:
    """%v of a *metav1.LabelSelector: its generated String() (labels sorted by key)."""
    labels = "".join(f"{k}: {v}," for k, v in sorted((sel.get("matchLabels") or {}).items()))
    exprs = "".join(f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
                    f"Values:[{' '.join(e.get('values') or ())}],}},"
                    for e in sel.get("matchExpressions") or ())
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")

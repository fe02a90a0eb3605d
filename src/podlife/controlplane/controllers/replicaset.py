"""ReplicaSet controller: pkg/controller/replicaset/replica_set.go, with the helpers it shares with the other
workload controllers from pkg/controller/controller_utils.go (ActivePodsWithRanks, FilterActivePods,
ControllerExpectations, slow-start pod creation) and client-go's workqueue.

The controller talks to the rest only through the store: it watches ReplicaSets and Pods (its informers),
keeps indexes of pods by controller UID and of orphan pods by namespace (instead of listing every pod of the
namespace on each sync, as upstream's lister does), and writes pods, ReplicaSet status and Events.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import orjson

from podlife.api import selectors
from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, kept, owner_of
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    create_pod,
    Expectations,
    Key,
    WorkQueue,
    claim_pods,
    controller_ref,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    label_selector,
    parse_time,
    pod_condition,
    pod_from_template,
    pod_key,
    resolve_controller_ref,
    shared_pod_index,
    slow_start_batch,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.controller_utils import object_skey as _skey
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "replicaset-controller"
BURST_REPLICAS = 500                   # replica_set.go BurstReplicas
SLOW_START_INITIAL_BATCH_SIZE = 1      # controller_utils.go SlowStartInitialBatchSize
STATUS_UPDATE_RETRIES = 1              # replica_set.go statusUpdateRetries
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"


# ---- controller.ActivePodsWithRanks (controller_utils.go) -------------------------------------------------


def _max_restarts(pod: Obj) -> int:
    return max((c.get("restartCount") or 0 for c in (pod.get("status") or {}).get("containerStatuses") or ()),
               default=0)


def _deletion_cost(pod: Obj) -> int:
    """helper.GetDeletionCostFromPodAnnotations: an int32, 0 when unset or invalid."""
    v = (pod["metadata"].get("annotations") or {}).get(POD_DELETION_COST)
    if v is None:
        return 0
    try:
        n = int(v)
    except ValueError:
        return 0
    return n if -2**31 <= n < 2**31 and str(v).strip() == str(v) else 0


_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}  # podPhaseToOrdinal; missing phases are 0


def _after_or_zero(t1: float | None, t2: float | None) -> bool:
    """afterOrZero: a zero time sorts as after any other time."""
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _log_rank(t: float, now: float) -> int:
    d = round((now - t) * 1e9)  # time.Duration: nanoseconds
    return int(math.log2(d)) if d > 0 else -1


class ActivePodsRanking:
    """controller.ActivePodsWithRanks.Less: which pods a ReplicaSet prefers to delete, first to last.

    1. unassigned < assigned; 2. Pending < Unknown < Running; 3. not ready < ready; 4. lower
    pod-deletion-cost (1.22+); 5. more active related pods on the same node (doubled up) first; 6. both ready:
    more recently ready first; 7. more restarts first; 8. newer first. With LogarithmicScaleDown (1.22+)
    6 and 8 compare log2 of the age in nanoseconds, and equal buckets are ordered by UID.
    """

    def __init__(self, trace: Trace, profile: Profile, now: float, ranks: dict[str, int]) -> None:
        self.trace = trace
        self.cost = bool(profile.pod_deletion_cost)
        self.log_scale = bool(profile.logarithmic_scale_down)
        self.now = now
        self.ranks = ranks  # pod uid -> number of active related pods on its node

    def less(self, a: Obj, b: Obj) -> bool:
        na, nb = a["spec"].get("nodeName") or "", b["spec"].get("nodeName") or ""
        if na != nb and (not na or not nb):
            return not na
        pa = _PHASE_ORDINAL.get((a.get("status") or {}).get("phase") or "", 0)
        pb = _PHASE_ORDINAL.get((b.get("status") or {}).get("phase") or "", 0)
        if pa != pb:
            return pa < pb
        ra, rb = is_pod_ready(a), is_pod_ready(b)
        if ra != rb:
            return not ra
        if self.cost:
            ca, cb = _deletion_cost(a), _deletion_cost(b)
            if ca != cb:
                return ca < cb
        ka, kb = self.ranks.get(a["metadata"]["uid"], 0), self.ranks.get(b["metadata"]["uid"], 0)
        if ka != kb:
            return ka > kb
        if ra and rb:
            t1 = parse_time(self.trace, (pod_condition(a, "Ready") or {}).get("lastTransitionTime"))
            t2 = parse_time(self.trace, (pod_condition(b, "Ready") or {}).get("lastTransitionTime"))
            if t1 != t2:
                return self._newer_first(a, b, t1, t2)
        xa, xb = _max_restarts(a), _max_restarts(b)
        if xa != xb:
            return xa > xb
        c1 = parse_time(self.trace, a["metadata"].get("creationTimestamp"))
        c2 = parse_time(self.trace, b["metadata"].get("creationTimestamp"))
        if c1 != c2:
            return self._newer_first(a, b, c1, c2)
        return False

    def _newer_first(self, a: Obj, b: Obj, t1: float | None, t2: float | None) -> bool:
        if not self.log_scale or t1 is None or t2 is None:
            return _after_or_zero(t1, t2)
        diff = _log_rank(t1, self.now) - _log_rank(t2, self.now)
        if diff == 0:
            return a["metadata"]["uid"] < b["metadata"]["uid"]
        return diff < 0

    def sort(self, pods: list[Obj]) -> list[Obj]:
        """sort.Sort; upstream's order among equal pods is unspecified, here it is the input order."""
        def cmp(a: Obj, b: Obj) -> int:
            return -1 if self.less(a, b) else (1 if self.less(b, a) else 0)
        return sorted(pods, key=functools.cmp_to_key(cmp))


# ---- the status figures of a ReplicaSet, kept as its pods change -------------------------------------------


@dataclass
class _Tally:
    """What calculateStatus counts over a ReplicaSet's claimed pods (its active controlled pods that its selector
    matches), kept up to date from the pod informer so that a sync costs what changed, not the size of the
    ReplicaSet. ``sig`` is what the figures depend on besides the pods (selector, template labels,
    minReadySeconds): a ReplicaSet whose ``sig`` changed is counted again."""

    sig: tuple[Any, ...]
    selector: selectors.Selector
    template_labels: tuple[tuple[str, Any], ...]
    min_ready: int
    members: dict[str, tuple[bool, bool, float | None]] = field(default_factory=dict)  # uid -> counted as
    unmatched: set[str] = field(default_factory=set)   # active controlled pods the selector does not match
    terminating: set[str] = field(default_factory=set)  # controlled pods deleted, not yet terminal, it matches
    fully: int = 0
    ready: int = 0
    available_from: list[float] = field(default_factory=list)  # sorted: when each ready pod turns available
    always: int = 0   # ready pods available from the start (no minReadySeconds): not in available_from
    # the last labels seen and whether the selector matches them and they have the template's: replicas share
    # one labels object in the store, and stored objects are never changed in place
    _labels: dict | None = None
    _labels_seen: tuple[bool, bool] = (False, False)

    def _matches(self, labels: dict) -> tuple[bool, bool]:
        if labels is not self._labels:
            self._labels = labels
            self._labels_seen = (self.selector.matches(labels),
                                 all(labels.get(k) == v for k, v in self.template_labels))
        return self._labels_seen

    def add(self, trace: Trace, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        matched, fully = self._matches(pod["metadata"].get("labels") or {})
        if matched and _terminating(pod):
            self.terminating.add(uid)
        if not is_pod_active(pod):
            return
        if self.selector.empty() or not matched:
            self.unmatched.add(uid)
            return
        ready = is_pod_ready(pod)
        since: float | None = None
        if ready:
            # podutil.IsPodAvailable: Ready since lastTransitionTime + minReadySeconds (always, without it)
            if not self.min_ready:
                since = -math.inf
            else:
                t = parse_time(trace, pod_condition(pod, "Ready").get("lastTransitionTime"))  # type: ignore[union-attr]
                since = None if t is None else t + self.min_ready
        self.members[uid] = (fully, ready, since)
        self.fully += fully
        self.ready += ready
        if since == -math.inf:
            self.always += 1
        elif since is not None:
            bisect.insort(self.available_from, since)

    def remove(self, uid: str) -> None:
        self.unmatched.discard(uid)
        self.terminating.discard(uid)
        counted = self.members.pop(uid, None)
        if counted is None:
            return
        fully, ready, since = counted
        self.fully -= fully
        self.ready -= ready
        if since == -math.inf:
            self.always -= 1
        elif since is not None:
            del self.available_from[bisect.bisect_left(self.available_from, since)]

    def available(self, now: float) -> int:
        return self.always + bisect.bisect_right(self.available_from, now)


def _tally_sig(rs: Obj) -> tuple[Any, ...]:
    tlabels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
    return (kept(orjson.dumps(rs["spec"].get("selector"), option=orjson.OPT_SORT_KEYS)),
            tuple(tlabels.items()), int(rs["spec"].get("minReadySeconds") or 0))


# ---- the controller --------------------------------------------------------------------------------------


def _rs_status(replicas: int, fully: int, ready: int, available: int, observed: int,
               conditions: list[Obj] | None, terminating: int | None = None) -> Obj:
    """apps/v1 ReplicaSetStatus as serialised (omitempty fields left out when zero; terminatingReplicas is a
    pointer, present whenever its feature gate is on)."""
    st: dict[str, Any] = {"replicas": replicas}
    if fully:
        st["fullyLabeledReplicas"] = fully
    if ready:
        st["readyReplicas"] = ready
    if available:
        st["availableReplicas"] = available
    if terminating is not None:
        st["terminatingReplicas"] = terminating
    if observed:
        st["observedGeneration"] = observed
    if conditions:
        st["conditions"] = conditions
    return st


def _tallied_alike(pod: Obj, old: Obj) -> bool:
    """Whether a pod's two revisions count alike in every _Tally: the same owner and labels (the objects
    themselves, as a store revision shares what a write left alone), deletion, phase and Ready condition."""
    md, omd = pod["metadata"], old["metadata"]
    return md.get("ownerReferences") is omd.get("ownerReferences") and md.get("labels") is omd.get("labels") \
        and md.get("deletionTimestamp") == omd.get("deletionTimestamp") \
        and (pod.get("status") or {}).get("phase") == (old.get("status") or {}).get("phase") \
        and pod_condition(pod, "Ready") == pod_condition(old, "Ready")


def _terminating(pod: Obj) -> bool:
    """controller.FilterTerminatingPods: deleted, not yet Succeeded or Failed."""
    return bool(pod["metadata"].get("deletionTimestamp")) and \
        (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


class ReplicaSetController:
    """pkg/controller/replicaset/replica_set.go ReplicaSetController."""

    KIND = "ReplicaSet"
    COMPONENT = COMPONENT

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.events = EventRecorder(store, self.COMPONENT)
        self.expectations = Expectations(kernel)
        self.queue = WorkQueue(kernel, self.sync_replica_set, sync=True)
        # informer caches and indexes
        self.rss: dict[Key, Obj] = {}
        self.rs_by_owner: dict[str, set[Key]] = {}          # controller (Deployment) uid -> RS keys
        self.rs_by_ns: dict[str, set[Key]] = {}             # namespace -> RS keys (the informer's namespace index)
        self.index = shared_pod_index(store)                # pods by uid, by controller uid, orphans
        self.tallies: dict[str, _Tally] = {}                # RS uid -> status figures of its pods

    def start(self) -> None:
        for rs in self.store.list(self.KIND):
            self._index_rs(rs, None)
            self.queue.add(_key(rs))
        self.store.watch(self.KIND, self._on_rs)
        self.store.watch("Pod", self._on_pod)

    # ---- indexes ---------------------------------------------------------------------------------------

    def _index_rs(self, rs: Obj | None, old: Obj | None) -> None:
        if old is not None:
            self.rss.pop(_key(old), None)
            self.rs_by_ns.get(_key(old)[0], set()).discard(_key(old))
            o = owner_of(old)
            if o is not None:
                self.rs_by_owner.get(o.get("uid", ""), set()).discard(_key(old))
        if rs is not None:
            self.rss[_key(rs)] = rs
            self.rs_by_ns.setdefault(_key(rs)[0], set()).add(_key(rs))
            o = owner_of(rs)
            if o is not None:
                self.rs_by_owner.setdefault(o.get("uid", ""), set()).add(_key(rs))

    # ---- event handlers (NewBaseController) ------------------------------------------------------------

    def _on_rs(self, type_: str, rs: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            self._index_rs(None, rs)
            self.tallies.pop(rs["metadata"]["uid"], None)
            # deleteRS: forget the expectations so a new RS of the same name starts clean
            self.expectations.delete(_skey(rs))
            self.queue.add(_key(rs))
            return
        self._index_rs(rs, old)
        self.queue.add(_key(rs))  # addRS / updateRS: always enqueue

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if not self.rss and not self.tallies:
            # none of this controller's kind (the ReplicationController manager, usually): no pod resolves to an
            # owner or matches a selector, so nothing to do (the pod index keeps itself)
            return
        if type_ == DELETED:
            self._tally_pod(None, pod)
            self._delete_pod(pod)
            return
        self._tally_pod(pod, old if type_ != "ADDED" else None)
        if type_ == "ADDED" or old is None:
            self._add_pod(pod)
        else:
            self._update_pod(old, pod)

    def _add_pod(self, pod: Obj) -> None:
        if pod["metadata"].get("deletionTimestamp"):
            self._delete_pod(pod)  # a pod already pending deletion is not a creation observation
            return
        ref = owner_of(pod)
        if ref is not None:
            rs = self._resolve(pod["metadata"]["namespace"], ref)
            if rs is None:
                return
            self.expectations.creation_observed(_skey(rs))
            self.queue.add(_key(rs))
            return
        for rs in self._pod_replica_sets(pod):
            self.queue.add(_key(rs))

    def _update_pod(self, old: Obj, cur: Obj) -> None:
        if cur["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        labels, old_labels = cur["metadata"].get("labels"), old["metadata"].get("labels")
        # a revision shares the labels a write left alone: the same object, no comparison
        label_changed = labels is not old_labels and (labels or {}) != (old_labels or {})
        if cur["metadata"].get("deletionTimestamp"):
            # a graceful delete sets deletionTimestamp first: replace the pod now, not when it is gone
            self._delete_pod(cur)
            if label_changed:
                self._delete_pod(old)
            return
        cur_ref = owner_of(cur)
        # (the same ownerReferences object, shared by the revisions: the same controller reference)
        old_ref = cur_ref if cur["metadata"].get("ownerReferences") is old["metadata"].get("ownerReferences") \
            else owner_of(old)
        if cur_ref is not old_ref and cur_ref != old_ref and old_ref is not None:
            rs = self._resolve(old["metadata"]["namespace"], old_ref)
            if rs is not None:
                self.queue.add(_key(rs))
        if cur_ref is not None:
            rs = self._resolve(cur["metadata"]["namespace"], cur_ref)
            if rs is None:
                return
            self.queue.add(_key(rs))
            mrs = int(rs["spec"].get("minReadySeconds") or 0)
            if mrs > 0 and not is_pod_ready(old) and is_pod_ready(cur):
                # "Add a second to avoid milliseconds skew in AddAfter" (issue #39785)
                self.queue.add_after(_key(rs), mrs + 1.0)
            return
        if label_changed or cur_ref != old_ref:
            for rs in self._pod_replica_sets(cur):
                self.queue.add(_key(rs))

    def _delete_pod(self, pod: Obj) -> None:
        ref = owner_of(pod)
        if ref is None:
            return
        rs = self._resolve(pod["metadata"]["namespace"], ref)
        if rs is None:
            return
        self.expectations.deletion_observed(_skey(rs), pod_key(pod))
        self.queue.add(_key(rs))

    def _tally_pod(self, pod: Obj | None, old: Obj | None) -> None:
        if pod is not None and old is not None:
            if _tallied_alike(pod, old):
                return
            if pod["metadata"].get("ownerReferences") is old["metadata"].get("ownerReferences"):
                # the same owner (the object itself, shared by the revisions): one tally counts the pod again
                o = owner_of(pod)
                tally = self.tallies.get(o.get("uid", "")) if o is not None else None
                if tally is not None:
                    tally.remove(old["metadata"]["uid"])
                    tally.add(self.trace, pod)
                return
        for obj, add in ((old, False), (pod, True)):
            o = owner_of(obj) if obj is not None else None
            tally = self.tallies.get(o.get("uid", "")) if o is not None else None
            if tally is not None:
                if add:
                    tally.add(self.trace, obj)  # type: ignore[arg-type]
                else:
                    tally.remove(obj["metadata"]["uid"])  # type: ignore[index]

    def _tally(self, rs: Obj) -> _Tally:
        """The ReplicaSet's status figures, counted once over its controlled pods and then kept up to date."""
        uid, sig = rs["metadata"]["uid"], _tally_sig(rs)
        tally = self.tallies.get(uid)
        if tally is None or tally.sig != sig:
            tally = self.tallies[uid] = _Tally(sig, self._selector(rs), sig[1], sig[2])
            for pod_uid in self.index.by_owner.get(uid, ()):
                tally.add(self.trace, self.index.pods[pod_uid])
        return tally

    def _adoptable(self, rs: Obj, selector: selectors.Selector) -> bool:
        """Whether ClaimPods could adopt one of the namespace's orphans (an active one the selector matches)."""
        if selector.empty() or rs["metadata"].get("deletionTimestamp"):
            return False
        pods = self.index.pods
        return any(is_pod_active(pods[u]) and selector.matches(pods[u]["metadata"].get("labels") or {})
                   for u in self.index.orphans.get(rs["metadata"]["namespace"], ()))

    def _resolve(self, namespace: str, ref: Obj) -> Obj | None:
        """resolveControllerRef: by name, then the UID must match."""
        return resolve_controller_ref(self.rss, namespace, ref, self.KIND)

    def _pod_replica_sets(self, pod: Obj) -> list[Obj]:
        """GetPodReplicaSets: the ReplicaSets of the pod's namespace whose selector matches its labels."""
        ns, labels = pod["metadata"]["namespace"], pod["metadata"].get("labels") or {}
        out = []
        for key in sorted(self.rs_by_ns.get(ns, ())):
            rs = self.rss[key]
            sel = self._selector(rs)
            if not sel.empty() and sel.matches(labels):
                out.append(rs)
        return out

    # ---- syncReplicaSet ----------------------------------------------------------------------------------

    def sync_replica_set(self, key: Key) -> None:
        rs = self.rss.get(key)
        skey = f"{key[0]}/{key[1]}"
        if rs is None:
            self.expectations.delete(skey)
            return
        needs_sync = self.expectations.satisfied(skey)
        selector = self._selector(rs)
        tally = self._tally(rs)
        if not tally.unmatched and not self._adoptable(rs, selector):
            # ClaimPods would neither release nor adopt: the claimed pods are the tallied ones
            counts = (len(tally.members), tally.fully, tally.ready, tally.available(self.kernel.now))

            def claimed() -> list[Obj]:
                return sorted((self.index.pods[u] for u in tally.members), key=lambda p: p["metadata"]["name"])
        else:
            # upstream lists every pod of the namespace; the owner index and the namespace's orphans are the
            # same candidates (pods controlled by someone else are never claimed)
            candidates = self.index.candidates(rs)
            filtered = claim_pods(self.store, self.COMPONENT, rs, selector,
                                  [p for p in candidates if is_pod_active(p)], controller_ref(rs))
            counts = self._count(rs, filtered)

            def claimed() -> list[Obj]:
                return filtered
        err: ApiError | None = None
        if needs_sync and not rs["metadata"].get("deletionTimestamp"):
            err = self._manage_replicas(counts[0], claimed, rs)
        terminating = None
        if self.profile.terminating_replicas_status:
            # FilterTerminatingPods, then the ones this set controls (FilterClaimedPods)
            terminating = len(tally.terminating)
        status = self._calculate_status(rs, counts, err, terminating)
        updated = self._update_status(rs, status)
        mrs = int(updated["spec"].get("minReadySeconds") or 0)
        st, replicas = updated.get("status") or {}, int(updated["spec"].get("replicas", 1))
        if err is None and mrs > 0 and st.get("readyReplicas", 0) == replicas and \
                st.get("availableReplicas", 0) != replicas:
            # resync after minReadySeconds as a last line of defense against clock skew
            self.queue.add_after(key, float(mrs))
        if err is not None:
            raise err

    def _manage_replicas(self, count: int, claimed: Callable[[], list[Obj]], rs: Obj) -> ApiError | None:
        """manageReplicas over the ``count`` claimed pods (``claimed()`` lists them, by name, when some must go)."""
        diff = count - int(rs["spec"].get("replicas", 1))
        skey = _skey(rs)
        if diff < 0:
            n = min(-diff, BURST_REPLICAS)
            self.expectations.expect_creations(skey, n)
            created, err = slow_start_batch(n, SLOW_START_INITIAL_BATCH_SIZE, lambda: self._create_pod(rs))
            for _ in range(n - created):
                # skipped creations will not be observed by the informer
                self.expectations.creation_observed(skey)
            return err
        if diff > 0:
            n = min(diff, BURST_REPLICAS)
            to_delete = self._pods_to_delete(claimed(), self._related_pods(rs), n)
            self.expectations.expect_deletions(skey, [pod_key(p) for p in to_delete])
            first: ApiError | None = None
            for pod in to_delete:
                err = self._delete_pod_for(rs, pod)
                if err is not None:
                    self.expectations.deletion_observed(skey, pod_key(pod))
                    if err.reason != "NotFound" and first is None:
                        first = err
            return first
        return None

    def _create_pod(self, rs: Obj) -> ApiError | None:
        """RealPodControl.CreatePods."""
        pod = pod_from_template(rs["spec"].get("template") or {}, rs)
        if not pod["metadata"].get("labels"):
            return ApiError(500, "InternalError", "unable to create pods, no labels")
        return create_pod(self.store, self.events, self.COMPONENT, rs, pod)

    def _delete_pod_for(self, rs: Obj, pod: Obj) -> ApiError | None:
        """RealPodControl.DeletePod (default DeleteOptions: the pod's own grace period)."""
        name = pod["metadata"]["name"]
        try:
            self.store.delete("Pod", pod["metadata"]["namespace"], name, by=self.COMPONENT)
        except ApiError as e:
            if e.reason != "NotFound":
                self.events.event(rs, "Warning", "FailedDelete", f"Error deleting: {e.message}")
            return e
        self.events.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return None

    def _related_pods(self, rs: Obj) -> list[Obj]:
        """getIndirectlyRelatedPods: pods of every ReplicaSet with the same controller (a Deployment's old and
        new ReplicaSets), each counted once."""
        ref = owner_of(rs)
        if ref is None:
            return []
        seen: dict[str, Obj] = {}
        for key in sorted(self.rs_by_owner.get(ref.get("uid", ""), ())):
            related = self.rss.get(key)
            if related is None:
                continue
            sel = self._selector(related)
            for pod in self.index.candidates(related):
                if not sel.empty() and sel.matches(pod["metadata"].get("labels") or {}):
                    seen.setdefault(pod["metadata"]["uid"], pod)
        return list(seen.values())

    def _pods_to_delete(self, filtered: list[Obj], related: list[Obj], diff: int) -> list[Obj]:
        """getPodsToDelete: rank only when some pods stay (getPodsRankedByRelatedPodsOnSameNode: a pod's rank
        is the number of active related pods on its node)."""
        if diff >= len(filtered):
            return filtered[:diff]
        on_node: dict[str, int] = {}
        for pod in related:
            if is_pod_active(pod):
                n = pod["spec"].get("nodeName") or ""
                on_node[n] = on_node.get(n, 0) + 1
        ranks = {p["metadata"]["uid"]: on_node.get(p["spec"].get("nodeName") or "", 0) for p in filtered}
        ranking = ActivePodsRanking(self.trace, self.profile, self.kernel.now, ranks)
        return ranking.sort(filtered)[:diff]

    # ---- status (replica_set_utils.go) -------------------------------------------------------------------

    def _count(self, rs: Obj, filtered: list[Obj]) -> tuple[int, int, int, int]:
        """calculateStatus's counts: replicas, fully labeled, ready, available."""
        tlabels = ((rs["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        mrs = int(rs["spec"].get("minReadySeconds") or 0)
        fully = ready = available = 0
        for pod in filtered:
            labels = pod["metadata"].get("labels") or {}
            if all(labels.get(k) == v for k, v in tlabels.items()):
                fully += 1
            if is_pod_ready(pod):
                ready += 1
                if is_pod_available(self.trace, pod, mrs, self.kernel.now):
                    available += 1
        return len(filtered), fully, ready, available

    def _calculate_status(self, rs: Obj, counts: tuple[int, int, int, int], err: ApiError | None,
                          terminating: int | None = None) -> Obj:
        """calculateStatus."""
        st = rs.get("status") or {}
        replicas, fully, ready, available = counts
        conditions = [dict(c) for c in st.get("conditions") or ()]
        failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
        if err is not None and failure is None:
            diff = replicas - int(rs["spec"].get("replicas", 1))
            reason = "FailedCreate" if diff < 0 else ("FailedDelete" if diff > 0 else "")
            conditions.append({"type": "ReplicaFailure", "status": "True",
                               "lastTransitionTime": self.trace.timestamp(), "reason": reason,
                               "message": err.message})
        elif err is None and failure is not None:
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        return _rs_status(replicas, fully, ready, available, int(st.get("observedGeneration") or 0), conditions,
                          terminating)

    def _update_status(self, rs: Obj, status: Obj) -> Obj:
        """updateReplicaSetStatus: nothing to write in the steady state; else one GET/PUT retry."""
        st = rs.get("status") or {}
        gen = int(rs["metadata"].get("generation") or 0)
        if all(int(st.get(f) or 0) == int(status.get(f) or 0)
               for f in ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas")) and \
                st.get("terminatingReplicas") == status.get("terminatingReplicas") and \
                gen == int(st.get("observedGeneration") or 0) and \
                (st.get("conditions") or []) == (status.get("conditions") or []):
            return rs
        new_status = dict(status)
        if gen:
            new_status["observedGeneration"] = gen  # the generation acted on, even when retrying
        else:
            new_status.pop("observedGeneration", None)
        cur = rs
        for i in range(STATUS_UPDATE_RETRIES + 1):
            obj = {"apiVersion": cur.get("apiVersion"), "kind": self.KIND,
                   "metadata": cur["metadata"],   # the object as read: its status strategy keeps labels/annotations
                   "status": clone(new_status)}
            try:
                return self.store.update_status(obj, by=self.COMPONENT)
            except ApiError:
                if i >= STATUS_UPDATE_RETRIES:
                    raise
                cur = self.store.get(self.KIND, cur["metadata"]["namespace"], cur["metadata"]["name"])
        return rs  # not reached

    def _selector(self, rs: Obj) -> Any:
        return label_selector(rs["spec"].get("selector"))


class ReplicationManager(ReplicaSetController):
    """pkg/controller/replication: the ReplicaSet controller run on ReplicationControllers (their equality-based
    selector map converted to a LabelSelector, as the controller's conversion adapter does), with the
    replication-controller event source."""

    KIND = "ReplicationController"
    COMPONENT = "replication-controller"

    def _selector(self, rs: Obj) -> Any:
        return label_selector({"matchLabels": rs["spec"].get("selector") or {}})

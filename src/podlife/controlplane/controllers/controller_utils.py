"""What the workload controllers share, after pkg/controller/controller_utils.go (with client-go's workqueue
and controller_ref_manager.go): the per-instant work queue, ControllerExpectations, pod predicates
(IsPodActive, IsPodReady, IsPodAvailable), controller ownerReferences, GetPodFromTemplate and slow-start
creation, the pod informer's indexes (pods by controller UID, orphans by namespace, pods by node),
ClaimObject with AdoptPod/ReleasePod patches, and resolveControllerRef.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from podlife.api import metatime, names, selectors
from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import ADDED, DELETED, Store
from podlife.engine import Kernel
from podlife.trace.recorder import Trace

EXPECTATIONS_TIMEOUT = 300.0           # controller_utils.go ExpectationsTimeout (5 min)

Key = tuple[str, str]


# ---- client-go util/workqueue ----------------------------------------------------------------------------


class WorkQueue:
    """client-go util/workqueue rate-limiting queue, on the virtual clock.

    A key added any number of times before it is processed is processed once (the dirty set); the keys
    queued at an instant are processed in one kernel callback, so the changes of one instant coalesce.
    ``add_after`` keeps only the earliest pending time per key (delaying_queue.go waitingForQueue).
    ``add_rate_limited`` follows DefaultControllerRateLimiter's per-item exponential backoff:
    5 ms * 2^failures, at most 1000 s.
    """

    BASE_DELAY = 0.005
    MAX_DELAY = 1000.0
    # Components here react to each other at once; in a cluster each round of API calls and watch events takes
    # milliseconds. A key processed this often at one instant is in a loop that would never let time pass
    # (a StatefulSet pod the kubelet rejects, deleted and made again: test/e2e/apps/statefulset.go "Should
    # recreate evicted statefulset"): it goes on LOOP_DELAY later, and the run says so.
    LOOP_LIMIT = 100
    LOOP_DELAY = 0.1

    def __init__(self, kernel: Kernel, process: Callable[[Any], None], *, sync: bool = False,
                 max_retries: int | None = None) -> None:
        """``process`` handles one key. With ``sync`` it is a controller's sync function and the queue does
        processNextWorkItem's error handling: an ApiError requeues the key rate-limited (dropped after
        ``max_retries``, as handleErr does where a controller has one), success forgets its failures."""
        self.kernel = kernel
        self._process = self._sync_item if sync else process
        self._sync = process
        self.max_retries = max_retries
        self._queue: dict[Hashable, None] = {}
        self._batch: set[Hashable] = set()  # taken by the running callback, not yet processed
        self._scheduled = False
        self._waiting: dict[Hashable, tuple[float, Any]] = {}
        self._rounds: dict[Hashable, int] = {}   # keys processed at ``_instant``, and how often
        self._instant = -1.0
        self.name = getattr(process, "__qualname__", "").split(".")[0]   # the controller, for the note
        self._failures: dict[Hashable, int] = {}

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, key: Hashable) -> None:
        if key in self._batch:
            return  # queued and not processed yet: the dirty set keeps one
        if self._rounds.get(key, 0) >= self.LOOP_LIMIT and self._instant == self.kernel.now:   # (now: a property)
            ref = "/".join(map(str, key)) if isinstance(key, tuple) else str(key)
            self.kernel.note(ref, f"{self.name} processed it {self.LOOP_LIMIT} times at one instant, a loop of "
                                  f"reactions; podlife gives each further round {self.LOOP_DELAY:g} s")
            self.add_after(key, self.LOOP_DELAY)
            return
        self._queue[key] = None
        if not self._scheduled:
            self._scheduled = True
            self.kernel.call_later(0.0, self._run)

    def add_after(self, key: Hashable, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        when = self.kernel.now + delay
        pending = self._waiting.get(key)
        if pending is not None:
            if pending[0] <= when:
                return
            self.kernel.cancel(pending[1])
        ev = self.kernel.call_at(when, lambda: self._ready(key))
        self._waiting[key] = (when, ev)

    def take_after(self, key: Hashable) -> float | None:
        """Remove the key's pending add_after and return when it was due (None if there was none)."""
        pending = self._waiting.pop(key, None)
        if pending is None:
            return None
        self.kernel.cancel(pending[1])
        return pending[0]

    def _ready(self, key: Hashable) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: Hashable) -> None:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        self.add_after(key, min(self.BASE_DELAY * 2 ** n, self.MAX_DELAY))

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def _sync_item(self, key: Hashable) -> None:
        try:
            self._sync(key)
        except ApiError:
            if self.max_retries is None or self.num_requeues(key) < self.max_retries:
                self.add_rate_limited(key)
            else:
                self.forget(key)
        else:
            self.forget(key)

    def _run(self) -> None:
        """Process the keys queued so far; keys added meanwhile wait for the next callback, after the watch
        events already pending at this instant (as a worker's next Get() follows the informer's updates)."""
        self._scheduled = False
        batch = list(self._queue)
        self._queue.clear()
        self._batch = set(batch)
        if self._instant != self.kernel.now:
            self._instant = self.kernel.now
            self._rounds.clear()
        for key in batch:
            self._batch.discard(key)
            self._rounds[key] = self._rounds.get(key, 0) + 1
            self._process(key)


# ---- controller_utils.go ControllerExpectations / UIDTrackingControllerExpectations ---------------------


@dataclass
class _Expectation:
    """The creations and deletions a controller still expects to see for one object."""

    add: int
    delete: int
    timestamp: float
    delete_keys: set[str] = field(default_factory=set)


class Expectations:
    """UIDTrackingControllerExpectations: creations expected as a count, deletions as pod keys; a sync
    manages replicas only once they are observed or after ExpectationsTimeout."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._exp: dict[str, _Expectation] = {}

    def satisfied(self, key: str) -> bool:
        e = self._exp.get(key)
        if e is None:
            return True
        return (e.add <= 0 and e.delete <= 0) or self.kernel.now - e.timestamp > EXPECTATIONS_TIMEOUT

    def expect_creations(self, key: str, n: int) -> None:
        self._exp[key] = _Expectation(n, 0, self.kernel.now)

    def expect_deletions(self, key: str, pod_keys: list[str]) -> None:
        self._exp[key] = _Expectation(0, len(pod_keys), self.kernel.now, set(pod_keys))

    def creation_observed(self, key: str) -> None:
        e = self._exp.get(key)
        if e is not None:
            e.add -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        e = self._exp.get(key)
        if e is not None and pod_key in e.delete_keys:
            e.delete_keys.discard(pod_key)
            e.delete -= 1

    def delete(self, key: str) -> None:
        self._exp.pop(key, None)


# ---- pod helpers (pkg/api/v1/pod/util.go, controller_utils.go) ------------------------------------------


def parse_time(trace: Trace, ts: str | None) -> float | None:
    """A metav1.Time string as seconds since the scenario start (None for a zero time)."""
    if not ts:
        return None
    return _seconds_since(ts, trace.start_time)


@functools.lru_cache(maxsize=4096)
def _seconds_since(ts: str, start: datetime) -> float:
    when = metatime.parse(ts).replace(tzinfo=start.tzinfo)
    return (when - start).total_seconds()


def pod_condition(pod: Obj, ctype: str) -> Obj | None:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            return c
    return None


def is_pod_ready(pod: Obj) -> bool:
    """podutil.IsPodReady."""
    c = pod_condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def is_pod_active(pod: Obj) -> bool:
    """controller.IsPodActive: not Succeeded/Failed and no deletionTimestamp."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed") and \
        not pod["metadata"].get("deletionTimestamp")


def is_pod_available(trace: Trace, pod: Obj, min_ready_seconds: int, now: float) -> bool:
    """podutil.IsPodAvailable: ready, and lastTransitionTime + minReadySeconds before now. lastTransitionTime
    has second precision (a pod ready at 10.4 s counts from 10 s). Upstream compares strictly with the
    controller's clock, which is always some latency past the instant the kubelet wrote; in virtual time
    both can be the same instant, so equality counts as before."""
    if not is_pod_ready(pod):
        return False
    if not min_ready_seconds:
        return True
    t = parse_time(trace, pod_condition(pod, "Ready").get("lastTransitionTime"))  # type: ignore[union-attr]
    return t is not None and t + min_ready_seconds <= now


def pod_key(pod: Obj) -> str:
    """controller.PodKey."""
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def controller_ref(owner: Obj) -> Obj:
    """metav1.NewControllerRef: controller and blockOwnerDeletion set."""
    md = owner["metadata"]
    return {"apiVersion": owner.get("apiVersion") or "", "kind": owner["kind"], "name": md["name"],
            "uid": md["uid"], "controller": True, "blockOwnerDeletion": True}


def label_selector(sel: Any) -> selectors.Selector:
    """metav1.LabelSelectorAsSelector (parsed once per distinct selector); an invalid selector selects nothing."""
    try:
        return selectors.compiled(sel)
    except ValueError:
        return selectors.NOTHING




def slow_start_batch(count: int, initial: int, fn: Callable[[], ApiError | None]) -> tuple[int, ApiError | None]:
    """replica_set.go slowStartBatch: batches of 1, 2, 4, ... calls; stops after the first batch with an error
    (the rest of that batch is still attempted, as its calls run concurrently)."""
    remaining, successes = count, 0
    batch = min(remaining, initial)
    while batch > 0:
        errs = [e for e in (fn() for _ in range(batch)) if e is not None]
        successes += batch - len(errs)
        if errs:
            return successes, errs[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None


def pod_from_template(template: Obj, owner: Obj) -> Obj:
    """controller_utils.go GetPodFromTemplate: template labels, annotations and finalizers, generateName
    ``<owner>-`` (getPodsPrefix: the bare name when the dashed prefix is not a valid pod name), a
    controller ownerReference, the template's spec."""
    tmd = template.get("metadata") or {}
    name = owner["metadata"]["name"]
    prefix = f"{name}-" if not names.name_is_dns_subdomain(f"{name}-", True) else name
    md: dict[str, Any] = {"generateName": prefix, "namespace": owner["metadata"]["namespace"]}
    if tmd.get("labels"):
        md["labels"] = dict(tmd["labels"])
    if tmd.get("annotations"):
        md["annotations"] = dict(tmd["annotations"])
    if tmd.get("finalizers"):
        md["finalizers"] = list(tmd["finalizers"])
    md["ownerReferences"] = [controller_ref(owner)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": clone(template.get("spec") or {})}


# ---- informer indexes and controller_ref_manager.go ------------------------------------------------


def create_pod(store: Store, events: Any, component: str, owner: Obj, pod: Obj) -> ApiError | None:
    """RealPodControl.CreatePods (pkg/controller/controller_utils.go): the pod created, with the owner's
    SuccessfulCreate or FailedCreate Event; a namespace being terminated is no error and no Event
    (NamespaceTerminatingCause)."""
    try:
        created = store.create(pod, by=component)
    except ApiError as e:
        if "because it is being terminated" in e.message:
            return None
        events.event(owner, "Warning", "FailedCreate", f"Error creating: {e.message}")
        return e
    events.event(owner, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}")
    return None


class PodIndex:
    """A pod informer cache: pods by UID, by controller UID, and orphans by namespace."""

    def __init__(self) -> None:
        self.pods: dict[str, Obj] = {}
        self.by_owner: dict[str, set[str]] = {}
        self.orphans: dict[str, set[str]] = {}

    def observe(self, type_: str, pod: Obj, old: Obj | None) -> None:
        """A pod informer event (ADDED, MODIFIED, DELETED)."""
        if type_ == DELETED:
            self.update(None, pod)
        else:
            self.update(pod, old if type_ != ADDED else None)

    def update(self, pod: Obj | None, old: Obj | None) -> None:
        if pod is not None and old is not None:
            md, old_md = pod["metadata"], old["metadata"]
            if md.get("ownerReferences") is old_md.get("ownerReferences") and md["uid"] == old_md["uid"] and \
                    md["uid"] in self.pods:
                # the same owner (a store revision shares what a write left alone: a status write's
                # ownerReferences): the pod keeps its place in the indexes
                self.pods[md["uid"]] = pod
                return
        if old is not None:
            uid = old["metadata"]["uid"]
            self.pods.pop(uid, None)
            o = owner_of(old)
            if o is not None:
                s = self.by_owner.get(o.get("uid", ""))
                if s is not None:
                    s.discard(uid)
                    if not s:
                        del self.by_owner[o.get("uid", "")]
            else:
                self.orphans.get(old["metadata"]["namespace"], set()).discard(uid)
        if pod is not None:
            uid = pod["metadata"]["uid"]
            self.pods[uid] = pod
            o = owner_of(pod)
            if o is not None:
                self.by_owner.setdefault(o.get("uid", ""), set()).add(uid)
            else:
                self.orphans.setdefault(pod["metadata"]["namespace"], set()).add(uid)

    def candidates(self, owner: Obj) -> list[Obj]:
        """The pods a controller may claim: its own and the orphans of its namespace (upstream lists every pod
        of the namespace; pods controlled by someone else are never claimed), by name."""
        md = owner["metadata"]
        out = [self.pods[u] for u in self.by_owner.get(md["uid"], ())]
        out += [self.pods[u] for u in self.orphans.get(md["namespace"], ())]
        return sorted(out, key=lambda p: p["metadata"]["name"])


def shared_pod_index(store: Store) -> PodIndex:
    """The pod informer's indexes that the controllers finding pods by owner read (a shared informer factory's
    one cache: the ReplicaSet, ReplicationController, StatefulSet, DaemonSet, Job and Deployment controllers).
    Filled and then kept up to date by a watch of its own, made the first time one asks, before that controller's
    own watch: each controller handed a pod event finds it already in the index, as when it kept one itself."""
    index = store.informer_caches.get("pods by owner")
    if index is None:
        index = store.informer_caches["pods by owner"] = PodIndex()
        for pod in store.list("Pod"):
            index.update(pod, None)
        store.watch("Pod", index.observe)
    return index


def claim_objects(store: Store, component: str, owner: Obj, selector: selectors.Selector, objs: list[Obj],
                  ref: Obj, finalizers: tuple[str, ...] = (),
                  member: Callable[[Obj], bool] | None = None) -> list[Obj]:
    """BaseControllerRefManager.ClaimObject over ``objs`` (ClaimPods, ClaimReplicaSets): keep owned objects
    that match, release owned ones that no longer match, adopt matching orphans (after
    RecheckDeletionTimestamp: a fresh read of the owner before the first adoption) adding ``finalizers``;
    ``member`` is an extra filter (the StatefulSet's isMemberOf). An adopted object is returned as patched."""
    md = owner["metadata"]
    uid, deleting = md["uid"], bool(md.get("deletionTimestamp"))
    claimed: list[Obj] = []
    can_adopt: bool | None = None
    for obj in objs:
        o = owner_of(obj)
        match = not selector.empty() and selector.matches(obj["metadata"].get("labels") or {}) and \
            (member is None or member(obj))
        if o is not None:
            if o.get("uid") != uid:
                continue
            if match:
                claimed.append(obj)
            elif not deleting:
                patch_owner(store, component, obj, uid, None)  # release
            continue
        if deleting or not match or obj["metadata"].get("deletionTimestamp"):
            continue
        if can_adopt is None:
            fresh = store.try_get(owner["kind"], md["namespace"], md["name"])
            can_adopt = fresh is not None and fresh["metadata"]["uid"] == uid and \
                not fresh["metadata"].get("deletionTimestamp")
        if can_adopt:
            adopted = patch_owner(store, component, obj, None, ref, finalizers)
            if adopted is not None:
                claimed.append(adopted)
    return claimed


claim_pods = claim_objects  # PodControllerRefManager.ClaimPods


def patch_owner(store: Store, component: str, obj: Obj, release_uid: str | None, adopt: Obj | None,
                finalizers: tuple[str, ...] = ()) -> Obj | None:
    """AdoptPod / ReleasePod (AdoptReplicaSet / ReleaseReplicaSet): a patch of the object's ownerReferences
    (and, on adoption, ``finalizers``) with a UID precondition; the patched object, or None."""
    md = obj["metadata"]
    latest = store.try_get(obj["kind"], md["namespace"], md["name"])
    if latest is None or latest["metadata"]["uid"] != md["uid"]:
        return None
    new = clone(latest)
    refs = [r for r in new["metadata"].get("ownerReferences") or () if r.get("uid") != release_uid]
    if adopt is not None:
        refs.append(adopt)
        fins = list(new["metadata"].get("finalizers") or ())
        fins += [f for f in finalizers if f not in fins]
        if fins:
            new["metadata"]["finalizers"] = fins
    if refs:
        new["metadata"]["ownerReferences"] = refs
    else:
        new["metadata"].pop("ownerReferences", None)
    try:
        return store.update(new, by=component, verb="patch")
    except ApiError:
        return None


def resolve_controller_ref(cache: dict[Key, Obj], namespace: str, ref: Obj | None, kind: str) -> Obj | None:
    """resolveControllerRef: the cached controller of ``kind`` by name, then the UID must match."""
    if ref is None or ref.get("kind") != kind:
        return None
    obj = cache.get((namespace, ref.get("name", "")))
    if obj is None or obj["metadata"]["uid"] != ref.get("uid"):
        return None
    return obj


def index_pod_by_node(pods_by_node: dict[str, dict[Key, Obj]], pod: Obj, old: Obj | None) -> None:
    """A pod informer index of pods by spec.nodeName (keys namespace/name)."""
    md = pod["metadata"]
    key = (md["namespace"], md["name"])
    was = (old or {}).get("spec", {}).get("nodeName")
    now = pod["spec"].get("nodeName")
    if was and was != now:
        pods_by_node.get(was, {}).pop(key, None)
    if now:
        pods_by_node.setdefault(now, {})[key] = pod


def pods_on_node(pods_by_node: dict[str, dict[Key, Obj]], node: str) -> list[Obj]:
    """The indexed pods of a node, by namespace/name."""
    pods = pods_by_node.get(node) or {}
    return [pods[k] for k in sorted(pods)]


def object_key(obj: Obj) -> Key:
    """The informer cache key: (namespace, name)."""
    return (obj["metadata"].get("namespace") or "", obj["metadata"]["name"])


def object_skey(obj: Obj) -> str:
    """cache.MetaNamespaceKeyFunc: namespace/name (the expectations key)."""
    return f"{obj['metadata'].get('namespace') or ''}/{obj['metadata']['name']}"


def sorted_by_creation(objs: Iterable[Obj]) -> list[Obj]:
    """controller.ReplicaSetsByCreationTimestamp (name breaks ties)."""
    return sorted(objs, key=lambda o: (o["metadata"].get("creationTimestamp") or "", o["metadata"]["name"]))


# ---- pkg/controller/volume/protectionutil ------------------------------------------------------------


def is_deletion_candidate(obj: Obj, finalizer: str) -> bool:
    """pkg/controller/volume/protectionutil: IsDeletionCandidate."""
    md = obj["metadata"]
    return bool(md.get("deletionTimestamp")) and finalizer in (md.get("finalizers") or ())


def need_to_add_finalizer(obj: Obj, finalizer: str) -> bool:
    """pkg/controller/volume/protectionutil: NeedToAddFinalizer."""
    md = obj["metadata"]
    return not md.get("deletionTimestamp") and finalizer not in (md.get("finalizers") or ())


def set_finalizer(store: Store, obj: Obj, finalizer: str, present: bool, by: str) -> None:
    """addFinalizer / removeFinalizer: an update of the object with the finalizer appended or taken out."""
    new = clone(obj)
    kept = [f for f in new["metadata"].get("finalizers") or () if f != finalizer]
    new["metadata"]["finalizers"] = kept + [finalizer] if present else kept
    if not new["metadata"]["finalizers"]:
        del new["metadata"]["finalizers"]
    store.update(new, by=by)


def needs_protection_sync(obj: Obj, finalizer: str) -> bool:
    """pvcAddedUpdated / pvAddedUpdated: only an object missing the finalizer or being deleted with it is queued."""
    return need_to_add_finalizer(obj, finalizer) or is_deletion_candidate(obj, finalizer)


def sync_protection(store: Store, obj: Obj, finalizer: str, in_use: Callable[[Obj], bool], by: str) -> None:
    """processPVC / processPV: an object being deleted loses the finalizer unless it is in use ("Keeping ...
    because it is being used"); a live one missing it gets it (created before the admission plugin was on)."""
    if is_deletion_candidate(obj, finalizer):
        if not in_use(obj):
            set_finalizer(store, obj, finalizer, False, by)
    elif need_to_add_finalizer(obj, finalizer):
        set_finalizer(store, obj, finalizer, True, by)

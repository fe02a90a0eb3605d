"""Deployment controller: pkg/controller/deployment (deployment_controller.go, sync.go, rolling.go, recreate.go,
progress.go, util/deployment_util.go).

It watches Deployments, ReplicaSets and Pods (pods only for their deletion, which is what unblocks a Recreate
rollout) and keeps indexes of ReplicaSets by controller and pods by ReplicaSet, so a sync costs the size of
one Deployment, not of the cluster. Writes: ReplicaSets (create, scale = an update of spec.replicas, adopt,
release, delete for revisionHistoryLimit), Deployment status, Events.

As upstream, the Deployment a sync works on is a copy of the cached object: a sync that writes status twice
(the new ReplicaSet's condition, then the rollout status) sends a stale resourceVersion the second time,
gets a Conflict and is requeued with backoff, while the watch event of the first write requeues it at once.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import orjson

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import ADDED, DELETED, Store
from podlife.api.validation.common import semantic_equal
from podlife.controlplane.controllers.controller_utils import (
    WorkQueue,
    claim_objects,
    controller_ref,
    label_selector,
    parse_time,
    resolve_controller_ref,
    shared_pod_index,
    sorted_by_creation,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "deployment-controller"
MAX_RETRIES = 15  # deployment_controller.go maxRetries
MAX_INT32 = 2**31 - 1
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000  # sync.go maxRevHistoryLengthInChars

# util/deployment_util.go
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"
_ANNOTATIONS_TO_SKIP = frozenset({
    "kubectl.kubernetes.io/last-applied-configuration", REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, "deprecated.deployment.rollback.to",
})
# condition reasons
REPLICA_SET_UPDATED = "ReplicaSetUpdated"
FAILED_RS_CREATE = "ReplicaSetCreateError"
NEW_REPLICA_SET = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

Key = tuple[str, str]
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


# ---- the pod-template-hash (pkg/controller/controller_utils.go ComputeHash) ------------------------------


def fnv32a(data: bytes, h: int = 0x811C9DC5) -> int:
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode_string(s: str) -> str:
    """rand.SafeEncodeString: each character to the no-vowel alphabet."""
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in s)


def compute_hash(template: Obj, collision_count: int | None) -> str:
    """ComputeHash: fnv32a of the template, then of collisionCount as 8 little-endian bytes, the decimal
    Sum32 safe-encoded. Upstream hashes a go-spew dump of the Go struct; podlife hashes the template's
    canonical JSON, so the hashes have the real shape and alphabet but not a real cluster's values."""
    h = fnv32a(orjson.dumps(template, option=orjson.OPT_SORT_KEYS))
    if collision_count is not None:
        h = fnv32a(struct.pack("<I", collision_count & 0xFFFFFFFF) + b"\0\0\0\0", h)
    return safe_encode_string(str(h))


# ---- util/deployment_util.go ------------------------------------------------------------------------------


def _replicas(obj: Obj | None) -> int:
    return int(((obj or {}).get("spec") or {}).get("replicas", 1) if obj else 0)


def _status(obj: Obj | None, field: str) -> int:
    return int(((obj or {}).get("status") or {}).get(field) or 0)


def scaled_value(v: Any, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(v, int):
        return v
    s = str(v)
    if not s.endswith("%"):
        raise ApiError(500, "InternalError", 'invalid value for IntOrString: invalid type: string is not a '
                                             'percentage')
    p = int(s[:-1])
    return -(-p * total // 100) if round_up else p * total // 100


def is_rolling_update(d: Obj) -> bool:
    return ((d["spec"].get("strategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate"


def resolve_fenceposts(d: Obj) -> tuple[int, int]:
    """ResolveFenceposts: surge rounds up, unavailable rounds down; both 0 means unavailable 1."""
    ru = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    desired = _replicas(d)
    surge = scaled_value(ru.get("maxSurge") if ru.get("maxSurge") is not None else 0, desired, True)
    unavailable = scaled_value(ru.get("maxUnavailable") if ru.get("maxUnavailable") is not None else 0,
                               desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return resolve_fenceposts(d)[0] if is_rolling_update(d) else 0


def max_unavailable(d: Obj) -> int:
    if not is_rolling_update(d) or _replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], _replicas(d))


def has_progress_deadline(d: Obj) -> bool:
    pds = d["spec"].get("progressDeadlineSeconds")
    return pds is not None and pds != MAX_INT32


def has_revision_history_limit(d: Obj) -> bool:
    lim = d["spec"].get("revisionHistoryLimit")
    return lim is not None and lim != MAX_INT32


def revision(obj: Obj) -> int | None:
    """Revision; None when the annotation does not parse (0 when absent)."""
    v = (obj["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION)
    if v is None:
        return 0
    try:
        return int(v)
    except ValueError:
        return None


def max_revision(rss: list[Obj]) -> int:
    return max((r for r in (revision(rs) for rs in rss) if r is not None), default=0)


def equal_ignore_hash(t1: Obj, t2: Obj) -> bool:
    """EqualIgnoreHash: Semantic.DeepEqual of two pod templates without their pod-template-hash label."""
    def strip(t: Obj) -> Obj:
        t = dict(t or {})
        md = dict(t.get("metadata") or {})
        labels = dict(md.get("labels") or {})
        labels.pop(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, None)
        md["labels"] = labels
        t["metadata"] = md
        return t
    return semantic_equal(strip(t1), strip(t2))


def find_new_replica_set(d: Obj, rs_list: list[Obj]) -> Obj | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's (rs_list is already in
    creation order)."""
    for rs in rs_list:
        if equal_ignore_hash(rs["spec"].get("template") or {}, d["spec"].get("template") or {}):
            return rs
    return None


def filter_active(rss: list[Obj | None]) -> list[Obj]:
    """FilterActiveReplicaSets: spec.replicas > 0."""
    return [rs for rs in rss if rs is not None and _replicas(rs) > 0]


def replica_count(rss: list[Obj | None]) -> int:
    return sum(_replicas(rs) for rs in rss if rs is not None)


def actual_count(rss: list[Obj | None]) -> int:
    return sum(_status(rs, "replicas") for rs in rss if rs is not None)


def ready_count(rss: list[Obj | None]) -> int:
    return sum(_status(rs, "readyReplicas") for rs in rss if rs is not None)


def available_count(rss: list[Obj | None]) -> int:
    return sum(_status(rs, "availableReplicas") for rs in rss if rs is not None)


def replicas_annotations_need_update(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = rs["metadata"].get("annotations") or {}
    return ann.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or ann.get(MAX_REPLICAS_ANNOTATION) != str(max_replicas)


def set_replicas_annotations(rs: Obj, desired: int, max_replicas: int) -> bool:
    ann = rs["metadata"].setdefault("annotations", {})
    updated = False
    for k, v in ((DESIRED_REPLICAS_ANNOTATION, str(desired)), (MAX_REPLICAS_ANNOTATION, str(max_replicas))):
        if ann.get(k) != v:
            ann[k] = v
            updated = True
    return updated


def _int_annotation(rs: Obj, key: str) -> int | None:
    v = (rs["metadata"].get("annotations") or {}).get(key)
    if v is None:
        return None
    try:
        return int(v)
    except ValueError:
        return None


def set_new_replica_set_annotations(d: Obj, rs: Obj, new_revision: str, exists: bool) -> bool:
    """SetNewReplicaSetAnnotations: copy the Deployment's annotations, raise the revision (keeping the old one
    in revision-history on a rollback), and on creation the desired/max replicas annotations."""
    changed = False
    ann = rs["metadata"].setdefault("annotations", {})
    for k, v in (d["metadata"].get("annotations") or {}).items():
        if k in _ANNOTATIONS_TO_SKIP or ann.get(k) == v:
            continue
        ann[k] = v
        changed = True
    old = ann.get(REVISION_ANNOTATION)
    had = old is not None
    try:
        old_int = int(old) if old else 0
    except ValueError:
        return False
    new_int = int(new_revision)
    if old_int < new_int:
        ann[REVISION_ANNOTATION] = new_revision
        changed = True
    if had and old_int < new_int:
        hist = ann.get(REVISION_HISTORY_ANNOTATION, "")
        olds = hist.split(",")
        if not olds[0]:
            ann[REVISION_HISTORY_ANNOTATION] = old  # type: ignore[assignment]
        else:
            total = len(hist) + len(old) + 1  # type: ignore[arg-type]
            start = 0
            while total > MAX_REV_HISTORY_LENGTH_IN_CHARS and start < len(olds):
                total -= len(olds[start]) + 1
                start += 1
            if total <= MAX_REV_HISTORY_LENGTH_IN_CHARS:
                ann[REVISION_HISTORY_ANNOTATION] = ",".join(olds[start:] + [old])  # type: ignore[list-item]
    if not exists and set_replicas_annotations(rs, _replicas(d), _replicas(d) + max_surge(d)):
        changed = True
    return changed


def set_deployment_revision(d: Obj, rev: str | None) -> bool:
    rev = rev or ""
    ann = d["metadata"].setdefault("annotations", {})
    if ann.get(REVISION_ANNOTATION) != rev:
        ann[REVISION_ANNOTATION] = rev
        return True
    return False


def new_rs_new_replicas(d: Obj, all_rss: list[Obj | None], new_rs: Obj) -> int:
    """NewRSNewReplicas: RollingUpdate scales the new RS up to replicas + maxSurge in total; Recreate goes
    straight to spec.replicas."""
    if is_rolling_update(d):
        ru = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
        surge = scaled_value(ru.get("maxSurge") if ru.get("maxSurge") is not None else 0, _replicas(d), True)
        current = replica_count(all_rss)
        max_total = _replicas(d) + surge
        if current >= max_total:
            return _replicas(new_rs)
        return _replicas(new_rs) + min(max_total - current, _replicas(d) - _replicas(new_rs))
    return _replicas(d)


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    desired = _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
    return desired is not None and _replicas(rs) == _replicas(d) and desired == _replicas(d) and \
        _status(rs, "availableReplicas") == _replicas(d)


def _round_to_int32(x: float) -> int:
    """integer.RoundToInt32: math.Round, halves away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def get_proportion(rs: Obj | None, d: Obj, to_add: int, added: int) -> int:
    """GetProportion / getReplicaSetFraction."""
    if rs is None or _replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    if _replicas(d) == 0:
        fraction = -_replicas(rs)
    else:
        deployment_replicas = _replicas(d) + max_surge(d)
        annotated = _int_annotation(rs, MAX_REPLICAS_ANNOTATION)
        if annotated is None:
            annotated = _status(d, "replicas")
        fraction = _round_to_int32(_replicas(rs) * deployment_replicas / annotated) - _replicas(rs) \
            if annotated else -_replicas(rs)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def get_condition(status: Obj, ctype: str) -> Obj | None:
    for c in status.get("conditions") or ():
        if c.get("type") == ctype:
            return c
    return None


def set_condition(status: Obj, cond: Obj) -> None:
    """SetDeploymentCondition: same status and reason is no change; same status keeps lastTransitionTime."""
    cur = get_condition(status, cond["type"])
    if cur is not None and cur.get("status") == cond["status"] and cur.get("reason") == cond["reason"]:
        return
    if cur is not None and cur.get("status") == cond["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime")
    status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != cond["type"]] + [cond]


def remove_condition(status: Obj, ctype: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != ctype]


def deployment_complete(d: Obj, st: Obj) -> bool:
    r = _replicas(d)
    return int(st.get("updatedReplicas") or 0) == r and int(st.get("replicas") or 0) == r and \
        int(st.get("availableReplicas") or 0) == r and \
        int(st.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 0)


def deployment_progressing(d: Obj, st: Obj) -> bool:
    old = d.get("status") or {}
    old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
    new_old = int(st.get("replicas") or 0) - int(st.get("updatedReplicas") or 0)
    return int(st.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0) or new_old < old_old or \
        int(st.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0) or \
        int(st.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0)


def _own_copy(d: Obj, status: Obj | None = None) -> Obj:
    """A copy of a Deployment whose status fields (``status``: this status) and annotations can change without
    changing ``d``: all a sync changes in its copy (conditions are replaced, never edited), and what a status
    write keeps of the object it is given (the store keeps that status, and annotations for apps/v1)."""
    md = d["metadata"]
    copy = {**d, "metadata": {**md, "annotations": dict(md["annotations"])} if md.get("annotations") is not None
            else {**md}}
    copy["status"] = status if status is not None else dict(d.get("status") or {})
    return copy


def _clean_status(st: Obj) -> Obj:
    """DeploymentStatus as serialised: every field omitempty (collisionCount is a pointer)."""
    order = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
             "unavailableReplicas", "terminatingReplicas", "conditions", "collisionCount")
    out: dict[str, Any] = {}
    for k in order:
        v = st.get(k)
        if k in ("collisionCount", "terminatingReplicas"):   # pointers
            if v is not None:
                out[k] = v
        elif v:
            out[k] = v
    return out


# ---- the controller --------------------------------------------------------------------------------------


class DeploymentController:
    """pkg/controller/deployment/deployment_controller.go DeploymentController."""

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.events = EventRecorder(store, COMPONENT)
        self.queue = WorkQueue(kernel, self.sync_deployment, sync=True, max_retries=MAX_RETRIES)
        self.deployments: dict[Key, Obj] = {}
        self.rss: dict[Key, Obj] = {}
        self.rs_by_owner: dict[str, set[Key]] = {}   # deployment uid -> RS keys
        self.rs_orphans: dict[str, set[Key]] = {}    # namespace -> RS keys without a controller
        self.index = shared_pod_index(store)         # pods by uid and by controller uid
        # the registry's deploymentStatusStrategy keeps metadata.annotations on a status write, so the
        # revision annotation travels with the status; a store that drops them would make the controller
        # write the revision forever: learn it at the first such write
        self._status_keeps_annotations: bool | None = None
        self._parked: dict[Key, float] = {}

    def start(self) -> None:
        for d in self.store.list("Deployment"):
            self.deployments[_key(d)] = d
            self.queue.add(_key(d))
        for rs in self.store.list("ReplicaSet"):
            self._index_rs(rs, None)
        self.store.watch("Deployment", self._on_deployment)
        self.store.watch("ReplicaSet", self._on_rs)
        self.store.watch("Pod", self._on_pod)

    # ---- indexes ---------------------------------------------------------------------------------------

    def _index_rs(self, rs: Obj | None, old: Obj | None) -> None:
        if old is not None:
            k = _key(old)
            self.rss.pop(k, None)
            ref = owner_of(old)
            if ref is not None:
                self.rs_by_owner.get(ref.get("uid", ""), set()).discard(k)
            else:
                self.rs_orphans.get(k[0], set()).discard(k)
        if rs is not None:
            k = _key(rs)
            self.rss[k] = rs
            ref = owner_of(rs)
            if ref is not None:
                self.rs_by_owner.setdefault(ref.get("uid", ""), set()).add(k)
            else:
                self.rs_orphans.setdefault(k[0], set()).add(k)

    # ---- event handlers --------------------------------------------------------------------------------

    def _on_deployment(self, type_: str, d: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            self.deployments.pop(_key(d), None)
        else:
            self.deployments[_key(d)] = d
        self.queue.add(_key(d))  # addDeployment / updateDeployment / deleteDeployment

    def _on_rs(self, type_: str, rs: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            self._index_rs(None, rs)
            self._delete_replica_set(rs)
            return
        prev = old if type_ != ADDED else None
        self._index_rs(rs, prev)
        if prev is None:
            self._add_replica_set(rs)
        else:
            self._update_replica_set(prev, rs)

    def _add_replica_set(self, rs: Obj) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._delete_replica_set(rs)
            return
        ref = owner_of(rs)
        if ref is not None:
            d = self._resolve(rs["metadata"]["namespace"], ref)
            if d is not None:
                self.queue.add(_key(d))
            return
        for d in self._deployments_for_rs(rs):
            self.queue.add(_key(d))

    def _update_replica_set(self, old: Obj, cur: Obj) -> None:
        if cur["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        cur_ref, old_ref = owner_of(cur), owner_of(old)
        if cur_ref != old_ref and old_ref is not None:
            d = self._resolve(old["metadata"]["namespace"], old_ref)
            if d is not None:
                self.queue.add(_key(d))
        if cur_ref is not None:
            d = self._resolve(cur["metadata"]["namespace"], cur_ref)
            if d is not None:
                self.queue.add(_key(d))
            return
        if (cur["metadata"].get("labels") or {}) != (old["metadata"].get("labels") or {}) or cur_ref != old_ref:
            for d in self._deployments_for_rs(cur):
                self.queue.add(_key(d))

    def _delete_replica_set(self, rs: Obj) -> None:
        ref = owner_of(rs)
        if ref is None:
            return
        d = self._resolve(rs["metadata"]["namespace"], ref)
        if d is not None:
            self.queue.add(_key(d))

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if type_ != DELETED:
            return
        # deletePod: enqueue a Recreate Deployment once all of its pods are gone
        d = self._deployment_for_pod(pod)
        if d is None or ((d["spec"].get("strategy") or {}).get("type")) != "Recreate":
            return
        rs_list = [self.rss[k] for k in sorted(self.rs_by_owner.get(d["metadata"]["uid"], ()))
                   if self.rss.get(k) is not None and
                   label_selector(d["spec"].get("selector")).matches(self.rss[k]["metadata"].get("labels") or {})]
        if sum(len(v) for v in self._pod_map(d, rs_list).values()) == 0:
            self.queue.add(_key(d))

    def _deployment_for_pod(self, pod: Obj) -> Obj | None:
        ref = owner_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        rs = resolve_controller_ref(self.rss, pod["metadata"]["namespace"], ref, "ReplicaSet")
        if rs is None:
            return None
        rs_ref = owner_of(rs)
        return self._resolve(rs["metadata"]["namespace"], rs_ref) if rs_ref is not None else None

    def _resolve(self, namespace: str, ref: Obj) -> Obj | None:
        return resolve_controller_ref(self.deployments, namespace, ref, "Deployment")

    def _deployments_for_rs(self, rs: Obj) -> list[Obj]:
        """GetDeploymentsForReplicaSet: Deployments of the namespace whose (non-empty) selector matches."""
        labels = rs["metadata"].get("labels") or {}
        if not labels:
            return []
        ns = rs["metadata"]["namespace"]
        out = []
        for k in sorted(k for k in self.deployments if k[0] == ns):
            d = self.deployments[k]
            sel = label_selector(d["spec"].get("selector"))
            if not sel.empty() and sel.matches(labels):
                out.append(d)
        return out

    # ---- the work queue ----------------------------------------------------------------------------------

    # ---- syncDeployment ------------------------------------------------------------------------------------

    def _park_progress_check(self, key: Key) -> None:
        """A progress check (requeueStuckDeployment's AddAfter) still due when the Deployment is complete
        would find nothing to do, but upstream's delaying queue keeps it, and it makes the next rollout's
        first check come early. It is kept here as a time instead of a timer, so that a finished scenario is
        idle, and re-armed by the next sync if that comes before it is due."""
        when = self.queue.take_after(key)
        if when is not None:
            self._parked[key] = min(when, self._parked.get(key, when))

    def _unpark_progress_check(self, key: Key) -> None:
        when = self._parked.pop(key, None)
        if when is not None and when > self.kernel.now:
            self.queue.add_after(key, when - self.kernel.now)

    def sync_deployment(self, key: Key) -> None:
        self._unpark_progress_check(key)
        cached = self.deployments.get(key)
        if cached is None:
            self._parked.pop(key, None)
            return
        d = _own_copy(cached)
        if d["spec"].get("selector") == {}:
            self.events.event(d, "Warning", "SelectingAll",
                              "This deployment is selecting all pods. A non-empty selector is required.")
            if int(d["status"].get("observedGeneration") or 0) < int(d["metadata"].get("generation") or 0):
                d["status"]["observedGeneration"] = d["metadata"].get("generation")
                self._update_status(d)
            return
        rs_list = self._get_replica_sets_for_deployment(d)
        if d["metadata"].get("deletionTimestamp"):
            self._sync_status_only(d, rs_list)
            return
        self._check_paused_conditions(d)
        if d["spec"].get("paused"):
            self._sync_scale(d, rs_list)
            return
        if self._is_scaling_event(d, rs_list):
            self._sync_scale(d, rs_list)
            return
        if (d["spec"].get("strategy") or {}).get("type") == "Recreate":
            # getPodMapForDeployment: only the Recreate rollout reads it (and reading is all it does)
            self._rollout_recreate(d, rs_list, self._pod_map(d, rs_list))
        else:
            self._rollout_rolling(d, rs_list)

    def _get_replica_sets_for_deployment(self, d: Obj) -> list[Obj]:
        """getReplicaSetsForDeployment: ClaimReplicaSets over the namespace's ReplicaSets (the owned ones and
        the orphans; those of other controllers are never claimed), in creation order."""
        ns, uid = d["metadata"]["namespace"], d["metadata"]["uid"]
        sel = label_selector(d["spec"].get("selector"))
        listed = [self.rss[k] for k in sorted(self.rs_by_owner.get(uid, set()) | self.rs_orphans.get(ns, set()))
                  if k in self.rss]
        claimed = claim_objects(self.store, COMPONENT, d, sel, listed, controller_ref(d))
        # the ReplicaSets as listed (an adopted one is not replaced by its patched copy)
        by_uid = {rs["metadata"]["uid"]: rs for rs in listed}
        claimed = [by_uid[rs["metadata"]["uid"]] for rs in claimed]
        return sorted_by_creation(claimed)

    def _pod_map(self, d: Obj, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        """getPodMapForDeployment: the Deployment's pods by the UID of their ReplicaSet, inactive ones
        included (a Recreate rollout must see that no old pod is still running)."""
        sel = label_selector(d["spec"].get("selector"))
        out: dict[str, list[Obj]] = {}
        for rs in rs_list:
            uid = rs["metadata"]["uid"]
            pods = (self.index.pods[p] for p in sorted(self.index.by_owner.get(uid, ())))
            out[uid] = [p for p in pods if (owner_of(p) or {}).get("kind") == "ReplicaSet"
                        and sel.matches(p["metadata"].get("labels") or {})]
        return out

    # ---- sync.go ---------------------------------------------------------------------------------------

    def _sync_status_only(self, d: Obj, rs_list: list[Obj]) -> None:
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        self._sync_deployment_status(old_rss + [new_rs], new_rs, d)

    def _sync_scale(self, d: Obj, rs_list: list[Obj]) -> None:
        """sync: a scaling event or a paused Deployment."""
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        self._scale(d, new_rs, old_rss)
        if d["spec"].get("paused"):
            self._cleanup_deployment(old_rss, d)
        self._sync_deployment_status(old_rss + [new_rs], new_rs, d)

    def _check_paused_conditions(self, d: Obj) -> None:
        if not has_progress_deadline(d):
            return
        cond = get_condition(d["status"], "Progressing")
        if cond is not None and cond.get("reason") == TIMED_OUT:
            return
        paused_exists = cond is not None and cond.get("reason") == PAUSED
        if d["spec"].get("paused") and not paused_exists:
            set_condition(d["status"], self._condition("Progressing", "Unknown", PAUSED, "Deployment is paused"))
        elif not d["spec"].get("paused") and paused_exists:
            set_condition(d["status"], self._condition("Progressing", "Unknown", RESUMED, "Deployment is resumed"))
        else:
            return
        self._update_status(d)

    def _get_all_replica_sets_and_sync_revision(self, d: Obj, rs_list: list[Obj],
                                                create: bool) -> tuple[Obj | None, list[Obj]]:
        new = find_new_replica_set(d, rs_list)
        old_rss = [rs for rs in rs_list if new is None or rs["metadata"]["uid"] != new["metadata"]["uid"]]
        return self._get_new_replica_set(d, rs_list, old_rss, create), old_rss

    def _get_new_replica_set(self, d: Obj, rs_list: list[Obj], old_rss: list[Obj], create: bool) -> Obj | None:
        existing = find_new_replica_set(d, rs_list)
        new_revision = str(max_revision(old_rss) + 1)
        if existing is not None:
            rs_copy = clone(existing)
            annotations_updated = set_new_replica_set_annotations(d, rs_copy, new_revision, True)
            mrs = int(d["spec"].get("minReadySeconds") or 0)
            if annotations_updated or int(rs_copy["spec"].get("minReadySeconds") or 0) != mrs:
                if mrs:
                    rs_copy["spec"]["minReadySeconds"] = mrs
                else:
                    rs_copy["spec"].pop("minReadySeconds", None)
                return self.store.update(rs_copy, by=COMPONENT)
            needs_update = self._set_revision(d, (rs_copy["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION))
            if has_progress_deadline(d) and get_condition(d["status"], "Progressing") is None:
                set_condition(d["status"], self._condition("Progressing", "True", FOUND_NEW_RS,
                                                           f'Found new replica set "{rs_copy["metadata"]["name"]}"'))
                needs_update = True
            if needs_update:
                self._update_status(d)
            return rs_copy
        if not create:
            return None
        # the new ReplicaSet: <deployment>-<pod-template-hash>, labels and selector carry the hash
        template = clone(d["spec"].get("template") or {})
        h = compute_hash(template, d["status"].get("collisionCount"))
        template.setdefault("metadata", {}).setdefault("labels", {})[DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY] = h
        selector = clone(d["spec"].get("selector") or {})
        selector.setdefault("matchLabels", {})[DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY] = h
        name = f"{d['metadata']['name']}-{h}"
        new_rs: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                       "metadata": {"name": name, "namespace": d["metadata"]["namespace"],
                                    "ownerReferences": [controller_ref(d)],
                                    "labels": dict(template["metadata"]["labels"])},
                       "spec": {"replicas": 0, "selector": selector, "template": template}}
        if d["spec"].get("minReadySeconds"):
            new_rs["spec"]["minReadySeconds"] = d["spec"]["minReadySeconds"]
        count = new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
        new_rs["spec"]["replicas"] = count
        set_new_replica_set_annotations(d, new_rs, new_revision, False)
        already_exists = False
        try:
            created = self.store.create(new_rs, by=COMPONENT)
        except ApiError as e:
            if e.reason == "AlreadyExists":
                # a slow cache; or a hash collision, which bumps collisionCount and retries
                rs = self.rss.get((d["metadata"]["namespace"], name))
                if rs is None:
                    raise
                ref = owner_of(rs)
                if ref is not None and ref.get("uid") == d["metadata"]["uid"] and \
                        equal_ignore_hash(d["spec"].get("template") or {}, rs["spec"].get("template") or {}):
                    created, already_exists = rs, True
                else:
                    d["status"]["collisionCount"] = int(d["status"].get("collisionCount") or 0) + 1
                    try:
                        self._update_status(d)
                    except ApiError:
                        pass
                    raise
            else:
                msg = f'Failed to create new replica set "{name}": {e.message}'
                if has_progress_deadline(d):
                    set_condition(d["status"], self._condition("Progressing", "False", FAILED_RS_CREATE, msg))
                    try:
                        self._update_status(d)
                    except ApiError:
                        pass
                self.events.event(d, "Warning", FAILED_RS_CREATE, msg)
                raise
        if not already_exists and count > 0:
            from_zero = " from 0" if self.profile.scaling_replica_set_message == "from-to" else ""
            self.events.event(d, "Normal", "ScalingReplicaSet",
                              f"Scaled up replica set {created['metadata']['name']}{from_zero} to {count}")
        needs_update = self._set_revision(d, new_revision)
        if not already_exists and has_progress_deadline(d):
            set_condition(d["status"], self._condition("Progressing", "True", NEW_REPLICA_SET,
                                                       f'Created new replica set "{created["metadata"]["name"]}"'))
            needs_update = True
        if needs_update:
            self._update_status(d)
        return created

    def _set_revision(self, d: Obj, rev: str | None) -> bool:
        changed = set_deployment_revision(d, rev)
        return changed and self._status_keeps_annotations is not False

    def _scale(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """scale: proportional scaling of a rollout in progress (or a paused one)."""
        active_or_latest = self._find_active_or_latest(new_rs, old_rss)
        if active_or_latest is not None:
            if _replicas(active_or_latest) != _replicas(d):
                self._scale_and_record(active_or_latest, _replicas(d), d)
            return
        if is_saturated(d, new_rs):
            for old in filter_active(list(old_rss)):
                self._scale_and_record(old, 0, d)
            return
        if not is_rolling_update(d):
            return
        all_rss = filter_active([*old_rss, new_rs])
        allowed = _replicas(d) + max_surge(d) if _replicas(d) > 0 else 0
        to_add = allowed - replica_count(all_rss)
        op = ""
        if to_add > 0:
            # ReplicaSetsBySizeNewer: larger first, newer first among equals
            all_rss.sort(key=lambda rs: (rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"]),
                         reverse=True)
            all_rss.sort(key=lambda rs: -_replicas(rs))
            op = "up"
        elif to_add < 0:
            # ReplicaSetsBySizeOlder: larger first, older first among equals
            all_rss.sort(key=lambda rs: (-_replicas(rs), rs["metadata"].get("creationTimestamp") or "",
                                         rs["metadata"]["name"]))
            op = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            if to_add != 0:
                p = get_proportion(rs, d, to_add, added)
                sizes[rs["metadata"]["name"]] = _replicas(rs) + p
                added += p
            else:
                sizes[rs["metadata"]["name"]] = _replicas(rs)
        for i, rs in enumerate(all_rss):
            n = rs["metadata"]["name"]
            if i == 0 and to_add != 0:
                sizes[n] = max(sizes[n] + to_add - added, 0)
            self._scale_replica_set(rs, sizes[n], d, op)

    def _find_active_or_latest(self, new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
        """FindActiveOrLatest (it sorts the old ReplicaSets newest first, in place, as upstream)."""
        if new_rs is None and not old_rss:
            return None
        old_rss.sort(key=lambda rs: (rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"]),
                     reverse=True)
        active = filter_active([*old_rss, new_rs])
        if not active:
            return new_rs if new_rs is not None else old_rss[0]
        return active[0] if len(active) == 1 else None

    def _scale_and_record(self, rs: Obj, new_scale: int, d: Obj) -> tuple[bool, Obj]:
        """scaleReplicaSetAndRecordEvent."""
        if _replicas(rs) == new_scale:
            return False, rs
        return self._scale_replica_set(rs, new_scale, d, "up" if _replicas(rs) < new_scale else "down")

    def _scale_replica_set(self, rs: Obj, new_scale: int, d: Obj, op: str) -> tuple[bool, Obj]:
        """scaleReplicaSet: spec.replicas and the desired/max replicas annotations in one update."""
        size_changed = _replicas(rs) != new_scale
        maxr = _replicas(d) + max_surge(d)
        if not size_changed and not replicas_annotations_need_update(rs, _replicas(d), maxr):
            return False, rs
        old_scale = _replicas(rs)
        rs_copy = clone(rs)
        rs_copy["spec"]["replicas"] = new_scale
        set_replicas_annotations(rs_copy, _replicas(d), maxr)
        updated = self.store.update(rs_copy, by=COMPONENT)
        if size_changed:
            name = updated["metadata"]["name"]
            wording = self.profile.scaling_replica_set_message
            if wording == "from-to":
                msg = f"Scaled {op} replica set {name} from {old_scale} to {new_scale}"
            elif wording == "to-from":
                msg = f"Scaled {op} replica set {name} to {new_scale} from {old_scale}"
            else:
                msg = f"Scaled {op} replica set {name} to {new_scale}"
            self.events.event(d, "Normal", "ScalingReplicaSet", msg)
        return size_changed, updated

    def _cleanup_deployment(self, old_rss: list[Obj], d: Obj) -> None:
        """cleanupDeployment: keep revisionHistoryLimit old ReplicaSets, delete the oldest empty ones."""
        if not has_revision_history_limit(d):
            return
        cleanable = [rs for rs in old_rss if rs is not None and not rs["metadata"].get("deletionTimestamp")]
        diff = len(cleanable) - int(d["spec"]["revisionHistoryLimit"])
        if diff <= 0:
            return
        # ReplicaSetsByRevision (creation time, then name, when revisions are equal or do not parse)
        cleanable.sort(key=lambda rs: (revision(rs) if revision(rs) is not None else -1,
                                       rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"]))
        for rs in cleanable[:diff]:
            if _status(rs, "replicas") != 0 or _replicas(rs) != 0 or \
                    int(rs["metadata"].get("generation") or 0) > _status(rs, "observedGeneration") or \
                    rs["metadata"].get("deletionTimestamp"):
                continue
            try:
                self.store.delete("ReplicaSet", rs["metadata"]["namespace"], rs["metadata"]["name"], by=COMPONENT)
            except ApiError as e:
                if e.reason != "NotFound":
                    raise

    def _calculate_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> Obj:
        """calculateStatus."""
        available = available_count(all_rss)
        unavailable = max(replica_count(all_rss) - available, 0)
        st: dict[str, Any] = {
            "observedGeneration": d["metadata"].get("generation"),
            "replicas": actual_count(all_rss),
            "updatedReplicas": actual_count([new_rs]),
            "readyReplicas": ready_count(all_rss),
            "availableReplicas": available,
            "unavailableReplicas": unavailable,
            "conditions": [dict(c) for c in d["status"].get("conditions") or ()],
            "collisionCount": d["status"].get("collisionCount"),
        }
        if self.profile.terminating_replicas_status:
            # GetTerminatingReplicaCountForReplicaSets (KEP-3973): the sets' own counts
            st["terminatingReplicas"] = sum(int(_status(rs, "terminatingReplicas")) for rs in all_rss if rs)
        if available >= _replicas(d) - max_unavailable(d):
            set_condition(st, self._condition("Available", "True", MINIMUM_REPLICAS_AVAILABLE,
                                              "Deployment has minimum availability."))
        else:
            set_condition(st, self._condition("Available", "False", MINIMUM_REPLICAS_UNAVAILABLE,
                                              "Deployment does not have minimum availability."))
        return st

    def _sync_deployment_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> None:
        st = _clean_status(self._calculate_status(all_rss, new_rs, d))
        if st == _clean_status(d["status"]):
            return
        d["status"] = st
        self._update_status(d)

    def _update_status(self, d: Obj) -> Obj:
        """Deployments(ns).UpdateStatus(d): d carries the resourceVersion it was read with."""
        d["status"] = _clean_status(d.get("status") or {})
        written = self.store.update_status(_own_copy(d, status=clone(d["status"])), by=COMPONENT)
        if self._status_keeps_annotations is None:
            want = (d["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION)
            have = (written["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION)
            if want is not None and want != have:
                self._status_keeps_annotations = False
            elif want is not None:
                self._status_keeps_annotations = True
        return written

    def _condition(self, ctype: str, status: str, reason: str, message: str) -> Obj:
        now = self.trace.timestamp()
        return {"type": ctype, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    def _is_scaling_event(self, d: Obj, rs_list: list[Obj]) -> bool:
        """isScalingEvent: an active ReplicaSet's desired-replicas annotation differs from spec.replicas."""
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        for rs in filter_active([*old_rss, new_rs]):
            desired = _int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
            if desired is not None and desired != _replicas(d):
                return True
        return False

    # ---- progress.go -----------------------------------------------------------------------------------

    def _sync_rollout_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> None:
        st = self._calculate_status(all_rss, new_rs, d)
        if not has_progress_deadline(d):
            remove_condition(st, "Progressing")
        cur = get_condition(d["status"], "Progressing")
        complete = int(st.get("replicas") or 0) == int(st.get("updatedReplicas") or 0) and cur is not None and \
            cur.get("reason") == NEW_RS_AVAILABLE
        if has_progress_deadline(d) and not complete:
            if deployment_complete(d, st):
                msg = f'Deployment "{d["metadata"]["name"]}" has successfully progressed.'
                if new_rs is not None:
                    msg = f'ReplicaSet "{new_rs["metadata"]["name"]}" has successfully progressed.'
                set_condition(st, self._condition("Progressing", "True", NEW_RS_AVAILABLE, msg))
            elif deployment_progressing(d, st):
                msg = f'Deployment "{d["metadata"]["name"]}" is progressing.'
                if new_rs is not None:
                    msg = f'ReplicaSet "{new_rs["metadata"]["name"]}" is progressing.'
                cond = self._condition("Progressing", "True", REPLICA_SET_UPDATED, msg)
                if cur is not None:
                    if cur.get("status") == "True":
                        cond["lastTransitionTime"] = cur.get("lastTransitionTime")
                    remove_condition(st, "Progressing")
                set_condition(st, cond)
            elif self._timed_out(d, st):
                msg = f'Deployment "{d["metadata"]["name"]}" has timed out progressing.'
                if new_rs is not None:
                    msg = f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.'
                set_condition(st, self._condition("Progressing", "False", TIMED_OUT, msg))
        failures = self._replica_failures(all_rss, new_rs)
        if failures:
            set_condition(st, failures[0])
        else:
            remove_condition(st, "ReplicaFailure")
        st = _clean_status(st)
        if deployment_complete(d, st):
            self._park_progress_check(_key(d))
        if st == _clean_status(d["status"]):
            self._requeue_stuck_deployment(d, st)
            return
        d["status"] = st
        self._update_status(d)

    def _timed_out(self, d: Obj, st: Obj) -> bool:
        """DeploymentTimedOut: no progress reported for progressDeadlineSeconds (strictly after)."""
        if not has_progress_deadline(d):
            return False
        cond = get_condition(st, "Progressing")
        if cond is None or cond.get("reason") == NEW_RS_AVAILABLE:
            return False
        if cond.get("reason") == TIMED_OUT:
            return True
        since = parse_time(self.trace, cond.get("lastUpdateTime"))
        return since is not None and since + int(d["spec"]["progressDeadlineSeconds"]) < self.kernel.now

    @staticmethod
    def _replica_failures(all_rss: list[Obj | None], new_rs: Obj | None) -> list[Obj]:
        """getReplicaFailures: ReplicaFailure conditions of the new ReplicaSet, else of any ReplicaSet."""
        def conv(c: Obj) -> Obj:
            return {"type": c.get("type"), "status": c.get("status"), "lastUpdateTime": c.get("lastTransitionTime"),
                    "lastTransitionTime": c.get("lastTransitionTime"), "reason": c.get("reason"),
                    "message": c.get("message")}
        out = [conv(c) for c in ((new_rs or {}).get("status") or {}).get("conditions") or ()
               if c.get("type") == "ReplicaFailure"]
        if out:
            return out
        for rs in all_rss:
            if rs is not None:
                out += [conv(c) for c in (rs.get("status") or {}).get("conditions") or ()
                        if c.get("type") == "ReplicaFailure"]
        return out

    def _requeue_stuck_deployment(self, d: Obj, st: Obj) -> None:
        """requeueStuckDeployment: check again when progressDeadlineSeconds would run out (plus 1 s)."""
        cur = get_condition(d["status"], "Progressing")
        if not has_progress_deadline(d) or cur is None:
            return
        if deployment_complete(d, st) or cur.get("reason") == TIMED_OUT:
            return
        since = parse_time(self.trace, cur.get("lastUpdateTime"))
        if since is None:
            return
        after = since + int(d["spec"]["progressDeadlineSeconds"]) - self.kernel.now
        if after < 1.0:
            if cur.get("reason") == NEW_RS_AVAILABLE:
                # upstream requeues this rate-limited after every sync (Forget resets the backoff, so the
                # bucket limiter's 10 qps paces it) for as long as the rollout waits; such a sync cannot
                # write anything (DeploymentTimedOut is false for NewReplicaSetAvailable) and every change
                # that could matter comes with a watch event, so the loop is not simulated
                return
            self.queue.add_rate_limited(_key(d))
        else:
            self.queue.add_after(_key(d), after + 1.0)

    # ---- rolling.go --------------------------------------------------------------------------------------

    def _rollout_rolling(self, d: Obj, rs_list: list[Obj]) -> None:
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, True)
        assert new_rs is not None
        all_rss: list[Obj | None] = [*old_rss, new_rs]
        if self._reconcile_new_replica_set(all_rss, new_rs, d):
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if self._reconcile_old_replica_sets(all_rss, filter_active(old_rss), new_rs, d):
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if deployment_complete(d, d["status"]):
            self._cleanup_deployment(old_rss, d)
        self._sync_rollout_status(all_rss, new_rs, d)

    def _reconcile_new_replica_set(self, all_rss: list[Obj | None], new_rs: Obj, d: Obj) -> bool:
        if _replicas(new_rs) == _replicas(d):
            return False
        if _replicas(new_rs) > _replicas(d):
            return self._scale_and_record(new_rs, _replicas(d), d)[0]
        return self._scale_and_record(new_rs, new_rs_new_replicas(d, all_rss, new_rs), d)[0]

    def _reconcile_old_replica_sets(self, all_rss: list[Obj | None], old_rss: list[Obj], new_rs: Obj,
                                    d: Obj) -> bool:
        """reconcileOldReplicaSets: maxScaledDown = all pods - minAvailable - unavailable new pods."""
        if replica_count(old_rss) == 0:
            return False
        all_pods = replica_count(all_rss)
        min_available = _replicas(d) - max_unavailable(d)
        new_unavailable = _replicas(new_rs) - _status(new_rs, "availableReplicas")
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        try:
            old_rss, cleanup = self._cleanup_unhealthy_replicas(old_rss, d, max_scaled_down)
        except ApiError:
            return False
        try:
            scaled_down = self._scale_down_old_for_rolling_update([*old_rss, new_rs], old_rss, d)
        except ApiError:
            return False
        return cleanup + scaled_down > 0

    def _cleanup_unhealthy_replicas(self, old_rss: list[Obj], d: Obj, max_cleanup: int) -> tuple[list[Obj], int]:
        old_rss = sorted_by_creation(old_rss)
        total = 0
        for i, rs in enumerate(old_rss):
            if total >= max_cleanup:
                break
            if _replicas(rs) == 0 or _replicas(rs) == _status(rs, "availableReplicas"):
                continue
            n = min(max_cleanup - total, _replicas(rs) - _status(rs, "availableReplicas"))
            _, updated = self._scale_and_record(rs, _replicas(rs) - n, d)
            total += n
            old_rss[i] = updated
        return old_rss, total

    def _scale_down_old_for_rolling_update(self, all_rss: list[Obj], old_rss: list[Obj], d: Obj) -> int:
        min_available = _replicas(d) - max_unavailable(d)
        available = available_count(all_rss)
        if available <= min_available:
            return 0
        total, target = 0, available - min_available
        for rs in sorted_by_creation(old_rss):
            if total >= target:
                break
            if _replicas(rs) == 0:
                continue
            n = min(_replicas(rs), target - total)
            self._scale_and_record(rs, _replicas(rs) - n, d)
            total += n
        return total

    # ---- recreate.go -------------------------------------------------------------------------------------

    def _rollout_recreate(self, d: Obj, rs_list: list[Obj], pod_map: dict[str, list[Obj]]) -> None:
        """rolloutRecreate: scale every old ReplicaSet to 0, wait until no old pod runs, then the new one."""
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        all_rss: list[Obj | None] = [*old_rss, new_rs]
        scaled_down = False
        for rs in filter_active(old_rss):
            if self._scale_and_record(rs, 0, d)[0]:
                scaled_down = True
        if scaled_down:
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if self._old_pods_running(new_rs, old_rss, pod_map):
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if new_rs is None:
            new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, True)
            all_rss = [*old_rss, new_rs]
        assert new_rs is not None
        self._scale_and_record(new_rs, _replicas(d), d)
        if deployment_complete(d, d["status"]):
            self._cleanup_deployment(old_rss, d)
        self._sync_rollout_status(all_rss, new_rs, d)

    @staticmethod
    def _old_pods_running(new_rs: Obj | None, old_rss: list[Obj], pod_map: dict[str, list[Obj]]) -> bool:
        """oldPodsRunning: an old ReplicaSet still counts replicas, or an old pod is not Succeeded/Failed
        (a Terminating pod, or one whose phase is Unknown, counts as running)."""
        if actual_count(old_rss) > 0:
            return True
        new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
        for uid, pods in pod_map.items():
            if uid == new_uid:
                continue
            for pod in pods:
                if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
                    continue
                return True
        return False




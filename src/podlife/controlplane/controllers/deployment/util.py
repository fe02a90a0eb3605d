"""pkg/controller/deployment/util/deployment_util.go (and controller_utils.go ComputeHash): the annotations,
reasons and conditions a Deployment rollout uses, the pod-template-hash, and the arithmetic on ReplicaSets
(fenceposts, proportions, counts) the controller's files share."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

import orjson

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.validation.common import semantic_equal

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


def replicas(obj: Obj | None) -> int:
    return int(((obj or {}).get("spec") or {}).get("replicas", 1) if obj else 0)


def status_int(obj: Obj | None, field: str) -> int:
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
    desired = replicas(d)
    surge = scaled_value(ru.get("maxSurge") if ru.get("maxSurge") is not None else 0, desired, True)
    unavailable = scaled_value(ru.get("maxUnavailable") if ru.get("maxUnavailable") is not None else 0,
                               desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_surge(d: Obj) -> int:
    return resolve_fenceposts(d)[0] if is_rolling_update(d) else 0


def max_unavailable(d: Obj) -> int:
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    return min(resolve_fenceposts(d)[1], replicas(d))


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


def _equal_but_hash(t1: Obj, t2: Obj) -> bool:
    """Whether two templates are equal (==) but for the pod-template-hash label, read in place: when they are,
    so are their copies without it (a ReplicaSet's template against its Deployment's, on every sync)."""
    m1, m2 = t1.get("metadata"), t2.get("metadata")
    if type(m1) is not dict or type(m2) is not dict or t1.keys() != t2.keys() or \
            m1.keys() - {"labels"} != m2.keys() - {"labels"}:
        return False
    l1, l2 = m1.get("labels") or {}, m2.get("labels") or {}
    if type(l1) is not dict or type(l2) is not dict:
        return False
    return all(v == t2[k] for k, v in t1.items() if k != "metadata") and \
        all(v == m2[k] for k, v in m1.items() if k != "labels") and \
        l1.keys() - {DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY} == l2.keys() - {DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY} and \
        all(v == l2[k] for k, v in l1.items() if k != DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY)


def _equal_by_copies(t1: Obj, t2: Obj) -> bool:
    """Semantic.DeepEqual of copies of two templates without the pod-template-hash label."""
    def strip(t: Obj) -> Obj:
        t = dict(t or {})
        md = dict(t.get("metadata") or {})
        labels = dict(md.get("labels") or {})
        labels.pop(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, None)
        md["labels"] = labels
        t["metadata"] = md
        return t
    return semantic_equal(strip(t1), strip(t2))


def equal_ignore_hash(t1: Obj, t2: Obj) -> bool:
    """EqualIgnoreHash: Semantic.DeepEqual of two pod templates without their pod-template-hash label."""
    return (isinstance(t1, dict) and isinstance(t2, dict) and _equal_but_hash(t1, t2)) or _equal_by_copies(t1, t2)


def find_new_replica_set(d: Obj, rs_list: list[Obj]) -> Obj | None:
    """FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's (rs_list is already in
    creation order)."""
    for rs in rs_list:
        if equal_ignore_hash(rs["spec"].get("template") or {}, d["spec"].get("template") or {}):
            return rs
    return None


def filter_active(rss: Sequence[Obj | None]) -> list[Obj]:
    """FilterActiveReplicaSets: spec.replicas > 0."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def replica_count(rss: Sequence[Obj | None]) -> int:
    return sum(replicas(rs) for rs in rss if rs is not None)


def actual_count(rss: Sequence[Obj | None]) -> int:
    return sum(status_int(rs, "replicas") for rs in rss if rs is not None)


def ready_count(rss: Sequence[Obj | None]) -> int:
    return sum(status_int(rs, "readyReplicas") for rs in rss if rs is not None)


def available_count(rss: Sequence[Obj | None]) -> int:
    return sum(status_int(rs, "availableReplicas") for rs in rss if rs is not None)


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


def int_annotation(rs: Obj, key: str) -> int | None:
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
            ann[REVISION_HISTORY_ANNOTATION] = old
        else:
            total = len(hist) + len(old) + 1
            start = 0
            while total > MAX_REV_HISTORY_LENGTH_IN_CHARS and start < len(olds):
                total -= len(olds[start]) + 1
                start += 1
            if total <= MAX_REV_HISTORY_LENGTH_IN_CHARS:
                ann[REVISION_HISTORY_ANNOTATION] = ",".join(olds[start:] + [old])
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def set_deployment_revision(d: Obj, rev: str | None) -> bool:
    rev = rev or ""
    ann = d["metadata"].setdefault("annotations", {})
    if ann.get(REVISION_ANNOTATION) != rev:
        ann[REVISION_ANNOTATION] = rev
        return True
    return False


def new_rs_new_replicas(d: Obj, all_rss: Sequence[Obj | None], new_rs: Obj) -> int:
    """NewRSNewReplicas: RollingUpdate scales the new RS up to replicas + maxSurge in total; Recreate goes
    straight to spec.replicas."""
    if is_rolling_update(d):
        ru = (d["spec"].get("strategy") or {}).get("rollingUpdate") or {}
        surge = scaled_value(ru.get("maxSurge") if ru.get("maxSurge") is not None else 0, replicas(d), True)
        current = replica_count(all_rss)
        max_total = replicas(d) + surge
        if current >= max_total:
            return replicas(new_rs)
        return replicas(new_rs) + min(max_total - current, replicas(d) - replicas(new_rs))
    return replicas(d)


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    desired = int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
    return desired is not None and replicas(rs) == replicas(d) and desired == replicas(d) and\
        status_int(rs, "availableReplicas") == replicas(d)


def _round_to_int32(x: float) -> int:
    """integer.RoundToInt32: math.Round, halves away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def get_proportion(rs: Obj | None, d: Obj, to_add: int, added: int) -> int:
    """GetProportion / getReplicaSetFraction."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    if replicas(d) == 0:
        fraction = -replicas(rs)
    else:
        deployment_replicas = replicas(d) + max_surge(d)
        annotated = int_annotation(rs, MAX_REPLICAS_ANNOTATION)
        if annotated is None:
            annotated = status_int(d, "replicas")
        fraction = _round_to_int32(replicas(rs) * deployment_replicas / annotated) - replicas(rs)\
            if annotated else -replicas(rs)
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
    r = replicas(d)
    return int(st.get("updatedReplicas") or 0) == r and int(st.get("replicas") or 0) == r and\
        int(st.get("availableReplicas") or 0) == r and\
        int(st.get("observedGeneration") or 0) >= int(d["metadata"].get("generation") or 0)


def deployment_progressing(d: Obj, st: Obj) -> bool:
    old = d.get("status") or {}
    old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
    new_old = int(st.get("replicas") or 0) - int(st.get("updatedReplicas") or 0)
    return int(st.get("updatedReplicas") or 0) > int(old.get("updatedReplicas") or 0) or new_old < old_old or\
        int(st.get("readyReplicas") or 0) > int(old.get("readyReplicas") or 0) or\
        int(st.get("availableReplicas") or 0) > int(old.get("availableReplicas") or 0)


def own_copy(d: Obj, status: Obj | None = None) -> Obj:
    """A copy of a Deployment whose status fields (``status``: this status) and annotations can change without
    changing ``d``: all a sync changes in its copy (conditions are replaced, never edited), and what a status
    write keeps of the object it is given (the store keeps that status, and annotations for apps/v1)."""
    md = d["metadata"]
    copy = {**d, "metadata": {**md, "annotations": dict(md["annotations"])} if md.get("annotations") is not None
            else {**md}}
    copy["status"] = status if status is not None else dict(d.get("status") or {})
    return copy


def clean_status(st: Obj) -> Obj:
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

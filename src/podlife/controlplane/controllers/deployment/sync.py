"""pkg/controller/deployment/sync.go: syncing a Deployment's ReplicaSets - finding or creating the new one,
scaling (proportionally while a rollout is under way), the revision, cleaning up old ReplicaSets beyond
revisionHistoryLimit - and calculating and writing its status."""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.revisions import revision as next_revision
from podlife.api.store import Store
from podlife.controlplane.controllers.controller_utils import (
    PodIndex,
    WorkQueue,
    controller_ref,
)
from podlife.controlplane.controllers.deployment.util import (
    COMPONENT,
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
    DESIRED_REPLICAS_ANNOTATION,
    FAILED_RS_CREATE,
    FOUND_NEW_RS,
    MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE,
    NEW_REPLICA_SET,
    PAUSED,
    RESUMED,
    REVISION_ANNOTATION,
    TIMED_OUT,
    Key,
    actual_count,
    available_count,
    clean_status,
    compute_hash,
    equal_ignore_hash,
    filter_active,
    find_new_replica_set,
    get_condition,
    get_proportion,
    has_progress_deadline,
    has_revision_history_limit,
    int_annotation,
    is_rolling_update,
    is_saturated,
    max_revision,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    own_copy,
    ready_count,
    replica_count,
    replicas,
    replicas_annotations_need_update,
    revision,
    set_condition,
    set_deployment_revision,
    set_new_replica_set_annotations,
    set_replicas_annotations,
    status_int,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile


class Sync:
    """pkg/controller/deployment/sync.go; the state is the controller's (DeploymentController.__init__)."""

    kernel: Kernel
    trace: Trace
    store: Store
    profile: Profile
    events: EventRecorder
    queue: WorkQueue
    deployments: dict[Key, Obj]
    rss: dict[Key, Obj]
    rs_by_owner: dict[str, set[Key]]
    rs_orphans: dict[str, set[Key]]
    index: PodIndex
    _status_keeps_annotations: bool | None
    _parked: dict[Key, float]

    # ---- sync.go ---------------------------------------------------------------------------------------

    def _sync_status_only(self, d: Obj, rs_list: list[Obj]) -> None:
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        self._sync_deployment_status([*old_rss, new_rs], new_rs, d)

    def _sync_scale(self, d: Obj, rs_list: list[Obj]) -> None:
        """sync: a scaling event or a paused Deployment."""
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        self._scale(d, new_rs, old_rss)
        if d["spec"].get("paused"):
            self._cleanup_deployment(old_rss, d)
        self._sync_deployment_status([*old_rss, new_rs], new_rs, d)

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
        return self._get_new_replica_set(d, rs_list, old_rss, create, new), old_rss

    def _get_new_replica_set(self, d: Obj, rs_list: list[Obj], old_rss: list[Obj], create: bool,
                             existing: Obj | None) -> Obj | None:
        """getNewReplicaSet; ``existing`` is FindNewReplicaSet(d, rs_list), which the caller has just found."""
        new_revision = str(max_revision(old_rss) + 1)
        if existing is not None:
            # existingNewRS.DeepCopy(): SetNewReplicaSetAnnotations changes only the annotations, so a copy of the
            # metadata and annotations stands for the deep copy (the callers only read it); a whole copy is made
            # only to be written
            rs_copy = next_revision(existing)
            if isinstance(rs_copy["metadata"].get("annotations"), dict):
                rs_copy["metadata"]["annotations"] = dict(rs_copy["metadata"]["annotations"])
            annotations_updated = set_new_replica_set_annotations(d, rs_copy, new_revision, True)
            mrs = int(d["spec"].get("minReadySeconds") or 0)
            if annotations_updated or int(rs_copy["spec"].get("minReadySeconds") or 0) != mrs:
                rs_copy = clone(existing)
                set_new_replica_set_annotations(d, rs_copy, new_revision, True)
                if mrs:
                    rs_copy["spec"]["minReadySeconds"] = mrs
                else:
                    rs_copy["spec"].pop("minReadySeconds", None)
                return self.store.update(rs_copy, by=COMPONENT)
            rs_revision = (rs_copy["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION)
            needs_update = self._set_revision(d, rs_revision)
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
                if ref is not None and ref.get("uid") == d["metadata"]["uid"] and\
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
            if replicas(active_or_latest) != replicas(d):
                self._scale_and_record(active_or_latest, replicas(d), d)
            return
        if is_saturated(d, new_rs):
            for old in filter_active(list(old_rss)):
                self._scale_and_record(old, 0, d)
            return
        if not is_rolling_update(d):
            return
        all_rss = filter_active([*old_rss, new_rs])
        allowed = replicas(d) + max_surge(d) if replicas(d) > 0 else 0
        to_add = allowed - replica_count(all_rss)
        op = ""
        if to_add > 0:
            # ReplicaSetsBySizeNewer: larger first, newer first among equals
            all_rss.sort(key=lambda rs: (rs["metadata"].get("creationTimestamp") or "", rs["metadata"]["name"]),
                         reverse=True)
            all_rss.sort(key=lambda rs: -replicas(rs))
            op = "up"
        elif to_add < 0:
            # ReplicaSetsBySizeOlder: larger first, older first among equals
            all_rss.sort(key=lambda rs: (-replicas(rs), rs["metadata"].get("creationTimestamp") or "",
                                         rs["metadata"]["name"]))
            op = "down"
        added = 0
        sizes: dict[str, int] = {}
        for rs in all_rss:
            if to_add != 0:
                p = get_proportion(rs, d, to_add, added)
                sizes[rs["metadata"]["name"]] = replicas(rs) + p
                added += p
            else:
                sizes[rs["metadata"]["name"]] = replicas(rs)
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
        if replicas(rs) == new_scale:
            return False, rs
        return self._scale_replica_set(rs, new_scale, d, "up" if replicas(rs) < new_scale else "down")

    def _scale_replica_set(self, rs: Obj, new_scale: int, d: Obj, op: str) -> tuple[bool, Obj]:
        """scaleReplicaSet: spec.replicas and the desired/max replicas annotations in one update."""
        size_changed = replicas(rs) != new_scale
        maxr = replicas(d) + max_surge(d)
        if not size_changed and not replicas_annotations_need_update(rs, replicas(d), maxr):
            return False, rs
        old_scale = replicas(rs)
        rs_copy = clone(rs)
        rs_copy["spec"]["replicas"] = new_scale
        set_replicas_annotations(rs_copy, replicas(d), maxr)
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
            if status_int(rs, "replicas") != 0 or replicas(rs) != 0 or\
                    int(rs["metadata"].get("generation") or 0) > status_int(rs, "observedGeneration") or\
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
            st["terminatingReplicas"] = sum(int(status_int(rs, "terminatingReplicas")) for rs in all_rss if rs)
        if available >= replicas(d) - max_unavailable(d):
            set_condition(st, self._condition("Available", "True", MINIMUM_REPLICAS_AVAILABLE,
                                              "Deployment has minimum availability."))
        else:
            set_condition(st, self._condition("Available", "False", MINIMUM_REPLICAS_UNAVAILABLE,
                                              "Deployment does not have minimum availability."))
        return st

    def _sync_deployment_status(self, all_rss: list[Obj | None], new_rs: Obj | None, d: Obj) -> None:
        st = clean_status(self._calculate_status(all_rss, new_rs, d))
        if st == clean_status(d["status"]):
            return
        d["status"] = st
        self._update_status(d)

    def _update_status(self, d: Obj) -> Obj:
        """Deployments(ns).UpdateStatus(d): d carries the resourceVersion it was read with."""
        d["status"] = clean_status(d.get("status") or {})
        written = self.store.update_status(own_copy(d, status=clone(d["status"])), by=COMPONENT)
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
            desired = int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
            if desired is not None and desired != replicas(d):
                return True
        return False

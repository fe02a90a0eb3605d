"""pkg/controller/deployment/deployment_controller.go: the watches, the indexes and syncDeployment, which
hands the rollout to the strategy's file (rolling.go / recreate.go) through sync.go and progress.go."""

from __future__ import annotations

from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, owner_of
from podlife.api.store import ADDED, DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    WorkQueue,
    claim_objects,
    controller_ref,
    label_selector,
    resolve_controller_ref,
    shared_pod_index,
    sorted_by_creation,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.deployment.recreate import Recreate
from podlife.controlplane.controllers.deployment.rolling import Rolling
from podlife.controlplane.controllers.deployment.util import (
    COMPONENT,
    MAX_RETRIES,
    Key,
    own_copy,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile


class DeploymentController(Rolling, Recreate):
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

    def sync_deployment(self, key: Key) -> None:
        self._unpark_progress_check(key)
        cached = self.deployments.get(key)
        if cached is None:
            self._parked.pop(key, None)
            return
        d = own_copy(cached)
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

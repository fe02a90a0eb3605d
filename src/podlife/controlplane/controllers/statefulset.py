"""StatefulSet controller: pkg/controller/statefulset/stateful_set.go, stateful_set_control.go
(updateStatefulSet / processReplica / processCondemned), stateful_set_utils.go and stateful_pod_control.go.

Pods are ``<set>-<ordinal>`` with the controller ownerReference, hostname/subdomain, the labels
statefulset.kubernetes.io/pod-name, controller-revision-hash and (1.28+, PodIndexLabel) apps.kubernetes.io/pod-index.
OrderedReady: ordinal i is created only once 0..i-1 are Running and Ready (and available, 1.23+); a
terminating replica blocks; a replica that is gone (or failed/succeeded, deleted first) is recreated with the
same name once the old object has left the store; scale-down removes the highest ordinal, one at a time, only
when the rest are healthy. Parallel: all at once.

Each template is a ControllerRevision (``statefulset_revisions``; the revision name is ``<set>-<hash>`` with
the hash computed from the template's canonical JSON, not a real cluster's bytes). RollingUpdate replaces the
pods of ordinals >= partition from the highest, one at a time once the one above is healthy, or maxUnavailable
of them where MaxUnavailableStatefulSet is on (``statefulset_max_unavailable``: 1.35 and from 1.37); a pod below
the partition is (re)created from the current revision. status.currentRevision moves to the update revision only
when every pod is updated and ready. OnDelete replaces only pods the user deletes. Ordinals run from
``spec.ordinals.start`` (StatefulSetStartOrdinal, 1.27+); a pod outside the range is condemned.
"""

from __future__ import annotations

import re
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    Key,
    WorkQueue,
    claim_pods,
    controller_ref,
    is_pod_available,
    is_pod_ready,
    label_selector,
    pod_from_template,
    resolve_controller_ref,
    shared_pod_index,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.deployment import scaled_value
from podlife.controlplane.controllers.statefulset_revisions import (
    apply_revision,
    get_revisions,
    truncate_history,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "statefulset-controller"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"   # apps.StatefulSetPodNameLabel
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"         # apps.PodIndexLabel
REVISION_LABEL = "controller-revision-hash"              # apps.ControllerRevisionHashLabelKey
STATUS_UPDATE_RETRIES = 10                               # stateful_set_status_updater.go (RetryOnConflict)

_POD_RE = re.compile(r"(.*)-([0-9]+)$")                  # statefulPodRegex


def _owner_ref(owner: Obj) -> Obj:
    """The claims' owner reference: not a controller, blocking the owner's foreground deletion."""
    md = owner["metadata"]
    return {"apiVersion": owner.get("apiVersion") or "v1", "kind": owner["kind"], "name": md["name"],
            "uid": md["uid"], "blockOwnerDeletion": True}


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    """getParentNameAndOrdinal: ("", -1) for a name that is not <parent>-<ordinal>."""
    m = _POD_RE.fullmatch(pod["metadata"]["name"])
    if not m:
        return "", -1
    n = int(m.group(2))
    return m.group(1), n if n < 2**31 else -1


def is_created(pod: Obj) -> bool:
    return bool((pod.get("status") or {}).get("phase"))


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_pod_ready(pod)


def is_healthy(pod: Obj) -> bool:
    return is_running_and_ready(pod) and not is_terminating(pod)


class _Versions:
    """The current and update revisions' sets (ApplyRevision) for newVersionedStatefulSetPod."""

    def __init__(self, sset: Obj, start: int, current_set: Obj, current_rev: str, update_set: Obj,
                 update_rev: str) -> None:
        self.sset, self.start, self.current_set, self.current_rev = sset, start, current_set, current_rev
        self.update_set, self.update_rev = update_set, update_rev

    def for_ordinal(self, ordinal: int) -> tuple[Obj, str]:
        """newVersionedStatefulSetPod: a RollingUpdate pod below the partition (below currentReplicas with no
        rollingUpdate) is made from the current revision, every other one from the update revision."""
        strategy = self.sset["spec"].get("updateStrategy") or {}
        ru = strategy.get("rollingUpdate")
        if strategy.get("type", "RollingUpdate") == "RollingUpdate" and (
                (ru is None and ordinal < self.start + int((self.sset.get("status") or {}).get("currentReplicas") or 0))
                or (ru is not None and ordinal < self.start + int(ru.get("partition") or 0))):
            return self.current_set, self.current_rev
        return self.update_set, self.update_rev


class StatefulSetController:
    """pkg/controller/statefulset StatefulSetController with defaultStatefulSetControl."""

    COMPONENT = COMPONENT

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.events = EventRecorder(store, COMPONENT)
        self.queue = WorkQueue(kernel, self.sync_stateful_set, sync=True)
        self.sets: dict[Key, Obj] = {}
        self.index = shared_pod_index(store)

    def start(self) -> None:
        for s in self.store.list("StatefulSet"):
            self.sets[_key(s)] = s
            self.queue.add(_key(s))
        self.store.watch("StatefulSet", self._on_set)
        self.store.watch("Pod", self._on_pod)

    # ---- event handlers (stateful_set.go addPod/updatePod/deletePod, enqueueStatefulSet) ------------------

    def _on_set(self, type_: str, sset: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            self.sets.pop(_key(sset), None)
        else:
            self.sets[_key(sset)] = sset
        self.queue.add(_key(sset))

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if not self.sets:
            return   # no StatefulSet: no owner resolves, no selector adopts (the pod index keeps itself)
        if type_ == DELETED:
            self._enqueue_owner(pod)
            return
        if old is not None and type_ != "ADDED":
            if pod["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
                return
            if owner_of(old) != owner_of(pod) and owner_of(old) is not None:
                self._enqueue_owner(old)
        if owner_of(pod) is not None:
            s = self._enqueue_owner(pod)
            if s is not None and old is not None and not is_pod_ready(old) and is_pod_ready(pod):
                mrs = self._min_ready_seconds(s)
                if mrs > 0:
                    # updatePod: "Add a second to avoid milliseconds skew in AddAfter"
                    self.queue.add_after(_key(s), mrs + 1.0)
            return
        # an orphan: every set whose selector matches may adopt it
        labels = pod["metadata"].get("labels") or {}
        for key in sorted(k for k in self.sets if k[0] == pod["metadata"]["namespace"]):
            sel = label_selector(self.sets[key]["spec"].get("selector"))
            if not sel.empty() and sel.matches(labels):
                self.queue.add(key)

    def _enqueue_owner(self, pod: Obj) -> Obj | None:
        s = resolve_controller_ref(self.sets, pod["metadata"]["namespace"], owner_of(pod), "StatefulSet")
        if s is None:
            return None
        self.queue.add(_key(s))
        return s

    def _start_ordinal(self, sset: Obj) -> int:
        """getStartOrdinal: spec.ordinals.start where StatefulSetStartOrdinal is on, else 0."""
        if not self.profile.statefulset_start_ordinal:
            return 0
        return int((sset["spec"].get("ordinals") or {}).get("start") or 0)

    def _min_ready_seconds(self, sset: Obj) -> int:
        return int(sset["spec"].get("minReadySeconds") or 0) if self.profile.statefulset_available_replicas else 0

    # ---- sync ------------------------------------------------------------------------------------------------

    def sync_stateful_set(self, key: Key) -> None:
        sset = self.sets.get(key)
        if sset is None:
            return
        selector = label_selector(sset["spec"].get("selector"))
        name = sset["metadata"]["name"]
        pods = claim_pods(self.store, COMPONENT, sset, selector, self.index.candidates(sset), controller_ref(sset),
                          member=lambda p: parent_and_ordinal(p)[0] == name)
        # UpdateStatefulSet: revisions, performUpdate, then truncateHistory
        current, update, collision, revisions = get_revisions(self, sset)
        status, err = self._update_stateful_set(sset, pods, current, update, collision)
        updated = self._update_status(sset, status)
        truncate_history(self, sset, pods, revisions, current, update)
        mrs = self._min_ready_seconds(updated)
        st = updated.get("status") or {}
        if mrs > 0 and st.get("readyReplicas", 0) != st.get("availableReplicas", 0):
            self.queue.add_after(key, float(mrs))
        if err is not None:
            raise err

    def _update_stateful_set(self, sset: Obj, pods: list[Obj], current: Obj, update: Obj, collision: int
                             ) -> tuple[Obj, ApiError | None]:
        """updateStatefulSet: the status of the pods found, then at most the one step the policy allows."""
        spec = sset["spec"]
        current_rev, update_rev = current["metadata"]["name"], update["metadata"]["name"]
        mrs = self._min_ready_seconds(sset)
        status = self._compute_status(pods, mrs, current_rev, update_rev)
        status["observedGeneration"] = int(sset["metadata"].get("generation") or 0)
        status["currentRevision"], status["updateRevision"] = current_rev, update_rev
        status["collisionCount"] = collision
        if sset["metadata"].get("deletionTimestamp"):
            return status, None  # being deleted: status only
        replica_count = int(spec.get("replicas", 1))
        start = self._start_ordinal(sset)
        replicas: list[Obj | None] = [None] * replica_count   # index: ordinal - start
        condemned: list[Obj] = []
        for pod in pods:
            ordinal = parent_and_ordinal(pod)[1]
            if start <= ordinal < start + replica_count:   # podInOrdinalRange
                replicas[ordinal - start] = pod
            elif ordinal >= 0:
                condemned.append(pod)
        condemned.sort(key=lambda p: parent_and_ordinal(p)[1])
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        versions = _Versions(sset, start, apply_revision(sset, current), current_rev, apply_revision(sset, update),
                             update_rev)
        try:
            self._manage(sset, replicas, condemned, monotonic, mrs, versions, status)
        except ApiError as e:
            return status, e
        return status, None

    def _compute_status(self, pods: list[Obj], mrs: int, current_rev: str, update_rev: str) -> dict[str, Any]:
        """computeReplicaStatus."""
        replicas = ready = available = current = updated = 0
        for pod in pods:
            if is_created(pod):
                replicas += 1
            if is_running_and_ready(pod):
                ready += 1
                if is_pod_available(self.trace, pod, mrs, self.kernel.now):
                    available += 1
            if is_created(pod) and not is_terminating(pod):
                rev = (pod["metadata"].get("labels") or {}).get(REVISION_LABEL)
                if rev == current_rev:
                    current += 1
                if rev == update_rev:
                    updated += 1
        status: dict[str, Any] = {"replicas": replicas, "readyReplicas": ready, "currentReplicas": current,
                                  "updatedReplicas": updated}
        if self.profile.statefulset_available_replicas:
            status["availableReplicas"] = available
        return status

    def _available(self, pod: Obj, mrs: int) -> bool:
        return is_running_and_ready(pod) and is_pod_available(self.trace, pod, mrs, self.kernel.now)

    def _manage(self, sset: Obj, replicas: list[Obj | None], condemned: list[Obj], monotonic: bool, mrs: int,
                versions: _Versions, status: dict[str, Any]) -> None:
        # processReplica, ascending ordinals
        for i, pod in enumerate(replicas):
            if pod is not None and (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
                # a terminal replica is deleted; its successor is made once the old object is gone
                if not is_terminating(pod):
                    self._delete_pod(sset, pod)
                if monotonic:
                    return
                continue
            if pod is None:
                self._create_pod(sset, *versions.for_ordinal(versions.start + i), versions.start + i)
                if monotonic:
                    return
                continue
            if is_terminating(pod):
                if monotonic:
                    return  # "StatefulSet is waiting for Pod to Terminate"
                continue
            if not is_running_and_ready(pod) or not self._available(pod, mrs):
                if monotonic:
                    return  # "StatefulSet is waiting for Pod to be Running and Ready (and available)"
                continue
        # processCondemned, from the highest ordinal
        first_unhealthy = next((p for p in [*(r for r in replicas if r is not None), *condemned]
                                if not is_healthy(p)), None)
        for pod in reversed(condemned):
            if is_terminating(pod):
                if monotonic:
                    return
                continue
            if not is_running_and_ready(pod) and monotonic and pod is not first_unhealthy:
                return
            self._claims_follow_pod(sset, pod)
            self._delete_pod(sset, pod)
            if monotonic:
                return
        # the update strategy: OnDelete stops here, pods are replaced when the user deletes them
        strategy = sset["spec"].get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        ru = strategy.get("rollingUpdate") or {}
        update_min = int(ru.get("partition") or 0)
        update_rev = versions.update_rev

        def outdated(pod: Obj) -> bool:
            return (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) != update_rev and not is_terminating(pod)

        if self.profile.statefulset_max_unavailable:
            # updateStatefulSetAfterInvariantEstablished: up to maxUnavailable (default 1, at least 1) less the
            # unhealthy replicas, from the highest ordinal down to the partition
            max_unavailable = scaled_value(ru.get("maxUnavailable", 1), len(replicas), round_up=False) or 1
            # isUnavailable: not healthy, or not yet available for minReadySeconds (the beta's KEP-961 fix)
            budget = max_unavailable - sum(1 for p in replicas
                                           if p is None or not is_healthy(p) or not self._available(p, mrs))
            for target in range(len(replicas) - 1, update_min - 1, -1):
                if budget <= 0:
                    return
                pod = replicas[target]
                if pod is not None and outdated(pod):
                    self._delete_pod(sset, pod)
                    status["currentReplicas"] -= 1
                    budget -= 1
            return
        # the highest ordinal >= partition not at the update revision goes; an unhealthy pod above it waits
        for target in range(len(replicas) - 1, update_min - 1, -1):
            pod = replicas[target]
            if pod is None:
                return
            if outdated(pod):
                self._delete_pod(sset, pod)
                status["currentReplicas"] -= 1
                return
            if not is_healthy(pod):
                return  # "StatefulSet is waiting for Pod to update"

    # ---- stateful_pod_control.go -----------------------------------------------------------------------------

    def new_pod(self, sset: Obj, ordinal: int, revision: str) -> Obj:
        """newStatefulSetPod: GetPodFromTemplate (``sset`` carries the revision's template), the name,
        initIdentity, the revision label."""
        pod = pod_from_template(sset["spec"].get("template") or {}, sset)
        name = f"{sset['metadata']['name']}-{ordinal}"
        pod["metadata"]["name"] = name
        labels = pod["metadata"].setdefault("labels", {})
        labels[POD_NAME_LABEL] = name
        if self.profile.statefulset_pod_index_label:
            labels[POD_INDEX_LABEL] = str(ordinal)
        labels[REVISION_LABEL] = revision
        pod["spec"]["hostname"] = name
        if sset["spec"].get("serviceName"):
            pod["spec"]["subdomain"] = sset["spec"]["serviceName"]
        # updateStorage: each volumeClaimTemplate becomes a volume using the pod's own claim
        templates = sset["spec"].get("volumeClaimTemplates") or ()
        if templates:
            named = {t["metadata"]["name"] for t in templates}
            volumes = [v for v in pod["spec"].get("volumes") or () if v.get("name") not in named]
            pod["spec"]["volumes"] = volumes + [
                {"name": t["metadata"]["name"],
                 "persistentVolumeClaim": {"claimName": f"{t['metadata']['name']}-{name}"}} for t in templates]
        return pod

    def _retention(self, sset: Obj) -> tuple[str, str]:
        """persistentVolumeClaimRetentionPolicy (whenDeleted, whenScaled); Retain, Retain while the
        StatefulSetAutoDeletePVC gate is off."""
        if not self.profile.statefulset_pvc_retention:
            return "Retain", "Retain"
        policy = sset["spec"].get("persistentVolumeClaimRetentionPolicy") or {}
        return policy.get("whenDeleted", "Retain"), policy.get("whenScaled", "Retain")

    def _claims_follow_pod(self, sset: Obj, pod: Obj) -> None:
        """whenScaled Delete: a condemned pod becomes the owner of its claims, which the garbage collector then
        deletes with it (stateful_set_control.go processCondemned → updatePVCRetentionPolicy)."""
        if self._retention(sset)[1] != "Delete":
            return
        for t in sset["spec"].get("volumeClaimTemplates") or ():
            claim = self.store.try_get("PersistentVolumeClaim", pod["metadata"]["namespace"],
                                       f"{t['metadata']['name']}-{pod['metadata']['name']}")
            if claim is None or any(r.get("uid") == pod["metadata"]["uid"]
                                    for r in claim["metadata"].get("ownerReferences") or ()):
                continue
            new = clone(claim)
            new["metadata"]["ownerReferences"] = [r for r in new["metadata"].get("ownerReferences") or ()
                                                  if r.get("kind") != "StatefulSet"] + [_owner_ref(pod)]
            try:
                self.store.update(new, by=COMPONENT)
            except ApiError:
                pass

    def _create_claims(self, sset: Obj, pod: Obj) -> None:
        """createPersistentVolumeClaims: the claims of the pod that do not exist yet (getPersistentVolumeClaims:
        the template, named TEMPLATE-POD, with the set's selector labels)."""
        set_name, pod_name = sset["metadata"]["name"], pod["metadata"]["name"]
        ns = sset["metadata"]["namespace"]
        for t in sset["spec"].get("volumeClaimTemplates") or ():
            claim_name = f"{t['metadata']['name']}-{pod_name}"
            if self.store.try_get("PersistentVolumeClaim", ns, claim_name) is not None:
                continue
            md = clone(t.get("metadata") or {})
            md.update(name=claim_name, namespace=ns)
            if self._retention(sset)[0] == "Delete":
                # updateClaimOwnerRefForSetAndPod: whenDeleted Delete makes the set the claim's owner
                md["ownerReferences"] = [_owner_ref(sset)]
            labels = md.setdefault("labels", {})
            labels.update(((sset["spec"].get("selector") or {}).get("matchLabels")) or {})
            claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": md,
                     "spec": clone(t.get("spec") or {})}
            try:
                self.store.create(claim, by=COMPONENT)
            except ApiError as e:
                self.events.event(sset, "Warning", "FailedCreate",
                                  f"create Claim {claim_name} for Pod {pod_name} "
                                  f"in StatefulSet {set_name} failed error: {e.message}")
                raise
            self.events.event(sset, "Normal", "SuccessfulCreate",
                              f"create Claim {claim_name} Pod {pod_name} in StatefulSet {set_name} success")

    def _create_pod(self, sset: Obj, versioned: Obj, revision: str, ordinal: int) -> None:
        pod = self.new_pod(versioned, ordinal, revision)
        name, set_name = pod["metadata"]["name"], sset["metadata"]["name"]
        self._create_claims(sset, pod)
        try:
            self.store.create(pod, by=COMPONENT)
        except ApiError as e:
            if e.reason == "AlreadyExists":
                raise  # the old object is still there: retried with backoff
            self.events.event(sset, "Warning", "FailedCreate",
                              f"create Pod {name} in StatefulSet {set_name} failed error: {e.message}")
            raise
        self.events.event(sset, "Normal", "SuccessfulCreate", f"create Pod {name} in StatefulSet {set_name} successful")

    def _delete_pod(self, sset: Obj, pod: Obj) -> None:
        name, set_name = pod["metadata"]["name"], sset["metadata"]["name"]
        try:
            self.store.delete("Pod", pod["metadata"]["namespace"], name, by=COMPONENT)
        except ApiError as e:
            self.events.event(sset, "Warning", "FailedDelete",
                              f"delete Pod {name} in StatefulSet {set_name} failed error: {e.message}")
            raise
        self.events.event(sset, "Normal", "SuccessfulDelete", f"delete Pod {name} in StatefulSet {set_name} successful")

    # ---- status (stateful_set_control.go updateStatefulSetStatus, completeRollingUpdate) --------------------

    def _update_status(self, sset: Obj, status: dict[str, Any]) -> Obj:
        strategy = (sset["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate")
        if strategy == "RollingUpdate" and status["updatedReplicas"] == status["replicas"] and \
                status["readyReplicas"] == status["replicas"]:
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        new_status = {k: v for k, v in status.items()
                      if v or k in ("replicas", "availableReplicas", "collisionCount")}
        if (sset.get("status") or {}) == new_status:
            return sset  # inconsistentStatus false: nothing to write
        cur = sset
        for i in range(STATUS_UPDATE_RETRIES + 1):
            obj = {"apiVersion": cur.get("apiVersion"), "kind": "StatefulSet",
                   "metadata": cur["metadata"],   # the object as read: its status strategy keeps labels/annotations
                   "status": clone(new_status)}
            try:
                return self.store.update_status(obj, by=COMPONENT)
            except ApiError as e:
                if i >= STATUS_UPDATE_RETRIES or e.reason != "Conflict":
                    raise
                cur = self.store.get("StatefulSet", cur["metadata"]["namespace"], cur["metadata"]["name"])
        return sset  # not reached



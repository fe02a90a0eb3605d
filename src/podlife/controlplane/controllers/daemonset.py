"""DaemonSet controller: pkg/controller/daemon/daemon_controller.go (syncDaemonSet, manage, podsShouldBeOnNode,
syncNodes, updateDaemonSetStatus, NodeShouldRunDaemonPod) and pkg/controller/daemon/util.

One pod per eligible node: the node matches the template's nodeName, nodeSelector and required node affinity,
and the pod tolerates the node's NoSchedule/NoExecute taints, counting the tolerations every daemon pod gets
(AddOrUpdateDaemonPodTolerations). A pod is not bound by the controller: since 1.12 (ScheduleDaemonSetPods) it
carries a required node affinity ``matchFields metadata.name In [node]`` (ReplaceDaemonSetPodNodeNameNodeAffinity)
and the scheduler binds it. A node that stops fitting keeps its pod only while the pod tolerates its NoExecute
taints; failed daemon pods are deleted (with a per-node backoff) and replaced; extra pods on a node are deleted.
Each template is a ControllerRevision; pods of an older one are replaced by the update strategy
(``daemonset_update``: RollingUpdate with maxUnavailable or maxSurge, OnDelete).
"""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.registry.daemonset import template_generation
from podlife.api.store import DELETED, Store
from podlife.controlplane.controllers.controller_utils import (
    Expectations,
    Key,
    WorkQueue,
    _Expectation,
    claim_pods,
    controller_ref,
    create_pod,
    is_pod_available,
    is_pod_ready,
    label_selector,
    pod_from_template,
    resolve_controller_ref,
    shared_pod_index,
    slow_start_batch,
)
from podlife.controlplane.controllers.controller_utils import object_key as _key
from podlife.controlplane.controllers.controller_utils import object_skey as _skey
from podlife.controlplane.controllers.controller_utils import pod_key as _pod_key
from podlife.controlplane.controllers.daemonset_update import (
    REVISION_LABEL,
    TEMPLATE_GENERATION_LABEL,
    allows_surge,
    cleanup_history,
    construct_history,
    is_pod_updated,
    rolling_update,
)
from podlife.controlplane.controllers.daemonset_util import (
    daemon_tolerations,
    node_name_affinity,
    should_run,
    target_node,
)
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "daemonset-controller"
BURST_REPLICAS = 250                       # daemon_controller.go BurstReplicas
STATUS_UPDATE_RETRIES = 1                  # StatusUpdateRetries
FAILED_BACKOFF_INITIAL = 1.0               # failedPodsBackoff: flowcontrol.NewBackOff(1s, 15min)
FAILED_BACKOFF_MAX = 900.0


def _creation_order(pod: Obj) -> tuple[bool, str, str]:
    """podByCreationTimestampAndPhase: scheduled pods first, then the oldest, then by name."""
    return (not pod["spec"].get("nodeName"), pod["metadata"].get("creationTimestamp") or "", pod["metadata"]["name"])


class _Expectations(Expectations):
    def set(self, key: str, adds: int, delete_keys: list[str]) -> None:
        """ControllerExpectations.SetExpectations(key, creations, deletions)."""
        self._exp[key] = _Expectation(adds, len(delete_keys), self.kernel.now, set(delete_keys))


class DaemonSetController:
    """pkg/controller/daemon DaemonSetsController."""

    COMPONENT = COMPONENT

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.events = EventRecorder(store, COMPONENT)
        self.expectations = _Expectations(kernel)
        self.queue = WorkQueue(kernel, self.sync_daemon_set, sync=True)
        self.dss: dict[Key, Obj] = {}
        self.nodes: dict[str, Obj] = {}
        self.index = shared_pod_index(store)
        self.failed_backoff: dict[tuple[str, str], tuple[float, float]] = {}  # (ds uid, node) -> (delay, last)

    def start(self) -> None:
        for node in self.store.list("Node"):
            self.nodes[node["metadata"]["name"]] = node
        for ds in self.store.list("DaemonSet"):
            self.dss[_key(ds)] = ds
            self.queue.add(_key(ds))
        self.store.watch("DaemonSet", self._on_ds)
        self.store.watch("Pod", self._on_pod)
        self.store.watch("Node", self._on_node)
        self.store.watch("ControllerRevision", self._on_history)

    # ---- event handlers ----------------------------------------------------------------------------------

    def _on_ds(self, type_: str, ds: Obj, old: Obj | None) -> None:
        if type_ == DELETED:
            self.dss.pop(_key(ds), None)
            self.expectations.delete(_skey(ds))
        else:
            self.dss[_key(ds)] = ds
        self.queue.add(_key(ds))

    def _on_history(self, type_: str, rev: Obj, old: Obj | None) -> None:
        """addHistory / updateHistory / deleteHistory: the owning DaemonSet (also a former owner) is synced; an
        orphan revision, every DaemonSet of its namespace whose selector matches it (to adopt it). A revision
        created with a controllerRef is only observed: its DaemonSet is not synced (daemon_controller.go:
        addHistory), so one written by a client stays until something else syncs the DaemonSet."""
        if not self.dss:
            return
        if type_ == "ADDED" or old is None:
            if owner_of(rev) is not None and not rev["metadata"].get("deletionTimestamp"):
                return
        elif rev["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return   # updateHistory: a resync
        elif owner_of(rev) is None and owner_of(old) is None and \
                (rev["metadata"].get("labels") or {}) == (old["metadata"].get("labels") or {}):
            return   # updateHistory: an orphan whose labels and controllerRef did not change
        owners = [owner_of(rev)] + ([owner_of(old)] if old is not None and owner_of(old) != owner_of(rev) else [])
        for ref in owners:
            ds = resolve_controller_ref(self.dss, rev["metadata"]["namespace"], ref, "DaemonSet")
            if ds is not None:
                self.queue.add(_key(ds))
        if owner_of(rev) is None and type_ != DELETED:
            self._enqueue_matching(rev)

    def _on_node(self, type_: str, node: Obj, old: Obj | None) -> None:
        name = node["metadata"]["name"]
        if type_ == DELETED:
            self.nodes.pop(name, None)
            return
        self.nodes[name] = node
        for key in sorted(self.dss):
            ds = self.dss[key]
            if type_ == "ADDED" or old is None:
                if should_run(node, ds)[0]:
                    self.queue.add(key)  # addNode
            elif should_run(old, ds) != should_run(node, ds):
                self.queue.add(key)      # updateNode: only when the node's fit changed

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if not self.dss:
            return   # no DaemonSet: no owner resolves, no selector adopts (the pod index keeps itself)
        if type_ == DELETED:
            ds = self._resolve(pod)
            if ds is not None:
                self.expectations.deletion_observed(_skey(ds), _pod_key(pod))
                self.queue.add(_key(ds))
            return
        ds = self._resolve(pod)
        if type_ == "ADDED" or old is None:
            if pod["metadata"].get("deletionTimestamp"):
                if ds is not None:
                    self.expectations.deletion_observed(_skey(ds), _pod_key(pod))
                    self.queue.add(_key(ds))
                return
            if ds is not None:
                self.expectations.creation_observed(_skey(ds))
                self.queue.add(_key(ds))
            elif owner_of(pod) is None:
                self._enqueue_matching(pod)
            return
        if pod["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            return
        if pod["metadata"].get("deletionTimestamp"):
            # updatePod: a graceful deletion is handled as a deletion at once ("expect an ds to create more
            # replicas asap, not wait until the kubelet actually deletes the pod")
            if ds is not None:
                self.expectations.deletion_observed(_skey(ds), _pod_key(pod))
                self.queue.add(_key(ds))
            return
        if owner_of(old) != owner_of(pod) and owner_of(old) is not None:
            o = self._resolve(old)
            if o is not None:
                self.queue.add(_key(o))
        if ds is not None:
            self.queue.add(_key(ds))
            mrs = int(ds["spec"].get("minReadySeconds") or 0)
            if mrs > 0 and not is_pod_ready(old) and is_pod_ready(pod):
                self.queue.add_after(_key(ds), float(mrs))
        elif owner_of(pod) is None:
            self._enqueue_matching(pod)

    def _enqueue_matching(self, pod: Obj) -> None:
        labels = pod["metadata"].get("labels") or {}
        for key in sorted(k for k in self.dss if k[0] == pod["metadata"]["namespace"]):
            sel = label_selector(self.dss[key]["spec"].get("selector"))
            if not sel.empty() and sel.matches(labels):
                self.queue.add(key)

    def _resolve(self, pod: Obj) -> Obj | None:
        return resolve_controller_ref(self.dss, pod["metadata"]["namespace"], owner_of(pod), "DaemonSet")

    # ---- syncDaemonSet -----------------------------------------------------------------------------------

    def daemon_pods(self, ds: Obj) -> list[Obj]:
        """getDaemonPods: the pods the DaemonSet controls, after adoption and release."""
        return claim_pods(self.store, COMPONENT, ds, label_selector(ds["spec"].get("selector")),
                          self.index.candidates(ds), controller_ref(ds))

    def sync_daemon_set(self, key: Key) -> None:
        ds = self.dss.get(key)
        skey = f"{key[0]}/{key[1]}"
        if ds is None:
            self.expectations.delete(skey)
            return
        if ds["metadata"].get("deletionTimestamp"):
            return
        cur, old = construct_history(self, ds)
        hash_ = (cur["metadata"].get("labels") or {}).get(REVISION_LABEL, "")
        pods = self.daemon_pods(ds)
        by_node: dict[str, list[Obj]] = {}
        skip_terminal = self.profile.daemonset_skips_deleted_terminal
        for pod in pods:
            if skip_terminal and pod["metadata"].get("deletionTimestamp") and \
                    (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue  # getNodesToDaemonPods(includeDeletedTerminal=false); cleanupHistory still sees it
            node = target_node(pod)
            if node is not None:
                by_node.setdefault(node, []).append(pod)
        if not self.expectations.satisfied(skey):
            # "Only update status. Don't raise observedGeneration since controller didn't process object of
            # that generation."
            self._update_status(ds, by_node, hash_, update_generation=False)
            return
        err = self._manage(ds, by_node, hash_)
        # updateDaemonSet: rolling updates once manage's creations and deletions are observed
        if err is None and self.expectations.satisfied(skey):
            if (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
                delete, create = rolling_update(self, ds, by_node, hash_)
                err = self._sync_nodes(ds, delete, create, hash_)
        if err is None:
            cleanup_history(self, ds, old, pods)
        self._update_status(ds, by_node, hash_, update_generation=True)
        if err is not None:
            raise err

    def _manage(self, ds: Obj, by_node: dict[str, list[Obj]], hash_: str) -> ApiError | None:
        """manage / podsShouldBeOnNode per node."""
        need: list[str] = []
        delete: list[Obj] = []
        surge = allows_surge(ds, self.profile.daemonset_max_surge)
        mrs = int(ds["spec"].get("minReadySeconds") or 0)
        for name in sorted(self.nodes):
            node = self.nodes[name]
            run, cont = should_run(node, ds)
            pods = sorted(by_node.get(name, []), key=_creation_order)
            if run and not pods:
                need.append(name)
            elif cont:
                running: list[Obj] = []
                for pod in pods:
                    if pod["metadata"].get("deletionTimestamp"):
                        continue
                    if (pod.get("status") or {}).get("phase") == "Failed":
                        # failed daemon pods are killed, at a backoff per node
                        bkey = (ds["metadata"]["uid"], name)
                        delay, last = self.failed_backoff.get(bkey, (0.0, -1e18))
                        # (the end of the backoff as a time: now - last < delay could hold a rounding error
                        # after the requeue, whose delay then rounded to nothing, and loop at one instant)
                        due = last + delay
                        if self.kernel.now < due:
                            self.queue.add_after(_key(ds), due - self.kernel.now)
                            continue
                        self.failed_backoff[bkey] = (min(max(delay * 2, FAILED_BACKOFF_INITIAL),
                                                         FAILED_BACKOFF_MAX), self.kernel.now)
                        self.events.event(ds, "Warning", "FailedDaemonPod",
                                          f"Found failed daemon pod {_pod_key(pod)} on node {name}, "
                                          "will try to kill it")
                        delete.append(pod)
                        continue
                    running.append(pod)
                if not surge:
                    delete.extend(running[1:])  # keep the oldest
                elif not running:
                    if run:
                        need.append(name)        # surging: the node needs one pod not being deleted
                elif len(running) > 1:
                    delete.extend(self._surge_excess(ds, running, hash_, mrs))
            else:
                delete.extend(p for p in pods if not p["metadata"].get("deletionTimestamp"))
        # pods whose node is gone (getNodesToDaemonPods includes them; podsShouldBeOnNode never sees them)
        for name, pods in sorted(by_node.items()):
            if name not in self.nodes:
                delete.extend(p for p in pods if not p["metadata"].get("deletionTimestamp"))
        return self._sync_nodes(ds, delete, need, hash_)

    def _surge_excess(self, ds: Obj, running: list[Obj], hash_: str, mrs: int) -> list[Obj]:
        """podsShouldBeOnNode with surge: keep the oldest new and the oldest old pod; the old one goes when it
        is not ready or once the new one is available."""
        oldest_new = oldest_old = None
        delete: list[Obj] = []
        for pod in running:
            if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) == hash_:
                if oldest_new is None:
                    oldest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            delete.append(pod)
        if oldest_new is not None and oldest_old is not None and (
                not is_pod_ready(oldest_old) or is_pod_available(self.trace, oldest_new, mrs, self.kernel.now)):
            delete.append(oldest_old)
        return delete

    def _sync_nodes(self, ds: Obj, delete: list[Obj], need: list[str], hash_: str) -> ApiError | None:
        """syncNodes: creations (slow start) and deletions up to BurstReplicas, under expectations."""
        skey = _skey(ds)
        need = need[:BURST_REPLICAS]
        delete = delete[:BURST_REPLICAS]
        self.expectations.set(skey, len(need), [_pod_key(p) for p in delete])
        nodes = iter(need)
        created, err = slow_start_batch(len(need), 1, lambda: self._create_pod(ds, next(nodes), hash_))
        for _ in range(len(need) - created):
            self.expectations.creation_observed(skey)
        first = err
        for pod in delete:
            name = pod["metadata"]["name"]
            try:
                self.store.delete("Pod", pod["metadata"]["namespace"], name, by=COMPONENT)
            except ApiError as e:
                self.expectations.deletion_observed(skey, _pod_key(pod))
                if e.reason != "NotFound":
                    self.events.event(ds, "Warning", "FailedDelete", f"Error deleting: {e.message}")
                    first = first or e
                continue
            self.events.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return first

    def new_pod(self, ds: Obj, node: str, hash_: str) -> Obj:
        """util.CreatePodTemplate (tolerations, pod-template-generation and controller-revision-hash labels),
        then the node-name affinity; GetPodFromTemplate with a controller reference."""
        template = clone(ds["spec"].get("template") or {})
        tmd = template.setdefault("metadata", {})
        labels = tmd.setdefault("labels", {})
        generation = template_generation(ds)
        if generation is not None:
            labels[TEMPLATE_GENERATION_LABEL] = str(generation)
        if hash_:
            labels[REVISION_LABEL] = hash_
        spec = template.setdefault("spec", {})
        spec["tolerations"] = daemon_tolerations(spec)
        spec["affinity"] = node_name_affinity(spec.get("affinity"), node)
        return pod_from_template(template, ds)

    def _create_pod(self, ds: Obj, node: str, hash_: str) -> ApiError | None:
        return create_pod(self.store, self.events, COMPONENT, ds, self.new_pod(ds, node, hash_))

    # ---- updateDaemonSetStatus ---------------------------------------------------------------------------

    def _update_status(self, ds: Obj, by_node: dict[str, list[Obj]], hash_: str, update_generation: bool) -> None:
        """updateDaemonSetStatus / storeDaemonSetStatus: the oldest pod of each node counts."""
        desired = scheduled = mis = ready = available = updated = 0
        mrs = int(ds["spec"].get("minReadySeconds") or 0)
        generation = template_generation(ds)
        for name in sorted(self.nodes):
            run, _ = should_run(self.nodes[name], ds)
            pods = sorted(by_node.get(name, []), key=_creation_order)
            if run:
                desired += 1
                if pods:
                    scheduled += 1
                    pod = pods[0]
                    if is_pod_ready(pod):
                        ready += 1
                        if is_pod_available(self.trace, pod, mrs, self.kernel.now):
                            available += 1
                    if is_pod_updated(pod, hash_, generation):
                        updated += 1
            elif pods:
                mis += 1
        st = ds.get("status") or {}
        observed = int(ds["metadata"].get("generation") or 0) if update_generation else st.get("observedGeneration")
        new: dict[str, Any] = {"currentNumberScheduled": scheduled, "numberMisscheduled": mis,
                               "desiredNumberScheduled": desired, "numberReady": ready}
        for k, v in (("observedGeneration", observed),
                     ("updatedNumberScheduled", updated), ("numberAvailable", available),
                     ("numberUnavailable", desired - available), ("collisionCount", st.get("collisionCount")),
                     ("conditions", st.get("conditions"))):
            if v:
                new[k] = v
        if mrs > 0 and ready != available:
            self.queue.add_after(_key(ds), float(mrs))
        if st == new:
            return
        cur = ds
        for i in range(STATUS_UPDATE_RETRIES + 1):
            obj = {"apiVersion": cur.get("apiVersion"), "kind": "DaemonSet",
                   "metadata": cur["metadata"],   # the object as read: its status strategy keeps labels/annotations
                   "status": clone(new)}
            try:
                self.store.update_status(obj, by=COMPONENT)
                return
            except ApiError:
                if i >= STATUS_UPDATE_RETRIES:
                    raise
                cur = self.store.get("DaemonSet", cur["metadata"]["namespace"], cur["metadata"]["name"])







"""Garbage collector: pkg/controller/garbagecollector (graph_builder.go, garbagecollector.go, operations.go).

The graph builder keeps, from watch events only, a graph of objects by UID with their owners and
dependents. Work comes from changes, never from scans: an owner that disappears puts its dependents on the
attemptToDelete queue; an owner that gets the foregroundDeletion finalizer puts its dependents and itself
there; one that gets the orphan finalizer goes to attemptToOrphan.

- Background (the default): once the owner is gone, each dependent without another existing owner is
  deleted (propagationPolicy Background, or the policy its own finalizers ask for).
- Foreground: the owner (deletionTimestamp + foregroundDeletion) stays while dependents that block it
  (blockOwnerDeletion) exist; dependents with dependents of their own are deleted in Foreground too; the
  finalizer is removed when none is left, which removes the owner.
- Orphan: the owner's UID is removed from its dependents' ownerReferences, then the orphan finalizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import KINDS, Obj, clone
from podlife.api.store import ADDED, DELETED, DeleteOptions, Store
from podlife.controlplane.controllers.controller_utils import WorkQueue
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

COMPONENT = "generic-garbage-collector"
FOREGROUND = "foregroundDeletion"   # metav1.FinalizerDeleteDependents
ORPHAN = "orphan"                   # metav1.FinalizerOrphanDependents
_NOT_COLLECTED = frozenset({"Event"})  # kinds with no owner references worth a graph node


_NO_DEPENDENTS: frozenset[str] = frozenset()


@dataclass(eq=False, slots=True)   # one per object in the cluster: no __dict__ each
class _Node:
    """graph.go node: an object's identity, its owners as observed, the UIDs of its dependents (most objects
    have none: the shared empty frozenset until the first one comes, see add_dependent)."""
    uid: str
    kind: str
    api_version: str
    namespace: str | None
    name: str
    owners: list[Obj] = field(default_factory=list)
    dependents: set[str] | frozenset[str] = _NO_DEPENDENTS
    observed: Any = None    # the ownerReferences object ``owners`` is (None: owners is [])
    being_deleted: bool = False
    deleting_dependents: bool = False
    virtual: bool = False   # known only from an ownerReference, not yet observed

    def add_dependent(self, uid: str) -> None:
        deps = self.dependents
        if not isinstance(deps, set):
            deps = self.dependents = set()
        deps.add(uid)

    def discard_dependent(self, uid: str) -> None:
        if isinstance(self.dependents, set):
            self.dependents.discard(uid)


def _has_finalizer(obj: Obj | None, name: str) -> bool:
    return obj is not None and name in (obj["metadata"].get("finalizers") or ())


def _deletion_starts_with_finalizer(old: Obj | None, new: Obj, finalizer: str) -> bool:
    """graph_builder.go deletionStartsWithFinalizer."""
    if not new["metadata"].get("deletionTimestamp") or not _has_finalizer(new, finalizer):
        return False
    if old is None:
        return True
    return not old["metadata"].get("deletionTimestamp") or not _has_finalizer(old, finalizer)


class GarbageCollector:
    """garbagecollector.go GarbageCollector with its GraphBuilder."""

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self.profile = profile
        self.nodes: dict[str, _Node] = {}
        self.attempt_to_delete = WorkQueue(kernel, self._attempt_to_delete_worker)
        self.attempt_to_orphan = WorkQueue(kernel, self._attempt_to_orphan_worker)

    def start(self) -> None:
        kinds = [k for k in KINDS if k not in _NOT_COLLECTED]
        for kind in kinds:  # the informers' initial list
            for obj in self.store.list(kind):
                self._process_graph_change(ADDED, obj, None)
        for kind in kinds:
            self.store.watch(kind, self._on_event)

    # ---- graph_builder.go processGraphChanges ------------------------------------------------------------

    def _on_event(self, type_: str, obj: Obj, old: Obj | None) -> None:
        self._process_graph_change(type_, obj, old if type_ != ADDED else None)

    def _process_graph_change(self, type_: str, obj: Obj, old: Obj | None) -> None:
        md = obj["metadata"]
        uid = md["uid"]
        node = self.nodes.get(uid)
        if type_ == DELETED:
            if node is not None:
                self._remove_existing(node)
            return
        refs = md.get("ownerReferences")
        if node is None:
            owners = refs or []   # (stored data is never changed in place: kept as observed)
            node = _Node(uid, obj["kind"], obj.get("apiVersion") or KINDS[obj["kind"]].api_version,
                         md.get("namespace"), md["name"], owners=owners,
                         being_deleted=bool(md.get("deletionTimestamp")), observed=refs)
            self.nodes[uid] = node
            self._add_dependent_to_owners(node, owners)
            self._process_transitions(old, obj, node)
            return
        if node.virtual:
            # markObserved: the object a reference pointed at has been seen
            node.virtual = False
            node.kind, node.name, node.namespace = obj["kind"], md["name"], md.get("namespace")
            node.api_version = obj.get("apiVersion") or node.api_version
        # a revision shares the ownerReferences a write left alone: then there is nothing to compare
        if refs is not node.observed or refs is None:
            owners = refs or []   # (stored data is never changed in place: kept as observed)
            added, removed, changed = _references_diffs(node.owners, owners)
            if added or removed or changed:
                self._add_unblocked_owners_to_delete_queue(removed, changed)
                node.owners = owners
                self._add_dependent_to_owners(node, added)
                for ref in removed:
                    owner = self.nodes.get(ref.get("uid", ""))
                    if owner is not None:
                        owner.discard_dependent(uid)
            node.observed = refs
        if md.get("deletionTimestamp"):
            node.being_deleted = True
        if old is not None and md.get("finalizers") is old["metadata"].get("finalizers") and \
                bool(md.get("deletionTimestamp")) == bool(old["metadata"].get("deletionTimestamp")):
            return   # neither the deletion nor a finalizer is new (a status write): no deletion starts
        self._process_transitions(old, obj, node)

    def _add_dependent_to_owners(self, node: _Node, refs: list[Obj]) -> None:
        """addDependentToOwners: an owner not in the graph becomes a virtual node, checked at once."""
        for ref in refs:
            ouid = ref.get("uid", "")
            owner = self.nodes.get(ouid)
            if owner is None:
                kind = ref.get("kind", "")
                namespaced = KINDS[kind].namespaced if kind in KINDS else True
                owner = _Node(ouid, kind, ref.get("apiVersion", ""), node.namespace if namespaced else None,
                              ref.get("name", ""), virtual=True)
                self.nodes[ouid] = owner
                self.attempt_to_delete.add(ouid)
            owner.add_dependent(node.uid)

    def _add_unblocked_owners_to_delete_queue(self, removed: list[Obj], changed: list[tuple[Obj, Obj]]) -> None:
        """A dependent that stops blocking an owner being deleted in the foreground lets it go on."""
        for ref in removed:
            if ref.get("blockOwnerDeletion"):
                self._enqueue_if_deleting_dependents(ref.get("uid", ""))
        for old_ref, new_ref in changed:
            if old_ref.get("blockOwnerDeletion") and not new_ref.get("blockOwnerDeletion"):
                self._enqueue_if_deleting_dependents(new_ref.get("uid", ""))

    def _enqueue_if_deleting_dependents(self, uid: str) -> None:
        owner = self.nodes.get(uid)
        if owner is not None and owner.deleting_dependents:
            self.attempt_to_delete.add(uid)

    def _process_transitions(self, old: Obj | None, new: Obj, node: _Node) -> None:
        if _deletion_starts_with_finalizer(old, new, ORPHAN):
            self.attempt_to_orphan.add(node.uid)
            return
        if _deletion_starts_with_finalizer(old, new, FOREGROUND):
            node.deleting_dependents = True
            node.being_deleted = True
            for dep in sorted(node.dependents):
                self.attempt_to_delete.add(dep)
            self.attempt_to_delete.add(node.uid)

    def _remove_existing(self, node: _Node) -> None:
        """A deleted object (observed or virtual): out of the graph; its dependents are checked, and its owners
        that wait for their dependents' deletion are looked at again."""
        self.nodes.pop(node.uid, None)
        for ref in node.owners:
            owner = self.nodes.get(ref.get("uid", ""))
            if owner is not None:
                owner.discard_dependent(node.uid)
        for dep in sorted(node.dependents):
            self.attempt_to_delete.add(dep)
        for ref in node.owners:
            self._enqueue_if_deleting_dependents(ref.get("uid", ""))

    # ---- garbagecollector.go attemptToDeleteItem ---------------------------------------------------------

    def _attempt_to_delete_worker(self, uid: str) -> None:
        node = self.nodes.get(uid)
        if node is None:
            self.attempt_to_delete.forget(uid)
            return
        try:
            requeue = self._attempt_to_delete_item(node)
        except ApiError:
            requeue = True
        if requeue or (node.virtual and node.kind in KINDS and uid in self.nodes):
            # an error, or a virtual node whose object exists but has not been observed yet
            self.attempt_to_delete.add_rate_limited(uid)
        else:
            self.attempt_to_delete.forget(uid)

    def _get(self, node: _Node) -> Obj | None:
        if node.kind not in KINDS:
            return None
        return self.store.try_get(node.kind, node.namespace, node.name)

    def _attempt_to_delete_item(self, item: _Node) -> bool:
        """Returns True when the item must be retried."""
        if item.being_deleted and not item.deleting_dependents:
            return False  # a one-way trip to deletion: its dependents are handled when it is gone
        if item.kind not in KINDS:
            return False  # an owner kind this API server does not serve: never resolved, never collected
        latest = self._get(item)
        if latest is None or latest["metadata"]["uid"] != item.uid:
            if item.virtual:
                self._remove_existing(item)  # enqueueVirtualDeleteEvent
            return False
        if item.deleting_dependents:
            self._process_deleting_dependents_item(item)
            return False
        refs = latest["metadata"].get("ownerReferences") or []
        if not refs:
            return False
        solid, dangling, waiting = self._classify_references(item, refs)
        if solid:
            if not dangling and not waiting:
                return False
            gone = {r.get("uid") for r in dangling + waiting}
            self._patch_owner_refs(latest, lambda r: r.get("uid") not in gone)
            return False
        if waiting and item.dependents:
            for dep_uid in sorted(item.dependents):
                dep = self.nodes.get(dep_uid)
                if dep is not None and dep.deleting_dependents:
                    # a possible cycle: stop blocking the owners before deleting in the foreground
                    self._patch_owner_refs(latest, None)
                    break
            self._delete(item, latest, "Foreground")
            return False
        if _has_finalizer(latest, ORPHAN):
            policy = "Orphan"
        elif _has_finalizer(latest, FOREGROUND):
            policy = "Foreground"
        else:
            policy = "Background"
        self._delete(item, latest, policy)
        return False

    def _classify_references(self, item: _Node, refs: list[Obj]) -> tuple[list[Obj], list[Obj], list[Obj]]:
        """classifyReferences: solid owners, dangling ones (absent, or another object with that name), and
        those waiting for their dependents' deletion (foregroundDeletion)."""
        solid: list[Obj] = []
        dangling: list[Obj] = []
        waiting: list[Obj] = []
        for ref in refs:
            kind = ref.get("kind", "")
            if kind not in KINDS:
                solid.append(ref)  # isDangling cannot resolve the resource: the item is left alone
                continue
            if KINDS[kind].namespaced and not item.namespace:
                dangling.append(ref)  # a namespaced owner of a cluster-scoped object is invalid
                continue
            owner = self.store.try_get(kind, item.namespace if KINDS[kind].namespaced else None, ref.get("name", ""))
            if owner is None or owner["metadata"]["uid"] != ref.get("uid"):
                dangling.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and _has_finalizer(owner, FOREGROUND):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _process_deleting_dependents_item(self, item: _Node) -> None:
        """processDeletingDependentsItem: remove foregroundDeletion once no dependent blocks the owner."""
        blocking = []
        for dep_uid in sorted(item.dependents):
            dep = self.nodes.get(dep_uid)
            if dep is None:
                continue
            if any(r.get("uid") == item.uid and r.get("blockOwnerDeletion") for r in dep.owners):
                blocking.append(dep)
        if not blocking:
            self._remove_finalizer(item, FOREGROUND)
            return
        for dep in blocking:
            if not dep.deleting_dependents:
                self.attempt_to_delete.add(dep.uid)

    # ---- attemptToOrphan ----------------------------------------------------------------------------------

    def _attempt_to_orphan_worker(self, uid: str) -> None:
        owner = self.nodes.get(uid)
        if owner is None:
            return
        try:
            for dep_uid in sorted(owner.dependents):
                dep = self.nodes.get(dep_uid)
                if dep is None:
                    continue
                latest = self._get(dep)
                if latest is None or latest["metadata"]["uid"] != dep.uid:
                    continue  # orphanDependents ignores dependents already gone
                self._patch_owner_refs(latest, lambda r: r.get("uid") != owner.uid)
            self._remove_finalizer(owner, ORPHAN)
        except ApiError:
            self.attempt_to_orphan.add_rate_limited(uid)
        else:
            self.attempt_to_orphan.forget(uid)

    # ---- operations.go -----------------------------------------------------------------------------------

    def _delete(self, item: _Node, latest: Obj, policy: str) -> None:
        """deleteObject: a DELETE with a UID precondition and the propagation policy."""
        try:
            self.store.delete(item.kind, item.namespace, item.name, by=COMPONENT,
                              options=DeleteOptions(uid=item.uid, propagation_policy=policy))
        except ApiError as e:
            if e.reason not in ("NotFound", "Conflict"):
                raise

    def _patch_owner_refs(self, latest: Obj, keep: object) -> None:
        """A patch of ownerReferences: keep(ref) filters them (deleteOwnerRefStrategicMergePatch); keep None
        sets blockOwnerDeletion false on all (unblockOwnerReferencesStrategicMergePatch)."""
        new = clone(latest)
        refs = list(new["metadata"].get("ownerReferences") or ())
        if keep is None:
            for r in refs:
                r["blockOwnerDeletion"] = False
        else:
            refs = [r for r in refs if keep(r)]  # type: ignore[operator]
        if refs:
            new["metadata"]["ownerReferences"] = refs
        else:
            new["metadata"].pop("ownerReferences", None)
        try:
            self.store.update(new, by=COMPONENT, verb="patch")
        except ApiError as e:
            if e.reason != "NotFound":
                raise

    def _remove_finalizer(self, item: _Node, finalizer: str) -> None:
        """removeFinalizer: read the latest object, drop the finalizer, write it back (the API server deletes an
        object that is being deleted and has no finalizer left)."""
        latest = self._get(item)
        if latest is None or latest["metadata"]["uid"] != item.uid or not _has_finalizer(latest, finalizer):
            return
        new = clone(latest)
        fins = [f for f in new["metadata"].get("finalizers") or () if f != finalizer]
        if fins:
            new["metadata"]["finalizers"] = fins
        else:
            new["metadata"].pop("finalizers", None)
        self.store.update(new, by=COMPONENT, verb="patch")


def _references_diffs(old: list[Obj], new: list[Obj]) -> tuple[list[Obj], list[Obj], list[tuple[Obj, Obj]]]:
    """referencesDiffs: by UID, the owner references added, removed and changed."""
    old_by = {r.get("uid"): r for r in old}
    new_by = {r.get("uid"): r for r in new}
    added = [r for u, r in new_by.items() if u not in old_by]
    removed = [r for u, r in old_by.items() if u not in new_by]
    changed = [(old_by[u], r) for u, r in new_by.items() if u in old_by and old_by[u] != r]
    return added, removed, changed

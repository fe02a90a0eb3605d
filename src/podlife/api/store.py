"""The API server's object store: versioned objects, per-kind strategies, graceful deletion and watch.

Components talk to each other only through this store, as upstream components talk only through the API
server. Objects handed out are the stored dicts: callers treat them as read-only and write back a modified
``clone``; the store takes ownership of what it is given.

Writes are traced here (``api``, ``terminating``, ``deleted``) together with what changed in a pod's or
node's status (``phase``, ``condition``, ``container``, ``taint``), so the trace shows the API's view.
"""

from __future__ import annotations

import builtins
from bisect import bisect_left
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

import orjson

from podlife.api import errors, metatime, validation
from podlife.api.defaults import apply_defaults
from podlife.api.names import random_suffix
from podlife.api.meta import KINDS, KindInfo, Obj, builtin_kind_info, clone, custom_kind_info, ref
from podlife.api.packed import PackedObjects, key_order
from podlife.api.speckey import bound_spec, collect_superseded, share_spec
from podlife.api.gozero import fill_status
from podlife.api.registry import strategy_for
from podlife.api.registry import ephemeral
from podlife.api.registry.csr import prepare_approval, validate_approval
from podlife.api.registry.generic import keep_written_metadata
from podlife.api.revisions import revision, same, unchanged
from podlife.api.selectors import once
from podlife.api.statusdiff import status_records
from podlife.engine import Kernel
from podlife.engine.slices import pause
from podlife.trace.recorder import Trace

if TYPE_CHECKING:
    from podlife.cluster.contracts import StoreOptions
    from podlife.versions import Profile

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

Handler = Callable[[str, Obj, "Obj | None"], None]
Key = tuple[str, str]  # (namespace or "", name)


def _group(info: KindInfo) -> str:
    return info.api_version.rpartition("/")[0]


def _resource(info: KindInfo) -> str:
    """The qualified resource of API errors: schema.GroupResource.String() is ``resource.group`` outside the core
    group (deployments.apps "web" not found), as staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go
    reports them."""
    g = _group(info)
    return f"{info.resource}.{g}" if g else info.resource


# etcd key prefixes that differ from the resource name (pkg/registry/core/node/storage: "minions",
# pkg/registry/core/service/storage: "services/specs")
_ETCD_PREFIX = {"Node": "minions", "Service": "services/specs"}


def _uid_precondition_failed(info: KindInfo, namespace: str | None, name: str, want: str, have: str) -> errors.ApiError:
    """A storage UID precondition failure (staging/src/k8s.io/apiserver/pkg/storage/interfaces.go
    Preconditions.Check → NewInvalidObjError, errors.go StorageError.Error), turned into a Conflict by
    staging/src/k8s.io/apiserver/pkg/storage/errors/storage.go InterpretUpdateError."""
    prefix = _ETCD_PREFIX.get(info.kind, info.resource)
    key = f"/registry/{prefix}/{namespace}/{name}" if info.namespaced else f"/registry/{prefix}/{name}"
    return errors.conflict(_resource(info), name, f"StorageError: invalid object, Code: 4, Key: {key}, "
                           "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: "
                           f"{want}, UID in object meta: {have}")


def _kind_resource(info: KindInfo) -> str:
    """staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go BeforeDelete reports precondition failures against
    schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}: ``Pod``, ``Deployment.apps``."""
    g = _group(info)
    return f"{info.kind}.{g}" if g else info.kind


PACKED_KINDS = ("Event",)
# the kube-apiserver's NamespaceLifecycle plugin: metav1.NamespaceDefault, NamespaceSystem, NamespacePublic
IMMORTAL_NAMESPACES = frozenset(("default", "kube-system", "kube-public"))
SHARED_PARTS = 4096   # distinct specs (labels, owner references) kept for sharing (Store._share)


@dataclass(slots=True)   # its fields are read for every watch event a watcher is handed
class Watch:
    """A watcher of one kind: its handler and what it selects."""

    kind: str
    handler: Handler
    node: str | None = None            # pods: only those bound to this node (spec.nodeName field selector)
    namespace: str | None = None
    active: bool = True

    def stop(self) -> None:
        self.active = False


class _HistoryEntry(NamedTuple):   # one per write: a tuple costs less to make than a dataclass
    rv: int
    type: str
    kind: str
    obj: Obj
    old: Obj | None


# _HistoryEntry(*fields) without the Python __new__ a NamedTuple's constructor runs
_history_entry = partial(tuple.__new__, _HistoryEntry)


@dataclass
class DeleteOptions:
    """A delete's options (metav1.DeleteOptions): grace period, preconditions, propagation."""

    grace_period_seconds: int | None = None
    uid: str | None = None                 # precondition
    resource_version: str | None = None    # precondition
    propagation_policy: str | None = None  # Background | Foreground | Orphan


@dataclass
class Store:
    """The API server's storage: objects by kind and key, resourceVersions, watches and the write path."""

    kernel: Kernel
    trace: Trace
    options: StoreOptions   # the version, admission chain and hooks: given whole, never set from outside
    kinds: dict[str, KindInfo] = field(init=False)
    _objects: dict[str, dict[Key, Obj]] = field(default_factory=lambda: defaultdict(dict))
    _rv: int = 0
    _history: deque[_HistoryEntry] = field(init=False)
    _watches: dict[str, list[Watch]] = field(default_factory=dict)
    _node_watches: dict[str, list[Watch]] = field(default_factory=dict)
    # events to deliver: (a watch, or the informers of a kind, type, object, old object)
    _pending: list[tuple[Watch | tuple[Watch, ...], str, Obj, Obj | None]] = field(default_factory=list)
    # per kind: its watches when every one is an informer (the whole kind), else None; see _deliver
    _informers: dict[str, tuple[Watch, ...] | None] = field(default_factory=dict)
    _flush_scheduled: bool = False
    _uid_rng: Any = None
    _materializers: dict[tuple[str, str, str], Callable[[Obj], None]] = field(default_factory=dict)
    _materialized_kinds: set[str] = field(default_factory=set)   # the kinds of the materializers' objects
    _materializing: bool = False
    # keys in order per kind, as etcd keeps them: new keys are merged in and removed ones dropped at the next list
    _sorted: dict[str, list[Key]] = field(default_factory=dict)
    _unsorted: dict[str, list[Key]] = field(default_factory=dict)
    _removed: dict[str, int] = field(default_factory=dict)
    # pods by spec.nodeName, the field the kubelet lists and watches by (the watch cache's index)
    _pods_by_node: dict[str, dict[Key, None]] = field(default_factory=dict)
    _shared: dict[str, dict[bytes, Any]] = field(default_factory=dict)   # see _share
    log: Any = field(init=False)   # podlife.api.storage.SqliteLog: every revision is written there too (up)
    skipped: list[str] = field(default_factory=list)   # objects restore() did not load, and why
    # caches the controllers' informers share, by name (a shared informer factory's: controller_utils.shared_pod_index)
    informer_caches: dict[str, Any] = field(default_factory=dict)
    # podlife up: records the managedFields of the model's own creates and updates (podlife.apiserver.managers)
    manage: Callable[[str, Obj | None, Obj, str, str, str], None] | None = None
    # writes so far per kind: a reader's cache of a kind is current while its count has not moved
    writes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # what a registry strategy keeps per store, by name (the Service one's IP and port allocators)
    strategy_state: dict[str, Any] = field(default_factory=dict)
    _admission: tuple[Any, ...] = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.options.log
        self._history = deque(maxlen=self.options.history_size)
        self._uid_rng = self.kernel.rng("apiserver")
        self.kinds = dict(KINDS)
        for k in KINDS:
            self._objects[k] = PackedObjects() if k in PACKED_KINDS else {}  # type: ignore[assignment]
        self._admission = tuple(self.options.admission(self))

    @property
    def profile(self) -> Profile:
        """The version's behaviour: field handling in the registry strategies, validation options."""
        return self.options.profile

    @property
    def admission(self) -> tuple[Any, ...]:
        """The apiserver's mutating admission chain, run by the registry on create (podlife.api.admission)."""
        return self._admission

    @property
    def lease_observers(self) -> list[Callable[[str], None]]:
        """Who is told when a kubelet's computed Lease renewals stop or resume (NodeStatus.renewals_changed)."""
        return self.options.lease_observers

    # ---- reads -------------------------------------------------------------------------------------

    def add_materializer(self, kind: str, namespace: str | None, name: str, fn: Callable[[Obj], None]) -> None:
        """Register ``fn(obj)`` to bring computed state (a healthy kubelet's Lease renewals) up to date in
        one stored object just before anyone reads it; ``fn`` writes through ``update(..., quiet=True)``."""
        self._materializers[(kind, namespace or "", name)] = fn
        self._materialized_kinds.add(kind)

    @overload
    def _fresh(self, kind: str, obj: Obj) -> Obj: ...
    @overload
    def _fresh(self, kind: str, obj: Obj | None) -> Obj | None: ...

    def _fresh(self, kind: str, obj: Obj | None) -> Obj | None:
        if obj is None or kind not in self._materialized_kinds or self._materializing:
            return obj
        md = obj["metadata"]
        key = (md.get("namespace", ""), md["name"])
        fn = self._materializers.get((kind, *key))
        if fn is None:
            return obj
        self._materializing = True
        try:
            fn(obj)
        finally:
            self._materializing = False
        return self._objects[kind].get(key, obj)

    def get(self, kind: str, namespace: str | None, name: str) -> Obj:
        obj = self._fresh(kind, self._objects[kind].get((namespace or "", name)))
        if obj is None:
            raise errors.not_found(_resource(self._info(kind)), name)
        return obj

    def try_get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        return self._fresh(kind, self._objects[kind].get((namespace or "", name)))

    def list(self, kind: str, namespace: str | None = None,
             where: Callable[[Obj], bool] | None = None, *, node: str | None = None) -> list[Obj]:
        """Objects of a kind in key order (namespace, name), as etcd returns them; ``node`` lists only the pods
        bound to that node (the field selector spec.nodeName, served from an index)."""
        items = self._objects[kind]
        if not items:
            return []   # admission and controllers list kinds most clusters have none of, once per pod write
        if node is not None:
            keys = sorted(k for k in self._pods_by_node.get(node, ()) if namespace is None or k[0] == namespace)
        elif namespace is None:
            keys = self._keys(kind)
        else:
            # the keys are sorted by (namespace, name): a namespace's are one run, found by bisection rather
            # than a scan of the kind (as etcd reads a namespace's range of keys); a namespace holds no NUL, so
            # (namespace + NUL,) sorts after every key of the namespace and before any other namespace's
            every = self._keys(kind)
            keys = every[bisect_left(every, (namespace,)):bisect_left(every, (namespace + "\0",))]
        out = [self._fresh(kind, items[k]) for k in keys] if kind in self._materialized_kinds else \
            [items[k] for k in keys]
        return [o for o in out if where(o)] if where else out

    def _keys(self, kind: str) -> builtins.list[Key]:
        """The kind's keys in order. Keys added since the last call are sorted in (a merge of two sorted runs),
        removed ones dropped, so a list costs the number of objects, not a sort of them."""
        keys = self._sorted.setdefault(kind, [])
        added = self._unsorted.pop(kind, None)
        if self._removed.pop(kind, 0):
            items = self._objects[kind]
            keys[:] = [k for k in keys if k in items]
            if added:
                kept = set(keys)   # a key removed and created again is in both
                added = [k for k in dict.fromkeys(added) if k in items and k not in kept]
        if added:
            keys.extend(sorted(added, key=key_order))
            keys.sort()   # two sorted runs: merged, comparing only where they meet
        return keys

    def count(self, kind: str) -> int:
        return len(self._objects[kind])

    @property
    def resource_version(self) -> int:
        return self._rv

    def all_objects(self) -> builtins.list[Obj]:
        """Every object, kinds in table order, then by key (for the final report)."""
        return list(self.iter_objects())

    @overload
    def iter_objects(self, encoded: Literal[False] = False) -> Iterator[Obj]: ...
    @overload
    def iter_objects(self, encoded: bool) -> Iterator[Obj | bytes]: ...

    def iter_objects(self, encoded: bool = False) -> Iterator[Obj | bytes]:
        """all_objects one at a time (a streamed report holds only the one it writes). ``encoded``: the kinds
        kept packed come as their compact JSON bytes, for a writer of compact JSON."""
        kinds = list(KINDS) + sorted(k for k in self.kinds if k not in KINDS)
        for kind in kinds:
            items = self._objects[kind]
            get = items.encoded if encoded and isinstance(items, PackedObjects) else items.__getitem__
            for k in list(self._keys(kind)):
                yield get(k)

    def _validate(self, check: Callable[[], builtins.list[Any]]) -> builtins.list[Any]:
        """``check()`` with the version's rules set for validation, for one write."""
        token = validation.set_rules(self.profile)
        try:
            return check()
        finally:
            validation.reset_rules(token)

    def _info(self, kind: str) -> KindInfo:
        return self.kinds.get(kind) or builtin_kind_info(kind, "v1")

    def _served(self, kind: str, api_version: Any) -> KindInfo | None:
        """A kind outside podlife's model: a custom resource of a stored CustomResourceDefinition, or a
        built-in kind the version serves (``served``, the cluster's discovery). Learned on first create."""
        if not isinstance(api_version, str):
            return None
        info = None
        for crd in self.list("CustomResourceDefinition"):
            info = custom_kind_info(crd, kind, api_version)
            if info is not None:
                break
        if info is None and self.options.served is not None:
            info = self.options.served(kind, api_version)
        if info is not None:
            self.kinds[kind] = info
        return info

    # ---- writes ------------------------------------------------------------------------------------

    def create(self, obj: Obj, by: str, dry_run: bool = False, uids: Any = None, webhooks: Any = None) -> Obj:
        """``uids``: the random source of the UID when not the API server's shared one (a component's own
        stream, so that objects added to every cluster leave the UIDs and names of the others as they were).
        ``webhooks``: the request's admission webhooks (podlife.apiserver.webhooks), called after the built-in
        mutating plugins and after validation, as upstream's create handler orders admission."""
        kind = obj.get("kind", "")
        info = self.kinds.get(kind) or self._served(kind, obj.get("apiVersion"))
        if info is None:
            raise errors.ApiError(400, "BadRequest", f'no matches for kind "{kind}"')
        strategy = strategy_for(self._info(kind))
        md = obj.setdefault("metadata", {})
        if info.namespaced:
            md.setdefault("namespace", "default")
            ns = self._objects["Namespace"].get(("", md["namespace"]))
            if ns is None and kind != "Namespace":
                raise errors.not_found("namespaces", md["namespace"])
            if ns is not None and ns["metadata"].get("deletionTimestamp") and not dry_run:
                # plugin/pkg/admission/namespace/lifecycle: no new content in a namespace being deleted
                # (admission.NewForbidden names the object by its generateName before a name is drawn, else
                # "Unknown"), with a NamespaceTerminating cause
                who = md.get("name") or md.get("generateName") or "Unknown"
                raise errors.ApiError(403, "Forbidden", f'{_resource(info)} "{who}" is forbidden: unable to create new '
                                                        f"content in namespace {md['namespace']} because it is being "
                                                        "terminated",
                                      [errors.FieldError("metadata.namespace", "NamespaceTerminating",
                                                         f"namespace {md['namespace']} is being terminated")],
                                      name=who)
        else:
            md.pop("namespace", None)
        if not md.get("name") and md.get("generateName"):
            md["name"] = self._generate_name(kind, md.get("namespace", ""), md["generateName"])
        if self.options.manage is not None:
            # the field manager sees the object as decoded (the scheme's defaults set), before admission and
            # the strategy fill server-set fields (handlers/create.go: UpdateNoErrors before rest.Create)
            apply_defaults(obj, self.profile)
            self.options.manage(kind, None, obj, by, "", self.trace.timestamp())
        strategy.prepare_for_create(obj, self)
        if webhooks is not None:
            webhooks.admit(obj, None)
            md = obj["metadata"]
        causes = self._validate(lambda: strategy.validate(obj))
        if causes:
            raise errors.invalid(kind, md.get("name", ""), causes)
        fill_status(obj, self.profile)
        key = (md.get("namespace", ""), md["name"])
        if key in self._objects[kind]:
            raise errors.already_exists(_resource(self._info(kind)), md["name"])
        if dry_run:
            if webhooks is not None:
                webhooks.check(obj, None)
            return obj
        # a strategy that fills the UID before validation (FillObjectMetaSystemFields; the Job strategy needs it)
        md["uid"] = md["uid"] if getattr(strategy, "fills_uid", False) else self._new_uid(uids)
        md["creationTimestamp"] = self.trace.timestamp()
        if info.has_generation:
            md["generation"] = 1
        md.pop("deletionTimestamp", None)
        md.pop("deletionGracePeriodSeconds", None)
        if webhooks is not None:
            # generic/registry/store.go Create: the validating webhooks see the object as it will be stored
            webhooks.check(obj, None)
        self._commit(kind, key, None, obj, "create", by)
        return obj

    def create_event(self, obj: Obj, by: str) -> Obj:
        """``create`` for an Event the model's own recorder made (podlife.api.events), with what cannot change
        such an Event left out. Kept: the namespace's existence and lifecycle, the name conflict, the UID
        drawn as ``create`` draws it, the field manager and the commit. Left out, because each is a no-op on
        it: the strategy's PrepareForCreate (apiVersion and namespace are set, Events have no defaults, no
        pod template, no status subresource, and no admission plugin looks at Events: ResourceQuota skips
        them, the others admit only Pods and PersistentVolumeClaims); validation (legacyValidateEvent of an
        Event without eventTime checks only that the involved object's namespace is the Event's, or empty
        in "default", which the recorder guarantees, and the namespace's name, a stored Namespace's)."""
        md = obj["metadata"]
        ns = self._objects["Namespace"].get(("", md["namespace"]))
        if ns is None:
            raise errors.not_found("namespaces", md["namespace"])
        if ns["metadata"].get("deletionTimestamp"):
            return self.create(obj, by=by)   # the Forbidden of a namespace being deleted, worded by create
        if self.options.manage is not None:
            self.options.manage("Event", None, obj, by, "", self.trace.timestamp())
        key = (md["namespace"], md["name"])
        if key in self._objects["Event"]:
            raise errors.already_exists(_resource(self.kinds["Event"]), md["name"])
        md["uid"] = self._new_uid()
        md["creationTimestamp"] = self.trace.timestamp()
        self._commit("Event", key, None, obj, "create", by)
        return obj

    def update(self, obj: Obj, by: str, subresource: str | None = None, verb: str = "update",
               extra: dict[str, Any] | None = None, quiet: bool = False, dry_run: bool = False,
               webhooks: Any = None) -> Obj:
        """Replace an object (``subresource="status"`` writes only its status), with optimistic concurrency.
        ``dry_run``: everything but the write (the API's dryRun=All). ``webhooks``: as ``create``'s."""
        kind = obj["kind"]
        info = self.kinds[kind]
        md = obj["metadata"]
        key = (md.get("namespace", "") if info.namespaced else "", md["name"])
        old = self._objects[kind].get(key)
        if old is None:
            raise errors.not_found(_resource(self._info(kind)), md["name"])
        rv = md.get("resourceVersion")
        if rv is not None and rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(_resource(self._info(kind)), md["name"],
                                  "the object has been modified; please apply your changes to the latest "
                                  "version and try again")
        if md.get("uid") not in (None, old["metadata"]["uid"]):
            raise _uid_precondition_failed(self.kinds[kind], key[0], md["name"], md["uid"], old["metadata"]["uid"])
        strategy = strategy_for(self._info(kind))
        if self.options.manage is not None:
            apply_defaults(obj, self.profile)   # as decoded (handlers/update.go)
            self.options.manage(kind, old, obj, by, subresource or "", self.trace.timestamp())
        if subresource == "status":
            new = revision(old)
            new["status"] = obj.get("status", {})
            strategy.prepare_for_status_update(new, old, obj)
        elif subresource == "approval":
            new = revision(old)
            prepare_approval(new, old, obj, self.trace.timestamp())
            keep_written_metadata(kind, new, obj)
        elif subresource == "ephemeralcontainers":
            new = revision(old)
            ephemeral.prepare(new, old, obj)
        elif subresource == "finalize":
            # namespaces/finalize: only spec.finalizers changes (pkg/registry/core/namespace namespaceFinalizeStrategy)
            new = clone(old)
            new.setdefault("spec", {})["finalizers"] = list((obj.get("spec") or {}).get("finalizers") or ())
        else:
            new = obj
            strategy.prepare_for_update(new, old, self)
            if webhooks is not None:
                webhooks.admit(new, old)
            # identity and server-owned metadata survive any update
            for f in ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
                if f in old["metadata"]:
                    new["metadata"][f] = old["metadata"][f]
                else:
                    new["metadata"].pop(f, None)
            if info.has_generation:
                gen = old["metadata"].get("generation", 1)
                bump = new.get("spec") != old.get("spec")
                if kind == "Deployment":
                    # pkg/registry/apps/deployment/strategy.go PrepareForUpdate: annotation updates bump the
                    # generation too (they are copied to the ReplicaSets); Semantic.DeepEqual: nil == {}
                    bump = bump or (new["metadata"].get("annotations") or {}) != \
                        (old["metadata"].get("annotations") or {})
                new["metadata"]["generation"] = gen + 1 if bump else gen
            elif "generation" in old["metadata"]:
                # pods carry a generation from 1.33 (KEP-5067): podStrategy.PrepareForUpdate bumps it when the
                # spec changes
                gen = old["metadata"]["generation"]
                bump = kind == "Pod" and new.get("spec") != old.get("spec")
                new["metadata"]["generation"] = gen + 1 if bump else gen
        if subresource is not None and webhooks is not None:
            webhooks.admit(new, old)
        if subresource == "status":
            causes = []
        elif subresource == "approval":
            causes = validate_approval(new)
        elif subresource == "ephemeralcontainers":
            causes = self._validate(lambda: ephemeral.validate(new, old))
        else:
            causes = self._validate(lambda: strategy.validate_update(new, old))
        if causes:
            raise errors.invalid(kind, md["name"], causes)
        fill_status(new, self.profile)
        if webhooks is not None:
            webhooks.check(new, old)
        if dry_run:
            return new
        nmd = new["metadata"]
        if subresource == "finalize" and nmd.get("deletionTimestamp") and not nmd.get("finalizers") \
                and not new["spec"]["finalizers"]:
            # pkg/registry/core/namespace/storage ShouldDeleteNamespaceDuringUpdate: finalized, so purged
            self.trace.emit("api", verb=verb, object=ref(new), by=by, subresource=subresource)
            self._remove(kind, key, by, record_api=False)
            return new
        # staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go ShouldDeleteDuringUpdate: an update
        # leaving no finalizers on an object being deleted with no (or a 0 s) grace period is not written: the
        # object is deleted as stored (deleteWithoutFinalizers). With grace left (a pod still terminating) it is
        # an ordinary update.
        omd = old["metadata"]
        # (a namespace also needs its spec.finalizers gone: pkg/registry/core/namespace/storage
        # ShouldDeleteNamespaceDuringUpdate)
        if not nmd.get("finalizers") and omd.get("deletionTimestamp") and not omd.get("deletionGracePeriodSeconds") \
                and not (kind == "Namespace" and (new.get("spec") or {}).get("finalizers")):
            if kind not in ("Event", "Lease"):
                rec: dict[str, Any] = {"verb": verb, "object": ref(new), "by": by}
                if subresource:
                    rec["subresource"] = subresource
                rec.update(extra or {})
                self.trace.emit("api", **rec)
            self._remove(kind, key, by, record_api=False)
            return new
        # a subresource write: the entries made for what was sent
        if self.options.manage is not None and new is not obj:
            new["metadata"]["managedFields"] = obj["metadata"].get("managedFields")
            if new["metadata"]["managedFields"] is None:
                del new["metadata"]["managedFields"]
        if unchanged(old, new):
            # staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go GuaranteedUpdate: an update whose encoded
            # object equals the stored bytes is not written (no new resourceVersion, no watch event, no audit of
            # a change); the stored object is the answer
            return old
        self._commit(kind, key, old, new, verb, by, subresource, extra, quiet)
        return new

    def update_status(self, obj: Obj, by: str) -> Obj:
        return self.update(obj, by, subresource="status")

    def bind(self, namespace: str, name: str, node: str, by: str, uid: str | None = None) -> Obj:
        """pods/binding: sets spec.nodeName once (pkg/registry/core/pod/storage/storage.go assignPod and
        setPodHostAndAnnotations)."""
        pod = self.get("Pod", namespace, name)
        if uid and pod["metadata"]["uid"] != uid:
            raise _uid_precondition_failed(KINDS["Pod"], namespace, name, uid, pod["metadata"]["uid"])
        # assignPod: errors of the update function are reported as a Conflict on pods/binding
        if pod["metadata"].get("deletionTimestamp"):
            raise errors.conflict("pods/binding", name, f"pod {name} is being deleted, cannot be assigned to a host")
        if pod["spec"].get("nodeName"):
            raise errors.conflict("pods/binding", name, f"pod {name} is already assigned to node "
                                  f'"{pod["spec"]["nodeName"]}"')
        new = revision(pod)
        new["spec"] = bound_spec(pod["spec"], node)
        new["status"] = dict(pod["status"])
        # setPodHostAndAnnotations: podutil.UpdatePodCondition(PodScheduled=True); the transition time is kept
        # when the status does not change
        cond: dict[str, Any] = {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                "lastTransitionTime": self.trace.timestamp()}
        conds = list(new["status"].get("conditions") or ())
        for i, c in enumerate(conds):
            if c.get("type") == "PodScheduled":
                if c.get("status") == "True":
                    cond["lastTransitionTime"] = c.get("lastTransitionTime")
                conds[i] = cond
                break
        else:
            conds.append(cond)
        new["status"]["conditions"] = conds
        key = (namespace, name)
        self._commit("Pod", key, pod, new, "bind", by, extra={"node": node})
        return new

    def delete(self, kind: str, namespace: str | None, name: str, by: str,
               options: DeleteOptions | None = None) -> Obj | None:
        """Graceful deletion as staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go BeforeDelete and
        generic/registry/store.go Delete / updateForGracefulDeletionAndFinalizers do it. Returns the object if it
        still exists afterwards."""
        opts = options or DeleteOptions()
        if kind == "Namespace" and name in IMMORTAL_NAMESPACES:
            # staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go: Admit refuses to
            # delete the namespaces the API server keeps (before the object is looked up)
            raise errors.ApiError(403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may not be '
                                                    "deleted")
        info = self.kinds[kind]
        key = (namespace or "" if info.namespaced else "", name)
        old = self._objects[kind].get(key)
        if old is None:
            raise errors.not_found(_resource(self._info(kind)), name)
        omd = old["metadata"]
        # BeforeDelete checks the preconditions first, reported against the kind (GroupResource{Resource: Kind})
        if opts.uid is not None and opts.uid != omd["uid"]:
            raise errors.conflict(_kind_resource(self._info(kind)), name,
                                  f"the UID in the precondition ({opts.uid}) does not "
                                  f"match the UID in record ({omd['uid']}). The object might have been deleted "
                                  "and then recreated")
        if opts.resource_version is not None and opts.resource_version != omd["resourceVersion"]:
            raise errors.conflict(_kind_resource(self._info(kind)), name, "the ResourceVersion in the precondition "
                                  f"({opts.resource_version}) does not match the ResourceVersion in record "
                                  f"({omd['resourceVersion']}). The object might have been modified")
        if kind == "Namespace":
            # pkg/registry/core/namespace/storage/storage.go Delete: the first delete marks the namespace
            # Terminating for the namespace controller; it is purged once its spec.finalizers are gone
            if not omd.get("deletionTimestamp"):
                new = clone(old)
                new["metadata"]["deletionTimestamp"] = self.trace.timestamp()
                new.setdefault("status", {})["phase"] = "Terminating"
                self._commit(kind, key, old, new, "delete", by)
                self.trace.emit("terminating", object=ref(new), gracePeriodSeconds=0,
                                deletionTimestamp=new["metadata"]["deletionTimestamp"])
                return new
            if (old.get("spec") or {}).get("finalizers"):
                raise errors.conflict("namespaces", name, "The system is ensuring all content is removed from this "
                                      "namespace.  Upon completion, this namespace will automatically be purged by "
                                      "the system.")
        strategy = strategy_for(self._info(kind))
        grace = opts.grace_period_seconds
        record: dict[str, Any] = {"gracePeriodSeconds": grace} if grace is not None else {}
        if opts.propagation_policy:
            record["propagationPolicy"] = opts.propagation_policy
        if grace is not None and grace < 0 and self.profile.negative_delete_grace == "treated-as-one":
            grace = 1  # BeforeDelete: negative values are treated as 1 s on the delete path
        # only kinds whose strategy implements CheckGracefulDelete (pods) are deleted gracefully
        checked = strategy.check_graceful_delete(old, grace, self.profile.negative_grace)
        new = revision(old)
        nmd = new["metadata"]
        graceful = False
        if omd.get("deletionTimestamp"):
            cur = omd.get("deletionGracePeriodSeconds")
            # BeforeDelete, already deleting: a stored grace of 0 (or none) means delete now; otherwise only a
            # shorter gracePeriodSeconds moves the deadline, to old - oldGrace + newGrace (CheckGracefulDelete
            # is not consulted again)
            if checked is not None and cur:
                if grace is None or grace >= cur:
                    return old  # graceful deletion pending: nothing is written
                ts = self._parse_time(omd["deletionTimestamp"]) - cur + grace
                nmd["deletionTimestamp"] = self.trace.timestamp(ts)
                nmd["deletionGracePeriodSeconds"] = grace
                graceful = True
        elif checked is not None:
            grace = checked
            nmd["deletionTimestamp"] = self.trace.timestamp(self.kernel.now + grace)
            nmd["deletionGracePeriodSeconds"] = grace
            if (nmd.get("generation") or 0) > 0:
                nmd["generation"] += 1  # BeforeDelete bumps the generation only if it is set
            graceful = True
        # deletionFinalizersForGarbageCollection: finalizers asked for by the propagation policy
        finalizers = list(omd.get("finalizers") or ())
        if opts.propagation_policy == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
        elif opts.propagation_policy == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
        if finalizers != list(omd.get("finalizers") or ()):
            nmd["finalizers"] = finalizers

        if not graceful:
            if not finalizers:
                self._remove(kind, key, by, record_api=True, record=record)
                return None
            # markAsDeleting: deletionTimestamp now (or kept if earlier), grace 0, generation bumped on the first
            # deletion; the object stays until its finalizers are removed
            if not omd.get("deletionTimestamp") and (nmd.get("generation") or 0) > 0:
                nmd["generation"] += 1
            if not omd.get("deletionTimestamp") or self._parse_time(omd["deletionTimestamp"]) > self.kernel.now:
                nmd["deletionTimestamp"] = self.trace.timestamp()
            nmd["deletionGracePeriodSeconds"] = 0
            if new == old:
                return old  # nothing changed: GuaranteedUpdate writes nothing
            grace = 0
        # updateForGracefulDeletionAndFinalizers writes the update first; the object is then deleted at once
        # unless finalizers are pending or grace is left (lastGraceful > 0): watchers see MODIFIED, then DELETED
        self._commit(kind, key, old, new, "delete", by, extra=record)
        assert grace is not None   # a graceful delete has one; otherwise it was set to 0 above
        if finalizers or grace > 0:
            self.trace.emit("terminating", object=ref(new), gracePeriodSeconds=grace,
                            deletionTimestamp=nmd["deletionTimestamp"])
            return new
        self._remove(kind, key, by, record_api=False)
        return None

    def restore(self, log: Any, check: Callable[[str, Obj], str | None] | None = None) -> None:
        """A restart of a persisted cluster: the objects and the revisions kept in ``log`` (a SqliteLog) become
        this store's, and its resourceVersions go on from the last one. The components started before this
        (on an empty store) see every object ADDED, as their informers' first list shows it to them after a
        restart; nothing is written or traced. An object ``check`` finds a problem with (one an older podlife
        stored, such as a replica count beyond int32) is left in the log and not loaded, and said in
        ``skipped``."""
        for kind, key, obj in log.objects():
            problem = check(kind, obj) if check is not None else None
            if problem is not None:
                where = f"{key[0]}/{key[1]}" if key[0] else key[1]
                self.skipped.append(f"{log.path}: {kind} {where} is not loaded: {problem} (it stays in the "
                                    "data directory; delete it there or use another --data-dir)")
                continue
            if kind not in self.kinds and self._served(kind, obj.get("apiVersion")) is None:
                self.kinds[kind] = builtin_kind_info(kind, obj.get("apiVersion", "v1"))
            self._objects[kind][key] = obj
            self._unsorted.setdefault(kind, []).append(key)
            self.writes[kind] += 1   # (readers' caches of the kind: podlife.kubelet.envvars)
            if kind == "Pod":
                self._index_node(key, None, obj)
        self._rv = log.last_revision()
        revisions = log.revisions(log.compacted)
        by_rv = {r.rv: r.obj for r in revisions}
        for r in revisions:
            if r.rv <= log.compacted:
                continue   # only kept as the previous row of a later one
            old = by_rv.get(r.prev) if r.prev is not None else None
            type_ = DELETED if r.deleted else MODIFIED if r.prev is not None else ADDED
            obj = r.obj
            if r.deleted:
                obj = revision(r.obj)
                obj["metadata"]["resourceVersion"] = str(r.rv)
            self._history.append(_HistoryEntry(r.rv, type_, r.kind, obj, r.obj if r.deleted else old))
        self.log = log
        for obj in self.all_objects():
            self._deliver(obj["kind"], ADDED, obj, None)

    def load(self, objects: Iterable[Obj], revision: int) -> None:
        """Objects from outside the model (a dump: podlife.importer) become this store's as they are: their
        UIDs, resourceVersions, timestamps and status kept, nothing validated, defaulted or written; their
        state is traced (the status records of a create); the store's resourceVersions go on after ``revision``.
        As after ``restore``, the components started on the empty store see every object ADDED."""
        for obj in objects:
            kind, md = obj["kind"], obj["metadata"]
            if kind not in self.kinds and self._served(kind, obj.get("apiVersion")) is None:
                self.kinds[kind] = builtin_kind_info(kind, obj.get("apiVersion", "v1"))
            key = (md.get("namespace") or "", md["name"]) if self.kinds[kind].namespaced else ("", md["name"])
            self._objects[kind][key] = obj
            self._unsorted.setdefault(kind, []).append(key)
            self.writes[kind] += 1
            if kind == "Pod":
                self._share(obj)
                self._index_node(key, None, obj)
        self._rv = max(self._rv, revision)
        for obj in self.all_objects():
            # the state each object starts from, as the records a write of it would make (expectations and the
            # timelines read them)
            if obj["kind"] == "Pod" and obj["spec"].get("nodeName"):
                self.trace.emit("restored", object=ref(obj), node=obj["spec"]["nodeName"])
            elif obj["kind"] not in ("Event", "Lease"):
                self.trace.emit("restored", object=ref(obj))
            for r in status_records(obj["kind"], None, obj):
                self.trace.put(r)
            self._deliver(obj["kind"], ADDED, obj, None)

    # ---- watch -------------------------------------------------------------------------------------

    def delivering(self) -> bool:
        """Watch events are queued but not yet handed to their watchers (they go at this instant's flush)."""
        return bool(self._pending)

    def watch(self, kind: str, handler: Handler, *, node: str | None = None, namespace: str | None = None,
              since: int | None = None) -> Watch:
        """Deliver ADDED/MODIFIED/DELETED for a kind. ``since``: replay history after that resourceVersion,
        or 410 Expired when it is older than the history kept."""
        w = Watch(kind, handler, node, namespace)
        if since is not None:
            oldest = self._history[0].rv if self._history else self._rv + 1
            if since < oldest - 1:
                raise errors.gone(f"too old resource version: {since} ({oldest - 1})")
            for h in self._history:
                if h.rv > since and h.kind == kind:
                    self._route(w, h.type, h.obj, h.old)
            self._schedule_flush()
        if node is not None:
            self._node_watches.setdefault(node, []).append(w)
        else:
            self._watches.setdefault(kind, []).append(w)
            self._informers.pop(kind, None)
        return w

    def kept(self, rv: int) -> bool:
        """Whether the store can still be read at resourceVersion ``rv`` (snapshot gives None when not)."""
        oldest = self._history[0].rv if self._history else self._rv + 1
        return oldest - 1 <= rv <= self._rv

    def snapshot(self, kind: str, rv: int) -> dict[Key, Obj] | None:
        """The objects of a kind as they were at resourceVersion ``rv``, undoing the history kept after it (a
        list with resourceVersionMatch=Exact or a continue token reads etcd at that revision); None when ``rv``
        is older than the history kept (the revision is compacted)."""
        if not self.kept(rv):
            return None
        items = dict(self._objects[kind])
        for h in reversed(self._history):
            if h.rv <= rv:
                break
            if h.kind != kind:
                continue
            md = h.obj["metadata"]
            key = (md.get("namespace", ""), md["name"])
            if h.type == ADDED:
                items.pop(key, None)
            else:
                assert h.old is not None   # only an ADDED entry has no object before it
                items[key] = h.old   # MODIFIED: the object before; DELETED: the object as removed
        return items

    def computed(self, kind: str) -> bool:
        """Whether reading the kind can bring computed state up to date (a write: add_materializer)."""
        return kind in self._materialized_kinds

    def current_at(self, kind: str, rv: int) -> bool:
        """Whether the kind's objects as stored now are what it held at resourceVersion ``rv`` (nothing of the
        kind written since and no computed state), so a read at ``rv`` can be served by ``list``."""
        if kind in self._materialized_kinds or not self.kept(rv):
            return False
        for h in reversed(self._history):
            if h.rv <= rv:
                return True
            if h.kind == kind:
                return False
        return True

    def unwatch(self, w: Watch) -> None:
        """End a watch and forget it (a watch request whose client went away)."""
        w.stop()
        lists = [self._node_watches.get(w.node, [])] if w.node is not None else [self._watches.get(w.kind, [])]
        for ws in lists:
            ws[:] = [x for x in ws if x is not w]
        self._informers.pop(w.kind, None)

    def _route(self, w: Watch, type_: str, obj: Obj, old: Obj | None) -> None:
        if not w.active:
            return
        if w.namespace is not None and obj["metadata"].get("namespace") != w.namespace:
            return
        if w.node is not None:
            now_on = obj["spec"].get("nodeName") == w.node
            was_on = old is not None and old["spec"].get("nodeName") == w.node
            if not now_on and not was_on:
                return
            if type_ == MODIFIED and now_on and not was_on:
                type_ = ADDED
        self._pending.append((w, type_, obj, old))

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled and self._pending:
            self._flush_scheduled = True
            self.kernel.call_later(0.0, self._flush)

    def _flush(self) -> None:
        pending = self._pending   # grows while handlers write; the same list until cleared below
        i = 0
        while i < len(pending):
            w, type_, obj, old = pending[i]
            i += 1
            if isinstance(w, tuple):   # one event for every informer of its kind, in the order they were started
                for x in w:
                    if x.active:
                        x.handler(type_, obj, old)
            elif w.active:
                w.handler(type_, obj, old)
            pause()
        self._pending.clear()
        self._flush_scheduled = False

    # ---- internals ---------------------------------------------------------------------------------

    def _commit(self, kind: str, key: Key, old: Obj | None, new: Obj, verb: str, by: str,
                subresource: str | None = None, extra: dict[str, Any] | None = None, quiet: bool = False) -> None:
        log = self.log
        value = None
        if log is not None:
            prev = int(old["metadata"]["resourceVersion"]) if old is not None else None
            was = new["metadata"].get("resourceVersion")
            new["metadata"]["resourceVersion"] = str(self._rv + 1)
            try:   # encoded before anything changes: a value JSON cannot hold never reaches memory or disk
                value = orjson.dumps(new)
            except (TypeError, orjson.JSONEncodeError) as e:
                if was is None:
                    new["metadata"].pop("resourceVersion")
                else:
                    new["metadata"]["resourceVersion"] = was
                raise errors.ApiError(500, "InternalError", f"Internal error occurred: {kind} {key[0]}/{key[1]} "
                                                            f"cannot be stored: {e}; nothing was written") from None
        self._rv += 1
        self.writes[kind] += 1
        new["metadata"]["resourceVersion"] = str(self._rv)
        self._objects[kind][key] = new
        if log is not None:
            log.put(self._rv, kind, key, new, prev, self.kernel.now, value=value)
        if old is None:
            self._unsorted.setdefault(kind, []).append(key)
        if kind == "Pod":
            if old is None:
                self._share(new)
            self._index_node(key, old, new)
            collect_superseded()
        # Events have their own record; heartbeats (Lease renewals, computed status) are not news
        if kind not in ("Event", "Lease") and not quiet:
            rec: dict[str, Any] = {"t": None, "type": "api", "verb": verb, "object": ref(new), "by": by}
            if subresource:
                rec["subresource"] = subresource
            if extra:
                rec.update(extra)
            if kind == "Pod" and old is None:
                # the pod's containers in spec order, so a reader of the trace can lay them out as the pod has them
                spec = new.get("spec") or {}
                rec["initContainers"] = [c["name"] for c in spec.get("initContainers") or ()]
                rec["containers"] = [c["name"] for c in spec.get("containers") or ()]
            self.trace.put(rec)   # emit's record
        for r in status_records(kind, old, new):
            self.trace.put(r)
        self._publish(kind, ADDED if old is None else MODIFIED, new, old)

    def _remove(self, kind: str, key: Key, by: str, record_api: bool,
                record: dict[str, Any] | None = None) -> None:
        old = self._objects[kind].pop(key)
        self._removed[kind] = self._removed.get(kind, 0) + 1
        self.writes[kind] += 1
        if kind == "Pod":
            self._index_node(key, old, None)
        self._rv += 1
        if self.log is not None:
            self.log.put(self._rv, kind, key, old, int(old["metadata"]["resourceVersion"]), self.kernel.now,
                         deleted=True)
        if record_api and kind not in ("Event", "Lease"):
            self.trace.emit("api", verb="delete", object=ref(old), by=by, **(record or {}))
        self.trace.emit("deleted", object=ref(old))
        # a delete event carries the object at the revision of the delete (etcd3 watcher decodeObj of the
        # previous value with the event's revision), so a watch resumed from it does not see the delete again
        gone = revision(old)
        gone["metadata"]["resourceVersion"] = str(self._rv)
        self._publish(kind, DELETED, gone, old)

    def _publish(self, kind: str, type_: str, obj: Obj, old: Obj | None) -> None:
        self._history.append(_history_entry((self._rv, type_, kind, obj, old)))
        self._deliver(kind, type_, obj, old)
        pause()   # the store is whole: a sliced run may let others in (podlife.engine.slices)

    def _deliver(self, kind: str, type_: str, obj: Obj, old: Obj | None) -> None:
        pending = self._pending
        try:
            informers = self._informers[kind]
        except KeyError:
            watches = tuple(self._watches.get(kind, ()))
            informers = self._informers[kind] = watches if all(
                w.namespace is None and w.node is None for w in watches) else None
        if informers is not None:
            # every watch of the kind takes every event (informers, as in a batch run): one entry for all; each
            # is asked whether it is still active when the event is handed over, as one entry each would be
            if informers:
                pending.append((informers, type_, obj, old))
        else:
            for w in self._watches.get(kind, ()):
                if w.namespace is None and w.node is None:   # a whole kind's watch (an informer): every event
                    if w.active:
                        pending.append((w, type_, obj, old))
                else:
                    self._route(w, type_, obj, old)
        if kind == "Pod" and self._node_watches:
            now, was = obj["spec"].get("nodeName"), (old or {}).get("spec", {}).get("nodeName")
            for n in sorted((now, was)) if now and was and now != was else (now or was,):
                for w in self._node_watches.get(n, ()) if n else ():
                    self._route(w, type_, obj, old)
        self._schedule_flush()

    def _share(self, pod: Obj) -> None:
        """Pods made from one template differ in little but their names and status, so the parts that are
        alike (spec, labels, owner references: the same JSON, keys in the same order) are kept once and shared
        between them, as stored objects are never changed in place: a 150,000-pod cluster holds a few thousand
        specs instead of 150,000. Their specs differ in the token volume's name (speckey.split): a spec alike
        but for it is the first one's with the name in its own copies of the containers on the way to it."""
        md = pod["metadata"]
        if pod.get("spec"):
            pod["spec"] = share_spec(self._shared.setdefault("spec", {}), pod["spec"], SHARED_PARTS)
        for holder, part_name in ((md, "labels"), (md, "ownerReferences")):
            part = holder.get(part_name)
            if part:
                holder[part_name] = once(self._shared.setdefault(part_name, {}), part, same,
                                         sort_keys=False, limit=SHARED_PARTS)

    def _index_node(self, key: Key, old: Obj | None, new: Obj | None) -> None:
        was = old["spec"].get("nodeName") if old is not None else None
        now = new["spec"].get("nodeName") if new is not None else None
        if was == now:
            return
        if was:
            on = self._pods_by_node[was]
            del on[key]
            if not on:
                del self._pods_by_node[was]
        if now:
            self._pods_by_node.setdefault(now, {})[key] = None

    def _new_uid(self, rng: Any = None) -> str:
        r = (rng or self._uid_rng).getrandbits(128)
        h = "%032x" % r   # the 16 bytes big-endian, in hex; byte 8 is bits 56-63 (% is cheaper than an f-string
        # format spec here)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[(r >> 56) & 3]}{h[17:20]}-{h[20:32]}"

    def _generate_name(self, kind: str, namespace: str, prefix: str) -> str:
        # staging/src/k8s.io/apiserver/pkg/storage/names/generate.go: prefix + 5 random characters
        for _ in range(8):
            name = prefix + random_suffix(self._uid_rng)
            if (namespace, name) not in self._objects[kind]:
                return name
        raise errors.ApiError(500, "InternalError", "could not generate a unique name")

    def _parse_time(self, ts: str) -> float:
        when = metatime.parse(ts).replace(tzinfo=self.trace.start_time.tzinfo)
        return (when - self.trace.start_time).total_seconds()


def ensure_namespaces(store: Store, names: Iterable[str]) -> None:
    for n in names:
        if store.try_get("Namespace", None, n) is None:
            store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}, by="apiserver")

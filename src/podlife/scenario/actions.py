"""Scenario actions, applied as a user (kubectl) would apply them through the API."""

from __future__ import annotations

import json
from typing import Any

from podlife.api.errors import ApiError, not_found
from podlife.api.meta import CLUSTER_SCOPED, KINDS, Obj, clone, kind_from_name, plural, ref_of
from podlife.api.schema import type_schema
from podlife.api.store import DeleteOptions
from podlife.cluster import Cluster
from podlife.scenario.model import Action

USER = "kubectl"


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return clone(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def apply_manifest(existing: Any, manifest: Any) -> Any:
    """What an apply of ``manifest`` makes of the stored object: its fields replace the stored ones (status
    and metadata aside), and its labels and annotations the stored ones."""
    new = clone(existing)
    md = manifest.get("metadata") or {}
    for k, v in manifest.items():
        if k not in ("metadata", "status"):
            new[k] = v
    for k in ("labels", "annotations"):
        if k in md:
            new["metadata"][k] = md[k]
    return new


def _target(store: Any, action: Action) -> tuple[str, str | None, str]:
    """The action's kind (the loader resolved it: a modelled kind's name as written, or the served kind), its
    namespace when the kind is namespaced, and the name."""
    kind_s, _, name = (action.target or "").partition("/")
    kind = kind_from_name(kind_s) or kind_s
    info = KINDS.get(kind) or store.kinds.get(kind)
    namespaced = info.namespaced if info is not None else kind not in CLUSTER_SCOPED
    return kind, action.namespace if namespaced else None, name


def _ref(kind: str, ns: str | None, name: str) -> str:
    return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


def _record(cluster: Cluster, action: Action, obj_ref: str | None) -> dict[str, Any]:
    fields = {k: v for k, v in action.raw.items() if k not in ("at", action.verb)}
    if action.verb in ("create", "apply"):
        fields["manifest"] = action.manifest
    return cluster.trace.emit("action", action=action.verb, object=obj_ref, **fields)


def apply_action(cluster: Cluster, action: Action) -> None:
    with cluster.trace.hold():  # the action's record gets its outcome after the records of its effects
        _apply(cluster, action)


def _manifest_target(store: Any, action: Action) -> tuple[str, str | None, str]:
    """A create or apply action's kind, namespace (when the kind is namespaced) and name (empty when generated)."""
    manifest = action.manifest or {}
    kind = manifest.get("kind", "")
    md = manifest.get("metadata") or {}
    info = KINDS.get(kind) or store.kinds.get(kind)
    namespaced = info.namespaced if info is not None else kind not in CLUSTER_SCOPED
    return kind, md.get("namespace", action.namespace) if namespaced else None, md.get("name", "")


def write(store: Any, action: Action, minor: int) -> Obj | None:
    """The API request of a delete, scale, patch, create or apply action, as kubectl makes it, through the store's
    write path (the ApiError of a refusal raised). Returns the object a create made."""
    verb = action.verb
    if verb in ("delete", "scale", "patch"):
        kind, ns, name = _target(store, action)
        if kind not in store.kinds:   # a served kind nothing of which was created yet
            raise not_found(plural(kind), name)
        if verb == "delete":
            # an API DELETE: the loader already turned force into gracePeriodSeconds 0
            store.delete(kind, ns, name, by=USER,
                         options=DeleteOptions(grace_period_seconds=action.grace_period_seconds,
                                               propagation_policy=action.propagation_policy))
        elif verb == "scale":
            obj = clone(store.get(kind, ns, name))
            obj.setdefault("spec", {})["replicas"] = action.replicas
            store.update(obj, by=USER)
        else:
            obj = store.get(kind, ns, name)
            # a deep copy: merge_patch shares what the patch leaves alone, and the store's update must not
            # reach into the stored object (its watchers compare the old and the new one)
            if action.strategic:
                # kubectl patch --type=strategic: lists merge on their patchMergeKey (conditions by type)
                from podlife.api.patch import STRATEGIC_MERGE_PATCH, apply_patch  # few scenarios need it

                schema = type_schema(minor, obj.get("apiVersion", "v1"), kind)
                new = apply_patch(obj, json.dumps(action.merge_patch or {}).encode(), STRATEGIC_MERGE_PATCH,
                                  schema).object
            else:
                new = merge_patch(clone(obj), action.merge_patch or {})
            new["metadata"]["resourceVersion"] = obj["metadata"]["resourceVersion"]
            store.update(new, by=USER, subresource=action.subresource)
        return None
    manifest = clone(action.manifest or {})
    kind, ns, name = _manifest_target(store, action)
    existing = store.try_get(kind, ns, name) if name else None
    if verb == "apply" and existing is not None:
        store.update(apply_manifest(existing, manifest), by=USER)
        return None
    return store.create(manifest, by=USER)


def _apply(cluster: Cluster, action: Action) -> None:
    store = cluster.store
    verb = action.verb
    try:
        if verb in ("delete", "scale", "patch"):
            rec = _record(cluster, action, _ref(*_target(store, action)))
            write(store, action, cluster.profile.minor)
        elif verb in ("create", "apply"):
            kind, ns, name = _manifest_target(store, action)
            rec = _record(cluster, action, _ref(kind, ns, name) if name else kind)
            created = write(store, action, cluster.profile.minor)
            if created is not None:
                cluster.node_created(created)  # a Node: the machine podlife assumes behind it starts its kubelet
        elif verb in ("cordon", "uncordon"):
            rec = _record(cluster, action, ref_of("Node", None, action.target or ""))
            cordon(cluster, action.target or "", verb != "uncordon")
        elif verb == "drain":
            from podlife.kubectl.drain import drain

            rec = _record(cluster, action, ref_of("Node", None, action.target or ""))
            drain(cluster, action.target or "", action.drain_options)
        elif verb == "evict":
            from podlife.api.registry.eviction import evict

            ns = action.namespace
            name = (action.target or "").partition("/")[2]
            rec = _record(cluster, action, ref_of("Pod", ns, name))
            evict(cluster.store, ns, name, USER, action.grace_period_seconds, cluster.profile)
        elif verb == "join":
            rec = _record(cluster, action, None)
            rec["nodes"] = [spec.name for spec in action.nodes or ()]
            for spec in action.nodes or ():
                cluster.add_node(spec)  # its kubelet starts, registers the Node and renews its Lease
        elif verb == "leave":
            rec = _record(cluster, action, ref_of("Node", None, action.target or ""))
            leave(cluster, action.target or "")
        elif verb == "fault" and action.fault is not None:
            from podlife.cluster.faults import start_fault

            rec = _record(cluster, action, None)
            start_fault(cluster, action.fault)
        else:
            raise ApiError(400, "BadRequest", f"action {verb} is not modelled yet")
    except ApiError as e:
        rec["error"] = e.message


CLOUD_NODE_LIFECYCLE = "cloud-node-lifecycle-controller"


def leave(cluster: Cluster, node_name: str) -> None:
    """The machine is removed (scaled in, terminated): its kubelet and runtime stop at once and the Node object is
    deleted, as the cloud node lifecycle controller does for an instance that no longer exists
    (staging/src/k8s.io/cloud-provider/controllers/nodelifecycle). Its pods are orphans for PodGC."""
    kl = cluster.kubelets.get(node_name)
    if kl is not None and kl.running:
        cluster.nodes.faults(node_name).power_off()
    cluster.store.delete("Node", None, node_name, by=CLOUD_NODE_LIFECYCLE)


def cordon(cluster: Cluster, node_name: str, unschedulable: bool) -> None:
    node = clone(cluster.store.get("Node", None, node_name))
    if bool(node["spec"].get("unschedulable")) == unschedulable:
        return
    if unschedulable:
        node["spec"]["unschedulable"] = True
    else:
        node["spec"].pop("unschedulable", None)
    cluster.store.update(node, by=USER)

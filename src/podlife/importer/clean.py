"""What a user does not want from a dump: secrets' data (never kept: only their names, types and key names, which
mounts, environment variables and admission look at), managedFields, Events among the objects (they are read
for --calibrate only), and what ``--namespace`` / ``--selector`` leave out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from podlife.importer.errors import DumpError

Obj = dict[str, Any]
# cluster-scoped kinds a namespace filter keeps (the cluster the namespaced objects live in)
_CLUSTER_KINDS = frozenset({"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass",
                            "CustomResourceDefinition", "RuntimeClass", "CSIDriver", "CSINode", "VolumeAttachment",
                            "ClusterRole", "ClusterRoleBinding", "IngressClass"})


def scrub(obj: Obj) -> Obj:
    """Drops what is never kept: managedFields everywhere, a Secret's values (its keys stay, empty: a
    container's secretKeyRef finds its key, as in the cluster)."""
    obj["metadata"].pop("managedFields", None)
    if obj.get("kind") == "Secret":
        keys: list[str] = []
        for part in ("data", "stringData"):
            values = obj.pop(part, None)
            if isinstance(values, dict):
                keys += [str(k) for k in values]
        if keys:
            obj["data"] = dict.fromkeys(sorted(set(keys)), "")
    return obj


def select(objects: list[Obj], namespaces: Sequence[str], selector: str | None) -> list[Obj]:
    """--namespace (repeatable): namespaced objects of those namespaces and the cluster-scoped ones;
    --selector: namespaced objects whose labels match, and their owners (cluster-scoped ones stay: nodes,
    namespaces, ...)."""
    match = None
    if selector:
        from podlife.api.selectors import parse

        try:
            sel = parse(selector)
        except ValueError as e:
            raise DumpError("--selector", f"{selector!r}: {e}") from None
        match = sel
    keep = set(namespaces)
    out: list[Obj] = []
    held: list[Obj] = []
    for obj in objects:
        ns = obj["metadata"].get("namespace")
        if not ns or obj.get("kind") in _CLUSTER_KINDS:
            if keep and obj.get("kind") == "Namespace" and obj["metadata"]["name"] not in keep:
                continue
            out.append(obj)
            continue
        if keep and ns not in keep:
            continue
        if match is not None and not match.matches(obj["metadata"].get("labels") or {}):
            held.append(obj)
            continue
        out.append(obj)
    if held:   # the owners of what the selector keeps come with it (a pod keeps its ReplicaSet and Deployment)
        by_uid = {o["metadata"].get("uid"): o for o in held}
        todo = list(out)
        kept = {id(o) for o in out}
        while todo:
            for r in todo.pop()["metadata"].get("ownerReferences") or ():
                owner = by_uid.get(r.get("uid")) if isinstance(r, dict) else None
                if owner is not None and id(owner) not in kept:
                    kept.add(id(owner))
                    out.append(owner)
                    todo.append(owner)
        order = {id(o): i for i, o in enumerate(objects)}
        out.sort(key=lambda o: order[id(o)])
    return out

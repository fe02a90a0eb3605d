"""--anonymize: rename namespaces, nodes, workloads, pods and images consistently, so that a user can share a
reproduction. Each name gets a stable stand-in (ns-1, node-1, app-1, image-1:tag, ...) in the order first
seen; a pod keeps the generated suffix its controller gave it (app-3-7d4b9c-x2x9z). Every place a name is used
is renamed with it: namespaces, nodeName, ownerReferences, label values, selectors that match them, the
hostname label, container images."""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
_KEEP_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
_SYSTEM_NAMES = frozenset({"kubernetes", "kube-dns", "coredns", "kube-proxy"})
_WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet", "Service",
                   "PodDisruptionBudget", "HorizontalPodAutoscaler", "ReplicationController")


class _Names:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.map: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        new = self.map.get(name)
        if new is None:
            new = self.map[name] = f"{self.prefix}-{len(self.map) + 1}"
        return new


def anonymize(objects: list[Obj], events: list[Obj]) -> None:
    ns, node, app, image = _Names("ns"), _Names("node"), _Names("app"), _Names("image")
    for o in objects:
        md = o["metadata"]
        if o["kind"] == "Namespace" and md["name"] not in _KEEP_NAMESPACES:
            ns(md["name"])
        elif o["kind"] == "Node":
            node(md["name"])
    # workloads named after their top owner: a ReplicaSet "web-5f4d" is the Deployment "web"'s, so it is
    # renamed from the Deployment's stand-in
    names: dict[str, str] = {}
    for kind in _WORKLOAD_KINDS:
        for o in (o for o in objects if o["kind"] == kind):
            md = o["metadata"]
            if md.get("namespace") in _KEEP_NAMESPACES and md["name"] in _SYSTEM_NAMES:
                continue
            names.setdefault(md["name"], _renamed(md["name"], names) or app(md["name"]))

    def rename(name: str) -> str:
        return _renamed(name, names) or name

    def rename_image(ref: str) -> str:
        repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
        repo = repo.split("@")[0]
        return image(repo) + (f":{tag}" if tag else "")

    def value(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        return ns.map.get(v) or node.map.get(v) or rename(v)

    import re

    originals = {**names, **ns.map, **node.map}
    pattern = re.compile("|".join(re.escape(n) for n in sorted(originals, key=len, reverse=True))) if originals \
        else None

    def message(text: str) -> str:
        return pattern.sub(lambda m: originals[m.group(0)], text) if pattern is not None else text

    for o in objects + events:
        md = o["metadata"]
        if md.get("namespace") in ns.map:
            md["namespace"] = ns.map[md["namespace"]]
        if o["kind"] == "Namespace":
            md["name"] = ns.map.get(md["name"], md["name"])
        elif o["kind"] == "Node":
            md["name"] = node.map.get(md["name"], md["name"])
            for a in (o.get("status") or {}).get("addresses") or ():
                if a.get("type") == "Hostname":
                    a["address"] = md["name"]
        elif o["kind"] == "Lease" and md.get("name") in node.map:
            md["name"] = node.map[md["name"]]
            o.setdefault("spec", {})["holderIdentity"] = md["name"]
        else:
            md["name"] = rename(md["name"])
        for k in ("labels",):
            if md.get(k):
                md[k] = {lk: value(lv) for lk, lv in md[k].items()}
        if md.get("annotations"):
            # kubectl apply's copy of the manifest would give every name away; the others name little, and
            # controllers read theirs (deployment.kubernetes.io/revision)
            md["annotations"] = {k: message(v) if k != "podlife/behavior" else v for k, v in md["annotations"].items()
                                 if k != "kubectl.kubernetes.io/last-applied-configuration"}
        md.pop("generateName", None)
        for r in md.get("ownerReferences") or ():
            r["name"] = node.map.get(r["name"]) or rename(r["name"]) if r.get("kind") == "Node" else rename(r["name"])
        for part in ("spec", "status", "message", "data", "subsets", "endpoints", "ports"):
            if isinstance(o.get(part), str):
                o[part] = message(o[part])
            else:
                _walk(o.get(part), value, rename_image, node.map, message)
        inv = o.get("involvedObject")
        if isinstance(inv, dict):
            inv["name"] = value(inv.get("name"))
            if inv.get("namespace") in ns.map:
                inv["namespace"] = ns.map[inv["namespace"]]


def _renamed(name: str, names: dict[str, str]) -> str | None:
    """``name`` as a renamed owner's name plus a suffix (web-5f4d6c9795-x2x9z), renamed with the owner."""
    if name in names:
        return names[name]
    parts = name.split("-")
    for i in range(len(parts) - 1, 0, -1):
        head = "-".join(parts[:i])
        if head in names:
            return names[head] + "-" + "-".join(parts[i:])
    return None


def _walk(node: Any, value: Any, rename_image: Any, nodes: dict[str, str], message: Any) -> None:
    """Every string in the object that is a renamed name (a label value, nodeName, an affinity's values, a
    ControllerRevision's template) is renamed; images get their stand-ins; messages are rewritten."""
    if isinstance(node, dict):
        items: Any = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    else:
        return
    for k, v in items:
        if isinstance(v, str):
            if k == "image":
                node[k] = rename_image(v)
            elif k == "imageID":
                node[k] = ""
            elif k == "message":
                node[k] = message(v)   # a message names pods and nodes (CrashLoopBackOff's, FailedScheduling's)
            else:
                node[k] = nodes.get(v) or value(v)
        else:
            _walk(v, value, rename_image, nodes, message)

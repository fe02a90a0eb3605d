"""ControllerRevisions of a workload: pkg/controller/history (controller_history.go) and the pieces of the
DaemonSet and StatefulSet controllers that read and write them.

A revision is an apps/v1 ControllerRevision owned (controller reference) by its workload, carrying in
``data`` the strategic-merge patch that restores the pod template (getPatch:
``{"spec":{"template":{...,"$patch":"replace"}}}``) and a ``revision`` number.
"""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.fieldvalidation import sorted_keys
from podlife.api.meta import Obj, clone
from podlife.api.store import Store
from podlife.controlplane.controllers.controller_utils import claim_objects, controller_ref, label_selector

KIND = "ControllerRevision"
API_VERSION = "apps/v1"


def template_patch(template: Obj) -> Obj:
    """getPatch (daemon/update.go, statefulset/stateful_set_utils.go): the template marked $patch replace, as
    its bytes are: the workload marshalled, read back into a map and marshalled again, so every key sorted
    (encoding/json sorts map keys) and the template holding what Go writes of a PodTemplateSpec even when
    unset. Clients compare these bytes with their own getPatch (test/e2e/apps/daemon_set.go curHistory,
    kubectl rollout history: daemon.Match); a JSON body keeps a dict's order."""
    t = go_template(template or {})
    t["$patch"] = "replace"
    return sorted_keys({"spec": {"template": t}})


def go_template(template: Obj) -> Obj:
    """A PodTemplateSpec as encoding/json writes it (staging/src/k8s.io/api/core/v1/types.go): struct-typed
    fields are written even when zero (omitempty does not apply to structs): ObjectMeta's creationTimestamp
    (null), each container's resources ({}), a resourceFieldRef's divisor (a zero Quantity: "0"), an ephemeral
    volume's claim template metadata and resources, a resource claim's source ({})."""
    t = clone(template)
    t.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    spec = t.setdefault("spec", {})
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or ():
            c.setdefault("resources", {})
            for env in c.get("env") or ():
                ref = (env.get("valueFrom") or {}).get("resourceFieldRef")
                if ref is not None:
                    ref.setdefault("divisor", "0")
    for vol in spec.get("volumes") or ():
        claim = (vol.get("ephemeral") or {}).get("volumeClaimTemplate")
        if claim is not None:
            claim.setdefault("metadata", {}).setdefault("creationTimestamp", None)
            claim.setdefault("spec", {}).setdefault("resources", {})
    for claim in spec.get("resourceClaims") or ():
        claim.setdefault("source", {})
    return t


def matches(revision: Obj, template: Obj) -> bool:
    """Match: the revision restores this template. A revision's data is compared as Go would hold it, so one
    stored before its data was written as Go writes it still matches."""
    data = revision.get("data") or {}
    held = ((data.get("spec") or {}).get("template")) if isinstance(data, dict) else None
    if not isinstance(held, dict):
        return False
    held = {k: v for k, v in held.items() if k != "$patch"}
    return template_patch(held) == template_patch(template)


def revision_template(revision: Obj) -> Obj:
    """ApplyRevision: the pod template the revision's patch restores (without the fields Go writes at their
    zero value, which hold nothing)."""
    t = clone(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    t.pop("$patch", None)
    if (t.get("metadata") or {}).get("creationTimestamp", 0) is None:
        del t["metadata"]["creationTimestamp"]
    for key in ("initContainers", "containers"):
        for c in (t.get("spec") or {}).get(key) or ():
            if c.get("resources") == {}:
                del c["resources"]
    return t


def revision_number(revision: Obj) -> int:
    return int(revision.get("revision") or 0)


def sort_revisions(revisions: list[Obj]) -> list[Obj]:
    """history.SortControllerRevisions: by revision number, then creation time, then name."""
    return sorted(revisions, key=lambda r: (revision_number(r), r["metadata"].get("creationTimestamp") or "",
                                            r["metadata"]["name"]))


def controlled_revisions(store: Store, component: str, owner: Obj) -> list[Obj]:
    """controlledHistories / ListRevisions + ClaimControllerRevisions: the revisions in the owner's namespace,
    adopted or released by its selector (ControllerRevisionControllerRefManager)."""
    ns = owner["metadata"]["namespace"]
    revisions = sorted(store.list(KIND, ns), key=lambda r: r["metadata"]["name"])
    return claim_objects(store, component, owner, label_selector(owner["spec"].get("selector")), revisions,
                         controller_ref(owner))


def new_revision(owner: Obj, name: str, labels: dict[str, str], revision: int,
                 annotations: dict[str, str] | None = None) -> Obj:
    md: Obj = {"name": name, "namespace": owner["metadata"]["namespace"], "labels": labels,
               "ownerReferences": [controller_ref(owner)]}
    if annotations:
        md["annotations"] = dict(annotations)
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": md,
            "data": template_patch((owner.get("spec") or {}).get("template") or {}), "revision": revision}


def create(store: Store, component: str, revision: Obj) -> Obj:
    return store.create(clone(revision), by=component)


def update_revision_number(store: Store, component: str, revision: Obj, number: int) -> Obj:
    """UpdateControllerRevision: the stored revision with a new number."""
    new = clone(revision)
    new["revision"] = number
    return store.update(new, by=component)


def delete(store: Store, component: str, revision: Obj) -> None:
    try:
        store.delete(KIND, revision["metadata"]["namespace"], revision["metadata"]["name"], by=component)
    except ApiError as e:
        if e.reason != "NotFound":
            raise

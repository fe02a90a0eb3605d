"""ControllerRevisions of a workload: pkg/controller/history (controller_history.go) and the pieces of the
DaemonSet and StatefulSet controllers that read and write them.

A revision is an apps/v1 ControllerRevision owned (controller reference) by its workload, carrying in
``data`` the strategic-merge patch that restores the pod template (getPatch:
``{"spec":{"template":{...,"$patch":"replace"}}}``) and a ``revision`` number.
"""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import Store
from podlife.controlplane.controllers.controller_utils import claim_objects, controller_ref, label_selector

KIND = "ControllerRevision"
API_VERSION = "apps/v1"


def template_patch(template: Obj) -> Obj:
    """getPatch (daemon/update.go, statefulset/stateful_set_utils.go): the template marked $patch replace."""
    t = clone(template or {})
    t["$patch"] = "replace"
    return {"spec": {"template": t}}


def revision_template(revision: Obj) -> Obj:
    """ApplyRevision: the pod template the revision's patch restores."""
    t = clone(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    t.pop("$patch", None)
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

"""A StatefulSet's ControllerRevisions: pkg/controller/statefulset/stateful_set_control.go
(getStatefulSetRevisions, truncateHistory), stateful_set_utils.go (newRevision, nextRevision, ApplyRevision) and
pkg/controller/history (NewControllerRevision, CreateControllerRevision, FindEqualRevisions).

A revision is named ``<set>-<hash>`` (hash of its data and the collision count) and labelled with the template's
labels plus ``controller.kubernetes.io/hash``; pods carry the revision's name in ``controller-revision-hash``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.controlplane.controllers import history
from podlife.controlplane.controllers.deployment import fnv32a, safe_encode_string

if TYPE_CHECKING:
    from podlife.controlplane.controllers.statefulset import StatefulSetController

HASH_LABEL = "controller.kubernetes.io/hash"   # history.ControllerRevisionHashLabel
POD_REVISION_LABEL = "controller-revision-hash"


def revision_name(sset: Obj, collision_count: int) -> str:
    """history.ControllerRevisionName(set, HashControllerRevision(newRevision(set), collisionCount)): fnv32a
    of the revision's data - getPatch: {"spec":{"template":{...,"$patch":"replace"}}}, map keys sorted - then
    of the decimal collision count, safe-encoded. podlife's template JSON is the stored (defaulted) template,
    so the shape is real but the value is not byte-identical to a real cluster's."""
    template = dict(clone((sset.get("spec") or {}).get("template") or {}))
    template["$patch"] = "replace"
    h = fnv32a(orjson.dumps({"spec": {"template": template}}, option=orjson.OPT_SORT_KEYS))
    h = fnv32a(str(collision_count).encode(), h)
    return f"{sset['metadata']['name']}-{safe_encode_string(str(h))}"


def _new_revision(sset: Obj, number: int, collision: int) -> Obj:
    """newRevision / history.NewControllerRevision: template labels, the set's annotations, the patch."""
    name = revision_name(sset, collision)
    labels = dict((((sset["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}))
    labels[HASH_LABEL] = name[len(sset["metadata"]["name"]) + 1:]
    return history.new_revision(sset, name, labels, number, sset["metadata"].get("annotations"))


def get_revisions(c: StatefulSetController, sset: Obj) -> tuple[Obj, Obj, int, list[Obj]]:
    """getStatefulSetRevisions: (current, update, collisionCount, all revisions sorted). The update revision is
    the last one when it holds the set's template, an earlier equal one renumbered (a rollback), or a new one;
    the current one is status.currentRevision, or the update revision when there is none."""
    revisions = history.sort_revisions(history.controlled_revisions(c.store, c.COMPONENT, sset))
    collision = int((sset.get("status") or {}).get("collisionCount") or 0)
    number = history.revision_number(revisions[-1]) + 1 if revisions else 1   # nextRevision
    template = sset["spec"].get("template") or {}
    equal = [r for r in revisions if history.matches(r, template)]
    if equal and equal[-1]["metadata"]["name"] == revisions[-1]["metadata"]["name"]:
        update = revisions[-1]
    elif equal:
        update = history.update_revision_number(c.store, c.COMPONENT, equal[-1], number)
        revisions = history.sort_revisions([update if r["metadata"]["name"] == update["metadata"]["name"] else r
                                            for r in revisions])
    else:
        update, collision = _create(c, sset, number, collision)
        revisions = history.sort_revisions([*revisions, update])
    current_name = (sset.get("status") or {}).get("currentRevision")
    current = next((r for r in revisions if r["metadata"]["name"] == current_name), update)
    return current, update, collision, revisions


def _create(c: StatefulSetController, sset: Obj, number: int, collision: int) -> tuple[Obj, int]:
    """CreateControllerRevision: a name taken by other data bumps the collision count and tries again."""
    while True:
        rev = _new_revision(sset, number, collision)
        try:
            return history.create(c.store, c.COMPONENT, rev), collision
        except ApiError as e:
            if e.reason != "AlreadyExists":
                raise
            existing = c.store.get(history.KIND, sset["metadata"]["namespace"], rev["metadata"]["name"])
            if existing.get("data") == rev["data"]:
                return existing, collision
            collision += 1


def apply_revision(sset: Obj, revision: Obj) -> Obj:
    """ApplyRevision: the set with the revision's template."""
    out = clone(sset)
    out["spec"]["template"] = history.revision_template(revision)
    return out


def truncate_history(c: StatefulSetController, sset: Obj, pods: list[Obj], revisions: list[Obj],
                     current: Obj, update: Obj) -> None:
    """truncateHistory: beyond revisionHistoryLimit, delete the oldest revisions that are neither current,
    update, nor carried by a pod."""
    live = {current["metadata"]["name"], update["metadata"]["name"]}
    live |= {(p["metadata"].get("labels") or {}).get(POD_REVISION_LABEL) for p in pods}
    old = [r for r in revisions if r["metadata"]["name"] not in live]
    limit = int(sset["spec"].get("revisionHistoryLimit", 10))
    for rev in old[:max(len(old) - limit, 0)]:
        history.delete(c.store, c.COMPONENT, rev)

"""DaemonSet updates: pkg/controller/daemon/update.go (rollingUpdate, constructHistory, dedupCurHistories,
snapshot, cleanupHistory, updatedDesiredNodeCounts, findUpdatedPodsOnNode) and daemon/util (IsPodUpdated,
SurgeCount, UnavailableCount).

RollingUpdate without surge deletes old pods within maxUnavailable; the manage loop creates each new pod once
the old one has left the store. With maxSurge (DaemonSetUpdateSurge) a new pod is created beside the old one,
which is deleted once the new one is available (minReadySeconds). OnDelete replaces only pods the user deletes.
Upstream walks its node -> pods map in Go's random map order; podlife walks the nodes by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.registry.daemonset import template_generation
from podlife.controlplane.controllers import history
from podlife.controlplane.controllers.controller_utils import is_pod_available
from podlife.controlplane.controllers.daemonset_util import should_run
from podlife.controlplane.controllers.deployment import compute_hash, scaled_value

if TYPE_CHECKING:
    from podlife.controlplane.controllers.daemonset import DaemonSetController

REVISION_LABEL = "controller-revision-hash"              # apps.DefaultDaemonSetUniqueLabelKey
TEMPLATE_GENERATION_LABEL = "pod-template-generation"   # extensions.DaemonSetTemplateGenerationKey


def is_pod_updated(pod: Obj, hash_: str, generation: int | None) -> bool:
    """util.IsPodUpdated: the revision hash matches, or (backward compatibility) the template generation."""
    labels = pod["metadata"].get("labels") or {}
    template_matches = generation is not None and labels.get(TEMPLATE_GENERATION_LABEL) == str(generation)
    return (bool(hash_) and labels.get(REVISION_LABEL) == hash_) or template_matches


def _rolling(ds: Obj) -> Obj | None:
    strategy = ds["spec"].get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    return strategy.get("rollingUpdate")


def surge_count(ds: Obj, desired: int, surge_enabled: bool) -> int:
    """util.SurgeCount: maxSurge scaled (rounded up); 0 without the gate (1.21-1.24 checked it here)."""
    ru = _rolling(ds)
    if not surge_enabled or ru is None or ru.get("maxSurge") is None:
        return 0
    return scaled_value(ru["maxSurge"], desired, round_up=True)


def unavailable_count(ds: Obj, desired: int) -> int:
    """util.UnavailableCount: maxUnavailable scaled (rounded up)."""
    ru = _rolling(ds)
    if ru is None or ru.get("maxUnavailable") is None:
        return 0
    return scaled_value(ru["maxUnavailable"], desired, round_up=True)


def allows_surge(ds: Obj, surge_enabled: bool) -> bool:
    """util.AllowsSurge: SurgeCount of one node."""
    return surge_count(ds, 1, surge_enabled) > 0


def find_updated_pods_on_node(pods: list[Obj], hash_: str, generation: int | None
                              ) -> tuple[Obj | None, Obj | None, bool]:
    """findUpdatedPodsOnNode: (new, old, ok) among the pods not being deleted; not ok with two of a kind."""
    new = old = None
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if is_pod_updated(pod, hash_, generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


# ---- history ----------------------------------------------------------------------------------------------


def _matches(ds: Obj, revision: Obj) -> bool:
    """Match: the revision's data is the DaemonSet's getPatch."""
    return history.matches(revision, ds["spec"].get("template") or {})


def construct_history(c: DaemonSetController, ds: Obj) -> tuple[Obj, list[Obj]]:
    """constructHistory: the current revision (created, or deduplicated and renumbered) and the old ones."""
    revisions = history.controlled_revisions(c.store, c.COMPONENT, ds)
    current: list[Obj] = []
    old: list[Obj] = []
    for rev in revisions:
        labels = rev["metadata"].get("labels") or {}
        if REVISION_LABEL not in labels:
            # "Add the unique label if it's not already added to the history": its name, not a hash
            new = clone(rev)
            new["metadata"].setdefault("labels", {})[REVISION_LABEL] = rev["metadata"]["name"]
            rev = c.store.update(new, by=c.COMPONENT)
        (current if _matches(ds, rev) else old).append(rev)
    next_number = max((history.revision_number(r) for r in old), default=0) + 1
    if not current:
        return _snapshot(c, ds, next_number), old
    cur = _dedup(c, ds, current)
    if history.revision_number(cur) < next_number:
        cur = history.update_revision_number(c.store, c.COMPONENT, cur, next_number)  # a rollback
    return cur, old


def _dedup(c: DaemonSetController, ds: Obj, current: list[Obj]) -> Obj:
    """dedupCurHistories: keep the highest revision, relabel the pods of the others, delete the others."""
    if len(current) == 1:
        return current[0]
    keep = current[0]
    for rev in current:
        if history.revision_number(rev) >= history.revision_number(keep):
            keep = rev
    keep_hash = (keep["metadata"].get("labels") or {}).get(REVISION_LABEL)
    for pod in c.daemon_pods(ds):
        if (pod["metadata"].get("labels") or {}).get(REVISION_LABEL) != keep_hash:
            new = clone(pod)
            new["metadata"].setdefault("labels", {})[REVISION_LABEL] = keep_hash
            c.store.update(new, by=c.COMPONENT, verb="patch")
    for rev in current:
        if rev["metadata"]["name"] != keep["metadata"]["name"]:
            history.delete(c.store, c.COMPONENT, rev)
    return keep


def _snapshot(c: DaemonSetController, ds: Obj, number: int) -> Obj:
    """snapshot: a revision named <ds>-<ComputeHash(template, collisionCount)>; on a name taken by another
    template, collisionCount is bumped and the sync fails (retried with the new count)."""
    collision = (ds.get("status") or {}).get("collisionCount")
    hash_ = compute_hash(ds["spec"].get("template") or {}, collision)
    name = f"{ds['metadata']['name']}-{hash_}"
    labels = {**(((ds["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}), REVISION_LABEL: hash_}
    rev = history.new_revision(ds, name, labels, number, ds["metadata"].get("annotations"))
    try:
        return history.create(c.store, c.COMPONENT, rev)
    except ApiError as e:
        if e.reason != "AlreadyExists":
            raise
        existing = c.store.get(history.KIND, ds["metadata"]["namespace"], name)
        if _matches(ds, existing):
            return existing
        fresh = c.store.get("DaemonSet", ds["metadata"]["namespace"], ds["metadata"]["name"])
        status = clone(fresh.get("status") or {})
        status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
        c.store.update_status({**{k: fresh[k] for k in ("apiVersion", "kind", "metadata")}, "status": status},
                              by=c.COMPONENT)
        raise


def cleanup_history(c: DaemonSetController, ds: Obj, old: list[Obj], pods: list[Obj]) -> None:
    """cleanupHistory: beyond revisionHistoryLimit, delete the oldest revisions no live pod carries."""
    limit = int(ds["spec"].get("revisionHistoryLimit", 10))
    to_kill = len(old) - limit
    if to_kill <= 0:
        return
    live = {(p["metadata"].get("labels") or {}).get(REVISION_LABEL) for p in pods}
    for rev in history.sort_revisions(old):
        if to_kill <= 0:
            break
        if (rev["metadata"].get("labels") or {}).get(REVISION_LABEL) in live:
            continue
        history.delete(c.store, c.COMPONENT, rev)
        to_kill -= 1


# ---- rollingUpdate ----------------------------------------------------------------------------------------


def rolling_update(c: DaemonSetController, ds: Obj, by_node: dict[str, list[Obj]], hash_: str
                   ) -> tuple[list[Obj], list[str]]:
    """rollingUpdate: (old pods to delete, nodes to create a new pod on), for syncNodes."""
    desired = sum(1 for n in c.nodes.values() if should_run(n, ds)[0])
    node_pods = {name: by_node.get(name, []) for name in c.nodes if should_run(c.nodes[name], ds)[0]}
    node_pods.update(by_node)
    # updatedDesiredNodeCounts
    max_unavailable = unavailable_count(ds, desired)
    max_surge = surge_count(ds, desired, c.profile.daemonset_max_surge)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1  # "not configured for surge or unavailability, defaulting to accepting unavailability"
    mrs = int(ds["spec"].get("minReadySeconds") or 0)
    generation = template_generation(ds)

    def available(pod: Obj) -> bool:
        return is_pod_available(c.trace, pod, mrs, c.kernel.now)

    if max_surge == 0:
        num_unavailable = 0
        allowed: list[Obj] = []
        candidates: list[Obj] = []
        for name in sorted(node_pods):
            new, old, ok = find_updated_pods_on_node(node_pods[name], hash_, generation)
            if not ok or (new is None) == (old is None):
                num_unavailable += 1   # excess pods, or nothing / both: the manage loop acts there
            elif new is not None:
                if not available(new):
                    num_unavailable += 1
            elif old is not None and not available(old):
                allowed.append(old)    # an unavailable old pod is replaced at once
                num_unavailable += 1
            elif old is not None and num_unavailable < max_unavailable:
                candidates.append(old)
        remaining = min(max(max_unavailable - num_unavailable, 0), len(candidates))
        return allowed + candidates[:remaining], []

    to_delete: list[Obj] = []
    should_not_run: list[Obj] = []
    candidate_nodes: list[str] = []
    allowed_nodes: list[str] = []
    num_surge = num_available = 0
    for name in sorted(node_pods):
        new, old, ok = find_updated_pods_on_node(node_pods[name], hash_, generation)
        if not ok:
            num_surge += 1
            continue
        if (old is not None and available(old)) or (old is None and new is not None and available(new)):
            num_available += 1
        if old is None:
            continue
        node = c.nodes.get(name)
        runs = node is not None and should_run(node, ds)[0]
        if new is None:
            if not available(old):
                if not runs:
                    to_delete.append(old)
                    continue
                allowed_nodes.append(name)
            else:
                if not runs:
                    should_not_run.append(old)
                    continue
                if num_surge >= max_surge:
                    continue
                candidate_nodes.append(name)
        elif not available(new):
            num_surge += 1             # waiting for the new pod to become available
        else:
            to_delete.append(old)      # the new pod is available: the old one goes
    # "Only delete a pod on node A when a pod on node B becomes available"
    deletable = min(num_available - desired, len(should_not_run))
    if deletable > 0:
        to_delete.extend(should_not_run[:deletable])
    remaining = min(max(max_surge - num_surge, 0), len(candidate_nodes))
    return to_delete, allowed_nodes + candidate_nodes[:remaining]

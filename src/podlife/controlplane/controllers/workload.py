"""What the StatefulSet, Job and DaemonSet controllers share: the pod informer's indexes (pods by controller
UID, orphans by namespace, as in replicaset.py) and controller_ref_manager.go ClaimPods.
"""

from __future__ import annotations

from collections.abc import Callable

from podlife.api import selectors
from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone, owner_of
from podlife.api.store import Store


class PodIndex:
    """A pod informer cache: pods by UID, by controller UID, and orphans by namespace."""

    def __init__(self) -> None:
        self.pods: dict[str, Obj] = {}
        self.by_owner: dict[str, set[str]] = {}
        self.orphans: dict[str, set[str]] = {}

    def update(self, pod: Obj | None, old: Obj | None) -> None:
        if old is not None:
            uid = old["metadata"]["uid"]
            self.pods.pop(uid, None)
            o = owner_of(old)
            if o is not None:
                s = self.by_owner.get(o.get("uid", ""))
                if s is not None:
                    s.discard(uid)
                    if not s:
                        del self.by_owner[o.get("uid", "")]
            else:
                self.orphans.get(old["metadata"]["namespace"], set()).discard(uid)
        if pod is not None:
            uid = pod["metadata"]["uid"]
            self.pods[uid] = pod
            o = owner_of(pod)
            if o is not None:
                self.by_owner.setdefault(o.get("uid", ""), set()).add(uid)
            else:
                self.orphans.setdefault(pod["metadata"]["namespace"], set()).add(uid)

    def candidates(self, owner: Obj) -> list[Obj]:
        """The pods a controller may claim: its own and the orphans of its namespace (upstream lists every pod
        of the namespace; pods controlled by someone else are never claimed), by name."""
        md = owner["metadata"]
        out = [self.pods[u] for u in self.by_owner.get(md["uid"], ())]
        out += [self.pods[u] for u in self.orphans.get(md["namespace"], ())]
        return sorted(out, key=lambda p: p["metadata"]["name"])


def claim_pods(store: Store, component: str, owner: Obj, selector: selectors.Selector, pods: list[Obj],
               ref: Obj, finalizers: tuple[str, ...] = (),
               member: Callable[[Obj], bool] | None = None) -> list[Obj]:
    """PodControllerRefManager.ClaimPods: keep owned pods that match, release owned ones that no longer match,
    adopt matching orphans (after RecheckDeletionTimestamp) adding ``finalizers``; ``member`` is an extra
    filter (the StatefulSet's isMemberOf)."""
    md = owner["metadata"]
    uid, deleting = md["uid"], bool(md.get("deletionTimestamp"))
    claimed: list[Obj] = []
    can_adopt: bool | None = None
    for pod in pods:
        o = owner_of(pod)
        match = not selector.empty() and selector.matches(pod["metadata"].get("labels") or {}) and \
            (member is None or member(pod))
        if o is not None:
            if o.get("uid") != uid:
                continue
            if match:
                claimed.append(pod)
            elif not deleting:
                _patch_owner(store, component, pod, uid, None, ())
            continue
        if deleting or not match or pod["metadata"].get("deletionTimestamp"):
            continue
        if can_adopt is None:
            fresh = store.try_get(owner["kind"], md["namespace"], md["name"])
            can_adopt = fresh is not None and fresh["metadata"]["uid"] == uid and \
                not fresh["metadata"].get("deletionTimestamp")
        if can_adopt:
            adopted = _patch_owner(store, component, pod, None, ref, finalizers)
            if adopted is not None:
                claimed.append(adopted)
    return claimed


def _patch_owner(store: Store, component: str, pod: Obj, release_uid: str | None, adopt: Obj | None,
                 finalizers: tuple[str, ...]) -> Obj | None:
    md = pod["metadata"]
    latest = store.try_get("Pod", md["namespace"], md["name"])
    if latest is None or latest["metadata"]["uid"] != md["uid"]:
        return None
    new = clone(latest)
    refs = [r for r in new["metadata"].get("ownerReferences") or () if r.get("uid") != release_uid]
    if adopt is not None:
        refs.append(adopt)
        fins = list(new["metadata"].get("finalizers") or ())
        fins += [f for f in finalizers if f not in fins]
        if fins:
            new["metadata"]["finalizers"] = fins
    if refs:
        new["metadata"]["ownerReferences"] = refs
    else:
        new["metadata"].pop("ownerReferences", None)
    try:
        return store.update(new, by=component, verb="patch")
    except ApiError:
        return None

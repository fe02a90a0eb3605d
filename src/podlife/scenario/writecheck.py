"""Updates the API server refuses whenever they come, found at load: the scenario's writes replayed through the
API server's own write path (the store, its registry strategies and admission) on a scratch store."""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import Store, ensure_namespaces
from podlife.scenario.fieldcheck import Check
from podlife.cluster.spec import ClusterSpec
from podlife.scenario.model import DEFAULT_START_TIME, Action, Manifest
from podlife.versions import Profile


def check_updates(ck: Check, objects: list[Manifest], actions: list[Action], cluster: ClusterSpec,
                  prof: Profile) -> None:
    """Updates (apply of an existing object, patch, scale) the API server refuses as invalid whatever happens
    before them: the scenario's objects are created, then its create, apply, patch, scale and delete actions are
    made in time order, each by the run's own write (podlife.scenario.actions.write) on a scratch store set up as
    the cluster's API server; an update it refuses as Invalid (replicas below 0, an immutable selector or pod field
    changed, a template whose labels leave the selector) is a load error. Any other refusal (a create, a conflict,
    a patch that does not apply, an object not there) is left to the run, which reports it where it happens; so
    are objects the scenario does not write itself (a controller's pods)."""
    from podlife.scenario.actions import USER, write  # the run's module (it needs the cluster): on first use

    store = _scratch_store(cluster, prof)
    for m in objects:
        try:
            store.create(clone(m.obj), by=USER)
        except ApiError:
            pass   # the run refuses it as it starts
    for i, a in sorted(enumerate(actions), key=lambda ia: ia[1].at):
        if a.verb not in _WRITES:
            continue
        try:
            write(store, a, prof.minor)
        except _Invalid as e:
            field = {"apply": "apply", "scale": "replicas"}.get(a.verb) or \
                ("strategicMergePatch" if a.strategic else "mergePatch")
            raise ck.error(f"spec.actions[{i}].{field}",
                           f"{e.refusal.message} (the API server refuses this update whenever it comes)") from None
        except ApiError:
            pass   # refused at run time, where the action's record says so


_WRITES = ("create", "apply", "patch", "scale", "delete")


class _Invalid(Exception):
    """An update the store refused as Invalid (its ApiError in ``refusal``)."""

    def __init__(self, refusal: ApiError) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class _ScratchStore(Store):
    """The store, telling an update it refuses as Invalid from its other refusals (and from a patch that does not
    apply, refused before the update is made)."""

    def update(self, obj: Obj, by: str, subresource: str | None = None, verb: str = "update",
               extra: dict[str, Any] | None = None, quiet: bool = False, dry_run: bool = False,
               webhooks: Any = None) -> Obj:
        try:
            return super().update(obj, by, subresource, verb, extra, quiet, dry_run, webhooks)
        except ApiError as e:
            if e.reason == "Invalid":
                raise _Invalid(e) from None
            raise


def _scratch_store(cluster: ClusterSpec, prof: Profile) -> Store:
    """A store set up as the cluster's API server (podlife.cluster.Cluster): the version's behaviour with the
    cluster's feature gates, discovery of the served kinds, the system namespaces and the admission chain."""
    from podlife.cluster.cluster import SYSTEM_NAMESPACES, api_server_options
    from podlife.engine.kernel import Kernel
    from podlife.trace.recorder import Trace

    kernel = Kernel(0)
    store = _ScratchStore(kernel, Trace(kernel, DEFAULT_START_TIME, "summary", keep=False),
                          api_server_options(prof, cluster.apiServer))
    ensure_namespaces(store, SYSTEM_NAMESPACES)
    return store

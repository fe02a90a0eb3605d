"""The namespace controller: pkg/controller/namespace (namespace_controller.go, deletion/namespaced_resources_deleter.go
and deletion/status_condition_utils.go).

Every add or update of a namespace being deleted queues it 5 s later (namespaceDeletionGracePeriod). A sync
deletes the content of every namespaced kind, writes the five deletion conditions to the namespace's status
when they change, and then either waits (content remains: queued again after estimate/2 + 1 s; an error:
queued again with the per-item exponential back-off, 5 ms doubling up to 60 s) or removes the ``kubernetes``
finalizer through namespaces/finalize, which purges the namespace.

Discovery in podlife covers every kind the store serves and never fails (there are no aggregated API
servers), so NamespaceDeletionDiscoveryFailure and NamespaceDeletionGroupVersionParsingFailure are always False.
"""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import KindInfo, Obj, clone
from podlife.api.store import DELETED, DeleteOptions, Store
from podlife.controlplane.controllers.controller_utils import parse_time
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "namespace-controller"
FINALIZER = "kubernetes"   # api.FinalizerKubernetes
# namespace_controller.go: events are processed this long after they are seen (HA API servers and etcd catch up)
DELETION_GRACE_PERIOD = 5.0
# namespaced_resources_deleter.go: the estimate assumed for objects held by finalizers
FINALIZER_ESTIMATE_SECONDS = 15
# nsControllerRateLimiter: NewTypedItemExponentialFailureRateLimiter(5ms, 60s) (its 10 qps bucket never binds here)
BACKOFF_BASE, BACKOFF_MAX = 0.005, 60.0

# status_condition_utils.go: the condition types in order, with the reason and message of their "ok" (False) form
CONDITION_TYPES = ("NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                   "NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining")
OK = {"NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
      "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions",
                                                      "All legacy kube types successfully parsed"),
      "NamespaceDeletionContentFailure": ("ContentDeleted",
                                          "All content successfully deleted, may be waiting on finalization"),
      "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
      "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished")}


def _group(info: KindInfo) -> str:
    return info.api_version.rpartition("/")[0]


def _version(info: KindInfo) -> str:
    return info.api_version.rpartition("/")[2]


class NamespaceController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = store
        self._due: dict[str, tuple[float, Any]] = {}   # the delaying queue: name -> (when, timer)
        self._failures: dict[str, int] = {}            # the rate limiter's per-item failure count

    def start(self) -> None:
        self.store.watch("Namespace", self._on_namespace)

    def _on_namespace(self, type_: str, ns: Obj, old: Obj | None) -> None:
        # enqueueNamespace: only namespaces being deleted, DELETION_GRACE_PERIOD later
        if type_ != DELETED and ns["metadata"].get("deletionTimestamp"):
            self._add_after(ns["metadata"]["name"], DELETION_GRACE_PERIOD)

    def _add_after(self, name: str, delay: float) -> None:
        """client-go's delaying queue: an item waiting already keeps the earlier of its two ready times."""
        when = self.kernel.now + delay
        due = self._due.get(name)
        if due is not None:
            if due[0] <= when:
                return
            self.kernel.cancel(due[1])
        self._due[name] = (when, self.kernel.call_later(delay, lambda: self._work(name)))

    def _work(self, name: str) -> None:
        self._due.pop(name, None)
        try:
            estimate = self._sync(name)
        except ApiError:
            # AddRateLimited: 5 ms * 2^failures, at most 60 s
            n = self._failures.get(name, 0)
            self._failures[name] = n + 1
            self._add_after(name, min(BACKOFF_BASE * 2 ** n, BACKOFF_MAX))
            return
        if estimate:
            # a ResourcesRemainingError: looked at again after estimate/2 + 1 seconds (not forgotten: an error)
            self._add_after(name, estimate // 2 + 1)
        else:
            self._failures.pop(name, None)   # Forget

    def _sync(self, name: str) -> int:
        """namespacedResourcesDeleter.Delete: the estimate (seconds) while content remains, 0 once finalized.
        Raises the content errors the controller retries with back-off."""
        ns = self.store.try_get("Namespace", None, name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return 0
        if not (ns.get("spec") or {}).get("finalizers"):
            return 0   # finalized already: nothing for this controller
        if (ns.get("status") or {}).get("phase") != "Terminating":
            # updateNamespaceStatusFunc (the registry sets the phase with the deletionTimestamp; kept for restores)
            ns = clone(ns)
            ns.setdefault("status", {})["phase"] = "Terminating"
            ns = self.store.update(ns, by=NAME, subresource="status")
        estimate, errors = self._delete_all_content(ns)
        if errors:
            raise errors[0]
        if estimate > 0:
            return estimate
        if FINALIZER in ns["spec"]["finalizers"]:
            self._finalize(name)
        return 0

    def _finalize(self, name: str) -> None:
        """finalizeNamespace: spec.finalizers without ours, sorted (a set's List()), through namespaces/finalize;
        retried on a conflict against the latest namespace (retryOnConflictError)."""
        ns = self.store.try_get("Namespace", None, name)
        if ns is None:
            return
        new = clone(ns)
        new["spec"]["finalizers"] = sorted({f for f in ns["spec"].get("finalizers") or () if f != FINALIZER})
        self.store.update(new, by=NAME, subresource="finalize")

    def _delete_all_content(self, ns: Obj) -> tuple[int, list[ApiError]]:
        """deleteAllContent: every namespaced kind with a delete verb, in a fixed order (upstream's is a map's)."""
        name = ns["metadata"]["name"]
        deleted_at = parse_time(self.trace, ns["metadata"]["deletionTimestamp"]) or 0.0
        estimate = 0
        errors: list[ApiError] = []
        error_messages: list[str] = []
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for kind in sorted(self.store.kinds):
            info = self.store.kinds[kind]
            if not info.namespaced or kind == "Namespace":
                continue
            est, left, held, err = self._delete_kind(kind, info, name, deleted_at)
            estimate = max(estimate, est)
            if err is not None:
                errors.append(ApiError(500, "InternalError", err))
                error_messages.append(err)
            if left:
                remaining[f"{info.resource}.{_group(info)}"] = left
                for f, n in held.items():
                    finalizers[f] = finalizers.get(f, 0) + n
        self._update_conditions(ns, remaining, finalizers, error_messages)
        return estimate, errors

    def _delete_kind(self, kind: str, info: KindInfo, namespace: str,
                     deleted_at: float) -> tuple[int, int, dict[str, int], str | None]:
        """deleteAllContentForGroupVersionResource: (estimate, objects left, finalizers holding them, error)."""
        estimate = 0
        if kind == "Pod":
            # estimateGracefulTerminationForPods: the longest terminationGracePeriodSeconds of pods not terminal,
            # dropped once that long has passed since the namespace's deletionTimestamp
            for pod in self.store.list("Pod", namespace):
                if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                    continue
                grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
                if isinstance(grace, int) and grace > estimate:
                    estimate = grace
            if self.kernel.now - deleted_at >= estimate:
                estimate = 0
        # deleteCollection with propagationPolicy Background (the collection's items, one by one)
        for obj in self.store.list(kind, namespace):
            md = obj["metadata"]
            try:
                self.store.delete(kind, namespace, md["name"], by=NAME,
                                  options=DeleteOptions(propagation_policy="Background"))
            except ApiError:
                continue   # gone meanwhile (NotFound)
        left = self.store.list(kind, namespace)
        if not left:
            return 0, 0, {}, None
        held: dict[str, int] = {}
        for obj in left:
            for f in obj["metadata"].get("finalizers") or ():
                held[f] = held.get(f, 0) + 1
        if estimate:
            return estimate, len(left), held, None
        if held:
            return FINALIZER_ESTIMATE_SECONDS, len(left), held, None
        # GroupVersionResource.String(): "apps/v1, Resource=deployments", "/v1, Resource=pods"
        gvr = f"{_group(info)}/{_version(info)}, Resource={info.resource}"
        return 0, len(left), {}, f"unexpected items still remain in namespace: {namespace} for gvr: {gvr}"

    def _update_conditions(self, ns: Obj, remaining: dict[str, int], finalizers: dict[str, int],
                           errors: list[str]) -> None:
        """namespaceConditionUpdater.Update: each type's new condition (its ok form unless failing); an existing one
        keeps its lastTransitionTime unless its status changes. The status is written only when something changed."""
        now = self.trace.timestamp()
        new: dict[str, dict[str, Any]] = {}
        if remaining:
            parts = sorted(f"{gr} has {n} resource instances" for gr, n in remaining.items())
            new["NamespaceContentRemaining"] = _condition("NamespaceContentRemaining", "True", now,
                                                          "SomeResourcesRemain",
                                                          "Some resources are remaining: " + ", ".join(parts))
        if finalizers:
            parts = sorted(f"{f} in {n} resource instances" for f, n in finalizers.items())
            new["NamespaceFinalizersRemaining"] = _condition(
                "NamespaceFinalizersRemaining", "True", now, "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: " + ", ".join(parts))
        if errors:
            new["NamespaceDeletionContentFailure"] = _condition(
                "NamespaceDeletionContentFailure", "True", now, "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(errors)} remaining: " + ", ".join(sorted(errors)))
        current = self.store.try_get("Namespace", None, ns["metadata"]["name"])
        if current is None:
            return
        out = clone(current)
        conds = out.setdefault("status", {}).setdefault("conditions", [])
        changed = False
        for type_ in CONDITION_TYPES:
            cond = new.get(type_) or _condition(type_, "False", now, *OK[type_])
            old = next((c for c in conds if c.get("type") == type_), None)
            if old is None:
                conds.append(cond)
                changed = True
            elif (old.get("status"), old.get("reason"), old.get("message")) != \
                    (cond["status"], cond["reason"], cond["message"]):
                if old.get("status") != cond["status"]:
                    old["lastTransitionTime"] = now
                old.update(status=cond["status"], reason=cond["reason"], message=cond["message"])
                changed = True
        if changed:
            try:
                self.store.update(out, by=NAME, subresource="status")
            except ApiError:
                pass   # "couldn't update status condition for namespace": logged upstream, not retried


def _condition(type_: str, status: str, now: str, reason: str, message: str) -> dict[str, Any]:
    # v1.NamespaceCondition's field order
    return {"type": type_, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}

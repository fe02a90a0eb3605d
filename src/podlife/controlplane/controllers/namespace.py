"""The namespace controller: pkg/controller/namespace (namespace_controller.go and
deletion/namespaced_resources_deleter.go).

A namespace being deleted (Terminating, "kubernetes" in spec.finalizers) has its content deleted, every
namespaced kind in turn. While objects remain (pods still terminating) the namespace is looked at again after
half the longest grace period left plus one second (the controller's requeue with the deleter's estimate);
once it is empty the controller removes its finalizer through namespaces/finalize, which purges the namespace.
"""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import DELETED, DeleteOptions, Store
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "namespace-controller"
FINALIZER = "kubernetes"   # api.FinalizerKubernetes


class NamespaceController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.kernel = kernel
        self.store = store
        self._queued: set[str] = set()

    def start(self) -> None:
        self.store.watch("Namespace", self._on_namespace)

    def _on_namespace(self, type_: str, ns: Obj, old: Obj | None) -> None:
        if type_ != DELETED and ns["metadata"].get("deletionTimestamp"):
            self._enqueue(ns["metadata"]["name"], 0.0)

    def _enqueue(self, name: str, delay: float) -> None:
        if name in self._queued:
            return
        self._queued.add(name)
        self.kernel.call_later(delay, lambda: self._sync(name))

    def _sync(self, name: str) -> None:
        self._queued.discard(name)
        ns = self.store.try_get("Namespace", None, name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or ()):
            return
        remaining, estimate = self._delete_content(name)
        if remaining:
            # namespace_controller.go: a ResourcesRemainingError is requeued after estimate/2 + 1 seconds
            self._enqueue(name, estimate // 2 + 1)
            return
        new = clone(ns)
        new["spec"]["finalizers"] = [f for f in new["spec"]["finalizers"] if f != FINALIZER]
        try:
            self.store.update(new, by=NAME, subresource="finalize")
        except ApiError:
            self._enqueue(name, 1.0)

    def _delete_content(self, namespace: str) -> tuple[int, int]:
        """deleteAllContent: delete each namespaced object; (objects left, the longest grace left in seconds)."""
        remaining, estimate = 0, 0
        for kind in sorted(self.store.kinds):
            info = self.store.kinds[kind]
            if not info.namespaced or kind == "Namespace":
                continue
            for obj in self.store.list(kind, namespace):
                md = obj["metadata"]
                if not md.get("deletionTimestamp"):
                    try:
                        obj = self.store.delete(kind, namespace, md["name"], by=NAME,
                                                options=DeleteOptions(propagation_policy="Background"))
                    except ApiError:
                        continue
                if obj is not None:
                    remaining += 1
                    estimate = max(estimate, int(obj["metadata"].get("deletionGracePeriodSeconds") or 0))
        return remaining, estimate

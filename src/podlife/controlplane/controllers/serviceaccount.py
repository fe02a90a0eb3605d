"""The serviceaccounts controller: pkg/controller/serviceaccount/serviceaccounts_controller.go.

Every namespace gets a ServiceAccount named "default" (ServiceAccountsControllerOptions: the one account it
ensures), created when the namespace appears and again whenever it is deleted while the namespace lives.
"""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.store import DELETED, Store
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "service-account-controller"
DEFAULT = "default"


class ServiceAccountsController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile) -> None:
        self.store = store

    def start(self) -> None:
        for ns in self.store.list("Namespace"):
            self._ensure(ns["metadata"]["name"])
        self.store.watch("Namespace", self._on_namespace)
        self.store.watch("ServiceAccount", self._on_service_account)

    def _on_namespace(self, type_: str, ns: Obj, old: Obj | None) -> None:
        if type_ != DELETED and not ns["metadata"].get("deletionTimestamp"):
            self._ensure(ns["metadata"]["name"])

    def _on_service_account(self, type_: str, sa: Obj, old: Obj | None) -> None:
        if type_ == DELETED and sa["metadata"]["name"] == DEFAULT:
            ns = self.store.try_get("Namespace", None, sa["metadata"]["namespace"])
            if ns is not None and not ns["metadata"].get("deletionTimestamp"):
                self._ensure(sa["metadata"]["namespace"])

    def _ensure(self, namespace: str) -> None:
        """syncNamespace: create the account unless it exists (AlreadyExists is success)."""
        if self.store.try_get("ServiceAccount", namespace, DEFAULT) is not None:
            return
        try:
            self.store.create({"apiVersion": "v1", "kind": "ServiceAccount",
                               "metadata": {"name": DEFAULT, "namespace": namespace}}, by=NAME)
        except ApiError:
            pass

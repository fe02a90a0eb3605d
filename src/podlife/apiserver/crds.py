"""CustomResourceDefinitions served: the apiextensions server's controllers that matter to clients.

A stored CRD's resources are served (and listed in discovery) at once; its status says they are
(pkg/controller/establish and the naming controller: NamesAccepted and Established, acceptedNames,
storedVersions). Deleting a CRD deletes its resources (the customresourcecleanup finalizer,
pkg/controller/finalizer).
"""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.store import DELETED, Store
from podlife.apiserver.resources import Catalog, kind_info

NAME = "apiextensions-apiserver"


class EstablishingController:
    def __init__(self, store: Store, catalog: Catalog, trace: Any) -> None:
        self.store = store
        self.catalog = catalog
        self.trace = trace

    def start(self) -> None:
        self.store.watch("CustomResourceDefinition", self._changed)

    def _changed(self, type_: str, obj: Obj, old: Obj | None) -> None:
        self.catalog.set_crds(self.store.list("CustomResourceDefinition"))
        for r in self.catalog.all():
            if r.custom and r.kind not in self.store.kinds:
                self.store.kinds[r.kind] = kind_info(r)
        if type_ == DELETED:
            self._clean_up(obj)
        else:
            self._establish(obj)

    def _clean_up(self, crd: Obj) -> None:
        kind = ((crd.get("spec") or {}).get("names") or {}).get("kind")
        if not kind or any(r.custom and r.kind == kind for r in self.catalog.all()):
            return
        for o in self.store.list(kind):
            try:
                self.store.delete(kind, o["metadata"].get("namespace"), o["metadata"]["name"], by=NAME)
            except ApiError:
                pass

    def _establish(self, crd: Obj) -> None:
        conds = (crd.get("status") or {}).get("conditions") or []
        if any(isinstance(c, dict) and c.get("type") == "Established" and c.get("status") == "True" for c in conds):
            return
        spec = crd.get("spec") or {}
        new = clone(crd)
        ts = self.trace.timestamp()
        # the naming and establishing controllers set their own conditions (apihelpers.SetCRDCondition: replace the
        # one of that type, keep the rest), so conditions a client wrote stay
        status = new.get("status") if isinstance(new.get("status"), dict) else {}
        mine = [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": ts},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": ts}]
        conditions = list(status.get("conditions") or ())
        for cond in mine:
            at = next((i for i, c in enumerate(conditions) if isinstance(c, dict) and c.get("type") == cond["type"]),
                      None)
            if at is None:
                conditions.append(cond)
            else:
                conditions[at] = cond
        new["status"] = {
            **status,
            "acceptedNames": spec.get("names") or {},
            "conditions": conditions,
            "storedVersions": status.get("storedVersions") or
            [v.get("name") for v in spec.get("versions") or () if v.get("storage")]}
        try:
            self.store.update(new, by=NAME, subresource="status")
        except ApiError:
            pass

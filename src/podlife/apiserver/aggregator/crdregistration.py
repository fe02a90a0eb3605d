"""APIServices for custom resources: one per served version of each CustomResourceDefinition's group, kept while
a CRD serves it (pkg/controlplane/controller/crdregistration: groupPriorityMinimum 1000, versionPriority 100;
autoregister's continuously synced ones, label automanaged=true: created, and deleted once no CRD serves the
version)."""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.apiserver.aggregator import registration

MANAGED = "true"


def wanted(crds: list[Obj]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for crd in crds:
        spec = crd.get("spec") or {}
        group = spec.get("group") or ""
        for v in spec.get("versions") or ():
            if group and v.get("served") and v.get("name"):
                out[registration.name_of(group, v["name"])] = (group, v["name"])
    return out


class CRDRegistration:
    def __init__(self, store: Any, timestamp: Any) -> None:
        self.store = store
        self.timestamp = timestamp

    def start(self) -> None:
        self.sync()
        self.store.watch("CustomResourceDefinition", lambda *_: self.sync())

    def sync(self) -> None:
        want = wanted([c for c in self.store.list("CustomResourceDefinition")
                       if not c["metadata"].get("deletionTimestamp")])
        for name, (group, version) in sorted(want.items()):
            if self.store.try_get("APIService", None, name) is not None:
                continue
            obj = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                   "metadata": {"name": name, "labels": {registration.MANAGED_LABEL: MANAGED}},
                   "spec": {"group": group, "version": version, "groupPriorityMinimum": registration.CRD_GROUP_PRIORITY,
                            "versionPriority": 100}}
            try:
                created = self.store.create(obj, by=registration.BY)
                created = {**created, "status": {"conditions": [
                    {**registration.LOCAL_CONDITION, "lastTransitionTime": self.timestamp()}]}}
                self.store.update(created, by=registration.BY, subresource="status")
            except ApiError:
                continue
        for a in self.store.list("APIService"):
            md = a["metadata"]
            if (md.get("labels") or {}).get(registration.MANAGED_LABEL) == MANAGED and md["name"] not in want:
                try:
                    self.store.delete("APIService", None, md["name"], by=registration.BY)
                except ApiError:
                    pass

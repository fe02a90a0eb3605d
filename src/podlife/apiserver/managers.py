"""managedFields of the model's own writes in a live cluster, as the real components' writes get them.

Upstream every write goes through the API server's field manager, and the manager's name is the first part of
the client's user agent (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go managerOrUserAgent): the
controllers all run in kube-controller-manager, the scheduler is kube-scheduler, the kubelet kubelet. So a pod
a ReplicaSet made carries a ``kube-controller-manager`` Update entry for what the controller set, and one of
``kubelet`` for the status (subresource status); a server-side apply that takes a field a controller owns
conflicts with kube-controller-manager. A pod's binding leaves no entry: pods/binding writes the pod in
storage directly (pkg/registry/core/pod/storage/storage.go assignPod), not through the field manager.

Events are left without: they are the model's most frequent writes, and nobody applies to them. Only
``podlife up`` records them (the store's ``manage`` hook is unset in ``podlife run``, which never shows
managedFields), so they cost the scenario runs nothing.
"""

from __future__ import annotations

from typing import Any

from podlife.api import schema
from podlife.api.meta import Obj
from podlife.apiserver import fieldmanager
from podlife.apiserver.resources import Catalog

# the model's writers (``by``) whose binary is not kube-controller-manager
_MANAGERS = {
    "kubelet": "kubelet",
    "default-scheduler": "kube-scheduler",
    "apiserver": "kube-apiserver",
    "apiextensions-apiserver": "kube-apiserver",           # the CRD controllers run inside kube-apiserver
    "cloud-node-lifecycle-controller": "cloud-controller-manager",
}
_CONTROLLER_MANAGER = ("-controller", "-collector", "horizontal-pod-autoscaler")


def manager_of(by: str) -> str | None:
    """The field manager of a model component's write; None for a write an API client made (the server has
    recorded its manager already)."""
    if by in _MANAGERS:
        return _MANAGERS[by]
    return "kube-controller-manager" if by.endswith(_CONTROLLER_MANAGER) else None


class ModelWrites:
    """The store's ``manage`` hook: the managedFields of a model component's create or update of a built-in
    kind, set from the cluster's start (the kubelets' Nodes and Leases included)."""

    def __init__(self, minor: int) -> None:
        self.minor = minor
        self.catalog = Catalog(minor)
        self._resources: dict[tuple[str, str], Any] = {}

    def __call__(self, kind: str, old: Obj | None, new: Obj, by: str, subresource: str, now: str) -> None:
        manager = manager_of(by)
        if manager is None or kind == "Event":   # Events: many, written once, never applied to
            return
        key = (new.get("apiVersion", ""), kind)
        if key not in self._resources:
            self._resources[key] = self.catalog.for_kind(*key)
        r = self._resources[key]
        if r is None:
            return
        out = fieldmanager.update(old or {}, new, manager, schema.type_schema(self.minor, r.api_version, r.kind),
                                  now, subresource=subresource,
                                  has_status=any(s[0] == "status" for s in r.subresources), copy_object=False)
        managed = out["metadata"].get("managedFields")
        if managed is None:
            new["metadata"].pop("managedFields", None)
        else:
            new["metadata"]["managedFields"] = managed

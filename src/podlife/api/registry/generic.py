"""The default strategy every kind starts from (staging/src/k8s.io/apiserver/pkg/registry/rest)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podlife.api import defaults, validation
from podlife.api.errors import FieldError
from podlife.api.meta import KindInfo, Obj, clone
from podlife.api.podutil import drop_disabled_pod_fields
from podlife.versions import NegativeGrace, Profile

if TYPE_CHECKING:
    from podlife.api.store import Store


def drop_disabled_template_fields(obj: Obj, profile: Profile | None) -> None:
    """DropDisabledTemplateFields in each workload strategy's PrepareForCreate and PrepareForUpdate: the pod
    template's fields whose feature gate is off go, as from a pod (a CronJob's job template included). Upstream
    keeps a field on update when the old template uses it; here no stored template can, as the same gates
    dropped it when the object was created."""
    spec = spec_ if isinstance(spec_ := obj.get("spec"), dict) else {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec") or {}) if isinstance(spec.get("jobTemplate"), dict) else {}
    template = obj.get("template") if obj.get("kind") == "PodTemplate" else spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        drop_disabled_pod_fields(template["spec"], profile)


# metadata fields a status write keeps from the written object, by kind (see prepare_for_status_update)
_STATUS_KEEPS: dict[str, tuple[str, ...]] = {
    "Pod": ("labels", "annotations"),
    "ReplicationController": ("labels", "annotations"),
    "Service": ("labels", "annotations"),
    "Namespace": ("labels", "annotations"),
    "ReplicaSet": ("labels", "annotations"),
    "StatefulSet": ("labels", "annotations"),
    "DaemonSet": ("labels", "annotations"),
    "Deployment": ("annotations",),
    "Job": ("labels", "annotations"),
    "CronJob": ("labels", "annotations"),
    # pkg/registry/certificates/certificates/strategy.go csrStatusStrategy and csrApprovalStrategy
    "CertificateSigningRequest": ("labels", "annotations"),
}


def _same_map(a: Any, b: Any) -> bool:
    """The same labels or annotations, keys in the same order (the order they are encoded in)."""
    return type(a) is dict and type(b) is dict and a == b and list(a) == list(b)


class Strategy:
    def __init__(self, info: KindInfo) -> None:
        self.kind = info.kind
        self.info = info

    def prepare_for_create(self, obj: Obj, store: Store) -> None:
        obj.setdefault("apiVersion", self.info.api_version)
        defaults.apply_defaults(obj, store.profile)
        drop_disabled_template_fields(obj, store.profile)
        for plugin in store.admission:   # each plugin looks only at its kinds
            plugin.admit(obj)
        if self.info.has_status:
            obj["status"] = self.initial_status(obj)

    def initial_status(self, obj: Obj) -> dict:
        if self.kind in ("PersistentVolumeClaim", "PersistentVolume"):
            # persistentvolume(claim)Strategy.PrepareForCreate: a new claim is Pending, a new volume Pending
            return {"phase": "Pending"}
        return obj.get("status") or {} if self.kind in ("Node", "Namespace") else {}

    def prepare_for_update(self, new: Obj, old: Obj, store: Store) -> None:
        """A write to the main resource keeps the stored status (status has its own subresource)."""
        defaults.apply_defaults(new, store.profile)
        drop_disabled_template_fields(new, store.profile)
        if self.info.has_status:
            new["status"] = old.get("status", {})

    def prepare_for_status_update(self, new: Obj, old: Obj, written: Obj) -> None:
        """``new`` is the stored object with the written status. The status strategies of these kinds reset only
        spec (and a Deployment's labels), so labels and annotations written with the status persist:
        pkg/registry/core/pod/strategy.go podStatusStrategy (ownerReferences stay the stored ones),
        pkg/registry/core/{replicationcontroller,service,namespace}/strategy.go, pkg/registry/batch/{job,cronjob}/
        strategy.go and pkg/registry/apps/{replicaset,statefulset,daemonset}/strategy.go *StatusStrategy,
        pkg/registry/apps/deployment/strategy.go deploymentStatusStrategy (labels reset: the annotations carry the
        controller's revision)."""
        keep_written_metadata(self.kind, new, written)

    def validate(self, obj: Obj) -> list[FieldError]:
        return validation.validate(obj, namespaced=self.info.namespaced, custom=self.info.custom)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validation.validate(new, old=old, namespaced=self.info.namespaced, custom=self.info.custom)

    def check_graceful_delete(self, obj: Obj, grace: int | None, negative_grace: NegativeGrace) -> int | None:
        """Grace period for a delete, or None when the kind is deleted at once."""
        return None


def keep_written_metadata(kind: str, new: Obj, written: Obj) -> None:
    """A subresource write (status, a CSR's approval) keeps the labels and annotations written with it: the
    subresource strategies reset spec (and status), not metadata (see _STATUS_KEEPS)."""
    fields = _STATUS_KEEPS.get(kind, ())
    written_md, md = written.get("metadata") or {}, new["metadata"]
    for f in fields:
        if f in written_md:
            value, stored = written_md[f], md.get(f)
            # written as stored (the kubelet's status writes send the stored metadata back): the stored
            # object is kept, shared with the revision before as _revision shares it, so that readers which
            # compare revisions by identity (the informers' indexes) see labels that did not change
            if value is not stored and not _same_map(value, stored):
                md[f] = clone(value)
        else:
            md.pop(f, None)

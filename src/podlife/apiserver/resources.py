"""The resources the live API serves: built-in kinds of the modelled version, and custom resources.

Built-in kinds come from the version's schemas (podlife.api.schema); each is served in its GA version and in the
beta versions upstream serves by default at that minor (podlife.versions.SERVED_BETAS: betas that existed before
1.24 stay on until removed, newer ones are off, KEP-3136; alpha versions are always off). A kind the model
stores in one version (podlife.api.meta.KINDS) is served in another only when podlife.api.conversion converts
it (Events also in events.k8s.io/v1, HorizontalPodAutoscalers in autoscaling/v1); a kind served in several
versions and converted between them (FlowSchema, PriorityLevelConfiguration) is stored in its preferred one.
The beta versions not served, though upstream served them by default, are listed in the README (API section).
Custom resources are served for each served version of a stored CustomResourceDefinition.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from podlife.api import schema
from podlife import versions
from podlife.api.conversion import CONVERSIONS, Conversion, converter
from podlife.api.meta import KINDS, KindInfo, Obj, builtin_kind_info, plural

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# kubectl's short names and categories as each resource's REST storage declares them
# (pkg/registry/*/storage: ShortNames(), Categories())
SHORT_NAMES = {
    "pods": ["po"], "services": ["svc"], "nodes": ["no"], "namespaces": ["ns"], "configmaps": ["cm"],
    "endpoints": ["ep"], "events": ["ev"], "limitranges": ["limits"], "persistentvolumeclaims": ["pvc"],
    "persistentvolumes": ["pv"], "replicationcontrollers": ["rc"], "resourcequotas": ["quota"],
    "serviceaccounts": ["sa"], "componentstatuses": ["cs"], "deployments": ["deploy"], "replicasets": ["rs"],
    "statefulsets": ["sts"], "daemonsets": ["ds"], "cronjobs": ["cj"], "horizontalpodautoscalers": ["hpa"],
    "poddisruptionbudgets": ["pdb"], "priorityclasses": ["pc"], "storageclasses": ["sc"],
    "customresourcedefinitions": ["crd", "crds"], "ingresses": ["ing"], "networkpolicies": ["netpol"],
    "certificatesigningrequests": ["csr"],
}
CATEGORY_ALL = frozenset({"pods", "services", "replicationcontrollers", "deployments", "replicasets",
                          "statefulsets", "daemonsets", "jobs", "cronjobs", "horizontalpodautoscalers"})
# kinds that are requests rather than stored objects: only create (pkg/registry/authorization, authentication)
CREATE_ONLY = frozenset({"TokenReview", "SubjectAccessReview", "SelfSubjectAccessReview", "LocalSubjectAccessReview",
                         "SelfSubjectRulesReview", "SelfSubjectReview", "Binding"})
# kinds that exist only as subresources
SUBRESOURCE_KINDS = frozenset({"Scale", "Eviction", "TokenRequest"})
READ_ONLY = {"ComponentStatus": ("get", "list")}

# subresources of built-in resources: name → (kind of the response, verbs)
_STATUS = ("get", "patch", "update")
SUBRESOURCES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {
    "pods": {"status": ("Pod", _STATUS), "binding": ("Binding", ("create",)),
             "eviction": ("Eviction", ("create",)), "log": ("Pod", ("get",)),
             "ephemeralcontainers": ("Pod", _STATUS), "exec": ("PodExecOptions", ("create", "get")),
             "attach": ("PodAttachOptions", ("create", "get")),
             "portforward": ("PodPortForwardOptions", ("create", "get")),
             "proxy": ("PodProxyOptions", ("create", "delete", "get", "patch", "update"))},
    "nodes": {"status": ("Node", _STATUS),
              "proxy": ("NodeProxyOptions", ("create", "delete", "get", "patch", "update"))},
    "namespaces": {"status": ("Namespace", _STATUS), "finalize": ("Namespace", ("update",))},
    "services": {"status": ("Service", _STATUS),
                 "proxy": ("ServiceProxyOptions", ("create", "delete", "get", "patch", "update"))},
    "serviceaccounts": {"token": ("TokenRequest", ("create",))},
    "deployments": {"status": ("Deployment", _STATUS), "scale": ("Scale", _STATUS)},
    "replicasets": {"status": ("ReplicaSet", _STATUS), "scale": ("Scale", _STATUS)},
    "statefulsets": {"status": ("StatefulSet", _STATUS), "scale": ("Scale", _STATUS)},
    "replicationcontrollers": {"status": ("ReplicationController", _STATUS), "scale": ("Scale", _STATUS)},
}
for _r in ("daemonsets", "jobs", "cronjobs", "horizontalpodautoscalers", "poddisruptionbudgets",
           "persistentvolumeclaims", "persistentvolumes", "resourcequotas", "customresourcedefinitions",
           "apiservices", "certificatesigningrequests", "ingresses", "networkpolicies", "volumeattachments",
           "flowschemas", "prioritylevelconfigurations", "validatingadmissionpolicies"):
    SUBRESOURCES.setdefault(_r, {})["status"] = ("", _STATUS)
# pkg/registry/certificates/certificates/storage: ApprovalREST (get, patch, update)
SUBRESOURCES["certificatesigningrequests"]["approval"] = ("", _STATUS)


# kinds whose REST storage returns the deleted object rather than a Status (ReturnDeletedObject)
# (pkg/registry/*/storage; the OpenAPI answer type of their DELETE is the object, so typed clients expect it)
RETURNS_DELETED = frozenset({"Pod", "Namespace", "Node", "PersistentVolume", "PersistentVolumeClaim",
                             "Service", "ReplicationController", "PodTemplate", "ResourceQuota", "ServiceAccount",
                             "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass",
                             "DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"})


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    resource: str              # plural
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = ALL_VERBS
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[tuple[str, str, tuple[str, ...]], ...] = ()   # (name, response kind, verbs)
    storage_kind: str = ""     # the kind the store keeps it under (= kind)
    custom: bool = False
    crd: Obj | None = field(default=None, compare=False, hash=False)
    stored_version: str = ""   # the apiVersion the store keeps it in, when not this one
    # to and from the stored version, when not served as stored (podlife.api.conversion)
    conversion: Conversion | None = field(default=None, compare=False, hash=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        if self.crd is not None:
            return ((self.crd.get("spec") or {}).get("names") or {}).get("singular") or self.kind.lower()
        return self.kind.lower()

    def subresource(self, name: str) -> tuple[str, tuple[str, ...]] | None:
        for n, kind, verbs in self.subresources:
            if n == name:
                return kind, verbs
        return None


_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(v: str) -> tuple[int, int, int]:
    """Kube-aware version order (GA > beta > alpha, then by number): staging/src/k8s.io/apimachinery/pkg/version
    CompareKubeAwareVersionStrings."""
    m = _VERSION.match(v)
    if not m:
        return (-1, 0, 0)
    stage = {None: 2, "beta": 1, "alpha": 0}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0))


def _served(api_version: str, kind: str, minor: int) -> bool:
    group, _, version = api_version.rpartition("/")
    stage = version_priority(version)[0]
    return stage == 2 or (stage == 1 and versions.beta_served(group, version, kind, minor))


@lru_cache(maxsize=8)
def builtin_resources(minor: int) -> tuple[Resource, ...]:
    out: list[Resource] = []
    served = sorted((g for g in schema.builtin_kinds(minor) if _served(g.api_version, g.kind, minor)),
                    key=lambda g: (g.kind, g.api_version))
    # a kind outside the model is stored in its preferred version (the group's highest by version priority)
    stored: dict[str, str] = {}
    for gvk in served:
        best = stored.get(gvk.kind)
        if best is None or version_priority(gvk.api_version.rpartition("/")[2]) > version_priority(
                best.rpartition("/")[2]):
            stored[gvk.kind] = gvk.api_version
    several = Counter(g.kind for g in served)
    for gvk in served:
        kind, api_version = gvk.kind, gvk.api_version
        if kind in SUBRESOURCE_KINDS:
            continue
        group, _, version = api_version.rpartition("/")
        if kind in KINDS and KINDS[kind].api_version != api_version and (group, version, kind) not in CONVERSIONS:
            continue   # one version per modelled kind: the one the model stores, or one converted to it
        store_as = KINDS[kind].api_version if kind in KINDS else stored[kind]
        info = KINDS.get(kind) or builtin_kind_info(kind, api_version)
        resource = info.resource if kind in KINDS else plural(kind)
        verbs = ("create",) if kind in CREATE_ONLY else READ_ONLY.get(kind, ALL_VERBS)
        subs = tuple((name, rkind or kind, verbs_)
                     for name, (rkind, verbs_) in sorted(SUBRESOURCES.get(resource, {}).items()))
        short = tuple(SHORT_NAMES.get(resource, ()))
        if group == "events.k8s.io":
            short = ("ev",)
        out.append(Resource(group, version, resource, kind, info.namespaced, verbs, short,
                            ("all",) if resource in CATEGORY_ALL else (), subs, kind,
                            stored_version=store_as,
                            conversion=converter(group, version, kind, store_as) if several[kind] > 1 else None))
    return tuple(out)


def custom_resources(crds: list[Obj]) -> list[Resource]:
    """The resources of established CustomResourceDefinitions, one per served version."""
    out = []
    for crd in crds:
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        for v in spec.get("versions") or ():
            if not isinstance(v, dict) or not v.get("served", True):
                continue
            subs = []
            sr = v.get("subresources") or {}
            if "status" in sr:
                subs.append(("status", names.get("kind", ""), _STATUS))
            if "scale" in sr:
                subs.append(("scale", "Scale", _STATUS))
            out.append(Resource(spec.get("group", ""), v.get("name", ""), names.get("plural", ""),
                                names.get("kind", ""), spec.get("scope") != "Cluster", ALL_VERBS,
                                tuple(names.get("shortNames") or ()), tuple(names.get("categories") or ()),
                                tuple(subs), names.get("kind", ""), True, crd))
    return out


def kind_info(r: Resource) -> KindInfo:
    """What the store needs to know about a served resource."""
    if r.kind in KINDS:
        return KINDS[r.kind]
    return KindInfo(r.kind, r.stored_version or r.api_version, r.resource, r.namespaced, r.custom,
                    any(s[0] == "status" for s in r.subresources) and not r.custom, r.custom)


class Catalog:
    """The built-in resources of a version plus the custom resources of the stored CRDs, looked up by URL parts."""

    def __init__(self, minor: int) -> None:
        self.minor = minor
        self.builtin = builtin_resources(minor)
        self._custom: list[Resource] = []
        self._index: dict[tuple[str, str, str], Resource] = {}
        self.generation = 0
        self._reindex()

    def set_crds(self, crds: list[Obj]) -> None:
        custom = custom_resources(crds)
        # Resource equality ignores the CRD object: a changed schema (validation, defaults) must still replace it
        if custom != self._custom or [r.crd for r in custom] != [r.crd for r in self._custom]:
            self._custom = custom
            self.generation += 1
            self._reindex()

    def _reindex(self) -> None:
        self._index = {(r.group, r.version, r.resource): r for r in (*self.builtin, *self._custom)}

    def all(self) -> list[Resource]:
        return [*self.builtin, *self._custom]

    def lookup(self, group: str, version: str, resource: str) -> Resource | None:
        return self._index.get((group, version, resource))

    def groups(self) -> dict[str, list[str]]:
        """group → served versions, preferred first."""
        out: dict[str, set[str]] = {}
        for r in self.all():
            out.setdefault(r.group, set()).add(r.version)
        return {g: sorted(vs, key=version_priority, reverse=True) for g, vs in out.items()}

    def in_version(self, group: str, version: str) -> list[Resource]:
        return sorted((r for r in self.all() if r.group == group and r.version == version),
                      key=lambda r: r.resource)

    def for_kind(self, api_version: str, kind: str) -> Resource | None:
        group, _, version = api_version.rpartition("/")
        for r in self.all():
            if r.kind == kind and r.group == group and r.version == version:
                return r
        return None

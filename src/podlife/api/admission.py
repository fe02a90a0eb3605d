"""Mutating admission plugins of the API server: plugin/pkg/admission.

The apiserver's create handler decodes the object (applying defaults), runs the mutating admission chain, then
the registry strategy (PrepareForCreate) and validation. podlife's registry runs defaulting and strategy in one
step, so a plugin is called from the strategy's ``prepare_for_create`` right after defaulting, for every plugin
in ``store.admission`` (made by StoreOptions.admission: the cluster gives default_plugins with its
ApiServerConfiguration; a store built without the chain says so, with no_admission).
"""

from __future__ import annotations

from typing import Any, Protocol

from podlife.api.corehelper import add_or_update_toleration
from podlife.api.errors import forbidden
from podlife.api.meta import Obj
from podlife.api.names import random_suffix
from podlife.config import ApiServerConfiguration

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"


class Plugin(Protocol):
    def admit(self, obj: Obj) -> None: ...


class DefaultTolerationSeconds:
    """plugin/pkg/admission/defaulttolerationseconds: every pod that does not already tolerate the NoExecute
    taints not-ready and unreachable gets a toleration of each, operator Exists, for tolerationSeconds
    (--default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds, 300 s)."""

    def __init__(self, not_ready_seconds: int, unreachable_seconds: int) -> None:
        self.not_ready_seconds = not_ready_seconds
        self.unreachable_seconds = unreachable_seconds

    def admit(self, obj: Obj) -> None:
        if obj.get("kind") != "Pod":
            return
        not_ready = unreachable = False
        for t in (obj.get("spec") or {}).get("tolerations") or ():
            key, effect = t.get("key") or "", t.get("effect") or ""
            if key in (TAINT_NOT_READY, "") and effect in ("NoExecute", ""):
                not_ready = True
            if key in (TAINT_UNREACHABLE, "") and effect in ("NoExecute", ""):
                unreachable = True
        if not not_ready:
            add_or_update_toleration(obj, {"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute",
                                           "tolerationSeconds": self.not_ready_seconds})
        if not unreachable:
            add_or_update_toleration(obj, {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute",
                                           "tolerationSeconds": self.unreachable_seconds})


# pkg/apis/scheduling SystemPriorityClasses: created by the apiserver at start-up, resolvable before that too
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}


MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
DEFAULT_SERVICE_ACCOUNT = "default"


class ServiceAccount:
    """plugin/pkg/admission/serviceaccount/admission.go Admit, on pod create: spec.serviceAccountName defaults to
    "default" and must name an existing ServiceAccount of the pod's namespace (Forbidden otherwise). Mirror pods
    are left alone. The default account is created by the serviceaccounts controller as its namespace appears;
    the plugin retries the default one for a while (getServiceAccount), so a pod created in the same instant as
    its namespace is admitted.

    With BoundServiceAccountTokenVolume (``bound_token_volume``, versions rule
    bound_service_account_token_volume) and automount on (the pod's automountServiceAccountToken, else the
    account's, else true: shouldAutomount), every container and init container without a mount at
    DefaultAPITokenMountPath gets one of the projected volume ``kube-api-access-<5 random>`` (mountServiceAccount
    Token; a volume already named ``kube-api-access-*`` is reused). Ephemeral containers are not touched: they
    are added through a subresource, which the plugin ignores. Before that gate the plugin mounted the account's
    legacy token Secret and refused pods until the tokens controller made one; podlife models neither, so such
    pods get no token volume (said in the README)."""

    def __init__(self, store: Any, bound_token_volume: bool = True) -> None:
        self.store = store
        self.bound_token_volume = bound_token_volume
        # names.SimpleNameGenerator, from a stream of its own so other objects' names stay as they were
        self.names = store.kernel.rng("admission:serviceaccount") if store is not None else None

    def admit(self, obj: Obj) -> None:
        if obj.get("kind") != "Pod" or self.store is None:
            return
        md = obj.get("metadata") or {}
        if MIRROR_ANNOTATION in (md.get("annotations") or {}):
            return
        spec = obj.setdefault("spec", {})
        name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT_SERVICE_ACCOUNT
        spec["serviceAccountName"] = name
        spec["serviceAccount"] = name   # the deprecated field, as v1 conversion fills it
        ns = md.get("namespace") or "default"
        sa = self.store.try_get("ServiceAccount", ns, name)
        if sa is None and not (name == DEFAULT_SERVICE_ACCOUNT and
                               self.store.try_get("Namespace", None, ns) is not None):
            raise forbidden("pods", md.get("name") or "", f"error looking up service account {ns}/{name}: "
                                                          f'serviceaccount "{name}" not found')
        if self.bound_token_volume and should_automount(sa, spec):
            mount_token_volume(spec, self.names)


def should_automount(sa: Obj | None, spec: Obj) -> bool:
    """admission.go shouldAutomount: the pod's preference wins, then the account's, else true."""
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    if sa is not None and sa.get("automountServiceAccountToken") is not None:
        return bool(sa["automountServiceAccountToken"])
    return True


TOKEN_VOLUME_PREFIX = "kube-api-access-"                            # ServiceAccountVolumeName + "-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"  # DefaultAPITokenMountPath
# pkg/serviceaccount/claims.go WarnOnlyBoundTokenExpirationSeconds: 1 h 7 s, so that the API server can tell
# the injected volume's requests apart (and extend them)
WARN_ONLY_EXPIRATION = 3607


def token_volume_source() -> Obj:
    """admission.go TokenVolumeSource: the token, the root CA bundle and the namespace. With defaultMode 0644,
    the v1 default the stored pod is read back with (admission runs after the request's defaulting)."""
    return {"sources": [
        {"serviceAccountToken": {"path": "token", "expirationSeconds": WARN_ONLY_EXPIRATION}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
    ], "defaultMode": 0o644}


def mount_token_volume(spec: Obj, rng: Any) -> None:
    """admission.go mountServiceAccountToken, bound-token form."""
    volumes = spec.get("volumes") or []
    vol_name = next((v.get("name") for v in volumes if str(v.get("name", "")).startswith(TOKEN_VOLUME_PREFIX)), None)
    has_volume = vol_name is not None
    if vol_name is None:
        vol_name = TOKEN_VOLUME_PREFIX + random_suffix(rng)
    needs = False
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or ():
            mounts = c.get("volumeMounts") or []
            if any(m.get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue   # an existing mount at the path prevents the token's
            c["volumeMounts"] = [*mounts, {"name": vol_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH}]
            needs = True
    if needs and not has_volume:
        spec["volumes"] = [*volumes, {"name": vol_name, "projected": token_volume_source()}]


DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                             "storageclass.beta.kubernetes.io/is-default-class")


def default_storage_class(store: Any, newest_wins: bool = True) -> Obj | None:
    """pkg/volume/util/storageclass.go GetDefaultClass: the classes annotated as default; with several, the
    newest (then the first by name) from 1.26, none (an error) before."""
    found = [sc for sc in store.list("StorageClass")
             if any((sc["metadata"].get("annotations") or {}).get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS)]
    if len(found) > 1 and not newest_wins:
        return None
    return newest_default(found) if found else None


def newest_default(found: list[Obj]) -> Obj:
    """Among several objects annotated as the default: the newest, then the lower name (storageclass.go
    GetDefaultClass from 1.26; defaultingressclass admission.go from 1.25, PR #110974)."""
    newest = max(o["metadata"].get("creationTimestamp") or "" for o in found)
    return min((o for o in found if (o["metadata"].get("creationTimestamp") or "") == newest),
               key=lambda o: o["metadata"]["name"])


class DefaultStorageClass:
    """plugin/pkg/admission/storage/storageclass/setdefault: a claim that names no class (the field absent, not
    "") gets the default StorageClass's name."""

    def __init__(self, store: Any, newest_wins: bool = True) -> None:
        self.store = store
        self.newest_wins = newest_wins

    def admit(self, obj: Obj) -> None:
        if obj.get("kind") != "PersistentVolumeClaim" or self.store is None:
            return
        spec = obj.setdefault("spec", {})
        if spec.get("storageClassName") is not None:
            return
        sc = default_storage_class(self.store, self.newest_wins)
        if sc is not None:
            spec["storageClassName"] = sc["metadata"]["name"]


DEFAULT_INGRESS_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"
INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


class DefaultIngressClass:
    """plugin/pkg/admission/network/defaultingressclass: an Ingress created with neither spec.ingressClassName
    nor the kubernetes.io/ingress.class annotation gets the default IngressClass's name (the one annotated
    ingressclass.kubernetes.io/is-default-class "true"). With several defaults the newest wins, then the lower
    name, from 1.25 (PR #110974); before, the create is refused."""

    def __init__(self, store: Any, newest_wins: bool = True) -> None:
        self.store = store
        self.newest_wins = newest_wins

    def admit(self, obj: Obj) -> None:
        if obj.get("kind") != "Ingress" or self.store is None:
            return
        spec = obj.setdefault("spec", {})
        md = obj.get("metadata") or {}
        if spec.get("ingressClassName") is not None or INGRESS_CLASS_ANNOTATION in (md.get("annotations") or {}):
            return
        found = [c for c in self.store.list("IngressClass")
                 if (c["metadata"].get("annotations") or {}).get(DEFAULT_INGRESS_CLASS_ANNOTATION) == "true"]
        if not found:
            return
        if len(found) > 1 and not self.newest_wins:
            raise forbidden("ingresses.networking.k8s.io", md.get("name") or "",
                            f"Internal error occurred: {len(found)} default IngressClasses were found, only 1 allowed")
        spec["ingressClassName"] = newest_default(found)["metadata"]["name"]


PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


class StorageObjectInUseProtection:
    """plugin/pkg/admission/storage/storageobjectinuseprotection: every claim created gets the
    kubernetes.io/pvc-protection finalizer, every volume kubernetes.io/pv-protection (admitPVC / admitPV), so a
    deleted one stays Terminating until the protection controllers find it unused."""

    FINALIZERS = {"PersistentVolumeClaim": PVC_PROTECTION_FINALIZER, "PersistentVolume": PV_PROTECTION_FINALIZER}

    def admit(self, obj: Obj) -> None:
        finalizer = self.FINALIZERS.get(obj.get("kind") or "")
        if finalizer is None:
            return
        finalizers = obj.setdefault("metadata", {}).setdefault("finalizers", [])
        if finalizer not in finalizers:
            finalizers.append(finalizer)


class Priority:
    """plugin/pkg/admission/priority admitPod, on pod create: spec.priority (and spec.preemptionPolicy, when
    NonPreemptingPriority is on) from the PriorityClass named by spec.priorityClassName; with no name, from the
    globalDefault class (the lowest value if several), whose name is then written into the pod, else 0. An
    unknown class, or a spec.priority / preemptionPolicy that differs from the class's, is Forbidden."""

    def __init__(self, store: Any, preemption_policy: bool = True) -> None:
        self.store = store
        self.preemption_policy = preemption_policy

    def _class(self, name: str) -> tuple[int, str | None] | None:
        pc = self.store.try_get("PriorityClass", None, name) if self.store is not None else None
        if pc is not None:
            return int(pc.get("value", 0)), pc.get("preemptionPolicy") or "PreemptLowerPriority"
        if name in SYSTEM_PRIORITY_CLASSES:
            return SYSTEM_PRIORITY_CLASSES[name], "PreemptLowerPriority"
        return None

    def _default(self) -> tuple[str, int, str | None]:
        """getDefaultPriorityClass: the globalDefault class with the lowest value."""
        best = None
        for pc in self.store.list("PriorityClass") if self.store is not None else ():
            if pc.get("globalDefault") and (best is None or int(pc.get("value", 0)) < int(best.get("value", 0))):
                best = pc
        if best is None:
            return "", 0, None    # scheduling.DefaultPriorityWhenNoDefaultClassExists
        return (best["metadata"]["name"], int(best.get("value", 0)),
                best.get("preemptionPolicy") or "PreemptLowerPriority")

    def admit(self, obj: Obj) -> None:
        if obj.get("kind") != "Pod":
            return
        spec = obj.setdefault("spec", {})
        name = (obj.get("metadata") or {}).get("name") or ""
        cls = spec.get("priorityClassName") or ""
        if not cls:
            cls, priority, policy = self._default()
            spec["priorityClassName"] = cls
            if not cls:
                spec.pop("priorityClassName")
        else:
            found = self._class(cls)
            if found is None:
                raise forbidden("pods", name, f"no PriorityClass with name {cls} was found")
            priority, policy = found
        given = spec.get("priority")
        if given is not None and given != priority:
            raise forbidden("pods", name, f"the integer value of priority ({given}) must not be provided in pod "
                                          f"spec; priority admission controller computed {priority} from the "
                                          "given PriorityClass name")
        spec["priority"] = priority
        if self.preemption_policy and policy is not None:
            if spec.get("preemptionPolicy") not in (None, policy):
                raise forbidden("pods", name, f"the string value of PreemptionPolicy ({spec['preemptionPolicy']}) "
                                              f"must not be provided in pod spec; priority admission controller "
                                              f"computed {policy} from the given PriorityClass name")
            spec["preemptionPolicy"] = policy


def default_plugins(config: ApiServerConfiguration, store: Any = None, *,
                    preemption_policy: bool = True, ingress_class_newest_wins: bool = True,
                    bound_token_volume: bool = True) -> list[Plugin]:
    """The default-enabled admission plugins podlife models, in kube-apiserver's order (LimitRanger,
    ServiceAccount, DefaultStorageClass, StorageObjectInUseProtection, RuntimeClass, Priority,
    DefaultTolerationSeconds, DefaultIngressClass, then the validating ResourceQuota; all on by default in every
    modelled version: pkg/kubeapiserver/options/plugins.go defaultOnPlugins). ``preemption_policy``: the
    NonPreemptingPriority feature (versions rule priority_preemption_policy); ``ingress_class_newest_wins``:
    versions rule default_ingress_class_newest_wins; ``bound_token_volume``: the BoundServiceAccountTokenVolume
    feature (rule bound_service_account_token_volume)."""
    from podlife.api.limitranger import LimitRanger
    from podlife.api.resourcequota import ResourceQuota
    from podlife.api.runtimeclass import RuntimeClass

    return [LimitRanger(store), ServiceAccount(store, bound_token_volume), DefaultStorageClass(store),
            StorageObjectInUseProtection(),
            RuntimeClass(store),
            Priority(store, preemption_policy),
            DefaultTolerationSeconds(config.defaultNotReadyTolerationSeconds,
                                     config.defaultUnreachableTolerationSeconds),
            DefaultIngressClass(store, ingress_class_newest_wins),
            ResourceQuota(store)]


# ---- NodeRestriction: plugin/pkg/admission/noderestriction/admission.go --------------------------------------



def node_restriction(node: str, verb: str, obj: Obj, old: Obj | None = None, subresource: str | None = None) -> None:
    """What a kubelet, authenticated as system:node:<node>, may write. Raises Forbidden otherwise."""
    kind = obj.get("kind", "")
    name = obj.get("metadata", {}).get("name", "")
    if kind == "Pod":
        bound = (old or obj).get("spec", {}).get("nodeName")
        if verb == "create":
            if MIRROR_ANNOTATION not in (obj["metadata"].get("annotations") or {}):
                raise forbidden("pods", name, f'pod does not have "{MIRROR_ANNOTATION}" annotation, node "{node}" '
                                             "can only create mirror pods")
            if obj.get("spec", {}).get("nodeName") != node:
                raise forbidden("pods", name, f'node "{node}" can only create pods with spec.nodeName set to itself')
        elif verb == "update" and subresource == "status":
            if bound != node:
                raise forbidden("pods", name, f'node "{node}" can only update pod status for pods with '
                                             "spec.nodeName set to itself")
        elif verb == "update":
            raise forbidden("pods", name, f'node "{node}" can only update pod status')
        elif verb == "delete" and bound != node:
            raise forbidden("pods", name, f'node "{node}" can only delete pods with spec.nodeName set to itself')
    elif kind == "Node":
        if name != node:
            raise forbidden("nodes", name, f'node "{node}" is not allowed to modify node "{name}"')
        if verb == "update" and old is not None and subresource != "status" and \
                (obj.get("spec", {}).get("taints") or []) != (old.get("spec", {}).get("taints") or []):
            raise forbidden("nodes", name, f'node "{node}" is not allowed to modify taints')
    elif kind == "Lease":
        if name != node or obj["metadata"].get("namespace") != "kube-node-lease":
            raise forbidden("leases.coordination.k8s.io", name,
                            "can only access node lease with the same name as the requesting node")


class NodeClient:
    """The API as a kubelet reaches it: its own credentials (system:node:<name>), so NodeRestriction applies
    to every write. Reads and watches go straight through."""

    def __init__(self, store: Any, node: str) -> None:
        self._store = store
        self.node = node

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if getattr(value, "__self__", None) is self._store:
            self.__dict__[name] = value   # the store's own method: found without this call from now on
        return value

    @property
    def resource_version(self) -> int:   # a property of the store: __getattr__ would be asked every time
        return self._store.resource_version

    def create(self, obj: Obj, by: str, **kw: Any) -> Obj:
        node_restriction(self.node, "create", obj)
        return self._store.create(obj, by=by, **kw)

    def update(self, obj: Obj, by: str, subresource: str | None = None, stored: Obj | None = None, **kw: Any) -> Obj:
        """``stored``: the object as stored, when the caller has just read it (NodeRestriction reads it)."""
        md = obj["metadata"]
        old = stored if stored is not None else self._store.try_get(obj["kind"], md.get("namespace"), md["name"])
        node_restriction(self.node, "update", obj, old, subresource)
        return self._store.update(obj, by=by, subresource=subresource, **kw)

    def update_status(self, obj: Obj, by: str, stored: Obj | None = None) -> Obj:
        return self.update(obj, by=by, subresource="status", stored=stored)

    def delete(self, kind: str, namespace: str | None, name: str, by: str, options: Any = None) -> Obj | None:
        old = self._store.try_get(kind, namespace, name)
        if old is not None:
            node_restriction(self.node, "delete", old, old)
        return self._store.delete(kind, namespace, name, by=by, options=options)

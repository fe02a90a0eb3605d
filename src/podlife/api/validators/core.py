"""core/v1 kinds beyond pods, services and nodes (pkg/apis/core/validation/validation.go): ConfigMap, Secret,
ServiceAccount, PersistentVolume, ReplicationController, PodTemplate, ResourceQuota, LimitRange, Endpoints."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from podlife.api import names, quantity, selectors
from podlife.api import validation as v
from podlife.api.validators.common import (
    Errs,
    FieldError,
    _d,
    _forbidden,
    _invalid,
    _l,
    _msgs,
    _not_supported,
    _required,
    _s,
    base64_errors,
    config_key_errors,
    ip_errors,
    meta,
    port_number_errors,
    quantity_errors,
    too_long,
)

MAX_DATA_BYTES = 1024 * 1024   # core.MaxSecretSize, also ValidateConfigMap's limit


def _keys(data: Mapping, path: str, *, base64: bool) -> tuple[Errs, int]:
    errs: Errs = []
    size = 0
    for key in sorted(data):
        value = data[key]
        errs += _msgs(f"{path}[{key}]", key, config_key_errors(key))
        if base64:
            bad = base64_errors(value)
            if bad:
                errs.append(_invalid(f"{path}[{key}]", "<value omitted>", bad))
        size += len(_s(value))
    return errs, size


def validate_config_map(obj: Mapping) -> Errs:
    """ValidateConfigMap: config keys, no key in both data and binaryData, at most 1 MiB."""
    errs = meta(obj, True)
    data, binary = _d(obj.get("data")), _d(obj.get("binaryData"))
    e1, s1 = _keys(data, "data", base64=False)
    e2, s2 = _keys(binary, "binaryData", base64=True)
    errs += e1 + e2
    for key in sorted(set(data) & set(binary)):
        errs.append(_invalid("data", key, "duplicate of key present in binaryData"))
    if s1 + s2 > MAX_DATA_BYTES:
        errs.append(too_long("", MAX_DATA_BYTES))
    return errs


# secret type → keys it must carry (ValidateSecret)
_SECRET_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def validate_secret(obj: Mapping) -> Errs:
    """ValidateSecret: config keys, base64 data (stringData merges into data), the keys each type requires."""
    errs = meta(obj, True)
    data, strings = _d(obj.get("data")), _d(obj.get("stringData"))
    e1, s1 = _keys(data, "data", base64=True)
    e2, s2 = _keys(strings, "stringData", base64=False)
    errs += e1 + e2
    keys = set(data) | set(strings)
    stype = _s(obj.get("type")) or "Opaque"
    for key in _SECRET_KEYS.get(stype, ()):
        if key not in keys:
            errs.append(_required(f"data[{key}]"))
    if stype == "kubernetes.io/service-account-token":
        if not _d(_d(obj.get("metadata")).get("annotations")).get("kubernetes.io/service-account.name"):
            errs.append(_required("metadata.annotations[kubernetes.io/service-account.name]"))
    if stype == "kubernetes.io/basic-auth" and not keys & {"username", "password"}:
        errs.append(_required("data[username]", "either username or password is required"))
    if s1 * 3 // 4 + s2 > MAX_DATA_BYTES:
        errs.append(too_long("data", MAX_DATA_BYTES))
    return errs


IMMUTABLE_SET = "field is immutable when `immutable` is set"


def validate_config_map_update(new: Mapping, old: Mapping) -> Errs:
    """ValidateConfigMapUpdate's own rules: once ``immutable: true``, neither the flag nor data/binaryData change."""
    errs: Errs = []
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(_forbidden("immutable", IMMUTABLE_SET))
        for key in ("data", "binaryData"):
            if _d(new.get(key)) != _d(old.get(key)):   # an absent map and an empty one are both omitted
                errs.append(_forbidden(key, IMMUTABLE_SET))
    return errs


def _secret_data(obj: Mapping) -> dict:
    """The data the API server validates: stringData already merged into data by conversion
    (Convert_v1_Secret_To_core_Secret), compared as bytes."""
    out: dict = {}
    for key, value in _d(obj.get("data")).items():
        try:
            out[key] = base64.b64decode(_s(value), validate=True)
        except (binascii.Error, ValueError):
            out[key] = _s(value)   # invalid base64: refused by ValidateSecret anyway
    for key, value in _d(obj.get("stringData")).items():
        out[key] = _s(value).encode()
    return out


def validate_secret_update(new: Mapping, old: Mapping) -> Errs:
    """ValidateSecretUpdate's own rules: the type never changes; once ``immutable: true``, neither the flag nor the
    data (stringData included) change."""
    errs: Errs = []
    new_type, old_type = _s(new.get("type")) or "Opaque", _s(old.get("type")) or "Opaque"   # SetDefaults_Secret
    if new_type != old_type:
        errs.append(_invalid("type", new_type, v.FIELD_IMMUTABLE_ERROR_MSG))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(_forbidden("immutable", IMMUTABLE_SET))
        if _secret_data(new) != _secret_data(old):
            errs.append(_forbidden("data", IMMUTABLE_SET))
    return errs


def validate_service_account(obj: Mapping) -> Errs:
    """ValidateServiceAccount: a DNS-subdomain name (ValidateServiceAccountName) and its secrets' names."""
    errs = meta(obj, True)
    for i, ref in enumerate(_l(obj.get("imagePullSecrets"))):
        name = _s(_d(ref).get("name"))
        if not name:
            errs.append(_required(f"imagePullSecrets[{i}].name"))
    return errs


_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_RECLAIM = ["Delete", "Recycle", "Retain"]
_VOLUME_MODES = ["Block", "Filesystem"]
# the persistent volume sources (PersistentVolumeSource), in validation order
_PV_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "hostPath", "glusterfs", "nfs", "rbd", "quobyte",
               "cephfs", "iscsi", "cinder", "fc", "flocker", "flexVolume", "azureFile", "vsphereVolume",
               "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "local", "storageos", "csi")


def access_modes(modes: list, path: str) -> Errs:
    errs: Errs = []
    if not modes:
        errs.append(_required(path, "at least 1 access mode is required"))
    for m in modes:
        if m not in _ACCESS_MODES:
            errs.append(_not_supported(path, m, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(_forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def validate_persistent_volume(obj: Mapping) -> Errs:
    """ValidatePersistentVolume: access modes, a storage capacity, exactly one volume source, the reclaim
    policy and volume mode."""
    errs = meta(obj, False)
    spec = _d(obj.get("spec"))
    errs += access_modes(_l(spec.get("accessModes")), "spec.accessModes")
    capacity = _d(spec.get("capacity"))
    if not capacity:
        errs.append(_required("spec.capacity"))
    elif "storage" not in capacity or len(capacity) > 1:
        errs.append(_not_supported("spec.capacity", sorted(capacity), ["storage"]))
    else:
        errs += quantity_errors(capacity["storage"], "spec.capacity[storage]", positive=True)
    sources = [s for s in _PV_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.append(_required("spec", "must specify a volume type"))
    for extra in sources[1:]:
        errs.append(_forbidden(f"spec.{extra}", "may not specify more than 1 volume type"))
    if "hostPath" in sources and not _s(_d(spec["hostPath"]).get("path")):
        errs.append(_required("spec.hostPath.path"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in _RECLAIM:
        errs.append(_not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        errs.append(_not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    affinity = _d(spec.get("nodeAffinity")).get("required")
    if affinity is not None:
        errs += selectors.validate_node_selector(_d(affinity), "spec.nodeAffinity.required")
    return errs


def validate_replication_controller(obj: Mapping) -> Errs:
    """ValidateReplicationController: replicas, a non-empty selector (a label map) that the template's labels
    match, a template whose pods restart Always."""
    errs = meta(obj, True)
    spec = _d(obj.get("spec"))
    errs += v._nonnegative(spec.get("replicas"), "spec.replicas")
    errs += v._nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    sel = _d(spec.get("selector"))
    if not sel:
        errs.append(_required("spec.selector"))
    else:
        errs += selectors.validate_labels(sel, "spec.selector")
    template = spec.get("template")
    if template is None:
        errs.append(_required("spec.template"))
        return errs
    labels = _d(_d(_d(template).get("metadata")).get("labels"))
    if not labels:
        errs.append(_required("spec.template.metadata.labels"))
    if sel and not selectors.selector_from_set(sel).matches(labels):
        errs.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    errs += v._validate_pod_template(template, "spec.template")
    errs += v._always_restart_template(spec, "ReplicationController")
    return errs


def validate_pod_template(obj: Mapping) -> Errs:
    """ValidatePodTemplate."""
    return meta(obj, True) + v._validate_pod_template(obj.get("template"), "template")


_QUOTA_SCOPES = ["BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass",
                 "Terminating", "VolumeAttributesClass"]
_QUOTA_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers", "cpu", "memory", "ephemeral-storage",
    "requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage", "limits.cpu",
    "limits.memory", "limits.ephemeral-storage"})


def _quota_resource_errors(name: str, path: str) -> Errs:
    """validateResourceQuotaResourceName: a qualified name; without a '/' a standard quota resource."""
    errs = _msgs(path, name, names.qualified_name_errors(name))
    if "/" not in name and name not in _QUOTA_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
        errs.append(_invalid(path, name, "must be a standard resource for quota"))
    return errs


def validate_resource_quota(obj: Mapping) -> Errs:
    """ValidateResourceQuota: resource names, non-negative quantities, known scopes."""
    errs = meta(obj, True)
    spec = _d(obj.get("spec"))
    hard = _d(spec.get("hard"))
    for name in sorted(hard):
        p = f"spec.hard[{name}]"
        errs += _quota_resource_errors(name, p)
        errs += quantity_errors(hard[name], p)
        if name in v._INTEGER_RESOURCES or name.startswith("count/"):
            try:
                if quantity.parse(hard[name]).milli_value() % 1000:
                    errs.append(_invalid(p, hard[name], "must be an integer"))
            except quantity.QuantityError:
                pass
    scopes = [_s(s) for s in _l(spec.get("scopes"))]
    for s in scopes:
        if s not in _QUOTA_SCOPES:
            errs.append(_not_supported("spec.scopes", s, _QUOTA_SCOPES))
    for i, expr in enumerate(_l(_d(spec.get("scopeSelector")).get("matchExpressions"))):
        name = _s(_d(expr).get("scopeName"))
        if name not in _QUOTA_SCOPES:
            errs.append(_not_supported(f"spec.scopeSelector.matchExpressions[{i}].scopeName", name, _QUOTA_SCOPES))
    if {"BestEffort", "NotBestEffort"} <= set(scopes) or {"Terminating", "NotTerminating"} <= set(scopes):
        errs.append(_invalid("spec.scopes", scopes, "conflicting scopes"))
    return errs


_LIMIT_TYPES = ["Container", "PersistentVolumeClaim", "Pod"]
# min <= defaultRequest <= default <= max, checked in ValidateLimitRange's order: (lower, higher, the field the
# error names, the words for the lower and the higher value)
_LIMIT_ORDER = (("min", "max", "min", "min", "max"), ("min", "defaultRequest", "defaultRequest", "min", "default request"),
                ("defaultRequest", "max", "defaultRequest", "default request", "max"),
                ("defaultRequest", "default", "defaultRequest", "default request", "default limit"),
                ("min", "default", "default", "min", "default"), ("default", "max", "default", "default", "max"))


def _limit_list(item: Mapping, key: str, path: str, errs: Errs) -> dict[str, quantity.Quantity]:
    out = {}
    for name in sorted(_d(item.get(key))):
        p = f"{path}.{key}[{name}]"
        value = item[key][name]
        q_errs = quantity_errors(value, p)
        errs += q_errs
        if not q_errs:
            out[name] = quantity.parse(value)
    return out


def validate_limit_range(obj: Mapping) -> Errs:
    """ValidateLimitRange: per item a known type; min <= defaultRequest <= default <= max; ratios >= 1; no
    defaults on Pod items; only storage min/max on claim items."""
    errs = meta(obj, True)
    for i, item in enumerate(_l(_d(obj.get("spec")).get("limits"))):
        item, path = _d(item), f"spec.limits[{i}]"
        ltype = _s(item.get("type"))
        if ltype not in _LIMIT_TYPES:
            errs.append(_not_supported(f"{path}.type", ltype, _LIMIT_TYPES))
        lists = {k: _limit_list(item, k, path, errs)
                 for k in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")}
        if ltype == "Pod":
            for key in ("default", "defaultRequest"):
                if lists[key]:
                    errs.append(_forbidden(f"{path}.{key}", "may not be specified when `type` is 'Pod'"))
        if ltype == "PersistentVolumeClaim":
            for key in ("min", "max"):
                if lists[key] and set(lists[key]) != {"storage"}:
                    errs.append(_not_supported(f"{path}.{key}", sorted(lists[key]), ["storage"]))
        for name in sorted(set().union(*(set(x) for x in lists.values()))):
            for low, high, field, low_words, high_words in _LIMIT_ORDER:
                lo, hi = lists[low].get(name), lists[high].get(name)
                if lo is not None and hi is not None and lo.value > hi.value:
                    errs.append(_invalid(f"{path}.{field}[{name}]", str(hi if field == high else lo),
                                         f"{low_words} value {lo} is greater than {high_words} value {hi}"))
            ratio = lists["maxLimitRequestRatio"].get(name)
            if ratio is not None and ratio.value < 1:
                errs.append(_invalid(f"{path}.maxLimitRequestRatio[{name}]", str(ratio),
                                     f"ratio {ratio} is less than 1"))
    return errs


def validate_endpoints(obj: Mapping) -> Errs:
    """ValidateEndpoints: addresses are IPs, ports valid, names unique."""
    errs = meta(obj, True)
    for i, subset in enumerate(_l(obj.get("subsets"))):
        subset, path = _d(subset), f"subsets[{i}]"
        for key in ("addresses", "notReadyAddresses"):
            for j, addr in enumerate(_l(subset.get(key))):
                errs += ip_errors(_d(addr).get("ip"), f"{path}.{key}[{j}].ip")
        for j, port in enumerate(_l(subset.get("ports"))):
            errs += port_number_errors(_d(port).get("port"), f"{path}.ports[{j}].port")
    return errs


VALIDATORS = {
    "ConfigMap": validate_config_map,
    "Secret": validate_secret,
    "ServiceAccount": validate_service_account,
    "PersistentVolume": validate_persistent_volume,
    "ReplicationController": validate_replication_controller,
    "PodTemplate": validate_pod_template,
    "ResourceQuota": validate_resource_quota,
    "LimitRange": validate_limit_range,
    "Endpoints": validate_endpoints,
}

# pkg/apis/core/validation/validation.go: the checks ValidateConfigMapUpdate / ValidateSecretUpdate make between
# ValidateObjectMetaUpdate and the create validation
UPDATE_VALIDATORS = {
    "ConfigMap": validate_config_map_update,
    "Secret": validate_secret_update,
}

__all__ = ["UPDATE_VALIDATORS", "VALIDATORS", "FieldError", "access_modes"]

"""core/v1 kinds beyond pods (pkg/apis/core/validation/validation.go): Service, Node, Namespace,
PersistentVolumeClaim, ConfigMap, Secret, ServiceAccount, PersistentVolume, ReplicationController,
PodTemplate, ResourceQuota, LimitRange and Endpoints."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping

from podlife.api import names, quantity, selectors
from podlife.api.defaults import externally_accessible
from podlife.api.errors import FieldError
from podlife.api.names import config_key_errors
from podlife.api.validation import options
from podlife.api.validation.common import (
    DUPLICATE,
    FIELD_IMMUTABLE_ERROR_MSG,
    IS_NOT_POSITIVE_ERROR_MSG,
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    base64_errors,
    forbidden,
    invalid,
    invalid_each,
    ip_errors,
    nonnegative,
    not_supported,
    port_number_errors,
    quantity_errors,
    required,
    too_long,
)
from podlife.api.validation.core_containers import (
    INTEGER_RESOURCES,
    PORT_PROTOCOLS,
    port_num_or_name,
    quantity_value_errors,
)
from podlife.api.validation.core_pod import always_restart_template, validate_pod_template_spec, validate_taint_effect
from podlife.api.validation.objectmeta import kube_finalizer_errors, meta, validate_object_meta

# --- Service, Node, Namespace ------------------------------------------------------------------

_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]  # sets.List order


def validate_service(obj: Mapping) -> Errs:
    """ValidateService (clusterIP allocation/dual-stack fields are the registry's business)."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns1035_label)
    stype = spec.get("type") or ""
    ports = as_list(spec.get("ports"))
    cluster_ips = as_list(spec.get("clusterIPs")) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    headless = cluster_ips == ["None"]
    if not ports and not headless and stype != "ExternalName":
        errs.append(required("spec.ports"))
    if stype in ("LoadBalancer", "NodePort") and headless:
        errs.append(invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {stype} services"))
    if stype == "ExternalName":
        errs += _validate_external_name(spec)
    seen_names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _validate_service_port(as_dict(port), len(ports) > 1, seen_names, f"spec.ports[{i}]")
    if spec.get("selector") is not None:
        errs += selectors.validate_labels(spec["selector"], "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(required("spec.sessionAffinity"))
    elif affinity not in ("ClientIP", "None"):
        errs.append(not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    if as_list(spec.get("clusterIPs")) and spec.get("clusterIP") and spec["clusterIPs"][0] != spec["clusterIP"]:
        errs.append(invalid("spec.clusterIPs", spec["clusterIPs"], "first value must match `clusterIP`"))
    if not stype:
        errs.append(required("spec.type"))
    elif stype not in _SERVICE_TYPES:
        errs.append(not_supported("spec.type", stype, _SERVICE_TYPES))
    errs += _validate_service_port_uniqueness(ports, stype)
    errs += _validate_service_lb_fields(spec, stype)
    errs += _validate_traffic_policies(spec, stype)
    errs += _validate_service_addresses(spec, ports, stype)
    return errs


NODE_PORT_RANGE = (30000, 32767)   # kube-apiserver --service-node-port-range default


def _validate_service_addresses(spec: Mapping, ports: list, stype: str) -> Errs:
    """ValidateService's cluster IPs (a valid IP, "None" or empty) and the node-port allocator's range check
    (pkg/registry/core/service/portallocator: "provided port is not in the valid range")."""
    import ipaddress

    errs: Errs = []
    for i, ip in enumerate(as_list(spec.get("clusterIPs")) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])):
        if ip in ("None", ""):
            continue
        try:
            ipaddress.ip_address(as_str(ip))
        except ValueError:
            errs.append(invalid(f"spec.clusterIPs[{i}]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or "
                                                            "2001:db8::ffff)"))
    lo, hi = NODE_PORT_RANGE
    for i, port in enumerate(ports):
        node_port = as_dict(port).get("nodePort")
        if not as_int(node_port):
            continue
        if stype in ("NodePort", "LoadBalancer") and not lo <= as_int(node_port) <= hi:
            errs.append(invalid(f"spec.ports[{i}].nodePort", node_port, f"provided port is not in the valid range. "
                                                                         f"The range of valid ports is {lo}-{hi}"))
    return errs


def _validate_external_name(spec: Mapping) -> Errs:
    errs: Errs = []
    if spec.get("clusterIPs"):
        errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    if spec.get("ipFamilies"):
        errs.append(forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        errs.append(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
    cname = (spec.get("externalName") or "").removesuffix(".")
    if cname:
        errs += invalid_each("spec.externalName", cname, names.dns1123_subdomain_errors(cname))
    else:
        errs.append(required("spec.externalName"))
    return errs


def _validate_service_port(sp: Mapping, require_name: bool, seen: set[str], path: str) -> Errs:
    errs: Errs = []
    name = as_str(sp.get("name"))
    if require_name and not name:
        errs.append(required(f"{path}.name"))
    elif name:
        errs += invalid_each(f"{path}.name", name, names.dns1123_label_errors(name))
        if name in seen:
            errs.append(FieldError(f"{path}.name", DUPLICATE, "", name))
        seen.add(name)
    errs += invalid_each(f"{path}.port", as_int(sp.get("port")), names.port_num_errors(as_int(sp.get("port"))))
    proto = sp.get("protocol") or ""
    if not proto:
        errs.append(required(f"{path}.protocol"))
    elif proto not in PORT_PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", proto, PORT_PROTOCOLS))
    errs += port_num_or_name(sp.get("targetPort"), f"{path}.targetPort")
    if sp.get("appProtocol") is not None:
        errs += invalid_each(f"{path}.appProtocol", sp["appProtocol"],
                             names.qualified_name_errors(str(sp["appProtocol"])))
    return errs


def _validate_service_port_uniqueness(ports: list, stype: str) -> Errs:
    errs: Errs = []
    node_ports: set[tuple] = set()
    pairs: set[tuple] = set()
    for i, port in enumerate(ports):
        port, p = as_dict(port), f"spec.ports[{i}]"
        if stype == "ClusterIP" and as_int(port.get("nodePort")):
            errs.append(forbidden(f"{p}.nodePort", "may not be used when `type` is 'ClusterIP'"))
        if as_int(port.get("nodePort")):
            key = (port.get("protocol"), port["nodePort"])
            if key in node_ports:
                errs.append(FieldError(f"{p}.nodePort", DUPLICATE, "", port["nodePort"]))
            node_ports.add(key)
        key = (port.get("protocol") or "", as_int(port.get("port")))
        if key in pairs:
            errs.append(FieldError(p, DUPLICATE, "", {"protocol": key[0], "port": key[1]}))
        pairs.add(key)
    return errs


def _validate_service_lb_fields(spec: Mapping, stype: str) -> Errs:
    errs: Errs = []
    if spec.get("loadBalancerSourceRanges") and stype != "LoadBalancer":
        errs.append(forbidden("spec.LoadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'"))
    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
        errs.append(forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"))
    if stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        errs.append(required("allocateLoadBalancerNodePorts"))  # sic: upstream omits "spec."
    if spec.get("loadBalancerClass") is not None:
        if stype == "LoadBalancer":
            errs += invalid_each("spec.loadBalancerClass", spec["loadBalancerClass"],
                                 names.qualified_name_errors(str(spec["loadBalancerClass"])))
        else:
            errs.append(forbidden("spec.loadBalancerClass", "may only be used when `type` is 'LoadBalancer'"))
    return errs


def _validate_traffic_policies(spec: Mapping, stype: str) -> Errs:
    errs: Errs = []
    profile = options.rules()
    etp = spec.get("externalTrafficPolicy") or ""
    if not externally_accessible({**spec, "type": stype}, profile):
        if etp:
            errs.append(invalid("spec.externalTrafficPolicy", etp,
                                "may only be set for externally-accessible services"
                                if profile.external_traffic_policy_external_ips else
                                "may only be set when `type` is 'NodePort' or 'LoadBalancer'"))
    elif not etp:
        errs.append(required("spec.externalTrafficPolicy"))
    elif etp not in ("Cluster", "Local"):
        errs.append(not_supported("spec.externalTrafficPolicy", etp, ["Cluster", "Local"]))
    itp = spec.get("internalTrafficPolicy")
    if itp is None:
        if stype in ("NodePort", "LoadBalancer", "ClusterIP"):
            errs.append(required("spec.internalTrafficPolicy"))
    elif itp not in ("Cluster", "Local"):
        errs.append(not_supported("spec.internalTrafficPolicy", itp, ["Cluster", "Local"]))
    return errs


def validate_taints(taints: list, path: str) -> Errs:
    """validateNodeTaints."""
    errs: Errs = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(taints):
        t, p = as_dict(t), f"{path}[{i}]"
        key, effect = as_str(t.get("key")), as_str(t.get("effect"))
        errs += selectors.validate_label_name(key, f"{p}.key")
        msgs = names.label_value_errors(t.get("value") or "")
        if msgs:
            errs.append(invalid(f"{p}.value", t.get("value") or "", ";".join(msgs)))
        errs += validate_taint_effect(effect, False, f"{p}.effect")
        if (effect, key) in seen:
            errs.append(FieldError(p, DUPLICATE, "taints must be unique by key and effect pair", t))
            continue
        seen.add((effect, key))
    return errs


def validate_node_resources(status: Mapping) -> Errs:
    errs: Errs = []
    for field in ("capacity", "allocatable"):
        values = as_dict(status.get(field))
        for name in sorted(values):
            path = f"status.{field}.{name}"
            try:
                q = quantity.parse(values[name])
            except quantity.QuantityError as exc:
                errs.append(invalid(path, values[name], str(exc)))
                continue
            errs += quantity_value_errors(name, q, path)
    return errs


def validate_node(obj: Mapping) -> Errs:
    """ValidateNode (taints are reported under metadata.taints, as upstream does)."""
    errs = validate_object_meta(obj.get("metadata"), namespaced=False, name_fn=names.name_is_dns_subdomain)
    taints = as_list(as_dict(obj.get("spec")).get("taints"))
    if taints:
        errs += validate_taints(taints, "metadata.taints")
    return errs + validate_node_resources(as_dict(obj.get("status")))


def validate_namespace(obj: Mapping) -> Errs:
    """ValidateNamespace: DNS-1123 label name, qualified/standard finalizers."""
    errs = validate_object_meta(obj.get("metadata"), namespaced=False, name_fn=names.name_is_dns_label)
    for f in as_list(as_dict(obj.get("spec")).get("finalizers")):
        errs += invalid_each("spec.finalizers", f, names.qualified_name_errors(str(f)))
        errs += kube_finalizer_errors(str(f), "spec.finalizers")
    return errs


def validate_persistent_volume_claim(obj: Mapping) -> Errs:
    """ValidatePersistentVolumeClaimSpec: access modes and a storage request are required."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    modes = as_list(spec.get("accessModes"))
    if not modes:
        errs.append(required("spec.accessModes", "at least 1 access mode is required"))
    for i, m in enumerate(modes):
        if m not in ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"):
            errs.append(not_supported(f"spec.accessModes[{i}]", m,
                                       ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]))
    storage = as_dict(as_dict(spec.get("resources")).get("requests")).get("storage")
    if storage is None:
        errs.append(required("spec.resources[storage]"))
    else:
        try:
            if quantity.parse(storage).value <= 0:
                errs.append(invalid("spec.resources[storage]", storage, IS_NOT_POSITIVE_ERROR_MSG))
        except quantity.QuantityError as e:
            errs.append(invalid("spec.resources[storage]", storage, str(e)))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        errs.append(not_supported("spec.volumeMode", mode, ["Block", "Filesystem"]))
    return errs

MAX_DATA_BYTES = 1024 * 1024   # core.MaxSecretSize, also ValidateConfigMap's limit


def _keys(data: Mapping, path: str, *, base64: bool) -> tuple[Errs, int]:
    errs: Errs = []
    size = 0
    for key in sorted(data):
        value = data[key]
        errs += invalid_each(f"{path}[{key}]", key, config_key_errors(key))
        if base64:
            bad = base64_errors(value)
            if bad:
                errs.append(invalid(f"{path}[{key}]", "<value omitted>", bad))
        size += len(as_str(value))
    return errs, size


def validate_config_map(obj: Mapping) -> Errs:
    """ValidateConfigMap: config keys, no key in both data and binaryData, at most 1 MiB."""
    errs = meta(obj, True)
    data, binary = as_dict(obj.get("data")), as_dict(obj.get("binaryData"))
    e1, s1 = _keys(data, "data", base64=False)
    e2, s2 = _keys(binary, "binaryData", base64=True)
    errs += e1 + e2
    for key in sorted(set(data) & set(binary)):
        errs.append(invalid("data", key, "duplicate of key present in binaryData"))
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
    data, strings = as_dict(obj.get("data")), as_dict(obj.get("stringData"))
    e1, s1 = _keys(data, "data", base64=True)
    e2, s2 = _keys(strings, "stringData", base64=False)
    errs += e1 + e2
    keys = set(data) | set(strings)
    stype = as_str(obj.get("type")) or "Opaque"
    for key in _SECRET_KEYS.get(stype, ()):
        if key not in keys:
            errs.append(required(f"data[{key}]"))
    if stype == "kubernetes.io/service-account-token":
        if not as_dict(as_dict(obj.get("metadata")).get("annotations")).get("kubernetes.io/service-account.name"):
            errs.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    if stype == "kubernetes.io/basic-auth" and not keys & {"username", "password"}:
        errs.append(required("data[username]", "either username or password is required"))
    if s1 * 3 // 4 + s2 > MAX_DATA_BYTES:
        errs.append(too_long("data", MAX_DATA_BYTES))
    return errs


IMMUTABLE_SET = "field is immutable when `immutable` is set"


def validate_config_map_update(new: Mapping, old: Mapping) -> Errs:
    """ValidateConfigMapUpdate's own rules: once ``immutable: true``, neither the flag nor data/binaryData change."""
    errs: Errs = []
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        for key in ("data", "binaryData"):
            if as_dict(new.get(key)) != as_dict(old.get(key)):   # an absent map and an empty one are both omitted
                errs.append(forbidden(key, IMMUTABLE_SET))
    return errs


def _secret_data(obj: Mapping) -> dict:
    """The data the API server validates: stringData already merged into data by conversion
    (Convert_v1_Secret_To_core_Secret), compared as bytes."""
    out: dict = {}
    for key, value in as_dict(obj.get("data")).items():
        try:
            out[key] = base64.b64decode(as_str(value), validate=True)
        except (binascii.Error, ValueError):
            out[key] = as_str(value)   # invalid base64: refused by ValidateSecret anyway
    for key, value in as_dict(obj.get("stringData")).items():
        out[key] = as_str(value).encode()
    return out


def validate_secret_update(new: Mapping, old: Mapping) -> Errs:
    """ValidateSecretUpdate's own rules: the type never changes; once ``immutable: true``, neither the flag nor the
    data (stringData included) change."""
    errs: Errs = []
    new_type, old_type = as_str(new.get("type")) or "Opaque", as_str(old.get("type")) or "Opaque"   # SetDefaults_Secret
    if new_type != old_type:
        errs.append(invalid("type", new_type, FIELD_IMMUTABLE_ERROR_MSG))
    if old.get("immutable") is True:
        if new.get("immutable") is not True:
            errs.append(forbidden("immutable", IMMUTABLE_SET))
        if _secret_data(new) != _secret_data(old):
            errs.append(forbidden("data", IMMUTABLE_SET))
    return errs


def validate_service_account(obj: Mapping) -> Errs:
    """ValidateServiceAccount: a DNS-subdomain name (ValidateServiceAccountName) and its secrets' names."""
    errs = meta(obj, True)
    for i, ref in enumerate(as_list(obj.get("imagePullSecrets"))):
        name = as_str(as_dict(ref).get("name"))
        if not name:
            errs.append(required(f"imagePullSecrets[{i}].name"))
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
        errs.append(required(path, "at least 1 access mode is required"))
    for m in modes:
        if m not in _ACCESS_MODES:
            errs.append(not_supported(path, m, _ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def validate_persistent_volume(obj: Mapping) -> Errs:
    """ValidatePersistentVolume: access modes, a storage capacity, exactly one volume source, the reclaim
    policy and volume mode."""
    errs = meta(obj, False)
    spec = as_dict(obj.get("spec"))
    errs += access_modes(as_list(spec.get("accessModes")), "spec.accessModes")
    capacity = as_dict(spec.get("capacity"))
    if not capacity:
        errs.append(required("spec.capacity"))
    elif "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported("spec.capacity", sorted(capacity), ["storage"]))
    else:
        errs += quantity_errors(capacity["storage"], "spec.capacity[storage]", positive=True)
    sources = [s for s in _PV_SOURCES if spec.get(s) is not None]
    if not sources:
        errs.append(required("spec", "must specify a volume type"))
    for extra in sources[1:]:
        errs.append(forbidden(f"spec.{extra}", "may not specify more than 1 volume type"))
    if "hostPath" in sources and not as_str(as_dict(spec["hostPath"]).get("path")):
        errs.append(required("spec.hostPath.path"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy is not None and policy not in _RECLAIM:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        errs.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    affinity = as_dict(spec.get("nodeAffinity")).get("required")
    if affinity is not None:
        errs += selectors.validate_node_selector(as_dict(affinity), "spec.nodeAffinity.required")
    return errs


def validate_replication_controller(obj: Mapping) -> Errs:
    """ValidateReplicationController: replicas, a non-empty selector (a label map) that the template's labels
    match, a template whose pods restart Always."""
    errs = meta(obj, True)
    spec = as_dict(obj.get("spec"))
    errs += nonnegative(spec.get("replicas"), "spec.replicas")
    errs += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    sel = as_dict(spec.get("selector"))
    if not sel:
        errs.append(required("spec.selector"))
    else:
        errs += selectors.validate_labels(sel, "spec.selector")
    template = spec.get("template")
    if template is None:
        errs.append(required("spec.template"))
        return errs
    labels = as_dict(as_dict(as_dict(template).get("metadata")).get("labels"))
    if not labels:
        errs.append(required("spec.template.metadata.labels"))
    if sel and not selectors.selector_from_set(sel).matches(labels):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    errs += validate_pod_template_spec(template, "spec.template")
    errs += always_restart_template(spec, "ReplicationController")
    return errs


def validate_pod_template(obj: Mapping) -> Errs:
    """ValidatePodTemplate."""
    return meta(obj, True) + validate_pod_template_spec(obj.get("template"), "template")


_QUOTA_SCOPES = ["BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass",
                 "Terminating", "VolumeAttributesClass"]
_QUOTA_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers", "cpu", "memory", "ephemeral-storage",
    "requests.cpu", "requests.memory", "requests.storage", "requests.ephemeral-storage", "limits.cpu",
    "limits.memory", "limits.ephemeral-storage"})


def _quota_resource_errors(name: str, path: str) -> Errs:
    """validateResourceQuotaResourceName: a qualified name; without a '/' a standard quota resource."""
    errs = invalid_each(path, name, names.qualified_name_errors(name))
    if "/" not in name and name not in _QUOTA_RESOURCES and not name.startswith(("hugepages-", "requests.hugepages-")):
        errs.append(invalid(path, name, "must be a standard resource for quota"))
    return errs


def validate_resource_quota(obj: Mapping) -> Errs:
    """ValidateResourceQuota: resource names, non-negative quantities, known scopes."""
    errs = meta(obj, True)
    spec = as_dict(obj.get("spec"))
    hard = as_dict(spec.get("hard"))
    for name in sorted(hard):
        p = f"spec.hard[{name}]"
        errs += _quota_resource_errors(name, p)
        errs += quantity_errors(hard[name], p)
        if name in INTEGER_RESOURCES or name.startswith("count/"):
            try:
                if quantity.parse(hard[name]).milli_value() % 1000:
                    errs.append(invalid(p, hard[name], "must be an integer"))
            except quantity.QuantityError:
                pass
    scopes = [as_str(s) for s in as_list(spec.get("scopes"))]
    for s in scopes:
        if s not in _QUOTA_SCOPES:
            errs.append(not_supported("spec.scopes", s, _QUOTA_SCOPES))
    for i, expr in enumerate(as_list(as_dict(spec.get("scopeSelector")).get("matchExpressions"))):
        name = as_str(as_dict(expr).get("scopeName"))
        if name not in _QUOTA_SCOPES:
            errs.append(not_supported(f"spec.scopeSelector.matchExpressions[{i}].scopeName", name, _QUOTA_SCOPES))
    if {"BestEffort", "NotBestEffort"} <= set(scopes) or {"Terminating", "NotTerminating"} <= set(scopes):
        errs.append(invalid("spec.scopes", scopes, "conflicting scopes"))
    return errs


_LIMIT_TYPES = ["Container", "PersistentVolumeClaim", "Pod"]
# min <= defaultRequest <= default <= max, checked in ValidateLimitRange's order: (lower, higher, the field the
# error names, the words for the lower and the higher value)
_LIMIT_ORDER = (("min", "max", "min", "min", "max"),
                ("min", "defaultRequest", "defaultRequest", "min", "default request"),
                ("defaultRequest", "max", "defaultRequest", "default request", "max"),
                ("defaultRequest", "default", "defaultRequest", "default request", "default limit"),
                ("min", "default", "default", "min", "default"), ("default", "max", "default", "default", "max"))


def _limit_list(item: Mapping, key: str, path: str, errs: Errs) -> dict[str, quantity.Quantity]:
    out = {}
    for name in sorted(as_dict(item.get(key))):
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
    for i, item in enumerate(as_list(as_dict(obj.get("spec")).get("limits"))):
        item, path = as_dict(item), f"spec.limits[{i}]"
        ltype = as_str(item.get("type"))
        if ltype not in _LIMIT_TYPES:
            errs.append(not_supported(f"{path}.type", ltype, _LIMIT_TYPES))
        lists = {k: _limit_list(item, k, path, errs)
                 for k in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")}
        if ltype == "Pod":
            for key in ("default", "defaultRequest"):
                if lists[key]:
                    errs.append(forbidden(f"{path}.{key}", "may not be specified when `type` is 'Pod'"))
        if ltype == "PersistentVolumeClaim":
            for key in ("min", "max"):
                if lists[key] and set(lists[key]) != {"storage"}:
                    errs.append(not_supported(f"{path}.{key}", sorted(lists[key]), ["storage"]))
        for name in sorted(set().union(*(set(x) for x in lists.values()))):
            for low, high, field, low_words, high_words in _LIMIT_ORDER:
                lo, hi = lists[low].get(name), lists[high].get(name)
                if lo is not None and hi is not None and lo.value > hi.value:
                    errs.append(invalid(f"{path}.{field}[{name}]", str(hi if field == high else lo),
                                         f"{low_words} value {lo} is greater than {high_words} value {hi}"))
            ratio = lists["maxLimitRequestRatio"].get(name)
            if ratio is not None and ratio.value < 1:
                errs.append(invalid(f"{path}.maxLimitRequestRatio[{name}]", str(ratio),
                                     f"ratio {ratio} is less than 1"))
    return errs


def validate_endpoints(obj: Mapping) -> Errs:
    """ValidateEndpoints: addresses are IPs, ports valid, names unique."""
    errs = meta(obj, True)
    for i, subset in enumerate(as_list(obj.get("subsets"))):
        subset, path = as_dict(subset), f"subsets[{i}]"
        for key in ("addresses", "notReadyAddresses"):
            for j, addr in enumerate(as_list(subset.get(key))):
                errs += ip_errors(as_dict(addr).get("ip"), f"{path}.{key}[{j}].ip")
        for j, port in enumerate(as_list(subset.get("ports"))):
            errs += port_number_errors(as_dict(port).get("port"), f"{path}.ports[{j}].port")
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

"""Pods and pod templates (pkg/apis/core/validation/validation.go: ValidatePodSpec with its volumes,
tolerations, affinity, topology spread, security context and DNS config; ValidatePodCreate,
ValidatePodTemplateSpec and ValidatePodUpdate with its allowed mutations)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping

import orjson

from podlife.api import names, selectors
from podlife.api.errors import FieldError
from podlife.api.meta import kept
from podlife.api.speckey import name_free
from podlife.api.validation import options
from podlife.api.validation.common import (
    DUPLICATE,
    IS_NOT_POSITIVE_ERROR_MSG,
    MAX_INT32,
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    invalid_each,
    ip_errors,
    is_int,
    normalize,
    not_supported,
    required,
    semantic_equal,
)
from podlife.api.validation.core_containers import (
    validate_containers,
    validate_init_containers,
    validate_resource_requirements,
    validate_stop_signals,
)
from podlife.api.validation.objectmeta import (
    validate_annotations,
    validate_object_meta,
    validate_object_meta_update,
)
from podlife.versions import Profile

# --- volumes ------------------------------------------------------------------------------

# validateVolumeSource order, with upstream's path spellings (note "downwarAPI" for the conflict error).
_VOLUME_SOURCES = (
    ("emptyDir", "emptyDir"), ("hostPath", "hostPath"), ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"), ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"), ("nfs", "nfs"), ("iscsi", "iscsi"), ("glusterfs", "glusterfs"), ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"), ("rbd", "rbd"), ("cinder", "cinder"), ("cephfs", "cephFS"),
    ("quobyte", "quobyte"), ("downwardAPI", "downwarAPI"), ("fc", "fc"), ("flexVolume", "flexVolume"),
    ("configMap", "configMap"), ("azureFile", "azureFile"), ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"), ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"),
    ("storageos", "storageos"), ("projected", "projected"), ("scaleIO", "scaleIO"), ("csi", "csi"),
    ("ephemeral", "ephemeral"), ("image", "image"),
)
_SOURCE_REQUIRED = {"hostPath": "path", "configMap": "name", "persistentVolumeClaim": "claimName",
                    "secret": "secretName"}


def _validate_volume_source(vol: Mapping, path: str) -> Errs:
    errs: Errs = []
    count = 0
    for key, conflict_path in _VOLUME_SOURCES:
        if vol.get(key) is None:
            continue
        if count:
            errs.append(forbidden(f"{path}.{conflict_path}", "may not specify more than 1 volume type"))
            continue
        count += 1
        field = _SOURCE_REQUIRED.get(key)
        if field and not as_dict(vol[key]).get(field):
            errs.append(required(f"{path}.{key}.{field}"))
    if count == 0:
        errs.append(required(path, "must specify a volume type"))
    return errs


def _validate_volumes(volumes: list, path: str) -> tuple[set[str], Errs]:
    """ValidateVolumes (structure only; per-source validation is limited to required names)."""
    errs: Errs = []
    valid: set[str] = set()
    for i, vol in enumerate(volumes):
        vol, p = as_dict(vol), f"{path}[{i}]"
        name = as_str(vol.get("name"))
        el = _validate_volume_source(vol, p)
        if not name:
            el.append(required(f"{p}.name"))
        else:
            el += invalid_each(f"{p}.name", name, names.dns1123_label_errors(name))
        if name in valid:
            el.append(FieldError(f"{p}.name", DUPLICATE, "", name))
        if el:
            errs += el
        else:
            valid.add(name)
    return valid, errs


# --- tolerations, affinity, spread ----------------------------------------------------------

_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def validate_taint_effect(effect: str, allow_empty: bool, path: str) -> Errs:
    if not allow_empty and not effect:
        return [required(path)]
    return [] if effect in _TAINT_EFFECTS else [not_supported(path, effect, _TAINT_EFFECTS)]


def validate_tolerations(tolerations: list, path: str) -> Errs:
    """ValidateTolerations."""
    errs: Errs = []
    for i, t in enumerate(tolerations):
        t, p = as_dict(t), f"{path}[{i}]"
        key, op = t.get("key") or "", t.get("operator") or ""
        if key:
            errs += selectors.validate_label_name(key, f"{p}.key")
        if not key and op != "Exists":
            errs.append(invalid(f"{p}.operator", op,
                                'operator must be Exists when `key` is empty, which means "match all values and all '
                                'keys"'))
        if t.get("tolerationSeconds") is not None and t.get("effect") != "NoExecute":
            errs.append(invalid(f"{p}.effect", t.get("effect") or "",
                                "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        value = t.get("value") or ""
        if op in ("Equal", ""):
            msgs = names.label_value_errors(value)
            if msgs:
                errs.append(invalid(f"{p}.operator", value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(not_supported(f"{p}.operator", op, ["Equal", "Exists"]))
        if t.get("effect"):
            errs += validate_taint_effect(t["effect"], True, f"{p}.effect")
    return errs


def _validate_pod_affinity_term(term: Mapping, path: str) -> Errs:
    errs = selectors.validate_selector(term.get("labelSelector"), f"{path}.labelSelector")
    errs += selectors.validate_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for ns in as_list(term.get("namespaces")):
        errs += invalid_each(f"{path}.namespace", ns, names.name_is_dns_label(str(ns)))
    if not term.get("topologyKey"):
        errs.append(required(f"{path}.topologyKey", "can not be empty"))
    return errs + selectors.validate_label_name(term.get("topologyKey") or "", f"{path}.topologyKey")


def _validate_weighted_terms(terms: list, path: str, term_key: str) -> Errs:
    errs: Errs = []
    for i, wt in enumerate(terms):
        wt = as_dict(wt)
        weight = as_int(wt.get("weight"))
        if weight <= 0 or weight > 100:
            errs.append(invalid(f"{path}[{i}].weight", weight, "must be in the range 1-100"))
        if term_key == "preference":
            errs += selectors.validate_node_selector_term(as_dict(wt.get("preference")), f"{path}[{i}].preference",
                                                          allow_invalid_label_value=True)
        else:
            errs += _validate_pod_affinity_term(as_dict(wt.get(term_key)), f"{path}[{i}].{term_key}")
    return errs


def _validate_affinity(affinity: Mapping, path: str) -> Errs:
    errs: Errs = []
    node = affinity.get("nodeAffinity")
    if node is not None:
        np = f"{path}.nodeAffinity"
        required_terms = as_dict(node).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required_terms is not None:
            errs += selectors.validate_node_selector(as_dict(required_terms),
                                                     f"{np}.requiredDuringSchedulingIgnoredDuringExecution")
        preferred = as_list(as_dict(node).get("preferredDuringSchedulingIgnoredDuringExecution"))
        errs += _validate_weighted_terms(preferred, f"{np}.preferredDuringSchedulingIgnoredDuringExecution",
                                         "preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = affinity.get(kind)
        if pa is None:
            continue
        kp = f"{path}.{kind}"
        for i, term in enumerate(as_list(as_dict(pa).get("requiredDuringSchedulingIgnoredDuringExecution"))):
            errs += _validate_pod_affinity_term(as_dict(term),
                                                f"{kp}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        preferred = as_list(as_dict(pa).get("preferredDuringSchedulingIgnoredDuringExecution"))
        errs += _validate_weighted_terms(preferred, f"{kp}.preferredDuringSchedulingIgnoredDuringExecution",
                                         "podAffinityTerm")
    return errs


def _validate_topology_spread(constraints: list, path: str) -> Errs:
    """validateTopologySpreadConstraints."""
    errs: Errs = []
    for i, c in enumerate(constraints):
        c, p = as_dict(c), f"{path}[{i}]"
        if as_int(c.get("maxSkew")) <= 0:
            errs.append(invalid(f"{p}.maxSkew", as_int(c.get("maxSkew")), IS_NOT_POSITIVE_ERROR_MSG))
        if not c.get("topologyKey"):
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", action, ["DoNotSchedule", "ScheduleAnyway"]))
        for other in constraints[i + 1:]:
            other = as_dict(other)
            if (other.get("topologyKey") == c.get("topologyKey")
                    and other.get("whenUnsatisfiable") == c.get("whenUnsatisfiable")):
                value = f"{{{c.get('topologyKey', '')}, {action}}}"
                errs.append(FieldError(f"{p}.{{topologyKey, whenUnsatisfiable}}", DUPLICATE, "", value))
                break
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if as_int(min_domains) <= 0:
                errs.append(invalid(f"{p}.minDomains", min_domains, IS_NOT_POSITIVE_ERROR_MSG))
            if action != "DoNotSchedule":
                errs.append(invalid(f"{p}.minDomains", min_domains,
                                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.get(key) is not None and c[key] not in ("Honor", "Ignore"):
                errs.append(not_supported(f"{p}.{key}", c[key], ["Honor", "Ignore"]))
        errs += selectors.validate_selector(c.get("labelSelector"), f"{p}.labelSelector")
    return errs


# --- pod spec ------------------------------------------------------------------------------

_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def validate_enum(value: str, path: str, allowed: list[str]) -> Errs:
    if not value:
        return [required(path)]
    return [] if value in allowed else [not_supported(path, value, allowed)]


def validate_pod_annotations(annotations: Mapping | None, spec: Mapping, path: str) -> Errs:
    """ValidatePodSpecificAnnotations (mirror pods, pod-deletion-cost)."""
    annotations = as_dict(annotations)
    errs: Errs = []
    if MIRROR_POD_ANNOTATION in annotations and not spec.get("nodeName"):
        errs.append(invalid(f"{path}[{MIRROR_POD_ANNOTATION}]", annotations[MIRROR_POD_ANNOTATION],
                            "must set spec.nodeName if mirror pod annotation is set"))
    if POD_DELETION_COST_ANNOTATION in annotations:
        raw = str(annotations[POD_DELETION_COST_ANNOTATION])
        body = raw[1:] if raw[:1] in "+-" else raw
        if not (body.isascii() and body.isdigit() and -(2**31) <= int(raw) < 2**31):
            errs.append(invalid(f"{path}[{POD_DELETION_COST_ANNOTATION}]", raw, "must be a 32bit integer"))
    return errs


_SPEC_ERRORS: dict[tuple[bytes, str, bool, Profile], Errs] = {}   # a Profile hashes by identity
_SPEC_ERRORS_KEPT = 1024


def validate_pod_spec(spec: Mapping | None, path: str = "spec", *, is_pod: bool = True) -> Errs:
    """ValidatePodSpec; ``is_pod`` is PodValidationOptions.ResourceIsPod (False for templates). A function of
    the spec's content (and the feature gates) alone, and the pods of a workload share their template's spec:
    the answer is kept per distinct spec (its JSON, key order included). Pods differ in their token volume's
    name (speckey.name_free): a spec is valid whatever that name, so for them only "no errors" is kept (errors
    could name it)."""
    try:
        json = orjson.dumps(spec)
    except TypeError:
        return _validate_pod_spec(spec, path, is_pod)
    free = name_free(json)
    key = (free, path, is_pod, options.rules())
    errs = _SPEC_ERRORS.get(key)
    if errs is None:
        errs = _validate_pod_spec(spec, path, is_pod)
        if not errs or free is json:
            if len(_SPEC_ERRORS) >= _SPEC_ERRORS_KEPT:
                _SPEC_ERRORS.clear()
            _SPEC_ERRORS[(kept(free), *key[1:])] = errs
    return list(errs)


def _validate_pod_spec(spec: Mapping | None, path: str, is_pod: bool) -> Errs:
    spec = as_dict(spec)
    errs: Errs = []
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is None:
        errs.append(required(f"{path}.terminationGracePeriodSeconds"))
    grace = grace if is_int(grace) else None
    volumes, verrs = _validate_volumes(as_list(spec.get("volumes")), f"{path}.volumes")
    errs += verrs
    containers = as_list(spec.get("containers"))
    errs += validate_containers(containers, volumes, grace, f"{path}.containers")
    errs += validate_init_containers(as_list(spec.get("initContainers")), containers, volumes, grace,
                                     f"{path}.initContainers")
    errs += validate_stop_signals(spec, path)
    errs += _validate_host_network(spec, path, is_pod)
    errs += validate_enum(spec.get("restartPolicy") or "", f"{path}.restartPolicy", _RESTART_POLICIES)
    errs += validate_enum(spec.get("dnsPolicy") or "", f"{path}.dnsPolicy", _DNS_POLICIES)
    errs += selectors.validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    errs += _validate_affinity(as_dict(spec.get("affinity")), f"{path}.affinity")
    errs += _validate_dns_config(spec, f"{path}.dnsConfig")
    for i, gate in enumerate(as_list(spec.get("readinessGates"))):
        ct = as_dict(gate).get("conditionType") or ""
        errs += invalid_each(f"{path}.readinessGates[{i}].conditionType", ct, names.qualified_name_errors(ct))
    errs += _validate_scheduling_gates(as_list(spec.get("schedulingGates")), f"{path}.schedulingGates")
    errs += _validate_topology_spread(as_list(spec.get("topologySpreadConstraints")),
                                      f"{path}.topologySpreadConstraints")
    errs += _validate_pod_spec_names(spec, path)
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and not 1 <= as_int(ads) <= MAX_INT32:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", ads, names.inclusive_range_error(1, MAX_INT32)))
    if spec.get("tolerations"):
        errs += validate_tolerations(as_list(spec["tolerations"]), f"{path}.tolerations")
    if spec.get("preemptionPolicy") is not None:
        errs += validate_enum(spec["preemptionPolicy"], f"{path}.preemptionPolicy", PREEMPTION_POLICIES)
    if spec.get("overhead") is not None:
        errs += validate_resource_requirements({"limits": spec["overhead"]}, f"{path}.overhead")
    os_ = spec.get("os")
    if os_ is not None:
        os_name = as_dict(os_).get("name") or ""
        if not os_name:
            errs.append(required(f"{path}.os.name", "cannot be empty"))
        elif os_name not in ("linux", "windows"):
            errs.append(not_supported(f"{path}.os", os_name, ["linux", "windows"]))
    return errs + _validate_pod_spec_details(spec, path)


# --- security contexts, sysctls, host aliases, volume modes, resize policies --------------------------------

_ID_RANGE_MSG = names.inclusive_range_error(0, MAX_INT32)
_SYSCTL = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?")
# ValidatePodSpec with spec.os.name: the fields a pod of the other OS may not set (validateWindows / validateLinux)
_LINUX_ONLY_POD = ("seLinuxOptions", "seccompProfile", "appArmorProfile", "runAsUser", "runAsGroup",
                   "supplementalGroups", "fsGroup", "fsGroupChangePolicy", "sysctls")
_LINUX_ONLY_CONTAINER = ("seLinuxOptions", "seccompProfile", "appArmorProfile", "capabilities",
                         "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
                         "runAsUser", "runAsGroup")


def _validate_pod_spec_details(spec: Mapping, path: str) -> Errs:
    errs: Errs = []
    sc = as_dict(spec.get("securityContext"))
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        if sc.get(key) is not None and not 0 <= as_int(sc[key]) <= MAX_INT32:
            errs.append(invalid(f"{path}.securityContext.{key}", sc[key], _ID_RANGE_MSG))
    for i, gid in enumerate(as_list(sc.get("supplementalGroups"))):
        if not 0 <= as_int(gid) <= MAX_INT32:
            errs.append(invalid(f"{path}.securityContext.supplementalGroups[{i}]", gid, _ID_RANGE_MSG))
    if sc.get("shareProcessNamespace") and sc.get("hostPID"):
        errs.append(invalid(f"{path}.securityContext.shareProcessNamespace", True,
                             "ShareProcessNamespace and HostPID cannot both be enabled"))
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        errs.append(invalid(f"{path}.shareProcessNamespace", True,
                             "ShareProcessNamespace and HostPID cannot both be enabled"))
    seen_sysctls: set[str] = set()
    for i, sysctl in enumerate(as_list(sc.get("sysctls"))):
        name = as_str(as_dict(sysctl).get("name"))
        sp = f"{path}.securityContext.sysctls[{i}].name"
        if not name:
            errs.append(required(sp))
        elif len(name) > 253 or not _SYSCTL.fullmatch(name):
            errs.append(invalid(sp, name, "must have at most 253 characters and match regex "
                                           r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"))
        elif name in seen_sysctls:
            errs.append(FieldError(sp, DUPLICATE, "", name))
        seen_sysctls.add(name)
    for i, alias in enumerate(as_list(spec.get("hostAliases"))):
        alias, ap = as_dict(alias), f"{path}.hostAliases[{i}]"
        errs += ip_errors(alias.get("ip"), f"{ap}.ip")
        for j, host in enumerate(as_list(alias.get("hostnames"))):
            errs += invalid_each(f"{ap}.hostnames[{j}]", host, names.dns1123_subdomain_errors(as_str(host)))
    for i, vol in enumerate(as_list(spec.get("volumes"))):
        errs += _volume_modes(as_dict(vol), f"{path}.volumes[{i}]")
    os_name = as_dict(spec.get("os")).get("name")
    for key in ("initContainers", "containers"):
        for i, c in enumerate(as_list(spec.get(key))):
            c, cp = as_dict(c), f"{path}.{key}[{i}]"
            errs += _container_security(as_dict(c.get("securityContext")), f"{cp}.securityContext")
            errs += _resize_policy(as_list(c.get("resizePolicy")), f"{cp}.resizePolicy")
            if os_name == "windows":
                csc = as_dict(c.get("securityContext"))
                errs += [forbidden(f"{cp}.securityContext.{k}", "cannot be set for a windows pod")
                         for k in _LINUX_ONLY_CONTAINER if csc.get(k) is not None]
            elif os_name == "linux" and as_dict(c.get("securityContext")).get("windowsOptions") is not None:
                errs.append(forbidden(f"{cp}.securityContext.windowsOptions", "windows options cannot be set "
                                                                               "for a linux pod"))
    if os_name == "windows":
        errs += [forbidden(f"{path}.securityContext.{k}", "cannot be set for a windows pod")
                 for k in _LINUX_ONLY_POD if sc.get(k) is not None]
        if spec.get("hostUsers") is not None:
            errs.append(forbidden(f"{path}.hostUsers", "cannot be set for a windows pod"))
    elif os_name == "linux" and sc.get("windowsOptions") is not None:
        errs.append(forbidden(f"{path}.securityContext.windowsOptions", "windows options cannot be set for a "
                                                                          "linux pod"))
    return errs


def _container_security(sc: Mapping, path: str) -> Errs:
    """ValidateSecurityContext: ids in range, privilege escalation that privileged or CAP_SYS_ADMIN implies."""
    errs: Errs = []
    for key in ("runAsUser", "runAsGroup"):
        if sc.get(key) is not None and not 0 <= as_int(sc[key]) <= MAX_INT32:
            errs.append(invalid(f"{path}.{key}", sc[key], _ID_RANGE_MSG))
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged"):
            errs.append(invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
        if "CAP_SYS_ADMIN" in as_list(as_dict(sc.get("capabilities")).get("add")) or\
                "SYS_ADMIN" in as_list(as_dict(sc.get("capabilities")).get("add")):
            errs.append(invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                                           "CAP_SYS_ADMIN"))
    proc = sc.get("procMount")
    if proc is not None and proc not in ("Default", "Unmasked"):
        errs.append(not_supported(f"{path}.procMount", proc, ["Default", "Unmasked"]))
    return errs


def _volume_modes(vol: Mapping, path: str) -> Errs:
    """validateConfigMapVolumeSource and friends: file modes are 0-0777."""
    errs: Errs = []
    for key in ("configMap", "secret", "downwardAPI", "projected"):
        src = vol.get(key)
        if src is None:
            continue
        src, sp = as_dict(src), f"{path}.{key}"
        if src.get("defaultMode") is not None and not 0 <= as_int(src["defaultMode"]) <= 0o777:
            errs.append(invalid(f"{sp}.defaultMode", src["defaultMode"],
                                 "must be a number between 0 and 0777 (octal), both inclusive"))
        for i, item in enumerate(as_list(src.get("items"))):
            item = as_dict(item)
            if item.get("mode") is not None and not 0 <= as_int(item["mode"]) <= 0o777:
                errs.append(invalid(f"{sp}.items[{i}].mode", item["mode"],
                                     "must be a number between 0 and 0777 (octal), both inclusive"))
            if key in ("configMap", "secret"):
                k = as_str(item.get("key"))
                if not k:
                    errs.append(required(f"{sp}.items[{i}].key"))
                if not as_str(item.get("path")):
                    errs.append(required(f"{sp}.items[{i}].path"))
                elif as_str(item["path"]).startswith("/") or ".." in as_str(item["path"]).split("/"):
                    errs.append(invalid(f"{sp}.items[{i}].path", item["path"], "must be a relative path "
                                                                                "without '..'"))
    return errs


def _resize_policy(policies: list, path: str) -> Errs:
    """validateResizePolicy: cpu or memory, NotRequired or RestartContainer, each resource once."""
    errs: Errs = []
    seen: set[str] = set()
    for i, pol in enumerate(policies):
        pol, p = as_dict(pol), f"{path}[{i}]"
        name = as_str(pol.get("resourceName"))
        if name not in ("cpu", "memory"):
            errs.append(not_supported(p, name, ["cpu", "memory"]))
        elif name in seen:
            errs.append(FieldError(p, DUPLICATE, "", name))
        seen.add(name)
        rp = as_str(pol.get("restartPolicy"))
        if rp not in ("NotRequired", "RestartContainer"):
            errs.append(not_supported(p, rp, ["NotRequired", "RestartContainer"]))
    return errs


def _validate_host_network(spec: Mapping, path: str, is_pod: bool) -> Errs:
    """validatePodHostNetworkDeps: hostPort must equal containerPort (0 allowed in templates)."""
    if not spec.get("hostNetwork"):
        return []
    errs: Errs = []
    for i, c in enumerate(as_list(spec.get("containers"))):
        for j, port in enumerate(as_list(as_dict(c).get("ports"))):
            hp, cp = as_int(as_dict(port).get("hostPort")), as_int(as_dict(port).get("containerPort"))
            if (is_pod or hp != 0) and hp != cp:
                errs.append(invalid(f"{path}.containers[{i}].ports[{j}].hostPort", hp,
                                    "must match `containerPort` when `hostNetwork` is true"))
    return errs


def _validate_dns_config(spec: Mapping, path: str) -> Errs:
    cfg = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if cfg is None:
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not as_dict(cfg).get("nameservers"):
            return [required(f"{path}.nameservers",
                             "must provide at least one DNS nameserver when `dnsPolicy` is None")]
    cfg = as_dict(cfg)
    errs: Errs = []
    if len(as_list(cfg.get("nameservers"))) > 3:
        errs.append(invalid(f"{path}.nameservers", cfg["nameservers"], "must not have more than 3 nameservers"))
    if len(as_list(cfg.get("searches"))) > 32:
        errs.append(invalid(f"{path}.searches", cfg["searches"], "must not have more than 32 search paths"))
    for i, opt in enumerate(as_list(cfg.get("options"))):
        if not as_dict(opt).get("name"):
            errs.append(required(f"{path}.options[{i}]", "must not be empty"))
    return errs


def _validate_scheduling_gates(gates: list, path: str) -> Errs:
    errs: Errs = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        name = as_str(as_dict(gate).get("name"))
        errs += invalid_each(f"{path}[{i}]", name, names.qualified_name_errors(name))
        if name in seen:
            errs.append(FieldError(f"{path}[{i}]", DUPLICATE, "", name))
        seen.add(name)
    return errs


def _validate_pod_spec_names(spec: Mapping, path: str) -> Errs:
    errs: Errs = []
    for key, fn in (("serviceAccountName", names.name_is_dns_subdomain), ("nodeName", names.name_is_dns_subdomain)):
        if spec.get(key):
            errs += invalid_each(f"{path}.{key}", spec[key], fn(spec[key], False))
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs += invalid_each(f"{path}.{key}", spec[key], names.dns1123_label_errors(spec[key]))
    for key in ("priorityClassName", "runtimeClassName"):
        if spec.get(key):
            errs += invalid_each(f"{path}.{key}", spec[key], names.name_is_dns_subdomain(spec[key]))
    return errs


def validate_pod_template_spec(template: Mapping | None, path: str) -> Errs:
    """ValidatePodTemplateSpec (labels/annotations paths are template.labels, as upstream)."""
    template = as_dict(template)
    meta = as_dict(template.get("metadata"))
    spec = as_dict(template.get("spec"))
    errs = selectors.validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += validate_pod_annotations(meta.get("annotations"), spec, f"{path}.annotations")
    errs += validate_pod_spec(spec, f"{path}.spec", is_pod=False)
    if spec.get("ephemeralContainers"):
        errs.append(forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return errs


# --- Pod ------------------------------------------------------------------------------------


def _pod_metadata_and_spec(pod: Mapping) -> Errs:
    """validatePodMetadataAndSpec."""
    meta, spec = as_dict(pod.get("metadata")), as_dict(pod.get("spec"))
    errs = validate_object_meta(meta, namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs += validate_pod_annotations(meta.get("annotations"), spec, "metadata.annotations")
    errs += validate_pod_spec(spec, "spec", is_pod=True)
    if not spec.get("serviceAccountName"):
        for vi, vol in enumerate(as_list(spec.get("volumes"))):
            for si, src in enumerate(as_list(as_dict(as_dict(vol).get("projected")).get("sources"))):
                if as_dict(src).get("serviceAccountToken") is not None:
                    p = f"spec.volumes[{vi}].projected.sources[{si}].serviceAccountToken"
                    errs.append(forbidden(p, "must not be specified when serviceAccountName is not set"))
    for key in ("containers", "initContainers"):
        for i, c in enumerate(as_list(spec.get(key))):
            image = as_str(as_dict(c).get("image"))
            if image != image.strip():
                errs.append(invalid(f"spec.{key}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs


def validate_pod(pod: Mapping) -> Errs:
    """ValidatePodCreate."""
    errs = _pod_metadata_and_spec(pod)
    spec = as_dict(pod.get("spec"))
    if spec.get("ephemeralContainers"):
        errs.append(forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
    return errs


UPDATABLE_POD_SPEC_FIELDS = [
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
]
POD_UPDATE_FORBIDDEN_MSG = "pod updates may not change fields other than " + ",".join(UPDATABLE_POD_SPEC_FIELDS)


def validate_pod_update(new: Mapping, old: Mapping) -> Errs:
    """ValidatePodUpdate: only images, activeDeadlineSeconds (down), toleration additions,
    scheduling-gate removals, and (for gated pods) nodeSelector/nodeAffinity additions may change."""
    new_spec, old_spec = as_dict(new.get("spec")), as_dict(old.get("spec"))
    errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    errs += _pod_metadata_and_spec(new)
    errs += _validate_pod_annotation_updates(as_dict(as_dict(new.get("metadata")).get("annotations")),
                                             as_dict(as_dict(old.get("metadata")).get("annotations")))
    for key in ("containers", "initContainers"):
        cerrs, stop = _validate_container_updates(as_list(new_spec.get(key)), as_list(old_spec.get(key)), f"spec.{key}")
        errs += cerrs
        if stop:
            return errs
    ads_errs, stop = _validate_active_deadline_update(new_spec.get("activeDeadlineSeconds"),
                                                      old_spec.get("activeDeadlineSeconds"))
    errs += ads_errs
    if stop:
        return errs
    errs += _validate_only_added_tolerations(as_list(new_spec.get("tolerations")), as_list(old_spec.get("tolerations")),
                                             "spec.tolerations")
    errs += _validate_only_deleted_gates(as_list(new_spec.get("schedulingGates")),
                                         as_list(old_spec.get("schedulingGates")), "spec.schedulingGates")
    if semantic_equal(new_spec, old_spec):
        return errs
    munged, gate_errs = _munge_pod_spec(new_spec, old_spec)
    errs += gate_errs
    if not semantic_equal(munged, old_spec):
        diff = "\n".join(_diff(normalize(old_spec), normalize(munged), "spec"))
        errs.append(forbidden("spec", f"{POD_UPDATE_FORBIDDEN_MSG}\n{diff}"))
    return errs


def _validate_pod_annotation_updates(new: Mapping, old: Mapping) -> Errs:
    path = "metadata.annotations"
    errs: Errs = []
    if old.get(MIRROR_POD_ANNOTATION) != new.get(MIRROR_POD_ANNOTATION):
        if MIRROR_POD_ANNOTATION in old:
            errs.append(forbidden(f"{path}[{MIRROR_POD_ANNOTATION}]", "may not remove or update mirror pod annotation"))
        else:
            errs.append(forbidden(f"{path}[{MIRROR_POD_ANNOTATION}]", "may not add mirror pod annotation"))
    return errs


def _validate_container_updates(new: list, old: list, path: str) -> tuple[Errs, bool]:
    """ValidateContainerUpdates."""
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errs: Errs = []
    for i, c in enumerate(new):
        image = as_str(as_dict(c).get("image"))
        if not image:
            errs.append(required(f"{path}[{i}].image"))
        if image != image.strip():
            errs.append(invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs, False


def _validate_active_deadline_update(new: object, old: object) -> tuple[Errs, bool]:
    path = "spec.activeDeadlineSeconds"
    if new is not None:
        if not 0 <= as_int(new) <= MAX_INT32:
            return [invalid(path, new, names.inclusive_range_error(0, MAX_INT32))], True
        if old is not None and as_int(old) < as_int(new):
            return [invalid(path, new, "must be less than or equal to previous value")], True
    elif old is not None:
        return [invalid(path, None, "must not update from a positive integer to nil value")], False
    return [], False


def _validate_only_added_tolerations(new: list, old: list, path: str) -> Errs:
    """validateOnlyAddedTolerations: existing ones may only change tolerationSeconds."""
    for o in old:
        o = {k: v for k, v in as_dict(o).items() if k != "tolerationSeconds"}
        if not any(semantic_equal(o, {k: v for k, v in as_dict(n).items() if k != "tolerationSeconds"}) for n in new):
            return [forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return validate_tolerations(new, path)


def _validate_only_deleted_gates(new: list, old: list, path: str) -> Errs:
    old_names = {as_str(as_dict(g).get("name")) for g in old}
    errs: Errs = []
    for i, g in enumerate(new):
        name = as_str(as_dict(g).get("name"))
        if name not in old_names:
            errs.append(forbidden(f"{path}[{i}].name",
                                  f"only deletion is allowed, but found new scheduling gate '{name}'"))
    return errs


def _munge_pod_spec(new: Mapping, old: Mapping) -> tuple[dict, Errs]:
    """Copy the updatable fields from old into new so that the rest can be compared."""
    munged = copy.deepcopy(dict(new))
    for key in ("containers", "initContainers"):
        for c, oc in zip(as_list(munged.get(key)), as_list(old.get(key))):
            if isinstance(c, dict):
                c["image"] = as_dict(oc).get("image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        if key in old:
            munged[key] = copy.deepcopy(old[key])
        else:
            munged.pop(key, None)
    old_grace = old.get("terminationGracePeriodSeconds")
    if is_int(old_grace) and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    errs: Errs = []
    if old.get("schedulingGates"):  # gated pods may add to nodeSelector / node affinity
        errs += _munge_gated(munged, old)
    return munged, errs


def _munge_gated(munged: dict, old: Mapping) -> Errs:
    errs: Errs = []
    new_sel, old_sel = as_dict(munged.get("nodeSelector")), as_dict(old.get("nodeSelector"))
    if not semantic_equal(new_sel, old_sel):
        if any(new_sel.get(k) != v for k, v in old_sel.items()):
            errs.append(invalid("spec.nodeSelector", new_sel,
                                "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
        munged["nodeSelector"] = old.get("nodeSelector")
    new_na = as_dict(munged.get("affinity")).get("nodeAffinity")
    old_na = as_dict(old.get("affinity")).get("nodeAffinity")
    if not semantic_equal(new_na, old_na):
        errs += _validate_node_affinity_mutation(as_dict(new_na), as_dict(old_na))
        if not isinstance(munged.get("affinity"), dict):
            munged["affinity"] = {}
        munged["affinity"]["nodeAffinity"] = old_na  # an emptied affinity compares equal to none
    return errs


def _validate_node_affinity_mutation(new: Mapping, old: Mapping) -> Errs:
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    old_terms = as_list(as_dict(old.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    new_terms = as_list(as_dict(new.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    if old_terms and len(old_terms) != len(new_terms):
        return [invalid(path, new_terms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")]
    errs: Errs = []
    for i, (nt, ot) in enumerate(zip(new_terms, old_terms)):
        if not _term_only_additions(as_dict(nt), as_dict(ot)):
            errs.append(invalid(f"{path}[{i}]", nt, "only additions are allowed (no mutations or deletions)"))
    return errs


def _term_only_additions(new: Mapping, old: Mapping) -> bool:
    if not old.get("matchExpressions") and not old.get("matchFields"):
        if new.get("matchExpressions") or new.get("matchFields"):
            return False
    for key in ("matchExpressions", "matchFields"):
        o, n = as_list(old.get(key)), as_list(new.get(key))
        if o and (len(n) < len(o) or not semantic_equal(n[: len(o)], o)):
            return False
    return True


def _diff(old: object, new: object, path: str) -> list[str]:
    """A short field-by-field description of what changed (upstream prints a cmp.Diff)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(set(old) | set(new)):
            out += _diff(old.get(k), new.get(k), f"{path}.{k}")
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        out = []
        for i, (o, n) in enumerate(zip(old, new)):
            out += _diff(o, n, f"{path}[{i}]")
        return out
    return [] if old == new else [f"  {path}: {old!r} -> {new!r}"]


def always_restart_template(spec: Mapping, kind: str) -> Errs:
    tspec = as_dict(as_dict(spec.get("template")).get("spec"))
    errs: Errs = []
    policy = tspec.get("restartPolicy") or ""
    if policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                              f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs

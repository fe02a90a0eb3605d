"""Create/update validation with upstream field paths and wording.

Follows pkg/apis/core/validation/validation.go (ValidatePodCreate,
ValidatePodSpec, validateContainers, validateInitContainers, validateProbe,
validateHandler, validateResourceRequirements, ValidateTolerations,
ValidatePodUpdate, ValidateService, ValidateNode, ValidateNamespace),
pkg/apis/core/validation/events.go, pkg/apis/apps/validation/validation.go,
pkg/apis/batch/validation/validation.go, pkg/apis/scheduling/validation and
pkg/apis/coordination/validation, plus
k8s.io/apimachinery/pkg/api/validation/objectmeta.go.

Objects are validated as the API server does: *after* defaulting (see
``podlife.api.defaults.apply_defaults``), so fields that defaulting always
fills (restartPolicy, dnsPolicy, imagePullPolicy, ...) are "Required" when
missing. Unknown fields are ignored (e.g. the legacy ``lifecycle: {type:
Sidecar}`` marker on a container is accepted). Errors are sorted only where
upstream walks a Go map (map keys are visited in sorted order here).
"""

from __future__ import annotations

from contextvars import ContextVar, Token

import re

import copy
from collections.abc import Callable, Mapping
from fractions import Fraction

import orjson

from podlife.api import names, quantity, selectors
from podlife.api.meta import kept
from podlife.api.errors import FieldError
from podlife.engine.slices import pause
from podlife.versions import Profile

REQUIRED, INVALID, UNSUPPORTED = "Required value", "Invalid value", "Unsupported value"
DUPLICATE, FORBIDDEN, NOT_FOUND = "Duplicate value", "Forbidden", "Not found"
TOO_MANY = "Too many"
TOO_LONG = "Too long"

IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0"
IS_NOT_POSITIVE_ERROR_MSG = "must be greater than zero"
FIELD_IMMUTABLE_ERROR_MSG = "field is immutable"
MAX_INT32 = 2**31 - 1
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2_000_001_000, "system-cluster-critical": 2_000_000_000}

NameFn = Callable[[str, bool], list[str]]
Errs = list[FieldError]


# --- small helpers ---------------------------------------------------------------------


# PodValidationOptions that depend on the version's rules: the Profile of the write being validated, set only
# through set_rules (the store around each write, the scenario check around its dry run). Read unset it is an
# error, not a guess at a version.
_RULES: ContextVar[Profile] = ContextVar("validation_rules")


def set_rules(profile: Profile) -> Token[Profile]:
    """Validate with ``profile``'s rules until ``reset_rules(token)``."""
    return _RULES.set(profile)


def reset_rules(token: Token[Profile]) -> None:
    _RULES.reset(token)


def _rules() -> Profile:
    try:
        return _RULES.get()
    except LookupError:
        raise RuntimeError("validation ran without a version's rules (podlife.api.validation.set_rules)") from None


def _required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, REQUIRED, detail)


def _invalid(path: str, value: object, detail: str) -> FieldError:
    return FieldError(path, INVALID, detail, value)


def _not_supported(path: str, value: object, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(f'"{v}"' for v in supported) if supported else ""
    return FieldError(path, UNSUPPORTED, detail, value)


def _forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, FORBIDDEN, detail)


def _d(x: object) -> dict:
    return x if isinstance(x, dict) else {}


def _l(x: object) -> list:
    return x if isinstance(x, list) else []


def _s(x: object) -> str:
    """A Go string field: absent means ""; a non-string is kept visible via str()."""
    return x if isinstance(x, str) else ("" if x is None else str(x))


def _int(x: object) -> int:
    """A Go integer field: absent means 0."""
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _nonnegative(value: object, path: str) -> Errs:
    """ValidateNonnegativeField."""
    return [_invalid(path, value, IS_NEGATIVE_ERROR_MSG)] if _int(value) < 0 else []


def _msgs(path: str, value: object, messages: list[str]) -> Errs:
    return [_invalid(path, value, m) for m in messages]


# --- ObjectMeta (apimachinery api/validation/objectmeta.go) -------------------------------

STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})


def validate_object_meta(meta: Mapping | None, *, namespaced: bool, name_fn: NameFn, path: str = "metadata") -> Errs:
    """ValidateObjectMeta (+ core's validateKubeFinalizerName)."""
    meta = _d(meta)
    errs: Errs = []
    name, generate_name = meta.get("name") or "", meta.get("generateName") or ""
    if generate_name:
        errs += _msgs(f"{path}.generateName", generate_name, name_fn(generate_name, True))
    if not name:
        if not generate_name:  # the registry generates the name from generateName before validating
            errs.append(_required(f"{path}.name", "name or generateName is required"))
    else:
        errs += _msgs(f"{path}.name", name, name_fn(name, False))
    errs += _validate_meta_common(meta, namespaced, path)
    return errs


def _validate_meta_common(meta: Mapping, namespaced: bool, path: str) -> Errs:
    errs: Errs = []
    ns = meta.get("namespace") or ""
    if namespaced:
        if not ns:
            errs.append(_required(f"{path}.namespace"))
        else:
            errs += _msgs(f"{path}.namespace", ns, names.name_is_dns_label(ns))
    elif ns:
        errs.append(_forbidden(f"{path}.namespace", "not allowed on this type"))
    errs += _nonnegative(meta.get("generation"), f"{path}.generation")
    errs += selectors.validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += _validate_owner_references(_l(meta.get("ownerReferences")), f"{path}.ownerReferences")
    errs += _validate_finalizers(_l(meta.get("finalizers")), f"{path}.finalizers")
    return errs


def validate_annotations(annotations: Mapping | None, path: str) -> Errs:
    """ValidateAnnotations: keys are qualified names, case-insensitively."""
    if annotations is not None and not isinstance(annotations, Mapping):
        return [_invalid(path, annotations, "must be a map of string keys to string values")]
    errs: Errs = []
    for k in sorted(annotations or {}):
        pause()   # many annotations are checked in slices (podlife.engine.slices)
        errs += _msgs(path, k, names.qualified_name_errors(k.lower()))
    size = sum(len(str(k)) + len(str(v)) for k, v in (annotations or {}).items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(FieldError(path, "Too long", f"must have at most {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"))
    return errs


TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024   # TotalAnnotationSizeLimitB


def _validate_owner_references(refs: list, path: str) -> Errs:
    errs: Errs = []
    controller = ""
    for ref in refs:
        ref = _d(ref)
        api_version = _s(ref.get("apiVersion"))
        if not api_version.rsplit("/", 1)[-1]:
            errs.append(_invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                errs.append(_invalid(f"{path}.{key}", ref.get(key) or "", "must not be empty"))
        if api_version == "v1" and ref.get("kind") == "Event":
            errs.append(_invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                detail = f'Only one reference can have Controller set to true. Found "true" in references for {controller} and {current}'
                errs.append(_invalid(path, refs, detail))
            else:
                controller = current
    return errs


def _kube_finalizer_errors(value: str, path: str) -> Errs:
    """validateKubeFinalizerName: unqualified finalizers must be standard ones."""
    if "/" not in value and value not in STANDARD_FINALIZERS:
        return [_invalid(path, value, "name is neither a standard finalizer name nor is it fully qualified")]
    return []


def _validate_finalizers(finalizers: list, path: str) -> Errs:
    errs: Errs = []
    for f in finalizers:
        errs += _msgs(path, f, names.qualified_name_errors(str(f)))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(_invalid(path, finalizers, "finalizer orphan and foregroundDeletion cannot be both set"))
    for i, f in enumerate(finalizers):
        errs += _kube_finalizer_errors(str(f), f"{path}[{i}]")
    return errs


def validate_object_meta_update(new: Mapping | None, old: Mapping | None, path: str = "metadata", *,
                                require_resource_version: bool = False) -> Errs:
    """ValidateObjectMetaUpdate.

    Upstream's store fills in the stored resourceVersion for unconditional
    updates before validating, so its "must be specified for an update" check
    only bites callers that validate without a store; it is off unless asked for.
    """
    new, old = _d(new), _d(old)
    errs: Errs = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(_l(new.get("finalizers"))) - set(_l(old.get("finalizers"))))
        if extra:
            listed = "[]string{" + ", ".join(f'"{f}"' for f in extra) + "}"
            errs.append(_forbidden(f"{path}.finalizers", f"no new finalizers can be added if the object is being deleted, found new finalizers {listed}"))
    if require_resource_version and not new.get("resourceVersion"):
        errs.append(_invalid(f"{path}.resourceVersion", new.get("resourceVersion") or "", "must be specified for an update"))
    if _int(new.get("generation")) < _int(old.get("generation")):
        errs.append(_invalid(f"{path}.generation", _int(new.get("generation")), "must not be decremented"))
    for key in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        if (new.get(key) or None) != (old.get(key) or None):
            errs.append(_invalid(f"{path}.{key}", new.get(key), FIELD_IMMUTABLE_ERROR_MSG))
    errs += selectors.validate_labels(new.get("labels"), f"{path}.labels")
    errs += validate_annotations(new.get("annotations"), f"{path}.annotations")
    errs += _validate_owner_references(_l(new.get("ownerReferences")), f"{path}.ownerReferences")
    errs += _validate_finalizers(_l(new.get("finalizers")), f"{path}.finalizers")
    return errs


# --- resources ----------------------------------------------------------------------------

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "quotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers",
})
_INTEGER_RESOURCES = frozenset({
    "pods", "quotas", "services", "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims",
    "services.nodeports", "services.loadbalancers",
})


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")


def _is_extended(name: str) -> bool:
    return not _is_native(name) and not name.startswith("requests.") and names.is_qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not _is_hugepages(name)


def _container_resource_name_errors(name: str, path: str) -> Errs:
    """validateResourceName + validateContainerResourceName."""
    errs = _msgs(path, name, names.qualified_name_errors(name))
    if not errs and "/" not in name and not (name in _STANDARD_RESOURCES or _is_hugepages(name) or name.startswith("requests.hugepages-")):
        errs.append(_invalid(path, name, "must be a standard resource type or fully qualified"))
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            errs.append(_invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(_invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _parse_list(values: Mapping, path: str, errs: Errs) -> dict[str, quantity.Quantity]:
    """Parse a ResourceList, reporting undecodable quantities (a decode error upstream)."""
    out: dict[str, quantity.Quantity] = {}
    for name in sorted(values):
        try:
            out[name] = quantity.round_up_milli(quantity.parse(values[name]))
        except quantity.QuantityError as exc:
            errs.append(_invalid(f"{path}[{name}]", values[name], str(exc)))
    return out


def _quantity_value_errors(name: str, q: quantity.Quantity, path: str) -> Errs:
    """ValidateResourceQuantityValue (+ hugepage divisibility)."""
    errs: Errs = []
    if q.value < 0:
        errs.append(_invalid(path, str(q), IS_NEGATIVE_ERROR_MSG))
    if (name in _INTEGER_RESOURCES or _is_extended(name)) and q.milli_value() % 1000 != 0:
        errs.append(_invalid(path, str(q), "must be an integer"))
    if _is_hugepages(name):
        try:
            page = quantity.parse_quantity(name[len("hugepages-"):])
        except quantity.QuantityError:
            page = Fraction(0)
        if page <= 0 or page.denominator != 1 or q.int_value() % page != 0:
            errs.append(_invalid(path, str(q), f"{q} is not positive integer multiple of {name}"))
    return errs


def validate_resource_requirements(res: Mapping | None, path: str) -> Errs:
    """validateResourceRequirements for a container (names, quantities, requests <= limits)."""
    res = _d(res)
    errs: Errs = []
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    limits = _parse_list(_d(res.get("limits")), lim_path, errs)
    requests = _parse_list(_d(res.get("requests")), req_path, errs)
    for name, q in limits.items():
        errs += _container_resource_name_errors(name, f"{lim_path}[{name}]")
        errs += _quantity_value_errors(name, q, f"{lim_path}[{name}]")
    for name, q in requests.items():
        errs += _container_resource_name_errors(name, f"{req_path}[{name}]")
        errs += _quantity_value_errors(name, q, f"{req_path}[{name}]")
        lim = limits.get(name)
        if lim is not None:
            if q.value != lim.value and not _overcommit_allowed(name):
                errs.append(_invalid(req_path, str(q), f"must be equal to {name} limit of {lim}"))
            elif q.value > lim.value:
                errs.append(_invalid(req_path, str(q), f"must be less than or equal to {name} limit of {lim}"))
        elif not _overcommit_allowed(name):
            errs.append(_required(lim_path, "Limit must be set for non overcommitable resources"))
    used = set(limits) | set(requests)
    if any(_is_hugepages(n) for n in used) and not used & {"cpu", "memory"}:
        errs.append(_forbidden(path, "HugePages require cpu or memory"))
    return errs


# --- containers ---------------------------------------------------------------------------

_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]  # sets.List order


def _port_num_or_name(port: object, path: str) -> Errs:
    """ValidatePortNumOrName for an IntOrString (absent is the int 0)."""
    if isinstance(port, str):
        return _msgs(path, port, names.port_name_errors(port))
    value = _int(port)
    return _msgs(path, value, names.port_num_errors(value))


def _validate_container_ports(ports: list, path: str) -> Errs:
    errs: Errs = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        port, p = _d(port), f"{path}[{i}]"
        pname = port.get("name") or ""
        if pname:
            msgs = names.port_name_errors(pname)
            if msgs:
                errs += _msgs(f"{p}.name", pname, msgs)
            elif pname in seen:
                errs.append(FieldError(f"{p}.name", DUPLICATE, "", pname))
            else:
                seen.add(pname)
        if not _int(port.get("containerPort")):
            errs.append(_required(f"{p}.containerPort"))
        else:
            errs += _msgs(f"{p}.containerPort", port["containerPort"], names.port_num_errors(port["containerPort"]))
        if _int(port.get("hostPort")):
            errs += _msgs(f"{p}.hostPort", port["hostPort"], names.port_num_errors(port["hostPort"]))
        proto = port.get("protocol") or ""
        if not proto:
            errs.append(_required(f"{p}.protocol"))
        elif proto not in _PORT_PROTOCOLS:
            errs.append(_not_supported(f"{p}.protocol", proto, _PORT_PROTOCOLS))
    return errs


def _validate_env(env: list, path: str) -> Errs:
    errs: Errs = []
    for i, ev in enumerate(env):
        ev, p = _d(ev), f"{path}[{i}]"
        name = ev.get("name") or ""
        if not name:
            errs.append(_required(f"{p}.name"))
        else:
            errs += _msgs(f"{p}.name", name, _env_name_errors(name))
        value_from = ev.get("valueFrom")
        if value_from is None:
            continue
        errs += _validate_env_source(_d(value_from), f"{p}.valueFrom")
        sources = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef") if _d(value_from).get(k) is not None]
        vpath = f"{p}.valueFrom"
        if not sources:
            errs.append(_invalid(vpath, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
        elif ev.get("value"):
            errs.append(_invalid(vpath, "", "may not be specified when `value` is not empty"))
        elif len(sources) > 1:
            errs.append(_invalid(vpath, "", "may not have more than one field specified at a time"))
    return errs


_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_ENV_NAME_MSG = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
                 "and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex "
                 "used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")


def _env_name_errors(name: object) -> list[str]:
    """IsEnvVarName, or from 1.32 IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, beta and on)."""
    if _rules().relaxed_env_var_names:
        return names.relaxed_env_var_name_errors(name)
    if not isinstance(name, str):
        return [names.NOT_A_STRING]
    return [] if _ENV_NAME.fullmatch(name) else [_ENV_NAME_MSG]


# validateObjectFieldSelector: the pod fields a downward-API env var may read
_ENV_FIELD_PATHS = ["metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
                    "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP",
                    "status.podIPs"]
_ENV_RESOURCES = ["limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                  "requests.ephemeral-storage", "requests.memory"]


def _validate_env_source(source: Mapping, path: str) -> Errs:
    """validateEnvVarValueFrom's sources: a supported field path, a resource of the container, a ConfigMap or
    Secret key selector with a name and a valid key."""
    errs: Errs = []
    field = source.get("fieldRef")
    if field is not None:
        fp = _s(_d(field).get("fieldPath"))
        base = fp.split("[", 1)[0]
        if not fp:
            errs.append(_required(f"{path}.fieldRef.fieldPath"))
        elif "[" in fp and base not in ("metadata.annotations", "metadata.labels"):
            errs.append(_invalid(f"{path}.fieldRef.fieldPath", fp, "error converting fieldPath: field label not "
                                                                   "supported"))
        elif "[" not in fp and (fp not in _ENV_FIELD_PATHS or fp in ("metadata.annotations", "metadata.labels")):
            errs.append(_not_supported(f"{path}.fieldRef.fieldPath", fp,
                                       [f for f in _ENV_FIELD_PATHS if f not in ("metadata.annotations",
                                                                                 "metadata.labels")]))
    resource = source.get("resourceFieldRef")
    if resource is not None:
        name = _s(_d(resource).get("resource"))
        if name not in _ENV_RESOURCES and not name.startswith(("limits.hugepages-", "requests.hugepages-")):
            errs.append(_not_supported(f"{path}.resourceFieldRef.resource", name, _ENV_RESOURCES))
    for key in ("configMapKeyRef", "secretKeyRef"):
        ref = source.get(key)
        if ref is None:
            continue
        ref = _d(ref)
        if not _s(ref.get("name")):
            errs.append(_required(f"{path}.{key}.name"))
        else:
            errs += _msgs(f"{path}.{key}.name", ref["name"], names.dns1123_subdomain_errors(_s(ref["name"])))
        k = _s(ref.get("key"))
        if not k:
            errs.append(_required(f"{path}.{key}.key"))
        else:
            errs += _msgs(f"{path}.{key}.key", k, names.config_key_errors(k))
    return errs


def _validate_env_from(env_from: list, path: str) -> Errs:
    errs: Errs = []
    for i, ev in enumerate(env_from):
        ev = _d(ev)
        if ev.get("prefix"):
            errs += _msgs(f"{path}[{i}].prefix", ev["prefix"], _env_name_errors(ev["prefix"]))
        count = sum(ev.get(k) is not None for k in ("configMapRef", "secretRef"))
        if count == 0:
            errs.append(_invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(_invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def _validate_volume_mounts(mounts: list, volumes: set[str], path: str) -> Errs:
    errs: Errs = []
    seen: set[str] = set()
    for i, m in enumerate(mounts):
        m, p = _d(m), f"{path}[{i}]"
        name, mount_path = _s(m.get("name")), _s(m.get("mountPath"))
        if not name:
            errs.append(_required(f"{p}.name"))
        if name not in volumes:
            errs.append(FieldError(f"{p}.name", NOT_FOUND, "", name))
        if not mount_path:
            errs.append(_required(f"{p}.mountPath"))
        if mount_path in seen:
            errs.append(_invalid(f"{p}.mountPath", mount_path, "must be unique"))
        seen.add(mount_path)
    return errs


_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]


def _validate_container_common(c: Mapping, volumes: set[str], path: str) -> Errs:
    """validateContainerCommon: name, image, termination message policy, ports, env, mounts, pull policy, resources."""
    errs: Errs = []
    name = c.get("name") or ""
    if not name:
        errs.append(_required(f"{path}.name"))
    else:
        errs += _msgs(f"{path}.name", name, names.dns1123_label_errors(name))
    if not c.get("image"):
        errs.append(_required(f"{path}.image"))
    tmp = c.get("terminationMessagePolicy") or ""
    if not tmp:
        errs.append(_required(f"{path}.terminationMessagePolicy"))
    elif tmp not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(_not_supported(f"{path}.terminationMessagePolicy", tmp, _TERMINATION_MESSAGE_POLICIES))
    errs += _validate_container_ports(_l(c.get("ports")), f"{path}.ports")
    errs += _validate_env(_l(c.get("env")), f"{path}.env")
    errs += _validate_env_from(_l(c.get("envFrom")), f"{path}.envFrom")
    errs += _validate_volume_mounts(_l(c.get("volumeMounts")), volumes, f"{path}.volumeMounts")
    policy = c.get("imagePullPolicy") or ""
    if not policy:
        errs.append(_required(f"{path}.imagePullPolicy"))
    elif policy not in _PULL_POLICIES:
        errs.append(_not_supported(f"{path}.imagePullPolicy", policy, _PULL_POLICIES))
    errs += validate_resource_requirements(c.get("resources"), f"{path}.resources")
    return errs


_HANDLER_KINDS = ("exec", "httpGet", "tcpSocket", "grpc", "sleep")


def _validate_handler(handler: Mapping, grace: int | None, path: str, *, probe: bool) -> Errs:
    """validateHandler: exactly one of exec/httpGet/tcpSocket/grpc (probes) or exec/httpGet/tcpSocket/sleep (hooks)."""
    allowed = ("exec", "httpGet", "tcpSocket", "grpc") if probe else ("exec", "httpGet", "tcpSocket", "sleep")
    errs: Errs = []
    count = 0
    for kind in _HANDLER_KINDS:
        if kind not in allowed or handler.get(kind) is None:
            continue
        if count:
            errs.append(_forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        errs += _validate_action(kind, _d(handler[kind]), grace, f"{path}.{kind}")
    if count == 0:
        errs.append(_required(path, "must specify a handler type"))
    return errs


def _validate_action(kind: str, action: Mapping, grace: int | None, path: str) -> Errs:
    if kind == "exec":
        return [] if action.get("command") else [_required(f"{path}.command")]
    if kind == "httpGet":
        errs = [] if action.get("path") else [_required(f"{path}.path")]
        errs += _port_num_or_name(action.get("port"), f"{path}.port")
        scheme = action.get("scheme") or ""
        if scheme not in ("HTTP", "HTTPS"):
            errs.append(_not_supported(f"{path}.scheme", scheme, ["HTTP", "HTTPS"]))
        for header in _l(action.get("httpHeaders")):
            hname = _d(header).get("name") or ""
            errs += _msgs(f"{path}.httpHeaders", hname, names.http_header_name_errors(hname))
        return errs
    if kind in ("tcpSocket", "grpc"):
        return _port_num_or_name(_int(action.get("port")) if kind == "grpc" else action.get("port"), f"{path}.port")
    seconds = _int(action.get("seconds"))  # validateSleepAction
    if _rules().sleep_action_allow_zero:
        if grace is not None and (seconds < 0 or seconds > grace):
            return [_invalid(path, seconds, f"must be non-negative and less than terminationGracePeriodSeconds "
                                            f"({grace})")]
    elif grace is not None and (seconds <= 0 or seconds > grace):
        return [_invalid(path, seconds, f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace})")]
    return []


def _validate_probe(probe: object, grace: int | None, path: str, kind: str) -> Errs:
    """validateLivenessProbe / validateReadinessProbe / validateStartupProbe."""
    if probe is None:
        return []
    probe = _d(probe)
    errs = _validate_handler(probe, grace, path, probe=True)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errs += _nonnegative(_int(probe.get(key)), f"{path}.{key}")
    tgps = probe.get("terminationGracePeriodSeconds")
    if tgps is not None and _int(tgps) <= 0:
        errs.append(_invalid(f"{path}.terminationGracePeriodSeconds", tgps, "must be greater than 0"))
    if kind in ("livenessProbe", "startupProbe") and _int(probe.get("successThreshold")) != 1:
        errs.append(_invalid(f"{path}.successThreshold", _int(probe.get("successThreshold")), "must be 1"))
    if kind == "readinessProbe" and tgps is not None:
        errs.append(_invalid(f"{path}.terminationGracePeriodSeconds", tgps, "must not be set for readinessProbes"))
    return errs


def _validate_lifecycle(lifecycle: Mapping, grace: int | None, path: str) -> Errs:
    """validateLifecycle: postStart/preStop hooks. Other keys (e.g. the legacy ``type: Sidecar``) are ignored."""
    errs: Errs = []
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            errs += _validate_handler(_d(lifecycle[hook]), grace, f"{path}.{hook}", probe=False)
    return errs


# KEP-4960 (ContainerStopSignals): the signals a Linux pod may name, and the two a Windows pod may
_STOP_SIGNALS_LINUX = frozenset(
    ["SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL", "SIGINT", "SIGIO",
     "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT", "SIGSEGV", "SIGSTKFLT", "SIGSTOP",
     "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM",
     "SIGWINCH", "SIGXCPU", "SIGXFSZ", "SIGRTMIN", "SIGRTMAX"]
    + [f"SIGRTMIN+{i}" for i in range(1, 16)] + [f"SIGRTMAX-{i}" for i in range(1, 15)])
_STOP_SIGNALS_WINDOWS = ("SIGKILL", "SIGTERM")


def _validate_stop_signals(spec: Mapping, path: str) -> Errs:
    """validateContainerStopSignal for every container: lifecycle.stopSignal needs spec.os.name, and the signal
    must be one that OS supports."""
    if not _rules().container_stop_signals:
        return []   # the API server drops the field with the gate off (restartpolicy.drop_disabled_fields)
    os_name = _s(_d(spec.get("os")).get("name"))
    supported = list(_STOP_SIGNALS_WINDOWS) if os_name == "windows" else sorted(_STOP_SIGNALS_LINUX)
    errs: Errs = []
    for field in ("initContainers", "containers"):
        for i, c in enumerate(_l(spec.get(field))):
            signal = _d(_d(c).get("lifecycle")).get("stopSignal")
            if signal is None:
                continue
            p = f"{path}.{field}[{i}].lifecycle.stopSignal"
            if not os_name:
                errs.append(_forbidden(p, "may not be set for containers with empty `spec.os.name`"))
            elif _s(signal) not in supported:
                errs.append(_not_supported(p, _s(signal), supported))
    return errs


def _probes_and_hooks(c: Mapping, grace: int | None, path: str) -> Errs:
    errs: Errs = []
    if c.get("lifecycle") is not None:
        errs += _validate_lifecycle(_d(c["lifecycle"]), grace, f"{path}.lifecycle")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        errs += _validate_probe(c.get(kind), grace, f"{path}.{kind}", kind)
    return errs


def _host_port_conflicts(containers: list, path: str, seen: set[str] | None = None) -> Errs:
    """AccumulateUniqueHostPorts."""
    seen = set() if seen is None else seen
    errs: Errs = []
    for ci, c in enumerate(containers):
        for pi, port in enumerate(_l(_d(c).get("ports"))):
            port = _d(port)
            if not _int(port.get("hostPort")):
                continue
            key = f"{port.get('protocol', '')}/{port.get('hostIP', '')}/{port['hostPort']}"
            if key in seen:
                errs.append(FieldError(f"{path}[{ci}].ports[{pi}].hostPort", DUPLICATE, "", key))
            seen.add(key)
    return errs


def _validate_containers(containers: list, volumes: set[str], grace: int | None, path: str) -> Errs:
    """validateContainers (regular containers)."""
    if not containers:
        return [_required(path)]
    errs: Errs = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        c, p = _d(c), f"{path}[{i}]"
        errs += _validate_container_common(c, volumes, p)
        name = _s(c.get("name"))
        if name in seen:
            errs.append(FieldError(f"{p}.name", DUPLICATE, "", name))
        seen.add(name)
        errs += _probes_and_hooks(c, grace, p)
        if _rules().container_restart_rules:
            # KEP-5307 (ContainerRestartRules): a regular container may set its own restart policy
            errs += _validate_restart_rules(c, p, init=False)
        elif c.get("restartPolicy") is not None:
            errs.append(_forbidden(f"{p}.restartPolicy", "may not be set for non-init containers"))
    errs += _host_port_conflicts(containers, path)
    return errs


_RESTART_RULE_OPERATORS = ("In", "NotIn")
_MAX_RESTART_RULES = 20        # Container.restartPolicyRules: at most 20 rules
_MAX_RESTART_RULE_VALUES = 255  # ContainerRestartRuleOnExitCodes.values: at most 255 elements


_CONTAINER_RESTART_POLICIES = ["Always", "OnFailure", "Never"]


def _validate_restart_rules(c: Mapping, path: str, *, init: bool) -> Errs:
    """With ContainerRestartRules (KEP-5307, beta and on from 1.35) a container may set its own restartPolicy
    and restartPolicyRules (validateContainerRestartPolicyRules): rules need the container's own restartPolicy;
    actions Restart and, with RestartAllContainersOnContainerExits, RestartAllContainers; exit codes In/NotIn,
    unique."""
    errs: Errs = []
    policy = c.get("restartPolicy")
    if policy is not None and policy not in _CONTAINER_RESTART_POLICIES:
        errs.append(_not_supported(f"{path}.restartPolicy", policy, _CONTAINER_RESTART_POLICIES))
    rules = _l(c.get("restartPolicyRules"))
    if not rules:
        return errs
    if c.get("restartPolicy") is None:
        errs.append(_required(f"{path}.restartPolicy", "must be set when restartPolicyRules are specified"))
    if len(rules) > _MAX_RESTART_RULES:
        errs.append(FieldError(f"{path}.restartPolicyRules", TOO_MANY,
                               f"must have at most {_MAX_RESTART_RULES} items", len(rules)))
    actions = ["Restart"] + (["RestartAllContainers"] if _rules().restart_all_containers else [])
    for i, rule in enumerate(rules):
        rule, rp = _d(rule), f"{path}.restartPolicyRules[{i}]"
        action = _s(rule.get("action"))
        if not action:
            errs.append(_required(f"{rp}.action"))
        elif action not in actions:
            errs.append(_not_supported(f"{rp}.action", action, actions))
        codes = rule.get("exitCodes")
        if codes is None:
            errs.append(_required(f"{rp}.exitCodes", "must be specified"))
            continue
        codes = _d(codes)
        operator = _s(codes.get("operator"))
        if operator not in _RESTART_RULE_OPERATORS:
            errs.append(_not_supported(f"{rp}.exitCodes.operator", operator, list(_RESTART_RULE_OPERATORS)))
        values = _l(codes.get("values"))
        if len(values) > _MAX_RESTART_RULE_VALUES:
            errs.append(FieldError(f"{rp}.exitCodes.values", TOO_MANY,
                                   f"must have at most {_MAX_RESTART_RULE_VALUES} items", len(values)))
        if len(set(map(str, values))) != len(values):
            errs.append(_invalid(f"{rp}.exitCodes.values", values, "must contain unique values"))
    return errs


_INIT_ONLY_FORBIDDEN = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


def _validate_init_containers(inits: list, regular: list, volumes: set[str], grace: int | None, path: str) -> Errs:
    """validateInitContainers: names unique across init+regular; only restartPolicy Always (sidecars)."""
    errs: Errs = []
    seen = {_s(_d(c).get("name")) for c in regular}
    for i, c in enumerate(inits):
        c, p = _d(c), f"{path}[{i}]"
        errs += _validate_container_common(c, volumes, p)
        policy = c.get("restartPolicy")
        if _rules().container_restart_rules:
            errs += _validate_restart_rules(c, p, init=True)
        elif policy is not None and policy != "Always":
            errs.append(_not_supported(f"{p}.restartPolicy", policy, ["Always"]))
        name = _s(c.get("name"))
        if name in seen:
            errs.append(FieldError(f"{p}.name", DUPLICATE, "", name))
        elif name:
            seen.add(name)
        errs += _host_port_conflicts([c], path)
        if policy == "Always":
            errs += _probes_and_hooks(c, grace, p)
        else:
            for key in _INIT_ONLY_FORBIDDEN:
                if c.get(key) is not None:
                    errs.append(_forbidden(f"{p}.{key}", "may not be set for init containers without restartPolicy=Always"))
    return errs


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
_SOURCE_REQUIRED = {"hostPath": "path", "configMap": "name", "persistentVolumeClaim": "claimName", "secret": "secretName"}


def _validate_volume_source(vol: Mapping, path: str) -> Errs:
    errs: Errs = []
    count = 0
    for key, conflict_path in _VOLUME_SOURCES:
        if vol.get(key) is None:
            continue
        if count:
            errs.append(_forbidden(f"{path}.{conflict_path}", "may not specify more than 1 volume type"))
            continue
        count += 1
        field = _SOURCE_REQUIRED.get(key)
        if field and not _d(vol[key]).get(field):
            errs.append(_required(f"{path}.{key}.{field}"))
    if count == 0:
        errs.append(_required(path, "must specify a volume type"))
    return errs


def _validate_volumes(volumes: list, path: str) -> tuple[set[str], Errs]:
    """ValidateVolumes (structure only; per-source validation is limited to required names)."""
    errs: Errs = []
    valid: set[str] = set()
    for i, vol in enumerate(volumes):
        vol, p = _d(vol), f"{path}[{i}]"
        name = _s(vol.get("name"))
        el = _validate_volume_source(vol, p)
        if not name:
            el.append(_required(f"{p}.name"))
        else:
            el += _msgs(f"{p}.name", name, names.dns1123_label_errors(name))
        if name in valid:
            el.append(FieldError(f"{p}.name", DUPLICATE, "", name))
        if el:
            errs += el
        else:
            valid.add(name)
    return valid, errs


# --- tolerations, affinity, spread ----------------------------------------------------------

_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _validate_taint_effect(effect: str, allow_empty: bool, path: str) -> Errs:
    if not allow_empty and not effect:
        return [_required(path)]
    return [] if effect in _TAINT_EFFECTS else [_not_supported(path, effect, _TAINT_EFFECTS)]


def validate_tolerations(tolerations: list, path: str) -> Errs:
    """ValidateTolerations."""
    errs: Errs = []
    for i, t in enumerate(tolerations):
        t, p = _d(t), f"{path}[{i}]"
        key, op = t.get("key") or "", t.get("operator") or ""
        if key:
            errs += selectors.validate_label_name(key, f"{p}.key")
        if not key and op != "Exists":
            errs.append(_invalid(f"{p}.operator", op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and t.get("effect") != "NoExecute":
            errs.append(_invalid(f"{p}.effect", t.get("effect") or "", "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        value = t.get("value") or ""
        if op in ("Equal", ""):
            msgs = names.label_value_errors(value)
            if msgs:
                errs.append(_invalid(f"{p}.operator", value, ";".join(msgs)))
        elif op == "Exists":
            if value:
                errs.append(_invalid(f"{p}.operator", value, "value must be empty when `operator` is 'Exists'"))
        else:
            errs.append(_not_supported(f"{p}.operator", op, ["Equal", "Exists"]))
        if t.get("effect"):
            errs += _validate_taint_effect(t["effect"], True, f"{p}.effect")
    return errs


def _validate_pod_affinity_term(term: Mapping, path: str) -> Errs:
    errs = selectors.validate_selector(term.get("labelSelector"), f"{path}.labelSelector")
    errs += selectors.validate_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for ns in _l(term.get("namespaces")):
        errs += _msgs(f"{path}.namespace", ns, names.name_is_dns_label(str(ns)))
    if not term.get("topologyKey"):
        errs.append(_required(f"{path}.topologyKey", "can not be empty"))
    return errs + selectors.validate_label_name(term.get("topologyKey") or "", f"{path}.topologyKey")


def _validate_weighted_terms(terms: list, path: str, term_key: str) -> Errs:
    errs: Errs = []
    for i, wt in enumerate(terms):
        wt = _d(wt)
        weight = _int(wt.get("weight"))
        if weight <= 0 or weight > 100:
            errs.append(_invalid(f"{path}[{i}].weight", weight, "must be in the range 1-100"))
        if term_key == "preference":
            errs += selectors.validate_node_selector_term(_d(wt.get("preference")), f"{path}[{i}].preference", allow_invalid_label_value=True)
        else:
            errs += _validate_pod_affinity_term(_d(wt.get(term_key)), f"{path}[{i}].{term_key}")
    return errs


def _validate_affinity(affinity: Mapping, path: str) -> Errs:
    errs: Errs = []
    node = affinity.get("nodeAffinity")
    if node is not None:
        np = f"{path}.nodeAffinity"
        required = _d(node).get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is not None:
            errs += selectors.validate_node_selector(_d(required), f"{np}.requiredDuringSchedulingIgnoredDuringExecution")
        preferred = _l(_d(node).get("preferredDuringSchedulingIgnoredDuringExecution"))
        errs += _validate_weighted_terms(preferred, f"{np}.preferredDuringSchedulingIgnoredDuringExecution", "preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        pa = affinity.get(kind)
        if pa is None:
            continue
        kp = f"{path}.{kind}"
        for i, term in enumerate(_l(_d(pa).get("requiredDuringSchedulingIgnoredDuringExecution"))):
            errs += _validate_pod_affinity_term(_d(term), f"{kp}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        preferred = _l(_d(pa).get("preferredDuringSchedulingIgnoredDuringExecution"))
        errs += _validate_weighted_terms(preferred, f"{kp}.preferredDuringSchedulingIgnoredDuringExecution", "podAffinityTerm")
    return errs


def _validate_topology_spread(constraints: list, path: str) -> Errs:
    """validateTopologySpreadConstraints."""
    errs: Errs = []
    for i, c in enumerate(constraints):
        c, p = _d(c), f"{path}[{i}]"
        if _int(c.get("maxSkew")) <= 0:
            errs.append(_invalid(f"{p}.maxSkew", _int(c.get("maxSkew")), IS_NOT_POSITIVE_ERROR_MSG))
        if not c.get("topologyKey"):
            errs.append(_required(f"{p}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(_not_supported(f"{p}.whenUnsatisfiable", action, ["DoNotSchedule", "ScheduleAnyway"]))
        for other in constraints[i + 1:]:
            other = _d(other)
            if other.get("topologyKey") == c.get("topologyKey") and other.get("whenUnsatisfiable") == c.get("whenUnsatisfiable"):
                value = f"{{{c.get('topologyKey', '')}, {action}}}"
                errs.append(FieldError(f"{p}.{{topologyKey, whenUnsatisfiable}}", DUPLICATE, "", value))
                break
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if _int(min_domains) <= 0:
                errs.append(_invalid(f"{p}.minDomains", min_domains, IS_NOT_POSITIVE_ERROR_MSG))
            if action != "DoNotSchedule":
                errs.append(_invalid(f"{p}.minDomains", min_domains, f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            if c.get(key) is not None and c[key] not in ("Honor", "Ignore"):
                errs.append(_not_supported(f"{p}.{key}", c[key], ["Honor", "Ignore"]))
        errs += selectors.validate_selector(c.get("labelSelector"), f"{p}.labelSelector")
    return errs


# --- pod spec ------------------------------------------------------------------------------

_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def _validate_enum(value: str, path: str, allowed: list[str]) -> Errs:
    if not value:
        return [_required(path)]
    return [] if value in allowed else [_not_supported(path, value, allowed)]


def _validate_pod_annotations(annotations: Mapping | None, spec: Mapping, path: str) -> Errs:
    """ValidatePodSpecificAnnotations (mirror pods, pod-deletion-cost)."""
    annotations = _d(annotations)
    errs: Errs = []
    if MIRROR_POD_ANNOTATION in annotations and not spec.get("nodeName"):
        errs.append(_invalid(f"{path}[{MIRROR_POD_ANNOTATION}]", annotations[MIRROR_POD_ANNOTATION], "must set spec.nodeName if mirror pod annotation is set"))
    if POD_DELETION_COST_ANNOTATION in annotations:
        raw = str(annotations[POD_DELETION_COST_ANNOTATION])
        body = raw[1:] if raw[:1] in "+-" else raw
        if not (body.isascii() and body.isdigit() and -(2**31) <= int(raw) < 2**31):
            errs.append(_invalid(f"{path}[{POD_DELETION_COST_ANNOTATION}]", raw, "must be a 32bit integer"))
    return errs


_SPEC_ERRORS: dict[tuple[bytes, str, bool, Profile], Errs] = {}   # a Profile hashes by identity
_SPEC_ERRORS_KEPT = 1024


def validate_pod_spec(spec: Mapping | None, path: str = "spec", *, is_pod: bool = True) -> Errs:
    """ValidatePodSpec; ``is_pod`` is PodValidationOptions.ResourceIsPod (False for templates). A function of
    the spec's content (and the feature gates) alone, and the pods of a workload share their template's spec:
    the answer is kept per distinct spec (its JSON, key order included)."""
    try:
        key = (orjson.dumps(spec), path, is_pod, _rules())
    except TypeError:
        return _validate_pod_spec(spec, path, is_pod)
    errs = _SPEC_ERRORS.get(key)
    if errs is None:
        if len(_SPEC_ERRORS) >= _SPEC_ERRORS_KEPT:
            _SPEC_ERRORS.clear()
        errs = _SPEC_ERRORS[(kept(key[0]), *key[1:])] = _validate_pod_spec(spec, path, is_pod)
    return list(errs)


def _validate_pod_spec(spec: Mapping | None, path: str, is_pod: bool) -> Errs:
    spec = _d(spec)
    errs: Errs = []
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is None:
        errs.append(_required(f"{path}.terminationGracePeriodSeconds"))
    grace = grace if _is_int(grace) else None
    volumes, verrs = _validate_volumes(_l(spec.get("volumes")), f"{path}.volumes")
    errs += verrs
    containers = _l(spec.get("containers"))
    errs += _validate_containers(containers, volumes, grace, f"{path}.containers")
    errs += _validate_init_containers(_l(spec.get("initContainers")), containers, volumes, grace, f"{path}.initContainers")
    errs += _validate_stop_signals(spec, path)
    errs += _validate_host_network(spec, path, is_pod)
    errs += _validate_enum(spec.get("restartPolicy") or "", f"{path}.restartPolicy", _RESTART_POLICIES)
    errs += _validate_enum(spec.get("dnsPolicy") or "", f"{path}.dnsPolicy", _DNS_POLICIES)
    errs += selectors.validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    errs += _validate_affinity(_d(spec.get("affinity")), f"{path}.affinity")
    errs += _validate_dns_config(spec, f"{path}.dnsConfig")
    for i, gate in enumerate(_l(spec.get("readinessGates"))):
        ct = _d(gate).get("conditionType") or ""
        errs += _msgs(f"{path}.readinessGates[{i}].conditionType", ct, names.qualified_name_errors(ct))
    errs += _validate_scheduling_gates(_l(spec.get("schedulingGates")), f"{path}.schedulingGates")
    errs += _validate_topology_spread(_l(spec.get("topologySpreadConstraints")), f"{path}.topologySpreadConstraints")
    errs += _validate_pod_spec_names(spec, path)
    ads = spec.get("activeDeadlineSeconds")
    if ads is not None and not 1 <= _int(ads) <= MAX_INT32:
        errs.append(_invalid(f"{path}.activeDeadlineSeconds", ads, names.inclusive_range_error(1, MAX_INT32)))
    if spec.get("tolerations"):
        errs += validate_tolerations(_l(spec["tolerations"]), f"{path}.tolerations")
    if spec.get("preemptionPolicy") is not None:
        errs += _validate_enum(spec["preemptionPolicy"], f"{path}.preemptionPolicy", _PREEMPTION_POLICIES)
    if spec.get("overhead") is not None:
        errs += validate_resource_requirements({"limits": spec["overhead"]}, f"{path}.overhead")
    os_ = spec.get("os")
    if os_ is not None:
        os_name = _d(os_).get("name") or ""
        if not os_name:
            errs.append(_required(f"{path}.os.name", "cannot be empty"))
        elif os_name not in ("linux", "windows"):
            errs.append(_not_supported(f"{path}.os", os_name, ["linux", "windows"]))
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
    sc = _d(spec.get("securityContext"))
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        if sc.get(key) is not None and not 0 <= _int(sc[key]) <= MAX_INT32:
            errs.append(_invalid(f"{path}.securityContext.{key}", sc[key], _ID_RANGE_MSG))
    for i, gid in enumerate(_l(sc.get("supplementalGroups"))):
        if not 0 <= _int(gid) <= MAX_INT32:
            errs.append(_invalid(f"{path}.securityContext.supplementalGroups[{i}]", gid, _ID_RANGE_MSG))
    if sc.get("shareProcessNamespace") and sc.get("hostPID"):
        errs.append(_invalid(f"{path}.securityContext.shareProcessNamespace", True,
                             "ShareProcessNamespace and HostPID cannot both be enabled"))
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        errs.append(_invalid(f"{path}.shareProcessNamespace", True,
                             "ShareProcessNamespace and HostPID cannot both be enabled"))
    seen_sysctls: set[str] = set()
    for i, sysctl in enumerate(_l(sc.get("sysctls"))):
        name = _s(_d(sysctl).get("name"))
        sp = f"{path}.securityContext.sysctls[{i}].name"
        if not name:
            errs.append(_required(sp))
        elif len(name) > 253 or not _SYSCTL.fullmatch(name):
            errs.append(_invalid(sp, name, "must have at most 253 characters and match regex "
                                           r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"))
        elif name in seen_sysctls:
            errs.append(FieldError(sp, DUPLICATE, "", name))
        seen_sysctls.add(name)
    for i, alias in enumerate(_l(spec.get("hostAliases"))):
        alias, ap = _d(alias), f"{path}.hostAliases[{i}]"
        errs += _ip_errors(alias.get("ip"), f"{ap}.ip")
        for j, host in enumerate(_l(alias.get("hostnames"))):
            errs += _msgs(f"{ap}.hostnames[{j}]", host, names.dns1123_subdomain_errors(_s(host)))
    for i, vol in enumerate(_l(spec.get("volumes"))):
        errs += _volume_modes(_d(vol), f"{path}.volumes[{i}]")
    os_name = _d(spec.get("os")).get("name")
    for key in ("initContainers", "containers"):
        for i, c in enumerate(_l(spec.get(key))):
            c, cp = _d(c), f"{path}.{key}[{i}]"
            errs += _container_security(_d(c.get("securityContext")), f"{cp}.securityContext")
            errs += _resize_policy(_l(c.get("resizePolicy")), f"{cp}.resizePolicy")
            if os_name == "windows":
                csc = _d(c.get("securityContext"))
                errs += [_forbidden(f"{cp}.securityContext.{k}", "cannot be set for a windows pod")
                         for k in _LINUX_ONLY_CONTAINER if csc.get(k) is not None]
            elif os_name == "linux" and _d(c.get("securityContext")).get("windowsOptions") is not None:
                errs.append(_forbidden(f"{cp}.securityContext.windowsOptions", "windows options cannot be set "
                                                                               "for a linux pod"))
    if os_name == "windows":
        errs += [_forbidden(f"{path}.securityContext.{k}", "cannot be set for a windows pod")
                 for k in _LINUX_ONLY_POD if sc.get(k) is not None]
        if spec.get("hostUsers") is not None:
            errs.append(_forbidden(f"{path}.hostUsers", "cannot be set for a windows pod"))
    elif os_name == "linux" and sc.get("windowsOptions") is not None:
        errs.append(_forbidden(f"{path}.securityContext.windowsOptions", "windows options cannot be set for a "
                                                                          "linux pod"))
    return errs


def _container_security(sc: Mapping, path: str) -> Errs:
    """ValidateSecurityContext: ids in range, privilege escalation that privileged or CAP_SYS_ADMIN implies."""
    errs: Errs = []
    for key in ("runAsUser", "runAsGroup"):
        if sc.get(key) is not None and not 0 <= _int(sc[key]) <= MAX_INT32:
            errs.append(_invalid(f"{path}.{key}", sc[key], _ID_RANGE_MSG))
    if sc.get("allowPrivilegeEscalation") is False:
        if sc.get("privileged"):
            errs.append(_invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
        if "CAP_SYS_ADMIN" in _l(_d(sc.get("capabilities")).get("add")) or \
                "SYS_ADMIN" in _l(_d(sc.get("capabilities")).get("add")):
            errs.append(_invalid(path, sc, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                                           "CAP_SYS_ADMIN"))
    proc = sc.get("procMount")
    if proc is not None and proc not in ("Default", "Unmasked"):
        errs.append(_not_supported(f"{path}.procMount", proc, ["Default", "Unmasked"]))
    return errs


def _volume_modes(vol: Mapping, path: str) -> Errs:
    """validateConfigMapVolumeSource and friends: file modes are 0-0777."""
    errs: Errs = []
    for key in ("configMap", "secret", "downwardAPI", "projected"):
        src = vol.get(key)
        if src is None:
            continue
        src, sp = _d(src), f"{path}.{key}"
        if src.get("defaultMode") is not None and not 0 <= _int(src["defaultMode"]) <= 0o777:
            errs.append(_invalid(f"{sp}.defaultMode", src["defaultMode"],
                                 "must be a number between 0 and 0777 (octal), both inclusive"))
        for i, item in enumerate(_l(src.get("items"))):
            item = _d(item)
            if item.get("mode") is not None and not 0 <= _int(item["mode"]) <= 0o777:
                errs.append(_invalid(f"{sp}.items[{i}].mode", item["mode"],
                                     "must be a number between 0 and 0777 (octal), both inclusive"))
            if key in ("configMap", "secret"):
                k = _s(item.get("key"))
                if not k:
                    errs.append(_required(f"{sp}.items[{i}].key"))
                if not _s(item.get("path")):
                    errs.append(_required(f"{sp}.items[{i}].path"))
                elif _s(item["path"]).startswith("/") or ".." in _s(item["path"]).split("/"):
                    errs.append(_invalid(f"{sp}.items[{i}].path", item["path"], "must be a relative path "
                                                                                "without '..'"))
    return errs


def _resize_policy(policies: list, path: str) -> Errs:
    """validateResizePolicy: cpu or memory, NotRequired or RestartContainer, each resource once."""
    errs: Errs = []
    seen: set[str] = set()
    for i, pol in enumerate(policies):
        pol, p = _d(pol), f"{path}[{i}]"
        name = _s(pol.get("resourceName"))
        if name not in ("cpu", "memory"):
            errs.append(_not_supported(p, name, ["cpu", "memory"]))
        elif name in seen:
            errs.append(FieldError(p, DUPLICATE, "", name))
        seen.add(name)
        rp = _s(pol.get("restartPolicy"))
        if rp not in ("NotRequired", "RestartContainer"):
            errs.append(_not_supported(p, rp, ["NotRequired", "RestartContainer"]))
    return errs


def _ip_errors(value: object, path: str) -> Errs:
    import ipaddress

    try:
        ipaddress.ip_address(_s(value))
    except ValueError:
        return [_invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")]
    return []


def _validate_host_network(spec: Mapping, path: str, is_pod: bool) -> Errs:
    """validatePodHostNetworkDeps: hostPort must equal containerPort (0 allowed in templates)."""
    if not spec.get("hostNetwork"):
        return []
    errs: Errs = []
    for i, c in enumerate(_l(spec.get("containers"))):
        for j, port in enumerate(_l(_d(c).get("ports"))):
            hp, cp = _int(_d(port).get("hostPort")), _int(_d(port).get("containerPort"))
            if (is_pod or hp != 0) and hp != cp:
                errs.append(_invalid(f"{path}.containers[{i}].ports[{j}].hostPort", hp, "must match `containerPort` when `hostNetwork` is true"))
    return errs


def _validate_dns_config(spec: Mapping, path: str) -> Errs:
    cfg = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if cfg is None:
            return [_required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not _d(cfg).get("nameservers"):
            return [_required(f"{path}.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is None")]
    cfg = _d(cfg)
    errs: Errs = []
    if len(_l(cfg.get("nameservers"))) > 3:
        errs.append(_invalid(f"{path}.nameservers", cfg["nameservers"], "must not have more than 3 nameservers"))
    if len(_l(cfg.get("searches"))) > 32:
        errs.append(_invalid(f"{path}.searches", cfg["searches"], "must not have more than 32 search paths"))
    for i, opt in enumerate(_l(cfg.get("options"))):
        if not _d(opt).get("name"):
            errs.append(_required(f"{path}.options[{i}]", "must not be empty"))
    return errs


def _validate_scheduling_gates(gates: list, path: str) -> Errs:
    errs: Errs = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        name = _s(_d(gate).get("name"))
        errs += _msgs(f"{path}[{i}]", name, names.qualified_name_errors(name))
        if name in seen:
            errs.append(FieldError(f"{path}[{i}]", DUPLICATE, "", name))
        seen.add(name)
    return errs


def _validate_pod_spec_names(spec: Mapping, path: str) -> Errs:
    errs: Errs = []
    for key, fn in (("serviceAccountName", names.name_is_dns_subdomain), ("nodeName", names.name_is_dns_subdomain)):
        if spec.get(key):
            errs += _msgs(f"{path}.{key}", spec[key], fn(spec[key], False))
    for key in ("hostname", "subdomain"):
        if spec.get(key):
            errs += _msgs(f"{path}.{key}", spec[key], names.dns1123_label_errors(spec[key]))
    for key in ("priorityClassName", "runtimeClassName"):
        if spec.get(key):
            errs += _msgs(f"{path}.{key}", spec[key], names.name_is_dns_subdomain(spec[key]))
    return errs


def _validate_pod_template(template: Mapping | None, path: str) -> Errs:
    """ValidatePodTemplateSpec (labels/annotations paths are template.labels, as upstream)."""
    template = _d(template)
    meta = _d(template.get("metadata"))
    spec = _d(template.get("spec"))
    errs = selectors.validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    errs += _validate_pod_annotations(meta.get("annotations"), spec, f"{path}.annotations")
    errs += validate_pod_spec(spec, f"{path}.spec", is_pod=False)
    if spec.get("ephemeralContainers"):
        errs.append(_forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template"))
    return errs


# --- Pod ------------------------------------------------------------------------------------


def _pod_metadata_and_spec(pod: Mapping) -> Errs:
    """validatePodMetadataAndSpec."""
    meta, spec = _d(pod.get("metadata")), _d(pod.get("spec"))
    errs = validate_object_meta(meta, namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs += _validate_pod_annotations(meta.get("annotations"), spec, "metadata.annotations")
    errs += validate_pod_spec(spec, "spec", is_pod=True)
    if not spec.get("serviceAccountName"):
        for vi, vol in enumerate(_l(spec.get("volumes"))):
            for si, src in enumerate(_l(_d(_d(vol).get("projected")).get("sources"))):
                if _d(src).get("serviceAccountToken") is not None:
                    p = f"spec.volumes[{vi}].projected.sources[{si}].serviceAccountToken"
                    errs.append(_forbidden(p, "must not be specified when serviceAccountName is not set"))
    for key in ("containers", "initContainers"):
        for i, c in enumerate(_l(spec.get(key))):
            image = _s(_d(c).get("image"))
            if image != image.strip():
                errs.append(_invalid(f"spec.{key}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs


def validate_pod(pod: Mapping) -> Errs:
    """ValidatePodCreate."""
    errs = _pod_metadata_and_spec(pod)
    spec = _d(pod.get("spec"))
    if spec.get("ephemeralContainers"):
        errs.append(_forbidden("spec.ephemeralContainers", "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        errs.append(_forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"))
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
    new_spec, old_spec = _d(new.get("spec")), _d(old.get("spec"))
    errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    errs += _pod_metadata_and_spec(new)
    errs += _validate_pod_annotation_updates(_d(_d(new.get("metadata")).get("annotations")), _d(_d(old.get("metadata")).get("annotations")))
    for key in ("containers", "initContainers"):
        cerrs, stop = _validate_container_updates(_l(new_spec.get(key)), _l(old_spec.get(key)), f"spec.{key}")
        errs += cerrs
        if stop:
            return errs
    ads_errs, stop = _validate_active_deadline_update(new_spec.get("activeDeadlineSeconds"), old_spec.get("activeDeadlineSeconds"))
    errs += ads_errs
    if stop:
        return errs
    errs += _validate_only_added_tolerations(_l(new_spec.get("tolerations")), _l(old_spec.get("tolerations")), "spec.tolerations")
    errs += _validate_only_deleted_gates(_l(new_spec.get("schedulingGates")), _l(old_spec.get("schedulingGates")), "spec.schedulingGates")
    if semantic_equal(new_spec, old_spec):
        return errs
    munged, gate_errs = _munge_pod_spec(new_spec, old_spec)
    errs += gate_errs
    if not semantic_equal(munged, old_spec):
        diff = "\n".join(_diff(_normalize(old_spec), _normalize(munged), "spec"))
        errs.append(_forbidden("spec", f"{POD_UPDATE_FORBIDDEN_MSG}\n{diff}"))
    return errs


def _validate_pod_annotation_updates(new: Mapping, old: Mapping) -> Errs:
    path = "metadata.annotations"
    errs: Errs = []
    if old.get(MIRROR_POD_ANNOTATION) != new.get(MIRROR_POD_ANNOTATION):
        if MIRROR_POD_ANNOTATION in old:
            errs.append(_forbidden(f"{path}[{MIRROR_POD_ANNOTATION}]", "may not remove or update mirror pod annotation"))
        else:
            errs.append(_forbidden(f"{path}[{MIRROR_POD_ANNOTATION}]", "may not add mirror pod annotation"))
    return errs


def _validate_container_updates(new: list, old: list, path: str) -> tuple[Errs, bool]:
    """ValidateContainerUpdates."""
    if len(new) != len(old):
        return [_forbidden(path, "pod updates may not add or remove containers")], True
    errs: Errs = []
    for i, c in enumerate(new):
        image = _s(_d(c).get("image"))
        if not image:
            errs.append(_required(f"{path}[{i}].image"))
        if image != image.strip():
            errs.append(_invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs, False


def _validate_active_deadline_update(new: object, old: object) -> tuple[Errs, bool]:
    path = "spec.activeDeadlineSeconds"
    if new is not None:
        if not 0 <= _int(new) <= MAX_INT32:
            return [_invalid(path, new, names.inclusive_range_error(0, MAX_INT32))], True
        if old is not None and _int(old) < _int(new):
            return [_invalid(path, new, "must be less than or equal to previous value")], True
    elif old is not None:
        return [_invalid(path, None, "must not update from a positive integer to nil value")], False
    return [], False


def _validate_only_added_tolerations(new: list, old: list, path: str) -> Errs:
    """validateOnlyAddedTolerations: existing ones may only change tolerationSeconds."""
    for o in old:
        o = {k: v for k, v in _d(o).items() if k != "tolerationSeconds"}
        if not any(semantic_equal(o, {k: v for k, v in _d(n).items() if k != "tolerationSeconds"}) for n in new):
            return [_forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return validate_tolerations(new, path)


def _validate_only_deleted_gates(new: list, old: list, path: str) -> Errs:
    old_names = {_s(_d(g).get("name")) for g in old}
    errs: Errs = []
    for i, g in enumerate(new):
        name = _s(_d(g).get("name"))
        if name not in old_names:
            errs.append(_forbidden(f"{path}[{i}].name", f"only deletion is allowed, but found new scheduling gate '{name}'"))
    return errs


def _munge_pod_spec(new: Mapping, old: Mapping) -> tuple[dict, Errs]:
    """Copy the updatable fields from old into new so that the rest can be compared."""
    munged = copy.deepcopy(dict(new))
    for key in ("containers", "initContainers"):
        for c, oc in zip(_l(munged.get(key)), _l(old.get(key))):
            if isinstance(c, dict):
                c["image"] = _d(oc).get("image")
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        if key in old:
            munged[key] = copy.deepcopy(old[key])
        else:
            munged.pop(key, None)
    old_grace = old.get("terminationGracePeriodSeconds")
    if _is_int(old_grace) and old_grace < 0 and munged.get("terminationGracePeriodSeconds") == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    errs: Errs = []
    if old.get("schedulingGates"):  # gated pods may add to nodeSelector / node affinity
        errs += _munge_gated(munged, old)
    return munged, errs


def _munge_gated(munged: dict, old: Mapping) -> Errs:
    errs: Errs = []
    new_sel, old_sel = _d(munged.get("nodeSelector")), _d(old.get("nodeSelector"))
    if not semantic_equal(new_sel, old_sel):
        if any(new_sel.get(k) != v for k, v in old_sel.items()):
            errs.append(_invalid("spec.nodeSelector", new_sel, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
        munged["nodeSelector"] = old.get("nodeSelector")
    new_na = _d(munged.get("affinity")).get("nodeAffinity")
    old_na = _d(old.get("affinity")).get("nodeAffinity")
    if not semantic_equal(new_na, old_na):
        errs += _validate_node_affinity_mutation(_d(new_na), _d(old_na))
        if not isinstance(munged.get("affinity"), dict):
            munged["affinity"] = {}
        munged["affinity"]["nodeAffinity"] = old_na  # an emptied affinity compares equal to none
    return errs


def _validate_node_affinity_mutation(new: Mapping, old: Mapping) -> Errs:
    path = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    old_terms = _l(_d(old.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    new_terms = _l(_d(new.get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms"))
    if old_terms and len(old_terms) != len(new_terms):
        return [_invalid(path, new_terms, "no additions/deletions to non-empty NodeSelectorTerms list are allowed")]
    errs: Errs = []
    for i, (nt, ot) in enumerate(zip(new_terms, old_terms)):
        if not _term_only_additions(_d(nt), _d(ot)):
            errs.append(_invalid(f"{path}[{i}]", nt, "only additions are allowed (no mutations or deletions)"))
    return errs


def _term_only_additions(new: Mapping, old: Mapping) -> bool:
    if not old.get("matchExpressions") and not old.get("matchFields"):
        if new.get("matchExpressions") or new.get("matchFields"):
            return False
    for key in ("matchExpressions", "matchFields"):
        o, n = _l(old.get(key)), _l(new.get(key))
        if o and (len(n) < len(o) or not semantic_equal(n[: len(o)], o)):
            return False
    return True


# --- semantic equality (apiequality.Semantic.DeepEqual on dicts) ------------------------------

_QUANTITY_MAPS = frozenset({"limits", "requests", "overhead", "capacity", "allocatable"})


def _normalize(x: object, quantities: bool = False) -> object:
    """Drop empty/None values (nil == empty upstream) and compare quantities by value."""
    if isinstance(x, dict):
        out = {}
        for k in sorted(x):
            v = _normalize(x[k], k in _QUANTITY_MAPS)
            if v not in (None, {}, []):
                out[k] = v
        if quantities:
            return {k: (quantity.parse_quantity(v) if quantity.is_quantity(v) else v) for k, v in out.items()}
        return out
    if isinstance(x, list):
        return [_normalize(v) for v in x]
    return x


def semantic_equal(a: object, b: object) -> bool:
    return a == b or _normalize(a) == _normalize(b)


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


# --- workloads (apps/v1, batch/v1) --------------------------------------------------------------


def _selector_for(sel: object) -> selectors.Selector | None:
    """LabelSelectorAsSelector; None when it errors."""
    try:
        return selectors.label_selector_as_selector(sel if isinstance(sel, dict) else None)
    except ValueError:
        return None


def _template_labels(spec: Mapping) -> dict:
    return _d(_d(_d(spec.get("template")).get("metadata")).get("labels"))


def _validate_workload_selector(spec: Mapping, kind: str) -> tuple[Errs, selectors.Selector | None]:
    """Selector required, valid and non-empty; returns the parsed selector."""
    errs: Errs = []
    sel = spec.get("selector")
    if sel is None:
        errs.append(_required("spec.selector"))
    else:
        errs += selectors.validate_selector(_d(sel), "spec.selector")
        if not _d(sel).get("matchLabels") and not _d(sel).get("matchExpressions"):
            errs.append(_invalid("spec.selector", sel, f"empty selector is invalid for {kind}"))
    return errs, _selector_for(sel)


def _validate_template_for_rs(spec: Mapping, selector: selectors.Selector, kind: str) -> Errs:
    """ValidatePodTemplateSpecForReplicaSet."""
    errs: Errs = []
    labels = _template_labels(spec)
    if not selector.empty() and not selector.matches(labels):
        errs.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    errs += _validate_pod_template(spec.get("template"), "spec.template")
    errs += _always_restart_template(spec, kind)
    return errs


def _always_restart_template(spec: Mapping, kind: str) -> Errs:
    tspec = _d(_d(spec.get("template")).get("spec"))
    errs: Errs = []
    policy = tspec.get("restartPolicy") or ""
    if policy != "Always":
        errs.append(_not_supported("spec.template.spec.restartPolicy", policy, ["Always"]))
    if tspec.get("activeDeadlineSeconds") is not None:
        errs.append(_forbidden("spec.template.spec.activeDeadlineSeconds", f"activeDeadlineSeconds in {kind} is not Supported"))
    return errs


def _int_or_percent(value: object, path: str) -> Errs:
    """ValidatePositiveIntOrPercent."""
    if isinstance(value, str):
        return _msgs(path, value, names.percent_errors(value))
    if _is_int(value) or value is None:
        return _nonnegative(_int(value), path)
    return [_invalid(path, value, "must be an integer or percentage (e.g '5%%')")]


def _int_or_percent_value(value: object) -> int:
    if isinstance(value, str):
        return int(value[:-1]) if not names.percent_errors(value) else 0
    return _int(value)


def _not_more_than_100_percent(value: object, path: str) -> Errs:
    if isinstance(value, str) and not names.percent_errors(value) and int(value[:-1]) > 100:
        return [_invalid(path, value, "must not be greater than 100%")]
    return []


def _validate_deployment_strategy(strategy: Mapping, path: str) -> Errs:
    kind = strategy.get("type") or ""
    ru = strategy.get("rollingUpdate")
    if kind == "Recreate":
        return [_forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")] if ru is not None else []
    if kind == "RollingUpdate":
        if ru is None:
            return [_required(f"{path}.rollingUpdate", "this should be defaulted and never be nil")]
        ru, rp = _d(ru), f"{path}.rollingUpdate"
        errs = _int_or_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
        errs += _int_or_percent(ru.get("maxSurge"), f"{rp}.maxSurge")
        if _int_or_percent_value(ru.get("maxUnavailable")) == 0 and _int_or_percent_value(ru.get("maxSurge")) == 0:
            errs.append(_invalid(f"{rp}.maxUnavailable", ru.get("maxUnavailable"), "may not be 0 when `maxSurge` is 0"))
        return errs + _not_more_than_100_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
    return [_not_supported(path, strategy, ["Recreate", "RollingUpdate"])]


def validate_deployment(obj: Mapping) -> Errs:
    """ValidateDeployment (apps/v1)."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs += _nonnegative(spec.get("replicas"), "spec.replicas")
    sel_errs, selector = _validate_workload_selector(spec, "deployment")
    errs += sel_errs
    if selector is None:
        errs.append(_invalid("spec.selector", spec.get("selector"), "invalid label selector"))
    else:
        errs += _validate_template_for_rs(spec, selector, "ReplicaSet")
    errs += _validate_deployment_strategy(_d(spec.get("strategy")), "spec.strategy")
    errs += _nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    if spec.get("revisionHistoryLimit") is not None:
        errs += _nonnegative(spec["revisionHistoryLimit"], "spec.revisionHistoryLimit")
    pds = spec.get("progressDeadlineSeconds")
    if pds is not None:
        errs += _nonnegative(pds, "spec.progressDeadlineSeconds")
        if _int(pds) <= _int(spec.get("minReadySeconds")):
            errs.append(_invalid("spec.progressDeadlineSeconds", pds, "must be greater than minReadySeconds"))
    return errs


def validate_replicaset(obj: Mapping) -> Errs:
    """ValidateReplicaSet (its empty-selector message says "deployment", as upstream's does)."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    errs += _nonnegative(spec.get("replicas"), "spec.replicas")
    errs += _nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    sel_errs, selector = _validate_workload_selector(spec, "deployment")
    errs += sel_errs
    if selector is None:
        errs.append(_invalid("spec.selector", spec.get("selector"), "invalid label selector"))
    else:
        errs += _validate_template_for_rs(spec, selector, "ReplicaSet")
    return errs


def validate_statefulset(obj: Mapping) -> Errs:
    """ValidateStatefulSet. Upstream does not validate the template's pod spec (only labels,
    annotations, restartPolicy and activeDeadlineSeconds) - see ValidatePodTemplateSpecForStatefulSet."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_label)
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errs.append(_required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(_invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    errs += _validate_sts_update_strategy(_d(spec.get("updateStrategy")))
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        for key in ("whenDeleted", "whenScaled"):
            value = _d(retention).get(key) or ""
            if value not in ("Retain", "Delete"):
                errs.append(_not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{key}", value, ["Retain", "Delete"]))
    errs += _nonnegative(spec.get("replicas"), "spec.replicas")
    errs += _nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    if spec.get("ordinals") is not None:
        errs += _nonnegative(_d(spec["ordinals"]).get("start"), "spec.ordinals.start")
    sel_errs, selector = _validate_workload_selector(spec, "statefulset")
    errs += sel_errs
    if selector is None:
        errs.append(_invalid("spec.selector", spec.get("selector"), ""))
    else:
        template = _d(spec.get("template"))
        labels = _template_labels(spec)
        if not selector.empty() and not selector.matches(labels):
            errs.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
        meta = _d(template.get("metadata"))
        errs += selectors.validate_labels(meta.get("labels"), "spec.template.labels")
        errs += validate_annotations(meta.get("annotations"), "spec.template.annotations")
        errs += _validate_pod_annotations(meta.get("annotations"), _d(template.get("spec")), "spec.template.annotations")
    # validateVolumeClaimTemplates: each is a named claim with access modes and a storage request
    for k, t in enumerate(_l(spec.get("volumeClaimTemplates"))):
        tpath = f"spec.volumeClaimTemplates[{k}]"
        name = _s(_d(_d(t).get("metadata")).get("name"))
        if not name:
            errs.append(_required(f"{tpath}.metadata.name"))
        claim = {"metadata": {"name": name or "x", "namespace": "x"}, "spec": _d(_d(t).get("spec"))}
        for e in validate_persistent_volume_claim(claim):
            if e.path.startswith("spec"):
                errs.append(FieldError(f"{tpath}.{e.path}", e.type, e.detail, e.value))

    return errs + _always_restart_template(spec, "StatefulSet")


def _validate_sts_update_strategy(strategy: Mapping) -> Errs:
    path = "spec.updateStrategy"
    kind = strategy.get("type") or ""
    ru = strategy.get("rollingUpdate")
    if not kind:
        return [_required(path)]
    if kind == "OnDelete":
        return [_invalid(f"{path}.rollingUpdate", ru, "only allowed for updateStrategy 'RollingUpdate'")] if ru is not None else []
    if kind == "RollingUpdate":
        if ru is None:
            return []
        errs = _nonnegative(_d(ru).get("partition"), f"{path}.rollingUpdate.partition")
        mu = _d(ru).get("maxUnavailable")
        if mu is not None:
            errs += _int_or_percent(mu, f"{path}.rollingUpdate.maxUnavailable")
            if _int_or_percent_value(mu) == 0:
                errs.append(_invalid(f"{path}.rollingUpdate.maxUnavailable", mu, "cannot be 0"))
            errs += _not_more_than_100_percent(mu, f"{path}.rollingUpdate.maxUnavailable")
        return errs
    return [_invalid(path, strategy, "must be 'RollingUpdate' or 'OnDelete'")]


def validate_daemonset(obj: Mapping) -> Errs:
    """ValidateDaemonSet. A missing selector shows up as a template-label mismatch, as upstream."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    sel = spec.get("selector")
    errs += selectors.validate_selector(_d(sel) if sel is not None else None, "spec.selector")
    selector = _selector_for(sel)
    labels = _template_labels(spec)
    if selector is not None and not selector.matches(labels):
        errs.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    if sel is not None and not _d(sel).get("matchLabels") and not _d(sel).get("matchExpressions"):
        errs.append(_invalid("spec.selector", sel, "empty selector is invalid for daemonset"))
    errs += _validate_pod_template(spec.get("template"), "spec.template")
    errs += _always_restart_template(spec, "DaemonSet")
    errs += _nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    errs += _validate_ds_update_strategy(_d(spec.get("updateStrategy")), "spec.updateStrategy")
    if spec.get("revisionHistoryLimit") is not None:
        errs += _nonnegative(spec["revisionHistoryLimit"], "spec.revisionHistoryLimit")
    return errs


def _validate_ds_update_strategy(strategy: Mapping, path: str) -> Errs:
    kind = strategy.get("type") or ""
    if kind == "OnDelete":
        return []
    if kind != "RollingUpdate":
        return [_not_supported(path, strategy, ["RollingUpdate", "OnDelete"])]
    ru = strategy.get("rollingUpdate")
    if ru is None:
        return [_required(f"{path}.rollingUpdate")]
    ru, rp = _d(ru), f"{path}.rollingUpdate"
    errs = _int_or_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
    errs += _not_more_than_100_percent(ru.get("maxUnavailable"), f"{rp}.maxUnavailable")
    if not _rules().daemonset_max_surge:
        # ValidateRollingUpdateDaemonSet without DaemonSetUpdateSurge (1.21): maxSurge is not looked at
        if _int_or_percent_value(ru.get("maxUnavailable")) == 0:
            errs.append(_invalid(f"{rp}.maxUnavailable", ru.get("maxUnavailable"), "cannot be 0"))
        return errs
    errs += _int_or_percent(ru.get("maxSurge"), f"{rp}.maxSurge")
    errs += _not_more_than_100_percent(ru.get("maxSurge"), f"{rp}.maxSurge")
    has_unavailable = _int_or_percent_value(ru.get("maxUnavailable")) != 0
    has_surge = _int_or_percent_value(ru.get("maxSurge")) != 0
    if has_unavailable and has_surge:
        errs.append(_invalid(f"{rp}.maxSurge", ru.get("maxSurge"), "may not be set when maxUnavailable is non-zero"))
    elif not has_unavailable and not has_surge:
        errs.append(_required(f"{rp}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def validate_job(obj: Mapping) -> Errs:
    """ValidateJob / validateJobSpec (batch/v1, pkg/apis/batch/validation/validation.go), in upstream's order.
    The registry's generated selector (controller-uid labels) is not checked here."""
    spec = _d(obj.get("spec"))
    md = _d(obj.get("metadata"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
                "backoffLimitPerIndex", "maxFailedIndexes"):
        if spec.get(key) is not None:
            errs += _nonnegative(spec[key], f"spec.{key}")
            if key == "maxFailedIndexes" and spec.get("backoffLimitPerIndex") is None:
                errs.append(_required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    mode = spec.get("completionMode")
    indexed = mode == "Indexed"
    if mode is not None and mode not in ("NonIndexed", "Indexed"):
        errs.append(_not_supported("spec.completionMode", mode, ["NonIndexed", "Indexed"]))
    if indexed:
        errs += _validate_indexed_limits(spec)
    else:
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                errs.append(_invalid(f"spec.{key}", spec[key], "requires indexed completion mode"))
    policy = _d(_d(spec.get("template")).get("spec")).get("restartPolicy") or ""
    if spec.get("podFailurePolicy") is not None:
        errs += _validate_pod_failure_policy(spec)
    if spec.get("successPolicy") is not None:
        if not indexed:
            errs.append(_invalid("spec.successPolicy", spec["successPolicy"], "requires indexed completion mode"))
        else:
            errs += _validate_success_policy(spec)
    errs += _validate_pod_replacement_policy(spec)
    errs += _validate_pod_template(spec.get("template"), "spec.template")
    if policy not in ("OnFailure", "Never"):
        errs.append(_not_supported("spec.template.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    elif spec.get("podFailurePolicy") is not None and policy != "Never":
        errs.append(_invalid("spec.template.spec.restartPolicy", policy,
                             'only "Never" is supported when podFailurePolicy is specified'))
    sel = spec.get("selector")
    if sel is None:
        errs.append(_required("spec.selector"))
    else:
        errs += selectors.validate_selector(_d(sel), "spec.selector")
    selector = _selector_for(sel)
    labels = _template_labels(spec)
    if selector is not None and not selector.matches(labels):
        errs.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    completions = spec.get("completions")
    if indexed and _is_int(completions) and completions > 0 and isinstance(md.get("name"), str):
        # the controller names each pod's hostname <job>-<index>
        hostname = f"{md['name']}-{completions - 1}"
        if not names.is_dns1123_label(hostname):
            errs.append(_invalid("metadata.name", md["name"], "will not able to create pod with invalid DNS label: "
                                                             f"{hostname}"))
    return errs


_MAX_PARALLELISM_INDEXED = 100000       # maxParallelismForIndexedJob
_MAX_FAILED_INDEXES = 100000            # maxFailedIndexesForIndexedJob
_COMPLETIONS_SOFT_LIMIT = 100000        # completionsSoftLimit
_HIGH_COMPLETIONS_LIMIT = 10000         # parallelismLimitForHighCompletions, maxFailedIndexesLimitForHighCompletions


def _validate_indexed_limits(spec: Mapping) -> Errs:
    """validateJobSpec for completionMode Indexed."""
    errs: Errs = []
    completions, parallelism = spec.get("completions"), spec.get("parallelism")
    max_failed, per_index = spec.get("maxFailedIndexes"), spec.get("backoffLimitPerIndex")
    if completions is None:
        errs.append(_required("spec.completions", "when completion mode is Indexed"))
    if _is_int(parallelism) and parallelism > _MAX_PARALLELISM_INDEXED:
        errs.append(_invalid("spec.parallelism", parallelism,
                             f"must be less than or equal to {_MAX_PARALLELISM_INDEXED} when completion mode is Indexed"))
    if _is_int(completions) and _is_int(max_failed) and max_failed > completions:
        errs.append(_invalid("spec.maxFailedIndexes", max_failed, "must be less than or equal to completions"))
    if _is_int(max_failed) and max_failed > _MAX_FAILED_INDEXES:
        errs.append(_invalid("spec.maxFailedIndexes", max_failed, f"must be less than or equal to {_MAX_FAILED_INDEXES}"))
    if _is_int(completions) and completions > _COMPLETIONS_SOFT_LIMIT and per_index is not None:
        high = (f"must be less than or equal to {_HIGH_COMPLETIONS_LIMIT} when completions are above "
                f"{_COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index")
        if max_failed is None:
            errs.append(_required("spec.maxFailedIndexes", f"must be specified when completions is above "
                                                           f"{_COMPLETIONS_SOFT_LIMIT}"))
        if _is_int(parallelism) and parallelism > _HIGH_COMPLETIONS_LIMIT:
            errs.append(_invalid("spec.parallelism", parallelism, high))
        if _is_int(max_failed) and max_failed > _HIGH_COMPLETIONS_LIMIT:
            errs.append(_invalid("spec.maxFailedIndexes", max_failed, high))
    return errs


def _validate_success_policy(spec: Mapping) -> Errs:
    """validateSuccessPolicy / validateSuccessPolicyRule."""
    errs: Errs = []
    rules = _l(_d(spec.get("successPolicy")).get("rules"))
    completions = _int(spec.get("completions"))
    if not rules:
        errs.append(_required("spec.successPolicy.rules",
                              "at least one rules must be specified when the successPolicy is specified"))
    if len(rules) > 20:
        errs.append(FieldError("spec.successPolicy.rules", TOO_MANY, "must have at most 20 items", len(rules)))
    for i, rule in enumerate(rules):
        rule, rp = _d(rule), f"spec.successPolicy.rules[{i}]"
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            errs.append(_required(rp, "at least one of succeededCount or succeededIndexes must be specified"))
        total = 0
        if isinstance(indexes, str):
            if len(indexes) > 64 * 1024:   # maxJobSuccessPolicySucceededIndexesLimit
                errs.append(FieldError(f"{rp}.succeededIndexes", TOO_LONG, "may not be more than 65536 bytes"))
            total, problem = _indexes_format(indexes, completions)
            if problem:
                errs.append(_invalid(f"{rp}.succeededIndexes", indexes, f"error parsing succeededIndexes: {problem}"))
        if count is not None:
            errs += _nonnegative(count, f"{rp}.succeededCount")
            if _is_int(count) and count > completions:
                errs.append(_invalid(f"{rp}.succeededCount", count, f"must be less than or equal to {completions} "
                                                                    "(the number of specified completions)"))
            if _is_int(count) and indexes is not None and count > total:
                errs.append(_invalid(f"{rp}.succeededCount", count, f"must be less than or equal to {total} (the "
                                     "number of indexes in the specified succeededIndexes field)"))
    return errs


def _indexes_format(text: str, completions: int) -> tuple[int, str]:
    """validateIndexesFormat / parseIndexInterval: (the number of indexes, the error or "")."""
    if not text:
        return 0, ""
    last: int | None = None
    total = 0
    for part in text.split(","):
        limits = part.split("-")
        if len(limits) > 2:
            return 0, (f"the fragment {_go_quote(part)} violates the requirement that an index interval can have at "
                       "most two parts separated by '-'")
        bounds = []
        for limit in limits:
            if not re.fullmatch(r"[+-]?\d+", limit):
                return 0, f"cannot convert string to integer for index: {_go_quote(limit)}"
            value = int(limit)
            if value >= completions:
                return 0, f"too large index: {_go_quote(limit)}"
            bounds.append(value)
        x, y = bounds[0], bounds[-1]
        if len(bounds) == 2 and x >= y:
            return 0, f"non-increasing order, previous: {x}, current: {y}"
        if last is not None and last >= x:
            return 0, f"non-increasing order, previous: {last}, current: {x}"
        total += y - x + 1
        last = y
    return total, ""


def _go_quote(text: str) -> str:
    """Go's %q for the strings that reach it here."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _validate_pod_replacement_policy(spec: Mapping) -> Errs:
    """validatePodReplacementPolicy: Failed only with a podFailurePolicy."""
    value = spec.get("podReplacementPolicy")
    if value is None:
        return []
    if spec.get("podFailurePolicy") is not None:
        return [] if value == "Failed" else [_not_supported("spec.podReplacementPolicy", value, ["Failed"])]
    if value not in ("Failed", "TerminatingOrFailed"):
        return [_not_supported("spec.podReplacementPolicy", value, ["Failed", "TerminatingOrFailed"])]
    return []


_PFP_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]


def _validate_pod_failure_policy(spec: Mapping) -> Errs:
    """validatePodFailurePolicy / validatePodFailurePolicyRule: each rule has a known action (FailIndex only
    with backoffLimitPerIndex) and exactly one of onExitCodes / onPodConditions; exit code rules name In or
    NotIn, a container of the template, and distinct ordered values, never 0 with In; condition patterns have
    a status True, False or Unknown."""
    errs: Errs = []
    rules = _l(_d(spec.get("podFailurePolicy")).get("rules"))
    if len(rules) > 20:   # maxPodFailurePolicyRules
        errs.append(FieldError("spec.podFailurePolicy.rules", TOO_MANY, "must have at most 20 items", len(rules)))
    tspec = _d(_d(spec.get("template")).get("spec"))
    containers = {_d(c).get("name") for key in ("containers", "initContainers") for c in _l(tspec.get(key))}
    for i, rule in enumerate(rules):
        rule, rp = _d(rule), f"spec.podFailurePolicy.rules[{i}]"
        action = _s(rule.get("action"))
        if not action:
            errs.append(_required(f"{rp}.action", "valid values: [" + " ".join(_go_quote(a) for a in _PFP_ACTIONS) + "]"))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.append(_invalid(f"{rp}.action", action, "requires the backoffLimitPerIndex to be set"))
        elif action not in _PFP_ACTIONS:
            errs.append(_not_supported(f"{rp}.action", action, _PFP_ACTIONS))
        codes, conds = rule.get("onExitCodes"), _l(rule.get("onPodConditions"))
        if codes is not None:
            errs += _validate_on_exit_codes(_d(codes), f"{rp}.onExitCodes", containers)
        for j, pattern in enumerate(conds):
            status = _s(_d(pattern).get("status"))
            if status not in ("False", "True", "Unknown"):
                errs.append(_not_supported(f"{rp}.onPodConditions[{j}].status", status, ["False", "True", "Unknown"]))
        if codes is not None and conds:
            errs.append(_invalid(rp, None, "specifying both OnExitCodes and OnPodConditions is not supported"))
        elif codes is None and not conds:
            errs.append(_invalid(rp, None, "specifying one of OnExitCodes and OnPodConditions is required"))
    return errs


def _validate_on_exit_codes(codes: Mapping, path: str, containers: set) -> Errs:
    """validatePodFailurePolicyRuleOnExitCodes."""
    errs: Errs = []
    op = _s(codes.get("operator"))
    if op not in ("In", "NotIn"):
        errs.append(_not_supported(f"{path}.operator", op, ["In", "NotIn"]))
    name = codes.get("containerName")
    if name is not None and name not in containers:
        errs.append(_invalid(f"{path}.containerName", name,
                             "must be one of the container or initContainer names in the pod template"))
    values = _l(codes.get("values"))
    if not values:
        errs.append(_invalid(f"{path}.values", values, "at least one value is required"))
    elif len(values) > 255:   # maxPodFailurePolicyOnExitCodesValues
        errs.append(FieldError(f"{path}.values", TOO_MANY, "must have at most 255 items", len(values)))
    seen: set = set()
    ordered = True
    for j, value in enumerate(values):
        if op == "In" and value == 0:
            errs.append(_invalid(f"{path}.values[{j}]", 0, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(FieldError(f"{path}.values[{j}]", DUPLICATE, "", value))
        seen.add(value)
        if j > 0 and _is_int(value) and _is_int(values[j - 1]) and values[j - 1] > value:
            ordered = False
    if not ordered:
        errs.append(_invalid(f"{path}.values", values, "must be ordered"))
    return errs


# --- Service, Node, Namespace, PriorityClass, Lease, Event ------------------------------------

_SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]  # sets.List order


def validate_service(obj: Mapping) -> Errs:
    """ValidateService (clusterIP allocation/dual-stack fields are the registry's business)."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns1035_label)
    stype = spec.get("type") or ""
    ports = _l(spec.get("ports"))
    cluster_ips = _l(spec.get("clusterIPs")) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    headless = cluster_ips == ["None"]
    if not ports and not headless and stype != "ExternalName":
        errs.append(_required("spec.ports"))
    if stype in ("LoadBalancer", "NodePort") and headless:
        errs.append(_invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {stype} services"))
    if stype == "ExternalName":
        errs += _validate_external_name(spec)
    seen_names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _validate_service_port(_d(port), len(ports) > 1, seen_names, f"spec.ports[{i}]")
    if spec.get("selector") is not None:
        errs += selectors.validate_labels(spec["selector"], "spec.selector")
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(_required("spec.sessionAffinity"))
    elif affinity not in ("ClientIP", "None"):
        errs.append(_not_supported("spec.sessionAffinity", affinity, ["ClientIP", "None"]))
    elif affinity == "None" and spec.get("sessionAffinityConfig") is not None:
        errs.append(_forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"))
    if _l(spec.get("clusterIPs")) and spec.get("clusterIP") and spec["clusterIPs"][0] != spec["clusterIP"]:
        errs.append(_invalid("spec.clusterIPs", spec["clusterIPs"], "first value must match `clusterIP`"))
    if not stype:
        errs.append(_required("spec.type"))
    elif stype not in _SERVICE_TYPES:
        errs.append(_not_supported("spec.type", stype, _SERVICE_TYPES))
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
    for i, ip in enumerate(_l(spec.get("clusterIPs")) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])):
        if ip in ("None", ""):
            continue
        try:
            ipaddress.ip_address(_s(ip))
        except ValueError:
            errs.append(_invalid(f"spec.clusterIPs[{i}]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or "
                                                            "2001:db8::ffff)"))
    lo, hi = NODE_PORT_RANGE
    for i, port in enumerate(ports):
        node_port = _d(port).get("nodePort")
        if not _int(node_port):
            continue
        if stype in ("NodePort", "LoadBalancer") and not lo <= _int(node_port) <= hi:
            errs.append(_invalid(f"spec.ports[{i}].nodePort", node_port, f"provided port is not in the valid range. "
                                                                         f"The range of valid ports is {lo}-{hi}"))
    return errs


def _validate_external_name(spec: Mapping) -> Errs:
    errs: Errs = []
    if spec.get("clusterIPs"):
        errs.append(_forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
    if spec.get("ipFamilies"):
        errs.append(_forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
    if spec.get("ipFamilyPolicy") is not None:
        errs.append(_forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
    cname = (spec.get("externalName") or "").removesuffix(".")
    if cname:
        errs += _msgs("spec.externalName", cname, names.dns1123_subdomain_errors(cname))
    else:
        errs.append(_required("spec.externalName"))
    return errs


def _validate_service_port(sp: Mapping, require_name: bool, seen: set[str], path: str) -> Errs:
    errs: Errs = []
    name = _s(sp.get("name"))
    if require_name and not name:
        errs.append(_required(f"{path}.name"))
    elif name:
        errs += _msgs(f"{path}.name", name, names.dns1123_label_errors(name))
        if name in seen:
            errs.append(FieldError(f"{path}.name", DUPLICATE, "", name))
        seen.add(name)
    errs += _msgs(f"{path}.port", _int(sp.get("port")), names.port_num_errors(_int(sp.get("port"))))
    proto = sp.get("protocol") or ""
    if not proto:
        errs.append(_required(f"{path}.protocol"))
    elif proto not in _PORT_PROTOCOLS:
        errs.append(_not_supported(f"{path}.protocol", proto, _PORT_PROTOCOLS))
    errs += _port_num_or_name(sp.get("targetPort"), f"{path}.targetPort")
    if sp.get("appProtocol") is not None:
        errs += _msgs(f"{path}.appProtocol", sp["appProtocol"], names.qualified_name_errors(str(sp["appProtocol"])))
    return errs


def _validate_service_port_uniqueness(ports: list, stype: str) -> Errs:
    errs: Errs = []
    node_ports: set[tuple] = set()
    pairs: set[tuple] = set()
    for i, port in enumerate(ports):
        port, p = _d(port), f"spec.ports[{i}]"
        if stype == "ClusterIP" and _int(port.get("nodePort")):
            errs.append(_forbidden(f"{p}.nodePort", "may not be used when `type` is 'ClusterIP'"))
        if _int(port.get("nodePort")):
            key = (port.get("protocol"), port["nodePort"])
            if key in node_ports:
                errs.append(FieldError(f"{p}.nodePort", DUPLICATE, "", port["nodePort"]))
            node_ports.add(key)
        key = (port.get("protocol") or "", _int(port.get("port")))
        if key in pairs:
            errs.append(FieldError(p, DUPLICATE, "", {"protocol": key[0], "port": key[1]}))
        pairs.add(key)
    return errs


def _validate_service_lb_fields(spec: Mapping, stype: str) -> Errs:
    errs: Errs = []
    if spec.get("loadBalancerSourceRanges") and stype != "LoadBalancer":
        errs.append(_forbidden("spec.LoadBalancerSourceRanges", "may only be used when `type` is 'LoadBalancer'"))
    if spec.get("allocateLoadBalancerNodePorts") is not None and stype != "LoadBalancer":
        errs.append(_forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"))
    if stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        errs.append(_required("allocateLoadBalancerNodePorts"))  # sic: upstream omits "spec."
    if spec.get("loadBalancerClass") is not None:
        if stype == "LoadBalancer":
            errs += _msgs("spec.loadBalancerClass", spec["loadBalancerClass"], names.qualified_name_errors(str(spec["loadBalancerClass"])))
        else:
            errs.append(_forbidden("spec.loadBalancerClass", "may only be used when `type` is 'LoadBalancer'"))
    return errs


def _validate_traffic_policies(spec: Mapping, stype: str) -> Errs:
    errs: Errs = []
    external = stype in ("LoadBalancer", "NodePort") or (stype == "ClusterIP" and bool(spec.get("externalIPs")))
    etp = spec.get("externalTrafficPolicy") or ""
    if not external:
        if etp:
            errs.append(_invalid("spec.externalTrafficPolicy", etp, "may only be set for externally-accessible services"))
    elif not etp:
        errs.append(_required("spec.externalTrafficPolicy"))
    elif etp not in ("Cluster", "Local"):
        errs.append(_not_supported("spec.externalTrafficPolicy", etp, ["Cluster", "Local"]))
    itp = spec.get("internalTrafficPolicy")
    if itp is None:
        if stype in ("NodePort", "LoadBalancer", "ClusterIP"):
            errs.append(_required("spec.internalTrafficPolicy"))
    elif itp not in ("Cluster", "Local"):
        errs.append(_not_supported("spec.internalTrafficPolicy", itp, ["Cluster", "Local"]))
    return errs


def _validate_taints(taints: list, path: str) -> Errs:
    """validateNodeTaints."""
    errs: Errs = []
    seen: set[tuple[str, str]] = set()
    for i, t in enumerate(taints):
        t, p = _d(t), f"{path}[{i}]"
        key, effect = _s(t.get("key")), _s(t.get("effect"))
        errs += selectors.validate_label_name(key, f"{p}.key")
        msgs = names.label_value_errors(t.get("value") or "")
        if msgs:
            errs.append(_invalid(f"{p}.value", t.get("value") or "", ";".join(msgs)))
        errs += _validate_taint_effect(effect, False, f"{p}.effect")
        if (effect, key) in seen:
            errs.append(FieldError(p, DUPLICATE, "taints must be unique by key and effect pair", t))
            continue
        seen.add((effect, key))
    return errs


def validate_node_resources(status: Mapping) -> Errs:
    errs: Errs = []
    for field in ("capacity", "allocatable"):
        values = _d(status.get(field))
        for name in sorted(values):
            path = f"status.{field}.{name}"
            try:
                q = quantity.parse(values[name])
            except quantity.QuantityError as exc:
                errs.append(_invalid(path, values[name], str(exc)))
                continue
            errs += _quantity_value_errors(name, q, path)
    return errs


def validate_node(obj: Mapping) -> Errs:
    """ValidateNode (taints are reported under metadata.taints, as upstream does)."""
    errs = validate_object_meta(obj.get("metadata"), namespaced=False, name_fn=names.name_is_dns_subdomain)
    taints = _l(_d(obj.get("spec")).get("taints"))
    if taints:
        errs += _validate_taints(taints, "metadata.taints")
    return errs + validate_node_resources(_d(obj.get("status")))


def validate_namespace(obj: Mapping) -> Errs:
    """ValidateNamespace: DNS-1123 label name, qualified/standard finalizers."""
    errs = validate_object_meta(obj.get("metadata"), namespaced=False, name_fn=names.name_is_dns_label)
    for f in _l(_d(obj.get("spec")).get("finalizers")):
        errs += _msgs("spec.finalizers", f, names.qualified_name_errors(str(f)))
        errs += _kube_finalizer_errors(str(f), "spec.finalizers")
    return errs


def validate_priority_class(obj: Mapping) -> Errs:
    """ValidatePriorityClass (scheduling/validation)."""
    meta = _d(obj.get("metadata"))
    errs = validate_object_meta(meta, namespaced=False, name_fn=names.name_is_dns_subdomain)
    name, value = _s(meta.get("name")), _int(obj.get("value"))
    if name.startswith("system-"):
        problem = _system_priority_class_error(name, value, bool(obj.get("globalDefault")))
        if problem:
            errs.append(_forbidden("metadata.name", f"priority class names with 'system-' prefix are reserved for system use only. error: {problem}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(_forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if obj.get("preemptionPolicy") is not None:
        errs += _validate_enum(obj["preemptionPolicy"], "preemptionPolicy", _PREEMPTION_POLICIES)
    return errs


def _system_priority_class_error(name: str, value: int, global_default: bool) -> str:
    """IsKnownSystemPriorityClass (scheduling/v1 helpers)."""
    if name not in SYSTEM_PRIORITY_CLASSES:
        return f"{name} is not a known system priority class"
    if SYSTEM_PRIORITY_CLASSES[name] != value:
        return f"value of {name} PriorityClass must be {SYSTEM_PRIORITY_CLASSES[name]}"
    if global_default:
        return f"globalDefault of {name} PriorityClass must be false"
    return ""


def validate_lease(obj: Mapping) -> Errs:
    """ValidateLease (coordination/validation)."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and _int(duration) <= 0:
        errs.append(_invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and _int(transitions) < 0:
        errs.append(_invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if strategy is not None:
        if "/" not in str(strategy):
            if strategy != "OldestEmulationVersion":
                errs.append(_not_supported("spec.strategy.strategy", strategy, ["OldestEmulationVersion"]))
        else:
            errs += _msgs("spec.strategy.strategy", strategy, names.qualified_name_errors(str(strategy)))
    if spec.get("preferredHolder") and not strategy:
        errs.append(_forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs


def validate_event(obj: Mapping) -> Errs:
    """ValidateEventCreate (core/validation/events.go): legacyValidateEvent for every Event, and the strict
    checks of events.k8s.io/v1 for one written in that version.

    Upstream does not require ``involvedObject`` (nor even metadata.name) for
    v1 Events; it checks that the involved object's namespace agrees with the
    event's, and the reporting fields of new-style events (eventTime set).
    """
    if obj.get("apiVersion") in ("events.k8s.io/v1", "events.k8s.io/v1beta1"):
        from podlife.apiserver.conversion import from_events_v1

        # both share core.Event's internal field names (regarding → involvedObject, note → message, ...)
        core = from_events_v1(dict(obj))
        errs = _legacy_validate_event(core)
        return errs + (_strict_event_errors(core) if obj["apiVersion"] == "events.k8s.io/v1" else [])
    return _legacy_validate_event(obj)


def _strict_event_errors(event: Mapping) -> Errs:
    """The checks ValidateEventCreate adds for events.k8s.io/v1 and newer."""
    errs = validate_object_meta(event.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    series = event.get("series")
    if series is not None:  # validateV1EventSeries
        series = _d(series)
        if _int(series.get("count")) < 2:
            errs.append(_invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errs.append(_required("series.lastObservedTime"))
    if not event.get("eventTime"):
        errs.append(_required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(_invalid("type", "", f"has invalid value: {_s(event.get('type'))}"))
    for key in ("firstTimestamp", "lastTimestamp"):
        if event.get(key):
            errs.append(_invalid(key, "", "needs to be unset"))
    if _int(event.get("count")):
        errs.append(_invalid("count", "", "needs to be unset"))
    source = _d(event.get("source"))
    if source.get("component") or source.get("host"):
        errs.append(_invalid("source", "", "needs to be unset"))
    return errs


def _legacy_validate_event(obj: Mapping) -> Errs:
    """legacyValidateEvent, on an Event in core/v1 field names."""
    meta, involved = _d(obj.get("metadata")), _d(obj.get("involvedObject"))
    ns, ins = meta.get("namespace") or "", involved.get("namespace") or ""
    errs: Errs = []
    mismatch = _invalid("involvedObject.namespace", ins, "does not match event.namespace")
    if not obj.get("eventTime"):
        if (not ins and ns not in ("", "default")) or (ins and ns != ins):
            errs.append(mismatch)
    else:
        if not ins and ns not in ("default", "kube-system"):
            errs.append(mismatch)
        errs += _new_style_event_errors(obj)
    return errs + _msgs("namespace", ns, names.dns1123_subdomain_errors(ns))


def _new_style_event_errors(obj: Mapping) -> Errs:
    errs: Errs = []
    controller = obj.get("reportingComponent") or ""  # v1 JSON name of ReportingController
    if not controller:
        errs.append(_required("reportingController"))
    errs += _msgs("reportingController", controller, names.qualified_name_errors(controller))
    for key, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
        value = obj.get(key) or ""
        if not value:
            errs.append(_required(key))
        if len(value) > limit:
            errs.append(_invalid(key, "", f"can have at most {limit} characters"))
    if len(obj.get("message") or "") > 1024:
        errs.append(_invalid("message", "", "can have at most 1024 characters"))
    return errs


# --- dispatch ---------------------------------------------------------------------------------

def validate_cronjob(obj: Mapping) -> Errs:
    """ValidateCronJob: the schedule parses (robfig/cron ParseStandard), no TZ inside it, a loadable timeZone,
    the usual policy and the Job template's restart policy; names at most 52 characters (the Job name adds 11)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from podlife.controlplane.controllers.cronjob import parse_schedule

    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    name = _s(_d(obj.get("metadata")).get("name"))
    if len(name) > 52:
        errs.append(_invalid("metadata.name", name, "must be no more than 52 characters"))
    schedule = _s(spec.get("schedule"))
    if not schedule:
        errs.append(_required("spec.schedule"))
    elif "TZ" in schedule:
        errs.append(_invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field "
                                                         "instead"))
    else:
        try:
            parse_schedule(schedule)
        except ValueError as e:
            errs.append(_invalid("spec.schedule", schedule, str(e)))
    tz = spec.get("timeZone")
    if tz is not None:
        try:
            ZoneInfo(_s(tz))
        except (ZoneInfoNotFoundError, ValueError):
            errs.append(_invalid("spec.timeZone", tz, "unknown time zone " + _s(tz)))
    policy = spec.get("concurrencyPolicy")
    if policy not in ("Allow", "Forbid", "Replace"):
        errs.append(_not_supported("spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"]))
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.get(key) is not None:
            errs += _nonnegative(spec[key], f"spec.{key}")
    job_spec = _d(_d(spec.get("jobTemplate")).get("spec"))
    errs += _validate_pod_template(job_spec.get("template"), "spec.jobTemplate.spec.template")
    restart = _d(_d(job_spec.get("template")).get("spec")).get("restartPolicy") or ""
    if restart not in ("OnFailure", "Never"):
        errs.append(_not_supported("spec.jobTemplate.spec.template.spec.restartPolicy", restart,
                                   ["OnFailure", "Never"]))
    return errs


def validate_persistent_volume_claim(obj: Mapping) -> Errs:
    """ValidatePersistentVolumeClaimSpec: access modes and a storage request are required."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    modes = _l(spec.get("accessModes"))
    if not modes:
        errs.append(_required("spec.accessModes", "at least 1 access mode is required"))
    for i, m in enumerate(modes):
        if m not in ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"):
            errs.append(_not_supported(f"spec.accessModes[{i}]", m,
                                       ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]))
    storage = _d(_d(spec.get("resources")).get("requests")).get("storage")
    if storage is None:
        errs.append(_required("spec.resources[storage]"))
    else:
        try:
            if quantity.parse(storage).value <= 0:
                errs.append(_invalid("spec.resources[storage]", storage, IS_NOT_POSITIVE_ERROR_MSG))
        except quantity.QuantityError as e:
            errs.append(_invalid("spec.resources[storage]", storage, str(e)))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(_forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in ("Block", "Filesystem"):
        errs.append(_not_supported("spec.volumeMode", mode, ["Block", "Filesystem"]))
    return errs


def validate_pod_disruption_budget(obj: Mapping) -> Errs:
    """ValidatePodDisruptionBudgetSpec: not both minAvailable and maxUnavailable; non-negative values,
    percentages at most 100 %; a valid selector."""
    spec = _d(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        errs.append(_invalid("spec", dict(spec), "minAvailable and maxUnavailable cannot be both set"))
    for key in ("minAvailable", "maxUnavailable"):
        v = spec.get(key)
        if isinstance(v, str):
            if not (v.endswith("%") and v[:-1].isdigit()):
                errs.append(_invalid(f"spec.{key}", v, "a valid percent string must be a numeric string followed "
                                                       "by an ending '%'"))
            elif int(v[:-1]) > 100:
                errs.append(_invalid(f"spec.{key}", v, "must not be greater than 100%"))
        elif v is not None:
            errs += _nonnegative(v, f"spec.{key}")
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in ("IfHealthyBudget", "AlwaysAllow"):
        errs.append(_not_supported("spec.unhealthyPodEvictionPolicy", policy, ["AlwaysAllow", "IfHealthyBudget"]))
    if spec.get("selector") is not None:
        errs += selectors.validate_selector(_d(spec["selector"]), "spec.selector")
    return errs


_CREATE: dict[str, Callable[[Mapping], Errs]] = {
    "CronJob": validate_cronjob,
    "PodDisruptionBudget": validate_pod_disruption_budget,
    "PersistentVolumeClaim": validate_persistent_volume_claim,
    "Pod": validate_pod,
    "Deployment": validate_deployment,
    "ReplicaSet": validate_replicaset,
    "StatefulSet": validate_statefulset,
    "DaemonSet": validate_daemonset,
    "Job": validate_job,
    "Service": validate_service,
    "Node": validate_node,
    "Namespace": validate_namespace,
    "PriorityClass": validate_priority_class,
    "Lease": validate_lease,
    "Event": validate_event,
}


def validate(obj: Mapping, *, old: Mapping | None = None, namespaced: bool | None = None) -> Errs:
    """Validate a (defaulted) object on create, or on update when ``old`` is given. Kinds without a validator
    of their own (custom resources, most kinds podlife only stores) get ObjectMeta validation with a
    DNS-subdomain name; ``namespaced`` is their scope."""
    if old is not None:
        return validate_update(obj, old, namespaced=namespaced)
    if not isinstance(obj.get("kind"), str):
        return []
    fn = _create_fn(obj["kind"])
    if fn is not None:
        return fn(obj)
    return validate_object_meta(obj.get("metadata"), namespaced=_namespaced(obj, namespaced),
                                name_fn=names.name_is_dns_subdomain)


def _create_fn(kind: str) -> Callable[[Mapping], Errs] | None:
    from podlife.api.validators import validator

    return _CREATE.get(kind) or validator(kind)


def _namespaced(obj: Mapping, namespaced: bool | None) -> bool:
    from podlife.api.meta import CLUSTER_SCOPED

    return namespaced if namespaced is not None else _s(obj.get("kind")) not in CLUSTER_SCOPED


def _immutable(new: object, old: object, path: str) -> Errs:
    return [] if semantic_equal(new, old) else [_invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]


def validate_update(new: Mapping, old: Mapping, *, namespaced: bool | None = None) -> Errs:
    """Update validation per kind (the registry strategies' ValidateUpdate)."""
    kind = _s(new.get("kind"))
    if kind == "Pod":
        return validate_pod_update(new, old)
    if kind == "Event":
        return validate_event(new)
    if kind not in _CREATE:
        from podlife.api.validators import update_validator

        errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
        upd = update_validator(kind)
        if upd is not None:
            errs += upd(new, old)
        fn = _create_fn(kind)
        return errs + [e for e in (fn(new) if fn is not None else []) if not e.path.startswith("metadata.")]
    errs = validate_object_meta_update(new.get("metadata"), old.get("metadata"))
    new_spec, old_spec = _d(new.get("spec")), _d(old.get("spec"))
    if kind == "Namespace":
        return errs
    if kind == "Node":
        taints = _l(new_spec.get("taints"))
        return errs + (_validate_taints(taints, "metadata.taints") if taints else []) + validate_node_resources(_d(new.get("status")))
    if kind == "PriorityClass":  # ValidatePriorityClassUpdate: only value/preemptionPolicy immutability
        if _int(new.get("value")) != _int(old.get("value")):
            errs.append(_forbidden("value", "may not be changed in an update."))
        return errs + _immutable(new.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy")
    errs += [e for e in _CREATE[kind](new) if not e.path.startswith("metadata.")]  # metadata checked above
    if kind in ("Deployment", "ReplicaSet", "DaemonSet"):
        errs += _immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector")
    elif kind == "StatefulSet":
        errs += _validate_statefulset_update(new_spec, old_spec)
    elif kind == "Job":
        for key in ("completions", "selector", "template"):
            errs += _immutable(new_spec.get(key), old_spec.get(key), f"spec.{key}")
    return errs


_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _without_mutable_sts_fields(spec: Mapping) -> dict:
    return {k: v for k, v in spec.items() if k not in _STS_MUTABLE}


def _validate_statefulset_update(new: Mapping, old: Mapping) -> Errs:
    """ValidateStatefulSetUpdate: only the listed spec fields may change."""
    if semantic_equal(_without_mutable_sts_fields(new), _without_mutable_sts_fields(old)):
        return []
    return [_forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                               "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]

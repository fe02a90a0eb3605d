"""Containers of a pod spec (pkg/apis/core/validation/validation.go: validateResourceRequirements,
validateContainerPorts, validateEnv, validateVolumeMounts, validateProbe, validateHandler, validateLifecycle,
container restart rules, validateInitContainers)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction

from podlife.api import names, quantity
from podlife.api.errors import FieldError
from podlife.api.validation import options
from podlife.api.validation.common import (
    DUPLICATE,
    IS_NEGATIVE_ERROR_MSG,
    NOT_FOUND,
    TOO_MANY,
    Errs,
    as_dict,
    as_int,
    as_list,
    as_str,
    forbidden,
    invalid,
    invalid_each,
    nonnegative,
    not_supported,
    required,
)

# --- resources ----------------------------------------------------------------------------

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "quotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers",
})
INTEGER_RESOURCES = frozenset({
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
    errs = invalid_each(path, name, names.qualified_name_errors(name))
    if not errs and "/" not in name and not (name in _STANDARD_RESOURCES or _is_hugepages(name)
                                             or name.startswith("requests.hugepages-")):
        errs.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if "/" not in name:
        if name not in _STANDARD_CONTAINER_RESOURCES and not _is_hugepages(name):
            errs.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _is_native(name) and not _is_extended(name):
        errs.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return errs


def _parse_list(values: Mapping, path: str, errs: Errs) -> dict[str, quantity.Quantity]:
    """Parse a ResourceList, reporting undecodable quantities (a decode error upstream)."""
    out: dict[str, quantity.Quantity] = {}
    for name in sorted(values):
        try:
            out[name] = quantity.round_up_milli(quantity.parse(values[name]))
        except quantity.QuantityError as exc:
            errs.append(invalid(f"{path}[{name}]", values[name], str(exc)))
    return out


def quantity_value_errors(name: str, q: quantity.Quantity, path: str) -> Errs:
    """ValidateResourceQuantityValue (+ hugepage divisibility)."""
    errs: Errs = []
    if q.value < 0:
        errs.append(invalid(path, str(q), IS_NEGATIVE_ERROR_MSG))
    if (name in INTEGER_RESOURCES or _is_extended(name)) and q.milli_value() % 1000 != 0:
        errs.append(invalid(path, str(q), "must be an integer"))
    if _is_hugepages(name):
        try:
            page = quantity.parse_quantity(name[len("hugepages-"):])
        except quantity.QuantityError:
            page = Fraction(0)
        if page <= 0 or page.denominator != 1 or q.int_value() % page != 0:
            errs.append(invalid(path, str(q), f"{q} is not positive integer multiple of {name}"))
    return errs


def validate_resource_requirements(res: Mapping | None, path: str) -> Errs:
    """validateResourceRequirements for a container (names, quantities, requests <= limits)."""
    res = as_dict(res)
    errs: Errs = []
    lim_path, req_path = f"{path}.limits", f"{path}.requests"
    limits = _parse_list(as_dict(res.get("limits")), lim_path, errs)
    requests = _parse_list(as_dict(res.get("requests")), req_path, errs)
    for name, q in limits.items():
        errs += _container_resource_name_errors(name, f"{lim_path}[{name}]")
        errs += quantity_value_errors(name, q, f"{lim_path}[{name}]")
    for name, q in requests.items():
        errs += _container_resource_name_errors(name, f"{req_path}[{name}]")
        errs += quantity_value_errors(name, q, f"{req_path}[{name}]")
        lim = limits.get(name)
        if lim is not None:
            if q.value != lim.value and not _overcommit_allowed(name):
                errs.append(invalid(req_path, str(q), f"must be equal to {name} limit of {lim}"))
            elif q.value > lim.value:
                errs.append(invalid(req_path, str(q), f"must be less than or equal to {name} limit of {lim}"))
        elif not _overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
    used = set(limits) | set(requests)
    if any(_is_hugepages(n) for n in used) and not used & {"cpu", "memory"}:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


# --- containers ---------------------------------------------------------------------------

PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"]  # sets.List order


def port_num_or_name(port: object, path: str) -> Errs:
    """ValidatePortNumOrName for an IntOrString (absent is the int 0)."""
    if isinstance(port, str):
        return invalid_each(path, port, names.port_name_errors(port))
    value = as_int(port)
    return invalid_each(path, value, names.port_num_errors(value))


def _validate_container_ports(ports: list, path: str) -> Errs:
    errs: Errs = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        port, p = as_dict(port), f"{path}[{i}]"
        pname = port.get("name") or ""
        if pname:
            msgs = names.port_name_errors(pname)
            if msgs:
                errs += invalid_each(f"{p}.name", pname, msgs)
            elif pname in seen:
                errs.append(FieldError(f"{p}.name", DUPLICATE, "", pname))
            else:
                seen.add(pname)
        if not as_int(port.get("containerPort")):
            errs.append(required(f"{p}.containerPort"))
        else:
            errs += invalid_each(f"{p}.containerPort", port["containerPort"],
                                 names.port_num_errors(port["containerPort"]))
        if as_int(port.get("hostPort")):
            errs += invalid_each(f"{p}.hostPort", port["hostPort"], names.port_num_errors(port["hostPort"]))
        proto = port.get("protocol") or ""
        if not proto:
            errs.append(required(f"{p}.protocol"))
        elif proto not in PORT_PROTOCOLS:
            errs.append(not_supported(f"{p}.protocol", proto, PORT_PROTOCOLS))
    return errs


def _validate_env(env: list, path: str) -> Errs:
    errs: Errs = []
    for i, ev in enumerate(env):
        ev, p = as_dict(ev), f"{path}[{i}]"
        name = ev.get("name") or ""
        if not name:
            errs.append(required(f"{p}.name"))
        else:
            errs += invalid_each(f"{p}.name", name, _env_name_errors(name))
        value_from = ev.get("valueFrom")
        if value_from is None:
            continue
        errs += _validate_env_source(as_dict(value_from), f"{p}.valueFrom")
        sources = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
                   if as_dict(value_from).get(k) is not None]
        vpath = f"{p}.valueFrom"
        if not sources:
            errs.append(invalid(vpath, "",
                                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                                "`secretKeyRef`"))
        elif ev.get("value"):
            errs.append(invalid(vpath, "", "may not be specified when `value` is not empty"))
        elif len(sources) > 1:
            errs.append(invalid(vpath, "", "may not have more than one field specified at a time"))
    return errs


_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_ENV_NAME_MSG = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', "
                 "and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex "
                 "used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")


def _env_name_errors(name: object) -> list[str]:
    """IsEnvVarName, or from 1.32 IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, beta and on)."""
    if options.rules().relaxed_env_var_names:
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
        fp = as_str(as_dict(field).get("fieldPath"))
        base = fp.split("[", 1)[0]
        if not fp:
            errs.append(required(f"{path}.fieldRef.fieldPath"))
        elif "[" in fp and base not in ("metadata.annotations", "metadata.labels"):
            errs.append(invalid(f"{path}.fieldRef.fieldPath", fp, "error converting fieldPath: field label not "
                                                                   "supported"))
        elif "[" not in fp and (fp not in _ENV_FIELD_PATHS or fp in ("metadata.annotations", "metadata.labels")):
            errs.append(not_supported(f"{path}.fieldRef.fieldPath", fp,
                                       [f for f in _ENV_FIELD_PATHS if f not in ("metadata.annotations",
                                                                                 "metadata.labels")]))
    resource = source.get("resourceFieldRef")
    if resource is not None:
        name = as_str(as_dict(resource).get("resource"))
        if name not in _ENV_RESOURCES and not name.startswith(("limits.hugepages-", "requests.hugepages-")):
            errs.append(not_supported(f"{path}.resourceFieldRef.resource", name, _ENV_RESOURCES))
    for key in ("configMapKeyRef", "secretKeyRef"):
        ref = source.get(key)
        if ref is None:
            continue
        ref = as_dict(ref)
        if not as_str(ref.get("name")):
            errs.append(required(f"{path}.{key}.name"))
        else:
            errs += invalid_each(f"{path}.{key}.name", ref["name"], names.dns1123_subdomain_errors(as_str(ref["name"])))
        k = as_str(ref.get("key"))
        if not k:
            errs.append(required(f"{path}.{key}.key"))
        else:
            errs += invalid_each(f"{path}.{key}.key", k, names.config_key_errors(k))
    return errs


def _validate_env_from(env_from: list, path: str) -> Errs:
    errs: Errs = []
    for i, ev in enumerate(env_from):
        ev = as_dict(ev)
        if ev.get("prefix"):
            errs += invalid_each(f"{path}[{i}].prefix", ev["prefix"], _env_name_errors(ev["prefix"]))
        count = sum(ev.get(k) is not None for k in ("configMapRef", "secretRef"))
        if count == 0:
            errs.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            errs.append(invalid(path, "", "may not have more than one field specified at a time"))
    return errs


def _validate_volume_mounts(mounts: list, volumes: set[str], path: str) -> Errs:
    errs: Errs = []
    seen: set[str] = set()
    for i, m in enumerate(mounts):
        m, p = as_dict(m), f"{path}[{i}]"
        name, mount_path = as_str(m.get("name")), as_str(m.get("mountPath"))
        if not name:
            errs.append(required(f"{p}.name"))
        if name not in volumes:
            errs.append(FieldError(f"{p}.name", NOT_FOUND, "", name))
        if not mount_path:
            errs.append(required(f"{p}.mountPath"))
        if mount_path in seen:
            errs.append(invalid(f"{p}.mountPath", mount_path, "must be unique"))
        seen.add(mount_path)
    return errs


_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_TERMINATION_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]


def _validate_container_common(c: Mapping, volumes: set[str], path: str) -> Errs:
    """validateContainerCommon: name, image, termination message policy, ports, env, mounts, pull policy, resources."""
    errs: Errs = []
    name = c.get("name") or ""
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs += invalid_each(f"{path}.name", name, names.dns1123_label_errors(name))
    if not c.get("image"):
        errs.append(required(f"{path}.image"))
    tmp = c.get("terminationMessagePolicy") or ""
    if not tmp:
        errs.append(required(f"{path}.terminationMessagePolicy"))
    elif tmp not in _TERMINATION_MESSAGE_POLICIES:
        errs.append(not_supported(f"{path}.terminationMessagePolicy", tmp, _TERMINATION_MESSAGE_POLICIES))
    errs += _validate_container_ports(as_list(c.get("ports")), f"{path}.ports")
    errs += _validate_env(as_list(c.get("env")), f"{path}.env")
    errs += _validate_env_from(as_list(c.get("envFrom")), f"{path}.envFrom")
    errs += _validate_volume_mounts(as_list(c.get("volumeMounts")), volumes, f"{path}.volumeMounts")
    policy = c.get("imagePullPolicy") or ""
    if not policy:
        errs.append(required(f"{path}.imagePullPolicy"))
    elif policy not in _PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", policy, _PULL_POLICIES))
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
            errs.append(forbidden(f"{path}.{kind}", "may not specify more than 1 handler type"))
            continue
        count += 1
        errs += _validate_action(kind, as_dict(handler[kind]), grace, f"{path}.{kind}")
    if count == 0:
        errs.append(required(path, "must specify a handler type"))
    return errs


def _validate_action(kind: str, action: Mapping, grace: int | None, path: str) -> Errs:
    if kind == "exec":
        return [] if action.get("command") else [required(f"{path}.command")]
    if kind == "httpGet":
        errs = [] if action.get("path") else [required(f"{path}.path")]
        errs += port_num_or_name(action.get("port"), f"{path}.port")
        scheme = action.get("scheme") or ""
        if scheme not in ("HTTP", "HTTPS"):
            errs.append(not_supported(f"{path}.scheme", scheme, ["HTTP", "HTTPS"]))
        for header in as_list(action.get("httpHeaders")):
            hname = as_dict(header).get("name") or ""
            errs += invalid_each(f"{path}.httpHeaders", hname, names.http_header_name_errors(hname))
        return errs
    if kind in ("tcpSocket", "grpc"):
        return port_num_or_name(as_int(action.get("port")) if kind == "grpc" else action.get("port"), f"{path}.port")
    seconds = as_int(action.get("seconds"))  # validateSleepAction
    if options.rules().sleep_action_allow_zero:
        if grace is not None and (seconds < 0 or seconds > grace):
            return [invalid(path, seconds, f"must be non-negative and less than terminationGracePeriodSeconds "
                                            f"({grace})")]
    elif grace is not None and (seconds <= 0 or seconds > grace):
        return [invalid(path, seconds, f"must be greater than 0 and less than terminationGracePeriodSeconds ({grace})")]
    return []


def _validate_probe(probe: object, grace: int | None, path: str, kind: str) -> Errs:
    """validateLivenessProbe / validateReadinessProbe / validateStartupProbe."""
    if probe is None:
        return []
    probe = as_dict(probe)
    errs = _validate_handler(probe, grace, path, probe=True)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        errs += nonnegative(as_int(probe.get(key)), f"{path}.{key}")
    tgps = probe.get("terminationGracePeriodSeconds")
    if tgps is not None and as_int(tgps) <= 0:
        errs.append(invalid(f"{path}.terminationGracePeriodSeconds", tgps, "must be greater than 0"))
    if kind in ("livenessProbe", "startupProbe") and as_int(probe.get("successThreshold")) != 1:
        errs.append(invalid(f"{path}.successThreshold", as_int(probe.get("successThreshold")), "must be 1"))
    if kind == "readinessProbe" and tgps is not None:
        errs.append(invalid(f"{path}.terminationGracePeriodSeconds", tgps, "must not be set for readinessProbes"))
    return errs


def _validate_lifecycle(lifecycle: Mapping, grace: int | None, path: str) -> Errs:
    """validateLifecycle: postStart/preStop hooks. Other keys (e.g. the legacy ``type: Sidecar``) are ignored."""
    errs: Errs = []
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            errs += _validate_handler(as_dict(lifecycle[hook]), grace, f"{path}.{hook}", probe=False)
    return errs


# KEP-4960 (ContainerStopSignals): the signals a Linux pod may name, and the two a Windows pod may
_STOP_SIGNALS_LINUX = frozenset(
    ["SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL", "SIGINT", "SIGIO",
     "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT", "SIGSEGV", "SIGSTKFLT", "SIGSTOP",
     "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM",
     "SIGWINCH", "SIGXCPU", "SIGXFSZ", "SIGRTMIN", "SIGRTMAX"]
    + [f"SIGRTMIN+{i}" for i in range(1, 16)] + [f"SIGRTMAX-{i}" for i in range(1, 15)])
_STOP_SIGNALS_WINDOWS = ("SIGKILL", "SIGTERM")


def validate_stop_signals(spec: Mapping, path: str) -> Errs:
    """validateContainerStopSignal for every container: lifecycle.stopSignal needs spec.os.name, and the signal
    must be one that OS supports."""
    if not options.rules().container_stop_signals:
        return []   # the API server drops the field with the gate off (podutil.drop_disabled_fields)
    os_name = as_str(as_dict(spec.get("os")).get("name"))
    supported = list(_STOP_SIGNALS_WINDOWS) if os_name == "windows" else sorted(_STOP_SIGNALS_LINUX)
    errs: Errs = []
    for field in ("initContainers", "containers"):
        for i, c in enumerate(as_list(spec.get(field))):
            signal = as_dict(as_dict(c).get("lifecycle")).get("stopSignal")
            if signal is None:
                continue
            p = f"{path}.{field}[{i}].lifecycle.stopSignal"
            if not os_name:
                errs.append(forbidden(p, "may not be set for containers with empty `spec.os.name`"))
            elif as_str(signal) not in supported:
                errs.append(not_supported(p, as_str(signal), supported))
    return errs


def _probes_and_hooks(c: Mapping, grace: int | None, path: str) -> Errs:
    errs: Errs = []
    if c.get("lifecycle") is not None:
        errs += _validate_lifecycle(as_dict(c["lifecycle"]), grace, f"{path}.lifecycle")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        errs += _validate_probe(c.get(kind), grace, f"{path}.{kind}", kind)
    return errs


def _host_port_conflicts(containers: list, path: str, seen: set[str] | None = None) -> Errs:
    """AccumulateUniqueHostPorts."""
    seen = set() if seen is None else seen
    errs: Errs = []
    for ci, c in enumerate(containers):
        for pi, port in enumerate(as_list(as_dict(c).get("ports"))):
            port = as_dict(port)
            if not as_int(port.get("hostPort")):
                continue
            key = f"{port.get('protocol', '')}/{port.get('hostIP', '')}/{port['hostPort']}"
            if key in seen:
                errs.append(FieldError(f"{path}[{ci}].ports[{pi}].hostPort", DUPLICATE, "", key))
            seen.add(key)
    return errs


def validate_containers(containers: list, volumes: set[str], grace: int | None, path: str) -> Errs:
    """validateContainers (regular containers)."""
    if not containers:
        return [required(path)]
    errs: Errs = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        c, p = as_dict(c), f"{path}[{i}]"
        errs += _validate_container_common(c, volumes, p)
        name = as_str(c.get("name"))
        if name in seen:
            errs.append(FieldError(f"{p}.name", DUPLICATE, "", name))
        seen.add(name)
        errs += _probes_and_hooks(c, grace, p)
        if options.rules().container_restart_rules:
            # KEP-5307 (ContainerRestartRules): a regular container may set its own restart policy
            errs += _validate_restart_rules(c, p, init=False)
        elif c.get("restartPolicy") is not None:
            errs.append(forbidden(f"{p}.restartPolicy", "may not be set for non-init containers"))
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
        errs.append(not_supported(f"{path}.restartPolicy", policy, _CONTAINER_RESTART_POLICIES))
    rules = as_list(c.get("restartPolicyRules"))
    if not rules:
        return errs
    if c.get("restartPolicy") is None:
        errs.append(required(f"{path}.restartPolicy", "must be set when restartPolicyRules are specified"))
    if len(rules) > _MAX_RESTART_RULES:
        errs.append(FieldError(f"{path}.restartPolicyRules", TOO_MANY,
                               f"must have at most {_MAX_RESTART_RULES} items", len(rules)))
    actions = ["Restart"] + (["RestartAllContainers"] if options.rules().restart_all_containers else [])
    for i, rule in enumerate(rules):
        rule, rp = as_dict(rule), f"{path}.restartPolicyRules[{i}]"
        action = as_str(rule.get("action"))
        if not action:
            errs.append(required(f"{rp}.action"))
        elif action not in actions:
            errs.append(not_supported(f"{rp}.action", action, actions))
        codes = rule.get("exitCodes")
        if codes is None:
            errs.append(required(f"{rp}.exitCodes", "must be specified"))
            continue
        codes = as_dict(codes)
        operator = as_str(codes.get("operator"))
        if operator not in _RESTART_RULE_OPERATORS:
            errs.append(not_supported(f"{rp}.exitCodes.operator", operator, list(_RESTART_RULE_OPERATORS)))
        values = as_list(codes.get("values"))
        if len(values) > _MAX_RESTART_RULE_VALUES:
            errs.append(FieldError(f"{rp}.exitCodes.values", TOO_MANY,
                                   f"must have at most {_MAX_RESTART_RULE_VALUES} items", len(values)))
        if len(set(map(str, values))) != len(values):
            errs.append(invalid(f"{rp}.exitCodes.values", values, "must contain unique values"))
    return errs


_INIT_ONLY_FORBIDDEN = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")


def validate_init_containers(inits: list, regular: list, volumes: set[str], grace: int | None, path: str) -> Errs:
    """validateInitContainers: names unique across init+regular; only restartPolicy Always (sidecars)."""
    errs: Errs = []
    seen = {as_str(as_dict(c).get("name")) for c in regular}
    for i, c in enumerate(inits):
        c, p = as_dict(c), f"{path}[{i}]"
        errs += _validate_container_common(c, volumes, p)
        policy = c.get("restartPolicy")
        if options.rules().container_restart_rules:
            errs += _validate_restart_rules(c, p, init=True)
        elif policy is not None and policy != "Always":
            errs.append(not_supported(f"{p}.restartPolicy", policy, ["Always"]))
        name = as_str(c.get("name"))
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
                    errs.append(forbidden(f"{p}.{key}",
                                          "may not be set for init containers without restartPolicy=Always"))
    return errs

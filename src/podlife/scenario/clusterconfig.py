"""``spec.cluster``: the nodes (and those a join action adds), the components' configuration and the feature
gates, checked as each component's own config validation checks them."""

from __future__ import annotations

import copy
import ipaddress
import re
from typing import Any

from podlife import features
from podlife.api import validation
from podlife.config import (
    ApiServerConfiguration,
    ControllerManagerConfiguration,
    KubeletConfiguration,
    SchedulerConfiguration,
    field_kinds,
)
from podlife.kubelet.sysctls import unknown_namespace
from podlife.scenario.durations import format_duration
from podlife.scenario.errors import ScenarioError
from podlife.scenario.fieldcheck import DURATION_HINT, SUBDOMAIN_HINT, Check, is_subdomain
from podlife.scenario.fieldpath import describe, join_path
from podlife.cluster.spec import RUNTIMES, ClusterSpec, NodeSpec, default_pod_cidr
from podlife.versions import Profile, profile

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
EVICTION_SIGNALS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                    "imagefs.inodesFree", "pid.available")
ZONE_LABEL = "topology.kubernetes.io/zone"
# pkg/apis/policy/validation SysctlContainSlashPatternFmt
_SYSCTL_PATTERN = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]")
_PERCENT = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)%\Z")
MAX_NODES = 5000                     # Kubernetes' supported cluster size

NODE_FIELDS = ("name", "namePrefix", "count", "zone", "labels", "taints", "capacity", "runtime", "podCIDR")
_COMPONENTS = (("kubelet", KubeletConfiguration), ("controllerManager", ControllerManagerConfiguration),
               ("apiServer", ApiServerConfiguration), ("scheduler", SchedulerConfiguration))


def cluster_spec(ck: Check, value: Any, version: str) -> ClusterSpec:
    path = "spec.cluster"
    cluster = ck.mapping(value, path, ("nodes",) + tuple(name for name, _ in _COMPONENTS) + ("featureGates",))
    if cluster.get("nodes") is None:
        nodes = [NodeSpec(name="node-1")]
        explicit: list[tuple[str, ipaddress.IPv4Network]] = []
    else:
        nodes, explicit = [], []
        for i, entry in enumerate(ck.sequence(cluster["nodes"], f"{path}.nodes")):
            nodes.extend(node_entry(ck, entry, f"{path}.nodes[{i}]", nodes, explicit))
            if len(nodes) > MAX_NODES:
                raise ck.error(f"{path}.nodes[{i}]", f"{len(nodes):,} nodes; podlife runs clusters of at most "
                                                     f"{MAX_NODES:,} nodes (Kubernetes' supported maximum)")
        if not nodes:
            ck.warn(f"{path}.nodes", "no nodes: every pod will stay Pending")
    _default_pod_cidrs(ck, nodes, explicit, f"{path}.nodes")
    minor = int(version.split(".")[1])
    # set on every component (--feature-gates of the API server, controller-manager and scheduler, the
    # kubelets' featureGates), as an operator sets a cluster's gates
    gates = _gates(ck, cluster["featureGates"], f"{path}.featureGates", minor,
                   "the API server, controllers, scheduler and kubelets") \
        if cluster.get("featureGates") is not None else {}
    components = {name: _component(ck, cluster.get(name), f"{path}.{name}", cls, version, gates)
                  for name, cls in _COMPONENTS}
    _check_scheduler(ck, components["scheduler"], f"{path}.scheduler")
    return ClusterSpec(nodes=nodes, featureGates=gates, **components)


def _gates(ck: Check, value: Any, path: str, minor: int, whose: str) -> dict[str, bool]:
    """A featureGates map: each gate known to the release and not locked to the other value (featuregate
    SetFromMap), among those podlife models. A gate set against the release's default is said, as the run then
    departs from what that release does out of the box."""
    gates = {}
    for gate, v in ck.mapping(value, path).items():
        on = ck.boolean(v, join_path(path, gate))
        problem = features.check(gate, on, minor)
        if problem is not None:
            raise ck.error(join_path(path, gate), problem)
        gates[gate] = on
        if on != features.defaults(minor)[gate]:
            ck.warn(join_path(path, gate), f"{features.departure(gate, on, minor)}; {whose} follow it")
    return gates


def _check_scheduler(ck: Check, config: SchedulerConfiguration, path: str) -> None:
    """pkg/scheduler/apis/config/validation: backoffs ordered, percentageOfNodesToScore within 0-100."""
    if config.podMaxBackoffSeconds < config.podInitialBackoffSeconds:
        raise ck.error(f"{path}.podMaxBackoffSeconds", f"{config.podMaxBackoffSeconds} must be greater than or "
                                                       f"equal to podInitialBackoffSeconds "
                                                       f"({config.podInitialBackoffSeconds})")
    if not 0 <= config.percentageOfNodesToScore <= 100:
        raise ck.error(f"{path}.percentageOfNodesToScore", f"{config.percentageOfNodesToScore} is not in the "
                                                           "range 0-100")


def node_entry(ck: Check, value: Any, path: str, previous: list[NodeSpec],
                explicit: list[tuple[str, ipaddress.IPv4Network]]) -> list[NodeSpec]:
    entry = ck.mapping(value, path, NODE_FIELDS, optional=False)
    names = expand_node_names(ck, entry, path)
    taken = {n.name for n in previous}
    for n in names:
        if n in taken:
            raise ck.error(f"{path}.{'name' if 'name' in entry else 'namePrefix'}",
                           f'duplicate node name "{n}"; expected unique node names')
        taken.add(n)
    labels = ck.str_map(entry.get("labels"), f"{path}.labels", ck.label_key, ck.label_value)
    zone = None
    if entry.get("zone") is not None:
        zone = ck.label_value(entry["zone"], f"{path}.zone")
        if labels.get(ZONE_LABEL, zone) != zone:
            raise ck.error(f"{path}.zone", f'"{zone}" contradicts labels[{ZONE_LABEL}] "{labels[ZONE_LABEL]}"; '
                                           "expected one of them, or the same value")
        labels[ZONE_LABEL] = zone
    capacity = NodeSpec(name="").capacity
    capacity.update(ck.str_map(entry.get("capacity"), f"{path}.capacity", check_key=ck.resource_name,
                               check_value=ck.quantity))
    for err in validation.validate_node_resources({"capacity": capacity}):   # what the Node's registration checks
        name = err.path.rpartition("capacity.")[2]
        raise ck.error(join_path(f"{path}.capacity", name), f"{describe(capacity[name])}: {err.detail}")
    runtime = ck.one_of(entry["runtime"], f"{path}.runtime", RUNTIMES, "runtime") \
        if entry.get("runtime") is not None else "containerd"
    cidr = _pod_cidr(ck, entry, path, names, explicit)
    taints = _taints(ck, entry.get("taints"), f"{path}.taints")
    return [NodeSpec(name=n, zone=zone, labels=dict(labels), taints=copy.deepcopy(taints),
                     capacity=dict(capacity), runtime=runtime, podCIDR=cidr) for n in names]


def expand_node_names(ck: Check, entry: dict[str, Any], path: str) -> list[str]:
    if ("name" in entry) == ("namePrefix" in entry):
        raise ck.error(path, "expected exactly one of name or namePrefix (with count)")
    if "name" in entry:
        if "count" in entry:
            raise ck.error(f"{path}.count", "count needs namePrefix instead of name")
        return [ck.dns_subdomain(entry["name"], f"{path}.name")]
    prefix = ck.string(entry["namePrefix"], f"{path}.namePrefix")
    count = ck.integer(ck.required(entry, "count", path, "an integer >= 1 with namePrefix"), f"{path}.count", 1)
    if count > MAX_NODES:
        raise ck.error(f"{path}.count", f"{count:,} nodes; podlife runs clusters of at most {MAX_NODES:,} nodes "
                                        "(Kubernetes' supported maximum)")
    names = [f"{prefix}{i}" for i in range(count)]
    for n in (names[0], names[-1]):
        if not is_subdomain(n):
            raise ck.error(f"{path}.namePrefix", f'"{prefix}" makes the node name "{n}", which is not a valid '
                                                 f"DNS-1123 subdomain; expected {SUBDOMAIN_HINT}")
    return names


def _pod_cidr(ck: Check, entry: dict[str, Any], path: str, names: list[str],
              explicit: list[tuple[str, ipaddress.IPv4Network]]) -> str | None:
    if entry.get("podCIDR") is None:
        return None
    cpath = f"{path}.podCIDR"
    text = ck.string(entry["podCIDR"], cpath, "an IPv4 CIDR such as 10.244.1.0/24")
    try:
        if "/" not in text:
            raise ValueError
        net = ipaddress.IPv4Network(text)
    except ValueError:
        raise ck.error(cpath, f'"{text}" is not a valid IPv4 CIDR; expected a network address with a prefix '
                              "length, e.g. 10.244.1.0/24") from None
    if len(names) > 1:
        raise ck.error(cpath, f"one podCIDR cannot serve the {len(names)} nodes of namePrefix/count; leave it "
                              "out to give each node its own /24")
    for other, other_net in explicit:
        if net.overlaps(other_net):
            raise ck.error(cpath, f'{net} overlaps the podCIDR {other_net} of node "{other}"; expected '
                                  "disjoint pod CIDRs")
    explicit.append((names[0], net))
    return str(net)


def _default_pod_cidrs(ck: Check, nodes: list[NodeSpec], explicit: list[tuple[str, ipaddress.IPv4Network]],
                       path: str) -> None:
    """Each node without a podCIDR gets its default (model.default_pod_cidr), clear of the explicit ones."""
    taken = [net for _, net in explicit]
    offset = 0
    for i, node in enumerate(nodes):
        if node.podCIDR is not None:
            continue
        found = default_pod_cidr(i, offset, taken)
        if found is None:
            raise ck.error(path, "no free /24 left in 10.0.0.0/8 for a default podCIDR; expected a podCIDR "
                                 "on every node")
        net, offset = found
        node.podCIDR = str(net)


def _taints(ck: Check, value: Any, path: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(ck.sequence(value, path)):
        tpath = f"{path}[{i}]"
        taint = ck.mapping(item, tpath, ("key", "value", "effect"), optional=False)
        key = ck.string(ck.required(taint, "key", tpath, "a taint key, e.g. dedicated"), f"{tpath}.key")
        ck.label_key(key, f"{tpath}.key")
        effect = ck.one_of(ck.required(taint, "effect", tpath, f"one of {', '.join(TAINT_EFFECTS)}"),
                           f"{tpath}.effect", TAINT_EFFECTS, "taint effect")
        if (key, effect) in seen:
            raise ck.error(tpath, f'duplicate taint "{key}" with effect {effect}; expected one taint per key '
                                  "and effect")
        seen.add((key, effect))
        if taint.get("value") is not None:
            out.append({"key": key, "value": ck.label_value(taint["value"], f"{tpath}.value"), "effect": effect})
        else:
            out.append({"key": key, "effect": effect})
    return out


def _component(ck: Check, value: Any, path: str, cls: type, version: str, gates: dict[str, bool]) -> Any:
    kinds = field_kinds(cls)
    given = ck.mapping(value, path, list(kinds))
    config = cls()
    for key, v in given.items():
        fpath = f"{path}.{key}"
        if v is None:
            continue  # null = unset: the default (possibly per-version) stays
        # A given evictionHard (or any map) replaces the default map as a whole, as upstream: the kubelet only
        # applies DefaultEvictionHard when the field is unset (pkg/kubelet/apis/config/v1beta1/defaults.go), so
        # signals left out are not enforced. (The newer upstream mergeDefaultEvictionSettings is not modelled.)
        if kinds[key] == "gates":
            config.featureGates = _gates(ck, v, fpath, int(version.split(".")[1]), "the kubelets (only)")
            continue
        setattr(config, key, _config_value(ck, v, fpath, kinds[key], key))
    if cls is KubeletConfiguration:
        _check_soft_eviction(ck, config, path)
        # the kubelet's own featureGates win over the cluster's
        _check_kubelet(ck, config, path, given, profile(version, {**gates, **config.featureGates}))
    return config


def _check_kubelet(ck: Check, kc: KubeletConfiguration, path: str, given: dict[str, Any], prof: Profile) -> None:
    """pkg/kubelet/apis/config/validation ValidateKubeletConfiguration: the checks on the fields podlife reads;
    its feature gates were checked as they were read (_gates)."""
    sgp, critical = kc.shutdownGracePeriod, kc.shutdownGracePeriodCriticalPods
    if (sgp > 0 or critical > 0) and not prof.graceful_node_shutdown:
        key = "shutdownGracePeriod" if sgp > 0 else "shutdownGracePeriodCriticalPods"
        raise ck.error(f"{path}.{key}", "specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires "
                                        f"feature gate GracefulNodeShutdown (beta and on by default from 1.21; "
                                        f"Kubernetes {prof.version} does not have it on)")
    for key, value in (("shutdownGracePeriod", sgp), ("shutdownGracePeriodCriticalPods", critical)):
        if 0 < value < 1:
            raise ck.error(f"{path}.{key}", f"{describe(given[key])} must be either zero or otherwise >= 1 sec")
    if critical > sgp:
        raise ck.error(f"{path}.shutdownGracePeriodCriticalPods",
                       f"{format_duration(critical)} must be <= shutdownGracePeriod ({format_duration(sgp)})")


def _config_value(ck: Check, value: Any, path: str, kind: str, key: str) -> Any:
    if kind == "duration":
        return ck.duration(value, path)
    if kind == "positive duration":   # the components' config validation refuses 0 and negatives
        seconds = ck.duration(value, path)
        if seconds <= 0:
            raise ck.error(path, f"{describe(value)} must be greater than 0; expected a duration "
                                 f"({DURATION_HINT}) > 0")
        return seconds
    if kind.startswith("positive int"):
        return ck.integer(value, path, 1, bits=int(kind[-2:]))
    if kind.startswith("int"):
        return ck.integer(value, path, None if key == "evictionMaxPodGracePeriod" else 0, bits=int(kind[-2:]))
    if kind == "float":
        return ck.number(value, path)
    if kind == "bool":
        return ck.boolean(value, path)
    if kind == "signals":
        return ck.str_map(value, path, lambda k, p: _signal(ck, k, p), lambda v, p: _threshold(ck, v, p))
    if kind == "sysctl patterns":
        return [_sysctl_pattern(ck, v, f"{path}[{i}]") for i, v in enumerate(ck.sequence(value, path))]
    if kind == "durations":
        out = {}
        for signal, v in ck.mapping(value, path).items():
            _signal(ck, signal, join_path(path, signal))
            out[signal] = ck.duration(v, join_path(path, signal))
        return out
    raise AssertionError(f"unknown config kind {kind!r} for {path}")


def _sysctl_pattern(ck: Check, value: Any, path: str) -> str:
    """pkg/kubelet/sysctl/allowlist.go NewAllowlist: a valid sysctl pattern (policy validation
    IsValidSysctlPattern) known to be namespaced, else the kubelet does not start."""
    text = ck.string(value, path, "a sysctl name or pattern such as kernel.msg*")
    if len(text) > 253 or not _SYSCTL_PATTERN.fullmatch(text):
        raise ck.error(path, f'sysctl "{text}" must have at most 253 characters and match regex '
                             f"{_SYSCTL_PATTERN.pattern}")
    why = unknown_namespace(text)
    if why is not None:
        raise ck.error(path, why)
    return text


def _signal(ck: Check, key: str, path: str) -> None:
    if key not in EVICTION_SIGNALS:
        raise ck.error(path, f'unknown eviction signal "{key}"; expected one of: {", ".join(EVICTION_SIGNALS)}')


def _threshold(ck: Check, value: Any, path: str) -> str:
    if not isinstance(value, str):   # KubeletConfiguration's thresholds are map[string]string
        raise ck.error(path, f"expected a string such as 100Mi or 10%, got {describe(value)}")
    if value.endswith("%"):
        if not _PERCENT.match(value) or float(value[:-1]) > 100:
            raise ck.error(path, f'"{value}" is not a valid percentage; expected 0% … 100%')
        return value
    try:
        return ck.quantity(value, path)
    except ScenarioError:
        raise ck.error(path, f"{describe(value)} is not an eviction threshold; expected a quantity (e.g. "
                             "100Mi) or a percentage (e.g. 10%)") from None


def _check_soft_eviction(ck: Check, kubelet: KubeletConfiguration, path: str) -> None:
    # pkg/kubelet/eviction/helpers.go ParseThresholdConfig: a soft threshold needs a grace period
    for signal in kubelet.evictionSoft:
        if signal not in kubelet.evictionSoftGracePeriod:
            raise ck.error(join_path(f"{path}.evictionSoft", signal),
                           f"a soft eviction threshold needs a grace period; expected "
                           f"{join_path(f'{path}.evictionSoftGracePeriod', signal)} as well")
    for signal in kubelet.evictionSoftGracePeriod:
        if signal not in kubelet.evictionSoft:
            ck.warn(join_path(f"{path}.evictionSoftGracePeriod", signal),
                    "grace period for a signal without a soft threshold; it has no effect")



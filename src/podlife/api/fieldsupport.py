"""What podlife does with each field of every kind it models: the one table.

Every field of the OpenAPI schema of a kind in ``podlife.api.meta.KINDS`` (each served apiVersion, each
version) is one of

- ``modelled``: podlife acts on it as upstream does;
- ``stored only``: stored, validated and served back, with no effect on a pod's life by design (a Service's
  sessionAffinity, most of metadata, a container's securityContext);
- ``not modelled``: upstream would act on it and podlife does not. Its entry says what podlife assumes
  instead, and a manifest that sets it gets one warning saying so (``unmodelled``), in the warnings and in
  the report's ``assumptions``.

Paths are the schema's, with ``[]`` for a list's items (``spec.containers[].resources``); ``a.b.*`` covers
``a.b`` and everything under it; the most specific rule wins. ``AT(path, table)`` mounts a shared table
(object metadata, a pod spec, a container, a Job spec, a claim spec) at a path. tests/test_fieldsupport.py
walks every version's schema and fails on a field no rule covers (or a rule no schema has), so a new
Kubernetes field forces a decision here. The rules hold for every version (strict decoding has already
refused a field the version lacks), so they are compiled once per kind, and a check visits only the paths
that lead to a not-modelled field.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

MODELLED, STORED, NOT_MODELLED = "modelled", "stored only", "not modelled"

# a not-modelled rule's assumption: a text, or (value, parent mapping) -> the whole message
Reason = str | Callable[[Any, dict[str, Any]], str]


@dataclass(frozen=True)
class Rule:
    """How podlife supports the fields a pattern matches."""

    pattern: str
    support: str                      # MODELLED, STORED, NOT_MODELLED, or "@table" (a mount)
    reason: Reason = ""               # NOT_MODELLED: what podlife assumes instead
    when: Callable[[Any, dict[str, Any]], bool] | None = None   # NOT_MODELLED only for such (value, parent)
    cond: str = ""                    # ``when`` in words, for the README
    readme: str = ""                  # a callable reason in words, for the README

    def message(self, value: Any, parent: dict[str, Any]) -> str:
        return self.reason(value, parent) if callable(self.reason) else f"not modelled: {self.reason}"


def M(pattern: str) -> Rule:
    return Rule(pattern, MODELLED)


def S(pattern: str) -> Rule:
    return Rule(pattern, STORED)


Cond = tuple[Callable[[Any, dict[str, Any]], bool], str]   # a predicate on (value, parent) and its words


def N(pattern: str, reason: Reason, when: Cond | None = None, readme: str = "") -> Rule:
    return Rule(pattern, NOT_MODELLED, reason, when[0] if when else None, when[1] if when else "", readme)


TRUE: Cond = (lambda v, _: v is True, "true")
NOT_EMPTY: Cond = (lambda v, _: bool(v), "not empty")


def equals(value: Any) -> Cond:
    return (lambda v, _: v == value, str(value))


def differs(value: Any) -> Cond:
    return (lambda v, _: v != value, f"not {value}")


def AT(pattern: str, table: str) -> Rule:
    return Rule(pattern, "@" + table)


def _pod_namespaces(term: dict[str, Any]) -> str:
    return ", ".join(term.get("namespaces") or ()) or "the pod's own namespace"


def _namespace_selector(value: Any, term: dict[str, Any]) -> str:
    return ("not modelled: podlife's scheduler does not match namespace labels; the term selects pods in "
            f"{_pod_namespaces(term)} only")


def _readiness_gates(value: Any, _: dict[str, Any]) -> str:
    conds = [g.get("conditionType") for g in value if isinstance(g, dict)] if isinstance(value, list) else []
    names = " and ".join(str(c) for c in conds) or "the gates'"
    return (f"nothing in podlife sets the {names} condition{'s' if len(conds) > 1 else ''} (an external "
            "controller would; a patch action with subresource: status can): until then the pod is not Ready")


def _hpa_metric(value: Any, _: dict[str, Any]) -> bool:
    if not isinstance(value, dict):
        return False
    res = res_ if isinstance(res_ := value.get("resource"), dict) else {}
    target = target_ if isinstance(target_ := res.get("target"), dict) else {}
    return value.get("type") != "Resource" or target.get("type") != "Utilization"


def _image_user(value: Any, context: dict[str, Any]) -> bool:
    """runAsNonRoot without runAsUser: the kubelet checks the image's user (pkg/kubelet/kuberuntime/
    security_context_others.go verifyRunAsNonRoot), which podlife does not know. With runAsUser it checks that."""
    return value is True and context.get("runAsUser") is None


_ITEMS = "the keys listed are assumed to be in the object (a missing key's FailedMount is not modelled)"
IMAGE_USER: Cond = (_image_user, "true, without runAsUser")
_MOUNTED = "assumed attached and mounted at once (no attach or mount delay, no FailedMount)"
_IN_TREE = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume",
            "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "iscsi", "nfs", "photonPersistentDisk",
            "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume")
_HOST_PATH_CHECKED = ("Directory", "File", "Socket", "CharDevice", "BlockDevice")


def _all(support: str, names: str) -> tuple[Rule, ...]:
    """One rule per whitespace-separated field, each covering the field and everything under it."""
    return tuple(Rule(f"{n}.*", support) for n in names.split())


# Fields are listed one by one down to the level where a new upstream field could change a pod's life, so
# the schema test stops at a new one; below that a subtree rule (``x.*``) speaks for the whole value.
TABLES: dict[str, tuple[Rule, ...]] = {
    # ObjectMeta: what the server sets is ignored on create (stored only); names, labels, annotations
    # (podlife/behavior, deployment.kubernetes.io/revision …), finalizers and owners are acted on
    "meta": (
        *_all(MODELLED, "name generateName namespace labels annotations finalizers[] ownerReferences[]"),
        *_all(STORED, "creationTimestamp deletionGracePeriodSeconds deletionTimestamp generation managedFields[] "
                      "resourceVersion selfLink uid"),
    ),
    "container": (
        *_all(MODELLED, "args[] command[] envFrom[] image imagePullPolicy lifecycle livenessProbe readinessProbe "
                        "startupProbe name ports[] restartPolicy restartPolicyRules[] stdin stdinOnce workingDir"),
        M("env[]"), *_all(MODELLED, "env[].name env[].value env[].valueFrom"),
        N("env[].valueFrom.fileKeyRef.*", "the variable is assumed read from the file (the kubelet's wait for "
          "the file is not modelled)"),
        M("resources"), *_all(MODELLED, "resources.limits resources.requests"),
        N("resources.claims[].*", "no dynamic resource allocation: the claim is assumed allocated and prepared"),
        # pkg/kubelet/kuberuntime: the runtime's view of the process, nothing that changes its life
        *_all(STORED, "securityContext terminationMessagePath terminationMessagePolicy volumeDevices[] "
                      "volumeMounts[] resizePolicy[] tty"),
        N("securityContext.runAsNonRoot", "the image is assumed to run as a non-root user (the kubelet's "
          "CreateContainerConfigError for an image that runs as root is not modelled)", when=IMAGE_USER),
    ),
    "pod": (   # PodSpec
        *_all(MODELLED, "activeDeadlineSeconds hostNetwork hostname nodeName nodeSelector os overhead "
                        "preemptionPolicy priority priorityClassName resources restartPolicy runtimeClassName "
                        "schedulerName schedulingGates[] serviceAccount serviceAccountName subdomain "
                        "terminationGracePeriodSeconds tolerations[] topologySpreadConstraints[]"),
        AT("containers[]", "container"), AT("initContainers[]", "container"),
        # pods/ephemeralcontainers (kubectl debug): started by the kubelet as a container, never restarted
        AT("ephemeralContainers[]", "container"),
        N("ephemeralContainers[].targetContainerName", "an ephemeral container shares no process namespace with "
          "its target container (a simulated container has no processes to see)"),
        *_all(STORED, "automountServiceAccountToken dnsConfig dnsPolicy enableServiceLinks hostAliases[] hostIPC "
                      "hostUsers hostnameOverride imagePullSecrets[] setHostnameAsFQDN securityContext"),
        N("securityContext.runAsNonRoot", "the images are assumed to run as a non-root user (the kubelet's "
          "CreateContainerConfigError for an image that runs as root is not modelled)", when=IMAGE_USER),
        # a process that is not PID 1 keeps the default SIGTERM action (the kernel protects only PID 1)
        *(N(f, "each container's process is assumed to be PID 1 of its own namespace (with a shared one, a "
            "process without a SIGTERM handler would be killed by SIGTERM)", when=TRUE)
          for f in ("shareProcessNamespace", "hostPID")),
        M("affinity"), *_all(MODELLED, "affinity.nodeAffinity affinity.podAffinity affinity.podAntiAffinity"),
        N("affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[].namespaceSelector",
          _namespace_selector, when=NOT_EMPTY,
          readme="the term selects pods in its `namespaces` (or the pod's own namespace) only"),
        N("affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm."
          "namespaceSelector", _namespace_selector, when=NOT_EMPTY,
          readme="the term selects pods in its `namespaces` (or the pod's own namespace) only"),
        N("affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[].namespaceSelector",
          _namespace_selector, when=NOT_EMPTY,
          readme="the term selects pods in its `namespaces` (or the pod's own namespace) only"),
        N("affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[].podAffinityTerm."
          "namespaceSelector", _namespace_selector, when=NOT_EMPTY,
          readme="the term selects pods in its `namespaces` (or the pod's own namespace) only"),
        # MatchLabelKeysInPodAffinity: the API server merges the keys into labelSelector (pkg/registry/core/pod)
        *(N(f"affinity.{a}.{w}[]{t}.{keys}[]", "the term selects pods by its labelSelector only")
          for keys in ("matchLabelKeys", "mismatchLabelKeys")
          for a in ("podAffinity", "podAntiAffinity")
          for w, t in (("requiredDuringSchedulingIgnoredDuringExecution", ""),
                       ("preferredDuringSchedulingIgnoredDuringExecution", ".podAffinityTerm"))),
        N("readinessGates[]", _readiness_gates, readme="nothing sets the gates' conditions (an external controller "
          "would; a `patch` action with `subresource: status` can): the pod is not Ready until then"),
        S("readinessGates[].conditionType"),
        N("resourceClaims[].*", "no dynamic resource allocation: the claims are assumed allocated and prepared"),
        N("resources.claims[].*", "no dynamic resource allocation: the claims are assumed allocated and prepared"),
        N("schedulingGroup.*", "no gang scheduling: the pod is scheduled on its own"),
        N("workloadRef.*", "no gang scheduling: the pod is scheduled on its own"),
        N("evictionResponders[].*", "evictions are not held for eviction responders"),
        N("os.name", lambda v, _: "podlife models Linux nodes and container runtimes: on a Windows node containers "
          "are stopped with CTRL_SHUTDOWN_EVENT, not signals, and podlife's times for this pod follow Linux "
          "semantics", when=equals("windows"),
          readme="Linux semantics: containers are stopped with signals, not CTRL_SHUTDOWN_EVENT"),
        M("volumes[]"), *_all(MODELLED, "volumes[].name volumes[].configMap volumes[].secret volumes[].projected "
                                        "volumes[].persistentVolumeClaim volumes[].emptyDir"),
        *_all(STORED, "volumes[].downwardAPI volumes[].hostPath volumes[].emptyDir.medium "
                      "volumes[].projected.sources[].serviceAccountToken volumes[].projected.sources[].downwardAPI"),
        # pkg/volume/configmap, secret, projected: a listed key the object lacks fails the mount
        *(N(f"volumes[].{v}.items[].*", _ITEMS) for v in ("configMap", "secret", "projected.sources[].configMap",
                                                          "projected.sources[].secret")),
        N("volumes[].emptyDir.sizeLimit", "the volume's usage is not modelled, so it never exceeds the limit (no "
          "eviction for it)"),
        N("volumes[].projected.sources[].clusterTrustBundle.*", "the trust bundle is assumed found and written at "
          "once"),
        N("volumes[].projected.sources[].podCertificate.*", "the certificate is assumed issued at once (no "
          "PodCertificateRequest, no signer)"),
        *(N(f"volumes[].{src}.*", _MOUNTED) for src in _IN_TREE),
        N("volumes[].image.*", "the image volume is assumed pulled and mounted at once (no pull delay or "
          "ImagePullBackOff)"),
        N("volumes[].hostPath.type", "the host path is assumed to exist on the node with the type given (no "
          "FailedMount)", when=(lambda v, _: v in _HOST_PATH_CHECKED, " or ".join(_HOST_PATH_CHECKED))),
        N("volumes[].ephemeral.*", "the generic ephemeral volume's claim is not created by podlife (the "
          "ephemeral volume controller is not modelled): the volume is assumed mounted at once"),
    ),
    "template": (AT("metadata", "meta"), AT("spec", "pod")),   # PodTemplateSpec
    "claim": (   # PersistentVolumeClaimSpec
        *_all(MODELLED, "accessModes[] resources storageClassName volumeMode volumeName"),
        N("selector.*", "the claim binds as if it had no selector (any fitting volume, or a provisioned one)"),
        S("volumeAttributesClassName.*"),
        N("dataSource.*", "provisioned like an empty volume (no snapshot or clone delay)"),
        N("dataSourceRef.*", "provisioned like an empty volume (no populator or its delay)"),
    ),
    "job": (    # JobSpec
        *_all(MODELLED, "activeDeadlineSeconds backoffLimit backoffLimitPerIndex completionMode completions "
                        "manualSelector maxFailedIndexes parallelism podFailurePolicy podReplacementPolicy selector "
                        "successPolicy suspend ttlSecondsAfterFinished"),
        AT("template", "template"),
        N("managedBy", "the built-in Job controller manages the Job",
          when=differs("kubernetes.io/job-controller")),
        N("scheduling.*", "no gang scheduling: each pod is scheduled on its own"),
    ),
}

_OBJ = (AT("metadata", "meta"), M("spec"), M("status.*"))   # podlife's components write status (a status
# given on create is ignored by the API server, and a warning says so)
KINDS_TABLE: dict[str, tuple[Rule, ...]] = {
    "Pod": (*_OBJ, AT("spec", "pod")),
    "Deployment": (*_OBJ, AT("spec.template", "template"),
                   *_all(MODELLED, "spec.minReadySeconds spec.paused spec.progressDeadlineSeconds spec.replicas "
                                   "spec.revisionHistoryLimit spec.selector spec.strategy")),
    "ReplicaSet": (*_OBJ, AT("spec.template", "template"),
                   *_all(MODELLED, "spec.minReadySeconds spec.replicas spec.selector")),
    "ReplicationController": (*_OBJ, AT("spec.template", "template"),
                              *_all(MODELLED, "spec.minReadySeconds spec.replicas spec.selector")),
    "StatefulSet": (
        *_OBJ, AT("spec.template", "template"),
        *_all(MODELLED, "spec.minReadySeconds spec.persistentVolumeClaimRetentionPolicy spec.podManagementPolicy "
                        "spec.replicas spec.selector spec.serviceName spec.updateStrategy"),
        M("spec.volumeClaimTemplates[]"), M("spec.volumeClaimTemplates[].apiVersion"),
        M("spec.volumeClaimTemplates[].kind"), AT("spec.volumeClaimTemplates[].metadata", "meta"),
        M("spec.volumeClaimTemplates[].spec"), AT("spec.volumeClaimTemplates[].spec", "claim"),
        S("spec.volumeClaimTemplates[].status.*"),
        # pkg/controller/statefulset: revisions pruned to the limit, start ordinals, partitioned updates
        *_all(MODELLED, "spec.revisionHistoryLimit spec.ordinals"),
    ),
    "DaemonSet": (
        *_OBJ, AT("spec.template", "template"),
        # pkg/controller/daemon/update.go: RollingUpdate (maxUnavailable, maxSurge), OnDelete, history pruning
        *_all(MODELLED, "spec.minReadySeconds spec.selector spec.revisionHistoryLimit spec.updateStrategy"),
    ),
    "Job": (*_OBJ, AT("spec", "job")),
    "CronJob": (*_OBJ, *_all(MODELLED, "spec.concurrencyPolicy spec.failedJobsHistoryLimit spec.schedule "
                                       "spec.startingDeadlineSeconds spec.successfulJobsHistoryLimit spec.suspend "
                                       "spec.timeZone"),
                M("spec.jobTemplate"), AT("spec.jobTemplate.metadata", "meta"), M("spec.jobTemplate.spec"),
                AT("spec.jobTemplate.spec", "job")),
    "HorizontalPodAutoscaler": (
        *_OBJ, *_all(MODELLED, "spec.maxReplicas spec.minReplicas spec.scaleTargetRef "
                               "spec.targetCPUUtilizationPercentage spec.metrics[]"),
        M("spec.behavior"), M("spec.behavior.scaleUp"), M("spec.behavior.scaleDown"),
        *_all(MODELLED, " ".join(f"spec.behavior.{d}.{f}" for d in ("scaleUp", "scaleDown")
                                 for f in ("policies[]", "selectPolicy", "stabilizationWindowSeconds"))),
        N("spec.metrics[]", lambda v, _: "not modelled: only Resource metrics with a Utilization target (cpu, "
          "memory) drive podlife's autoscaler; this one is ignored",
          when=(_hpa_metric, "not a Resource metric with a Utilization target"),
          readme="only Resource metrics with a Utilization target (cpu, memory) drive the autoscaler; it is ignored"),
        N("spec.behavior.scaleUp.tolerance", "the controller's 10 % tolerance applies"),
        N("spec.behavior.scaleDown.tolerance", "the controller's 10 % tolerance applies"),
    ),
    "PodDisruptionBudget": (*_OBJ, *_all(MODELLED, "spec.maxUnavailable spec.minAvailable spec.selector "
                                                   "spec.unhealthyPodEvictionPolicy")),
    "Namespace": (*_OBJ, M("spec.finalizers[]")),
    "Node": (*_OBJ, *_all(MODELLED, "spec.podCIDR spec.podCIDRs[] spec.taints[] spec.unschedulable"),
             *_all(STORED, "spec.providerID spec.externalID spec.configSource spec.podPreemptionPolicy")),
    # pkg/controller/endpointslice: the selector, ports and addressing decide the endpoints; the rest is for
    # proxies and load balancers podlife does not run
    # pkg/registry/core/service/storage/alloc.go: the type, IP fields and node ports decide what is allocated
    "Service": (AT("metadata", "meta"), M("spec"), S("status.*"),
                *_all(MODELLED, "spec.selector spec.clusterIP spec.clusterIPs[] spec.ipFamilies[] "
                                "spec.ipFamilyPolicy spec.publishNotReadyAddresses spec.ports[] spec.type "
                                "spec.allocateLoadBalancerNodePorts spec.healthCheckNodePort"),
                M("spec.ports[].nodePort"),
                *_all(STORED, "spec.externalIPs[] "
                              "spec.externalName spec.externalTrafficPolicy "
                              "spec.internalTrafficPolicy spec.loadBalancerClass "
                              "spec.loadBalancerIP spec.loadBalancerSourceRanges[] spec.sessionAffinity "
                              "spec.sessionAffinityConfig spec.trafficDistribution")),
    # records or objects podlife's own components write; one a user creates changes no pod's life
    "Event": (AT("metadata", "meta"), S("*")),
    "Endpoints": (AT("metadata", "meta"), S("*")),
    "EndpointSlice": (AT("metadata", "meta"), S("*")),
    "Lease": (AT("metadata", "meta"), S("*")),
    # pkg/controller/history: the DaemonSet and StatefulSet controllers read their revisions' data and numbers
    "ControllerRevision": (AT("metadata", "meta"), M("data"), M("revision")),
    "ConfigMap": (AT("metadata", "meta"), M("data"), M("binaryData"), S("immutable")),
    "Secret": (AT("metadata", "meta"), M("data"), M("stringData"), S("type"), S("immutable")),
    "ServiceAccount": (AT("metadata", "meta"), S("automountServiceAccountToken"), S("imagePullSecrets[].*"),
                       S("secrets[].*")),
    "PriorityClass": (AT("metadata", "meta"), M("value"), M("globalDefault"), M("preemptionPolicy"),
                      S("description")),
    "PersistentVolumeClaim": (*_OBJ, AT("spec", "claim")),
    "PersistentVolume": (
        *_OBJ, *_all(MODELLED, "spec.accessModes[] spec.capacity spec.claimRef spec.persistentVolumeReclaimPolicy "
                               "spec.storageClassName spec.volumeMode"),
        *_all(STORED, "spec.mountOptions[] spec.volumeAttributesClassName spec.hostPath spec.local"),
        N("spec.nodeAffinity.*", "the volume is assumed reachable from every node"),
        *(N(f"spec.{src}.*", _MOUNTED) for src in _IN_TREE if src != "gitRepo"),
    ),
    "StorageClass": (AT("metadata", "meta"), M("provisioner"), M("reclaimPolicy"), M("volumeBindingMode"),
                     S("parameters"), S("mountOptions[]"), S("allowVolumeExpansion"),
                     N("allowedTopologies[].*", "volumes are assumed provisioned where any node can reach them")),
    "LimitRange": (AT("metadata", "meta"), M("spec"), M("spec.limits[].*")),
    "ResourceQuota": (*_OBJ, *_all(MODELLED, "spec.hard spec.scopeSelector spec.scopes[]")),
    "RuntimeClass": (AT("metadata", "meta"), M("handler"), M("overhead.*"), M("scheduling.*"),
                     # containerd: RunPodSandbox fails for a handler the runtime has no configuration for
                     N("handler", "every node's container runtime is assumed to have this handler configured (no "
                       "FailedCreatePodSandBox for a missing one)", when=differs("runc"))),
}
_COMMON = (M("apiVersion"), M("kind"))


# ------------------------------------------------------------------------------------------------ compiled

@dataclass(frozen=True)
class _Compiled:
    """The rules of a kind, indexed by path."""

    exact: dict[str, Rule]        # pattern (no wildcard) -> rule
    subtree: dict[str, Rule]      # "a.b" of "a.b.*" ("" for "*") -> rule
    toward: frozenset[str]        # paths leading to (or at) a not-modelled rule: the only ones a check visits


def _expand(rules: tuple[Rule, ...], prefix: str, out: list[Rule]) -> None:
    for r in rules:
        if r.pattern == "*":
            pattern = f"{prefix}.*" if prefix else "*"
        else:
            pattern = f"{prefix}.{r.pattern}" if prefix else r.pattern
        if r.support.startswith("@"):   # a mounted table's root is a modelled field
            out.append(Rule(pattern, MODELLED))
            _expand(TABLES[r.support[1:]], pattern, out)
        else:
            out.append(Rule(pattern, r.support, r.reason, r.when, r.cond, r.readme))


@lru_cache(maxsize=None)
def compiled(kind: str) -> _Compiled | None:
    rules = KINDS_TABLE.get(kind)
    if rules is None:
        return None
    flat: list[Rule] = []
    _expand(_COMMON + rules, "", flat)
    exact, subtree, toward = {}, {}, set[str]()
    for r in flat:
        if r.pattern == "*" or r.pattern.endswith(".*"):
            subtree[r.pattern[:-2]] = r
            root = r.pattern[:-2]
        else:
            exact[r.pattern] = r
            root = r.pattern
        if r.support == NOT_MODELLED:
            parts = root.split(".")
            toward.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return _Compiled(exact, subtree, frozenset(toward))


@lru_cache(maxsize=65536)
def rule_for(kind: str, path: str) -> Rule | None:
    """The rule that decides a schema path of a kind (``spec.containers[].image``), or None."""
    c = compiled(kind)
    if c is None:
        return None
    if path in c.exact:
        return c.exact[path]
    probe = path
    while True:
        if probe in c.subtree:
            return c.subtree[probe]
        if not probe:
            return None
        probe = probe.rpartition(".")[0]


def _is_set(value: Any) -> bool:
    return value is not None and value != [] and value != ""


def unmodelled(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(field path in the manifest, message) for each not-modelled rule a manifest sets, once per rule (at its
    first place). Visits only the paths that lead to a not-modelled rule, so it costs little per object."""
    c = compiled(obj.get("kind") if isinstance(obj.get("kind"), str) else "")
    if c is None:
        return []
    out: list[tuple[str, str]] = []
    said: set[str] = set()
    kind = obj["kind"]

    def visit(node: dict[str, Any], norm: str, where: str) -> None:
        for key, value in node.items():
            if not isinstance(key, str):
                continue
            n = f"{norm}.{key}" if norm else key
            if isinstance(value, list):
                n += "[]"
            if n not in c.toward:
                continue
            here = f"{where}.{key}" if where else key
            rule = rule_for(kind, n)
            if rule is not None and rule.support == NOT_MODELLED and _is_set(value) \
                    and rule.pattern not in said:
                hit = None
                if rule.when is None:
                    hit = (here, value, node)
                elif isinstance(value, list) and rule.pattern.endswith("[]") and not rule.pattern.endswith("*"):
                    hit = next(((f"{here}[{i}]", v, node) for i, v in enumerate(value) if rule.when(v, node)),
                               None)
                elif rule.when(value, node):
                    hit = (here, value, node)
                if hit is not None:
                    said.add(rule.pattern)
                    out.append((hit[0], rule.message(hit[1], hit[2])))
                    continue
            if isinstance(value, dict):
                visit(value, n, here)
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, dict):
                        visit(item, n, f"{here}[{i}]")

    visit(obj, "", "")
    return out


_WHERE = {"meta": "object metadata", "container": "a container (`containers[]`, `initContainers[]` of a pod spec)",
          "pod": "a pod spec (a Pod's `spec`, every template's `spec`)",
          "claim": "a claim spec (a PersistentVolumeClaim's `spec`, a StatefulSet's `volumeClaimTemplates[].spec`)",
          "job": "a Job spec (a Job's `spec`, a CronJob's `spec.jobTemplate.spec`)"}


def not_modelled_rows() -> list[tuple[str, str, str]]:
    """(where, fields, what podlife assumes) of every not-modelled rule, rules alike in one row: the README's
    list."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for where, rules in [(_WHERE[t], TABLES[t]) for t in TABLES if t in _WHERE] + \
            [(kind, KINDS_TABLE[kind]) for kind in sorted(KINDS_TABLE)]:
        for r in rules:
            if r.support == NOT_MODELLED:
                text = r.readme or str(r.reason)
                groups.setdefault((where, r.cond, text), []).append(r.pattern.removesuffix(".*"))
    return [(where, ", ".join(f"`{p}`" for p in patterns) + (f" (when {cond})" if cond else ""), text)
            for (where, cond, text), patterns in groups.items()]


def readme_list() -> str:
    """The README's list of not-modelled fields (tests/test_fieldsupport.py checks the README has it)."""
    return "\n".join(["| where | field | podlife assumes |", "|---|---|---|"] +
                      [f"| {w} | {f} | {t} |" for w, f, t in not_modelled_rows()]) + "\n"

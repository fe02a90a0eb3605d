"""What the API server says about a manifest it accepts, and what a version silently ignores.

Upstream's warnings (pkg/api/pod/warnings.go, returned in the Warning header that kubectl prints): a negative
terminationGracePeriodSeconds (treated as 1 from 1.27), a fractional byte quantity. And the fields a version's
API has but drops before storing, their feature gate being off by default (``dropped_fields`` in
podlife.versions): a user would see nothing, so podlife says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from podlife.api import quantity

_BYTE_RESOURCES = ("memory", "ephemeral-storage")

# dropped field → (what to look for, the feature gate)
_GATES = {
    "probe_grace": "ProbeTerminationGracePeriod",
    "probe_grpc": "GRPCContainerProbe",
    "sts_pvc_retention": "StatefulSetAutoDeletePVC",
    "cronjob_time_zone": "CronJobTimeZone",
    "scheduling_gates": "PodSchedulingReadiness",
    "pdb_unhealthy_policy": "PDBUnhealthyPodEvictionPolicy",
    "lifecycle_sleep": "PodLifecycleSleepAction",
    "container_restart_rules": "ContainerRestartRules",
}


def pod_specs(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, pod spec) of a manifest: a pod's own, a workload's template, a CronJob's job template."""
    kind, spec = obj.get("kind"), obj.get("spec")
    if kind == "Pod" and isinstance(spec, dict):
        yield "spec", spec
        return
    if kind == "PodTemplate":
        tspec = (obj.get("template") or {}).get("spec") if isinstance(obj.get("template"), dict) else None
        if isinstance(tspec, dict):
            yield "template.spec", tspec
        return
    if not isinstance(spec, dict):
        return
    if kind == "CronJob":
        spec, prefix = ((spec.get("jobTemplate") or {}).get("spec") or {}), "spec.jobTemplate.spec"
    else:
        prefix = "spec"
    template = spec.get("template") if isinstance(spec, dict) else None
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        yield f"{prefix}.template.spec", template["spec"]


def _containers(spec: dict[str, Any]) -> Iterator[tuple[str, bool, dict[str, Any]]]:
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or ()):
            if isinstance(c, dict):
                yield f"{key}[{i}]", key == "initContainers", c


def manifest_warnings(obj: dict[str, Any], profile: Any) -> list[tuple[str, str]]:
    """(field path inside the manifest, message) for each warning."""
    out: list[tuple[str, str]] = []
    dropped: frozenset[str] = profile.dropped_fields
    version = profile.version
    if isinstance(obj.get("status"), dict) and obj["status"]:
        out.append(("status", "set by the cluster: the API server ignores a status given on create"))
    for path, spec in pod_specs(obj):
        grace = spec.get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and grace < 0 and profile.negative_grace == "treated-as-one":
            out.append((f"{path}.terminationGracePeriodSeconds",
                        "must be >= 0; negative values are invalid and will be treated as 1"))
        if "scheduling_gates" in dropped and spec.get("schedulingGates"):
            out.append((f"{path}.schedulingGates", _dropped("scheduling_gates", version)))
        for cpath, init, c in _containers(spec):
            for kind in ("requests", "limits"):
                for name, value in ((c.get("resources") or {}).get(kind) or {}).items():
                    if name in _BYTE_RESOURCES or name.startswith("hugepages-"):
                        try:
                            fractional = quantity.parse_quantity(value).denominator != 1
                        except (ValueError, TypeError):
                            continue
                        if fractional:
                            out.append((f"{path}.{cpath}.resources.{kind}[{name}]",
                                        f'fractional byte value "{value}" is invalid, must be an integer'))
            for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                p = c.get(probe)
                if not isinstance(p, dict):
                    continue
                if "probe_grace" in dropped and p.get("terminationGracePeriodSeconds") is not None:
                    out.append((f"{path}.{cpath}.{probe}.terminationGracePeriodSeconds",
                                _dropped("probe_grace", version)))
                if "probe_grpc" in dropped and p.get("grpc") is not None:
                    out.append((f"{path}.{cpath}.{probe}.grpc", _dropped("probe_grpc", version)))
            for hook in ("postStart", "preStop"):
                handler = (c.get("lifecycle") or {}).get(hook) if isinstance(c.get("lifecycle"), dict) else None
                if "lifecycle_sleep" in dropped and isinstance(handler, dict) and handler.get("sleep") is not None:
                    out.append((f"{path}.{cpath}.lifecycle.{hook}.sleep", _dropped("lifecycle_sleep", version)))
            if init and c.get("restartPolicy") == "Always" and profile.native_sidecars == "unordered":
                out.append((f"{path}.{cpath}.restartPolicy",
                            f"SidecarContainers is alpha and off by default on Kubernetes {version}: with default "
                            "feature gates the API server drops this field and the container must complete like "
                            "any init container; podlife runs it as a sidecar (the gate on)"))
            if "container_restart_rules" in dropped:
                for key in ("restartPolicyRules",) if init else ("restartPolicy", "restartPolicyRules"):
                    if c.get(key) is not None:
                        out.append((f"{path}.{cpath}.{key}", _dropped("container_restart_rules", version)))
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    for key, field, kind in (("cronjob_time_zone", "timeZone", "CronJob"),
                             ("sts_pvc_retention", "persistentVolumeClaimRetentionPolicy", "StatefulSet"),
                             ("pdb_unhealthy_policy", "unhealthyPodEvictionPolicy", "PodDisruptionBudget")):
        if key in dropped and obj.get("kind") == kind and spec.get(field) is not None:
            out.append((f"spec.{field}", _dropped(key, version)))
    return out


def _dropped(key: str, version: str) -> str:
    return (f"dropped by the API server: the {_GATES[key]} feature gate is off by default on Kubernetes "
            f"{version}; the field has no effect")

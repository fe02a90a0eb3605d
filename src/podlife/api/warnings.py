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
from podlife.versions import DROPPED_FIELD_GATES, DroppedField, Profile

_BYTE_RESOURCES = ("memory", "ephemeral-storage")

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


def manifest_warnings(obj: dict[str, Any], profile: Profile) -> list[tuple[str, str]]:
    """(field path inside the manifest, message) for each warning."""
    out: list[tuple[str, str]] = []
    dropped = profile.drops
    if isinstance(obj.get("status"), dict) and obj["status"]:
        out.append(("status", "set by the cluster: the API server ignores a status given on create"))
    for path, spec in pod_specs(obj):
        grace = spec.get("terminationGracePeriodSeconds")
        if isinstance(grace, int) and grace < 0 and profile.negative_grace == "treated-as-one":
            out.append((f"{path}.terminationGracePeriodSeconds",
                        "must be >= 0; negative values are invalid and will be treated as 1"))
        if dropped("scheduling_gates") and spec.get("schedulingGates"):
            out.append((f"{path}.schedulingGates", _dropped("scheduling_gates", profile)))
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
                if dropped("probe_grace") and p.get("terminationGracePeriodSeconds") is not None:
                    out.append((f"{path}.{cpath}.{probe}.terminationGracePeriodSeconds",
                                _dropped("probe_grace", profile)))
                if dropped("probe_grpc") and p.get("grpc") is not None:
                    out.append((f"{path}.{cpath}.{probe}.grpc", _dropped("probe_grpc", profile)))
            for hook in ("postStart", "preStop"):
                handler = (c.get("lifecycle") or {}).get(hook) if isinstance(c.get("lifecycle"), dict) else None
                if dropped("lifecycle_sleep") and isinstance(handler, dict) and handler.get("sleep") is not None:
                    out.append((f"{path}.{cpath}.lifecycle.{hook}.sleep", _dropped("lifecycle_sleep", profile)))
            if init and c.get("restartPolicy") is not None and dropped("sidecar_restart_policy"):
                out.append((f"{path}.{cpath}.restartPolicy", _dropped("sidecar_restart_policy", profile)
                            + ": the container is an ordinary init container, which must complete before the "
                              "next one starts"))
            for i, rule in enumerate(c.get("restartPolicyRules") or ()):
                codes = rule.get("exitCodes") if isinstance(rule, dict) else None
                out += _unreachable_codes(f"{path}.{cpath}.restartPolicyRules[{i}].exitCodes.values", codes)
            if dropped("container_restart_rules"):
                for key in ("restartPolicyRules",) if init else ("restartPolicy", "restartPolicyRules"):
                    if c.get(key) is not None:
                        out.append((f"{path}.{cpath}.{key}", _dropped("container_restart_rules", profile)))
    spec = spec_ if isinstance(spec_ := obj.get("spec"), dict) else {}
    job, jpath = (spec, "spec") if obj.get("kind") == "Job" else \
        ((spec.get("jobTemplate") or {}).get("spec"), "spec.jobTemplate.spec") if obj.get("kind") == "CronJob" \
        else (None, "")
    policy = job.get("podFailurePolicy") if isinstance(job, dict) else None
    for i, rule in enumerate((policy.get("rules") or ()) if isinstance(policy, dict) else ()):
        codes = rule.get("onExitCodes") if isinstance(rule, dict) else None
        out += _unreachable_codes(f"{jpath}.podFailurePolicy.rules[{i}].onExitCodes.values", codes)
    gated: tuple[tuple[DroppedField, str, str], ...] = (
        ("cronjob_time_zone", "timeZone", "CronJob"), ("job_pod_failure_policy", "podFailurePolicy", "Job"),
        ("sts_pvc_retention", "persistentVolumeClaimRetentionPolicy", "StatefulSet"),
        ("sts_start_ordinal", "ordinals", "StatefulSet"),
        ("pdb_unhealthy_policy", "unhealthyPodEvictionPolicy", "PodDisruptionBudget"))
    for key, field, kind in gated:
        if dropped(key) and obj.get("kind") == kind and spec.get(field) is not None:
            out.append((f"spec.{field}", _dropped(key, profile)))
    ru = (spec.get("updateStrategy") or {}).get("rollingUpdate") if isinstance(spec.get("updateStrategy"), dict) \
        else None
    if dropped("ds_max_surge") and obj.get("kind") == "DaemonSet" and isinstance(ru, dict) and \
            ru.get("maxSurge") not in (None, 0, "0", "0%"):
        # pkg/registry/apps/daemonset/strategy.go dropDisabledFields (1.21): maxSurge is dropped while the gate is off
        out.append(("spec.updateStrategy.rollingUpdate.maxSurge", _dropped("ds_max_surge", profile)))
    return out


def _unreachable_codes(path: str, req: Any) -> list[tuple[str, str]]:
    """Exit codes a rule lists (int32 to the API) that no Linux process can exit with: an exit status is 8 bits
    (`exit 300` is seen as 44), a death by signal 128 + n. With operator In such a value never matches."""
    values = req.get("values") if isinstance(req, dict) else None
    odd = [v for v in values or () if isinstance(v, int) and not isinstance(v, bool) and not 0 <= v <= 255]
    if not odd:
        return []
    return [(path, f"{', '.join(map(str, odd))}: a container's exit code is 0-255 (an exit status is 8 bits: "
                   f"`exit {odd[0]}` is seen as {odd[0] & 0xFF}), so no container exits with "
                   f"{'it' if len(odd) == 1 else 'them'}")]


def _dropped(key: DroppedField, profile: Profile) -> str:
    gate = DROPPED_FIELD_GATES[key]
    how = "turned off by the scenario's feature gates" if gate in profile.set_gates else "off by default"
    return (f"dropped by the API server: the {gate} feature gate is {how} on Kubernetes {profile.version}; the "
            "field has no effect")


def _references(spec: dict[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(kind, name, path) of what a pod spec needs to start: non-optional ConfigMaps and Secrets of volumes,
    env and envFrom, claims, a service account other than default."""
    for i, vol in enumerate(spec.get("volumes") or ()):
        if not isinstance(vol, dict):
            continue
        for key, kind, field in (("configMap", "ConfigMap", "name"), ("secret", "Secret", "secretName"),
                                 ("persistentVolumeClaim", "PersistentVolumeClaim", "claimName")):
            src = vol.get(key)
            if isinstance(src, dict) and src.get(field) and not src.get("optional"):
                yield kind, src[field], f"volumes[{i}].{key}.{field}"
        for j, proj in enumerate((vol.get("projected") or {}).get("sources") or ()) \
                if isinstance(vol.get("projected"), dict) else ():
            for key, kind in (("configMap", "ConfigMap"), ("secret", "Secret")):
                src = proj.get(key) if isinstance(proj, dict) else None
                if isinstance(src, dict) and src.get("name") and not src.get("optional"):
                    yield kind, src["name"], f"volumes[{i}].projected.sources[{j}].{key}.name"
    for cpath, _, c in _containers(spec):
        for j, ev in enumerate(c.get("env") or ()):
            source = (ev.get("valueFrom") or {}) if isinstance(ev, dict) else {}
            for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
                ref = source.get(key) if isinstance(source, dict) else None
                if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                    yield kind, ref["name"], f"{cpath}.env[{j}].valueFrom.{key}.name"
        for j, ev in enumerate(c.get("envFrom") or ()):
            for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
                ref = ev.get(key) if isinstance(ev, dict) else None
                if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                    yield kind, ref["name"], f"{cpath}.envFrom[{j}].{key}.name"
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount")
    if sa and sa != "default":
        yield "ServiceAccount", sa, "serviceAccountName"


def missing_references(manifests: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(manifest index, field path, message) for each object a pod spec needs that none of the scenario's
    manifests defines: such a pod waits for it (CreateContainerConfigError, FailedMount, or a refused create),
    and a program inside a container that would create it (a certificate generator Job, an operator) is not
    modelled."""
    defined = {(m.get("kind"), (m.get("metadata") or {}).get("namespace") or "default",
                (m.get("metadata") or {}).get("name")) for m in manifests if isinstance(m.get("metadata"), dict)}
    claims = set()
    for m in manifests:   # a StatefulSet's claim templates make claims TEMPLATE-NAME-ORDINAL
        if m.get("kind") == "StatefulSet":
            for t in (m.get("spec") or {}).get("volumeClaimTemplates") or ():
                claims.add(((m.get("metadata") or {}).get("namespace") or "default",
                            (t.get("metadata") or {}).get("name")))
    out = []
    for i, m in enumerate(manifests):
        ns = (m.get("metadata") or {}).get("namespace") or "default"
        for path, spec in pod_specs(m):
            for kind, name, sub in _references(spec):
                if (kind, ns, name) in defined or (kind == "PersistentVolumeClaim" and (ns, name) in claims):
                    continue
                what = {"ConfigMap": "its containers wait (CreateContainerConfigError or FailedMount)",
                        "Secret": "its containers wait (CreateContainerConfigError or FailedMount)",
                        "PersistentVolumeClaim": "its pods stay Pending",
                        "ServiceAccount": "its pods are refused (ServiceAccount admission)"}[kind]
                out.append((i, f"{path}.{sub}", f'{kind} "{name}" is not among the scenario\'s objects: {what} '
                                                  "until it exists; podlife does not model programs that create it "
                                                  "(add it, or an apply action at the time it appears)"))
    return out


def unmodelled_fields(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """(path, message) for each field of a kind podlife models that podlife does not act on, so the user knows
    that part of the answer is missing (the table: podlife.api.fieldsupport)."""
    from podlife.api.fieldsupport import unmodelled

    return unmodelled(obj)

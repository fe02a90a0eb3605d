"""What podlife assumed about each container of a scenario, for the summary and the report.

Read from the manifests the scenario creates (objects, then create/apply actions), so a Deployment's
containers are listed once, under the Deployment, not once per pod.
"""

from __future__ import annotations

from typing import Any

from podlife.api.meta import CLUSTER_SCOPED
from podlife.runtime.behavior import BehaviorRule, resolve
from podlife.scenario.model import Scenario


def pod_like(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The pod (or pod template) a manifest runs: metadata and spec."""
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if kind == "Pod":
        return obj
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    template = spec.get("template")
    return template if isinstance(template, dict) and isinstance(template.get("spec"), dict) else None


def _pod_name(obj: dict[str, Any]) -> str:
    """The name spec.behaviors' pod patterns see: the pod's own, or for a template a name of the shape its
    controller gives (StatefulSet NAME-0, others NAME- and a generated suffix)."""
    md = obj.get("metadata") or {}
    name = md.get("name") or md.get("generateName") or ""
    if obj.get("kind") == "Pod":
        return name
    return f"{name}-0" if obj.get("kind") == "StatefulSet" else f"{name}-xxxxx"


def unmatched_rules(manifests: list[dict[str, Any]], rules: tuple[BehaviorRule, ...]) -> list[int]:
    """Indexes of spec.behaviors rules no container of the manifests matches (a template's pods are matched by
    its name and any suffix, as the controller's pods will be named)."""
    containers = []
    for obj in manifests:
        pod = pod_like(obj)
        if pod is None or not isinstance(pod.get("spec"), dict):
            continue
        spec, name = pod["spec"], (obj.get("metadata") or {}).get("name") or ""
        for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ()):
            if isinstance(c, dict):
                containers.append((obj.get("kind") == "Pod", name, c))
    out = []
    for i, rule in enumerate(rules):
        if not any(rule.matches(name, c) if own else
                   rule.matches(f"{name}-0", c) or rule.matches(f"{name}-x", c) or
                   (rule.pod is not None and rule.pod.startswith(f"{name}-") and
                    BehaviorRule(rule.fields, None, rule.container, rule.image).matches(name, c))
                   for own, name, c in containers):
            out.append(i)
    return out


def object_ref(obj: dict[str, Any]) -> str:
    md = obj.get("metadata") or {}
    name = md.get("name") or md.get("generateName") or ""
    kind = obj.get("kind", "")
    return f"{kind}/{name}" if kind in CLUSTER_SCOPED else f"{kind}/{md.get('namespace') or 'default'}/{name}"


def _storage_class(obj: dict[str, Any]) -> list[dict[str, str]]:
    from podlife.controlplane.provisioner import DEFAULT_DELAY, DELAY_ANNOTATION, provisioning_delay

    provisioner = obj.get("provisioner")
    if not provisioner or provisioner == "kubernetes.io/no-provisioner" or not provisioning_delay(obj)[1]:
        return []
    return [{"object": object_ref(obj), "container": "",
             "assumption": f"provisioner {provisioner}: assumed to provision a volume {DEFAULT_DELAY:g} s after it "
                           f"is asked ({DELAY_ANNOTATION} sets it)"}]


def assumptions(sc: Scenario) -> list[dict[str, str]]:
    """One entry per assumption: {object, container, assumption}, in manifest and container order; an object's
    not-modelled fields first (container "")."""
    manifests = [m.obj for m in sc.objects] + [a.manifest for a in sc.actions if a.manifest is not None]
    out: list[dict[str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    from podlife.controlplane.controllers.podautoscaler import utilization_targets

    autoscaled = {resource for obj in manifests if obj.get("kind") == "HorizontalPodAutoscaler"
                  for resource, _ in utilization_targets(obj)}
    notes: dict[str, list[str]] = {}
    for ref, text in sc.field_notes:
        notes.setdefault(ref, []).append(text)
    for obj in manifests:
        ref = object_ref(obj)
        for text in notes.pop(ref, ()):   # the fields it sets that podlife does not model (api.fieldsupport)
            if (ref, "", text) not in seen:
                seen.add((ref, "", text))
                out.append({"object": ref, "container": "", "assumption": text})
        if obj.get("kind") == "StorageClass":
            out += _storage_class(obj)
            continue
        pod = pod_like(obj)
        spec = pod.get("spec") if pod is not None else None
        if pod is None or not isinstance(spec, dict):   # refused when it is written: nothing runs of it
            continue
        named = {**pod, "metadata": {**(pod.get("metadata") or {}), "name": _pod_name(obj)}}
        for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ()):
            if not isinstance(c, dict) or not c.get("name"):
                continue
            behavior, texts = resolve(named, c, sc.behaviors)
            if "cpu" in autoscaled and not behavior.cpu:
                texts = texts + ["cpu: none declared; assumed 0 in use (an autoscaler reads it; behaviour cpu "
                                 "sets it)"]
            if "memory" in autoscaled and behavior.memory is None:
                texts = texts + ["memory: none declared; assumed 0 in use (an autoscaler reads it; behaviour "
                                 "memory sets it)"]
            for text in texts:
                key = (ref, c["name"], text)
                if key not in seen:   # an apply of the same object repeats its containers
                    seen.add(key)
                    out.append({"object": ref, "container": c["name"], "assumption": text})
    return out

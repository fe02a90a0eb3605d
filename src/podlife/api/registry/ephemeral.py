"""pods/ephemeralcontainers: pkg/registry/core/pod/strategy.go podEphemeralContainersStrategy and
pkg/apis/core/validation ValidatePodEphemeralContainersUpdate.

A write to the subresource changes only spec.ephemeralContainers (dropNonEphemeralContainerUpdates: the rest of
the spec, the status and the metadata stay as stored). Ephemeral containers are additive: an existing one can be
neither removed nor changed. Each new one is validated as a container (validateContainerCommon), its name unique
among all the pod's containers, its targetContainerName naming a regular or init container, and the fields that
would make it part of the workload (ports, resources, probes, lifecycle, ...) refused.
"""

from __future__ import annotations

from typing import Any

from podlife.api.validation.core_containers import _validate_container_common
from podlife.api.errors import FieldError
from podlife.api.gofmt import go_quote
from podlife.api.meta import Obj, clone

PATH = "spec.ephemeralContainers"
_FORBIDDEN = "cannot be set for an Ephemeral Container"
# EphemeralContainerCommon's fields in struct order that allowedEphemeralContainerFields does not allow
# (validateFieldAllowList reports each that is not its zero value, by its JSON name)
_NOT_ALLOWED = ("ports", "resources", "resizePolicy", "restartPolicy", "livenessProbe", "readinessProbe",
                "startupProbe", "lifecycle")


def prepare(new: Obj, old: Obj, written: Obj) -> None:
    """``new`` is the stored pod's next revision: it takes the written spec.ephemeralContainers only."""
    ecs = ((written.get("spec") or {}).get("ephemeralContainers"))
    spec = {k: v for k, v in old["spec"].items() if k != "ephemeralContainers"}   # stored objects stay as they are
    if ecs:
        spec["ephemeralContainers"] = clone(ecs)
    new["spec"] = spec
    md = new["metadata"]
    if "generation" in md and new["spec"] != old["spec"]:
        md["generation"] = md["generation"] + 1   # updatePodGeneration (pods carry one from 1.33)


def validate(new: Obj, old: Obj) -> list[FieldError]:
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if "kubernetes.io/config.mirror" in ((old.get("metadata") or {}).get("annotations") or {}):
        return [FieldError("", "Forbidden", "static pods do not support ephemeral containers")]
    errs: list[FieldError] = []
    volumes = {v.get("name") for v in spec.get("volumes") or () if isinstance(v, dict)}
    others = [c.get("name") for key in ("containers", "initContainers") for c in spec.get(key) or ()]
    seen = set(others)
    for i, ec in enumerate(spec.get("ephemeralContainers") or ()):
        p = f"{PATH}[{i}]"
        errs += _validate_container_common(ec, {v for v in volumes if v}, p)
        name = ec.get("name")
        if name in seen:
            errs.append(FieldError(f"{p}.name", "Duplicate value", value=name))
        else:
            seen.add(name)
        target = ec.get("targetContainerName")
        if target and target not in others:
            errs.append(FieldError(f"{p}.targetContainerName", "Not found", value=target))
        errs += [FieldError(f"{p}.{f}", "Forbidden", _FORBIDDEN) for f in _NOT_ALLOWED if ec.get(f)]
        for j, vm in enumerate(ec.get("volumeMounts") or ()):
            for f in ("subPath", "subPathExpr"):
                if (vm or {}).get(f):
                    errs.append(FieldError(f"{p}.volumeMounts[{j}].{f}", "Forbidden", _FORBIDDEN))
    new_by_name: dict[Any, Obj] = {c.get("name"): c for c in spec.get("ephemeralContainers") or ()}
    for c in old_spec.get("ephemeralContainers") or ():
        now = new_by_name.get(c.get("name"))
        if now is None:
            errs.append(FieldError(PATH, "Forbidden",
                                   f"existing ephemeral containers {go_quote(c['name'])} may not be removed\n"))
        elif now != c:
            errs.append(FieldError(PATH, "Forbidden",
                                   f"existing ephemeral containers {go_quote(c['name'])} may not be changed\n"))
    return errs

"""Updates the API server refuses whenever they come, found at load."""

from __future__ import annotations

import copy
from typing import Any

from podlife.api import schema, validation
from podlife.api.errors import ApiError
from podlife.scenario.fieldcheck import Check
from podlife.scenario.model import Action, Manifest
from podlife.versions import Profile


def check_updates(ck: Check, objects: list[Manifest], actions: list[Action], kinds: dict[str, schema.ServedKind],
             prof: Profile) -> None:
    """Patches and applies the API server refuses whatever happens before them: each is applied, in time order,
    to the defaulted manifest the scenario created, and validated as the update it is (replicas below 0, an
    immutable selector or pod field changed, a template whose labels leave the selector). Objects the
    scenario does not create itself (a controller's pods) are left to the run."""
    from podlife.api.defaults import apply_defaults
    from podlife.api.registry.job import generate_selector
    from podlife.scenario.actions import apply_manifest, merge_patch

    known: dict[tuple[str, str, str], dict[str, Any]] = {}

    def key(kind: str, namespace: str | None, name: str) -> tuple[str, str, str]:
        served = kinds.get(kind.lower())
        return (served.kind if served else kind, namespace or "default" if not served or served.namespaced else "",
                name)

    def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(obj)
        apply_defaults(out)
        if out.get("kind") == "Job" and not (out.get("spec") or {}).get("manualSelector"):
            # the Job strategy generates its selector and template labels from the UID at create
            out.setdefault("metadata", {}).setdefault("uid", "00000000-0000-0000-0000-000000000000")
            generate_selector(out, prof.job_prefixed_labels)
        return out

    for m in objects:
        md = m.obj.get("metadata") or {}
        if md.get("name"):
            known[key(m.obj["kind"], md.get("namespace"), md["name"])] = defaulted(m.obj)
    token = validation.FEATURES.set(validation.features(prof))
    try:
        for i, a in sorted(enumerate(actions), key=lambda ia: ia[1].at):
            path = f"spec.actions[{i}]"
            if a.verb in ("create", "apply") and a.manifest is not None:
                md = a.manifest.get("metadata") or {}
                k = key(a.manifest["kind"], a.namespace, md.get("name") or "")
                old = known.get(k)
                if a.verb == "apply" and old is not None:
                    new = defaulted(apply_manifest(old, a.manifest))
                    _refused(ck, validation.validate(new, old=old), f"{path}.apply", k[0], k[2])
                    known[k] = new
                elif md.get("name"):
                    known[k] = defaulted(a.manifest)
            elif a.verb in ("patch", "scale", "delete"):
                kind, _, name = (a.target or "").partition("/")
                k = key(kind, a.namespace, name)
                old = known.get(k)
                if a.verb == "delete":
                    known.pop(k, None)
                elif old is not None:
                    if a.verb == "patch" and a.strategic:
                        # lists merge on their patchMergeKey (containers by name), as the run applies it; a
                        # patch the API refuses as such fails at run time, where it is reported
                        try:
                            new = defaulted(_strategic(old, a.merge_patch or {}, prof))
                        except ApiError:
                            continue
                    else:
                        new = defaulted(merge_patch(old, a.merge_patch or {}) if a.verb == "patch" else
                                        merge_patch(old, {"spec": {"replicas": a.replicas}}))
                    where = f"{path}.{'strategicMergePatch' if a.strategic else 'mergePatch'}" \
                        if a.verb == "patch" else f"{path}.replicas"
                    _refused(ck, validation.validate(new, old=old), where, k[0], k[2])
                    known[k] = new
    finally:
        validation.FEATURES.reset(token)


def _strategic(old: dict[str, Any], patch: dict[str, Any], prof: Profile) -> dict[str, Any]:
    """A strategic merge patch applied to a manifest as the scenario's patch action applies it."""
    import json

    from podlife.api.patch import STRATEGIC_MERGE_PATCH, apply_patch

    sch = schema.type_schema(prof.minor, old.get("apiVersion", "v1"), old.get("kind", ""))
    return apply_patch(old, json.dumps(patch).encode(), STRATEGIC_MERGE_PATCH, sch).object


def _refused(ck: Check, causes: list[Any], path: str, kind: str, name: str) -> None:
    if causes:
        raise ck.error(path, f'{kind} "{name}" is invalid: ' + "; ".join(str(c) for c in causes)
                       + " (the API server refuses this update whenever it comes)")



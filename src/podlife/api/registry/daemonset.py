"""apps/v1 DaemonSet registry strategy: pkg/registry/apps/daemonset/strategy.go.

The internal spec.templateGeneration is served in apps/v1 as the annotation
``deprecated.daemonset.template.generation`` (pkg/apis/apps/v1 conversion): 1 on create, kept on update (a
client may not set it) and bumped when the pod template changes. The DaemonSet controller labels its pods
``pod-template-generation`` with it. While DaemonSetUpdateSurge is off (1.21) rollingUpdate.maxSurge is dropped.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podlife.api.meta import Obj
from podlife.api.registry.generic import Strategy

if TYPE_CHECKING:
    from podlife.api.store import Store

TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"   # appsv1.DeprecatedTemplateGeneration


def template_generation(ds: Obj) -> int | None:
    """util.GetTemplateGeneration: the annotation's value; None when absent or not an integer."""
    value = (ds.get("metadata", {}).get("annotations") or {}).get(TEMPLATE_GENERATION_ANNOTATION)
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _set_generation(obj: Obj, gen: int) -> None:
    md = obj.setdefault("metadata", {})
    annotations = md.get("annotations")
    md["annotations"] = {**(annotations if isinstance(annotations, dict) else {}),
                         TEMPLATE_GENERATION_ANNOTATION: str(gen)}


def _surge_in_use(ds: Obj | None) -> bool:
    ru = (((ds or {}).get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
    return ru.get("maxSurge") not in (None, 0, "0", "0%")


def _drop_disabled_fields(new: Obj, old: Obj | None, store: Store) -> None:
    """dropDaemonSetDisabledFields: maxSurge goes while the gate is off, unless the stored object uses it."""
    gates = store.profile.gates
    if gates.get("DaemonSetUpdateSurge", True) or _surge_in_use(old):
        return
    ru = ((new.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")
    if isinstance(ru, dict):
        ru.pop("maxSurge", None)


class DaemonSetStrategy(Strategy):
    def prepare_for_create(self, obj: Obj, store: Store) -> None:
        super().prepare_for_create(obj, store)
        _drop_disabled_fields(obj, None, store)
        # PrepareForCreate: templateGeneration is at least 1
        gen = template_generation(obj)
        _set_generation(obj, gen if gen is not None and gen >= 1 else 1)

    def prepare_for_update(self, new: Obj, old: Obj, store: Store) -> None:
        super().prepare_for_update(new, old, store)
        _drop_disabled_fields(new, old, store)
        # PrepareForUpdate: a client may not set templateGeneration; a template change bumps it
        gen = template_generation(old) or 1
        if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            gen += 1
        _set_generation(new, gen)

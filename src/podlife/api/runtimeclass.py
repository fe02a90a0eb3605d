"""The RuntimeClass admission plugin (plugin/pkg/admission/runtimeclass/admission.go), on pod create: the pod's
RuntimeClass must exist; its overhead becomes the pod's spec.overhead (which the pod may not set otherwise) and
its scheduling constraints are merged into the pod's nodeSelector and tolerations."""

from __future__ import annotations

from typing import Any

from podlife.api.corehelper import add_or_update_toleration
from podlife.api.errors import forbidden
from podlife.api.meta import Obj
from podlife.api.validation.common import semantic_equal


class RuntimeClass:
    def __init__(self, store: Any) -> None:
        self.store = store

    def admit(self, obj: Obj) -> None:
        if self.store is None or obj.get("kind") != "Pod":
            return
        spec = obj.setdefault("spec", {})
        name = (obj.get("metadata") or {}).get("name") or ""
        cls_name = spec.get("runtimeClassName")
        if not cls_name:
            if spec.get("overhead") is not None:
                raise forbidden("pods", name, "pod rejected: Pod Overhead set without corresponding RuntimeClass "
                                              "defined Overhead")
            return
        rc = self.store.try_get("RuntimeClass", None, cls_name)
        if rc is None:
            raise forbidden("pods", name, f'pod rejected: RuntimeClass "{cls_name}" not found')
        fixed = (rc.get("overhead") or {}).get("podFixed")
        if fixed is not None:
            if spec.get("overhead") is not None and not semantic_equal(spec["overhead"], fixed):
                raise forbidden("pods", name, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined "
                                              "Overhead")
            spec["overhead"] = dict(fixed)
        elif spec.get("overhead") is not None:
            raise forbidden("pods", name, "pod rejected: Pod Overhead set without corresponding RuntimeClass "
                                          "defined Overhead")
        scheduling = rc.get("scheduling") or {}
        selector = spec.get("nodeSelector") or {}
        for key, value in (scheduling.get("nodeSelector") or {}).items():
            if key in selector and selector[key] != value:
                raise forbidden("pods", name, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                              f"pod.spec.nodeSelector[{key}] = {selector[key]}")
            selector[key] = value
        if selector:
            spec["nodeSelector"] = selector
        for toleration in scheduling.get("tolerations") or ():
            add_or_update_toleration(obj, toleration)

"""The container environment the kubelet builds before creating a container: pkg/kubelet/kubelet_pods.go
makeEnvironmentVariables. podlife needs only its failures: a ConfigMap or Secret (or one of its keys) that an
``env``/``envFrom`` entry names and that does not exist, unless the reference is optional. The error fails
startContainer with CreateContainerConfigError (kuberuntime_container.go generateContainerConfig)."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj

_KINDS = {"configMapKeyRef": ("ConfigMap", "configmap"), "secretKeyRef": ("Secret", "secret"),
          "configMapRef": ("ConfigMap", "configmap"), "secretRef": ("Secret", "secret")}


def _data_keys(obj: Obj) -> set[str]:
    return set(obj.get("data") or {}) | set(obj.get("binaryData") or {}) | set(obj.get("stringData") or {})


def environment_error(store: Any, pod: Obj, container: Obj) -> str | None:
    """The error makeEnvironmentVariables would return for this container, or None."""
    ns = pod["metadata"].get("namespace", "default")
    for source in container.get("envFrom") or ():   # envFrom first, as upstream does
        for ref_key in ("configMapRef", "secretRef"):
            ref = source.get(ref_key)
            if ref is None:
                continue
            kind, word = _KINDS[ref_key]
            if store.try_get(kind, ns, ref.get("name", "")) is None and not ref.get("optional"):
                return f'{word} "{ref.get("name", "")}" not found'
    for env in container.get("env") or ():
        value_from = env.get("valueFrom") or {}
        for ref_key in ("configMapKeyRef", "secretKeyRef"):
            ref = value_from.get(ref_key)
            if ref is None:
                continue
            kind, word = _KINDS[ref_key]
            name, key = ref.get("name", ""), ref.get("key", "")
            obj = store.try_get(kind, ns, name)
            if obj is None:
                if ref.get("optional"):
                    continue
                return f'{word} "{name}" not found'
            if key not in _data_keys(obj) and not ref.get("optional"):
                return f"couldn't find key {key} in {kind} {ns}/{name}"
    return None

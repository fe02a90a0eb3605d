"""The files of the API-data volumes (configMap, secret, downwardAPI, projected): what each volume plugin's
SetUp hands to the atomic writer (pkg/volume/configmap MakePayload, pkg/volume/secret MakePayload,
pkg/volume/downwardapi CollectData, pkg/volume/projected collectData). A runtime that puts volumes on disk
(the process runtime) writes them; the simulated ones do not ask.

A payload maps a relative path to (content, mode). Modes: the item's ``mode``, else the volume's
``defaultMode`` (0644 when unset: configMap/secret/downwardAPI/projected defaulting). A projected service
account token is the one the kubelet's token manager requests (podlife.kubelet.tokens).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from podlife.api.meta import Obj
from podlife.kubelet.envvars import field_value, resource_value

DEFAULT_MODE = 0o644
Payload = dict[str, tuple[bytes, int]]


class PayloadError(Exception):
    """A volume that cannot be set up; the text is upstream's."""


def _object_data(obj: Obj) -> dict[str, bytes]:
    if obj.get("kind") == "Secret":
        out = {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}
        out.update({k: v.encode() for k, v in (obj.get("stringData") or {}).items()})
        return out
    out = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
    out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return out


def _keyed(kind: str, obj: Obj | None, items: list[Obj] | None, optional: bool, default_mode: int) -> Payload:
    """configmap.go/secret.go MakePayload: every key at its own name, or the items listed (a missing key is an
    error unless the reference is optional)."""
    data = _object_data(obj) if obj is not None else {}
    if not items:
        return {k: (v, default_mode) for k, v in data.items()}
    out: Payload = {}
    for item in items:
        key = item.get("key", "")
        if key not in data:
            if optional:
                continue
            word = "configmap" if kind == "ConfigMap" else "secret"
            raise PayloadError(f"{word} references non-existent {'config' if kind == 'ConfigMap' else 'secret'} "
                               f"key: {key}")
        out[str(item.get("path", key))] = (data[key], int(item.get("mode", default_mode)))
    return out


def _downward(pod: Obj, items: list[Obj], default_mode: int, pod_ips: list[str], host_ips: list[str],
              capacity: dict[str, str]) -> Payload:
    out: Payload = {}
    for item in items:
        if "fieldRef" in item:
            value = field_value(pod, (item["fieldRef"] or {}).get("fieldPath", ""), pod_ips, host_ips)
        else:
            ref = item.get("resourceFieldRef") or {}
            spec: Obj = next((c for c in pod["spec"].get("containers") or () if c["name"] == ref.get("containerName")),
                        {})
            value = resource_value(pod, spec, ref, capacity)
        out[item.get("path", "")] = (value.encode(), item.get("mode", default_mode))
    return out


def volume_payload(store: Any, pod: Obj, volume: Obj, pod_ips: list[str], host_ips: list[str],
                   capacity: dict[str, str], token: Callable[[Obj], bytes]) -> Payload | None:
    """The volume's files, or None for a volume that is not made of API data (emptyDir, hostPath, …).
    ``token``: a serviceAccountToken projection's token (the token manager's)."""
    ns = pod["metadata"].get("namespace", "default")
    if "configMap" in volume:
        src = volume["configMap"] or {}
        return _keyed("ConfigMap", store.try_get("ConfigMap", ns, src.get("name", "")), src.get("items"),
                      bool(src.get("optional")), src.get("defaultMode", DEFAULT_MODE))
    if "secret" in volume:
        src = volume["secret"] or {}
        return _keyed("Secret", store.try_get("Secret", ns, src.get("secretName", "")), src.get("items"),
                      bool(src.get("optional")), src.get("defaultMode", DEFAULT_MODE))
    if "downwardAPI" in volume:
        src = volume["downwardAPI"] or {}
        return _downward(pod, src.get("items") or [], src.get("defaultMode", DEFAULT_MODE), pod_ips, host_ips,
                         capacity)
    if "projected" in volume:
        src = volume["projected"] or {}
        mode = src.get("defaultMode", DEFAULT_MODE)
        out: Payload = {}
        for source in src.get("sources") or ():
            if "configMap" in source or "secret" in source:
                kind = "ConfigMap" if "configMap" in source else "Secret"
                ref = source[kind[0].lower() + kind[1:]] or {}
                out.update(_keyed(kind, store.try_get(kind, ns, ref.get("name", "")), ref.get("items"),
                                  bool(ref.get("optional")), mode))
            elif "downwardAPI" in source:
                out.update(_downward(pod, (source["downwardAPI"] or {}).get("items") or [], mode, pod_ips, host_ips,
                                     capacity))
            elif "serviceAccountToken" in source:
                sat = source["serviceAccountToken"] or {}
                out[sat.get("path", "token")] = (token(sat), mode)
        return out
    return None


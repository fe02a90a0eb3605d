"""The container environment the kubelet builds before creating a container: pkg/kubelet/kubelet_pods.go
makeEnvironmentVariables.

``environment_error`` is the failure alone: a ConfigMap or Secret (or one of its keys) that an
``env``/``envFrom`` entry names and that does not exist, unless the reference is optional. The error fails
startContainer with CreateContainerConfigError (kuberuntime_container.go generateContainerConfig).
``make_environment`` resolves the values: ``envFrom`` first, then ``env`` in declaration order (a later entry
replaces an earlier one, keeping its place), ``$(VAR)`` references expanded against what is declared before,
``valueFrom`` from the pod's fields (the downward API), its resources, ConfigMaps and Secrets, and last the
service links (``<SERVICE>_SERVICE_HOST``…, pkg/kubelet/envvars FromServices) of the Services of the pod's
namespace when ``enableServiceLinks`` (default true) and of the ``kubernetes`` Service of ``default`` always,
for every name the container does not set itself; ``$(VAR)`` may refer to them.
"""

from __future__ import annotations

import base64
import math
import re
from fractions import Fraction
from typing import Any

from podlife.api.expansion import expand
from podlife.api.meta import Obj
from podlife.api.quantity import parse_quantity

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


def make_environment(store: Any, pod: Obj, container: Obj, pod_ips: list[str], host_ips: list[str],
                     node_capacity: dict[str, str]) -> list[tuple[str, str]]:
    """The resolved environment, for a container whose ``environment_error`` is None."""
    ns = pod["metadata"].get("namespace", "default")
    env: dict[str, str] = {}
    services = service_env(store, pod)
    for source in container.get("envFrom") or ():
        for ref_key in ("configMapRef", "secretRef"):
            ref = source.get(ref_key)
            obj = store.try_get(_KINDS[ref_key][0], ns, ref.get("name", "")) if ref is not None else None
            if obj is not None:
                for k, v in _values(obj).items():
                    env[source.get("prefix", "") + k] = v
    for var in container.get("env") or ():
        value = var.get("value") or ""
        value_from = var.get("valueFrom")
        if value:
            value = expand(value, {**services, **env})
        elif value_from:
            if "fieldRef" in value_from:
                value = field_value(pod, value_from["fieldRef"].get("fieldPath", ""), pod_ips, host_ips)
            elif "resourceFieldRef" in value_from:
                value = resource_value(pod, container, value_from["resourceFieldRef"], node_capacity)
            else:
                ref_key = "configMapKeyRef" if "configMapKeyRef" in value_from else "secretKeyRef"
                ref = value_from.get(ref_key) or {}
                obj = store.try_get(_KINDS[ref_key][0], ns, ref.get("name", ""))
                found = _values(obj) if obj is not None else {}
                if ref.get("key", "") not in found:
                    continue   # optional, as environment_error let it through
                value = found[ref["key"]]
        env[var["name"]] = value
    for k, v in services.items():
        env.setdefault(k, v)
    return list(env.items())


MASTER_SERVICE_NAMESPACE = "default"   # the kubelet's masterServiceNamespace
MASTER_SERVICES = ("kubernetes",)      # kubelet_pods.go masterServices


def service_env(store: Any, pod: Obj) -> dict[str, str]:
    """kubelet_pods.go getServiceEnvVarMap, then pkg/kubelet/envvars FromServices: for each Service with a
    cluster IP, NAME_SERVICE_HOST, NAME_SERVICE_PORT (its first port), NAME_SERVICE_PORT_<PORTNAME> per named
    port, and the Docker link variables NAME_PORT, NAME_PORT_<port>_<PROTO>{,_PROTO,_PORT,_ADDR}."""
    ns = pod["metadata"].get("namespace", "default")
    links = (pod.get("spec") or {}).get("enableServiceLinks", True) is not False
    # they change only when a Service does: made once per namespace and links until a Service is written
    cache = store.informer_caches.setdefault("service env", {})
    writes = store.writes.get("Service", 0)
    kept = cache.get((ns, links))
    if kept is None or kept[0] != writes:
        kept = cache[(ns, links)] = (writes, _service_env(store, ns, links))
    return dict(kept[1])


def _service_env(store: Any, ns: str, links: bool) -> dict[str, str]:
    chosen: dict[str, Obj] = {}
    for svc in store.list("Service", MASTER_SERVICE_NAMESPACE):
        if svc["metadata"]["name"] in MASTER_SERVICES and _ip_set(svc):
            chosen[svc["metadata"]["name"]] = svc
    if links:
        for svc in store.list("Service", ns):
            if _ip_set(svc):
                chosen[svc["metadata"]["name"]] = svc   # the namespace's own wins over a master service's name
    out: dict[str, str] = {}
    for name in sorted(chosen):
        spec = chosen[name].get("spec") or {}
        ports = spec.get("ports") or []
        if not ports:
            continue
        var = name.upper().replace("-", "_")
        ip = spec["clusterIP"]
        host = f"[{ip}]" if ":" in ip else ip
        out[f"{var}_SERVICE_HOST"] = ip
        out[f"{var}_SERVICE_PORT"] = str(ports[0].get("port", ""))
        for port in ports:
            if port.get("name"):
                out[f"{var}_SERVICE_PORT_{port['name'].upper().replace('-', '_')}"] = str(port.get("port", ""))
        for i, port in enumerate(ports):
            proto = port.get("protocol", "TCP")
            url = f"{proto.lower()}://{host}:{port.get('port', '')}"
            prefix = f"{var}_PORT_{port.get('port', '')}_{proto.upper()}"
            if i == 0:
                out[f"{var}_PORT"] = url
            out[prefix] = url
            out[f"{prefix}_PROTO"] = proto.lower()
            out[f"{prefix}_PORT"] = str(port.get("port", ""))
            out[f"{prefix}_ADDR"] = ip
    return out


def _ip_set(svc: Obj) -> bool:
    ip = (svc.get("spec") or {}).get("clusterIP") or ""
    return ip not in ("", "None")


def _values(obj: Obj) -> dict[str, str]:
    """A ConfigMap's data, or a Secret's data decoded (stringData is merged into data on write)."""
    if obj.get("kind") == "Secret":
        out = {k: _decode(v) for k, v in (obj.get("data") or {}).items()}
        out.update(obj.get("stringData") or {})
        return out
    return dict(obj.get("data") or {})


def _decode(v: str) -> str:
    try:
        return base64.b64decode(v, validate=True).decode("utf-8", "replace")
    except ValueError:
        return v   # the registry validates Secret data; a value that is not base64 is taken as written


_LABEL_OR_ANNOTATION = re.compile(r"metadata\.(labels|annotations)\['(.*)'\]$")


def field_value(pod: Obj, path: str, pod_ips: list[str], host_ips: list[str]) -> str:
    """podFieldSelectorRuntimeValue, then pkg/fieldpath ExtractFieldPathAsString."""
    md, spec = pod["metadata"], pod.get("spec") or {}
    simple = {"spec.nodeName": spec.get("nodeName", ""),
              "spec.serviceAccountName": spec.get("serviceAccountName", ""),
              "status.hostIP": host_ips[0] if host_ips else "", "status.hostIPs": ",".join(host_ips),
              "status.podIP": pod_ips[0] if pod_ips else "", "status.podIPs": ",".join(pod_ips),
              "metadata.name": md.get("name", ""), "metadata.namespace": md.get("namespace", ""),
              "metadata.uid": md.get("uid", "")}
    if path in simple:
        return simple[path]
    if path in ("metadata.labels", "metadata.annotations"):
        values = md.get(path.split(".")[1]) or {}
        # pkg/fieldpath FormatMap: sorted key="value" lines
        return "\n".join(f'{k}="{values[k]}"' for k in sorted(values))
    m = _LABEL_OR_ANNOTATION.match(path)
    if m:
        return str((md.get(m.group(1)) or {}).get(m.group(2), ""))
    return ""


def resource_value(pod: Obj, container: Obj, ref: Obj, node_capacity: dict[str, str]) -> str:
    """pkg/api/v1/resource ExtractContainerResourceValue: the quantity divided by the divisor, rounded up; a
    limit the container does not set is the node's allocatable (MergeContainerResourceLimits)."""
    which, _, resource = (ref.get("resource") or "").partition(".")
    resources = (container.get("resources") or {}).get(which) or {}
    quantity = resources.get(resource)
    if quantity is None and which == "limits":
        quantity = node_capacity.get(resource)
    divisor = parse_quantity(ref.get("divisor") or "1") or Fraction(1)
    value = parse_quantity(quantity) if quantity is not None else Fraction(0)
    return str(math.ceil(value / divisor))

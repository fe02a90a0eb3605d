"""Where an APIService's Service is reached: one of its endpoints, as kube-apiserver resolves it with
--enable-aggregator-routing (staging/src/k8s.io/apiserver/pkg/util/proxy/proxy.go ResolveEndpoint). podlife
routes to endpoints rather than the ClusterIP (ResolveCluster, upstream's default) because its ClusterIPs answer
only where podlife's kube-proxy could put them on an interface, while a process-runtime pod's address answers
wherever the pod runs. The first address of the first subset with the port is taken (upstream: a random one)."""

from __future__ import annotations

from typing import Any


class ResolveError(Exception):
    pass


def endpoint(store: Any, namespace: str, name: str, port: int) -> tuple[str, int]:
    svc = store.try_get("Service", namespace, name)
    if svc is None:
        raise ResolveError(f'services "{name}" not found')
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    if kind not in ("ClusterIP", "LoadBalancer", "NodePort"):
        raise ResolveError(f'unsupported service type "{kind}"')
    svc_port = next((p for p in spec.get("ports") or () if p.get("port") == port), None)
    if svc_port is None:
        raise ResolveError(f'no service port {port} found for service "{name}"')
    eps = store.try_get("Endpoints", namespace, name)
    if eps is None:
        raise ResolveError(f'endpoints "{name}" not found')
    subsets = eps.get("subsets") or []
    if not subsets:
        raise ResolveError(f'no endpoints available for service "{name}"')
    for ss in subsets:
        addresses = ss.get("addresses") or []
        if not addresses:
            continue
        for p in ss.get("ports") or ():
            if (p.get("name") or "") == (svc_port.get("name") or ""):
                return addresses[0]["ip"], int(p["port"])
    raise ResolveError(f'no endpoints available for service "{name}"')


def host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

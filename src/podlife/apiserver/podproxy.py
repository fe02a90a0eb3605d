"""``pods/proxy`` and ``services/proxy`` for the process runtime: the request goes on to the pod's port on its
loopback address (pkg/registry/core/pod/strategy.go ResourceLocation; pkg/registry/core/service/storage
ResourceLocation, then the proxy handler of staging/src/k8s.io/apimachinery/pkg/util/proxy).

The name is ``[scheme:]name[:port]`` (utilnet.SplitSchemeNamePort). A pod without a port given is reached on its
first declared container port, or port 80 when it declares none. A Service's port is named or numbered; the
request goes to a ready endpoint of its EndpointSlices (upstream picks one at random; podlife the first, in
the slices' order) on that port's target port. Upstream refuses loopback pod addresses (IsProxyableIP); the
process runtime's pods have nothing else, so podlife allows them. The simulated runtimes' pods serve nothing:
there the proxy answers 400, saying so (not upstream's 503 for an unreachable pod: nothing could ever answer).
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web

from podlife.api.errors import ApiError
from podlife.apiserver.podexec import runtime_of

# hop-by-hop headers (net/http/httputil) and what belongs to the API server alone
_DROP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
         "transfer-encoding", "upgrade", "authorization", "host", "content-length"}


def split_scheme_name_port(ident: str, kind: str) -> tuple[str, str, str]:
    """utilnet.SplitSchemeNamePort: ``name``, ``name:port`` or ``scheme:name:port`` (scheme http or https);
    anything else is the registry's BadRequest (``invalid pod request``)."""
    parts = ident.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        scheme, name, port = "", "", ""
    if not name or scheme not in ("", "http", "https"):
        raise ApiError(400, "BadRequest", f"invalid {kind} request {ident!r}")
    return scheme, name, port


def _unavailable(message: str) -> ApiError:
    return ApiError(503, "ServiceUnavailable", message)


def _simulated(what: str) -> ApiError:
    return ApiError(400, "BadRequest", f"{what} runs in a simulated runtime, where nothing serves a port: the "
                                       "proxy reaches pods of podlife up --runtime process")


def pod_location(server: Any, namespace: str, ident: str) -> tuple[str, str, int]:
    scheme, name, port = split_scheme_name_port(ident, "pod")
    pod = server.store.get("Pod", namespace, name)
    ip = (pod.get("status") or {}).get("podIP") or ""
    if runtime_of(server, pod) is None:
        raise _simulated(f'pod "{name}"')
    if not ip:
        raise _unavailable(f'address not allowed: pod "{name}" has no IP')
    if not port:
        declared = [p.get("containerPort") for c in (pod.get("spec") or {}).get("containers") or []
                    for p in c.get("ports") or []]
        port = str(declared[0]) if declared else "80"
    if not port.isdigit():
        raise ApiError(400, "BadRequest", f"invalid port {port!r}")
    return scheme or "http", ip, int(port)


def service_location(server: Any, namespace: str, ident: str) -> tuple[str, str, int]:
    scheme, name, port_id = split_scheme_name_port(ident, "service")
    svc = server.store.get("Service", namespace, name)
    if not any(kl.runtime.writes_logs for kl in server.cluster.kubelets.values()):
        raise _simulated(f'every pod of service "{name}"')
    ports = (svc.get("spec") or {}).get("ports") or []
    chosen = next((p for p in ports if not port_id or p.get("name") == port_id
                   or str(p.get("port")) == port_id), None)
    if chosen is None:
        raise _unavailable(f'no service port "{port_id}" found for service "{name}"')
    for sl in server.store.list("EndpointSlice", namespace):
        if (sl["metadata"].get("labels") or {}).get("kubernetes.io/service-name") != name:
            continue
        port = next((p.get("port") for p in sl.get("ports") or [] if (p.get("name") or "") ==
                     (chosen.get("name") or "")), None)
        for ep in sl.get("endpoints") or []:
            if port is not None and (ep.get("conditions") or {}).get("ready", True) and ep.get("addresses"):
                return scheme or "http", ep["addresses"][0], int(port)
    raise _unavailable(f'no endpoints available for service "{name}"')


async def forward(request: web.Request, location: tuple[str, str, int], rest: str) -> web.Response:
    """The request, on to the location; its answer back."""
    scheme, ip, port = location
    url = f"{scheme}://{ip}:{port}/{rest}"
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP}
    body = await request.read()
    try:
        async with aiohttp.ClientSession(auto_decompress=False) as session:
            async with session.request(request.method, url, params=request.query, headers=headers,
                                       data=body or None, allow_redirects=False, ssl=False,
                                       timeout=aiohttp.ClientTimeout(total=60)) as resp:
                data = await resp.read()
                out = {k: v for k, v in resp.headers.items() if k.lower() not in _DROP}
                return web.Response(status=resp.status, body=data, headers=out)
    except (aiohttp.ClientError, OSError, TimeoutError) as e:
        # the proxy's ErrorResponder: 503 with what the dial said
        raise _unavailable(f"error trying to reach service: {e}") from e

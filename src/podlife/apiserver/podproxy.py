"""``pods/proxy`` and ``services/proxy`` for the process runtime: the request goes on to the pod's port on its
loopback address (pkg/registry/core/pod/strategy.go ResourceLocation; pkg/registry/core/service/storage
ResourceLocation, then the proxy handler of staging/src/k8s.io/apimachinery/pkg/util/proxy).

The name is ``[scheme:]name[:port]`` (utilnet.SplitSchemeNamePort). A pod without a port given is reached on its
first declared container port, or port 80 when it declares none. A Service's port is named or numbered; the
request goes to a ready endpoint of its EndpointSlices (upstream picks one at random; podlife the first, in
the slices' order) on that port's target port. Upstream refuses loopback pod addresses (IsProxyableIP); the
process runtime's pods have nothing else, so podlife allows them. The simulated runtimes' pods serve nothing:
there the proxy answers 400, saying so (not upstream's 503 for an unreachable pod: nothing could ever answer).

Every method upstream proxies is proxied (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS: proxyMethods of both
registries). A GET or HEAD of ``NAME/proxy`` without a path is redirected (301) to ``NAME/proxy/``, and the answer
goes through the proxy transport's rewriting (podlife.apiserver.proxyrewrite), as upstream's pods/proxy and
services/proxy ask for.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import hdrs, web
from multidict import CIMultiDict
from yarl import URL

from podlife.api.errors import ApiError
from podlife.apiserver.podexec import runtime_of
from podlife.apiserver.proxyrewrite import (CORS_HEADERS, escape_path, forwarded_uri, join_preserving_trailing_slash,
                                            path_prepend, rewrite_body, rewrite_url)

# hop-by-hop headers (net/http/httputil) and what belongs to the API server alone
_DROP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
         "transfer-encoding", "upgrade", "authorization", "host", "content-length"}
# httputil.ReverseProxy sends no User-Agent or Accept of its own; Go's transport asks for gzip itself and undoes
# it, so the client gets the encoding it asked for: passing on the client's Accept-Encoding alone does the same
_NOT_ADDED = (hdrs.USER_AGENT, hdrs.ACCEPT, hdrs.ACCEPT_ENCODING)


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


def pod_location(server: Any, namespace: str, ident: str) -> tuple[str, str]:
    """pod ResourceLocation: scheme and host (the pod's IP, with the port where one is given or declared)."""
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
        port = str(declared[0]) if declared else ""
    if port and not port.isdigit():
        raise ApiError(400, "BadRequest", f"invalid port {port!r}")
    return scheme or "http", f"{ip}:{port}" if port else ip   # no port: the scheme's own (80 for http)


def service_location(server: Any, namespace: str, ident: str) -> tuple[str, str]:
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
                return scheme or "http", f"{ep['addresses'][0]}:{port}"
    raise _unavailable(f'no endpoints available for service "{name}"')


def proxied_path(request_path: str, name: str) -> str:
    """handlers/get.go getRequestOptions: the path after ``NAME/proxy`` (the options' path), with a leading '/'
    where it is not empty and the request's trailing '/'."""
    marker = f"/{name}/proxy"
    rest = request_path.split(marker, 1)[1] if marker in request_path else ""
    p = rest.strip("/")
    p = "/" + p if p else ""
    return p + "/" if request_path.endswith("/") and not p.endswith("/") else p


async def forward(request: web.Request, location: tuple[str, str], proxied: str) -> web.StreamResponse:
    """upgradeaware.go UpgradeAwareHandler.ServeHTTP with the wrapped transport (transport.go): the request, on
    to the location's path; its answer back, links into the proxied server rewritten to go through the proxy."""
    scheme, host = location
    handler_path = join_preserving_trailing_slash("", proxied)   # the registry's location.Path
    path = handler_path + "/" if request.path.endswith("/") and not handler_path.endswith("/") else handler_path
    raw_query = request.rel_url.raw_query_string
    if not path and request.method in ("GET", "HEAD"):   # proxyRedirectsforRootPath (issue 4958)
        return web.Response(status=301, headers={"Location": request.path + "/" + (f"?{raw_query}" if raw_query
                                                                                    else "")})
    prepend = path_prepend(request.path, handler_path)
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP}
    headers["X-Forwarded-Uri"] = forwarded_uri(prepend, path)
    peer = request.remote or ""   # httputil.ReverseProxy: the client's address appended to X-Forwarded-For
    prior = request.headers.getall("X-Forwarded-For", [])
    headers["X-Forwarded-For"] = ", ".join([*prior, peer]) if prior else peer
    request_host = request.headers.get("Host", "")
    if request_host:
        headers["Host"] = request_host   # the reverse proxy keeps the request's Host (UseLocationHost is unset)
    url = URL(f"{scheme}://{host}{escape_path(path)}" + (f"?{raw_query}" if raw_query else ""), encoded=True)
    body = await request.read()
    try:
        # only the client's own Accept-Encoding: a body comes back as the client asked for it
        async with aiohttp.ClientSession(auto_decompress=False, skip_auto_headers=_NOT_ADDED) as session:
            async with session.request(request.method, url, headers=headers, data=body or None,
                                       allow_redirects=False, ssl=False,
                                       timeout=aiohttp.ClientTimeout(total=60)) as resp:
                data = await resp.read()
                out = CIMultiDict((k, v) for k, v in resp.headers.items() if k.lower() not in _DROP)
    except (aiohttp.ClientError, OSError, TimeoutError) as e:
        # the proxy's ErrorResponder: 503 with what the dial said
        raise _unavailable(f"error trying to reach service: {e}") from e
    for name in CORS_HEADERS:
        out.popall(name, None)
    if "Location" in out:
        redirect = rewrite_url(out["Location"], host, request_host, prepend)
        if redirect is None:
            raise ApiError(500, "InternalError", "Internal error occurred: error trying to parse Location header")
        out["Location"] = redirect
    elif out.get("Content-Type", "").split(";", 1)[0].strip() == "text/html":
        rewritten = rewrite_body(data, out.get("Content-Encoding", ""), host, request_host, prepend)
        data = data if rewritten is None else rewritten
    return web.Response(status=resp.status, body=data, headers=out)

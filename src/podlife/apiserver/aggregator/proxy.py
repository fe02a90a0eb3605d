"""Requests for a service-backed APIService's group version, passed to its server (staging/src/k8s.io/
kube-aggregator/pkg/apiserver/handler_proxy.go proxyHandler.ServeHTTP): 503 "service unavailable" while the
APIService is not Available or its Service has no endpoint; otherwise the request goes over HTTPS to an
endpoint (podlife.apiserver.aggregator.resolve), the server verified against spec.caBundle as
NAME.NAMESPACE.svc unless insecureSkipTLSVerify, with the front-proxy client certificate and the user in the
request-header headers (the caller's Authorization and X-Remote-* headers are not passed on). The answer
streams back as it comes (a watch stays open); a connection that fails is 503 with the error's text
(handler_proxy.go responder.Error). Upgrade requests (exec, attach, port-forward on an extension server's
resources) are not passed on."""

from __future__ import annotations

import ssl
from typing import Any

import aiohttp
from aiohttp import web

from podlife.api.meta import Obj
from podlife.apiserver.aggregator import resolve
from podlife.apiserver.aggregator.frontproxy import FrontProxy, user_headers

# hop-by-hop headers (net/http/httputil ReverseProxy removes them both ways) and what the aggregator replaces
_DROP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te",
                   "trailer", "transfer-encoding", "upgrade", "host", "authorization", "content-length"})
_MAX_CONTEXTS = 64
_AUTO_HEADERS = ("Content-Type", "User-Agent", "Accept", "Accept-Encoding")
_REMOTE = ("x-remote-user", "x-remote-group", "x-remote-extra-")


def available(obj: Obj) -> bool:
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or ())


def http_error(text: str, status: int) -> web.Response:
    """Go's http.Error: the text and a newline, as plain text."""
    return web.Response(status=status, body=(text + "\n").encode(),
                        headers={"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"})


class Proxy:
    def __init__(self, store: Any, front: FrontProxy | None) -> None:
        self.store = store
        self.front = front
        self._contexts: dict[tuple[str, bool], ssl.SSLContext] = {}
        self._session: aiohttp.ClientSession | None = None

    def context(self, ca_bundle: str, insecure: bool) -> ssl.SSLContext | None:
        if self.front is None:
            return None
        key = (ca_bundle, insecure)
        if key not in self._contexts:
            if len(self._contexts) >= _MAX_CONTEXTS:   # bundles come from clients: keep a few, not every one
                self._contexts.pop(next(iter(self._contexts)))
            self._contexts[key] = self.front.client_context(ca_bundle or None, insecure)
        return self._contexts[key]

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def serve(self, request: web.Request, apiservice: Obj,
                    user: tuple[str, list[str], dict[str, list[str]]]) -> web.StreamResponse:
        spec = apiservice.get("spec") or {}
        ref = spec.get("service") or {}
        if not available(apiservice):
            return http_error("service unavailable", 503)
        ns, name = ref.get("namespace") or "", ref.get("name") or ""
        try:
            host, port = resolve.endpoint(self.store, ns, name, ref.get("port") or 443)
        except resolve.ResolveError:
            return http_error("service unavailable", 503)
        try:
            ctx = self.context(spec.get("caBundle") or "", bool(spec.get("insecureSkipTLSVerify")))
        except (ValueError, ssl.SSLError) as e:
            return http_error(str(e), 500)   # transportBuildingError
        if ctx is None:
            return http_error("service unavailable", 503)
        url = f"https://{resolve.host_port(host, port)}{request.raw_path}"
        # the body streams on with the length it came with (chunked when it came chunked)
        headers = [(k, v) for k, v in request.headers.items()
                   if (k.lower() not in _DROP or k.lower() == "content-length") and not k.lower().startswith(_REMOTE)]
        headers += user_headers(*user)
        if self._session is None:
            self._session = aiohttp.ClientSession(auto_decompress=False)
        body = request.content if request.can_read_body else None
        try:
            upstream = await self._session.request(
                request.method, url, headers=headers, data=body, ssl=ctx, allow_redirects=False,
                # the request's own headers only: a body without a Content-Type stays without one (the extension
                # server then reads it as its first media type, JSON), not aiohttp's application/octet-stream
                skip_auto_headers=_AUTO_HEADERS,
                server_hostname=f"{name}.{ns}.svc", timeout=aiohttp.ClientTimeout(total=None, sock_connect=30))
        except aiohttp.ClientConnectorError as e:
            return http_error(f"dial tcp {e.host}:{e.port}: connect: {_os_why(e)}", 503)
        except (aiohttp.ClientError, OSError, ssl.SSLError) as e:
            return http_error(str(e), 503)
        async with upstream:
            resp = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for k, v in upstream.headers.items():
                if k.lower() not in _DROP or k.lower() == "content-length":
                    resp.headers.add(k, v)
            await resp.prepare(request)
            try:
                async for chunk in upstream.content.iter_any():
                    await resp.write(chunk)   # each piece as it comes: a watch's events are not held back
            except (aiohttp.ClientError, ConnectionResetError):
                pass   # the server or the client went away: the answer ends there
            await resp.write_eof()
            return resp


def _os_why(e: aiohttp.ClientConnectorError) -> str:
    import os

    errno = e.os_error.errno
    return os.strerror(errno).lower() if errno else str(e.os_error)

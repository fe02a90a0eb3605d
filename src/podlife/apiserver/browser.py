"""Defences against a web browser on the same machine: a page the user opens must not drive ``podlife up``.

A loopback server without authentication is reachable by any page in the user's browser: a "simple" cross-origin
request (a ``text/plain`` POST, a form, a WebSocket) is sent without a CORS preflight, and DNS rebinding makes a
foreign name resolve to 127.0.0.1 so that the page can read the answers too. Three checks, before anything else
runs (an aiohttp middleware):

- Host: the name the client connected to must be one this server answers to (localhost, 127.0.0.1, ::1, the
  --address and the names of its certificate). A rebound name (``Host: evil.example``) is refused.
- Origin: a browser names the page's origin on every request that is not a plain GET/HEAD and on every WebSocket;
  one that is not the server's own (scheme, host and port) is refused. kubectl and client libraries send none;
  Go's websocket clients send ``http://localhost``, which a loopback server accepts (``_loopback_default``).
- Content-Type: a write with a body must be JSON, YAML, protobuf or a patch type, as the API server accepts
  (negotiation.NewUnsupportedMediaTypeError); the types a page may send without a preflight (text/plain, forms)
  are refused, podlife's own endpoints included.

The API server itself has no such checks (a browser cannot use its credentials); what it does is answer CORS
only for --cors-allowed-origins (staging/src/k8s.io/apiserver/pkg/server/filters/cors.go) and rely on
authentication. podlife serves loopback without authentication, so it refuses what a browser alone would send.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from podlife.api import patch as patches
from podlife.api.errors import ApiError
from podlife.apiserver.bodies import JSON, WRITE_TYPES
from podlife.apiserver.status import status_body, unsupported_media

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
LOOPBACK_ADDRESSES = frozenset(LOOPBACK_NAMES)   # as _name gives them
DEFAULT_PORTS = {"http": 80, "https": 443}
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# every body type some endpoint of the server decodes (bodies.decode, patch.patch_types); which one a given
# endpoint takes is its own handler's check
ACCEPTED = frozenset({*WRITE_TYPES, *patches.patch_types(custom=False)})
CONTROL_TYPES = [JSON]    # /podlife/faults reads JSON


def _name(host: str) -> str:
    """A host name or IP address as compared: lower case, no trailing dot, an IP address in its canonical form."""
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def split_host(value: str) -> tuple[str, int | None] | None:
    """A Host header (or an Origin's authority) as (name, port); None when it is not one: ``name``,
    ``name:port``, ``[v6]``, ``[v6]:port``."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1:]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    elif value.count(":") == 1:
        name, port = value.split(":")
    elif ":" in value:
        return None   # a bare IPv6 address is not a valid Host (RFC 3986 needs the brackets)
    else:
        name, port = value, None
    if not name:
        return None
    if port is None or port == "":
        return _name(name), None
    if not port.isdigit() or int(port) > 65535:
        return None
    return _name(name), int(port)


@dataclass(frozen=True, eq=False)   # hashed by identity: a key of the checks' caches
class Served:
    """What this server answers to: its scheme and the names clients may connect with."""
    scheme: str
    names: frozenset[str]
    any_address: bool = False   # bound to 0.0.0.0 or ::: reached by any of the machine's addresses

    @classmethod
    def of(cls, scheme: str, address: str, certificate_names: tuple[str, ...] = ()) -> "Served":
        names = {_name(n) for n in (*LOOPBACK_NAMES, address, *certificate_names)}
        try:
            unspecified = ipaddress.ip_address(_name(address)).is_unspecified
        except ValueError:
            unspecified = False
        return cls(scheme, frozenset(names), unspecified)

    def serves(self, name: str) -> bool:
        if name in self.names:
            return True
        if not self.any_address:
            return False
        # any address of the machine may be asked for; an address is not a name DNS can rebind
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return False


def _refuse(err: ApiError) -> web.Response:
    import orjson

    return web.Response(body=orjson.dumps(status_body(err)) + b"\n", status=err.code,
                        headers={"Content-Type": "application/json"})


# clients repeat their Host and Origin: each pair is judged once (parsing addresses costs more than a request)
@functools.lru_cache(maxsize=256)
def check_host(served: Served, host: str | None) -> ApiError | None:
    if host is None:
        return None   # an HTTP/1.0 client; every browser names the host
    parsed = split_host(host)
    if parsed is not None and served.serves(parsed[0]):
        return None
    # 421 Misdirected Request (RFC 9110 15.5.20): the request names a host this server does not answer for, the
    # case of DNS rebinding; it is neither a malformed request (400) nor a matter of permissions (403)
    return ApiError(421, "", f'the Host "{host}" of the request is not served by podlife up (it answers to '
                             f'{", ".join(sorted(served.names))}); a web page that rebinds a name to this address '
                             "is refused")


def _origin(value: str) -> tuple[str, str, int | None] | None:
    """An origin (RFC 6454) as (scheme, host, port), the scheme's port made explicit; None when it is not one
    (``null``, a path or user info)."""
    try:
        url = urlsplit(value)
    except ValueError:
        return None
    scheme = url.scheme.lower()
    authority = split_host(url.netloc) if scheme in DEFAULT_PORTS and not url.path and "@" not in url.netloc \
        else None
    if authority is None:
        return None
    return scheme, authority[0], authority[1] if authority[1] is not None else DEFAULT_PORTS[scheme]


@functools.lru_cache(maxsize=256)
def check_origin(served: Served, origin: str | None, host: str | None) -> ApiError | None:
    if origin is None:
        return None   # kubectl and client libraries; a browser names the origin of every write and WebSocket
    own = _origin(f"{served.scheme}://{host}") if host is not None else None
    theirs = _origin(origin)
    if own is not None and theirs == own:
        return None
    if own is not None and theirs is not None and _loopback_default(theirs) and own[1] in LOOPBACK_ADDRESSES:
        return None
    mine = f"{served.scheme}://{host}" if host is not None else "its own"
    return ApiError(403, "Forbidden", f'cross-origin request from "{origin}" refused: podlife up serves only '
                                      f"requests from {mine} origin or without an Origin header (kubectl, "
                                      "client libraries)")


def _loopback_default(origin: tuple[str, str, int | None]) -> bool:
    """``http://localhost``: the Origin golang.org/x/net/websocket clients name by convention (the conformance
    suite's websocket helper, test/e2e/framework/websocket), a loopback name on its scheme's own port. A page
    there is served from this machine on a privileged port (80, 443), by whoever may bind one; a foreign
    page, or another port of this machine, stays refused."""
    return origin[1] in LOOPBACK_ADDRESSES and origin[2] == DEFAULT_PORTS[origin[0]]


def check_media_type(request: web.Request) -> ApiError | None:
    if request.method not in WRITES or not request.body_exists or "Upgrade" in request.headers:
        return None
    content_type = request.headers.get("Content-Type")
    if content_type is None:
        # NegotiateInputSerializerForMediaType reads a body without a type as JSON; a browser's write always
        # names its Origin, checked above
        return None
    media = content_type.split(";", 1)[0].strip().lower()
    if request.path.startswith("/podlife/"):
        return None if media == JSON else unsupported_media(CONTROL_TYPES)
    if media in ACCEPTED:
        return None
    if request.method == "PATCH":
        return unsupported_media(patches.patch_types(custom=False))
    return unsupported_media(WRITE_TYPES)


def guard(served: Callable[[], Served]) -> Any:
    """The middleware; ``served`` gives what the server answers to when a request comes."""
    @web.middleware
    async def middleware(request: web.Request,
                         handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        s = served()
        host = request.headers.get("Host")
        err = (check_host(s, host) or check_origin(s, request.headers.get("Origin"), host)
               or check_media_type(request))
        if err is not None:
            return _refuse(err)
        return await handler(request)
    return middleware

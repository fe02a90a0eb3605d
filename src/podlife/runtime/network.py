"""HTTP GET and TCP connect to a container's address, as the kubelet's probers and HTTP hook handler do them
(pkg/probe/http DoHTTPProbe, pkg/probe/tcp DoTCPProbe, pkg/kubelet/lifecycle/handlers.go runHTTPHandler),
with the texts they report, worded as Go's net/http and net errors are.

A response with a status from 200 to 399 is a success; redirects are not followed (a 3xx counts as the
success upstream reports for a redirect it does not follow). The request is HTTP/1.1 with
``Connection: close`` (the probers disable keep-alives). An HTTPS probe does not verify the server's certificate
(pkg/probe/http/http.go New: tls.Config{InsecureSkipVerify: true}).
"""

from __future__ import annotations

import asyncio
import errno
import os
import ssl

from podlife.api.meta import Obj

MAX_BODY = 10 * 1024   # maxRespBodyLength
HTTP_TO_HTTPS = "http: server gave HTTP response to HTTPS client"
SUCCESS, FAILURE = "Success", "Failure"


def resolve_port(port: int | str | None, container: Obj) -> int:
    """probe.ResolveContainerPort: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        number = port
    else:
        named = [p.get("containerPort") for p in container.get("ports") or () if p.get("name") == port]
        if named:
            number = int(named[0])
        elif str(port).isdigit():
            number = int(str(port))
        else:
            raise ValueError(f"couldn't find port: {port} in {container.get('name', '')}")
    if not 0 < number < 65536:
        raise ValueError(f"invalid port number: {number}")
    return number


def dial_error(host: str, port: int, e: BaseException, net: str = "tcp") -> str:
    """Go's net.Dial error text (``net``: the network it was asked for, tcp, tcp4 or tcp6)."""
    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(e, asyncio.TimeoutError):
        return f"dial {net} {addr}: i/o timeout"
    num = getattr(e, "errno", None)
    text = {errno.ECONNREFUSED: "connection refused", errno.EHOSTUNREACH: "no route to host",
            errno.ENETUNREACH: "network is unreachable", errno.EADDRNOTAVAIL: "cannot assign requested address",
            errno.ECONNRESET: "connection reset by peer"}.get(num or 0)
    return f"dial {net} {addr}: connect: {text or (os.strerror(num) if num else str(e)).lower()}"


async def tcp_check(host: str, port: int, timeout: float) -> tuple[str, str]:
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, asyncio.TimeoutError) as e:
        return FAILURE, dial_error(host, port, e)
    writer.close()
    return SUCCESS, ""


async def http_probe(host: str, port: int, path: str, headers: list[Obj], timeout: float, user_agent: str,
                     scheme: str = "HTTP") -> tuple[str, str]:
    """DoHTTPProbe: (Success | Failure, output): the body on success, the reason on failure."""
    code, text = await http_get(host, port, path, headers, timeout, user_agent, scheme)
    if code is None:
        return FAILURE, text
    if 200 <= code < 400:
        return SUCCESS, text
    return FAILURE, f"HTTP probe failed with statuscode: {code}"


async def http_get(host: str, port: int, path: str, headers: list[Obj], timeout: float | None, user_agent: str,
                   scheme: str = "HTTP") -> tuple[int | None, str]:
    """(status code, body), or (None, the error) when no response came (in ``timeout`` seconds, if given)."""
    path = path if path.startswith("/") else "/" + path
    tls = scheme.upper() == "HTTPS"
    url = f"{'https' if tls else 'http'}://{host if ':' not in host else f'[{host}]'}:{port}{path}"
    try:
        return await asyncio.wait_for(_get(host, port, path, headers, user_agent, url, _insecure() if tls else None),
                                      timeout)
    except asyncio.TimeoutError:
        return None, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'


def _insecure() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def _get(host: str, port: int, path: str, headers: list[Obj], user_agent: str, url: str,
               tls: ssl.SSLContext | None = None) -> tuple[int | None, str]:
    try:
        reader, writer = await asyncio.open_connection(host, port, ssl=tls)
    except ssl.SSLError as e:
        if e.reason == "WRONG_VERSION_NUMBER":
            # net/http transport.go: the TLS record header read was "HTTP/" (OpenSSL: not a TLS version)
            return None, f'Get "{url}": {HTTP_TO_HTTPS}'
        return None, f'Get "{url}": remote error: tls: {e.reason or e}'
    except OSError as e:
        return None, f'Get "{url}": {dial_error(host, port, e)}'
    try:
        given = {h.get("name", "").lower(): str(h.get("value", "")) for h in headers}
        lines = [f"GET {path} HTTP/1.1", f"Host: {given.pop('host', f'{host}:{port}')}",
                 f"User-Agent: {given.pop('user-agent', user_agent)}", f"Accept: {given.pop('accept', '*/*')}",
                 "Connection: close"]
        lines += [f"{h.get('name')}: {h.get('value', '')}" for h in headers
                  if h.get("name", "").lower() in given]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace"))
        await writer.drain()
        status_line = await reader.readline()
        parts = status_line.decode("latin-1").split()
        if len(parts) < 2 or not parts[1].isdigit():
            return None, f'Get "{url}": net/http: HTTP/1.x transport connection broken: malformed HTTP response'
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        body = await reader.read(MAX_BODY)
        return int(parts[1]), body.decode("utf-8", "replace")
    except OSError as e:
        return None, f'Get "{url}": read tcp: {os.strerror(e.errno) if e.errno else e}'
    finally:
        writer.close()

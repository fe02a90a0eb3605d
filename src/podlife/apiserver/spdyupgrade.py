"""SPDY/3.1 straight over the HTTP connection, as kubectl before 1.30 (and client-go's SPDY executor, the
conformance suite's ExecWithOptions) opens exec, attach and port-forward: a request with ``Connection:
Upgrade``, ``Upgrade: SPDY/3.1`` and the stream protocols it speaks in ``X-Stream-Protocol-Version``; the
answer is 101 Switching Protocols naming the one chosen, and from then on the connection carries SPDY frames
(podlife.apiserver.spdy3). The handshake is upstream's: httpstream.Handshake picks the first protocol the
client names that the server speaks (403 when none, 400 without the header), then spdy.UpgradeResponse
checks the upgrade headers (400) and switches (staging/src/k8s.io/apimachinery/pkg/util/httpstream).

aiohttp's HTTP parser switches protocols only for WebSocket; this takes the connection over the way its
WebSocket response does: after the 101, the request's protocol hands every byte that arrives to a parser of
ours (``set_parser``), and frames are written to the transport.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from aiohttp import web

from podlife.api.gofmt import go_quote
from podlife.apiserver import spdy3

PROTOCOL_HEADER = "X-Stream-Protocol-Version"


def is_spdy_upgrade(request: web.Request) -> bool:
    return "upgrade" in request.headers.get("Connection", "").lower() and \
        "spdy/3.1" in request.headers.get("Upgrade", "").lower()


def _refusal(status: int, text: str, headers: dict[str, str] | None = None) -> web.Response:
    # http.Error: the message and a newline as text/plain
    return web.Response(status=status, text=text + "\n", content_type="text/plain", headers=headers)


def negotiate(request: web.Request, server: tuple[str, ...]) -> str | web.Response:
    """httpstream.Handshake: the first of the client's protocols the server speaks, or the refusal; and
    spdy.UpgradeResponse's check of the upgrade headers."""
    client = [p.strip() for v in request.headers.getall(PROTOCOL_HEADER, []) for p in v.split(",") if p.strip()]
    if not client:
        return _refusal(400, f"unable to upgrade: {PROTOCOL_HEADER} is required")
    chosen = next((p for p in client if p in server), "")
    if not chosen:
        return _refusal(403, f"unable to upgrade: unable to negotiate protocol: client supports "
                             f"[{' '.join(client)}], server accepts [{' '.join(server)}]",
                        {"X-Accepted-Stream-Protocol-Versions": ", ".join(server)})
    if not is_spdy_upgrade(request):
        # the request's headers as the kubelet sees them (the API server's proxy has dropped the credentials;
        # Go's server keeps Host out of req.Header)
        seen = [(k, v) for k, v in request.headers.items() if k.lower() not in ("authorization", "host")]
        return _refusal(400, f"unable to upgrade: missing upgrade headers in request: {go_header(seen)}")
    return chosen


def go_header(items: list[tuple[str, str]]) -> str:
    """An http.Header as fmt's %#v prints it: canonical keys (textproto.CanonicalMIMEHeaderKey) sorted, each
    with its values in order."""
    grouped: dict[str, list[str]] = {}
    for k, v in items:
        key = "-".join(part[:1].upper() + part[1:].lower() for part in k.split("-"))
        grouped.setdefault(key, []).append(v)
    return "http.Header{" + ", ".join(
        f"{go_quote(k)}:[]string{{{', '.join(go_quote(v) for v in grouped[k])}}}" for k in sorted(grouped)) + "}"


class Link:
    """The upgraded connection: the bytes that arrive (``chunks``), and ``send`` for ours. It is the request
    protocol's payload parser: ``feed_data`` and ``feed_eof`` are its calls."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._transport: asyncio.BaseTransport | None = None
        self._writer: object = None
        self.closed = False

    # the protocol's side
    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        self._queue.put_nowait(bytes(data))
        return False, b""

    def feed_eof(self) -> None:
        self._queue.put_nowait(None)

    # ours
    async def chunks(self) -> AsyncIterator[bytes]:
        while not self.closed:
            data = await self._queue.get()
            if data is None:
                self.closed = True
                return
            yield data

    async def send(self, data: bytes) -> None:
        transport = self._transport
        if self.closed or transport is None or transport.is_closing():
            self.closed = True
            return
        transport.write(data)   # type: ignore[attr-defined]
        drain = getattr(self._writer, "drain", None)
        if drain is not None:
            try:
                await drain()
            except (ConnectionResetError, RuntimeError):
                self.closed = True

    def close(self) -> None:
        self.closed = True
        if self._transport is not None:
            self._transport.close()


async def upgrade(request: web.Request, protocol: str) -> tuple[web.StreamResponse, Link]:
    """spdy.UpgradeResponse: 101 with the chosen protocol (``negotiate``); the connection is the Link's from
    then on."""
    link = Link()
    resp = web.StreamResponse(status=101, headers={"Connection": "Upgrade", "Upgrade": "SPDY/3.1",
                                                   PROTOCOL_HEADER: protocol})
    resp.force_close()
    proto = request.protocol
    assert proto is not None
    proto.set_parser(link)   # type: ignore[arg-type]   # what follows the request is SPDY, not HTTP
    proto.keep_alive(False)
    link._writer = await resp.prepare(request)
    link._transport = request.transport
    return resp, link


class Carrier(Protocol):
    """What SPDY frames travel on: the upgraded connection (Link), or WebSocket messages (the port-forward
    tunnel of podlife.apiserver.podforward)."""

    @property
    def closed(self) -> bool: ...

    def chunks(self) -> AsyncIterator[bytes]: ...

    async def send(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class Session:
    """SPDY frames over a Carrier: PINGs are answered here."""

    def __init__(self, link: Carrier) -> None:
        self.link = link
        self.codec = spdy3.Codec()

    async def frames(self) -> AsyncIterator[spdy3.Frame]:
        async for chunk in self.link.chunks():
            for f in self.codec.feed(chunk):
                if f.control and f.kind == spdy3.PING:
                    await self.link.send(self.codec.ping(f.payload))
                else:
                    yield f

    async def reply(self, stream: int) -> None:
        await self.link.send(self.codec.syn_reply(stream))

    async def data(self, stream: int, data: bytes, fin: bool = False) -> None:
        await self.link.send(self.codec.data(stream, data, fin))

    async def close(self, streams: list[int]) -> None:
        """spdystream's Close: a FIN on each stream still open, GOAWAY, then the connection goes."""
        for s in streams:
            await self.data(s, b"", fin=True)
        await self.link.send(self.codec.goaway(max(streams, default=0)))
        self.link.close()

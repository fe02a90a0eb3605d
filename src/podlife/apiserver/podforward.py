"""``pods/portforward`` over WebSocket for the process runtime's pods: the channel protocol of
pkg/kubelet/cri/streaming/portforward/websocket.go (subprotocols v4.channel.k8s.io, or none; the official
Python client speaks it). Each port of the ``ports`` query has two channels, data (2i) and error (2i+1); the
first message on each carries the port number (2 bytes, little endian); then bytes flow both ways on the
data channel between the client and a TCP connection to the pod's port, made by the runtime's ``dial``
(containerd dials localhost:PORT inside the sandbox's network namespace, as the process runtime does where pods
have one; else the pod's address).

kubectl port-forward (1.31+, PortForwardWebsockets) tunnels SPDY in a WebSocket (subprotocol
``SPDY/3.1+portforward.k8s.io``; podlife.apiserver.spdy3 frames it): per local connection it opens an error
stream and a data stream with the headers ``streamtype``, ``port`` and ``requestid``
(pkg/kubelet/cri/streaming/portforward/httpstream.go); once both are there the pod's port is dialled and
the data stream copied both ways; when the pod closes the connection, both streams are closed (FIN). A port
that cannot be reached gets upstream's error text on the error stream. kubectl before 1.31 speaks the same
streams in SPDY/3.1 straight on the connection (``serve_spdy``; podlife.apiserver.spdyupgrade).
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aiohttp import WSMsgType, web

from podlife.apiserver import spdy3, spdyupgrade
from podlife.apiserver.status import bad_request

SPDY_PROTOCOL = "portforward.k8s.io"   # portforward.ProtocolV1Name
SPDY_TUNNEL = f"SPDY/3.1+{SPDY_PROTOCOL}"
PROTOCOLS = ("v4.channel.k8s.io", SPDY_TUNNEL)
Dial = Callable[[int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]   # port → connection


async def serve(request: web.Request, pod: dict, dial: Dial) -> web.StreamResponse:
    ports: list[int] = []
    tunnel = SPDY_TUNNEL in request.headers.get("Sec-WebSocket-Protocol", "")
    for value in request.query.getall("ports", []):
        for part in value.split(","):
            if not part.strip().isdigit() or not 0 < int(part) < 65536:
                raise bad_request(f'unable to parse "{part}" as a port: invalid port')   # websocket.go
            ports.append(int(part))
    if not ports and not tunnel:   # kubectl names its ports in each stream's headers instead
        raise bad_request('query parameter "port" is required')
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    if ws.ws_protocol == SPDY_TUNNEL:
        await _spdy_session(spdyupgrade.Session(_WebSocketCarrier(ws)), dial, pod)
        return ws
    writers: dict[int, asyncio.StreamWriter] = {}
    tasks: list[asyncio.Task[Any]] = []
    for i, port in enumerate(ports):
        prefix = struct.pack("<H", port)
        await ws.send_bytes(bytes([2 * i]) + prefix)
        await ws.send_bytes(bytes([2 * i + 1]) + prefix)
        try:
            reader, writer = await dial(port)
        except OSError as e:
            # portforward.go: the error channel says why the port could not be reached
            await ws.send_bytes(bytes([2 * i + 1]) + f"error forwarding port {port} to pod: {e}".encode())
            continue
        writers[2 * i] = writer
        tasks.append(asyncio.create_task(_pump(ws, reader, 2 * i)))
    # once every port's connection has ended (the pod closed it), so does the stream, as upstream's
    # handler returns and closes the connection: the client sees the end of its sockets
    closer = asyncio.create_task(_close_when_done(ws, list(tasks)))
    try:
        async for msg in ws:
            if msg.type == WSMsgType.BINARY and msg.data:
                data = msg.data
            elif msg.type == WSMsgType.TEXT and msg.data:
                data = msg.data.encode()
            else:
                continue
            target = writers.get(data[0])
            if target is not None and len(data) > 1:
                target.write(data[1:])
                await target.drain()
    finally:
        closer.cancel()
        for task in tasks:
            task.cancel()
        for writer in writers.values():
            writer.close()
    return ws


async def _pump(ws: web.WebSocketResponse, reader: asyncio.StreamReader, channel: int) -> None:
    while not ws.closed:
        data = await reader.read(65536)
        if not data:
            return
        await ws.send_bytes(bytes([channel]) + data)


async def _close_when_done(ws: web.WebSocketResponse, tasks: list[asyncio.Task[Any]]) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)
    await ws.close()


class _WebSocketCarrier:
    """The WebSocket's binary messages as the bytes of a SPDY connection."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws

    @property
    def closed(self) -> bool:
        return self.ws.closed

    async def chunks(self) -> AsyncIterator[bytes]:
        async for msg in self.ws:
            if msg.type == WSMsgType.BINARY:
                yield msg.data

    async def send(self, data: bytes) -> None:
        if not self.ws.closed:
            await self.ws.send_bytes(data)

    def close(self) -> None:
        pass   # the handler's return closes the WebSocket


async def serve_spdy(request: web.Request, pod: dict, dial: Dial) -> web.StreamResponse:
    """kubectl port-forward before 1.31: SPDY/3.1 on the connection itself (protocol portforward.k8s.io)."""
    chosen = spdyupgrade.negotiate(request, (SPDY_PROTOCOL,))
    if isinstance(chosen, web.Response):
        return chosen
    resp, link = await spdyupgrade.upgrade(request, chosen)
    try:
        await _spdy_session(spdyupgrade.Session(link), dial, pod)
    finally:
        link.close()
    return resp


def stream_refusal(headers: dict[str, str]) -> str:
    """pkg/kubelet/cri/streaming/portforward/httpstream.go httpStreamReceived: why a stream is refused, or ""."""
    port = headers.get("port", "")
    if not port:
        return '"port" header is required'
    if not (port.isascii() and port.isdigit()):
        return f'unable to parse "{port}" as a port: strconv.ParseUint: parsing "{port}": invalid syntax'
    if int(port) > 65535:
        return f'unable to parse "{port}" as a port: strconv.ParseUint: parsing "{port}": value out of range'
    if int(port) < 1:
        return f'port "{port}" must be > 0'
    kind = headers.get("streamtype", "")
    if kind not in ("error", "data"):
        return f'invalid stream type "{kind}"'
    return ""


async def _spdy_session(session: spdyupgrade.Session, dial: Dial, pod: dict) -> None:
    pairs: dict[str, dict[str, int]] = {}              # requestid → {"error": stream, "data": stream}
    ports: dict[int, int] = {}                         # stream → port
    writers: dict[int, asyncio.StreamWriter] = {}      # data stream → the connection to the pod
    tasks: list[asyncio.Task[Any]] = []
    md = pod["metadata"]
    try:
        async for f in session.frames():
            if f.control and f.kind == spdy3.SYN_STREAM:
                h = f.headers or {}
                if stream_refusal(h):
                    # the kubelet's handler refuses it, and spdy connection.go newSpdyStream resets the stream
                    await session.link.send(session.codec.rst(f.stream))
                    continue
                await session.reply(f.stream)
                pair = pairs.setdefault(h.get("requestid", ""), {})
                pair[h.get("streamtype", "")] = f.stream
                ports[f.stream] = int(h["port"])
                if "error" in pair and "data" in pair:
                    err, data = pair["error"], pair["data"]
                    port = ports[data]
                    try:
                        reader, writer = await dial(port)
                    except OSError as e:
                        text = f"error forwarding port {port} to pod {md['name']}, uid {md['uid']}: {e}"
                        await session.data(err, text.encode(), fin=True)
                        await session.data(data, b"", fin=True)
                        continue
                    writers[data] = writer
                    tasks.append(asyncio.create_task(_spdy_pump(session, reader, data, err)))
            elif f.control and f.kind == spdy3.RST_STREAM:
                w = writers.pop(f.stream, None)
                if w is not None:
                    w.close()
            elif not f.control and f.stream in writers:
                w = writers[f.stream]
                if f.payload:
                    w.write(f.payload)
                    await w.drain()
                if f.flags & spdy3.FLAG_FIN and w.can_write_eof():
                    w.write_eof()
    finally:
        for task in tasks:
            task.cancel()
        for w in writers.values():
            w.close()


async def _spdy_pump(session: spdyupgrade.Session, reader: asyncio.StreamReader, data: int, err: int) -> None:
    """The pod's bytes onto the data stream; at their end, both streams closed (no error)."""
    while not session.link.closed:
        chunk = await reader.read(65536)
        if not chunk:
            break
        await session.data(data, chunk)
    if not session.link.closed:
        await session.data(data, b"", fin=True)
        await session.data(err, b"", fin=True)

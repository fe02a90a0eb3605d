"""``pods/portforward`` over WebSocket for the process runtime's pods: the channel protocol of
pkg/kubelet/cri/streaming/portforward/websocket.go (subprotocols v4.channel.k8s.io, or none; the official
Python client speaks it). Each port of the ``ports`` query has two channels, data (2i) and error (2i+1); the
first message on each carries the port number (2 bytes, little endian); then bytes flow both ways on the
data channel between the client and a TCP connection to the pod's address and port (upstream dials the port
inside the pod's network namespace; a process runtime pod's network is its loopback address).

kubectl port-forward speaks SPDY (or SPDY tunnelled in WebSocket, PortForwardWebsockets): not served.
"""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from aiohttp import WSMsgType, web

from podlife.apiserver.status import bad_request

PROTOCOLS = ("v4.channel.k8s.io",)


async def serve(request: web.Request, pod: dict) -> web.StreamResponse:
    ports: list[int] = []
    for value in request.query.getall("ports", []):
        for part in value.split(","):
            if not part.strip().isdigit() or not 0 < int(part) < 65536:
                raise bad_request(f'unable to parse "{part}" as a port: invalid port')   # websocket.go
            ports.append(int(part))
    if not ports:
        raise bad_request('query parameter "port" is required')
    ip = (pod.get("status") or {}).get("podIP") or ""
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    writers: dict[int, asyncio.StreamWriter] = {}
    tasks: list[asyncio.Task[Any]] = []
    for i, port in enumerate(ports):
        prefix = struct.pack("<H", port)
        await ws.send_bytes(bytes([2 * i]) + prefix)
        await ws.send_bytes(bytes([2 * i + 1]) + prefix)
        try:
            reader, writer = await asyncio.open_connection(ip, port)
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

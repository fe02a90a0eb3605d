"""Where ``pods/log`` writes: the HTTP response (text/plain, chunked when following), or a WebSocket when the
request asks for one (responsewriters.StreamObject hands the log to wsstream.NewReader): an empty message
first (the reader's ping), then each piece of the log as a binary message (subprotocol ``binary.k8s.io`` or
none) or base64 text (``base64.binary.k8s.io``), and the connection closes at the log's end."""

from __future__ import annotations

import base64

from aiohttp import web

# wsstream.NewDefaultReaderProtocols
PROTOCOLS = ("binary.k8s.io", "base64.binary.k8s.io")


def is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


class LogStream:
    def __init__(self, resp: web.StreamResponse) -> None:
        self.resp = resp
        self._base64 = isinstance(resp, web.WebSocketResponse) and resp.ws_protocol == PROTOCOLS[1]

    @classmethod
    async def open(cls, request: web.Request, follow: bool) -> "LogStream":
        if is_websocket(request):
            ws = web.WebSocketResponse(protocols=PROTOCOLS)
            await ws.prepare(request)
            stream = cls(ws)
            await stream._send(b"")
            return stream
        resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
        if follow:
            resp.enable_chunked_encoding()
        await resp.prepare(request)
        return cls(resp)

    async def _send(self, data: bytes) -> None:
        ws = self.resp
        assert isinstance(ws, web.WebSocketResponse)
        if ws.closed:
            raise ConnectionResetError("the client closed the WebSocket")
        if self._base64:
            await ws.send_str(base64.b64encode(data).decode())
        else:
            await ws.send_bytes(data)

    async def write(self, data: bytes) -> None:
        if not data:
            return
        if isinstance(self.resp, web.WebSocketResponse):
            await self._send(data)
        else:
            await self.resp.write(data)

    async def close(self) -> web.StreamResponse:
        if isinstance(self.resp, web.WebSocketResponse):
            await self.resp.close()
        else:
            await self.resp.write_eof()
        return self.resp

"""A tiny grpc.health.v1 server over HTTP/2 without TLS (h2), for the gRPC prober's tests.

``MODE`` sets what Check answers for the service "": ``serving``, ``not_serving``, ``unimplemented`` (no
Health service: Unimplemented, as grpc-go's server words it), ``hang`` (never answers). Any other service name
is NotFound "unknown service", as grpc-go's health server. Each request's headers are kept in ``seen``.

Run as a program: ``python grpc_health_server.py HOST PORT MODE`` (MODE may also be a file whose content is the
mode, read at every request, so a test can change it while the server runs).
"""

from __future__ import annotations

import asyncio
import os
import sys

import h2.config
import h2.connection
import h2.events
import h2.exceptions

PATH = "/grpc.health.v1.Health/Check"
STATUS = {"serving": 1, "not_serving": 2}


class HealthServer:
    def __init__(self, mode: str, log: bool = False) -> None:
        self.mode = mode
        self.log = log   # print a line for each request
        self.seen: list[dict[str, str]] = []

    def current(self) -> str:
        if os.path.isfile(self.mode):
            with open(self.mode) as f:
                return f.read().strip()
        return self.mode

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        conn.initiate_connection()
        writer.write(conn.data_to_send())
        heads: dict[int, dict[str, str]] = {}
        bodies: dict[int, bytes] = {}
        try:
            while data := await reader.read(65536):
                for ev in conn.receive_data(data):
                    if isinstance(ev, h2.events.RequestReceived):
                        heads[ev.stream_id] = {str(k): str(v) for k, v in ev.headers}
                        self.seen.append(heads[ev.stream_id])
                        if self.log:
                            print(f"check from {heads[ev.stream_id].get('user-agent')}", flush=True)
                    elif isinstance(ev, h2.events.DataReceived):
                        bodies[ev.stream_id] = bodies.get(ev.stream_id, b"") + ev.data
                        conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                    elif isinstance(ev, h2.events.StreamEnded):
                        self.answer(conn, ev.stream_id, heads[ev.stream_id], bodies.get(ev.stream_id, b""))
                writer.write(conn.data_to_send())
                await writer.drain()
        except (ConnectionError, h2.exceptions.ProtocolError):
            pass
        finally:
            writer.close()

    def answer(self, conn: h2.connection.H2Connection, sid: int, head: dict[str, str], body: bytes) -> None:
        mode = self.current()
        if mode == "hang":
            return
        if head.get(":path") != PATH or mode == "unimplemented":
            return trailers_only(conn, sid, 12, "unknown service grpc.health.v1.Health")
        service = body[7:].decode() if len(body) > 5 and body[5] == 0x0A else ""
        if service:
            return trailers_only(conn, sid, 5, "unknown service")
        conn.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc")])
        message = bytes([0x08, STATUS[mode]])
        conn.send_data(sid, b"\x00" + len(message).to_bytes(4, "big") + message)
        conn.send_headers(sid, [("grpc-status", "0")], end_stream=True)


def trailers_only(conn: h2.connection.H2Connection, sid: int, code: int, message: str) -> None:
    conn.send_headers(sid, [(":status", "200"), ("content-type", "application/grpc"), ("grpc-status", str(code)),
                            ("grpc-message", message)], end_stream=True)


async def main(host: str, port: int, mode: str) -> None:
    server = await asyncio.start_server(HealthServer(mode, log=True).handle, host, port)
    print(f"serving grpc health on {host}:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))

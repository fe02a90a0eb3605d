"""The kubelet's gRPC prober (pkg/probe/grpc/grpc.go Probe) for the process runtime: one
``/grpc.health.v1.Health/Check`` call over HTTP/2 without TLS (prior knowledge, as grpc.WithInsecure), spoken
with the pure-Python ``h2`` library, imported only when a gRPC probe runs.

As grpc-go's blocking dial: the connection counts once the server's SETTINGS arrived; a refused or broken
connection is tried again after a backoff until the probe's timeout, which then reports the connect timeout.
The one deadline covers the dial and the call (context.WithTimeout around both). The two messages are small
enough to encode by hand: HealthCheckRequest {1: service string}, HealthCheckResponse {1: status enum}.

Not sent: grpc-go's own ``grpc-go/<version>`` token after the User-Agent.
"""

from __future__ import annotations

import asyncio
import http
import struct
from typing import Any
from urllib.parse import unquote

from podlife.api.gofmt import go_quote
from podlife.scenario.durations import format_duration as go_duration   # time.Duration.String

SUCCESS, FAILURE = "Success", "Failure"
PATH = "/grpc.health.v1.Health/Check"
# grpc-go codes.Code.String
CODES = ("OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
         "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
         "Internal", "Unavailable", "DataLoss", "Unauthenticated")
UNIMPLEMENTED, DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE, UNKNOWN = 12, 4, 13, 14, 2
# grpc_health_v1.HealthCheckResponse_ServingStatus names
SERVING_STATUS = ("UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN")
# grpc-go internal/transport/http_util.go HTTPStatusConvTab (other statuses: Unknown)
HTTP_CODES = {400: INTERNAL, 401: 16, 403: 7, 404: UNIMPLEMENTED, 429: UNAVAILABLE, 502: UNAVAILABLE,
              503: UNAVAILABLE, 504: UNAVAILABLE}
BACKOFF, BACKOFF_FACTOR = 1.0, 1.6   # grpc-go backoff.DefaultConfig: base delay, multiplier (jitter left out)


class _RPCError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(code, message)
        self.code, self.message = code, message

    def __str__(self) -> str:
        name = CODES[self.code] if 0 <= self.code < len(CODES) else f"Code({self.code})"
        return f"rpc error: code = {name} desc = {self.message}"


async def grpc_probe(host: str, port: int, service: str, timeout: float, user_agent: str) -> tuple[str, str]:
    """(Success | Failure, output) with grpc.go Probe's texts."""
    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    try:
        reader, writer, conn = await asyncio.wait_for(_dial(host, port), timeout)
    except asyncio.TimeoutError:
        return FAILURE, (f"timeout: failed to connect service {go_quote(addr)} within {go_duration(timeout)}: "
                         "context deadline exceeded")
    except Exception as e:  # noqa: BLE001 - as below: a failed probe, with what went wrong
        return FAILURE, f"error: health rpc probe failed: {e}"
    try:
        remaining = deadline - loop.time()
        status = await asyncio.wait_for(_check(reader, writer, conn, addr, service, user_agent, remaining),
                                        max(remaining, 0.0))
    except asyncio.TimeoutError:
        return FAILURE, f"timeout: health rpc did not complete within {go_duration(timeout)}"
    except _RPCError as e:
        if e.code == UNIMPLEMENTED:
            return FAILURE, ("error: this server does not implement the grpc health protocol "
                             f"(grpc.health.v1.Health): {e.message}")
        if e.code == DEADLINE_EXCEEDED:
            return FAILURE, f"timeout: health rpc did not complete within {go_duration(timeout)}"
        return FAILURE, f"error: health rpc probe failed: {e}"
    except Exception as e:  # noqa: BLE001 - a reset connection or a malformed answer: the probe fails, never hangs
        return FAILURE, f"error: health rpc probe failed: {e}"
    finally:
        writer.close()
    if status != 1:
        name = SERVING_STATUS[status] if 0 <= status < len(SERVING_STATUS) else str(status)
        return FAILURE, f"service unhealthy (responded with {go_quote(name)})"
    return SUCCESS, "service healthy"


async def _dial(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Any]:
    """A connection whose HTTP/2 handshake is done, trying again after a backoff until cancelled."""
    delay = BACKOFF
    while True:
        try:
            return await _handshake(host, port)
        except (OSError, _Broken):
            await asyncio.sleep(delay)
            delay *= BACKOFF_FACTOR


class _Broken(Exception):
    """The server is not speaking HTTP/2 or closed the connection."""


async def _handshake(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Any]:
    import h2.config
    import h2.connection
    import h2.events
    import h2.exceptions

    reader, writer = await asyncio.open_connection(host, port)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.initiate_connection()
    try:
        writer.write(conn.data_to_send())
        while True:
            data = await reader.read(65536)
            if not data:
                raise _Broken()
            try:
                events = conn.receive_data(data)
            except h2.exceptions.ProtocolError as e:
                raise _Broken() from e
            writer.write(conn.data_to_send())
            if any(isinstance(ev, h2.events.RemoteSettingsChanged) for ev in events):
                return reader, writer, conn
    except BaseException:
        writer.close()
        raise


async def _check(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: Any, addr: str, service: str,
                 user_agent: str, remaining: float) -> int:
    """The serving status the server answered, or _RPCError."""
    import h2.events
    import h2.exceptions

    sid = conn.get_next_available_stream_id()
    conn.send_headers(sid, [(":method", "POST"), (":scheme", "http"), (":path", PATH), (":authority", addr),
                            ("content-type", "application/grpc"), ("user-agent", user_agent), ("te", "trailers"),
                            ("grpc-timeout", _grpc_timeout(remaining))])
    conn.send_data(sid, _frame(_field_string(1, service)), end_stream=True)
    writer.write(conn.data_to_send())
    headers: dict[str, str] = {}
    body = bytearray()
    while True:
        data = await reader.read(65536)
        if not data:
            raise _RPCError(UNAVAILABLE, "error reading from server: EOF")
        try:
            events = conn.receive_data(data)
        except h2.exceptions.ProtocolError as e:
            raise _RPCError(INTERNAL, f"transport: {e}") from e
        for ev in events:
            if isinstance(ev, (h2.events.ResponseReceived, h2.events.TrailersReceived)) and ev.stream_id == sid:
                headers.update((str(k), str(v)) for k, v in ev.headers)
            elif isinstance(ev, h2.events.DataReceived) and ev.stream_id == sid:
                body += ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, sid)
            elif isinstance(ev, h2.events.StreamReset) and ev.stream_id == sid:
                code = getattr(ev.error_code, "name", ev.error_code)
                raise _RPCError(INTERNAL, f"stream terminated by RST_STREAM with error code: {code}")
            elif isinstance(ev, h2.events.ConnectionTerminated):
                raise _RPCError(UNAVAILABLE, "the connection is draining")
            elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                writer.write(conn.data_to_send())
                return _status(headers, bytes(body))
        writer.write(conn.data_to_send())


def _status(headers: dict[str, str], body: bytes) -> int:
    if "grpc-status" not in headers:
        # grpc-go http2_client.go operateHeaders: a response that is not gRPC's takes its code from the HTTP status
        code = int(headers.get(":status", "0") or 0)
        if code != 200:
            phrase = http.HTTPStatus(code).phrase if code in http.HTTPStatus._value2member_map_ else ""
            raise _RPCError(HTTP_CODES.get(code, UNKNOWN),
                            f"unexpected HTTP status code received from server: {code} ({phrase})")
        raise _RPCError(INTERNAL, "server closed the stream without sending trailers")
    code = int(headers["grpc-status"])
    if code != 0:
        raise _RPCError(code, unquote(headers.get("grpc-message", "")))
    if len(body) < 5:
        raise _RPCError(INTERNAL, "grpc: the server sent no response message")
    return _enum_field(body[5:5 + struct.unpack(">I", body[1:5])[0]], 1)


def _grpc_timeout(seconds: float) -> str:
    """grpc-go encodeTimeout: the finest unit whose value fits in 8 digits."""
    ns = max(int(seconds * 1e9), 0)
    for unit, size in (("n", 1), ("u", 1_000), ("m", 1_000_000), ("S", 1_000_000_000), ("M", 60_000_000_000)):
        if ns // size < 100_000_000:
            return f"{-(-ns // size)}{unit}"
    return f"{-(-ns // 3_600_000_000_000)}H"


def _frame(message: bytes) -> bytes:
    """A gRPC length-prefixed message, uncompressed."""
    return b"\x00" + struct.pack(">I", len(message)) + message


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field_string(number: int, value: str) -> bytes:
    """A proto3 string field (absent when empty)."""
    raw = value.encode()
    return _varint(number << 3 | 2) + _varint(len(raw)) + raw if raw else b""


def _enum_field(message: bytes, number: int) -> int:
    """The last value of varint field ``number`` (proto3: 0 when absent); other fields are skipped."""
    from podlife.api.protowire import Malformed as _Malformed, fields as _fields

    try:
        values = [v for num, wire, v in _fields(message) if num == number and wire == 0]
    except _Malformed as e:
        raise _RPCError(INTERNAL, f"grpc: failed to unmarshal the received message: {e}") from e
    return int(values[-1]) if values else 0



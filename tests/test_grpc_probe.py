"""The process runtime's gRPC prober (podlife.runtime.grpcprobe) against a real grpc.health.v1 server on
loopback (tests/live/grpc_health_server.py): the results and texts of pkg/probe/grpc/grpc.go Probe."""

from __future__ import annotations

import asyncio
import socket
import sys
import time

import pytest

from podlife.runtime.grpcprobe import _grpc_timeout, grpc_probe
from tests.live.grpc_health_server import HealthServer

UA = "kube-probe/1.28"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def probe(mode: str, service: str = "", timeout: float = 1.0) -> tuple[tuple[str, str], list[dict[str, str]]]:
    async def run() -> tuple[tuple[str, str], list[dict[str, str]]]:
        server = HealthServer(mode)
        srv = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        async with srv:
            result = await grpc_probe("127.0.0.1", port, service, timeout, UA)
        return result, server.seen
    return asyncio.run(run())


def test_serving_is_a_success_and_the_request_is_grpc_s() -> None:
    result, seen = probe("serving")
    assert result == ("Success", "service healthy")
    [head] = seen
    assert {k: v for k, v in head.items() if k != "grpc-timeout"} == {
        ":method": "POST", ":scheme": "http", ":path": "/grpc.health.v1.Health/Check",
        ":authority": head[":authority"], "content-type": "application/grpc", "user-agent": UA, "te": "trailers"}
    assert head[":authority"].startswith("127.0.0.1:")
    # what is left of the 1 s deadline, in the finest grpc-timeout unit that fits in 8 digits
    assert head["grpc-timeout"].endswith("u") and 0 < int(head["grpc-timeout"][:-1]) <= 1_000_000


def test_not_serving_is_a_failure_naming_the_status() -> None:
    assert probe("not_serving")[0] == ("Failure", 'service unhealthy (responded with "NOT_SERVING")')


def test_a_server_without_the_health_service() -> None:
    assert probe("unimplemented")[0] == (
        "Failure", "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): "
                   "unknown service grpc.health.v1.Health")


def test_an_unknown_service_name_is_the_rpcs_error() -> None:
    result, _seen = probe("serving", service="other")
    assert result == ("Failure", "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service")


def test_an_rpc_without_an_answer_times_out_at_the_probes_timeout() -> None:
    started = time.monotonic()
    assert probe("hang", timeout=1)[0] == ("Failure", "timeout: health rpc did not complete within 1s")
    assert 0.9 < time.monotonic() - started < 3


def test_a_refused_connection_is_tried_again_until_the_timeout() -> None:
    # grpc-go's blocking dial retries with backoff: the probe reports the deadline, not the refusal
    port = free_port()
    started = time.monotonic()
    result = asyncio.run(grpc_probe("127.0.0.1", port, "", 2, UA))
    assert result == ("Failure", f'timeout: failed to connect service "127.0.0.1:{port}" within 2s: '
                                 "context deadline exceeded")
    assert 1.9 < time.monotonic() - started < 4


def test_grpc_timeout_header_values() -> None:
    assert [_grpc_timeout(s) for s in (0.0, 0.05, 1.0, 99.0, 200.0)] == [
        "0n", "50000000n", "1000000u", "99000000u", "200000m"]


def test_podlife_run_does_not_import_h2() -> None:
    import subprocess

    code = ("import sys, podlife.cli, podlife.runtime.process, podlife.runtime.grpcprobe; "
            "print(any(m == 'h2' or m.startswith('h2.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_ipv6_authority_is_bracketed() -> None:
    async def run() -> tuple[tuple[str, str], list[dict[str, str]]]:
        server = HealthServer("serving")
        try:
            srv = await asyncio.start_server(server.handle, "::1", 0)
        except OSError:
            pytest.skip("no IPv6 loopback")
        port = srv.sockets[0].getsockname()[1]
        async with srv:
            result = await grpc_probe("::1", port, "", 1, UA)
        return result, server.seen
    result, seen = asyncio.run(run())
    assert result == ("Success", "service healthy")
    assert seen[0][":authority"].startswith("[::1]:")


def test_response_status_decoding() -> None:
    from podlife.runtime.grpcprobe import _enum_field, _RPCError

    # HealthCheckResponse{status: NOT_SERVING}; empty (proto3 default UNKNOWN); an unknown field before it
    assert [_enum_field(m, 1) for m in (b"\x08\x02", b"", b"\x12\x01a\x08\x01")] == [2, 0, 1]
    with pytest.raises(_RPCError, match="code = Internal desc = grpc: failed to unmarshal the received message"):
        _enum_field(b"\x08", 1)

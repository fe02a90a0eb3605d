"""Clients that hold connections open (issue 23): a body sent a few bytes at a time, hundreds of idle
connections, and many watches. None of them may hold up another client: ``/readyz`` and a small write are
answered with a p99 under 100 ms meanwhile, and every watch gets every event."""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
from collections.abc import Iterator

import pytest

from tests.live.conftest import Live
from tests.live.test_hostile_load import P99_LIMIT, Prober

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def frozen(live_factory) -> Iterator[Live]:
    live = live_factory("1.32", clock="manual")
    code, _ = live.json("POST", CONFIGMAPS, {"metadata": {"name": "small"}, "data": {"a": "b"}})
    assert code == 201
    yield live


def _connect(live: Live) -> socket.socket:
    url = urllib.parse.urlsplit(live.url)
    return socket.create_connection((url.hostname, url.port), timeout=30)


def _timed(live: Live, method: str, path: str, body: object = None) -> tuple[int, float]:
    t = time.perf_counter()
    code, _ = live.json(method, path, body)
    return code, time.perf_counter() - t


def test_a_body_sent_byte_by_byte_holds_nobody_up(frozen: Live) -> None:
    """The server reads a write's body before the write takes the cluster: while one client takes seconds to
    send its body, others' reads and writes are served, and the slow write succeeds once its body is in."""
    body = json.dumps({"metadata": {"name": "slow"}, "data": {"k": "v" * 200}}).encode()
    host = urllib.parse.urlsplit(frozen.url).netloc
    s = _connect(frozen)
    s.sendall(f"POST {CONFIGMAPS} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
              f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
    writes: list[float] = []
    with Prober(frozen) as prober:
        step = max(1, len(body) // 30)
        for i in range(0, len(body), step):
            s.sendall(body[i:i + step])
            code, took = _timed(frozen, "POST", CONFIGMAPS, {"metadata": {"name": f"quick-{i}"}})
            assert code == 201
            writes.append(took)
            time.sleep(0.1)
        reply = s.recv(65536).decode("latin-1")
    s.close()
    prober.check(at_least=20)
    assert reply.startswith("HTTP/1.1 201"), reply[:200]
    assert sorted(writes)[int(len(writes) * 0.99)] < P99_LIMIT, writes
    code, got = frozen.json("GET", f"{CONFIGMAPS}/slow")
    assert code == 200 and got["data"]["k"] == "v" * 200


def test_hundreds_of_idle_connections_hold_nobody_up(frozen: Live) -> None:
    """300 connections that send nothing, or half a request line, are no load: others are served, and the
    server is still healthy once they are gone."""
    idle = [_connect(frozen) for _ in range(300)]
    for s in idle[::2]:
        s.sendall(b"GET /api/v1/namespaces/default/se")
    try:
        with Prober(frozen) as prober:
            time.sleep(3.0)
        prober.check(at_least=20)
    finally:
        for s in idle:
            s.close()
    code, _, _ = frozen.request("GET", "/readyz")
    assert code == 200


def test_many_watches_each_get_every_event(frozen: Live) -> None:
    """200 watches of ConfigMaps from one resourceVersion: each gets the 20 ADDED events written after it, in
    order, while other clients' requests stay fast."""
    code, listed = frozen.json("GET", CONFIGMAPS)
    assert code == 200
    rv = listed["metadata"]["resourceVersion"]
    host = urllib.parse.urlsplit(frozen.url).netloc
    watches = []
    for _ in range(200):
        s = _connect(frozen)
        s.sendall(f"GET {CONFIGMAPS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=false HTTP/1.1\r\n"
                  f"Host: {host}\r\nConnection: close\r\n\r\n".encode())
        watches.append(s)
    names = [f"watched-{i:02d}" for i in range(20)]
    got: list[list[str]] = []
    # probed while the 200 watches are sent their events: the creates alone may take less than five probes' time
    with Prober(frozen) as prober:
        for name in names:
            code, _ = frozen.json("POST", CONFIGMAPS, {"metadata": {"name": name}})
            assert code == 201
        prober.wait_for(at_least=5)
        for s in watches:
            data = b""
            deadline = time.monotonic() + 30
            while data.count(b'"type":"ADDED"') < len(names) and time.monotonic() < deadline:
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
            s.close()
            events = [json.loads(line) for line in _chunks(data) if line.startswith(b"{")]
            got.append([e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"])
    prober.check(at_least=5)
    assert all(g == names for g in got), [g for g in got if g != names][:1]


def _chunks(raw: bytes) -> list[bytes]:
    """The JSON lines of a chunked watch response (one event a line; chunk sizes between)."""
    body = raw.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in raw else b""
    return [line.strip() for line in body.split(b"\n") if line.strip()]


def test_the_server_is_healthy_after_all_of_it(frozen: Live) -> None:
    t = time.perf_counter()
    code, _, _ = frozen.request("GET", "/readyz")
    assert code == 200 and time.perf_counter() - t < P99_LIMIT
    assert frozen.proc.poll() is None
    assert "Traceback" not in frozen.output()


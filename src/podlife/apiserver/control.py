"""podlife's own endpoints beside the Kubernetes API: the clock, faults and the trace.

- ``GET  /podlife/clock``: the clock's mode, speed and the kernel's time.
- ``POST /podlife/advance?by=5m``: the manual clock moves forward (409 on a realtime clock).
- ``POST /podlife/advance?until=CONDITION&timeout=10m``: the manual clock moves to the first instant the condition
  (podlife.apiserver.until) holds, not past it, or by the timeout (default DEFAULT_UNTIL_TIMEOUT); the answer's
  ``held`` says which.
- ``POST /podlife/faults``: a fault as a scenario's fault action writes it (JSON: type, node, pod, container,
  image, value, for), validated as scenarios are (400 with the field and what was expected).
- ``GET  /podlife/trace?since=N&follow=true``: the trace records as JSON lines, from record N (counted from the
  cluster's first start; podlife.apiserver.livetrace); with follow the stream stays open and sends each new
  record.
- ``GET  /podlife/report``: the run so far as a podlife-trace/v1 report (``podlife report FILE --html`` draws it):
  the records still held (all of them with a data directory), no expectations.
- ``POST /podlife/snapshots?name=N``, ``POST /podlife/snapshots/N/restore``, ``GET /podlife/snapshots``: the
  manual clock's whole state kept and restored (podlife.apiserver.snapshots).
- ``POST /podlife/stop``: the server stops, as on Ctrl-C (``podlife down``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from podlife.api.errors import ApiError
from podlife.apiserver.status import bad_request, not_found_path


async def serve(server: Any, request: web.Request, parts: list[str]) -> web.StreamResponse:
    what = parts[0] if parts else ""
    if what == "clock" and request.method == "GET":
        return server._json(_clock(server))
    if what == "advance" and request.method == "POST":
        return _advance(server, request)
    if what == "faults" and request.method == "POST":
        return await _fault(server, request)
    if what == "trace" and request.method == "GET":
        return await _trace(server, request)
    if what == "report" and request.method == "GET":
        return web.Response(body=_report(server), headers={"Content-Type": "application/json"})
    if what == "snapshots":
        from podlife.apiserver import snapshots

        return await snapshots.serve(server, request, parts[1:])
    if what == "stop" and request.method == "POST":
        server.stopping.set()
        return server._json({"stopping": True}, status=202)
    raise not_found_path()


def _clock(server: Any) -> dict[str, Any]:
    c = server.clock
    return {"mode": c.mode, "speed": c.speed, "seconds": round(server.cluster.kernel.now, 6),
            "records": server.trace.total}


DEFAULT_UNTIL_TIMEOUT = "1h"


def _report(server: Any) -> bytes:
    cluster = server.cluster
    start = cluster.trace.start_time
    head = {"format": "podlife-trace/v1", "scenario": f"podlife up ({server.host})",
            "kubernetesVersion": cluster.profile.version, "seed": cluster.kernel.seed,
            "startTime": start.strftime("%Y-%m-%dT%H:%M:%S") + "Z", "endSeconds": round(cluster.kernel.now, 3),
            "expectations": [], "assumptions": [], "warnings": []}
    # the records as stored lines, spliced in rather than parsed and dumped again
    body = orjson.dumps(head)[:-1] + b',"records":[' + b",".join(
        line.rstrip(b"\n") for line in server.trace.since(0)) + b"]}"
    return body


def _duration(request: web.Request, key: str, default: str = "") -> float:
    """A query parameter that is a duration the clock can move forward by (a bad one is the request's fault)."""
    from podlife.scenario.durations import parse_duration

    text = request.query.get(key, default)
    try:
        seconds = parse_duration(text)
    except ValueError as e:
        raise bad_request(f"{key}: {e}") from None
    if seconds < 0:
        raise bad_request(f'{key}: "{text}" is negative; expected a duration of zero or more, e.g. 5m')
    return seconds


def _advance(server: Any, request: web.Request) -> web.Response:
    if "until" in request.query:
        return _advance_until(server, request)
    seconds = _duration(request, "by")
    try:
        server.clock.advance(seconds)
    except ValueError as e:
        raise ApiError(409, "Conflict", str(e)) from None
    return server._json(_clock(server))


def _advance_until(server: Any, request: web.Request) -> web.Response:
    from podlife.apiserver.until import ConditionError, parse

    if "by" in request.query:
        raise bad_request("advance: give by or until, not both")
    try:
        cond = parse(request.query["until"], server.store.kinds)
    except ConditionError as e:
        raise bad_request(str(e)) from None
    timeout = _duration(request, "timeout", DEFAULT_UNTIL_TIMEOUT)
    try:
        held = server.clock.advance_until(lambda: cond.holds(server.store), timeout)
    except ValueError as e:
        raise ApiError(409, "Conflict", str(e)) from None
    return server._json({**_clock(server), "until": cond.text, "held": held})


async def _fault(server: Any, request: web.Request) -> web.Response:
    from podlife.api import decoding
    from podlife.scenario.errors import ScenarioError
    from podlife.cluster.faults import start_fault
    from podlife.scenario.faultspec import load_fault

    try:   # the request decoder's limits, as for every body
        spec = decoding.parse_json(await server._body(request))
    except (orjson.JSONDecodeError, decoding.DecodeError) as e:
        raise bad_request(f"fault: not JSON: {e}") from None
    try:
        fault = load_fault(spec, sorted(server.cluster.kubelets))
    except ScenarioError as e:
        raise bad_request(str(e)) from None
    start_fault(server.cluster, fault)
    server.clock.settle()
    return server._json(_clock(server), status=201)


async def _trace(server: Any, request: web.Request) -> web.StreamResponse:
    since = request.query.get("since", "0")
    pos = int(since) if since.isdigit() else 0
    follow = request.query.get("follow") in ("true", "1")
    resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    trace = server.trace
    wake = asyncio.Event()

    def moved() -> None:
        wake.set()
    server.clock.listeners.append(moved)
    try:
        while True:
            if pos < trace.total:
                end = trace.total
                chunk = b"".join(trace.since(pos))
                pos = end
                await resp.write(chunk)
            if not follow:
                break
            wake.clear()
            try:
                await asyncio.wait_for(wake.wait(), timeout=5.0)
            except asyncio.TimeoutError:
                if request.transport is None or request.transport.is_closing():
                    break
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        server.clock.listeners.remove(moved)
    return resp

"""``pods/exec`` over WebSocket for the process runtime's containers: the channel protocol kubectl speaks
(v5.channel.k8s.io, and v4): every binary message starts with its channel — 0 stdin, 1 stdout, 2 stderr,
3 the final status, 4 terminal resize — and, in v5, ``[255, channel]`` closes one direction (kubectl sends it
for the end of stdin). The command's end is a metav1.Status on channel 3, then the connection closes
(staging/src/k8s.io/apimachinery/pkg/util/remotecommand, pkg/kubelet/cri/streaming/remotecommand
ServeExec): Success, or NonZeroExitCode with the status as an ExitCode cause, which kubectl exits with.

The command runs in the container's environment and working directory (podlife.runtime.process open_exec);
it does not touch the model: no trace records, as a real exec leaves none in the kubelet.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import signal
import struct
import termios
from typing import Any

from aiohttp import WSMsgType, web

from podlife.apiserver.status import bad_request
from podlife.runtime.cri import RuntimeError_
from podlife.runtime.process import exec_error
from podlife.runtime.shim import fd_ready, read_chunks

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255


def runtime_of(server: Any, pod: dict) -> Any:
    """The runtime of the pod's node when it runs real processes, else None."""
    kl = server.cluster.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
    return kl.runtime if kl is not None and kl.runtime.writes_logs else None


async def serve(server: Any, request: web.Request, t: Any, runtime: Any, pod: dict) -> web.StreamResponse:
    q = request.query
    spec = pod.get("spec") or {}
    names = [c["name"] for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
    container = q.get("container") or (names[0] if len(spec.get("containers") or []) == 1 else "")
    if not container:
        raise bad_request(f"a container name must be specified for pod {t.name}, choose one of: "
                          f"[{' '.join(c['name'] for c in spec.get('containers') or [])}]")
    if container not in names:
        raise bad_request(f"container {container} is not valid for pod {t.name}")
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise bad_request(f"cannot exec into a container in a completed pod; current phase is {phase}")
    command = q.getall("command", [])
    if not command:
        raise bad_request("you must specify at least 1 command")
    statuses = (pod.get("status") or {}).get("containerStatuses", []) + \
        (pod.get("status") or {}).get("initContainerStatuses", [])
    cid = next((s.get("containerID", "") for s in statuses if s["name"] == container
                and "running" in (s.get("state") or {})), "").split("://", 1)[-1]
    tty, want_stdin = q.get("tty") in ("true", "1"), q.get("stdin") in ("true", "1")
    try:
        streams = runtime.open_exec(cid, command, want_stdin, tty) if cid else None
    except RuntimeError_:
        streams = None
    if streams is None:
        raise bad_request(f'container not found ("{container}")')
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    return await _session(ws, streams, runtime, command, tty)


async def _session(ws: web.WebSocketResponse, streams: Any, runtime: Any, command: list[str],
                   tty: bool) -> web.WebSocketResponse:
    sp = streams.spawn
    outputs = [asyncio.create_task(_pump(ws, streams.stdout, STDOUT))]
    if streams.stderr is not None:
        outputs.append(asyncio.create_task(_pump(ws, streams.stderr, STDERR)))
    stdin = asyncio.create_task(_feed(ws, streams, tty))
    try:
        try:
            await sp.started
        except Exception as e:  # noqa: BLE001 - the command could not start: say why, as the kubelet does
            why = f"error executing command in container: {exec_error(command[0], '', e)}"
            await _status(ws, {"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {why}",
                               "reason": "InternalError", "details": {"causes": [{"message": why}]}, "code": 500})
            return ws
        code, sig = await asyncio.shield(sp.exited)
        await asyncio.gather(*outputs)
        status = 128 + sig if sig else code
        if status == 0:
            await _status(ws, {"metadata": {}, "status": "Success"})
        else:
            await _status(ws, {
                "metadata": {}, "status": "Failure",
                "message": f"command terminated with non-zero exit code: error executing command {command}, exit "
                           f"code {status}",
                "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(status)}]}})
    finally:
        stdin.cancel()
        for task in outputs:
            task.cancel()
        if not sp.exited.done():   # the client went away first: the command goes too
            runtime.host.shim.signal(sp, signal.SIGKILL, group=True)
        for fd in {streams.stdout, streams.stderr, streams.stdin} - {None}:
            try:
                os.close(fd)
            except OSError:
                pass
    return ws


async def _status(ws: web.WebSocketResponse, status: dict) -> None:
    if not ws.closed:
        await ws.send_bytes(bytes([ERROR]) + json.dumps(status, separators=(",", ":")).encode())
        await ws.close()


async def _pump(ws: web.WebSocketResponse, fd: int, channel: int) -> None:
    """Copy what the command writes to ``fd`` onto ``channel`` until its end."""
    async for data in read_chunks(fd):
        if not ws.closed:
            await ws.send_bytes(bytes([channel]) + data)


async def _feed(ws: web.WebSocketResponse, streams: Any, tty: bool) -> None:
    """What kubectl sends: stdin, the end of stdin (v5 close), terminal sizes."""
    async for msg in ws:
        if msg.type == WSMsgType.TEXT and msg.data:
            # clients that write strings (the official Python client) send text frames: the channel is the
            # first character
            channel, data = ord(msg.data[0]), msg.data[1:].encode()
        elif msg.type == WSMsgType.BINARY and msg.data:
            channel, data = msg.data[0], msg.data[1:]
        else:
            continue
        if channel == STDIN and streams.stdin is not None:
            await _write_all(streams.stdin, data)
        elif channel == CLOSE and data[:1] == bytes([STDIN]) and streams.stdin is not None and not tty:
            os.close(streams.stdin)
            streams.stdin = None
        elif channel == RESIZE and tty:
            size = json.loads(data or b"{}")
            fcntl.ioctl(streams.stdout, termios.TIOCSWINSZ,
                        struct.pack("HHHH", int(size.get("Height", 0)), int(size.get("Width", 0)), 0, 0))


async def _write_all(fd: int, data: bytes) -> None:
    os.set_blocking(fd, False)
    while data:
        try:
            n = os.write(fd, data)
        except BlockingIOError:
            await fd_ready(fd, writable=True)
            continue
        except OSError:
            return   # the command closed its stdin
        data = data[n:]

"""``pods/exec`` for the process runtime's containers, over WebSocket and over SPDY/3.1.

WebSocket (pkg/kubelet/cri/streaming/remotecommand/websocket.go, wsstream): every message starts with its
channel — 0 stdin, 1 stdout, 2 stderr, 3 the final status, 4 terminal resize — as a byte (subprotocols
``channel.k8s.io``, ``v4.channel.k8s.io``, ``v5.channel.k8s.io``, or none) or as the digit character with
the data in base64 in a text message (``base64.channel.k8s.io``, ``v4.base64.channel.k8s.io``); in v5,
``[255, channel]`` closes one direction (kubectl sends it for the end of stdin). Once open, an empty message
on the lowest channel the client asked for (stdout, else stderr, else the status) says so.

SPDY/3.1 (httpstream.go; kubectl before 1.30, client-go's SPDY executor): the client opens one stream per
channel, named by its ``streamtype`` header (error, stdin, stdout, stderr, resize); once all it asked for
are open the command runs; the end of stdin is a FIN on the stdin stream; sizes arrive as JSON on the resize
stream (podlife.apiserver.spdyupgrade takes the connection over).

The command's end is a metav1.Status on the status channel, then the connection closes (ServeExec):
Success, or NonZeroExitCode with the status as an ExitCode cause, which kubectl exits with. In protocol v4
and v5 the status is JSON; before (channel.k8s.io, SPDY v1-v3) only a failure is written, as its message.

The command runs in the container's environment and working directory (podlife.runtime.process open_exec);
it does not touch the model: no trace records, as a real exec leaves none in the kubelet.
"""

from __future__ import annotations

import asyncio
import base64
import fcntl
import json
import os
import signal
import struct
import termios
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import WSMsgType, web

from podlife.api.podutil import container_names, container_statuses
from podlife.apiserver import logstream, spdy3, spdyupgrade
from podlife.apiserver.status import bad_request
from podlife.runtime.cri import RuntimeError_
from podlife.runtime.process import exec_error
from podlife.runtime.shim import fd_ready, read_chunks

# wsstream's subprotocols as the kubelet lists them (and v5, kubectl 1.30+); aiohttp picks the client's first
# that is here, as wsstream's handshake does
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io", "v4.base64.channel.k8s.io", "channel.k8s.io",
             "base64.channel.k8s.io")
# remotecommand.SupportedStreamingProtocols: v4, v3, v2, v1
SPDY_PROTOCOLS = ("v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
STREAM_TYPES = {"stdin": STDIN, "stdout": STDOUT, "stderr": STDERR, "error": ERROR, "resize": RESIZE}
STREAM_CREATION_TIMEOUT = 30.0   # remotecommand.DefaultStreamCreationTimeout


def runtime_of(server: Any, pod: dict) -> Any:
    """The runtime of the pod's node when it runs real processes, else None."""
    kl = server.cluster.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
    return kl.runtime if kl is not None and kl.runtime.writes_logs else None


class Channels(Protocol):
    """One exec's connection, whichever its transport."""

    async def write(self, channel: int, data: bytes) -> None: ...

    async def finish(self, status: dict) -> None: ...   # the final status, then the connection closes

    def incoming(self) -> AsyncIterator[tuple[int, bytes]]: ...   # (channel, data) from the client


def _flag(q: Any, name: str) -> bool:
    return q.get(name) in ("true", "1")


@dataclass
class StreamOptions:
    """What an exec or attach asks for (remotecommand.NewOptions), of which container."""
    container: str
    container_id: str    # of its running instance, "" when none runs
    tty: bool
    stdin: bool
    stdout: bool
    stderr: bool
    protocol: str        # the SPDY protocol negotiated, "" over WebSocket

    @property
    def wanted(self) -> set[int]:
        return {ch for ch, on in ((STDIN, self.stdin), (STDOUT, self.stdout), (STDERR, self.stderr)) if on}


def stream_options(request: web.Request, t: Any, pod: dict) -> StreamOptions | web.Response:
    """The container the request names (streamLocation's 400s) and the streams it asks for; for SPDY, the
    protocol negotiated, or the refusal to answer."""
    q = request.query
    spec = pod.get("spec") or {}
    names = container_names(spec)
    container = q.get("container") or (names[0] if len(spec.get("containers") or []) == 1 else "")
    if not container:
        raise bad_request(f"a container name must be specified for pod {t.name}, choose one of: "
                          f"[{' '.join(c['name'] for c in spec.get('containers') or [])}]")
    if container not in names:
        raise bad_request(f"container {container} is not valid for pod {t.name}")
    tty, stdin, stdout = _flag(q, "tty"), _flag(q, "stdin"), _flag(q, "stdout")
    if not (stdin or stdout or _flag(q, "stderr")):
        # pkg/registry/core/pod/strategy.go streamParams
        raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
    statuses = container_statuses(pod.get("status") or {})
    cid = next((s.get("containerID", "") for s in statuses if s["name"] == container
                and "running" in (s.get("state") or {})), "").split("://", 1)[-1]
    protocol = ""
    if not logstream.is_websocket(request):
        chosen = spdyupgrade.negotiate(request, SPDY_PROTOCOLS)
        if isinstance(chosen, web.Response):
            return chosen
        protocol = chosen
    # remotecommand.NewOptions: no stderr with a terminal
    return StreamOptions(container, cid, tty, stdin, stdout, _flag(q, "stderr") and not tty, protocol)


async def open_channels(request: web.Request, opts: StreamOptions) -> tuple[web.StreamResponse, Channels | None]:
    """Switch protocols and wait for the client's streams; (the response, the channels, None when the client
    did not open its streams in time)."""
    if opts.protocol:
        resp, link = await spdyupgrade.upgrade(request, opts.protocol)
        spdy_channels = SpdyChannels(spdyupgrade.Session(link), opts.protocol)
        # the kubelet waits for the error stream and each it was asked for (v3+: and resize with a terminal)
        expected = len(opts.wanted) + 1 + (1 if opts.tty and opts.protocol in SPDY_PROTOCOLS[:2] else 0)
        try:
            await asyncio.wait_for(spdy_channels.opened(expected), STREAM_CREATION_TIMEOUT)
        except asyncio.TimeoutError:   # "timed out waiting for client to create streams"
            link.close()
            return resp, None
        return resp, spdy_channels
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=0)
    await ws.prepare(request)
    ws_channels = WebSocketChannels(ws, opts.wanted)
    # createWebSocketStreams: an empty message on the lowest channel written says the streams are open
    await ws_channels.write(STDOUT if opts.stdout else STDERR if opts.stderr else ERROR, b"")
    return ws, ws_channels


async def serve(server: Any, request: web.Request, t: Any, runtime: Any, pod: dict) -> web.StreamResponse:
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise bad_request(f"cannot exec into a container in a completed pod; current phase is {phase}")
    opts = stream_options(request, t, pod)
    if isinstance(opts, web.Response):
        return opts
    command = request.query.getall("command", [])
    if not command:
        raise bad_request("you must specify at least 1 command")
    try:
        streams = runtime.open_exec(opts.container_id, command, opts.stdin, opts.tty) if opts.container_id \
            else None
    except RuntimeError_:
        streams = None
    if streams is None:
        raise bad_request(f'container not found ("{opts.container}")')
    resp, channels = await open_channels(request, opts)
    if channels is None:
        _discard(streams, runtime)
    else:
        await _session(channels, streams, runtime, command, opts.tty)
    return resp


class WebSocketChannels:
    def __init__(self, ws: web.WebSocketResponse, wanted: set[int]) -> None:
        self.ws = ws
        protocol = ws.ws_protocol or ""
        self.base64 = ".base64." in f".{protocol}"
        self.json_status = protocol.startswith(("v4.", "v5."))
        self.wanted = wanted | {ERROR}

    @property
    def closed(self) -> bool:
        return self.ws.closed

    async def write(self, channel: int, data: bytes) -> None:
        if self.ws.closed or channel not in self.wanted:
            return   # wsstream's IgnoreChannel: what the client did not ask for is dropped
        if self.base64:
            await self.ws.send_str(chr(ord("0") + channel) + base64.b64encode(data).decode())
        else:
            await self.ws.send_bytes(bytes([channel]) + data)

    async def finish(self, status: dict) -> None:
        if not self.ws.closed:
            text = _status_bytes(status, self.json_status)
            if text is not None:
                await self.write(ERROR, text)
            await self.ws.close()

    async def incoming(self) -> AsyncIterator[tuple[int, bytes]]:
        async for msg in self.ws:
            if msg.type == WSMsgType.TEXT and msg.data:
                # base64 protocols, and clients that write strings (the official Python client): the channel
                # is the first character
                if self.base64:
                    try:
                        yield ord(msg.data[0]) - ord("0"), base64.b64decode(msg.data[1:])
                    except ValueError:
                        continue
                else:
                    yield ord(msg.data[0]), msg.data[1:].encode()
            elif msg.type == WSMsgType.BINARY and msg.data:
                yield msg.data[0], msg.data[1:]


class SpdyChannels:
    def __init__(self, session: spdyupgrade.Session, protocol: str) -> None:
        self.session = session
        self.json_status = protocol == SPDY_PROTOCOLS[0]
        self.streams: dict[int, int] = {}     # channel → stream id
        self._kinds: dict[int, int] = {}      # stream id → channel
        self._frames = session.frames()
        self._early: list[spdy3.Frame] = []   # frames that came while the streams were being opened
        self._resize = b""

    @property
    def closed(self) -> bool:
        return self.session.link.closed

    async def opened(self, expected: int) -> None:
        """waitForStreams: SYN_STREAMs, each answered, until ``expected`` are open."""
        async for f in self._frames:
            if f.control and f.kind == spdy3.SYN_STREAM:
                channel = STREAM_TYPES.get((f.headers or {}).get("streamtype", ""))
                await self.session.reply(f.stream)
                if channel is None:
                    continue   # "unexpected stream type"
                self.streams[channel] = f.stream
                self._kinds[f.stream] = channel
                if len(self.streams) >= expected:
                    return
            else:
                self._early.append(f)
        raise asyncio.TimeoutError   # the client went away first

    async def write(self, channel: int, data: bytes) -> None:
        stream = self.streams.get(channel)
        if stream is not None and not self.closed:
            await self.session.data(stream, data)

    async def finish(self, status: dict) -> None:
        if self.closed:
            return
        text = _status_bytes(status, self.json_status)
        if text is not None:
            await self.write(ERROR, text)
        await self.session.close(sorted(s for ch, s in self.streams.items() if ch != STDIN))

    async def incoming(self) -> AsyncIterator[tuple[int, bytes]]:
        early, self._early = self._early, []
        for f in early:
            for item in self._input(f):
                yield item
        async for f in self._frames:
            for item in self._input(f):
                yield item

    def _input(self, f: spdy3.Frame) -> list[tuple[int, bytes]]:
        channel = self._kinds.get(f.stream)
        if f.control or channel is None:
            return []
        out: list[tuple[int, bytes]] = []
        if channel == STDIN and f.payload:
            out.append((STDIN, f.payload))
        elif channel == RESIZE:
            # handleResizeEvents: a stream of JSON objects
            self._resize += f.payload
            decoder = json.JSONDecoder()
            while self._resize.strip():
                text = self._resize.decode("utf-8", "replace").lstrip()
                try:
                    _, end = decoder.raw_decode(text)
                except ValueError:
                    break
                out.append((RESIZE, text[:end].encode()))
                self._resize = text[end:].encode()
        if channel == STDIN and f.flags & spdy3.FLAG_FIN:
            out.append((CLOSE, bytes([STDIN])))
        return out


def _status_bytes(status: dict, json_status: bool) -> bytes | None:
    """v4WriteStatusFunc (the Status as JSON) or v1WriteStatusFunc (nothing on success, else the message)."""
    if json_status:
        return json.dumps(status, separators=(",", ":")).encode()
    if status.get("status") == "Success":
        return None
    return str(status.get("message", "")).encode()


def _discard(streams: Any, runtime: Any) -> None:
    sp = streams.spawn
    if sp is not None and not sp.exited.done():
        runtime.host.shim.signal(sp, signal.SIGKILL, group=True)
    for fd in {streams.stdout, streams.stderr, streams.stdin} - {None}:
        try:
            os.close(fd)
        except OSError:
            pass


async def _session(ch: Channels, streams: Any, runtime: Any, command: list[str], tty: bool) -> None:
    sp = streams.spawn
    outputs = [asyncio.create_task(_pump(ch, streams.stdout, STDOUT))]
    if streams.stderr is not None:
        outputs.append(asyncio.create_task(_pump(ch, streams.stderr, STDERR)))
    stdin = asyncio.create_task(_feed(ch, streams, tty))
    try:
        try:
            await sp.started
        except Exception as e:  # noqa: BLE001 - the command could not start: say why, as the kubelet does
            why = f"error executing command in container: {exec_error(command[0], '', e)}"
            await ch.finish({"metadata": {}, "status": "Failure", "message": f"Internal error occurred: {why}",
                             "reason": "InternalError", "details": {"causes": [{"message": why}]}, "code": 500})
            return
        code, sig = await asyncio.shield(sp.exited)
        await asyncio.gather(*outputs)
        status = 128 + sig if sig else code
        if status == 0:
            await ch.finish({"metadata": {}, "status": "Success"})
        else:
            await ch.finish({
                "metadata": {}, "status": "Failure",
                # containerd's execsync: the command as Go prints a []string
                "message": f"command terminated with non-zero exit code: error executing command "
                           f"[{' '.join(command)}], exit code {status}",
                "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(status)}]}})
    finally:
        stdin.cancel()
        for task in outputs:
            task.cancel()
        _discard(streams, runtime)   # the client went away first: the command goes too


async def _pump(ch: Channels, fd: int, channel: int) -> None:
    """Copy what the command writes to ``fd`` onto ``channel`` until its end."""
    async for data in read_chunks(fd):
        await ch.write(channel, data)


async def _feed(ch: Channels, streams: Any, tty: bool) -> None:
    """What the client sends: stdin, the end of stdin, terminal sizes."""
    async for channel, data in ch.incoming():
        if channel == STDIN and streams.stdin is not None:
            await write_all(streams.stdin, data)
        elif channel == CLOSE and data[:1] == bytes([STDIN]) and streams.stdin is not None and not tty:
            os.close(streams.stdin)
            streams.stdin = None
        elif channel == RESIZE and tty:
            try:
                size = json.loads(data or b"{}")
                fcntl.ioctl(streams.stdout, termios.TIOCSWINSZ,
                            struct.pack("HHHH", int(size.get("Height", 0)), int(size.get("Width", 0)), 0, 0))
            except (ValueError, AttributeError, OSError, struct.error):
                continue


async def write_all(fd: int, data: bytes) -> None:
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

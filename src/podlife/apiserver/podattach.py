"""``pods/attach`` for the process runtime's containers, over WebSocket or SPDY/3.1 as exec
(podlife.apiserver.podexec opens the channels): what the container's main process writes from then on, on
stdout and stderr, until it ends; then Success on the status channel and the connection closes (the kubelet's
ServeAttach, containerd's attach to the container's IO). The output is tapped where the runtime copies it
into the log file (podlife.runtime.crilog LogWriter), so the log keeps all of it.

Stdin reaches the process when its container was created with ``stdin: true`` (the runtime gave it a pipe);
the client's end of stdin, and with ``stdinOnce`` the end of the first attach, closes it, as containerd's
attach does. Otherwise what the client sends is dropped. A ``tty: true`` terminal is not modelled.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from podlife.apiserver import podexec
from podlife.apiserver.status import bad_request

CHANNELS = {"stdout": podexec.STDOUT, "stderr": podexec.STDERR}


async def serve(request: web.Request, t: Any, runtime: Any, pod: dict) -> web.StreamResponse:
    opts = podexec.stream_options(request, t, pod)
    if isinstance(opts, web.Response):
        return opts
    proc = runtime.procs.get(opts.container_id) if opts.container_id else None
    if proc is None or proc.log is None or proc.log.closed:
        raise bad_request(f'container not found ("{opts.container}")')
    writer = proc.log
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    tap = lambda stream, data: queue.put_nowait((stream, data))   # noqa: E731
    writer.taps.append(tap)
    stdin_once = bool(proc.config.spec.get("stdinOnce")) and opts.stdin
    try:
        resp, channels = await podexec.open_channels(request, opts)
        if channels is not None:
            await _session(channels, queue, proc if opts.stdin else None)
        return resp
    finally:
        if tap in writer.taps:
            writer.taps.remove(tap)
        if stdin_once:
            proc.close_stdin()


async def _session(ch: podexec.Channels, queue: asyncio.Queue[tuple[str, bytes]], proc: Any) -> None:
    # what the client sends goes to the container's stdin (when it has one); its going away ends the attach
    gone = asyncio.create_task(_feed(ch, proc))
    try:
        while True:
            got = asyncio.create_task(queue.get())
            await asyncio.wait({got, gone}, return_when=asyncio.FIRST_COMPLETED)
            if not got.done():
                got.cancel()
                return
            stream, data = got.result()
            if not stream:
                break   # the process's streams closed: it ended
            await ch.write(CHANNELS[stream], data)
        await ch.finish({"metadata": {}, "status": "Success"})
    finally:
        gone.cancel()


async def _feed(ch: podexec.Channels, proc: Any) -> None:
    async for channel, data in ch.incoming():
        if proc is None or proc.stdin is None:
            continue
        if channel == podexec.STDIN:
            await podexec.write_all(proc.stdin, data)
        elif channel == podexec.CLOSE and data[:1] == bytes([podexec.STDIN]):
            proc.close_stdin()

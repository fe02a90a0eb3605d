"""``pods/attach`` for the process runtime's containers, over WebSocket or SPDY/3.1 as exec
(podlife.apiserver.podexec opens the channels): what the container's main process writes from then on, on
stdout and stderr, until it ends; then Success on the status channel and the connection closes (the kubelet's
ServeAttach, containerd's attach to the container's IO). The output is tapped where the runtime copies it
into the log file (podlife.runtime.crilog LogWriter), so the log keeps all of it.

What is not: the container's stdin. The process runtime starts every process with its stdin closed
(``stdin: true`` in the spec is not modelled), so what a client sends is dropped, as containerd drops stdin
for a container created without it; a terminal (``tty: true``) is not allocated either.
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
    found = runtime.log_file(opts.container_id) if opts.container_id else None
    writer = found[1] if found is not None else None
    if writer is None or writer.closed:
        raise bad_request(f'container not found ("{opts.container}")')
    queue: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
    tap = lambda stream, data: queue.put_nowait((stream, data))   # noqa: E731
    writer.taps.append(tap)
    try:
        resp, channels = await podexec.open_channels(request, opts)
        if channels is not None:
            await _session(channels, queue)
        return resp
    finally:
        if tap in writer.taps:
            writer.taps.remove(tap)


async def _session(ch: podexec.Channels, queue: asyncio.Queue[tuple[str, bytes]]) -> None:
    # the client's stdin and sizes are read and dropped; its going away ends the attach
    gone = asyncio.create_task(_drain(ch))
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


async def _drain(ch: podexec.Channels) -> None:
    async for _ in ch.incoming():
        pass

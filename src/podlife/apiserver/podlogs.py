"""``pods/log`` for containers whose runtime writes their output (the process runtime): the kubelet's
GetContainerLogs (pkg/kubelet/kubelet_pods.go validateContainerLogStatus, then ReadLogs of the container's
CRI log file), streamed as it is read, so ``kubectl logs -f`` follows (over HTTP or a WebSocket:
podlife.apiserver.logstream)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from podlife.api.meta import Obj
from podlife.apiserver.logstream import LogStream
from podlife.apiserver.status import bad_request
from podlife.kubelet.kuberuntime import logs
from podlife.runtime.cri import RUNNING


@dataclass
class LogSource:
    path: str
    writer: Any             # the runtime's LogWriter while the process writes, else None
    runtime: Any
    container_id: str

    def running(self) -> bool:
        c = self.runtime.containers.get(self.container_id)
        return c is not None and c.state == RUNNING


def container_log(cluster: Any, pod: Obj, container: str, status: Obj, previous: bool) -> LogSource | None:
    """The log of the container (its current instance, or the one before with ``previous``); None when its
    runtime writes no log files (simulated containers). Raises the kubelet's 400 when there is no such
    instance."""
    kl = cluster.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
    if kl is None or not kl.runtime.writes_logs:
        return None
    if previous:
        cid = ((status.get("lastState") or {}).get("terminated") or {}).get("containerID", "")
        if not cid:
            raise bad_request(f'previous terminated container "{container}" in pod "{pod["metadata"]["name"]}" '
                              "not found")
    else:
        cid = status.get("containerID", "")
    found = kl.runtime.log_file(cid.split("://", 1)[-1]) if cid else None
    if found is None:
        raise bad_request(f'container "{container}" in pod "{pod["metadata"]["name"]}" is waiting to start: '
                          "ContainerCreating")
    path, writer = found
    return LogSource(path, writer, kl.runtime, cid.split("://", 1)[-1])


async def serve(request: web.Request, source: LogSource) -> web.StreamResponse:
    # the log's times are the machine's (the process wrote them): sinceSeconds counts back from its clock
    opts = logs.options(request.query, datetime.now(timezone.utc))
    out = await LogStream.open(request, opts.follow)
    writer = source.writer
    try:
        async for piece in logs.read_logs(source.path, opts, source.running,
                                          writer.changed if writer is not None else None):
            await out.write(piece)
    except FileNotFoundError:
        pass
    except (ConnectionResetError, RuntimeError):
        return out.resp   # the client went away
    return await out.close()

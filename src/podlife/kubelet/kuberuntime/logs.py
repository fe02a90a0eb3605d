"""Reading a container's CRI log file for ``pods/log``: pkg/kubelet/kuberuntime/logs/logs.go ReadLogs.

Options as NewLogOptions makes them: ``tailLines`` counts lines of the file from its end (partial lines
count), ``sinceSeconds``/``sinceTime`` (the later wins) drop lines written before, ``timestamps`` puts each
line's RFC3339Nano time in front of it, ``limitBytes`` cuts the output. ``follow`` keeps reading while the
container runs: after the end of the file it waits for a write (or a second, logForceCheckPeriod) and stops
once the container no longer runs and nothing more was written.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from podlife.runtime.crilog import parse_line, timestamp

FORCE_CHECK = 1.0   # logForceCheckPeriod


@dataclass
class LogOptions:
    tail: int = -1
    limit_bytes: int = -1
    since: str = ""          # RFC3339NanoFixed: lines before it are left out
    follow: bool = False
    timestamps: bool = False


def options(query: Any, now: datetime) -> LogOptions:
    """NewLogOptions from the request's query (v1.PodLogOptions)."""
    opts = LogOptions(follow=query.get("follow") in ("true", "1"),
                      timestamps=query.get("timestamps") in ("true", "1"))
    if (query.get("tailLines") or "").lstrip("-").isdigit():
        opts.tail = int(query["tailLines"])
    if (query.get("limitBytes") or "").isdigit():
        opts.limit_bytes = int(query["limitBytes"])
    since = None
    if (query.get("sinceSeconds") or "").isdigit():
        since = now - timedelta(seconds=int(query["sinceSeconds"]))
    if query.get("sinceTime"):
        t = _parse_time(query["sinceTime"])
        if t is not None and (since is None or t > since):
            since = t
    if since is not None:
        opts.since = timestamp(int(since.timestamp()) * 1_000_000_000 + since.microsecond * 1000)
    return opts


def _parse_time(text: str) -> datetime | None:
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def _render(line: bytes, opts: LogOptions) -> bytes | None:
    """parseCRILog + logWriter.write for one line of the file (None: left out)."""
    parsed = parse_line(line)
    if parsed is None or (opts.since and parsed[0].decode() < opts.since):
        return None
    ts, content = parsed
    return ts + b" " + content if opts.timestamps else content


async def read_logs(path: str, opts: LogOptions, running: Callable[[], bool],
                    changed: Callable[[float], Any] | None) -> AsyncIterator[bytes]:
    """The rendered log, in pieces; with ``follow``, until the container stops. ``changed(timeout)`` waits for
    the writer's next write (without one, the file is looked at every FORCE_CHECK)."""
    remain = opts.limit_bytes if opts.limit_bytes >= 0 else None
    with open(path, "rb") as f:
        data = f.read()
        lines = data.splitlines(keepends=True)
        pending = b""
        if lines and not lines[-1].endswith(b"\n"):
            pending = lines.pop()   # an incomplete line: read again once it is complete
        if opts.tail >= 0:
            lines = lines[len(lines) - opts.tail:] if opts.tail else []
        while True:
            out = b"".join(x for x in (_render(line, opts) for line in lines) if x is not None)
            if remain is not None:
                out = out[:remain]
                remain -= len(out)
            if out:
                yield out
            if remain is not None and remain <= 0:
                return
            if not opts.follow:
                return
            if not running():
                more = f.read()
                if not more:
                    return
                data = pending + more
            else:
                if changed is not None:
                    await changed(FORCE_CHECK)
                else:
                    await asyncio.sleep(FORCE_CHECK)
                data = pending + f.read()
            lines = data.splitlines(keepends=True)
            pending = b""
            if lines and not lines[-1].endswith(b"\n"):
                pending = lines.pop()

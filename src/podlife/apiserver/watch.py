"""Watch: the store's watch, streamed as chunked JSON lines (one metav1.WatchEvent per line).

As the watch cache does (staging/src/k8s.io/apiserver/pkg/storage/cacher): without a resourceVersion (or "0")
the stream starts with an ADDED event per current object; with one, it replays the changes after it, or
answers an ERROR event with 410 Expired when that version is older than the history kept. An object that
starts or stops matching the selectors is ADDED or DELETED. With allowWatchBookmarks a BOOKMARK carrying the
current resourceVersion is sent 2 s before the timeout and every minute (cacher.go nextBookmarkTime).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from podlife.api.errors import ApiError
from podlife.api.meta import Obj

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
BOOKMARK_EVERY = 60.0
_ALIVE_CHECK = 5.0   # how often an idle watch looks whether its client is still there
WRITE_EVENTS = 256   # queued events sent in one write at most (a replay of every pod is not one buffer)
HOLD_MAX = 0.05      # how long events wait for the run under way to end, at most (s)
FRAMES_KEPT = 4096   # encoded events kept for the other watches of the same encoding


class Frames:
    """Each event's line, encoded once for all the watches that send it the same way (the cacher's
    cachingObject: one serialization per event and encoding, whatever the number of watchers). Keyed by the
    event's type and stored object (stored objects are never changed in place; the object is kept with its
    line, so its id cannot be reused while the entry lives); the oldest are dropped beyond FRAMES_KEPT."""

    def __init__(self) -> None:
        self._lines: dict[tuple[Any, str, int], tuple[Obj, bytes]] = {}

    def line(self, encoding: Any, type_: str, obj: Obj, make: Callable[[], bytes]) -> bytes:
        key = (encoding, type_, id(obj))
        hit = self._lines.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        line = make()
        self._lines[key] = (obj, line)
        if len(self._lines) > FRAMES_KEPT:
            del self._lines[next(iter(self._lines))]
        return line



class _Ended(Exception):
    """The watch ended early (its error sent)."""

class WatchStream:
    """One watch request. ``matches(obj)`` applies the selectors; ``encode(type, obj, first)`` renders the
    event's object (the object itself, converted, or a Table); ``shared`` names that encoding when it does not
    depend on the watch (not a Table), so its lines are made once for every such watch (``frames``)."""

    def __init__(self, server: Any, kind: str, namespace: str | None, matches: Callable[[Obj], bool],
                 encode: Callable[[str, Obj, bool], Any], bookmark_object: Callable[[str], Any],
                 since: int | None, bookmarks: bool, timeout: float | None, initial_events_end: bool = False,
                 prepare: Callable[[Obj], Awaitable[None]] | None = None, shared: Any = None,
                 frames: Frames | None = None) -> None:
        self.server = server
        self.kind = kind
        self.namespace = namespace
        self.matches = matches
        self.encode = encode
        self.bookmark_object = bookmark_object
        self.since = since
        self.bookmarks = bookmarks
        self.timeout = timeout
        self.initial_events_end = initial_events_end   # sendInitialEvents: a bookmark marks their end
        self.prepare = prepare   # awaited before an object is encoded (a custom resource's conversion webhook)
        self._events: deque[tuple[str, Obj]] = deque()
        self._ready = asyncio.Event()
        self._watch: Any = None
        self._first = True
        self._timed_out = False
        self._timer: asyncio.TimerHandle | None = None   # the wake-up for the timeout, a bookmark or the alive check
        self._timer_at = 0.0
        # (a watch that prepares its objects, a custom resource's, encodes its own)
        self.shared = shared if frames is not None and prepare is None else None
        self.frames = frames

    def _on_change(self, type_: str, obj: Obj, old: Obj | None) -> None:
        now = self.matches(obj) if type_ != DELETED else False
        before = old is not None and self.matches(old)
        if type_ == DELETED:
            if self.matches(obj):
                self._push(DELETED, obj)
            return
        if type_ == ADDED:
            if now:
                self._push(ADDED, obj)
            return
        if now and before:
            self._push(MODIFIED, obj)
        elif now:
            self._push(ADDED, obj)
        elif before:
            self._push(DELETED, obj)

    def _push(self, type_: str, obj: Obj) -> None:
        self._events.append((type_, obj))
        self._ready.set()

    def _event(self, type_: str, obj: Obj) -> bytes:
        """The event's line as this watch sends it."""
        if self.shared is not None and self.frames is not None:
            line = self.frames.line(self.shared, type_, obj,
                                    lambda: self._line(type_, self.encode(type_, obj, False)))
        else:
            line = self._line(type_, self.encode(type_, obj, self._first))
        self._first = False
        return line

    def _line(self, type_: str, obj: Any) -> bytes:
        if isinstance(obj, bytes):   # the object's JSON, made once (podlife.apiserver.cache)
            return b'{"type":"%s","object":%s}\n' % (type_.encode(), obj)
        return orjson.dumps({"type": type_, "object": obj}) + b"\n"

    async def serve(self, request: web.Request) -> web.StreamResponse:
        store = self.server.store
        error: ApiError | None = None
        if self.since is None:
            for o in store.list(self.kind, self.namespace):
                if self.matches(o):
                    self._push(ADDED, o)
        try:
            self._watch = store.watch(self.kind, self._on_change, namespace=self.namespace, since=self.since)
        except ApiError as e:
            error = e
        if not self.server.clock.lock.locked():
            # the replay is delivered through the kernel at this instant (a running driver delivers it in
            # its next slice)
            self.server.clock.settle()
        resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        try:
            if error is not None:
                from podlife.apiserver.status import status_body

                await resp.write(self._line(ERROR, status_body(error)))
                return resp
            if self.initial_events_end:
                # KEP-3157 watch-list: the initial ADDED events end with a bookmark annotated
                # k8s.io/initial-events-end (cacher.go)
                await self._drain(resp)
                mark = self.bookmark_object(str(store.resource_version))
                mark["metadata"]["annotations"] = {"k8s.io/initial-events-end": "true"}
                await resp.write(self._line(BOOKMARK, mark))
            await self._stream(request, resp)
        except (ConnectionResetError, asyncio.CancelledError, _Ended):
            pass
        finally:
            if self._watch is not None:
                store.unwatch(self._watch)
            if self._timer is not None:
                self._timer.cancel()
        return resp

    async def _drain(self, resp: web.StreamResponse) -> None:
        """Send the queued events, in order, one write (one chunk of the stream) per up to WRITE_EVENTS of them:
        upstream flushes only when no event is left queued (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/
        watch.go HandleHTTP: ``if len(ch) == 0 { flusher.Flush() }``)."""
        while self._events:
            lines: list[bytes] = []
            while self._events and len(lines) < WRITE_EVENTS:
                type_, obj = self._events.popleft()
                if self.prepare is not None:
                    try:
                        await self.prepare(obj)
                    except ApiError as e:   # the watch ends with the error as its last event
                        from podlife.apiserver.status import status_body

                        lines.append(self._line(ERROR, status_body(e)))
                        await resp.write(b"".join(lines))
                        raise _Ended from None
                lines.append(self._event(type_, obj))
            await resp.write(lines[0] if len(lines) == 1 else b"".join(lines))

    async def _stream(self, request: web.Request, resp: web.StreamResponse) -> None:
        start = time.monotonic()
        deadline = start + self.timeout if self.timeout is not None else None
        next_bookmark = None
        if self.bookmarks:
            next_bookmark = start + BOOKMARK_EVERY
            if deadline is not None:
                next_bookmark = min(next_bookmark, deadline - 2.0)
        while True:
            await self._hold()
            await self._drain(resp)
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return
            if next_bookmark is not None and now >= next_bookmark:
                rv = str(self.server.store.resource_version)
                await resp.write(self._line(BOOKMARK, self.bookmark_object(rv)))
                next_bookmark = now + BOOKMARK_EVERY
                if deadline is not None:
                    next_bookmark = min(next_bookmark, max(deadline - 2.0, now + BOOKMARK_EVERY))
                continue
            wake = [t for t in (deadline, next_bookmark) if t is not None]
            wait = min([*(t - now for t in wake), _ALIVE_CHECK])
            self._ready.clear()
            if self._events:
                continue
            # a timer rather than asyncio.wait_for (a task and two futures per wake-up of each watch), and one
            # kept across wake-ups: made again only when it would ring later than this wait asks (a timer made
            # and cancelled per wake-up was a third of the fan-out's CPU with 100 watches); one that rings early
            # only makes the loop look again
            loop = asyncio.get_running_loop()
            at = loop.time() + max(wait, 0.0)
            if self._timer is None or self._timer_at > at:
                if self._timer is not None:
                    self._timer.cancel()
                self._timer, self._timer_at = loop.call_at(at, self._time_up), at
            await self._ready.wait()
            if self._timed_out:
                self._timed_out = False
                transport = request.transport
                if transport is None or transport.is_closing():
                    return

    async def _hold(self) -> None:
        """While a write (or the clock) runs the kernel, the events it makes (a pod's ADDED, its binding, the
        kubelet's status) come in slices: they are sent together when that run ends, one send per watch
        instead of one per slice, as upstream's watch handler flushes only once its channel is empty (watch.go
        HandleHTTP). At most HOLD_MAX, so a run that waits on a client (a webhook) holds no event long."""
        lock = self.server.clock.lock
        if self._events and lock.locked():
            await lock.released(HOLD_MAX)

    def _time_up(self) -> None:
        self._timer = None
        self._timed_out = True
        self._ready.set()


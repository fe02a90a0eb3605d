"""Work in slices: a long synchronous computation on the event loop's thread that lets the loop in now and then.

``podlife up`` serves every client from one asyncio loop, and the work a write sets off (the controllers'
reaction to a Deployment of 150,000 replicas, the managedFields of 10,000 labels) is plain synchronous Python.
``run(fn)`` runs ``fn`` in a greenlet of its own; at each ``pause()`` it reaches after ``SLICE`` seconds of wall
time, the greenlet hands control back to ``run``, which lets the loop serve others for ``YIELD`` seconds and
then goes on where ``fn`` stopped. Nothing else about ``fn`` changes: the same code runs in the same order,
only when others are served in between depends on the wall clock, so the model stays deterministic.

``pause()`` is called where the state others may read is whole: between two kernel events, after a store
write (podlife.api.store), between the fields of an object being decoded or tracked. Outside ``run`` (``podlife
run``, the tests) it costs a global lookup. What runs in a slice must not await: a coroutine driven by ``run``
that awaits a future hands the future to ``run``, which awaits it on its behalf.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from greenlet import greenlet

# asyncio and greenlet are imported by what slices work (``run``, only ``podlife up`` calls it): a batch run's
# ``pause()`` finds no driver and never needs them

T = TypeVar("T")

# wall seconds of work between two turns of the event loop: short enough that another client's request waits
# a few slices at most (well under 100 ms), long enough that switching costs little of the work
SLICE = 0.01
# how long the loop then serves others: a request takes several turns of the loop (accept, read, handle,
# write), which all fit in this when nothing else is due
YIELD = 0.001

_driver: greenlet | None = None   # the greenlet of the sliced work in progress
_slice_end = 0.0
_on_pause: Callable[[], None] | None = None
slices = 0                        # how often sliced work let the loop in (for the tests)
_abandoned: list[greenlet] = []   # work cancelled while paused (see run), kept from being unwound


def pause() -> None:
    """Let the event loop in if the current slice is spent (and this is the sliced work's greenlet)."""
    g = _driver
    if g is not None and time.perf_counter() >= _slice_end and g is _current():
        if _on_pause is not None:
            _on_pause()
        assert g.parent is not None
        g.parent.switch(None)


class _Await:
    """What a driven coroutine awaits, for ``run`` to await on the loop."""
    __slots__ = ("future",)

    def __init__(self, future: Any) -> None:
        self.future = future


def _current() -> greenlet:
    from greenlet import getcurrent

    return getcurrent()


def _drive(coro: Coroutine[Any, Any, T]) -> T:
    while True:
        try:
            yielded = coro.send(None)
        except StopIteration as e:
            return e.value
        g = _current()
        assert g.parent is not None
        g.parent.switch(_Await(yielded))


async def run(fn: Callable[..., T], *args: Any, on_pause: Callable[[], None] | None = None) -> T:
    """``fn(*args)`` in slices (one sliced work at a time: the caller holds the kernel's lock). ``on_pause`` is
    called before each pause (the store's commit)."""
    global _driver, _slice_end, _on_pause, slices
    import asyncio

    from greenlet import greenlet

    assert _driver is None, "sliced work does not nest"
    g = greenlet(fn)
    _driver, _on_pause = g, on_pause
    try:
        _slice_end = time.perf_counter() + SLICE
        got = g.switch(*args)
        while not g.dead:
            if isinstance(got, _Await):
                _driver = None   # awaiting on the driven code's behalf is not a pause of it
                if got.future is None:   # a bare yield (asyncio.sleep(0))
                    await asyncio.sleep(0)
                else:
                    # what the coroutine's Task would do with the future it yields (tasks.py __step): take
                    # the yield as handled, and wake when the future is done, whatever its outcome (the
                    # coroutine reads that when it resumes)
                    got.future._asyncio_future_blocking = False
                    await asyncio.wait([got.future])
                _driver = g
            else:
                slices += 1
                await asyncio.sleep(YIELD)
            _slice_end = time.perf_counter() + SLICE
            got = g.switch()
        return got
    finally:
        _driver, _on_pause = None, None
        if not g.dead:
            # cancelled while paused, which aiohttp does only when the server stops: the work stays where it
            # was (what it committed is kept), neither finished (a Deployment of 150,000 replicas would hold
            # the stop for minutes) nor unwound in the middle of a kernel event
            _abandoned.append(g)


def wait(awaitable: Any) -> Any:
    """Await from the sliced work's synchronous code (the store calling an admission webhook): the awaitable
    runs as a task on the loop, which serves others meanwhile, and the work resumes with its result."""
    import asyncio

    g = _driver
    if g is None or g is not _current():
        raise RuntimeError("slices.wait outside sliced work")
    task = asyncio.ensure_future(awaitable)
    assert g.parent is not None
    g.parent.switch(_Await(task))
    return task.result()


async def run_coroutine(coro: Coroutine[Any, Any, T], on_pause: Callable[[], None] | None = None) -> T:
    """A coroutine whose synchronous parts run in slices (an API request: its awaits are few and short)."""
    return await run(_drive, coro, on_pause=on_pause)

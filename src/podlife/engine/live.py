"""The live driver: the same kernel as ``podlife run``, advanced by a clock instead of run to the end.

Two clocks decide how far the kernel may run:

- ``realtime``: kernel time = wall time since start × ``speed``. A background task sleeps until the next
  kernel event is due (or until a request wakes it) and runs the kernel up to the wall clock's instant.
- ``manual``: the kernel moves only when ``advance`` is called; between calls the cluster is frozen and every
  request is answered at the same virtual instant, so what a client sees after ``advance(300)`` is exactly
  what ``podlife run`` shows at 300 s.

Either way a write is served at the kernel's current instant: ``sync`` first brings the kernel up to the
clock, the request acts on the store, and ``settle`` runs what that write set off at the same instant (watch
deliveries, controllers' reactions), as an action of a scenario would.

Runs that may be long are sliced (podlife.engine.slices): ``run`` (and ``sync_async``, ``settle_async`` over
it) lets the event loop in between events and after store writes whenever a slice of wall time is spent,
committing what the slice wrote (``after``) first. One driver at a time holds ``lock``: a write request
(podlife.apiserver.server, which runs the whole request sliced, so ``sync`` and ``settle`` in it pause too),
the realtime task, the inbox. A write's response waits until what it set off has run, so the manual clock's
contract holds; writes queue for the lock in arrival order and each acts on a cluster settled at its instant.
Reads do not take the lock (``catch_up``): between two slices they see the store as the run has left it, all
of it committed, as a real API server serves reads while a controller works; with no run under way the clock
moves to its instant first, and what is due by then is run by a driver right after the read rather than
before it. The events run, and their order, are those of one uninterrupted run.

Other input from outside — a process that exited, a probe's answer — comes in through ``deliver``: it is
taken in from the event loop, never in the middle of a kernel step, at the clock's instant of its arrival,
each item followed by what it sets off.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from podlife.engine import slices
from podlife.engine.kernel import Kernel

CLOCKS = ("realtime", "manual")
log = logging.getLogger("podlife.live")
# the realtime task never sleeps longer than this, so a clock that was not woken still catches up
_MAX_SLEEP = 1.0


class DriverLock(asyncio.Lock):
    """The lock of the kernel's driver, which also tells when the run that holds it ends (``released``)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: list[asyncio.Future[None]] = []
        self._cap: asyncio.TimerHandle | None = None

    def release(self) -> None:
        super().release()
        self._end()

    def _end(self) -> None:
        waiting, self._waiting = self._waiting, []
        if self._cap is not None:
            self._cap.cancel()
            self._cap = None
        for f in waiting:
            if not f.done():
                f.set_result(None)

    def released(self, cap: float) -> asyncio.Future[None]:
        """A future done when the present holder releases the lock (whoever takes it next), or ``cap`` s after
        the first of those waiting asked (one timer for them all, not one each)."""
        loop = asyncio.get_running_loop()
        f: asyncio.Future[None] = loop.create_future()
        self._waiting.append(f)
        if self._cap is None:
            self._cap = loop.call_later(cap, self._end)
        return f


class LiveClock:
    def __init__(self, kernel: Kernel, mode: str = "realtime", speed: float = 1.0,
                 wall: Callable[[], float] = time.monotonic) -> None:
        if mode not in CLOCKS:
            raise ValueError(f"clock: expected one of {', '.join(CLOCKS)}, got {mode!r}")
        if not speed > 0:
            raise ValueError(f"speed: expected a positive number, got {speed}")
        self.kernel = kernel
        self.mode = mode
        self.speed = speed
        self._wall = wall
        self._start = wall()
        self._origin = kernel.now   # a restarted cluster's clock goes on from where it stopped
        self._manual_target = kernel.now
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopped = False
        self.listeners: list[Callable[[], None]] = []   # told after the kernel moved (trace followers)
        self.after: list[Callable[[], None]] = []       # called after every run, moved or not (the store's commit)
        self._inbox: list[Callable[[], None]] = []
        self._inbox_task: asyncio.Task[None] | None = None
        self._kick_task: asyncio.Task[None] | None = None
        self.lock = DriverLock()   # the driver of the kernel (see the module's docstring)

    # ---- where the kernel may be --------------------------------------------------------------------

    def target(self) -> float:
        if self.mode == "manual":
            return self._manual_target
        return max(self._origin + (self._wall() - self._start) * self.speed, self.kernel.now)

    def sync(self) -> None:
        """Run the kernel up to the clock's instant, everything due at that instant included."""
        self._run_to(self.target())

    def settle(self) -> None:
        """Run what is due at the current instant (the follow-ups of a write), without moving time."""
        self._run_to(self.kernel.now)

    def advance(self, seconds: float) -> float:
        """Manual clock: move time forward by ``seconds`` and run everything due until then."""
        if self.mode != "manual":
            raise ValueError("advance: the clock is realtime; start podlife up with --clock manual")
        if seconds < 0:
            raise ValueError(f"advance: expected a duration of zero or more, got {seconds}")
        self._manual_target = self.kernel.now + seconds
        self.sync()
        return self.kernel.now

    def advance_until(self, holds: Callable[[], bool], timeout: float) -> bool:
        """Manual clock: run instant by instant (each one whole, as ``advance`` leaves it) and stop at the first
        instant after which ``holds()`` is true, not past it; at most ``timeout`` seconds on. False: the
        condition did not hold by then (the clock is at the deadline)."""
        if self.mode != "manual":
            raise ValueError("advance: the clock is realtime; start podlife up with --clock manual")
        if timeout < 0:
            raise ValueError(f"advance: expected a timeout of zero or more, got {timeout}")
        k = self.kernel
        deadline = k.now + timeout
        self.settle()
        while not holds():
            t = k.peek()
            if t > deadline:
                self._manual_target = deadline
                self._run_to(deadline)
                return holds()
            self._manual_target = max(t, k.now)
            self._run_to(self._manual_target)
        return True

    def _run_to(self, t: float) -> None:
        k = self.kernel
        moved = False
        # peek, not next_live: cancelled timers due after t must not carry the clock past t
        while k.peek() <= t:
            k.step()
            moved = True
            slices.pause()
        if t > k.now:
            k.move_to(t)
            moved = True
        for fn in self.after:
            fn()
        if moved:
            for fn in self.listeners:
                fn()

    # ---- the same, in slices (the caller holds ``lock``) ------------------------------------------------

    def slice_done(self) -> None:
        """Before a sliced run lets others in: what it wrote is committed, followers are told."""
        for fn in self.after:
            fn()
        for fn in self.listeners:
            fn()

    async def run(self, t: float) -> None:
        """``_run_to(t)`` in slices (the caller holds ``lock``)."""
        await slices.run(self._run_to, t, on_pause=self.slice_done)

    async def sync_async(self) -> None:
        await self.run(self.target())

    async def settle_async(self) -> None:
        await self.run(self.kernel.now)

    def catch_up(self) -> None:
        """Before a read: the clock moves to its instant if nothing is due until then; what is due is run by
        a driver in slices (the read does not wait for it), and while a driver runs the read sees the state
        between two of its slices."""
        if self.lock.locked():
            return
        if self.kernel.peek() <= self.target():
            if self._kick_task is None:
                self._kick_task = asyncio.get_running_loop().create_task(self._kick())
            return
        self.sync()

    async def _kick(self) -> None:
        try:
            async with self.lock:
                self._kick_task = None
                if not self._stopped:
                    await self.sync_async()
        finally:
            self._kick_task = None
        self.wake()

    # ---- input from outside ---------------------------------------------------------------------------

    def deliver(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the kernel soon, at the clock's instant then (from the running event loop). Once the
        clock is stopped, nothing more comes in."""
        if self._stopped:
            return
        self._inbox.append(fn)
        if self._inbox_task is None:
            self._inbox_task = asyncio.get_running_loop().create_task(self._take_inbox())

    async def _take_inbox(self) -> None:
        async with self.lock:
            self._inbox_task = None   # what comes in from now on waits for the next turn
            inbox, self._inbox = self._inbox, []
            if self._stopped:
                return
            await self.sync_async()
            for fn in inbox:
                fn()
                await self.settle_async()
        self.wake()

    # ---- the realtime task ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start following the wall clock (realtime) from the running asyncio loop."""
        self._wake = asyncio.Event()
        self.sync()
        if self.mode == "realtime":
            self._task = asyncio.get_running_loop().create_task(self._follow())

    def wake(self) -> None:
        """Something was scheduled: the realtime task re-reads when the next event is due."""
        if self._wake is not None:
            self._wake.set()

    async def stop(self) -> None:
        self._stopped = True   # Python 3.11's wait_for can swallow a cancel that meets a wake-up
        self.wake()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _follow(self) -> None:
        assert self._wake is not None
        while not self._stopped:
            try:
                async with self.lock:
                    await self.sync_async()
            except Exception:  # noqa: BLE001 - a model error is reported; the clock goes on
                log.exception("the kernel failed at %.3f s", self.kernel.now)
            due = self.kernel.peek()
            sleep = min((due - self.target()) / self.speed, _MAX_SLEEP)
            self._wake.clear()
            if sleep > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=sleep)
                except asyncio.TimeoutError:
                    pass
            else:
                await asyncio.sleep(0)   # let requests in between two busy instants

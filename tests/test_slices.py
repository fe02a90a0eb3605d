"""Sliced work (podlife.engine.slices) and the live clock's sliced runs, on a bare kernel."""

from __future__ import annotations

import asyncio
import time

import pytest

from podlife.engine import Kernel, slices
from podlife.engine.live import LiveClock


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_work_lets_the_loop_in_at_its_pause_points_and_returns_its_value() -> None:
    done: list[str] = []
    served: list[int] = []   # how many work steps were done each time another task ran

    def work() -> str:
        for i in range(30):
            _busy(0.002)
            done.append(f"step {i}")
            slices.pause()
        return "finished"

    async def other() -> None:
        while len(done) < 30:
            served.append(len(done))
            await asyncio.sleep(0)

    async def main() -> str:
        task = asyncio.get_running_loop().create_task(other())
        result = await slices.run(work)
        await task
        return result

    before = slices.slices
    assert asyncio.run(main()) == "finished"
    assert done == [f"step {i}" for i in range(30)]   # all of it, in order
    assert slices.slices - before >= 3                 # 60 ms of work in slices of 10 ms
    # the other task ran while the work was half done, not only before and after it
    assert any(0 < n < 30 for n in served)


def test_pause_outside_sliced_work_does_nothing() -> None:
    slices.pause()   # podlife run, the tests: no driver, no switch


def test_a_driven_coroutine_may_await() -> None:
    async def request() -> int:
        await asyncio.sleep(0.01)   # a real suspension: run awaits it on the coroutine's behalf
        slices.pause()
        await asyncio.sleep(0)
        return 7

    async def main() -> int:
        return await slices.run_coroutine(request())

    assert asyncio.run(main()) == 7


def test_an_error_in_the_work_reaches_the_caller() -> None:
    def work() -> None:
        raise ValueError("model error")

    async def main() -> None:
        await slices.run(work)

    with pytest.raises(ValueError, match="model error"):
        asyncio.run(main())
    assert slices._driver is None


def test_a_sliced_run_runs_the_same_events_in_the_same_order() -> None:
    def kernel() -> tuple[Kernel, list[tuple[float, int]]]:
        k = Kernel()
        fired: list[tuple[float, int]] = []
        for i in range(200):
            def fire(i: int = i) -> None:
                _busy(0.0003)
                fired.append((k.now, i))
                if i % 7 == 0:   # follow-ups at the same instant, as a write's
                    k.call_later(0.0, lambda: fired.append((k.now, -i)))
            k.call_at(float(i % 5), fire)
        return k, fired

    plain, fired_plain = kernel()
    LiveClock(plain, "manual").advance(10)

    async def sliced() -> tuple[list[tuple[float, int]], int, float]:
        k, fired = kernel()
        clock = LiveClock(k, "manual")
        clock._manual_target = 10.0
        committed: list[int] = []
        clock.after.append(lambda: committed.append(len(fired)))
        async with clock.lock:
            await clock.sync_async()
        return fired, len(committed), k.now

    before = slices.slices
    fired_sliced, commits, now = asyncio.run(sliced())
    assert fired_sliced == fired_plain
    assert now == 10.0
    assert slices.slices > before and commits == slices.slices - before + 1   # each slice committed, and the end

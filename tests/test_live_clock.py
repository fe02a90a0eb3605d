"""The live driver's clocks, on a bare kernel with a fake wall clock."""

from __future__ import annotations

import pytest

from podlife.engine import Kernel
from podlife.engine.live import LiveClock


def _kernel_with(times: list[float]) -> tuple[Kernel, list[float]]:
    k = Kernel()
    fired: list[float] = []
    for t in times:
        k.call_at(t, lambda: fired.append(k.now))
    return k, fired


def test_manual_clock_runs_exactly_what_is_due() -> None:
    k, fired = _kernel_with([0.0, 5.0, 10.0, 10.5])
    clock = LiveClock(k, "manual")
    clock.sync()
    assert (k.now, fired) == (0.0, [0.0])          # frozen until told
    assert clock.advance(10) == 10.0
    assert fired == [0.0, 5.0, 10.0]               # an event at the target instant has happened
    clock.sync()
    assert k.now == 10.0
    with pytest.raises(ValueError, match="expected a duration of zero or more"):
        clock.advance(-1)


def test_realtime_clock_follows_the_wall_times_speed() -> None:
    wall = [100.0]
    k, fired = _kernel_with([1.0, 20.0, 31.0])
    clock = LiveClock(k, "realtime", speed=10.0, wall=lambda: wall[0])
    wall[0] = 102.0                                 # 2 s of wall = 20 s simulated
    clock.sync()
    assert (k.now, fired) == (20.0, [1.0, 20.0])
    with pytest.raises(ValueError, match="the clock is realtime"):
        clock.advance(5)


def test_a_cancelled_timer_never_carries_the_clock_past_the_wall() -> None:
    wall = [0.0]
    k = Kernel()
    k.cancel(k.call_later(300.0, lambda: None))    # a toleration nobody waits for any more
    clock = LiveClock(k, "realtime", wall=lambda: wall[0])
    wall[0] = 5.0
    clock.sync()
    assert k.now == 5.0


def test_settle_runs_follow_ups_of_a_write_without_moving_time() -> None:
    k = Kernel()
    clock = LiveClock(k, "manual")
    seen: list[float] = []
    k.call_later(0.0, lambda: seen.append(k.now))
    k.call_later(1.0, lambda: seen.append(k.now))
    clock.settle()
    assert (k.now, seen) == (0.0, [0.0])


def test_moving_the_clock_leaves_nothing_behind() -> None:
    """An idle cluster costs nothing: following the wall clock schedules no event of its own (SimPy's
    run(until=) would leave its stop event due at the target, and the realtime task would spin on it)."""
    wall = [0.0]
    k = Kernel()
    clock = LiveClock(k, "realtime", wall=lambda: wall[0])
    for step in range(1, 4):
        wall[0] = float(step)
        clock.sync()
        assert (k.now, k.peek()) == (float(step), float("inf"))

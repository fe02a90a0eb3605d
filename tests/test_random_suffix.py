"""Generated name suffixes: the fast draw gives exactly what ``Random.choice`` gives, draw for draw."""

from __future__ import annotations

import random

from podlife.api import names


def _by_choice(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(names.NAME_CHARS) for _ in range(n))


def test_suffixes_are_choice_draws() -> None:
    assert names._FAST_DRAWS   # CPython 3.11's Random draws this way; otherwise the slow path is taken
    for seed in (0, 1, 31, 2**40 + 7):
        fast, slow = random.Random(seed), random.Random(seed)
        got = [names.random_suffix(fast) for _ in range(5000)]
        assert got == [_by_choice(slow) for _ in range(5000)]
        # the generator is left where choice leaves it: later draws of any kind agree too
        assert fast.getrandbits(64) == slow.getrandbits(64)


def test_other_lengths_and_sources() -> None:
    fast, slow = random.Random(9), random.Random(9)
    assert [names.random_suffix(fast, n) for n in (0, 1, 7, 13)] == [_by_choice(slow, n) for n in (0, 1, 7, 13)]

    class Counted(random.Random):
        """A subclass (another random source): drawn through its own choice."""
        calls = 0

        def choice(self, seq):  # type: ignore[no-untyped-def, override]
            Counted.calls += 1
            return super().choice(seq)

    names.random_suffix(Counted(3))
    assert Counted.calls == 5

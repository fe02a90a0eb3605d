"""Names made and checked on every create: generated suffixes (the fast draw gives exactly what ``Random.choice``
gives, draw for draw) and the valid names kept (the same answers the second time)."""

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


def test_kept_valid_names_answer_as_the_checks_do() -> None:
    cases = ["web-", "web", "a" * 253, "a" * 254, "Web-", "-web", "web.", "x-", "-", "", "a.b-c", "default"]
    for fn, check in ((names.name_is_dns_subdomain, names.dns1123_subdomain_errors),
                      (names.name_is_dns_label, names.dns1123_label_errors)):
        for name in cases:
            for prefix in (False, True):
                want = check(names.mask_trailing_dash(name) if prefix else name)
                assert fn(name, prefix) == want
                assert fn(name, prefix) == want   # the second time from what was kept, when valid
                got = fn(name, prefix)
                got.append("changed by a caller")   # a caller's list is its own
                assert fn(name, prefix) == want
        assert fn(7) == [names.NOT_A_STRING]
    # the two checks keep their answers apart: "a.b" is a valid subdomain, not a valid label
    assert names.name_is_dns_subdomain("a.b") == []
    assert names.name_is_dns_label("a.b") == ["must not contain dots"]

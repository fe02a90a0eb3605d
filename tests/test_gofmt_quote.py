"""gofmt.go_quote's shortcut for printable ASCII gives the bytes of its character-by-character strconv.Quote."""

from __future__ import annotations

import random

from podlife.api import gofmt


def test_every_ascii_character() -> None:
    for i in range(128):
        for s in (chr(i), f"a{chr(i)}b", chr(i) * 3):
            assert gofmt.go_quote(s) == gofmt._quote(s), repr(s)


def test_known_renderings() -> None:
    assert gofmt.go_quote('say "hi"\\') == '"say \\"hi\\"\\\\"'
    assert gofmt.go_quote("a b~") == '"a b~"'
    assert gofmt.go_quote("tab\there\x7f") == '"tab\\there\\x7f"'
    assert gofmt.go_quote("é\u200b") == '"é\\u200b"'


def test_random_strings() -> None:
    rng = random.Random(7)
    alphabet = [chr(i) for i in range(128)] + ["é", "\u00a0", "\u200b", "😀", "\U000e0001"]
    for _ in range(3000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert gofmt.go_quote(s) == gofmt._quote(s), repr(s)

"""The points of a sweep: `--vary` values parsed, their cross product or a seeded sample of it."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from podlife.versions import MODELLED_VERSIONS

VERSION_KEY = "kubernetesVersion"
SEED_KEY = "seed"
MAX_POINTS = 1_000_000


class VaryError(ValueError):
    pass


@dataclass(frozen=True)
class Vary:
    key: str             # kubernetesVersion, seed, or a scenario field path (as --set)
    values: tuple[Any, ...]


def _version(v: str) -> str:
    v = v.strip().removeprefix("v")
    minor = ".".join(v.split(".")[:2])
    if minor not in MODELLED_VERSIONS:
        raise VaryError(f"{v!r} is not a modelled Kubernetes version ({MODELLED_VERSIONS[0]}..{MODELLED_VERSIONS[-1]})")
    return minor


def parse_vary(text: str) -> Vary:
    """``KEY=A..B`` (a range of versions or integers) or ``KEY=a,b,c``."""
    key, sep, spec = text.partition("=")
    key = key.strip()
    if not sep or not key or not spec.strip():
        raise VaryError(f"{text!r}: expected KEY=VALUES (A..B or a,b,c)")
    if key == VERSION_KEY:
        if ".." in spec and spec.count(".") >= 4:
            first, last = (_version(x) for x in spec.split("..", 1))
            i, j = MODELLED_VERSIONS.index(first), MODELLED_VERSIONS.index(last)
            if i > j:
                raise VaryError(f"{text!r}: the range runs backwards")
            return Vary(key, MODELLED_VERSIONS[i:j + 1])
        return Vary(key, tuple(dict.fromkeys(_version(x) for x in spec.split(","))))
    if ".." in spec:
        lo_s, hi_s = spec.split("..", 1)
        try:
            lo, hi = int(lo_s), int(hi_s)
        except ValueError:
            raise VaryError(f"{text!r}: a range A..B takes integers") from None
        if lo > hi:
            raise VaryError(f"{text!r}: the range runs backwards")
        if hi - lo + 1 > MAX_POINTS:
            raise VaryError(f"{text!r}: more than {MAX_POINTS} values")
        return Vary(key, tuple(range(lo, hi + 1)))
    values = tuple(x.strip() for x in spec.split(","))
    if key == SEED_KEY:
        try:
            return Vary(key, tuple(int(x) for x in values))
        except ValueError:
            raise VaryError(f"{text!r}: seeds are integers") from None
    return Vary(key, values)


def points(varies: list[Vary], sample: int | None = None, sample_seed: int = 0) -> list[dict[str, Any]]:
    """Every combination in a fixed order (the first --vary varies slowest), or ``sample`` of them drawn
    with a seeded generator, kept in that same order."""
    keys = [v.key for v in varies]
    if len(set(keys)) != len(keys):
        raise VaryError("a key is varied twice")
    total = 1
    for v in varies:
        total *= len(v.values)
    if sample is None and total > MAX_POINTS:
        raise VaryError(f"{total} points; at most {MAX_POINTS} (use --sample)")
    if sample is not None:
        if sample < 1:
            raise VaryError("--sample takes a positive number")
        chosen = sorted(random.Random(sample_seed).sample(range(total), min(sample, total)))
        return [_nth(varies, i) for i in chosen]
    return [dict(zip(keys, combo)) for combo in itertools.product(*(v.values for v in varies))]


def _nth(varies: list[Vary], i: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for v in reversed(varies):
        i, r = divmod(i, len(v.values))
        out[v.key] = v.values[r]
    return {v.key: out[v.key] for v in varies}

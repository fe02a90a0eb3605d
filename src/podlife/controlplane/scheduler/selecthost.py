"""schedule_one.go selectHost: the node with the highest total score; ties broken by reservoir sampling.

Walking the scores in order, a node that beats the best so far is chosen; a node that ties with it replaces the
choice with probability 1/c, c being how many nodes share that best score so far (``rand.Intn(c) == 0``).
From 1.27 (PR #114688) upstream pops the scores from a heap instead, so it meets the best-scoring nodes first,
in the heap's order, and draws only for them. Both pick each of the nodes sharing the best score with
probability 1/n, whatever order they are met in; they differ in how many draws they consume and which node a
given draw sequence picks. podlife's draws come from its own seeded generator, not Go's math/rand, so no
particular pick of a real cluster could be reproduced either way: podlife keeps the node-order walk for every
version, which gives the same distribution. The
draws come from the scheduler's seeded generator, as ``random.Random.randrange(c)`` makes them: k = c's bit
length, take the top k bits of the next 32-bit output until they are below c. Large clusters have hundreds of
tied nodes per pod, so the draws are replayed in one short loop over a buffer of the generator's outputs,
drawn ahead in blocks by numpy's MT19937 started from the generator's state (the same Mersenne Twister: the same
outputs in the same order); the generator serves nothing else. The buffer keeps each output without its two low
bits: every threshold is a multiple of 4 (k ≤ 30), so each comparison comes out the same, and Python handles
30-bit integers faster than 32-bit ones. The first few blocks come from a copy of the generator itself
(``getrandbits(32)`` is the twister's next output): a small cluster's run never loads numpy.random, whose
import costs more than a whole small scenario's draws; numpy's twister then goes on from the copy's state.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

DROPPED_BITS = 2   # 32-bit outputs kept as 30-bit integers: one CPython digit
BLOCK = 1024      # outputs drawn at a time: a few pods' worth, still in the CPU cache when they are read
PYTHON_WORDS = 8 * BLOCK   # outputs drawn in Python before numpy's MT19937 takes over (start-up: see above)


class HostSelector:
    def __init__(self, rng: random.Random) -> None:
        self._copy = random.Random()
        self._copy.setstate(rng.getstate())
        self._drawn = 0   # outputs drawn from the copy
        self._twister: Any = None   # numpy's, from PYTHON_WORDS on
        self._words: list[int] = []
        self._next = 0
        # per count c: the 32-bit outputs below threshold[c] are accepted (top k bits < c), those below zero[c]
        # draw 0
        self._threshold: list[int] = []
        self._zero: list[int] = []

    def select(self, scores: np.ndarray) -> int:
        """The index of the selected score."""
        first = int(scores.argmax())
        # after the first best score every event is a tie with it: counts 2, 3, ... in order
        ties = (scores[first + 1:] == scores[first]).nonzero()[0]
        spend = self._prefix_draws(scores[:first]) if first > 1 else []
        if not len(ties) and not spend:
            return first
        n = len(ties) + 2
        self._tables(n)
        return self._replay(spend, self._threshold[2:n], self._zero[2:n], (ties + (first + 1)).tolist(), first)

    def _prefix_draws(self, scores: np.ndarray) -> list[int]:
        """The thresholds of the draws made before the best score is first reached (ties with a lower best so
        far); the best is usually among the first few nodes, so this walks them in Python."""
        values = scores.tolist()
        self._tables(len(values) + 1)
        threshold = self._threshold
        best, count = values[0], 1
        spend = []
        for v in values[1:]:
            if v > best:
                best, count = v, 1
            elif v == best:
                count += 1
                spend.append(threshold[count])
        return spend

    def _replay(self, spend: list[int], thresholds: list[int], zeros: list[int], nodes: list[int],
                chosen: int) -> int:
        need = 2 * (len(spend) + len(thresholds)) + 64
        while True:
            if len(self._words) - self._next < need:
                self._refill(need)
            words, p = self._words, self._next
            try:
                for thr in spend:
                    w = words[p]
                    p += 1
                    while w >= thr:
                        w = words[p]
                        p += 1
                pick = chosen
                for thr, zero, node in zip(thresholds, zeros, nodes):
                    w = words[p]
                    p += 1
                    while w >= thr:
                        w = words[p]
                        p += 1
                    if w < zero:
                        pick = node
            except IndexError:   # more rejections than the buffer held: draw more and replay
                need *= 2
                continue
            self._next = p
            return pick

    def _refill(self, need: int) -> None:
        n = max(need, BLOCK)
        if self._twister is None and self._drawn + n <= PYTHON_WORDS:
            bits = self._copy.getrandbits
            fresh = [bits(32) >> DROPPED_BITS for _ in range(n)]
            self._drawn += n
        else:
            if self._twister is None:
                _, state, _ = self._copy.getstate()
                self._twister = np.random.MT19937()
                self._twister.state = {"bit_generator": "MT19937",
                                       "state": {"key": np.array(state[:624], np.uint32), "pos": state[624]}}
            fresh = (self._twister.random_raw(n) >> DROPPED_BITS).tolist()
        self._words = self._words[self._next:] + fresh
        self._next = 0

    def _tables(self, size: int) -> None:
        for c in range(len(self._threshold), size):
            shift = 32 - c.bit_length() - DROPPED_BITS
            assert shift >= 0, "more than 2**30 tied nodes"
            self._threshold.append(c << shift)
            self._zero.append(1 << shift)

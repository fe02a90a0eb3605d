"""Per-kind registry strategies: defaulting, validation, status handling and graceful deletion."""

from __future__ import annotations

from podlife.api.registry.generic import Strategy
from podlife.api.registry.job import JobStrategy
from podlife.api.registry.pod import PodStrategy

_POD = PodStrategy()
_JOB = JobStrategy()
_GENERIC: dict[str, Strategy] = {}


def strategy_for(kind: str) -> Strategy:
    if kind == "Pod":
        return _POD
    if kind == "Job":
        return _JOB
    s = _GENERIC.get(kind)
    if s is None:
        s = _GENERIC[kind] = Strategy(kind)
    return s

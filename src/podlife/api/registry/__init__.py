"""Per-kind registry strategies: defaulting, validation, status handling and graceful deletion."""

from __future__ import annotations

from podlife.api.meta import KINDS, KindInfo
from podlife.api.registry.daemonset import DaemonSetStrategy
from podlife.api.registry.generic import Strategy
from podlife.api.registry.job import JobStrategy
from podlife.api.registry.pod import PodStrategy
from podlife.api.registry.service import ServiceStrategy

_POD = PodStrategy()
_JOB = JobStrategy()
_DS = DaemonSetStrategy(KINDS["DaemonSet"])
_SVC = ServiceStrategy(KINDS["Service"])
_GENERIC: dict[KindInfo, Strategy] = {}


def strategy_for(info: KindInfo) -> Strategy:
    if info is KINDS["Pod"]:
        return _POD
    if info is KINDS["Job"]:
        return _JOB
    if info is KINDS["DaemonSet"]:
        return _DS
    if info is KINDS["Service"]:
        return _SVC
    s = _GENERIC.get(info)
    if s is None:
        s = _GENERIC[info] = Strategy(info)
    return s

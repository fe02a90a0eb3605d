"""Shared by the two example suites. The ``podlife_cluster`` fixture comes from podlife's pytest plugin (installed
with podlife); this directory is on the import path for ``policy`` and ``workloads``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def eventually(what: str, fn: Callable[[], T], timeout: float = 20.0) -> T:
    """Wait (wall time) for the operator to act on what the cluster shows: the cluster's clock stands still
    meanwhile, so this waits for the operator's reaction, never for cluster time to pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"the operator did not act within {timeout:g} s: {what}; last: {value!r}")
        time.sleep(0.05)


@pytest.fixture
def wait() -> Callable[..., Any]:
    return eventually

"""Speed never changes a binding: every seeded workload of tests/scheduler_workloads.py binds the same pods to
the same nodes at the same times, with the same FailedScheduling messages and the same trace, as the scheduler
that checked every node in turn in Python did (pinned in tests/data/scheduler_bindings.json, recorded at
commit 3e4496e)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import scheduler_workloads

PINNED = json.loads((Path(__file__).parent / "data" / "scheduler_bindings.json").read_text())


@pytest.mark.parametrize("name", sorted(scheduler_workloads.WORKLOADS))
def test_bindings_unchanged(name):
    got = scheduler_workloads.run(name)
    want = PINNED[name]
    assert got["firstBinds"] == want["firstBinds"]
    assert {k: got[k] for k in want} == want

"""The Kopf operator against a podlife cluster (run in the test's process with kopf.testing.KopfRunner), on two
Kubernetes versions: a node powered off, a rollout that stalls (behaviours.py), each in seconds of wall time."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kopf
import pytest
from behaviours import both_from_one_snapshot, powered_off_node_is_fenced, stalled_rollout_is_rolled_back
from kopf.testing import KopfRunner

pytestmark = pytest.mark.podlife(versions=["1.29", "1.33"])
OPERATOR = Path(__file__).with_name("operator.py")


def _load_handlers() -> None:
    """Register the operator's handlers once per test process (Kopf's default registry is global)."""
    spec = importlib.util.spec_from_file_location("fencing_operator", OPERATOR)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


_load_handlers()


@kopf.on.login()
def login_to_the_test_cluster(**kwargs: Any) -> Any:
    """$KUBECONFIG as the fixture sets it, read at each login (the kubernetes package reads it once, at import)."""
    return kopf.login_with_kubeconfig(**kwargs)


@pytest.fixture
def kopf_runner(podlife_cluster: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[KopfRunner]:
    monkeypatch.setenv("KUBECONFIG", podlife_cluster.kubeconfig)
    with KopfRunner(["run", "--all-namespaces", "--standalone"], timeout=60) as runner:
        yield runner
    assert runner.exit_code == 0, runner.output


def test_a_powered_off_node_is_fenced(podlife_cluster: Any, kopf_runner: KopfRunner) -> None:
    powered_off_node_is_fenced(podlife_cluster)


def test_a_stalled_rollout_is_rolled_back(podlife_cluster: Any, kopf_runner: KopfRunner) -> None:
    stalled_rollout_is_rolled_back(podlife_cluster)


def test_both_from_one_snapshot(podlife_cluster: Any, kopf_runner: KopfRunner) -> None:
    both_from_one_snapshot(podlife_cluster)

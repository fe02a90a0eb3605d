"""The plain controller against a podlife cluster, on two Kubernetes versions: a node powered off, a rollout
that stalls (behaviours.py), each in about a second of wall time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from behaviours import both_from_one_snapshot, powered_off_node_is_fenced, stalled_rollout_is_rolled_back
from controller import Controller

pytestmark = pytest.mark.podlife(versions=["1.29", "1.33"])


@pytest.fixture
def controller(podlife_cluster: Any) -> Iterator[Controller]:
    c = Controller(podlife_cluster.api_client())
    stop = threading.Event()
    thread = threading.Thread(target=c.run, args=(stop,), daemon=True)
    thread.start()
    yield c
    stop.set()
    thread.join(timeout=10)


def test_a_powered_off_node_is_fenced(podlife_cluster: Any, controller: Controller) -> None:
    node = powered_off_node_is_fenced(podlife_cluster)
    assert f"fenced node/{node}" in controller.actions


def test_a_stalled_rollout_is_rolled_back(podlife_cluster: Any, controller: Controller) -> None:
    stalled_rollout_is_rolled_back(podlife_cluster)
    assert controller.actions.count("rolled back deployment/api") == 1


def test_both_from_one_snapshot(podlife_cluster: Any, controller: Controller) -> None:
    both_from_one_snapshot(podlife_cluster)
    assert controller.actions == ["fenced node/node-2", "recorded the image of deployment/api",
                                  "rolled back deployment/api"]

"""Work that grows with a request never stops the server answering others (issue 23): while one client's
10,000-label object or 150,000-replica Deployment is being handled, another client's ``/readyz`` and small GET
are answered with a p99 under 100 ms. The big request's own response still waits for what it set off at its
instant (the manual clock's contract), and slicing changes nothing the model does."""

from __future__ import annotations

import json
import math
import os
import signal
import threading
import time
from typing import Any

import pytest

from tests.live.conftest import Live

P99_LIMIT = 0.1   # seconds: the issue's bound on other clients' latency during a hostile request
WINDOW = 20.0     # seconds of a 150,000-replica reaction measured (it takes minutes on a shared 2-core machine)
SMALL = "/api/v1/namespaces/default/configmaps/small"


class Prober:
    """A second client: ``/readyz`` and a small GET, one after the other, until stopped."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.latencies: dict[str, list[float]] = {"readyz": [], "get": []}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for name, path in (("readyz", "/readyz"), ("get", SMALL)):
                t = time.perf_counter()
                code, _, _ = self.live.request("GET", path)
                self.latencies[name].append(time.perf_counter() - t)
                assert code == 200
            time.sleep(0.01)

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=60)

    def wait_for(self, at_least: int, timeout: float = 30.0) -> None:
        """Until each path has been asked ``at_least`` times (a fast server may finish the load sooner)."""
        deadline = time.monotonic() + timeout
        while min(len(xs) for xs in self.latencies.values()) < at_least and time.monotonic() < deadline:
            time.sleep(0.01)

    def p99(self, name: str) -> float:
        xs = sorted(self.latencies[name])
        return xs[math.ceil(len(xs) * 0.99) - 1]   # nearest rank (int(n * 0.99) was the maximum up to n = 100)

    def check(self, at_least: int) -> None:
        for name, xs in self.latencies.items():
            assert len(xs) >= at_least, (name, len(xs))
            assert self.p99(name) < P99_LIMIT, (name, f"p99 {self.p99(name) * 1000:.1f} ms",
                                                f"max {max(xs) * 1000:.1f} ms", f"{len(xs)} requests")


def _deployment(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "big"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "big"}},
                     "template": {"metadata": {"labels": {"app": "big"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def _started(live: Live) -> Live:
    # labelled, so that what a server loads once on its first labelled write (schemas, label checks) is not
    # counted against the hostile request that follows
    code, _ = live.json("POST", "/api/v1/namespaces/default/configmaps",
                        {"metadata": {"name": "small", "labels": {"app": "small"}}, "data": {"a": "b"}})
    assert code == 201
    return live


def _in_background(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = fn()
        except Exception as e:  # noqa: BLE001 - the server stopped under it at the end of the test
            out["error"] = e
    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, out


def _count_pods(live: Live) -> int:
    # one list, not pages: while pods are created faster than the 1,000 revisions kept, a continue token
    # expires between two pages (410 Gone, as upstream's)
    code, _, raw = live.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dbig")
    assert code == 200
    return len(json.loads(raw)["items"])


def test_ten_thousand_labels_leave_others_served(live_factory) -> None:
    live = _started(live_factory("1.32", clock="manual"))
    labels = {f"k{i}": "v" for i in range(10_000)}
    with Prober(live) as prober:
        time.sleep(0.2)
        code, obj = live.json("POST", "/api/v1/namespaces/default/configmaps",
                              {"metadata": {"name": "labels", "labels": labels}})
    assert code == 201, obj
    prober.check(at_least=5)
    assert obj["metadata"]["labels"] == labels
    owned = obj["metadata"]["managedFields"][0]["fieldsV1"]["f:metadata"]["f:labels"]
    assert len(owned) == 10_000


def test_a_large_yaml_body_leaves_others_served(live_factory) -> None:
    """A 2.7 MB YAML body (a ConfigMap with 35,000 labels): its nodes are composed and constructed in slices."""
    live = _started(live_factory("1.32", clock="manual"))
    body = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml-body\n  labels:\n"
            + "".join(f"    key{i:06d}: {'v' * 60}\n" for i in range(35_000))).encode()
    with Prober(live) as prober:
        time.sleep(0.2)
        code, _, raw = live.request("POST", "/api/v1/namespaces/default/configmaps", body,
                                    {"Content-Type": "application/yaml"})
    assert code == 201, raw[:300]
    prober.check(at_least=5)
    assert len(json.loads(raw)["metadata"]["labels"]) == 35_000


def test_a_reaction_spanning_slices_is_awaited_and_does_not_change_the_trace(live_factory) -> None:
    """3,000 replicas: the response comes once every pod exists (created at the request's instant), while the
    prober is served in between; a cluster that served no one meanwhile writes the same trace."""
    traces = []
    for probe in (True, False):
        live = _started(live_factory("1.32", clock="manual"))
        if probe:
            with Prober(live) as prober:
                code, _ = live.json("POST", "/apis/apps/v1/namespaces/default/deployments", _deployment(3000))
            prober.check(at_least=20)
        else:
            code, _ = live.json("POST", "/apis/apps/v1/namespaces/default/deployments", _deployment(3000))
        assert code == 201
        assert _count_pods(live) == 3000
        assert live.seconds() == 0
        traces.append(live.trace())
        live.stop()
    assert traces[0] == traces[1]


@pytest.mark.parametrize("how", ["create", "scale"])
def test_150000_replicas_leave_others_served(live_factory, how: str) -> None:
    live = _started(live_factory("1.32", clock="manual"))
    if how == "create":
        big = lambda: live.json("POST", "/apis/apps/v1/namespaces/default/deployments",  # noqa: E731
                                _deployment(150_000))
    else:
        code, _ = live.json("POST", "/apis/apps/v1/namespaces/default/deployments", _deployment(1))
        assert code == 201
        big = lambda: live.json("PATCH", "/apis/apps/v1/namespaces/default/deployments/big/scale",  # noqa: E731
                                {"spec": {"replicas": 150_000}}, content_type="application/merge-patch+json")
    with Prober(live) as prober:
        thread, out = _in_background(big)
        deadline = time.monotonic() + WINDOW
        while time.monotonic() < deadline and thread.is_alive():
            time.sleep(0.5)
    prober.check(at_least=50)
    first = second = _count_pods(live)
    # the controller progresses while others are served (all 150,000 take minutes here: not waited for); a
    # ReplicaSet sync makes at most 500 pods (burstReplicas), and on a loaded machine one takes seconds
    until = time.monotonic() + 60
    while second == first != 150_000 and time.monotonic() < until:
        time.sleep(0.5)
        second = _count_pods(live)
    assert 0 < first < second or first == 150_000, (first, second)
    # the stop does not wait for the rest of the reaction, and is clean
    t = time.monotonic()
    if how == "create":
        os.kill(live.proc.pid, signal.SIGINT)
    else:   # podlife down: its POST is not queued behind the reaction's write
        code, _, _ = live.request("POST", "/podlife/stop", b"", {"Content-Type": "application/json"})
        assert code == 202
    assert live.proc.wait(timeout=60) == 0
    assert time.monotonic() - t < 30
    assert "podlife: stopped" in live.output()

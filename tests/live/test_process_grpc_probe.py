"""gRPC probes of ``podlife up --runtime process`` (podlife.runtime.grpcprobe): a pod whose server answers
SERVING keeps running under its gRPC liveness probe, one answering NOT_SERVING is restarted, as upstream's
conformance tests "Probing container should (not) be restarted with a GRPC liveness probe" check."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.test_process_runtime import VERSION, ProcessCluster

SERVER = str(Path(__file__).with_name("grpc_health_server.py"))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("grpc"))
    yield c
    c.stop()


def grpc_pod(name: str, mode: str) -> str:
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: python:3
            command: {json.dumps([sys.executable, "-u", SERVER, "0.0.0.0", "50051", mode])}
            livenessProbe:
              grpc: {{port: 50051}}
              periodSeconds: 1
              failureThreshold: 1
        """


def test_a_serving_grpc_server_is_not_restarted(cluster: ProcessCluster) -> None:
    cluster.apply(grpc_pod("grpc-ok", "serving"))
    cluster.wait_for("three gRPC liveness checks", lambda: cluster.kubectl(
        "logs", "grpc-ok", check=False).stdout.count("check from") >= 3, 30)
    logs = cluster.kubectl("logs", "grpc-ok").stdout.splitlines()
    assert logs[0] == "serving grpc health on 0.0.0.0:50051"
    assert set(logs[1:]) == {f"check from kube-probe/{VERSION}"}
    assert cluster.status("grpc-ok")["restartCount"] == 0
    assert "running" in cluster.state("grpc-ok")
    assert not [e for e in cluster.events("grpc-ok") if e["reason"] in ("Unhealthy", "Killing")]
    cluster.kubectl("delete", "pod", "grpc-ok", "--wait=false")


def test_a_not_serving_grpc_server_is_restarted(cluster: ProcessCluster) -> None:
    cluster.apply(grpc_pod("grpc-bad", "not_serving"))
    cluster.wait_for("a restart", lambda: cluster.status("grpc-bad").get("restartCount", 0) >= 1, 30)
    events = {(e["reason"], e["message"]) for e in cluster.events("grpc-bad")}
    assert ("Unhealthy", 'Liveness probe failed: service unhealthy (responded with "NOT_SERVING")') in events
    assert ("Killing", "Container app failed liveness probe, will be restarted") in events
    cluster.kubectl("delete", "pod", "grpc-bad", "--wait=false")

"""Host ports of pods in network namespaces of their own (``podlife up --runtime process`` as root), forwarded as
the CNI portmap plugin forwards them (podlife.runtime.portmap): with no hostIP from the node's address and
127.0.0.1, with one from that address alone, TCP and UDP; a port another program holds fails the sandbox's
network set-up until it is free; the listeners go with the sandbox and with podlife up."""

from __future__ import annotations

import json
import re
import socket
import urllib.request
from collections.abc import Iterator

import pytest

from podlife.runtime import podnet
from tests.live.test_process_network import SERVER, free_port, instance
from tests.live.test_process_runtime import ProcessCluster

pytestmark = pytest.mark.skipif(podnet.unavailable() is not None, reason=str(podnet.unavailable()))

# answers each datagram with the pod's name and what it got
UDP_SERVER = """\
import os, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 8080))
while True:
    data, peer = s.recvfrom(100)
    s.sendto(os.environ["HOSTNAME"].encode() + b" got " + data, peer)
"""


def host_port_pod(name: str, node: str, port: dict[str, object], program: str = SERVER) -> str:
    probe = "readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}" if program == SERVER else ""
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          nodeName: {node}
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: python:3
            command: ["python3", "-c", {json.dumps(program)}]
            env: [{{name: BIND, value: "0.0.0.0"}}, {{name: PORT, value: "8080"}}]
            ports: [{json.dumps({"containerPort": 8080, **port})}]
            {probe}
        """


def get(ip: str, port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://{ip}:{port}/", timeout=5) as r:
            return str(r.read().decode())
    except OSError as e:
        return f"error: {getattr(e, 'reason', e)}"


def ask_udp(ip: str, port: int) -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        try:
            s.connect((ip, port))
            s.send(b"hostname")
            return s.recv(100).decode()
        except OSError as e:
            return f"error: {e.strerror or e}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("hostports"))
    yield c
    c.stop()


def test_a_tcp_host_port_answers_on_the_nodes_address_and_localhost(cluster: ProcessCluster) -> None:
    _tag, octet = instance(cluster)
    assert "a container's hostPort is forwarded to the pod as the CNI portmap plugin maps it" in cluster.output()
    port = free_port()
    cluster.apply(host_port_pod("tcp-hp", "node-1", {"hostPort": port}))
    cluster.wait_for("tcp-hp ready", lambda: cluster.ready("tcp-hp"), 40)
    # portmap DNATs every local address of node-1 (no hostIP) to podIP:8080; node-2 is another machine upstream
    assert [get(ip, port) for ip in (f"10.{octet}.0.1", "127.0.0.1", f"10.{octet}.1.1")] == [
        "tcp-hp", "tcp-hp", "error: [Errno 111] Connection refused"]
    cluster.kubectl("delete", "pod", "tcp-hp", "--wait=true")
    # CNI DEL at the sandbox's tear-down: the port is no longer mapped
    assert cluster.wait_for("the mapping gone", lambda: "refused" in get("127.0.0.1", port), 20)
    assert get(f"10.{octet}.0.1", port) == "error: [Errno 111] Connection refused"


def test_one_host_port_three_pods_by_host_ip_and_protocol(cluster: ProcessCluster) -> None:
    _tag, octet = instance(cluster)
    node, port = f"10.{octet}.0.1", free_port()
    cluster.apply(host_port_pod("on-lo", "node-1", {"hostPort": port, "hostIP": "127.0.0.1"}))
    cluster.apply(host_port_pod("on-node", "node-1", {"hostPort": port, "hostIP": node}))
    cluster.apply(host_port_pod("on-udp", "node-1", {"hostPort": port, "protocol": "UDP", "hostIP": node},
                                UDP_SERVER))
    cluster.wait_for("on-lo and on-node ready, on-udp running", lambda: cluster.ready("on-lo") and
                     cluster.ready("on-node") and "running" in cluster.state("on-udp"), 40)
    assert cluster.wait_for("an answer", lambda: (lambda a: a if not a.startswith("error") else None)(
        ask_udp(node, port)), 20) == "on-udp got hostname"
    # each mapping's rule matches its own destination and protocol alone
    assert [get("127.0.0.1", port), get(node, port), ask_udp("127.0.0.1", port)] == [
        "on-lo", "on-node", "error: Connection refused"]
    cluster.kubectl("delete", "pod", "on-udp", "on-node", "--wait=true")
    assert [get("127.0.0.1", port), get(node, port), ask_udp(node, port)] == [
        "on-lo", "error: [Errno 111] Connection refused", "error: Connection refused"]


def test_a_port_another_program_holds_fails_the_sandbox_until_it_is_free(cluster: ProcessCluster) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        cluster.apply(host_port_pod("held", "node-2", {"hostPort": port, "hostIP": "127.0.0.1"}))
        failed = cluster.wait_for("FailedCreatePodSandBox", lambda: [
            e for e in cluster.events("held") if e["reason"] == "FailedCreatePodSandBox"], 40)
    finally:
        holder.close()
    assert failed[0]["type"] == "Warning"
    assert re.fullmatch(r'Failed to create pod sandbox: failed to setup network for sandbox "[0-9a-f]{64}": '
                        r'plugin type="portmap" name="podlife" failed \(add\): '
                        rf"listen tcp 127\.0\.0\.1:{port}: bind: address already in use",
                        failed[0]["message"]), failed[0]["message"]
    # the kubelet tries again; once the port is free the sandbox is made and the port mapped
    cluster.wait_for("held ready", lambda: cluster.ready("held"), 60)
    assert get("127.0.0.1", port) == "held"


def test_podlife_up_closes_the_host_ports_when_it_stops(cluster: ProcessCluster) -> None:
    port = free_port()
    cluster.apply(host_port_pod("last", "node-3", {"hostPort": port}))
    cluster.wait_for("last ready", lambda: cluster.ready("last"), 40)
    assert get("127.0.0.1", port) == "last"
    assert cluster.stop() == 0
    assert get("127.0.0.1", port) == "error: [Errno 111] Connection refused"

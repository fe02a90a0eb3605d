"""Pod network namespaces of ``podlife up --runtime process`` (podlife.runtime.podnet), checked with real
processes, kubectl and ``ip``: each pod has its own eth0 and address of its node's podCIDR, pods binding the
same port on 0.0.0.0 coexist, pods reach each other across nodes, port-forward dials localhost inside the pod,
and nothing of the network outlives podlife up (or a killed one, once the next starts)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from podlife.runtime import podnet
from tests.live.test_process_runtime import ProcessCluster

pytestmark = pytest.mark.skipif(podnet.unavailable() is not None, reason=str(podnet.unavailable()))

# answers GET with the pod's name (HOSTNAME is the pod's), on PORT of BIND
SERVER = """\
import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = os.environ["HOSTNAME"].encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer((os.environ["BIND"], int(os.environ["PORT"])), H).serve_forever()
"""


def server_pod(name: str, node: str, port: int = 8080, bind: str = "0.0.0.0", host_network: bool = False) -> str:
    probe = f"readinessProbe: {{tcpSocket: {{port: {port}}}, periodSeconds: 1}}" if bind == "0.0.0.0" else ""
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}, labels: {{app: net}}}}
        spec:
          nodeName: {node}
          hostNetwork: {str(host_network).lower()}
          terminationGracePeriodSeconds: 1
          containers:
          - name: web
            image: python:3
            command: ["python3", "-c", {json.dumps(SERVER)}]
            env: [{{name: BIND, value: "{bind}"}}, {{name: PORT, value: "{port}"}}]
            {probe}
        """


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        return int(s.getsockname()[1])


def get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.read().decode()
    except OSError as e:
        return f"error: {e}"


def links() -> list[str]:
    out = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    return sorted(d["ifname"] for d in json.loads(out))


def namespaces() -> list[str]:
    return sorted(os.listdir(podnet.NETNS_DIR)) if os.path.isdir(podnet.NETNS_DIR) else []


def mine(tag: int) -> tuple[list[str], list[str]]:
    """The links and network namespaces of instance ``tag``."""
    return ([n for n in links() if n.startswith(f"pl{tag}-")],
            [n for n in namespaces() if n.startswith(f"podlife{tag}-")])


def instance(cluster: ProcessCluster) -> tuple[int, int]:
    """(instance number, second octet) from the line podlife up printed and node-1's podCIDR."""
    m = re.search(r"on node i's bridge \(pl(\d+)-br0 … pl\d+-br2\) with an address of 10\.(\d+)\.i\.0/24",
                  cluster.output())
    assert m is not None, cluster.output()
    node = json.loads(cluster.kubectl("get", "node", "node-1", "-o", "json").stdout)
    assert node["spec"]["podCIDR"] == f"10.{m.group(2)}.0.0/24"
    return int(m.group(1)), int(m.group(2))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("podnet"))
    yield c
    c.stop()


def running(cluster: ProcessCluster, *names: str) -> bool:
    return all(cluster.ready(n) for n in names)


def test_pods_of_one_node_bind_the_same_port_each_on_its_own_address(cluster: ProcessCluster) -> None:
    tag, octet = instance(cluster)
    assert subprocess.run(["ip", "-br", "-4", "addr", "show", "dev", f"pl{tag}-br0"], capture_output=True,
                          text=True).stdout.split()[2:] == [f"10.{octet}.0.1/24"]
    cluster.apply(server_pod("a1", "node-1"))
    cluster.apply(server_pod("a2", "node-1"))
    cluster.wait_for("a1 and a2 ready", lambda: running(cluster, "a1", "a2"), 40)
    # host-local IPAM: .2 onwards, in order of sandbox creation; the kubelet reports the sandbox's IP
    ips = {n: cluster.pod(n)["status"]["podIP"] for n in ("a1", "a2")}
    assert sorted(ips.values()) == [f"10.{octet}.0.2", f"10.{octet}.0.3"]
    assert {n: cluster.pod(n)["status"]["podIPs"] for n in ips} == {n: [{"ip": ip}] for n, ip in ips.items()}
    # the host reaches each pod through the bridge: each answers on its own address
    assert {n: get(f"http://{ip}:8080/") for n, ip in ips.items()} == {"a1": "a1", "a2": "a2"}
    # the pod's own view: lo and eth0 with its address, a default route via the bridge's gateway
    out = cluster.kubectl("exec", "a1", "--", "ip", "-br", "-4", "addr").stdout.splitlines()
    assert [(line.split()[0].split("@")[0], line.split()[2]) for line in out] == [
        ("lo", "127.0.0.1/8"), ("eth0", f"{ips['a1']}/24")]
    assert cluster.kubectl("exec", "a1", "--", "ip", "route").stdout == (
        f"default via 10.{octet}.0.1 dev eth0 \n10.{octet}.0.0/24 dev eth0 proto kernel scope link src {ips['a1']} \n")


def test_a_pod_reaches_a_pod_of_another_node_and_the_node(cluster: ProcessCluster) -> None:
    _tag, octet = instance(cluster)
    cluster.apply(server_pod("b1", "node-2"))
    cluster.wait_for("a1 and b1 ready", lambda: running(cluster, "a1", "b1"), 40)
    a1 = cluster.pod("a1")["status"]["podIP"]
    assert cluster.pod("b1")["status"]["podIP"] == f"10.{octet}.1.2"
    fetch = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())"
    # through b1's default route, the host routes between node-2's bridge and node-1's
    assert cluster.kubectl("exec", "b1", "--", "python3", "-c", fetch, f"http://{a1}:8080/").stdout == "a1\n"
    # a hostNetwork pod is in the host's namespace with the node's address, which pods reach too
    port = free_port()
    cluster.apply(server_pod("h1", "node-1", port=port, host_network=True))
    cluster.wait_for("h1 ready", lambda: running(cluster, "h1"), 40)
    assert cluster.pod("h1")["status"]["podIP"] == f"10.{octet}.0.1"
    # (its HOSTNAME is the machine's, as containerd sets it for a pod in the node's namespace)
    assert cluster.kubectl("exec", "b1", "--", "python3", "-c", fetch, f"http://10.{octet}.0.1:{port}/").stdout == \
        f"{socket.gethostname()}\n"
    cluster.kubectl("delete", "pod", "h1", "--wait=true")


def test_port_forward_dials_localhost_inside_the_pod(cluster: ProcessCluster) -> None:
    cluster.apply(server_pod("local", "node-3", port=8081, bind="127.0.0.1"))
    cluster.wait_for("local running", lambda: "running" in cluster.state("local"), 40)
    ip = cluster.pod("local")["status"]["podIP"]
    # bound to the pod's loopback alone: not reachable from outside the pod …
    cluster.wait_for("the server listening", lambda: "Connection refused" in get(f"http://{ip}:8081/")
                     and cluster.kubectl("exec", "local", "--", "python3", "-c", "import socket; socket."
                                         "create_connection(('127.0.0.1', 8081))", check=False).returncode == 0, 30)
    port = free_port()
    p = subprocess.Popen(["kubectl", "port-forward", "pod/local", f"{port}:8081", "--address", "127.0.0.1"],
                         env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        assert p.stdout.readline() == f"Forwarding from 127.0.0.1:{port} -> 8081\n"
        # … but port-forward enters its namespace (containerd's portForward dials localhost:PORT there)
        assert get(f"http://127.0.0.1:{port}/") == "local"
    finally:
        p.terminate()
        p.wait(timeout=10)


def test_a_deleted_pod_leaves_no_namespace_or_interface(cluster: ProcessCluster) -> None:
    tag, _octet = instance(cluster)
    cluster.wait_for("a2 ready", lambda: running(cluster, "a2"), 40)
    before_links, before_ns = mine(tag)
    cluster.kubectl("delete", "pod", "a2", "--wait=true")
    after_links, after_ns = cluster.wait_for("a2's network gone", lambda: (lambda m: m if len(m[1]) ==
                                             len(before_ns) - 1 else None)(mine(tag)), 20)
    assert len(after_links) == len(before_links) - 1 and set(after_links) < set(before_links)
    assert set(after_ns) < set(before_ns)


def test_a_second_podlife_up_at_the_same_time_gets_its_own_network(cluster: ProcessCluster, tmp_path: Path) -> None:
    tag, octet = instance(cluster)
    other = ProcessCluster(tmp_path)
    try:
        tag2, octet2 = instance(other)
        assert tag2 != tag and octet2 != octet
        other.apply(server_pod("a1", "node-1"))   # same name, same port, same node name as the first's a1
        other.wait_for("a1 ready", lambda: running(other, "a1"), 40)
        assert other.pod("a1")["status"]["podIP"] == f"10.{octet2}.0.2"
        assert get(f"http://10.{octet2}.0.2:8080/") == "a1"
        assert get(f"http://{cluster.pod('a1')['status']['podIP']}:8080/") == "a1"
        assert len(mine(tag2)[1]) == 1
    finally:
        assert other.stop() == 0
    # podlife up's exit removed every namespace, veth and bridge of its own, and nothing of the first's
    assert mine(tag2) == ([], [])
    assert f"pl{tag}-br0" in links()


def test_what_a_killed_podlife_up_left_goes_when_the_next_starts(tmp_path: Path) -> None:
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = ProcessCluster(tmp_path / "first")
    tag, _octet = instance(first)
    first.apply(server_pod("k1", "node-1"))
    first.wait_for("k1 ready", lambda: running(first, "k1"), 40)
    left_links, left_ns = mine(tag)
    assert [n for n in left_links if "-br" in n] == [f"pl{tag}-br0", f"pl{tag}-br1", f"pl{tag}-br2"]
    assert len(left_links) == 4 and len(left_ns) == 1   # three bridges and k1's veth; k1's namespace
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait()
    first.log.close()
    assert mine(tag) == (left_links, left_ns)   # nobody removed them
    second = ProcessCluster(tmp_path / "second")
    try:
        tag2, _ = instance(second)
        # gone: the dead instance's namespace and veth; its bridges too, unless the number is ours again
        assert not set(left_ns) & set(namespaces())
        assert mine(tag) == (([f"pl{tag}-br0", f"pl{tag}-br1", f"pl{tag}-br2"] if tag2 == tag else []), [])
    finally:
        assert second.stop() == 0
    assert mine(tag) == ([], []) and mine(tag2) == ([], [])


def test_a_namespace_of_a_live_owner_outlives_the_clean_up_of_its_number() -> None:
    """/run/netns is the machine's: a podlife up in another network namespace may use the same instance number,
    its bridges out of sight. Cleaning up that number here removes only namespaces whose owner has gone."""
    from podlife.runtime.supervisor import start_time

    tag = len(podnet.OCTETS) - 1   # a number no instance of these tests takes
    alive = f"podlife{tag}-{os.getpid()}.{start_time(os.getpid())}-0123456789abcdef"
    gone = f"podlife{tag}-{os.getpid()}.1-fedcba9876543210"   # this pid, another start time: a process gone
    old = f"podlife{tag}-0123456789abcdef"   # the form before owners were named
    try:
        for name in (alive, gone, old):
            subprocess.run(["ip", "netns", "add", name], check=True)
        podnet._remove_instance(tag)
        assert mine(tag)[1] == [alive]
    finally:
        for name in (alive, gone, old):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_without_ip_the_claim_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert podnet.PodNetwork.claim(None) == (None, "no ip command (iproute2) on this machine")

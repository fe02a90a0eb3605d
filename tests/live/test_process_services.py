"""Service ClusterIPs, session affinity and cluster DNS on ``podlife up --runtime process`` (root: the Service
addresses go on an interface of the instance's own), with real processes and real kubectl. What is expected is
upstream's: kube-proxy's IPVS round robin and ClientIP persistence, a refused connection for a Service without
endpoints, CoreDNS's answers and the kubelet's resolv.conf for a ClusterFirst pod (pkg/kubelet/network/dns)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from podlife.runtime import mountns, poddns, servicelink
from tests.live.test_process_runtime import ProcessCluster

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or mountns.available() is not None,
                                reason="needs root (an interface for the Service addresses, mount namespaces)")

# a server on the pod's own address that answers every GET with the pod's name
SERVER = ("import http.server, os\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    def do_GET(self):\n"
          "        body = os.environ['HOSTNAME'].encode()\n"
          "        self.send_response(200); self.send_header('Content-Length', str(len(body))); self.end_headers()\n"
          "        self.wfile.write(body)\n"
          "    def log_message(self, *a): pass\n"
          "http.server.HTTPServer((os.environ['POD_IP'], 28080), H).serve_forever()\n")


def _pod(name: str, app: str = "echo", program: str = SERVER) -> str:
    """A pod running a Python program given its pod IP; ready once it listens on TCP 28080 (the echo server)."""
    probe = "    readinessProbe: {tcpSocket: {port: 28080}, periodSeconds: 1}\n" if program == SERVER else ""
    return f"""\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {app}}}}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: python
    command: ["python3", "-c", {json.dumps(program)}]
    env: [{{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}]
""" + probe


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.fixture(scope="module")
def leftover() -> Iterator[str]:
    """The interface of a podlife up that crashed: the next start removes it."""
    name = f"{servicelink.PREFIX}{_dead_pid()}"
    subprocess.run(["ip", "link", "add", name, "type", "bridge"], check=True)
    yield name
    subprocess.run(["ip", "link", "del", name], capture_output=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, leftover: str) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("services"))
    c.wait_for("ready", lambda: "podlife: ready" in c.output(), 60)
    yield c
    c.stop()


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return str(r.read().decode())


def cluster_ip(cluster: ProcessCluster, name: str) -> str:
    return str(json.loads(cluster.kubectl("get", "service", name, "-o", "json").stdout)["spec"]["clusterIP"])


def test_start_removes_a_crashed_instances_interface_and_makes_its_own(cluster: ProcessCluster,
                                                                       leftover: str) -> None:
    assert f"podlife: removed the Service interface {leftover} of a podlife up that is no longer running" in \
        cluster.output()
    assert not servicelink.exists(leftover)
    assert servicelink.exists(f"{servicelink.PREFIX}{cluster.proc.pid}")
    # default/kubernetes reaches the API server (its endpoint is the stand-in 10.0.0.2:6443 on loopback), whose
    # certificate names the ClusterIP, as kubeadm's does
    req = urllib.request.Request("https://10.96.0.1/version", headers={"Authorization": f"Bearer {cluster.token}"})
    with urllib.request.urlopen(req, timeout=10, context=cluster.ssl) as r:
        assert json.loads(r.read())["gitVersion"].startswith("v1.")
    dns = json.loads(cluster.kubectl("get", "service", "kube-dns", "-n", "kube-system", "-o", "json").stdout)
    assert dns["spec"]["clusterIP"] == "10.96.0.10"
    assert [(p["name"], p["port"], p["protocol"]) for p in dns["spec"]["ports"]] == \
        [("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")]


def test_cluster_ip_round_robin_then_client_ip_affinity_with_its_timeout(cluster: ProcessCluster) -> None:
    cluster.apply(_pod("echo-a") + "---\n" + _pod("echo-b") + """\
---
apiVersion: v1
kind: Service
metadata: {name: echo}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 80, targetPort: 28080}]
""")
    ip = cluster_ip(cluster, "echo")
    cluster.wait_for("both ready", lambda: cluster.ready("echo-a") and cluster.ready("echo-b"), 60)

    def ready_endpoints() -> int:
        out = cluster.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=echo", "-o", "json").stdout
        return sum(1 for s in json.loads(out)["items"] for e in s.get("endpoints") or ()
                   if (e.get("conditions") or {}).get("ready"))
    cluster.wait_for("two ready endpoints", lambda: ready_endpoints() == 2, 30)
    # IPVS rr: the two endpoints in turn
    answers = [get(f"http://{ip}/") for _ in range(4)]
    assert sorted(answers[:2]) == ["echo-a", "echo-b"] and answers[2:] == answers[:2]
    # ClientIP: one endpoint for this client while it comes back within timeoutSeconds
    cluster.kubectl("patch", "service", "echo", "-p",
                    '{"spec":{"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":2}}}}')
    time.sleep(0.5)   # the proxy applies the change at once; the watch event travels to it first
    first = get(f"http://{ip}/")
    assert [get(f"http://{ip}/") for _ in range(4)] == [first] * 4
    time.sleep(2.5)   # past the timeout the round robin goes on: the other endpoint
    assert get(f"http://{ip}/") != first


UDP_SERVER = ("import os, socket\n"
              "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((os.environ['POD_IP'], 25353))\n"
              "while True:\n"
              "    data, addr = s.recvfrom(512); s.sendto(os.environ['HOSTNAME'].encode() + b' ' + data, addr)\n")


def test_udp_service_and_node_port(cluster: ProcessCluster) -> None:
    cluster.apply(_pod("udp", "udp", UDP_SERVER) + """\
---
apiVersion: v1
kind: Service
metadata: {name: udp}
spec:
  selector: {app: udp}
  ports: [{name: dns, port: 5300, targetPort: 25353, protocol: UDP}]
---
apiVersion: v1
kind: Service
metadata: {name: echo-np}
spec:
  type: NodePort
  selector: {app: echo}
  ports: [{port: 80, targetPort: 28080}]
""")
    ip = cluster_ip(cluster, "udp")
    cluster.wait_for("udp ready", lambda: cluster.ready("udp"), 60)
    time.sleep(0.5)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(b"question", (ip, 5300))
        assert s.recvfrom(512) == (b"udp question", (ip, 5300))   # the answer comes from the Service address
    svc = json.loads(cluster.kubectl("get", "service", "echo-np", "-o", "json").stdout)
    node = json.loads(cluster.kubectl("get", "node", "node-1", "-o", "json").stdout)
    node_ip = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    cluster.wait_for("echo ready", lambda: cluster.ready("echo-a"), 60)
    assert get(f"http://{node_ip}:{svc['spec']['ports'][0]['nodePort']}/") in ("echo-a", "echo-b")


def test_service_without_endpoints_refuses_connections(cluster: ProcessCluster) -> None:
    cluster.apply("""\
apiVersion: v1
kind: Service
metadata: {name: nobody}
spec:
  selector: {app: nobody}
  ports: [{port: 81, targetPort: 28080}]
""")
    ip = cluster_ip(cluster, "nobody")
    time.sleep(0.5)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((ip, 81), timeout=5).close()


def test_pod_resolv_conf_and_service_names_from_inside_a_container(cluster: ProcessCluster) -> None:
    cluster.apply("""\
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: busybox, command: ["sleep", "3600"]}
---
apiVersion: v1
kind: Service
metadata: {name: named}
spec:
  selector: {app: echo}
  ports: [{name: http, port: 8081, targetPort: 28080}]
""")
    cluster.wait_for("client running", lambda: "running" in cluster.state("client"), 30)
    ip = cluster_ip(cluster, "named")
    host = poddns.parse_resolv_conf(Path("/etc/resolv.conf").read_text())
    search = " ".join(["default.svc.cluster.local", "svc.cluster.local", "cluster.local", *host.searches])
    assert cluster.kubectl("exec", "client", "--", "cat", "/etc/resolv.conf").stdout == \
        f"search {search}\nnameserver 10.96.0.10\noptions ndots:5\n"
    # glibc's resolver through the search path (ndots:5), then the full name
    assert cluster.kubectl("exec", "client", "--", "getent", "hosts", "named").stdout.split() == \
        [ip, "named.default.svc.cluster.local"]
    assert cluster.kubectl("exec", "client", "--", "getent", "hosts",
                           "named.default.svc.cluster.local").stdout.split() == [ip, "named.default.svc.cluster.local"]
    out = cluster.kubectl("exec", "client", "--", "getent", "hosts", "missing.default.svc.cluster.local",
                          check=False)
    assert out.returncode == 2 and out.stdout == ""   # NXDOMAIN: getent's "key not found"
    # and the Service answers by its name from inside the pod
    cluster.wait_for("echo ready", lambda: cluster.ready("echo-a"), 60)
    answer = cluster.kubectl("exec", "client", "--", "wget", "-qO-", "http://named:8081/").stdout
    assert answer in ("echo-a", "echo-b")


def test_a_second_instance_says_what_the_first_holds_and_stop_removes_its_interface(
        cluster: ProcessCluster, tmp_path: Path) -> None:
    c = ProcessCluster(tmp_path)
    c.wait_for("ready", lambda: "podlife: ready" in c.output(), 60)
    # the first instance holds the cluster DNS address and default/kubernetes's port: the second says so
    assert ("podlife: cluster DNS is not served (10.96.0.10:53/UDP: address already in use; 10.96.0.10:53/TCP: "
            "address already in use; another podlife up?): pods use this machine's resolver") in c.output()
    assert ("podlife.kube-proxy: 10.96.0.1:443/TCP of Service default/kubernetes is not served: in use by another "
            "program (another podlife up?)") in c.output()
    # its kubelets have no clusterDNS: a ClusterFirst pod falls back to Default, with upstream's events
    c.apply("""\
apiVersion: v1
kind: Pod
metadata: {name: fallback}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: busybox, command: ["sleep", "3600"]}
""")
    c.wait_for("fallback running", lambda: "running" in c.state("fallback"), 30)
    host_file = Path("/etc/resolv.conf").read_bytes()
    expected = poddns.content(poddns.parse_resolv_conf(host_file.decode()), host_file)
    assert c.kubectl("exec", "fallback", "--", "cat", "/etc/resolv.conf").stdout == expected.decode()
    uid = c.pod("fallback")["metadata"]["uid"]
    missing = [(e["type"], e["message"]) for e in c.events("fallback") if e["reason"] == "MissingClusterDNS"]
    assert missing == [("Warning", f'pod: "fallback_default({uid})". {poddns.MISSING_CLUSTER_DNS}')]
    name = f"{servicelink.PREFIX}{c.proc.pid}"
    assert servicelink.exists(name)
    assert c.stop() == 0
    assert not servicelink.exists(name)

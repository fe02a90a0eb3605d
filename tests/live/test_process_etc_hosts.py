"""The kubelet-managed /etc/hosts and the pod's hostname on ``podlife up --runtime process`` (each container in
mount and UTS namespaces of its own; the tests run as root, as CI does), read back through real kubectl.
Expected contents are upstream's (pkg/kubelet/kubelet_pods.go managedHostsFileContent, nodeHostsFileContent)."""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from podlife.runtime import mountns, utsns
from tests.live.test_process_runtime import ProcessCluster

pytestmark = pytest.mark.skipif(mountns.available() is not None or utsns.available() is not None,
                                reason="needs mount and UTS namespaces (root)")

LOCALHOST = ("# Kubernetes-managed hosts file.\n"
             "127.0.0.1\tlocalhost\n"
             "::1\tlocalhost ip6-localhost ip6-loopback\n"
             "fe00::0\tip6-localnet\n"
             "fe00::0\tip6-mcastprefix\n"
             "fe00::1\tip6-allnodes\n"
             "fe00::2\tip6-allrouters\n")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("etchosts"))
    yield c
    c.stop()


def machine_hosts() -> str:
    return Path("/etc/hosts").read_text()


def running(cluster: ProcessCluster, name: str) -> str:
    cluster.wait_for(f"{name} Running", lambda: "running" in cluster.state(name), 30)
    return str(cluster.pod(name)["status"]["podIP"])


def test_managed_hosts_file_hostname_and_host_aliases(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: named}
        spec:
          terminationGracePeriodSeconds: 1
          hostname: web-0
          subdomain: front
          hostAliases:
          - {ip: 123.45.67.89, hostnames: [foo, bar]}
          - {ip: "::2", hostnames: [six]}
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "cat /etc/hosts; echo \\"host $(hostname) $HOSTNAME\\"; sleep 3600"]
          - name: own
            image: busybox
            command: ["sleep", "3600"]
            volumeMounts: [{name: etc-hosts, mountPath: /etc/hosts}]
          volumes:
          - {name: etc-hosts, hostPath: {path: /etc/hosts, type: FileOrCreate}}
        """)
    ip = running(cluster, "named")
    managed = (LOCALHOST + f"{ip}\tweb-0.front.default.svc.cluster.local\tweb-0\n"
               "\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n::2\tsix\n")
    assert cluster.kubectl("exec", "named", "-c", "app", "--", "cat", "/etc/hosts").stdout == managed
    cluster.wait_for("logs", lambda: "host " in cluster.kubectl("logs", "named", "-c", "app").stdout, 20)
    assert cluster.kubectl("logs", "named", "-c", "app").stdout == managed + "host web-0 web-0\n"
    assert cluster.kubectl("exec", "named", "-c", "app", "--", "hostname").stdout == "web-0\n"
    # a container that mounts /etc/hosts itself gets no managed file; the pod's hostname all the same
    assert cluster.kubectl("exec", "named", "-c", "own", "--", "cat", "/etc/hosts").stdout == machine_hosts()
    assert cluster.kubectl("exec", "named", "-c", "own", "--", "hostname").stdout == "web-0\n"
    # the machine keeps its own name and file
    assert socket.gethostname() != "web-0" and "foo" not in machine_hosts()
    cluster.kubectl("delete", "pod", "named", "--wait=false")


def test_long_pod_name_is_cut_to_63_characters_without_a_trailing_dash(cluster: ProcessCluster) -> None:
    name = "a" * 62 + "-" + "b" * 7   # 63 characters end in '-': truncatePodHostnameIfNeeded drops it
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sleep", "3600"]
        """)
    ip = running(cluster, name)
    assert cluster.kubectl("exec", name, "--", "hostname").stdout == "a" * 62 + "\n"
    assert cluster.kubectl("exec", name, "--", "cat", "/etc/hosts").stdout == LOCALHOST + f"{ip}\t{'a' * 62}\n"
    cluster.kubectl("delete", "pod", name, "--wait=false")


def test_host_network_pod_has_the_machines_hostname_and_hosts_under_a_header(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: on-host}
        spec:
          terminationGracePeriodSeconds: 1
          hostNetwork: true
          hostAliases: [{ip: 10.1.2.3, hostnames: [alias]}]
          containers:
          - name: app
            image: busybox
            command: ["sleep", "3600"]
            env:
            - {name: HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
        """)
    ip = running(cluster, "on-host")
    # kubelet_pods.go generateAPIPodStatus: a hostNetwork pod's IP is the node's, in the status and the downward API
    # (test/e2e/common/node/downwardapi.go "if pod uses host network")
    node = json.loads(cluster.kubectl("get", "node", cluster.pod("on-host")["spec"]["nodeName"], "-o", "json").stdout)
    # podlife's node address: .1 of the node's podCIDR (the pod network's gateway, or a loopback address)
    assert ip == cluster.pod("on-host")["status"]["hostIP"] == str(ipaddress.ip_network(node["spec"]["podCIDR"])[1])
    env = cluster.kubectl("exec", "on-host", "--", "sh", "-c", 'echo "$HOST_IP $POD_IP"').stdout
    assert env == f"{ip} {ip}\n"
    hosts = cluster.kubectl("exec", "on-host", "--", "cat", "/etc/hosts").stdout
    assert hosts == ("# Kubernetes-managed hosts file (host network).\n" + machine_hosts()
                     + "\n# Entries added by HostAliases.\n10.1.2.3\talias\n")
    me = socket.gethostname()
    assert cluster.kubectl("exec", "on-host", "--", "sh", "-c", 'echo "$(hostname) $HOSTNAME"').stdout == f"{me} {me}\n"
    cluster.kubectl("delete", "pod", "on-host", "--wait=false")


def test_downward_api_environment(cluster: ProcessCluster) -> None:
    """test/e2e/common/node/downwardapi.go: the pod's name, namespace, IP, UID, the host IP and the container's
    resources (limits defaulting to the node's allocatable) in the environment a container prints."""
    def ref(name: str, path: str) -> str:
        return f"- {{name: {name}, valueFrom: {{fieldRef: {{fieldPath: {path}}}}}}}"

    def res(name: str, resource: str) -> str:
        return f"- {{name: {name}, valueFrom: {{resourceFieldRef: {{resource: {resource}}}}}}}"
    env = "\n            ".join([ref("POD_NAME", "metadata.name"), ref("POD_NAMESPACE", "metadata.namespace"),
                                 ref("POD_IP", "status.podIP"), ref("HOST_IP", "status.hostIP"),
                                 ref("POD_UID", "metadata.uid"), res("CPU_LIMIT", "limits.cpu"),
                                 res("MEMORY_LIMIT", "limits.memory"), res("CPU_REQUEST", "requests.cpu"),
                                 res("MEMORY_REQUEST", "requests.memory")])
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: dapi}}
        spec:
          restartPolicy: Never
          containers:
          - name: dapi-container
            image: busybox
            command: ["sh", "-c", "env"]
            resources: {{requests: {{cpu: 250m, memory: 32Mi}}}}
            env:
            {env}
        """)
    cluster.wait_for("dapi Succeeded", lambda: cluster.pod("dapi").get("status", {}).get("phase") == "Succeeded", 30)
    pod = cluster.pod("dapi")
    lines = set(cluster.kubectl("logs", "dapi").stdout.splitlines())
    # no limits: the node's allocatable (8 CPUs, 32Gi); requests rounded up to whole CPUs (ceil of 250m)
    st = pod["status"]
    assert {"POD_NAME=dapi", "POD_NAMESPACE=default", f"POD_IP={st['podIP']}", f"HOST_IP={st['hostIP']}",
            f"POD_UID={pod['metadata']['uid']}", "CPU_LIMIT=8", f"MEMORY_LIMIT={32 << 30}", "CPU_REQUEST=1",
            f"MEMORY_REQUEST={32 << 20}", "HOSTNAME=dapi"} <= lines
    assert st["podIP"].rsplit(".", 1)[0] == st["hostIP"].rsplit(".", 1)[0] and st["podIP"] != st["hostIP"]
    cluster.kubectl("delete", "pod", "dapi", "--wait=false")


def test_hosts_file_mount_point_made_in_a_volume_at_etc(cluster: ProcessCluster) -> None:
    """A volume mounted at /etc lacks a hosts file: the mount point is made in it (as runc makes a missing one),
    and the same for the pod's resolv.conf (podlife.runtime.poddns)."""
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: etc-volume}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["/bin/sleep", "3600"]
            volumeMounts: [{name: etc, mountPath: /etc, readOnly: true}]
          volumes: [{name: etc, emptyDir: {}}]
        """)
    ip = running(cluster, "etc-volume")
    hosts = cluster.kubectl("exec", "etc-volume", "--", "/bin/cat", "/etc/hosts").stdout
    assert hosts == LOCALHOST + f"{ip}\tetc-volume\n"
    assert cluster.kubectl("exec", "etc-volume", "--", "/bin/ls", "/etc").stdout == "hosts\nresolv.conf\n"
    cluster.kubectl("delete", "pod", "etc-volume", "--wait=false")

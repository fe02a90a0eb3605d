"""A pod's sysctls on ``podlife up --runtime process``: the kubelet admits the safe ones, runc's part (writing them
in the pod's IPC and network namespaces, podlife.runtime.ipcns) is done for real, and the busybox image's
``/bin/sysctl`` reads them back as in test/e2e/common/node/sysctl.go ("should support sysctls", and "with slashes
as separator"); the host's own values are left alone."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from podlife.runtime import ipcns, mountns, podnet
from tests.live.test_process_runtime import ProcessCluster

pytestmark = [
    pytest.mark.skipif(mountns.available() is not None or ipcns.available() is not None,
                       reason="needs mount and IPC namespaces (root)"),
    pytest.mark.skipif(shutil.which("busybox") is None, reason="needs this machine's BusyBox (its sysctl applet)"),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("sysctls"))
    yield c
    c.stop()


def _pod(name: str, sysctls: str, command: str) -> str:
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          restartPolicy: Never
          securityContext: {{sysctls: [{sysctls}]}}
          containers: [{{name: test-container, image: busybox, command: {command}}}]
        """


def _log_of_succeeded(cluster: ProcessCluster, name: str) -> str:
    cluster.wait_for(f"{name} done", lambda: cluster.pod(name)["status"].get("phase") in ("Succeeded", "Failed"), 30)
    status = cluster.pod(name)["status"]
    assert status["phase"] == "Succeeded", status["containerStatuses"][0]["state"]
    return cluster.kubectl("logs", name).stdout


@pytest.mark.parametrize("name, key", [("dots", "kernel.shm_rmid_forced"), ("slashes", "kernel/shm_rmid_forced")])
def test_bin_sysctl_reads_the_pods_ipc_sysctl(cluster: ProcessCluster, name: str, key: str) -> None:
    before = Path("/proc/sys/kernel/shm_rmid_forced").read_text()
    cluster.apply(_pod(name, f'{{name: "{key}", value: "1"}}', f'["/bin/sysctl", "{key}"]'))
    assert _log_of_succeeded(cluster, name) == "kernel.shm_rmid_forced = 1\n"
    assert Path("/proc/sys/kernel/shm_rmid_forced").read_text() == before   # the machine's IPC namespace: untouched


def test_a_pod_without_sysctls_has_the_defaults_of_a_new_ipc_namespace(cluster: ProcessCluster) -> None:
    cluster.apply(_pod("plain", "", '["/bin/sysctl", "kernel.shm_rmid_forced"]'))
    assert _log_of_succeeded(cluster, "plain") == "kernel.shm_rmid_forced = 0\n"


@pytest.mark.skipif(podnet.unavailable() is not None, reason=str(podnet.unavailable()))
def test_net_sysctls_land_in_the_pods_network_namespace(cluster: ProcessCluster) -> None:
    before = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text()
    cluster.apply(_pod("net", '{name: net.ipv4.ip_unprivileged_port_start, value: "80"}',
                       '["/bin/sysctl", "net.ipv4.ip_unprivileged_port_start"]'))
    assert _log_of_succeeded(cluster, "net") == "net.ipv4.ip_unprivileged_port_start = 80\n"
    assert Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text() == before


def test_an_unsafe_sysctl_is_rejected_by_the_kubelet(cluster: ProcessCluster) -> None:
    cluster.apply(_pod("unsafe", '{name: kernel.msgmax, value: "10000000000"}', '["/bin/sysctl", "kernel.msgmax"]'))
    cluster.wait_for("unsafe Failed", lambda: cluster.pod("unsafe")["status"].get("phase") == "Failed", 30)
    status = cluster.pod("unsafe")["status"]
    assert status["reason"] == "SysctlForbidden"
    assert [(e["reason"], e["message"]) for e in cluster.events("unsafe") if e["type"] == "Warning"] == [
        ("SysctlForbidden", 'forbidden sysctl: "kernel.msgmax" not allowlisted')]

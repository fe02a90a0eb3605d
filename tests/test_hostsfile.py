"""The pod's hostname, its kubelet-managed /etc/hosts (pkg/kubelet/kubelet_pods.go) and a hostNetwork pod's
address, on the simulated runtime (the process runtime's files: tests/live/test_process_etc_hosts.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podlife.runtime import hostsfile
from tests.helpers import records, run_text

HEADER = ("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
          "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")


def pod(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "shop"}, "spec": spec}


def test_managed_content_with_subdomain_and_aliases() -> None:
    p = pod(hostname="web-0", subdomain="front", hostAliases=[{"ip": "10.0.0.9", "hostnames": ["a", "b"]}])
    assert hostsfile.content(p, ["10.1.0.4"], b"ignored") == (
        HEADER + "10.1.0.4\tweb-0.front.shop.svc.cluster.local\tweb-0\n"
        "\n# Entries added by HostAliases.\n10.0.0.9\ta\tb\n").encode()
    assert hostsfile.content(pod(), ["10.1.0.4"], b"") == (HEADER + "10.1.0.4\tweb\n").encode()


def test_host_network_content_is_the_nodes_under_its_own_header() -> None:
    p = pod(hostNetwork=True, hostAliases=[{"ip": "10.0.0.9", "hostnames": ["a"]}])
    assert hostsfile.content(p, ["192.168.0.2"], b"127.0.0.1 localhost\n") == (
        b"# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n"
        b"\n# Entries added by HostAliases.\n10.0.0.9\ta\n")


def test_hostname_truncation_and_fqdn() -> None:
    # truncatePodHostnameIfNeeded: 63 characters, then no trailing '-' or '.'
    assert hostsfile.hostname_and_domain(pod("x" * 61 + "--yyy")) == ("x" * 61, "")
    assert hostsfile.kernel_hostname(pod(hostname="h", subdomain="s")) == "h"
    assert hostsfile.kernel_hostname(pod(hostname="h", subdomain="s", setHostnameAsFQDN=True)) == \
        "h.s.shop.svc.cluster.local"
    assert hostsfile.sandbox_config_error(pod(hostname="h", subdomain="s", setHostnameAsFQDN=True)) is None


def test_mounted_only_with_a_pod_ip_and_without_the_containers_own() -> None:
    assert hostsfile.should_mount({"volumeMounts": [{"mountPath": "/etc/hostsx"}]}, ["10.1.0.4"])
    assert not hostsfile.should_mount({"volumeMounts": [{"mountPath": "/etc/hosts"}]}, ["10.1.0.4"])
    assert not hostsfile.should_mount({}, [])


SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: hostnames}
spec:
  until: 30s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: long-fqdn}
      spec:
        hostname: %s
        subdomain: sub
        setHostnameAsFQDN: true
        containers: [{name: app, image: nginx:1.27}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: agent}
      spec:
        hostNetwork: true
        containers: [{name: app, image: nginx:1.27}]
"""


def test_too_long_fqdn_fails_the_sandbox_and_host_network_pod_has_the_nodes_ip(tmp_path: Path) -> None:
    """GetNodenameForKernel refuses an FQDN over 64 characters: generatePodSandboxConfig fails, every sync,
    with FailedCreatePodSandBox; a hostNetwork pod's IP is its node's (generateAPIPodStatus)."""
    host = "h" * 40
    r = run_text(tmp_path, SCENARIO % host)
    fqdn = f"{host}.sub.default.svc.cluster.local"
    events = [e for e in r.cluster.store.list("Event") if e["involvedObject"]["name"] == "long-fqdn"]
    failed = [e for e in events if e["reason"] == "FailedCreatePodSandBox"]
    assert failed and failed[0]["message"] == (
        f"Failed to create pod sandbox: failed to construct FQDN from pod hostname and cluster domain, FQDN {fqdn} "
        f"is too long (64 characters is the max, {len(fqdn)} characters requested)")
    assert "podIP" not in r.cluster.store.get("Pod", "default", "long-fqdn")["status"]
    agent = r.cluster.store.get("Pod", "default", "agent")["status"]
    assert agent["phase"] == "Running" and agent["podIP"] == agent["hostIP"]
    assert [x["detail"] for x in records(r, "runtime", op="create", object="Pod/default/agent")
            if x["detail"].startswith("sandbox")][0].endswith(" host network")

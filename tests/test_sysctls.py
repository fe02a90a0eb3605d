"""The kubelet's sysctl admission (pkg/kubelet/sysctl/allowlist.go, safe_sysctls.go, namespace.go): the safe list
of each release, the SysctlForbidden rejection and its wording, slashes read as dots, the node's
allowedUnsafeSysctls."""

from __future__ import annotations

import textwrap

import pytest

from podlife.api.sysctlnames import dotted, namespaced_by, proc_path
from podlife.kubelet.sysctls import Allowlist
from podlife.scenario.errors import ScenarioError
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run
from podlife.versions import MODELLED_VERSIONS, profile


def _pod(*names: str, host_network: bool = False, host_ipc: bool = False) -> dict:
    return {"spec": {"hostNetwork": host_network, "hostIPC": host_ipc,
                     "securityContext": {"sysctls": [{"name": n, "value": "1"} for n in names]}}}


def _admit(version: str, *names: str, unsafe: tuple[str, ...] = (), **host: bool) -> str | None:
    return Allowlist(profile(version), unsafe).admit(_pod(*names, **host))


# the release each safe sysctl came in (the PR in podlife.versions safe_sysctls)
SINCE = {"kernel.shm_rmid_forced": 18, "net.ipv4.ip_local_port_range": 18, "net.ipv4.tcp_syncookies": 18,
         "net.ipv4.ping_group_range": 18, "net.ipv4.ip_unprivileged_port_start": 22,
         "net.ipv4.ip_local_reserved_ports": 27, "net.ipv4.tcp_keepalive_time": 29,
         "net.ipv4.tcp_fin_timeout": 29, "net.ipv4.tcp_keepalive_intvl": 29, "net.ipv4.tcp_keepalive_probes": 29,
         "net.ipv4.tcp_rmem": 32, "net.ipv4.tcp_wmem": 32, "net.ipv4.tcp_slow_start_after_idle": 37,
         "net.ipv4.tcp_notsent_lowat": 37}


@pytest.mark.parametrize("version", MODELLED_VERSIONS)
def test_the_safe_list_of_each_release(version: str) -> None:
    minor = int(version.split(".")[1])
    word = "allowlisted" if minor >= 22 else "whitelisted"
    for name, since in SINCE.items():
        expected = None if minor >= since else f'forbidden sysctl: "{name}" not {word}'
        assert _admit(version, name) == expected, (version, name)


def test_unsafe_sysctl_message_as_upstream() -> None:
    # allowlist.go validateSysctl / Admit: fmt "forbidden sysctl: %v" over `%q not allowlisted`
    assert _admit("1.28", "kernel.msgmax") == 'forbidden sysctl: "kernel.msgmax" not allowlisted'
    assert _admit("1.21", "kernel.msgmax") == 'forbidden sysctl: "kernel.msgmax" not whitelisted'
    # the first refused one in the pod's order
    assert _admit("1.28", "kernel.shm_rmid_forced", "net.core.somaxconn", "kernel.msgmax") == \
        'forbidden sysctl: "net.core.somaxconn" not allowlisted'


def test_host_namespaces_forbid_their_sysctls() -> None:
    assert _admit("1.28", "net.ipv4.ip_local_port_range", host_network=True) == \
        'forbidden sysctl: "net.ipv4.ip_local_port_range" not allowed with host net enabled'
    assert _admit("1.28", "kernel.shm_rmid_forced", host_ipc=True) == \
        'forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host ipc enabled'
    assert _admit("1.28", "kernel.shm_rmid_forced", host_network=True) is None
    assert _admit("1.28", "kernel.msgmax", unsafe=("kernel.msg*",), host_ipc=True) == \
        'forbidden sysctl: "kernel.msgmax" not allowed with host ipc enabled'


def test_slashes_read_as_dots_from_1_23() -> None:
    assert _admit("1.23", "kernel/shm_rmid_forced") is None
    assert _admit("1.22", "kernel/shm_rmid_forced") == 'forbidden sysctl: "kernel/shm_rmid_forced" not allowlisted'
    assert _admit("1.28", "kernel/msgmax") == 'forbidden sysctl: "kernel.msgmax" not allowlisted'


def test_allowed_unsafe_sysctls_and_patterns() -> None:
    assert _admit("1.28", "kernel.msgmax", "net.core.somaxconn", unsafe=("kernel.msg*", "net.core.somaxconn")) is None
    assert _admit("1.28", "kernel.sem", unsafe=("kernel.msg*",)) == 'forbidden sysctl: "kernel.sem" not allowlisted'


def test_names_and_namespaces() -> None:
    # util_test.go's cases of convertSysctlVariableToDotsSeparator
    assert dotted("net/ipv4/conf/eno2.100/rp_filter") == "net.ipv4.conf.eno2/100.rp_filter"
    assert dotted("net.ipv4.conf.eno2/100.rp_filter") == "net.ipv4.conf.eno2/100.rp_filter"
    assert proc_path("kernel/shm_rmid_forced") == "/proc/sys/kernel/shm_rmid_forced"
    assert [namespaced_by(n) for n in ("kernel.sem", "kernel.shmmax", "fs.mqueue.msg_max", "net.core.somaxconn",
                                       "kernel.sem_next_id", "vm.swappiness")] == ["ipc", "ipc", "ipc", "net", "", ""]


SCENARIO = textwrap.dedent("""\
    apiVersion: podlife/v1alpha1
    kind: Scenario
    metadata: {name: sysctls}
    spec:
      kubernetesVersion: "1.28"
      until: 30s
      cluster: {nodes: [{name: node-1}]%s}
      objects:
      - apiVersion: v1
        kind: Pod
        metadata: {name: unsafe}
        spec:
          securityContext: {sysctls: [{name: kernel.msgmax, value: "10000000000"}]}
          containers: [{name: c, image: busybox}]
      - apiVersion: v1
        kind: Pod
        metadata: {name: safe}
        spec:
          securityContext: {sysctls: [{name: kernel.shm_rmid_forced, value: "1"}]}
          containers: [{name: c, image: busybox}]
    """)


def _final(result: object, name: str) -> dict:
    store = result.cluster.store  # type: ignore[attr-defined]
    return store.get("Pod", "default", name)


def test_a_pod_with_an_unsafe_sysctl_is_rejected() -> None:
    result = run(load_scenario("sysctls.yaml", text=SCENARIO % ""))
    events = [r for r in result.cluster.trace.records
              if r["type"] == "event" and r["object"] == "Pod/default/unsafe"]
    forbidden = [e for e in events if e["reason"] == "SysctlForbidden"]
    assert len(forbidden) == 1
    assert forbidden[0]["message"] == 'forbidden sysctl: "kernel.msgmax" not allowlisted'
    assert (forbidden[0]["eventType"], forbidden[0]["source"]) == ("Warning", "kubelet/node-1")
    assert not [e for e in events if e["reason"] in ("Pulling", "Created", "Started")]
    status = _final(result, "unsafe")["status"]
    assert (status["phase"], status["reason"], status["message"]) == (
        "Failed", "SysctlForbidden", 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted')
    assert _final(result, "safe")["status"]["phase"] == "Running"


def test_allowed_unsafe_sysctls_from_the_kubelet_configuration() -> None:
    result = run(load_scenario("sysctls.yaml", text=SCENARIO % ', kubelet: {allowedUnsafeSysctls: ["kernel.msg*"]}'))
    assert _final(result, "unsafe")["status"]["phase"] == "Running"


@pytest.mark.parametrize("pattern, message", [
    ("vm.swappiness", 'the sysctl "vm.swappiness" are not known to be namespaced'),
    ("kernel.*", 'the sysctls "kernel.*" are not known to be namespaced'),
    ("Foo", 'sysctl "Foo" must have at most 253 characters and match regex'),
])
def test_allowed_unsafe_sysctls_must_be_namespaced_patterns(pattern: str, message: str) -> None:
    with pytest.raises(ScenarioError) as e:
        load_scenario("sysctls.yaml", text=SCENARIO % f', kubelet: {{allowedUnsafeSysctls: ["{pattern}"]}}')
    assert "spec.cluster.kubelet.allowedUnsafeSysctls[0]" in str(e.value) and message in str(e.value)

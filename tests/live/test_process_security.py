"""A container's termination message, read-only root, capabilities and no_new_privs on ``podlife up --runtime
process``, with real kubectl: what the conformance tests of test/e2e/common/node (runtime.go, kubelet.go,
security_context.go) assert, with their commands and images. Needs root and mount namespaces (as CI has)."""

from __future__ import annotations

import os
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from podlife.runtime import mountns, shells
from tests.live.test_process_volumes import Cluster as VolumesCluster

BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.29-4"   # framework.BusyBoxImage


class Cluster(VolumesCluster):
    """podlife up --runtime process with one node (test_process_volumes's), and the pod's outcome."""

    def phase(self, name: str) -> str:
        return (self.pod(name).get("status") or {}).get("phase", "")

    def terminated(self, name: str) -> dict[str, Any]:
        statuses = (self.pod(name).get("status") or {}).get("containerStatuses") or [{}]
        return (statuses[0].get("state") or {}).get("terminated") or {}

    def finished(self, name: str, phase: str) -> dict[str, Any]:
        self.wait_for(f"{name} {phase}", lambda: self.phase(name) == phase, 30)
        return self.terminated(name)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why = mountns.available()
    if why is not None:
        pytest.skip(f"no mount namespaces here: {why}")
    c = Cluster(tmp_path_factory.mktemp("security"))
    yield c
    c.stop()


def _pod(name: str, container: str) -> str:
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          restartPolicy: Never
          containers:
          - name: c
{container}
        """


def test_termination_message_from_a_file_at_a_non_default_path_as_a_non_root_user(cluster: Cluster) -> None:
    # runtime.go "should report termination message if TerminationMessagePath is set as non-root user and at a
    # non-default path": the file is mounted writable for uid 10000, read once the container has exited
    cluster.apply(_pod("tm-file", f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c"]
            args: ["/bin/echo -n DONE > /dev/termination-custom-log"]
            terminationMessagePath: /dev/termination-custom-log
            securityContext: {{runAsUser: 10000}}"""))
    term = cluster.finished("tm-file", "Succeeded")
    assert (term["exitCode"], term["reason"], term["message"]) == (0, "Completed", "DONE")


def test_termination_message_falls_back_to_the_log_on_error_only(cluster: Cluster) -> None:
    # runtime.go: FallbackToLogsOnError takes the log of a failed container ("DONE"), nothing for one that
    # succeeded with an empty file, and the file when it has something
    cluster.apply(_pod("tm-fail", f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c"]
            args: ["/bin/echo -n DONE; /bin/false"]
            terminationMessagePolicy: FallbackToLogsOnError"""))
    cluster.apply(_pod("tm-ok", f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c"]
            args: ["/bin/echo DONE; /bin/true"]
            terminationMessagePolicy: FallbackToLogsOnError"""))
    cluster.apply(_pod("tm-both", f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c"]
            args: ["/bin/echo -n OK > /dev/termination-log; /bin/echo DONE; /bin/true"]
            terminationMessagePolicy: FallbackToLogsOnError"""))
    term = cluster.finished("tm-fail", "Failed")
    assert (term["exitCode"], term["reason"], term["message"]) == (1, "Error", "DONE")
    assert "message" not in cluster.finished("tm-ok", "Succeeded")
    assert cluster.finished("tm-both", "Succeeded")["message"] == "OK"


def test_a_long_log_gives_its_last_80_lines_at_most_2048_bytes(cluster: Cluster) -> None:
    # kuberuntime_container.go readLastStringFromContainerLogs: tail 80 lines, limit 2048 bytes
    cluster.apply(_pod("tm-long", f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c", "i=0; while [ $i -lt 100 ]; do echo line-$i; i=$((i+1)); done; exit 3"]
            terminationMessagePolicy: FallbackToLogsOnError"""))
    term = cluster.finished("tm-long", "Failed")
    assert term["message"] == "".join(f"line-{i}\n" for i in range(20, 100))
    cluster.apply(_pod("tm-wide", f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c", "i=0; while [ $i -lt 30 ]; do printf '%099d\\\\n' $i; i=$((i+1)); done; false"]
            terminationMessagePolicy: FallbackToLogsOnError"""))
    term = cluster.finished("tm-wide", "Failed")
    assert term["message"] == "".join(f"{i:099d}\n" for i in range(30))[:2048]


@pytest.mark.parametrize(("name", "path"), [("ro", "/file"), ("ro-tmp", "/tmp/file")])
def test_a_read_only_root_refuses_a_write_with_busyboxs_words(cluster: Cluster, name: str, path: str) -> None:
    # kubelet.go "should not write to root filesystem": the log is exactly BusyBox ash's message; /tmp too, as
    # the image's /tmp is part of its root file system
    if shells.busybox() is None:
        pytest.skip("no busybox on this machine")
    cluster.apply(_pod(name, f"""\
            image: {BUSYBOX}
            command: ["/bin/sh", "-c", "echo test > {path}; sleep 240"]
            securityContext: {{readOnlyRootFilesystem: true}}"""))
    cluster.wait_for(f"{name}'s log", lambda: cluster.kubectl("logs", name, check=False).stdout != "", 30)
    assert cluster.kubectl("logs", name).stdout == f"/bin/sh: can't create {path}: Read-only file system\n"
    cluster.kubectl("delete", "pod", name, "--wait=false")


def test_tmp_is_the_containers_own_writable_and_private_and_goes_with_it(cluster: Cluster) -> None:
    # statefulset.go "should perform rolling updates and roll backs of template modifications" moves the
    # httpd's index.html to /tmp: a container's /tmp is its image's, writable and its own
    name = f"podlife-privtmp-{os.getpid()}"
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: tmp}}
        spec:
          containers:
          - {{name: a, image: {BUSYBOX}, command: ["sleep", "240"]}}
          - {{name: b, image: {BUSYBOX}, command: ["sleep", "240"]}}
        """)
    cluster.wait_for("tmp running", lambda: cluster.running("tmp"), 30)
    assert cluster.sh("tmp", "a", f"echo a > /tmp/{name} && echo a > /var/tmp/{name} && cat /tmp/{name} "
                                  f"/var/tmp/{name} && stat -c %a /tmp /var/tmp") == "a\na\n1777\n1777\n"
    assert cluster.sh("tmp", "b", f"for f in /tmp/{name} /var/tmp/{name}; do [ -e $f ] || echo no $f; done; "
                                  f"echo b > /tmp/{name}; cat /tmp/{name}") == (
        f"no /tmp/{name}\nno /var/tmp/{name}\nb\n")
    assert not os.path.exists(f"/tmp/{name}") and not os.path.exists(f"/var/tmp/{name}")
    pods = cluster.tmp / "data" / "pods"
    # in the pod's directory: containers/<name>/<id>-rootfs/
    kept = sorted((p.relative_to(pods).parts[1:], p.read_text()) for p in pods.rglob(name))
    assert [(k[:2], k[2].endswith("-rootfs"), k[3:], text) for k, text in kept] == [
        (("containers", "a"), True, ("tmp", name), "a\n"), (("containers", "a"), True, ("var", "tmp", name), "a\n"),
        (("containers", "b"), True, ("tmp", name), "b\n")]
    cluster.kubectl("delete", "pod", "tmp", "--grace-period=1")
    cluster.wait_for("tmp's /tmp removed", lambda: not list(pods.glob("*/containers/a/*-rootfs")), 30)


def test_a_writable_root_takes_a_new_file_and_a_read_only_one_fails_the_container(cluster: Cluster) -> None:
    # security_context.go readOnlyRootFilesystem=false / true with "touch checkfile" (in the root, the working
    # directory): Succeeded, and Failed
    for name, ro in (("rootfs-rw", "false"), ("rootfs-ro", "true")):
        cluster.apply(_pod(name, f"""\
            image: {BUSYBOX}
            command: ["sh", "-c", "touch checkfile"]
            securityContext: {{readOnlyRootFilesystem: {ro}}}"""))
    assert cluster.finished("rootfs-rw", "Succeeded")["exitCode"] == 0
    assert cluster.finished("rootfs-ro", "Failed")["exitCode"] == 1
    assert not os.path.exists("/checkfile")   # the container's own root, not this machine's


def test_an_unprivileged_container_cannot_add_a_link(cluster: Cluster) -> None:
    # security_context.go "should run the container as unprivileged when false": containerd's default
    # capabilities have no CAP_NET_ADMIN (the name is podlife's, so that a failure adds nothing anyone uses)
    link = f"plf{os.getpid() % 100000}"
    try:
        cluster.apply(_pod("unpriv", f"""\
            image: {BUSYBOX}
            command: ["sh", "-c", "ip link add {link} type dummy || true"]
            securityContext: {{privileged: false}}"""))
        cluster.finished("unpriv", "Succeeded")
        assert "Operation not permitted" in cluster.kubectl("logs", "unpriv").stdout
        cluster.apply(_pod("caps", f"""\
            image: {BUSYBOX}
            command: ["sh", "-c", "grep -E '^Cap(Bnd|Eff)' /proc/self/status"]"""))
        cluster.finished("caps", "Succeeded")
        # oci/spec.go defaultUnixCaps: CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP
        # NET_BIND_SERVICE NET_RAW SYS_CHROOT MKNOD AUDIT_WRITE SETFCAP = bits 0-1, 3-8, 10, 13, 18, 27, 29, 31
        assert cluster.kubectl("logs", "caps").stdout.split() == [
            "CapEff:", "00000000a80425fb", "CapBnd:", "00000000a80425fb"]
    finally:
        subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)


def test_no_new_privs_keeps_a_set_user_id_program_at_the_users_uid(cluster: Cluster) -> None:
    # security_context.go AllowPrivilegeEscalation: /nnp of the nonewprivs image (set-user-ID root) prints
    # "Effective uid: 1000" with allowPrivilegeEscalation false, "Effective uid: 0" when it is unset
    for name, ape in (("nnp-false", ", allowPrivilegeEscalation: false"), ("nnp-nil", "")):
        cluster.apply(_pod(name, f"""\
            image: registry.k8s.io/e2e-test-images/nonewprivs:1.3
            securityContext: {{runAsUser: 1000{ape}}}"""))
    cluster.finished("nnp-false", "Succeeded")
    cluster.finished("nnp-nil", "Succeeded")
    assert cluster.kubectl("logs", "nnp-false").stdout == "Effective uid: 1000\n"
    assert cluster.kubectl("logs", "nnp-nil").stdout == "Effective uid: 0\n"


def test_the_pause_image_runs_as_a_non_root_user_until_its_active_deadline(cluster: Cluster) -> None:
    # pods.go "should allow activeDeadlineSeconds to be updated": the pause image under the restricted profile
    # (runAsNonRoot, runAsUser 1000, capabilities drop ALL, allowPrivilegeEscalation false) runs, then a
    # deadline of 5 s set on the running pod fails it with reason DeadlineExceeded
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: deadline}
        spec:
          securityContext: {runAsNonRoot: true, runAsUser: 1000, seccompProfile: {type: RuntimeDefault}}
          containers:
          - name: pause
            image: registry.k8s.io/pause:3.9
            securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
        """)
    cluster.wait_for("pause running", lambda: cluster.phase("deadline") == "Running"
                     and all(s.get("ready") for s in cluster.pod("deadline")["status"]["containerStatuses"]), 30)
    cluster.kubectl("patch", "pod", "deadline", "-p", '{"spec":{"activeDeadlineSeconds":5}}')
    cluster.wait_for("deadline exceeded", lambda: cluster.phase("deadline") == "Failed", 30)
    assert cluster.pod("deadline")["status"]["reason"] == "DeadlineExceeded"


def test_the_httpd_and_nginx_images_serve_their_index_on_port_80(cluster: Cluster) -> None:
    # statefulset.go (httpd:2.4.38-4, readiness httpGet :80/index.html) and rc.go (nginx:1.14-4): the image's own
    # program serves its document root's index.html on port 80 of the pod, exits 0 at SIGTERM
    probe = socket.socket()
    try:
        probe.bind(("127.0.250.250", 80))   # pods share the machine's ports: a wildcard listener takes every pod's
    except OSError as e:
        pytest.skip(f"port 80 of every address is taken on this machine ({e.strerror})")
    finally:
        probe.close()
    for name, image in (("httpd", "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"),
                        ("nginx", "registry.k8s.io/e2e-test-images/nginx:1.14-4")):
        cluster.apply(f"""\
            apiVersion: v1
            kind: Pod
            metadata: {{name: {name}}}
            spec:
              containers:
              - name: webserver
                image: {image}
                readinessProbe: {{httpGet: {{path: /index.html, port: 80}}, periodSeconds: 1}}
            """)
    for name in ("httpd", "nginx"):
        cluster.wait_for(f"{name} ready", lambda name=name: cluster.pod(name).get("status", {}).get(
            "containerStatuses", [{}])[0].get("ready"), 30)
    httpd_ip = cluster.pod("httpd")["status"]["podIP"]
    with urllib.request.urlopen(f"http://{httpd_ip}/index.html", timeout=10) as resp:
        assert (resp.status, resp.headers["Server"], resp.read()) == (
            200, "Apache/2.4.38 (Unix)", b"<html><body><h1>It works!</h1></body></html>\n")
    assert cluster.kubectl("exec", "httpd", "--", "cat", "/usr/local/apache2/htdocs/index.html").stdout == \
        "<html><body><h1>It works!</h1></body></html>\n"
    assert "<h1>Welcome to nginx!</h1>" in cluster.kubectl("exec", "nginx", "--", "cat",
                                                           "/usr/share/nginx/html/index.html").stdout
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"http://{httpd_ip}/nothing.html", timeout=10)
    assert missing.value.code == 404
    cluster.kubectl("delete", "pod", "httpd", "nginx", "--wait=false")
    for name in ("httpd", "nginx"):
        cluster.wait_for(f"{name} stopped", lambda name=name: "terminated" in (
            cluster.pod(name).get("status", {}).get("containerStatuses", [{}])[0].get("state") or {})
            or not cluster.pod(name), 30)


def test_a_container_that_cannot_start_under_restart_policy_never_stays_terminated(cluster: Cluster) -> None:
    # convertToAPIContainerStatuses: a container that will not be restarted keeps its terminated state (StartError,
    # 128, containerd's message), not RunContainerError's waiting, so the pod's end leaves it as it is
    cluster.apply(_pod("nostart", f"""\
            image: {BUSYBOX}
            command: ["/no-such-program"]"""))
    term = cluster.finished("nostart", "Failed")
    assert (term["exitCode"], term["reason"]) == (128, "StartError")
    assert term["message"] == (
        "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
        'failed: unable to start container process: exec: "/no-such-program": no such file or directory: unknown')

"""Bad input to podlife up and its commands ends with exit 2 and a clear message, never a traceback."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podlife.apiserver.up import UpConfig, secure, served_securely

PODLIFE = [sys.executable, "-m", "podlife.cli"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PODLIFE, *args], capture_output=True, text=True, timeout=60)


def test_unknown_version() -> None:
    p = _run("up", "--kubernetes-version", "1.99", "--port", "0", "--kubeconfig", "/dev/null", "--ephemeral")
    assert p.returncode == 2
    assert p.stderr.startswith('--kubernetes-version: "1.99" is not a modelled version; expected one of "1.18"')


def test_bad_durations_and_missing_cluster(tmp_path) -> None:
    p = _run("advance", "5x")
    assert p.returncode == 2 and p.stderr.startswith("DURATION: ")
    missing = tmp_path / "nowhere"
    p = _run("advance", "1m", "--kubeconfig", str(missing))
    assert p.returncode == 2
    assert p.stderr.strip() == f"{missing}: No such file or directory; is podlife up running (it writes this file)?"
    p = _run("up", str(tmp_path / "cluster.yaml"), "--port", "0", "--ephemeral")
    assert p.returncode == 2 and "cluster.yaml" in p.stderr and "Traceback" not in p.stderr
    p = _run("up", "--speed", "0")
    assert (p.returncode, p.stderr.strip()) == (2, "--speed: expected a positive number, got 0.0")


@pytest.mark.parametrize(("host", "tls", "expected"), [
    ("127.0.0.1", False, False), ("127.0.1.7", False, False), ("::1", False, False), ("localhost", False, False),
    ("127.0.0.1", True, True), ("0.0.0.0", False, True), ("::", False, True), ("192.0.2.2", False, True),
    ("example.com", False, True)])
def test_any_address_but_loopback_forces_tls_and_a_token(host: str, tls: bool, expected: bool) -> None:
    assert secure(host, tls) is expected


@pytest.mark.parametrize(("runtime", "expected"), [("simulated", False), ("process", True)])
def test_the_process_runtime_forces_tls_and_a_token_on_loopback(runtime: str, expected: bool) -> None:
    assert served_securely(UpConfig(host="127.0.0.1", runtime=runtime)) is expected


def test_detach_prints_the_usage_and_down_stops_it(tmp_path: Path) -> None:
    data, kubeconfig = tmp_path / "data", tmp_path / "kc"
    p = _run("up", "--detach", "--clock", "manual", "--kubernetes-version", "1.32", "--port", "0",
             "--data-dir", str(data), "--kubeconfig", str(kubeconfig))
    pid = None
    try:
        assert p.returncode == 0, p.stdout + p.stderr
        lines = p.stdout.splitlines()
        pid = int(re.fullmatch(r"podlife: running in the background \(pid (\d+), output in (.+)\)", lines[-1])[1])
        url = re.fullmatch(r"podlife: Kubernetes 1\.32 API at (http://127\.0\.0\.1:\d+): 3 nodes, manual clock, "
                           rf"state in {re.escape(str(data))}", lines[0])[1]
        assert lines[1:-1] == [f"kubeconfig written to {kubeconfig}; use it with:",
                               f"  export KUBECONFIG={kubeconfig}",
                               "  kubectl get nodes",
                               f"  podlife advance 1m --kubeconfig {kubeconfig}   # time moves only when told",
                               f"podlife down --kubeconfig {kubeconfig} (or Ctrl-C) stops the cluster.",
                               "podlife: ready"]
        assert lines[-1].endswith(f"output in {data / 'podlife.log'})")
        # the data directory and the server's output are the user's alone
        assert [stat.S_IMODE(p.stat().st_mode) for p in (data, data / "podlife.log", kubeconfig)] == [
            0o700, 0o600, 0o600]
        # the usage works as printed, from another directory
        env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
        nodes = subprocess.run(["kubectl", "get", "nodes", "-o", "name"], env=env, capture_output=True, text=True,
                               timeout=60, cwd="/")
        assert nodes.stdout.split() == ["node/node-1", "node/node-2", "node/node-3"], nodes.stderr
        assert _run("advance", "1m", "--kubeconfig", str(kubeconfig)).stdout == "clock at 60s\n"
        down = _run("down", "--kubeconfig", str(kubeconfig))
        assert (down.returncode, down.stdout) == (0, "podlife: stopped\n"), down.stderr
        assert _gone(pid)
        assert (data / "podlife.log").read_text().splitlines()[-1] == "podlife: stopped"
        again = _run("down", "--kubeconfig", str(kubeconfig))
        assert again.returncode == 1
        assert again.stderr.strip() == f"{url}: cannot reach the cluster ([Errno 111] Connection refused); is " \
                                       "podlife up running?"
    finally:
        if pid is not None and not _gone(pid):
            os.kill(pid, signal.SIGKILL)


def _gone(pid: int, within: float = 10.0) -> bool:
    """The detached server (a child of the podlife up that returned, so reaped by init) has exited."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False

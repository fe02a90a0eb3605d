"""Bad input to podlife up and its commands ends with exit 2 and a clear message, never a traceback."""

from __future__ import annotations

import subprocess
import sys

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

"""A live ``podlife up`` per test module (or per test), started as a subprocess on a free port with its own
kubeconfig, and the real clients run against it: kubectl (the machine's dispatcher picks the kubectl of the
server's minor), the kubernetes Python client, Kopf."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

PODLIFE = [sys.executable, "-m", "podlife.cli"]
STARTUP_TIMEOUT = 30.0


def _require_kubectl() -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")


class Live:
    """A running ``podlife up``."""

    def __init__(self, tmp: Path, version: str, clock: str = "realtime", speed: float = 1.0,
                 cluster: str | None = None, extra: tuple[str, ...] = (), env: dict[str, str] | None = None) -> None:
        self.kubeconfig = str(tmp / "kubeconfig")
        self.version = version
        self.log = open(tmp / "podlife-up.log", "w+")
        args = [*PODLIFE, "up", *([cluster] if cluster else []), "--kubernetes-version", version, "--port", "0",
                "--clock", clock, "--speed", str(speed), "--kubeconfig", self.kubeconfig,
                *(() if "--ephemeral" in extra or "--data-dir" in extra else ("--data-dir", str(tmp / "data"))),
                *extra]
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, cwd=tmp, env=env)
        self.env = {**os.environ, "KUBECONFIG": self.kubeconfig}
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not os.path.exists(self.kubeconfig):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"podlife up did not start:\n{self.output()}")
            time.sleep(0.05)
        import yaml

        doc = yaml.safe_load(Path(self.kubeconfig).read_text())
        self.url = doc["clusters"][0]["cluster"]["server"]
        self.token = doc["users"][0]["user"].get("token")
        self.ssl: ssl.SSLContext | None = None   # --tls, --runtime process: the self-signed certificate
        ca = doc["clusters"][0]["cluster"].get("certificate-authority-data")
        if ca:
            self.ssl = ssl.create_default_context(cadata=base64.b64decode(ca).decode())

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def kubectl(self, *args: str, check: bool = True, timeout: float = 60.0, input: str | None = None
                ) -> subprocess.CompletedProcess[str]:
        p = subprocess.run(["kubectl", *args], env=self.env, capture_output=True, text=True, timeout=timeout,
                           input=input)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, auth: bool = True) -> tuple[int, dict[str, str], bytes]:
        headers = dict(headers or {})
        if self.token and auth:   # --tls and --runtime process require it (kubectl reads it from the kubeconfig)
            headers.setdefault("Authorization", f"Bearer {self.token}")
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30, context=self.ssl) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def json(self, method: str, path: str, body: Any = None, content_type: str = "application/json"
             ) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
        code, _, raw = self.request(method, path, data, {"Content-Type": content_type})
        return code, json.loads(raw) if raw else None

    def advance(self, duration: str) -> float:
        """The manual clock moves (the endpoint ``podlife advance`` calls)."""
        code, state = self.json("POST", f"/podlife/advance?by={duration}")
        assert code == 200, state
        return state["seconds"]

    def podlife(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A podlife command against this cluster (advance, fault, trace)."""
        return subprocess.run([*PODLIFE, *args, "--kubeconfig", self.kubeconfig], capture_output=True, text=True,
                              timeout=120)

    def seconds(self) -> float:
        return self.json("GET", "/podlife/clock")[1]["seconds"]

    def trace(self) -> list[dict[str, Any]]:
        code, _, raw = self.request("GET", "/podlife/trace?follow=false")
        assert code == 200
        return [json.loads(line) for line in raw.splitlines() if line]

    def wait_for(self, what: str, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Poll ``fn`` until it returns something true (realtime clusters move on their own)."""
        deadline = time.monotonic() + timeout
        while True:
            value = fn()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; last: {value!r}\n{self.output()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> int:
        """Ctrl-C: the server stops cleanly (exit 0) and says so."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture(scope="module")
def live_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Live]]:
    _require_kubectl()
    started: list[Live] = []

    def start(version: str = "1.32", **kw: Any) -> Live:
        live = Live(tmp_path_factory.mktemp("up"), version, **kw)
        started.append(live)
        return live
    yield start
    for live in started:
        live.stop()


@pytest.fixture(scope="module")
def live(live_factory: Callable[..., Live]) -> Live:
    """A realtime cluster at 10× speed (a 30 s grace period is 3 s), Kubernetes 1.32."""
    return live_factory("1.32", speed=10.0)


def write(tmp_path: Path, name: str, text: str) -> str:
    import textwrap

    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


# a DaemonSet whose container command holds "&&", which Go's JSON encoder escapes (ControllerRevision bytes)
DAEMONSET_AND_AND = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: {name}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: c, image: "{image}", command: [sh, -c, "a && b"]}}]}}
"""


def rows(out: str) -> dict[str, list[str]]:
    """kubectl's table output: NAME → the other columns (split on runs of 2+ spaces)."""
    import re

    lines = [line for line in out.splitlines() if line.strip()]
    return {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line.strip()) for line in lines[1:])}

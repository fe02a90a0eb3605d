"""A live ``podlife up`` for a test: started on a free loopback port (``--port 0``) with an ephemeral store, its
kubeconfig in a private directory; driven over podlife's endpoints (podlife.apiserver.control); stopped so that
no process, port or file is left, whatever way the test ended.

The server runs in a process group of its own (its snapshots' holders with it): ``stop`` asks it to stop, then
signals the whole group and waits until no process of it runs.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import yaml

STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
_ZYGOTE_WAIT = 20.0   # how long a cluster waits for the warm process before starting one the slow way


class PodlifeTimeout(AssertionError):
    """advance_until: the condition did not hold within the timeout (a test failure, with what was seen)."""


class PodlifeError(RuntimeError):
    """The cluster refused a request or did not start."""


@dataclass
class ClusterOptions:
    version: str | None = None      # a modelled Kubernetes version (default: the newest)
    cluster: str | None = None      # a cluster file (a scenario whose spec.cluster and objects it starts with)
    runtime: str = "simulated"      # or "process"
    clock: str = "manual"           # or "realtime"
    seed: int | None = None
    extra: tuple[str, ...] = ()     # more ``podlife up`` flags

    def argv(self, kubeconfig: str) -> list[str]:
        args = ["up", *([self.cluster] if self.cluster else []), "--port", "0", "--clock", self.clock,
                "--runtime", self.runtime, "--ephemeral", "--kubeconfig", kubeconfig]
        if self.version:
            args += ["--kubernetes-version", self.version]
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        return [*args, *self.extra]


@dataclass(frozen=True)
class Snapshot:
    name: str
    seconds: float   # the cluster's clock when it was taken


@dataclass
class _Process:
    pid: int
    pgid: int
    popen: subprocess.Popen[bytes] | None = None


class Zygote:
    """The warm process of podlife.testing.zygote, shared by the clusters of one test session."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="podlife-zygote-")
        self.socket = os.path.join(self.dir, "zygote.sock")
        self.proc = subprocess.Popen([sys.executable, "-m", "podlife.testing.zygote", self.socket],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)

    def ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def spawn(self, argv: list[str], log: str, cwd: str, env: dict[str, str]) -> int:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10.0)
            s.connect(self.socket)
            s.sendall(json.dumps({"argv": argv, "log": log, "cwd": cwd, "env": env}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    raise OSError("the warm podlife process closed the connection")
                data += chunk
        return int(json.loads(data)["pid"])

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()   # its lifeline: it exits
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class PodlifeCluster:
    """A running ``podlife up``. ``start()`` returns once it answered a request; ``stop()`` leaves nothing."""

    def __init__(self, options: ClusterOptions | None = None, zygote: Zygote | None = None,
                 report_dir: Callable[[], Path] | None = None) -> None:
        self.options = options or ClusterOptions()
        self._zygote = zygote
        self._report_dir = report_dir
        self.workdir = tempfile.mkdtemp(prefix="podlife-cluster-")
        self.kubeconfig = os.path.join(self.workdir, "kubeconfig")
        self.log_path = os.path.join(self.workdir, "podlife-up.log")
        self.url = ""
        self.version = ""
        self.startup_seconds = 0.0   # from start() to the first answered request
        self._process: _Process | None = None
        self._clients: list[Any] = []
        self._snapshots = 0
        self._token: str | None = None
        self._ssl: ssl.SSLContext | None = None

    # ---- life ---------------------------------------------------------------------------------------

    def start(self) -> Self:
        t0 = time.monotonic()
        argv = self.options.argv(self.kubeconfig)
        env = {"PODLIFE_SNAPSHOT_DIR": self.workdir}   # its snapshots' registry goes with the cluster's directory
        pid = None
        if self._zygote is not None and self._zygote.ready(_ZYGOTE_WAIT):
            try:
                pid = self._zygote.spawn(argv, self.log_path, os.getcwd(), env)
                self._process = _Process(pid, pid)
            except OSError:
                pid = None
        if pid is None:
            with open(self.log_path, "wb") as log:
                popen = subprocess.Popen([sys.executable, "-m", "podlife.cli", *argv], stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, **env})
            self._process = _Process(popen.pid, popen.pid, popen)
        try:
            self._wait_ready(t0)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _wait_ready(self, t0: float) -> None:
        deadline = t0 + STARTUP_TIMEOUT
        while True:
            if not self._running():
                raise PodlifeError(f"podlife up did not start:\n{self.output()}")
            if time.monotonic() > deadline:
                raise PodlifeError(f"podlife up did not answer within {STARTUP_TIMEOUT:g} s:\n{self.output()}")
            if os.path.exists(self.kubeconfig):
                if not self.url:
                    doc = yaml.safe_load(Path(self.kubeconfig).read_text())
                    self.url = doc["clusters"][0]["cluster"]["server"]
                    # TLS and a token: --runtime process (or --tls) serves them even on loopback
                    self._token = (doc["users"][0].get("user") or {}).get("token")
                    ca = doc["clusters"][0]["cluster"].get("certificate-authority-data")
                    if ca:
                        self._ssl = ssl.create_default_context(cadata=base64.b64decode(ca).decode())
                try:
                    self.version = self.request("GET", "/version")["gitVersion"]
                    return
                except (OSError, PodlifeError):
                    pass
            time.sleep(0.005)

    def _running(self) -> bool:
        p = self._process
        if p is None:
            return False
        if p.popen is not None:
            p.popen.poll()   # reaped, so that it no longer counts
        # after a restore a snapshot's process serves on; the zygote's child is in its group once it ran setsid
        return bool(_group_members(p.pgid)) or _alive(p.pid)

    def output(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Ask the server to stop, then make sure: every process of its group gone (SIGKILL after
        STOP_TIMEOUT), its port closed, its directory removed."""
        for c in self._clients:
            try:
                c.close()
            except Exception:  # noqa: BLE001, S110 - a client's pool that fails to close leaves nothing of ours
                pass
        self._clients.clear()
        p = self._process
        if p is not None:
            if self.url:
                try:
                    self.request("POST", "/podlife/stop", timeout=2.0)
                except (OSError, PodlifeError):
                    pass
            deadline = time.monotonic() + STOP_TIMEOUT
            while _group_members(p.pgid) and time.monotonic() < deadline:
                if p.popen is not None:
                    p.popen.poll()
                time.sleep(0.02)
            if _group_members(p.pgid):
                _killpg(p.pgid, signal.SIGKILL)
                while _group_members(p.pgid) and time.monotonic() < deadline + STOP_TIMEOUT:
                    time.sleep(0.02)
            if p.popen is not None:
                try:
                    p.popen.wait(timeout=STOP_TIMEOUT)
                except subprocess.TimeoutExpired:
                    pass
            self._process = None
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pgid(self) -> int | None:
        return self._process.pgid if self._process else None

    # ---- requests -----------------------------------------------------------------------------------

    def _raw(self, method: str, path: str, data: bytes | None, timeout: float | None) -> bytes:
        headers = {"Content-Type": "application/json"} if data else {}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(req, timeout=timeout, context=self._ssl) as resp:
            return bytes(resp.read())

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = 120.0) -> Any:
        """A JSON request to the cluster; PodlifeError with the server's message when it refuses."""
        data = json.dumps(body).encode() if body is not None else None
        try:
            raw = self._raw(method, path, data, timeout)
        except urllib.error.HTTPError as e:
            try:
                message = json.loads(e.read()).get("message") or e.reason
            except (ValueError, AttributeError):
                message = e.reason
            raise PodlifeError(f"{method} {path}: {e.code} {message}") from None
        return json.loads(raw) if raw else None

    def api_client(self) -> Any:
        """An ApiClient of the official kubernetes client, configured from this cluster's kubeconfig (closed at
        stop)."""
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, client_configuration=cfg)
        api = client.ApiClient(cfg)
        self._clients.append(api)
        return api

    @property
    def now(self) -> float:
        """The cluster's clock: seconds since it started."""
        return float(self.request("GET", "/podlife/clock")["seconds"])

    def advance(self, duration: str) -> float:
        """Move the manual clock on by a Go duration ("90s", "5m"); returns the clock."""
        q = urllib.parse.urlencode({"by": duration})
        return float(self.request("POST", f"/podlife/advance?{q}")["seconds"])

    def advance_until(self, condition: str, timeout: str = "1h") -> float:
        """Move the manual clock to the first instant ``condition`` holds (``podlife advance --until``'s language,
        e.g. "pod/web-0 condition Ready"); returns that instant. PodlifeTimeout (a test failure showing the
        recent Events) if it does not hold within ``timeout``."""
        q = urllib.parse.urlencode({"until": condition, "timeout": timeout})
        state = self.request("POST", f"/podlife/advance?{q}", timeout=None)
        if not state["held"]:
            raise PodlifeTimeout(f"{condition!r} did not hold within {timeout} (clock at {state['seconds']:g}s)\n"
                                 f"recent events:\n{self.format_events()}")
        return float(state["seconds"])

    def fault(self, type: str, node: str | None = None, pod: str | None = None, container: str | None = None,
              image: str | None = None, value: str | None = None, for_: str | None = None) -> float:
        """Inject a fault as a scenario's fault action does (NodePowerOff, NetworkPartition, OOMKill, …);
        returns the clock."""
        spec = {k: v for k, v in (("type", type), ("node", node), ("pod", pod), ("container", container),
                                  ("image", image), ("value", value), ("for", for_)) if v is not None}
        return float(self.request("POST", "/podlife/faults", spec)["seconds"])

    def trace(self, filter: Any = None) -> list[dict[str, Any]]:
        """The trace records (the report's format). ``filter``: a record type ("phase"), a dict of fields a
        record must have ({"type": "signal", "object": "Pod/default/web"}), or a predicate."""
        raw = self._raw("GET", "/podlife/trace?follow=false", None, 120)
        records = [json.loads(line) for line in raw.splitlines() if line]
        return [r for r in records if _matches(r, filter)]

    def events(self, namespace: str | None = None) -> list[dict[str, Any]]:
        """The core/v1 Events, oldest first."""
        path = f"/api/v1/namespaces/{namespace}/events" if namespace else "/api/v1/events"
        items = self.request("GET", path)["items"]
        return sorted(items, key=_event_time)

    def format_events(self, last: int = 20) -> str:
        try:
            events = self.events()[-last:]
        except (OSError, PodlifeError) as e:
            return f"  (the events could not be read: {e})"
        if not events:
            return "  (no events)"
        rows = []
        for ev in events:
            obj = ev.get("involvedObject") or {}
            rows.append(f"  {_event_time(ev)}  {ev.get('type', '')}  {ev.get('reason', '')}  "
                        f"{obj.get('kind', '')}/{obj.get('name', '')}  {ev.get('message', '')}")
        return "\n".join(rows)

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
        """Wait, in wall time, until ``check()`` returns something true: for a client of the cluster (an operator
        under test) to react to what it was shown. The manual clock stands still meanwhile. AssertionError
        naming ``what`` after ``timeout`` seconds."""
        end = time.monotonic() + timeout
        got = check()
        while not got:
            if time.monotonic() >= end:
                raise AssertionError(f"not seen within {timeout:g} s: {what} (last: {got!r})")
            time.sleep(0.05)
            got = check()
        return got

    def snapshot(self, name: str | None = None) -> Snapshot:
        """Keep the whole state (podlife.apiserver.snapshots) to ``restore`` any number of times."""
        if name is None:
            self._snapshots += 1
            name = f"snap-{self._snapshots}"
        got = self.request("POST", f"/podlife/snapshots?{urllib.parse.urlencode({'name': name})}")
        return Snapshot(name, float(got["seconds"]))

    def restore(self, snap: Snapshot | str) -> float:
        """Go back to a snapshot; returns its clock. Clients' open connections are closed (they reconnect)."""
        name = snap.name if isinstance(snap, Snapshot) else snap
        return float(self.request("POST", f"/podlife/snapshots/{urllib.parse.quote(name)}/restore")["seconds"])

    def html_report(self, path: str | os.PathLike[str] | None = None) -> str:
        """The run so far as podlife's HTML report (the trace drawn on a timeline); returns its path."""
        from podlife.report.html import render

        rep = self.request("GET", "/podlife/report")
        if path is None:
            where = self._report_dir() if self._report_dir else Path(tempfile.mkdtemp(prefix="podlife-report-"))
            path = where / "podlife-report.html"
        Path(path).write_text(render(rep), encoding="utf-8")
        return str(path)


def _matches(record: dict[str, Any], filter: Any) -> bool:
    if filter is None:
        return True
    if isinstance(filter, str):
        return bool(record.get("type") == filter)
    if isinstance(filter, dict):
        return all(record.get(k) == v for k, v in filter.items())
    return bool(filter(record))


def _event_time(e: dict[str, Any]) -> str:
    md = e.get("metadata") or {}
    return str(e.get("lastTimestamp") or e.get("eventTime") or md.get("creationTimestamp") or "")


def _group_members(pgid: int) -> list[int]:
    """The processes of a process group that still run (zombies, already ended, are not counted)."""
    out = []
    proc = Path("/proc")
    if not proc.is_dir():   # not Linux: ask the kernel whether the group has members at all
        try:
            os.killpg(pgid, 0)
            return [pgid]
        except OSError:
            return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except OSError:
        pass


def port_open(url: str) -> bool:
    """Whether something still accepts connections at the cluster's address (for teardown checks)."""
    u = urllib.parse.urlsplit(url)
    try:
        with socket.create_connection((u.hostname or "127.0.0.1", u.port or 80), timeout=1.0):
            return True
    except OSError:
        return False

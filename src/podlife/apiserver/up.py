"""``podlife up``: build the cluster, serve its API, write a kubeconfig, run until interrupted.

Loopback addresses are served over plain HTTP without authentication. Any other address gets TLS (a
self-signed certificate made with openssl for this run) and a bearer token; both go into the kubeconfig.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import secrets
import signal
import ssl
import subprocess
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from podlife.api.errors import ApiError
from podlife.apiserver.server import ApiServer
from podlife.cluster import Cluster
from podlife.engine.live import LiveClock
from podlife.scenario.model import NodeSpec

DEFAULT_NODES = 3
DEFAULT_KUBECONFIG = os.path.join("~", ".podlife", "kubeconfig")
CONTEXT = "podlife"


@dataclass
class UpConfig:
    cluster_file: str | None = None
    kubernetes_version: str | None = None
    host: str = "127.0.0.1"
    port: int = 6443
    clock: str = "realtime"
    speed: float = 1.0
    kubeconfig: str = DEFAULT_KUBECONFIG
    seed: int | None = None
    tls: bool = False          # TLS and a token on loopback too
    warnings: list[str] = field(default_factory=list)
    runtime: str = "simulated"        # or "process": containers are local processes (podlife.runtime.process)
    data_dir: str | None = None
    temporary_data_dir: bool = False


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build_cluster(cfg: UpConfig) -> Cluster:
    """The cluster of CLUSTER.yaml's spec.cluster (and its objects, created at the start), or DEFAULT_NODES nodes
    with the scenario defaults. Raises ScenarioError on bad input."""
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import SUPPORTED_FAULTS, build
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import _version_range
    from podlife.versions import MODELLED_VERSIONS, NEWEST, normalize_version

    start = datetime.now(timezone.utc).replace(microsecond=0)
    if cfg.cluster_file is None:
        version = normalize_version(cfg.kubernetes_version) if cfg.kubernetes_version else NEWEST
        if version not in MODELLED_VERSIONS:
            raise ScenarioError("--kubernetes-version", None, "", f'"{cfg.kubernetes_version}" is not a modelled '
                                                                  f"version; expected one of {_version_range()}")
        return Cluster(version=version, seed=cfg.seed or 0, start_time=start,
                       nodes=[NodeSpec(f"node-{i + 1}") for i in range(DEFAULT_NODES)],
                       process_host=_process_host(cfg, version))
    sc = load_scenario(cfg.cluster_file, kubernetes_version=cfg.kubernetes_version, seed=cfg.seed,
                       supported_faults=SUPPORTED_FAULTS)
    cfg.warnings.extend(sc.warnings)
    if sc.actions:
        cfg.warnings.append(f"{cfg.cluster_file}: spec.actions are not run by podlife up (drive the cluster with "
                            "kubectl and podlife fault)")
    if sc.expect:
        cfg.warnings.append(f"{cfg.cluster_file}: spec.expect is not judged by podlife up")
    if cfg.clock == "realtime":
        sc.start_time = start   # timestamps follow the wall clock; a manual clock keeps the scenario's start
    cluster = build(sc, process_host=_process_host(cfg, sc.kubernetes_version))
    from podlife.scenario.actions import USER

    for m in sc.objects:
        try:
            cluster.store.create(m.obj, by=USER)
        except ApiError as e:
            from podlife.scenario.errors import ScenarioError

            raise ScenarioError(m.source.file, m.source.line, m.source.path or "objects", e.message) from None
    return cluster


def _process_host(cfg: UpConfig, version: str) -> Any:
    """The process runtime's shared state, for --runtime process; the data directory defaults to a new
    temporary one (removed when podlife up stops)."""
    if cfg.runtime != "process":
        return None
    from podlife.runtime.process import Host
    from podlife.versions import profile

    if cfg.data_dir is None:
        cfg.data_dir = tempfile.mkdtemp(prefix="podlife-up-")
        cfg.temporary_data_dir = True
    return Host(os.path.abspath(os.path.expanduser(cfg.data_dir)), profile(version))


def _self_signed(host: str, directory: str) -> tuple[str, str]:
    cert, key = os.path.join(directory, "apiserver.crt"), os.path.join(directory, "apiserver.key")
    san = f"IP:{host}" if _is_ip(host) else f"DNS:{host}"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "365", "-subj",
                    "/CN=podlife-apiserver", "-addext", f"subjectAltName={san},IP:127.0.0.1,DNS:localhost",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def kubeconfig(server: str, token: str | None, ca_pem: bytes | None, namespace: str = "default") -> dict[str, Any]:
    import base64

    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    user: dict[str, Any] = {"token": token} if token else {}
    return {"apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": CONTEXT, "cluster": cluster}],
            "users": [{"name": CONTEXT, "user": user}],
            "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
            "current-context": CONTEXT}


def write_kubeconfig(path: str, doc: dict[str, Any]) -> str:
    p = Path(os.path.expanduser(path))
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(yaml.safe_dump(doc, sort_keys=False))
    os.chmod(tmp, 0o600)
    tmp.replace(p)   # readers never see half a file
    return str(p)


async def serve(cfg: UpConfig, cluster: Cluster, out: Any = print) -> None:
    clock = LiveClock(cluster.kernel, cfg.clock, cfg.speed)
    secure = cfg.tls or not is_loopback(cfg.host)
    token = secrets.token_urlsafe(32) if secure else None
    api = ApiServer(cluster, clock, token=token, host=f"{cfg.host}:{cfg.port}")
    runner = web.AppRunner(api.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    ssl_ctx = None
    ca = None
    tmpdir = tempfile.mkdtemp(prefix="podlife-up-")
    if secure:
        cert, key = _self_signed(cfg.host, tmpdir)
        ssl_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ssl_ctx.load_cert_chain(cert, key)
        ca = Path(cert).read_bytes()
    site = web.TCPSite(runner, cfg.host, cfg.port, ssl_context=ssl_ctx)
    await site.start()
    processes = cluster.process_host
    if processes is not None:
        for line in await processes.start(clock.deliver):
            out(f"podlife: {line}")
    port = site._server.sockets[0].getsockname()[1]   # type: ignore[union-attr]
    scheme = "https" if secure else "http"
    host = f"[{cfg.host}]" if ":" in cfg.host else cfg.host
    url = f"{scheme}://{host}:{port}"
    api.host = f"{cfg.host}:{port}"
    clock.start()
    path = write_kubeconfig(cfg.kubeconfig, kubeconfig(url, token, ca))
    speed = f" ×{cfg.speed:g}" if cfg.clock == "realtime" and cfg.speed != 1 else ""
    out(f"podlife: Kubernetes {cluster.profile.version} API at {url}: {len(cluster.kubelets)} nodes, "
        f"{cfg.clock} clock{speed}")
    out(f"kubeconfig written to {path}; use it with:")
    out(f"  export KUBECONFIG={path}")
    out("  kubectl get nodes")
    if cfg.clock == "manual":
        out(f"  podlife advance 1m --kubeconfig {path}   # time moves only when told")
    if processes is not None:
        out(f"Containers run as local processes; pod directories and logs are under {processes.data_dir}/pods.")
    out("Ctrl-C stops the cluster.")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        await stop.wait()
    finally:
        await clock.stop()
        await runner.cleanup()
        if processes is not None:
            await _stop_processes(cfg, processes, out)
        out("podlife: stopped")


async def _stop_processes(cfg: UpConfig, host: Any, out: Any) -> None:
    """Every container process gets its stop signal, and SIGKILL at its pod's grace period; a second Ctrl-C
    kills them at once."""
    import shutil

    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, host.kill_now)
    except (NotImplementedError, RuntimeError):
        pass
    out("podlife: stopping the container processes (SIGTERM, SIGKILL after their grace period; Ctrl-C again: "
        "now)")
    await host.stop()
    if cfg.temporary_data_dir:
        shutil.rmtree(host.data_dir, ignore_errors=True)

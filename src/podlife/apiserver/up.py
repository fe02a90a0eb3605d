"""``podlife up``: build the cluster, serve its API, write a kubeconfig, run until interrupted.

Loopback addresses are served over plain HTTP without authentication. Any other address gets TLS (a
self-signed certificate made for this run: podlife.apiserver.certs) and a bearer token; both go into the
kubeconfig. With --runtime process they are on loopback too: creating a pod runs a command on this machine.
Every request is checked against what a web browser could send (podlife.apiserver.browser).
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
from podlife.apiserver import certs
from podlife.apiserver.browser import Served
from podlife.apiserver.server import ApiServer
from podlife.cluster import Cluster
from podlife.engine.gcpolicy import serving_collections
from podlife.engine.live import LiveClock
from podlife.cluster.spec import NodeSpec

DEFAULT_NODES = 3
DEFAULT_KUBECONFIG = os.path.join("~", ".podlife", "kubeconfig")
CONTEXT = "podlife"
READY_LINE = "podlife: ready"   # the last line printed once the API is served (podlife up --detach waits for it)


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
    data_dir: str | None = None   # state, trace, and the process runtime's pods; None: nothing is kept (--ephemeral)
    durable: bool = False         # synchronous=FULL: each commit survives a power loss too
    warnings: list[str] = field(default_factory=list)
    runtime: str = "simulated"        # or "process": containers are local processes (podlife.runtime.process)
    temporary_data_dir: bool = False  # the process runtime's pods in a temporary directory (--ephemeral)
    dumps: tuple[str, ...] = ()       # --from: start from a real cluster's dump (podlife.importer)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def secure(host: str, tls: bool) -> bool:
    """TLS and a bearer token: asked for, or forced by an address other machines may reach."""
    return tls or not is_loopback(host)


def served_securely(cfg: UpConfig) -> bool:
    """secure(), and the process runtime on loopback too: whoever creates a pod runs a command on this machine,
    so the token is required; and TLS with it, since kubectl sends a kubeconfig's credentials only over TLS
    (staging/src/k8s.io/client-go/tools/clientcmd/client_config.go ClientConfig: IsConfigTransportTLS)."""
    return secure(cfg.host, cfg.tls) or cfg.runtime == "process"


def certificate_names(host: str, in_cluster: bool = False) -> tuple[str, ...]:
    """The subjectAltNames of the self-signed certificate: the address and the loopback names; with ``in_cluster``
    (the process runtime, whose pods reach the API server by the `kubernetes` Service) also the names and the
    ClusterIP kubeadm gives the API server's certificate (cmd/kubeadm/app/util/pkiutil GetAPIServerAltNames)."""
    names: tuple[str, ...] = (host, "127.0.0.1", "::1", "localhost")
    if in_cluster:
        from podlife.api.registry.service import first_service_ip
        from podlife.runtime.hostsfile import CLUSTER_DOMAIN

        names += ("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                  f"kubernetes.default.svc.{CLUSTER_DOMAIN}", first_service_ip())
    return names


def build_cluster(cfg: UpConfig) -> Cluster:
    """The cluster of CLUSTER.yaml's spec.cluster (and its objects, created at the start), or DEFAULT_NODES nodes
    with the scenario defaults; over the data directory's log, from which a cluster made before is restarted.
    Raises ScenarioError on bad input."""
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.scenariospec import version_range
    from podlife.versions import MODELLED_VERSIONS, normalize_version

    version = None
    if cfg.kubernetes_version is not None:
        version = normalize_version(cfg.kubernetes_version)
        if version not in MODELLED_VERSIONS:
            raise ScenarioError("--kubernetes-version", None, "", f'"{cfg.kubernetes_version}" is not a modelled '
                                                                  f"version; expected one of {version_range()}")
    if cfg.dumps:
        return _build_imported(cfg, version)
    if cfg.data_dir is None:
        return _build(cfg, cfg.cluster_file, version, cfg.seed, None, None)
    from podlife.apiserver.datadir import DataDir

    data = DataDir(cfg.data_dir, durable=cfg.durable)
    try:
        stored = data.stored()
        if stored is not None:
            data.check(stored, version, cfg.seed, cfg.cluster_file)
            cluster = _build(cfg, stored.cluster_file, stored.version, stored.seed, stored.start_time, data)
        else:
            cluster = _build(cfg, cfg.cluster_file, version, cfg.seed, None, data)
    except BaseException:
        data.close()
        raise
    cluster.data_dir = data   # type: ignore[attr-defined]
    cfg.warnings.extend(cluster.store.skipped)
    return cluster


def _build(cfg: UpConfig, cluster_file: str | None, version: str | None, seed: int | None,
           start_time: datetime | None, data: Any) -> Cluster:
    from podlife.scenario.actions import USER
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import build
    from podlife.apiserver.managers import ModelWrites
    from podlife.versions import NEWEST, profile

    start = start_time or datetime.now(timezone.utc).replace(microsecond=0)
    if cluster_file is None:
        version = version or NEWEST
        seed = seed or 0
        if data is not None and start_time is None:
            data.record(version, seed, start, None)
        persisted = data.persisted() if data is not None else None
        return Cluster(version=version, seed=seed, start_time=start,
                       nodes=[NodeSpec(f"node-{i + 1}") for i in range(DEFAULT_NODES)], persisted=persisted,
                       process_host=_process_host(cfg, version), manage=ModelWrites(profile(version).minor),
                       api_address=advertised_address(cfg))
    sc = load_scenario(cluster_file, kubernetes_version=version, seed=seed)
    name = cfg.cluster_file or cluster_file
    cfg.warnings.extend(sc.warnings)
    if sc.actions:
        cfg.warnings.append(f"{name}: spec.actions are not run by podlife up (drive the cluster with "
                            "kubectl and podlife fault)")
    if sc.expect:
        cfg.warnings.append(f"{name}: spec.expect is not judged by podlife up")
    if start_time is not None:
        sc.start_time = start_time   # a restart goes on from the first start's time
    elif cfg.clock == "realtime":
        sc.start_time = start   # timestamps follow the wall clock; a manual clock keeps the scenario's start
    if data is not None and start_time is None:
        data.record(sc.kubernetes_version, sc.seed, sc.start_time, cluster_file)
    persisted = data.persisted() if data is not None else None
    kubelet_gates = {**sc.cluster.featureGates, **sc.cluster.kubelet.featureGates}
    cluster = build(sc, persisted=persisted, process_host=_process_host(cfg, sc.kubernetes_version, kubelet_gates),
                    manage=ModelWrites(profile(sc.kubernetes_version).minor), api_address=advertised_address(cfg))
    if persisted is not None and persisted.resume:
        return cluster   # the objects are those of the log
    for m in sc.objects:
        try:
            cluster.store.create(m.obj, by=USER)
        except ApiError as e:
            raise ScenarioError(m.source.file, m.source.line, m.source.path or "objects", e.message) from None
    return cluster


def _build_imported(cfg: UpConfig, version: str | None) -> Cluster:
    """up --from: the dump's cluster, from the instant it was taken (whatever the clock), with CLUSTER.yaml's
    component settings if given. Its state lives in memory, as with --ephemeral."""
    from podlife.apiserver.managers import ModelWrites
    from podlife.importer import command as imported
    from podlife.importer.restore import build
    from podlife.scenario.errors import ScenarioError
    from podlife.versions import profile

    if cfg.runtime == "process":
        raise ScenarioError("--from", None, "", "an imported cluster's containers are simulated: expected "
                                                "--runtime simulated")
    dump = imported.read(cfg.dumps)
    text = None if cfg.cluster_file else "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: imported}\n"
    sc = imported.scenario(dump, cfg.cluster_file or cfg.dumps[0], kubernetes_version=version, seed=cfg.seed,
                           text=text)
    cfg.warnings.extend(sc.warnings)
    if cfg.data_dir is not None:
        cfg.warnings.append("--from: the imported cluster's state is kept in memory only (as --ephemeral); "
                            f"{cfg.data_dir} is not used")
        cfg.data_dir = None
    return build(sc, dump, manage=ModelWrites(profile(sc.kubernetes_version).minor),
                 api_address=advertised_address(cfg))


def advertised_address(cfg: UpConfig) -> tuple[str, int]:
    """The address and port in the Endpoints of default/kubernetes: the served IP, unless it is loopback or
    unspecified (ValidateEndpoints refuses those; kube-apiserver then advertises another of the host's
    addresses), in which case podlife's fixed control-plane address (kubernetesservice.CONTROL_PLANE_IP). The
    port is --port, or 6443 with --port 0 (a free port is picked only when the server binds)."""
    from podlife.controlplane.controllers.kubernetesservice import CONTROL_PLANE_IP, SECURE_PORT

    port = cfg.port or SECURE_PORT
    try:
        ip = ipaddress.ip_address(cfg.host)
    except ValueError:
        return CONTROL_PLANE_IP, port
    if ip.version != 4 or ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast:
        return CONTROL_PLANE_IP, port
    return str(ip), port


def _process_host(cfg: UpConfig, version: str, gates: dict[str, bool] | None = None) -> Any:
    """The process runtime's shared state, for --runtime process: its pods live in the data directory, or with
    --ephemeral in a temporary one (removed when podlife up stops). It probes for the kubelets, so it follows
    their feature gates."""
    if cfg.runtime != "process":
        return None
    from podlife.runtime.process import Host
    from podlife.versions import profile

    if cfg.data_dir is None:
        # removed by remove_temporary (podlife up calls it on every way out)
        cfg.data_dir = tempfile.mkdtemp(prefix="podlife-up-")
        cfg.temporary_data_dir = True
    return Host(os.path.abspath(os.path.expanduser(cfg.data_dir)), profile(version, gates))


def remove_temporary(cfg: UpConfig) -> None:
    """The --ephemeral process runtime's directory goes with the process (its pods' logs and files)."""
    import shutil

    if cfg.temporary_data_dir and cfg.data_dir:
        shutil.rmtree(cfg.data_dir, ignore_errors=True)


def _tls(names: tuple[str, ...]) -> tuple[ssl.SSLContext, bytes]:
    """The server's TLS context and its self-signed certificate (PEM), naming every address it is reached at."""
    cert, key = certs.self_signed("podlife-apiserver", names)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    certs.load_chain(ctx, cert, key)
    return ctx, cert


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
    p = Path(os.path.abspath(os.path.expanduser(path)))   # the printed usage works from any directory
    from podlife.apiserver.datadir import PRIVATE_DIR, private_file

    p.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)   # a directory made for it is private
    tmp = p.with_name(p.name + ".tmp")
    with os.fdopen(private_file(str(tmp), os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as f:
        f.write(yaml.safe_dump(doc, sort_keys=False))   # it holds the token: 0600 from the start
    tmp.replace(p)   # readers never see half a file
    return str(p)


async def serve(cfg: UpConfig, cluster: Cluster, out: Any = print) -> None:
    from podlife.apiserver.datadir import TRACE_FILE

    data = getattr(cluster, "data_dir", None)
    serving_collections()
    clock = LiveClock(cluster.kernel, cfg.clock, cfg.speed)
    tls = served_securely(cfg)
    token = secrets.token_urlsafe(32) if tls else None
    scheme = "https" if tls else "http"
    names = certificate_names(cfg.host, in_cluster=cfg.runtime == "process")
    served = Served.of(scheme, cfg.host, names if tls else ())
    api = ApiServer(cluster, clock, token=token, host=f"{cfg.host}:{cfg.port}", served=served,
                    trace_file=data.file(TRACE_FILE) if data is not None else None)
    if data is not None:
        log, manual = data.log, cfg.clock == "manual"

        def persist() -> None:
            # before an answer leaves and whenever the clock moved: acknowledged writes are committed; a
            # manual clock's every move too, a realtime clock's at most once a second
            log.clock(cluster.kernel.now)
            log.commit(force=manual)
            api.trace.flush()
        clock.after.append(persist)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):   # from here on a signal stops the server the one clean way
        try:
            loop.add_signal_handler(sig, api.stopping.set)
        except (NotImplementedError, RuntimeError):
            pass
    runner = web.AppRunner(api.app(), access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    processes = cluster.process_host
    network: Any = None
    ready = False
    try:
        ssl_ctx, ca = _tls(names) if tls else (None, None)
        if ca is not None:
            _publish_root_ca(cluster, ca)
        site = web.TCPSite(runner, cfg.host, cfg.port, ssl_context=ssl_ctx)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]   # type: ignore[union-attr]
        api.aggregator.start()
        if processes is not None:
            for line in await processes.start(clock.deliver):
                out(f"podlife: {line}")
            network = _service_network(cfg, cluster, port)
            for line in await network.start():
                out(f"podlife: {line}")
        # for snapshots (podlife.apiserver.snapshots): the listener a restore hands over, the connections it cuts
        api.listening = site._server
        api.connections = lambda: list(runner.server.connections) if runner.server is not None else []
        host = f"[{cfg.host}]" if ":" in cfg.host else cfg.host
        url = f"{scheme}://{host}:{port}"
        api.host = f"{cfg.host}:{port}"
        clock.start()
        path = write_kubeconfig(cfg.kubeconfig, kubeconfig(url, token, ca))
        _ready(cfg, cluster, data, url, path, out)
        ready = True
        await api.stopping.wait()
    finally:
        await api.aggregator.stop()
        await clock.stop()
        await runner.cleanup()
        if api.snapshot_dir is not None:
            from podlife.apiserver import snapshots

            snapshots.close(api)
        if processes is not None:
            await _stop_processes(cfg, processes, out if ready else (lambda line: None))
        if network is not None:
            network.stop()
        remove_temporary(cfg)
        api.trace.close()
        if data is not None:
            data.close()
        if ready and not api.handed_over:
            out("podlife: stopped")


def _publish_root_ca(cluster: Cluster, ca: bytes) -> None:
    """kube-root-ca.crt in every namespace is the certificate served, which verifies it (a self-signed certificate
    is its own root), as the cluster CA a kube-apiserver's certificate is signed by."""
    from podlife.controlplane.controllers.rootcacertpublisher import RootCACertPublisher

    for ctrl in cluster.controllers:
        if isinstance(ctrl, RootCACertPublisher):
            ctrl.publish(ca.decode())


def _service_network(cfg: UpConfig, cluster: Cluster, port: int) -> Any:
    """kube-proxy and cluster DNS beside the process runtime (podlife.runtime.servicenet)."""
    from podlife.runtime.servicenet import ServiceNetwork, listen_address

    return ServiceNetwork(cluster.store, cluster.kernel, cluster.process_host, advertised_address(cfg),
                          listen_address(cfg.host, port))


def _ready(cfg: UpConfig, cluster: Cluster, data: Any, url: str, path: str, out: Any) -> None:
    """The usage, and READY_LINE last."""
    processes = cluster.process_host
    speed = f" ×{cfg.speed:g}" if cfg.clock == "realtime" and cfg.speed != 1 else ""
    state = "in memory only"
    if data is not None:
        state = f"state in {data.path}"
        if cluster.resumed:
            state += f" (restarted at {cluster.kernel.now:.3f} s, resourceVersion {cluster.store.resource_version})"
    out(f"podlife: Kubernetes {cluster.profile.version} API at {url}: {len(cluster.kubelets)} nodes, "
        f"{cfg.clock} clock{speed}, {state}")
    out(f"kubeconfig written to {path}; use it with:")
    out(f"  export KUBECONFIG={path}")
    out("  kubectl get nodes")
    if cfg.clock == "manual":
        out(f"  podlife advance 1m --kubeconfig {path}   # time moves only when told")
    if processes is not None:
        out(f"Containers run as local processes; pod directories and logs are under {processes.data_dir}/pods.")
    out(f"podlife down --kubeconfig {path} (or Ctrl-C) stops the cluster.")
    out(READY_LINE)


def detached(args: list[str], data_dir: str | None, kubeconfig_path: str, out: Any = print,
             timeout: float = 120.0) -> int:
    """``podlife up --detach``: the same command in a session of its own, its output in ``podlife.log`` (in the
    data directory, or beside the kubeconfig with --ephemeral). Returns 0 once it printed READY_LINE (its
    output up to there is shown), or its exit status with its output if it ended first."""
    import sys
    import time

    from podlife.apiserver.datadir import LOG_FILE, private_dir, private_file

    where = os.path.abspath(os.path.expanduser(data_dir) if data_dir else
                            os.path.dirname(os.path.expanduser(kubeconfig_path)) or ".")
    if data_dir:
        private_dir(where)
    else:
        os.makedirs(where, exist_ok=True)   # the kubeconfig's directory, maybe the user's own: left as it is
    log_path = os.path.join(where, LOG_FILE)
    with os.fdopen(private_file(log_path, os.O_WRONLY | os.O_TRUNC), "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "podlife.cli", *args], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + timeout
    while True:
        text = Path(log_path).read_text(errors="replace")
        if READY_LINE in text.splitlines():
            out(text.rstrip("\n"))
            out(f"podlife: running in the background (pid {proc.pid}, output in {log_path})")
            return 0
        code = proc.poll()
        if code is not None:
            out(text.rstrip("\n"))
            return code or 1
        if time.monotonic() > deadline:
            proc.terminate()
            out(text.rstrip("\n"))
            out(f"podlife up --detach: the server was not ready after {timeout:g} s; stopped it")
            return 1
        time.sleep(0.05)


async def _stop_processes(cfg: UpConfig, host: Any, out: Any) -> None:
    """Every container process gets its stop signal, and SIGKILL at its pod's grace period; a second Ctrl-C
    kills them at once."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, host.kill_now)
    except (NotImplementedError, RuntimeError):
        pass
    out("podlife: stopping the container processes (SIGTERM, SIGKILL after their grace period; Ctrl-C again: "
        "now)")
    await host.stop()
    remove_temporary(cfg)

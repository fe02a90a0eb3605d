"""The process runtime: the same CRI state machine as the simulated containerd (podlife.runtime.containerd),
whose containers are real local processes (``podlife up --runtime process``).

What is real: a container's process (``command`` + ``args``, or its image's ENTRYPOINT/CMD from
podlife.runtime.images) runs with its resolved environment in a session and process group of their own,
started by the supervisor (podlife.runtime.supervisor), in a mount namespace of its own where the machine
allows it (podlife.runtime.mountns: the host root read-only, /tmp and /var/tmp the container's own, the pod's
volumes at their mount paths); each pod that is not hostNetwork has a network namespace of its own with an
address of its node's podCIDR where the machine allows it (podlife.runtime.podnet; else a loopback address of
its node's range), and a directory under the data directory (``pods/<namespace>_<name>_<uid>``) with its
volumes (``volumes/<name>``; API-data volumes written by the atomic writer) and its containers' logs
(``<container>/<restartCount>.log``, CRI format). StopContainer sends the stop signal to the process, waits out
the grace period and SIGKILLs the group; exit codes come from the process (128 + the signal for one killed by a
signal), and when the container's main process ends everything else in its group dies with it, as in a
container whose PID 1 exits. Exec hooks and probes run their command in the container's namespace, environment
and working directory; HTTP, TCP and gRPC ones connect to the pod's address.

What is not: images (not pulled; the program comes from this machine), PID and user namespaces and
cgroups (resource limits are not enforced; the process is not PID 1, so signals it has no handler for take
their default action), usage metrics (eviction and autoscaling see none).

Outcomes arrive from the event loop: ``deliver`` brings each into the kernel at the instant it happens.
"""

from __future__ import annotations

import asyncio
import atexit
import errno
import functools
import logging
import os
import signal
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import simpy

from podlife.api.meta import Obj
from podlife.api.sysctlnames import dotted, namespaced_by
from podlife.cluster.contracts import Call, ContainerRuntime, NodeStats, ProbeDone, RuntimeFaults
from podlife.engine import Kernel
from podlife.runtime import (atomicwriter, capabilities, containermounts, grpcprobe, hostsfile, images, ipcns, mountns,
                             network, poddns, podnet, portmap, privatetmp, shells, termination, utsns, webservers)
from podlife.runtime.behavior import Behavior
from podlife.runtime.containerd import ContainerdRuntime
from podlife.runtime.cri import CREATED, EXITED, Container, ContainerConfig, RuntimeError_, Sandbox
from podlife.runtime.crilog import LogWriter
from podlife.runtime.profiles import RuntimeProfile
from podlife.runtime.shim import Shim, Spawn, SpawnError, read_chunks
from podlife.runtime.supervisor import leftovers, running_supervisor
from podlife.trace.recorder import Trace
from podlife.versions import Profile

log = logging.getLogger("podlife.runtime")
PROFILE = RuntimeProfile("process", "process", "process://podlife", False, 0.0, 0.0, 0.0, False,
                         "rpc error: code = DeadlineExceeded desc = context deadline exceeded")
START_FAILED_EXIT = 128     # containerd's exit status for a container whose process could not start
MAX_OUTPUT = 10 * 1024      # what is kept of an exec'd command's output
NO_BEHAVIOR = Behavior()
BASE_ENVIRONMENT = ("PATH", "HOME", "LANG", "TZ")   # taken from podlife's own environment


@dataclass
class Host:
    """What the node runtimes of one ``podlife up`` share: the data directory, the supervisor and the way
    into the kernel (the live clock's ``deliver``)."""

    data_dir: str
    profile: Profile
    deliver: Callable[[Callable[[], None]], None] = lambda fn: fn()
    shim: Shim | None = None
    runtimes: list[ProcessRuntime] = field(default_factory=list)
    # /var/log/pods survives the runtime: restart counts continue from the log files (calcRestartCountByLogDir)
    log_attempts: dict[tuple[str, str], int] = field(default_factory=dict)
    _kill_now: list[Callable[[], None]] = field(default_factory=list)
    # None: each container gets a mount namespace of its own; else why it cannot (found at start)
    namespaces: str | None = "not started"
    uts: str | None = "not started"   # the same for UTS namespaces (the pod's hostname)
    ipc: str | None = "not started"   # the same for the pods' IPC namespaces (podlife.runtime.ipcns)
    sh: str | None = None   # what runs an ash image's sh (podlife.runtime.shells), None: the image's own name
    busybox: str | None = None   # this machine's BusyBox, which runs an ash image's sh when it can
    # the kubelets' clusterDNS (podlife.runtime.clusterdns sets it when it serves); empty: ClusterFirst falls back
    cluster_dns: list[str] = field(default_factory=list)
    # the pods' network namespaces (podlife.runtime.podnet), claimed with the first node; else why not
    network: podnet.PodNetwork | None = None
    no_network: str = "not claimed"
    ports: portmap.PortMap = field(default_factory=portmap.PortMap)   # the sandboxes' host ports

    def pod_dir(self, sandbox: Sandbox) -> str:
        return os.path.join(self.data_dir, "pods", sandbox.log_directory)

    def pod_dir_of(self, pod: Obj) -> str:
        md = pod["metadata"]
        return os.path.join(self.data_dir, "pods", f"{md['namespace']}_{md['name']}_{md['uid']}")

    def journal(self) -> str:
        return os.path.join(self.data_dir, "runtime", "processes.journal")

    def in_use(self) -> int | None:
        """The pid of another podlife up's supervisor working in this data directory, if one runs."""
        return running_supervisor(self.journal())

    def node_runtime(self, kernel: Kernel, trace: Trace, node: str, index: int) -> tuple[ProcessRuntime, str, str]:
        """The runtime of the index-th node (from 0), its pod CIDR and its address. With network namespaces
        (podlife.runtime.podnet) node i has the /24 10.<octet>.i.0/24 of this instance's /16 and is the gateway
        .1 of its bridge; without, the loopback block 127.0.(i+1).0/24 (then 127.1.0.0/24 …), itself .1. Pods
        get .2 onwards, so pods of different nodes never share an address."""
        if self.network is None and self.no_network == "not claimed":
            self._claim_network()
        if self.network is not None:
            err = self.network.add_node(index)
            if err is not None:
                raise ValueError(f"node {node}: {err}")
            cidr, node_ip = self.network.cidr(index), self.network.gateway(index)
        else:
            block = index + 1
            if block > 0xFFFF:
                raise ValueError("the process runtime has loopback addresses for 65,535 nodes")
            prefix = f"127.{block >> 8}.{block & 0xFF}"
            cidr, node_ip = f"{prefix}.0/24", f"{prefix}.1"
        runtime = ProcessRuntime(kernel, trace, node, cidr, self)
        runtime.log_attempts = self.log_attempts
        runtime.node_ip = node_ip
        runtime.index = index
        self.runtimes.append(runtime)
        return runtime, cidr, node_ip

    def _claim_network(self) -> None:
        """This instance's pod network, unless another podlife up works in this data directory (this one will
        not start: nothing of the machine is touched). The instance number this data directory had is tried
        first, so a restart keeps the nodes' podCIDRs."""
        if self.in_use():
            self.no_network = "the data directory is in use"
            return
        mark = os.path.join(self.data_dir, "runtime", "network-instance")
        try:
            with open(mark) as f:
                preferred: int | None = int(f.read().strip())
        except (OSError, ValueError):
            preferred = None
        self.network, self.no_network = podnet.PodNetwork.claim(preferred)
        if self.network is not None:
            atexit.register(self.release_network)   # whatever way podlife up ends short of SIGKILL
            os.makedirs(os.path.dirname(mark), exist_ok=True)
            with open(mark, "w") as f:
                f.write(f"{self.network.tag}\n")

    def release_network(self) -> None:
        """Remove every namespace, veth and bridge of this instance (podlife up is ending)."""
        if self.network is None or self.network.owner != os.getpid():
            return   # (a forked child's exit: the network is its parent's)
        net, self.network = self.network, None   # once: the number may be another instance's afterwards
        net.remove_all()

    # ---- lifecycle -------------------------------------------------------------------------------------

    async def start(self, deliver: Callable[[Callable[[], None]], None]) -> list[str]:
        """Clean what an earlier run on this data directory left, read its log files, start the supervisor.
        Returns lines to tell the user."""
        self.deliver = deliver
        said = []
        os.makedirs(os.path.dirname(self.journal()), exist_ok=True)
        left = leftovers(self.journal())
        for pid, pgid in left:
            try:
                os.killpg(pgid, signal.SIGKILL)   # the group, and the process if it has left it
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if left:
            said.append(f"killed {len(left)} processes an earlier podlife up left running in {self.data_dir}")
        with open(self.journal(), "w"):
            pass
        self.log_attempts.update(_attempts_in(os.path.join(self.data_dir, "pods")))
        self.namespaces = mountns.available()
        self.sh = shells.stand_in(self.data_dir)
        self.busybox = shells.busybox()
        if self.busybox is not None:
            said.append(f"busybox and alpine images' sh runs as this machine's BusyBox ash ({self.busybox}), and a "
                        f"busybox image's /bin/APPLET this machine has no file for as that BusyBox applet")
        if self.sh is not None:
            said.append(("where a container's environment has names that are not shell names, " if self.busybox
                         else "") + "busybox and alpine images' sh runs as this machine's bash: this machine's "
                        "sh (dash) drops environment variables whose names are not shell names, BusyBox ash keeps "
                        "them")
        self.uts = self.namespaces if self.namespaces is not None else utsns.available()
        if self.namespaces is None:
            said.append("containers run in mount namespaces of their own: a root directory of their own (read-only "
                        "with readOnlyRootFilesystem) holding the machine's directories read-only, a /tmp and "
                        "/var/tmp of their own (in the pod's directory, removed when the container ends), volumes at "
                        "their mountPath, the kubelet-managed /etc/hosts at /etc/hosts; not privileged: containerd's "
                        "default capabilities")
            if self.uts is None:
                said.append("containers run in UTS namespaces of their own: hostname prints the pod's hostname")
            else:
                said.append(f"containers have this machine's hostname ({self.uts}); HOSTNAME is the pod's")
        else:
            said.append(f"containers share this machine's mounts and hostname ({self.namespaces}): volumes and "
                        f"the kubelet-managed /etc/hosts are not mounted at their mountPath")
        said.append(f"images are not pulled: a container runs its program from this machine; {images.PAUSE_NOTE}; "
                    f"{webservers.NOTE}")
        said.append(self._network_line())
        self.ipc = ipcns.available()
        said.append(self._sysctl_line())
        self.shim = Shim(self.journal(), namespaces=self.namespaces is None)
        await self.shim.start()
        return said

    def _sysctl_line(self) -> str:
        ipc = ("pods run in IPC namespaces of their own (a hostIPC pod in this machine's), with their IPC sysctls "
               "(kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*) written in them" if self.ipc is None else
               f"pods share this machine's IPC namespace ({self.ipc}): their IPC sysctls (kernel.shm*, "
               f"kernel.msg*, kernel.sem, fs.mqueue.*) are not applied")
        net = ("their net.* sysctls are written in their network namespace" if self.network is not None else
               f"their net.* sysctls are not applied: pods have no network namespace of their own "
               f"({self.no_network})")
        return f"{ipc}; {net}"

    def _network_line(self) -> str:
        net = self.network
        if net is not None:
            first, last = net.bridges[min(net.bridges)], net.bridges[max(net.bridges)]
            return (f"pods get network namespaces of their own: eth0 on node i's bridge ({first}"
                    f"{'' if first == last else ' … ' + last}) with an address of 10.{net.octet}.i.0/24 and a "
                    f"default route via its .1, the node's address; hostNetwork pods use the node's; a container's "
                    f"hostPort is forwarded to the pod as the CNI portmap plugin maps it, from its hostIP or else the "
                    f"node's address and 127.0.0.1 (TCP and UDP; SCTP host ports are not mapped)")
        return (f"pods share this machine's network namespace ({self.no_network}): each has a loopback address "
                f"127.x.y.z, and processes of different pods that bind the same port on 0.0.0.0 collide")

    async def stop(self) -> int:
        """Stop every container process: the stop signal now, SIGKILL for the group at the end of its pod's
        grace period (or at once, from ``kill_now``); then the supervisor ends, killing anything left. Returns
        how many were running."""
        shim = self.shim
        self.ports.close()
        if shim is None:
            self.release_network()
            return 0
        loop = asyncio.get_running_loop()
        waits: list[asyncio.Future[tuple[int, int]]] = []
        timers = []
        for rt in self.runtimes:
            for c in list(rt.containers.values()):
                p = rt.procs.get(c.id)
                if p is None or p.spawn is None or not c.process_running or p.spawn.exited.done():
                    continue
                sp = p.spawn
                grace = p.config.pod["spec"].get("terminationGracePeriodSeconds", 30)
                shim.signal(sp, signum(c.stop_signal))
                kill = functools.partial(shim.signal, sp, signal.SIGKILL, group=True)
                timers.append(loop.call_later(max(float(grace), 0.0), kill))
                self._kill_now.append(kill)
                waits.append(sp.exited)
        if waits:
            await asyncio.wait(waits)
        for t in timers:
            t.cancel()
        await shim.stop()
        for rt in self.runtimes:
            for p in rt.procs.values():
                if p.log is not None:
                    p.log.close()
        await asyncio.get_running_loop().run_in_executor(None, self.release_network)
        return len(waits)

    def kill_now(self) -> None:
        for kill in self._kill_now:
            kill()


@dataclass
class _Process:
    """What the runtime knows of a container's process beyond the CRI's Container."""

    config: ContainerConfig
    argv: list[str]
    env: dict[str, str]
    cwd: str
    log: LogWriter | None = None
    spawn: Spawn | None = None
    gone: simpy.Event | None = None
    early_exit: tuple[int, int] | None = None   # an exit heard before the start was recorded
    kill_reason: str | None = None
    execs: set[Spawn] = field(default_factory=set)
    ns: dict | None = None          # the mount namespace the supervisor builds (None: the machine's)
    from_image: bool = False        # the program came from the image's config, not the container's command
    user: dict | None = None        # whom its processes run as (None: podlife's own user)
    program: str | None = None      # the file its argv[0] runs (BusyBox for an ash image's sh), None: argv[0]
    security: dict | None = None    # its capabilities and no_new_privs (podlife.runtime.capabilities)
    term_path: str = ""             # the host file mounted at its terminationMessagePath ("": none)
    term_message: str | None = None   # its termination message, once read after it exited
    stdin: int | None = None        # podlife's end of the process's stdin (the container's ``stdin: true``)
    root_dir: str = ""              # its own root files, /tmp and /var/tmp (podlife.runtime.privatetmp; "": none)

    def close_stdin(self) -> None:
        """The end of the container's stdin (``stdinOnce`` after the first attach, or the process ended)."""
        if self.stdin is not None:
            try:
                os.close(self.stdin)
            except OSError:
                pass
            self.stdin = None


@dataclass
class ExecStreams:
    """A command started by ``open_exec``: its process and podlife's ends of its streams (with a terminal,
    ``stdout`` and ``stdin`` are the same descriptor and ``stderr`` is None)."""

    spawn: Spawn | None
    stdout: int
    stderr: int | None
    stdin: int | None


class ProcessRuntime(ContainerdRuntime, ContainerRuntime, NodeStats, RuntimeFaults):
    writes_logs = True
    writes_volumes = True

    def __init__(self, kernel: Kernel, trace: Trace, node: str, pod_cidr: str, host: Host) -> None:
        super().__init__(kernel, trace, node, PROFILE, pod_cidr)
        self.host = host
        self.node_ip = ""   # set by Host.node_runtime
        self.index = 0      # the node's, ditto
        self.netns: dict[str, str] = {}   # sandbox id → its network namespace's path
        self.ipcns: dict[str, int] = {}   # sandbox id → a descriptor holding its IPC namespace (podlife.runtime.ipcns)
        self.procs: dict[str, _Process] = {}
        self._warned: set[str] = set()
        self._dns_events: dict[str, list[tuple[str, str]]] = {}
        self._hook_events: dict[str, list[tuple[str, str]]] = {}

    # ---- sandboxes: the pod's directory and its emptyDir volumes --------------------------------------

    def run_pod_sandbox(self, pod: Obj) -> Call:
        sb = yield from super().run_pod_sandbox(pod)
        base = self.host.pod_dir(sb)
        os.makedirs(base, exist_ok=True)
        for vol in pod["spec"].get("volumes") or ():
            if "emptyDir" in vol:
                # pkg/volume/emptydir/empty_dir.go: setupDir makes the directory 0777 and chmods it past the
                # umask (the data directory above it stays private, 0700)
                path = os.path.join(base, "volumes", vol["name"])
                os.makedirs(path, exist_ok=True)
                os.chmod(path, 0o777)
        self._write_resolv_conf(pod, base)
        yield from self._pod_network_setup(sb, pod)
        # containerd's sandbox: an IPC namespace unless hostIPC; runc writes the pod's sysctls in the sandbox's
        # namespaces (kuberuntime_sandbox.go: PodSandboxConfig.Linux.Sysctls; podlife.runtime.ipcns)
        sysctls = [(str(s.get("name") or ""), str(s.get("value") or ""))
                   for s in (pod["spec"].get("securityContext") or {}).get("sysctls") or ()]
        try:
            if self.host.ipc is None and not pod["spec"].get("hostIPC"):
                self.ipcns[sb.id] = ipcns.make([s for s in sysctls if namespaced_by(dotted(s[0])) == "ipc"])
            net_sysctls = [s for s in sysctls if namespaced_by(dotted(s[0])) == "net"]
            if net_sysctls and sb.id in self.netns:
                ipcns.write_in_netns(self.netns[sb.id], net_sysctls)
        except OSError as e:
            yield from self.remove_pod_sandbox(sb.id)
            text = str(e) if isinstance(e, ipcns.SysctlError) else f"{e.strerror or e}"
            raise RuntimeError_("failed to create containerd task: failed to create shim task: OCI runtime create "
                                "failed: runc create failed: unable to start container process: error during "
                                f"container init: {text}: unknown") from None
        return sb

    def _pod_network_setup(self, sb: Sandbox, pod: Obj) -> Call:
        """The pod's network namespace and its CNI chain (bridge, then portmap)."""
        net = self.host.network
        if net is None or not sb.ip:
            return
        # sandbox_run.go: the namespace, then CNI ADD (setupPodNetwork); a failure fails RunPodSandbox, and
        # what was made of the sandbox goes
        made = self.kernel.event()
        task = asyncio.get_running_loop().create_task(net.add(sb.id, self.index, sb.ip))
        task.add_done_callback(lambda f: self.host.deliver(lambda: made.succeed(f.result())))
        err = yield made
        if err is not None:
            yield from self.remove_pod_sandbox(sb.id)
            raise RuntimeError_(f'failed to setup network for sandbox "{sb.id}": plugin type="bridge" '
                                f'name="podlife" failed (add): {err}')
        self.netns[sb.id] = net.netns_path(sb.id)
        # the chain's next plugin, portmap, with the pod's port mappings (sandbox_run.go toCNIPortMappings); its
        # failure fails CNI ADD as the bridge's does (libcni api.go AddNetworkList: 'plugin %s failed (add)')
        err = self.host.ports.add(sb.id, pod, sb.ip, self.node_ip)
        if err is not None:
            yield from self.remove_pod_sandbox(sb.id)
            raise RuntimeError_(f'failed to setup network for sandbox "{sb.id}": plugin type="portmap" '
                                f'name="podlife" failed (add): {err}')

    def stop_pod_sandbox(self, sandbox_id: str) -> Call:
        yield from super().stop_pod_sandbox(sandbox_id)
        yield from self._tear_down(sandbox_id)   # sandbox_stop.go: teardownPodNetwork, then the netns removed

    def remove_pod_sandbox(self, sandbox_id: str) -> Call:
        yield from self._tear_down(sandbox_id)
        yield from super().remove_pod_sandbox(sandbox_id)

    def _tear_down(self, sandbox_id: str) -> Call:
        held = self.ipcns.pop(sandbox_id, None)
        if held is not None:
            os.close(held)   # the IPC namespace goes with its last process
        net = self.host.network
        if self.netns.pop(sandbox_id, None) is None or net is None:
            return
        self.host.ports.remove(sandbox_id)   # CNI DEL runs the chain backwards: portmap first
        gone = self.kernel.event()
        task = asyncio.get_running_loop().create_task(net.remove(sandbox_id))
        task.add_done_callback(lambda _f: self.host.deliver(lambda: gone.succeed()))
        yield gone

    def netns_fd(self, sandbox_id: str) -> int | None:
        """An open descriptor of the sandbox's network namespace, for a process to join; None: the host's."""
        path = self.netns.get(sandbox_id)
        if not path:
            return None
        try:
            return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:   # removed behind podlife's back: the process must not run in the host's instead
            raise RuntimeError_(f"failed to open network namespace {path}: {e.strerror}") from None

    def dial(self, pod: Obj) -> Callable[[int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]:
        """How port-forward reaches the pod's port: containerd's portForward dials localhost:PORT inside the
        sandbox's network namespace (sandbox_portforward_linux.go); a pod without one (hostNetwork, or no
        namespaces here) is reached at its address."""
        ready = [sb for sb in self.pod_sandboxes(pod["metadata"]["uid"]) if sb.id in self.netns]
        if not ready:
            ip = (pod.get("status") or {}).get("podIP") or ""
            return lambda port: asyncio.open_connection(ip, port)
        sandbox_id, path = ready[-1].id, self.netns[ready[-1].id]
        return lambda port: podnet.open_connection_in(path, sandbox_id, port)

    def _write_resolv_conf(self, pod: Obj, base: str) -> None:
        """The sandbox's resolv.conf, from the kubelet's GetPodDNS (podlife.runtime.poddns), written once per
        sandbox as containerd's setupSandboxFiles does; its Warning events are the kubelet's to record."""
        try:
            with open(poddns.RESOLV_CONF, "rb") as f:
                host_file = f.read()
        except OSError:
            host_file = b""
        cfg, events = poddns.pod_dns(pod, poddns.parse_resolv_conf(host_file.decode("utf-8", "replace")),
                                     self.host.cluster_dns)
        self._dns_events[pod["metadata"]["uid"]] = events
        path = os.path.join(base, poddns.FILE_NAME)
        with open(path, "wb") as f:
            f.write(poddns.content(cfg, host_file))
        os.chmod(path, 0o644)

    def set_up_volumes(self, pod: Obj, payloads: dict[str, atomicwriter.Payload]) -> None:
        """The kubelet's SetUp of the pod's API-data volumes: each written with the atomic writer into
        ``volumes/<name>`` of the pod's directory (only what changed is written)."""
        base = os.path.join(self.host.pod_dir_of(pod), "volumes")
        if self.host.namespaces is not None and payloads:
            md = pod["metadata"]
            if md["uid"] not in self._warned:
                self._warned.add(md["uid"])
                log.warning("pod %s/%s: volumes are written to %s but not mounted at their mountPath (%s)",
                            md["namespace"], md["name"], base, self.host.namespaces)
        for name, payload in payloads.items():
            atomicwriter.write(os.path.join(base, name), payload)

    def dns_events(self, pod_uid: str) -> list[tuple[str, str]]:
        return self._dns_events.pop(pod_uid, [])

    def hook_events(self, container_id: str) -> list[tuple[str, str]]:
        """The Warning events of the container's last hook (LifecycleHTTPFallback), for the kubelet to record."""
        return self._hook_events.pop(container_id, [])

    def log_file(self, container_id: str) -> tuple[str, LogWriter | None] | None:
        """The container's log file and, while its process writes to it, the writer."""
        c = self.containers.get(container_id)
        p = self.procs.get(container_id)
        sb = self.sandboxes.get(c.sandbox_id) if c is not None else None
        if c is None or sb is None:
            return None
        return os.path.join(self.host.pod_dir(sb), c.log_path), (p.log if p is not None else None)

    def termination_message(self, c: Container) -> str:
        """The runtime's message, then the container's own (podlife.runtime.termination), read once the
        container has exited and its log is complete."""
        p = self.procs.get(c.id)
        if p is None or c.state != EXITED or c.reason == "StartError":
            return c.message
        if p.term_message is None:
            sb = self.sandboxes.get(c.sandbox_id)
            log_path = os.path.join(self.host.pod_dir(sb), c.log_path) if sb is not None else ""
            text = termination.message(p.term_path, p.config.spec, c.exit_code, c.reason, log_path)
            if p.log is not None and not p.log.closed:
                return ": ".join(m for m in (c.message, text) if m)   # the log may still grow: read it again
            p.term_message = text
        return ": ".join(m for m in (c.message, p.term_message) if m)

    # ---- the layer below: real processes -----------------------------------------------------------

    def _behavior(self, config: ContainerConfig) -> Behavior:
        """A real process has no modelled behaviour (podlife/behavior is ignored): no usage either."""
        return NO_BEHAVIOR

    def _create(self, c: Container, sandbox: Sandbox, config: ContainerConfig) -> Call:
        """containerd's spec generation: the process from the command, args and the image's config
        (podlife.runtime.images; without any there is nothing to run), the mounts of the container's own
        namespace where the machine allows them."""
        image, bad = images.image_config(config.image, config.pod["metadata"].get("annotations") or {})
        if bad is not None:
            raise RuntimeError_(f'failed to generate container "{c.id}" spec: {bad}')
        argv = images.process_args(config.command, config.args, image)
        builtin = images.builtin_program(config.image, argv)
        if not argv and builtin is None:
            known = "" if image is not None else (
                f'; podlife knows no ENTRYPOINT/CMD of image "{config.image}": give the container a command, or '
                f"declare the image in the pod annotation {images.ANNOTATION}")
            raise RuntimeError_(f'failed to generate container "{c.id}" spec: no command specified{known}')
        env = {k: os.environ[k] for k in BASE_ENVIRONMENT if k in os.environ}
        env.setdefault("PATH", os.defpath)
        host_network = bool(config.pod["spec"].get("hostNetwork"))
        # containerd: HOSTNAME is the sandbox's hostname, the node's for a hostNetwork pod
        hostname = hostsfile.kernel_hostname(config.pod)
        env["HOSTNAME"] = socket.gethostname() if host_network else hostname
        env.update(config.env)
        argv = builtin or argv
        program = None if builtin else shells.ash_program(argv, images.repository(config.image), self.host.busybox,
                                                          env)
        if builtin is None and program is None:
            argv = shells.shell_argv(argv, images.repository(config.image), self.host.sh)
        pod_dir = self.host.pod_dir(sandbox)
        web = webservers.stand_in(config.image, argv)
        web_root = webservers.document_root(pod_dir, config.name, c.id, web) if web is not None else ""
        term_path = ""
        workdir = config.working_dir or (image.working_dir if image is not None else "")
        ns: dict | None = None
        root_dir = ""
        if self.host.namespaces is None:
            mounts, tmpfs = containermounts.volume_mounts(config.pod, config.spec, pod_dir, env)
            if hostsfile.should_mount(config.spec, config.pod_ips):
                mounts.append(containermounts.hosts_mount(config.pod, pod_dir, config.pod_ips))
            resolv = os.path.join(pod_dir, poddns.FILE_NAME)
            if poddns.should_mount(config.spec) and os.path.exists(resolv):
                # containerd's WithPodResolvConf: the sandbox's file at /etc/resolv.conf, read-only for a
                # read-only root filesystem (podlife: read-write as /etc/hosts)
                mounts.append({"source": resolv, "target": poddns.RESOLV_CONF, "readonly": False, "file": True})
            if config.spec.get("terminationMessagePath"):
                term_path, mount = termination.make_file(pod_dir, config.name, c.id, config.spec)
                mounts.append(mount)
            if web is not None:
                # the image's document root, unless a volume is mounted there or above it
                if not any(web.docroot == m["target"].rstrip("/") or web.docroot.startswith(m["target"].rstrip("/")
                                                                                        + "/") for m in mounts):
                    mounts.append({"source": web_root, "target": web.docroot, "readonly": False, "file": False})
                argv = webservers.program(web, web.docroot, "" if host_network else sandbox.ip)
            scratch = os.path.join(self.host.data_dir, "runtime", "ns")
            os.makedirs(scratch, exist_ok=True)
            read_only_root = bool((config.spec.get("securityContext") or {}).get("readOnlyRootFilesystem"))
            root_dir = privatetmp.root_dir(pod_dir, config.name, c.id)
            mounts = privatetmp.mounts(root_dir, read_only_root, mounts) + mounts
            ns = {"mounts": mounts, "scratch": scratch, "tmpfs": tmpfs, "readOnlyRoot": read_only_root}
            if self.host.uts is None and not host_network:
                ns["hostname"] = hostname
            cwd = workdir or "/"   # containerd: the image's WORKDIR, else /
        else:
            cwd = config.working_dir or pod_dir
            if web is not None:
                argv = webservers.program(web, web_root, "" if host_network else sandbox.ip)
        self.procs[c.id] = _Process(config, argv, env, cwd, ns=ns, from_image=not config.command,
                                    user=process_user(config.pod, config.spec, image), program=program,
                                    security=capabilities.security(config.spec), term_path=term_path,
                                    root_dir=root_dir)
        yield from ()

    def remove_container(self, container_id: str) -> Call:
        """containerd's RemoveContainer, which removes the container's snapshot: its own /tmp and /var/tmp."""
        p = self.procs.get(container_id)
        yield from super().remove_container(container_id)
        if p is not None:
            privatetmp.remove(p.root_dir)

    def _launch(self, c: Container) -> Call:
        p = self.procs[c.id]
        shim = self._shim()
        net = self._pod_network(c)   # first: nothing to close if it fails
        p.log = LogWriter(os.path.join(self.host.pod_dir(self.sandboxes[c.sandbox_id]), c.log_path))
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        p.log.attach(out_r, "stdout")
        p.log.attach(err_r, "stderr")
        fds = {"stdout": out_w, "stderr": err_w, **net}
        if p.config.spec.get("stdin"):
            # containerd: a container created with stdin gets a pipe that attach writes into (no terminal: a
            # ``tty: true`` container's terminal is not modelled)
            fds["stdin"], p.stdin = os.pipe()
        sp = p.spawn = shim.spawn(p.argv, p.env, p.cwd, c.id, True, fds, namespace=p.ns, user=p.user,
                                  security=p.security, program=p.program)
        sp.exited.add_done_callback(lambda _f: p.close_stdin())
        started = self.kernel.event()
        sp.started.add_done_callback(lambda f: self.host.deliver(lambda: started.succeed(f.exception())))
        sp.exited.add_done_callback(lambda f: self.host.deliver(lambda: self._process_exited(c, *f.result())))
        err = yield started
        if err is not None:
            message = _start_error(p.argv[0], p.cwd, err)
            if p.from_image and getattr(err, "errno", 0) == errno.ENOENT and getattr(err, "what", "") != "chdir":
                message += (f' (podlife runs the program of image "{p.config.image}" from this machine, and '
                            f'"{p.argv[0]}" is not on it)')
            c.state, c.exit_code, c.reason, c.message = EXITED, START_FAILED_EXIT, "StartError", message
            c.finished_at = self.kernel.now
            p.log.close()
            privatetmp.remove(p.root_dir)
            self._record(c.pod_ref, c.name, "exit", f"exitCode {START_FAILED_EXIT} (StartError)")
            self._changed(c.pod_uid)
            raise RuntimeError_(message)

    def _running(self, c: Container) -> None:
        p = self.procs[c.id]
        p.gone = self.kernel.event()
        if p.early_exit is not None:
            self._process_exited(c, *p.early_exit)

    def _process_exited(self, c: Container, code: int, sig: int) -> None:
        p = self.procs.get(c.id)
        if p is None or self.containers.get(c.id) is not c:
            return   # the runtime forgot it (the node powered off)
        if c.state == CREATED:
            p.early_exit = (code, sig)
            return
        status = 128 + sig if sig else code
        # the instance's files go with its namespace (its writable root, a tmpfs, already has): podlife's kubelet
        # removes no container (no container GC), and nothing can read them once its processes are gone
        privatetmp.remove(p.root_dir)
        # (the supervisor has killed the rest of the container: its group and its exec'd commands)
        self._exit(c, status, p.kill_reason or ("Completed" if status == 0 else "Error"))
        if p.gone is not None and not p.gone.triggered:
            p.gone.succeed()

    def _terminate(self, c: Container, sig: str) -> None:
        self._send(self.procs[c.id], signum(sig), group=False)

    def _kill(self, c: Container, reason: str) -> simpy.Event | None:
        p = self.procs[c.id]
        p.kill_reason = reason
        self._send(p, signal.SIGKILL, group=True)
        return p.gone

    def power_off(self) -> None:
        for c in list(self.containers.values()):
            p = self.procs.get(c.id)
            if p is not None and c.process_running:
                self._send(p, signal.SIGKILL, group=True)
        super().power_off()
        self.procs.clear()
        for held in self.ipcns.values():
            os.close(held)
        self.ipcns.clear()
        net, gone = self.host.network, list(self.netns)
        self.netns.clear()
        if net is not None:
            for sandbox_id in gone:
                self.host.ports.remove(sandbox_id)
                asyncio.get_running_loop().create_task(net.remove(sandbox_id))

    def _pod_network(self, c: Container) -> dict[str, int]:
        """The descriptors of the pod's network and IPC namespaces for a process to join (the shim closes them
        once sent)."""
        netns = self.netns_fd(c.sandbox_id)
        fds = {} if netns is None else {"netns": netns}
        held = self.ipcns.get(c.sandbox_id)
        if held is not None:
            fds["ipcns"] = os.dup(held)
        return fds

    def _send(self, p: _Process, sig: int, group: bool) -> None:
        """A signal to the container's process (or its group); with no supervisor, nothing is left to signal."""
        if p.spawn is not None and self.host.shim is not None:
            self.host.shim.signal(p.spawn, sig, group=group)

    def _shim(self) -> Shim:
        if self.host.shim is None or not self.host.shim.running:
            raise RuntimeError_("rpc error: code = Unavailable desc = the process supervisor is not running")
        return self.host.shim

    # ---- hooks and probes, for real ------------------------------------------------------------------

    def _shell(self, p: _Process, cmd: list[str], env: dict[str, str]) -> tuple[list[str], str | None]:
        """An exec'd command's argv and program, its shell chosen as the container's (podlife.runtime.shells)."""
        repo = images.repository(p.config.image)
        program = shells.ash_program(cmd, repo, self.host.busybox, env)
        return (cmd, program) if program else (shells.shell_argv(cmd, repo, self.host.sh), None)

    def exec_command(self, c: Container, cmd: list[str], timeout: float | None,
                     done: Callable[[int | None, str, bool], None]) -> None:
        """Run ``cmd`` in the container's environment and working directory; ``done(exit status or None when
        it could not start, combined output, timed out)`` is called in the kernel once it has ended and its
        output is read. The command is killed with its container, or at ``timeout`` seconds."""
        p = self.procs.get(c.id)
        if p is None or not c.process_running:
            done(None, f"container {c.id} is not running", False)
            return
        asyncio.get_running_loop().create_task(self._exec_or_fail(c, p, cmd, timeout, done))

    async def _exec_or_fail(self, c: Container, p: _Process, cmd: list[str], timeout: float | None,
                            done: Callable[[int | None, str, bool], None]) -> None:
        try:
            await self._exec(c, p, cmd, timeout, done)
        except Exception as e:  # noqa: BLE001 - whatever went wrong, the kubelet waiting for it hears of it
            why = f"exec failed: {e}"
            self.host.deliver(lambda: done(None, why, False))

    async def _exec(self, c: Container, p: _Process, cmd: list[str], timeout: float | None,
                    done: Callable[[int | None, str, bool], None]) -> None:
        try:
            shim = self._shim()
        except RuntimeError_ as e:
            why = str(e)
            self.host.deliver(lambda: done(None, why, False))
            return
        net = self._pod_network(c)
        r, w = os.pipe()
        argv, program = self._shell(p, cmd, p.env)
        sp = shim.spawn(argv, p.env, p.cwd, c.id, False,   # the shim closes w
                        {"stdout": w, "stderr": os.dup(w), **net}, user=p.user, security=p.security, program=program)
        p.execs.add(sp)
        timed_out = False
        try:
            try:
                await sp.started
            except SpawnError as e:
                os.close(r)
                why = exec_error(cmd[0] if cmd else "", p.cwd, e)
                self.host.deliver(lambda: done(None, why, False))
                return
            output = asyncio.get_running_loop().create_task(_read_all(r))

            def expire() -> None:
                nonlocal timed_out
                timed_out = True
                shim.signal(sp, signal.SIGKILL, group=True)
            timer = asyncio.get_running_loop().call_later(timeout, expire) if timeout else None
            code, sig = await sp.exited
            if timer is not None:
                timer.cancel()
            text = (await output).decode("utf-8", "replace")
        finally:
            p.execs.discard(sp)
        status = 128 + sig if sig else code
        self.host.deliver(lambda: done(status, text, timed_out))

    def open_exec(self, container_id: str, cmd: list[str], stdin: bool, tty: bool) -> ExecStreams:
        """An interactive command in the running container (kubectl exec: the CRI's streaming Exec), in its
        environment and working directory, killed with the container. With ``tty`` its stdin, stdout and
        stderr are one terminal."""
        c = self.containers.get(container_id)
        p = self.procs.get(container_id)
        if c is None or p is None or not c.process_running:
            raise RuntimeError_(f"container {container_id} is not running")
        shim = self._shim()
        net = self._pod_network(c)
        if tty:
            master, slave = os.openpty()
            fds = {"stdin": slave, "stdout": os.dup(slave), "stderr": os.dup(slave)}
            streams = ExecStreams(None, master, None, master)
        else:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            fds = {"stdout": out_w, "stderr": err_w}
            in_w = None
            if stdin:
                fds["stdin"], in_w = os.pipe()
            streams = ExecStreams(None, out_r, err_r, in_w)
        # containerd execInternal: a terminal comes with TERM=xterm
        env = {**p.env, "TERM": "xterm"} if tty else p.env
        argv, program = self._shell(p, cmd, env)
        streams.spawn = sp = shim.spawn(argv, env, p.cwd, c.id, False, {**fds, **net}, tty=tty, user=p.user,
                                        security=p.security, program=program)
        p.execs.add(sp)
        sp.exited.add_done_callback(lambda _f: p.execs.discard(sp))
        return streams

    def run_hook(self, c: Container, hook: str, handler: Obj, spec: Obj) -> Call:
        """Handlers.Run: an exec hook runs its command (no time limit of its own: the grace period bounds a
        preStop hook); an HTTP hook GETs the pod's address and fails only when no response comes."""
        ev = self.kernel.event()
        if "exec" in handler:
            cmd = list((handler.get("exec") or {}).get("command") or [])

            def exec_done(status: int | None, output: str, _timed_out: bool) -> None:
                if status is None:
                    ev.succeed(output)
                elif status:
                    # kuberuntime RunInContainer: a non-zero exit is an error naming the command
                    ev.succeed(f"command '{' '.join(cmd)}' exited with {status}: {output}")
                else:
                    ev.succeed("")
            self.exec_command(c, cmd, None, exec_done)
        elif "httpGet" in handler:
            http = handler["httpGet"] or {}
            ip = self._ip(c)
            like_probe = self.host.profile.lifecycle_http_like_probe

            async def get() -> None:
                try:
                    port = network.resolve_port(http.get("port"), spec)
                except ValueError as e:
                    why = str(e)
                    self.host.deliver(lambda: ev.succeed(why))
                    return
                host = http.get("host") or ip
                path = http.get("path", "")
                # lifecycle/handlers.go runHTTPHandler; the HTTP client for hooks has no timeout of its own
                if not like_probe:   # the deprecated path: http://host:port/ + path, nothing else of the action
                    code, text = await network.http_get(host, port, "/" + path, [], None, "Go-http-client/1.1")
                    self.host.deliver(lambda: ev.succeed(text if code is None else ""))
                    return
                scheme = http.get("scheme") or "HTTP"
                headers = http.get("httpHeaders") or []
                agent = f"kube-lifecycle/1.{self.host.profile.minor}"
                code, text = await network.http_get(host, port, path, headers, None, agent, scheme)
                fallback = ""
                if code is None and text.endswith(network.HTTP_TO_HTTPS):
                    # an HTTP server answered: asked again over HTTP, without an Authorization header
                    plain = [h for h in headers if str(h.get("name", "")).lower() != "authorization"]
                    retry, _ = await network.http_get(host, port, path, plain, None, agent)
                    if retry is not None:
                        code, text = retry, ""
                        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
                        fallback = (f"request to HTTPS lifecycle hook {where} got HTTP response, retry with "
                                    "HTTP succeeded")

                def answer() -> None:
                    if fallback:
                        self._hook_events.setdefault(c.id, []).append(("LifecycleHTTPFallback", fallback))
                    ev.succeed(text if code is None else "")
                self.host.deliver(answer)
            asyncio.get_running_loop().create_task(get())
        else:
            ev.succeed("")
        err = yield ev
        return err

    def probe(self, c: Container, probe: Obj, spec: Obj, pod_ip: str, elapsed: float, done: ProbeDone) -> None:
        """runProbe with real outcomes; ``done`` is called in the kernel when the answer comes."""
        timeout = float(probe.get("timeoutSeconds") or 1)
        if "exec" in probe:
            cmd = list((probe.get("exec") or {}).get("command") or [])

            def exec_done(status: int | None, output: str, timed_out: bool) -> None:
                if timed_out:
                    # remote_runtime.go ExecSync: a deadline becomes "command ... timed out" (ExecProbeTimeout)
                    done("Failure", f'command "{" ".join(cmd)}" timed out')
                else:
                    done("Success" if status == 0 else "Failure", output[:MAX_OUTPUT])
            self.exec_command(c, cmd, timeout if self.host.profile.exec_probe_timeout else None, exec_done)
            return
        host = pod_ip or self._ip(c)

        async def check() -> None:
            try:
                if "httpGet" in probe:
                    http = probe["httpGet"] or {}
                    result = await network.http_probe(http.get("host") or host,
                                                      network.resolve_port(http.get("port"), spec),
                                                      http.get("path", ""), http.get("httpHeaders") or [], timeout,
                                                      self._user_agent(), http.get("scheme") or "HTTP")
                elif "tcpSocket" in probe:
                    tcp = probe["tcpSocket"] or {}
                    result = await network.tcp_check(tcp.get("host") or host,
                                                     network.resolve_port(tcp.get("port"), spec), timeout)
                else:
                    rpc = probe.get("grpc") or {}
                    # prober.go runProbe: the gRPC action's port is a number; service "" when unset
                    result = await grpcprobe.grpc_probe(host, network.resolve_port(rpc.get("port"), spec),
                                                        rpc.get("service") or "", timeout, self._user_agent())
            except ValueError as e:
                result = ("Failure", str(e))
            self.host.deliver(lambda: done(*result))
        asyncio.get_running_loop().create_task(check())

    def probe_answers_change(self, c: Container, after: float) -> float | None:
        return after   # a real process may answer differently at any moment

    def _ip(self, c: Container) -> str:
        sb = self.sandboxes.get(c.sandbox_id)
        # a hostNetwork pod's sandbox has no address of its own: the pod's is the node's
        return (sb.ip or self.node_ip) if sb is not None else ""

    def _user_agent(self) -> str:
        return f"kube-probe/1.{self.host.profile.minor}"


def _attempts_in(pods_dir: str) -> dict[tuple[str, str], int]:
    """(pod uid, container) → the highest restartCount with a log file under pods/<ns>_<name>_<uid>/."""
    out: dict[tuple[str, str], int] = {}
    try:
        pod_dirs = os.listdir(pods_dir)
    except OSError:
        return out
    for pod in pod_dirs:
        uid = pod.rsplit("_", 1)[-1]
        for name in _listdir(os.path.join(pods_dir, pod)):
            for f in _listdir(os.path.join(pods_dir, pod, name)):
                if f.endswith(".log") and f[:-4].isdigit():
                    out[(uid, name)] = max(out.get((uid, name), -1), int(f[:-4]))
    return out


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path) if os.path.isdir(path) else []
    except OSError:
        return []


def signum(name: str) -> int:
    """A signal's number from its name as lifecycle.stopSignal writes it (SIGUSR1, SIGRTMIN+3, SIGRTMAX-1)."""
    for base, sign in (("SIGRTMIN+", 1), ("SIGRTMAX-", -1)):
        if name.startswith(base):
            return (signal.SIGRTMIN if sign > 0 else signal.SIGRTMAX) + sign * int(name[len(base):])
    return int(signal.Signals[name])


async def _read_all(fd: int) -> bytes:
    """Read a pipe to its end from the event loop, keeping the first MAX_OUTPUT bytes."""
    out = bytearray()
    try:
        async for data in read_chunks(fd):
            out.extend(data[:max(MAX_OUTPUT - len(out), 0)])
    finally:
        os.close(fd)
    return bytes(out)


def _reason(program: str, cwd: str, e: BaseException) -> str:
    """runc's words for a process it could not start."""
    what, num = getattr(e, "what", "exec"), getattr(e, "errno", 0)
    if what == "lookup":
        return f'exec: "{program}": executable file not found in $PATH'
    if what == "chdir":
        return f'chdir to cwd ("{cwd}") set in config.json failed: {os.strerror(num).lower()}'
    if num:
        return f'exec: "{program}": {os.strerror(num).lower()}'
    return str(e)


def _start_error(program: str, cwd: str, e: BaseException) -> str:
    """containerd's StartContainer error for a container process runc could not start."""
    return ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
            f"failed: unable to start container process: {_reason(program, cwd, e)}: unknown")


def process_user(pod: Obj, spec: Obj, image: images.ImageConfig | None) -> dict | None:
    """Whom the container's processes run as (kuberuntime_container_linux.go: the container's securityContext over
    the pod's; else the image's numeric USER; supplementalGroups and fsGroup become its groups, as
    generateLinuxContainerConfig and containerd's WithAdditionalGIDs do). None: podlife's own user, when nothing is
    asked or podlife is not root and so cannot switch (the README says so). A named USER is not looked up: this
    machine's /etc/passwd is not the image's."""
    psc = pod["spec"].get("securityContext") or {}
    csc = spec.get("securityContext") or {}
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    gid = csc.get("runAsGroup", psc.get("runAsGroup"))
    if uid is None and image is not None and image.user:
        name, _, group = image.user.partition(":")
        uid = int(name) if name.isdigit() else None
        if gid is None and group.isdigit():
            gid = int(group)
    groups = [int(g) for g in psc.get("supplementalGroups") or []]
    if psc.get("fsGroup") is not None:
        groups.append(int(psc["fsGroup"]))
    if (uid is None and gid is None and not groups) or os.geteuid() != 0:
        return None
    return {"uid": int(uid or 0), "gid": int(gid or 0), "groups": sorted(set(groups))}


def exec_error(program: str, cwd: str, e: BaseException) -> str:
    """containerd's ExecSync error for a command that could not start in the container."""
    if getattr(e, "errno", 0) == errno.ESRCH:
        return "failed to exec in container: container is in CONTAINER_EXITED state"
    return ("failed to exec in container: OCI runtime exec failed: exec failed: unable to start container "
            f"process: {_reason(program, cwd, e)}: unknown")

"""A node's container runtime: sandboxes with IPs, containers whose processes follow their behaviour.

Calls are generator processes that take simulated time. The runtime tells its listener (the PLEG) whenever a
container's state changes; the kubelet learns of it only when the PLEG relists, as upstream.

The layer below the CRI state machine (containerd's shim and the process it runs) is a handful of methods,
marked as such: here the process is simulated from its behaviour; podlife.runtime.process runs real ones.
The same layer answers the container's side of hooks and probes (``run_hook``, ``probe``).
"""

from __future__ import annotations

import ipaddress
# the C half of the socket module: socket itself (its selectors and enums) is not needed for these two
from _socket import inet_aton, inet_ntoa
from collections.abc import Callable
from typing import Any

import simpy

from podlife.api.meta import Obj, ref
from podlife.cluster.contracts import Call, ContainerRuntime, MachineUsage, NodeStats, ProbeDone, RuntimeFaults
from podlife.engine import Kernel
from podlife.runtime.behavior import Behavior, BehaviorRule, behavior_for, cpu_at
from podlife.runtime.cri import (
    CREATED,
    EXITED,
    RUNNING,
    SANDBOX_NOTREADY,
    SANDBOX_READY,
    Container,
    ContainerConfig,
    RuntimeError_,
    Sandbox,
)
from podlife.runtime.profiles import RuntimeProfile
from podlife.trace.recorder import Trace

SIGKILL_EXIT = 137   # 128 + 9


class IPAM:
    """host-local IPAM over the node's podCIDR: sequential allocation that moves on past released
    addresses before reusing them (plugins/ipam/host-local/backend/allocator)."""

    def __init__(self, cidr: str) -> None:
        net = ipaddress.ip_network(cidr, strict=False)
        self._v4 = net.version == 4   # written and read through the socket module: ipaddress's str() is slower
        self._first = int(net.network_address) + 2      # .1 is the bridge gateway
        self._last = int(net.broadcast_address) - 1
        self._next = self._first
        self._used: set[int] = set()

    def allocate(self) -> str:
        size = self._last - self._first + 1
        for _ in range(size):
            ip = self._next
            self._next = self._first if ip >= self._last else ip + 1
            if ip not in self._used:
                self._used.add(ip)
                return inet_ntoa(ip.to_bytes(4, "big")) if self._v4 else str(ipaddress.ip_address(ip))
        raise RuntimeError_("failed to allocate for range 0: no IP addresses available in range set")

    def reserve(self, ip: str) -> None:
        """An address already given out (a pod adopted from a dump): never allocated again."""
        try:
            self._used.add(int(ipaddress.ip_address(ip)))
        except ValueError:
            pass

    def release(self, ip: str) -> None:
        if not ip:
            return   # a hostNetwork pod's sandbox: none was allocated
        self._used.discard(int.from_bytes(inet_aton(ip), "big") if self._v4 else int(ipaddress.ip_address(ip)))


class ContainerdRuntime(ContainerRuntime, NodeStats, RuntimeFaults):
    writes_logs = False   # its containers' output goes to no log file (see log_file)
    writes_volumes = False   # the kubelet does not hand it volume files (set_up_volumes)

    def __init__(self, kernel: Kernel, trace: Trace, node: str, profile: RuntimeProfile, pod_cidr: str,
                 behaviors: tuple[BehaviorRule, ...] = ()) -> None:
        self.kernel = kernel
        self.behaviors = behaviors   # the scenario's spec.behaviors: what the simulated processes do
        self.trace = trace
        self.node = node
        self.profile = profile
        self.ipam = IPAM(pod_cidr)
        self.sandboxes: dict[str, Sandbox] = {}
        self._sandboxes_by_pod: dict[str, dict[str, Sandbox]] = {}   # pod uid -> its sandboxes, in creation order
        self.containers: dict[str, Container] = {}
        self._by_pod: dict[str, dict[str, Container]] = {}   # pod uid → its containers, in creation order
        self.machine = MachineUsage()   # NodeStats: the node's own memory and disk use (faults set them)
        self.absent_images: set[str] = set()   # images start present (scenario format 2.1) unless listed
        self.present_images: set[str] | None = None   # when known (an imported node): only these are present
        # /var/log/pods/<uid>/<container>/<attempt>.log: survives a reboot, unlike the runtime's state
        self.log_attempts: dict[tuple[str, str], int] = {}
        self.listeners: list[Callable[[str], None]] = []   # called with a pod uid on every state change
        self._rng = kernel.rng(f"runtime/{node}")
        self._exit_events: dict[str, simpy.Event] = {}
        self._timers: dict[str, simpy.Event] = {}
        self.down = False
        self._heal: simpy.Event | None = None

    # ---- reads (instant) --------------------------------------------------------------------------

    def pod_sandboxes(self, pod_uid: str) -> list[Sandbox]:
        return list(self._sandboxes_by_pod.get(pod_uid, {}).values())

    def pod_containers(self, pod_uid: str) -> list[Container]:
        return list(self._by_pod.get(pod_uid, {}).values())

    def container_id(self, c: Container) -> str:
        return f"{self.profile.id_scheme}://{c.id}"

    def termination_message(self, c: Container) -> str:
        """The message of an exited container's status: the runtime's own (why a start failed); a simulated
        container writes no termination-log file and no log to fall back to."""
        return c.message

    def list_containers(self) -> list[Container]:
        return list(self.containers.values())

    # ---- stats (NodeStats): a container's working set is what its behaviour declares -------------------

    def pods_working_set(self) -> int:
        return sum(c.behavior.memory or 0 for c in self.containers.values() if c.process_running)

    def pod_working_set(self, pod_uid: str) -> int:
        # (asked on every container change of the node: a loop over the pod's own, no list or generator)
        total = 0
        mine = self._by_pod.get(pod_uid)
        if mine is not None:
            for c in mine.values():
                if c.process_running:
                    total += c.behavior.memory or 0
        return total

    def container_working_sets(self, pod_uid: str) -> list[tuple[str, int]]:
        return [(c.name, c.behavior.memory or 0) for c in self.pod_containers(pod_uid) if c.process_running]

    def running_processes(self) -> int:
        return sum(1 for c in self.containers.values() if c.process_running)

    def ready_sandbox_pods(self) -> set[str]:
        return {sb.pod_uid for sb in self.sandboxes.values() if sb.state == SANDBOX_READY}

    def pod_usage_at(self, pod_uid: str, at: float, resource: str) -> int | None:
        total, seen = 0, False
        for c in self.pod_containers(pod_uid):
            if c.started_at is None or c.started_at > at or (c.finished_at is not None and c.finished_at <= at):
                continue
            seen = True
            total += cpu_at(c.behavior, at - c.started_at) if resource == "cpu" else (c.behavior.memory or 0) * 1000
        return total if seen else None

    # ---- sandboxes --------------------------------------------------------------------------------

    def run_pod_sandbox(self, pod: Obj) -> Call:
        if self.profile.sandbox_seconds:
            yield self.kernel.timeout(self.profile.sandbox_seconds)
        md = pod["metadata"]
        # containerd getIPs: a sandbox in the node's network namespace gets no address (CNI is not called); the
        # kubelet reports the node's IPs as the pod's (kubelet_pods.go generateAPIPodStatus)
        host_network = bool(pod["spec"].get("hostNetwork"))
        sb = Sandbox(self._new_id(), md["uid"], ref(pod), md["namespace"], md["name"],
                     "" if host_network else self.ipam.allocate(),
                     created_at=self.kernel.now, log_directory=f"{md['namespace']}_{md['name']}_{md['uid']}")
        self.sandboxes[sb.id] = sb
        self._sandboxes_by_pod.setdefault(sb.pod_uid, {})[sb.id] = sb
        self._record(sb.pod_ref, "", "create", f"sandbox {sb.id[:13]} " + ("host network" if host_network
                                                                            else f"ip {sb.ip}"))
        self._changed(sb.pod_uid)
        return sb

    def stop_pod_sandbox(self, sandbox_id: str) -> Call:
        """Stops what is left in the sandbox at once and tears its network down (the IP is released)."""
        sb = self.sandboxes.get(sandbox_id)
        if sb is None or sb.state == SANDBOX_NOTREADY:
            return
        gone = []
        for c in self.pod_containers(sb.pod_uid):
            if c.sandbox_id == sandbox_id and c.process_running:
                self._signal(c, "SIGKILL", None)
                ev = self._kill(c, "Error")
                if ev is not None:
                    gone.append(ev)
        if gone:
            yield self.kernel.all_of(gone)
        sb.state = SANDBOX_NOTREADY
        self.ipam.release(sb.ip)
        self._record(sb.pod_ref, "", "stop", f"sandbox {sb.id[:13]}")
        self._changed(sb.pod_uid)
        yield from ()

    def remove_pod_sandbox(self, sandbox_id: str) -> Call:
        sb = self.sandboxes.pop(sandbox_id, None)
        if sb is not None:
            mine = self._sandboxes_by_pod[sb.pod_uid]
            del mine[sandbox_id]
            if not mine:
                del self._sandboxes_by_pod[sb.pod_uid]
            if sb.state != SANDBOX_NOTREADY:
                self.ipam.release(sb.ip)
            for c in [c for c in self.pod_containers(sb.pod_uid) if c.sandbox_id == sandbox_id]:
                self._forget(c)
            self._record(sb.pod_ref, "", "remove", f"sandbox {sb.id[:13]}")
        yield from ()

    # ---- containers -------------------------------------------------------------------------------

    def create_container(self, sandbox: Sandbox, config: ContainerConfig) -> Call:
        name, attempt = config.name, config.attempt
        c = Container(self._new_id(), sandbox.id, sandbox.pod_uid, sandbox.pod_ref, name, config.image, attempt,
                      self._behavior(config), created_at=self.kernel.now,
                      log_path=config.log_path, stop_signal=config.stop_signal or "SIGTERM")
        yield from self._create(c, sandbox, config)
        self.containers[c.id] = c
        self._by_pod.setdefault(c.pod_uid, {})[c.id] = c
        key = (c.pod_uid, name)
        self.log_attempts[key] = max(self.log_attempts.get(key, -1), attempt)
        self._record(c.pod_ref, name, "create", f"{self.container_id(c)} attempt {attempt}")
        self._changed(c.pod_uid)
        return c

    def start_container(self, container_id: str) -> Call:
        c = self._get(container_id)
        if c.state != CREATED:
            raise RuntimeError_(f"container {container_id} is not in created state")
        yield from self._launch(c)
        c.state = RUNNING
        c.process_running = True
        c.started_at = self.kernel.now
        self._exit_events[c.id] = self.kernel.event()
        self._record(c.pod_ref, c.name, "start", self.container_id(c))
        self._running(c)
        self._changed(c.pod_uid)

    def stop_container(self, container_id: str, timeout: int) -> Call:
        """StopContainer(timeout): the stop signal, up to ``timeout`` seconds for the process to exit, then
        SIGKILL. containerd skips straight to SIGKILL when timeout <= 0; docker waits forever when it is
        negative (moby daemon/stop.go containerStop). A container's behaviour on SIGTERM (onTerm) is its
        behaviour on whatever stop signal it was given; a stop signal of SIGKILL ends it at once."""
        c = self._get(container_id)
        yield from self._lock(c)
        if c.state == RUNNING:
            done = self._exit_events[c.id]
            if (timeout > 0 or self.profile.negative_timeout_waits) and c.stop_signal != "SIGKILL":
                self._signal(c, c.stop_signal, timeout)
                self._terminate(c, c.stop_signal)
                if timeout < 0:
                    yield done
                else:
                    limit = self.kernel.timer(timeout)
                    yield done | limit
                    self.kernel.cancel(limit)
            if c.state == RUNNING:
                self._signal(c, "SIGKILL", None)
                self._kill(c, "Error")
                if c.state == RUNNING:
                    yield done  # dockerd waits for an exit event that may never come (a lost one)
        if self.profile.stop_return_latency:
            yield self.kernel.timeout(self.profile.stop_return_latency)
        self._record(c.pod_ref, c.name, "stop", self.container_id(c))

    def remove_container(self, container_id: str) -> Call:
        c = self.containers.get(container_id)
        if c is not None:
            self._forget(c)
            self._record(c.pod_ref, c.name, "remove", self.container_id(c))
        yield from ()

    def exec_sync(self, container_id: str, seconds: float, exit_code: int) -> Call:
        """Runs a command in the container (exec hooks); returns its exit code, which the simulated command
        takes ``seconds`` to give. The command dies with its container."""
        c = self._get(container_id)
        yield from self._lock(c)
        if c.state != RUNNING:
            raise RuntimeError_(f"container {container_id} is not running")
        done = self._exit_events[c.id]
        limit = self.kernel.timer(seconds + self.profile.exec_overhead)
        yield done | limit
        self.kernel.cancel(limit)
        if c.state != RUNNING:
            raise RuntimeError_("command terminated: container exited")
        return exit_code

    def set_up_volumes(self, pod: Obj, payloads: dict[str, dict[str, tuple[bytes, int]]]) -> None:
        """Only a runtime that ``writes_volumes`` is handed volume files."""

    def dns_events(self, pod_uid: str) -> list[tuple[str, str]]:
        """A simulated sandbox has no resolv.conf: the pod's DNS settings are not modelled."""
        return []

    def hook_events(self, container_id: str) -> list[tuple[str, str]]:
        """A simulated HTTP hook reaches no server: it never falls back from HTTPS to HTTP."""
        return []

    def log_file(self, container_id: str) -> tuple[str, Any] | None:
        """The container's CRI log file and its writer while one writes to it: a simulated process writes none."""
        return None

    def exited(self, container_id: str) -> simpy.Event:
        """An event that fires when the container's process ends."""
        return self._exit_events[container_id]

    # ---- images -----------------------------------------------------------------------------------

    def has_image(self, image: str) -> bool:
        return image not in self.absent_images and (self.present_images is None or image in self.present_images)

    def remove_image(self, image: str) -> None:
        """ImagePullFailure: the image is not on the node, so the kubelet must pull it."""
        self.absent_images.add(image)

    def pull_image(self, image: str, seconds: float = 0.0) -> Call:
        if seconds:
            yield self.kernel.timeout(seconds)
        self.absent_images.discard(image)
        if self.present_images is not None:
            self.present_images.add(image)
        return f"sha256:{self._new_id()}"

    # ---- adoption (podlife.importer: a node taken over mid-life from a dump) -------------------------

    def adopt_sandbox(self, pod: Obj, ip: str | None, created_at: float, ready: bool) -> Sandbox:
        """A sandbox the node already had, with the IP the pod was given (held in IPAM while it is ready)."""
        md = pod["metadata"]
        if pod["spec"].get("hostNetwork"):
            ip = None   # the node's address, not one of the pod CIDR's
        if ip and ready:
            self.ipam.reserve(ip)
        sb = Sandbox(self._new_id(), md["uid"], ref(pod), md["namespace"], md["name"], ip or "",
                     state=SANDBOX_READY if ready else SANDBOX_NOTREADY, created_at=created_at,
                     log_directory=f"{md['namespace']}_{md['name']}_{md['uid']}")
        self.sandboxes[sb.id] = sb
        self._sandboxes_by_pod.setdefault(sb.pod_uid, {})[sb.id] = sb
        return sb

    def adopt_container(self, c: Container) -> None:
        """A container the node already had (running, or exited with its exit code): registered as
        create_container and start_container leave one. A running process's own exit (exitAfterSeconds) comes
        at its start plus that, or at once when that is past."""
        self.containers[c.id] = c
        self._by_pod.setdefault(c.pod_uid, {})[c.id] = c
        key = (c.pod_uid, c.name)
        self.log_attempts[key] = max(self.log_attempts.get(key, -1), c.attempt)
        self._exit_events[c.id] = self.kernel.event()
        if c.state == RUNNING:
            c.process_running = True
            if c.behavior.exit_after is not None:
                code = c.behavior.exit_code
                due = max((c.started_at or 0.0) + c.behavior.exit_after - self.kernel.now, 0.0)
                self._timers[c.id] = self.kernel.call_later(
                    due, lambda: self._exit(c, code, "Completed" if code == 0 else "Error"))
        else:
            self._exit_events[c.id].succeed()

    # ---- faults -----------------------------------------------------------------------------------

    def oom_kill(self, pod_uid: str, name: str) -> bool:
        """The kernel's OOM killer ends the container's process (SIGKILL): exit 137, reason OOMKilled."""
        for c in self.pod_containers(pod_uid):
            if c.name == name and c.process_running:
                self._signal(c, "SIGKILL", None)
                self._kill(c, "OOMKilled")
                return True
        return False

    def power_off(self) -> None:
        """The machine disappears: every process ends and nothing of the runtime's state survives."""
        for c in list(self.containers.values()):
            if c.process_running:
                c.state, c.process_running = EXITED, False
                c.exit_code, c.reason, c.finished_at = SIGKILL_EXIT, "Error", self.kernel.now
                self.kernel.cancel(self._timers.pop(c.id, None))
                self._record(c.pod_ref, c.name, "exit", "node powered off")
                self._exit_events[c.id].succeed()
        self.containers.clear()
        self._by_pod.clear()
        for sb in self.sandboxes.values():
            if sb.state != SANDBOX_NOTREADY:
                self.ipam.release(sb.ip)
        self.sandboxes.clear()
        self._sandboxes_by_pod.clear()

    # ---- the layer below: shim and process (simulated from the container's behaviour) ------------------

    def _behavior(self, config: ContainerConfig) -> Behavior:
        """How the simulated process behaves: its podlife/behavior annotation, spec.behaviors, its command."""
        return behavior_for(config.pod, config.spec, self.behaviors)

    def _create(self, c: Container, sandbox: Sandbox, config: ContainerConfig) -> Call:
        """What CreateContainer does below the CRI: nothing can fail for a simulated process."""
        yield from ()

    def _launch(self, c: Container) -> Call:
        """StartContainer below the CRI: the process takes its startSeconds to run."""
        if c.behavior.start_seconds:
            yield self.kernel.timeout(c.behavior.start_seconds)

    def _running(self, c: Container) -> None:
        """The process runs: it exits by itself after exitAfterSeconds, if it does."""
        if c.behavior.exit_after is not None:
            code = c.behavior.exit_code
            self._timers[c.id] = self.kernel.call_later(
                c.behavior.exit_after, lambda: self._exit(c, code, "Completed" if code == 0 else "Error"))

    def _terminate(self, c: Container, sig: str) -> None:
        """The stop signal reaches the process: with onTerm exit, it ends termSeconds after the first one."""
        if c.behavior.on_term == "exit" and sig not in c.signals[:-1]:
            code = c.behavior.exit_code if c.behavior.term_exit_code is None else c.behavior.term_exit_code
            self.kernel.call_later(c.behavior.term_seconds,
                                   lambda: self._exit(c, code, "Completed" if code == 0 else "Error"))

    def _kill(self, c: Container, reason: str) -> simpy.Event | None:
        """SIGKILL for everything in the container: a simulated process is gone at once. Returns an event to
        wait for when the process ends later."""
        self._exit(c, SIGKILL_EXIT, reason)
        return None

    def run_hook(self, c: Container, hook: str, handler: Obj, spec: Obj) -> Call:
        """A postStart or preStop handler acting on the container (pkg/kubelet/lifecycle/handlers.go): an exec
        handler runs through ExecSync, an HTTP one waits for the simulated process; both take the hook's
        hookSeconds. Returns the error, or ""."""
        seconds = c.behavior.hook_seconds.get(hook, 0.0)
        code = c.behavior.hook_exit_code.get(hook, 0)
        if "exec" in handler:
            code = yield from self.exec_sync(c.id, seconds, code)
        else:
            yield self.kernel.timeout(seconds)
        return f"command exited with {code}" if code else ""

    def probe(self, c: Container, probe: Obj, spec: Obj, pod_ip: str, elapsed: float, done: ProbeDone) -> None:
        """What a probe finds (pkg/kubelet/prober/prober.go runProbe): a simulated process answers from its
        behaviour, at once: it fails before readySeconds and from failProbesAfterSeconds on."""
        b = c.behavior
        if elapsed < b.ready_seconds or (b.fail_probes_after is not None and elapsed >= float(b.fail_probes_after)):
            done("Failure", _failure_output(probe, pod_ip))
        else:
            done("Success", "")

    def probe_answers_change(self, c: Container, after: float) -> float | None:
        """When the process's answers to probes may next change after ``after`` (None: never; ``after`` itself:
        at any moment)."""
        b = c.behavior
        if b.fail_probes_after is not None:
            t = (c.started_at or after) + float(b.fail_probes_after)
            if after < t:
                return t
        return None

    # ---- process model ----------------------------------------------------------------------------

    def _exit(self, c: Container, code: int, reason: str) -> None:
        """The process ends; the layer above learns of it through the exit event, unless that is lost."""
        if not c.process_running:
            return
        c.process_running = False
        c.exit_code = code
        c.reason = reason
        c.finished_at = self.kernel.now
        self.kernel.cancel(self._timers.pop(c.id, None))
        self._record(c.pod_ref, c.name, "exit", f"exitCode {code}")
        if not c.exit_lost:
            self._deliver_exit(c)

    def _deliver_exit(self, c: Container) -> None:
        """TaskExit reaches the top layer: the CRI now reports the container exited."""
        if c.state != RUNNING:
            return
        c.state = EXITED
        self._exit_events[c.id].succeed()
        self._changed(c.pod_uid)

    # ---- locks and outages ------------------------------------------------------------------------

    def _lock(self, c: Container) -> Call:
        """dockerd's per-container lock: held for ever by a hung operation; a down runtime answers nothing."""
        while (c.hung and self.profile.id_scheme == "docker") or self.down:
            yield self._heal_event()

    def _heal_event(self) -> simpy.Event:
        if self._heal is None or self._heal.triggered:
            self._heal = self.kernel.event()
        return self._heal

    def _healed(self) -> None:
        if self._heal is not None and not self._heal.triggered:
            self._heal.succeed()

    def list_blocked(self) -> bool:
        """Listing containers blocks: the runtime is down, or docker 1.13 locks each container in `ps`."""
        return self.down or (self.profile.list_locks_container and any(
            c.hung for c in self.containers.values()))

    def inspect_blocked(self) -> bool:
        """Inspecting every container (cadvisor's start) blocks on a hung container's lock."""
        return self.down or (self.profile.id_scheme == "docker" and any(c.hung for c in self.containers.values()))

    def set_hung(self, c: Container, hung: bool) -> None:
        c.hung = hung
        if not hung:
            self._healed()

    def set_down(self, down: bool) -> None:
        self.down = down
        if not down:
            self._healed()

    def restart(self) -> None:
        """The runtime daemon restarts: it re-reads the layer below, so lost exits are found and hung
        operations are gone."""
        for c in list(self.containers.values()):
            c.hung = False
            c.exit_lost = False
            if c.state == RUNNING and not c.process_running:
                self._deliver_exit(c)
        self._healed()

    def lose_exit_event(self, c: Container) -> None:
        c.exit_lost = True

    def process_exit(self, c: Container) -> None:
        """The container's process ends by itself (as under a LostExitEvent fault: an OOM on the node)."""
        self._kill(c, "OOMKilled")

    def _signal(self, c: Container, sig: str, timeout: int | None) -> None:
        c.signals.append(sig)
        if not c.process_running:
            return  # the process is already gone (its exit was lost): nothing receives it
        rec: dict[str, Any] = {"node": self.node, "object": c.pod_ref, "container": c.name, "signal": sig}
        if timeout is not None:
            rec["timeoutSeconds"] = timeout
        self.trace.emit("signal", **rec)

    def _record(self, pod_ref: str, container: str, op: str, detail: str) -> None:
        self.trace.emit("runtime", node=self.node, object=pod_ref, container=container or None, op=op,
                        detail=detail)

    def _changed(self, pod_uid: str) -> None:
        for fn in self.listeners:
            fn(pod_uid)

    def _forget(self, c: Container) -> None:
        self.containers.pop(c.id, None)
        mine = self._by_pod.get(c.pod_uid)
        if mine is not None:
            mine.pop(c.id, None)
            if not mine:
                del self._by_pod[c.pod_uid]

    def _get(self, container_id: str) -> Container:
        c = self.containers.get(container_id)
        if c is None:
            raise RuntimeError_(f'rpc error: code = NotFound desc = an error occurred when try to find container '
                                f'"{container_id}": not found')
        return c

    def _new_id(self) -> str:
        return f"{self._rng.getrandbits(256):064x}"


def _failure_output(probe: Obj, pod_ip: str) -> str:
    """What the prober reports for a failed probe of each handler type (pkg/probe/...)."""
    if "httpGet" in probe:
        return "HTTP probe failed with statuscode: 503"
    if "tcpSocket" in probe:
        return f"dial tcp {pod_ip}:{probe['tcpSocket'].get('port')}: connect: connection refused"
    if "grpc" in probe:
        return 'service unhealthy (responded with "NOT_SERVING")'
    return ""

"""The seams between the cluster's parts, declared: what each side may ask of the other.

The kubelet talks to its runtime only through ``ContainerRuntime`` (the CRI calls pkg/kubelet/cri/remote makes)
and reads the node's usage only through ``NodeStats`` (cadvisor and the CRI stats the eviction manager and
metrics-server read); faults act on a node only through ``NodeFaults`` (and the runtime's ``RuntimeFaults``);
controllers are started through ``Controller``. Both runtimes (runtime.containerd, simulated; runtime.process,
real processes) declare ``ContainerRuntime``, ``NodeStats`` and ``RuntimeFaults``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import simpy

if TYPE_CHECKING:
    from podlife.api.meta import Obj
    from podlife.runtime.cri import Container, ContainerConfig, Sandbox
    from podlife.runtime.profiles import RuntimeProfile
    from podlife.versions import Profile

Call = Generator[simpy.Event, Any, Any]        # a CRI call: a process that takes simulated time
ProbeDone = Callable[[str, str], None]        # (Success | Failure, the prober's output)


class Controller(Protocol):
    """A control loop of the controller-manager (or the API server's, or an external one): it watches the
    store from start() on."""

    def start(self) -> None: ...


class ContainerRuntime(Protocol):
    """The CRI as the kubelet uses it (k8s.io/cri-api RuntimeService and ImageService, the calls of
    pkg/kubelet/kuberuntime), plus the runtime's events to the PLEG (``listeners``)."""

    profile: RuntimeProfile                        # the runtime's id scheme, version and timings
    listeners: list[Callable[[str], None]]         # called with a pod uid on every state change (the PLEG)
    log_attempts: dict[tuple[str, str], int]       # (pod uid, container) -> newest attempt with a log file

    down: bool                                     # the runtime's socket does not answer (Status fails)
    writes_volumes: bool                           # wants the API-data volumes' files (set_up_volumes)

    def list_containers(self) -> list[Container]: ...             # ListContainers
    def pod_sandboxes(self, pod_uid: str) -> list[Sandbox]: ...   # ListPodSandbox, filtered by pod
    def pod_containers(self, pod_uid: str) -> list[Container]: ...  # ListContainers, filtered by pod
    def container_id(self, c: Container) -> str: ...              # kubecontainer.ContainerID: scheme://id
    def termination_message(self, c: Container) -> str: ...       # an exited container's status message
    def list_blocked(self) -> bool: ...                           # a relist would not return
    def inspect_blocked(self) -> bool: ...                        # inspecting every container would not
    def run_pod_sandbox(self, pod: Obj) -> Call: ...
    def stop_pod_sandbox(self, sandbox_id: str) -> Call: ...
    def create_container(self, sandbox: Sandbox, config: ContainerConfig) -> Call: ...
    def start_container(self, container_id: str) -> Call: ...
    def stop_container(self, container_id: str, timeout: int) -> Call: ...
    def remove_container(self, container_id: str) -> Call: ...
    def has_image(self, image: str) -> bool: ...                  # ImageStatus
    def pull_image(self, image: str, seconds: float = 0.0) -> Call: ...
    def run_hook(self, c: Container, hook: str, handler: Obj, spec: Obj) -> Call: ...   # ExecSync / HTTP
    def probe(self, c: Container, probe: Obj, spec: Obj, pod_ip: str, elapsed: float,
              done: ProbeDone) -> None: ...
    def probe_answers_change(self, c: Container, after: float) -> float | None: ...
    def set_up_volumes(self, pod: Obj, payloads: dict[str, dict[str, tuple[bytes, int]]]) -> None: ...
    # GetPodDNS's Warning events (reason, message) for the sandbox just made, from a runtime that writes the
    # pod's resolv.conf (the process runtime); taken once
    def dns_events(self, pod_uid: str) -> list[tuple[str, str]]: ...
    # the Warning events (reason, message) of the container's hook just run (LifecycleHTTPFallback); taken once
    def hook_events(self, container_id: str) -> list[tuple[str, str]]: ...


@dataclass
class MachineUsage:
    """What the machine holds apart from the kubelet: its memory in use outside the pods and its disk in use
    (MemoryUsage / DiskUsage faults set them). It survives kubelet restarts: the node's runtime keeps it."""

    memory: int = 0          # working set outside pods (system daemons, kernel, other processes)
    disk: int = 0            # bytes used on the node filesystem
    generation: dict[str, int] = field(default_factory=lambda: {"memory": 0, "disk": 0})


class NodeStats(Protocol):
    """What the node's stats say of memory, disk, processes and pods (the summary API of
    pkg/kubelet/server/stats, cadvisor underneath): read by the eviction manager and metrics-server."""

    machine: MachineUsage                                   # the node's own use, beyond its pods

    def pods_working_set(self) -> int: ...                  # bytes, every running container on the node
    def pod_working_set(self, pod_uid: str) -> int: ...     # bytes, the pod's running containers
    def container_working_sets(self, pod_uid: str) -> list[tuple[str, int]]: ...   # (running container, bytes)
    def running_processes(self) -> int: ...
    def ready_sandbox_pods(self) -> set[str]: ...           # uids of pods with a ready sandbox
    def pod_usage_at(self, pod_uid: str, at: float, resource: str) -> int | None:
        """metrics-server's scrape at ``at``: cpu in millicores, memory working set in milli-bytes, summed over
        the pod's containers running then; None when none was."""


class NodeRuntime(ContainerRuntime, NodeStats, Protocol):
    """What the kubelet holds: the runtime it calls and the stats it reads of the same node."""


class RuntimeFaults(Protocol):
    """What a fault can do to a node's runtime (the layer below the CRI: the daemon, the shim, the kernel)."""

    def power_off(self) -> None: ...
    def set_down(self, down: bool) -> None: ...
    def restart(self) -> None: ...
    def set_hung(self, c: Container, hung: bool) -> None: ...
    def lose_exit_event(self, c: Container) -> None: ...
    def process_exit(self, c: Container) -> None: ...
    def oom_kill(self, pod_uid: str, name: str) -> bool: ...
    def remove_image(self, image: str) -> None: ...


class NodeFaults(Protocol):
    """What a fault does to one node (podlife.cluster.faults): every call acts on the node's kubelet as it is
    now (a heal after a kubelet restart reaches the new one) and on its runtime."""

    def set_partitioned(self, cut: bool) -> None: ...   # the kubelet loses the API server
    def kubelet_running(self) -> bool: ...
    def stop_kubelet(self) -> None: ...
    def start_kubelet(self) -> None: ...                # a new kubelet process, no memory of the old one
    def power_off(self) -> None: ...                    # the kubelet and every process go, state with them
    def shutdown(self) -> None: ...                     # systemd's shutdown: graceful if the kubelet is set to
    def runtime_down(self, down: bool) -> None: ...
    def restart_runtime(self) -> None: ...
    def fail_image_pulls(self, image: str, failing: bool) -> None: ...
    def container(self, pod: str, name: str) -> Container | None: ...   # the newest of that name, pod ns/name
    def hang_container(self, c: Container, hung: bool) -> None: ...
    def lose_exit_event(self, c: Container) -> None: ...
    def oom_kill(self, pod: str, name: str) -> None: ...
    def set_usage(self, kind: str, value: str) -> Callable[[], None]: ...   # returns the undo


Admission = Callable[[Any], Sequence[Any]]   # the store -> its admission plugins (podlife.api.admission)


def no_admission(_store: Any) -> Sequence[Any]:
    """A store without the apiserver's admission chain (unit tests of the registry alone)."""
    return ()


@dataclass(frozen=True)
class StoreOptions:
    """The Store's collaborators and options, given whole when it is made. ``profile`` and ``admission`` have
    no default: a store for the wrong version, or silently without admission, answers wrongly."""

    profile: Profile                               # the version's behaviour (registry strategies, validation)
    admission: Admission                           # podlife.api.admission.default_plugins, or no_admission
    history_size: int = 1000                       # the watch cache's window (--watch-cache-sizes)
    served: Callable[[str, str], Any] | None = None   # discovery of built-in kinds outside the model
    # podlife up: records the managedFields of the model's own creates and updates (podlife.apiserver.managers)
    manage: Callable[[str, Obj | None, Obj, str, str, str], None] | None = None
    log: Any = None                                # podlife.api.storage.SqliteLog: every revision written there
    # who is told when a kubelet's computed Lease renewals stop or resume (NodeStatus.renewals_changed)
    lease_observers: list[Callable[[str], None]] = field(default_factory=list)

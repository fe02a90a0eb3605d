"""CRI shapes (k8s.io/cri-api): sandboxes, containers, and the errors a runtime call can end with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from podlife.runtime.behavior import Behavior

CREATED, RUNNING, EXITED, UNKNOWN = "CONTAINER_CREATED", "CONTAINER_RUNNING", "CONTAINER_EXITED", "CONTAINER_UNKNOWN"
SANDBOX_READY, SANDBOX_NOTREADY = "SANDBOX_READY", "SANDBOX_NOTREADY"


class RuntimeError_(Exception):
    """A failed CRI call, with the gRPC-style text the kubelet logs."""


@dataclass
class Sandbox:
    """A pod sandbox as the runtime keeps it."""

    id: str
    pod_uid: str
    pod_ref: str          # Pod/namespace/name, for the trace
    namespace: str
    name: str
    ip: str
    state: str = SANDBOX_READY
    created_at: float = 0.0
    log_directory: str = ""   # PodSandboxConfig.log_directory: <namespace>_<name>_<uid>, as under /var/log/pods


@dataclass
class ContainerConfig:
    """CreateContainer's ContainerConfig, as the kubelet generates it (kuberuntime_container.go
    generateContainerConfig): the command and args, the resolved environment, the working directory and
    the log path relative to the sandbox's log directory (``<name>/<restartCount>.log``). ``pod`` and ``spec``
    stand for the sandbox config and the container's spec, which a simulated runtime reads its behaviour from."""

    name: str
    image: str
    attempt: int
    command: list[str]
    args: list[str]
    env: list[tuple[str, str]]
    working_dir: str
    log_path: str
    pod: Any
    spec: Any
    stop_signal: str = ""     # lifecycle.stopSignal where the version passes it; "": the image's (SIGTERM)
    pod_ips: list[str] = field(default_factory=list)   # those makeMounts wrote the pod's /etc/hosts with


@dataclass
class Container:
    """A container as the runtime keeps it."""

    id: str
    sandbox_id: str
    pod_uid: str
    pod_ref: str
    name: str
    image: str
    attempt: int
    behavior: Behavior
    state: str = CREATED            # as the CRI answers (for docker: dockerd's view of the container)
    process_running: bool = False   # the truth below (containerd, the shim, the process itself)
    hung: bool = False              # ContainerHang: calls that take this container's lock block
    exit_lost: bool = False         # LostExitEvent: dockerd never hears of the process's exit
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    exit_code: int | None = None
    reason: str = ""      # Completed | Error | OOMKilled | StartError
    message: str = ""     # why it ended, when the runtime says (a start that failed)
    stop_signal: str = "SIGTERM"    # ContainerConfig.StopSignal (KEP-4960), else the runtime's default
    log_path: str = ""
    signals: list[str] = field(default_factory=list)
    # what the node reported for a container adopted from a dump (podlife.importer): the resolved image and its
    # digest, which a simulated pull does not produce ("" : the spec's image, no digest)
    status_image: str = ""
    image_id: str = ""

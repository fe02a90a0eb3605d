"""Runtime profiles: the latencies and semantics that differ between container runtimes.

Latencies of the docker chain are read off the seed-000 kubelet log (docker 18.06, dockershim): an exec'd
``sleep 3`` preStop returned after 3.065-3.069 s, and a StopContainer whose process needed SIGKILL returned
0.17 s after its timeout.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuntimeProfile:
    """A container runtime's identity and the ways it differs from the others."""

    name: str
    id_scheme: str                 # ContainerID prefix: containerd:// or docker://
    version: str                   # nodeInfo.containerRuntimeVersion
    negative_timeout_waits: bool   # docker stop -t <0 waits for the process forever (moby daemon/stop.go)
    exec_overhead: float           # added to an exec'd hook or probe command
    stop_return_latency: float     # from the process's death to StopContainer returning
    sandbox_seconds: float         # RunPodSandbox: pause container and CNI setup
    list_locks_container: bool     # docker 1.13: `docker ps` takes each container's lock
    deadline_error: str            # what a call that outlives its deadline fails with


PROFILES: dict[str, RuntimeProfile] = {p.name: p for p in (
    RuntimeProfile("containerd", "containerd", "containerd://1.7.24", False, 0.0, 0.0, 0.0, False,
                   "rpc error: code = DeadlineExceeded desc = context deadline exceeded"),
    # dockershim's own timeout (pkg/kubelet/dockershim/libdocker: operationTimeout) surfaces as Unknown
    RuntimeProfile("docker-18.06", "docker", "docker://18.6.3", True, 0.067, 0.17, 0.0, False,
                   "rpc error: code = Unknown desc = operation timeout: context deadline exceeded"),
    RuntimeProfile("docker-1.13", "docker", "docker://1.13.1", True, 0.067, 0.17, 0.0, True,
                   "rpc error: code = Unknown desc = operation timeout: context deadline exceeded"),
)}

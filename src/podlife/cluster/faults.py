"""Faults: what goes wrong on a node, started by a scenario action (or the live API) and healed after ``for``.

``FAULTS`` is the one table of fault kinds: each row names the fields a scenario gives it (the loader checks them
against the row), and the code that starts it and returns its heal. Handlers act only through the node's
``NodeFaults`` (podlife.cluster.contracts): a partition cuts the kubelet off the API server, a kubelet stop ends
the kubelet's goroutines while its containers run on, a power-off takes the runtime's state with it.
Each start and heal is a ``fault`` trace record. Adding a fault kind: one row here, and its code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podlife.cluster.cluster import Cluster
    from podlife.cluster.contracts import NodeFaults
    from podlife.scenario.model import Fault

Heal = Callable[[], None]
Apply = Callable[["Cluster", "Fault"], "Heal | None"]   # starts the fault; its heal, if ``for`` can end it

_NODE = ("node",)
_CONTAINER = ("node", "pod", "container")


@dataclass(frozen=True)
class FaultKind:
    """A type of fault: the scenario fields it takes."""

    name: str
    required: tuple[str, ...]     # scenario fields besides ``type`` and ``for`` (allowed on every fault)
    optional: tuple[str, ...]
    apply: Apply
    needs_container: bool = False  # refused (404) when the pod's container is not on the node


def _node(cluster: Cluster, fault: Fault) -> NodeFaults:
    return cluster.nodes.faults(fault.node or "")


def _partition(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    node.set_partitioned(True)
    return lambda: node.set_partitioned(False)


def _kubelet_stop(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    node.stop_kubelet()
    return node.start_kubelet


def _kubelet_start(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    if not node.kubelet_running():
        node.start_kubelet()
    return None


def _kubelet_restart(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    node.stop_kubelet()
    node.start_kubelet()
    return None


def _power_off(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    node.power_off()
    return node.start_kubelet


def _node_shutdown(cluster: Cluster, fault: Fault) -> Heal | None:
    """systemd announces a shutdown: with graceful node shutdown the kubelet stops pods first; without it
    the machine simply goes down. ``for`` powers it back on."""
    node = _node(cluster, fault)
    node.shutdown()
    return node.start_kubelet


def _oom_kill(cluster: Cluster, fault: Fault) -> Heal | None:
    _node(cluster, fault).oom_kill(fault.pod or "", fault.container or "")
    return None


def _image_pull_failure(cluster: Cluster, fault: Fault) -> Heal | None:
    """Without ``node``, on every node (those that join later are healed too)."""
    def names() -> list[str]:
        return [fault.node] if fault.node else sorted(cluster.kubelets)

    image = fault.image or ""
    for name in names():
        cluster.nodes.faults(name).fail_image_pulls(image, True)

    def heal() -> None:
        for name in names():
            cluster.nodes.faults(name).fail_image_pulls(image, False)
    return heal


def _container_hang(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    c = node.container(fault.pod or "", fault.container or "")
    if c is None:
        return None
    node.hang_container(c, True)
    return lambda: node.hang_container(c, False)


def _lost_exit_event(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    c = node.container(fault.pod or "", fault.container or "")
    if c is not None:
        node.lose_exit_event(c)
    return None


def _runtime_down(cluster: Cluster, fault: Fault) -> Heal | None:
    node = _node(cluster, fault)
    node.runtime_down(True)
    return lambda: node.runtime_down(False)


def _runtime_restart(cluster: Cluster, fault: Fault) -> Heal | None:
    _node(cluster, fault).restart_runtime()
    return None


def _usage(kind: str) -> Apply:
    """MemoryUsage / DiskUsage: the node's memory or disk in use becomes ``value``, pods included, from now
    (what the eviction manager observes). Memory beyond what the pods' containers use is the node's own
    (system daemons, kernel) and stays as it is, so pods that start or stop change the total: evicting a pod
    frees its working set. The disk is the node filesystem (nodefs, shared with imagefs); pods use none of it
    in podlife. ``for`` restores the usage from before, unless a later fault has set it since."""
    def apply(cluster: Cluster, fault: Fault) -> Heal | None:
        return _node(cluster, fault).set_usage(kind, fault.value or "0")
    return apply


# The fault kinds, in the order error messages list them.
FAULTS: dict[str, FaultKind] = {k.name: k for k in (
    FaultKind("ContainerHang", _CONTAINER, (), _container_hang, needs_container=True),
    FaultKind("LostExitEvent", _CONTAINER, (), _lost_exit_event, needs_container=True),
    FaultKind("RuntimeDown", _NODE, (), _runtime_down),
    FaultKind("RuntimeRestart", _NODE, (), _runtime_restart),
    FaultKind("KubeletRestart", _NODE, (), _kubelet_restart),
    FaultKind("KubeletStop", _NODE, (), _kubelet_stop),
    FaultKind("KubeletStart", _NODE, (), _kubelet_start),
    FaultKind("NetworkPartition", _NODE, (), _partition),
    FaultKind("NodePowerOff", _NODE, (), _power_off),
    FaultKind("NodeShutdown", _NODE, (), _node_shutdown),
    FaultKind("MemoryUsage", ("node", "value"), (), _usage("memory")),
    FaultKind("DiskUsage", ("node", "value"), (), _usage("disk")),
    FaultKind("OOMKill", _CONTAINER, (), _oom_kill, needs_container=True),
    FaultKind("ImagePullFailure", ("image",), ("node",), _image_pull_failure),
)}


def _record(cluster: Cluster, fault: Fault, op: str) -> None:
    fields: dict[str, Any] = {k: v for k, v in (("pod", fault.pod), ("container", fault.container),
                                                 ("image", fault.image), ("value", fault.value),
                                                 ("for", fault.for_seconds)) if v is not None}
    cluster.trace.emit("fault", fault=fault.type, node=fault.node, op=op, fields=fields)


def start_fault(cluster: Cluster, fault: Fault) -> None:
    """Raises ApiError (the action's error) when a container fault finds no such container on its node: the
    scenario's pod or container name is wrong, or the pod is not there yet or any more."""
    from podlife.api.errors import ApiError

    kind = FAULTS[fault.type]
    if kind.needs_container and _node(cluster, fault).container(fault.pod or "", fault.container or "") is None:
        raise ApiError(404, "NotFound", f'no container "{fault.container}" of pod {fault.pod} is running on node '
                                        f"{fault.node}; the fault was not started")
    _record(cluster, fault, "start")
    heal = kind.apply(cluster, fault)
    if fault.for_seconds is not None and heal is not None:
        def do_heal() -> None:
            _record(cluster, fault, "heal")
            heal()
        cluster.kernel.call_later(fault.for_seconds, do_heal)

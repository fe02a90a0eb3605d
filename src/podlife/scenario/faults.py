"""Faults: what goes wrong on a node, started by a scenario action and healed after ``for``.

Each start and heal is a ``fault`` trace record. A fault acts on the model's real edges: a partition cuts
the kubelet off the API server, a kubelet stop ends the kubelet's goroutines while its containers run on,
a power-off takes the runtime's state with it.
"""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.cluster import Cluster
from podlife.kubelet.eviction import set_usage
from podlife.kubelet.kubelet import Kubelet
from podlife.scenario.model import Fault

# fault types podlife models; the others are refused when the scenario is loaded
MODELLED = frozenset({"NetworkPartition", "KubeletStop", "KubeletStart", "KubeletRestart", "NodePowerOff",
                      "OOMKill", "ImagePullFailure", "ContainerHang", "LostExitEvent", "RuntimeDown",
                      "RuntimeRestart", "NodeShutdown", "MemoryUsage", "DiskUsage"})


def _record(cluster: Cluster, fault: Fault, op: str) -> None:
    fields: dict[str, Any] = {k: v for k, v in (("pod", fault.pod), ("container", fault.container),
                                                 ("image", fault.image), ("value", fault.value),
                                                 ("for", fault.for_seconds)) if v is not None}
    cluster.trace.emit("fault", fault=fault.type, node=fault.node, op=op, fields=fields)


_CONTAINER_FAULTS = ("OOMKill", "ContainerHang", "LostExitEvent")


def start_fault(cluster: Cluster, fault: Fault) -> None:
    """Raises ApiError (the action's error) when a container fault finds no such container on its node: the
    scenario's pod or container name is wrong, or the pod is not there yet or any more."""
    if fault.type in _CONTAINER_FAULTS and _container(cluster, fault)[1] is None:
        raise ApiError(404, "NotFound", f'no container "{fault.container}" of pod {fault.pod} is running on node '
                                        f"{fault.node}; the fault was not started")
    _record(cluster, fault, "start")
    heal = _APPLY[fault.type](cluster, fault)
    if fault.for_seconds is not None and heal is not None:
        def do_heal() -> None:
            _record(cluster, fault, "heal")
            heal()
        cluster.kernel.call_later(fault.for_seconds, do_heal)


def _kubelet(cluster: Cluster, fault: Fault) -> Kubelet:
    return cluster.kubelets[fault.node or ""]


def _partition(cluster: Cluster, fault: Fault):
    _kubelet(cluster, fault).set_partitioned(True)
    return lambda: cluster.kubelets[fault.node or ""].set_partitioned(False)


def _kubelet_stop(cluster: Cluster, fault: Fault):
    _kubelet(cluster, fault).stop()
    return lambda: cluster.restart_kubelet(fault.node or "")


def _kubelet_start(cluster: Cluster, fault: Fault):
    if not _kubelet(cluster, fault).running:
        cluster.restart_kubelet(fault.node or "")
    return None


def _kubelet_restart(cluster: Cluster, fault: Fault):
    _kubelet(cluster, fault).stop()
    cluster.restart_kubelet(fault.node or "")
    return None


def _power_off(cluster: Cluster, fault: Fault):
    kl = _kubelet(cluster, fault)
    kl.stop()
    kl.runtime.power_off()
    return lambda: cluster.restart_kubelet(fault.node or "")


def _node_shutdown(cluster: Cluster, fault: Fault):
    """systemd announces a shutdown: with graceful node shutdown the kubelet stops pods first; without it
    the machine simply goes down. ``for`` powers it back on."""
    kl = _kubelet(cluster, fault)

    def power_off() -> None:
        if kl.running:
            kl.stop()
        kl.runtime.power_off()

    if kl.shutdown.enabled():
        kl.shutdown.start(power_off)
    else:
        power_off()
    return lambda: cluster.restart_kubelet(fault.node or "")


def _oom_kill(cluster: Cluster, fault: Fault):
    kl = _kubelet(cluster, fault)
    ns, _, name = (fault.pod or "").rpartition("/")
    pod = cluster.store.try_get("Pod", ns or "default", name)
    if pod is not None:
        kl.runtime.oom_kill(pod["metadata"]["uid"], fault.container or "")
    return None


def _image_pull_failure(cluster: Cluster, fault: Fault):
    kubelets = [cluster.kubelets[fault.node]] if fault.node else [cluster.kubelets[n] for n in sorted(cluster.kubelets)]
    image = fault.image or ""
    for kl in kubelets:
        kl.images.failing.add(image)
        kl.runtime.absent_images.add(image)

    def heal() -> None:
        for name in ([fault.node] if fault.node else sorted(cluster.kubelets)):
            cluster.kubelets[name].images.failing.discard(image)
    return heal


def _container(cluster: Cluster, fault: Fault):
    kl = _kubelet(cluster, fault)
    ns, _, name = (fault.pod or "").rpartition("/")
    pod = cluster.store.try_get("Pod", ns or "default", name)
    uid = pod["metadata"]["uid"] if pod is not None else None
    found = kl.runtime_manager.latest(uid).get(fault.container or "") if uid else None
    return kl, found


def _container_hang(cluster: Cluster, fault: Fault):
    kl, c = _container(cluster, fault)
    if c is None:
        return None
    kl.runtime.set_hung(c, True)
    kl.runtime_changed()

    def heal() -> None:
        kl.runtime.set_hung(c, False)
        cluster.kubelets[fault.node or ""].runtime_changed()
    return heal


def _lost_exit_event(cluster: Cluster, fault: Fault):
    kl, c = _container(cluster, fault)
    if c is None:
        return None
    kl.runtime.lose_exit_event(c)
    if c.state == "CONTAINER_RUNNING" and not c.process_running:
        pass  # already exited: nothing more is lost
    elif not c.process_running:
        return None
    # the process ends now; its exit event never reaches dockerd
    kl.runtime.process_exit(c)
    return None


def _runtime_down(cluster: Cluster, fault: Fault):
    kl = _kubelet(cluster, fault)
    kl.runtime.set_down(True)
    kl.runtime_changed()

    def heal() -> None:
        kl.runtime.set_down(False)
        cluster.kubelets[fault.node or ""].runtime_changed()
    return heal


def _runtime_restart(cluster: Cluster, fault: Fault):
    kl = _kubelet(cluster, fault)
    kl.runtime.restart()
    cluster.kubelets[fault.node or ""].runtime_changed()
    return None


def _usage(kind: str):
    """MemoryUsage / DiskUsage: the node's memory or disk in use becomes ``value``, pods included, from now
    (what the eviction manager observes). Memory beyond what the pods' containers use is the node's own
    (system daemons, kernel) and stays as it is, so pods that start or stop change the total: evicting a pod
    frees its working set. The disk is the node filesystem (nodefs, shared with imagefs); pods use none of it
    in podlife. ``for`` restores the usage from before, unless a later fault has set it since."""
    def apply(cluster: Cluster, fault: Fault):
        undo = set_usage(_kubelet(cluster, fault), kind, fault.value or "0")
        return lambda: undo(cluster.kubelets[fault.node or ""])
    return apply


_APPLY = {
    "MemoryUsage": _usage("memory"),
    "DiskUsage": _usage("disk"),
    "NodeShutdown": _node_shutdown,
    "ContainerHang": _container_hang,
    "LostExitEvent": _lost_exit_event,
    "RuntimeDown": _runtime_down,
    "RuntimeRestart": _runtime_restart,
    "NetworkPartition": _partition,
    "KubeletStop": _kubelet_stop,
    "KubeletStart": _kubelet_start,
    "KubeletRestart": _kubelet_restart,
    "NodePowerOff": _power_off,
    "OOMKill": _oom_kill,
    "ImagePullFailure": _image_pull_failure,
}
assert set(_APPLY) == MODELLED

"""The node's API objects: pkg/kubelet/kubelet_node_status.go, nodestatus/setters.go, nodelease.

A healthy kubelet renews its Lease every 10 s and posts status every nodeStatusUpdateFrequency. podlife does
not simulate those writes one by one: while the kubelet can reach the API, the last renewal is a computed
fact (``last_heartbeat``), and the objects are brought up to date only when someone looks (``materialize``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from podlife.api.meta import Obj, clone
from podlife.api.quantity import parse_quantity
from podlife.engine.sha256 import sha256

# a simulated node has no kernel; a plausible release string, so clients that print it have one
KERNEL_VERSION = "6.8.0-podlife"


def system_ids(seed: int, node: str) -> dict[str, str]:
    """NodeSystemInfo's machineID, systemUUID and bootID (staging/src/k8s.io/api/core/v1/types.go: not
    omitempty, so every client expects them): /etc/machine-id's 32 hex digits, the DMI product UUID and the
    kernel's boot_id, drawn from the seed and the node's name so a run's are the same every time."""
    digest = sha256(f"{seed}/nodeinfo/{node}".encode()).hexdigest()

    def uuid(h: str) -> str:
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:32]}"
    return {"machineID": digest[:32], "systemUUID": uuid(digest[32:64]), "bootID": uuid(digest[:32][::-1])}

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

LEASE_RENEW_FRACTION = 0.25  # renewInterval = 0.25 × leaseDuration (pkg/kubelet/kubelet.go)
# component-helpers/apimachinery/lease/controller.go backoffEnsureLease: the sleep starts at 100 ms and doubles
# before each wait, up to maxBackoff
LEASE_FIRST_SLEEP = 0.1
LEASE_MAX_BACKOFF = 7.0


def ensure_attempt(origin: float, t: float) -> float:
    """The first of backoffEnsureLease's attempts (origin, +0.2, +0.6, +1.4, … then every 7 s) at or after t."""
    at, sleep = origin, LEASE_FIRST_SLEEP
    while at < t - 1e-9:
        sleep = min(2 * sleep, LEASE_MAX_BACKOFF)
        if sleep == LEASE_MAX_BACKOFF:
            return round(at + LEASE_MAX_BACKOFF * math.ceil((t - at) / LEASE_MAX_BACKOFF - 1e-9), 6)
        at = round(at + sleep, 6)
    return at

READY_TRUE = ("KubeletReady", "kubelet is posting ready status")
# kubelet_node_status.go updateDefaultLabels: the labels the kubelet owns on its Node
DEFAULT_LABELS = ("kubernetes.io/hostname", "kubernetes.io/os", "kubernetes.io/arch", "beta.kubernetes.io/os",
                  "beta.kubernetes.io/arch")
PRESSURE_FALSE = {
    "MemoryPressure": ("KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("KubeletHasSufficientPID", "kubelet has sufficient PID available"),
}
PRESSURE_TRUE = {
    "MemoryPressure": ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    "DiskPressure": ("KubeletHasDiskPressure", "kubelet has disk pressure"),
    "PIDPressure": ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
}
# the node event recorded when the condition turns True / False
PRESSURE_EVENTS = {
    "MemoryPressure": ("NodeHasInsufficientMemory", "NodeHasSufficientMemory"),
    "DiskPressure": ("NodeHasDiskPressure", "NodeHasNoDiskPressure"),
    "PIDPressure": ("NodeHasInsufficientPID", "NodeHasSufficientPID"),
}


def set_pressure_condition(kl: Kubelet, cond: Obj, now_ts: str) -> None:
    """nodestatus/setters.go MemoryPressureCondition / DiskPressureCondition / PIDPressureCondition: True while
    the eviction manager reports the pressure; a change records "Node X status is now: NodeHas…"."""
    under = kl.eviction.under_pressure(cond["type"])
    status = "True" if under else "False"
    reason, message = (PRESSURE_TRUE if under else PRESSURE_FALSE)[cond["type"]]
    if cond.get("status") != status:
        cond["lastTransitionTime"] = now_ts
        event = PRESSURE_EVENTS[cond["type"]][0 if under else 1]
        kl.events.node_event("Normal", event, f"Node {kl.node_name} status is now: {event}")
    cond.update(status=status, reason=reason, message=message, lastHeartbeatTime=now_ts)


class NodeStatus:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.reachable_since = 0.0   # Lease renewals run from here while the API is reachable
        self.resume_at = 0.0         # ... and not before this (after a heal: backoffEnsureLease's next attempt)
        self.backoff_from: float | None = None   # the failed sync that started backoffEnsureLease's attempts
        self.api_since = 0.0         # the API reachable since (a heal)
        # kubelet.go Run: go wait.JitterUntil(kl.syncNodeStatus, nodeStatusUpdateFrequency, 0.04, true, …) runs
        # from the kubelet's start and on through a partition (its updates fail there, at once, as podlife's
        # partition refuses calls), so the status grid is anchored here, not at a heal; jitter not modelled
        self.status_since = 0.0

    @property
    def renew_interval(self) -> float:
        return self.kl.config.nodeLeaseDurationSeconds * LEASE_RENEW_FRACTION

    def renewing(self) -> bool:
        """Read-only: whether the Lease renewals go on by themselves (the kubelet runs and reaches the API).
        The node lifecycle controller asks, so that it need not look at a healthy node's Lease every period."""
        return self.kl.running and self.kl.can_reach_api() and self.kl.kernel.now >= self.resume_at - 1e-9

    def healed(self) -> None:
        """The API is reachable again. lease/controller.go sync: a renewal that failed in the partition (the
        partition's calls fail at once) left the controller in backoffEnsureLease, whose next attempt after the
        heal renews the Lease and restarts the renewal grid there; a partition that no sync saw changes nothing."""
        kl = self.kl
        now = kl.kernel.now
        self.api_since = now
        if self.backoff_from is None:
            last = kl.last_contact
            first_sync = now if last is None else last + self.renew_interval
            if first_sync >= now - 1e-9:
                self.renewals_changed()
                return
            self.backoff_from = first_sync
        self.resume_at = self.reachable_since = ensure_attempt(self.backoff_from, now)
        kl.kernel.call_at(self.resume_at, self._renewed)

    def _renewed(self) -> None:
        kl = self.kl
        if not kl.running or not kl.can_reach_api() or kl.kernel.now < self.resume_at - 1e-9:
            return   # partitioned again (the attempts go on) or restarted
        self.backoff_from = None
        self.renewals_changed()

    def renewals_changed(self) -> None:
        """Renewals started or stopped (partition, heal, kubelet stop or start): tell the Lease's observers
        (``store.lease_observers``, StoreOptions), as a Lease informer would see the stream of renewals
        end or resume. Nothing is written."""
        for fn in list(self.kl.store.lease_observers):
            fn(self.kl.node_spec.name)

    def last_heartbeat(self, now: float) -> float | None:
        """When the lease was last renewed, as of ``now`` (None if never)."""
        if not self.renewing():
            return self.kl.last_contact
        k = math.floor((now - self.reachable_since) / self.renew_interval + 1e-9)
        return self.reachable_since + k * self.renew_interval

    def node_object(self) -> Obj:
        kl = self.kl
        spec = kl.node_spec
        labels = {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": spec.name, "kubernetes.io/os": "linux",
                  "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux"}
        if spec.zone:
            labels["topology.kubernetes.io/zone"] = spec.zone
        labels.update(spec.labels)
        capacity = dict(spec.capacity)
        capacity.setdefault("pods", str(kl.config.maxPods))
        now = kl.trace.timestamp()
        conds = [{"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": now,
                  "lastTransitionTime": now} for t, (r, m) in PRESSURE_FALSE.items()]
        conds.append({"type": "Ready", "status": "True", "reason": READY_TRUE[0], "message": READY_TRUE[1],
                      "lastHeartbeatTime": now, "lastTransitionTime": now})
        node: Obj = {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": spec.name, "labels": labels},
            "spec": {"podCIDR": spec.podCIDR, "podCIDRs": [spec.podCIDR]},
            "status": {
                "capacity": capacity, "allocatable": dict(capacity), "conditions": conds,
                "addresses": [{"type": "InternalIP", "address": kl.node_ip},
                              {"type": "Hostname", "address": spec.name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {**system_ids(kl.kernel.seed, spec.name), "kernelVersion": KERNEL_VERSION,
                             "osImage": "podlife simulated node",
                             "containerRuntimeVersion": kl.runtime.profile.version,
                             "kubeletVersion": f"v{kl.profile.version}.0",
                             "kubeProxyVersion": f"v{kl.profile.version}.0",
                             "operatingSystem": "linux", "architecture": "amd64"},
            },
        }
        if spec.taints:
            node["spec"]["taints"] = [dict(t) for t in spec.taints]
        return node

    def register(self) -> None:
        kl = self.kl
        mine = self.node_object()
        existing = kl.store.try_get("Node", None, kl.node_spec.name)
        if existing is None:
            kl.store.create(mine, by="kubelet")
        else:
            # kubelet_node_status.go tryRegisterWithAPIServer: AlreadyExists → the existing Node is this
            # kubelet's; updateDefaultLabels sets its default labels, then the first status update posts its
            # capacity and conditions (a missing podCIDR is podlife's node IPAM)
            node = clone(existing)
            node.setdefault("metadata", {}).setdefault("labels", {}).update(
                {k: v for k, v in mine["metadata"]["labels"].items() if k not in node["metadata"]["labels"]
                 or k in DEFAULT_LABELS})
            if not (node.get("spec") or {}).get("podCIDR"):
                node.setdefault("spec", {}).update(mine["spec"])
            if node != existing:
                node = kl.store.update(node, by="kubelet")
            node = clone(node)
            node["status"] = mine["status"]
            kl.store.update(node, by="kubelet", subresource="status")
        kl.store.create({
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": kl.node_spec.name, "namespace": "kube-node-lease"},
            "spec": {"holderIdentity": kl.node_spec.name, "leaseDurationSeconds": kl.config.nodeLeaseDurationSeconds,
                     "renewTime": kl.trace.micro_timestamp()},
        }, by="kubelet")
        self._started()
        kl.store.add_materializer("Lease", "kube-node-lease", kl.node_spec.name, self.refresh_lease)

    def _started(self) -> None:
        """A kubelet process starts: its status loop and Lease controller sync at once (a first renewal that
        fails, partitioned, starts backoffEnsureLease there)."""
        now = self.kl.kernel.now
        self.reachable_since = self.status_since = self.resume_at = self.api_since = now
        self.backoff_from = None if self.kl.can_reach_api() else now

    def status_tick(self, now: float, after: bool) -> float:
        """The node-status grid's tick at or before ``now`` (``after``: at or after it)."""
        f = self.kl.config.nodeStatusUpdateFrequency
        k = (now - self.status_since) / f
        return self.status_since + f * (math.ceil(k - 1e-9) if after else math.floor(k + 1e-9))

    def refresh_lease(self, lease: Obj) -> None:
        """Store materializer: the Lease as this kubelet's renewals have left it by now."""
        kl = self.kl
        hb = self.last_heartbeat(kl.kernel.now)
        if hb is None:
            return
        renew = kl.trace.micro_timestamp(hb)
        if lease["spec"].get("renewTime") != renew:
            new = clone(lease)
            new["spec"]["renewTime"] = renew
            kl.store.update(new, by="kubelet", quiet=True)

    def resume(self) -> None:
        """A kubelet starting on a registered node: it updates its Node and renews its Lease at once."""
        kl = self.kl
        self._started()
        kl.store.add_materializer("Lease", "kube-node-lease", kl.node_spec.name, self.refresh_lease)
        kl.store.try_get("Lease", "kube-node-lease", kl.node_spec.name)

    def materialize(self) -> None:
        """Write the computed heartbeats into the Lease and the node's conditions (no trace records)."""
        kl = self.kl
        kl.store.try_get("Lease", "kube-node-lease", kl.node_spec.name)  # refreshed on read
        node = kl.store.try_get("Node", None, kl.node_spec.name)
        if node is not None and kl.running and kl.can_reach_api():
            # status is posted every nodeStatusUpdateFrequency while reachable; a tick before the heal failed
            tick = self.status_tick(kl.kernel.now, after=False)
            if tick < self.api_since - 1e-9:
                return
            posted = kl.trace.timestamp(tick)
            new = clone(node)
            for c in new["status"]["conditions"]:
                c["lastHeartbeatTime"] = posted
            if new != node:
                kl.store.update(new, by="kubelet", subresource="status", quiet=True)


def allocatable_millis(node: Obj, resource: str) -> int:
    v = node["status"].get("allocatable", {}).get(resource)
    if v is None:
        return 0
    q = parse_quantity(v)
    return math.ceil(q * 1000) if resource == "cpu" else math.ceil(q)

"""The cluster's nodes: each a kubelet over a runtime (simulated, or a local process host's), added at the start
or when a `join` action or a created Node brings one in, its kubelet restarted by faults."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podlife import features
from podlife.api.meta import Obj
from podlife.cluster.spec import NodeSpec, default_pod_cidr
from podlife.config import KubeletConfiguration
from podlife.engine import Kernel
from podlife.kubelet.kubelet import Kubelet
from podlife.kubelet.nodestatus import NodeStatus
from podlife.runtime.behavior import BehaviorRule
from podlife.runtime.containerd import ContainerdRuntime
from podlife.runtime.cri import RUNNING, Container
from podlife.runtime.profiles import PROFILES
from podlife.trace.recorder import Trace
from podlife.versions import Profile, profile

if TYPE_CHECKING:
    from podlife.api.store import Store
    from podlife.cluster.contracts import NodeFaults, NodeRuntime, RuntimeFaults

NODE_NETWORK = ipaddress.ip_network("10.0.0.0/16")


class Nodes:
    """Every node's kubelet (``kubelets``, by node name) and runtime; what faults do to one (``faults``)."""

    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile, config: KubeletConfiguration,
                 behaviors: tuple[BehaviorRule, ...], process_host: Any) -> None:
        self.kernel, self.trace, self.store = kernel, trace, store
        self.profile, self.config = profile, config   # the kubelets' version with their own featureGates
        self.profiles: dict[str, Profile] = {}   # other versions' (profile_of), made once each
        self.behaviors = behaviors
        # podlife up --runtime process: the nodes' containers are local processes (podlife.runtime.process.Host)
        self.process_host = process_host
        self.kubelets: dict[str, Kubelet] = {}
        self.runtimes: dict[str, RuntimeFaults] = {}

    def add_node(self, spec: NodeSpec, register: bool = True) -> Kubelet:
        """A node and its kubelet and runtime (at the start, or when a `join` action brings it in)."""
        index = len(self.kubelets)
        runtime: ContainerdRuntime
        if self.process_host is not None:
            runtime, spec.podCIDR, node_ip = self.process_host.node_runtime(self.kernel, self.trace, spec.name, index)
        else:
            if spec.podCIDR is None:   # a node that comes during the run: the loader's rule, clear of every node's
                taken = [ipaddress.ip_network(k.node_spec.podCIDR, strict=False) for k in self.kubelets.values()
                         if k.node_spec.podCIDR]
                found = default_pod_cidr(index, 0, taken)
                if found is None:
                    raise RuntimeError(f"no free /24 left in 10.0.0.0/8 for node {spec.name}'s podCIDR")
                spec.podCIDR = str(found[0])
            runtime = ContainerdRuntime(self.kernel, self.trace, spec.name, PROFILES[spec.runtime], spec.podCIDR,
                                        self.behaviors)
            node_ip = str(NODE_NETWORK.network_address + 10 + index)
        self.runtimes[spec.name] = runtime
        return self._start(spec, runtime, node_ip, register)

    def _start(self, spec: NodeSpec, runtime: NodeRuntime, node_ip: str, register: bool) -> Kubelet:
        kl = Kubelet(self.kernel, self.trace, self.store, self.profile_of(spec), self.config, spec, runtime, node_ip)
        self.kubelets[spec.name] = kl
        kl.start(register=register)
        return kl

    def profile_of(self, spec: NodeSpec) -> Profile:
        """The node's kubelet's rules: the cluster's, or those of its own version (NodeSpec.kubelet_version) with
        the kubelets' gates that release knows (a gate it does not know is not set: the kubelet would refuse it)."""
        version = spec.kubelet_version
        if version is None or version == self.profile.version:
            return self.profile
        if version not in self.profiles:
            minor = int(version.split(".")[1])
            gates = {k: v for k, v in self.profile.set_gates.items() if features.check(k, v, minor) is None}
            self.profiles[version] = profile(version, gates)
        return self.profiles[version]

    def node_created(self, node: Obj) -> Kubelet | None:
        """A Node a create action made during the run, for a machine podlife assumes: its kubelet starts and
        registers against the existing Node, with the Node's labels, taints and capacity. (A Node among the
        scenario's objects stays bare: no kubelet ever posts its status.)"""
        md = node.get("metadata") or {}
        name = md.get("name", "")
        if node.get("kind") != "Node" or not name or name in self.kubelets:
            return None
        labels = dict(md.get("labels") or {})
        spec = NodeSpec(name=name, zone=labels.get("topology.kubernetes.io/zone"), labels=labels,
                        taints=[dict(t) for t in (node.get("spec") or {}).get("taints") or ()],
                        podCIDR=(node.get("spec") or {}).get("podCIDR"))
        spec.capacity = {**spec.capacity, **((node.get("status") or {}).get("capacity") or {})}
        return self.add_node(spec)

    def restart_kubelet(self, name: str) -> Kubelet:
        """A new kubelet process on the node: same runtime and node, no memory of the old one."""
        old = self.kubelets[name]
        kl = self._start(old.node_spec, old.runtime, old.node_ip, register=False)
        kl.images.failing = old.images.failing
        return kl

    def heartbeats(self, name: str) -> NodeStatus | None:
        """The node lifecycle controller's question: does this node's kubelet renew its Lease?"""
        kl = self.kubelets.get(name)
        return kl.node_status if kl is not None else None

    def running_stats(self) -> list[NodeRuntime]:
        """metrics-server's scrape: the nodes whose kubelet answers."""
        return [kl.runtime for kl in self.kubelets.values() if kl.running]

    def faults(self, name: str) -> NodeFaults:
        return Node(self, name)


class Node:
    """NodeFaults for one node: each call finds the node's kubelet as it is now."""

    def __init__(self, nodes: Nodes, name: str) -> None:
        self.nodes, self.name = nodes, name

    @property
    def _kl(self) -> Kubelet:
        return self.nodes.kubelets[self.name]

    @property
    def _runtime(self) -> RuntimeFaults:
        return self.nodes.runtimes[self.name]

    def set_partitioned(self, cut: bool) -> None:
        self._kl.set_partitioned(cut)

    def kubelet_running(self) -> bool:
        return self._kl.running

    def stop_kubelet(self) -> None:
        self._kl.stop()

    def start_kubelet(self) -> None:
        self.nodes.restart_kubelet(self.name)

    def power_off(self) -> None:
        if self._kl.running:
            self._kl.stop()
        self._runtime.power_off()

    def shutdown(self) -> None:
        """systemd announces a shutdown: with graceful node shutdown the kubelet stops pods first
        (pkg/kubelet/nodeshutdown); without it the machine simply goes down."""
        kl, runtime = self._kl, self._runtime

        def power_off() -> None:   # the kubelet that began the shutdown
            if kl.running:
                kl.stop()
            runtime.power_off()

        if kl.shutdown.enabled():
            kl.shutdown.start(power_off)
        else:
            power_off()

    def runtime_down(self, down: bool) -> None:
        self._runtime.set_down(down)
        self._kl.runtime_changed()

    def restart_runtime(self) -> None:
        self._runtime.restart()
        self._kl.runtime_changed()

    def fail_image_pulls(self, image: str, failing: bool) -> None:
        if failing:
            self._kl.images.failing.add(image)
            self._runtime.remove_image(image)
        else:
            self._kl.images.failing.discard(image)

    def _pod_uid(self, pod: str) -> str | None:
        ns, _, name = pod.rpartition("/")
        found = self.nodes.store.try_get("Pod", ns or "default", name)
        return found["metadata"]["uid"] if found is not None else None

    def container(self, pod: str, name: str) -> Container | None:
        uid = self._pod_uid(pod)
        return self._kl.runtime_manager.latest(uid).get(name) if uid else None

    def hang_container(self, c: Container, hung: bool) -> None:
        self._runtime.set_hung(c, hung)
        self._kl.runtime_changed()

    def lose_exit_event(self, c: Container) -> None:
        """The container's exit event never reaches the runtime's daemon; a running process ends now."""
        self._runtime.lose_exit_event(c)
        if c.process_running or (c.state == RUNNING and not c.process_running):
            self._runtime.process_exit(c)

    def oom_kill(self, pod: str, name: str) -> None:
        uid = self._pod_uid(pod)
        if uid is not None:
            self._runtime.oom_kill(uid, name)

    def set_usage(self, kind: str, value: str) -> Callable[[], None]:
        from podlife.kubelet.eviction import set_usage

        undo = set_usage(self._kl, kind, value)
        return lambda: undo(self._kl)

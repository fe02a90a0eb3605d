"""A simulated cluster: kernel, trace, API store, control plane and one kubelet + runtime per node."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from podlife.api import admission, schema
from podlife.api.meta import Obj
from podlife.api.store import Store, ensure_namespaces
from podlife.config import (
    ApiServerConfiguration,
    ControllerManagerConfiguration,
    KubeletConfiguration,
    SchedulerConfiguration,
)
from podlife.controlplane.controllers.nodelifecycle import NodeLifecycleController
from podlife.controlplane.controllers.podgc import PodGCController
from podlife.controlplane.controllers.tainteviction import TaintEvictionController
from podlife.controlplane.scheduler.scheduler import Scheduler
from podlife.engine import Kernel
from podlife.kubelet.kubelet import Kubelet
from podlife.kubelet.nodestatus import NodeStatus
from podlife.runtime.behavior import BehaviorRule
from podlife.runtime.containerd import ContainerdRuntime
from podlife.runtime.profiles import PROFILES
from podlife.scenario.model import NodeSpec, default_pod_cidr
from podlife.trace.recorder import Record, Trace
from podlife.versions import Profile, profile

if TYPE_CHECKING:
    from podlife.api.storage import Persisted

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
NODE_NETWORK = ipaddress.ip_network("10.0.0.0/16")


class Cluster:
    def __init__(self, *, version: str, seed: int, start_time: datetime, nodes: list[NodeSpec],
                 kubelet: KubeletConfiguration | None = None, scheduler: SchedulerConfiguration | None = None,
                 controller_manager: ControllerManagerConfiguration | None = None,
                 api_server: ApiServerConfiguration | None = None,
                 behaviors: tuple[BehaviorRule, ...] = (), trace_level: str = "full", keep_trace: bool = True,
                 trace_sinks: Sequence[Callable[[Record], None]] = (), process_host: Any = None,
                 persisted: Persisted | None = None, manage: Any = None,
                 feature_gates: dict[str, bool] | None = None, api_address: tuple[str, int] | None = None) -> None:
        """``persisted``: the durable log of a live cluster; when it holds a cluster already, that cluster is
        restarted (podlife.api.storage.Persisted). ``manage``: the store's hook that records the managedFields
        of the model's own writes (podlife up: podlife.apiserver.managers). ``feature_gates``: every component's
        (spec.cluster.featureGates). ``api_address``: the address and port the API server advertises in the
        Endpoints of default/kubernetes (podlife up; podlife run: kubernetesservice.CONTROL_PLANE_IP:6443)."""
        self.behaviors = behaviors
        # podlife up --runtime process: the nodes' containers are local processes (podlife.runtime.process.Host)
        self.process_host = process_host
        # the control plane's behaviour: the version with the cluster's feature gates (API server,
        # controller-manager and scheduler alike); kubelets add their own featureGates (kubelet_profile)
        self.feature_gates = dict(feature_gates or {})
        self.profile: Profile = profile(version, self.feature_gates)
        resume = persisted is not None and persisted.resume
        self.resumed = resume
        self.kernel = Kernel(seed, start=persisted.now, stream=persisted.stream) if persisted else Kernel(seed)
        self.trace = Trace(self.kernel, start_time, trace_level, keep_trace)
        self.trace.sinks.extend(trace_sinks)
        self.api_server_config = api_server or ApiServerConfiguration()
        self.controller_manager_config = controller_manager or ControllerManagerConfiguration()
        if self.controller_manager_config.nodeMonitorGracePeriod is None:
            self.controller_manager_config.nodeMonitorGracePeriod = self.profile.node_monitor_grace_period
        self.store = Store(self.kernel, self.trace, negative_grace=self.profile.negative_grace,
                           negative_delete_grace=self.profile.negative_delete_grace,
                           history_size=self.api_server_config.watchHistorySize,
                           served=schema.discovery(self.profile.minor))
        self.store.profile = self.profile   # version-dependent field handling in the registry strategies
        self.store.manage = manage
        if persisted is not None and not resume:
            self.store.log = persisted.log
        if not resume:
            ensure_namespaces(self.store, SYSTEM_NAMESPACES)
        # the apiserver's mutating admission chain, run by the registry on create (podlife.api.admission)
        self.store.admission = admission.default_plugins(
            self.api_server_config, self.store, preemption_policy=self.profile.priority_preemption_policy)
        # who is told when a kubelet's computed Lease renewals stop or resume (NodeStatus.renewals_changed)
        self.store.lease_observers = []
        # the Job registry strategy generates batch.kubernetes.io/ labels from 1.27 (podlife.api.registry.job)
        self.store.job_prefixed_labels = self.profile.job_prefixed_labels
        self.scheduler = Scheduler(self.kernel, self.trace, self.store, scheduler or SchedulerConfiguration(),
                                   profile=self.profile)
        self.scheduler.start()
        # controller-manager: each controller has start(); they talk to the rest only through the store
        self.controllers: list = []
        # the API server's bootstrap controller: its own Service, Endpoints and EndpointSlice in "default"
        from podlife.controlplane.controllers.kubernetesservice import KubernetesServiceController
        self.kubernetes_service = KubernetesServiceController(self.kernel, self.trace, self.store, self.profile,
                                                              api_address)
        self.kubernetes_service.start()
        from podlife.controlplane.controllers.cronjob import CronJobController
        from podlife.controlplane.controllers.daemonset import DaemonSetController
        from podlife.controlplane.controllers.deployment import DeploymentController
        from podlife.controlplane.controllers.disruption import DisruptionController
        from podlife.controlplane.controllers.endpointslice import EndpointsController, EndpointSliceController
        from podlife.controlplane.controllers.garbagecollector import GarbageCollector
        from podlife.controlplane.controllers.job import JobController
        from podlife.controlplane.controllers.namespace import NamespaceController
        from podlife.controlplane.controllers.persistentvolume import PersistentVolumeController
        from podlife.controlplane.controllers.pvcprotection import PVCProtectionController
        from podlife.controlplane.controllers.pvprotection import PVProtectionController
        from podlife.controlplane.controllers.replicaset import ReplicaSetController, ReplicationManager
        from podlife.controlplane.controllers.resourcequota import ResourceQuotaController
        from podlife.controlplane.controllers.rootcacertpublisher import RootCACertPublisher
        from podlife.controlplane.controllers.serviceaccount import ServiceAccountsController
        from podlife.controlplane.controllers.statefulset import StatefulSetController
        from podlife.controlplane.controllers.ttlafterfinished import TTLAfterFinishedController
        for ctrl_cls in (ReplicaSetController, ReplicationManager, DeploymentController, StatefulSetController, JobController,
                         DaemonSetController, EndpointsController, EndpointSliceController, GarbageCollector,
                         ServiceAccountsController, RootCACertPublisher, ResourceQuotaController, CronJobController, PersistentVolumeController,
                         PVCProtectionController, PVProtectionController, DisruptionController, NamespaceController, TTLAfterFinishedController):
            ctrl = ctrl_cls(self.kernel, self.trace, self.store, self.profile)
            ctrl.start()
            self.controllers.append(ctrl)
        from podlife.controlplane.controllers.podautoscaler import HorizontalPodAutoscalerController
        from podlife.controlplane.metrics import MetricsServer
        from podlife.controlplane.provisioner import ExternalProvisioner
        self.metrics = MetricsServer(self)
        hpa = HorizontalPodAutoscalerController(self.kernel, self.trace, self.store, self.profile, self.metrics)
        hpa.start()
        self.controllers.append(hpa)
        self.provisioner = ExternalProvisioner(self.kernel, self.trace, self.store)
        self.provisioner.start()
        # node lifecycle (asks a node's kubelet side whether its Lease renewals go on), taint eviction, pod GC
        cm = self.controller_manager_config
        for ctrl in (NodeLifecycleController(self.kernel, self.trace, self.store, cm, self.profile,
                                             heartbeats=self._heartbeats),
                     TaintEvictionController(self.kernel, self.trace, self.store, self.profile),
                     PodGCController(self.kernel, self.trace, self.store, cm, self.profile)):
            ctrl.start()
            self.controllers.append(ctrl)
        self.kubelet_config = kubelet or KubeletConfiguration()
        self.kubelet_profile: Profile = profile(version, {**self.feature_gates, **self.kubelet_config.featureGates})
        self.kubelets: dict[str, Kubelet] = {}
        for spec in nodes:
            self.add_node(spec, register=not resume)
        if resume:
            assert persisted is not None
            self._restart(persisted)

    def _restart(self, persisted: Persisted) -> None:
        """Every component was started afresh on an empty store; the objects come back from the log. The
        simulated containers lived in the process that ended, so each node comes back as from a power-off:
        its kubelet starts on a registered node over a runtime with nothing in it, and starts the pods bound to
        it again (podlife.scenario.faults NodePowerOff; the kubelet after a node reboot)."""
        for name in self.kubelets:
            self.trace.emit("fault", fault="NodePowerOff", node=name, op="heal", fields={"restart": True})
        from podlife.api.decoding import stored_problem

        minor = self.profile.minor
        self.store.restore(persisted.log, check=lambda kind, obj: stored_problem(minor, kind, obj))
        self.kubernetes_service.ensure()   # a log from before podlife wrote them

    def add_node(self, spec: NodeSpec, register: bool = True) -> Kubelet:
        """A node and its kubelet and runtime (at the start, or when a `join` action brings it in)."""
        index = len(self.kubelets)
        runtime: Any
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
        kl = Kubelet(self.kernel, self.trace, self.store, self.kubelet_profile, self.kubelet_config, spec, runtime,
                     node_ip)
        self.kubelets[spec.name] = kl
        kl.start(register=register)
        return kl

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
        kl = Kubelet(self.kernel, self.trace, self.store, self.kubelet_profile, self.kubelet_config, old.node_spec,
                     old.runtime, old.node_ip)
        kl.images.failing = old.images.failing
        self.kubelets[name] = kl
        kl.start(register=False)
        return kl

    def _heartbeats(self, name: str) -> NodeStatus | None:
        kl = self.kubelets.get(name)
        return kl.node_status if kl is not None else None

    def materialize(self) -> None:
        """Bring computed state (heartbeats) into the API objects, for a look at the final state."""
        for name in sorted(self.kubelets):
            self.kubelets[name].node_status.materialize()

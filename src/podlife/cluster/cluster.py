"""A simulated cluster: kernel, trace, API store, control plane and one kubelet + runtime per node, assembled."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from podlife.api import admission, schema
from podlife.api.store import Store, ensure_namespaces
from podlife.cluster.contracts import Controller, StoreOptions
from podlife.cluster.controllers import KUBERNETES_SERVICE, ControllerContext, start_controllers
from podlife.cluster.nodes import Nodes
from podlife.cluster.spec import NodeSpec
from podlife.config import (
    ApiServerConfiguration,
    ControllerManagerConfiguration,
    KubeletConfiguration,
    SchedulerConfiguration,
)
from podlife.controlplane.controllers.kubernetesservice import KubernetesServiceController
from podlife.controlplane.metrics import MetricsServer
from podlife.controlplane.scheduler.scheduler import Scheduler
from podlife.engine import Kernel
from podlife.runtime.behavior import BehaviorRule
from podlife.trace.recorder import Batched, Record, Trace
from podlife.versions import Profile, profile

if TYPE_CHECKING:
    from podlife.api.storage import Persisted

SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


def api_server_options(prof: Profile, api_server: ApiServerConfiguration, **hooks: Any) -> StoreOptions:
    """The API server's store for a version: its served kinds and its admission chain (``hooks``: the other
    StoreOptions, e.g. manage and log)."""
    return StoreOptions(profile=prof, history_size=api_server.watchHistorySize, served=schema.discovery(prof.minor),
                        admission=lambda store: admission.default_plugins(
                            api_server, store, preemption_policy=prof.priority_preemption_policy,
                            ingress_class_newest_wins=prof.default_ingress_class_newest_wins,
                            bound_token_volume=prof.bound_service_account_token_volume), **hooks)


class Cluster:
    def __init__(self, *, version: str, seed: int, start_time: datetime, nodes: list[NodeSpec],
                 kubelet: KubeletConfiguration | None = None, scheduler: SchedulerConfiguration | None = None,
                 controller_manager: ControllerManagerConfiguration | None = None,
                 api_server: ApiServerConfiguration | None = None,
                 behaviors: tuple[BehaviorRule, ...] = (), trace_level: str = "full", keep_trace: bool = True,
                 trace_sinks: Sequence[Callable[[Record], None] | Batched] = (), process_host: Any = None,
                 persisted: Persisted | None = None, manage: Any = None,
                 feature_gates: dict[str, bool] | None = None, api_address: tuple[str, int] | None = None) -> None:
        """``process_host``: podlife up --runtime process (podlife.runtime.process.Host). ``persisted``: the
        durable log of a live cluster; when it holds a cluster already, that cluster is restarted
        (podlife.api.storage.Persisted). ``manage``: the store's hook that records the managedFields of the
        model's own writes (podlife up: podlife.apiserver.managers). ``feature_gates``: every component's
        (spec.cluster.featureGates); kubelets add their own. ``api_address``: what the API server advertises in
        default/kubernetes (podlife up; podlife run: kubernetesservice.CONTROL_PLANE_IP:6443)."""
        self.feature_gates = dict(feature_gates or {})
        self.profile: Profile = profile(version, self.feature_gates)
        self.resumed = resume = persisted is not None and persisted.resume
        self.kernel = Kernel(seed, start=persisted.now, stream=persisted.stream) if persisted else Kernel(seed)
        self.trace = Trace(self.kernel, start_time, trace_level, keep_trace)
        self.trace.attach(trace_sinks)
        self.api_server_config = api_server or ApiServerConfiguration()
        cm = self.controller_manager_config = controller_manager or ControllerManagerConfiguration()
        if cm.nodeMonitorGracePeriod is None:
            cm.nodeMonitorGracePeriod = self.profile.node_monitor_grace_period
        self.store = Store(self.kernel, self.trace, api_server_options(
            self.profile, self.api_server_config, manage=manage,
            log=persisted.log if persisted is not None and not resume else None))
        if not resume:
            ensure_namespaces(self.store, SYSTEM_NAMESPACES)
        self.scheduler = Scheduler(self.kernel, self.trace, self.store, scheduler or SchedulerConfiguration(),
                                   profile=self.profile)
        self.scheduler.start()
        self.kubelet_config = kubelet or KubeletConfiguration()
        self.kubelet_profile = profile(version, {**self.feature_gates, **self.kubelet_config.featureGates})
        self.nodes = Nodes(self.kernel, self.trace, self.store, self.kubelet_profile, self.kubelet_config,
                           behaviors, process_host)
        self.kubelets, self.process_host = self.nodes.kubelets, process_host
        self.add_node, self.node_created = self.nodes.add_node, self.nodes.node_created
        self.restart_kubelet = self.nodes.restart_kubelet
        self.metrics = MetricsServer(self.nodes.running_stats)
        started = start_controllers(ControllerContext(self.kernel, self.trace, self.store, self.profile, cm,
                                                      self.metrics, self.nodes.heartbeats, api_address))
        self.controllers: list[Controller] = list(started.values())
        kubernetes_service = started[KUBERNETES_SERVICE]
        assert isinstance(kubernetes_service, KubernetesServiceController)
        self.kubernetes_service = kubernetes_service
        for spec in nodes:
            self.add_node(spec, register=not resume)
        if persisted is not None and resume:
            self._restart(persisted)

    def _restart(self, persisted: Persisted) -> None:
        """Every component was started afresh on an empty store; the objects come back from the log. The
        simulated containers lived in the process that ended, so each node comes back as from a power-off:
        its kubelet starts on a registered node over a runtime with nothing in it, and starts the pods bound to
        it again (podlife.cluster.faults NodePowerOff; the kubelet after a node reboot)."""
        for name in self.kubelets:
            self.trace.emit("fault", fault="NodePowerOff", node=name, op="heal", fields={"restart": True})
        from podlife.api.decoding import stored_problem

        minor = self.profile.minor
        self.store.restore(persisted.log, check=lambda kind, obj: stored_problem(minor, kind, obj))
        self.kubernetes_service.ensure()   # a log from before podlife wrote them

    def materialize(self) -> None:
        """Bring computed state (heartbeats) into the API objects, for a look at the final state."""
        for name in sorted(self.kubelets):
            self.kubelets[name].node_status.materialize()

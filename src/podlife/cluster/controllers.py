"""The control loops the cluster starts, in one table (as cmd/kube-controller-manager/app/controllermanager.go
NewControllerDescriptors lists kube-controller-manager's): each row a name, how to make the controller from the
cluster's parts, and the feature gates it needs. Adding a controller: one row here, and its code.

They start in the table's order (the order their watches see events in, so the order is part of every
report's bytes). Names are upstream's (cmd/kube-controller-manager/names/controller_names.go); the API server's
bootstrap controller and the external provisioner run elsewhere upstream but are started here the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from podlife.controlplane.controllers.cronjob import CronJobController
from podlife.controlplane.controllers.daemonset import DaemonSetController
from podlife.controlplane.controllers.deployment import DeploymentController
from podlife.controlplane.controllers.disruption import DisruptionController
from podlife.controlplane.controllers.endpointslice import EndpointsController, EndpointSliceController
from podlife.controlplane.controllers.endpointslicemirroring import EndpointSliceMirroringController
from podlife.controlplane.controllers.garbagecollector import GarbageCollector
from podlife.controlplane.controllers.job import JobController
from podlife.controlplane.controllers.kubernetesservice import KubernetesServiceController
from podlife.controlplane.controllers.namespace import NamespaceController
from podlife.controlplane.controllers.nodelifecycle import NodeLifecycleController
from podlife.controlplane.controllers.persistentvolume import PersistentVolumeController
from podlife.controlplane.controllers.podautoscaler import HorizontalPodAutoscalerController
from podlife.controlplane.controllers.podgc import PodGCController
from podlife.controlplane.controllers.pvcprotection import PVCProtectionController
from podlife.controlplane.controllers.pvprotection import PVProtectionController
from podlife.controlplane.controllers.replicaset import ReplicaSetController, ReplicationManager
from podlife.controlplane.controllers.resourcequota import ResourceQuotaController
from podlife.controlplane.controllers.rootcacertpublisher import RootCACertPublisher
from podlife.controlplane.controllers.serviceaccount import ServiceAccountsController
from podlife.controlplane.controllers.statefulset import StatefulSetController
from podlife.controlplane.controllers.tainteviction import TaintEvictionController
from podlife.controlplane.controllers.ttlafterfinished import TTLAfterFinishedController
from podlife.controlplane.provisioner import ExternalProvisioner

if TYPE_CHECKING:
    from podlife.api.store import Store
    from podlife.cluster.contracts import Controller
    from podlife.config import ControllerManagerConfiguration
    from podlife.controlplane.metrics import MetricsServer
    from podlife.engine import Kernel
    from podlife.kubelet.nodestatus import NodeStatus
    from podlife.trace.recorder import Trace
    from podlife.versions import Profile


@dataclass(frozen=True)
class ControllerContext:
    """What a controller is made from (upstream's ControllerContext): it talks to the rest only through the
    store, plus what the row's factory hands it."""

    kernel: Kernel
    trace: Trace
    store: Store
    profile: Profile
    config: ControllerManagerConfiguration
    metrics: MetricsServer                                 # the HPA's resource metrics
    heartbeats: Callable[[str], NodeStatus | None]         # node lifecycle: a node's kubelet's Lease renewals
    api_address: tuple[str, int] | None                    # the kubernetes Service's endpoint (podlife up)


@dataclass(frozen=True)
class ControllerDescriptor:
    """A controller kube-controller-manager may start: its name, constructor and required gates."""

    name: str
    new: Callable[[ControllerContext], Controller]
    required_gates: tuple[str, ...] = ()   # started only when every one is enabled (requiredFeatureGates)
    since: Callable[[Profile], bool] | None = None   # the version rule of a controller newer than some releases

    def enabled(self, ctx: ControllerContext) -> bool:
        return all(ctx.profile.enabled(g) for g in self.required_gates) and (
            self.since is None or self.since(ctx.profile))


def _plain(cls: Callable[[Kernel, Trace, Store, Profile], Controller]) -> Callable[[ControllerContext], Controller]:
    """A controller made from the kernel, trace, store and profile alone."""
    return lambda c: cls(c.kernel, c.trace, c.store, c.profile)


KUBERNETES_SERVICE = "kubernetes-service-controller"

CONTROLLERS: tuple[ControllerDescriptor, ...] = (
    # the API server's bootstrap controller: its own Service, Endpoints and EndpointSlice in "default"
    ControllerDescriptor(KUBERNETES_SERVICE, lambda c: KubernetesServiceController(
        c.kernel, c.trace, c.store, c.profile, c.api_address)),
    ControllerDescriptor("replicaset-controller", _plain(ReplicaSetController)),
    ControllerDescriptor("replicationcontroller-controller", _plain(ReplicationManager)),
    ControllerDescriptor("deployment-controller", _plain(DeploymentController)),
    ControllerDescriptor("statefulset-controller", _plain(StatefulSetController)),
    ControllerDescriptor("job-controller", _plain(JobController)),
    ControllerDescriptor("daemonset-controller", _plain(DaemonSetController)),
    ControllerDescriptor("endpoints-controller", _plain(EndpointsController)),
    ControllerDescriptor("endpointslice-controller", _plain(EndpointSliceController)),
    ControllerDescriptor("endpointslice-mirroring-controller", _plain(EndpointSliceMirroringController),
                         since=lambda p: p.endpointslice_mirroring),
    ControllerDescriptor("garbage-collector-controller", _plain(GarbageCollector)),
    ControllerDescriptor("serviceaccount-controller", _plain(ServiceAccountsController)),
    ControllerDescriptor("root-ca-certificate-publisher-controller", _plain(RootCACertPublisher)),
    ControllerDescriptor("resourcequota-controller", _plain(ResourceQuotaController)),
    ControllerDescriptor("cronjob-controller", _plain(CronJobController)),
    ControllerDescriptor("persistentvolume-binder-controller", _plain(PersistentVolumeController)),
    ControllerDescriptor("persistentvolumeclaim-protection-controller", _plain(PVCProtectionController)),
    ControllerDescriptor("persistentvolume-protection-controller", _plain(PVProtectionController)),
    ControllerDescriptor("disruption-controller", _plain(DisruptionController)),
    ControllerDescriptor("namespace-controller", _plain(NamespaceController)),
    ControllerDescriptor("ttl-after-finished-controller", _plain(TTLAfterFinishedController)),
    ControllerDescriptor("horizontal-pod-autoscaler-controller", lambda c: HorizontalPodAutoscalerController(
        c.kernel, c.trace, c.store, c.profile, c.metrics)),
    # a CSI external-provisioner sidecar (not kube-controller-manager's): dynamic provisioning
    ControllerDescriptor("external-provisioner", lambda c: ExternalProvisioner(c.kernel, c.trace, c.store)),
    ControllerDescriptor("node-lifecycle-controller", lambda c: NodeLifecycleController(
        c.kernel, c.trace, c.store, c.config, c.profile, heartbeats=c.heartbeats)),
    ControllerDescriptor("taint-eviction-controller", _plain(TaintEvictionController)),
    ControllerDescriptor("pod-garbage-collector-controller", lambda c: PodGCController(
        c.kernel, c.trace, c.store, c.config, c.profile)),
)


def start_controllers(ctx: ControllerContext) -> dict[str, Controller]:
    """Make and start every enabled controller, in the table's order."""
    started: dict[str, Controller] = {}
    for d in CONTROLLERS:
        if d.enabled(ctx):
            ctrl = started[d.name] = d.new(ctx)
            ctrl.start()
    return started

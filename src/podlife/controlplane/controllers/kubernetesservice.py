"""The API server's own Service: pkg/controlplane/controller/kubernetesservice (pkg/master/controller.go before
1.27) and the endpoint reconciler of pkg/controlplane/reconcilers (lease.go, endpointsadapter.go).

``default/kubernetes`` is a selectorless ClusterIP Service whose IP is the first of the service range
(10.96.0.1 with kubeadm's 10.96.0.0/12, podlife.api.registry.service), port 443 "https" to the API server's
secure port; its Endpoints (labelled endpointslice.kubernetes.io/skip-mirror from 1.19) and, from 1.19, its
EndpointSlice (no managed-by label: the API server writes it, not the EndpointSlice controller) list the
API server's advertised address. The bootstrap controller checks them every EndpointInterval (10 s); podlife
writes them at start and puts back a deleted one one interval later.

The advertised address: ``podlife run`` uses CONTROL_PLANE_IP (outside the nodes' 10.0.0.10+ addresses);
``podlife up`` the address it serves on when that is a routable IP, else CONTROL_PLANE_IP too (Endpoints may
not hold a loopback or unspecified address: ValidateEndpoints validateNonSpecialIP).
"""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.api.registry.service import first_service_ip
from podlife.api.store import DELETED, Store
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

NAME = "kube-apiserver"
SERVICE = "kubernetes"
NAMESPACE = "default"
CONTROL_PLANE_IP = "10.0.0.2"
SECURE_PORT = 6443
ENDPOINT_INTERVAL = 10.0   # --endpoint-reconciler interval (EndpointInterval)
SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror"


class KubernetesServiceController:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile,
                 address: tuple[str, int] | None = None) -> None:
        self.kernel = kernel
        self.store = store
        self.uids = kernel.rng(f"uids:{NAME}")   # a stream of its own: other objects' UIDs and names unchanged
        self.ip, self.port = address or (CONTROL_PLANE_IP, SECURE_PORT)
        self.slices = bool(profile.apiserver_endpointslice)
        self.slice_api = profile.endpointslice_api
        self._pending: Any = None

    def start(self) -> None:
        self.ensure()
        self.store.watch("Service", self._on_delete, namespace=NAMESPACE)
        self.store.watch("Endpoints", self._on_delete, namespace=NAMESPACE)
        if self.slices:
            self.store.watch("EndpointSlice", self._on_delete, namespace=NAMESPACE)

    def _on_delete(self, type_: str, obj: Obj, old: Obj | None) -> None:
        if type_ == DELETED and obj["metadata"]["name"] == SERVICE and self._pending is None:
            self._pending = self.kernel.call_later(ENDPOINT_INTERVAL, self._tick)

    def _tick(self) -> None:
        self._pending = None
        self.ensure()

    def ensure(self) -> None:
        """CreateOrUpdateMasterServiceIfNeeded, then ReconcileEndpoints (lease reconciler, one API server)."""
        self._create({"apiVersion": "v1", "kind": "Service",
                      "metadata": {"name": SERVICE, "namespace": NAMESPACE,
                                   "labels": {"component": "apiserver", "provider": "kubernetes"}},
                      "spec": {"ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": self.port}],
                               "clusterIP": first_service_ip(), "sessionAffinity": "None", "type": "ClusterIP"}})
        port = {"name": "https", "port": self.port, "protocol": "TCP"}
        md: dict[str, Any] = {"name": SERVICE, "namespace": NAMESPACE}
        if self.slices:
            md["labels"] = {SKIP_MIRROR: "true"}
        self._create({"apiVersion": "v1", "kind": "Endpoints", "metadata": md,
                      "subsets": [{"addresses": [{"ip": self.ip}], "ports": [dict(port)]}]})
        if self.slices:
            # endpointsadapter.go endpointSliceFromEndpoints: the Endpoints' name, the service-name label only
            self._create({"apiVersion": f"discovery.k8s.io/{self.slice_api}", "kind": "EndpointSlice",
                          "metadata": {"name": SERVICE, "namespace": NAMESPACE,
                                       "labels": {"kubernetes.io/service-name": SERVICE}},
                          "addressType": "IPv4",
                          "endpoints": [{"addresses": [self.ip], "conditions": {"ready": True}}],
                          "ports": [dict(port)]})

    def _create(self, obj: Obj) -> None:
        md = obj["metadata"]
        if self.store.try_get(obj["kind"], md["namespace"], md["name"]) is not None:
            return
        try:
            self.store.create(obj, by=NAME, uids=self.uids)
        except ApiError:
            pass   # e.g. the IP taken by a user's Service meanwhile: upstream logs and retries each interval

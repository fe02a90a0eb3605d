"""Deployment controller: pkg/controller/deployment (deployment_controller.go, sync.go, rolling.go, recreate.go,
progress.go, util/deployment_util.go).

It watches Deployments, ReplicaSets and Pods (pods only for their deletion, which is what unblocks a Recreate
rollout) and keeps indexes of ReplicaSets by controller and pods by ReplicaSet, so a sync costs the size of
one Deployment, not of the cluster. Writes: ReplicaSets (create, scale = an update of spec.replicas, adopt,
release, delete for revisionHistoryLimit), Deployment status, Events.

As upstream, the Deployment a sync works on is a copy of the cached object: a sync that writes status twice
(the new ReplicaSet's condition, then the rollout status) sends a stale resourceVersion the second time,
gets a Conflict and is requeued with backoff, while the watch event of the first write requeues it at once.
"""

from podlife.controlplane.controllers.deployment.controller import DeploymentController
from podlife.controlplane.controllers.deployment.util import compute_hash, fnv32a, safe_encode_string, scaled_value

__all__ = ["DeploymentController", "compute_hash", "fnv32a", "safe_encode_string", "scaled_value"]

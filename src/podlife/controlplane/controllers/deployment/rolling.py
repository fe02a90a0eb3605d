"""pkg/controller/deployment/rolling.go: a RollingUpdate rollout - scale the new ReplicaSet up within maxSurge,
the old ones down within maxUnavailable, unhealthy old replicas first."""

from __future__ import annotations

from podlife.api.errors import ApiError
from podlife.api.meta import Obj
from podlife.controlplane.controllers.controller_utils import (
    sorted_by_creation,
)
from podlife.controlplane.controllers.deployment.progress import Progress
from podlife.controlplane.controllers.deployment.util import (
    available_count,
    deployment_complete,
    filter_active,
    max_unavailable,
    new_rs_new_replicas,
    replica_count,
    replicas,
    status_int,
)


class Rolling(Progress):
    """pkg/controller/deployment/rolling.go."""

    # ---- rolling.go --------------------------------------------------------------------------------------

    def _rollout_rolling(self, d: Obj, rs_list: list[Obj]) -> None:
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, True)
        assert new_rs is not None
        all_rss: list[Obj | None] = [*old_rss, new_rs]
        if self._reconcile_new_replica_set(all_rss, new_rs, d):
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if self._reconcile_old_replica_sets(all_rss, filter_active(old_rss), new_rs, d):
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if deployment_complete(d, d["status"]):
            self._cleanup_deployment(old_rss, d)
        self._sync_rollout_status(all_rss, new_rs, d)

    def _reconcile_new_replica_set(self, all_rss: list[Obj | None], new_rs: Obj, d: Obj) -> bool:
        if replicas(new_rs) == replicas(d):
            return False
        if replicas(new_rs) > replicas(d):
            return self._scale_and_record(new_rs, replicas(d), d)[0]
        return self._scale_and_record(new_rs, new_rs_new_replicas(d, all_rss, new_rs), d)[0]

    def _reconcile_old_replica_sets(self, all_rss: list[Obj | None], old_rss: list[Obj], new_rs: Obj,
                                    d: Obj) -> bool:
        """reconcileOldReplicaSets: maxScaledDown = all pods - minAvailable - unavailable new pods."""
        if replica_count(old_rss) == 0:
            return False
        all_pods = replica_count(all_rss)
        min_available = replicas(d) - max_unavailable(d)
        new_unavailable = replicas(new_rs) - status_int(new_rs, "availableReplicas")
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        try:
            old_rss, cleanup = self._cleanup_unhealthy_replicas(old_rss, d, max_scaled_down)
        except ApiError:
            return False
        try:
            scaled_down = self._scale_down_old_for_rolling_update([*old_rss, new_rs], old_rss, d)
        except ApiError:
            return False
        return cleanup + scaled_down > 0

    def _cleanup_unhealthy_replicas(self, old_rss: list[Obj], d: Obj, max_cleanup: int) -> tuple[list[Obj], int]:
        old_rss = sorted_by_creation(old_rss)
        total = 0
        for i, rs in enumerate(old_rss):
            if total >= max_cleanup:
                break
            if replicas(rs) == 0 or replicas(rs) == status_int(rs, "availableReplicas"):
                continue
            n = min(max_cleanup - total, replicas(rs) - status_int(rs, "availableReplicas"))
            _, updated = self._scale_and_record(rs, replicas(rs) - n, d)
            total += n
            old_rss[i] = updated
        return old_rss, total

    def _scale_down_old_for_rolling_update(self, all_rss: list[Obj], old_rss: list[Obj], d: Obj) -> int:
        min_available = replicas(d) - max_unavailable(d)
        available = available_count(all_rss)
        if available <= min_available:
            return 0
        total, target = 0, available - min_available
        for rs in sorted_by_creation(old_rss):
            if total >= target:
                break
            if replicas(rs) == 0:
                continue
            n = min(replicas(rs), target - total)
            self._scale_and_record(rs, replicas(rs) - n, d)
            total += n
        return total

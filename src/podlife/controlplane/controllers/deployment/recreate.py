"""pkg/controller/deployment/recreate.go: a Recreate rollout - scale the old ReplicaSets to zero, wait until no
old pod runs, then scale the new one up."""

from __future__ import annotations

from podlife.api.meta import Obj
from podlife.controlplane.controllers.deployment.progress import Progress
from podlife.controlplane.controllers.deployment.util import (
    actual_count,
    deployment_complete,
    filter_active,
    replicas,
)


class Recreate(Progress):
    """pkg/controller/deployment/recreate.go."""

    # ---- recreate.go -------------------------------------------------------------------------------------

    def _rollout_recreate(self, d: Obj, rs_list: list[Obj], pod_map: dict[str, list[Obj]]) -> None:
        """rolloutRecreate: scale every old ReplicaSet to 0, wait until no old pod runs, then the new one."""
        new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, False)
        all_rss: list[Obj | None] = [*old_rss, new_rs]
        scaled_down = False
        for rs in filter_active(old_rss):
            if self._scale_and_record(rs, 0, d)[0]:
                scaled_down = True
        if scaled_down:
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if self._old_pods_running(new_rs, old_rss, pod_map):
            self._sync_rollout_status(all_rss, new_rs, d)
            return
        if new_rs is None:
            new_rs, old_rss = self._get_all_replica_sets_and_sync_revision(d, rs_list, True)
            all_rss = [*old_rss, new_rs]
        assert new_rs is not None
        self._scale_and_record(new_rs, replicas(d), d)
        if deployment_complete(d, d["status"]):
            self._cleanup_deployment(old_rss, d)
        self._sync_rollout_status(all_rss, new_rs, d)

    @staticmethod
    def _old_pods_running(new_rs: Obj | None, old_rss: list[Obj], pod_map: dict[str, list[Obj]]) -> bool:
        """oldPodsRunning: an old ReplicaSet still counts replicas, or an old pod is not Succeeded/Failed
        (a Terminating pod, or one whose phase is Unknown, counts as running)."""
        if actual_count(old_rss) > 0:
            return True
        new_uid = new_rs["metadata"]["uid"] if new_rs is not None else None
        for uid, pods in pod_map.items():
            if uid == new_uid:
                continue
            for pod in pods:
                if (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
                    continue
                return True
        return False

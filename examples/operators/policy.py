"""What both example operators do, as pure functions of an object (each operator calls them from its own loop).

- Node fencing: a node that the node lifecycle controller tainted ``node.kubernetes.io/unreachable:NoExecute``
  (it stopped reporting: powered off, cut off) gets ``node.kubernetes.io/out-of-service=nodeshutdown:NoExecute``,
  the taint of Kubernetes' non-graceful node shutdown (KEP-2268): with it the pod GC force-deletes the node's
  terminating pods, so a StatefulSet's pod comes back elsewhere instead of staying Terminating forever.
- Rollout rollback: a Deployment annotated ``example.com/auto-rollback: "true"`` remembers its last image that
  completed a rollout (``example.com/last-good-image``) and goes back to it when a rollout stalls (condition
  Progressing=False, reason ProgressDeadlineExceeded).

Both are level-triggered on what the cluster reports, never on the operator's own timers: the cluster's clock,
not the wall clock, decides when a node is unreachable or a rollout stalled.
"""

from __future__ import annotations

from typing import Any

UNREACHABLE = "node.kubernetes.io/unreachable"
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}
AUTO_ROLLBACK = "example.com/auto-rollback"
LAST_GOOD = "example.com/last-good-image"


def fenced_taints(node: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The node's taints with out-of-service added, or None when there is nothing to do."""
    taints = list((node.get("spec") or {}).get("taints") or [])
    unreachable = any(t.get("key") == UNREACHABLE and t.get("effect") == "NoExecute" for t in taints)
    fenced = any(t.get("key") == OUT_OF_SERVICE["key"] for t in taints)
    if not unreachable or fenced:
        return None
    return [*taints, dict(OUT_OF_SERVICE)]


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return {}


def deployment_patch(deployment: dict[str, Any]) -> dict[str, Any] | None:
    """A merge patch for an opted-in Deployment: record its image once a rollout completed, or go back to the
    recorded one once a rollout stalled; None when there is nothing to do."""
    annotations = (deployment.get("metadata") or {}).get("annotations") or {}
    if annotations.get(AUTO_ROLLBACK) != "true":
        return None
    containers = deployment["spec"]["template"]["spec"]["containers"]
    image = containers[0]["image"]
    progressing = _condition(deployment, "Progressing")
    last_good = annotations.get(LAST_GOOD)
    generation = deployment["metadata"].get("generation")
    observed = (deployment.get("status") or {}).get("observedGeneration")
    if progressing.get("reason") == "NewReplicaSetAvailable" and observed == generation and image != last_good:
        return {"metadata": {"annotations": {LAST_GOOD: image}}}
    if progressing.get("reason") == "ProgressDeadlineExceeded" and last_good and image != last_good:
        rolled = [{**containers[0], "image": last_good}, *containers[1:]]
        return {"spec": {"template": {"spec": {"containers": rolled}}}}
    return None

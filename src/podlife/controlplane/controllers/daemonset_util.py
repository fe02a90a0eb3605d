"""What the DaemonSet controller and its rolling update share (pkg/controller/daemon/util/daemonset_util.go,
and NodeShouldRunDaemonPod of daemon_controller.go): the tolerations every daemon pod gets, the node a pod is
meant for, and whether a node should run the set's pod."""

from __future__ import annotations

from podlife.api import selectors
from podlife.api.meta import Obj, clone
from podlife.controlplane.controllers.tainteviction import tolerates_taint


def daemon_tolerations(spec: Obj) -> list[Obj]:
    """util.AddOrUpdateDaemonPodTolerations, in its order: the pod's tolerations, each added one replacing an
    equal (key, operator, effect) toleration."""
    tols = [dict(t) for t in spec.get("tolerations") or ()]
    adds = [("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unreachable", "NoExecute"),
            ("node.kubernetes.io/disk-pressure", "NoSchedule"), ("node.kubernetes.io/memory-pressure", "NoSchedule"),
            ("node.kubernetes.io/pid-pressure", "NoSchedule"), ("node.kubernetes.io/unschedulable", "NoSchedule")]
    if spec.get("hostNetwork"):
        adds.append(("node.kubernetes.io/network-unavailable", "NoSchedule"))
    for key, effect in adds:
        tol = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tols):
            if t.get("key") == key and (t.get("operator") or "Equal") == "Exists" and t.get("effect") == effect:
                tols[i] = tol  # AddOrUpdateTolerationInPodSpec: replaced in place
                break
        else:
            tols.append(tol)
    return tols


def node_name_affinity(affinity: Obj | None, node: str) -> Obj:
    """util.ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity is replaced by one term selecting
    the node by metadata.name (the controller has already checked the template's own terms); the rest of the
    affinity is kept."""
    aff = clone(affinity) if affinity else {}
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    aff.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = selector
    return aff


def _untolerated(taints: list[Obj], tolerations: list[Obj], effects: tuple[str, ...]) -> bool:
    """v1helper.FindMatchingUntoleratedTaint with an effect filter."""
    return any(t.get("effect") in effects and not any(tolerates_taint(tol, t) for tol in tolerations)
               for t in taints)


def should_run(node: Obj, ds: Obj) -> tuple[bool, bool]:
    """NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning)."""
    spec = (ds["spec"].get("template") or {}).get("spec") or {}
    name = node["metadata"]["name"]
    if spec.get("nodeName") and spec["nodeName"] != name:
        return False, False
    labels = node["metadata"].get("labels") or {}
    sel = spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in sel.items()):
        return False, False
    req = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is not None and not selectors.matches_node_selector(req, labels, name):
        return False, False
    taints = list(node["spec"].get("taints") or ())
    tols = daemon_tolerations(spec)
    if _untolerated(taints, tols, ("NoSchedule", "NoExecute")):
        return False, not _untolerated(taints, tols, ("NoExecute",))
    return True, True


def target_node(pod: Obj) -> str | None:
    """util.GetTargetNodeName: spec.nodeName, else the node its matchFields affinity names."""
    if pod["spec"].get("nodeName"):
        return pod["spec"]["nodeName"]
    req = (((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    for term in req.get("nodeSelectorTerms") or ():
        for f in term.get("matchFields") or ():
            if f.get("key") == "metadata.name" and f.get("operator") == "In" and len(f.get("values") or ()) == 1:
                return f["values"][0]
    return None

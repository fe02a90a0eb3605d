"""kubectl drain: staging/src/k8s.io/kubectl/pkg/drain (drain.go, filters.go) and pkg/cmd/drain.

Cordon the node, pick its pods (DaemonSet pods need ignoreDaemonSets, pods with emptyDir need
deleteEmptyDirData, pods without a controller need force; mirror pods are skipped; any refusal stops the
drain), then evict each pod through the Eviction API, retrying a 429 every 5 s, and wait (polling every 1 s)
until it is gone; with disableEviction the pods are deleted instead. ``timeout`` (0: none) bounds the whole
drain. What kubectl prints becomes ``log`` records of component kubectl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.registry.eviction import evict
from podlife.api.store import DeleteOptions

if TYPE_CHECKING:
    from podlife.cluster import Cluster

USER = "kubectl"
EVICTION_RETRY = 5.0     # drain.go: evictPods retries after 5 s on TooManyRequests
DELETE_POLL = 1.0        # waitForDelete's interval
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass
class DrainOptions:
    ignore_daemonsets: bool = False
    force: bool = False
    delete_emptydir_data: bool = False
    grace_period_seconds: int = -1     # -1: each pod's own
    timeout: float = 0.0               # 0: wait for ever
    disable_eviction: bool = False


def _say(cluster: Cluster, message: str, node: str) -> None:
    if cluster.trace.logs:
        cluster.trace.emit("log", component="kubectl", node=node, severity="I", file="drain.go", line=0,
                           message=message)


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _pods_for_deletion(cluster: Cluster, node: str, opts: DrainOptions) -> tuple[list[Obj], list[str], list[str]]:
    """GetPodsForDeletion: (pods to evict, warnings, errors), filters in kubectl's order."""
    store = cluster.store
    pods = store.list("Pod", where=lambda p: p["spec"].get("nodeName") == node)
    keep: list[Obj] = []
    warn: dict[str, list[str]] = {}
    errs: dict[str, list[str]] = {}
    for pod in pods:
        md = pod["metadata"]
        name = f"{md['namespace']}/{md['name']}"
        ref = next((r for r in md.get("ownerReferences") or () if r.get("controller")), None)
        if ref is not None and ref.get("kind") == "DaemonSet" and not _terminal(pod):
            if store.try_get("DaemonSet", md["namespace"], ref.get("name", "")) is not None:
                if opts.ignore_daemonsets:
                    warn.setdefault("ignoring DaemonSet-managed Pods", []).append(name)
                else:
                    errs.setdefault("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)",
                                    []).append(name)
                continue
        if MIRROR_ANNOTATION in (md.get("annotations") or {}):
            continue
        if not _terminal(pod) and any("emptyDir" in v for v in pod["spec"].get("volumes") or ()):
            if not opts.delete_emptydir_data:
                errs.setdefault("cannot delete Pods with local storage (use --delete-emptydir-data to override)",
                                []).append(name)
                continue
            warn.setdefault("deleting Pods with local storage", []).append(name)
        if ref is None and not _terminal(pod):
            if not opts.force:
                errs.setdefault("cannot delete Pods that declare no controller (use --force to override)",
                                []).append(name)
                continue
            warn.setdefault("deleting Pods that declare no controller", []).append(name)
        keep.append(pod)
    return (keep, [f"{k}: {', '.join(v)}" for k, v in warn.items()], [f"{k}: {', '.join(v)}" for k, v in errs.items()])


def drain(cluster: Cluster, node: str, opts: DrainOptions) -> None:
    """Start the drain; it runs on the simulated clock like the kubectl process would."""
    cluster.kernel.spawn(_drain(cluster, node, opts), name=f"kubectl-drain-{node}")


def _drain(cluster: Cluster, node: str, opts: DrainOptions) -> Any:
    store = cluster.store
    obj = store.get("Node", None, node)
    if obj["spec"].get("unschedulable"):
        _say(cluster, f"node/{node} already cordoned", node)
    else:
        new = clone(obj)
        new["spec"]["unschedulable"] = True
        store.update(new, by=USER)
        _say(cluster, f"node/{node} cordoned", node)
    pods, warnings, errors = _pods_for_deletion(cluster, node, opts)
    if errors:
        _say(cluster, f'error: unable to drain node "{node}" due to error: {", ".join(errors)}, continuing '
                      "command...", node)
        return
    for w in warnings:
        _say(cluster, f"Warning: {w}", node)
    deadline = cluster.kernel.now + opts.timeout if opts.timeout > 0 else None
    waits = [cluster.kernel.spawn(_remove_pod(cluster, pod, opts, deadline)) for pod in pods]
    results = []
    for w in waits:
        results.append((yield w))
    if all(results):
        _say(cluster, f"node/{node} drained", node)
    else:
        _say(cluster, f'error: unable to drain node "{node}" due to error: drain did not complete within '
                      f"{_go_duration(opts.timeout)}, continuing command...", node)


def _remove_pod(cluster: Cluster, pod: Obj, opts: DrainOptions, deadline: float | None) -> Any:
    """evictPods / deletePods for one pod, then waitForDelete. True when the pod is gone in time."""
    kernel, store = cluster.kernel, cluster.store
    md = pod["metadata"]
    ns, name, uid = md["namespace"], md["name"], md["uid"]
    node = pod["spec"].get("nodeName", "")
    grace = opts.grace_period_seconds if opts.grace_period_seconds >= 0 else None
    if not opts.disable_eviction:
        _say(cluster, f"evicting pod {ns}/{name}", node)
    while True:
        try:
            if opts.disable_eviction:
                store.delete("Pod", ns, name, by=USER, options=DeleteOptions(grace_period_seconds=grace))
            else:
                evict(store, ns, name, USER, grace, cluster.profile)
            break
        except ApiError as e:
            if e.code == 404:
                break
            if e.code != 429:
                _say(cluster, f"error: {e.message}", node)
                return False
            _say(cluster, f'error when evicting pods/"{name}" -n "{ns}" (will retry after 5s): {e.message}', node)
            if deadline is not None and kernel.now + EVICTION_RETRY > deadline:
                yield kernel.timer(deadline - kernel.now)
                return False
            yield kernel.timer(EVICTION_RETRY)
    while True:   # waitForDelete: PollImmediate every second
        current = store.try_get("Pod", ns, name)
        if current is None or current["metadata"]["uid"] != uid:
            _say(cluster, f"pod/{name} {'deleted' if opts.disable_eviction else 'evicted'}", node)
            return True
        if deadline is not None and kernel.now + DELETE_POLL > deadline:
            yield kernel.timer(max(deadline - kernel.now, 0.0))
            return False
        yield kernel.timer(DELETE_POLL)


def _go_duration(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return (f"{h}h" if h else "") + (f"{m}m" if m or h else "") + f"{s}s"

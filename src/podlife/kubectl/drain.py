"""kubectl drain: staging/src/k8s.io/kubectl/pkg/drain (drain.go, filters.go) and pkg/cmd/drain.

Cordon the node, pick its pods (DaemonSet pods need ignoreDaemonSets, pods with emptyDir need
deleteEmptyDirData, pods without a controller need force; mirror pods are skipped; any refusal stops the
drain), then evict each pod through the Eviction API, retrying a 429 every 5 s, and wait (polling every 1 s)
until it is gone; with disableEviction the pods are deleted instead. ``timeout`` (0: none) bounds the whole
drain: an eviction still being retried fails at its next round after the deadline ("global timeout
reached"), a wait for a deletion at the deadline ("context deadline exceeded"). What kubectl prints, on its
standard output and error, becomes ``log`` records of component kubectl, one per line.
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


def _pods_for_deletion(cluster: Cluster, node: str, opts: DrainOptions) -> tuple[list[Obj], str, list[str]]:
    """GetPodsForDeletion: (pods to evict, the warning line, errors). Each pod goes through the filters in
    kubectl's order (makeFilters) until one refuses it; only the last filter's warning is kept for a pod."""
    store = cluster.store
    pods = store.list("Pod", where=lambda p: p["spec"].get("nodeName") == node)
    keep: list[Obj] = []
    warn: dict[str, list[str]] = {}
    errs: dict[str, list[str]] = {}
    for pod in pods:
        name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
        status: tuple[bool, str, str] = (True, "", "")   # (delete, "Warning" | "Error" | "", message)
        for f in (_daemonset_filter, _mirror_pod_filter, _local_storage_filter, _unreplicated_filter):
            status = f(store, pod, opts)
            if not status[0]:
                break
        if status[1] == "Warning":
            warn.setdefault(status[2], []).append(name)
        elif status[1] == "Error":
            errs.setdefault(status[2], []).append(name)
        if status[0]:
            keep.append(pod)
    warning = "; ".join(f"{k}: {', '.join(v)}" for k, v in warn.items())   # PodDeleteList.Warnings
    return keep, warning, [f"cannot delete {k}: {', '.join(v)}" for k, v in errs.items()]


def _daemonset_filter(store: Any, pod: Obj, opts: DrainOptions) -> tuple[bool, str, str]:
    """daemonSetFilter: a DaemonSet's pod is never evicted; an orphan (its DaemonSet gone) only with force."""
    md = pod["metadata"]
    ref = _controller(pod)
    if ref is None or ref.get("kind") != "DaemonSet" or ref.get("apiVersion") != "apps/v1" or _terminal(pod):
        return OKAY
    if store.try_get("DaemonSet", md["namespace"], ref.get("name", "")) is None:
        missing = f'daemonsets.apps "{ref.get("name", "")}" not found'
        return (True, "Warning", missing) if opts.force else (False, "Error", missing)
    if not opts.ignore_daemonsets:
        return False, "Error", "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
    return False, "Warning", "ignoring DaemonSet-managed Pods"


def _mirror_pod_filter(store: Any, pod: Obj, opts: DrainOptions) -> tuple[bool, str, str]:
    return (False, "", "") if MIRROR_ANNOTATION in (pod["metadata"].get("annotations") or {}) else OKAY


def _local_storage_filter(store: Any, pod: Obj, opts: DrainOptions) -> tuple[bool, str, str]:
    if _terminal(pod) or not any("emptyDir" in v for v in pod["spec"].get("volumes") or ()):
        return OKAY
    if not opts.delete_emptydir_data:
        return False, "Error", "Pods with local storage (use --delete-emptydir-data to override)"
    return True, "Warning", "deleting Pods with local storage"


def _unreplicated_filter(store: Any, pod: Obj, opts: DrainOptions) -> tuple[bool, str, str]:
    if _terminal(pod) or _controller(pod) is not None:
        return OKAY
    if opts.force:
        return True, "Warning", "deleting Pods that declare no controller"
    return False, "Error", "Pods that declare no controller (use --force to override)"


OKAY = (True, "", "")


def _controller(pod: Obj) -> Obj | None:
    return next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")), None)


def aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as it is, several (repeats dropped) in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def drain(cluster: Cluster, node: str, opts: DrainOptions) -> None:
    """Start the drain; it runs on the simulated clock like the kubectl process would."""
    cluster.kernel.spawn(_drain(cluster, node, opts), name=f"kubectl-drain-{node}")


def _drain(cluster: Cluster, node: str, opts: DrainOptions) -> Any:
    """RunDrain: cordon, then deleteOrEvictPodsSimple; an error is printed with the pending node."""
    store = cluster.store
    obj = store.try_get("Node", None, node)
    if obj is None:
        # the resource builder's GET fails before anything is cordoned; cmdutil.CheckErr prints it and kubectl
        # exits 1 (staging/src/k8s.io/kubectl/pkg/cmd/drain/drain.go Complete, util/helpers.go StandardErrorMessage)
        _say(cluster, f'Error from server (NotFound): nodes "{node}" not found', node)
        return
    if obj["spec"].get("unschedulable"):
        _say(cluster, f"node/{node} already cordoned", node)
    else:
        new = clone(obj)
        new["spec"]["unschedulable"] = True
        store.update(new, by=USER)
        _say(cluster, f"node/{node} cordoned", node)
    err = yield from _delete_or_evict_pods_simple(cluster, node, opts)
    if err is None:
        _say(cluster, f"node/{node} drained", node)
        return
    _say(cluster, f'error: unable to drain node "{node}" due to error: {err}, continuing command...', node)
    _say(cluster, "There are pending nodes to be drained:", node)
    _say(cluster, f" {node}", node)


def _delete_or_evict_pods_simple(cluster: Cluster, node: str, opts: DrainOptions) -> Any:
    pods, warning, errors = _pods_for_deletion(cluster, node, opts)
    if errors:
        return aggregate(errors)
    if warning:
        _say(cluster, f"Warning: {warning}", node)
    deadline = cluster.kernel.now + opts.timeout if opts.timeout > 0 else None
    if opts.disable_eviction:
        err = yield from _delete_pods(cluster, pods, opts, deadline)
    else:
        waits = [cluster.kernel.spawn(_evict_pod(cluster, pod, opts, deadline)) for pod in pods]
        failures = []
        for w in waits:
            e = yield w
            if e is not None:
                failures.append(e)
        err = aggregate(failures) if failures else None
    if err is not None:
        pending, _, _ = _pods_for_deletion(cluster, node, opts)
        if pending:
            _say(cluster, f'There are pending pods in node "{node}" when an error occurred: {err}', node)
            for p in pending:
                _say(cluster, f"pod/{p['metadata']['name']}", node)
    return err


def _evict_pod(cluster: Cluster, pod: Obj, opts: DrainOptions, deadline: float | None) -> Any:
    """One goroutine of evictPods: evict (429: retry after 5 s), then waitForDelete. Returns an error or None."""
    kernel, store = cluster.kernel, cluster.store
    md = pod["metadata"]
    ns, name, uid = md["namespace"], md["name"], md["uid"]
    node = pod["spec"].get("nodeName", "")
    grace = opts.grace_period_seconds if opts.grace_period_seconds >= 0 else None
    while True:
        _say(cluster, f"evicting pod {ns}/{name}", node)
        if deadline is not None and kernel.now >= deadline:
            return f'error when evicting pods/"{name}" -n "{ns}": global timeout reached: {_go_duration(opts.timeout)}'
        try:
            evict(store, ns, name, USER, grace, cluster.profile)
            break
        except ApiError as e:
            if e.code == 404:
                return None
            if e.code != 429:
                return f'error when evicting pods/"{name}" -n "{ns}": {e.message}'
            _say(cluster, f'error when evicting pods/"{name}" -n "{ns}" (will retry after 5s): {e.message}', node)
            yield kernel.timer(EVICTION_RETRY)   # time.Sleep: the global timeout is checked on the next round
    gone = yield from _wait_for_delete(cluster, [(ns, name, uid, node)], "evicted", deadline)
    if not gone:
        return f'error when waiting for pod "{name}" in namespace "{ns}" to terminate: context deadline exceeded'
    return None


def _delete_pods(cluster: Cluster, pods: list[Obj], opts: DrainOptions, deadline: float | None) -> Any:
    """deletePods (disableEviction): delete each pod, then wait for all of them."""
    grace = opts.grace_period_seconds if opts.grace_period_seconds >= 0 else None
    for pod in pods:
        md = pod["metadata"]
        try:
            cluster.store.delete("Pod", md["namespace"], md["name"], by=USER,
                                 options=DeleteOptions(grace_period_seconds=grace))
        except ApiError as e:
            if e.code != 404:
                return e.message
    keys = [(p["metadata"]["namespace"], p["metadata"]["name"], p["metadata"]["uid"], p["spec"].get("nodeName", ""))
            for p in pods]
    gone = yield from _wait_for_delete(cluster, keys, "deleted", deadline)
    return None if gone else "context deadline exceeded"


def _wait_for_delete(cluster: Cluster, keys: list[tuple[str, str, str, str]], verb: str,
                     deadline: float | None) -> Any:
    """waitForDelete: polls at once and then every second until every pod is gone (or replaced: another uid);
    False when the drain's deadline comes first."""
    kernel, store = cluster.kernel, cluster.store
    pending = list(keys)
    while True:
        left = []
        for ns, name, uid, node in pending:
            current = store.try_get("Pod", ns, name)
            if current is None or current["metadata"]["uid"] != uid:
                _say(cluster, f"pod/{name} {verb}", node)
            else:
                left.append((ns, name, uid, node))
        pending = left
        if not pending:
            return True
        if deadline is not None and kernel.now + DELETE_POLL > deadline:
            yield kernel.timer(max(deadline - kernel.now, 0.0))
            return False
        yield kernel.timer(DELETE_POLL)


def _go_duration(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return (f"{h}h" if h else "") + (f"{m}m" if m or h else "") + f"{s}s"

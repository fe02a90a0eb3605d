"""Every kubelet log line podlife writes: upstream wording, file and line, in two styles.

``legacy`` is the printf-style klog of the 1.18-era kubelet (line numbers read off the seed-000 log where it
shows them); ``structured`` is klog's InfoS form used from 1.21 on (KEP-1602). A site renders from a context
of named values (see ``Ctx``), so callers never format log text themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from podlife.api.gofmt import go_quote


@dataclass(frozen=True)
class Legacy:
    """A kubelet log call before structured logging: source file, line and text."""

    file: str
    line: int
    template: str                          # str.format over the context


@dataclass(frozen=True)
class Structured:
    """A structured kubelet log call: source file, line and message."""

    file: str
    line: int
    message: str
    keys: tuple[tuple[str, str], ...] = ()  # (klog key, context field)
    severity: str = ""                      # when it differs from the legacy call's


@dataclass(frozen=True)
class Site:
    """A kubelet log line in both its legacy and its structured form."""

    severity: str
    legacy: Legacy
    structured: Structured


def _pod_keys(*extra: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return (("pod", "pod_kobj"), ("podUID", "pod_uid")) + extra


_CONTAINER = (("containerName", "cname"), ("containerID", "cid"))

SITES: dict[str, Site] = {
    # pkg/kubelet/kubelet.go syncLoopIteration
    "sync_add": Site("I", Legacy("kubelet.go", 1901, 'SyncLoop (ADD, "api"): "{pod_full}"'),
                     Structured("kubelet.go", 2440, "SyncLoop ADD", (("source", "source"), ("pods", "pods")))),
    "sync_update": Site("I", Legacy("kubelet.go", 1904, 'SyncLoop (UPDATE, "api"): "{pod_full_deletion}"'),
                        Structured("kubelet.go", 2446, "SyncLoop UPDATE", (("source", "source"), ("pods", "pods")))),
    "sync_remove": Site("I", Legacy("kubelet.go", 1907, 'SyncLoop (REMOVE, "api"): "{pod_full}"'),
                        Structured("kubelet.go", 2449, "SyncLoop REMOVE", (("source", "source"), ("pods", "pods")))),
    "sync_delete": Site("I", Legacy("kubelet.go", 1913, 'SyncLoop (DELETE, "api"): "{pod_full}"'),
                        Structured("kubelet.go", 2455, "SyncLoop DELETE", (("source", "source"), ("pods", "pods")))),
    "sync_pleg": Site("I", Legacy("kubelet.go", 1942,
                                  'SyncLoop (PLEG): "{pod_full}", event: &pleg.PodLifecycleEvent{{ID:"{pod_uid}", '
                                  'Type:"{event_type}", Data:"{event_data}"}}'),
                      Structured("kubelet.go", 2485, "SyncLoop (PLEG): event for pod",
                                 (("pod", "pod_kobj"), ("event", "pleg_event")))),
    # pkg/kubelet/kubelet_pods.go generateAPIPodStatus
    "generating_status": Site("I", Legacy("kubelet_pods.go", 1433, 'Generating status for "{pod_full}"'),
                              Structured("kubelet_pods.go", 1591, "Generating pod status",
                                         (("podIsTerminal", "pod_is_terminal"), ("pod", "pod_kobj")))),
    # pkg/kubelet/status/status_manager.go TerminatePod (1.27+: only structured)
    "marking_terminal_failed": Site("I", Legacy("status_manager.go", 610,
                                                'Marking terminal pod as failed oldPhase="{old_phase}"'),
                                    Structured("status_manager.go", 610, "Marking terminal pod as failed",
                                               (("oldPhase", "old_phase"), ("pod", "pod_kobj"),
                                                ("podUID", "pod_uid")))),
    # pkg/kubelet/kubelet_pods.go PodResourcesAreReclaimed (<=1.21)
    "terminated_but_running": Site(
        "I", Legacy("kubelet_pods.go", 993, 'Pod "{pod_full}" is terminated, but some containers are still running'),
        Structured("kubelet_pods.go", 993, "Pod is terminated, but some containers are still running",
                   (("pod", "pod_kobj"),))),
    # pkg/kubelet/kuberuntime/kuberuntime_container.go executePreStopHook / killContainer
    "prestop_running": Site("I", Legacy("kuberuntime_container.go", 468,
                                        'Running preStop hook for container "{cid}"'),
                            Structured("kuberuntime_container.go", 652, "Running preStop hook",
                                       _pod_keys(*_CONTAINER))),
    "prestop_completed": Site("I", Legacy("kuberuntime_container.go", 485,
                                          "preStop hook for container {cid_struct} completed"),
                              Structured("kuberuntime_container.go", 676, "PreStop hook completed",
                                         _pod_keys(*_CONTAINER))),
    "prestop_timeout": Site("I", Legacy("kuberuntime_container.go", 483,
                                        'preStop hook for container "{cid}" did not complete in {grace} seconds'),
                            Structured("kuberuntime_container.go", 674, "PreStop hook not completed in grace period",
                                       _pod_keys(*_CONTAINER, ("gracePeriod", "grace")))),
    "prestop_failed": Site("E", Legacy("kuberuntime_container.go", 286,
                                       'preStop hook for container "{cid}" failed: {error}'),
                           Structured("kuberuntime_container.go", 660, "PreStop hook failed",
                                      (("err", "error"),) + _pod_keys(*_CONTAINER))),
    "killing_grace": Site("I", Legacy("kuberuntime_container.go", 563,
                                      'Killing container "{cid}" with {grace} second grace period'),
                          Structured("kuberuntime_container.go", 809, "Killing container with a grace period",
                                     _pod_keys(*_CONTAINER, ("gracePeriod", "grace")))),
    "killing_override": Site("I", Legacy("kuberuntime_container.go", 580,
                                         "Killing container {cid_struct}, but using {grace} second grace period "
                                         "override"),
                             Structured("kuberuntime_container.go", 788, "Killing container with a grace period "
                                        "override", _pod_keys(*_CONTAINER, ("gracePeriod", "grace")))),
    "container_exited": Site("I", Legacy("kuberuntime_container.go", 587, 'Container "{cid}" exited normally'),
                             Structured("kuberuntime_container.go", 818, "Container exited normally",
                                        _pod_keys(*_CONTAINER))),
    "container_stop_failed": Site("E", Legacy("kuberuntime_container.go", 585,
                                              'Container "{cid}" termination failed with gracePeriod {grace}: '
                                              '{error}'),
                                  Structured("kuberuntime_container.go", 815, "Container termination failed with "
                                             "gracePeriod", (("err", "error"),) + _pod_keys(
                                                 *_CONTAINER, ("gracePeriod", "grace")))),
    # pkg/kubelet/kubelet.go syncLoop: runtimeErrors() is not empty (line from the seed-001 log)
    "skipping_pod_sync": Site("I", Legacy("kubelet.go", 1835, "skipping pod synchronization - {errors}"),
                              Structured("kubelet.go", 2406, "Skipping pod synchronization", (("err", "errors"),),
                                         severity="E")),
    # pkg/kubelet/prober/prober.go probe: a container this kubelet did not start has no object reference
    "prober_no_ref": Site("W", Legacy("prober.go", 93, 'No ref for container "{cid}" ({cname})'),
                          Structured("prober.go", 90, "No ref for container", (("containerID", "cid"),
                                                                              ("containerName", "cname")),
                                     severity="I")),
    # pkg/kubelet/cri/remote/remote_runtime.go (pkg/kubelet/remote before 1.20)
    "stop_container_failed": Site("E", Legacy("remote_runtime.go", 274,
                                              'StopContainer "{container_id}" from runtime service failed: {error}'),
                                  Structured("remote_runtime.go", 374, "StopContainer from runtime service failed",
                                             (("err", "error"), ("containerID", "container_id")))),
    # pkg/kubelet/pod_workers.go: a failed sync
    "sync_error": Site("E", Legacy("pod_workers.go", 191, 'Error syncing pod {pod_uid} ("{pod_full}"), skipping: '
                                                          '{error}'),
                       Structured("pod_workers.go", 1301, "Error syncing pod, skipping",
                                  (("err", "error"), ("pod", "pod_kobj"), ("podUID", "pod_uid")))),
    # pkg/kubelet/dockershim/network/plugins.go (1.18, docker runtimes only)
    "cni_teardown": Site("I", Legacy("plugins.go", 391,
                                     'Calling network plugin cni to tear down pod "{pod_name}_{pod_namespace}"'),
                         Structured("plugins.go", 391, "Calling network plugin cni to tear down pod",
                                    (("pod", "pod_kobj"),))),
    # pkg/kubelet/status/status_manager.go
    "status_patched": Site("I", Legacy("status_manager.go", 506,
                                       'Status for pod "{pod_full}" updated successfully: ({status_version}, '
                                       '{{Phase:{phase} PodIP:{pod_ip}}})'),
                           Structured("status_manager.go", 874, "Status for pod updated successfully",
                                      (("pod", "pod_kobj"), ("statusVersion", "status_version"),
                                       ("status", "status_brief")))),
    "removed_from_etcd": Site("I", Legacy("status_manager.go", 519,
                                          'Pod "{pod_full}" fully terminated and removed from etcd'),
                              Structured("status_manager.go", 897, "Pod fully terminated and removed from etcd",
                                         (("pod", "pod_kobj"),))),
    "delete_not_found": Site("I", Legacy("kubelet.go", 2109, 'Failed to delete pod "{pod_full}", err: pod not found'),
                             Structured("kubelet.go", 2109, "Failed to delete pod", (("pod", "pod_kobj"),
                                                                                     ("err", "error")))),
    # pkg/kubelet/pod_workers.go
    "cancel_sync": Site("I", Legacy("pod_workers.go", 219, 'Cancelling current pod sync for "{pod_full}"'),
                        Structured("pod_workers.go", 855, "Cancelling current pod sync",
                                   (("pod", "pod_kobj"), ("podUID", "pod_uid"), ("updateType", "update_type")))),
    # staging/src/k8s.io/client-go/tools/record/event.go: the recorder logs every event it records
    "event": Site("I", Legacy("event.go", 221,
                              'Event(v1.ObjectReference{{Kind:"{kind}", Namespace:"{namespace}", Name:"{name}", '
                              'UID:"{uid}", APIVersion:"{api_version}", ResourceVersion:"{resource_version}", '
                              'FieldPath:"{field_path}"}}): type: \'{type}\' reason: \'{reason}\' {message}'),
                  Structured("event.go", 389, "Event occurred",
                             (("object", "object"), ("fieldPath", "field_path"), ("kind", "kind"),
                              ("apiVersion", "api_version"), ("type", "type"), ("reason", "reason"),
                              ("message", "message")))),
    "no_sandbox": Site("I", Legacy("kuberuntime_manager.go", 478,
                                   'No sandbox for pod "{pod_full}" can be found. Need to start a new one'),
                       Structured("kuberuntime_manager.go", 1012, "No sandbox for pod can be found. Need to start a "
                                  "new one", (("pod", "pod_kobj"),))),
    # pkg/kubelet/eviction/eviction_manager.go (legacy lines as 1.18-era kubelets print them, structured as
    # 1.30-era ones do where logs show them; the others placed between)
    "ev_attempt": Site("W", Legacy("eviction_manager.go", 344, "eviction manager: attempting to reclaim {resource}"),
                       Structured("eviction_manager.go", 381, "Eviction manager: attempting to reclaim",
                                  (("resourceName", "resource"),), severity="I")),
    "ev_reduced": Site("I", Legacy("eviction_manager.go", 351,
                                   "eviction manager: able to reduce {resource} pressure without evicting pods."),
                       Structured("eviction_manager.go", 388, "Eviction manager: able to reduce resource pressure "
                                  "without evicting pods.", (("resourceName", "resource"),))),
    "ev_must_evict": Site("I", Legacy("eviction_manager.go", 355, "eviction manager: must evict pod(s) to reclaim "
                                      "{resource}"),
                          Structured("eviction_manager.go", 392, "Eviction manager: must evict pod(s) to reclaim",
                                     (("resourceName", "resource"),))),
    "ev_no_pods": Site("E", Legacy("eviction_manager.go", 366, "eviction manager: eviction thresholds have been met, "
                                   "but no pods are active to evict"),
                       Structured("eviction_manager.go", 403, "Eviction manager: eviction thresholds have been met, "
                                  "but no pods are active to evict")),
    "ev_ranked": Site("I", Legacy("eviction_manager.go", 373, "eviction manager: pods ranked for eviction: "
                                  "{pods_legacy}"),
                      Structured("eviction_manager.go", 410, "Eviction manager: pods ranked for eviction",
                                 (("pods", "pods_kobj"),))),
    "ev_unable": Site("I", Legacy("eviction_manager.go", 396, "eviction manager: unable to evict any pods from the "
                                  "node"),
                      Structured("eviction_manager.go", 445, "Eviction manager: unable to evict any pods from the "
                                 "node")),
    "ev_waiting_cleanup": Site("I", Legacy("eviction_manager.go", 176, "eviction manager: pods {pods_legacy} evicted, "
                                           "waiting for pod to be cleaned up"),
                               Structured("eviction_manager.go", 213, "Eviction manager: pods evicted, waiting for "
                                          "pod to be cleaned up", (("pods", "pods_kobj"),))),
    "ev_cleanup_timeout": Site("I", Legacy("eviction_manager.go", 405, "eviction manager: timed out waiting for pods "
                                           "{pods_legacy} to be cleaned up"),
                               Structured("eviction_manager.go", 456, "Eviction manager: timed out waiting for pods "
                                          "to be cleaned up", (("pods", "pods_kobj"),))),
    "ev_cleaned": Site("I", Legacy("eviction_manager.go", 413, "eviction manager: pods {pods_legacy} successfully "
                                   "cleaned up"),
                       Structured("eviction_manager.go", 465, "Eviction manager: pods successfully cleaned up",
                                  (("pods", "pods_kobj"),))),
    "ev_critical": Site("E", Legacy("eviction_manager.go", 564, "eviction manager: cannot evict a critical pod "
                                    "{pod_full}"),
                        Structured("eviction_manager.go", 618, "Eviction manager: cannot evict a critical pod",
                                   (("pod", "pod_kobj"),))),
    "ev_evicting": Site("I", Legacy("eviction_manager.go", 570, "Evicting pod {pod_full}: {message}"),
                        Structured("eviction_manager.go", 624, "Evicting pod",
                                   (("pod", "pod_kobj"), ("podUID", "pod_uid"), ("message", "message")))),
    "ev_evict_failed": Site("E", Legacy("eviction_manager.go", 576, "eviction manager: pod {pod_full} failed to "
                                        "evict {error}"),
                            Structured("eviction_manager.go", 644, "Eviction manager: pod failed to evict",
                                       (("err", "error"), ("pod", "pod_kobj")))),
    "ev_evicted": Site("I", Legacy("eviction_manager.go", 578, "eviction manager: pod {pod_full} is evicted "
                                   "successfully"),
                       Structured("eviction_manager.go", 646, "Eviction manager: pod is evicted successfully",
                                  (("pod", "pod_kobj"),))),
    "ev_admit_failed": Site("W", Legacy("eviction_manager.go", 162, "Failed to admit pod {pod_full} - node has "
                                        "conditions: {conditions}"),
                            Structured("eviction_manager.go", 167, "Failed to admit pod to node",
                                       (("pod", "pod_kobj"), ("nodeCondition", "conditions_raw")), severity="I")),
    # pkg/kubelet/container_gc.go, images/image_gc_manager.go: the eviction manager's node-level reclaim
    "container_gc": Site("I", Legacy("container_gc.go", 85, "attempting to delete unused containers"),
                         Structured("container_gc.go", 86, "Attempting to delete unused containers")),
    "image_gc": Site("I", Legacy("image_gc_manager.go", 321, "attempting to delete unused images"),
                     Structured("image_gc_manager.go", 459, "Attempting to delete unused images")),
}


class Raw(str):
    """A value klog prints as it is (a slice of objects, e.g. ``pods=["default/a","default/b"]``)."""


def _q(v: Any) -> str:
    """klog's rendering of a structured value."""
    if isinstance(v, Raw):
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list):
        return "[" + " ".join(f'"{x}"' for x in v) + "]"
    s = str(v)
    # klog quotes a string value with strconv.Quote (an error's nested %q quotes come out as \\\")
    return s if s.startswith("{") else go_quote(s)


def severity(site: Site, structured: bool) -> str:
    return site.structured.severity if structured and site.structured.severity else site.severity


def render(site: Site, structured: bool, ctx: dict[str, Any]) -> tuple[str, int, str]:
    """(file, line, message) of a site for a context."""
    if structured:
        s = site.structured
        parts = [f'"{s.message}"'] + [f"{k}={_q(ctx[f])}" for k, f in s.keys if f in ctx]
        return s.file, s.line, " ".join(parts)
    lg = site.legacy
    return lg.file, lg.line, lg.template.format(**ctx)

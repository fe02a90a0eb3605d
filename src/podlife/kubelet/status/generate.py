"""The pod status the kubelet reports: pkg/kubelet/kubelet_pods.go generateAPIPodStatus and getPhase,
pkg/kubelet/status/generate.go for the conditions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podlife.api.meta import Obj
from podlife.kubelet.kuberuntime.manager import restart_condition_true
from podlife.kubelet.kuberuntime.ordering import is_restartable_init
from podlife.kubelet.restartpolicy import could_restart_all as could_restart_all_in, restarts_all
from podlife.runtime.cri import EXITED, RUNNING, Container
from podlife.versions import Profile

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled",
                      "AllContainersRestarting")
# kubelet_pods.go convertToAPIContainerStatuses: a container removed by RestartAllContainers
RESTARTING_ALL = "RestartingAllContainers"
RESTARTING_ALL_MESSAGE = "The container is removed because RestartAllContainers in place"


def _ts(kl: Kubelet, t: float | None) -> str | None:
    return None if t is None else kl.trace.timestamp(t)


# containerStatuses fields a real kubelet reports that podlife does not generate
UNMODELLED_FIELDS = ("volumeMounts", "resources", "allocatedResources", "allocatedResourcesStatus", "user")


def container_status(kl: Kubelet, pod: Obj, spec: Obj, c: Container | None, prev: Container | None,
                     has_init: bool, ready: bool, started: bool) -> Obj:
    """convertToAPIContainerStatuses for one container."""
    uid = pod["metadata"]["uid"]
    st: dict[str, Any] = {"name": spec["name"], "image": (c.status_image if c is not None and c.status_image else
                                                          spec.get("image", "")),
                          "imageID": c.image_id if c is not None else "",
                          "ready": False, "restartCount": c.attempt if c else 0, "started": False}
    last: dict[str, Any] = {}
    waiting_reason = kl.runtime_manager.reasons.get((uid, spec["name"]))
    if c is None:
        reason = waiting_reason or (("PodInitializing", "") if has_init else ("ContainerCreating", ""))
        st["state"] = {"waiting": _waiting(*reason)}
        old = _old_status(kl, pod, spec["name"])
        if old is not None and restart_condition_true(kl, pod) and "waiting" not in (old.get("state") or {}):
            # removed by RestartAllContainers: waiting to run again, its last state says why (PR #136964)
            st["state"] = {"waiting": {"reason": RESTARTING_ALL, "message": RESTARTING_ALL_MESSAGE}}
            last = {"terminated": {"exitCode": 137, "reason": RESTARTING_ALL, "message": RESTARTING_ALL_MESSAGE}}
            st["restartCount"] = old.get("restartCount", 0) + 1
        elif old is not None:
            st["restartCount"] = old.get("restartCount", 0)
            last = dict(old.get("lastState") or {})
            if "running" in (old.get("state") or {}) and not reason[1] and "terminated" not in last:
                # convertToAPIContainerStatuses: it was running and is gone without a trace: it terminated,
                # exit unknown; unless the pod is being deleted that counts as a restart
                last = {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown", "message":
                                       "The container could not be located when the pod was deleted.  The "
                                       "container used to be Running"}}
                if not pod["metadata"].get("deletionTimestamp"):
                    st["restartCount"] += 1
    elif c.state == RUNNING:
        st["state"] = {"running": {"startedAt": _ts(kl, c.started_at)}}
        st["ready"] = ready
        st["started"] = started
        st["containerID"] = kl.runtime.container_id(c)
    elif c.state == EXITED:
        term = _terminated(kl, c)
        st["containerID"] = kl.runtime.container_id(c)
        # convertToAPIContainerStatuses: only a container ShouldContainerBeRestarted is Waiting with the reason
        # of its failed start; under restartPolicy Never (and no policy of its own) it stays terminated
        never = pod["spec"].get("restartPolicy") == "Never" and not spec.get("restartPolicy") and not (
            kl.profile.container_restart_rules and spec.get("restartPolicyRules"))
        if waiting_reason and not never and waiting_reason[0] in (
                "CrashLoopBackOff", "PostStartHookError", "ImagePullBackOff", "ErrImagePull", "RunContainerError"):
            st["state"] = {"waiting": _waiting(*waiting_reason)}
            last = {"terminated": term}
        else:
            st["state"] = {"terminated": term}
    else:
        st["state"] = {"waiting": _waiting("ContainerCreating", "")}
        st["containerID"] = kl.runtime.container_id(c)
    if not last and prev is None and c is not None:
        # no dead container in the runtime to say what came before: the old status's lastState stands
        old = _old_status(kl, pod, spec["name"])
        if old is not None and old.get("restartCount", 0) <= st["restartCount"]:
            last = dict(old.get("lastState") or {})
    if not last and prev is not None and prev.state == EXITED:
        last = {"terminated": _terminated(kl, prev)}
    st["lastState"] = last
    if c is not None and c.image_id:
        # a container adopted from a dump (podlife.importer): what its node reported that podlife does not model
        # (mounts, resources, user) is reported on, unchanged, for as long as the container lives
        old = _old_status(kl, pod, spec["name"])
        if old is not None and old.get("containerID") == st.get("containerID"):
            for k in UNMODELLED_FIELDS:
                if k in old:
                    st[k] = old[k]
    signal = (spec.get("lifecycle") or {}).get("stopSignal")
    if c is not None and signal and kl.profile.container_stop_signals:
        # KEP-4960: the effective stop signal (podlife knows the spec's; an image's STOPSIGNAL it cannot see)
        st["stopSignal"] = signal
    return st


def _terminated(kl: Kubelet, c: Container) -> Obj:
    """ContainerStateTerminated of an exited container, in the API's field order; its message is the runtime's
    then the container's own (kuberuntime_container.go getPodContainerStatuses)."""
    term: dict[str, Any] = {"exitCode": c.exit_code, "reason": c.reason}
    message = kl.runtime.termination_message(c)
    if message:
        term["message"] = message
    term.update(startedAt=_ts(kl, c.started_at), finishedAt=_ts(kl, c.finished_at),
                containerID=kl.runtime.container_id(c))
    return term


def _old_status(kl: Kubelet, pod: Obj, name: str) -> Obj | None:
    old = kl.status_manager.get(pod["metadata"]["uid"]) or pod.get("status") or {}
    for field_name in ("containerStatuses", "initContainerStatuses"):
        for cs in old.get(field_name) or ():
            if cs["name"] == name:
                return cs
    return None


def _waiting(reason: str, message: str) -> Obj:
    return {"reason": reason, "message": message} if message else {"reason": reason}


def get_phase(pod: Obj, init_statuses: list[Obj], statuses: list[Obj], pod_is_terminal: bool,
              terminal_phase_rule: bool, profile: Profile | None = None) -> str:
    """getPhase (pkg/kubelet/kubelet_pods.go); sidecars do not count for the pod's phase."""
    spec = pod["spec"]
    policy = spec.get("restartPolicy", "Always")
    by_name = {s["name"]: s for s in init_statuses}
    pending_init = failed_init = 0
    for ic in spec.get("initContainers") or ():
        s = by_name.get(ic["name"])
        if s is None:
            pending_init += 1
            continue
        state = s["state"]
        if is_restartable_init(ic):
            continue  # sidecars are counted with the regular containers below
        if _restarted_all(s):
            pending_init += 1   # removed by RestartAllContainers, about to run again
            continue
        if "running" in state:
            pending_init += 1
        elif "terminated" in state:
            if restarts_all(ic, state["terminated"]["exitCode"], profile):
                pending_init += 1   # the whole pod starts again (KEP-5532)
                continue
            failed_init += state["terminated"]["exitCode"] != 0
        elif s.get("lastState", {}).get("terminated"):
            failed_init += s["lastState"]["terminated"]["exitCode"] != 0
        else:
            pending_init += 1
    unknown = running = waiting = stopped = succeeded = 0
    by_name = {s["name"]: s for s in statuses}
    for c in spec.get("containers") or ():
        s = by_name.get(c["name"])
        if s is None:
            unknown += 1
            continue
        state = s["state"]
        if _restarted_all(s):
            waiting += 1
            continue
        if "running" in state:
            running += 1
        elif "terminated" in state:
            if _rule_restarts(pod, c, state["terminated"]["exitCode"], profile):
                running += 1   # its own restart policy or rules start it again: the pod is not done
                continue
            stopped += 1
            succeeded += state["terminated"]["exitCode"] == 0
        elif s.get("lastState", {}).get("terminated"):
            if _rule_restarts(pod, c, s["lastState"]["terminated"]["exitCode"], profile):
                running += 1   # backing off before the restart its rules ask for
                continue
            stopped += 1
        else:
            waiting += 1
    # restartable init containers: running but not started, or waiting for a first start, hold the pod
    # in Pending; an exited one is ignored (getPhase, 1.29+)
    for ic in spec.get("initContainers") or ():
        if not is_restartable_init(ic):
            continue
        s = {x["name"]: x for x in init_statuses}.get(ic["name"])
        if s is None:
            unknown += 1
        elif "running" in s["state"]:
            waiting += not s.get("started")
        elif "waiting" in s["state"] and not s.get("lastState", {}).get("terminated"):
            waiting += 1
    if failed_init and policy == "Never":
        return "Failed"
    if pending_init or waiting:
        return "Pending"
    if running and not unknown:
        return "Running"
    if not running and stopped and not unknown:
        if pod_is_terminal and terminal_phase_rule:
            # a pod that will not run again is terminal whatever its restart policy (1.27+)
            return "Succeeded" if stopped == succeeded else "Failed"
        if policy == "Always":
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "Never":
            return "Failed"
        return "Running"
    return "Pending"


def _restarted_all(s: Obj) -> bool:
    """Waiting to run again after RestartAllContainers removed it: neither stopped nor a failed init."""
    return "waiting" in s["state"] and RESTARTING_ALL in (
        (s["state"]["waiting"] or {}).get("reason"), ((s.get("lastState") or {}).get("terminated") or {}).get("reason"))


def _rule_restarts(pod: Obj, container: Obj, exit_code: int, profile: Profile | None) -> bool:
    """Only the container-level policy or rules (1.35+) change the phase; the pod-level policy is handled by
    getPhase's own cases."""
    if profile is None or not profile.container_restart_rules or not (
            container.get("restartPolicy") or container.get("restartPolicyRules")):
        return False
    from podlife.kubelet.restartpolicy import restarts

    return restarts(pod, container, exit_code, profile)


def _condition(ctype: str, ok: bool, reason: str = "", message: str = "") -> Obj:
    c: dict[str, Any] = {"type": ctype, "status": "True" if ok else "False"}
    if not ok and reason:
        c["reason"] = reason
    if not ok and message:
        c["message"] = message
    return c


def conditions(kl: Kubelet, pod: Obj, phase: str, init_statuses: list[Obj], statuses: list[Obj],
               sandbox_ready: bool) -> list[Obj]:
    """PodReadyToStartContainers (1.29+), Initialized, Ready, ContainersReady, PodScheduled."""
    out = []
    profile = kl.profile
    if profile.pod_ready_to_start_containers:
        out.append({"type": "PodReadyToStartContainers", "status": "True"} if sandbox_ready else
                   {"type": "PodReadyToStartContainers", "status": "False"})
    init_specs = pod["spec"].get("initContainers")
    incomplete = [s["name"] for ic, s in zip(init_specs, init_statuses)
                  if not (("terminated" in s["state"] and s["state"]["terminated"]["exitCode"] == 0)
                          or (is_restartable_init(ic) and s.get("started")))] if init_specs else []
    if phase == "Succeeded" or (phase == "Failed" and not incomplete):
        incomplete = []
    could_restart_all = profile.restart_all_containers and could_restart_all_in(pod, profile)
    if could_restart_all and _was_initialized(kl, pod):
        incomplete = []   # KEP-5532: a pod restarting in place stays Initialized
    # (a condition's message is made only when the condition is False: _condition leaves it out otherwise)
    out.append(_condition("Initialized", False, "ContainersNotInitialized",
                          f"containers with incomplete status: [{' '.join(incomplete)}]") if incomplete else
               {"type": "Initialized", "status": "True"})
    unready = [s["name"] for s in statuses if not s["ready"]]
    if init_specs:
        unready += [s["name"] for ic, s in zip(init_specs, init_statuses)
                    if is_restartable_init(ic) and not s["ready"]]
    # status/generate.go GenerateContainersReadyCondition: a terminal phase gives its own reason
    if phase == "Succeeded":
        reason, msg = "PodCompleted", ""
    elif phase == "Failed" and profile.failed_pod_ready_reason == "PodFailed":
        reason, msg = "PodFailed", ""
        unready = unready or ["(terminal)"]  # never ready once Failed, whatever the containers say
    else:
        reason, msg = "ContainersNotReady", f"containers with unready status: [{' '.join(unready)}]" if unready else ""
    ready = not unready and phase != "Succeeded"
    out.append(_pod_ready(pod, ready, reason, msg))
    out.append(_condition("ContainersReady", ready, reason, msg))
    out.append({"type": "PodScheduled", "status": "True"})
    if could_restart_all:
        out.append(_all_containers_restarting(kl, pod, phase))
    return out


def _pod_ready(pod: Obj, containers_ready: bool, reason: str, msg: str) -> Obj:
    """GeneratePodReadyCondition: ContainersReady's verdict, then each readiness gate's condition among those
    others set in the pod's status (a missing or non-True one keeps the pod not ready)."""
    if not containers_ready:
        return _condition("Ready", False, reason, msg)
    if not pod["spec"].get("readinessGates"):
        return {"type": "Ready", "status": "True"}
    have = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or ()}
    unready = []
    for gate in pod["spec"].get("readinessGates") or ():
        ct = gate.get("conditionType", "")
        if ct not in have:
            unready.append(f'corresponding condition of pod readiness gate "{ct}" does not exist.')
        elif have[ct] != "True":
            unready.append(f'the status of pod readiness gate "{ct}" is not "True", but {have[ct]}')
    if unready:
        return _condition("Ready", False, "ReadinessGatesNotReady", ", ".join(unready))
    return _condition("Ready", True)


def need_to_reconcile_readiness(pod: Obj) -> bool:
    """NeedToReconcilePodReadiness: a pod with readiness gates whose Ready in the API no longer matches what
    its gates' conditions give."""
    if not pod["spec"].get("readinessGates"):
        return False
    status = pod.get("status") or {}
    conds = {c.get("type"): c for c in status.get("conditions") or ()}
    cur = conds.get("Ready")
    if cur is None:
        return False
    cr = conds.get("ContainersReady") or {}
    want = _pod_ready(pod, cr.get("status") == "True", cr.get("reason", ""), cr.get("message", ""))
    return cur.get("status") != want["status"] or cur.get("message", "") != want.get("message", "")


def _was_initialized(kl: Kubelet, pod: Obj) -> bool:
    status = kl.status_manager.get(pod["metadata"]["uid"]) or pod.get("status") or {}
    return any(c.get("type") == "Initialized" and c.get("status") == "True" for c in status.get("conditions") or ())


def _all_containers_restarting(kl: Kubelet, pod: Obj, phase: str) -> Obj:
    """status/generate.go GenerateAllContainersRestartingCondition (only for a pod with a RestartAllContainers
    rule): True from the exit that matched until every container is removed."""
    if phase in ("Succeeded", "Failed"):
        return {"type": "AllContainersRestarting", "status": "False",
                "reason": "PodCompleted" if phase == "Succeeded" else "PodFailed"}
    if kl.runtime_manager.restarting_all(pod):
        return {"type": "AllContainersRestarting", "status": "True", "reason": "RestartAllContainersStarted",
                "message": "container exited with restart policy rule"}
    return {"type": "AllContainersRestarting", "status": "False"}

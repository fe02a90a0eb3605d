"""Starting and killing one container: pkg/kubelet/kuberuntime/kuberuntime_container.go."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import simpy

from podlife.api.meta import Obj
from podlife.api.expansion import expand
from podlife.kubelet.envvars import make_environment
from podlife.runtime.cri import RUNNING, Container, ContainerConfig, RuntimeError_, Sandbox

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet
    from podlife.kubelet.kuberuntime.ordering import TerminationOrdering

MINIMUM_GRACE_PERIOD = 2  # minimumGracePeriodInSeconds
Gen = Generator[simpy.Event, Any, Any]


def container_spec(pod: Obj, name: str) -> Obj | None:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c in pod["spec"].get(field) or ():
            if c["name"] == name:
                return c
    return None


def field_path(pod: Obj, name: str) -> str:
    for field in ("initContainers", "containers", "ephemeralContainers"):
        for c in pod["spec"].get(field) or ():
            if c["name"] == name:
                return f"spec.{field}{{{name}}}"
    return ""


def generate_container_config(kl: Kubelet, pod: Obj, spec: Obj, sb: Sandbox, attempt: int,
                              env: list[tuple[str, str]] | None = None) -> ContainerConfig:
    """generateContainerConfig: the environment (makeEnvironmentVariables), then the command and args with
    their $(VAR) references expanded (ExpandContainerCommandAndArgs), the log path <name>/<restartCount>.log
    (BuildContainerLogsPath); lifecycle.stopSignal where the version passes it (ContainerStopSignals, 1.37+).
    ``env``: the environment, when the caller has just made it."""
    pod_ips = kl.pod_ips(pod, sb)
    if env is None:
        env = make_environment(kl.store, pod, spec, pod_ips, [kl.node_ip], kl.node_spec.capacity)
    values = dict(env)
    stop = ((spec.get("lifecycle") or {}).get("stopSignal") or "") if kl.profile.container_stop_signals else ""
    return ContainerConfig(spec["name"], spec.get("image", ""), attempt,
                           [expand(a, values) for a in spec.get("command") or ()],
                           [expand(a, values) for a in spec.get("args") or ()], env, spec.get("workingDir", ""),
                           f"{spec['name']}/{attempt}.log", pod, spec, stop, pod_ips)


def execute_prestop(kl: Kubelet, pod: Obj, c: Container, spec: Obj, grace: int) -> Gen:
    """executePreStopHook: run the hook, wait for it or the grace period; return whole seconds elapsed
    (int64(time.Since(start).Seconds()) truncates)."""
    start = kl.kernel.now
    ctx = kl.container_ctx(pod, c)
    kl.log("prestop_running", pod, **ctx)
    kl.trace.emit("hook", object=c.pod_ref, container=c.name, hook="preStop", phase="started")
    hook = kl.go(_run_hook(kl, c, "preStop"))
    limit = kl.kernel.timer(grace)
    yield hook | limit
    kl.kernel.cancel(limit)
    if hook.triggered and hook.ok:
        err = hook.value
        if err:
            kl.log("prestop_failed", pod, error=err, **ctx)
            kl.events.container_event(pod, c.name, "Warning", "FailedPreStopHook", "PreStopHook failed")
            kl.trace.emit("hook", object=c.pod_ref, container=c.name, hook="preStop", phase="failed")
        else:
            kl.log("prestop_completed", pod, **ctx)
            kl.trace.emit("hook", object=c.pod_ref, container=c.name, hook="preStop", phase="completed")
    else:
        kl.log("prestop_timeout", pod, grace=grace, **ctx)
        kl.trace.emit("hook", object=c.pod_ref, container=c.name, hook="preStop", phase="timedOut")
    return int(kl.kernel.now - start)


def _run_hook(kl: Kubelet, c: Container, hook: str) -> Gen:
    """The hook handler (pkg/kubelet/lifecycle/handlers.go Run); returns an error string or "". Exec and HTTP
    handlers act on the container, through the runtime."""
    spec = container_spec_by_ref(kl, c) or {}
    handler = (spec.get("lifecycle") or {}).get(hook) or {}
    try:
        if "tcpSocket" in handler:
            # tcpSocket is kept in the API for compatibility only, the runner has no case for it
            yield kl.kernel.timeout(0)
            return "Cannot run handler: invalid handler"
        if "sleep" in handler:
            # runSleepHandler: waits the seconds (the caller's grace timer cuts it short), or returns at once when
            # the kubelet's PodLifecycleSleepAction gate is off; nothing runs in the container
            seconds = int((handler.get("sleep") or {}).get("seconds") or 0)
            yield kl.kernel.timeout(seconds if kl.profile.lifecycle_sleep_action else 0)
            return ""
        err = yield from kl.runtime.run_hook(c, hook, handler, spec)
        pod = kl.pod_manager.get(c.pod_uid)
        for reason, message in kl.runtime.hook_events(c.id):
            if pod is not None:   # handlers.go: the fallback recorded on the pod
                kl.events.pod_event(pod, "Warning", reason, message)
        return err
    except RuntimeError_ as e:
        return str(e)


def container_spec_by_ref(kl: Kubelet, c: Container) -> Obj | None:
    pod = kl.pod_manager.get(c.pod_uid)
    return container_spec(pod, c.name) if pod else None


def kill_container(kl: Kubelet, pod: Obj, c: Container, message: str, grace_override: int | None,
                   ordering: TerminationOrdering | None = None, grace: int | None = None) -> Gen:
    """killContainer, per version (see the ``grace_override`` and ``killing_event`` rules). ``grace`` is a
    probe's own terminationGracePeriodSeconds for a liveness/startup kill (setTerminationGracePeriod)."""
    p = kl.profile
    spec = container_spec(pod, c.name) or {}
    if grace is None:
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
    if grace is None:
        grace = pod["spec"].get("terminationGracePeriodSeconds", MINIMUM_GRACE_PERIOD)
    ctx = kl.container_ctx(pod, c)
    legacy = p.killing_event == "legacy"
    if legacy:
        # the seed-000 kubelet logs the kill, with the pod's grace, before the preStop hook
        kl.log("killing_grace", pod, grace=grace, **ctx)
    else:
        kl.events.container_event(pod, c.name, "Normal", "Killing", message or f"Stopping container {c.name}")
    if p.grace_override == "before-prestop" and grace_override is not None:
        grace = grace_override  # PR #115835
        kl.log("killing_override", pod, grace=grace, **ctx)
    prestop = (spec.get("lifecycle") or {}).get("preStop")
    if prestop and grace > 0 and c.state == RUNNING:
        grace -= yield from execute_prestop(kl, pod, c, spec, grace)
    if ordering is not None and grace > 0:
        grace -= int((yield from ordering.wait_for_turn(c.name, grace)))
    if grace < MINIMUM_GRACE_PERIOD:
        grace = MINIMUM_GRACE_PERIOD  # always a minimal shutdown window
    if p.grace_override != "before-prestop" and grace_override is not None:
        grace = grace_override  # not clamped: a negative override reaches the runtime
        kl.log("killing_override", pod, grace=grace, **ctx)
    if not legacy:
        kl.log("killing_grace", pod, grace=grace, **ctx)
    err = yield from kl.remote.stop_container(c, grace)
    if err:
        kl.log("container_stop_failed", pod, grace=grace, error=err, **ctx)
    else:
        kl.log("container_exited", pod, **ctx)
    if ordering is not None:
        ordering.container_terminated(c.name)
    if legacy:
        msg = f"Killing container with id {kl.runtime.profile.id_scheme}://{c.name}"
        kl.events.container_event(pod, c.name, "Normal", "Killing", f"{msg}:{message}" if message else msg)
    return err

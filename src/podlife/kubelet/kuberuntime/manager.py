"""Pod-level runtime actions: pkg/kubelet/kuberuntime/kuberuntime_manager.go (SyncPod, KillPod) and
kuberuntime_container.go (startContainer, killContainersWithSyncResult)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import simpy

from podlife.api.gofmt import go_quote
from podlife.api.meta import Obj, pod_full_name
from podlife.runtime import hostsfile, poddns
from podlife.kubelet.envvars import environment_error, make_environment
from podlife.kubelet.restartpolicy import could_restart_all, restarts, restarts_all
from podlife.kubelet.kuberuntime.container import MINIMUM_GRACE_PERIOD, generate_container_config, kill_container
from podlife.kubelet.kuberuntime.ordering import TerminationOrdering, is_restartable_init
from podlife.kubelet.subpaths import subpath_error
from podlife.runtime.cri import EXITED, RUNNING, SANDBOX_READY, Container, RuntimeError_, Sandbox

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet

Gen = Generator[simpy.Event, Any, Any]

# client-go util/flowcontrol backoff as the kubelet configures it (pkg/kubelet/kubelet.go)
BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
_EPSILON = 1e-9   # virtual times are floats: a difference that is exactly the backoff is not inside it


@dataclass
class _BackoffEntry:
    """A container's restart backoff and when it was last updated."""

    backoff: float
    last_update: float


@dataclass
class ActionResult:
    """pkg/kubelet/container/sync_result.go SyncResult: one action SyncPod or KillPod took; ``reason`` is its
    error (CrashLoopBackOff, ErrImagePull, ...), None when the action succeeded."""
    action: str            # StartContainer, KillContainer
    target: str            # the container's name (the pod's full name for the sandbox)
    reason: str | None = None
    message: str = ""

    def fail(self, reason: str, message: str) -> None:
        self.reason, self.message = reason, message

    def __str__(self) -> str:
        # PodSyncResult.Error: fmt.Errorf("failed to %q for %q with %w: %q", ...)
        return f"failed to {go_quote(self.action)} for {go_quote(self.target)} with {self.reason}: " \
               f"{go_quote(self.message)}"


def aggregate(failed: list[ActionResult]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as itself, several as "[e1, e2]"."""
    texts = [str(r) for r in failed]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


@dataclass
class SyncResult:
    """PodSyncResult: the actions SyncPod took that the kubelet reports (failed ones give the sync's error)."""
    results: list[ActionResult] = field(default_factory=list)
    unlogged: list[str] = field(default_factory=list)   # failures outside SyncResults (sandbox creation)
    backoff_until: float | None = None   # the earliest CrashLoopBackOff expiry (BackoffError, 1.34+)
    removed_all: bool = False            # RestartAllContainers removed every container: sync again at once

    def add(self, action: str, target: str) -> ActionResult:
        r = ActionResult(action, target)
        self.results.append(r)
        return r

    @property
    def failed(self) -> list[ActionResult]:
        return _failed(self.results)


class Backoff:
    """flowcontrol.Backoff: per-key exponential backoff, reset after 2 × max without an update."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.initial, self.max = initial, maximum
        self.entries: dict[str, _BackoffEntry] = {}

    def in_backoff_since(self, key: str, t: float, now: float) -> bool:
        """IsInBackOffSince(eventTime): Since(eventTime) < backoff, unless the entry expired by eventTime."""
        e = self.entries.get(key)
        return e is not None and not self._expired(e, t) and now - t < e.backoff - _EPSILON

    def in_backoff_since_update(self, key: str, now: float) -> bool:
        """IsInBackOffSinceUpdate: still within the backoff counted from the last failure."""
        e = self.entries.get(key)
        return e is not None and not self._expired(e, now) and now - e.last_update < e.backoff - _EPSILON

    def next(self, key: str, t: float, now: float) -> None:
        """Next(id, eventTime): a new entry (or one expired by eventTime) starts at the initial backoff, else
        the backoff doubles; lastUpdate is the clock's now."""
        e = self.entries.get(key)
        if e is None or self._expired(e, t):
            self.entries[key] = _BackoffEntry(self.initial, now)
        else:
            e.backoff = min(e.backoff * 2, self.max)
            e.last_update = now

    def resume(self, key: str, failures: int, last_update: float) -> None:
        """An entry as ``failures`` calls of next() leave it, the last at ``last_update`` (a kubelet that
        adopted a crash-looping container carries on with its back-off)."""
        if failures > 0:
            self.entries[key] = _BackoffEntry(min(self.initial * 2 ** (failures - 1), self.max), last_update)

    def get(self, key: str) -> float:
        e = self.entries.get(key)
        return e.backoff if e else 0.0

    def _expired(self, e: _BackoffEntry, event_time: float) -> bool:
        """hasExpired: eventTime.Sub(lastUpdate) > 2 × maxDuration."""
        return event_time - e.last_update > 2 * self.max + _EPSILON


def go_duration(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60}m{s % 60}s" if s >= 60 else f"{s}s"


class RuntimeManager:
    def __init__(self, kubelet: Kubelet) -> None:
        self.kl = kubelet
        self.backoff = Backoff(BACKOFF_INITIAL, BACKOFF_MAX)
        # reasonCache: the last start failure per container, shown as its waiting reason
        self.reasons: dict[tuple[str, str], tuple[str, str]] = {}
        # containers whose liveness or startup probe failed: (message, probe-level grace or None)
        self.unhealthy: dict[tuple[str, str], tuple[str, int | None]] = {}

    def resume_backoff(self, key: str, restarts: int, last_start: float) -> None:
        """doBackOff's entry for a container restarted ``restarts`` times, last at ``last_start``."""
        self.backoff.resume(key, restarts, last_start)

    # ---- reads ------------------------------------------------------------------------------------

    def sandbox(self, uid: str) -> Sandbox | None:
        for s in reversed(self.kl.runtime.pod_sandboxes(uid)):   # the newest ready one
            if s.state == SANDBOX_READY:
                return s
        return None

    def latest(self, uid: str) -> dict[str, Container]:
        """The newest runtime container of each name."""
        out: dict[str, Container] = {}
        for c in self.kl.runtime.pod_containers(uid):
            cur = out.get(c.name)
            if cur is None or c.attempt > cur.attempt or c.created_at > cur.created_at:
                out[c.name] = c
        return out

    def running(self, uid: str) -> list[Container]:
        return [c for c in self.kl.runtime.pod_containers(uid) if c.state == RUNNING]

    # ---- SyncPod ----------------------------------------------------------------------------------

    def sync_pod(self, pod: Obj) -> Gen:
        """Create the sandbox if needed, then start the next init container or the main containers."""
        kl = self.kl
        uid = pod["metadata"]["uid"]
        result = SyncResult()
        sb = self.sandbox(uid)
        if sb is None:
            kl.log("no_sandbox", pod)
            try:
                bad = hostsfile.sandbox_config_error(pod)   # createPodSandbox: generatePodSandboxConfig first
                if bad is not None:
                    raise RuntimeError_(bad)
                sb = yield from kl.runtime.run_pod_sandbox(pod)
                # generatePodSandboxConfig -> GetPodDNS: its events (the process runtime computes the settings
                # as it writes the file, podlife.runtime.poddns); MissingClusterDNS goes to the node too
                for reason, message in kl.runtime.dns_events(uid):
                    if reason == "MissingClusterDNS":
                        kl.events.node_event("Warning", reason, poddns.MISSING_CLUSTER_DNS)
                    kl.events.pod_event(pod, "Warning", reason, message)
            except RuntimeError_ as e:
                kl.events.pod_event(pod, "Warning", "FailedCreatePodSandBox",
                                    f"Failed to create pod sandbox: {e}")
                # the sandbox's SyncResult message is not modelled: the failure requeues the pod, unlogged
                result.unlogged.append(str(e))
                return result
            if kl.profile.ready_to_start_at_sandbox:
                # PR #134660: PodReadyToStartContainers is written once the sandbox exists, before image pulls
                kl.status_manager.set_pod_status(pod, kl.generate_status(pod, terminal=False))
        if self.restarting_all(pod):
            yield from self._remove_all(pod, result)
            return result
        # computePodActions: a container that failed its liveness/startup probe is killed, then started anew
        # (once: it is in ContainersToStart a single time, so the loops below leave it alone)
        handled: set[str] = set()
        for key in [k for k in self.unhealthy if k[0] == uid]:
            message, grace = self.unhealthy.pop(key)
            c = self.latest(uid).get(key[1])
            if c is not None and c.state == RUNNING:
                # doBackOff reads the pod status this SyncPod started from, where the container killed here still
                # runs: the back-off is keyed on the finish time of the instance before it, if any
                before = self.last_exited(uid, key[1])
                yield from kill_container(kl, pod, c, message, None, grace=grace)
                spec = next((x for x in (pod["spec"].get("initContainers") or []) + pod["spec"]["containers"]
                             if x["name"] == key[1]), None)
                if spec is not None:
                    handled.add(key[1])
                    yield from self._restart(pod, sb, spec, c, result, before)
        # computePodActions: a running container whose definition changed (a new image) is killed and started
        # again, whatever the restart policy; the back-off is looked up under the new definition's key
        # (the runtime's containers change only across a yield: ``latest`` is made again after one)
        latest = self.latest(uid)
        for spec in [ic for ic in pod["spec"].get("initContainers") or () if is_restartable_init(ic)] + \
                (pod["spec"].get("containers") or []):
            c = latest.get(spec["name"])
            if spec["name"] in handled or c is None or c.state != RUNNING or c.image == spec.get("image", ""):
                continue
            before = self.last_exited(uid, spec["name"])
            yield from kill_container(kl, pod, c, f"Container {spec['name']} definition changed, will be "
                                                  "restarted", None)
            handled.add(spec["name"])
            yield from self._restart(pod, sb, spec, c, result, before)
            latest = self.latest(uid)
        policy = pod["spec"].get("restartPolicy", "Always")
        # SyncPod step 5: ephemeral containers never started are started before any init container, so that one
        # can debug a pod stuck initializing; they are never restarted (computePodActions)
        for ec in pod["spec"].get("ephemeralContainers") or ():
            if ec["name"] not in latest:
                yield from self._start(pod, sb, ec, 0, result)
        # init containers, one per sync, in order (computeInitContainerActions): the next starts once the
        # previous has completed or, for a sidecar, has started (running, startup probe passed)
        for ic in pod["spec"].get("initContainers") or ():
            c = latest.get(ic["name"])
            sidecar = is_restartable_init(ic) and kl.profile.native_sidecars != "off"
            if ic["name"] in handled:
                return result  # killed and restarted above (InitContainersToStart holds it once)
            if c is None:
                yield from self._start(pod, sb, ic, self._first_attempt(uid, ic["name"]), result)
                return result
            if c.state == RUNNING:
                if sidecar and kl.probes.is_started(uid, c):
                    continue
                return result
            if c.state == EXITED:
                if sidecar or (c.exit_code != 0 and policy != "Never"):
                    yield from self._restart(pod, sb, ic, c, result, c)
                    return result
                if c.exit_code != 0:
                    return result  # restartPolicy Never: the pod fails
                continue
            return result
        # main containers, in order (the start loop of SyncPod)
        for spec in pod["spec"].get("containers") or ():
            if spec["name"] in handled:
                continue
            c = latest.get(spec["name"])
            if c is None:
                yield from self._start(pod, sb, spec, self._first_attempt(uid, spec["name"]), result)
            elif c.state == EXITED and restarts(pod, spec, c.exit_code or 0, kl.profile):
                yield from self._restart(pod, sb, spec, c, result, c)
        return result

    # ---- RestartAllContainers (KEP-5532, 1.36+) -------------------------------------------------------

    def restart_all_trigger(self, pod: Obj) -> bool:
        """pkg/kubelet/container/helpers.go ShouldAllContainersRestart, from the runtime: a container (init,
        sidecar or regular) exited with a code that matches a rule whose action is RestartAllContainers."""
        if not could_restart_all(pod, self.kl.profile):
            return False
        latest = self.latest(pod["metadata"]["uid"])
        for spec in (pod["spec"].get("initContainers") or []) + (pod["spec"].get("containers") or []):
            c = latest.get(spec["name"])
            if c is not None and c.state == EXITED and restarts_all(spec, c.exit_code or 0, self.kl.profile):
                return True
        return False

    def restarting_all(self, pod: Obj) -> bool:
        """The pod is in the termination phase of an in-place restart: triggered now, or the
        AllContainersRestarting condition the kubelet wrote is still True and containers are left."""
        if not could_restart_all(pod, self.kl.profile):
            return False
        if self.restart_all_trigger(pod):
            return True
        return restart_condition_true(self.kl, pod) and bool(self.kl.runtime.pod_containers(pod["metadata"]["uid"]))

    def _remove_all(self, pod: Obj, result: SyncResult) -> Gen:
        """computePodActions with restartAllContainers: kill every running container at once with no grace
        (termination grace periods are not respected; podlife passes an override of 0: no preStop hook, the
        2 s minimum window of killContainer), then remove every container from the runtime; the sandbox, its
        IP and the volumes stay."""
        kl = self.kl
        uid = pod["metadata"]["uid"]
        killed = yield from self._kill_all(pod, self.running(uid), 0, None)
        result.results.extend(killed)
        if _failed(killed):
            return
        for c in list(kl.runtime.pod_containers(uid)):
            yield from kl.runtime.remove_container(c.id)
        result.removed_all = True

    def _first_attempt(self, uid: str, name: str) -> int:
        """With no container in the runtime, the restart count comes from the pod's log directory
        (calcRestartCountByLogDir): a rebooted node's runtime forgot its containers, the logs did not."""
        last = self.kl.runtime.log_attempts.get((uid, name))
        return 0 if last is None else last + 1

    def last_exited(self, uid: str, name: str) -> Container | None:
        """The newest exited container of that name (the runtime lists containers newest first)."""
        exited = [c for c in self.kl.runtime.pod_containers(uid) if c.name == name and c.state == EXITED]
        return max(exited, key=lambda c: (c.attempt, c.created_at), default=None)

    def _restart(self, pod: Obj, sb: Sandbox, spec: Obj, c: Container, result: SyncResult,
                 dead: Container | None) -> Gen:
        """doBackOff, then start the attempt after ``c``. ``dead`` is the newest exited instance doBackOff finds
        in the pod status the sync started from (``c`` itself when it had exited by then); with none there is
        no back-off to check and no entry to advance."""
        kl = self.kl
        # getStableKey: the pod, the container's name and the hash of its spec (of which only the image can change
        # in a running pod): a new image starts a new back-off
        key = f"{pod['metadata']['uid']}/{spec['name']}/{spec.get('image', '')}"
        if dead is None:
            yield from self._start(pod, sb, spec, c.attempt + 1, result)
            return
        finished = dead.finished_at if dead.finished_at is not None else kl.kernel.now
        if self.backoff.in_backoff_since(key, finished, kl.kernel.now):
            delay = self.backoff.get(key)
            msg = f"back-off {go_duration(delay)} restarting failed container={spec['name']} pod={pod_full_name(pod)}"
            kl.events.container_event(pod, spec["name"], "Warning", "BackOff", "Back-off restarting failed container"
                                      + ("" if not kl.profile.backoff_event_names_pod else
                                         f" {spec['name']} in pod {pod_full_name(pod)}"))
            self.reasons[(pod["metadata"]["uid"], spec["name"])] = ("CrashLoopBackOff", msg)
            # kubecontainer.ErrCrashLoopBackOff (1.34+ wrapped in a BackoffError, whose text is the same)
            result.add("StartContainer", spec["name"]).fail("CrashLoopBackOff", msg)
            expiry = finished + delay   # NewBackoffError(ErrCrashLoopBackOff, ts.Add(backoff))
            result.backoff_until = expiry if result.backoff_until is None else min(result.backoff_until, expiry)
            return
        self.backoff.next(key, finished, kl.kernel.now)
        yield from self._start(pod, sb, spec, c.attempt + 1, result)

    def _start(self, pod: Obj, sb: Sandbox, spec: Obj, attempt: int, result: SyncResult) -> Gen:
        """startContainer: image, create, start, postStart."""
        kl = self.kl
        uid = pod["metadata"]["uid"]
        name = spec["name"]
        # SyncPod's start(): a StartContainer result for the container, failed with startContainer's error
        # (its reason) and message
        sr = result.add("StartContainer", name)
        ok = yield from kl.images.ensure_image_exists(pod, spec)
        if not ok:
            sr.fail(*self.reasons[(uid, name)])   # EnsureImageExists: ErrImagePull, ImagePullBackOff, ...
            return
        # generateContainerConfig: the environment needs its ConfigMaps and Secrets
        err = environment_error(kl.store, pod, spec)
        env = None
        if err is None:   # then makeMounts: the volume mounts' subpaths, expanded with the environment
            env = make_environment(kl.store, pod, spec, kl.pod_ips(pod, sb), [kl.node_ip], kl.node_spec.capacity)
            err = subpath_error(spec, env)
        if err is not None:
            kl.events.container_event(pod, name, "Warning", "Failed", f"Error: {err}")
            self.reasons[(uid, name)] = ("CreateContainerConfigError", err)
            sr.fail(*self.reasons[(uid, name)])
            return
        try:
            # (the environment made just above, at this instant, from the same objects)
            c = yield from kl.runtime.create_container(sb, generate_container_config(kl, pod, spec, sb, attempt, env))
        except RuntimeError_ as e:
            kl.events.container_event(pod, name, "Warning", "Failed", f"Error: {e}")
            self.reasons[(uid, name)] = ("CreateContainerError", str(e))
            sr.fail(*self.reasons[(uid, name)])
            return
        kl.refs.add(c.id)
        kl.events.container_event(pod, name, "Normal", "Created", kl.profile_message("created", name))
        try:
            yield from kl.runtime.start_container(c.id)
        except RuntimeError_ as e:
            kl.events.container_event(pod, name, "Warning", "Failed", f"Error: {e}")
            self.reasons[(uid, name)] = ("RunContainerError", str(e))
            sr.fail(*self.reasons[(uid, name)])
            return
        self.reasons.pop((uid, name), None)
        kl.events.container_event(pod, name, "Normal", "Started", f"Started container {name}")
        hook = (spec.get("lifecycle") or {}).get("postStart")
        if hook:
            from podlife.kubelet.kuberuntime.container import _run_hook

            kl.trace.emit("hook", object=c.pod_ref, container=name, hook="postStart", phase="started")
            err = yield from _run_hook(kl, c, "postStart")
            if err:
                kl.trace.emit("hook", object=c.pod_ref, container=name, hook="postStart", phase="failed")
                # the event text is fixed so that command output (secrets) does not leak into Events
                kl.events.container_event(pod, name, "Warning", "FailedPostStartHook", "PostStartHook failed")
                self.reasons[(uid, name)] = ("PostStartHookError", err)
                yield from kill_container(kl, pod, c, "FailedPostStartHook", None)
                sr.fail(*self.reasons[(uid, name)])
            else:
                kl.trace.emit("hook", object=c.pod_ref, container=name, hook="postStart", phase="completed")

    # ---- KillPod ----------------------------------------------------------------------------------

    def kill_pod(self, pod: Obj, grace_override: int | None) -> Gen:
        """killPodWithSyncResult: stop every running container, then the sandbox. Returns the failed results; with
        any, the sandbox is left alone and the pod worker tries again."""
        kl = self.kl
        uid = pod["metadata"]["uid"]
        running = self.running(uid)
        if kl.profile.legacy_sidecar_type and _legacy_sidecars(pod):
            errors = yield from self._kill_legacy_sidecar_order(pod, running, grace_override)
        else:
            ordering = None
            if kl.profile.native_sidecars == "ordered" and any(
                    is_restartable_init(ic) for ic in pod["spec"].get("initContainers") or ()):
                ordering = TerminationOrdering(kl.kernel, pod, [c.name for c in running])
            errors = _failed((yield from self._kill_all(pod, running, grace_override, ordering)))
        if errors:
            return errors
        for sb in kl.runtime.pod_sandboxes(uid):
            if sb.state == SANDBOX_READY:
                if kl.runtime.profile.id_scheme == "docker":
                    kl.log("cni_teardown", pod)
                yield from kl.runtime.stop_pod_sandbox(sb.id)
        return []

    def _kill_all(self, pod: Obj, containers: list[Container], grace_override: int | None,
                  ordering: TerminationOrdering | None, message: str = "") -> Gen:
        """killContainersWithSyncResult: one goroutine per container, all at once."""
        kl = self.kl
        procs = [kl.go(kill_container(kl, pod, c, message, grace_override, ordering))
                 for c in containers]
        if procs:
            yield kl.kernel.all_of(procs)
        results = [ActionResult("KillContainer", c.name) for c in containers]
        for r, p in zip(results, procs):
            if p.value:
                r.fail("KillContainerError", p.value)
        return results

    def _kill_legacy_sidecar_order(self, pod: Obj, running: list[Container], grace_override: int | None) -> Gen:
        """PR #80744 (the seed-000 kubelet): sidecars' preStop hooks first, then the other containers with
        the grace left, then the sidecars with what is left of it then (which can be negative)."""
        from podlife.kubelet.kuberuntime.container import container_spec, execute_prestop

        kl = self.kl
        sidecar_names = _legacy_sidecars(pod)
        sidecars = [c for c in running if c.name in sidecar_names]
        others = [c for c in running if c.name not in sidecar_names]
        grace = pod["metadata"].get("deletionGracePeriodSeconds")
        if grace is None:
            grace = pod["spec"].get("terminationGracePeriodSeconds", MINIMUM_GRACE_PERIOD)
        start = kl.kernel.now
        if others:
            hooks = [kl.go(execute_prestop(kl, pod, c, container_spec(pod, c.name) or {}, grace))
                     for c in sidecars if (container_spec(pod, c.name) or {}).get("lifecycle", {}).get("preStop")]
            if hooks:
                yield kl.kernel.all_of(hooks)
            override = grace - int(kl.kernel.now - start) if grace_override is None else grace_override
            errors = _failed((yield from self._kill_all(pod, others, override, None, message="Need to kill Pod")))
            if errors:
                return errors
        if sidecars:
            override = grace - int(kl.kernel.now - start) if grace_override is None else grace_override
            return _failed((yield from self._kill_all(pod, sidecars, override, None)))
        return []


def restart_condition_true(kl: Kubelet, pod: Obj) -> bool:
    """The AllContainersRestarting condition of the status the kubelet last wrote is True."""
    status = kl.status_manager.get(pod["metadata"]["uid"]) or pod.get("status") or {}
    return any(c.get("type") == "AllContainersRestarting" and c.get("status") == "True"
               for c in status.get("conditions") or ())


def _failed(results: list[ActionResult]) -> list[ActionResult]:
    return [r for r in results if r.reason is not None]


def _legacy_sidecars(pod: Obj) -> set[str]:
    return {c["name"] for c in pod["spec"].get("containers") or ()
            if (c.get("lifecycle") or {}).get("type") == "Sidecar"}

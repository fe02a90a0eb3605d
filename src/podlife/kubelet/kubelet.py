"""The kubelet of one node: pkg/kubelet/kubelet.go.

It watches the pods bound to its node (the "api" pod source), dispatches every change and every PLEG event
to the pod's worker, and implements the three sync functions the workers call: SyncPod, SyncTerminatingPod
and SyncTerminatedPod.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, cast

import simpy

from podlife.api.admission import NodeClient
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, pod_full_name
from podlife.config import KubeletConfiguration
from podlife.engine import Kernel
from podlife.kubelet import logsites
from podlife.kubelet.images import ImageManager
from podlife.kubelet.kuberuntime.container import field_path
from podlife.kubelet.kuberuntime.manager import RuntimeManager, aggregate
from podlife.kubelet.sysctls import FORBIDDEN_REASON, Allowlist
from podlife.kubelet.admission import NODE_PORTS, NODE_PORTS_MESSAGE, node_ports_conflict
from podlife.kubelet.kuberuntime.ordering import is_restartable_init
from podlife.kubelet.nodestatus import NodeStatus
from podlife.kubelet.pleg import GenericPLEG
from podlife.kubelet.podworkers import FINISHED, SYNC, TERMINATED, KillPodOptions, PodSyncStatus, PodWorkers
from podlife.kubelet.prober import ProbeManager
from podlife.kubelet.remote import RemoteRuntime
from podlife.kubelet.eviction import EvictionManager
from podlife.kubelet.nodeshutdown import ShutdownManager
from podlife.kubelet.runtimehealth import RuntimeHealth
from podlife.kubelet.status.generate import conditions, container_status, get_phase, need_to_reconcile_readiness
from podlife.kubelet.status.manager import StatusManager
from podlife.kubelet.volumemanager import VolumeManager
from podlife.cluster.contracts import NodeRuntime
from podlife.runtime.cri import Container, Sandbox
from podlife.trace.recorder import Trace
from podlife.versions import Profile

# pkg/kubelet/active_deadline.go
DEADLINE_REASON = "DeadlineExceeded"
DEADLINE_MESSAGE = "Pod was active on the node longer than the specified deadline"

if TYPE_CHECKING:
    from podlife.api.store import Store
    from podlife.cluster.spec import NodeSpec

Gen = Generator[simpy.Event, Any, Any]

WORKER_BACKOFF = 10.0         # pkg/kubelet/kubelet.go backOffPeriod
RESYNC_INTERVAL = 60.0        # the pod workers' resyncInterval: KubeletConfiguration syncFrequency, 1m
WORKER_BACKOFF_JITTER = 0.5   # pod_workers.go workerBackOffPeriodJitterFactor


class Kubelet:
    def __init__(self, kernel: Kernel, trace: Trace, store: Store, profile: Profile, config: KubeletConfiguration,
                 node_spec: NodeSpec, runtime: NodeRuntime, node_ip: str) -> None:
        self.kernel = kernel
        self.trace = trace
        self.store = NodeClient(store, node_spec.name)  # writes pass the NodeRestriction admission
        self.profile = profile
        self.config = config
        self.node_spec = node_spec
        self.node_name = node_spec.name
        self.node_ip = node_ip
        self._host_ips = [{"ip": node_ip}]   # status.hostIPs of every pod of this node: one list, never changed
        self.runtime = runtime
        self.running = False
        self.partitioned = False
        self.last_contact: float | None = None
        self.pod_manager: dict[str, Obj] = {}         # pod uid → newest pod seen from the API
        self.pod_workers = PodWorkers(self)
        self.volume_manager = VolumeManager(self)
        self.runtime_manager = RuntimeManager(self)
        self.images = ImageManager(self)
        self.remote = RemoteRuntime(self)
        self.status_manager = StatusManager(self)
        self.pleg = GenericPLEG(self)
        self.node_status = NodeStatus(self)
        self.events = KubeletEvents(self)
        self.probes = ProbeManager(self)
        self.health = RuntimeHealth(self)
        self.shutdown = ShutdownManager(self)
        self.eviction = EvictionManager(self)
        # kubelet.go: the safe sysctls and the node's allowed unsafe ones (pkg/kubelet/sysctl)
        self.sysctls = Allowlist(profile, config.allowedUnsafeSysctls)
        self._watch = None
        self._requeue: dict[str, simpy.Event] = {}
        self._started_at: dict[str, float] = {}         # uid -> when the kubelet first set status.startTime
        self._deadline_timers: dict[str, simpy.Event] = {}
        self._deadline_reported: set[str] = set()
        self._procs: dict[simpy.Process, None] = {}
        self.refs: set[str] = set()   # kubecontainer.RefManager: containers this kubelet process started
        self.rng = kernel.rng(f"kubelet/{node_spec.name}")
        runtime.listeners.append(self.pleg.mark_dirty)
        runtime.listeners.append(self.eviction.container_changed)

    # ---- lifecycle --------------------------------------------------------------------------------

    def start(self, register: bool = True) -> None:
        """Start the kubelet. A kubelet started on a node that already runs containers (after a restart)
        knows nothing but what the API and the runtime tell it: its first relist reports every container."""
        self.running = True
        if register:
            self.node_status.register()
        else:
            self.node_status.resume()
        self.node_status.renewals_changed()
        self._watch = self.store.watch("Pod", self._on_pod_event, node=self.node_name)
        self.pleg.started_at = self.kernel.now
        self.pleg.runtime_changed()
        self.health.start()
        for uid in dict.fromkeys(c.pod_uid for c in self.runtime.list_containers()):
            self.pleg.mark_dirty(uid)
        if not register:
            self.resync()
            self.health.schedule_node_status()

    def adopt(self, pod: Obj, containers: list[Container], ready: dict[str, bool],
              backoff: dict[str, tuple[int, float, str]], started: float | None) -> None:
        """Take over a pod this node was running before the model started (podlife.importer), as the kubelet
        that started its containers: they are its own (RefManager), their readiness and startup results are
        the ones the pod reports (prober results), and a crash-looping container's back-off goes on from its
        restart count (``backoff``: name -> (restarts, when the last one started, the waiting message)), and
        its active deadline counts from ``started`` (status.startTime). The containers are already in the
        runtime, and in the PLEG's last relist: only what changes from now on makes an event."""
        uid = pod["metadata"]["uid"]
        if started is not None:
            self._started_at[uid] = started
        spec = pod.get("spec") or {}
        images = {c.get("name"): c.get("image", "") for c in list(spec.get("initContainers") or ())
                  + list(spec.get("containers") or ())}
        for c in containers:
            self.refs.add(c.id)
            if c.state == "CONTAINER_RUNNING":
                for kind in ("startup", "readiness"):
                    result = "Success" if kind == "startup" or ready.get(c.name) else "Failure"
                    self.probes.carried[(uid, c.name, kind)] = (c.id, result)
        for name, (restarts, last_start, message) in backoff.items():
            self.runtime_manager.resume_backoff(f"{uid}/{name}/{images.get(name, '')}", restarts, last_start)
            if message:
                self.runtime_manager.reasons[(uid, name)] = ("CrashLoopBackOff", message)
        seen = {c.id: c.state for c in self.runtime.pod_containers(uid)}
        seen.update((sb.id, "CONTAINER_RUNNING" if sb.state == "SANDBOX_READY" else "CONTAINER_EXITED")
                    for sb in self.runtime.pod_sandboxes(uid))
        if seen:
            self.pleg.records[uid] = seen

    def stop(self) -> None:
        """The kubelet process ends: its goroutines die with it; calls it made to the runtime carry on."""
        if not self.running:
            return
        self.last_contact = self.node_status.last_heartbeat(self.kernel.now)
        self.running = False
        self.node_status.renewals_changed()
        if self._watch is not None:
            self._watch.stop()
        self.runtime.listeners.remove(self.pleg.mark_dirty)
        self.runtime.listeners.remove(self.eviction.container_changed)
        for p in list(self._procs):
            if p.is_alive and p is not self.kernel.active_process:
                p.interrupt("kubelet stopped")

    def runtime_changed(self) -> None:
        """A runtime fault started or healed: PLEG and runtime health look again."""
        if self.running:
            self.pleg.runtime_changed()
            self.health.update_runtime_up()

    def go(self, gen: Gen, guarded: bool = False) -> simpy.Process:
        """Start a goroutine of this kubelet. ``guarded``: ``gen`` itself ends when interrupted with "kubelet
        stopped" (it needs no ``_guard``: one generator less per process and per resume)."""
        p = self.kernel.process(gen if guarded else self._guard(gen))
        self._procs[p] = None
        p.callbacks.append(self._gone)
        return p

    def _gone(self, p: simpy.Event) -> None:
        self._procs.pop(p, None)   # type: ignore[call-overload]

    def _guard(self, gen: Gen) -> Gen:
        try:
            return (yield from gen)
        except simpy.Interrupt as i:
            if i.cause == "kubelet stopped":
                return None
            raise

    def can_reach_api(self) -> bool:
        return not self.partitioned

    def set_partitioned(self, partitioned: bool) -> None:
        """NetworkPartition: the kubelet cannot reach the API server; its containers keep running. On heal
        it relists its pods and writes the statuses it could not write; its Lease controller renews at its next
        backoff attempt (NodeStatus.healed)."""
        if partitioned == self.partitioned:
            return
        if partitioned:
            self.last_contact = self.node_status.last_heartbeat(self.kernel.now)
            self.partitioned = True
            self.node_status.renewals_changed()
            return
        self.partitioned = False
        self.node_status.healed()
        self.resync()
        # kubelet_node_status.go tryUpdateNodeStatus: the first update that gets through (the status loop's
        # next tick, its grid kept through the partition) compares the kubelet's conditions with the Node in
        # the API (Ready Unknown, set by the node lifecycle controller) and patches Ready=True, however recent
        # lastStatusReportTime (nodeStatusHasChanged)
        self.health.schedule_node_status()

    def resync(self) -> None:
        """Relist the pods bound to this node (the reflector's relist after a broken watch): dispatch what
        changed while the watch was down, REMOVE what is gone, and push every cached status."""
        api = {p["metadata"]["uid"]: p for p in self.store.list("Pod", node=self.node_name)}
        for uid in list(self.pod_manager):
            if uid not in api:
                self._on_pod_event("DELETED", self.pod_manager[uid], None)
        for uid, pod in api.items():
            old = self.pod_manager.get(uid)
            if old is None:
                self._on_pod_event("ADDED", pod, None)
            elif old["metadata"]["resourceVersion"] != pod["metadata"]["resourceVersion"]:
                self._on_pod_event("MODIFIED", pod, old)
        for uid in list(self.status_manager.statuses):
            self.status_manager.request_sync(uid)

    # ---- logging ----------------------------------------------------------------------------------

    def log(self, site_name: str, pod: Obj | None = None, **ctx: Any) -> None:
        if not self.trace.logs:
            return
        site = logsites.SITES[site_name]
        if pod is not None:
            md = pod["metadata"]
            ctx.setdefault("pod_full", pod_full_name(pod))
            ctx.setdefault("pod_kobj", f"{md['namespace']}/{md['name']}")
            ctx.setdefault("pod_uid", md["uid"])
            ctx.setdefault("pod_name", md["name"])
            ctx.setdefault("pod_namespace", md["namespace"])
            ctx.setdefault("pods", [ctx["pod_kobj"]])
            ctx.setdefault("source", "api")
        file, line, message = logsites.render(site, self.profile.structured_logs, ctx)
        self.trace.emit("log", component="kubelet", node=self.node_name,
                        severity=logsites.severity(site, self.profile.structured_logs), file=file, line=line,
                        message=message)

    def pod_ips(self, pod: Obj, sb: Sandbox) -> list[str]:
        """The pod's IPs the kubelet generates container configs with: a hostNetwork pod's are the node's
        (kubelet.go SyncPod takes podStatus.IPs from generateAPIPodStatus, which gives it the host IPs)."""
        return [self.node_ip] if pod["spec"].get("hostNetwork") else [sb.ip]

    def container_ctx(self, pod: Obj, c: Container) -> dict[str, Any]:
        scheme = self.runtime.profile.id_scheme
        return {"cid": f"{scheme}://{c.id}", "cid_struct": f'{{"{scheme}" "{c.id}"}}', "cname": c.name}

    def profile_message(self, what: str, name: str) -> str:
        if what == "created":
            return f"Created container: {name}" if self.profile.created_event_colon else f"Created container {name}"
        raise KeyError(what)

    def profile_modern_deletion(self) -> bool:
        return self.profile.zero_grace != "as-is"

    # ---- the sync loop: pod sources ---------------------------------------------------------------

    def _on_pod_event(self, type_: str, pod: Obj, old: Obj | None) -> None:
        if not self.running or self.partitioned:
            return
        if self.health.blocking:
            # the sync loop is skipping: updates wait in the channel; the newest per pod is what counts
            prev = self.health.deferred.get(pod["metadata"]["uid"])
            self.health.deferred[pod["metadata"]["uid"]] = (type_, pod, prev[2] if prev else old)
            return
        self.dispatch(type_, pod, old)

    def dispatch(self, type_: str, pod: Obj, old: Obj | None) -> None:
        """syncLoopIteration for the "api" source (pkg/kubelet/config turns watch events into ops)."""
        uid = pod["metadata"]["uid"]
        if type_ == "DELETED":
            self.log("sync_remove", pod)
            self.pod_manager.pop(uid, None)
            self.volume_manager.forget(uid)
            if not self.profile_modern_deletion() and not self.runtime.pod_containers(uid) and \
                    self.pod_workers.is_finished(uid):
                self.log("delete_not_found", pod, error="pod not found")
            self.pod_workers.update_pod(pod, "remove", KillPodOptions(grace_override=None))
            return
        prev = self.pod_manager.get(uid)
        self.pod_manager[uid] = pod
        if prev is None and type_ == "ADDED":
            self.log("sync_add", pod)
            if pod.get("status", {}).get("phase") in ("Failed", "Succeeded"):
                if not self.runtime_manager.running(uid):
                    # a pod terminal in the API whose containers have all stopped (an evicted pod, seen again by
                    # a restarted kubelet) is never started again: pod_workers.go UpdatePod records it terminated
                    # (1.22+, issue #105523); <=1.21 dispatchWork skips it (podIsTerminated)
                    modern = self.profile_modern_deletion()
                    self.pod_workers.statuses[uid] = PodSyncStatus(uid, pod, state=TERMINATED if modern else FINISHED)
                    if modern:
                        self.pod_workers.update_pod(pod, "create")
                    return
            elif not self.eviction.admit(pod):
                return  # HandlePodAdditions: canAdmitPod (the eviction manager's admit handler) refused, rejectPod
            elif (forbidden := self.sysctls.admit(pod)) is not None:
                # the next handler (kubelet.go NewMainKubelet adds it after the eviction manager's)
                self.eviction.reject_pod(pod, FORBIDDEN_REASON, forbidden)
                return
            elif node_ports_conflict(pod, self._active_pods(uid)):
                # canAdmitPod's next handler, the predicate admit handler: GeneralPredicates' NodePorts
                self.eviction.reject_pod(pod, NODE_PORTS, NODE_PORTS_MESSAGE)
                return
            self.pod_workers.update_pod(pod, "create")
            return
        if prev is not None and not _differ_semantically(prev, pod):
            # pkg/kubelet/config/config.go checkAndUpdatePod: a status-only change is a RECONCILE, which
            # does not sync the pod (HandlePodReconcile) unless its readiness gates changed its Ready. It sets
            # the status on the pod config's own object (existing.Status = ref.Status, nothing else: its
            # resourceVersion stays), the one the pod worker holds
            st = self.pod_workers.statuses.get(uid)
            if st is not None and (st.pod is prev or st.reconciled is prev):
                was = st.pod
                st.pod = {**was, "status": pod.get("status")}
                st.reconciled = pod
                if st.pending is was:
                    st.pending = st.pod
            if need_to_reconcile_readiness(pod):
                self.pod_workers.update_pod(pod, "sync")
            return
        old_md = old["metadata"] if old else {}
        was_deleting = bool(old_md.get("deletionTimestamp"))
        if pod["metadata"].get("deletionTimestamp") and (not was_deleting or old_md.get(
                "deletionGracePeriodSeconds") != pod["metadata"].get("deletionGracePeriodSeconds")):
            self.log("sync_delete", pod)
        elif self.trace.logs:
            self.log("sync_update", pod, pod_full_deletion=pod_full_name(pod))
        self.pod_workers.update_pod(pod, "update")

    def _active_pods(self, but: str) -> list[Obj]:
        """GetActivePods: the admitted pods whose workers have not finished terminating them."""
        statuses = self.pod_workers.statuses
        return [p for uid, p in self.pod_manager.items()
                if uid != but and uid in statuses and statuses[uid].state not in (TERMINATED, FINISHED)]

    def handle_pleg_event(self, uid: str, etype: str, cid: str) -> None:
        pod = self.pod_manager.get(uid)
        if pod is None:
            st = self.pod_workers.statuses.get(uid)
            pod = st.pod if st else None
        if pod is None or self.health.blocking:
            return
        if self.trace.logs:   # (its arguments are made only where the line is kept)
            self.log("sync_pleg", pod, event_type=etype, event_data=cid,
                     pleg_event=f'{{ID:"{uid}" Type:"{etype}" Data:"{cid}"}}')
        self.pod_workers.update_pod(pod, "sync")

    def pod_finished(self, st: PodSyncStatus) -> None:
        """Called when SyncTerminatedPod is done: the status manager may now delete the pod."""
        self.probes.remove_pod(st.uid)
        self.status_manager.request_sync(st.uid)

    # ---- probe results ----------------------------------------------------------------------------

    def reported_running(self, uid: str, c: Container) -> bool:
        """The prober reads container state from the status the kubelet last generated."""
        status = self.status_manager.get(uid) or {}
        cid = self.runtime.container_id(c)
        return any(cs.get("containerID") == cid and "running" in cs.get("state", {})
                   for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []))

    def probe_result_changed(self, pod: Obj, readiness_of: Container | None, ok: bool) -> None:
        """A readiness or startup result changed: the pod's status (Ready) follows. A readiness result goes
        into the cached status at once (prober_manager.go updateReadiness, from 1.21 kubelet.go
        syncLoopIteration: SetContainerReadiness), then the pod syncs (handleProbeSync)."""
        if readiness_of is not None:
            self.status_manager.set_container_readiness(pod, self.runtime.container_id(readiness_of), ok)
        st = self.pod_workers.statuses.get(pod["metadata"]["uid"])
        if st is not None and st.state == SYNC:
            self.pod_workers.update_pod(self.pod_manager.get(pod["metadata"]["uid"], pod), "sync")
        else:
            self.status_manager.set_pod_status(pod, self.generate_status(pod, terminal=False))

    def restart_unhealthy(self, pod: Obj, c: Container, kind: str, probe: Obj) -> None:
        """A liveness or startup probe failed: SyncPod kills the container and starts it again."""
        uid = pod["metadata"]["uid"]
        # pkg/api/pod/util.go dropDisabledFields: with ProbeTerminationGracePeriod off the API server drops the
        # probe's own grace, so the kill falls back to the pod's
        grace = probe.get("terminationGracePeriodSeconds") if self.profile.probe_termination_grace_period else None
        # kuberuntime_manager.go computePodActions / computeInitContainerActions: a sidecar's kill says so
        sidecar = any(ic["name"] == c.name for ic in pod["spec"].get("initContainers") or ())
        message = (f"Init container {c.name} failed {kind} probe" if sidecar
                   else f"Container {c.name} failed {kind} probe, will be restarted")
        self.runtime_manager.unhealthy[(uid, c.name)] = (message, grace)
        self.pod_workers.update_pod(self.pod_manager.get(uid, pod), "sync")

    # ---- SyncPod ----------------------------------------------------------------------------------

    def sync_pod(self, pod: Obj) -> Gen:
        """SyncPod: report status, then make the runtime match the spec. Returns True when the pod is
        terminal (all its containers are done and none will restart)."""
        uid = pod["metadata"]["uid"]
        status = self.generate_status(pod, terminal=False)
        self.status_manager.set_pod_status(pod, status)
        self.watch_active_deadline(pod)
        self.probes.add_pod(pod)
        self.probes.container_changed(uid)
        if status["phase"] in ("Succeeded", "Failed"):
            return True
        if not self.profile_modern_deletion() and pod["metadata"].get("deletionTimestamp"):
            return True  # <=1.21: SyncPod itself kills a deleted pod; here the terminating path does it
        if not self.volume_manager.wait_for_attach_and_mount(pod):
            return False   # the volume manager syncs the pod once its volumes mount
        result = yield from self.runtime_manager.sync_pod(pod)
        if result.removed_all:
            # SyncPod: once RestartAllContainers removed the containers the pod is synced again at once, to
            # clear the condition and start from the first init container
            self._requeue_after(uid, 0.0)
        failed = result.failed
        if failed:
            # pod_workers.go managePodLoop logs the error SyncPod returns. kubelet.go SyncPod drops an error made
            # only of back-off results (ErrCrashLoopBackOff, ErrImagePullBackOff), but kuberuntime's SyncPod adds
            # a succeeded ConfigPodSandbox result to every sync that gets past the sandbox, before it starts or
            # waits out anything, so every failed sync's error is returned: logged, and retried as an error
            self.log("sync_error", pod, error=aggregate(failed))
        if failed or result.unlogged:
            # pod_workers.go completeWork: a failed sync is retried after wait.Jitter(backOffPeriod 10 s, 0.5);
            # from 1.34 (PR #133066) a CrashLoopBackOff error carries its expiry and the retry is
            # wait.Jitter(expiry - now, 0.5) instead, the wait kept between 0 and the 1 min resyncInterval
            wait = WORKER_BACKOFF
            if self.profile.crashloop_requeue_at_expiry and result.backoff_until is not None:
                wait = min(max(result.backoff_until - self.kernel.now, 0.0), RESYNC_INTERVAL)
            self._requeue_after(uid, wait * (1 + WORKER_BACKOFF_JITTER * self.rng.random()))
        return False

    def _requeue_after(self, uid: str, delay: float) -> None:
        """The pod worker's work queue: sync again once a backoff ends."""
        self.kernel.cancel(self._requeue.get(uid))

        def wake() -> None:
            self._requeue.pop(uid, None)
            st = self.pod_workers.statuses.get(uid)
            pod = self.pod_manager.get(uid) or (st.pod if st else None)
            if pod is not None and self.running:
                self.pod_workers.update_pod(pod, "sync")

        self._requeue[uid] = self.kernel.call_later(delay, wake)

    # ---- SyncTerminatingPod / SyncTerminatedPod ---------------------------------------------------

    def sync_terminating_pod(self, pod: Obj, st: PodSyncStatus) -> Gen:
        uid = pod["metadata"]["uid"]
        self.kernel.cancel(self._requeue.pop(uid, None))
        status = self.generate_status(pod, terminal=False)
        if st.kill is not None and st.kill.status_fn is not None:
            st.kill.status_fn(status)
        self.status_manager.set_pod_status(pod, status)
        if self.profile_modern_deletion():
            override: int | None = st.grace
        else:
            override = st.kill.grace_override if st.kill is not None else None
        errors = yield from self.runtime_manager.kill_pod(pod, override)
        if errors:
            err = aggregate(errors)
            # SyncTerminatingPod (syncPod before 1.22): a failed kill is an event, then the sync fails
            self.events.pod_event(pod, "Warning", "FailedKillPod", f"error killing pod: {err}")
            self.log("sync_error", pod, error=err)
            self._requeue_after(uid, WORKER_BACKOFF * (1 + WORKER_BACKOFF_JITTER * self.rng.random()))
            return False
        self.status_manager.killed_at[uid] = self.kernel.now
        # the runtime has stopped everything: report the final container states (terminal phase 1.27+)
        status = self.generate_status(pod, terminal=True)
        if st.kill is not None and st.kill.status_fn is not None:
            st.kill.status_fn(status)
        self.status_manager.set_pod_status(pod, status)
        return True

    def sync_terminated_pod(self, pod: Obj, st: PodSyncStatus) -> Gen:
        """Volumes and cgroups are released; the containers are removed once the pod is gone (podGC)."""
        status = self.generate_status(pod, terminal=True)
        if st.kill is not None and st.kill.status_fn is not None:
            st.kill.status_fn(status)
        self.status_manager.set_pod_status(pod, status)
        if self.profile.terminal_phase_before_removal:
            self.status_manager.terminate_pod(pod)  # "mark the final pod status"
        yield from ()

    # ---- status -----------------------------------------------------------------------------------

    def generate_status(self, pod: Obj, terminal: bool) -> Obj:
        """generateAPIPodStatus from the runtime's view of the pod."""
        uid = pod["metadata"]["uid"]
        rm = self.runtime_manager
        # per name its two newest containers, [previous, current] (a crash loop leaves many; two make the
        # status), in the order a stable sort by (attempt, creation) gives
        by_name: dict[str, list[Container]] = {}
        for c in self.runtime.pod_containers(uid):
            key = (c.attempt, c.created_at)
            two = by_name.get(c.name)
            if two is None:
                by_name[c.name] = [c]
            elif len(two) == 1:
                two.insert(0 if key < (two[0].attempt, two[0].created_at) else 1, c)
            elif key >= (two[1].attempt, two[1].created_at):
                two[:] = [two[1], c]
            elif key >= (two[0].attempt, two[0].created_at):
                two[0] = c
        sb = rm.sandbox(uid)
        init_specs = pod["spec"].get("initContainers") or []
        # convertToAPIContainerStatuses: a container not yet in the runtime waits with PodInitializing in a pod
        # that has init containers (init containers included), ContainerCreating otherwise
        has_init = bool(init_specs)
        init_statuses = []
        for ic in init_specs:
            cs = by_name.get(ic["name"], [])
            cur, prev = (cs[-1] if cs else None), (cs[-2] if len(cs) > 1 else None)
            s = container_status(self, pod, ic, cur, prev, has_init, cur is not None and self.probes.is_ready(uid, cur),
                                 cur is not None and self.probes.is_started(uid, cur))
            if not is_restartable_init(ic) and ((s["state"].get("terminated") or {}).get("exitCode")) == 0:
                # pkg/kubelet/prober/prober_manager.go UpdatePodStatus: an init container that exited with
                # success is ready
                s["ready"] = True
            init_statuses.append(s)
        statuses = []
        for spec in pod["spec"].get("containers") or ():
            cs = by_name.get(spec["name"], [])
            cur, prev = (cs[-1] if cs else None), (cs[-2] if len(cs) > 1 else None)
            statuses.append(container_status(self, pod, spec, cur, prev, has_init,
                                             cur is not None and self.probes.is_ready(uid, cur),
                                             cur is not None and self.probes.is_started(uid, cur)))
        # convertToAPIContainerStatuses for the ephemeral containers: never ready, no started (the prober
        # manager's UpdatePodStatus sets both only for the regular and init containers)
        ephemeral_statuses = []
        for spec in pod["spec"].get("ephemeralContainers") or ():
            cs = by_name.get(spec["name"], [])
            st = container_status(self, pod, spec, cs[-1] if cs else None, cs[-2] if len(cs) > 1 else None,
                                  has_init, False, False)
            st.pop("started", None)
            ephemeral_statuses.append(st)
        if self.probes.workers:   # (a pod with no probe worker on the node has no readiness to trigger)
            for cs in by_name.values():
                self.probes.trigger_readiness(uid, cs[-1])
        phase = get_phase(pod, init_statuses, statuses, terminal, self.profile.terminal_phase_before_removal,
                          self.profile)
        prev_status = self.status_manager.get(uid) or pod.get("status", {})
        if not prev_status.get("startTime"):
            self._started_at.setdefault(uid, self.kernel.now)
        evict = self._should_evict(pod)
        if evict is not None:
            phase = "Failed"  # generateAPIPodStatus: a pod sync handler asked for the pod to be evicted
        status: dict[str, Any] = {"phase": phase,
                                  "conditions": conditions(self, pod, phase, init_statuses, statuses, sb is not None),
                                  "hostIP": self.node_ip}
        if self.profile.pod_host_ips:
            host_ips = self._host_ips
            if host_ips[0]["ip"] != self.node_ip:   # (podlife import sets a node's address after start)
                host_ips = self._host_ips = [{"ip": self.node_ip}]
            status["hostIPs"] = host_ips
        if self.profile.pod_observed_generation and pod["metadata"].get("generation"):
            status["observedGeneration"] = pod["metadata"]["generation"]   # the spec this status was made from
        ip = self.pod_ips(pod, sb)[0] if sb else prev_status.get("podIP")
        if ip:
            status["podIP"] = ip
            # the list the last status had for the same IP (stored data is never changed in place): a pod's
            # statuses, kept by the store, the status manager and the pod worker, share it
            prev_ips = prev_status.get("podIPs")
            status["podIPs"] = prev_ips if prev_ips and len(prev_ips) == 1 and prev_ips[0].get("ip") == ip \
                and len(prev_ips[0]) == 1 else [{"ip": ip}]
        status["startTime"] = prev_status.get("startTime") or self.trace.timestamp()
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        status["containerStatuses"] = statuses
        if ephemeral_statuses:
            status["ephemeralContainerStatuses"] = ephemeral_statuses
        status["qosClass"] = pod.get("status", {}).get("qosClass", "BestEffort")
        for k in ("reason", "message"):
            if k in prev_status:
                status[k] = prev_status[k]
        if evict is not None:
            status["reason"], status["message"] = evict
        if self.trace.logs:
            self.log("generating_status", pod, pod_is_terminal=terminal)
        return status

    # ---- pkg/kubelet/active_deadline.go -----------------------------------------------------------

    def _should_evict(self, pod: Obj) -> tuple[str, str] | None:
        """activeDeadlineHandler.ShouldEvict: the pod has been active (since the kubelet first set its
        startTime) for activeDeadlineSeconds. Upstream records the event on every call and the recorder
        aggregates the repeats; podlife records it once."""
        ads = pod["spec"].get("activeDeadlineSeconds")
        if ads is None:
            return None
        uid = pod["metadata"]["uid"]
        start = self._started_at.get(uid)
        if start is None or self.kernel.now < start + ads:
            return None
        if uid not in self._deadline_reported:
            self._deadline_reported.add(uid)
            self.events.pod_event(pod, "Normal", DEADLINE_REASON, DEADLINE_MESSAGE)
        return DEADLINE_REASON, DEADLINE_MESSAGE

    def watch_active_deadline(self, pod: Obj) -> None:
        """activeDeadlineHandler.ShouldSync: the sync loop's 1 s tick after the deadline passes syncs the pod
        (getPodsToSync)."""
        ads = pod["spec"].get("activeDeadlineSeconds")
        if ads is None:
            return
        uid = pod["metadata"]["uid"]
        start = self._started_at.get(uid)
        if start is None or uid in self._deadline_timers:
            return

        def due() -> None:
            self._deadline_timers.pop(uid, None)
            current = self.pod_manager.get(uid)
            if current is not None and self.running:
                self.pod_workers.update_pod(current, "sync")

        self._deadline_timers[uid] = self.kernel.call_at(math.ceil(start + ads - 1e-9), due)


def _differ_semantically(a: Obj, b: Obj) -> bool:
    """podsDifferSemantically: spec, labels, annotations, deletionTimestamp, deletionGracePeriodSeconds."""
    ma, mb = a["metadata"], b["metadata"]
    return a.get("spec") != b.get("spec") or ma.get("labels") != mb.get("labels") or \
        ma.get("annotations") != mb.get("annotations") or ma.get("deletionTimestamp") != mb.get("deletionTimestamp") \
        or ma.get("deletionGracePeriodSeconds") != mb.get("deletionGracePeriodSeconds")


class KubeletEvents:
    """The kubelet's event recorder: container events carry the container's field path."""

    def __init__(self, kl: Kubelet) -> None:
        self.kl = kl
        # the NodeClient forwards every Store method (api/admission.py), so the recorder writes as the node
        self.recorder = EventRecorder(cast("Store", kl.store), "kubelet", kl.node_name, log=self._log)

    def _log(self, involved: dict[str, Any], type_: str, reason: str, message: str) -> None:
        self.kl.log("event", None, kind=involved["kind"], namespace=involved.get("namespace", ""),
                    name=involved["name"], uid=involved.get("uid", ""), api_version=involved.get("apiVersion", ""),
                    resource_version=involved.get("resourceVersion", ""),
                    field_path=involved.get("fieldPath", ""), type=type_, reason=reason, message=message,
                    object=(f"{involved['namespace']}/" if involved.get("namespace") else "") + involved["name"])

    def container_event(self, pod: Obj, container: str, type_: str, reason: str, message: str) -> None:
        if self.kl.can_reach_api():
            self.recorder.event(pod, type_, reason, message, field_path(pod, container))

    def pod_event(self, pod: Obj, type_: str, reason: str, message: str) -> None:
        if self.kl.can_reach_api():
            self.recorder.event(pod, type_, reason, message)

    def node_event(self, type_: str, reason: str, message: str) -> None:
        node = self.kl.store.try_get("Node", None, self.kl.node_name)
        if node is not None and self.kl.can_reach_api():
            self.recorder.event(node, type_, reason, message)

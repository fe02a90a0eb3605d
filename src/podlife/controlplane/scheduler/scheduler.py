"""kube-scheduler: pkg/scheduler (scheduling queue, filter plugins, binding, preemption).

Pods wait in an active queue ordered by priority then arrival; a pod that fits nowhere runs DefaultPreemption
(preemption.py), goes to the unschedulable set and comes back on a cluster change that might help (after its
backoff: 1 s doubling to 10 s) or after 5 minutes at the latest (internal/queue/scheduling_queue.go). A pod
nominated to a node (status.nominatedNodeName) holds its requests there against pods of no higher priority,
and is tried on that node first (PreferNominatedNode, where the version has it).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.events import EventRecorder
from podlife.api.meta import Obj, clone
from podlife.api.store import Store
from podlife.config import SchedulerConfiguration
from podlife.controlplane.scheduler import plugins
from podlife.controlplane.scheduler.cache import NodeCache, SpecFacts
from podlife.controlplane.scheduler.preemption import DefaultPreemption, Result
from podlife.controlplane.scheduler.selecthost import HostSelector
from podlife.engine import Kernel
from podlife.trace.recorder import Trace
from podlife.versions import Profile

UNSCHEDULABLE_TIMEOUT = 300.0  # podMaxInUnschedulablePodsDuration
SCHEDULER_NAME = "default-scheduler"


@dataclass
class _QueuedPod:
    """A pod in the scheduling queue with its attempts and backoff."""

    uid: str
    key: tuple[str, str]
    attempts: int = 0
    backoff_until: float = 0.0
    unschedulable_since: float | None = None


@dataclass
class Scheduler:
    """kube-scheduler: its queue, cache and scheduling loop."""

    NAME = SCHEDULER_NAME
    kernel: Kernel
    trace: Trace
    store: Store
    config: SchedulerConfiguration
    profile: Profile | None = None      # None: the newest behaviour
    fit_error_suffix: bool = True       # 1.24+: "preemption: ..." after the fit error (PR #107775)
    cache: NodeCache = field(init=False)
    _active: list[tuple[int, int, str]] = field(default_factory=list)
    _pods: dict[str, _QueuedPod] = field(default_factory=dict)
    _seq: Any = field(default_factory=itertools.count)
    _wake_scheduled: bool = False
    _maybe_unschedulable: bool = False   # a queued pod may be unschedulable (set when one becomes so)
    _prebind: dict[str, tuple[Obj, str, list[tuple[str, str]]]] = field(default_factory=dict)  # waiting binds
    # pods waiting with status.nominatedNodeName: uid → (node, their facts, (namespace, name))
    nominated: dict[str, tuple[str, SpecFacts, tuple[str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cache = NodeCache()
        self.events = EventRecorder(self.store, SCHEDULER_NAME)
        self.host_selector = HostSelector(self.kernel.rng("scheduler"))
        self.next_start_node_index = 0   # schedule_one.go nextStartNodeIndex: round-robin over the node list
        self.weights = plugins.Weights()
        self.preemption = DefaultPreemption(self)
        self.prefer_nominated_node = True
        self.async_preemption = True
        if self.profile is not None:
            self.prefer_nominated_node = self.profile.prefer_nominated_node
            self.async_preemption = self.profile.async_preemption
            self.fit_error_suffix = self.profile.fit_error_preemption_suffix
            self.weights = plugins.Weights(
                **self.profile.score_weights, selector_spread=int(self.profile.selector_spread_plugin),
                balanced_skips_best_effort=self.profile.balanced_allocation_skips_best_effort,
                balanced_by_change=self.profile.balanced_allocation_by_change)

    def start(self) -> None:
        self.store.watch("Node", self._on_node)
        self.store.watch("Pod", self._on_pod)
        self.store.watch("PersistentVolumeClaim", self._on_claim)

    # ---- informers --------------------------------------------------------------------------------

    def _on_node(self, type_: str, node: Obj, old: Obj | None) -> None:
        if type_ == "DELETED":
            self.cache.remove_node(node["metadata"]["name"])
        else:
            self.cache.set_node(node)
        self._move_all_to_active()

    def _on_pod(self, type_: str, pod: Obj, old: Obj | None) -> None:
        uid = pod["metadata"]["uid"]
        node = pod["spec"].get("nodeName")
        status = pod.get("status")
        nominated = status.get("nominatedNodeName") if status else None
        if nominated and not node and type_ != "DELETED":
            md = pod["metadata"]
            self.nominated[uid] = (nominated, self.cache.spec_facts(pod["spec"]), (md["namespace"], md["name"]))
        elif self.nominated:
            self.nominated.pop(uid, None)
        if type_ == "DELETED":
            self._pods.pop(uid, None)
            if node:
                self.cache.remove_pod(pod)
                self._move_all_to_active()
            return
        if node:
            self._pods.pop(uid, None)
            self.cache.add_pod(pod)
            if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                self.cache.remove_pod(pod)
                self._move_all_to_active()
            return
        if pod["spec"].get("schedulerName", SCHEDULER_NAME) != SCHEDULER_NAME:
            return
        if pod["metadata"].get("deletionTimestamp"):
            self._pods.pop(uid, None)
            return
        # plugins/schedulinggates: PreEnqueue keeps a gated pod out of the queue until its gates are removed
        if pod["spec"].get("schedulingGates") and (self.profile is None or self.profile.scheduling_gates):
            return
        if uid not in self._pods and uid not in self._prebind:
            md = pod["metadata"]
            self._pods[uid] = _QueuedPod(uid, (md["namespace"], md["name"]))
            self._push(uid, pod)

    # ---- queue ------------------------------------------------------------------------------------

    def _push(self, uid: str, pod: Obj) -> None:
        prio = pod["spec"].get("priority", 0)
        heapq.heappush(self._active, (-prio, next(self._seq), uid))
        self._schedule_wake(0.0)

    def _schedule_wake(self, delay: float) -> None:
        if delay <= 0 and self._wake_scheduled:
            return
        if delay <= 0:
            self._wake_scheduled = True
            self.kernel.call_later(0.0, self._run)
        else:
            self.kernel.call_later(delay, self._retry_due)

    def _move_all_to_active(self) -> None:
        """MoveAllToActiveOrBackoffQueue: unschedulable pods retry once their backoff ends."""
        if not self._maybe_unschedulable:
            return
        self._maybe_unschedulable = False
        # (over a copy: a requeue drops a pod that is gone or bound meanwhile from _pods)
        for q in list(self._pods.values()):
            if q.unschedulable_since is not None:
                q.unschedulable_since = None
                wait = q.backoff_until - self.kernel.now
                if wait > 0:
                    self.kernel.call_later(wait, lambda uid=q.uid: self._requeue(uid))
                else:
                    self._requeue(q.uid)

    def _pending(self, uid: str) -> tuple[_QueuedPod, Obj] | None:
        """The queued pod and its current object, if it still waits for a node (else it leaves the queue)."""
        q = self._pods.get(uid)
        if q is None:
            return None
        pod = self.store.try_get("Pod", *q.key)
        if pod is None or pod["metadata"]["uid"] != uid or pod["spec"].get("nodeName"):
            self._pods.pop(uid, None)
            return None
        return q, pod

    def _requeue(self, uid: str) -> None:
        found = self._pending(uid)
        if found is not None:
            self._push(uid, found[1])

    def _retry_due(self) -> None:
        now = self.kernel.now
        for q in list(self._pods.values()):
            if q.unschedulable_since is not None and now - q.unschedulable_since >= UNSCHEDULABLE_TIMEOUT - 1e-9:
                q.unschedulable_since = None
                self._requeue(q.uid)

    # ---- scheduling cycle -------------------------------------------------------------------------

    def _run(self) -> None:
        self._wake_scheduled = False
        seen: set[str] = set()
        while self._active:
            _, _, uid = heapq.heappop(self._active)
            if uid in seen:
                continue
            seen.add(uid)
            found = self._pending(uid)
            if found is not None:
                self._schedule_one(found[1], found[0])

    def _schedule_one(self, pod: Obj, q: _QueuedPod) -> None:
        q.attempts += 1
        reason, delayed = self._volume_binding(pod)
        if reason is not None:   # VolumeBinding PreFilter: UnschedulableAndUnresolvable on every node
            every = plugins.Diagnosis()
            every.reasons[reason] = every.unresolvable = self.cache.node_count()
            self._failed(pod, q, every)
            return
        node, diagnosis, facts = self._find_node(pod)
        if node is None:
            assert diagnosis is not None
            self._failed(pod, q, diagnosis)
            return
        if delayed:
            self._pods.pop(q.uid, None)
            self._pre_bind(pod, node, delayed)
            return
        self._bind(pod, node, facts)

    # ---- VolumeBinding (plugins/volumebinding, pkg/scheduler/framework/plugins/volumebinding/binder.go) ----------

    def _volume_binding(self, pod: Obj) -> tuple[str | None, list[Obj]]:
        """PreFilter: every claim must exist; an unbound claim must be of a WaitForFirstConsumer class (bound
        in PreBind), else the pod waits for the PersistentVolume controller."""
        volumes = pod["spec"].get("volumes")
        # (most pods mount no claim, only the service-account token's projected volume)
        if not volumes or not any(vol.get("persistentVolumeClaim") for vol in volumes):
            return None, []
        from podlife.controlplane.controllers.persistentvolume import claim_class, claim_ref_error, is_bound

        ns = pod["metadata"].get("namespace", "default")
        delayed = []
        for vol in pod["spec"].get("volumes") or ():
            ref = vol.get("persistentVolumeClaim")
            if not ref:
                continue
            err = claim_ref_error(self.store, ns, ref.get("claimName", ""))
            if err is not None:
                return err, []
            claim = self.store.get("PersistentVolumeClaim", ns, ref.get("claimName", ""))
            if is_bound(claim):
                continue
            sc = self.store.try_get("StorageClass", None, claim_class(claim)) if claim_class(claim) else None
            if sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer" and \
                    not claim["spec"].get("volumeName"):
                delayed.append(claim)
            else:
                return "pod has unbound immediate PersistentVolumeClaims", []
        return None, delayed

    def _pre_bind(self, pod: Obj, node: str, claims: list[Obj]) -> None:
        """PreBind: the chosen node goes on each delayed claim (volume.kubernetes.io/selected-node), and the
        binding waits until the provisioner's volume is bound to every one of them."""
        from podlife.controlplane.controllers.persistentvolume import SELECTED_NODE

        keys = []
        for claim in claims:
            md = claim["metadata"]
            keys.append((md["namespace"], md["name"]))
            if (md.get("annotations") or {}).get(SELECTED_NODE) != node:
                new = clone(claim)
                new["metadata"].setdefault("annotations", {})[SELECTED_NODE] = node
                try:
                    self.store.update(new, by=SCHEDULER_NAME)
                except ApiError:
                    pass
        self._prebind[pod["metadata"]["uid"]] = (pod, node, keys)
        self._check_prebind()

    def _on_claim(self, type_: str, claim: Obj, old: Obj | None) -> None:
        self._check_prebind()
        self._move_all_to_active()

    def _check_prebind(self) -> None:
        from podlife.controlplane.controllers.persistentvolume import is_bound

        for uid in sorted(self._prebind):
            pod, node, keys = self._prebind[uid]
            claims = [self.store.try_get("PersistentVolumeClaim", *k) for k in keys]
            if all(c is not None and is_bound(c) for c in claims):
                del self._prebind[uid]
                current = self.store.try_get("Pod", pod["metadata"]["namespace"], pod["metadata"]["name"])
                if current is not None and current["metadata"]["uid"] == uid and not current["spec"].get("nodeName"):
                    self._bind(current, node)

    def _failed(self, pod: Obj, q: _QueuedPod, diagnosis: plugins.Diagnosis) -> None:
        """schedule_one.go: PostFilter (DefaultPreemption) when no node fits, then handleSchedulingFailure. With
        asynchronous preemption the victims go after the failure is handled (prepareCandidateAsync's goroutine),
        else before it (prepareCandidate inside PostFilter)."""
        result = Result()
        if self.cache.node_count():
            with self._nominated_reserved(pod):
                result = self.preemption.post_filter(pod, diagnosis)
        candidate = result.candidate
        if candidate is not None and not self.async_preemption:
            self.preemption.prepare(pod, candidate)
        self._unschedulable(pod, q, diagnosis, result)
        if candidate is not None and self.async_preemption:
            self.preemption.prepare(pod, candidate)

    def clear_nomination(self, key: tuple[str, str]) -> None:
        """util.ClearNominatedNodeName: the pod's status loses nominatedNodeName (a status-only change: the queue
        does not count it as an update that moves the pod, isPodUpdated)."""
        pod = self.store.try_get("Pod", *key)
        if pod is None or not (pod.get("status") or {}).get("nominatedNodeName"):
            return
        new = clone(pod)
        new["status"].pop("nominatedNodeName", None)
        try:
            self.store.update_status(new, by=SCHEDULER_NAME)
        except ApiError:
            pass

    def _bind(self, pod: Obj, node: str, facts: SpecFacts | None = None) -> None:
        """``facts``: those of the pod's spec, if at hand (binding sets only nodeName, which they do not read)."""
        md = pod["metadata"]
        try:
            bound = self.store.bind(md["namespace"], md["name"], node, by=SCHEDULER_NAME, uid=md["uid"])
        except ApiError:
            return
        # schedule_one.go assume: the pod counts on its node at once, before the binding is observed, and no
        # longer holds a nomination (DeleteNominatedPodIfExists)
        self.cache.add_pod(bound, facts)
        self._pods.pop(md["uid"], None)
        self.nominated.pop(md["uid"], None)
        self.events.event(pod, "Normal", "Scheduled", f"Successfully assigned {md['namespace']}/{md['name']} to {node}")

    # ---- schedule_one.go schedulePod ---------------------------------------------------------------

    def default_selector(self, pod: Obj) -> dict | None:
        """podtopologyspread helper.DefaultSelector: the label selectors of the Services selecting the pod and
        of its ReplicaSet / StatefulSet owner, merged (matchLabels only for Services)."""
        md = pod["metadata"]
        labels = md.get("labels") or {}
        ns = md.get("namespace", "")
        match_labels: dict[str, str] = {}
        exprs: list = []
        for svc in self.store.list("Service", ns):
            sel = (svc.get("spec") or {}).get("selector") or {}
            if sel and all(labels.get(k) == v for k, v in sel.items()):
                match_labels.update(sel)
        for ref in md.get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") in ("ReplicaSet", "StatefulSet", "ReplicationController"):
                owner = self.store.try_get(ref["kind"], ns, ref["name"])
                sel = ((owner or {}).get("spec") or {}).get("selector") or {}
                if ref["kind"] == "ReplicationController":
                    match_labels.update(sel)
                else:
                    match_labels.update(sel.get("matchLabels") or {})
                    exprs += sel.get("matchExpressions") or []
        if not match_labels and not exprs:
            return None
        return {"matchLabels": match_labels, "matchExpressions": exprs}

    def default_selector_of(self, pod: Obj) -> dict | None:
        """The selector of the system default spreading constraints (none for a pod with its own)."""
        return None if pod["spec"].get("topologySpreadConstraints") else self.default_selector(pod)

    @contextmanager
    def _nominated_reserved(self, pod: Obj) -> Iterator[None]:
        """framework.go addGEPriorityNominatedPods: the filters see on each node the requests of the pods
        nominated to it with at least this pod's priority (its own nomination aside). Only requests: a
        nominated pod's labels do not reach affinity or spreading here."""
        held = self._reserve_nominated(pod)
        try:
            yield
        finally:
            self._release(held)

    def _reserve_nominated(self, pod: Obj) -> list[tuple[int, SpecFacts]]:
        if not self.nominated:
            return []
        uid, prio = pod["metadata"]["uid"], int(pod["spec"].get("priority") or 0)
        held = []
        self.cache.ordered()
        for other in sorted(self.nominated):
            node, facts, _ = self.nominated[other]
            info = self.cache.nodes.get(node)
            if other != uid and facts.priority >= prio and info is not None:
                self.cache.reserve(info.pos, facts, +1)
                held.append((info.pos, facts))
        return held

    def _release(self, held: list[tuple[int, SpecFacts]]) -> None:
        for pos, facts in held:
            self.cache.reserve(pos, facts, -1)

    def find_node(self, pod: Obj) -> tuple[str | None, plugins.Diagnosis | None]:
        """findNodesThatFitPod + prioritizeNodes + selectHost: the node, or None and why no node fits."""
        return self._find_node(pod)[:2]

    def _find_node(self, pod: Obj) -> tuple[str | None, plugins.Diagnosis | None, SpecFacts]:
        """find_node, and the facts of the pod's spec (its template's: the cache's assume reuses them)."""
        ctx = plugins.PodContext(pod, self.cache, self.default_selector_of(pod), self.weights.selector_spread > 0)
        facts = ctx.t.facts
        n = self.cache.size
        if n == 0:
            return None, plugins.Diagnosis(), facts
        held = self._reserve_nominated(pod)   # (a plain try: this path runs for every pod)
        try:
            nominated = (pod.get("status") or {}).get("nominatedNodeName")
            if nominated and self.prefer_nominated_node and nominated in self.cache.nodes and \
                    plugins.filter_node(ctx, self.cache, nominated) is None:
                # evaluateNominatedNode: the nominated node passes the filters, so it is the only feasible node
                return nominated, None, facts
            # findNodesThatPassFilters: check nodes from nextStartNodeIndex round-robin until enough are feasible
            want = plugins.num_feasible_nodes_to_find(self.config.percentageOfNodesToScore, n)
            start = self.next_start_node_index
            feasible, count, processed = plugins.find_feasible(ctx, self.cache, start, want)
            self.next_start_node_index = (start + processed) % n
            if count == 0:
                return None, plugins.diagnose(ctx, self.cache), facts
        finally:
            if held:
                self._release(held)
        # schedulePod: one feasible node is used without scoring
        chosen = 0 if count == 1 else \
            self.host_selector.select(plugins.score_nodes(ctx, self.cache, feasible, count, self.weights))
        pos = feasible.start + chosen if isinstance(feasible, slice) else int(feasible[chosen])
        return self.cache.ordered()[pos].name, None, facts

    def _unschedulable(self, pod: Obj, q: _QueuedPod, diagnosis: plugins.Diagnosis, result: Result) -> None:
        total = self.cache.node_count()
        msg = diagnosis.message(total)
        if self.fit_error_suffix and result.message:
            # FitError.Error(): " %v." with the PostFilter status, which DefaultPreemption prefixes "preemption: "
            msg += f" preemption: {result.message}."
        backoff = min(self.config.podInitialBackoffSeconds * 2 ** (q.attempts - 1), self.config.podMaxBackoffSeconds)
        q.backoff_until = self.kernel.now + backoff
        q.unschedulable_since = self.kernel.now
        self._maybe_unschedulable = True
        self._schedule_wake(UNSCHEDULABLE_TIMEOUT)
        self.events.event(pod, "Warning", "FailedScheduling", msg)
        cond = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": msg,
                "lastProbeTime": None, "lastTransitionTime": self.trace.timestamp()}
        new = clone(pod)
        conds = [c for c in new["status"].get("conditions") or () if c["type"] != "PodScheduled"]
        old = next((c for c in new["status"].get("conditions") or () if c["type"] == "PodScheduled"), None)
        nominated = new["status"].get("nominatedNodeName")
        if result.nominate is not None:   # updatePod: NominatingInfo in override mode
            nominated = result.nominate or None
        if old is not None and old.get("status") == "False" and old.get("message") == msg and \
                nominated == new["status"].get("nominatedNodeName"):
            return
        new["status"]["conditions"] = conds + [cond]
        if nominated:
            new["status"]["nominatedNodeName"] = nominated
        else:
            new["status"].pop("nominatedNodeName", None)
        try:
            self.store.update_status(new, by=SCHEDULER_NAME)
        except ApiError:
            pass

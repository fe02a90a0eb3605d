"""DefaultPreemption, the PostFilter plugin (pkg/scheduler/framework/plugins/defaultpreemption and
pkg/scheduler/framework/preemption): when a pod fits no node, find nodes where removing lower-priority pods
would make it fit, pick one, and delete the victims there; the pod is nominated to that node and scheduled
once the victims are gone.

- PodEligibleToPreemptOthers: not a pod with preemptionPolicy Never; not a pod whose nominated node still has a
  lower-priority pod terminating because of an earlier preemption (with DisruptionTarget: one carrying
  reason PreemptionByScheduler).
- Candidates: only nodes whose filter failure preemption might fix (Unschedulable, not
  UnschedulableAndUnresolvable), tried from a random offset until enough are found (at least 10 % of them or
  100, minCandidateNodesPercentage / minCandidateNodesAbsolute). On each, SelectVictimsOnNode: remove every
  lower-priority pod; if the pod then fits, put pods back from the most important (priority, then earlier
  start), first those whose PodDisruptionBudget the removal would violate, keeping each that still lets the
  pod fit; the rest are the victims.
- pickOneNodeForPreemption, in order: fewest PDB violations, lowest highest-victim priority, lowest sum of
  priorities, fewest victims, latest start of the highest-priority victims; then the first candidate.
- prepareCandidate: each victim gets the DisruptionTarget condition (PreemptionByScheduler) where the version
  has it, is deleted with its own grace period, and gets a Normal "Preempted" Event; lower-priority pods
  nominated to the node lose their nomination.

podlife runs the dry runs one node after another (upstream runs 16 in parallel and stops as soon as enough
candidates are in: which nodes were tried then depends on timing); the filters of a dry run see nominated pods'
requests but not their labels (affinity and spreading), as the scheduling cycle does here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from podlife.api.errors import ApiError
from podlife.api.meta import Obj, clone
from podlife.api.selectors import compiled
from podlife.controlplane.scheduler import plugins
from podlife.controlplane.scheduler.cache import NodeInfo, PodEntry

if TYPE_CHECKING:
    from podlife.controlplane.scheduler.scheduler import Scheduler

MIN_CANDIDATE_NODES_PERCENTAGE = 10   # DefaultPreemptionArgs defaults
MIN_CANDIDATE_NODES_ABSOLUTE = 100
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"
NEVER = "not eligible due to preemptionPolicy=Never."
TERMINATING = "not eligible due to a terminating pod on the nominated node."
LATEST = "\uffff"   # GetPodStartTime of a pod not started: now, later than any start time


@dataclass
class Candidate:
    """A node preemption could use: the pods it would evict."""

    node: str
    victims: list[PodEntry]
    pdb_violations: int


@dataclass
class Result:
    """The PostFilter outcome: ``nominate`` None leaves the pod's nomination, "" clears it, else the node;
    ``message`` is the status message (None on success) that FitError appends."""
    nominate: str | None = None
    message: str | None = None
    candidate: Candidate | None = None
    reasons: dict[str, int] = field(default_factory=dict)


class DefaultPreemption:
    def __init__(self, sched: Scheduler) -> None:
        self.sched = sched
        self.rng = sched.kernel.rng("scheduler-preemption")

    # ---- PostFilter -------------------------------------------------------------------------------

    def post_filter(self, pod: Obj, diagnosis: plugins.Diagnosis) -> Result:
        cache = self.sched.cache
        prio = int(pod["spec"].get("priority") or 0)
        nominated = (pod.get("status") or {}).get("nominatedNodeName")
        if pod["spec"].get("preemptionPolicy") == "Never":
            return Result(message=NEVER)
        mask = diagnosis.resolvable_nodes
        if nominated and nominated in cache.nodes and mask is not None and mask[cache.nodes[nominated].pos]:
            # the nominated node failed for a reason preemption could fix: wait while an earlier victim there is
            # still terminating
            for entry in cache.nodes[nominated].pods.values():
                if entry.facts.priority < prio and entry.terminating and self._terminating_by_preemption(entry):
                    return Result(message=TERMINATING)
        order = cache.ordered()
        potential = [] if mask is None else [order[p] for p in np.flatnonzero(mask)]
        total = cache.node_count()
        if not potential:
            return Result(nominate="", message=self._fit_message({NOT_HELPFUL: total}, total))
        offset = self.rng.randrange(len(potential))
        want = min(max(len(potential) * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE),
                   len(potential))
        pdbs = self._budgets(pod["metadata"].get("namespace", ""))
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        reasons: dict[str, int] = {NOT_HELPFUL: total - len(potential)} if total > len(potential) else {}
        if not cache.priorities or min(cache.priorities) >= prio:   # no pod anywhere has a lower priority
            reasons[NO_VICTIMS] = len(potential)
            potential = []
        for i in range(len(potential)):
            info = potential[(offset + i) % len(potential)]
            found = self._select_victims(pod, prio, info, pdbs)
            if isinstance(found, Candidate):
                (violating if found.pdb_violations else clean).append(found)
                if clean and len(clean) + len(violating) >= want:
                    break
            else:
                for r in found:
                    reasons[r] = reasons.get(r, 0) + 1
        candidates = clean + violating
        if not candidates:
            return Result(nominate="", message=self._fit_message(reasons, total), reasons=reasons)
        best = candidates[0] if len(candidates) == 1 else self._pick_one(candidates)
        return Result(nominate=best.node, candidate=best)

    @staticmethod
    def _fit_message(reasons: dict[str, int], total: int) -> str:
        """The FitError of the dry runs: reasons counted over nodes, sorted as strings."""
        parts = sorted(f"{n} {r}" for r, n in reasons.items())
        return f"0/{total} nodes are available: {', '.join(parts)}."

    def _terminating_by_preemption(self, entry: PodEntry) -> bool:
        """podTerminatingByPreemption: with DisruptionTarget conditions, only a pod preemption is deleting."""
        profile = self.sched.profile
        if profile is not None and not profile.disruption_target_condition:
            return True
        obj = self.sched.store.try_get("Pod", entry.namespace, entry.name)
        return any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                   and c.get("reason") == "PreemptionByScheduler"
                   for c in ((obj or {}).get("status") or {}).get("conditions") or ())

    def _budgets(self, namespace: str) -> list[list[Any]]:
        """[selector, disruptionsAllowed, disruptedPods] of the namespace's PodDisruptionBudgets; a nil or empty
        selector matches nothing."""
        out = []
        for pdb in self.sched.store.list("PodDisruptionBudget", namespace):
            try:
                sel = compiled((pdb.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if sel.empty() or sel.nothing:
                continue
            status = pdb.get("status") or {}
            out.append([sel, int(status.get("disruptionsAllowed") or 0), status.get("disruptedPods") or {}])
        return out

    def _start(self, entry: PodEntry) -> str:
        obj = self.sched.store.try_get("Pod", entry.namespace, entry.name)
        return ((obj or {}).get("status") or {}).get("startTime") or LATEST

    def _importance(self, entry: PodEntry) -> tuple[int, str]:
        """util.MoreImportantPod as a sort key: higher priority, then earlier start, first."""
        return (-entry.facts.priority, self._start(entry))

    def _fits(self, pod: Obj, name: str) -> tuple[str, ...] | None:
        """RunFilterPluginsWithNominatedPods on one node: None when the pod fits, else the reasons."""
        sched = self.sched
        ctx = plugins.PodContext(pod, sched.cache, sched.default_selector_of(pod))
        failed = plugins.filter_node(ctx, sched.cache, name)
        return None if failed is None else failed[0]

    def _select_victims(self, pod: Obj, prio: int, info: NodeInfo, pdbs: list[list[Any]]
                        ) -> Candidate | tuple[str, ...]:
        """SelectVictimsOnNode on the cache itself, undone before returning."""
        cache = self.sched.cache
        lower = [e for e in info.pods.values() if e.facts.priority < prio]
        if not lower:
            return (NO_VICTIMS,)
        order = list(info.pods)
        cache.take_pods(info, lower)
        try:
            failed = self._fits(pod, info.name)
            if failed is not None:
                return failed
            lower.sort(key=self._importance)
            allowed = [b[1] for b in pdbs]
            violating: list[Any] = []
            clean: list[Any] = []
            for e in lower:   # filterPodsWithPDBViolation
                hit = False
                if e.labels:
                    for i, (sel, _, disrupted) in enumerate(pdbs):
                        if e.name in disrupted or not sel.matches(e.labels):
                            continue
                        allowed[i] -= 1
                        hit = hit or allowed[i] < 0
                (violating if hit else clean).append(e)
            victims: list[PodEntry] = []
            n_violating = 0
            for group, counts in ((violating, True), (clean, False)):
                for e in group:   # reprievePod: back on the node if the pod still fits
                    cache.put_back(info, [e], order)
                    if self._fits(pod, info.name) is not None:
                        cache.take_pods(info, [e])
                        victims.append(e)
                        n_violating += counts
            victims.sort(key=self._importance)
            if not victims:
                return (f'expected at least one victim pod on node "{info.name}"',)
            return Candidate(info.name, victims, n_violating)
        finally:
            cache.put_back(info, [e for e in lower if e.uid not in info.pods], order)

    def _pick_one(self, candidates: list[Candidate]) -> Candidate:
        """pickOneNodeForPreemption: each criterion keeps the best candidates; the first one left wins."""
        criteria = (
            lambda c: -c.pdb_violations,
            lambda c: -c.victims[0].facts.priority,
            lambda c: -sum(v.facts.priority + 2 ** 31 for v in c.victims),
            lambda c: -len(c.victims),
            lambda c: self._earliest_start(c),
        )
        left = candidates
        for score in criteria:
            scores = [score(c) for c in left]
            top = max(scores)
            left = [c for c, s in zip(left, scores) if s == top]
            if len(left) == 1:
                break
        return left[0]

    def _earliest_start(self, c: Candidate) -> str:
        """GetEarliestPodStartTime: the earliest start among the victims of the highest priority."""
        top = c.victims[0].facts.priority
        return min(self._start(v) for v in c.victims if v.facts.priority == top)

    # ---- prepareCandidate -------------------------------------------------------------------------

    def prepare(self, pod: Obj, candidate: Candidate) -> None:
        """Delete the victims (DisruptionTarget first, where the version has it) with a Preempted Event each,
        then clear the nomination of lower-priority pods nominated to the node."""
        sched = self.sched
        store, profile = sched.store, sched.profile
        node = candidate.node
        for v in candidate.victims:
            victim = store.try_get("Pod", v.namespace, v.name)
            if victim is None or victim["metadata"]["uid"] != v.uid:
                continue   # already gone: "Victim Pod is already deleted"
            if profile is None or profile.disruption_target_condition:
                new = clone(victim)
                conds = [c for c in new["status"].get("conditions") or () if c["type"] != "DisruptionTarget"]
                scheduler = pod["spec"].get("schedulerName") or "default-scheduler"
                new["status"]["conditions"] = conds + [{
                    "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                    "message": f"{scheduler}: preempting to accommodate a higher priority pod",
                    "lastProbeTime": None, "lastTransitionTime": sched.trace.timestamp()}]
                try:
                    victim = store.update_status(new, by=sched.NAME)
                except ApiError:
                    pass
            try:
                store.delete("Pod", v.namespace, v.name, by=sched.NAME)
            except ApiError:
                continue
            sched.events.event(victim, "Normal", "Preempted", self._event_message(pod, node))
        prio = int(pod["spec"].get("priority") or 0)
        for uid, (name, facts, key) in sorted(sched.nominated.items()):
            if name == node and facts.priority < prio and uid != pod["metadata"]["uid"]:
                sched.clear_nomination(key)

    def _event_message(self, pod: Obj, node: str) -> str:
        md = pod["metadata"]
        style = self.sched.profile.preempted_event_message if self.sched.profile is not None else "uid"
        if style == "name":
            return f"Preempted by {md['namespace']}/{md['name']} on node {node}"
        if style == "anonymous":
            return f"Preempted by a pod on node {node}"
        return f"Preempted by pod {md['uid']} on node {node}"

"""The scenario the evidence describes: its pods, node, version and the user's actions at their real instants.

What the evidence does not say is assumed and listed (``Base.assumptions``): a pod's containers when only ids
appear, a grace period never logged, the version of a log without start-up lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

import yaml

from podlife.diagnose.evidence import Evidence
from podlife.diagnose.facts import Fact
from podlife.runtime.profiles import PROFILES
from podlife.versions import NEWEST, OLDEST_MINOR, normalize_version

LEAD = 5.0   # seconds the modelled pods run before the first evidence when the log does not show their start


@dataclass
class PodPlan:
    namespace: str
    name: str
    containers: list[str]
    grace: int
    prestop: dict[str, float] = field(default_factory=dict)      # container -> hook seconds
    sidecars: set[str] = field(default_factory=set)
    behavior: dict[str, dict[str, Any]] = field(default_factory=dict)   # fitted: container -> annotation fields
    images: dict[str, str] = field(default_factory=dict)
    create_at: float | None = None
    delete_at: float | None = None
    force_at: float | None = None
    spec: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass
class Base:
    origin: float                  # epoch seconds of the scenario's start
    version: str
    node: str
    runtime: str
    pods: list[PodPlan]
    restarts: list[float]          # kubelet restarts (seconds since origin)
    start: float                   # the evidence's first and last instants (seconds since origin)
    end: float
    assumptions: list[str] = field(default_factory=list)
    candidates: tuple[str, ...] = ()   # releases to choose from when the evidence does not say which

    @property
    def version_guessed(self) -> bool:
        return len(self.candidates) > 1

    def rel(self, t: float) -> float:
        return t - self.origin

    def clock(self, t: float) -> str:
        """An instant of the model as the log's clock shows it."""
        d = datetime.fromtimestamp(self.origin + t, tz=UTC)
        return f"{d:%m-%d %H:%M:%S}.{d.microsecond // 1000:03d}"


def _version(ev: Evidence, given: str | None, notes: list[str]) -> str:
    if given:
        return normalize_version(given)
    if ev.version:
        minor = int(ev.version.split(".")[1])
        if minor < OLDEST_MINOR:
            notes.append(f"the log's kubelet is {ev.version}, older than the oldest modelled (1.{OLDEST_MINOR}): "
                         f"modelled as 1.{OLDEST_MINOR}")
            return f"1.{OLDEST_MINOR}"
        if minor > int(NEWEST.split(".")[1]):
            notes.append(f"the log's kubelet is {ev.version}, newer than the newest modelled: modelled as {NEWEST}")
            return NEWEST
        return ev.version
    if ev.style == "structured":
        notes.append("the log does not say its kubelet's version (no start-up lines): its structured messages "
                     "are 1.21 or later (--kubernetes-version sets it)")
        return NEWEST
    notes.append("the log does not say its kubelet's version (no start-up lines): its printf-style messages are "
                 "1.20 or older (--kubernetes-version sets it)")
    return f"1.{OLDEST_MINOR}"


def _candidates(ev: Evidence, given: str | None) -> tuple[str, ...]:
    """The releases a log of this style can come from, when neither the log nor the user says which."""
    if given or ev.version:
        return ()
    newest = int(NEWEST.split(".")[1])
    if ev.style == "structured":
        return tuple(f"1.{m}" for m in sorted({21, 23, 25, 27, 29, 31, 33, 35, newest}) if m <= newest)
    # a tie goes to the last: the newest structured release, the oldest printf one (podlife writes 1.18's lines)
    return tuple(f"1.{m}" for m in range(20, OLDEST_MINOR - 1, -1))


def _of(facts: list[Fact], pod: str, *kinds: str) -> list[Fact]:
    return [f for f in facts if f.pod == pod and f.kind in kinds]


def build(ev: Evidence, pods: list[str] | None = None, version: str | None = None) -> Base:
    notes: list[str] = []
    v = _version(ev, version, notes)
    facts = list(ev.facts)
    if not facts and not ev.pods:
        raise ValueError("the evidence holds no timed facts")
    first = min((f.t for f in facts), default=0.0)
    last = max((f.t for f in facts), default=first)
    chosen = [k for k in ev.pods if pods is None or k in pods]
    plans: list[PodPlan] = []
    adds: dict[str, float] = {}
    for key in chosen:
        add = _of(facts, key, "sync-add")
        if add:
            adds[key] = add[0].t
    origin = min([first - LEAD] + list(adds.values()))
    if all(k in adds for k in chosen) and chosen:
        origin = min(adds.values())
    else:
        origin = _batch_phase(facts, origin)
    for key in chosen:
        plans.append(_plan(ev, key, facts, origin, v, notes))
    node = (ev.nodes or [p.node for p in ev.pods.values() if p.node] or ["node-1"])[0]
    if len(ev.nodes) > 1:
        notes.append(f"the evidence names several nodes ({', '.join(ev.nodes)}): the model runs {node}'s kubelet "
                     "with every pod on it")
    runtime = "containerd" if ev.runtime == "containerd" else "docker-18.06"
    if ev.runtime is None:
        notes.append("the evidence does not show the container runtime: modelled as docker 18.06 (dockershim)")
    # a start-up before any pod line is where the log begins, not a restart
    first_pod = min((f.t for f in facts if f.pod), default=last)
    restarts = [t - origin for t in ev.kubelet_starts if t - origin > 1.0 and t > first_pod]
    return Base(origin, v, node, runtime, plans, restarts, first - origin, last - origin, notes,
                _candidates(ev, version))


BATCH = 10.0   # pkg/kubelet/status/status_manager.go: syncPeriod, the status manager's batch sync


def _batch_phase(facts: list[Fact], origin: float) -> float:
    """Moves the origin back (by less than the batch period) so that the model's status batch sync, every 10 s
    from its start, falls when the log's does: two "still running" lines 10 s apart show its phase."""
    still = [f.t for f in facts if f.kind == "still-running"]
    for a, b in pairwise(still):
        if abs(b - a - BATCH) < 0.05:
            return origin - ((origin - b) % BATCH)
    # the status manager removes a finished pod on a batch sync too (1.18-1.21 log "fully terminated")
    removed = [f.t for f in facts if f.kind == "removed"]
    if removed:
        return origin - ((origin - removed[0]) % BATCH)
    return origin


def _plan(ev: Evidence, key: str, facts: list[Fact], origin: float, version: str, notes: list[str]) -> PodPlan:
    info = ev.pods[key]
    containers = [c for c in info.containers if c]
    if not containers:
        containers = ["app"]
        notes.append(f"{key}: the evidence names none of its containers: modelled with one (app)")
    grace = info.grace
    kills = _of(facts, key, "kill")
    if grace is None and kills and kills[0].value is not None:
        grace = int(kills[0].value)
    if grace is None:
        grace = 30
        notes.append(f"{key}: no grace period in the evidence: the default 30 s")
    plan = PodPlan(info.namespace, info.name, containers, grace, spec=info.spec, sidecars=set(info.sidecars),
                   images=dict(info.images))
    deletes = _of(facts, key, "sync-delete")
    if deletes:
        plan.delete_at = deletes[0].t - origin
    elif info.deletion_t is not None:
        plan.delete_at = info.deletion_t - origin
    else:
        killing = list(_of(facts, key, "event:Killing"))
        if killing:
            plan.delete_at = killing[0].t - origin
            notes.append(f"{key}: the delete is placed at its first Killing event (no SyncLoop DELETE line)")
    removes = _of(facts, key, "sync-remove")
    finals = _of(facts, key, "removed")
    if removes and plan.delete_at is not None and not any(abs(f.t - removes[0].t) < 1.5 for f in finals):
        plan.force_at = removes[0].t - origin   # the API object went without the kubelet's final delete
    adds = _of(facts, key, "sync-add")
    if adds and adds[0].t - origin > 1.0:
        plan.create_at = adds[0].t - origin
    # preStop hooks: how long each container's first hook ran
    for c in containers:
        starts = [f for f in _of(facts, key, "prestop-start") if f.container == c]
        dones = [f for f in _of(facts, key, "prestop-done", "prestop-failed", "prestop-timeout") if f.container == c]
        if starts:
            after = [d for d in dones if d.t >= starts[0].t]
            plan.prestop[c] = round(after[0].t - starts[0].t, 3) if after else float(grace)
    # the legacy sidecar PR's ordering: a sidecar's hook runs first, before any other container is killed
    if int(version.split(".")[1]) < 28 and len(containers) > 1 and plan.delete_at is not None:
        hooks = [f for f in _of(facts, key, "prestop-start", "kill") if f.t >= origin + plan.delete_at - 0.01]
        if hooks and hooks[0].kind == "prestop-start" and hooks[0].container:
            later = [f for f in hooks if f.kind == "kill" and f.container != hooks[0].container]
            if later:
                plan.sidecars.add(hooks[0].container)
    plan.behavior = _fit_behavior(facts, key, containers, plan)
    return plan


def _fit_behavior(facts: list[Fact], key: str, containers: list[str], plan: PodPlan) -> dict[str, dict[str, Any]]:
    """How each container's process took its SIGTERM, read off its last kill and its exit."""
    out: dict[str, dict[str, Any]] = {}
    for c in containers:
        kills = [f for f in _of(facts, key, "kill", "kill-override") if f.container == c]
        exits = [f for f in _of(facts, key, "exited") if f.container == c]
        if not kills or not exits or exits[-1].t < kills[-1].t:
            continue
        k, e = kills[-1], exits[-1]
        # a preStop hook run after the kill line takes its time out of the grace before SIGTERM
        hooks = [f for f in _of(facts, key, "prestop-done", "prestop-failed", "prestop-timeout")
                 if f.container == c and k.t <= f.t <= e.t]
        begin = hooks[-1].t if hooks else k.t
        took = e.t - begin
        grace = (k.value if k.value is not None else plan.grace) - (begin - k.t)
        if grace > 0 and took >= max(grace, 2.0) - 0.05:
            out[c] = {"onTerm": "ignore"}
        elif took > 0.3:
            out[c] = {"termSeconds": round(took, 2)}
    return out


@dataclass
class Change:
    """What a hypothesis adds to the base scenario: a fault action, or container behaviours."""

    name: str                                  # the fault type as the scenario format spells it, or a behaviour
    at: float | None = None
    pod: str | None = None
    container: str | None = None
    image: str | None = None
    also: tuple[tuple[str, str], ...] = ()     # more (pod, container) the same fault strikes at the same instant
    heal: float | None = None                  # the fault heals after this long (None: never)
    behaviors: bool = True                     # keep the fitted behaviours
    label: str = ""

    def describe(self, base: Base) -> str:
        where = f" on {self.pod}" + (f" container {self.container}" if self.container else "") if self.pod else \
            f" on {base.node}" if self.at is not None else ""
        when = f" at {base.clock(self.at)}" if self.at is not None else ""
        if self.at is not None and self.heal is not None:
            when += f" for {self.heal:.1f} s"
        return self.label or f"{self.name}{where}{when}"


def scenario_text(base: Base, change: Change, until: float) -> str:
    start = datetime.fromtimestamp(base.origin, tz=UTC)
    objects: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                                     for ns in sorted({p.namespace for p in base.pods} - {"default"})]
    actions: list[dict[str, Any]] = []
    for p in base.pods:
        obj = _pod_object(base, p, change.behaviors)
        if p.create_at is not None:
            actions.append({"at": f"{p.create_at:.6f}s", "create": obj})
        else:
            objects.append(obj)
        if p.delete_at is not None:
            actions.append({"at": f"{max(p.delete_at, 0.0):.6f}s", "delete": f"pod/{p.name}",
                            "namespace": p.namespace})
        if p.force_at is not None:
            actions.append({"at": f"{p.force_at:.6f}s", "delete": f"pod/{p.name}", "namespace": p.namespace,
                            "force": True,
                            "gracePeriodSeconds": 0})
    for t in base.restarts:
        actions.append({"at": f"{t:.6f}s", "fault": {"type": "KubeletRestart", "node": base.node}})
    if change.at is not None:
        fault: dict[str, Any] = {"type": change.name, "node": base.node}
        if change.pod:
            fault["pod"] = change.pod
        if change.container:
            fault["container"] = change.container
        if change.image:
            fault["image"] = change.image
        if change.heal is not None:
            fault["for"] = f"{change.heal:.3f}s"
        actions.append({"at": f"{change.at:.6f}s", "fault": fault})
        for pod, c in change.also:
            actions.append({"at": f"{change.at:.6f}s", "fault": {**fault, "pod": pod, "container": c}})
    actions.sort(key=lambda a: float(a["at"][:-1]))
    doc = {"apiVersion": "podlife/v1alpha1", "kind": "Scenario", "metadata": {"name": "diagnosis"},
           "spec": {"kubernetesVersion": base.version,
                    "startTime": start.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                    "until": f"{until:.3f}s",
                    "cluster": {"nodes": [{"name": base.node, "runtime": base.runtime}]},
                    "objects": objects, "actions": actions}}
    return yaml.safe_dump(doc, sort_keys=False)


def _pod_object(base: Base, p: PodPlan, behaviors: bool) -> dict[str, Any]:
    if p.spec is not None:
        spec = {k: v for k, v in p.spec.items() if k not in ("nodeName",)}
    else:
        containers = []
        for c in p.containers:
            entry: dict[str, Any] = {"name": c, "image": p.images.get(c, f"{c}:latest")}
            life: dict[str, Any] = {}
            if c in p.sidecars:
                life["type"] = "Sidecar"
            if c in p.prestop:
                life["preStop"] = {"exec": {"command": ["sh", "-c", "true"]}}
            if life:
                entry["lifecycle"] = life
            containers.append(entry)
        spec = {"terminationGracePeriodSeconds": p.grace, "containers": containers}
    spec["nodeName"] = base.node
    ann: dict[str, dict[str, Any]] = {}
    profile = PROFILES[base.runtime]
    for c in p.containers:
        fields: dict[str, Any] = {}
        if c in p.prestop:   # the runtime adds its exec overhead to the hook's own time
            fields["hookSeconds"] = {"preStop": round(max(0.0, p.prestop[c] - profile.exec_overhead), 3)}
        if behaviors:
            fit = dict(p.behavior.get(c, {}))
            if "termSeconds" in fit:   # the exit reaches the kubelet when the stop call returns
                fit["termSeconds"] = round(max(0.0, fit["termSeconds"] - profile.stop_return_latency), 3)
            fields.update(fit)
        if fields:
            ann[c] = fields
    md: dict[str, Any] = {"name": p.name, "namespace": p.namespace}
    if ann:
        md["annotations"] = {"podlife/behavior": yaml.safe_dump(ann, sort_keys=True)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}

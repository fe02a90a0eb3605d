"""Searching the model's fault space for what reproduces the evidence, and ranking what was found.

Each hypothesis is the reconstructed scenario plus one change: a fault of a modelled type on a target at an
instant, or the container behaviours read off the evidence (preStop hooks, a process ignoring SIGTERM or
taking N s to exit). Every one is run through the model and aligned with the evidence; a fault type's score
is its best over targets and instants, and the instants and targets that tie with it are kept (the evidence
cannot tell them apart).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import pairwise

from podlife.diagnose import align as aligner
from podlife.diagnose import simulate
from podlife.diagnose.evidence import Evidence
from podlife.diagnose.facts import Fact
from podlife.diagnose.reconstruct import Base, Change

# the fault types searched; among hypotheses the evidence cannot tell apart (same score, same span of
# instants, no clue) this order decides, and the output says they tie: a fixed, stated prior, no more
FAULTS = ("OOMKill", "ContainerHang", "LostExitEvent", "ImagePullFailure", "KubeletRestart", "RuntimeRestart",
          "RuntimeDown", "NetworkPartition", "NodePowerOff")
CONTAINER_FAULTS = ("OOMKill", "LostExitEvent", "ContainerHang")
# how long before the first place the fault-free model parts from the evidence a fault is tried
LEADS = (0.05, 0.6, 2.0, 6.0, 20.0, 42.0, 47.0, 60.0)   # 42, 47: a node controller's NotReady
FITS = 0.6         # a best score below this: no hypothesis reproduces the evidence
TIE = 0.004        # scores closer than this tie
# Occam: a fault is a claim of its own. It ranks above the fault-free model only when it reproduces evidence
# that model does not (recall higher by RECALL_GAIN); a fault that only silences lines an excerpted log happens
# to leave out is no better. MARGIN is what a fault's score pays for being one.
MARGIN = 0.01
RECALL_GAIN = 0.005


# a fault's target: pod, container, image, and more (pod, container) it strikes at once
Target = tuple[str | None, str | None, str | None, tuple[tuple[str, str], ...]]


@dataclass
class Hypothesis:
    name: str                               # the fault type as the scenario format spells it, or a behaviour
    change: Change
    score: float
    alignment: aligner.Alignment
    run: simulate.ModelRun
    instants: list[float] = field(default_factory=list)    # the instants that tie (seconds since origin)
    targets: list[str] = field(default_factory=list)       # the targets that tie
    clues: list[str] = field(default_factory=list)         # evidence beyond the model that favours it


@dataclass
class Diagnosis:
    base: Base
    real: list[Fact]                        # the evidence's facts, seconds since origin
    ranked: list[Hypothesis]
    baseline: Hypothesis                    # the reconstructed scenario with no fault and default behaviours
    runs: int
    missing: list[str]

    @property
    def best(self) -> Hypothesis:
        return self.ranked[0]

    @property
    def fits(self) -> bool:
        return self.best.score >= FITS


def _behaviour_name(base: Base) -> str:
    parts = []
    if any(p.prestop for p in base.pods):
        parts.append("PreStopHook")
    fits = [f for p in base.pods for f in p.behavior.values()]
    if any(f.get("onTerm") == "ignore" for f in fits):
        parts.append("IgnoresSIGTERM")
    if any("termSeconds" in f for f in fits):
        parts.append("SlowShutdown")
    return "+".join(parts) or "NoFault"


def _behaviour_label(base: Base) -> str:
    bits = []
    for p in base.pods:
        for c, secs in p.prestop.items():
            bits.append(f"{c}'s preStop hook runs {secs:.1f} s")
        for c in sorted(p.sidecars):
            bits.append(f"{c} is a sidecar (lifecycle.type: Sidecar, kubernetes#80744): its hook runs first and "
                        "again when it is stopped last")
        for c, f in p.behavior.items():
            if f.get("onTerm") == "ignore":
                bits.append(f"{c} ignores SIGTERM (SIGKILLed when its grace runs out)")
            elif "termSeconds" in f:
                bits.append(f"{c} exits {f['termSeconds']:.1f} s after SIGTERM")
    return "; ".join(bits)


def search(ev: Evidence, base: Base) -> Diagnosis:
    real = [Fact(f.t - base.origin, f.kind, f.pod, f.container, f.value, f.detail, f.source, f.text, f.weight)
            for f in ev.facts]
    pods = {p.key for p in base.pods}
    kinds = ev.has & {"klog", "events"}
    runs = 0

    def attempt(name: str, change: Change) -> Hypothesis:
        nonlocal runs
        runs += 1
        m = simulate.run(base, change, kinds)
        a = aligner.align(real, m.facts, base.start, base.end, pods)
        return Hypothesis(name, change, a.score - (MARGIN if change.at is not None else 0.0), a, m,
                          [change.at] if change.at is not None else [], _target(change))

    if base.version_guessed:
        _pick_version(base, lambda: attempt("NoFault", Change("NoFault", behaviors=False)).score)
    baseline = attempt("NoFault", Change("NoFault", behaviors=False, label="no fault, default behaviours"))
    found: dict[str, Hypothesis] = {"NoFault": baseline}
    bname = _behaviour_name(base)
    if bname != "NoFault":
        found[bname] = attempt(bname, Change(bname, label=_behaviour_label(base)))
    ref = max(found.values(), key=lambda h: h.score)
    fitted = ref.change.behaviors   # faults are tried over the better of the default and the fitted behaviours
    t_d = _divergence(ref.alignment, ref.run.facts, real, base.start)
    span = [base.start + (t_d - base.start) * k / 3 for k in range(3)]
    instants = sorted({round(t, 3) for t in [t_d - d for d in LEADS] + span + [t_d] if t > 1.0})
    containers = _container_targets(base, ref.alignment)
    floor = max(h.alignment.recall for h in found.values())
    gaps = _resumptions(real, base)
    for kind in FAULTS:
        targets: list[Target]
        if kind in CONTAINER_FAULTS:
            targets = [(pod, c, None, ()) for pod, c in containers]
            if len(base.pods) > 1:   # one cause striking every pod's containers at once (the node's OOM)
                every = [(p.key, c) for p in base.pods for c in p.containers]
                targets.append((every[0][0], every[0][1], None, tuple(every[1:])))
        elif kind == "ImagePullFailure":
            if not _starts(real, base):
                continue   # a failing pull shows only when a container starts, and none starts in the evidence
            # images the evidence shows pulled or failing first
            pulls = ("event:Pulling", "event:Failed", "event:BackOff")
            pulled = {(f.pod, f.container) for f in real if f.kind in pulls}
            images = sorted({p.images.get(c, f"{c}:latest"): (p.key, c) not in pulled
                             for p in base.pods for c in p.containers}.items(), key=lambda kv: kv[1])
            targets = [(None, None, image, ()) for image, _ in images]
        else:
            targets = [(None, None, None, ())]
        best: Hypothesis | None = None

        def keep(h: Hypothesis) -> None:
            nonlocal best
            if best is None or h.score > best.score + TIE:
                best = h
            elif h.score > best.score - TIE:
                best.instants.append(h.change.at or 0.0)
                for tg in h.targets:
                    if tg not in best.targets:
                        best.targets.append(tg)

        # first every instant on the first target; the other targets only where the kind shows an effect
        first, rest = (targets[:1], targets[1:]) if kind in CONTAINER_FAULTS else (targets, [])
        for pod, c, image, also in first:
            for t in instants:
                for heal in _heals(kind, t, gaps):
                    keep(attempt(kind, Change(kind, t, pod, c, image, also, behaviors=fitted, heal=heal)))
        if rest and best is not None and best.alignment.recall >= floor + RECALL_GAIN:
            for pod, c, image, also in rest:
                for t in instants:
                    keep(attempt(kind, Change(kind, t, pod, c, image, also, behaviors=fitted)))
        if best is not None and best.change.at is not None and best.alignment.recall >= floor + RECALL_GAIN:
            _refine(best, instants, keep, partial(attempt, kind))
        if best is not None:
            found[kind] = best
    plain = [h for h in found.values() if h.change.at is None]
    top = max(plain, key=lambda h: h.score)
    for h in found.values():
        if h.change.at is not None and h.alignment.recall < top.alignment.recall + RECALL_GAIN:
            h.score = min(h.score, top.score - 2 * TIE)
    order = {n: i for i, n in enumerate(FAULTS)}
    ranked = sorted(found.values(), key=lambda h: (-round(h.score / TIE), -_width(h), order.get(h.name, -1)))
    _apply_clues(ev, ranked)
    return Diagnosis(base, real, ranked, baseline, runs, _missing(ev))


_STARTS = ("pleg-ContainerStarted", "event:Pulling", "event:Created", "event:Started", "event:Failed",
           "event:BackOff", "sync-add")


HEALS = ("NetworkPartition", "RuntimeDown", "NodePowerOff")


def _resumptions(real: list[Fact], base: Base) -> list[float]:
    """Where the kubelet's log resumes after 10 s or more of silence: when a partition healed, a runtime came
    back or a node was powered on again."""
    logs = sorted(f.t for f in real if not f.kind.startswith("event:") and base.start <= f.t <= base.end)
    return [b for a, b in pairwise(logs) if b - a >= 10.0]


def _heals(kind: str, t: float, gaps: list[float]) -> list[float | None]:
    """A fault that lasts: for ever, or until the log resumes (each of the next two resumptions)."""
    if kind not in HEALS:
        return [None]
    return [None] + [round(g - t - 0.05, 3) for g in gaps if g - t > 1.0][:2]


def _starts(real: list[Fact], base: Base) -> bool:
    return any(f.kind in _STARTS and base.start - 1 <= f.t <= base.end + 1 for f in real)


def _width(h: Hypothesis) -> float:
    """How wide a span of instants reproduces the evidence as well: among hypotheses that tie, the one that
    needs no coincidence of timing is likelier (under a uniform prior on when a fault starts, its chance
    grows with that span)."""
    return max(h.instants) - min(h.instants) if h.instants else float("inf")


def _pick_version(base: Base, score: Callable[[], float]) -> None:
    """A log that does not say its version: the fault-free model of each candidate release is compared with
    it and the closest is kept (log wording, line numbers and timings differ between releases)."""
    from podlife.scenario.errors import ScenarioError

    tried: list[tuple[float, int, str]] = []
    for v in base.candidates:
        base.version = v
        try:
            tried.append((round(score(), 3), len(tried), v))   # a tie goes to the later candidate
        except ScenarioError:
            continue   # the release cannot run the reconstructed pod (a field it does not have)
    if not tried:
        base.version = base.candidates[0]
        return
    best = max(tried)
    base.version = best[2]
    base.assumptions.append(f"modelled as {best[2]}: of the releases whose log style this is "
                            f"({', '.join(base.candidates)}), its fault-free model matches the log best")


def _target(change: Change) -> list[str]:
    if change.also:
        return [f"every container ({1 + len(change.also)})"]
    if change.pod:
        return [f"{change.pod}/{change.container}" if change.container else change.pod]
    if change.image:
        return [f"image {change.image}"]
    return []


def _refine(best: Hypothesis, instants: list[float], keep: Callable[[Hypothesis], None],
            attempt: Callable[[Change], Hypothesis]) -> None:
    """Narrows the fault's instant: halfway and a quarter of the way to the neighbouring instants tried."""
    t0 = best.change.at or 0.0
    lower = max([t for t in instants if t < t0 - 0.01], default=max(1.0, t0 - 10.0))
    upper = min([t for t in instants if t > t0 + 0.01], default=t0 + 10.0)
    for t in (t0 - (t0 - lower) / 2, t0 - (t0 - lower) / 4, t0 + (upper - t0) / 4, t0 + (upper - t0) / 2):
        if t > 1.0:
            keep(attempt(replace(best.change, at=round(t, 3))))


def _divergence(a: aligner.Alignment, model: list[Fact], real: list[Fact], start: float) -> float:
    """Where the fault-free model first does something the evidence never does, or the evidence something the
    model never does (a fact whose kind the other timeline has within 15 s only came early or late)."""
    def lone(f: Fact, other: list[Fact]) -> bool:
        if any(f.kind == "event:" + needle for _, needle, _ in CLUES):
            return False   # evidence the model never writes
        return aligner.weight(f) >= 0.5 and not any(g.kind == f.kind and g.pod == f.pod and abs(g.t - f.t) < 15
                                                    for g in other)
    found = [f.t for f in a.real_only if lone(f, model)] + [f.t for f in a.model_only if lone(f, real)]
    if found:
        return min(found)
    r, m = a.parting()
    part = r or m
    return part.t if part is not None else start


def _container_targets(base: Base, a: aligner.Alignment, cap: int = 3) -> list[tuple[str, str]]:
    """Every container, those of the pods where the timelines part first, at most ``cap``."""
    every = [(p.key, c) for p in base.pods for c in p.containers]
    first = [f.pod for f in a.real_only + a.model_only if f.pod]
    every.sort(key=lambda pc: first.index(pc[0]) if pc[0] in first else len(first))
    return every[:cap]


# Evidence podlife does not model but upstream reports name: each favours a fault type over those it ties with.
CLUES: tuple[tuple[str, str, str], ...] = (
    ("LostExitEvent", "SystemOOM", ("the node's kernel killed a process (SystemOOM): an OOM under memory pressure "
                                    "is when containerd's exit events were lost in the seed-002 incident")),
    ("LostExitEvent", "OOMKilling", "the kernel OOM-killed a process on the node"),
    ("ContainerHang", "ContainerInspect", "a docker inspect (ContainerInspect) that does not return"),
    ("ContainerHang", "InspectContainer", "a docker inspect (InspectContainer) that does not return"),
)


def _apply_clues(ev: Evidence, ranked: list[Hypothesis]) -> None:
    texts = [(f.source, f.text or f"{f.kind} {f.detail}") for f in ev.facts] + [("", c) for c in ev.clues]
    for h in ranked:
        for kind, needle, why in CLUES:
            if kind == h.name:
                hits = [f"{src}: {txt}" if src else txt for src, txt in texts if needle in txt]
                if hits:
                    h.clues.append(f"{why}: {hits[0]}")
    # a clue breaks a tie in the model's score, never more
    ranked.sort(key=lambda h: (-round(h.score / TIE), -len(h.clues), -_width(h),
                               FAULTS.index(h.name) if h.name in FAULTS else -1))


def _missing(ev: Evidence) -> list[str]:
    out = []
    if "klog" not in ev.has:
        out.append("the kubelet log (journalctl -u kubelet): without it only the Events' whole seconds are compared")
    if "events" not in ev.has:
        out.append("the Events (kubectl get events -o yaml): the node controller's and scheduler's side")
    if not ({"pod", "describe"} & ev.has):
        out.append("the pod object (kubectl get pod -o yaml): its spec is inferred from the log")
    return out

"""Aligning the real timeline with a modelled one: fact by fact (same kind, pod and container; ids and numbers
masked by the readers), within a tolerance, and the first place they part."""

from __future__ import annotations

from dataclasses import dataclass, field

from podlife.diagnose.facts import LOW_WEIGHT, Fact

TOLERANCE = 1.5        # seconds: a relist period and a bit
EVENT_TOLERANCE = 2.5  # kubectl's Event times are whole seconds


@dataclass
class Alignment:
    score: float                                   # 0..1: (2 recall + precision) / 3
    recall: float = 0.0                            # the share of the evidence the model reproduces (weighted)
    precision: float = 0.0                         # the share of the modelled timeline the evidence shows
    pairs: list[tuple[Fact, Fact]] = field(default_factory=list)
    real_only: list[Fact] = field(default_factory=list)
    model_only: list[Fact] = field(default_factory=list)

    def parting(self) -> tuple[Fact | None, Fact | None]:
        """The first fact one timeline has and the other has not: (real, None) or (None, modelled)."""
        r = next((f for f in self.real_only if weight(f) >= 0.5), None)
        m = next((f for f in self.model_only if weight(f) >= 0.5), None)
        if r is not None and (m is None or r.t <= m.t):
            return r, None
        return None, m


def weight(f: Fact) -> float:
    if f.kind.startswith("log:"):
        return 0.3
    return LOW_WEIGHT.get(f.kind, 1.0)


def _compatible(a: Fact, b: Fact) -> bool:
    if a.kind != b.kind or a.pod != b.pod:
        return False
    if a.container and b.container and not (a.container.startswith("id:") or b.container.startswith("id:")):
        return a.container == b.container
    return True


def comparable(facts: list[Fact], start: float, end: float, pods: set[str]) -> list[Fact]:
    return [f for f in facts if start - TOLERANCE <= f.t <= end + TOLERANCE and (f.pod is None or f.pod in pods)
            and not f.kind.startswith("status-")]


def align(real: list[Fact], model: list[Fact], start: float, end: float, pods: set[str]) -> Alignment:
    real = comparable(real, start, end, pods)
    model = comparable(model, start, end, pods)
    # a line podlife does not write compares only when both timelines have its template
    both = {f.kind for f in real if f.kind.startswith("log:")} & {f.kind for f in model if f.kind.startswith("log:")}
    real = [f for f in real if not f.kind.startswith("log:") or f.kind in both]
    model = [f for f in model if not f.kind.startswith("log:") or f.kind in both]
    used = [False] * len(model)
    pairs: list[tuple[Fact, Fact]] = []
    real_only: list[Fact] = []
    got_r = got_m = 0.0
    for r in real:
        tol = EVENT_TOLERANCE if r.kind.startswith("event:") else TOLERANCE
        best, best_dt = -1, tol + 1e-9
        for i, m in enumerate(model):
            if used[i] or m.t > r.t + tol:
                continue
            dt = abs(m.t - r.t)
            if dt < best_dt and _compatible(r, m):
                best, best_dt = i, dt
        if best < 0:
            real_only.append(r)
            continue
        used[best] = True
        pairs.append((r, model[best]))
        close = 1.0 - 0.5 * best_dt / tol
        got_r += weight(r) * close
        got_m += weight(model[best]) * close
    # a log is often an excerpt (filtered, truncated): what it shows counts twice what it leaves out
    wr, wm = sum(weight(f) for f in real), sum(weight(f) for f in model)
    recall = got_r / wr if wr else 0.0
    precision = got_m / wm if wm else (1.0 if not real else 0.0)
    model_only = [m for i, m in enumerate(model) if not used[i]]
    return Alignment((2 * recall + precision) / 3, recall, precision, pairs=pairs, real_only=real_only,
                     model_only=model_only)

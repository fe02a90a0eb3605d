"""The diagnosis as text: the hypotheses ranked, the best one's chain of causes (as ``podlife explain`` walks
it, each step with its upstream home), the evidence that supports it, where the model and the evidence part,
and what would tell the top two apart."""

from __future__ import annotations

from podlife.diagnose import align as aligner
from podlife.diagnose.evidence import Evidence
from podlife.diagnose.facts import Fact
from podlife.diagnose.hypotheses import FITS, Diagnosis, Hypothesis
from podlife.diagnose.reconstruct import Base

# What a user can look at to separate two fault types the model's timelines cannot (upstream's own advice).
TELLS: dict[frozenset[str], str] = {
    frozenset({"LostExitEvent", "ContainerHang"}):
        "`docker ps` listing the container Up while `ctr -n moby tasks ls` (or `docker-containerd-ctr`) shows "
        "its task STOPPED would confirm LostExitEvent; a `docker inspect <id>` that does not return would confirm "
        "ContainerHang",
    frozenset({"NodePowerOff", "NetworkPartition"}):
        "the node answering ping/ssh, or its kubelet log going on past the NotReady, would confirm "
        "NetworkPartition; a log that simply stops (and a boot record in `last -x`) NodePowerOff",
    frozenset({"RuntimeDown", "ContainerHang"}):
        "`docker ps` hanging too would confirm RuntimeDown; `docker ps` answering while one `docker inspect` "
        "hangs ContainerHang",
    frozenset({"KubeletRestart", "RuntimeRestart"}):
        "the kubelet's start-up lines (\"Version: v1.x\" / \"Kubelet version\") in the journal confirm "
        "KubeletRestart; `journalctl -u docker` (or containerd) starting again RuntimeRestart",
}


def _when(base: Base, t: float) -> str:
    return base.clock(t)


def _fact(base: Base, f: Fact) -> str:
    who = f"{f.pod}" + (f" {f.container}" if f.container and not f.container.startswith("id:") else "")
    return f"{f.kind}{' ' + who if f.pod else ''} at {_when(base, f.t)}"


def parting_text(base: Base, a: aligner.Alignment, other: list[Fact]) -> str | None:
    r, m = a.parting()
    if r is not None:
        near = [g for g in other if g.kind == r.kind and g.pod == r.pod and g.container == r.container]
        if near:
            g = min(near, key=lambda g: abs(g.t - r.t))
            return (f"the evidence shows {_fact(base, r)}; the model {g.t - r.t:+.1f} s "
                    f"from it, at {_when(base, g.t)}")
        return f"the evidence shows {_fact(base, r)}; the model never does"
    if m is not None:
        near = [g for g in a.real_only + [p[0] for p in a.pairs]
                if g.kind == m.kind and g.pod == m.pod and g.container == m.container and g.t > m.t]
        if near:
            g = min(near, key=lambda g: g.t)
            return f"the model has {_fact(base, m)}; the evidence {g.t - m.t:.1f} s later, at {_when(base, g.t)}"
        return (f"the model has {_fact(base, m)}; the evidence shows none "
                f"({base.end - m.t:.1f} s more of it to its end)")
    return None


def _span(base: Base, h: Hypothesis) -> str:
    if not h.instants:
        return ""
    lo, hi = min(h.instants), max(h.instants)
    when = f"at {_when(base, lo)}" if hi - lo < 0.01 else f"between {_when(base, lo)} and {_when(base, hi)}"
    tg = ""
    if h.targets:
        tg = f" on {h.targets[0]}" if len(h.targets) == 1 else f" on one of {', '.join(h.targets)}"
    elif h.change.at is not None:
        tg = f" on {base.node}"
    heal = f", healed {h.change.heal:.1f} s later" if h.change.heal is not None else ""
    return f"{tg} {when}{heal}"


def _delete_to_exit(base: Base, real: list[Fact], h: Hypothesis) -> list[str]:
    out = []
    for p in base.pods:
        deletes = [f.t for f in real if f.pod == p.key and f.kind == "sync-delete"]
        exits = [f.t for f in real if f.pod == p.key and f.kind == "exited"]
        recs = h.run.result.cluster.trace.records
        obj = f"Pod/{p.key}"
        term = [r["t"] for r in recs if r["type"] == "terminating" and r.get("object") == obj]
        ends = [r["t"] for r in recs if r["type"] == "runtime" and r.get("object") == obj and r.get("op") == "exit"]
        if term and ends and max(ends) >= term[0]:
            line = f"{p.key}: delete → last container exit {max(ends) - term[0]:.1f} s modelled"
            if deletes and exits and max(exits) > deletes[0]:
                line += f", {max(exits) - deletes[0]:.1f} s in the evidence"
            out.append(line)
    return out


def _chain(base: Base, h: Hypothesis) -> list[str]:
    from podlife.report.explain import ExplainError, explain

    rep = {"records": h.run.result.cluster.trace.records, "kubernetesVersion": base.version}
    out: list[str] = []
    for p in base.pods:
        try:
            obj, target, steps = explain(rep, p.key)
        except ExplainError:
            continue
        out.append(f"  {obj}: why {_when(base, target)}")
        for s in steps:
            out.append(f"    {_when(base, s.t)}  {s.text}")
            out.append(f"                        ↳ {s.home}")
    faults = [r for r in h.run.result.cluster.trace.records if r["type"] == "fault"]
    for r in faults:
        if r.get("fault") == h.name:
            out.insert(0, f"  {_when(base, r['t'])}  fault {r['fault']} {r['op']} on {r['node']} "
                          f"{' '.join(f'{k}={v}' for k, v in r.get('fields', {}).items())}  "
                          f"↳ src/podlife/cluster/faults.py")
    return out


def _supporting(d: Diagnosis, h: Hypothesis, limit: int = 12) -> list[Fact]:
    if h.change.at is None:
        facts = [r for r, _ in h.alignment.pairs if aligner.weight(r) >= 0.5]
    else:
        base_pairs = {id(r) for r, _ in d.baseline.alignment.pairs}
        plain = max((x for x in d.ranked if x.change.at is None), key=lambda x: x.alignment.recall)
        base_pairs |= {id(r) for r, _ in plain.alignment.pairs}
        facts = [r for r, _ in h.alignment.pairs if id(r) not in base_pairs]
    return facts[:limit]


def _tell(d: Diagnosis, a: Hypothesis, b: Hypothesis) -> str:
    tip = TELLS.get(frozenset({a.name, b.name}))
    if tip:
        return tip
    gap = aligner.align(a.run.facts, b.run.facts, d.base.start, d.base.end + 5, {p.key for p in d.base.pods})
    r, m = gap.parting()
    if r is not None:
        return (f"under {a.name} the kubelet would log {_fact(d.base, r)}; under {b.name} it would not: "
                f"a log reaching that instant tells them apart")
    if m is not None:
        return (f"under {b.name} the kubelet would log {_fact(d.base, m)}; under {a.name} it would not: "
                f"a log reaching that instant tells them apart")
    return "their modelled timelines are the same: no kubelet log or Event tells them apart"


def render(ev: Evidence, d: Diagnosis) -> list[str]:
    base = d.base
    out = [(f"podlife diagnose: {', '.join(p.key for p in base.pods)} on {base.node}, modelled as Kubernetes "
           f"{base.version} with {base.runtime}"),
           (f"evidence: {len(ev.facts)} timed facts from {len(ev.files)} file(s), {_when(base, base.start)} to "
           f"{_when(base, base.end)}")]
    for path, n in sorted(ev.ignored.items()):
        out.append(f"  {path}: {n} line(s) in formats podlife does not read, ignored")
    if ev.duplicates:
        out.append(f"  {ev.duplicates} repeated line(s) counted once")
    for note in ev.notes[:5]:
        out.append(f"  {note}")
    if base.assumptions:
        out.append("assumed:")
        out.extend(f"  - {a}" for a in base.assumptions)
    if d.missing:
        out.append("partial evidence, missing:")
        out.extend(f"  - {m}" for m in d.missing)
    out.append("")
    out.append(f"hypotheses ({d.runs} model runs; score: how much of the evidence the model reproduces, "
               f"(2·recall + precision)/3):")
    plain_recall = max(h.alignment.recall for h in d.ranked if h.change.at is None)
    for i, h in enumerate(d.ranked, 1):
        what = h.change.label if h.change.at is None else _span(base, h).strip()
        idle = "" if h.change.at is None or h.alignment.recall > plain_recall + 0.005 else \
            "  (reproduces nothing the fault-free model does not)"
        out.append(f"  {i:2d}. {h.score:.3f}  {h.name}  {what}{idle}")
        for c in h.clues:
            out.append(f"          clue: {c}")
    best = d.best
    out.append("")
    if not d.fits:
        out.append(f"no hypothesis fits: the best ({best.name}) reproduces {best.alignment.recall:.0%} of the "
                   f"evidence (a fit needs a score of {FITS}); the incident is outside what podlife models, or "
                   "the reconstruction missed something listed under assumed")
    else:
        out.append(f"best: {best.name}{_span(base, best)}" + (f": {best.change.label}" if best.change.label else ""))
        out.extend(f"  {line}" for line in _delete_to_exit(base, d.real, best))
    out.append("chain of causes in the model (as podlife explain walks it):")
    out.extend(_chain(base, best) or ["  (no pod step recorded)"])
    sup = _supporting(d, best)
    if sup:
        out.append("evidence that supports it:")
        out.extend(f"  {f.source}  {f.text[:220]}" for f in sup)
    part = parting_text(base, d.baseline.alignment, d.baseline.run.facts)
    if part:
        out.append(f"where the fault-free model and the evidence part: {part}")
    part = parting_text(base, best.alignment, best.run.facts)
    out.append(f"where {best.name} and the evidence still part: {part}" if part else
               f"{best.name} reproduces every compared fact")
    if len(d.ranked) > 1:
        second = d.ranked[1]
        out.append(f"to tell {best.name} from {second.name}: {_tell(d, best, second)}")
    return out

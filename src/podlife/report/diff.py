"""Where two runs part: the first differing record per pod, the durations that changed, the log wording.

Both sides are trace reports (section 4 of the scenario format); nothing here runs the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Records that describe what happened to an object, compared without their time.
_LIFECYCLE = ("api", "terminating", "deleted", "phase", "condition", "container", "hook", "signal", "runtime")
# Fields that name instances rather than behaviour (container ids, sandbox ids, resourceVersions).
_VOLATILE = ("t", "detail", "deletionTimestamp")

_TEMPLATE_SUBS = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uid>"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "<id>"),
    (re.compile(r"\b\d+(\.\d+)?\b"), "N"),
)


@dataclass
class Side:
    label: str
    report: dict[str, Any]


@dataclass
class PodDiff:
    pod: str
    first: tuple[dict[str, Any] | None, dict[str, Any] | None] | None  # first differing record, A then B
    durations: list[tuple[str, float | None, float | None]] = field(default_factory=list)


@dataclass
class Diff:
    a: Side
    b: Side
    pods: list[PodDiff]
    only_a: list[str]
    only_b: list[str]
    wording_a: list[str]  # log templates only side A printed
    wording_b: list[str]

    @property
    def identical(self) -> bool:
        return (not self.only_a and not self.only_b and not self.wording_a and not self.wording_b
                and all(p.first is None for p in self.pods))


def _key(r: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, repr(v)) for k, v in r.items() if k not in _VOLATILE))


def _pod_records(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in report["records"]:
        obj = r.get("object")
        if r["type"] in _LIFECYCLE and isinstance(obj, str) and obj.startswith("Pod/"):
            out.setdefault(obj, []).append(r)
    return out


def _first_difference(ra: list[dict[str, Any]], rb: list[dict[str, Any]]
                      ) -> tuple[dict[str, Any] | None, dict[str, Any] | None] | None:
    """The first position where the two histories differ in content or in time."""
    for x, y in zip(ra, rb):
        if _key(x) != _key(y) or x["t"] != y["t"]:
            return x, y
    if len(ra) != len(rb):
        n = min(len(ra), len(rb))
        return (ra[n] if n < len(ra) else None), (rb[n] if n < len(rb) else None)
    return None


def _instant(records: list[dict[str, Any]], pred: Any, last: bool = False) -> float | None:
    hits: list[float] = [r["t"] for r in records if pred(r)]
    if not hits:
        return None
    return hits[-1] if last else hits[0]


def durations(records: list[dict[str, Any]]) -> list[tuple[str, float | None]]:
    """The spans a user asks about: create → Running, delete → containers stopped, delete → removed."""
    created = _instant(records, lambda r: r["type"] == "api" and r["verb"] == "create")
    running = _instant(records, lambda r: r["type"] == "phase" and r["to"] == "Running")
    deleting = _instant(records, lambda r: r["type"] == "terminating")
    stopped = _instant(records, lambda r: r["type"] == "runtime" and r["op"] == "exit", last=True)
    removed = _instant(records, lambda r: r["type"] == "deleted")

    def span(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None or b < a else round(b - a, 3)

    return [("create → Running", span(created, running)),
            ("delete → containers stopped", span(deleting, stopped)),
            ("delete → removed", span(deleting, removed))]


def _template(message: str) -> str:
    for rx, sub in _TEMPLATE_SUBS:
        message = rx.sub(sub, message)
    return message


def _wording(report: dict[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for r in report["records"]:
        if r["type"] == "log":
            seen.setdefault(f"{r['component']} {r['file']}: {_template(r['message'])}", None)
        elif r["type"] == "event":
            seen.setdefault(f"event {r['reason']}: {_template(r['message'])}", None)
    return list(seen)


def compare(a: Side, b: Side) -> Diff:
    pa, pb = _pod_records(a.report), _pod_records(b.report)
    pods = []
    for pod in [p for p in pa if p in pb]:
        d = PodDiff(pod, _first_difference(pa[pod], pb[pod]))
        da, db = durations(pa[pod]), durations(pb[pod])
        d.durations = [(name, x, y) for (name, x), (_, y) in zip(da, db) if x != y]
        pods.append(d)
    wa, wb = _wording(a.report), _wording(b.report)
    sa, sb = set(wa), set(wb)
    return Diff(a, b, pods, [p for p in pa if p not in pb], [p for p in pb if p not in pa],
                [w for w in wa if w not in sb], [w for w in wb if w not in sa])


def _seconds(x: float | None) -> str:
    return "never" if x is None else f"{x:.1f} s"


def describe_record(r: dict[str, Any] | None) -> str:
    if r is None:
        return "(no further record)"
    fields = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("t", "type", "object") and v is not None)
    return f"{r['t']:.3f}s {r['type']} {fields}"


def render_lines(d: Diff, max_wording: int = 12) -> list[str]:
    """The plain-text form of a diff (the CLI prints these lines)."""
    a, b = d.a.label, d.b.label
    out = [f"{d.a.report['scenario']}: {a} against {b}"]
    if d.identical:
        out.append("the two runs do not differ")
        return out
    for p in d.pods:
        if p.first is None:
            continue
        name = p.pod.split("/")[-1]
        out.append(f"{p.pod}")
        out.append(f"  parts at: {a}: {describe_record(p.first[0])}")
        out.append(f"            {b}: {describe_record(p.first[1])}")
        for span, x, y in p.durations:
            out.append(f"  {name}: {span} {_seconds(x)} on {a}, {_seconds(y)} on {b}")
    for pod in d.only_a:
        out.append(f"{pod}: only on {a}")
    for pod in d.only_b:
        out.append(f"{pod}: only on {b}")
    for label, lines in ((a, d.wording_a), (b, d.wording_b)):
        if lines:
            out.append(f"wording only on {label}:")
            out.extend(f"  {w}" for w in lines[:max_wording])
            if len(lines) > max_wording:
                out.append(f"  … and {len(lines) - max_wording} more")
    return out

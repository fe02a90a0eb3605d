"""Expectations, judged from the trace: each check is a value that changes over time, and the timing
(``by``, ``at``, ``after``, ``always``) says when it must hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podlife.api.meta import KINDS, kind_from_name, ref_of
from podlife.scenario.durations import format_duration
from podlife.scenario.model import Expectation


@dataclass
class Verdict:
    """Whether an expectation held, and when."""

    description: str
    passed: bool
    detail: str
    at: float | None = None   # when it held, or failed: the instant checked, the break, or the deadline missed

    def as_dict(self) -> dict[str, Any]:
        return {"description": self.description, "passed": self.passed, "detail": self.detail}


def object_ref(e: Expectation) -> str:
    parts = e.object.split("/")
    kind = kind_from_name(parts[0]) or parts[0]
    ns = parts[1] if len(parts) == 3 else e.namespace
    if kind in KINDS:
        return ref_of(kind, ns, parts[-1])
    return f"{kind}/{ns}/{parts[-1]}" if e.namespaced else f"{kind}/{parts[-1]}"


def _observe(records: list[dict[str, Any]], obj: str, e: Expectation) -> list[tuple[float, Any]]:
    """(time, observed value) at each change; the value before the first entry is None (absent)."""
    out: list[tuple[float, Any]] = []
    exists = False
    state: dict[str | tuple[str, ...], Any] = {}   # "phase", or (what, name[, effect])

    def push(t: float, v: Any) -> None:
        if out and out[-1][0] == t:
            out[-1] = (t, v)
        elif not out or out[-1][1] != v:
            out.append((t, v))

    for r in records:
        if r.get("object") != obj:
            continue
        typ = r["type"]
        if (typ == "api" and r.get("verb") == "create") or typ == "restored":   # restored: imported (a dump's)
            exists = True
            state = {}
        elif typ == "deleted":
            exists = False
        elif typ == "phase":
            state["phase"] = r["to"]
        elif typ == "condition":
            state[("cond", r["conditionType"])] = (r["status"], r.get("reason"))
        elif typ == "container":
            state[("ctr", r["container"])] = (r["state"], r.get("reason"), r.get("exitCode"))
        elif typ == "taint":
            key = ("taint", r["key"], r["effect"])
            if r["op"] == "added":
                state[key] = True
            else:
                state.pop(key, None)
        else:
            continue
        push(r["t"], _value(e, exists, state))
    return out


def _value(e: Expectation, exists: bool, state: dict[str | tuple[str, ...], Any]) -> Any:
    c, v = e.check, e.value
    if c == "deleted":
        return "deleted" if not exists else "exists"
    if not exists:
        return None
    if c == "phase":
        return state.get("phase")
    if c == "ready":
        s = state.get(("cond", "Ready"))
        return None if s is None else s[0] == "True"
    if c == "nodeReady":
        s = state.get(("cond", "Ready"))
        return None if s is None else s[0]
    if c == "condition":
        return state.get(("cond", v["type"]))
    if c == "containerState":
        return state.get(("ctr", v["name"]))
    if c == "taint":
        key, effect = (v, None) if isinstance(v, str) else (v["key"], v.get("effect"))
        return any(k[0] == "taint" and k[1] == key and (effect is None or k[2] == effect)
                   for k in state if isinstance(k, tuple))
    raise ValueError(c)


def _holds(e: Expectation, value: Any) -> bool:
    c, v = e.check, e.value
    if c == "deleted":
        return (value == "deleted") == bool(v)
    if value is None:
        return False
    if c in ("phase", "nodeReady"):
        return value == v
    if c in ("ready", "taint"):
        return value is True if (c == "taint" or v) else value is False
    if c == "condition":
        return value[0] == v["status"] and (v.get("reason") is None or value[1] == v["reason"])
    if c == "containerState":
        state, reason, code = value
        return state == v["state"] and (v.get("reason") is None or reason == v["reason"]) and (
            v.get("exitCode") is None or code == v["exitCode"])
    raise ValueError(c)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "/".join(str(x) for x in value if x is not None)
    return "absent" if value is None else str(value)


def _timing(e: Expectation) -> str:
    if e.always:
        return f"always from {format_duration(e.always[0])} to {format_duration(e.always[1])}"
    if e.at is not None:
        return f"at {format_duration(e.at)}"
    parts = []
    if e.after is not None:
        parts.append(f"after {format_duration(e.after)}")
    if e.by is not None:
        parts.append(f"by {format_duration(e.by)}")
    return " and ".join(parts) if parts else "at the end"


def _describe(e: Expectation) -> str:
    v = e.value
    if e.check == "deleted":
        what = "deleted" if v else "not deleted"
    elif isinstance(v, dict):
        what = f"{e.check} " + ", ".join(f"{k}={x}" for k, x in v.items() if x is not None)
    else:
        what = f"{e.check} {v}"
    return f"{e.object} {what} {_timing(e)}"


def evaluate(e: Expectation, records: list[dict[str, Any]], end: float) -> Verdict:
    obj = object_ref(e)
    changes = _observe(records, obj, e)
    initial = "deleted" if e.check == "deleted" else None  # before its creation an object is absent

    def value_at(t: float) -> Any:
        v: Any = initial
        for ct, cv in changes:
            if ct > t:
                break
            v = cv
        return v

    def ever(a: float, b: float) -> float | None:
        if _holds(e, value_at(a)):
            return a
        for ct, cv in changes:
            if a < ct <= b and _holds(e, cv):
                return ct
        return None

    if e.always:
        a, b = e.always
        bad = None if _holds(e, value_at(a)) else a
        if bad is None:
            bad = next((ct for ct, cv in changes if a < ct <= b and not _holds(e, cv)), None)
        passed, when = bad is None, (b if bad is None else bad)
    elif e.at is not None:
        passed, when = _holds(e, value_at(e.at)), e.at
    elif e.by is not None or e.after is not None:
        a = e.after if e.after is not None else 0.0
        b = e.by if e.by is not None else end
        held = ever(a, b)
        passed = held is not None
        when = b if held is None else held
    else:
        passed, when = _holds(e, value_at(end)), end
    seen = ", ".join(f"{_show(v)} at {t:g}s" for t, v in changes) or "no change recorded"
    if passed:
        detail = f"held at {when:g}s" if not e.always else "held throughout"
    else:
        detail = f"expected {_describe(e)}; seen: {seen}"
        if e.always and when is not None:
            detail += f" (broken at {when:g}s)"
    return Verdict(e.description or _describe(e), passed, detail, when)

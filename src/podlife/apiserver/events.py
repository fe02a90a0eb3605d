"""events.k8s.io/v1 Events: the same stored objects as core/v1 Events, converted field by field
(pkg/apis/events/v1/conversion.go: note ↔ message, regarding ↔ involvedObject, reportingController ↔
reportingComponent, deprecated* ↔ the core timestamps, count and source)."""

from __future__ import annotations

from podlife.api.meta import Obj

# events.k8s.io field → core/v1 field
_RENAMED = {"note": "message", "regarding": "involvedObject", "reportingController": "reportingComponent",
            "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
            "deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count"}
_SAME = ("metadata", "eventTime", "series", "reportingInstance", "action", "reason", "related", "type")


def _convert(obj: Obj, api_version: str, renamed: dict[str, str]) -> Obj:
    out: Obj = {"kind": "Event", "apiVersion": api_version}
    for k in _SAME:
        if k in obj:
            out[k] = obj[k]
    for src, dst in renamed.items():
        if src in obj:
            out[dst] = obj[src]
    return out


def to_events_v1(core: Obj) -> Obj:
    out = _convert(core, "events.k8s.io/v1", {old: new for new, old in _RENAMED.items()})
    out.setdefault("eventTime", None)
    return out


def from_events_v1(ev: Obj) -> Obj:
    out = _convert(ev, "v1", _RENAMED)
    out.setdefault("involvedObject", {})
    return out

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


def to_events_v1(core: Obj) -> Obj:
    out: Obj = {"kind": "Event", "apiVersion": "events.k8s.io/v1"}
    for k in _SAME:
        if k in core:
            out[k] = core[k]
    for new, old in _RENAMED.items():
        if old in core:
            out[new] = core[old]
    out.setdefault("eventTime", None)
    return out


def from_events_v1(ev: Obj) -> Obj:
    out: Obj = {"kind": "Event", "apiVersion": "v1"}
    for k in _SAME:
        if k in ev:
            out[k] = ev[k]
    for new, old in _RENAMED.items():
        if new in ev:
            out[old] = ev[new]
    out.setdefault("involvedObject", {})
    return out

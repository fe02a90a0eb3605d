"""Recording Kubernetes Events: client-go tools/record.

An Event with the same source, object, reason and message as an earlier one is updated (count, lastTimestamp)
rather than created again, as the event correlator does; like its event logger the recorder remembers the
last 4,096 such keys (events_cache.go maxLruCacheEntries), least recently seen forgotten first. Each recording
is a trace ``event`` record, and the recording component logs it as client-go's event broadcaster does.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj

if TYPE_CHECKING:
    from podlife.api.store import Store

LRU_CACHE_ENTRIES = 4096   # staging/src/k8s.io/client-go/tools/record/events_cache.go maxLruCacheEntries


class EventRecorder:
    def __init__(self, store: Store, component: str, host: str | None = None, log: Any = None) -> None:
        self.store = store
        self.trace = store.trace
        self.component = component
        self.host = host
        self.log = log          # callable(involved ref dict, type, reason, message) for the component's log
        # events_cache.go getEventKey: source, the involved object (uid and apiVersion too), type, reason and
        # message; the source is this recorder's own, and kind/namespace/name are in the object's reference
        self._seen: OrderedDict[tuple[str, ...], str] = OrderedDict()
        self._source_name = component + (f"/{host}" if host else "")   # the trace record's source

    def event(self, obj: Obj, type_: str, reason: str, message: str, field_path: str = "") -> None:
        md = obj["metadata"]
        kind = obj["kind"]
        namespace = md.get("namespace")
        obj_name = md["name"]
        uid = md.get("uid")
        api_version = obj.get("apiVersion", "v1")
        involved = {"kind": kind, "namespace": namespace, "name": obj_name, "uid": uid, "apiVersion": api_version,
                    "resourceVersion": md.get("resourceVersion")}
        if field_path:
            involved["fieldPath"] = field_path
        if None in involved.values():
            involved = {k: v for k, v in involved.items() if v is not None}
        trace = self.trace
        # meta.ref, inline (an Event is the most frequent write): keep the two alike
        involved_ref = f"{kind}/{namespace}/{obj_name}" if namespace else f"{kind}/{obj_name}"
        # emit("event", ...)'s record, made whole for trace.put (no keywords packed and unpacked, no copy)
        rec = {"t": None, "type": "event", "object": involved_ref, "eventType": type_, "reason": reason,
               "message": message, "source": self._source_name}
        if field_path:
            rec["fieldPath"] = field_path
        trace.put(rec)
        if self.log is not None and trace.logs:   # the component's log lines are made at --trace full only
            self.log(involved, type_, reason, message)
        ns = namespace or "default"
        key = (ns, involved_ref, uid or "", api_version, field_path, type_, reason, message)
        now = trace.timestamp()
        seen = self._seen
        name = seen.get(key)
        store = self.store
        existing = None
        if name is not None:
            seen.move_to_end(key)
            existing = store.try_get("Event", ns, name)
        try:
            if existing is not None:
                ev = existing   # the store hands out Events unpacked: a copy of its own
                ev["count"] = ev.get("count", 1) + 1
                ev["lastTimestamp"] = now
                store.update(ev, by=self.component)
                return
            # the name client-go gives an event: object name + unique hex timestamp suffix; adding the store's
            # resourceVersion to the simulated nanoseconds keeps names unique and reproducible
            name = f"{obj_name}.{int(trace.kernel.now * 1e9) + store.resource_version:x}"
            seen[key] = name
            if len(seen) > LRU_CACHE_ENTRIES:
                seen.popitem(last=False)
            host = self.host
            component = self.component
            store.create_event({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": involved, "reason": reason, "message": message, "type": type_,
                "source": {"component": component, "host": host} if host else {"component": component},
                "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                "reportingComponent": component, "reportingInstance": host or "",
            }, by=component)
        except ApiError:
            pass  # events are best effort, as upstream

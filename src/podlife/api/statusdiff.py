"""Trace records for what a write changed in an object's observable state: any kind's status conditions; a
pod's phase and containers; a node's taints."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj, ref


def _conditions(obj: Obj | None) -> dict[str, tuple[Any, Any]]:
    if obj is None:
        return {}
    # a condition without a type is stored as written (CustomResourceDefinitionStatus does not validate its
    # conditions; a custom resource's status is whatever its schema allows): keyed by "" as Go decodes it
    st = obj.get("status")
    conds = st.get("conditions") if isinstance(st, dict) else None
    return {str(c.get("type") or ""): (c.get("status"), c.get("reason"))
            for c in (conds if isinstance(conds, list) else ()) if isinstance(c, dict)}


def _status(obj: Obj | None) -> dict[str, Any]:
    st = (obj or {}).get("status")
    return st if isinstance(st, dict) else {}


def _containers(obj: Obj | None) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    if obj is None:
        return out
    st = obj.get("status", {})
    for field in ("initContainerStatuses", "containerStatuses"):
        for cs in st.get(field) or ():
            state = cs.get("state") or {}
            name = next(iter(state), "waiting")
            detail = state.get(name) or {}
            # a waiting state's message says what it waits for (CrashLoopBackOff: "back-off 20s restarting ...")
            out[cs["name"]] = (name, detail.get("reason"), detail.get("exitCode") if name == "terminated" else None,
                               cs.get("restartCount", 0), detail.get("message") if name == "waiting" else None)
    return out


def _taints(obj: Obj | None) -> list[tuple[str, str]]:
    if obj is None:
        return []
    return [(t["key"], t.get("effect", "")) for t in obj.get("spec", {}).get("taints") or ()]


def status_records(kind: str, old: Obj | None, new: Obj) -> list[dict[str, Any]]:
    """The records, each with ``"t"`` first (for Trace.put to set)."""
    if kind not in ("Pod", "Node"):   # most writes (Events, Leases): no conditions, no records, no calls
        st = new.get("status")
        was = old.get("status") if old is not None else None
        if not (isinstance(st, dict) and st.get("conditions")) and \
                not (isinstance(was, dict) and was.get("conditions")):
            return []
    was_st, now_st = _status(old), _status(new)
    out: list[dict[str, Any]] = []
    r = ref(new)
    # equal lists give no records: such a list is not read (a write leaves most of a status as it was)
    if kind == "Pod":
        was = was_st.get("phase")
        now = now_st.get("phase")
        if was != now:
            out.append({"t": None, "type": "phase", "object": r, "from": was, "to": now})
    if was_st.get("conditions") != now_st.get("conditions"):
        oc = _conditions(old)
        for ctype, (status, reason) in _conditions(new).items():
            if oc.get(ctype) != (status, reason):
                out.append({"t": None, "type": "condition", "object": r, "conditionType": ctype, "status": status,
                            "reason": reason})
    if kind not in ("Pod", "Node"):
        return out
    if kind == "Pod":
        if was_st.get("containerStatuses") == now_st.get("containerStatuses") and \
                was_st.get("initContainerStatuses") == now_st.get("initContainerStatuses"):
            return out
        ocs = _containers(old)
        for name, cur in _containers(new).items():
            if ocs.get(name) != cur:
                state, reason, code, restarts, message = cur
                rec = {"t": None, "type": "container", "object": r, "container": name, "state": state,
                       "reason": reason, "exitCode": code, "restartCount": restarts}
                if message:
                    rec["message"] = message
                out.append(rec)
    else:
        before, after = _taints(old), _taints(new)
        for key, effect in after:
            if (key, effect) not in before:
                out.append({"t": None, "type": "taint", "object": r, "key": key, "effect": effect, "op": "added"})
        for key, effect in before:
            if (key, effect) not in after:
                out.append({"t": None, "type": "taint", "object": r, "key": key, "effect": effect, "op": "removed"})
    return out

"""Trace records for what a write changed in an object's observable state: any kind's status conditions; a
pod's phase and containers; a node's taints."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj, ref


def _conditions(conds: Any) -> dict[str, tuple[Any, Any]]:
    """A status's conditions (as stored: anything) by type: (status, reason)."""
    # a condition without a type is stored as written (CustomResourceDefinitionStatus does not validate its
    # conditions; a custom resource's status is whatever its schema allows): keyed by "" as Go decodes it
    return {str(c.get("type") or ""): (c.get("status"), c.get("reason"))
            for c in (conds if isinstance(conds, list) else ()) if isinstance(c, dict)}


def _containers(st: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    """A pod status's containers by name: (state, reason, exit code, restarts, waiting message)."""
    out: dict[str, tuple[Any, ...]] = {}
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
    now_st = new.get("status")
    was_st = old.get("status") if old is not None else None
    if kind not in ("Pod", "Node") and not (isinstance(now_st, dict) and now_st.get("conditions")) and \
            not (isinstance(was_st, dict) and was_st.get("conditions")):
        return []   # most writes (Events, Leases): no conditions, no records, no calls
    if not isinstance(now_st, dict):
        now_st = {}
    if not isinstance(was_st, dict):
        was_st = {}
    now_conds, was_conds = now_st.get("conditions"), was_st.get("conditions")
    out: list[dict[str, Any]] = []
    r = ref(new)
    # equal lists give no records: such a list is not read (a write leaves most of a status as it was)
    if kind == "Pod":
        was = was_st.get("phase")
        now = now_st.get("phase")
        if was != now:
            out.append({"t": None, "type": "phase", "object": r, "from": was, "to": now})
    if was_conds != now_conds:
        oc = _conditions(was_conds)
        for ctype, (status, reason) in _conditions(now_conds).items():
            if oc.get(ctype) != (status, reason):
                out.append({"t": None, "type": "condition", "object": r, "conditionType": ctype, "status": status,
                            "reason": reason})
    if kind == "Pod":
        if was_st.get("containerStatuses") == now_st.get("containerStatuses") and \
                was_st.get("initContainerStatuses") == now_st.get("initContainerStatuses"):
            return out
        ocs = _containers(was_st)
        for name, cur in _containers(now_st).items():
            if ocs.get(name) != cur:
                state, reason, code, restarts, message = cur
                rec = {"t": None, "type": "container", "object": r, "container": name, "state": state,
                       "reason": reason, "exitCode": code, "restartCount": restarts}
                if message:
                    rec["message"] = message
                out.append(rec)
    elif kind == "Node":
        before, after = _taints(old), _taints(new)
        for key, effect in after:
            if (key, effect) not in before:
                out.append({"t": None, "type": "taint", "object": r, "key": key, "effect": effect, "op": "added"})
        for key, effect in before:
            if (key, effect) not in after:
                out.append({"t": None, "type": "taint", "object": r, "key": key, "effect": effect, "op": "removed"})
    return out

"""kubectl's table columns for a pod (NAME READY STATUS RESTARTS AGE NODE), computed as kubectl computes them.

One function serves the summary's tables and any API Table output.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

Obj = dict[str, Any]
NODE_UNREACHABLE_POD_REASON = "NodeLost"  # pkg/util/node: NodeUnreachablePodReason


def human_duration(seconds: float) -> str:
    """staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go: HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def parse_time(ts: str) -> datetime:
    """A metav1.Time or MicroTime string."""
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _restartable(spec: Obj | None) -> bool:
    return bool(spec) and spec.get("restartPolicy") == "Always"  # type: ignore[union-attr]


@lru_cache(maxsize=4096)   # a table's pods were mostly made in a few seconds: each age is worked out once
def _since(now: datetime, ts: str | None) -> str:
    if not ts:
        return "<unknown>"
    return human_duration((now - parse_time(ts)).total_seconds())


def _later(a: str | None, b: str | None) -> str | None:
    return b if b and (a is None or parse_time(b) > parse_time(a)) else a


def pod_row(pod: Obj, now: datetime) -> dict[str, str]:
    """pkg/printers/internalversion/printers.go: printPod (its READY, STATUS, RESTARTS and AGE columns)."""
    return dict(zip(COLUMNS, pod_cells(pod, now)))


def pod_cells(pod: Obj, now: datetime) -> tuple[str, str, str, str, str, str]:
    """pod_row's values in COLUMNS order (a Table's rows are made from them, one a pod: kept lean)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    conditions = status.get("conditions") or ()
    phase = status.get("phase") or ""
    total = len(spec.get("containers") or ())
    ready = 0
    restarts = 0
    sidecar_restarts = 0
    last_restart: str | None = None
    last_sidecar_restart: str | None = None
    reason = status.get("reason") or phase
    for c in conditions:
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_list = spec.get("initContainers")
    init_specs = {c["name"]: c for c in init_list} if init_list else {}
    if init_specs:
        total += sum(1 for c in init_specs.values() if _restartable(c))

    initializing = False
    for i, cs in enumerate(status.get("initContainerStatuses") or ()):
        restarts += int(cs.get("restartCount") or 0)
        finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
        last_restart = _later(last_restart, finished)
        sidecar = _restartable(init_specs.get(cs.get("name", "")))
        if sidecar:
            sidecar_restarts += int(cs.get("restartCount") or 0)
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        state = cs.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode") == 0:
            continue
        if sidecar and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if term is not None:
            if not term.get("reason"):
                reason = (f"Init:Signal:{term['signal']}" if term.get("signal")
                          else f"Init:ExitCode:{term.get('exitCode')}")
            else:
                reason = "Init:" + term["reason"]
        elif wait is not None and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{len(init_list or ())}"
        initializing = True
        break

    # (Initialized is only looked at while an init container still runs)
    if not initializing or any(c.get("type") == "Initialized" and c.get("status") == "True" for c in conditions):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        for cs in reversed(status.get("containerStatuses") or ()):
            restarts += int(cs.get("restartCount") or 0)
            last = cs.get("lastState")
            if last:
                last_restart = _later(last_restart, (last.get("terminated") or {}).get("finishedAt"))
            state = cs.get("state") or {}
            term, wait = state.get("terminated"), state.get("waiting")
            if wait is not None and wait.get("reason"):
                reason = wait["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode')}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            reason = "Running" if pod_ready else "NotReady"

    md = pod["metadata"]
    deleting = md.get("deletionTimestamp")
    if deleting:
        if status.get("reason") == NODE_UNREACHABLE_POD_REASON:
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    shown_restarts = str(restarts)
    if restarts and last_restart:
        shown_restarts = f"{restarts} ({_since(now, last_restart)} ago)"
    return (md["name"], f"{ready}/{total}", reason, shown_restarts, _since(now, md.get("creationTimestamp")),
            spec.get("nodeName") or "<none>")


COLUMNS = ("NAME", "READY", "STATUS", "RESTARTS", "AGE", "NODE")

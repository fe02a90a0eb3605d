"""Component logs as klog text: the ``log`` records of a report, one journald-prefixed klog line each.

The records are made during the run (a component's log site emits a ``log`` record with its upstream file,
line and message, e.g. podlife.kubelet.logsites); this module only renders them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

# A process id per component, as klog prints it; stable so reports are reproducible.
PIDS = {"kubelet": 3033, "scheduler": 1, "controller-manager": 1, "apiserver": 1, "runtime": 1120}


def render(records: list[dict[str, Any]], start_time: datetime, node: str | None = None) -> str:
    """klog text of the ``log`` records, one line each behind a journald-style host and process prefix:
    ``node-1 kubelet[3033]: I0603 20:39:37.908557    3033 kuberuntime_container.go:468] message``."""
    out = [line(r, start_time) for r in records
           if r["type"] == "log" and (node is None or r.get("node") == node)]
    return "\n".join(out) + ("\n" if out else "")


def line(r: dict[str, Any], start_time: datetime) -> str:
    """The klog line of one ``log`` record."""
    when = start_time + timedelta(seconds=r["t"])
    pid = PIDS.get(r["component"], 1)
    host = r.get("node", "control-plane")
    return (f"{host} {r['component']}[{pid}]: "
            f"{r['severity']}{when:%m%d %H:%M:%S.%f} {pid:7d} {r['file']}:{r['line']}] {r['message']}")

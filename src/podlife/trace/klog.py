"""Component logs: klog-formatted lines, recorded as ``log`` trace records.

Every message a component logs is declared once in ``podlife.kubelet.logsites`` (or the component's own
sites table) with the upstream file and line, so the wording lives in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from podlife.trace.recorder import Trace


@dataclass(frozen=True)
class LogSite:
    """One upstream log call: severity, source file, line, and a str.format template of the message."""

    severity: str  # I, W, E
    file: str
    line: int
    template: str


class Logger:
    """Writes ``log`` records for one component on one node."""

    def __init__(self, trace: Trace, component: str, node: str | None = None) -> None:
        self.trace = trace
        self.component = component
        self.node = node

    def log(self, site: LogSite, **args: Any) -> None:
        if not self.trace.logs:
            return
        rec: dict[str, Any] = {"component": self.component}
        if self.node is not None:
            rec["node"] = self.node
        rec.update(severity=site.severity, file=site.file, line=site.line, message=site.template.format(**args))
        self.trace.emit("log", **rec)


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

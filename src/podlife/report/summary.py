"""The human summary: per pod and node, a compact timeline of what changed; then the expectations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # rich is imported where something is printed: a quiet run that passes prints nothing
    from rich.console import Console

TABLE_ROWS = 100   # rows of a pod table the summary prints: the report's podTables has every row
ALIKE = 3          # objects with the same assumptions past which the summary names one for all


def _line(r: dict[str, Any]) -> str | None:
    t = r["type"]
    if t == "api" and r["verb"] == "create":
        return f"created by {r['by']}"
    if t == "api" and r["verb"] == "bind":
        return f"scheduled to {r['node']}"
    if t == "phase":
        return f"phase {r['from'] or '-'} → {r['to']}"
    if t == "container":
        extra = ", ".join(str(x) for x in (r.get("reason"), None if r.get("exitCode") is None else
                                             f"exit {r['exitCode']}") if x)
        restarts = f" (restarts {r['restartCount']})" if r.get("restartCount") else ""
        return f"{r['container']}: {r['state']}{' (' + extra + ')' if extra else ''}{restarts}"
    if t == "terminating":
        return f"terminating, grace {r['gracePeriodSeconds']}s"
    if t == "deleted":
        return "deleted"
    if t == "hook":
        return f"{r['container']}: {r['hook']} {r['phase']}"
    if t == "signal":
        timeout = f" (timeout {r['timeoutSeconds']}s)" if "timeoutSeconds" in r else ""
        return f"{r['container']}: {r['signal']}{timeout}"
    if t == "condition" and r["object"].startswith("Node/"):
        return f"{r['conditionType']}={r['status']}" + (f" ({r['reason']})" if r.get("reason") else "")
    if t == "taint":
        return f"taint {r['key']}:{r['effect']} {r['op']}"
    if t == "event" and (r["eventType"] == "Warning" or r["reason"] == "Preempted"):
        return f"{r['reason']}: {r['message']}"
    if t == "runtime" and r["op"] == "exit":
        return f"{r['container']}: process exited ({r['detail']})"
    if t == "action":
        return f"action {r['action']}" + (f" failed: {r['error']}" if "error" in r else "")
    return None


def timelines(records: Iterable[dict[str, Any]]) -> dict[str, list[tuple[float, str]]]:
    """Lines per pod and node that changed; a node's registration (its initial conditions) is not a change."""
    out: dict[str, list[tuple[float, str]]] = {}
    registered: dict[str, float] = {}
    for r in records:
        obj = r.get("object")
        if not obj or not obj.startswith(("Pod/", "Node/")):
            continue
        if obj.startswith("Node/"):
            if r["type"] == "api" and r["verb"] == "create":
                registered[obj] = r["t"]
                continue
            if r["type"] == "condition" and registered.get(obj) == r["t"]:
                continue
        line = _line(r)
        if line is not None:
            out.setdefault(obj, []).append((r["t"], line))
    return out


def failed_actions(records: Iterable[dict[str, Any]]) -> list[str]:
    """Scenario actions the API refused (as kubectl would have printed an error), whatever their object."""
    return [f"{r['t']:9.3f}s  {r['action']} {r.get('object') or ''}: {r['error']}"
            for r in records if r["type"] == "action" and "error" in r]


def pod_tables(console: Console, tables: list[tuple[float, list[dict[str, str]]]]) -> None:
    """kubectl-style `get pods` tables at the chosen instants and, last, at the end."""
    from rich.table import Table
    from rich.text import Text

    from podlife.printers import COLUMNS

    for i, (t, rows) in enumerate(tables):
        title = f"pods at {t:g}s" + (" (end)" if i == len(tables) - 1 else "")
        if not rows:
            console.print(Text(f"{title}: none", style="bold"))
            continue
        table = Table(*COLUMNS, title=title, title_justify="left", box=None, pad_edge=False)
        for row in rows[:TABLE_ROWS]:
            table.add_row(*(row[c] for c in COLUMNS))
        console.print(table)
        if len(rows) > TABLE_ROWS:   # a cluster's worth of rows is no summary, and takes long to lay out
            console.print(f"… and {len(rows) - TABLE_ROWS:,} more pods (the report's podTables has every row)",
                          highlight=False)


def render(report: dict[str, Any], console: Console, quiet: bool = False,
           tables: list[tuple[float, list[dict[str, str]]]] | None = None) -> None:
    from rich.table import Table
    from rich.text import Text

    verdicts = report["expectations"]
    if not quiet:
        gates = "".join(f", {g}" for g in report.get("featureGates") or ())
        console.print(Text(f"{report['scenario']}  (Kubernetes {report['kubernetesVersion']}{gates}, seed "
                           f"{report['seed']}, {report['endSeconds']:g}s simulated)", style="bold"))
        for obj, lines in timelines(report["records"]).items():
            console.print(Text(obj, style="cyan bold"))
            for t, line in lines:
                console.print(f"  {t:9.3f}s  {line}", highlight=False)
        if report.get("figures") is not None:
            figures(report["figures"], console)
        if tables:
            pod_tables(console, tables)
        _assumptions(report.get("assumptions") or [], console)
    refused = failed_actions(report["records"])
    if refused:
        console.print(Text("actions that failed", style="red bold"))
        for line in refused:
            console.print(f"  {line}", highlight=False)
    if not verdicts:
        if not quiet:
            console.print("no expectations")
        return
    table = Table(show_header=not quiet, box=None, pad_edge=False)
    table.add_column("")
    table.add_column("expectation")
    table.add_column("detail")
    for v in verdicts:
        if quiet and v["passed"]:
            continue
        mark = Text("✓", style="green") if v["passed"] else Text("✗", style="red bold")
        table.add_row(mark, v["description"], v["detail"])
    if table.row_count:
        console.print(table)
    failed = sum(not v["passed"] for v in verdicts)
    if not quiet or failed:
        style = "red bold" if failed else "green bold"
        console.print(Text(f"{len(verdicts) - failed} passed, {failed} failed", style=style))


def is_silent(report: dict[str, Any], quiet: bool) -> bool:
    """``render`` would print nothing: a quiet run whose actions and expectations all passed."""
    return quiet and all(v["passed"] for v in report["expectations"]) and not failed_actions(report["records"])


def _assumptions(items: list[dict[str, str]], console: Console) -> None:
    """What podlife assumed per container: the places a podlife/behavior annotation would make exact."""
    from rich.text import Text

    if not items:
        return
    # a field podlife does not model (container "") is not something a behaviour can make exact
    which = "the container ones" if any(not a["container"] for a in items) else "these"
    console.print(Text(f"assumed (podlife/behavior or spec.behaviors makes {which} exact)", style="yellow bold"))
    grouped: dict[tuple[str, str], list[str]] = {}
    for a in items:
        grouped.setdefault((a["object"], a["container"]), []).append(a["assumption"])
    # the many workloads of a cluster made from one template share a line (the report lists each)
    alike: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for (obj, container), texts in grouped.items():
        alike.setdefault((container, tuple(texts)), []).append(obj)
    for (container, said), objs in alike.items():
        names = objs if len(objs) <= ALIKE else [f"{objs[0]} (and {len(objs) - 1:,} more alike)"]
        for name in names:
            who = f"{name} {container}" if container else name   # "": a field of the object, not a container
            console.print(f"  {who}: {'; '.join(said)}", highlight=False)


_FIGURE_LINES = (("pods", "pods created", ""), ("startupP50Seconds", "startup (create → Running) p50", "s"),
                 ("startupP99Seconds", "startup (create → Running) p99", "s"),
                 ("podsEvicted", "pods evicted", ""), ("firstEvictionSeconds", "first eviction at", "s"),
                 ("replacements", "pods created since", ""),
                 ("replacementsRunningSeconds", "all of them Running after", "s"),
                 ("deleteToStoppedSeconds", "longest delete → containers stopped", "s"),
                 ("deleteToRemovedSeconds", "longest delete → removed", "s"))


def figures(figs: dict[str, Any], console: Console) -> None:
    """The run's aggregate figures (podlife.report.figures), then one row per zone."""
    from rich.table import Table
    from rich.text import Text

    console.print(Text("figures", style="bold"))
    for key, label, unit in _FIGURE_LINES:
        v = figs.get(key)
        if key == "replacementsRunningSeconds" and v is None and figs.get("replacements"):
            console.print(f"  {label}: not all", highlight=False)
        elif v is not None:
            console.print(f"  {label}: {v:g}{unit}", highlight=False)
    zones = figs.get("zones") or {}
    if zones:
        table = Table("zone", "nodes", "pods", "evicted", "Running at the end", box=None, pad_edge=False)
        for zone, z in zones.items():
            table.add_row(zone or "(none)", *(str(z[k]) for k in ("nodes", "pods", "podsEvicted", "podsRunningAtEnd")))
        console.print(table)

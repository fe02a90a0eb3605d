"""A sweep's table: written as CSV or Parquet, summarised per varied value, drawn as HTML."""

from __future__ import annotations

import csv
import html
import statistics
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

Row = dict[str, Any]
FIGURES = ("deleteToStoppedSeconds", "deleteToRemovedSeconds", "startupP50Seconds", "startupP99Seconds", "podsEvicted")
SHORT = {"deleteToStoppedSeconds": "delete→stopped s", "deleteToRemovedSeconds": "delete→removed s",
         "startupP50Seconds": "startup p50 s",
         "startupP99Seconds": "startup p99 s", "podsEvicted": "evicted"}


def columns(rows: Sequence[Row], keys: list[str]) -> list[str]:
    """Varied values first, then the verdicts, the figures, the errors and the wall time."""
    seen = dict.fromkeys(keys)
    rest: dict[str, None] = {}
    for r in rows:
        for k in r:
            if k not in seen:
                rest.setdefault(k, None)
    tail = [k for k in ("pods", *FIGURES, "exit", "error", "wallSeconds") if k in rest]
    expects = [k for k in rest if k.startswith("expect[")]
    return list(seen) + expects + tail + [k for k in rest if k not in tail and k not in expects]


def write(path: str, rows: Sequence[Row], cols: list[str]) -> None:
    if path.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({c: [r.get(c) for r in rows] for c in cols})
        pq.write_table(table, path)
        return
    if not path.endswith(".csv"):
        raise ValueError(f"{path}: --out takes a .csv or .parquet file")
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])


def _mean(xs: list[Any]) -> str:
    vals = [x for x in xs if isinstance(x, (int, float)) and not isinstance(x, bool)]
    return f"{statistics.fmean(vals):.3f}" if vals else "-"


def verdicts(rows: Sequence[Row], key: str) -> list[tuple[Any, list[Row], int, int, int]]:
    """Per value of ``key``, in the order the values first come: its rows, and how many passed every
    expectation, failed one, or could not run."""
    groups: dict[Any, list[Row]] = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    return [(value, rs, sum(r["exit"] == 0 for r in rs), sum(r["exit"] == 1 for r in rs),
             sum(r["exit"] >= 2 for r in rs)) for value, rs in groups.items()]


def summarise(console: Console, rows: Sequence[Row], keys: list[str]) -> None:
    """One table per varied key: per value, how many points passed, failed or errored, and mean figures."""
    figs = [f for f in FIGURES if any(r.get(f) is not None for r in rows)]
    for key in keys:
        table = Table(title=f"by {key}", title_justify="left")
        # the title names the key; the column its last part, so a long field path leaves room for the figures
        for col in (key.rsplit(".", 1)[-1], "points", "passed", "failed", "errors", *(SHORT[f] for f in figs)):
            table.add_column(col, justify="right" if table.columns else "left", no_wrap=True)
        for value, rs, passed, failed, errors in verdicts(rows, key):
            table.add_row(str(value), str(len(rs)), str(passed), str(failed), str(errors),
                          *(_mean([r.get(f) for r in rs]) for f in figs))
        console.print(table)


def _verdicts_html(key: str, counts: list[tuple[Any, list[Row], int, int, int]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in (key, "points", "passed", "failed", "errors"))
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in (value, len(rs), p, f, e)) + "</tr>"
                   for value, rs, p, f, e in counts)
    return (f"<table class='podlife-verdicts' style='font-family:sans-serif;border-collapse:collapse'>"
            f"<tr>{head}</tr>{body}</table>")


def render_html(rows: Sequence[Row], keys: list[str], title: str) -> str:
    """Verdicts against each varied value, and the figures: lines across non-seed values, histograms over seeds."""
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.models.widgets import Div
    from bokeh.plotting import figure
    from bokeh.resources import INLINE

    from podlife.report.html import _restart_bokeh_ids, _stable_ids, headless_marks

    _restart_bokeh_ids()
    figs = [f for f in FIGURES if any(r.get(f) is not None for r in rows)]
    parts: list[Any] = [Div(text=f"<h2 style='font-family:sans-serif'>{html.escape(title)}</h2>")]
    for key in keys:
        counts = verdicts(rows, key)
        values = [str(c[0]) for c in counts]
        passed = [c[2] for c in counts]
        total = [len(c[1]) for c in counts]
        parts.append(Div(text=_verdicts_html(key, counts)))
        # bokeh's stubs type x_range as a Range; figure() also takes a list of factors (made a FactorRange)
        p = figure(x_range=values, height=260,  # type: ignore[arg-type]
                   sizing_mode="stretch_width", title=f"points passed, by {key}", tools="save")
        p.vbar(x=values, top=total, width=0.8, color="#dddddd", legend_label="points")
        p.vbar(x=values, top=passed, width=0.8, color="#44aa99", legend_label="passed")
        parts.append(p)
        for f in figs:
            if key == "seed":
                xs = [r[f] for r in rows if isinstance(r.get(f), (int, float))]
                if not xs:
                    continue
                lo, hi = min(xs), max(xs)
                bins = 20
                width = (hi - lo) / bins or 1.0
                hist = [0] * bins
                for x in xs:
                    hist[min(bins - 1, int((x - lo) / width))] += 1
                h = figure(height=220, sizing_mode="stretch_width", title=f"{f} across seeds", tools="save")
                h.quad(left=[lo + i * width for i in range(bins)], right=[lo + (i + 1) * width for i in range(bins)],
                       bottom=0, top=hist, color="#6699cc")
                parts.append(h)
            else:
                means = []
                for v in values:
                    vs = [r[f] for r in rows if str(r[key]) == v and isinstance(r.get(f), (int, float))]
                    means.append(statistics.fmean(vs) if vs else float("nan"))
                ln = figure(x_range=values, height=220,  # type: ignore[arg-type]  # factors, as above
                            sizing_mode="stretch_width", title=f"{f} by {key} (mean)", tools="save")
                ln.line(values, means, line_width=2)
                ln.scatter(values, means, size=7)
                parts.append(ln)
    page = file_html(column(*parts, sizing_mode="stretch_width"), resources=INLINE, title=title)
    return headless_marks(_stable_ids(page, ""))

"""The diagnosis as one HTML page: the evidence's facts and the best hypothesis' modelled facts on one time
axis (a lane each per pod, matched facts joined, the first place they part marked), above the modelled run's
swim lanes (podlife's run timeline), and the text diagnosis."""

from __future__ import annotations

import html
import json
from typing import Any

from podlife.diagnose import align as aligner
from podlife.diagnose.evidence import Evidence
from podlife.diagnose.facts import Fact
from podlife.diagnose.hypotheses import Diagnosis
from podlife.diagnose.render import render


def _lane(f: Fact, side: str) -> str:
    return f"{side} · {f.pod or 'node'}"


def facts_data(d: Diagnosis) -> dict[str, Any]:
    """The two timelines as plain data (also embedded in the page for scripts)."""
    best = d.best
    a = best.alignment
    pods = {p.key for p in d.base.pods}
    real = aligner.comparable(d.real, d.base.start, d.base.end, pods)
    model = aligner.comparable(best.run.facts, d.base.start, d.base.end, pods)
    matched_r = {id(r) for r, _ in a.pairs}
    matched_m = {id(m) for _, m in a.pairs}
    r_part, m_part = a.parting()
    part = r_part or m_part
    parting = part.t if part is not None else None

    def row(f: Fact, side: str, matched: bool) -> dict[str, Any]:
        return {"lane": _lane(f, side), "t": round(f.t, 3), "kind": f.kind, "container": f.container or "",
                "matched": matched, "text": f.text[:300] if side == "evidence" else f.kind, "source": f.source}
    return {"hypothesis": best.name, "score": round(best.score, 3), "parting": parting,
            "clock0": d.base.clock(0.0),
            "facts": [row(f, "evidence", id(f) in matched_r) for f in real]
            + [row(f, "model", id(f) in matched_m) for f in model],
            "pairs": [[round(r.t, 3), _lane(r, "evidence"), round(m.t, 3), _lane(m, "model")] for r, m in a.pairs]}


def page(ev: Evidence, d: Diagnosis) -> str:
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, Div, FactorRange, HoverTool, Range1d, Span  # type: ignore[attr-defined]
    from bokeh.plotting import figure

    from podlife.report.html import _page, _restart_bokeh_ids, _timeline_figure, timeline

    _restart_bokeh_ids()
    data = facts_data(d)
    facts = data["facts"]
    lanes = sorted({f["lane"] for f in facts}, key=lambda s: (s.split(" · ")[1], s.split(" · ")[0]))
    end = max([d.base.end + 5] + [f["t"] for f in facts])
    shared = Range1d(max(0.0, d.base.start - 5), end)  # type: ignore[arg-type]
    fig = figure(y_range=FactorRange(factors=list(reversed(lanes)) or ["(no facts)"]), x_range=shared,
                 height=max(200, 40 * len(lanes) + 90), sizing_mode="stretch_width",
                 title=f"evidence and model ({d.best.name}) on one axis: seconds since {data['clock0']}",
                 x_axis_label="seconds", tools="xpan,xwheel_zoom,reset,save", toolbar_location="above",
                 name="podlife-diagnosis")
    for p in data["pairs"]:
        fig.line(x=[p[0], p[2]], y=[p[1], p[3]], color="#bbbbbb", line_width=1)
    src = ColumnDataSource({k: [f[k] for f in facts] for k in ("lane", "t", "kind", "container", "text", "source")}
                           | {"colour": ["#2b8a3e" if f["matched"] else "#c92a2a" for f in facts]})
    dots = fig.scatter(x="t", y="lane", size=9, color="colour", source=src, marker="circle")
    fig.add_tools(HoverTool(renderers=[dots], tooltips=[("", "@kind @container"), ("t", "@t s"),
                                                        ("", "@text"), ("", "@source")]))
    if data["parting"] is not None:
        fig.add_layout(Span(location=data["parting"], dimension="height", line_color="#c92a2a", line_dash="dashed",
                            line_width=2))
    report = {"records": d.best.run.result.cluster.trace.records, "scenario": "diagnosis", "expectations": [],
              "endSeconds": d.best.run.result.end,
              "kubernetesVersion": d.base.version}
    tl = timeline(report)
    lanes_fig, widgets = _timeline_figure(report, tl, shared, f"the model under {d.best.name}: its run",
                                          "podlife-timeline")
    legend = ("<p style='font-family:sans-serif;font-size:12px'>● green: a fact both timelines have (joined by a "
              "grey line) · ● red: a fact only one has · dashed red line: where they first part</p>")
    text = "<pre style='font-size:12px'>" + html.escape("\n".join(render(ev, d))) + "</pre>"
    layout = column(Div(text=legend, sizing_mode="stretch_width"), fig, *widgets, lanes_fig,
                    Div(text=text, sizing_mode="stretch_width"), sizing_mode="stretch_width")
    return _page(layout, f"podlife diagnose: {d.best.name}", json.dumps(data["facts"]), data)

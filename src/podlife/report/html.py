"""The HTML report: one self-contained file with a swim-lane timeline of every pod and node.

``timeline(report)`` turns a trace report into lanes, segments and markers (plain data, also embedded in the
page for tools); ``render(report)`` draws them with Bokeh, its JavaScript inlined so the file opens offline.
"""

from __future__ import annotations

import html
import json
import re
from bisect import bisect_left, bisect_right
from typing import Any

# state → colour (colour-blind-safe palette)
COLOURS = {
    "Pending": "#bbbbbb", "Running": "#44aa99", "Succeeded": "#117733", "Failed": "#cc6677",
    "waiting": "#dddddd", "running": "#44aa99", "terminated": "#555555", "terminating": "#ddcc77",
    "exited": "#999933", "preStop": "#aa4499", "postStart": "#6699cc",
    "True": "#44aa99", "False": "#cc6677", "Unknown": "#999999", "fault": "#882255", "back-off": "#ee8866",
}
MARKERS = {  # marker kind → Bokeh marker
    "created": "circle", "scheduled": "square", "terminating": "inverted_triangle", "removed": "x",
    "SIGTERM": "triangle", "SIGKILL": "x", "warning": "diamond", "restart": "circle_cross",
    "condition": "dash", "taint": "hex", "action": "star",
}


def _lane(pod_or_node: str, what: str) -> str:
    return f"{pod_or_node.split('/', 1)[1]} · {what}"


class _Logs:
    """Component log lines by time, to show each record's upstream line beside it."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.logs = [r for r in records if r["type"] == "log"]
        self.times = [r["t"] for r in self.logs]

    def near(self, t: float, *needles: str) -> str:
        lo, hi = bisect_left(self.times, t - 1e-9), bisect_right(self.times, t + 1e-9)
        for r in self.logs[lo:hi]:
            if all(n in r["message"] for n in needles if n):
                return f"{r['file']}:{r['line']}] {r['message']}"
        return ""

    def status(self, t: float, pod: str) -> str:
        """The kubelet's "Status for pod updated successfully" line of this pod (``Pod/ns/name``) at ``t``,
        structured (pod="ns/name") or legacy ("name_ns(uid)")."""
        ns, name = pod.split("/")[1:]
        return (self.near(t, "Status for pod", f'"{ns}/{name}"')
                or self.near(t, "Status for pod", f'"{name}_{ns}('))


_FIELD_PATH = re.compile(r"spec\.(?:initContainers|containers|ephemeralContainers)\{(.+)\}\Z")
_BACK_OFF = re.compile(r"back-off (\S+) restarting failed container")
_ATTEMPT = re.compile(r"attempt (\d+)")   # a runtime create's detail: "<id> attempt N"


def _record(r: dict[str, Any]) -> str:
    """The trace record as the hover shows it: compact JSON without its time and type (shown beside it)."""
    return json.dumps({k: v for k, v in r.items() if k not in ("t", "type")}, sort_keys=True)


def _back_off(message: str | None) -> str:
    """ "back-off 20 s" from a CrashLoopBackOff waiting message (doBackOff: "back-off 20s restarting ...")."""
    from podlife.scenario.durations import parse_duration

    m = _BACK_OFF.match(message or "")
    return f"back-off {parse_duration(m.group(1)):g} s" if m else ""


def timeline(report: dict[str, Any]) -> dict[str, Any]:
    records: list[dict[str, Any]] = report["records"]
    end = float(report["endSeconds"])
    logs = _Logs(records)
    lanes: list[dict[str, str]] = []
    seen: set[str] = set()
    spec_order: dict[str, list[str]] = {}        # pod → its containers, init ones first, in spec order
    segments: list[dict[str, Any]] = []
    markers: list[dict[str, Any]] = []
    open_state: dict[str, dict[str, Any]] = {}   # lane → the segment still open
    hooks: dict[tuple[str, str], dict[str, Any]] = {}
    back_offs: dict[str, dict[str, Any]] = {}    # container lane → the back-off wait still open
    waited: dict[str, dict[str, Any]] = {}       # container lane → the back-off wait that ended last
    ids: dict[tuple[str, str], str] = {}         # (pod, container) → the runtime's id of its newest instance

    def lane(obj: str, what: str, kind: str) -> str:
        name = _lane(obj, what)
        if name not in seen:
            seen.add(name)
            lanes.append({"lane": name, "object": obj, "kind": kind, "what": what})
        return name

    def state(ln: str, t: float, st: str, label: str, detail: str, r: dict[str, Any] | None = None,
              log: str = "") -> None:
        prev = open_state.pop(ln, None)
        if prev is not None:
            prev["end"] = t
            if prev["end"] > prev["start"] or prev["state"] == st:
                segments.append(prev)
        open_state[ln] = {"lane": ln, "start": t, "end": end, "state": st, "label": label, "detail": detail,
                          "colour": COLOURS.get(st, "#888888"), "log": log,
                          "record": _record(r) if r is not None else ""}

    def mark(ln: str, t: float, kind: str, label: str, detail: str, log: str = "",
             r: dict[str, Any] | None = None) -> None:
        markers.append({"lane": ln, "t": t, "kind": kind, "marker": MARKERS[kind], "label": label,
                        "detail": detail, "log": log, "record": _record(r) if r is not None else ""})

    def end_back_off(ln: str, t: float) -> None:
        seg = back_offs.pop(ln, None)
        if seg is not None:
            seg["end"] = t
            segments.append(seg)
            waited[ln] = seg

    for r in records:
        obj, t, typ = r.get("object"), r["t"], r["type"]
        if typ == "fault" and r.get("node"):
            ln = lane(f"Node/{r['node']}", "faults", "node")
            if r.get("op") == "heal":
                state(ln, t, "healed", "", "")
            else:
                state(ln, t, "fault", r["fault"], json.dumps(r.get("fields") or {}, sort_keys=True), r)
            continue
        if not isinstance(obj, str):
            continue
        if obj.startswith("Node/"):
            if typ == "condition" and r["conditionType"] == "Ready":
                state(lane(obj, "Ready", "node"), t, r["status"], f"Ready={r['status']}", r.get("reason") or "", r,
                      logs.near(t, "Ready", obj.split("/", 1)[1]))
            elif typ == "api" and r["verb"] == "create":
                mark(lane(obj, "Ready", "node"), t, "created", f"registered by {r['by']}", "", "", r)
            elif typ == "taint":
                mark(lane(obj, "Ready", "node"), t, "taint", f"taint {r['key']}:{r['effect']} {r['op']}", "",
                     logs.near(t, r["key"]), r)
            continue
        if not obj.startswith("Pod/"):
            continue
        name = obj.rsplit("/", 1)[1]
        pod_lane = lane(obj, "pod", "pod")
        c = r.get("container")
        if typ == "phase":
            state(pod_lane, t, r["to"], f"phase {r['to']}", f"from {r['from'] or '-'}", r, logs.status(t, obj))
        elif typ == "api" and r["verb"] == "create":
            spec_order.setdefault(obj, list(r.get("initContainers") or ()) + list(r.get("containers") or ()))
            mark(pod_lane, t, "created", f"created by {r['by']}", "", "", r)
        elif typ == "api" and r["verb"] == "bind":
            mark(pod_lane, t, "scheduled", f"scheduled to {r['node']}", "", logs.near(t, name), r)
        elif typ == "terminating":
            mark(pod_lane, t, "terminating", f"deletionTimestamp set, grace {r['gracePeriodSeconds']} s",
                 f"deletionTimestamp {r['deletionTimestamp']}", logs.near(t, "DELETE", name), r)
        elif typ == "deleted":
            mark(pod_lane, t, "removed", "removed from the API", "", "", r)
            for ln in [x for x in open_state if x.startswith(_lane(obj, ""))]:
                state(ln, t, "gone", "", "")
            for ln in [x for x in back_offs if x.startswith(_lane(obj, ""))]:
                end_back_off(ln, t)
        elif typ == "condition":
            mark(pod_lane, t, "condition", f"{r['conditionType']}={r['status']}", r.get("reason") or "", "", r)
        elif typ == "event" and r["eventType"] == "Warning":
            # an Event about one container (Unhealthy, BackOff) goes on that container's lane
            m = _FIELD_PATH.match(r.get("fieldPath") or "")
            ln = lane(obj, m.group(1), "container") if m else pod_lane
            log = logs.near(t, r["reason"], name)
            mark(ln, t, "warning", f"{r['reason']}", r["message"], log, r)
            if m and r["reason"] == "BackOff" and ln not in back_offs:
                # the kubelet waits out the back-off before starting the container again (doBackOff)
                back_offs[ln] = {"lane": ln, "start": t, "end": end, "state": "back-off",
                                 "label": f"{m.group(1)}: back-off",
                                 "detail": "until the next start (its length is reported then)",
                                 "colour": COLOURS["back-off"], "log": log, "record": _record(r), "thin": True}
        elif typ == "action":
            mark(pod_lane, t, "action", f"action {r['action']}", r.get("error", ""), "", r)
        elif typ == "container" and c:
            ln = lane(obj, c, "container")
            back_off = _back_off(r.get("message"))
            bits = [x for x in (r.get("reason"), None if r.get("exitCode") is None else f"exit {r['exitCode']}",
                                back_off) if x]
            state(ln, t, r["state"], f"{c}: {r['state']}" + (f" ({', '.join(bits)})" if bits else ""),
                  f"restarts {r.get('restartCount', 0)}", r, logs.status(t, obj))
            # the status reports the back-off the kubelet computed when it held the start back: while it waits
            # (a retried sync) or, when the retry comes at the back-off's expiry, as it starts the container
            wait = back_offs.get(ln) or (waited[ln] if ln in waited and waited[ln]["end"] == t else None)
            if wait is not None and back_off:
                wait["label"] = f"{c}: {back_off}"
        elif typ == "runtime" and c and r["op"] == "create":
            # "docker://<id> attempt N": the kubelet's log lines name the container by this id
            ids[(obj, c)] = (r.get("detail") or "").split(" ")[0].split("://")[-1]
            attempt = _ATTEMPT.search(r.get("detail") or "")
            if attempt and int(attempt.group(1)) > 0:
                ln = lane(obj, c, "container")
                end_back_off(ln, t)
                mark(ln, t, "restart", f"{c}: restart {attempt.group(1)}", r.get("detail") or "",
                     logs.near(t, "Created", c), r)
        elif typ == "hook" and c:
            key = (obj, c)
            if r["phase"] == "started":
                hooks[key] = {"lane": lane(obj, f"{c} hooks", "hook"), "start": t, "end": end,
                              "state": r["hook"], "label": f"{c}: {r['hook']} hook", "detail": "running",
                              "colour": COLOURS[r["hook"]], "log": logs.near(t, r["hook"], ids.get(key, c)),
                              "record": _record(r)}
            elif key in hooks:
                seg = hooks.pop(key)
                seg["end"], seg["detail"] = t, r["phase"]
                segments.append(seg)
        elif typ == "runtime" and c and r["op"] == "exit":
            ln = lane(obj, c, "container")
            if open_state.get(ln, {}).get("state") in ("running", "terminating"):
                state(ln, t, "exited", f"{c}: process exited, not yet reported", r.get("detail") or "", r)
        elif typ == "signal" and c:
            ln = lane(obj, c, "container")
            grace = f"grace {r['timeoutSeconds']} s" if "timeoutSeconds" in r else ""
            # the stop signal (SIGTERM unless lifecycle.stopSignal) opens the shutdown; SIGKILL ends it
            kind = "SIGKILL" if r["signal"] == "SIGKILL" else "SIGTERM"
            log = logs.near(t, "illing container", ids.get((obj, c), c)) or logs.near(t, "ill")
            mark(ln, t, kind, f"{c}: {r['signal']}", grace, log, r)
            if kind == "SIGTERM" and open_state.get(ln, {}).get("state") == "running":
                state(ln, t, "terminating", f"{c}: terminating", grace, r, log)
    segments.extend(hooks.values())
    segments.extend(back_offs.values())
    segments.extend(s for s in open_state.values() if s["state"] not in ("gone", "healed"))
    segments = [s for s in segments if s["state"] not in ("gone", "healed")]
    segments.sort(key=lambda s: (s["start"], s["lane"], s.get("thin", False)))   # a wait drawn over its state
    return {"end": end, "lanes": _spec_ordered(lanes, spec_order), "segments": segments, "markers": markers}


def _spec_ordered(lanes: list[dict[str, str]], spec_order: dict[str, list[str]]) -> list[dict[str, str]]:
    """Objects in the order they first appear; a pod's lanes as its spec has the containers: the pod, then each
    init container (sidecars among them) and each app container, in spec order, every one followed by its
    hooks; containers the spec does not list (ephemeral) after them, as they appeared."""
    objects = {obj: i for i, obj in enumerate(dict.fromkeys(ln["object"] for ln in lanes))}

    def rank(ln: dict[str, str]) -> tuple[int, int]:
        order = spec_order.get(ln["object"], [])
        if ln["kind"] == "pod":
            return (0, 0)
        container = ln["what"].removesuffix(" hooks") if ln["kind"] == "hook" else ln["what"]
        if ln["kind"] in ("container", "hook") and container in order:
            return (1 + order.index(container), ln["kind"] == "hook")
        return (1 + len(order), 0)

    out = sorted(lanes, key=lambda ln: (objects[ln["object"]], rank(ln)))
    return [{k: v for k, v in ln.items() if k != "what"} for ln in out]


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _stable_ids(page: str, own: str) -> str:
    """Bokeh names its document and root elements with random UUIDs: number them instead, so the same
    report gives the same bytes. UUIDs that come from the trace (pod UIDs) stay."""
    mine = set(_UUID.findall(own))
    fresh: dict[str, str] = {}
    for u in _UUID.findall(page):
        if u not in mine and u not in fresh:
            fresh[u] = f"podlife-{len(fresh) + 1}"
    return _UUID.sub(lambda m: fresh.get(m.group(0), m.group(0)), page)


def _restart_bokeh_ids() -> None:
    """Bokeh numbers its models from a process-wide counter; start it afresh so a second report drawn by
    the same process (tests, `podlife diff`) gets the same ids as the first."""
    from bokeh.util import serialization

    if hasattr(serialization, "_simple_id"):
        with serialization._simple_id_lock:
            serialization._simple_id = 999


def _verdicts_html(report: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr class='{'pass' if v['passed'] else 'fail'}'><td>{'✓' if v['passed'] else '✗'}</td>"
        f"<td>{html.escape(v['description'])}</td><td>{html.escape(v['detail'])}</td></tr>"
        for v in report["expectations"])
    title = (f"{html.escape(report['scenario'])} — Kubernetes {html.escape(report['kubernetesVersion'])}, "
             f"seed {report['seed']}, {report['endSeconds']:g} s simulated")
    table = (f"<table class='verdicts'>{rows}</table>" if rows else "<p>no expectations</p>")
    return (f"<h2 style='font-family:sans-serif'>{title}</h2><style>.verdicts td{{padding:2px 8px;"
            f"font-family:sans-serif}} .pass td:first-child{{color:#117733}} .fail td:first-child{{color:#cc3311;"
            f"font-weight:bold}}</style>{table}<p style='font-family:sans-serif;color:#555'>Hover a bar or marker "
            f"for the record and its log line; click one to show only that pod.</p>{_legend()}")


def _legend() -> str:
    keys = ("waiting", "running", "terminating", "exited", "terminated", "back-off", "preStop", "postStart",
            "Pending", "Failed", "Unknown", "fault")
    names = {"exited": "exited, not yet reported", "Unknown": "node Unknown", "False": "not ready"}
    items = "".join(f"<span style='margin-right:14px'><span style='display:inline-block;width:12px;height:12px;"
                    f"background:{COLOURS[k]};margin-right:4px'></span>{names.get(k, k)}</span>" for k in keys)
    marks = ("▲ SIGTERM · ✕ SIGKILL / removed · ▼ deletionTimestamp · ◆ Warning event (probe failure, back-off) · "
             "⊕ restart · ● created · ■ scheduled")
    return f"<p style='font-family:sans-serif;font-size:12px'>{items}<br>{marks}</p>"


def _timeline_figure(report: dict[str, Any], tl: dict[str, Any], x_range: Any = None,
                     title: str | None = None, name: str = "podlife-timeline") -> tuple[Any, list[Any]]:
    """The swim lanes of one run, and the widgets that go with them (the "show every pod" button). ``name``
    names the figure and, suffixed ``-show-all``, the button, for scripts that drive the page."""
    from bokeh.models import ColumnDataSource, CustomJS, FactorRange, HoverTool, TapTool
    from bokeh.models.widgets import Button
    from bokeh.plotting import figure

    names = [ln["lane"] for ln in tl["lanes"]]
    lane_object = {ln["lane"]: ln["object"] for ln in tl["lanes"]}
    factors = list(reversed(names)) or ["(no pods)"]
    x: Any = x_range or (0, max(tl["end"], 1.0))
    fig = figure(y_range=FactorRange(factors=factors), x_range=x,
                 height=max(220, 26 * len(factors) + 90), sizing_mode="stretch_width", title=title,
                 x_axis_label="seconds since start", tools="xpan,xwheel_zoom,reset,save", toolbar_location="above",
                 name=name)
    segs = tl["segments"]
    seg_src = ColumnDataSource({
        "lane": [s["lane"] for s in segs], "start": [s["start"] for s in segs], "end": [s["end"] for s in segs],
        "colour": [s["colour"] for s in segs], "label": [s["label"] for s in segs],
        "detail": [f"{s['start']:.3f}s – {s['end']:.3f}s {s['detail']}" for s in segs],
        "log": [s["log"] for s in segs], "record": [s["record"] for s in segs],
        "height": [0.25 if s.get("thin") else 0.6 for s in segs],   # a back-off wait lies over the state bar
        "object": [lane_object[s["lane"]] for s in segs]})
    bars = fig.hbar(y="lane", left="start", right="end", height="height", color="colour", source=seg_src,
                    line_color="white")
    mk = tl["markers"]
    mk_src = ColumnDataSource({
        "lane": [m["lane"] for m in mk], "t": [m["t"] for m in mk], "marker": [m["marker"] for m in mk],
        "label": [m["label"] for m in mk], "detail": [f"{m['t']:.3f}s {m['detail']}" for m in mk],
        "log": [m["log"] for m in mk], "record": [m["record"] for m in mk],
        "object": [lane_object[m["lane"]] for m in mk]})
    dots = fig.scatter(x="t", y="lane", marker="marker", size=11, color="#222222", fill_alpha=0.8, source=mk_src)
    fig.add_tools(HoverTool(renderers=[bars, dots],
                            tooltips=[("", "@label"), ("", "@detail"), ("log", "@log"), ("record", "@record")]))
    pick = CustomJS(args={"yr": fig.y_range, "segs": seg_src, "mks": mk_src, "all": factors}, code="""
        let obj = null;
        for (const s of [segs, mks]) {
          const i = s.selected.indices;
          if (i.length) { obj = s.data.object[i[0]]; break; }
        }
        if (obj === null) return;
        const lanes = all.filter(l => l.startsWith(obj.split('/').slice(1).join('/') + ' · '));
        if (lanes.length) yr.factors = lanes;
    """)
    fig.add_tools(TapTool(renderers=[bars, dots], callback=pick))
    reset = Button(label="show every pod and node", width=220, name=f"{name}-show-all")
    reset.js_on_event("button_click", CustomJS(args={"yr": fig.y_range, "all": factors},
                                               code="yr.factors = all;"))
    fig.ygrid.grid_line_color = None
    return fig, [reset]


def _page(layout: Any, title: str, records_json: str, data: dict[str, Any]) -> str:
    """Bokeh's standalone page, with stable ids, the timeline data and the marks for headless checks."""
    from bokeh.embed import file_html
    from bokeh.resources import INLINE

    page = _stable_ids(file_html(layout, resources=INLINE, title=title), records_json)
    payload = json.dumps(data, sort_keys=True).replace("</", "<\\/")
    return headless_marks(page, f"<script type='application/json' id='podlife-timeline'>{payload}</script>")


def headless_marks(page: str, tail: str = "") -> str:
    """Bokeh's page with marks on <html> for headless checks (data-podlife-error: a script error anywhere;
    data-podlife-rendered: Bokeh has built its views), ``tail`` put before the end of <body>."""
    guard = ("<script>window.addEventListener('error',()=>{document.documentElement.dataset.podlifeError='1'});"
             "</script>")
    probe = ("<script>(function w(n){if(window.Bokeh&&Object.keys(Bokeh.index||{}).length){"
             "document.documentElement.dataset.podlifeRendered='1';return}if(n>0)setTimeout(()=>w(n-1),50)})(200);"
             "</script>")
    page = page.replace("<head>", f"<head>{guard}", 1)
    at = page.rindex("</body>")  # the inlined JavaScript contains the string too
    return page[:at] + tail + probe + page[at:]


def render(report: dict[str, Any]) -> str:
    """The report as one HTML page (Bokeh, inlined)."""
    from bokeh.layouts import column
    from bokeh.models.widgets import Div

    _restart_bokeh_ids()
    tl = timeline(report)
    fig, widgets = _timeline_figure(report, tl)
    head = _verdicts_html(report)
    if report.get("whatIf"):   # a run on an imported cluster (podlife.importer)
        from podlife.importer.whatif import render_html

        head += render_html(report["whatIf"])
    layout = column(Div(text=head, sizing_mode="stretch_width"), *widgets, fig, sizing_mode="stretch_width")
    return _page(layout, f"podlife: {report['scenario']}", json.dumps(report["records"]), tl)


def render_diff(a: dict[str, Any], b: dict[str, Any], label_a: str, label_b: str, lines: list[str]) -> str:
    """Two runs drawn one above the other on one time axis (panning or zooming one moves both)."""
    from bokeh.layouts import column
    from bokeh.models import Range1d
    from bokeh.models.widgets import Div

    _restart_bokeh_ids()
    ta, tb = timeline(a), timeline(b)
    shared = Range1d(start=0, end=max(ta["end"], tb["end"], 1.0))
    fa, wa = _timeline_figure(a, ta, shared, f"{label_a}", "podlife-timeline-a")
    fb, wb = _timeline_figure(b, tb, shared, f"{label_b}", "podlife-timeline-b")
    text = "<pre style='font-size:12px'>" + html.escape("\n".join(lines)) + "</pre>"
    layout = column(Div(text=text, sizing_mode="stretch_width"), *wa, fa, *wb, fb, sizing_mode="stretch_width")
    return _page(layout, f"podlife diff: {a['scenario']}", json.dumps(a["records"]) + json.dumps(b["records"]),
                 {"a": ta, "b": tb, "labels": [label_a, label_b]})

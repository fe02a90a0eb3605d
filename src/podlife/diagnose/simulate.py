"""Running one hypothesis through the model and reading its output as evidence of the same kinds.

The model's kubelet log is rendered as klog text and its Events as the objects ``kubectl get events`` prints,
then read by the evidence readers themselves: real and modelled timelines are made of the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from podlife.diagnose import evidence
from podlife.diagnose.facts import Fact
from podlife.diagnose.reconstruct import Base, Change, scenario_text

TAIL = 5.0   # the model runs this long past the evidence's last instant


@dataclass
class ModelRun:
    change: Change
    facts: list[Fact]          # times are seconds since the base's origin
    result: Any                # podlife.scenario.run.Result
    text: str                  # the scenario


def run(base: Base, change: Change, kinds: set[str]) -> ModelRun:
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run as run_scenario
    from podlife.report import klog

    text = scenario_text(base, change, base.end + TAIL)
    sc = load_scenario("<diagnosis>", text=text)
    result = run_scenario(sc)
    records = result.cluster.trace.records
    ev = evidence.Evidence(year=sc.start_time.year)
    for r in records:   # the model knows its containers' ids, as a user's pod object tells them
        if r["type"] == "runtime" and r.get("op") == "create" and r.get("container") and r.get("detail"):
            key = (r.get("object") or "").partition("/")[2]
            ev.pod(key).ids[r["detail"].split()[0].split("://")[-1]] = r["container"]
    if "klog" in kinds:
        lines = [klog.line(r, sc.start_time) for r in records
                 if r["type"] == "log" and r["component"] == "kubelet" and r.get("node") == base.node]
        if lines:
            evidence.read_log(ev, "model", "\n".join(lines))
    if "events" in kinds:
        evidence.read_objects(ev, "model", [_event(r, sc.start_time) for r in records if r["type"] == "event"])
    evidence.finish(ev)
    for f in ev.facts:
        f.t -= base.origin
        f.source = "model"
    return ModelRun(change, ev.facts, result, text)


def _event(r: dict[str, Any], start: datetime) -> dict[str, Any]:
    """A trace event record as kubectl get events shows it: times to the second."""
    kind, _, rest = (r.get("object") or "").partition("/")
    ns, _, name = rest.rpartition("/")
    when = (start + timedelta(seconds=r["t"])).astimezone(UTC).replace(microsecond=0)
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"kind": "Event", "reason": r.get("reason"), "message": r.get("message"), "type": r.get("eventType"),
            "involvedObject": {"kind": kind, "namespace": ns or None, "name": name,
                               "fieldPath": r.get("fieldPath") or ""},
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
            "source": {"host": (r.get("source") or "").partition("/")[2]}}

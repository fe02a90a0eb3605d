"""--calibrate EVENTS: the timings a cluster's events show, used instead of the model's defaults.

- image pulls: the kubelet's Pulled event says how long each pull took (pkg/kubelet/images/image_manager.go:
  "Successfully pulled image %q in %v (%v including waiting)..."); per image the median of those durations
  becomes the pull time on every node where the image is not present;
- sandbox: per pod, from its Scheduled event to its first container step (Pulling; Pulled, less the pull's own
  duration; Created), which is the kubelet's sync and RunPodSandbox with CNI setup (pkg/kubelet/kuberuntime/
  kuberuntime_manager.go: SyncPod creates the sandbox, then pulls and starts each container); the median
  becomes every node's sandbox time (RuntimeProfile.sandbox_seconds);
- scheduling to start: per pod, from its Scheduled event to its first Started event; the median is reported
  (the model's is its sandbox, pull and start times, the first two calibrated above)."""

from __future__ import annotations

import re
from statistics import median
from typing import Any

from podlife.importer.dump import Dump, parse_time
from podlife.importer.errors import DumpError
from podlife.importer.readers import read_dumps

_UNIT = r"[0-9.]+(?:ns|us|µs|ms|s|m|h)"
_PULLED = re.compile(rf'^Successfully pulled image "([^"]+)" in ({_UNIT}(?:{_UNIT})*)')


def _when(ev: dict[str, Any]) -> str | None:
    for k in ("firstTimestamp", "eventTime", "lastTimestamp"):
        v = ev.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def calibrate(dump: Dump, path: str) -> None:
    from podlife.scenario.durations import parse_duration

    events = [o for _, o in read_dumps([path]).objects if o.get("kind") == "Event"]
    if not events:
        raise DumpError(path, "no Events in the file; expected kubectl get events -A -o json (or the events.json "
                              "of a kubectl cluster-info dump)")
    pulls: dict[str, list[float]] = {}
    scheduled: dict[str, str] = {}
    started: dict[str, str] = {}
    stepped: dict[str, float] = {}   # per pod, the earliest container step (seconds since the epoch)
    for ev in events:
        reason, message = ev.get("reason"), str(ev.get("message") or "")
        involved = ev.get("involvedObject") or {}
        pod = f"{involved.get('namespace')}/{involved.get('name')}/{involved.get('uid', '')}"
        when = _when(ev)
        step = _seconds(when)
        if reason == "Pulled":
            m = _PULLED.match(message)
            if m:
                try:
                    took = parse_duration(m.group(2))
                except ValueError:
                    continue
                pulls.setdefault(m.group(1), []).append(took)
                step = None if step is None else step - took
        if reason in ("Pulling", "Pulled", "Created") and step is not None:
            stepped[pod] = min(step, stepped.get(pod, step))
        if reason == "Scheduled" and when:
            scheduled[pod] = min(when, scheduled.get(pod, when))
        elif reason == "Started" and when:
            started[pod] = min(when, started.get(pod, when))
    dump.pull_times = {image: round(median(times), 3) for image, times in sorted(pulls.items())}
    latencies = [(parse_time(started[p]) - parse_time(scheduled[p])).total_seconds()
                 for p in sorted(scheduled) if p in started]
    dump.start_latency = round(median(latencies), 3) if latencies else None
    gaps = [max(0.0, stepped[p] - parse_time(scheduled[p]).timestamp()) for p in sorted(scheduled) if p in stepped]
    dump.sandbox_seconds = round(median(gaps), 3) if gaps else None


def _seconds(when: str | None) -> float | None:
    if not when:
        return None
    try:
        return parse_time(when).timestamp()
    except ValueError:
        return None

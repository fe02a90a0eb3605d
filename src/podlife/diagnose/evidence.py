"""Reading the user's evidence files into timed facts and what they say about each pod.

Each file is recognised by its content: a kubelet log (klog lines, with or without a journald prefix), a
Kubernetes object document (JSON or YAML: Events, Pods, Lists), ``kubectl describe pod`` text, or a
``kubectl cluster-info dump`` directory (its JSON files). Lines of a log that are not klog are counted and
ignored; a file that holds nothing recognisable, or a JSON/YAML document that does not parse, is bad evidence
(ScenarioError: exit 2 with the file and line).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

import yaml

from podlife.api import yamlread
from podlife.diagnose import describe, kubeobjects
from podlife.diagnose.facts import Fact, PodInfo
from podlife.diagnose.klogparse import KlogLine, Said, parse_line, said, style, version_of
from podlife.scenario.errors import ScenarioError

DEFAULT_YEAR = 2024   # klog lines carry no year; used when no other evidence gives one (an assumption, listed)


@dataclass
class Evidence:
    facts: list[Fact] = field(default_factory=list)          # absolute times (epoch seconds, log clock)
    pods: dict[str, PodInfo] = field(default_factory=dict)   # namespace/name -> info
    version: str | None = None                               # the kubelet's, from its start-up lines
    style: str | None = None                                 # legacy | structured (the log's messages)
    nodes: list[str] = field(default_factory=list)
    runtime: str | None = None                               # docker | containerd (from container ids)
    kubelet_starts: list[float] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)   # file -> lines in formats podlife does not read
    duplicates: int = 0
    clues: list[str] = field(default_factory=list)           # untimed evidence (describe's Events, states)
    states: dict[str, dict[str, str]] = field(default_factory=dict)   # pod -> container -> describe state
    has: set[str] = field(default_factory=set)               # klog | events | pod | describe
    notes: list[str] = field(default_factory=list)           # what the reader noticed (clock jumps, …)
    files: list[str] = field(default_factory=list)
    year: int | None = None                                  # of the klog lines (from the other evidence)

    def pod(self, key: str) -> PodInfo:
        if key not in self.pods:
            ns, _, name = key.partition("/")
            self.pods[key] = PodInfo(ns, name)
        return self.pods[key]


def read(paths: list[str]) -> Evidence:
    ev = Evidence()
    logs: list[tuple[str, str]] = []
    for path in paths:
        if os.path.isdir(path):
            _read_dump(ev, path)
        else:
            log = _read_file(ev, path)
            if log is not None:
                logs.append((path, log))
    # the objects' timestamps give the year klog lines lack, so logs are read last
    years = sorted(datetime.fromtimestamp(f.t, tz=UTC).year for f in ev.facts)
    ev.year = years[len(years) // 2] if years else None
    if ev.year is None and logs:
        ev.notes.append(f"klog lines carry no year and no other evidence gives one: {DEFAULT_YEAR} assumed")
    objects = len(ev.facts)
    for path, text in logs:
        read_log(ev, path, text)
    _align_clocks(ev, ev.facts[:objects], ev.facts[objects:])
    _resolve(ev)
    ev.facts.sort(key=lambda f: f.t)
    return ev


def _read_dump(ev: Evidence, root: str) -> None:
    found = False
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            p = os.path.join(dirpath, name)
            if name.endswith((".json", ".yaml", ".yml")):
                if _read_file(ev, p) is not None:
                    ev.ignored[p] += 1
                found = True
            else:
                ev.ignored[p] += 1   # container logs and others: not evidence podlife reads
    if not found:
        raise ScenarioError(root, None, "", "no JSON or YAML object files in this directory; expected a "
                                            "kubectl cluster-info dump (events.json, pods.json, nodes.json)")


def _text(path: str) -> str:
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data[:4096]:
        raise ScenarioError(path, None, "", "a binary file; expected a kubelet log, Events, a pod object or "
                                            "kubectl describe output")
    return data.decode("utf-8", errors="replace")


def _read_file(ev: Evidence, path: str) -> str | None:
    """Reads an object or describe file at once; returns a log's text for later."""
    text = _text(path)
    ev.files.append(path)
    stripped = text.lstrip()
    if not stripped:
        raise ScenarioError(path, None, "", "the file is empty")
    if describe.is_describe(text):
        info, events, states = describe.parse(text)
        _merge(ev.pod(info.key), info)
        ev.clues.extend(f"{path}: {e}" for e in events)
        ev.states[info.key] = states
        ev.has.add("describe")
        return None
    if stripped[0] in "{[" or path.endswith((".json", ".yaml", ".yml")) or stripped.startswith(("apiVersion:",
                                                                                               "kind:", "items:")):
        docs = _documents(path, text)
        objs = [o for d in docs for o in (kubeobjects.items(d) or [])]
        if objs or not _looks_like_log(text):
            if not objs:
                raise ScenarioError(path, 1, "", "no Kubernetes objects (expected Events, Pods or a List of them)")
            read_objects(ev, path, objs)
            return None
    return text


def _looks_like_log(text: str) -> bool:
    return any(parse_line(line) is not None for line in text.splitlines()[:200])


def _documents(path: str, text: str) -> list[object]:
    if text.lstrip()[:1] in "{[":
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            raise ScenarioError(path, e.lineno, "", f"not valid JSON: {e.msg} (column {e.colno})") from None
    try:
        return [d for d in yaml.load_all(text, Loader=yamlread.SafeLoader) if d is not None]
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ScenarioError(path, mark.line + 1 if mark else None, "",
                            f"not valid YAML: {getattr(e, 'problem', None) or e}") from None


def read_objects(ev: Evidence, path: str, objs: list[dict]) -> None:
    for o in objs:
        kind = o.get("kind")
        if kind == "Event" or (kind is None and "involvedObject" in o):
            facts = kubeobjects.event_facts(o, path)
            ev.facts.extend(facts)
            for f in facts:
                if f.pod:
                    ev.pod(f.pod).add_container(f.container or "")
            host = (o.get("source") or {}).get("host")
            if host and host not in ev.nodes:
                ev.nodes.append(host)
            ev.has.add("events")
        elif kind == "Pod":
            info = kubeobjects.pod_info(o)
            _merge(ev.pod(info.key), info)
            ev.facts.extend(kubeobjects.status_facts(o, path))
            ev.has.add("pod")
        else:
            ev.ignored[path] += 1


def _merge(into: PodInfo, info: PodInfo) -> None:
    for c in info.containers:
        into.add_container(c)
    into.images.update(info.images)
    into.sidecars |= info.sidecars
    into.ids.update(info.ids)
    for k in ("uid", "node", "grace", "spec", "deletion_t"):
        if getattr(info, k) is not None:
            setattr(into, k, getattr(info, k))
    into.terminating = into.terminating or info.terminating


def read_log(ev: Evidence, path: str, text: str) -> None:
    year, last_month, prev_t = None, None, None
    seen: set[str] = set()
    n = 0
    for no, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        kl = parse_line(raw)
        if kl is None:
            ev.ignored[path] += 1
            continue
        if raw in seen:          # the same line twice (an excerpt pasted twice): once is what happened
            ev.duplicates += 1
            continue
        seen.add(raw)
        if year is None:
            year = ev.year or DEFAULT_YEAR
        if last_month is not None and kl.month < last_month:
            year += 1            # the log crossed New Year
        last_month = kl.month
        t = _epoch(year, kl)
        if prev_t is not None and t < prev_t - 1.0:
            ev.notes.append(f"{path}:{no}: the clock goes back {prev_t - t:.1f} s (a clock jump or interleaved "
                            f"files); facts are ordered by their own times")
        prev_t = t
        n += 1
        _log_fact(ev, path, no, raw, kl, t)
    if n == 0:
        raise ScenarioError(path, 1, "", "no kubelet log line, Event, pod object or kubectl describe output was "
                                         "recognised in this file (klog lines look like "
                                         "'I0603 20:39:37.908557    3033 kubelet.go:1913] …')")
    ev.has.add("klog")


ZONE_STEP = 900.0   # time zones are whole quarter hours from UTC


def _align_clocks(ev: Evidence, objects: list[Fact], logs: list[Fact]) -> None:
    """klog prints the node's local time, Events and pod objects UTC: when the same Events appear in both and
    their times differ by a time zone's offset, the log's facts are moved onto UTC."""
    diffs = sorted(o.t - g.t for o in objects for g in logs
                   if o.kind == g.kind and o.kind.startswith("event:") and o.pod == g.pod
                   and abs(o.t - g.t) < 15 * 3600)
    if not diffs:
        return
    median = diffs[len(diffs) // 2]
    offset = round(median / ZONE_STEP) * ZONE_STEP
    if abs(offset) < ZONE_STEP or abs(median - offset) > 5.0:
        return
    for f in logs:
        f.t += offset
    ev.notes.append(f"the kubelet log's clock is {-offset / 3600:+g} h from UTC (its Events match the API's "
                    f"{abs(offset) / 3600:g} h apart): its times are read as UTC{-offset / 3600:+g} h")


def _epoch(year: int, kl: KlogLine) -> float:
    try:
        d = datetime(year, kl.month, kl.day, tzinfo=UTC)
    except ValueError:
        d = datetime(year, 1, 1, tzinfo=UTC)
    return d.timestamp() + kl.seconds


def _log_fact(ev: Evidence, path: str, no: int, raw: str, kl: KlogLine, t: float) -> None:
    s: Said = said(kl.message)
    if kl.component and kl.component != "kubelet" and not s.kind.startswith("event:"):
        ev.ignored[path] += 1        # another component's line in the same journal
        return
    ev.style = ev.style or style(kl.message)
    if kl.host and kl.host not in ev.nodes:
        ev.nodes.append(kl.host)
    if s.cid and ev.runtime is None:
        ev.runtime = "docker" if "docker://" in kl.message or '{"docker"' in kl.message else None
    if "containerd://" in kl.message:
        ev.runtime = "containerd"
    if s.kind == "kubelet-start":
        ev.version = version_of(s.detail) or ev.version
        if not ev.kubelet_starts or t - ev.kubelet_starts[-1] > 5:
            ev.kubelet_starts.append(t)
    if s.pod:
        info = ev.pod(s.pod)
        info.uid = info.uid or s.uid
        if s.container:
            info.add_container(s.container)
        if kl.host and info.node is None:
            info.node = kl.host
    for cid, name in s.names.items():
        if s.pod:
            ev.pod(s.pod).ids[cid] = name
    if s.cid and s.pod and s.container:
        ev.pod(s.pod).ids[s.cid] = s.container
    container = s.container or (f"id:{s.cid}" if s.cid else None)
    if s.pod and s.cid and s.kind.startswith("pleg-"):
        ev.pod(s.pod).ids.setdefault(s.cid, "")   # known to belong to this pod
    detail = s.detail if not s.node else f"node {s.node}: {s.detail}"
    ev.facts.append(Fact(t, s.kind, s.pod, container, s.value, detail, f"{path}:{no}", raw.strip()))


_IMAGE = re.compile(r'[Ii]mage "([^"]+)"')


def _images(ev: Evidence) -> None:
    for f in ev.facts:
        if f.kind.startswith("event:") and f.pod and f.container:
            m = _IMAGE.search(f.detail)
            if m:
                ev.pod(f.pod).images.setdefault(f.container, m[1])


def finish(ev: Evidence) -> None:
    _resolve(ev)
    ev.facts.sort(key=lambda f: f.t)


def _resolve(ev: Evidence) -> None:
    _images(ev)
    _resolve_ids(ev)


def _resolve_ids(ev: Evidence) -> None:
    """Give each fact its pod and container name where the evidence allows: ids named by status lines, pod
    objects, describe or structured lines; a 1.18-era Killing event names the container whose exit precedes it;
    a line naming only a container id belongs to the pod whose lines carry that id."""
    owner: dict[str, str] = {}
    for key, info in ev.pods.items():
        for cid in info.ids:
            owner[cid] = key
    facts = sorted(ev.facts, key=lambda f: f.t)
    for i, f in enumerate(facts):
        if f.kind == "event:Killing" and f.container and f.pod and f.source.rsplit(":", 1)[0] == \
                facts[max(0, i - 1)].source.rsplit(":", 1)[0]:
            named = {cid for info in ev.pods.values() for cid, name in info.ids.items() if name}
            near = [g for g in facts[max(0, i - 6):i] if f.t - g.t <= 0.1 and g.container
                    and g.container.startswith("id:") and g.container[3:] not in named]
            # the 1.18-era kubelet reports Killing once the container exited; later ones when the stop begins
            pick = [g for g in near if g.kind in ("exited", "stop-failed")] or [g for g in near if g.kind == "kill"]
            if pick:
                cid = pick[-1].container[3:]   # type: ignore[index]
                ev.pod(f.pod).ids[cid] = f.container
                owner[cid] = f.pod
    for f in ev.facts:
        if f.container and f.container.startswith("id:"):
            cid = f.container[3:]
            pod = f.pod or owner.get(cid)
            if pod is None and len(ev.pods) == 1:
                pod = next(iter(ev.pods))
            f.pod = pod
            name = ev.pods[pod].ids.get(cid) if pod in ev.pods else None
            if name:
                f.container = name
    for info in ev.pods.values():
        for name in info.ids.values():
            if name:
                info.add_container(name)

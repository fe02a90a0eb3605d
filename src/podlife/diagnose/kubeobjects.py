"""Kubernetes objects a user saves: ``kubectl get events -o json|yaml``, ``kubectl get pod -o json|yaml`` (one,
or a List), and the JSON files of a ``kubectl cluster-info dump`` directory."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from podlife.diagnose.facts import Fact, PodInfo


def timestamp(v: Any) -> float | None:
    """RFC 3339 (``2020-06-03T12:39:37Z``, ``…37.908557Z``, ``+08:00``) to epoch seconds."""
    if not isinstance(v, str) or not v:
        return None
    try:
        d = datetime.fromisoformat(v)
    except ValueError:
        return None
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return d.timestamp()


def items(doc: Any) -> list[dict[str, Any]] | None:
    """The objects of a document: a List's items, or the one object; None when it is no Kubernetes object."""
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("items"), list):
        return [i for i in doc["items"] if isinstance(i, dict)]
    if "kind" in doc and "metadata" in doc:
        return [doc]
    return None


def event_facts(ev: dict[str, Any], source: str) -> list[Fact]:
    """One Event object: a fact at its first time (and at its last when it repeated)."""
    obj = ev.get("involvedObject") or ev.get("regarding") or {}
    reason = ev.get("reason") or ""
    first = timestamp(ev.get("firstTimestamp")) or timestamp(ev.get("eventTime")) or \
        timestamp((ev.get("metadata") or {}).get("creationTimestamp"))
    last = timestamp(ev.get("lastTimestamp")) or timestamp((ev.get("series") or {}).get("lastObservedTime"))
    if first is None or not reason:
        return []
    fp = re.match(r"spec\.(?:init)?[cC]ontainers\{(.+)\}", obj.get("fieldPath") or "")
    kind = obj.get("kind")
    pod = f"{obj.get('namespace') or 'default'}/{obj.get('name')}" if kind == "Pod" else None
    detail = ev.get("message") or ev.get("note") or ""
    text = f"{reason}: {detail}"
    def mk(t: float) -> Fact:
        return Fact(t, "event:" + reason, pod, fp[1] if fp else None, None,
                    detail if kind != "Node" else f"node {obj.get('name')}: {detail}", source, text)
    out = [mk(first)]
    if last is not None and last > first + 0.5 and (ev.get("count") or 1) > 1:
        out.append(mk(last))
    return out


def pod_info(pod: dict[str, Any], now: float | None = None) -> PodInfo:
    md, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    info = PodInfo(md.get("namespace") or "default", md.get("name") or "", md.get("uid"), spec.get("nodeName"))
    for c in list(spec.get("initContainers") or []) + list(spec.get("containers") or []):
        if isinstance(c, dict) and c.get("name"):
            info.add_container(c["name"])
            if (c.get("lifecycle") or {}).get("type") == "Sidecar":
                info.sidecars.add(c["name"])
    if "terminationGracePeriodSeconds" in spec:
        info.grace = int(spec["terminationGracePeriodSeconds"])
    info.spec = spec if spec.get("containers") else None
    for cs in list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or []):
        cid = (cs.get("containerID") or "").split("://", 1)[-1]
        if cid and cs.get("name"):
            info.ids[cid] = cs["name"]
    dt = timestamp(md.get("deletionTimestamp"))
    if dt is not None:
        info.terminating = True
        grace = md.get("deletionGracePeriodSeconds", info.grace if info.grace is not None else 30)
        info.deletion_t = dt - float(grace or 0)
    return info


def status_facts(pod: dict[str, Any], source: str) -> list[Fact]:
    """Container starts and ends the pod's status records (second resolution)."""
    md = pod.get("metadata") or {}
    key = f"{md.get('namespace') or 'default'}/{md.get('name')}"
    out: list[Fact] = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        for _which, state in (("state", cs.get("state") or {}), ("last", cs.get("lastState") or {})):
            term = state.get("terminated")
            if term and timestamp(term.get("finishedAt")) is not None:
                out.append(Fact(timestamp(term["finishedAt"]) or 0.0, "status-terminated", key, cs.get("name"),
                                term.get("exitCode"), term.get("reason") or "", source,
                                f"{cs.get('name')} terminated: {term.get('reason')} exit {term.get('exitCode')}"))
    return out

"""What a scenario did to an imported cluster, in the terms a person asks in: pods disrupted (evicted, deleted,
restarted) per workload and per namespace; the worst PodDisruptionBudget violation and how long it lasted; when
every workload was back at its desired ready replicas; the pods left Pending and why (FailedScheduling reasons).

A ``WhatIf`` watches a cluster while it runs: the trace's api and runtime records say what happened to each pod,
store watches follow the budgets' and workloads' status. ``result`` is the report's ``whatIf`` section."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

Obj = dict[str, Any]
_ATTEMPT = re.compile(r" attempt (\d+)$")
_EVICTORS = ("taint-eviction-controller", "node-controller")   # their deletes are evictions (tainteviction)
_WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
# the kinds whose controller-owned pods speak for an owner one level up
_UP = {"ReplicaSet": "Deployment", "Job": "CronJob"}


def _ready(obj: Obj) -> tuple[int, int] | None:
    """(ready, desired) of a workload, as its status and spec say; None for a ReplicaSet a Deployment owns."""
    kind, spec, status = obj["kind"], obj.get("spec") or {}, obj.get("status") or {}
    if kind == "DaemonSet":
        return int(status.get("numberReady") or 0), int(status.get("desiredNumberScheduled") or 0)
    if kind == "ReplicaSet" and any(r.get("controller") for r in obj["metadata"].get("ownerReferences") or ()):
        return None
    return int(status.get("readyReplicas") or 0), int(spec.get("replicas", 1) if spec.get("replicas") is not None
                                                     else 1)


class WhatIf:
    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.store = cluster.store
        self.owner_of: dict[str, str] = {}                   # pod ref -> its workload ("Deployment/ns/web")
        self.disrupted: dict[str, dict[str, set[str]]] = {"evicted": {}, "deleted": {}, "restarted": {}}
        self._evicted: set[str] = set()
        self._gen: dict[str, int] = {}   # pods of one name made so far (a StatefulSet's pod is made again)
        self.pdb_short: dict[str, tuple[float, int]] = {}    # PDB ref -> (since, shortfall) while violated
        self.pdb_worst: dict[str, Any] | None = None
        self.below: dict[str, tuple[float, int, int]] = {}   # workload -> (since, ready, desired) while below
        self.dipped: dict[str, float] = {}                   # workload -> when it last came back to desired
        self.short_from: dict[str, float] = {}               # workload -> when it first fell short
        self.first_dip: float | None = None
        for pod in self.store.list("Pod"):
            self._owner(pod)
        for pdb in self.store.list("PodDisruptionBudget"):
            self._on_pdb("ADDED", pdb, None)
        for kind in _WORKLOADS:
            for obj in self.store.list(kind):
                self._on_workload("ADDED", obj, None)
            self.store.watch(kind, self._on_workload)
        self.store.watch("PodDisruptionBudget", self._on_pdb)
        cluster.trace.sinks.append(self.record)

    # ---- pods -------------------------------------------------------------------------------------

    def _owner(self, pod: Obj) -> str:
        md = pod["metadata"]
        ref = f"Pod/{md.get('namespace')}/{md['name']}"
        found = self.owner_of.get(ref)
        if found is not None:
            return found
        owner = ref
        ctrl = next((r for r in md.get("ownerReferences") or () if r.get("controller")), None)
        ns = md.get("namespace") or ""
        while ctrl is not None:
            kind, name = ctrl.get("kind", ""), ctrl.get("name", "")
            owner = f"{kind}/{ns}/{name}" if kind != "Node" else ref
            if kind not in _UP:
                break
            parent = self.store.try_get(kind, ns, name)
            ctrl = next((r for r in (parent or {}).get("metadata", {}).get("ownerReferences") or ()
                         if r.get("controller") and r.get("kind") == _UP[kind]), None)
        self.owner_of[ref] = owner
        return owner

    def _pod_owner(self, ref: str) -> str:
        found = self.owner_of.get(ref)
        if found is not None:
            return found
        _, ns, name = ref.split("/", 2)
        pod = self.store.try_get("Pod", ns, name)
        return self._owner(pod) if pod is not None else ref

    def record(self, rec: dict[str, Any]) -> None:
        obj = rec.get("object")
        if not isinstance(obj, str) or not obj.startswith("Pod/"):
            return
        kind = rec["type"]
        if kind == "api":
            verb = rec.get("verb")
            if verb == "create":
                self._pod_owner(obj)
                self._evicted.discard(obj)   # a new pod of the same name (a StatefulSet's)
                self._gen[obj] = self._gen.get(obj, 0) + 1
            elif verb == "evict":
                self._evicted.add(obj)
                self._disrupt("evicted", obj, rec["t"])
            elif verb == "delete" and rec.get("by") in _EVICTORS and obj not in self._evicted:
                self._evicted.add(obj)   # taint-based eviction (NoExecute), as the controller calls it
                self._disrupt("evicted", obj, rec["t"])
            elif verb == "delete" and rec.get("by") != "kubelet" and obj not in self._evicted:
                self._disrupt("deleted", obj, rec["t"])
            elif verb == "update" and rec.get("by") == "kubelet" and obj not in self._evicted:
                pod = self._pod(obj)
                if pod is not None and (pod.get("status") or {}).get("reason") == "Evicted":
                    self._evicted.add(obj)   # the kubelet's node-pressure eviction
                    self._disrupt("evicted", obj, rec["t"])
        elif kind == "runtime" and rec.get("op") == "create" and rec.get("container"):
            m = _ATTEMPT.search(str(rec.get("detail", "")))
            if m and int(m.group(1)) > 0:
                self._disrupt("restarted", obj, rec["t"])

    def _pod(self, ref: str) -> Obj | None:
        _, ns, name = ref.split("/", 2)
        return self.store.try_get("Pod", ns, name)

    def _disrupt(self, how: str, ref: str, t: float) -> None:
        self.disrupted[how].setdefault(self._pod_owner(ref), set()).add(f"{ref}#{self._gen.get(ref, 0)}")

    # ---- budgets and workloads --------------------------------------------------------------------

    def _on_pdb(self, type_: str, obj: Obj, old: Obj | None) -> None:
        md = obj["metadata"]
        ref = f"PodDisruptionBudget/{md.get('namespace')}/{md['name']}"
        now = self.cluster.kernel.now
        status = obj.get("status") or {}
        short = int(status.get("desiredHealthy") or 0) - int(status.get("currentHealthy") or 0)
        if type_ == "DELETED":
            short = 0
        held = self.pdb_short.get(ref)
        if short > 0:
            since = held[0] if held else now
            self.pdb_short[ref] = (since, max(short, held[1] if held else 0))
        elif held is not None:
            del self.pdb_short[ref]
            self._pdb_done(ref, held[0], now, held[1], ongoing=False)

    def _pdb_done(self, ref: str, since: float, until: float, short: int, ongoing: bool) -> None:
        worst = self.pdb_worst
        if worst is None or (short, until - since) > (worst["shortfall"], worst["seconds"]):
            self.pdb_worst = {"pdb": ref, "shortfall": short, "from": round(since, 3),
                              "seconds": round(until - since, 3), "ongoing": ongoing}

    def _on_workload(self, type_: str, obj: Obj, old: Obj | None) -> None:
        md = obj["metadata"]
        ref = f"{obj['kind']}/{md.get('namespace')}/{md['name']}"
        counts = _ready(obj) if type_ != "DELETED" else None
        now = self.cluster.kernel.now
        below = counts is not None and counts[0] < counts[1]
        if below:
            assert counts is not None
            since = self.below[ref][0] if ref in self.below else now
            self.below[ref] = (since, counts[0], counts[1])
            if self.first_dip is None and type_ != "ADDED":
                self.first_dip = now
        elif ref in self.below:
            since = self.below.pop(ref)[0]
            self.dipped[ref] = now
            self.short_from.setdefault(ref, since)

    # ---- the answer -------------------------------------------------------------------------------

    def result(self, end: float) -> dict[str, Any]:
        by_workload: dict[str, Counter[str]] = {}
        by_namespace: dict[str, Counter[str]] = {}
        for how, owners in self.disrupted.items():
            for owner, pods in owners.items():
                by_workload.setdefault(owner, Counter())[how] += len(pods)
                ns = owner.split("/")[1] if owner.count("/") >= 2 else ""
                by_namespace.setdefault(ns, Counter())[how] += len(pods)
        for ref, (since, short) in sorted(self.pdb_short.items()):
            self._pdb_done(ref, since, end, short, ongoing=True)
        back: dict[str, Any]
        recovered = [{"workload": w, "shortFrom": round(self.short_from.get(w, t), 3), "backAt": round(t, 3)}
                     for w, t in sorted(self.dipped.items()) if w not in self.below]
        if self.below:
            back = {"allBack": False, "notBack": [{"workload": w, "ready": r, "desired": d, "belowSince": round(s, 3)}
                                                  for w, (s, r, d) in sorted(self.below.items())]}
        else:
            last = max(self.dipped.values(), default=None)
            since_dip = None if last is None or self.first_dip is None else round(last - self.first_dip, 3)
            back = {"allBack": True, "at": None if last is None else round(last, 3), "afterFirstDip": since_dip}
        back["recovered"] = recovered
        return {
            "disruptedByWorkload": [{"workload": w, **_counts(c)} for w, c in sorted(by_workload.items())],
            "disruptedByNamespace": [{"namespace": n, **_counts(c)} for n, c in sorted(by_namespace.items())],
            "worstPdbViolation": self.pdb_worst,
            "readyReplicas": back,
            "pending": _pending(self.store),
        }


def _counts(c: Counter[str]) -> dict[str, int]:
    return {k: c.get(k, 0) for k in ("evicted", "deleted", "restarted")}


_AVAILABLE = re.compile(r"^\d+/\d+ nodes are available: (.*?)\.?(?: preemption: .*)?$", re.DOTALL)
_REASON = re.compile(r"^(\d+) (.*)$")


def failed_scheduling_reasons(message: str) -> list[str]:
    """The reasons of a FailedScheduling message, without their node counts
    (pkg/scheduler/framework/types.go FitError.Error: "0/3 nodes are available: 2 Insufficient cpu, ...")."""
    m = _AVAILABLE.match(message.strip())
    if not m:
        return [message.strip()] if message.strip() else []
    out = []
    for part in m.group(1).split(", "):
        r = _REASON.match(part.strip().rstrip("."))
        out.append(r.group(2) if r else part.strip().rstrip("."))
    return out


def _pending(store: Any) -> dict[str, Any]:
    pods = [p for p in store.list("Pod") if (p.get("status") or {}).get("phase") == "Pending"
            and not (p.get("spec") or {}).get("nodeName")]
    reasons: Counter[str] = Counter()
    names = []
    for p in pods:
        md = p["metadata"]
        names.append(f"{md.get('namespace')}/{md['name']}")
        cond = next((c for c in (p.get("status") or {}).get("conditions") or ()
                     if c.get("type") == "PodScheduled" and c.get("status") == "False"), None)
        for reason in failed_scheduling_reasons((cond or {}).get("message") or "") or ["not yet tried"]:
            reasons[reason] += 1
    return {"count": len(pods), "pods": names[:20], "reasons": [{"reason": r, "pods": n}
                                                                 for r, n in sorted(reasons.items(),
                                                                                    key=lambda kv: (-kv[1], kv[0]))]}


def render_lines(w: dict[str, Any]) -> list[str]:
    """The section of the summary."""
    lines = ["what-if"]
    rows = w["disruptedByWorkload"]
    if rows:
        lines.append("  pods disrupted (evicted / deleted / restarted):")
        for r in rows:
            lines.append(f"    {r['workload']}: {r['evicted']} / {r['deleted']} / {r['restarted']}")
        lines.append("  per namespace: " + ", ".join(f"{r['namespace'] or '(cluster)'} {r['evicted']}/{r['deleted']}/"
                                                     f"{r['restarted']}" for r in w["disruptedByNamespace"]))
    else:
        lines.append("  no pod was evicted, deleted or restarted")
    pdb = w["worstPdbViolation"]
    if pdb:
        lines.append(f"  worst PDB violation: {pdb['pdb']} {pdb['shortfall']} pod(s) short of desiredHealthy for "
                     f"{pdb['seconds']:g}s from {pdb['from']:g}s" + (" (still violated at the end)" if pdb["ongoing"]
                                                                     else ""))
    else:
        lines.append("  no PodDisruptionBudget was violated")
    back = w["readyReplicas"]
    if back["allBack"]:
        lines.append("  every workload at its desired ready replicas" + (
            f" again at {back['at']:g}s ({back['afterFirstDip']:g}s after the first one fell short)"
            if back.get("at") is not None and back.get("afterFirstDip") is not None else
            f" again at {back['at']:g}s" if back.get("at") is not None else " throughout"))
    else:
        lines.append("  not back at desired ready replicas by the end: " + ", ".join(
            f"{n['workload']} {n['ready']}/{n['desired']} (since {n['belowSince']:g}s)" for n in back["notBack"]))
    for r in back.get("recovered") or ():
        lines.append(f"    {r['workload']} short from {r['shortFrom']:g}s, back at {r['backAt']:g}s "
                     f"({r['backAt'] - r['shortFrom']:g}s)")
    pend = w["pending"]
    if pend["count"]:
        lines.append(f"  {pend['count']} pods left Pending: " + ", ".join(f"{r['reason']} ({r['pods']})"
                                                                      for r in pend["reasons"]))
    else:
        lines.append("  no pod left Pending")
    return lines


def render_html(w: dict[str, Any]) -> str:
    import html

    return ("<h3 style='font-family:sans-serif'>What-if</h3><pre style='font-size:12px'>"
            + html.escape("\n".join(render_lines(w)[1:])) + "</pre>")


def compare_lines(label_a: str, a: dict[str, Any] | None, label_b: str, b: dict[str, Any] | None) -> list[str]:
    """The what-if answers of two runs side by side (podlife diff --from), the lines that differ marked."""
    if a is None or b is None:
        return []
    la, lb = render_lines(a)[1:], render_lines(b)[1:]
    out = [f"what-if ({label_a} | {label_b})"]
    for i in range(max(len(la), len(lb))):
        x, y = (la[i] if i < len(la) else ""), (lb[i] if i < len(lb) else "")
        out.append(f"  {x.strip()}" if x == y else f"≠ {label_a}: {x.strip()}\n  {label_b}: {y.strip()}")
    return out

"""Why a pod's moment came when it did: walk back from it through the causes the trace recorded.

Reads a trace report only. Each step names the upstream rule behind it, so the user can check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from podlife.versions import RULES, profile

MINIMUM_GRACE = 2  # pkg/kubelet/kuberuntime/kuberuntime_container.go: minimumGracePeriodInSeconds

_KILL_HOME = "pkg/kubelet/kuberuntime/kuberuntime_container.go: killContainer"
_HOOK_HOME = "pkg/kubelet/kuberuntime/kuberuntime_container.go: executePreStopHook"
_DELETE_HOME = "pkg/registry/core/pod/strategy.go: CheckGracefulDelete"
_FINAL_DELETE_HOME = "pkg/kubelet/status/status_manager.go: syncPod (canBeDeleted)"
_BATCH_HOME = "pkg/kubelet/status/status_manager.go: syncBatch (every 10 s)"
_RECLAIM_HOME = "pkg/kubelet/kubelet_pods.go: PodResourcesAreReclaimed"
_RELIST_HOME = "pkg/kubelet/pleg/generic.go: relist (every 1 s)"


@dataclass
class Step:
    t: float
    text: str
    home: str


class ExplainError(ValueError):
    pass


def _pod_object(report: dict[str, Any], pod: str) -> str:
    names: list[str] = sorted({r["object"] for r in report["records"]
                    if isinstance(r.get("object"), str) and r["object"].startswith("Pod/")})
    if pod in names:
        return pod
    hits = [n for n in names if n.split("/")[-1] == pod or n.split("/", 1)[1] == pod]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise ExplainError(f"no pod {pod!r} in the trace (pods: {', '.join(n.split('/', 1)[1] for n in names)})")
    raise ExplainError(f"pod {pod!r} is ambiguous: {', '.join(hits)}")


def _rule_line(version: str, name: str) -> str:
    rule = next(r for r in RULES if r.name == name)
    minor = profile(version).minor
    change = [c for c in rule.changes if minor >= c.since][-1]
    return f"{rule.summary}: {change.value} ({change.source})"


def explain(report: dict[str, Any], pod: str, at: float | None = None) -> tuple[str, float, list[Step]]:
    """(pod object, target instant, steps from the target back to its first cause)."""
    obj = _pod_object(report, pod)
    mine = [r for r in report["records"] if r.get("object") == obj and (at is None or r["t"] <= at)]
    if not mine:
        raise ExplainError(f"{obj} has no record before {at}s")
    version = report["kubernetesVersion"]
    removed = next((r for r in mine if r["type"] == "deleted"), None)
    target = at if at is not None else (removed["t"] if removed else mine[-1]["t"])
    terminating = [r for r in mine if r["type"] == "terminating"]
    containers = sorted({r["container"] for r in mine if r.get("container")})
    name = obj.split("/")[-1]
    kubelet_logs = [r for r in report["records"] if r["type"] == "log" and r["component"] == "kubelet"
                    and r["t"] <= target]
    steps: list[Step] = []

    if removed is not None and removed["t"] <= target:
        final = [r for r in mine if r["type"] == "api" and r["verb"] == "delete" and r["t"] <= removed["t"]]
        by = final[-1]["by"] if final else "apiserver"
        if by == "kubelet":
            steps.append(Step(removed["t"], "removed: the kubelet's final DELETE (grace 0) once the pod could be "
                              "deleted", _FINAL_DELETE_HOME))
        else:
            steps.append(Step(removed["t"], f"removed: DELETE by {by}", _DELETE_HOME))
        reported = [r for r in mine if r["type"] == "container" and r["state"] == "terminated"]
        if reported:
            last = reported[-1]["t"]
            waits = [r["t"] for r in kubelet_logs if name in r["message"] and (
                "some containers are still running" in r["message"]
                or "resources are not reclaimed" in r["message"])]
            if waits:
                steps.append(Step(last, f"{removed['t'] - last:.3f} s between the last container reported "
                                  f"terminated and the removal: the status manager found resources not yet "
                                  f"reclaimed at {', '.join(f'{w:g}s' for w in waits)} and retried on its batch "
                                  f"sync", f"{_RECLAIM_HOME}; {_BATCH_HOME}"))
            relists = [r["t"] for r in kubelet_logs if name in r["message"] and "SyncLoop (PLEG)" in r["message"]
                       and "ContainerDied" in r["message"] and r["t"] <= removed["t"]]
            if relists:
                steps.append(Step(relists[-1], "the kubelet saw the last container die at its PLEG relist",
                                  _RELIST_HOME))
            elif not waits and removed["t"] - last > 0:
                steps.append(Step(last, f"{removed['t'] - last:.3f} s between the last container reported "
                                  "terminated and the removal (status sync after the pod worker finished)",
                                  _FINAL_DELETE_HOME))

    for c in reversed(_containers_by_exit(mine, containers)):
        steps.extend(_container_steps(mine, kubelet_logs, obj, c))

    if terminating:
        first = terminating[0]
        actions = [r for r in report["records"] if r["type"] == "action" and (r.get("object") or "").lower()
                   in (obj.lower(), f"pod/{name}", f"pod/{obj.split('/')[1]}/{name}") and r["t"] == first["t"]]
        deleters = [r for r in mine if r["type"] == "api" and r["verb"] in ("delete", "evict")
                    and r["t"] == first["t"]]
        by = deleters[0]["by"] if deleters else "?"
        if actions and actions[0].get("gracePeriodSeconds") is not None:
            source = "the DELETE's gracePeriodSeconds"
        elif by in ("kubectl", "user"):
            source = "spec.terminationGracePeriodSeconds (the DELETE named no grace)"
        else:
            source = f"chosen by {by}"
        steps.append(Step(first["t"], f"deletion requested by {by}: grace {first['gracePeriodSeconds']} s from "
                          f"{source}", _DELETE_HOME))
        for later in terminating[1:]:
            steps.append(Step(later["t"], f"grace shortened to {later['gracePeriodSeconds']} s", _DELETE_HOME))
    steps.sort(key=lambda s: -s.t)
    rules = [_rule_line(version, n) for n in ("grace_override", "terminal_phase_before_removal")]
    steps.extend(Step(target, f"rule in force on {version}: {line}", "src/podlife/versions.py") for line in rules)
    return obj, target, steps


def _containers_by_exit(mine: list[dict[str, Any]], containers: list[str]) -> list[str]:
    last_exit = {c: max((r["t"] for r in mine if r["type"] == "runtime" and r.get("container") == c
                         and r["op"] == "exit"), default=-1.0) for c in containers}
    return sorted(containers, key=lambda c: (last_exit[c], c))


def _container_steps(mine: list[dict[str, Any]], logs: list[dict[str, Any]], obj: str, c: str) -> list[Step]:
    out: list[Step] = []
    mine_c = [r for r in mine if r.get("container") == c]
    exits = [r for r in mine_c if r["type"] == "runtime" and r["op"] == "exit"]
    signals = [r for r in mine_c if r["type"] == "signal"]
    hooks = [r for r in mine_c if r["type"] == "hook" and r["hook"] == "preStop"]
    # runtime ids ("docker://<hex> attempt N") let legacy log lines be matched to the container
    ids = {r["detail"].split()[0].split("://")[-1] for r in mine_c
           if r["type"] == "runtime" and r["op"] == "create" and r.get("detail")}
    ids.add(f'pod="{obj.split("/", 1)[1]}" ')  # structured lines name the pod, then the container
    if exits:
        e = exits[-1]
        if any(s["signal"] == "SIGKILL" and s["t"] == e["t"] for s in signals):
            how = "killed by SIGKILL"
        elif any(s["signal"] != "SIGKILL" and s["t"] <= e["t"] for s in signals):
            how = "exited after " + next(s["signal"] for s in signals if s["signal"] != "SIGKILL")
        else:
            how = "exited by itself"
        out.append(Step(e["t"], f"{c}: process {how} ({e.get('detail')})", _KILL_HOME))
    for s in signals:
        if s["signal"] == "SIGKILL":   # anything else is the stop signal (SIGTERM unless lifecycle.stopSignal)
            out.append(Step(s["t"], f"{c}: SIGKILL when the grace period ran out", _KILL_HOME))
            continue
        timeout = s.get("timeoutSeconds")
        override = _last_log(logs, ids, c, s["t"], "override")
        graced = _last_log(logs, ids, c, s["t"], "grace period")
        if override is not None and _grace_of(override) == timeout:
            note = (f"{timeout} s, a grace-period override passed by the caller"
                    + (" (negative: it reaches the runtime unclamped; dockershim hands it to docker, which then "
                       "waits without a deadline)" if isinstance(timeout, (int, float)) and timeout < 0 else ""))
        elif graced is not None:
            prev = max((x["t"] for x in signals if x["signal"] != "SIGKILL" and x["t"] < s["t"]), default=-1.0)
            ran = [h for h in hooks if prev < h["t"] <= s["t"]]
            begun = ran[0]["t"] if ran else s["t"]
            first = _first_log(logs, ids, c, begun, s["t"], "grace period") or graced
            grace = _grace_of(first)
            # executePreStopHook returns whole seconds (int64 of the elapsed Seconds())
            spent = int(round(ran[-1]["t"] - ran[0]["t"], 3)) if len(ran) >= 2 else 0
            note = f"{timeout} s: {grace} s grace" + (f" minus {spent} s spent in preStop" if ran else "")
            if grace is not None and grace - spent < MINIMUM_GRACE <= (timeout or 0):
                note += f" = {grace - spent} s, raised to the {MINIMUM_GRACE} s minimum"
        else:
            note = f"{timeout} s"
        out.append(Step(s["t"], f"{c}: {s['signal']} with {note}", _KILL_HOME))
    starts = [h for h in hooks if h["phase"] == "started"]
    for i, h in enumerate(starts):
        end = next((x for x in hooks if x["t"] >= h["t"] and x["phase"] in ("completed", "failed", "timedOut")
                    and x is not h), None)
        took = f"{end['t'] - h['t']:.3f} s ({end['phase']})" if end else "did not finish"
        again = ": the container was killed again" if i else ""
        nth = "" if len(starts) == 1 else f" (run {i + 1} of {len(starts)}{again})"
        out.append(Step(h["t"], f"{c}: preStop hook{nth} took {took}", _HOOK_HOME))
    return out


def _last_log(logs: list[dict[str, Any]], ids: set[str], c: str, t: float, needle: str
              ) -> dict[str, Any] | None:
    """The container's last kubelet line containing ``needle`` by ``t``; legacy lines name only its runtime id."""
    hits = [r for r in logs if r["t"] <= t and needle in r["message"] and any(i in r["message"] for i in ids)
            and ('containerName="' not in r["message"] or f'containerName="{c}"' in r["message"])]
    return hits[-1] if hits else None


def _first_log(logs: list[dict[str, Any]], ids: set[str], c: str, t0: float, t1: float, needle: str
               ) -> dict[str, Any] | None:
    hits = [r for r in logs if t0 <= r["t"] <= t1 and needle in r["message"] and any(i in r["message"] for i in ids)
            and ('containerName="' not in r["message"] or f'containerName="{c}"' in r["message"])]
    return hits[0] if hits else None


def _grace_of(r: dict[str, Any]) -> float | None:
    m = re.search(r"using (-?\d+) second grace period override|with (-?\d+) second grace period|"
                  r'gracePeriod=(-?\d+)', r["message"])
    if not m:
        return None
    return int(next(g for g in m.groups() if g is not None))


def render_lines(obj: str, target: float, steps: list[Step]) -> list[str]:
    out = [f"{obj}: why {target:g}s"]
    for s in steps:
        out.append(f"  {s.t:9.3f}s  {s.text}")
        out.append(f"             ↳ {s.home}")
    return out

"""The condition of ``podlife advance --until`` (and ``POST /podlife/advance?until=...``): one check of a
scenario's ``expect:`` (docs/scenario-format.md section 2.3) written on one line, judged on the store as clients
see it after each instant the kernel runs.

    pod/web-0 phase Running              phase: Running
    pod/web-0 ready [true|false]         ready: true
    pod/web-0 condition Ready[=False] [reason=R]   condition: {type: Ready, status: "True"}
    pod/web-0 containerState app terminated [reason=Error] [exitCode=1]
    pod/web-0 deleted [true|false]       deleted: true (gone from the store)
    node/node-2 nodeReady Unknown        nodeReady: "Unknown"
    node/node-2 taint node.kubernetes.io/unreachable[:NoExecute]
    deployment/web readyReplicas 3       status.readyReplicas equals 3 (a workload's count of ready replicas)

The object is kind/name or kind/namespace/name (namespace default), as ``expect:``'s ``object`` field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from podlife.api.meta import KINDS, Obj, get_condition, kind_from_name

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")   # scenario.load POD_PHASES
CONTAINER_STATES = ("waiting", "running", "terminated")
STATUSES = ("True", "False", "Unknown")
CHECKS = ("phase", "ready", "condition", "containerState", "deleted", "nodeReady", "taint", "readyReplicas")
_NODE_CHECKS = ("nodeReady", "taint")
_POD_CHECKS = ("phase", "ready", "containerState")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?\Z")
EXAMPLE = "e.g. 'pod/web-0 condition Ready', 'pod/web-0 phase Running' or 'deployment/web readyReplicas 3'"


class ConditionError(ValueError):
    """The condition is not written in the language above (the message says what was expected)."""


@dataclass(frozen=True)
class Condition:
    text: str
    kind: str
    namespace: str | None
    name: str
    check: str
    value: Any

    def holds(self, store: Any) -> bool:
        try:
            obj = store.try_get(self.kind, self.namespace, self.name)
        except KeyError:   # a custom kind nothing was stored of yet
            obj = None
        if self.check == "deleted":
            return (obj is None) == self.value
        return obj is not None and _holds(self.check, self.value, obj)


def parse(text: str, kinds: dict[str, Any]) -> Condition:
    """``kinds``: the store's kinds (a custom resource's kind is found by its kind or plural name)."""
    words = text.split()
    if len(words) < 2:
        raise ConditionError(f'until: "{text}" is not OBJECT CHECK [VALUE]; {EXAMPLE}')
    ref, check, args = words[0], words[1], words[2:]
    kind, namespace, name = _object(text, ref, kinds)
    if check not in CHECKS:
        raise ConditionError(f'until: "{check}" is not a check; expected one of {", ".join(CHECKS)}')
    if check in _NODE_CHECKS and kind != "Node":
        raise ConditionError(f"until: {check} needs a node object (node/NAME), got {ref}")
    if check in _POD_CHECKS and kind != "Pod":
        raise ConditionError(f"until: {check} needs a pod object (pod/NAME), got {ref}")
    return Condition(text, kind, namespace, name, check, _value(check, args))


def _object(text: str, ref: str, kinds: dict[str, Any]) -> tuple[str, str | None, str]:
    parts = ref.split("/")
    if len(parts) not in (2, 3) or not all(_NAME.match(p) for p in parts[1:]):
        raise ConditionError(f'until: "{ref}" is not kind/name or kind/namespace/name; expected e.g. pod/web-0, '
                             "pod/default/web-0 or node/node-1")
    kind = kind_from_name(parts[0]) or next(
        (k for k, info in kinds.items() if parts[0].lower() in (k.lower(), info.resource)), None)
    if kind is None:
        raise ConditionError(f'until: unknown kind "{parts[0]}" in "{text}"; expected a kind the cluster serves '
                             "(pod, node, deployment, …)")
    info = KINDS.get(kind) or kinds[kind]
    if not info.namespaced:
        if len(parts) == 3:
            raise ConditionError(f'until: "{ref}": {info.resource} are cluster-scoped; expected {parts[0]}/NAME')
        return kind, None, parts[1]
    return kind, parts[1] if len(parts) == 3 else "default", parts[-1]


def _options(args: list[str], allowed: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for a in args:
        key, eq, val = a.partition("=")
        if not eq or key not in allowed or not val:
            raise ConditionError(f'until: "{a}" is not one of {", ".join(k + "=…" for k in allowed)}')
        out[key] = val
    return out


def _boolean(check: str, args: list[str]) -> bool:
    if not args:
        return True
    if len(args) == 1 and args[0] in ("true", "false"):
        return args[0] == "true"
    raise ConditionError(f"until: {check} takes true or false, got {' '.join(args)}")


def _one(check: str, args: list[str], what: str) -> str:
    if len(args) != 1:
        raise ConditionError(f"until: {check} takes one value ({what}), got {len(args)}")
    return args[0]


def _value(check: str, args: list[str]) -> Any:
    if check in ("ready", "deleted"):
        return _boolean(check, args)
    if check == "phase":
        phase = _one(check, args, "a pod phase")
        if phase not in PHASES:
            raise ConditionError(f'until: phase "{phase}" is not a pod phase; expected one of {", ".join(PHASES)}')
        return phase
    if check == "nodeReady":
        status = _one(check, args, "True, False or Unknown")
        if status not in STATUSES:
            raise ConditionError(f'until: nodeReady "{status}"; expected one of {", ".join(STATUSES)}')
        return status
    if check == "condition":
        if not args:
            raise ConditionError("until: condition takes TYPE[=STATUS] [reason=REASON], e.g. condition Ready")
        ctype, _, status = args[0].partition("=")
        status = status or "True"
        if status not in STATUSES:
            raise ConditionError(f'until: condition status "{status}"; expected one of {", ".join(STATUSES)}')
        return {"type": ctype, "status": status, "reason": _options(args[1:], ("reason",)).get("reason")}
    if check == "containerState":
        if len(args) < 2 or args[1] not in CONTAINER_STATES:
            raise ConditionError("until: containerState takes NAME STATE [reason=R] [exitCode=N], STATE one of "
                                 + ", ".join(CONTAINER_STATES))
        opts = _options(args[2:], ("reason", "exitCode"))
        code = opts.get("exitCode")
        if code is not None and not (code.isdigit() and int(code) <= 255):
            raise ConditionError(f'until: exitCode "{code}" is not an exit status; expected an integer 0-255')
        return {"name": args[0], "state": args[1], "reason": opts.get("reason"),
                "exitCode": int(code) if code is not None else None}
    if check == "taint":
        key, _, effect = _one(check, args, "KEY[:EFFECT]").partition(":")
        return {"key": key, "effect": effect or None}
    count = _one(check, args, "a number of replicas")
    if not count.isdigit():
        raise ConditionError(f'until: readyReplicas "{count}" is not a number; expected an integer >= 0')
    return int(count)


def _holds(check: str, v: Any, obj: Obj) -> bool:
    status = obj.get("status") or {}
    if check == "phase":
        return status.get("phase") == v
    if check in ("ready", "nodeReady", "condition"):
        ctype = v["type"] if check == "condition" else "Ready"
        cond = get_condition(obj, ctype)
        if cond is None:
            return False
        if check == "ready":
            return (cond.get("status") == "True") == v
        if check == "nodeReady":
            return cond.get("status") == v
        return cond.get("status") == v["status"] and v["reason"] in (None, cond.get("reason"))
    if check == "containerState":
        for cs in (*(status.get("initContainerStatuses") or ()), *(status.get("containerStatuses") or ())):
            if cs.get("name") == v["name"]:
                state = (cs.get("state") or {}).get(v["state"])
                return state is not None and v["reason"] in (None, state.get("reason")) and (
                    v["exitCode"] is None or state.get("exitCode") == v["exitCode"])
        return False
    if check == "taint":
        return any(t.get("key") == v["key"] and v["effect"] in (None, t.get("effect"))
                   for t in (obj.get("spec") or {}).get("taints") or ())
    return (status.get("readyReplicas") or 0) == v

"""``spec.expect``: the object, the one check with its value, and the timing of each expectation."""

from __future__ import annotations

from typing import Any

from podlife.api import schema
from podlife.api.meta import KINDS
from podlife.scenario.clusterconfig import TAINT_EFFECTS
from podlife.scenario.durations import format_duration
from podlife.scenario.fieldcheck import DNS_LABEL, KIND_NAME, Check, is_subdomain
from podlife.scenario.fieldpath import count_items, describe
from podlife.scenario.model import Expectation

POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
CONTAINER_STATES = ("waiting", "running", "terminated")
_POD_KINDS = ("pod", "pods", "po")
_NODE_KINDS = ("node", "nodes", "no")
# check → kinds it applies to (None: any kind)
_CHECK_KINDS: dict[str, tuple[str, ...] | None] = {
    "deleted": None,
    "phase": _POD_KINDS,
    "ready": _POD_KINDS,
    "condition": None,  # any kind with status.conditions
    "containerState": _POD_KINDS,
    "nodeReady": _NODE_KINDS,
    "taint": _NODE_KINDS,
}
EXPECT_CHECKS = tuple(_CHECK_KINDS)
_EXPECT_FIELDS = ("object", "namespace", "description") + EXPECT_CHECKS + ("by", "at", "after", "always")
_TIMINGS: tuple[set[str], ...] = ({"by"}, {"at"}, {"always"}, {"after"}, {"after", "by"}, set())


def parse_expectation(ck: Check, value: Any, path: str, until: float | None,
                 kinds: dict[str, schema.ServedKind]) -> Expectation:
    raw = ck.mapping(value, path, _EXPECT_FIELDS, optional=False)
    kind, namespace, name = _object_ref(ck, raw, path)
    served = kinds.get(kind)
    if served is None:
        raise ck.error(f"{path}.object", f'unknown kind "{kind}"; expected a kind the Kubernetes version serves '
                                         "(pod, node, deployment, …) or one a CustomResourceDefinition of the "
                                         "scenario defines")
    if served.kind not in KINDS:
        kind = served.kind
    checks = [c for c in EXPECT_CHECKS if c in raw]
    if len(checks) != 1:
        found = f"found {', '.join(checks)}" if checks else "found none"
        raise ck.error(path, f"expected exactly one check among {', '.join(EXPECT_CHECKS)}; {found}")
    check = checks[0]
    applies = _CHECK_KINDS[check]
    if applies is not None and kind not in applies:
        needs = "a node" if applies == _NODE_KINDS else "a pod"
        example = "node/NAME" if applies == _NODE_KINDS else "pod/NAME"
        raise ck.error(f"{path}.{check}", f'needs {needs} object (e.g. object: {example}), got "{raw["object"]}"')
    exp = Expectation(object=f"{kind}/{name}", namespace=namespace, check=check,
                      value=_check_value(ck, check, raw[check], f"{path}.{check}"), source=ck.source(path),
                      namespaced=served.namespaced)
    if raw.get("description") is not None:
        exp.description = ck.string(raw["description"], f"{path}.description")
    _timing(ck, raw, path, exp, until)
    return exp


def _object_ref(ck: Check, raw: dict[str, Any], path: str) -> tuple[str, str, str]:
    opath = f"{path}.object"
    text = ck.string(ck.required(raw, "object", path, "kind/name or kind/namespace/name, e.g. pod/web-0"),
                     opath, "kind/name or kind/namespace/name")
    parts = text.split("/")
    bad = (len(parts) not in (2, 3) or not KIND_NAME.match(parts[0]) or not is_subdomain(parts[-1])
           or (len(parts) == 3 and not DNS_LABEL.match(parts[1])))
    if bad:
        raise ck.error(opath, f'"{text}" is not kind/name or kind/namespace/name; expected e.g. pod/web-0, '
                              "pod/default/web-0 or node/node-1")
    kind, name = parts[0].lower(), parts[-1]
    namespace = "default"
    if raw.get("namespace") is not None:
        namespace = ck.dns_label(raw["namespace"], f"{path}.namespace")
    if len(parts) == 3:
        if kind in _NODE_KINDS:
            raise ck.error(opath, f'"{text}": nodes are cluster-scoped; expected node/NAME')
        if raw.get("namespace") is not None and namespace != parts[1]:
            raise ck.error(f"{path}.namespace", f'"{namespace}" differs from the namespace "{parts[1]}" in '
                                                "object; expected the same namespace or only one of them")
        namespace = parts[1]
    return kind, namespace, name


def _check_value(ck: Check, check: str, value: Any, path: str) -> Any:
    if check in ("deleted", "ready"):
        return ck.boolean(value, path)
    if check == "phase":
        return ck.one_of(value, path, POD_PHASES, "pod phase")
    if check == "nodeReady":
        return ck.status(value, path)
    if check == "condition":
        cond = ck.mapping(value, path, ("type", "status", "reason"), optional=False)
        return {"type": ck.nonempty(ck.required(cond, "type", path, "a condition type, e.g. Ready"),
                                    f"{path}.type", "a condition type"),
                "status": ck.status(ck.required(cond, "status", path, '"True", "False" or "Unknown"'),
                                    f"{path}.status"),
                "reason": _opt_str(ck, cond, "reason", path)}
    if check == "containerState":
        return _container_state(ck, value, path)
    return _taint_check(ck, value, path)


def _opt_str(ck: Check, m: dict[str, Any], key: str, path: str) -> str | None:
    return ck.string(m[key], f"{path}.{key}") if m.get(key) is not None else None


def _container_state(ck: Check, value: Any, path: str) -> dict[str, Any]:
    cs = ck.mapping(value, path, ("name", "state", "reason", "exitCode"), optional=False)
    state = ck.one_of(ck.required(cs, "state", path, f"one of {', '.join(CONTAINER_STATES)}"),
                      f"{path}.state", CONTAINER_STATES, "container state")
    exit_code = None
    if cs.get("exitCode") is not None:
        exit_code = ck.integer(cs["exitCode"], f"{path}.exitCode", bits=32)
        if not 0 <= exit_code <= 255:
            # ContainerStateTerminated.exitCode is an int32, but a Linux process's exit status is 8 bits (and a
            # signal's death 128+n): such an expectation could never be met
            raise ck.error(f"{path}.exitCode", f"{exit_code} is not an exit status; expected an integer 0-255 (a "
                                               f"process's exit status is 8 bits: `exit {exit_code}` is seen as "
                                               f"{exit_code & 0xFF})")
        if state != "terminated":
            raise ck.error(f"{path}.exitCode", f"only a terminated container has an exit code; expected "
                                               f"state: terminated, got {state}")
    return {"name": ck.dns_label(ck.required(cs, "name", path, "a container name"), f"{path}.name"),
            "state": state, "reason": _opt_str(ck, cs, "reason", path), "exitCode": exit_code}


def _taint_check(ck: Check, value: Any, path: str) -> dict[str, Any]:
    if isinstance(value, str):
        ck.label_key(value, path)
        return {"key": value, "effect": None}
    taint = ck.mapping(value, path, ("key", "effect"), optional=False)
    key = ck.string(ck.required(taint, "key", path, "a taint key"), f"{path}.key", "a taint key")
    ck.label_key(key, f"{path}.key")
    effect = None
    if taint.get("effect") is not None:
        effect = ck.one_of(taint["effect"], f"{path}.effect", TAINT_EFFECTS, "taint effect")
    return {"key": key, "effect": effect}


def _timing(ck: Check, raw: dict[str, Any], path: str, exp: Expectation, until: float | None) -> None:
    given = {k for k in ("by", "at", "after", "always") if raw.get(k) is not None}
    if given not in _TIMINGS:
        raise ck.error(path, f"conflicting timing {', '.join(sorted(given))}; expected one of by, at, always, "
                             "or after (optionally with by)")
    for key in ("by", "at", "after"):
        if key in given:
            setattr(exp, key, ck.duration(raw[key], f"{path}.{key}"))
    if "always" in given:
        apath = f"{path}.always"
        span = raw["always"]
        if not isinstance(span, list) or len(span) != 2:
            got = f"a list of {count_items(len(span))}" if isinstance(span, list) else describe(span)
            raise ck.error(apath, f"expected a list [from, to] of two durations, got {got}")
        start, end = ck.duration(span[0], f"{apath}[0]"), ck.duration(span[1], f"{apath}[1]")
        if start > end:
            raise ck.error(apath, f"from {format_duration(start)} is after to {format_duration(end)}; "
                                  "expected from <= to")
        exp.always = (start, end)
    if exp.after is not None and exp.by is not None and exp.after > exp.by:
        raise ck.error(f"{path}.after", f"{format_duration(exp.after)} is after by {format_duration(exp.by)}; "
                                        "expected after <= by")
    latest = max([t for t in (exp.by, exp.at, exp.after) if t is not None] + list(exp.always or ()), default=None)
    if until is not None and latest is not None and latest > until:
        ck.warn(path, f"checks up to {format_duration(latest)}, after spec.until ({format_duration(until)})")

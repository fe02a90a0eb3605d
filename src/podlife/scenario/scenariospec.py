"""The Scenario document: apiVersion, kind, metadata and the spec fields (version, start time, seed, until),
with each part of the spec checked by its own module, in the documented field order."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from podlife.api import schema
from podlife.runtime.behavior import BehaviorError, BehaviorRule, check_fields
from podlife.scenario.actionspec import check_action_kind, parse_action
from podlife.scenario.assumptions import object_ref, unmatched_rules
from podlife.scenario.clusterconfig import cluster_spec, node_entry
from podlife.scenario.durations import format_duration
from podlife.scenario.expectspec import parse_expectation
from podlife.scenario.fieldcheck import Check
from podlife.scenario.fieldpath import describe, join_path
from podlife.scenario.manifests import decode_strictly, read_objects
from podlife.cluster.spec import NodeSpec
from podlife.scenario.model import DEFAULT_START_TIME, HORIZON_SECONDS, Scenario
from podlife.scenario.writecheck import check_updates
from podlife.trace.recorder import LAST_TIME
from podlife.versions import MODELLED_VERSIONS, NEWEST, profile

API_VERSION = "podlife/v1alpha1"
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z")
MAX_UNTIL = 7 * 24 * 3600.0          # the longest simulated span podlife runs (a week)


def scenario_spec(ck: Check, data: Any) -> Scenario:
    top = ck.mapping(data, "", ("apiVersion", "kind", "metadata", "spec"), optional=False)
    api_version = ck.required(top, "apiVersion", "", f'"{API_VERSION}"')
    if api_version != API_VERSION:
        raise ck.error("apiVersion", f'{describe(api_version)} is not supported; expected "{API_VERSION}"')
    kind = ck.required(top, "kind", "", '"Scenario"')
    if kind != "Scenario":
        raise ck.error("kind", f'{describe(kind)} is not supported; expected "Scenario"')
    meta = ck.mapping(ck.required(top, "metadata", "", "a mapping with name"), "metadata",
                      ("name", "description"))
    name = ck.dns_label(ck.required(meta, "name", "metadata", "a DNS-1123 label, e.g. my-scenario"),
                        "metadata.name")
    description = ck.string(meta["description"], "metadata.description") \
        if meta.get("description") is not None else ""

    spec = ck.mapping(top.get("spec"), "spec", ("kubernetesVersion", "startTime", "seed", "until", "cluster",
                                                "objects", "objectsFrom", "clusterFrom", "behaviors", "actions",
                                                "expect"))
    if spec.get("clusterFrom") is not None:   # podlife.importer.declared reads it, and sets it aside when it does
        raise ck.error("spec.clusterFrom", "names cluster dumps, which only podlife run and podlife diff read; "
                                           "expected this command's scenario without it (or its dump given to "
                                           "podlife up --from)")
    # validated in the documented field order, so the first error reported is the first one in the file
    version = _version(ck, spec.get("kubernetesVersion"), "spec.kubernetesVersion")
    start_time = _start_time(ck, spec.get("startTime"), "spec.startTime")
    seed = ck.integer(spec["seed"], "spec.seed", 0) if spec.get("seed") is not None else 0
    until = ck.duration(spec["until"], "spec.until") if spec.get("until") is not None else None
    if until is not None and not 0 < until <= MAX_UNTIL:
        wrong = "not greater than 0" if until <= 0 else "longer than a week"
        raise ck.error("spec.until", f"{describe(spec['until'])} is {wrong}; "
                                     f"expected a duration > 0 and at most {format_duration(MAX_UNTIL)}")
    _fits_the_calendar(ck, start_time, until, spec)
    cluster = cluster_spec(ck, spec.get("cluster"), version)
    api = profile(version, cluster.featureGates)   # the API server's behaviour, with the cluster's gates
    objects, pending = read_objects(ck, spec.get("objects"), spec.get("objectsFrom"))
    behaviors = tuple(_behavior_rule(ck, b, f"spec.behaviors[{i}]")
                      for i, b in enumerate(ck.sequence(spec.get("behaviors"), "spec.behaviors")))
    node_names = [n.name for n in cluster.nodes]
    joined: list[NodeSpec] = list(cluster.nodes)  # nodes that join later may be named by any action
    raw_actions = ck.sequence(spec.get("actions"), "spec.actions")
    for i, a in enumerate(raw_actions):
        if isinstance(a, dict) and "join" in a:
            joined.extend(node_entry(ck, a["join"], f"spec.actions[{i}].join", joined, []))
    node_names = [n.name for n in joined]
    actions = [parse_action(ck, a, f"spec.actions[{i}]", node_names, until)
               for i, a in enumerate(raw_actions)]
    pending += [(ck, a.manifest, f"spec.actions[{i}].{a.verb}") for i, a in enumerate(actions)
                if a.manifest is not None]
    notes: list[tuple[dict[str, Any], str, str]] = []
    crds = decode_strictly(pending, api, notes)
    minor = int(version.split(".")[1])
    kinds = schema.kind_names(minor, crds)
    for i, a in enumerate(actions):
        check_action_kind(ck, a, f"spec.actions[{i}]", kinds, minor)
    check_updates(ck, objects, actions, cluster, api)
    by_name = {n.name: n for n in joined}
    for a in actions:
        if a.verb == "join":
            a.nodes = [by_name[n] for n in a.raw_join_names]
    expect = [parse_expectation(ck, e, f"spec.expect[{i}]", until, kinds)
              for i, e in enumerate(ck.sequence(spec.get("expect"), "spec.expect"))]
    manifests = [m.obj for m in objects] + [a.manifest for a in actions if a.manifest is not None]
    for i in unmatched_rules(manifests, behaviors):
        ck.warn(f"spec.behaviors[{i}]", "matches no container of the scenario's manifests; it has no effect")
    return Scenario(name=name, description=description, kubernetes_version=version, start_time=start_time,
                    seed=seed, until=until, cluster=cluster, objects=objects, actions=actions, expect=expect,
                    path=ck.file, warnings=ck.warnings, behaviors=behaviors,
                    field_notes=[(object_ref(obj), f"{sub}: {message}") for obj, sub, message in notes])


def _behavior_rule(ck: Check, value: Any, path: str) -> BehaviorRule:
    """spec.behaviors[i]: glob patterns (pod, container, image) and the behaviour fields of section 2.1."""
    m = ck.mapping(value, path, ("pod", "container", "image", "behavior"), optional=False)
    patterns = {k: ck.nonempty(m[k], join_path(path, k), "a glob pattern") if m.get(k) is not None else None
                for k in ("pod", "container", "image")}
    fields = ck.mapping(ck.required(m, "behavior", path, "a mapping of podlife/behavior fields"),
                        join_path(path, "behavior"))
    try:
        check_fields(fields, "")
    except BehaviorError as e:
        raise ck.error(f"{path}.behavior.{e.path}", str(e).split(": ", 1)[-1]) from None
    return BehaviorRule(fields=dict(fields), **patterns)


def version_range() -> str:
    versions = [str(v) for v in MODELLED_VERSIONS]
    minors = [v.partition(".")[2] for v in versions]
    if all(m.isdigit() for m in minors) and [int(m) for m in minors] == list(
            range(int(minors[0]), int(minors[0]) + len(minors))):
        return f'"{versions[0]}" … "{versions[-1]}"'
    return ", ".join(f'"{v}"' for v in versions)


def _version(ck: Check, value: Any, path: str) -> str:
    if value is None:
        return NEWEST
    if isinstance(value, float):
        text = ck.raw.texts.get(path, str(value))
        if str(value) != text:  # 1.20 reads as 1.2
            raise ck.error(path, f'{text} is read by YAML as the number {value}; quote the version, '
                                 f'e.g. "{text}"')
        if str(value) in MODELLED_VERSIONS:
            return str(value)
        raise ck.error(path, f"{value} is not a modelled version; expected a quoted minor version, "
                             f"one of {version_range()}")
    if not isinstance(value, str):
        raise ck.error(path, f'expected a quoted minor version such as "{NEWEST}", got {describe(value)}')
    if value not in MODELLED_VERSIONS:
        raise ck.error(path, f'"{value}" is not a modelled version; expected a minor version, one of '
                             f"{version_range()}")
    return value


def _fits_the_calendar(ck: Check, start: datetime, until: float | None, spec: dict[str, Any]) -> None:
    """Every instant of the run must have an RFC 3339 timestamp (a four-digit year, as metav1.Time and Go's
    RFC 3339 encoding need): startTime plus the run's span (spec.until, else HORIZON_SECONDS) ends by
    9999-12-31T23:59:59Z."""
    span = until if until is not None else HORIZON_SECONDS
    if (LAST_TIME - start).total_seconds() >= span:
        return
    latest = (LAST_TIME - timedelta(seconds=span)).strftime("%Y-%m-%dT%H:%M:%SZ")
    what = f"ends {format_duration(span)} after it (spec.until)" if until is not None else \
        f"may last {format_duration(span)} (the longest without spec.until)"
    raise ck.error("spec.startTime", f"{describe(spec.get('startTime'))} is too late: the run {what}, past "
                                     "9999-12-31T23:59:59Z, the last time a timestamp can express; expected a time at "
                                     f"or before {latest}")


def _start_time(ck: Check, value: Any, path: str) -> datetime:
    if value is None:
        return DEFAULT_START_TIME
    m = _RFC3339.match(value) if isinstance(value, str) else None
    try:
        if not m:
            raise ValueError
        y, mo, d, h, mi, s, frac, _, sign, oh, om = m.groups()
        micro = int((frac or "0")[:6].ljust(6, "0"))
        offset = timedelta(hours=int(oh), minutes=int(om)) * (-1 if sign == "-" else 1) if sign else timedelta()
        return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro,
                        tzinfo=timezone(offset)).astimezone(UTC)
    except (ValueError, OverflowError):
        raise ck.error(path, f"{describe(value)} is not an RFC 3339 time; expected e.g. "
                             '"2020-06-03T20:39:30Z"') from None


# ------------------------------------------------------------------------------------------------ cluster

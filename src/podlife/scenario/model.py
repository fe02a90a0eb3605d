"""The parsed scenario: what ``podlife run`` executes. Built by ``podlife.scenario.load``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from podlife.cluster.spec import ClusterSpec, NodeSpec
from podlife.runtime.behavior import BehaviorRule

DEFAULT_START_TIME = datetime(2025, 1, 1, tzinfo=UTC)   # a scenario's clock starts here unless it says


HORIZON_SECONDS = 3600.0   # without spec.until a run stops when nothing is pending, at the latest here


@dataclass
class Source:
    """Where something came from, for error messages: file, line (1-based, None if unknown), field path."""

    file: str
    line: int | None
    path: str

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Action:
    """One of the scenario's actions: what is done, to what, and when."""

    at: float                      # seconds since start
    verb: str                      # a key of scenario.actionspec.ACTION_FIELDS (the table of verbs)
    target: str | None             # "kind/name" for delete/scale/patch, node name for cordon/uncordon/drain
    namespace: str = "default"
    manifest: dict[str, Any] | None = None          # create / apply
    replicas: int | None = None                     # scale
    merge_patch: dict[str, Any] | None = None       # patch
    strategic: bool = False                         # patch: merge_patch is a strategic merge patch
    subresource: str | None = None                  # patch: "status" (kubectl patch --subresource=status)
    grace_period_seconds: int | None = None         # delete, evict
    drain_options: Any = None                       # drain: podlife.kubectl.drain.DrainOptions
    force: bool = False                             # delete
    propagation_policy: str | None = None           # delete: Background | Foreground | Orphan
    fault: "Fault | None" = None
    nodes: "list[NodeSpec] | None" = None          # join: the nodes whose kubelets start
    raw_join_names: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)  # the action as written, for the trace record
    source: Source | None = None


@dataclass
class Fault:
    """A fault an action injects: its type, where, and its parameters."""

    type: str
    node: str | None = None
    pod: str | None = None          # namespace/name ("default/" added when no namespace is given)
    container: str | None = None
    image: str | None = None
    value: str | None = None        # MemoryUsage / DiskUsage quantity
    for_seconds: float | None = None  # heal after this long; None = never
    source: Source | None = None


@dataclass
class Expectation:
    """One of the scenario's expectations: what must hold of an object, and by when."""

    object: str                    # kind/name as written, e.g. pod/web-0 or node/node-1
    namespace: str                 # default unless object gives one (kind/namespace/name) or field namespace
    check: str                     # deleted | phase | ready | condition | containerState | nodeReady | taint
    value: Any                     # True / "Running" / {"type":..,"status":..} / {"name":..,"state":..,"reason":..}
    description: str = ""
    by: float | None = None
    at: float | None = None
    after: float | None = None
    always: tuple[float, float] | None = None
    source: Source | None = None
    namespaced: bool = True        # the kind's scope (for kinds podlife stores without modelling)


@dataclass
class Manifest:
    """An object of the scenario with where it was written."""

    obj: dict[str, Any]
    source: Source


@dataclass
class Scenario:
    """A loaded and checked scenario: cluster, objects, actions, expectations."""

    name: str
    description: str
    kubernetes_version: str        # "1.18" … newest modelled
    start_time: datetime           # timezone-aware UTC
    seed: int
    until: float | None            # None: run until nothing is pending, at most 3600 s
    cluster: ClusterSpec
    objects: list[Manifest]
    actions: list[Action]
    expect: list[Expectation]
    path: str
    warnings: list[str] = field(default_factory=list)
    behaviors: tuple[BehaviorRule, ...] = ()   # spec.behaviors, first match wins
    # (object ref, "FIELD: message") of each not-modelled field a manifest sets (podlife.api.fieldsupport)
    field_notes: list[tuple[str, str]] = field(default_factory=list)

"""Running a scenario: build the cluster, create the objects, apply actions on time, judge expectations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from podlife.api.errors import ApiError
from podlife.cluster import Cluster
from podlife.engine import few_collections
from podlife.report.figures import Figures
from podlife.runtime.behavior import ANNOTATION, BehaviorError, parse_annotation
from podlife.scenario.actions import USER, apply_action
from podlife.scenario.errors import ScenarioError
from podlife.scenario.expectations import Verdict, evaluate, object_ref
from podlife.scenario.model import HORIZON_SECONDS, Manifest, Scenario, Source
from podlife.trace.recorder import Batched, Record

if TYPE_CHECKING:
    from podlife.api.storage import Persisted

MAX_SECONDS = HORIZON_SECONDS


@dataclass
class Result:
    """A finished run: the cluster, its end, the verdicts and the pod tables."""

    scenario: Scenario
    cluster: Cluster
    end: float
    verdicts: list[Verdict]
    pods_at: list[tuple[float, list[dict[str, Any]]]] = field(default_factory=list)  # (t, kubectl rows)
    figures: dict[str, Any] | None = None   # the aggregate figures (below --trace full, or a streamed run)

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)


def _check_behaviors(m: Manifest) -> None:
    """A bad podlife/behavior annotation is the user's error: report it with the manifest's place. So is one
    that names a container the pod does not have (it would be ignored)."""
    from podlife.scenario.assumptions import pod_like

    obj = m.obj
    pod = pod_like(obj)
    if pod is None:
        return
    md, path = pod.get("metadata") or {}, "metadata" if pod is obj else _template_path(obj)
    text = (md.get("annotations") or {}).get(ANNOTATION)
    if text is None:
        return
    where = f"{m.source.path + '.' if m.source.path else ''}{path}.annotations[{ANNOTATION}]"
    if not isinstance(text, str):
        raise ScenarioError(m.source.file, m.source.line, where, "expected a string of YAML")
    try:
        named = parse_annotation(text)
    except BehaviorError as e:
        raise ScenarioError(m.source.file, m.source.line, f"{where}.{e.path}" if e.path else where,
                            str(e).split(": ", 1)[-1]) from None
    spec = pod.get("spec") or {}
    containers = [c.get("name") for c in list(spec.get("initContainers") or ()) + list(spec.get("containers") or ())
                  if isinstance(c, dict)]
    for cname in named:
        if cname not in containers:
            raise ScenarioError(m.source.file, m.source.line, f"{where}.{cname}",
                                f"the pod has no container {cname!r}; expected one of: "
                                f"{', '.join(str(c) for c in containers)}")


def _template_path(obj: dict[str, Any]) -> str:
    return "spec.jobTemplate.spec.template.metadata" if obj.get("kind") == "CronJob" else "spec.template.metadata"


def build(sc: Scenario, *, trace_level: str = "full", keep_trace: bool = True,
          trace_sinks: Sequence[Callable[[Record], None] | Batched] = (), process_host: Any = None,
          persisted: Persisted | None = None, manage: Any = None,
          api_address: tuple[str, int] | None = None) -> Cluster:
    c = sc.cluster
    return Cluster(version=sc.kubernetes_version, seed=sc.seed, start_time=sc.start_time, nodes=c.nodes,
                   kubelet=c.kubelet, scheduler=c.scheduler, controller_manager=c.controllerManager,
                   api_server=c.apiServer, behaviors=sc.behaviors, trace_level=trace_level, keep_trace=keep_trace,
                   trace_sinks=trace_sinks, process_host=process_host, persisted=persisted,
                   manage=manage, feature_gates=c.featureGates, api_address=api_address)


# a table "at t" shows the state once everything that happens at t has happened
_AFTER_INSTANT = 1e-7


def pod_table(cluster: Cluster, t: float) -> list[dict[str, Any]]:
    """kubectl get pods, as it would print at simulated time ``t``."""
    from podlife.printers import pod_row

    now = cluster.trace.start_time + timedelta(seconds=t)
    return [pod_row(p, now) for p in cluster.store.list("Pod")]   # in key order: namespace, then name


def run(sc: Scenario, pods_at: list[float] | None = None, *, trace_level: str = "full", keep_trace: bool = True,
        sinks: Sequence[Callable[[Record], None] | Batched] = (),
        builder: Callable[..., Cluster] | None = None) -> Result:
    """Run the scenario. ``trace_level`` (full, objects, summary) says which records are made; ``keep_trace``
    whether they are kept in memory (a streamed run hands them to ``sinks`` as they are made, or in lists to
    ``Batched`` ones, and keeps only the ones its expectations look at). Below ``full``, or when the records are
    not kept, the run also counts its figures (podlife.report.figures). ``builder`` makes the cluster (default
    ``build``, looked up at the call; an imported cluster's: podlife.importer.restore.build)."""
    for m in sc.objects:
        _check_behaviors(m)
    for a in sc.actions:
        if a.manifest is not None and a.source is not None:
            _check_behaviors(Manifest(a.manifest, Source(a.source.file, a.source.line, f"{a.source.path}.{a.verb}")))
    with few_collections():
        return _run(sc, pods_at, trace_level, keep_trace, sinks, builder)


def _run(sc: Scenario, pods_at: list[float] | None, trace_level: str, keep_trace: bool,
         sinks: Sequence[Callable[[Record], None] | Batched], builder: Callable[..., Cluster] | None = None) -> Result:
    all_sinks = list(sinks)
    figures = Figures() if trace_level != "full" or not keep_trace else None
    if figures is not None:
        all_sinks.append(Batched(figures.add_all))
    watched: list[Record] = []
    if not keep_trace and sc.expect:
        # expectations judge the records of their objects only: those are all a streamed run keeps
        objects = {object_ref(e) for e in sc.expect}
        all_sinks.append(lambda r: watched.append(r) if r.get("object") in objects else None)
    options: dict[str, Any] = {}
    if trace_level != "full" or not keep_trace or all_sinks:
        options = {"trace_level": trace_level, "keep_trace": keep_trace, "trace_sinks": all_sinks}
    cluster = (builder or build)(sc, **options)
    trace = cluster.trace
    for m in sc.objects:
        try:
            cluster.store.create(m.obj, by=USER)
        except ApiError as e:
            where = m.source.path or "objects"
            raise ScenarioError(m.source.file, m.source.line, where, e.message) from None
    for a in sc.actions:
        cluster.kernel.call_at(a.at, lambda a=a: apply_action(cluster, a))
    tables: list[tuple[float, list[dict[str, Any]]]] = []
    instants = sorted(set(pods_at or []))
    kernel = cluster.kernel
    if sc.until is not None:
        # an instant at or past ``until`` never comes: the end's table stands for it
        for t in instants:
            kernel.call_at(t + _AFTER_INSTANT, lambda t=t: tables.append((t, pod_table(cluster, t))))
        kernel.run(until=sc.until)
        end = sc.until
    else:
        # a run without ``until`` ends when nothing is left to happen, so the tables are taken between events
        # rather than scheduled (a scheduled one would keep the run going to its instant); an instant at or after
        # the last event is the end, whose table comes below
        while (due := kernel.next_live()) <= MAX_SECONDS:
            while instants and instants[0] < due:
                t = instants.pop(0)
                tables.append((t, pod_table(cluster, t)))
            kernel.step()
        end = kernel.now if kernel.idle() else MAX_SECONDS
    trace.drain()
    cluster.materialize()
    verdicts = [evaluate(e, trace.records if keep_trace else watched, end) for e in sc.expect]
    tables.append((end, pod_table(cluster, end)))
    return Result(sc, cluster, end, verdicts, tables,
                  figures.result(cluster.store) if figures is not None else None)

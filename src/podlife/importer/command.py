"""What the commands do with dumps (podlife import, run --from, diff --from, up --from): read and clean them,
make the scenario run over the imported cluster, write the cleaned cluster, and say what was read."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from podlife.importer.dump import Dump, load_dump
from podlife.importer.errors import DumpError



def read(paths: Sequence[str], namespaces: Sequence[str] = (), selector: str | None = None,
         anonymize: bool = False, calibrate: str | None = None) -> Dump:
    if not paths:
        raise DumpError("--from", "expected a dump: a file or directory from kubectl get ... -o yaml")
    from podlife.engine.gcpolicy import few_collections

    with few_collections():   # what is read becomes the cluster's objects: as a run's, not traced again and again
        dump = load_dump(paths, namespaces, selector, anonymize)
        if calibrate is not None:
            from podlife.importer.calibrate import calibrate as derive

            derive(dump, calibrate)
    return dump


def scenario(dump: Dump, path: str, overrides: Sequence[str] = (), *, kubernetes_version: str | None = None,
             seed: int | None = None, until: str | None = None, text: str | None = None) -> Any:
    """The scenario, run over the dump's cluster: its nodes are the dump's (so that actions may name them), its
    start the dump's instant, its version the one given, else the scenario's, else the dump's kubelets'."""
    import orjson
    import yaml

    from podlife.api import yamlread
    from podlife.scenario.load import load_scenario, read_text

    text = read_text(path) if text is None else text
    try:
        raw = yamlread.safe_load(text)
    except yaml.YAMLError:
        raw = None   # load_scenario reports it
    spec: dict[str, Any] = raw["spec"] if isinstance(raw, dict) and isinstance(raw.get("spec"), dict) else {}
    given_nodes = isinstance(spec.get("cluster"), dict) and spec["cluster"].get("nodes") is not None
    if kubernetes_version is None and spec.get("kubernetesVersion") is None and dump.version is not None:
        kubernetes_version = dump.version
    nodes = [{"name": n["metadata"]["name"]} for n in dump.of("Node")]
    sets = [*overrides, "spec.clusterFrom=null",   # the dumps it names are these (declared.named_dumps)
            "spec.cluster.nodes=" + orjson.dumps(nodes).decode(),
            "spec.startTime=" + dump.taken.strftime("%Y-%m-%dT%H:%M:%SZ")]
    sc = load_scenario(path, sets, kubernetes_version=kubernetes_version, seed=seed, until=until,
                       text=text)
    if given_nodes:
        sc.warnings.append("spec.cluster.nodes: replaced by the dump's nodes (--from)")
    if spec.get("startTime") is not None:
        sc.warnings.append("spec.startTime: replaced by the dump's instant (--from)")
    sc.warnings.extend(dump.warnings)
    return sc


def builder(dump: Dump) -> Callable[..., Any]:
    from podlife.importer import restore

    return functools.partial(restore.build, dump=dump)


def write(dump: Dump, out: str) -> None:
    """The cleaned cluster as one YAML List (what --from reads back)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    head = (f"# podlife import: {len(dump.objects)} objects from {', '.join(dump.files[:3])}"
            f"{' …' if len(dump.files) > 3 else ''}\n# taken at {dump.taken.strftime('%Y-%m-%dT%H:%M:%SZ')}"
            f", Kubernetes {dump.version or 'unknown'}\n")
    import orjson

    from podlife.importer.readers import CALIBRATION

    metadata: dict[str, Any] = {}
    if _is_calibrated(dump):   # --calibrate's timings go with the cluster
        note = {"pullTimes": dump.pull_times, "startLatency": dump.start_latency,
                "sandboxSeconds": dump.sandbox_seconds}
        metadata["annotations"] = {CALIBRATION: orjson.dumps(note).decode()}
    body = yaml.dump({"apiVersion": "v1", "kind": "List", "metadata": metadata, "items": dump.objects},
                     Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(head + body)


def describe(dump: Dump) -> list[str]:
    """What was read, for the import command's output."""
    kinds = Counter(o["kind"] for o in dump.objects)
    lines = [(f"read {len(dump.files)} files: {len(dump.objects)} objects, taken at "
             f"{dump.taken.strftime('%Y-%m-%dT%H:%M:%SZ')}, Kubernetes {dump.version or 'unknown (no Nodes)'}")]
    lines.append("  " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))))
    if dump.events:
        lines.append(f"  {len(dump.events)} Events read (not stored; --calibrate reads them)")
    if dump.logs:
        lines.append(f"  {len(dump.logs)} container log files listed (not needed)")
    if dump.pull_times:
        pulls = sorted(dump.pull_times.items())
        lines.append("  calibrated image pulls: " + ", ".join(f"{i} {s:g}s" for i, s in pulls))
    if dump.start_latency is not None:
        lines.append(f"  calibrated scheduling-to-start latency: median {dump.start_latency:g}s")
    if dump.sandbox_seconds is not None:
        lines.append(f"  calibrated sandbox (scheduled to first container step): median {dump.sandbox_seconds:g}s")
    return lines


def extender(dump: Dump) -> Callable[[dict[str, Any], Any], None]:
    """podlife.report.outputs.ReportWriter's ``extend`` for a run on the dump's cluster."""
    return lambda rep, result: extend(rep, result, dump)


def extend(rep: dict[str, Any], result: Any, dump: Dump) -> None:
    """The report's parts an imported cluster adds: where it came from, the dump's assumptions (before the
    scenario's), and the what-if answers."""
    from podlife.importer.assumed import assumptions

    rep["import"] = {"files": dump.files, "takenAt": dump.taken.strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "kubernetesVersion": dump.version, "objects": len(dump.objects),
                     "nodes": len(dump.of("Node")), "pods": len(dump.of("Pod"))}
    timings = calibrated(dump)
    rep["assumptions"] = assumptions(dump, result.scenario.behaviors, timings) + list(rep.get("assumptions") or ())
    what_if = getattr(result.cluster, "what_if", None)
    if what_if is not None:
        rep["whatIf"] = what_if.result(result.end)


def calibrated(dump: Dump) -> list[str] | None:
    """What --calibrate took from the events, as assumption lines (None: not calibrated)."""
    if not _is_calibrated(dump):
        return None
    out = []
    if dump.pull_times:
        out.append("image pulls (from the events, --calibrate): " + ", ".join(
            f"{i} {s:g}s" for i, s in sorted(dump.pull_times.items())) + "; other images take the default")
    if dump.start_latency is not None:
        out.append(f"scheduling-to-start latency in the events: median {dump.start_latency:g}s (reported; the "
                   "model's own latency comes from pulls, sandbox and start times)")
    if dump.sandbox_seconds is not None:
        out.append(f"pod sandbox (from the events, --calibrate): {dump.sandbox_seconds:g}s on every node, the "
                   "median from Scheduled to a pod's first Pulling/Pulled/Created (the kubelet's sync, "
                   "RunPodSandbox and CNI setup) in place of the runtime's default")
    return out


def _is_calibrated(dump: Dump) -> bool:
    return bool(dump.pull_times) or dump.start_latency is not None or dump.sandbox_seconds is not None

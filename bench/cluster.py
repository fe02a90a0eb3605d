"""Cluster-scale benchmark: the scenario of a real user's question, at chosen sizes.

    python bench/cluster.py [--sizes 1000/10000,5000/50000,5000/150000] [--nodes N --pods P]
                            [--per-deployment 100] [--trace objects] [--report FILE] [--seed 0] [--profile FILE]
                            [--compare-src DIR]

N nodes in 3 zone-labelled groups, Deployments of --per-deployment replicas totalling P pods (each pod requests
100m / 128Mi), 10 % of the nodes partitioned from 10 m to 40 m, one simulated hour, run as
`podlife run --quiet --trace LEVEL --report FILE` runs it (load, run, report). The scenario is generated in
memory; the report is streamed (newline-delimited JSON) to FILE, /dev/null by default, at --trace full it is
the JSON report. Each size runs in a process of its own, so its peak RSS is its own. Printed per size: wall
and CPU time, peak RSS, simulated seconds per wall second, and the ratios to the previous size (pods, wall,
CPU; wall per pod: 1.0 = linear). ``--compare-src DIR`` runs each size with another podlife source tree (its
src/ directory) at the same time, one process per core, so that both see the host as it is at that moment, and
prints the two walls side by side (on a shared host two runs of one tree minutes apart can differ by 10 %).
Not a test: problems are printed as WARNING lines.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import itertools
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import yaml

try:
    import podlife  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

UNTIL = 3600.0


def scenario(nodes: int, pods: int, per_deployment: int, seed: int) -> str:
    deployments = max(-(-pods // per_deployment), 1)
    cut = max(nodes // 10, 1)
    groups = [{"namePrefix": f"z{z}-node-", "count": nodes // 3 + (1 if z < nodes % 3 else 0), "zone": f"zone-{z}",
               "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}} for z in range(3)]
    objects = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app-{d}"},
                "spec": {"replicas": pods // deployments + (1 if d < pods % deployments else 0),
                         "selector": {"matchLabels": {"app": f"app-{d}"}},
                         "template": {"metadata": {"labels": {"app": f"app-{d}"}},
                                      "spec": {"containers": [{"name": "c", "image": "app:1", "resources": {
                                          "requests": {"cpu": "100m", "memory": "128Mi"}}}]}}}}
               for d in range(deployments)]
    actions = [{"at": "10m", "fault": {"type": "NetworkPartition", "node": f"z0-node-{i}", "for": "30m"}}
               for i in range(cut)]
    doc = {"apiVersion": "podlife/v1alpha1", "kind": "Scenario", "metadata": {"name": "cluster"},
           "spec": {"kubernetesVersion": "1.34", "seed": seed, "until": "1h",
                    "cluster": {"nodes": groups}, "objects": objects, "actions": actions}}
    return yaml.safe_dump(doc, sort_keys=False)


def measure(nodes: int, pods: int, per_deployment: int, seed: int, trace: str, report_path: str,
            profile: str | None) -> dict:
    """One size, in this process: load, run and report as `podlife run` does."""
    import orjson

    from podlife.engine import kernel
    from podlife.scenario import run as runner
    from podlife.scenario.load import load_scenario

    try:
        from podlife.report import assemble as reporting
        from podlife.report import stream
    except ImportError:   # a checkout from before podlife.report assembled it in podlife.scenario.run
        reporting = runner
        if hasattr(runner, "outcome"):
            from podlife.trace import stream

    text = scenario(nodes, pods, per_deployment, seed)
    w0, c0 = time.perf_counter(), time.process_time()
    sc = load_scenario("cluster.yaml", text=text)
    records = [0]
    # a sink that counts the records it is given at C speed: next(counter, record) takes one from the counter
    counter = itertools.count()
    count = functools.partial(next, counter)
    try:   # sinks that take the records in lists (older checkouts: one record a call)
        from podlife.trace.recorder import Batched
    except ImportError:
        Batched = None

    def count_all(batch: list) -> None:
        records[0] += len(batch)

    def go() -> dict:
        if hasattr(reporting, "outcome") and trace != "full":
            out = stream.NdjsonReport(report_path, {**reporting.header(sc), "trace": trace})
            if Batched is not None:
                sinks = [Batched(count_all)] + ([Batched(out.records)] if trace != "summary" else [])
            else:
                sinks = [count] + ([out.record] if trace != "summary" else [])
            result = runner.run(sc, trace_level=trace, keep_trace=False, sinks=sinks)
            if hasattr(kernel, "one_run_done"):   # older checkouts froze the heap after the run here
                kernel.one_run_done()
            store = result.cluster.store
            objects = getattr(store, "iter_objects", store.all_objects)   # older checkouts: all at once
            encoded = "encoded" in inspect.signature(objects).parameters
            out.finish((objects(encoded=True) if encoded else objects()) if trace != "summary" else iter(()),
                       reporting.outcome(result))
            if Batched is None:
                records[0] = next(counter)
            return result.figures or {}
        result = runner.run(sc)
        if hasattr(kernel, "one_run_done"):
            kernel.one_run_done()
        rep = reporting.report(result)
        records[0] = len(rep["records"])
        with open(report_path, "wb") as f:
            f.write(orjson.dumps(rep, option=orjson.OPT_INDENT_2) + b"\n")
        return {}

    if profile:
        import cProfile

        prof = cProfile.Profile()
        figures = prof.runcall(go)
        prof.dump_stats(profile)
    else:
        figures = go()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    return {"nodes": nodes, "pods": pods, "wall": wall, "cpu": cpu, "records": records[0],
            "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "podsCreated": figures.get("pods"), "evicted": figures.get("podsEvicted"),
            "replacementsRunning": figures.get("replacementsRunningSeconds"),
            "startupP99": figures.get("startupP99Seconds")}


def sizes(a: argparse.Namespace) -> list[tuple[int, int]]:
    if a.nodes or a.pods:
        return [(a.nodes or max(a.pods // 10, 1), a.pods or a.nodes * 10)]
    out = []
    for part in a.sizes.split(","):
        n, _, p = part.partition("/")
        out.append((int(n), int(p)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000/10000,5000/50000,5000/150000", help="NODES/PODS,...")
    ap.add_argument("--nodes", type=int, default=0, help="one size: this many nodes (instead of --sizes)")
    ap.add_argument("--pods", type=int, default=0, help="one size: this many pods (instead of --sizes)")
    ap.add_argument("--per-deployment", type=int, default=100, help="replicas per Deployment")
    ap.add_argument("--trace", default="objects", choices=("full", "objects", "summary"))
    ap.add_argument("--report", default=os.devnull, help="where the report goes (default: nowhere)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", help="write a cProfile of the run (one size) to this file")
    ap.add_argument("--compare-src", help="another podlife source tree (its src/ directory) to run beside, at once")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # NODES/PODS: measure in this process, print JSON
    a = ap.parse_args()
    if a.one:
        from podlife.engine import kernel

        if hasattr(kernel, "one_run_process"):   # as the podlife command runs (older checkouts: no such policy)
            kernel.one_run_process()
        n, _, p = a.one.partition("/")
        print(json.dumps(measure(int(n), int(p), a.per_deployment, a.seed, a.trace, a.report, a.profile)))
        return 0
    rows, others = [], []
    for n, p in sizes(a):
        this = _start(a, n, p, a.report, a.profile)
        other = _start(a, n, p, a.report if a.report == os.devnull else a.report + ".other", None,
                       a.compare_src) if a.compare_src else None
        m = _finish(this, n, p, "")
        o = _finish(other, n, p, f" (--compare-src {a.compare_src})") if other is not None else None
        if m is None:
            continue
        rows.append(m)
        if m["podsCreated"] is not None and m["podsCreated"] < p:
            print(f"WARNING: {n} nodes / {p} pods: only {m['podsCreated']} pods created")
        if o is not None:
            others.append((m, o))
            if [m[k] for k in OUTCOME] != [o[k] for k in OUTCOME]:
                print(f"WARNING: {n} nodes / {p} pods: the two trees' runs differ "
                      f"({', '.join(f'{k} {m[k]} / {o[k]}' for k in OUTCOME if m[k] != o[k])})")
    print(f"podlife cluster benchmark (python {sys.version.split()[0]} at {os.path.realpath(sys.executable)}, "
          f"--trace {a.trace}, {a.per_deployment} replicas per Deployment, 1 h simulated, 10 % of the nodes "
          "partitioned 10m-40m)")
    head = ("nodes", "pods", "wall s", "CPU s", "peak RSS MiB", "sim s / wall s", "records", "evicted",
            "replaced in s", "pods x", "wall x", "CPU x", "wall/pod x")
    table = [head]
    prev = None
    for m in rows:
        ratios = ("", "", "", "")
        if prev is not None:
            px, wx, cx = m["pods"] / prev["pods"], m["wall"] / prev["wall"], m["cpu"] / prev["cpu"]
            ratios = (f"{px:.1f}", f"{wx:.2f}", f"{cx:.2f}", f"{wx / px:.2f}")
        table.append((f"{m['nodes']:,}", f"{m['pods']:,}", f"{m['wall']:.1f}", f"{m['cpu']:.1f}",
                      f"{m['rss']:.0f}", f"{UNTIL / m['wall']:.0f}", f"{m['records']:,}",
                      "-" if m["evicted"] is None else f"{m['evicted']:,}",
                      "-" if m["replacementsRunning"] is None else f"{m['replacementsRunning']:g}", *ratios))
        prev = m
    _print(table)
    if others:
        print(f"the same sizes with --compare-src {a.compare_src}, both at once (one process per core):")
        _print([("nodes", "pods", "wall s", "other wall s", "this / other", "CPU s", "other CPU s", "this / other",
                 "peak RSS MiB", "other peak RSS MiB")] +
               [(f"{m['nodes']:,}", f"{m['pods']:,}", f"{m['wall']:.1f}", f"{o['wall']:.1f}",
                 f"{m['wall'] / o['wall']:.3f}", f"{m['cpu']:.1f}", f"{o['cpu']:.1f}", f"{m['cpu'] / o['cpu']:.3f}",
                 f"{m['rss']:.0f}", f"{o['rss']:.0f}") for m, o in others])
    return 0


OUTCOME = ("records", "podsCreated", "evicted", "replacementsRunning", "startupP99")   # the same in both trees


def _start(a: argparse.Namespace, n: int, p: int, report: str, profile: str | None,
           src: str | None = None) -> subprocess.Popen:
    """One size measured in a process of its own (with ``src``: that podlife source tree's)."""
    cmd = [sys.executable, __file__, "--one", f"{n}/{p}", "--per-deployment", str(a.per_deployment),
           "--trace", a.trace, "--report", report, "--seed", str(a.seed)]
    if profile:
        cmd += ["--profile", profile]
    env = None if src is None else {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _finish(proc: subprocess.Popen, n: int, p: int, which: str) -> dict | None:
    out, err = proc.communicate()
    if proc.returncode != 0:
        print(f"WARNING: {n} nodes / {p} pods{which} failed:\n{err[-3000:]}")
        return None
    return json.loads(out.strip().splitlines()[-1])


def _print(table: list) -> None:
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        print("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    sys.exit(main())

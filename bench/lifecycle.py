"""Pod-lifecycle throughput benchmark: N nodes, P pods created, started and deleted, on the simulated cluster.

    python bench/lifecycle.py [--nodes 100] [--pods 3000] [--seed 0] [--profile] [--tracemalloc]

Pod i is created at ``60 * i / pods`` simulated seconds (evenly over the first minute) and deleted 120 s
after its creation. Every pod has one container (image ``app:1``, requests cpu 10m / memory 16Mi) that takes
1 s to start and 0.5 s to exit on SIGTERM, behind a ``sleep 1`` preStop hook. The kernel then runs until
nothing live is pending, and the script checks that no pod is left.

In the same process it then pushes the same number of timer events through a bare ``Kernel`` (no model, a
no-op callback each) with the same driving loop and the same step counter, and reports the ratio of the two
event rates: how much work the model does per kernel event, relative to the kernel's own cost.

Figures: see bench/README.md. This is a benchmark, not a test: problems are printed as WARNING lines.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import pstats
import resource
import sys
import time
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

try:
    import podlife  # noqa: F401
except ImportError:  # run from a checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from podlife.api.errors import ApiError
from podlife.cluster import Cluster
from podlife.engine import Kernel
from podlife.cluster.spec import NodeSpec

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
CREATE_SPAN = 60.0   # pods are created evenly over the first minute
LIFETIME = 120.0     # each pod is deleted this long after its creation
BEHAVIOR = "app: {startSeconds: 1, termSeconds: 0.5}\n"
INF = float("inf")


def pod_manifest(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": {"podlife/behavior": BEHAVIOR}},
        "spec": {
            "containers": [{
                "name": "app",
                "image": "app:1",
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "1"]}}},
            }],
        },
    }


def count_steps(kernel: Kernel) -> list[int]:
    """Wrap ``kernel.step`` on the instance (src untouched) so every processed event is counted, including the
    cancelled timers that ``next_live`` steps over. Returns a one-element list holding the count."""
    counter = [0]
    step = kernel.step

    def counting_step() -> None:
        counter[0] += 1
        step()

    kernel.step = counting_step  # type: ignore[method-assign]
    return counter


def drain(kernel: Kernel) -> None:
    """Run until nothing live is pending (the loop the brief and scenario.run use)."""
    while kernel.next_live() < INF:
        kernel.step()


class Stats:
    def __init__(self) -> None:
        self.created = 0
        self.create_errors = 0
        self.deleted = 0
        self.delete_errors = 0
        self.running_at_delete = 0
        self.first_error: str | None = None

    def error(self, what: str, e: Exception) -> None:
        if self.first_error is None:
            self.first_error = f"{what}: {e}"


def schedule_workload(cluster: Cluster, pods: int, stats: Stats) -> None:
    store, kernel = cluster.store, cluster.kernel

    def create(name: str) -> None:
        try:
            store.create(pod_manifest(name), by="bench")
            stats.created += 1
        except ApiError as e:
            stats.create_errors += 1
            stats.error(f"create {name}", e)

    def delete(name: str) -> None:
        pod = store.try_get("Pod", "default", name)
        if pod is not None and (pod.get("status") or {}).get("phase") == "Running":
            stats.running_at_delete += 1
        try:
            store.delete("Pod", "default", name, by="bench")
            stats.deleted += 1
        except ApiError as e:
            stats.delete_errors += 1
            stats.error(f"delete {name}", e)

    for i in range(pods):
        name = f"pod-{i:05d}"
        t = CREATE_SPAN * i / pods
        kernel.call_at(t, lambda name=name: create(name))
        kernel.call_at(t + LIFETIME, lambda name=name: delete(name))


def run_model(nodes: int, pods: int, seed: int, profiler: cProfile.Profile | None) -> dict[str, Any]:
    t0 = time.perf_counter()
    cluster = Cluster(version="1.34", seed=seed, start_time=START,
                      nodes=[NodeSpec(name=f"node-{i}") for i in range(nodes)])
    stats = Stats()
    schedule_workload(cluster, pods, stats)
    counter = count_steps(cluster.kernel)
    t1 = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    drain(cluster.kernel)
    if profiler is not None:
        profiler.disable()
    t2 = time.perf_counter()
    left = cluster.store.list("Pod")
    return {
        "build_wall": t1 - t0,
        "wall": t2 - t1,
        "sim": cluster.kernel.now,
        "events": counter[0],
        "records": len(cluster.trace.records),
        "left": [f'{p["metadata"].get("namespace")}/{p["metadata"]["name"]}' for p in left],
        "stats": stats,
        "cluster": cluster,
    }


def run_baseline(events: int, span: float) -> dict[str, Any]:
    """``events`` timeouts with a no-op callback on a bare Kernel, spread over ``span`` simulated seconds,
    processed with the same loop and the same step counter as the model run."""
    kernel = Kernel(0)

    def noop(_ev: Any) -> None:
        pass

    t0 = time.perf_counter()
    for i in range(events):
        kernel.timeout(span * i / events).callbacks.append(noop)
    counter = count_steps(kernel)
    t1 = time.perf_counter()
    drain(kernel)
    t2 = time.perf_counter()
    return {"push_wall": t1 - t0, "wall": t2 - t1, "events": counter[0], "sim": kernel.now}


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def table(rows: list[tuple[str, str]]) -> str:
    w = max(len(k) for k, _ in rows)
    v = max(len(x) for _, x in rows)
    return "\n".join(f"  {k:<{w}}  {x:>{v}}" for k, x in rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--pods", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true",
                    help="cProfile the model run; print the top 15 by cumtime (and top 10 by tottime)")
    ap.add_argument("--tracemalloc", action="store_true",
                    help="also report the tracemalloc peak of the model run (slows the run down a lot)")
    args = ap.parse_args(argv)

    profiler = cProfile.Profile() if args.profile else None
    if args.tracemalloc:
        tracemalloc.start()
    model = run_model(args.nodes, args.pods, args.seed, profiler)
    tm_peak = tracemalloc.get_traced_memory()[1] / 2**20 if args.tracemalloc else None
    if args.tracemalloc:
        tracemalloc.stop()
    rss_model = maxrss_mib()   # high-water mark so far: imports + cluster + model run (baseline not yet run)

    cluster = model.pop("cluster")
    del cluster
    gc.collect()
    base = run_baseline(model["events"], model["sim"])

    ev_rate = model["events"] / model["wall"]
    base_rate = base["events"] / base["wall"]
    st: Stats = model["stats"]
    rows = [
        ("nodes / pods / seed", f"{args.nodes} / {args.pods} / {args.seed}"),
        ("cluster build + workload push (wall s)", f"{model['build_wall']:.3f}"),
        ("model run (wall s)", f"{model['wall']:.3f}"),
        ("simulated s", f"{model['sim']:.3f}"),
        ("simulated s per wall s", f"{model['sim'] / model['wall']:.1f}"),
        ("kernel events processed", f"{model['events']:,}"),
        ("kernel events per wall s", f"{ev_rate:,.0f}"),
        ("trace records", f"{model['records']:,}"),
        ("pods created / deleted", f"{st.created} / {st.deleted}"),
        ("pods Running when deleted", f"{st.running_at_delete}"),
        ("pods left at end", f"{len(model['left'])}"),
        ("peak memory, maxrss (MiB, whole process)", f"{rss_model:.1f}"),
    ]
    if tm_peak is not None:
        rows.append(("peak memory, tracemalloc (MiB, model run)", f"{tm_peak:.1f}"))
    rows += [
        ("baseline: bare-kernel timer events", f"{base['events']:,}"),
        ("baseline: wall s", f"{base['wall']:.3f}"),
        ("baseline: events per wall s", f"{base_rate:,.0f}"),
        ("model ev/s / baseline ev/s", f"{ev_rate / base_rate:.4f}"),
        ("  (i.e. baseline is N x faster per event)", f"{base_rate / ev_rate:.1f}"),
    ]
    print(f"podlife lifecycle benchmark (python {sys.version.split()[0]})")
    print(table(rows))
    if args.profile:
        note = " (profiler on: wall figures above are inflated)"
        print(f"\ncProfile of the model run, top 15 by cumulative time{note}:")
        out = io.StringIO()
        ps = pstats.Stats(profiler, stream=out).strip_dirs()
        ps.sort_stats("cumulative").print_stats(15)
        print(out.getvalue().rstrip())
        print("\nand the top 10 by own time (tottime):")
        out = io.StringIO()
        ps.stream = out
        ps.sort_stats("tottime").print_stats(10)
        print(out.getvalue().split("Ordered by", 1)[-1].split("\n", 3)[-1].rstrip())

    if model["left"]:
        more = f" (first: {', '.join(model['left'][:5])})"
        print(f"WARNING: {len(model['left'])} pods remain at the end{more}")
    if st.create_errors or st.delete_errors:
        print(f"WARNING: {st.create_errors} create and {st.delete_errors} delete errors; first: {st.first_error}")
    if st.running_at_delete != args.pods:
        print(f"WARNING: only {st.running_at_delete} of {args.pods} pods were Running when deleted")
    if base["events"] != model["events"]:
        print(f"WARNING: baseline processed {base['events']} events, model {model['events']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

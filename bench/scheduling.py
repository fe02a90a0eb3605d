"""Scheduler throughput benchmark: N nodes, P pods created over time, scheduled by podlife's kube-scheduler.

    python bench/scheduling.py [--nodes 5000] [--pods 150000] [--seed 0] [--owners 0] [--kubernetes-version 1.34]
                               [--compare-src DIR] [--profile]

Nodes (allocatable cpu 32, memory 128Gi, pods 110; spread over 3 zones) go straight into the scheduler's
cache; pod i (cpu 100m, memory 128Mi) is created in the API store at ``3600 * i / pods`` simulated seconds and
scheduled by the real path: queue → filters over numFeasibleNodesToFind nodes (round-robin from the last
index, zone-interleaved node tree) → scores → selectHost → bind in the store (pods/binding and a Scheduled
Event). No kubelets run: bound pods just stay bound. With ``--owners K`` the pods belong round-robin to K
ReplicaSets (label app=rs-K, controller ownerReference), so the scheduler runs the default topology spreading
real workloads get (helper.DefaultSelector).

CPU time (time.process_time) is split three ways:
- scheduling: the scheduler's own work per pod (its informer callbacks, queue, filters, scores, selectHost,
  assume in its cache);
- + binding writes: the pods/binding call and the Scheduled Event, which the API store does for it;
- end to end: the whole run, also the API store creating the pods.
The baseline, measured in the same run, is a first-fit loop over a plain list (requests vs allocatable, no
store, no kernel): the placement alone, to compare with the scheduling row. ``--compare-src DIR`` runs the
same workload with the podlife source tree DIR (for example a checkout of an older commit) in a subprocess
and prints its figures beside; the bindings' digest shows whether both placed every pod alike. ``--profile``
prints where the scheduling time goes (cProfile, CPU time; the profiler inflates the figures of that run).
This is a benchmark, not a test: problems are printed as WARNING lines.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

try:
    import podlife  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from podlife import versions
from podlife.api.defaults import pod_requests
from podlife.api.store import Store, ensure_namespaces
from podlife.cluster.contracts import StoreOptions, no_admission
from podlife.config import SchedulerConfiguration
from podlife.controlplane.scheduler.scheduler import Scheduler
from podlife.engine import Kernel
from podlife.trace.recorder import Trace

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
SPAN = 3600.0


def node(i: int) -> dict:
    name = f"node-{i:05}"
    return {"kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
        "spec": {}, "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def pod(i: int, owners: int = 0) -> dict:
    md: dict = {"name": f"p-{i:06}", "namespace": "default"}
    if owners:
        rs = f"rs-{i % owners}"
        md["labels"] = {"app": rs}
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": f"uid-{rs}",
                                  "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md,
            "spec": {"containers": [{"name": "app", "image": "app:1",
                                     "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}}


def replica_set(k: int) -> dict:
    rs = f"rs-{k}"
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": rs, "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": rs}},
                     "template": {"metadata": {"labels": {"app": rs}},
                                  "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}


class _Clock:
    """CPU seconds spent inside wrapped callables, not counting time inside wrapped callables they call nor the
    garbage collector's pauses (counted apart: they scan the whole heap, mostly the API store's objects)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {"garbage collector": 0.0}
        self._stack: list[list[float]] = []
        self._gc_start = 0.0
        gc.callbacks.append(self._gc)

    def close(self) -> None:
        gc.callbacks.remove(self._gc)

    def _gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_start = time.process_time()
        else:
            self.seconds["garbage collector"] += time.process_time() - self._gc_start

    def wrap(self, label: str, fn: Callable) -> Callable:
        self.seconds.setdefault(label, 0.0)

        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [time.process_time(), self.seconds["garbage collector"]]
            self._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self._stack.pop()
                spent = time.process_time() - frame[0] - (self.seconds["garbage collector"] - frame[1])
                self.seconds[label] += spent
                if self._stack:   # the caller's own time leaves this call out
                    self._stack[-1][0] += spent
        return timed


def run_model(nodes: int, pods: int, seed: int, owners: int = 0, profile: bool = False,
              version: str | None = None) -> dict:
    kernel = Kernel(seed)
    trace = Trace(kernel, START)
    store = Store(kernel, trace, StoreOptions(profile=versions.profile(version or versions.NEWEST),
                                              admission=no_admission))
    ensure_namespaces(store, ["default"])
    sched = Scheduler(kernel, trace, store, SchedulerConfiguration(),
                      profile=versions.profile(version) if version else None)
    clock = _Clock()
    # the scheduler's own entry points (informer callbacks, the scheduling loop) and the API writes it makes
    for name in ("_on_pod", "_on_node", "_run"):
        setattr(sched, name, clock.wrap("scheduling", getattr(sched, name)))
    store.bind = clock.wrap("binding", store.bind)   # type: ignore[method-assign]
    sched.events.event = clock.wrap("binding", sched.events.event)   # type: ignore[method-assign]
    sched.start()
    for i in range(nodes):
        sched.cache.set_node(node(i))
    for k in range(owners):
        store.create(replica_set(k), by="bench")
    for i in range(pods):
        kernel.call_at(SPAN * i / pods, lambda i=i: store.create(pod(i, owners), by="bench"))
    profiler = cProfile.Profile(time.process_time) if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    kernel.run()
    if profiler:
        profiler.disable()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    clock.close()
    binds = [f"{r['t']} {r['object']} {r['node']}" for r in trace.records
             if r["type"] == "api" and r.get("verb") == "bind"]
    per_node = [len(info.pods) for info in sched.cache.nodes.values()]
    return {"wall": wall, "cpu": cpu, "scheduling": clock.seconds["scheduling"], "binding": clock.seconds["binding"],
            "gc": clock.seconds["garbage collector"],
            "bound": len(binds), "bindings": hashlib.sha256("\n".join(binds).encode()).hexdigest()[:16],
            "max_per_node": max(per_node), "min_per_node": min(per_node), "profiler": profiler}


def run_baseline(nodes: int, pods: int) -> dict:
    """First node that fits, over a plain list: cpu/memory/pods counters, no store, no kernel."""
    free = [[32000, 128 * 1024 ** 3, 110] for _ in range(nodes)]
    specs = [pod(i)["spec"] for i in range(pods)]
    t0 = time.process_time()
    bound = 0
    for spec in specs:
        req = pod_requests(spec)
        cpu, mem = req.get("cpu", 0), req.get("memory", 0)
        for f in free:
            if f[0] >= cpu and f[1] >= mem and f[2] >= 1:
                f[0] -= cpu
                f[1] -= mem
                f[2] -= 1
                bound += 1
                break
    return {"cpu": time.process_time() - t0, "bound": bound}


def _compare(src: str, args: argparse.Namespace) -> dict:
    """The same workload run with another podlife source tree, in a subprocess."""
    cmd = [sys.executable, __file__, "--json", "--nodes", str(args.nodes), "--pods", str(args.pods),
           "--seed", str(args.seed), "--owners", str(args.owners)]
    if args.kubernetes_version:
        cmd += ["--kubernetes-version", args.kubernetes_version]
    env = {**os.environ, "PYTHONPATH": str(Path(src).resolve())}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _rows(m: dict, pods: int) -> list[tuple[str, str]]:
    def rate(seconds: float) -> str:
        return f"{m['bound'] / seconds:,.0f}" if seconds else "-"

    return [("pods bound", f"{m['bound']:,}"), ("bindings (sha256, first 16)", m["bindings"]),
            ("pods per node min / max", f"{m['min_per_node']} / {m['max_per_node']}"),
            ("scheduling: CPU s", f"{m['scheduling']:.2f}"), ("scheduling: pods/s", rate(m["scheduling"])),
            ("+ binding writes: CPU s", f"{m['scheduling'] + m['binding']:.2f}"),
            ("+ binding writes: pods/s", rate(m["scheduling"] + m["binding"])),
            ("end to end: CPU s", f"{m['cpu']:.2f}"), ("end to end: pods/s", rate(m["cpu"])),
            ("of which garbage collector: CPU s", f"{m['gc']:.2f}"),
            ("end to end: wall s", f"{m['wall']:.2f}")]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--owners", type=int, default=0)
    ap.add_argument("--kubernetes-version", help="the scheduler's behaviour profile (default: the newest)")
    ap.add_argument("--compare-src", help="another podlife source tree (its src/ directory) to run beside")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    other = _compare(args.compare_src, args) if args.compare_src else None
    m = run_model(args.nodes, args.pods, args.seed, args.owners, args.profile, args.kubernetes_version)
    profiler = m.pop("profiler")
    if args.json:
        print(json.dumps(m))
        return 0
    b = run_baseline(args.nodes, args.pods)
    print(f"podlife scheduling benchmark (python {sys.version.split()[0]} at {os.path.realpath(sys.executable)}), "
          f"{args.nodes} nodes / {args.pods} pods / {args.owners} owners / seed {args.seed}")
    head = ["", "this tree"] + ([f"--compare-src {args.compare_src}"] if other else [])
    rows = _rows(m, args.pods)
    table = [head] + [[k, v] + ([o[1]] if other else []) for (k, v), o in
                      zip(rows, _rows(other, args.pods) if other else rows)]
    base = b["bound"] / b["cpu"]
    table += [["baseline (first fit): CPU s", f"{b['cpu']:.2f}"] + ([""] if other else []),
              ["baseline: pods/s", f"{base:,.0f}"] + ([""] if other else []),
              ["baseline / scheduling", f"{base / (m['bound'] / m['scheduling']):.1f}"] +
              ([f"{base / (other['bound'] / other['scheduling']):.1f}"] if other else [])]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        print("  " + r[0].ljust(widths[0]) + "".join("  " + c.rjust(w) for c, w in zip(r[1:], widths[1:])))
    if m["bound"] != args.pods:
        print(f"WARNING: {args.pods - m['bound']} pods not bound")
    if other and other["bindings"] != m["bindings"]:
        print("WARNING: the two trees bound pods differently")
    if profiler:
        print("\nwhere the time goes (cProfile, CPU s):")
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(20)
        stats.sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    sys.exit(main())

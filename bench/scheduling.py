"""Scheduler throughput benchmark: N nodes, P pods created over time, scheduled by podlife's kube-scheduler.

    python bench/scheduling.py [--nodes 5000] [--pods 150000] [--seed 0] [--owners 0]

Nodes (allocatable cpu 32, memory 128Gi, pods 110; spread over 3 zones) go straight into the scheduler's
cache; pod i (cpu 100m, memory 128Mi) is created in the API store at ``3600 * i / pods`` simulated seconds and
scheduled by the real path: queue → filters over numFeasibleNodesToFind nodes (round-robin) → scores →
selectHost → bind in the store. No kubelets run: bound pods just stay bound.

Baseline, measured in the same run: the same pods through a trivial "first node that fits" loop (requests vs
allocatable, cached node list, no store), so the ratio says what the faithful scheduling costs on top.
With ``--owners K`` the pods belong round-robin to K ReplicaSets (label app=rs-K, controller ownerReference),
so the scheduler runs the default topology spreading real workloads get (helper.DefaultSelector).
This is a benchmark, not a test: problems are printed as WARNING lines.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

try:
    import podlife  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from podlife.api.defaults import pod_requests
from podlife.api.store import Store, ensure_namespaces
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


def run_model(nodes: int, pods: int, seed: int, owners: int = 0) -> dict:
    kernel = Kernel(seed)
    trace = Trace(kernel, START)
    store = Store(kernel, trace)
    ensure_namespaces(store, ["default"])
    sched = Scheduler(kernel, trace, store, SchedulerConfiguration())
    sched.start()
    for i in range(nodes):
        sched.cache.set_node(node(i))
    for k in range(owners):
        store.create(replica_set(k), by="bench")
    for i in range(pods):
        kernel.call_at(SPAN * i / pods, lambda i=i: store.create(pod(i, owners), by="bench"))
    t0 = time.perf_counter()
    kernel.run()
    wall = time.perf_counter() - t0
    bound = sum(len(info.pods) for info in sched.cache.nodes.values())
    per_node = [len(info.pods) for info in sched.cache.nodes.values()]
    return {"wall": wall, "bound": bound, "max_per_node": max(per_node), "min_per_node": min(per_node)}


def run_baseline(nodes: int, pods: int) -> dict:
    """First node that fits, over a plain list: cpu/memory/pods counters, no store, no kernel."""
    free = [[32000, 128 * 1024 ** 3, 110] for _ in range(nodes)]
    specs = [pod(i)["spec"] for i in range(pods)]
    t0 = time.perf_counter()
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
    return {"wall": time.perf_counter() - t0, "bound": bound}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--owners", type=int, default=0)
    args = ap.parse_args()
    m = run_model(args.nodes, args.pods, args.seed, args.owners)
    b = run_baseline(args.nodes, args.pods)
    rate, base = m["bound"] / m["wall"], b["bound"] / b["wall"]
    print(f"podlife scheduling benchmark (python {sys.version.split()[0]})")
    rows = [("nodes / pods / seed / owners", f"{args.nodes} / {args.pods} / {args.seed} / {args.owners}"),
            ("model: pods bound", f"{m['bound']:,}"),
            ("model: wall s", f"{m['wall']:.2f}"),
            ("model: pods scheduled per wall s", f"{rate:,.0f}"),
            ("model: pods per node min / max", f"{m['min_per_node']} / {m['max_per_node']}"),
            ("baseline (first fit): wall s", f"{b['wall']:.2f}"),
            ("baseline: pods per wall s", f"{base:,.0f}"),
            ("baseline is N x faster", f"{base / rate:.1f}")]
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{w}}  {v:>14}")
    if m["bound"] != args.pods:
        print(f"WARNING: {args.pods - m['bound']} pods not bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())

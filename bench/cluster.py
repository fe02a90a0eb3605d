"""Cluster-scale benchmark: the scenario of a real user's question, at a chosen size.

    python bench/cluster.py [--nodes 500] [--pods 5000] [--deployments 50] [--seed 0]

N nodes in 3 zone-labelled groups, Deployments totalling P pods (each pod requests 100m / 128Mi), 10 % of the
nodes partitioned from 10 m to 40 m, one simulated hour, run as `podlife run --quiet` would (load, run,
report). Baseline, measured in the same run: the same scenario at a tenth of the nodes and pods, so the ratio
of the per-pod costs says how far from linear the cost grows (1.0 = linear). Not a test: problems are printed
as WARNING lines.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

try:
    import podlife  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from podlife.scenario.load import load_scenario
from podlife.scenario.run import report, run


def scenario(nodes: int, pods: int, deployments: int, seed: int) -> str:
    per = max(pods // deployments, 1)
    cut = max(nodes // 10, 1)
    groups = [{"namePrefix": f"z{z}-node-", "count": nodes // 3 + (1 if z < nodes % 3 else 0), "zone": f"zone-{z}",
               "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}} for z in range(3)]
    objects = [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"app-{d}"},
                "spec": {"replicas": per, "selector": {"matchLabels": {"app": f"app-{d}"}},
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


def measure(nodes: int, pods: int, deployments: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "cluster.yaml"
        path.write_text(scenario(nodes, pods, deployments, seed))
        t0 = time.perf_counter()
        result = run(load_scenario(str(path)))
        rep = report(result)
        wall = time.perf_counter() - t0
    pods_seen = sum(1 for o in rep["final"]["objects"] if o["kind"] == "Pod")
    return {"wall": wall, "records": len(rep["records"]), "pods": pods_seen}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--deployments", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    base = measure(max(a.nodes // 10, 3), max(a.pods // 10, 1), max(a.deployments // 10, 1), a.seed)
    m = measure(a.nodes, a.pods, a.deployments, a.seed)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ratio = (m["wall"] / a.pods) / (base["wall"] / max(a.pods // 10, 1))
    rows = [("nodes / pods / deployments", f"{a.nodes} / {a.pods} / {a.deployments}"),
            ("model: wall s (load + run + report)", f"{m['wall']:.1f}"),
            ("model: trace records", f"{m['records']:,}"),
            ("model: pods at the end", f"{m['pods']:,}"),
            ("peak RSS, MiB (whole process)", f"{rss:.0f}"),
            ("baseline (a tenth of it): wall s", f"{base['wall']:.1f}"),
            ("cost per pod vs the baseline's (1.0 = linear)", f"{ratio:.2f}")]
    print(f"podlife cluster benchmark (python {sys.version.split()[0]})")
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"  {k:<{w}}  {v:>16}")
    if m["pods"] < a.pods:
        print(f"WARNING: {a.pods - m['pods']} pods fewer than asked at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Seeded scheduling workloads whose bindings are pinned in tests/data/scheduler_bindings.json.

Each workload builds a cluster of nodes (zones, labels, taints, cordoned, small, with GPUs) and creates pods
over simulated time through the API store (plain, ReplicaSet-owned, selected by Services, with node selectors,
required and preferred node affinity, tolerations, topology spread constraints, hostname anti-affinity,
extended resources, too big to fit), with churn: deletions (immediate and graceful, which leave bound pods
terminating), relabelled pods, tainted, cordoned, removed and added nodes. Only the kernel, the store and the
scheduler run, so the trace is the scheduler's own doing.

``python tests/scheduler_workloads.py > tests/data/scheduler_bindings.json`` records every workload's binds,
FailedScheduling messages and a digest of its whole trace. The pinned file was first recorded with the
scheduler that checked each node in turn in Python (commit 3e4496e), so the test shows that later
implementations place every pod on the same node, in the same order, with the same messages; it was
re-recorded once for three fixes toward upstream (tests/test_scheduler_bindings.py says which and how checked).
"""

from __future__ import annotations

import hashlib
import random
import sys
from datetime import datetime, timezone
from typing import Any

import orjson

from podlife import versions
from podlife.api.store import DeleteOptions, Store, ensure_namespaces
from podlife.cluster.contracts import StoreOptions, no_admission
from podlife.config import SchedulerConfiguration
from podlife.controlplane.scheduler.scheduler import Scheduler
from podlife.engine import Kernel
from podlife.trace.recorder import Trace

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"

# name: (nodes, pods, owners, mix, percentageOfNodesToScore, kubernetes version, seed); mix "combined" also
# gives pods node constraints together with spreading and anti-affinity
WORKLOADS: dict[str, tuple[int, int, int, bool | str, int, str, int]] = {
    "owned-120": (120, 1500, 20, False, 0, "1.34", 0),
    "owned-500-k1": (500, 2000, 1, False, 0, "1.34", 1),
    "unowned-500": (500, 2000, 0, False, 0, "1.34", 2),
    "owned-1200-p30": (1200, 1500, 7, False, 30, "1.34", 3),
    "mixed-12": (12, 500, 3, True, 0, "1.34", 8),
    "mixed-60": (60, 800, 6, True, 0, "1.34", 4),
    "mixed-250": (250, 1500, 12, True, 0, "1.34", 5),
    "mixed-250-v121": (250, 1200, 12, True, 0, "1.21", 6),
    "mixed-700-p100": (700, 1200, 9, True, 100, "1.30", 7),
    "combined-150": (150, 1200, 6, "combined", 0, "1.34", 9),
}


def node(i: int, rng: random.Random, mix: bool) -> dict:
    name = f"node-{i:05}"
    labels = {HOST: name, ZONE: f"zone-{i % 3}"}
    spec: dict[str, Any] = {}
    alloc = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    if mix:
        r = rng.random()
        if r < 0.05:
            del labels[ZONE]                                  # no zone: outside the zone domains
        if rng.random() < 0.3:
            labels["disk"] = "ssd"
        labels["rack"] = str(rng.randrange(12))
        if rng.random() < 0.08:
            spec["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
        elif rng.random() < 0.1:
            spec["taints"] = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
        if rng.random() < 0.03:
            spec["unschedulable"] = True
        if rng.random() < 0.15:
            alloc = {"cpu": "2", "memory": "4Gi", "pods": "8"}
        if rng.random() < 0.1:
            alloc["example.com/gpu"] = "2"
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": spec,
            "status": {"allocatable": alloc, "capacity": alloc}}


def replica_set(k: int) -> dict:
    rs = f"rs-{k}"
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": rs, "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": rs}},
                     "template": {"metadata": {"labels": {"app": rs}},
                                  "spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}


def pod(i: int, rng: random.Random, owners: int, mix: bool | str) -> dict:
    md: dict[str, Any] = {"name": f"p-{i:06}", "namespace": "default", "labels": {}}
    cpu, mem = "100m", "128Mi"
    spec: dict[str, Any] = {}
    if owners and (not mix or rng.random() < 0.7):
        rs = f"rs-{i % owners}"
        md["labels"]["app"] = rs
        md["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": f"uid-{rs}",
                                  "controller": True}]
    if mix:
        md["labels"]["tier"] = rng.choice(["web", "db", "cache"])
        kind = rng.random()
        if kind < 0.08:
            spec["nodeSelector"] = {"disk": "ssd"}
        elif kind < 0.14:
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In",
                                                             "values": ["zone-0", "zone-2"]}]},
                                      {"matchExpressions": [{"key": "rack", "operator": "Gt", "values": ["9"]}]}]}}}
        elif kind < 0.22:
            spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 30, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}},
                {"weight": 5, "preference": {"matchExpressions": [{"key": ZONE, "operator": "NotIn",
                                                                  "values": ["zone-1"]}]}}]}}
        elif kind < 0.28:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]
        elif kind < 0.32:
            spec["tolerations"] = [{"operator": "Exists"}]
        elif kind < 0.38:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchLabels": {"tier": md["labels"]["tier"]}}}]
        elif kind < 0.42:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 2, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule",
                 "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["db"]}]}},
                {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": {"tier": md["labels"]["tier"]}}}]
        elif kind < 0.46:
            spec["topologySpreadConstraints"] = [
                {"maxSkew": 1, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway",
                 "labelSelector": {"matchLabels": {"tier": "cache"}}}]
        elif kind < 0.50:
            md["labels"]["solo"] = f"s{i % 5}"
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": HOST, "labelSelector": {"matchLabels": {"solo": md["labels"]["solo"]}}}]}}
        elif kind < 0.52:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": HOST, "labelSelector": {"matchLabels": {"tier": "db"}},
                 "namespaces": ["default", "other"]}]}}
        elif kind < 0.55:
            cpu, mem = "1500m", "3Gi"                          # fits only on the large nodes
        elif kind < 0.57:
            cpu, mem = "40", "1Gi"                             # fits nowhere
        elif kind < 0.60:
            spec["nodeSelector"] = {"disk": "nvme"}            # matches no node
    requests: dict[str, Any] = {"cpu": cpu, "memory": mem}
    if mix and rng.random() < 0.04:
        requests["example.com/gpu"] = "1"
    container: dict[str, Any] = {"name": "app", "image": "app:1", "resources": {"requests": requests}}
    if mix and requests.get("example.com/gpu"):
        container["resources"]["limits"] = {"example.com/gpu": "1"}
    if mix and rng.random() < 0.05:
        del container["resources"]                             # no requests: 100m / 200Mi when scoring
    if mix == "combined":
        _combine(rng, md, spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": {"containers": [container], **spec}}


def _combine(rng: random.Random, md: dict, spec: dict) -> None:
    """Node constraints together with spreading (own or default) and anti-affinity."""
    affinity = spec.setdefault("affinity", {})
    r = rng.random()
    if r < 0.3:
        spec["nodeSelector"] = {ZONE: rng.choice(["zone-0", "zone-1"])}
    elif r < 0.5:
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "Lt", "values": [str(rng.randrange(4, 12))]}]}]}}
    r = rng.random()
    tier = md["labels"]["tier"]
    if r < 0.25:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": rng.choice([1, 2]), "topologyKey": rng.choice([ZONE, HOST, "rack"]),
             "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"tier": tier}}},
            {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"tier": tier}}}]
    elif r < 0.4:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": 3, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]}}]
    if rng.random() < 0.15:
        affinity["podAntiAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": HOST, "labelSelector": {"matchLabels": {"tier": tier}}}]}
    if not affinity:
        del spec["affinity"]


def run(name: str) -> dict:
    nodes, pods, owners, mix, percentage, version, seed = WORKLOADS[name]
    rng = random.Random(seed)
    kernel = Kernel(seed)
    trace = Trace(kernel, START)
    store = Store(kernel, trace, StoreOptions(profile=versions.profile(version or versions.NEWEST),
                                              admission=no_admission))
    ensure_namespaces(store, ["default", "other"])
    sched = Scheduler(kernel, trace, store, SchedulerConfiguration(percentageOfNodesToScore=percentage),
                      profile=versions.profile(version))
    sched.start()
    for i in range(nodes):
        store.create(node(i, rng, mix), by="test")
    for k in range(owners):
        store.create(replica_set(k), by="test")
    if mix:
        store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "default"},
                      "spec": {"selector": {"tier": "db"}, "ports": [{"port": 5432}]}}, by="test")
    span = 600.0
    created: list[str] = []

    def create(i: int) -> None:
        store.create(pod(i, rng, owners, mix), by="test")
        created.append(f"p-{i:06}")

    def churn() -> None:
        if not created:
            return
        victim = rng.choice(created)
        obj = store.try_get("Pod", "default", victim)
        if obj is None:
            return
        r = rng.random()
        if r < 0.4:
            store.delete("Pod", "default", victim, by="test", options=DeleteOptions(grace_period_seconds=0))
        elif r < 0.7:
            store.delete("Pod", "default", victim, by="test", options=DeleteOptions(grace_period_seconds=30))
        else:
            new = orjson.loads(orjson.dumps(obj))
            new["metadata"]["labels"] = {**new["metadata"].get("labels", {}), "tier": rng.choice(["web", "db"])}
            if rng.random() < 0.5:
                new["metadata"]["labels"].pop("app", None)
            store.update(new, by="test")

    def node_change(step: int) -> None:
        target = f"node-{rng.randrange(nodes):05}"
        obj = store.try_get("Node", None, target)
        if obj is None:
            return
        new = orjson.loads(orjson.dumps(obj))
        kind = step % 4
        if kind == 0:
            new["spec"]["taints"] = [*new["spec"].get("taints", []),
                                     {"key": f"maintenance-{step}", "value": "true", "effect": "NoSchedule"}]
            store.update(new, by="test")
        elif kind == 1:
            new["spec"]["unschedulable"] = not new["spec"].get("unschedulable", False)
            store.update(new, by="test")
        elif kind == 2:
            store.delete("Node", None, target, by="test")
        else:
            store.create(node(nodes + step, rng, mix), by="test")

    for i in range(pods):
        kernel.call_at(span * i / pods, lambda i=i: create(i))
    if mix:
        for j in range(pods // 8):
            kernel.call_at(span * (j + 0.5) / (pods // 8), churn)
        for j in range(24):
            kernel.call_at(span * (j + 0.25) / 24, lambda j=j: node_change(j))
    kernel.run(until=span + 600.0)
    binds = [f"{r['t']} {r['object'].rsplit('/', 1)[1]} {r['node']}" for r in trace.records
             if r["type"] == "api" and r.get("verb") == "bind"]
    failed = [f"{r['t']} {r['object'].rsplit('/', 1)[1]} {r['message']}" for r in trace.records
              if r["type"] == "event" and r.get("reason") == "FailedScheduling"]
    return {"binds": len(binds), "bindsSha256": _digest(binds), "firstBinds": binds[:12],
            "failedScheduling": len(failed), "failedSha256": _digest(failed),
            "records": len(trace.records), "traceSha256": _digest(trace.records)}


def _digest(items: list) -> str:
    return hashlib.sha256(b"\n".join(orjson.dumps(x, option=orjson.OPT_SORT_KEYS) for x in items)).hexdigest()


def main() -> int:
    out = {name: run(name) for name in (sys.argv[1:] or WORKLOADS)}
    sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Import and start a large cluster from a generated dump: ``bench/import.py [--nodes 5000] [--pods 150000]``.

The generator writes what ``kubectl get <kinds> -A -o json`` gives for a realistic cluster (no real cluster's
data): nodes in three zones with their status (capacity, allocatable, conditions, addresses, nodeInfo), a few
tainted; namespaces with Deployments (and their ReplicaSets and pods), StatefulSets, Services, PDBs, service
accounts and ConfigMaps; three DaemonSets (a pod on every node); node Leases; every pod bound and Running with
its conditions and container statuses. It prints the wall time and memory of: generating and writing the JSON,
reading and checking it (podlife.importer.dump.load_dump), building the cluster (the kubelets adopt every pod),
and the first 10 simulated seconds (every component's first sync of every object)."""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
import uuid
from typing import Any

import orjson

TAKEN = "2025-03-01T12:00:00Z"
CREATED = "2025-02-20T08:00:00Z"
STARTED = "2025-02-20T08:00:05Z"
ZONES = ("zone-a", "zone-b", "zone-c")
IMAGES = [f"registry.example/team-{i % 40}/svc-{i}:1.{i % 7}.{i % 3}" for i in range(400)]


def _uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _RV:
    def __init__(self) -> None:
        self.n = 1000

    def __call__(self) -> str:
        self.n += 1
        return str(self.n)


def _node(i: int, rng: random.Random, rv: _RV) -> dict[str, Any]:
    name = f"ip-10-{i // 250}-{i % 250}-{(i * 7) % 250}.ec2.internal"
    cap = {"cpu": "16", "memory": "65536Mi", "pods": "110", "ephemeral-storage": "200Gi"}
    alloc = {"cpu": "15890m", "memory": "63000Mi", "pods": "110", "ephemeral-storage": "180Gi"}
    conds = [{"type": t, "status": "False", "reason": r, "message": m, "lastHeartbeatTime": "2025-03-01T11:59:55Z",
              "lastTransitionTime": CREATED} for t, r, m in (
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"))]
    conds.append({"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready "
                  "status", "lastHeartbeatTime": "2025-03-01T11:59:55Z", "lastTransitionTime": CREATED})
    node: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": _uid(rng), "resourceVersion": rv(), "creationTimestamp": CREATED,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch":
                                "amd64", "topology.kubernetes.io/zone": ZONES[i % 3], "topology.kubernetes.io/region":
                                "eu-west-1", "node.kubernetes.io/instance-type": "m6i.4xlarge"},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"podCIDR": f"10.{100 + i // 256}.{i % 256}.0/24", "podCIDRs": [f"10.{100 + i // 256}.{i % 256}.0/24"],
                 "providerID": f"aws:///eu-west-1/i-{i:017x}"},
        "status": {"capacity": cap, "allocatable": alloc, "conditions": conds,
                   "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 250}.{i % 250 + 1}"},
                                 {"type": "Hostname", "address": name}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                   "nodeInfo": {"kubeletVersion": "v1.33.2", "kubeProxyVersion": "v1.33.2",
                                "containerRuntimeVersion": "containerd://1.7.27", "operatingSystem": "linux",
                                "architecture": "amd64", "osImage": "Amazon Linux 2023", "kernelVersion": "6.1.0",
                                "machineID": f"{i:032x}", "systemUUID": f"{i:032x}", "bootID": f"{i:032x}"}}}
    if i % 50 == 0:
        node["spec"]["taints"] = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    return node


def _template(app: str, image: str, cpu: str, mem: str, tolerate: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "app", "image": image, "imagePullPolicy": "IfNotPresent",
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}},
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                                           "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1,
                                           "failureThreshold": 3},
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
        "schedulerName": "default-scheduler", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0}
    if tolerate:
        spec["tolerations"] = [{"operator": "Exists"}]
    return {"metadata": {"labels": {"app": app}}, "spec": spec}


def _pod(name: str, ns: str, template: dict[str, Any], node: dict[str, Any], ip: str, owner: dict[str, Any],
         extra_labels: dict[str, str], rng: random.Random, rv: _RV) -> dict[str, Any]:
    spec = dict(template["spec"])
    spec["nodeName"] = node["metadata"]["name"]
    tol = list(spec.get("tolerations") or ()) + [
        {"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for k in ("not-ready", "unreachable")]
    spec["tolerations"] = tol
    c = template["spec"]["containers"][0]
    conds = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts} for t, ts in (
        ("PodReadyToStartContainers", STARTED), ("Initialized", CREATED), ("Ready", "2025-02-20T08:00:10Z"),
        ("ContainersReady", "2025-02-20T08:00:10Z"), ("PodScheduled", CREATED))]
    host_ip = node["status"]["addresses"][0]["address"]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": _uid(rng), "resourceVersion": rv(),
                     "creationTimestamp": CREATED, "labels": {**template["metadata"]["labels"], **extra_labels},
                     "ownerReferences": [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                          "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": spec,
        "status": {"phase": "Running", "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
                   "podIP": ip, "podIPs": [{"ip": ip}], "startTime": CREATED, "qosClass": "Burstable",
                   "containerStatuses": [{"name": "app", "state": {"running": {"startedAt": STARTED}},
                                          "lastState": {}, "ready": True, "restartCount": 0, "image": c["image"],
                                          "imageID": c["image"].split(":")[0] + "@sha256:" + "ab" * 32,
                                          "containerID": f"containerd://{rng.getrandbits(256):064x}",
                                          "started": True, "resources": c["resources"],
                                          "volumeMounts": [{"name": "kube-api-access", "mountPath":
                                                            "/var/run/secrets/kubernetes.io/serviceaccount",
                                                            "readOnly": True, "recursiveReadOnly": "Disabled"}],
                                          "user": {"linux": {"uid": 0, "gid": 0, "supplementalGroups": [0]}}}]}}


def generate(nodes: int, pods: int, seed: int = 0) -> dict[str, Any]:
    from podlife.controlplane.controllers.deployment import compute_hash
    from podlife.controlplane.controllers.history import template_patch

    rng = random.Random(seed)
    rv = _RV()
    items: list[dict[str, Any]] = []
    node_objs = [_node(i, rng, rv) for i in range(nodes)]
    items += node_objs
    for n in node_objs:
        items.append({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                      "metadata": {"name": n["metadata"]["name"], "namespace": "kube-node-lease", "uid": _uid(rng),
                                   "resourceVersion": rv(), "creationTimestamp": CREATED},
                      "spec": {"holderIdentity": n["metadata"]["name"], "leaseDurationSeconds": 40,
                               "renewTime": "2025-03-01T11:59:59.512000Z"}})
    untainted = [n for n in node_objs if not n["spec"].get("taints")]
    slots = {n["metadata"]["name"]: 2 for n in node_objs}   # the next host address on each node
    namespaces = ["kube-system"] + [f"team-{i}" for i in range(max(1, nodes // 100))]
    for ns in namespaces:
        items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": ns, "uid": _uid(rng), "resourceVersion": rv(), "creationTimestamp": CREATED,
            "labels": {"kubernetes.io/metadata.name": ns}}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}})
        items.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
            "name": "default", "namespace": ns, "uid": _uid(rng), "resourceVersion": rv(),
            "creationTimestamp": CREATED}})
        items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "kube-root-ca.crt", "namespace": ns, "uid": _uid(rng), "resourceVersion": rv(),
            "creationTimestamp": CREATED, "annotations": {"kubernetes.io/description": "Contains a CA bundle that "
                                                          "can be used to verify the kube-apiserver when using "
                                                          "internal endpoints such as the internal service IP or "
                                                          "kubernetes.default.svc. No other usage is guaranteed "
                                                          "across distributions of Kubernetes clusters."}},
            "data": {"ca.crt": "-----BEGIN CERTIFICATE-----\npodlife\n-----END CERTIFICATE-----\n"}})

    def place(node: dict[str, Any]) -> str:
        name = node["metadata"]["name"]
        slots[name] += 1
        cidr = node["spec"]["podCIDR"].rsplit(".", 1)[0]
        return f"{cidr}.{slots[name]}"

    # three DaemonSets: a pod on every node
    for ds_name in ("kube-proxy", "node-exporter", "ebs-csi-node"):
        tpl = _template(ds_name, f"registry.example/{ds_name}:v1.33.2", "50m", "64Mi", tolerate=True)
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {
            "name": ds_name, "namespace": "kube-system", "uid": _uid(rng), "resourceVersion": rv(),
            "creationTimestamp": CREATED, "generation": 1,
            "annotations": {"deprecated.daemonset.template.generation": "1"}},
            "spec": {"selector": {"matchLabels": {"app": ds_name}}, "template": tpl,
                     "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                     "revisionHistoryLimit": 10},
            "status": {"currentNumberScheduled": nodes, "numberMisscheduled": 0, "desiredNumberScheduled": nodes,
                       "numberReady": nodes, "observedGeneration": 1, "updatedNumberScheduled": nodes,
                       "numberAvailable": nodes}}
        items.append(ds)
        h = compute_hash(tpl, None)
        items.append({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {
            "name": f"{ds_name}-{h}", "namespace": "kube-system", "uid": _uid(rng), "resourceVersion": rv(),
            "creationTimestamp": CREATED, "labels": {"app": ds_name, "controller-revision-hash": h},
            "annotations": {"deprecated.daemonset.template.generation": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds_name,
                                 "uid": ds["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
            "data": template_patch(tpl), "revision": 1})
        for j, n in enumerate(node_objs):
            items.append(_pod(f"{ds_name}-{j:05x}", "kube-system", tpl, n, place(n), ds,
                              {"controller-revision-hash": h, "pod-template-generation": "1"}, rng, rv))
    left = max(pods - 3 * nodes, 0)
    k = 0
    while left > 0:
        ns = namespaces[1 + k % (len(namespaces) - 1)] if len(namespaces) > 1 else "default"
        replicas = min(left, rng.choice((2, 3, 3, 5, 10, 20, 50)))
        app = f"svc-{k}"
        tpl = _template(app, IMAGES[k % len(IMAGES)], rng.choice(("100m", "250m")), rng.choice(("128Mi", "256Mi")))
        dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
            "name": app, "namespace": ns, "uid": _uid(rng), "resourceVersion": rv(), "creationTimestamp": CREATED,
            "generation": 1, "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}}, "template": tpl,
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                     "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
            "status": {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
                       "readyReplicas": replicas, "availableReplicas": replicas, "conditions": [
                           {"type": "Available", "status": "True", "lastUpdateTime": CREATED,
                            "lastTransitionTime": CREATED, "reason": "MinimumReplicasAvailable",
                            "message": "Deployment has minimum availability."},
                           {"type": "Progressing", "status": "True", "lastUpdateTime": CREATED,
                            "lastTransitionTime": CREATED, "reason": "NewReplicaSetAvailable",
                            "message": f'ReplicaSet "{app}-{h}" has successfully progressed.'}]}}
        h = compute_hash(tpl, None)
        rs_tpl = {"metadata": {"labels": {"app": app, "pod-template-hash": h}}, "spec": tpl["spec"]}
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": f"{app}-{h}", "namespace": ns, "uid": _uid(rng), "resourceVersion": rv(),
            "creationTimestamp": CREATED, "generation": 1, "labels": {"app": app, "pod-template-hash": h},
            "annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas),
                            "deployment.kubernetes.io/max-replicas": str(replicas + (replicas + 3) // 4),
                            "deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app,
                                 "uid": dep["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app, "pod-template-hash": h}},
                     "template": rs_tpl},
            "status": {"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": replicas,
                       "availableReplicas": replicas, "observedGeneration": 1}}
        items += [dep, rs]
        for _ in range(replicas):
            n = untainted[rng.randrange(len(untainted))]
            while slots[n["metadata"]["name"]] > 100:
                n = untainted[rng.randrange(len(untainted))]
            suffix = "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
            items.append(_pod(f"{app}-{h}-{suffix}", ns, rs_tpl, n, place(n), rs, {}, rng, rv))
        if replicas >= 3:
            items.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {
                "name": app, "namespace": ns, "uid": _uid(rng), "resourceVersion": rv(), "creationTimestamp": CREATED,
                "generation": 1}, "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": app}}},
                "status": {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": replicas,
                           "desiredHealthy": replicas - 1, "expectedPods": replicas, "conditions": [
                               {"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                                "message": "", "observedGeneration": 1, "lastTransitionTime": CREATED}]}})
        left -= replicas
        k += 1
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def _clock() -> float:
    """CPU seconds of this process (user + system): on a shared machine the wall clock measures the others too;
    --wall measures wall time instead."""
    return time.perf_counter() if WALL else time.process_time()


WALL = "--wall" in sys.argv


def _rss_now() -> float:
    """The resident set now (MB), from /proc."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=150_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dump", help="measure this dump (default: generate one, in a process of its own, so that "
                                   "the generator's memory is not counted)")
    ap.add_argument("--generate-to", help="only generate the dump into this file")
    ap.add_argument("--wall", action="store_true", help="wall-clock seconds instead of CPU seconds")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
    if args.generate_to:
        with open(args.generate_to, "wb") as f:
            f.write(orjson.dumps(generate(args.nodes, args.pods, args.seed)))
        return
    path = args.dump
    t_gen = 0.0
    if path is None:
        import subprocess

        path = os.path.join(tempfile.mkdtemp(), "dump.json")
        w0 = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--nodes", str(args.nodes), "--pods", str(args.pods), "--seed",
                        str(args.seed), "--generate-to", path], check=True)
        t_gen = time.perf_counter() - w0
    size = os.path.getsize(path) / 1e6

    from podlife.engine.gcpolicy import one_run_process

    one_run_process()
    from podlife.importer import command
    base = _rss_mb()
    t1 = _clock()
    dump = command.read([path])
    t_read = _clock() - t1
    n_items = len(dump.objects)
    scen = os.path.join(os.path.dirname(path), "ten-seconds.yaml")
    with open(scen, "w") as f:
        f.write("apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: ten-seconds}\nspec:\n  until: 10s\n")
    t2 = _clock()
    sc = command.scenario(dump, scen)
    t_sc = _clock() - t2
    t3 = _clock()
    holder: dict[str, Any] = {}

    def build(sc: Any, **kw: Any) -> Any:
        b0 = _clock()
        c = command.builder(dump)(sc, **kw)
        holder["build"] = _clock() - b0
        return c

    rss_read = _rss_now()
    from podlife.engine.gcpolicy import few_collections

    with few_collections():   # as podlife.scenario.run.run
        cluster = build(sc, trace_level="summary", keep_trace=False)
        rss_built = _rss_now()
        cluster.kernel.run(until=10.0)   # the start: every component's first sync of every object
    t_run = _clock() - t3
    total = _clock() - t1
    store = cluster.store
    running = sum(1 for p in store.list("Pod") if p["status"].get("phase") == "Running")
    rows = [("generate + write the JSON (wall, not counted)", f"{t_gen:.1f} s, {size:.0f} MB"),
            ("read + check the dump", f"{t_read:.1f} s ({n_items:,} objects)"),
            ("scenario over the dump's nodes", f"{t_sc:.1f} s"),
            ("build the cluster (restore, adopt)", f"{holder['build']:.1f} s"),
            ("first 10 simulated seconds", f"{t_run - holder['build']:.1f} s"),
            ("import + start, total", f"{total:.1f} s"),
            ("pods at the end / Running", f"{store.count('Pod'):,} / {running:,}"),
            ("api writes in the 10 s (rv after - before)", f"{store.resource_version - dump.revision:,}"),
            ("memory in use: read / built / after 10 s", f"{rss_read:,.0f} / {rss_built:,.0f} / {_rss_now():,.0f} MB"),
            ("peak memory (maxrss)", f"{_rss_mb():,.0f} MB (before reading: {base:,.0f} MB)")]
    print(f"{args.nodes:,} nodes, {args.pods:,} pods; times in {'wall' if WALL else 'CPU'} seconds")
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    if args.dump is None:
        os.remove(path)


if __name__ == "__main__":
    main()

"""A cluster that starts where the dump left off. The store holds the dump's objects as they were (UIDs,
resourceVersions, timestamps, status); each Node gets a kubelet and a runtime that hold the sandboxes and
containers its pods report, which the kubelet adopts as its own (Kubelet.adopt); every controller sees the
objects in its first list, as after a controller-manager restart, and acts only where it would in the cluster.

The model's clock starts at the dump's instant (Dump.taken): t=0 is that instant, and a container running
since 09:12 has its start at a negative time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from podlife.api.meta import ref
from podlife.cluster import Cluster
from podlife.importer.dump import Dump, kubelet_minor, parse_time
from podlife.runtime.behavior import behavior_for
from podlife.runtime.containerd import ContainerdRuntime
from podlife.runtime.cri import EXITED, RUNNING, Container
from podlife.cluster.spec import NodeSpec, default_pod_cidr

if TYPE_CHECKING:
    from podlife.kubelet.kubelet import Kubelet
    from podlife.scenario.model import Scenario
    from podlife.trace.recorder import Batched, Record

Obj = dict[str, Any]
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


@dataclass
class _Start:
    """Cluster's ``persisted`` argument for a cluster whose objects come from elsewhere: components start on an
    empty store at t=0 and no kubelet registers its node; ``_restart`` then brings the objects in."""
    log: Any = None
    resume: bool = True
    now: float = 0.0
    stream: int = 0


def runtime_of(node: Obj) -> str:
    v = ((node.get("status") or {}).get("nodeInfo") or {}).get("containerRuntimeVersion") or ""
    if v.startswith(("docker://1.13", "docker://1.12")):
        return "docker-1.13"
    if v.startswith("docker://"):
        return "docker-18.06"
    return "containerd"   # containerd, and CRI-O, which podlife runs as containerd (an assumption)


def node_spec(node: Obj, index: int, taken: list[Any], version: str | None = None) -> NodeSpec:
    """The node as the dump shows it; ``version``: the cluster's, when the dump's kubelets run at their own
    (a kubelet of another minor runs that minor's rules)."""
    md, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    labels = dict(md.get("labels") or {})
    zone = next((labels[k] for k in ZONE_LABELS if k in labels), None)
    cidr = spec.get("podCIDR")
    if not cidr:
        found = default_pod_cidr(index, 0, taken)
        cidr = str(found[0]) if found else "10.244.0.0/16"
    capacity = {str(k): str(v) for k, v in (status.get("capacity") or {}).items()}
    minor = kubelet_minor(node) if version is not None else None
    own = f"1.{minor}" if minor is not None and f"1.{minor}" != version else None
    return NodeSpec(name=md["name"], zone=zone, labels=labels, taints=[dict(t) for t in spec.get("taints") or ()],
                    capacity=capacity or NodeSpec(name="").capacity, runtime=runtime_of(node), podCIDR=cidr,
                    kubelet_version=own)


def node_specs(dump: Dump, version: str | None = None) -> list[NodeSpec]:
    """The dump's nodes. Run at the dump's own version, each kubelet keeps the version its node reports (mixed
    minors mid-upgrade); run at another (an upgrade what-if), every kubelet runs that one."""
    import ipaddress

    nodes = dump.of("Node")
    taken = []
    for n in nodes:
        cidr = (n.get("spec") or {}).get("podCIDR")
        if cidr:
            try:
                taken.append(ipaddress.ip_network(cidr, strict=False))
            except ValueError:
                pass
    own = version if version is not None and version == dump.version else None
    return [node_spec(n, i, taken, own) for i, n in enumerate(nodes)]


class ImportedCluster(Cluster):
    """Cluster over a dump: built as a restarted cluster is (no node registers, no default objects are
    created), with the dump's objects in place of a durable log's."""

    def __init__(self, dump: Dump, **kwargs: Any) -> None:
        self.dump = dump
        super().__init__(persisted=_Start(), **kwargs)   # type: ignore[arg-type]

    def _restart(self, persisted: Any) -> None:
        restore(self, self.dump)


def _seconds(cluster: Cluster, ts: Any) -> float | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return (parse_time(ts) - cluster.trace.start_time).total_seconds()
    except ValueError:
        return None


def _internal_ip(node: Obj) -> str | None:
    for a in (node.get("status") or {}).get("addresses") or ():
        if isinstance(a, dict) and a.get("type") == "InternalIP" and a.get("address"):
            return str(a["address"])
    return None


def restore(cluster: Cluster, dump: Dump) -> None:
    nodes = {n["metadata"]["name"]: n for n in dump.of("Node")}
    for name, kl in cluster.kubelets.items():
        ip = _internal_ip(nodes[name]) if name in nodes else None
        if ip:
            kl.node_ip = ip
        runtime = _simulated(kl)
        runtime.present_images = set()   # the images its pods run; any other is pulled
        kl.images.pull_times = dict(dump.pull_times)
        if dump.sandbox_seconds is not None:   # --calibrate: the events' sandbox time, in place of the runtime's
            runtime.profile = replace(runtime.profile, sandbox_seconds=dump.sandbox_seconds)
    _root_ca(cluster, dump)
    leases = _leases(cluster, dump)
    objects = dump.objects + leases
    for pod in dump.of("Pod"):
        on = cluster.kubelets.get((pod.get("spec") or {}).get("nodeName") or "")
        if on is not None:
            adopt_pod(cluster, on, pod)
    cluster.store.load(objects, dump.revision + len(leases))
    cluster.kubernetes_service.ensure()


def _root_ca(cluster: Cluster, dump: Dump) -> None:
    """The cluster's root CA bundle, as its kube-root-ca.crt ConfigMaps publish it, is what the publisher keeps
    there (rather than podlife's placeholder)."""
    from podlife.controlplane.controllers.rootcacertpublisher import CONFIGMAP, RootCACertPublisher

    bundles = [((cm.get("data") or {}).get("ca.crt")) for cm in dump.of("ConfigMap")
               if cm["metadata"]["name"] == CONFIGMAP]
    bundle = next((b for b in bundles if isinstance(b, str) and b), None)
    for ctrl in cluster.controllers:
        if bundle is not None and isinstance(ctrl, RootCACertPublisher):
            ctrl.ca = bundle


def _leases(cluster: Cluster, dump: Dump) -> list[Obj]:
    """A node's Lease the dump leaves out: renewed at the dump's instant (a kubelet that runs renews it every
    10 s, so the instant is at most that far off)."""
    have = {o["metadata"]["name"] for o in dump.of("Lease") if o["metadata"].get("namespace") == "kube-node-lease"}
    out = []
    rv = dump.revision
    for name in sorted(set(cluster.kubelets) - have):
        rv += 1
        out.append({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": name, "namespace": "kube-node-lease", "resourceVersion": str(rv),
                                 "creationTimestamp": cluster.trace.timestamp(0.0),
                                 "uid": f"00000000-0000-4000-8000-{rv:012d}"[-36:]},
                    "spec": {"holderIdentity": name, "leaseDurationSeconds":
                             cluster.kubelet_config.nodeLeaseDurationSeconds,
                             "renewTime": cluster.trace.micro_timestamp(0.0)}})
    return out


def _simulated(kl: Kubelet) -> ContainerdRuntime:
    """The node's runtime, which adopts the dump's containers: a simulated one (up --from refuses the process
    runtime)."""
    runtime = kl.runtime
    if not isinstance(runtime, ContainerdRuntime):
        raise TypeError(f"node {kl.node_name}: an imported node's runtime is simulated, not {type(runtime).__name__}")
    return runtime


def _container_id(value: Any) -> str | None:
    if isinstance(value, str) and "://" in value:
        return value.split("://", 1)[1] or None
    return None


def adopt_pod(cluster: Cluster, kl: Kubelet, pod: Obj) -> None:
    """The pod's sandbox and the containers its status reports, in the node's runtime; the kubelet adopts them.
    A pod that has finished (Succeeded, Failed) keeps its exited containers until it is deleted, as a node does."""
    status = pod.get("status") or {}
    terminal = status.get("phase") in ("Succeeded", "Failed")
    statuses = list(status.get("initContainerStatuses") or ()) + list(status.get("containerStatuses") or ())
    if not status.get("podIP") and not any("running" in (s.get("state") or {}) for s in statuses
                                            if isinstance(s, dict)):
        return   # not started yet: the kubelet starts it (its sandbox never came up)
    specs = {c.get("name"): c for c in list((pod.get("spec") or {}).get("initContainers") or ())
             + list((pod.get("spec") or {}).get("containers") or ()) if isinstance(c, dict)}
    start = _seconds(cluster, status.get("startTime"))
    runtime = _simulated(kl)
    if runtime.present_images is not None:
        runtime.present_images.update(str(c.get("image", "")) for c in specs.values())
    # the sandbox is down once the pod has finished (PodReadyToStartContainers False, where the version has it)
    down = terminal or any(isinstance(c, dict) and c.get("type") == "PodReadyToStartContainers"
                           and c.get("status") == "False" for c in status.get("conditions") or ())
    sb = runtime.adopt_sandbox(pod, status.get("podIP"), start if start is not None else 0.0, not down)
    adopted: list[Container] = []
    ready: dict[str, bool] = {}
    backoff: dict[str, tuple[int, float, str]] = {}
    for cs in statuses:
        if not isinstance(cs, dict) or cs.get("name") not in specs:
            continue
        name, spec = cs["name"], specs[cs["name"]]
        state, last = cs.get("state") or {}, cs.get("lastState") or {}
        attempt = int(cs.get("restartCount") or 0)
        ready[name] = bool(cs.get("ready"))
        made = None
        if "running" in state:
            made = _container(cluster, kl, pod, sb.id, spec, cs, attempt, RUNNING, state["running"])
        elif "terminated" in state:
            made = _container(cluster, kl, pod, sb.id, spec, cs, attempt, EXITED, state["terminated"])
        elif "waiting" in state and "terminated" in last:
            # CrashLoopBackOff (or another wait after an exit): the exited container is the current one
            made = _container(cluster, kl, pod, sb.id, spec, cs, attempt, EXITED, last["terminated"])
        if made is None:
            continue
        runtime.adopt_container(made)
        adopted.append(made)
        if attempt > 0 and made.started_at is not None:
            waiting = state.get("waiting") or {}
            message = waiting.get("message", "") if waiting.get("reason") == "CrashLoopBackOff" else ""
            backoff[name] = (attempt, made.started_at, message)
    kl.adopt(pod, adopted, ready, backoff, start)


def _container(cluster: Cluster, kl: Kubelet, pod: Obj, sandbox_id: str, spec: Obj, cs: Obj, attempt: int,
               state: str, detail: Obj) -> Container | None:
    cid = _container_id(detail.get("containerID") or cs.get("containerID"))
    if cid is None:
        return None
    md = pod["metadata"]
    started = _seconds(cluster, detail.get("startedAt"))
    c = Container(cid, sandbox_id, md["uid"], ref(pod), spec["name"],
                  spec.get("image", ""), attempt, behavior_for(pod, spec, cluster.nodes.behaviors), state=state,
                  created_at=started if started is not None else 0.0, started_at=started,
                  status_image=str(cs.get("image") or ""), image_id=str(cs.get("imageID") or ""))
    if state == EXITED:
        c.finished_at = _seconds(cluster, detail.get("finishedAt"))
        c.exit_code = int(detail.get("exitCode") or 0)
        c.reason = str(detail.get("reason") or ("Completed" if c.exit_code == 0 else "Error"))
        c.message = str(detail.get("message") or "")
    return c


def build(sc: Scenario, dump: Dump, *, trace_level: str = "full", keep_trace: bool = True,
          trace_sinks: Sequence[Callable[[Record], None] | Batched] = (), start_time: datetime | None = None,
          **extra: Any) -> Cluster:
    """podlife.scenario.run.build for a scenario run on an imported cluster: the scenario's cluster settings
    (kubelet, controller-manager, scheduler configuration, feature gates), the dump's nodes and objects."""
    from podlife.importer.whatif import WhatIf

    c = sc.cluster
    cluster = ImportedCluster(dump, version=sc.kubernetes_version, seed=sc.seed, start_time=start_time or dump.taken,
                           nodes=node_specs(dump, sc.kubernetes_version), kubelet=c.kubelet, scheduler=c.scheduler,
                           controller_manager=c.controllerManager, api_server=c.apiServer, behaviors=sc.behaviors,
                           trace_level=trace_level, keep_trace=keep_trace, trace_sinks=trace_sinks,
                           feature_gates=c.featureGates, **extra)
    cluster.what_if = WhatIf(cluster)   # type: ignore[attr-defined]
    return cluster

"""What a dump does not say, as assumptions in the summary and report (the form podlife.scenario.assumptions
gives a manifest's): the containers' behaviour for each workload (their command, how they take SIGTERM), and
what podlife takes for the nodes, images and timings it cannot read from the objects."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from podlife.importer.dump import Dump

Obj = dict[str, Any]
_WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController")


def workloads(dump: Dump) -> list[Obj]:
    """What runs the pods: the workload controllers, and pods no controller owns (a ReplicaSet's pods speak for
    its Deployment, a Job's for its CronJob: only the top owner is listed)."""
    out = [o for o in dump.objects if o["kind"] in _WORKLOADS and not _owned(o)]
    out += [o for o in dump.objects if o["kind"] == "ReplicaSet" and not _owned(o)]
    out += [o for o in dump.objects if o["kind"] == "Pod" and not _owned(o)]
    return out


def _owned(obj: Obj) -> bool:
    return any(isinstance(r, dict) and r.get("controller") for r in obj["metadata"].get("ownerReferences") or ())


def assumptions(dump: Dump, behaviors: tuple[Any, ...] = (), timings: list[str] | None = None) -> list[dict[str, str]]:
    from podlife.scenario.assumptions import assumptions as of_manifests
    from podlife.scenario.model import Manifest, Source

    out = [{"object": "dump", "container": "", "assumption": text} for text in _cluster_wide(dump, timings)]
    # the autoscalers too: a container they read the usage of and that declares none is said to use 0
    manifests = dump.of("HorizontalPodAutoscaler") + workloads(dump)
    sc = SimpleNamespace(objects=[Manifest(o, Source("dump", None, "")) for o in manifests], actions=[],
                         field_notes=[], behaviors=behaviors)
    return out + of_manifests(sc)   # type: ignore[arg-type]


def _cluster_wide(dump: Dump, timings: list[str] | None) -> list[str]:
    runtimes = sorted({((n.get("status") or {}).get("nodeInfo") or {}).get("containerRuntimeVersion") or "?"
                       for n in dump.of("Node")})
    out = [
        "images: those a pod's container runs are taken as present on its node; any other pull takes the "
        "model's default time" + (" (--calibrate replaces it where the events show one)" if timings is None else ""),
        (f"runtimes: the nodes report {', '.join(runtimes) or 'none'}; each runs as podlife's containerd "
        "(docker:// as its docker model), with containerd's timings"),
        ("the kubelets and controllers carry on from the dump's state; the phase of their periodic loops (pod "
        "worker resync, status ticks) is not in the dump and starts at the dump's instant"),
    ]
    return out + list(timings or ())

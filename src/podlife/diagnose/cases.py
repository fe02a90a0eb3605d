"""Generated incidents: a random fault on a generated scenario, run by podlife, of which only what a user would
see is kept (the node's kubelet log as klog text and the Events as ``kubectl get events -o json`` prints them,
never the trace). bench/diagnose.py and tests/test_diagnose.py diagnose them and compare with the truth."""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from podlife.diagnose.hypotheses import CONTAINER_FAULTS

# the injected fault types, cycled so that each has the same share of the cases
KINDS = ("OOMKill", "ContainerHang", "LostExitEvent", "ImagePullFailure", "KubeletRestart", "RuntimeRestart",
         "RuntimeDown", "NetworkPartition", "NodePowerOff")

VERSIONS = ("1.18", "1.21", "1.25", "1.29", "1.33")
RUNTIMES = ("containerd", "docker-18.06")


@dataclass
class Case:
    index: int
    fault: str
    at: float                      # seconds since the scenario's start
    target: str                    # pod/container, image, or the node
    scenario: str                  # the scenario's YAML
    start: datetime


def generate(index: int, seed: int = 0) -> Case:
    rng = random.Random(f"diagnose-case-{seed}-{index}")
    version = rng.choice(VERSIONS)
    runtime = rng.choice(RUNTIMES)
    fault = KINDS[index % len(KINDS)]
    start = datetime(2024, 3, 1, 9, 0, 0, tzinfo=UTC) + timedelta(hours=index, seconds=rng.randint(0, 3000))
    pods: list[dict[str, Any]] = []
    for i in range(rng.randint(1, 2)):
        names = ["app"] + (["sidecar"] if rng.random() < 0.4 else [])
        grace = rng.choice((5, 10, 30))
        containers = []
        for c in names:
            image = f"registry.example/{c}:{rng.randint(1, 9)}.{rng.randint(0, 9)}"
            entry: dict[str, Any] = {"name": c, "image": image}
            if rng.random() < 0.3:
                entry["lifecycle"] = {"preStop": {"exec": {"command": ["sh", "-c", f"sleep {rng.randint(1, 3)}"]}}}
            containers.append(entry)
        pods.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"{rng.choice(('web', 'cache', 'queue', 'db'))}-{i}"},
                     "spec": {"nodeName": "node-1", "terminationGracePeriodSeconds": grace,
                              "containers": containers}})
    if len({p["metadata"]["name"] for p in pods}) < len(pods):
        pods[1]["metadata"]["name"] += "b"
    at = round(rng.uniform(10, 30), 3)
    victim = rng.choice(pods)
    container = rng.choice(victim["spec"]["containers"])
    fspec: dict[str, Any] = {"type": fault, "node": "node-1"}
    target = "node-1"
    actions: list[dict[str, Any]] = []
    if fault in CONTAINER_FAULTS:
        fspec.update(pod=f"default/{victim['metadata']['name']}", container=container["name"])
        target = f"{victim['metadata']['name']}/{container['name']}"
    elif fault == "ImagePullFailure":
        # a new pod wanting the image comes after the fault (a rollout): only a pull shows the failure
        fspec["image"] = container["image"]
        target = container["image"]
        extra = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "rollout-0"},
                 "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": container["image"],
                                                                 "imagePullPolicy": "Always"}]}}
        actions.append({"at": f"{at + rng.uniform(5, 15):.3f}s", "create": extra})
    elif fault in ("NetworkPartition", "RuntimeDown", "NodePowerOff"):
        fspec["for"] = f"{rng.randint(60, 120)}s"   # the network heals, the runtime comes back, the node reboots
    actions.append({"at": f"{at}s", "fault": fspec})
    # the user's delete, which is when most of them notice
    actions.append({"at": f"{at + rng.uniform(8, 30):.3f}s", "delete": f"pod/{victim['metadata']['name']}"})
    actions.sort(key=lambda a: float(a["at"][:-1]))
    doc = {"apiVersion": "podlife/v1alpha1", "kind": "Scenario", "metadata": {"name": f"diagnose-case-{index}"},
           "spec": {"kubernetesVersion": version, "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "until": "240s", "cluster": {"nodes": [{"name": "node-1", "runtime": runtime}]},
                    "objects": pods, "actions": actions}}
    return Case(index, fault, at, target, yaml.safe_dump(doc, sort_keys=False), start)


def evidence(case: Case, directory: str) -> list[str]:
    """Runs the case and writes what a user would have: the kubelet's log and the Events. Returns the paths."""
    from podlife.diagnose.simulate import _event
    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run
    from podlife.report import klog

    sc = load_scenario(f"case-{case.index}.yaml", text=case.scenario)
    result = run(sc)
    records = result.cluster.trace.records
    os.makedirs(directory, exist_ok=True)
    log = os.path.join(directory, "kubelet.log")
    with open(log, "w", encoding="utf-8") as f:
        f.write(klog.render([r for r in records if r.get("component") == "kubelet"], sc.start_time, "node-1"))
    events = os.path.join(directory, "events.json")
    with open(events, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List",
                   "items": [_event(r, sc.start_time) for r in records if r["type"] == "event"]}, f, indent=1)
    return [log, events]


_IDS = re.compile(r"[0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"
                  r"\bResourceVersion:\"\d+\"|"
                  r"statusVersion=\d+|\(\d+, \{")


def visible(case: Case, paths: list[str], directory: str) -> bool:
    """Whether the fault left any trace in the evidence: the same scenario without it gives other evidence
    (ids masked). A fault that leaves none cannot be recovered from this evidence by anyone."""
    doc = yaml.safe_load(case.scenario)
    doc["spec"]["actions"] = [a for a in doc["spec"]["actions"] if "fault" not in a]
    clean = evidence(Case(case.index, "", 0.0, "", yaml.safe_dump(doc, sort_keys=False), case.start), directory)

    def text(p: str) -> str:
        with open(p, encoding="utf-8") as f:
            return _IDS.sub("X", f.read())
    return any(text(a) != text(b) for a, b in zip(paths, clean))

"""Valid inputs at the edges of their ranges (int64's largest grace period, a deadline near int64's limit,
an action a nanosecond after the start) run to the end: exit 0 or 1, never an internal error (3). Each case
was found crashing podlife."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from podlife.cli import main
from tests.helpers import within

HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: edge}\nspec:\n  until: 120s\n"
POD = "  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {%scontainers: [{name: a, image: nginx}]}}\n"
INT64_MAX = 2 ** 63 - 1

CASES = [
    # the trace recorder formatted now + grace as a date (OverflowError)
    ("delete grace int64 max", "  objects:\n" + POD % "" +
     f"  actions:\n  - {{at: 5s, delete: pod/p, gracePeriodSeconds: {INT64_MAX}}}\n"),
    ("terminationGracePeriodSeconds int64 max", "  objects:\n" + POD % f"terminationGracePeriodSeconds: {INT64_MAX}, "
     + "  actions:\n  - {at: 5s, delete: pod/p}\n"),
    ("namespace deleted with a pod of int64 max grace",
     "  objects:\n  - {apiVersion: v1, kind: Namespace, metadata: {name: t}}\n"
     f"  - {{apiVersion: v1, kind: Pod, metadata: {{name: p, namespace: t}}, spec: {{terminationGracePeriodSeconds: "
     f"{INT64_MAX}, containers: [{{name: a, image: busybox, command: [sleep, '3600']}}]}}}}\n"
     "  actions:\n  - {at: 5s, delete: namespace/t}\n"),
    # timedelta(seconds=startingDeadlineSeconds) overflowed
    ("cronjob startingDeadlineSeconds int64 max",
     "  objects:\n  - apiVersion: batch/v1\n    kind: CronJob\n    metadata: {name: c}\n    spec:\n"
     f"      schedule: '* * * * *'\n      startingDeadlineSeconds: {INT64_MAX}\n"
     "      jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: a, image: busybox, "
     "command: [sh, -c, 'exit 300']}]}}}}\n"),
    # a failed daemon pod's backoff, compared as now - last < delay, held by a rounding error at 19.3 s: the
    # requeue's delay rounded to nothing and the DaemonSet controller looped at that instant
    ("daemon pods failing under disk pressure",
     "  cluster: {nodes: [{namePrefix: w, count: 2, capacity: {cpu: '8', memory: 16Gi, ephemeral-storage: 100Gi}}]}\n"
     "  objects:\n"
     "  - {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, spec: {replicas: 3, minReadySeconds: 2, "
     "serviceName: s, selector: {matchLabels: {app: s}}, template: {metadata: {labels: {app: s}}, "
     "spec: {terminationGracePeriodSeconds: 5, containers: [{name: a, image: nginx}]}}}}\n"
     "  - {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds}, spec: {minReadySeconds: 1, selector: "
     "{matchLabels: {app: ds}}, template: {metadata: {labels: {app: ds}}, spec: {containers: [{name: a, image: "
     "nginx, resources: {requests: {ephemeral-storage: 1Gi}}}]}}}}\n"
     "  actions:\n  - {at: 7s, fault: {type: DiskUsage, node: w0, value: 95Gi, for: 10s}}\n"),
    # pods that fit no node, scaled away while a Job's pods finish: the scheduler's MoveAllToActive dropped the
    # deleted ones from the queue it was iterating (dictionary changed size during iteration)
    ("unschedulable pods scaled away while others finish",
     "  cluster: {nodes: [{namePrefix: n, count: 3, capacity: {cpu: '4', memory: 8Gi, pods: '20'}}]}\n"
     "  objects:\n"
     "  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: hi}, value: 1000}\n"
     "  - {apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {completions: 3, parallelism: 3, "
     "backoffLimit: 2, podFailurePolicy: {rules: [{action: FailJob, onExitCodes: {operator: In, values: [42]}}]}, "
     "template: {spec: {restartPolicy: Never, containers: [{name: a, image: busybox, command: [sh, -c, "
     "'sleep 3; exit 42']}]}}}}\n"
     "  - {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs}, spec: {replicas: 4, minReadySeconds: 3, "
     "selector: {matchLabels: {app: rs}}, template: {metadata: {labels: {app: rs}}, spec: {containers: [{name: a, "
     "image: nginx, resources: {requests: {cpu: 2147483647}}}]}}}}\n"
     "  actions:\n  - {at: 5s, scale: replicaset/rs, replicas: 2}\n"),
    # the eviction manager's next tick came out a nanosecond in the past (simpy: Negative delay)
    ("fault a nanosecond after the start",
     "  cluster: {nodes: [{name: n1, capacity: {cpu: '4', memory: 8Gi}}]}\n  objects:\n" + POD % "" +
     "  actions:\n  - {at: 0.000000001s, fault: {type: MemoryUsage, node: n1, value: 7Gi, for: 20s}}\n"),
]


@pytest.mark.parametrize("name, text", CASES, ids=[c[0] for c in CASES])
def test_an_edge_value_runs_to_the_end(tmp_path, name, text):
    path = tmp_path / "edge.yaml"
    path.write_text(HEAD + text)
    res = within(60, CliRunner().invoke, main, ["run", str(path), "--quiet"])
    assert res.exit_code in (0, 1), res.output
    assert "internal error" not in res.output

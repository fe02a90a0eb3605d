"""ReplicaSet and Deployment controllers end to end (pkg/controller/replicaset, pkg/controller/deployment).

Timing facts of the model the expectations rely on (established by the kubelet tests): a container with the
default behaviour starts 0.1 s after its pod is created, and the pod turns Ready at the kubelet's next PLEG
relist, on the next whole second; a deleted pod whose container exits on SIGTERM (0.1 s) is removed at the
next whole second too; a `sleep 3600` container ignores SIGTERM (PID 1) and dies by SIGKILL when the grace
period (30 s) ends, the pod being removed at the next whole second.
"""

from __future__ import annotations

import re

import pytest

from podlife.controlplane.controllers.deployment import compute_hash, fnv32a, safe_encode_string
from podlife.controlplane.controllers.replicaset import slow_start_batch
from tests.helpers import records, run_text

GENERATED = r"[bcdfghjklmnpqrstvwxz2456789]{5}"  # names.SimpleNameGenerator's alphabet


def _scenario(objects: str, actions: str = "", until: str = "20s", version: str = "1.34", nodes: str = "",
              seed: int = 0) -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: ctrl}}
spec:
  kubernetesVersion: "{version}"
  seed: {seed}
{nodes}  objects:
{objects}
  actions: {actions or "[]"}
  until: {until}
"""


RS = """
    - apiVersion: apps/v1
      kind: ReplicaSet
      metadata: {name: web}
      spec:
        replicas: REPLICAS
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers: [{name: app, image: nginx:1.27REQUESTS}]
"""


def _rs(replicas: int, requests: str = "") -> str:
    return RS.replace("REPLICAS", str(replicas)).replace("REQUESTS", requests)


def _created_pods(result, by: str = "replicaset-controller") -> list[tuple[float, str]]:
    return [(r["t"], r["object"].split("/")[-1]) for r in records(result, "api", verb="create", by=by)
            if r["object"].startswith("Pod/")]


def _obj(result, kind: str, name: str) -> dict:
    return result.cluster.store.get(kind, "default", name)


def _node_of(result, pod: str) -> str | None:
    binds = records(result, "api", verb="bind", object=f"Pod/default/{pod}")
    return binds[0]["node"] if binds else None


# ---- ReplicaSet ------------------------------------------------------------------------------------------


def test_replicaset_creates_its_pods_at_once(tmp_path):
    r = run_text(tmp_path, _scenario(_rs(3)))
    created = _created_pods(r)
    # manageReplicas: 3 missing -> slow-start batches of 1 then 2, all answered at t=0
    assert [t for t, _ in created] == [0.0, 0.0, 0.0]
    assert all(re.fullmatch(f"web-{GENERATED}", n) for _, n in created)
    assert [(e["t"], e["message"], e["source"]) for e in records(r, "event", reason="SuccessfulCreate")] == \
        [(0.0, f"Created pod: {n}", "replicaset-controller") for _, n in created]
    rs = _obj(r, "ReplicaSet", "web")
    for _, n in created:
        pod = _obj(r, "Pod", n)
        assert pod["metadata"]["labels"] == {"app": "web"}
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": rs["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]
    # calculateStatus: every pod matches the template labels, is Ready since t=1 and minReadySeconds is 0
    assert rs["status"] == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                            "observedGeneration": 1}


def test_slow_start_batch_stops_after_a_failing_batch():
    # slowStartBatch(10, 1): batches 1, 2, 4, 3; the 4th call fails, its batch (calls 4-7) still runs
    calls = []

    def fn():
        calls.append(1)
        return RuntimeError("quota") if len(calls) == 4 else None

    created, err = slow_start_batch(10, 1, fn)
    assert (len(calls), created, str(err)) == (7, 6, "quota")
    assert slow_start_batch(5, 1, lambda: None) == (5, None)


def _two_phase(tmp_path, text_for):
    """Run once to learn the generated pod names (the API server's seeded generator makes them the same in
    the second run), then run the scenario that acts on them."""
    first = run_text(tmp_path, text_for(None))
    names = [n for _, n in _created_pods(first)]
    return names, run_text(tmp_path, text_for(names))


def test_a_terminating_pod_is_replaced_at_once(tmp_path):
    def text(names):
        actions = f"[{{at: 10s, delete: pod/{names[0]}}}]" if names else ""
        return _scenario(_rs(3), actions)

    names, r = _two_phase(tmp_path, text)
    # the DELETE sets deletionTimestamp: the pod is no longer active (IsPodActive), so the ReplicaSet
    # creates its replacement in the same instant, while the old pod is still terminating (removed at 11)
    assert [t for t, _ in _created_pods(r)] == [0.0, 0.0, 0.0, 10.0]
    assert [x["t"] for x in records(r, "terminating", object=f"Pod/default/{names[0]}")] == [10.0]
    assert [x["t"] for x in records(r, "deleted", object=f"Pod/default/{names[0]}")] == [11.0]
    assert _obj(r, "ReplicaSet", "web")["status"]["replicas"] == 3


def test_scale_down_deletes_unscheduled_pods_first(tmp_path):
    # one node with 1 CPU: of two pods requesting 600m one stays Pending without a node;
    # ActivePodsWithRanks rule 1 (unassigned < assigned) picks it, whatever the other criteria
    nodes = '  cluster:\n    nodes: [{name: node-1, capacity: {cpu: "1", memory: 4Gi, pods: "110"}}]\n'
    r = run_text(tmp_path, _scenario(_rs(2, ", resources: {requests: {cpu: 600m}}"),
                                     "[{at: 10s, scale: replicaset/web, replicas: 1}]", nodes=nodes))
    pods = [n for _, n in _created_pods(r)]
    unscheduled = [p for p in pods if _node_of(r, p) is None]
    assert len(unscheduled) == 1
    deletes = records(r, "api", verb="delete", by="replicaset-controller")
    assert [(d["t"], d["object"]) for d in deletes] == [(10.0, f"Pod/default/{unscheduled[0]}")]
    assert [(e["t"], e["message"]) for e in records(r, "event", reason="SuccessfulDelete")] == \
        [(10.0, f"Deleted pod: {unscheduled[0]}")]


def test_scale_down_deletes_doubled_up_pods_first(tmp_path):
    # a Deployment's three pods requesting 100m on two equal nodes: the scheduler puts two on one node (least
    # allocated, ties by name); all Running, Ready at 1 s, created at 0 s. Scaled to 2, its ReplicaSet ranks
    # each pod by the active pods of the Deployment's ReplicaSets on the same node (getIndirectlyRelatedPods;
    # a ReplicaSet without a controller has no related pods, so no ranks): 2 before 1
    nodes = "  cluster:\n    nodes: [{namePrefix: n, count: 2}]\n"
    dep = _deployment("web", 3).replace("image: nginx:1.27", "image: nginx:1.27, resources: {requests: {cpu: 100m}}")
    r = run_text(tmp_path, _scenario(dep, "[{at: 10s, scale: deployment/web, replicas: 2}]", nodes=nodes))
    on_node: dict[str, list[str]] = {}
    for _, p in _created_pods(r):
        on_node.setdefault(_node_of(r, p), []).append(p)
    assert sorted(len(ps) for ps in on_node.values()) == [1, 2]
    doubled = next(n for n, ps in on_node.items() if len(ps) == 2)
    deletes = records(r, "api", verb="delete", by="replicaset-controller")
    assert len(deletes) == 1 and deletes[0]["t"] == 10.0
    assert deletes[0]["object"].split("/")[-1] in on_node[doubled]


@pytest.mark.parametrize("version", ["1.21", "1.34"])
def test_scale_down_by_ready_time(tmp_path, version):
    # one pod Ready at 1 s; scaled to 2 at 20 s, the second is Ready at 21 s; scaled back to 1 at 60 s.
    # Rule 6, both ready: <=1.21 the more recently ready pod goes (afterOrZero); 1.22+ (LogarithmicScaleDown)
    # compares floor(log2(age in ns)): 59 s and 39 s are both in [2^35 ns, 2^36 ns) = [34.4 s, 68.7 s), so the
    # lower UID goes. The scenario stops at 60.5 s, before the deleted pod is removed (61 s). UIDs come from
    # the seeded API server: the first seed giving the older pod the lower UID makes the two rules disagree.
    actions = "[{at: 20s, scale: replicaset/web, replicas: 2}, {at: 60s, scale: replicaset/web, replicas: 1}]"
    for seed in range(10):
        r = run_text(tmp_path, _scenario(_rs(1), actions, until="60.5s", version=version, seed=seed))
        (t0, first), (t1, second) = _created_pods(r)
        uids = {p: _obj(r, "Pod", p)["metadata"]["uid"] for p in (first, second)}
        if uids[first] < uids[second]:
            break
    assert (t0, t1) == (0.0, 20.0)
    deletes = records(r, "api", verb="delete", by="replicaset-controller")
    assert [d["t"] for d in deletes] == [60.0]
    deleted = deletes[0]["object"].split("/")[-1]
    assert deleted == (second if version == "1.21" else min(uids, key=uids.get))


def test_min_ready_seconds_availability(tmp_path):
    # minReadySeconds 5, pod Ready at 1 s (lastTransitionTime 1 s). The sync at 1 s finds it ready but not
    # available and requeues the ReplicaSet after minReadySeconds (the pod update's own requeue after
    # minReadySeconds + 1 s is merged into the earlier one by the delaying queue): at 6 s it is available.
    r = run_text(tmp_path, _scenario(_rs(1).replace("replicas: 1", "replicas: 1\n        minReadySeconds: 5")))
    updates = [x["t"] for x in records(r, "api", verb="update", object="ReplicaSet/default/web", subresource="status")]
    assert updates[-2:] == [1.0, 6.0]
    assert _obj(r, "ReplicaSet", "web")["status"]["availableReplicas"] == 1


# ---- Deployment ------------------------------------------------------------------------------------------


def _deployment(name: str, replicas: int, strategy: str = "", command: str = "", extra: str = "",
                template_meta: str = "") -> str:
    cmd = f", command: {command}" if command else ""
    return f"""
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {{name: {name}}}
      spec:
        replicas: {replicas}{strategy}{extra}
        selector: {{matchLabels: {{app: {name}}}}}
        template:
          metadata: {{labels: {{app: {name}}}{template_meta}}}
          spec:
            containers: [{{name: app, image: nginx:1.27{cmd}}}]
"""


def _scaling_events(r) -> list[tuple[float, str]]:
    return [(e["t"], e["message"]) for e in records(r, "event", reason="ScalingReplicaSet")]


def _rs_names(r) -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb="create", by="deployment-controller")]


def _wording(version: str):
    if version in ("1.34", "1.32"):   # PR #125118, first in v1.32.0-alpha.2
        return (lambda rs, a, b: f"Scaled {'up' if b > a else 'down'} replica set {rs} from {a} to {b}",
                lambda rs, n: f"Scaled up replica set {rs} from 0 to {n}")
    if version in ("1.28", "1.31"):   # PR #101142
        return (lambda rs, a, b: f"Scaled {'up' if b > a else 'down'} replica set {rs} to {b} from {a}",
                lambda rs, n: f"Scaled up replica set {rs} to {n}")
    return (lambda rs, a, b: f"Scaled {'up' if b > a else 'down'} replica set {rs} to {b}",
            lambda rs, n: f"Scaled up replica set {rs} to {n}")


ROLL = ("[{at: 10s, patch: deployment/web, "
        "mergePatch: {spec: {template: {spec: {containers: [{name: app, image: 'nginx:1.28'}]}}}}}]")


@pytest.mark.parametrize("version", ["1.34", "1.32", "1.31", "1.28", "1.22"])
def test_rolling_update_steps(tmp_path, version):
    """4 replicas, maxSurge 25% -> ceil(1) = 1, maxUnavailable 25% -> floor(1) = 1 (ResolveFenceposts):
    at most 5 pods, at least 3 available.

    t=10 patch: NewRSNewReplicas: 4 pods, room for 1 -> new RS created with 1; reconcileOldReplicaSets:
      maxScaledDown = 5 - 3 - 1 unavailable new = 1, 4 available > 3 -> old 4 -> 3; the next sync (same
      instant): 3 + 1 = 4 < 5 -> new 1 -> 2; old: 5 - 3 - 2 = 0, nothing.
    t=11 the two new pods are Ready: maxScaledDown = 5 - 3 - 0 = 2, available 3 + 2 = 5 -> old 3 -> 1;
      then 1 + 2 = 3 -> new 2 -> 4.
    t=12 the last two are Ready: available 1 + 4 = 5 > 3 -> old 1 -> 0.
    """
    r = run_text(tmp_path, _scenario(_deployment("web", 4), ROLL, until="30s", version=version))
    (t_old, old), (t_new, new) = _rs_names(r)
    assert (t_old, t_new) == (0.0, 10.0)
    scaled, created = _wording(version)
    assert _scaling_events(r) == [
        (0.0, created(old, 4)),
        (10.0, created(new, 1)), (10.0, scaled(old, 4, 3)), (10.0, scaled(new, 1, 2)),
        (11.0, scaled(old, 3, 1)), (11.0, scaled(new, 2, 4)),
        (12.0, scaled(old, 1, 0)),
    ]


def test_rollout_objects_and_status(tmp_path):
    r = run_text(tmp_path, _scenario(_deployment("web", 4), ROLL, until="30s"))
    (_, old), (_, new) = _rs_names(r)
    d = _obj(r, "Deployment", "web")
    for name, rev, image in ((old, "1", "nginx:1.27"), (new, "2", "nginx:1.28")):
        rs = _obj(r, "ReplicaSet", name)
        h = name.removeprefix("web-")
        # <deployment>-<pod-template-hash>: the decimal fnv32a sum, safe-encoded: digits map to 4-9, b, c, d, f
        assert set(h) <= set("456789bcdf") and 1 <= len(h) <= 10
        assert rs["metadata"]["labels"] == {"app": "web", "pod-template-hash": h}
        assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": h}}
        assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == image
        assert rs["metadata"]["annotations"] == {"deployment.kubernetes.io/revision": rev,
                                                 "deployment.kubernetes.io/desired-replicas": "4",
                                                 "deployment.kubernetes.io/max-replicas": "5"}
        assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]
    assert _obj(r, "ReplicaSet", old)["spec"]["replicas"] == 0
    assert _obj(r, "ReplicaSet", new)["spec"]["replicas"] == 4
    st = d["status"]
    assert {k: st.get(k) for k in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                   "availableReplicas", "unavailableReplicas")} == \
        {"observedGeneration": 2, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 4, "availableReplicas": 4,
         "unavailableReplicas": None}
    conds = [(c["type"], c["status"], c["reason"], c["message"]) for c in st["conditions"]]
    assert conds == [("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
                     ("Progressing", "True", "NewReplicaSetAvailable",
                      f'ReplicaSet "{new}" has successfully progressed.')]


def test_pod_template_hash_is_fnv32a_safe_encoded():
    # FNV-1a 32 test vectors: "" -> 0x811c9dc5, "a" -> 0xe40c292c
    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C
    # SafeEncodeString maps each rune r to alphanums[r % 27]: '0' (48) -> 21 -> '4', '9' (57) -> 3 -> 'f'
    assert safe_encode_string("0123456789") == "456789bcdf"
    t = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "x"}]}}
    assert compute_hash(t, None) == compute_hash(t, None) != compute_hash(t, 1)


def test_proportional_scaling_during_a_stuck_rollout(tmp_path):
    """The example of the Deployment concept page ("Proportional scaling"): 10 replicas, maxSurge 3,
    maxUnavailable 2, rolled out to a template whose pods never get Ready: old 10 -> 8, new 3 -> 5 (13 pods,
    8 available). Scaled to 15: 5 more pods, 18 allowed; getReplicaSetFraction: old 8 * 18 / 13 = 11.08 ->
    +3, new 5 * 18 / 13 = 6.92 -> +2: old 11, new 7."""
    dep = _deployment("nginx", 10, "\n        strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 3, "
                      "maxUnavailable: 2}}")
    dep = dep.replace("image: nginx:1.27", "image: nginx:1.27, readinessProbe: {httpGet: {path: /, port: 80}}")
    actions = """
    - at: 20s
      patch: deployment/nginx
      mergePatch:
        spec:
          template:
            metadata: {annotations: {podlife/behavior: "app: {readySeconds: 100000}"}}
            spec: {containers: [{name: app, image: "nginx:1.161", readinessProbe: {httpGet: {path: /, port: 80}}}]}
    - {at: 40s, scale: deployment/nginx, replicas: 15}"""
    r = run_text(tmp_path, _scenario(dep, actions, until="60s"))
    (_, old), (_, new) = _rs_names(r)
    scaled, created = _wording("1.34")
    assert _scaling_events(r) == [
        (0.0, created(old, 10)),
        (20.0, created(new, 3)), (20.0, scaled(old, 10, 8)), (20.0, scaled(new, 3, 5)),
        (40.0, scaled(old, 8, 11)), (40.0, scaled(new, 5, 7)),
    ]


def test_scale_is_a_scaling_event_not_a_rollout(tmp_path):
    r = run_text(tmp_path, _scenario(_deployment("web", 2), "[{at: 10s, scale: deployment/web, replicas: 5}]"))
    ((_, rs),) = _rs_names(r)
    scaled, created = _wording("1.34")
    assert _scaling_events(r) == [(0.0, created(rs, 2)), (10.0, scaled(rs, 2, 5))]
    assert [t for t, _ in _created_pods(r)] == [0.0, 0.0, 10.0, 10.0, 10.0]


SLEEPER = "[sleep, '3600']"
RECREATE = "\n        strategy: {type: Recreate}"
RELABEL = "[{at: 10s, patch: deployment/db, mergePatch: {spec: {template: {metadata: {labels: {app: db, v: '2'}}}}}}]"


def test_recreate_waits_until_the_old_pod_is_gone(tmp_path):
    """recreate.go: scale the old ReplicaSet to 0 at once; oldPodsRunning holds while the old pod exists and is
    not Succeeded/Failed (Terminating counts); the pod's deletion enqueues the Deployment (deletePod), which
    then creates the new ReplicaSet at its full size. `sleep 3600` ignores SIGTERM: SIGKILL at 10 + 30 = 40,
    the pod removed at 41."""
    r = run_text(tmp_path, _scenario(_deployment("db", 1, RECREATE, SLEEPER), RELABEL, until="60s"))
    (_, old), (t_new, new) = _rs_names(r)
    (old_pod,) = [n for t, n in _created_pods(r) if t == 0.0]
    assert [(s["t"], s["signal"]) for s in records(r, "signal", object=f"Pod/default/{old_pod}")] == \
        [(10.0, "SIGTERM"), (40.0, "SIGKILL")]
    assert [x["t"] for x in records(r, "deleted", object=f"Pod/default/{old_pod}")] == [41.0]
    assert t_new == 41.0
    scaled, created = _wording("1.34")
    assert _scaling_events(r) == [(0.0, created(old, 1)), (10.0, scaled(old, 1, 0)), (41.0, created(new, 1))]
    assert [t for t, _ in _created_pods(r)] == [0.0, 41.0]


@pytest.mark.parametrize("version", ["1.22", "1.26", "1.27"])
def test_recreate_new_replica_set_when_the_old_pod_is_removed(tmp_path, version):
    # whatever the kubelet's removal timing of each version, the new ReplicaSet comes with the removal
    r = run_text(tmp_path, _scenario(_deployment("db", 1, RECREATE, SLEEPER), RELABEL, until="60s", version=version))
    (_, _), (t_new, _) = _rs_names(r)
    (old_pod,) = [n for t, n in _created_pods(r) if t == 0.0]
    assert [x["t"] for x in records(r, "deleted", object=f"Pod/default/{old_pod}")] == [t_new]
    assert t_new > 40.0


STUCK = ", finalizers: [example.com/hold]"


@pytest.mark.parametrize("version,expected", [("1.26", []), ("1.34", [601.0])])
def test_recreate_stuck_behind_a_terminating_pod(tmp_path, version, expected):
    """Seed 004: a Recreate rollout never starts while an old pod stays Terminating (here a finalizer holds
    it). Up to 1.26 the pod keeps phase Running: oldPodsRunning stays true for good. From 1.27 the kubelet
    gives the stopped pod a terminal phase (PR #115331), which oldPodsRunning ignores, but no event enqueues
    the Deployment (deletePod only fires on removal, issue #128798): it goes on at the progress check queued
    at creation, when the first rollout was still progressing: 0 + progressDeadlineSeconds 600 + 1 s."""
    r = run_text(tmp_path, _scenario(_deployment("db", 1, RECREATE, template_meta=STUCK), RELABEL,
                                     until="700s", version=version))
    assert [t for t, _ in _rs_names(r)][1:] == expected


def test_revision_history_limit(tmp_path):
    """revisionHistoryLimit 1, 1 replica (maxSurge 1, maxUnavailable 0): each rollout completes one second
    after it starts (the new pod Ready, the old RS scaled to 0). After the third rollout (at 20 s) two old
    ReplicaSets exist: cleanupDeployment deletes the lowest revision once the Deployment is complete, at 21 s."""
    actions = """
    - {at: 10s, patch: deployment/web, mergePatch: {spec: {template: {metadata: {labels: {app: web, v: '2'}}}}}}
    - {at: 20s, patch: deployment/web, mergePatch: {spec: {template: {metadata: {labels: {app: web, v: '3'}}}}}}"""
    r = run_text(tmp_path, _scenario(_deployment("web", 1, extra="\n        revisionHistoryLimit: 1"), actions,
                                     until="40s"))
    (_, first), (_, second), (_, third) = _rs_names(r)
    deletes = [(x["t"], x["object"]) for x in records(r, "api", verb="delete", by="deployment-controller")]
    assert deletes == [(21.0, f"ReplicaSet/default/{first}")]
    assert r.cluster.store.try_get("ReplicaSet", "default", second) is not None


def test_paused_deployment_does_not_roll_out(tmp_path):
    """A paused Deployment is only synced for scale (sync.go sync): a template change creates no ReplicaSet
    until it is resumed; resumed at 20 s, it rolls out then (maxSurge ceil(25% of 2) = 1, maxUnavailable 0)."""
    actions = """
    - {at: 5s, patch: deployment/web, mergePatch: {spec: {paused: true}}}
    - {at: 10s, patch: deployment/web, mergePatch: {spec: {template: {metadata: {labels: {app: web, v: '2'}}}}}}
    - {at: 20s, patch: deployment/web, mergePatch: {spec: {paused: false}}}"""
    r = run_text(tmp_path, _scenario(_deployment("web", 2), actions, until="40s"))
    (_, old), (t_new, new) = _rs_names(r)
    assert t_new == 20.0
    scaled, created = _wording("1.34")
    assert _scaling_events(r)[:2] == [(0.0, created(old, 2)), (20.0, created(new, 1))]
    cond = next(c for c in _obj(r, "Deployment", "web")["status"]["conditions"] if c["type"] == "Progressing")
    assert (cond["status"], cond["reason"]) == ("True", "NewReplicaSetAvailable")


def test_seed_004_recreate_never_starts_while_the_old_pod_is_terminating():
    """examples/seed-004-node-notready-recreate.yaml: worker-0 is cut off at 65 s, both Deployments are rolled
    out at 200 s. web (RollingUpdate) gets its new ReplicaSet and a pod on a healthy worker at once; db
    (Recreate) scales its old ReplicaSet to 0, and its old pod, deleted but on an unreachable node, stays
    Terminating with phase Running: oldPodsRunning holds to the end and no new ReplicaSet is created."""
    from pathlib import Path

    from podlife.scenario.load import load_scenario
    from podlife.scenario.run import run

    path = Path(__file__).resolve().parent.parent / "examples" / "seed-004-node-notready-recreate.yaml"
    r = run(load_scenario(str(path), []))
    created = _rs_names(r)
    assert [t for t, n in created if n.startswith("db-")] == [0.0]
    web = [(t, n) for t, n in created if n.startswith("web-")]
    assert [t for t, _ in web] == [0.0, 200.0]
    new_web_pods = [n for t, n in _created_pods(r) if n.startswith(web[1][1] + "-")]
    assert len(new_web_pods) == 1 and _node_of(r, new_web_pods[0]) in ("worker-1", "worker-2")
    (db_pod,) = [n for _, n in _created_pods(r) if n.startswith("db-")]
    assert [x["t"] for x in records(r, "terminating", object=f"Pod/default/{db_pod}")][0] == 200.0
    assert not records(r, "deleted", object=f"Pod/default/{db_pod}")
    assert _obj(r, "Pod", db_pod)["status"]["phase"] == "Running"
    assert [(t, m) for t, m in _scaling_events(r) if "db-" in m][-1][0] == 200.0


def test_rollout_conditions_over_time(tmp_path, monkeypatch):
    """The conditions `kubectl rollout status` and `describe` read, as each status write leaves them.

    t=0: the new ReplicaSet's creation sets Progressing NewReplicaSetCreated; the next sync sees progress
    (updatedReplicas 0 -> 4): ReplicaSetUpdated; 0 available < 4 - maxUnavailable 1: Available False.
    t=1: the pods are Ready: Available True, the rollout complete: NewReplicaSetAvailable.
    t=10 (new template): NewReplicaSetCreated, then ReplicaSetUpdated; 3 pods stay available all along, so
    Available stays True; t=12: NewReplicaSetAvailable."""
    import podlife.scenario.run as runmod

    seen: list[tuple[float, str, str, str]] = []
    last: dict[str, tuple[str, str]] = {}
    build = runmod.build

    def watching_build(sc):
        cluster = build(sc)

        def on_deployment(type_, obj, old):
            for c in (obj.get("status") or {}).get("conditions") or ():
                if last.get(c["type"]) != (c["status"], c["reason"]):
                    last[c["type"]] = (c["status"], c["reason"])
                    seen.append((cluster.kernel.now, c["type"], c["status"], c["reason"]))
        cluster.store.watch("Deployment", on_deployment)
        return cluster

    monkeypatch.setattr(runmod, "build", watching_build)
    run_text(tmp_path, _scenario(_deployment("web", 4), ROLL, until="30s"))
    assert [s for s in seen if s[1] == "Progressing"] == [
        (0.0, "Progressing", "True", "NewReplicaSetCreated"), (0.0, "Progressing", "True", "ReplicaSetUpdated"),
        (1.0, "Progressing", "True", "NewReplicaSetAvailable"),
        (10.0, "Progressing", "True", "NewReplicaSetCreated"), (10.0, "Progressing", "True", "ReplicaSetUpdated"),
        (12.0, "Progressing", "True", "NewReplicaSetAvailable")]
    assert [s for s in seen if s[1] == "Available"] == [
        (0.0, "Available", "False", "MinimumReplicasUnavailable"),
        (1.0, "Available", "True", "MinimumReplicasAvailable")]


def test_progress_deadline_exceeded(tmp_path):
    """A rollout whose new pods never get Ready (the stuck rollout above, without the scale): the last progress
    is the new ReplicaSet's scale-up at 20 s (Progressing lastUpdateTime 20 s). requeueStuckDeployment asks
    for a check at lastUpdateTime + progressDeadlineSeconds (600) + 1 s: at 621 s the deadline is strictly
    past, and Progressing turns False, ProgressDeadlineExceeded (what makes `kubectl rollout status` fail)."""
    dep = _deployment("nginx", 10, "\n        strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 3, "
                      "maxUnavailable: 2}}")
    dep = dep.replace("image: nginx:1.27", "image: nginx:1.27, readinessProbe: {httpGet: {path: /, port: 80}}")
    actions = """
    - at: 20s
      patch: deployment/nginx
      mergePatch:
        spec:
          template:
            metadata: {annotations: {podlife/behavior: "app: {readySeconds: 100000}"}}"""
    r = run_text(tmp_path, _scenario(dep, actions, until="700s"))
    (_, _), (_, new) = _rs_names(r)
    updates = [x["t"] for x in records(r, "api", verb="update", object="Deployment/default/nginx",
                                       subresource="status")]
    assert updates[-1] == 621.0
    cond = next(c for c in _obj(r, "Deployment", "nginx")["status"]["conditions"] if c["type"] == "Progressing")
    assert (cond["status"], cond["reason"], cond["message"]) == \
        ("False", "ProgressDeadlineExceeded", f'ReplicaSet "{new}" has timed out progressing.')
    assert cond["lastUpdateTime"] == "2025-01-01T00:10:21Z"


def test_condition_records_and_expectations_on_any_kind(tmp_path):
    """Deployment conditions are trace `condition` records, and a `condition` expectation may name any kind:
    4 replicas Ready at 1 s (the first relist) make the Deployment Available (minReadySeconds 0)."""
    text = _scenario(_deployment("web", 4), "[]", until="20s").replace(
        "  actions: []", "  actions: []\n  expect:\n    - object: deployment/web\n"
                         "      condition: {type: Available, status: \"True\", reason: MinimumReplicasAvailable}\n"
                         "      by: 5s")
    r = run_text(tmp_path, text)
    avail = [(x["t"], x["status"], x["reason"]) for x in records(r, "condition", object="Deployment/default/web",
                                                                  conditionType="Available")]
    assert avail[-1][1:] == ("True", "MinimumReplicasAvailable") and avail[-1][0] <= 5.0
    assert all(v.passed for v in r.verdicts) and len(r.verdicts) == 1


TERMINATING = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: terminating}
spec:
  until: UNTIL
  objects:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec:
          terminationGracePeriodSeconds: 30
          containers: [{name: app, image: busybox, command: [sh, -c, "sleep 3600"]}]
  actions:
  - {at: 10s, scale: deployment/web, replicas: 1}
"""


@pytest.mark.parametrize("version, until, count", [("1.35", "20s", 1), ("1.35", "50s", 0), ("1.34", "20s", None)])
def test_terminating_replicas(tmp_path, version, until, count):
    """KEP-3973 (DeploymentReplicaSetTerminatingReplicas, beta and on from 1.35): the scale-down at 10 s deletes
    one pod, whose shell ignores SIGTERM: it is terminating until SIGKILL at 40 and removed at the relist at 41.
    The ReplicaSet counts it in status.terminatingReplicas (deleted, not yet Succeeded/Failed), the
    Deployment sums its sets; before 1.35 neither has the field."""
    r = run_text(tmp_path, TERMINATING.replace("UNTIL", until), version=version)
    [rs] = r.cluster.store.list("ReplicaSet")
    d = r.cluster.store.get("Deployment", "default", "web")
    assert rs["status"].get("terminatingReplicas") == count
    assert d["status"].get("terminatingReplicas") == count
    assert rs["status"]["replicas"] == d["status"]["replicas"] == 1

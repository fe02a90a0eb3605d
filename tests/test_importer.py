"""Importing a real cluster's state: dumps read as users make them (tests/data/importer holds one made with
kubectl from a podlife up cluster: its README says how), restored mid-life, quiet when nothing is done, and the
what-if answers of the shipped examples, checked against their timelines."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from podlife.cli import main
from podlife.importer import command
from podlife.importer.dump import load_dump
from podlife.scenario.run import Result, run

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "importer"
DUMP = DATA / "dump.yaml"                # kubectl get <the documented kinds> -A -o yaml, Kubernetes 1.32
EXAMPLES = ROOT / "examples" / "import"
SHOP = EXAMPLES / "shop-dump.yaml"       # the same cluster made at 1.29, 30 minutes in

NOTHING = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: nothing}
spec:
  until: 5m
"""


def _run(tmp_path: Path, dump_paths: list[str], scenario: str, **kw: Any) -> tuple[Result, Any]:
    path = tmp_path / "scenario.yaml"
    path.write_text(textwrap.dedent(scenario))
    dump = command.read(dump_paths)
    sc = command.scenario(dump, str(path), **kw)
    return run(sc, builder=command.builder(dump)), dump


def _without(obj: dict[str, Any], *paths: tuple[str, ...]) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].pop("resourceVersion", None)
    for conds in [((out.get("status") or {}).get("conditions") or [])]:
        for c in conds:
            c.pop("lastHeartbeatTime", None)
    if out["kind"] == "Lease":
        out["spec"].pop("renewTime", None)
    return out


# ---- reading ----------------------------------------------------------------------------------------

def test_yaml_json_and_cluster_info_dump_are_read() -> None:
    d = load_dump([str(DUMP)])
    assert d.version == "1.32" and d.taken.isoformat() == "2025-01-01T00:10:00+00:00"
    kinds = {k: len(d.of(k)) for k in ("Node", "Pod", "Deployment", "StatefulSet", "DaemonSet", "PodDisruptionBudget",
                                       "ControllerRevision", "Lease", "EndpointSlice", "PriorityClass")}
    assert kinds == {"Node": 4, "Pod": 11, "Deployment": 1, "StatefulSet": 1, "DaemonSet": 1,
                     "PodDisruptionBudget": 2, "ControllerRevision": 2, "Lease": 4, "EndpointSlice": 2,
                     "PriorityClass": 1}
    assert all("managedFields" not in o["metadata"] for o in d.objects)
    info = load_dump([str(DATA / "cluster-info")])   # kubectl cluster-info dump --output-directory
    assert len(info.files) == 36 and len(info.logs) == 11 and len(info.of("Pod")) == 11 and len(info.events) == 60
    # its pods' StatefulSet is not in such a dump: the references are dropped, and it says so
    assert any("no StatefulSet objects, which own 3 objects (Pod shop/cache-0" in w for w in info.warnings)


def test_without_leases_the_instant_is_the_newest_event_or_condition(tmp_path: Path) -> None:
    """A cluster-info dump has no Leases, and a node's heartbeat can be 5 minutes old: the newest of the events'
    and the controllers' timestamps is the instant (here an Event seen again at 00:04:30, a Deployment still
    progressing at 00:03:00, a Job done at 00:02:00), and the warning says it may be later."""
    node = ("{kind: Node, apiVersion: v1, metadata: {name: n1, uid: n1, creationTimestamp: '2025-01-01T00:00:00Z'},"
            " status: {conditions: [{type: Ready, status: 'True', lastHeartbeatTime: '2025-01-01T00:00:10Z',"
            " lastTransitionTime: '2025-01-01T00:00:10Z'}], nodeInfo: {kubeletVersion: v1.30.1}}}")
    deploy = ("{kind: Deployment, apiVersion: apps/v1, metadata: {name: web, namespace: d, uid: w,"
              " creationTimestamp: '2025-01-01T00:00:00Z'}, spec: {}, status: {conditions: [{type: Progressing,"
              " status: 'True', lastUpdateTime: '2025-01-01T00:03:00Z', lastTransitionTime: '2025-01-01T00:00:05Z'}]}}")
    job = ("{kind: Job, apiVersion: batch/v1, metadata: {name: j, namespace: d, uid: j, creationTimestamp:"
           " '2025-01-01T00:00:00Z'}, spec: {}, status: {startTime: '2025-01-01T00:01:00Z',"
           " completionTime: '2025-01-01T00:02:00Z'}}")
    event = ("{kind: Event, apiVersion: v1, metadata: {name: e, namespace: d, creationTimestamp:"
             " '2025-01-01T00:00:20Z'}, reason: BackOff, count: 9, involvedObject: {kind: Pod, namespace: d, name: p},"
             " firstTimestamp: '2025-01-01T00:00:20Z', lastTimestamp: '2025-01-01T00:04:30Z'}")
    for name, items in (("all", [node, deploy, job, event]), ("no-events", [node, deploy, job]),
                        ("no-deploy", [node, job])):
        (tmp_path / f"{name}.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n" +
                                               "".join(f"- {i}\n" for i in items))
    taken = {name: load_dump([str(tmp_path / f"{name}.yaml")]) for name in ("all", "no-events", "no-deploy")}
    assert {k: d.taken.strftime("%H:%M:%S") for k, d in taken.items()} == \
        {"all": "00:04:30", "no-events": "00:03:00", "no-deploy": "00:02:00"}
    assert ("the dump has no node Leases: its instant is taken as its newest timestamp, 2025-01-01T00:04:30Z"
            in taken["all"].warnings[-1])
    assert not any("no node Leases" in w for w in load_dump([str(DUMP)]).warnings)


def test_json_list_reads_as_the_yaml(tmp_path: Path) -> None:
    import yaml

    as_json = tmp_path / "dump.json"
    as_json.write_text(json.dumps(yaml.safe_load(DUMP.read_text())))
    assert load_dump([str(as_json)]).objects == load_dump([str(DUMP)]).objects


def test_secret_data_is_never_kept(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(DUMP.read_text() + textwrap.dedent("""\
        ---
        apiVersion: v1
        kind: Secret
        metadata: {name: db, namespace: shop, uid: 5ec7e7a0-0000-4000-8000-000000000001, resourceVersion: "1",
                   creationTimestamp: "2025-01-01T00:00:00Z"}
        type: Opaque
        data: {password: aHVudGVyMg==}
        """))
    secret = load_dump([str(f)]).of("Secret")[0]
    assert secret["data"] == {"password": ""} and secret["type"] == "Opaque"   # the key, not its value


# ---- the start: quiet ----------------------------------------------------------------------------------

def test_an_imported_steady_cluster_stays_quiet_for_five_minutes(tmp_path: Path) -> None:
    result, dump = _run(tmp_path, [str(DUMP)], NOTHING)
    assert result.end == 300 and result.scenario.start_time == dump.taken
    writes = [(r["verb"], r["object"], r["by"], r.get("subresource")) for r in result.cluster.trace.records
              if r["type"] == "api"]
    # each kubelet posts its node status once as it starts (its heartbeat); nothing else is written
    assert sorted(writes) == [("update", f"Node/worker-{n}", "kubelet", "status") for n in ("a0", "a1", "b0", "b1")]
    assert not [r for r in result.cluster.trace.records if r["type"] in ("runtime", "phase", "deleted") and r["t"] > 0]
    # the state the objects start from is in the trace at 0 s (what expectations and the timelines read)
    assert len([r for r in result.cluster.trace.records if r["type"] == "phase" and r["t"] == 0]) == 11
    result.cluster.materialize()
    before = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): _without(o)
              for o in load_dump([str(DUMP)]).objects}
    after = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): _without(o)
             for o in result.cluster.store.all_objects() if o["kind"] != "Event"}
    assert after == before   # UIDs, timestamps, status, container start times: all as dumped
    web = next(o for o in result.cluster.store.list("Pod") if o["metadata"]["name"].startswith("frontend-"))
    assert web["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] == "2025-01-01T00:00:00Z"


def test_the_kubelet_adopts_containers_as_its_own(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, [str(DUMP)], NOTHING)
    kl = result.cluster.kubelets["worker-a0"]
    pods = {p["metadata"]["uid"]: p for p in result.cluster.store.list("Pod", node="worker-a0")}
    running = [c for c in kl.runtime.containers.values() if c.state == "CONTAINER_RUNNING"]
    assert {c.pod_uid for c in running} == set(pods) and {c.id for c in running} <= kl.refs
    # the pods' IPs stay theirs: the node's IPAM does not hand them out again
    ips = {p["status"]["podIP"] for p in pods.values()}
    assert not ips & {kl.runtime.ipam.allocate() for _ in range(3)}


CRASHER = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: crashing}
spec:
  kubernetesVersion: "1.32"
  until: 10m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: crasher
        annotations:
          podlife/behavior: |
            app: {exitAfterSeconds: 5, exitCode: 1}
      spec:
        containers: [{name: app, image: busybox:1.36}]
"""


def test_crash_loop_back_off_goes_on_from_the_restart_count(tmp_path: Path) -> None:
    from podlife.scenario.load import load_scenario

    (tmp_path / "c.yaml").write_text(CRASHER)
    first = run(load_scenario(str(tmp_path / "c.yaml")))
    (tmp_path / "dump.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                                    "items": first.cluster.store.all_objects()}))
    pod = first.cluster.store.get("Pod", "default", "crasher")
    cs = pod["status"]["containerStatuses"][0]
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff" and cs["restartCount"] == 6
    result, dump = _run(tmp_path, [str(tmp_path / "dump.json")], NOTHING)
    finished = (command.read([str(tmp_path / "dump.json")]).taken - dump.taken).total_seconds()
    assert finished == 0
    from podlife.importer.dump import parse_time

    ended = (parse_time(cs["lastState"]["terminated"]["finishedAt"]) - dump.taken).total_seconds()
    creates = [r for r in result.cluster.trace.records if r["type"] == "runtime" and r["op"] == "create"]
    # after 6 restarts the back-off is 5 min (10 s doubled, capped): the 7th attempt starts once it has passed,
    # at the pod worker's next retry (10 s, jitter up to 50 %)
    assert creates and creates[0]["detail"].endswith("attempt 7")
    assert ended + 300 <= creates[0]["t"] <= ended + 300 + 15


# ---- the examples' what-if answers ---------------------------------------------------------------------

def test_zone_outage(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, [str(SHOP)], (EXAMPLES / "zone-outage.yaml").read_text())
    w = result.cluster.what_if.result(result.end)
    deletes = [(r["t"], r["object"]) for r in result.cluster.trace.records
               if r["type"] == "api" and r["verb"] == "delete"]
    taints = [(r["t"], r["object"]) for r in result.cluster.trace.records
              if r["type"] == "taint" and r["effect"] == "NoExecute"]
    # both nodes are NotReady at 55 s (50 s without a heartbeat, at the controller's 5 s tick); the NoExecute
    # taints follow through the zone's rate-limited queue, one node per 10 s (--node-eviction-rate 0.1), at 60
    # and 70 s; the pods tolerate them for 300 s (DefaultTolerationSeconds): evicted at 360 and 370 s
    assert [t for t, _ in taints] == [60.0, 70.0]
    assert [t for t, _ in deletes] == [360.0, 360.0, 370.0, 370.0]
    assert w["disruptedByWorkload"] == [
        {"workload": "Deployment/shop/frontend", "evicted": 2, "deleted": 0, "restarted": 0},
        {"workload": "StatefulSet/shop/cache", "evicted": 2, "deleted": 0, "restarted": 0}]
    # cache-1 and cache-2 stay Terminating on the dead nodes: one of the two the budget allows to be unavailable
    # too many, from the moment the nodes were marked NotReady (55 s) to the end
    assert w["worstPdbViolation"] == {"pdb": "PodDisruptionBudget/shop/cache", "shortfall": 1, "from": 55.0,
                                      "seconds": 545.0, "ongoing": True}
    assert w["readyReplicas"]["notBack"] == [{"workload": "StatefulSet/shop/cache", "ready": 1, "desired": 3,
                                              "belowSince": 55.0}]
    # the frontend's replacements run 1 s after their creation at 360 and 370 s (ready without a probe delay)
    assert w["readyReplicas"]["recovered"] == [{"workload": "Deployment/shop/frontend", "shortFrom": 55.0,
                                                "backAt": 371.0}]
    assert w["pending"] == {"count": 0, "pods": [], "reasons": []}


def test_drain_three_nodes_with_budgets(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, [str(SHOP)], (EXAMPLES / "drain-three.yaml").read_text())
    w = result.cluster.what_if.result(result.end)
    refused = [r["t"] for r in result.cluster.trace.records if r["type"] == "log"
               and r.get("component") == "kubectl" and "Cannot evict pod" in r["message"]]
    # each drain evicts what the budgets allow at once and retries the rest 5 s later
    assert refused and all(t in (120.0, 240.0) for t in refused)
    assert w["disruptedByWorkload"] == [
        {"workload": "Deployment/shop/frontend", "evicted": 5, "deleted": 0, "restarted": 0},
        {"workload": "StatefulSet/shop/cache", "evicted": 4, "deleted": 0, "restarted": 0}]
    assert w["worstPdbViolation"] is None   # evictions go through the budgets
    assert w["readyReplicas"]["allBack"] and w["readyReplicas"]["at"] == 247.0


def test_upgrade_diff_parts_where_the_grace_period_changed() -> None:
    res = CliRunner().invoke(main, ["diff", "--from", str(SHOP), str(EXAMPLES / "upgrade.yaml"), "--against", "1.33"])
    assert res.exit_code == 1, res.output
    # worker-a1 powered off at 180 s: marked NotReady 40 s (1.29) or 50 s (1.32+, PR #126287) after its last
    # heartbeat, at the node controller's next 5 s tick
    assert "parts at: 1.29: 225.000s" in res.output and "1.33: 235.000s" in res.output
    assert "what-if (1.29 | 1.33)" in res.output


def test_run_from_prints_the_what_if(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["run", "--from", str(SHOP), str(EXAMPLES / "zone-outage.yaml"), "--report",
                                    str(out), "--trace", "objects"])
    assert res.exit_code == 0, res.output
    assert "worst PDB violation: PodDisruptionBudget/shop/cache 1 pod(s) short of desiredHealthy for 545s" in res.output
    rep = json.loads(out.read_text())
    assert rep["import"]["takenAt"] == "2025-01-01T00:30:00Z" and rep["whatIf"]["worstPdbViolation"]["seconds"] == 545
    assert rep["assumptions"][0]["object"] == "dump"
    from podlife.report.html import render

    page = render(rep)
    assert "What-if" in page and "PodDisruptionBudget/shop/cache 1 pod(s) short of desiredHealthy" in page


# ---- clean-up --------------------------------------------------------------------------------------------

def test_namespace_and_selector_filters() -> None:
    d = load_dump([str(DUMP)], namespaces=["shop"])
    assert {o["metadata"].get("namespace") for o in d.objects} == {None, "shop"}
    assert [o["metadata"]["name"] for o in d.of("Namespace")] == ["shop"]
    d = load_dump([str(DUMP)], selector="app=frontend")
    assert {o["kind"] for o in d.objects if o["metadata"].get("namespace")} == {"Pod", "Deployment", "ReplicaSet"}


def test_anonymize_renames_consistently_and_stays_quiet(tmp_path: Path) -> None:
    out = tmp_path / "anon.yaml"
    res = CliRunner().invoke(main, ["import", str(DUMP), "--anonymize", "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    for name in ("frontend", "worker-", "shop", "nginx", "cache-", "fluent-bit"):
        assert name not in text
    result, dump = _run(tmp_path, [str(out)], NOTHING)
    assert sorted(r["object"] for r in result.cluster.trace.records if r["type"] == "api") == \
        [f"Node/node-{i}" for i in range(1, 5)]
    pods = dump.of("Pod")
    nodes = {n["metadata"]["name"] for n in dump.of("Node")}
    assert all(p["spec"]["nodeName"] in nodes for p in pods)


def test_kubelets_mid_upgrade_keep_their_own_versions(tmp_path: Path) -> None:
    """Three kubelets still at 1.28, one upgraded to 1.29: the control plane is 1.29 (no kubelet is newer than
    its API server: version skew policy), and each kubelet runs its node's version, as the node reports it."""
    text = SHOP.read_text().replace("kubeletVersion: v1.29.0", "kubeletVersion: v1.28.9", 3)
    (tmp_path / "mixed.yaml").write_text(text)
    result, dump = _run(tmp_path, [str(tmp_path / "mixed.yaml")], NOTHING)
    assert dump.version == "1.29" and result.scenario.kubernetes_version == "1.29"
    assert result.scenario.warnings[-1] == (
        "the kubelets run 1.28 (3 nodes), 1.29 (1 node) and the control plane 1.29 (the newest: no kubelet is newer "
        "than its API server): each kubelet runs its node's version (all run the given one where the run sets "
        "another)")
    versions = {name: kl.profile.version for name, kl in result.cluster.kubelets.items()}
    assert versions == {"worker-a0": "1.28", "worker-a1": "1.28", "worker-b0": "1.28", "worker-b1": "1.29"}
    assert result.cluster.profile.version == "1.29"
    reported = {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"]
                for n in result.cluster.store.list("Node")}
    assert reported == {"worker-a0": "v1.28.9", "worker-a1": "v1.28.9", "worker-b0": "v1.28.9", "worker-b1": "v1.29.0"}
    # run at another version (an upgrade what-if), every kubelet runs that one
    result, _ = _run(tmp_path, [str(tmp_path / "mixed.yaml")], NOTHING, kubernetes_version="1.30")
    assert {kl.profile.version for kl in result.cluster.kubelets.values()} == {"1.30"}


def test_the_control_plane_version_is_its_apiservers(tmp_path: Path) -> None:
    """A kube-apiserver static pod in the dump names the control plane's version: 1.33 over kubelets at 1.29
    (four minors: beyond the skew policy, said so) and one at 1.34 (newer than its API server)."""
    text = SHOP.read_text().replace("kubeletVersion: v1.29.0", "kubeletVersion: v1.34.1", 1)
    apiserver = textwrap.dedent("""\
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: kube-apiserver-cp-0, namespace: kube-system, uid: apiserver-cp-0,
                   creationTimestamp: '2025-01-01T00:00:00Z', labels: {component: kube-apiserver}}
        spec:
          containers: [{name: kube-apiserver, image: registry.k8s.io/kube-apiserver:v1.33.2}]
        """)
    (tmp_path / "dump.yaml").write_text(text)
    (tmp_path / "apiserver.yaml").write_text(apiserver)
    d = load_dump([str(tmp_path / "dump.yaml"), str(tmp_path / "apiserver.yaml")])
    assert d.version == "1.33"
    assert [w for w in d.warnings if w.startswith("the kubelets run")] == [
        "the kubelets run 1.29 (3 nodes), 1.34 (1 node) and the control plane 1.33 (its kube-apiserver's image): "
        "each kubelet runs its node's version (all run the given one where the run sets another) (1.29, 1.34: "
        "outside the version skew policy, which lets a kubelet be up to 3 minors older than its API server, never "
        "newer)"]


DRAIN_A0 = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: moved}
spec:
  until: 1m
  actions:
    - {at: 10s, drain: worker-a0, ignoreDaemonSets: true}
"""


def test_calibrate_takes_pull_times_from_events(tmp_path: Path) -> None:
    events = tmp_path / "events.yaml"
    ev = "{kind: Event, apiVersion: v1, metadata: {name: e%d, namespace: shop}, reason: %s, message: '%s', " \
         "involvedObject: {kind: Pod, namespace: shop, name: %s, uid: u%s}, firstTimestamp: '%s'}"
    items = [ev % (1, "Scheduled", "Successfully assigned", "a", "a", "2025-01-01T00:00:00Z"),
             ev % (2, "Pulled", 'Successfully pulled image "redis:7" in 2.3s (2.3s including waiting)', "a", "a",
                   "2025-01-01T00:00:03Z"),
             ev % (3, "Started", "Started container redis", "a", "a", "2025-01-01T00:00:04Z"),
             ev % (4, "Pulled", 'Successfully pulled image "redis:7" in 1.5s (1.5s including waiting)', "b", "b",
                   "2025-01-01T00:00:03Z"),
             ev % (5, "Pulled", 'Successfully pulled image "redis:7" in 3.1s (3.1s including waiting)', "c", "c",
                   "2025-01-01T00:00:03Z")]
    events.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(f"- {i}\n" for i in items))
    res = CliRunner().invoke(main, ["import", str(SHOP), "--calibrate", str(events), "-o", str(tmp_path / "c.yaml")])
    assert "calibrated image pulls: redis:7 2.3s" in res.output   # the median of three pulls
    # the written cluster carries the timings; run --from uses them, and says so among the assumptions
    d = command.read([str(tmp_path / "c.yaml")])
    assert d.pull_times == {"redis:7": 2.3} and d.start_latency == 4.0   # Scheduled 00:00:00, Started 00:00:04
    # draining worker-a0 moves cache-1 to worker-b1, the one node that never ran redis: it pulls it, for 2.3 s
    result, _ = _run(tmp_path, [str(tmp_path / "c.yaml")], DRAIN_A0)
    pulls = [(r["t"], r["reason"], r["message"]) for r in result.cluster.trace.records
             if r["type"] == "event" and r.get("object") == "Pod/shop/cache-1" and r["reason"] in ("Pulling", "Pulled")]
    assert [p[1] for p in pulls] == ["Pulling", "Pulled"] and round(pulls[1][0] - pulls[0][0], 3) == 2.3
    assert 'Successfully pulled image "redis:7" in 2.3s' in pulls[1][2]
    rep: dict[str, Any] = {}
    command.extend(rep, result, d)
    assert any("image pulls (from the events, --calibrate): redis:7 2.3s" in a["assumption"]
               for a in rep["assumptions"])


def test_calibrate_takes_sandbox_time_from_events(tmp_path: Path) -> None:
    """Scheduled to a pod's first container step is the kubelet's sync and RunPodSandbox: a (Pulled at 3 s after
    a 2.3 s pull: the pull began at 0.7 s), b (Pulling at 2 s), c (Created at 1 s, its image present): the median
    1 s becomes every node's sandbox time."""
    events = tmp_path / "events.yaml"
    ev = "{kind: Event, apiVersion: v1, metadata: {name: e%d, namespace: shop}, reason: %s, message: '%s', " \
         "involvedObject: {kind: Pod, namespace: shop, name: %s, uid: u%s}, firstTimestamp: '%s'}"
    t = "2025-01-01T00:00:0%dZ"
    items = [ev % (1, "Scheduled", "Successfully assigned", "a", "a", t % 0),
             ev % (2, "Pulled", 'Successfully pulled image "redis:7" in 2.3s (2.3s including waiting)', "a", "a",
                   t % 3),
             ev % (3, "Scheduled", "Successfully assigned", "b", "b", t % 0),
             ev % (4, "Pulling", 'Pulling image "redis:7"', "b", "b", t % 2),
             ev % (5, "Started", "Started container redis", "b", "b", t % 6),
             ev % (6, "Scheduled", "Successfully assigned", "c", "c", t % 0),
             ev % (7, "Created", "Created container redis", "c", "c", t % 1)]
    events.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(f"- {i}\n" for i in items))
    res = CliRunner().invoke(main, ["import", str(SHOP), "--calibrate", str(events), "-o", str(tmp_path / "c.yaml")])
    assert "calibrated sandbox (scheduled to first container step): median 1s" in res.output
    d = command.read([str(tmp_path / "c.yaml")])
    assert d.sandbox_seconds == 1.0 and d.start_latency == 6.0
    # cache-1, moved by the drain to worker-b1: its sandbox takes 1 s before it pulls redis (0 s uncalibrated)
    result, _ = _run(tmp_path, [str(tmp_path / "c.yaml")], DRAIN_A0)
    steps = {r["reason"]: r["t"] for r in result.cluster.trace.records if r["type"] == "event"
             and r.get("object") == "Pod/shop/cache-1" and r["reason"] in ("Scheduled", "Pulling")}
    assert round(steps["Pulling"] - steps["Scheduled"], 3) == 1.0
    rep: dict[str, Any] = {}
    command.extend(rep, result, d)
    assert any(a["assumption"].startswith("pod sandbox (from the events, --calibrate): 1s on every node")
               for a in rep["assumptions"])


# ---- bad dumps -----------------------------------------------------------------------------------------

def _import(*args: str) -> Any:
    return CliRunner().invoke(main, ["import", *args])


def test_a_truncated_file_is_exit_2(tmp_path: Path) -> None:
    text = DUMP.read_text()
    (tmp_path / "cut.yaml").write_text(text[: len(text) // 2 - 7])
    (tmp_path / "cut-at-line.yaml").write_text(text[: text.index("\n", len(text) // 2) + 1])
    (tmp_path / "cut.json").write_text('{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Pod", "meta')
    for f in ("cut.yaml", "cut-at-line.yaml", "cut.json"):
        res = _import(str(tmp_path / f))
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert "truncated?" in _import(str(tmp_path / "cut.json")).output
    assert "truncated?" in _import(str(tmp_path / "cut-at-line.yaml")).output


def test_a_value_its_yaml_tag_refuses_is_exit_2(tmp_path: Path) -> None:
    """`!!int abc` escaped PyYAML as a bare ValueError (a traceback): now a YAML error with its line."""
    (tmp_path / "tag.yaml").write_text("apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  spec:\n"
                                       "    podCIDR: !!int abc\n")
    res = _import(str(tmp_path / "tag.yaml"))
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert f"{tmp_path / 'tag.yaml'}:6: not valid YAML: cannot decode !!str `abc` as a !!int" in res.output


def test_a_version_podlife_does_not_model_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "old.yaml").write_text(DUMP.read_text().replace("kubeletVersion: v1.32.0", "kubeletVersion: v1.17.4"))
    res = _import(str(tmp_path / "old.yaml"))
    assert res.exit_code == 2
    assert "status.nodeInfo.kubeletVersion v1.17.4 is outside the versions podlife models (1.18 … 1.37)" in res.output


def test_duplicate_uids_are_exit_2(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(DUMP.read_text())
    pods = [o for o in data["items"] if o["kind"] == "Pod"]
    pods[1]["metadata"]["uid"] = pods[0]["metadata"]["uid"]
    (tmp_path / "dup.yaml").write_text(yaml.safe_dump(data))
    res = _import(str(tmp_path / "dup.yaml"))
    assert res.exit_code == 2 and "have the same UID" in res.output and pods[1]["metadata"]["name"] in res.output


def test_pods_on_missing_nodes_and_missing_owners_are_warnings(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(DUMP.read_text())
    data["items"] = [o for o in data["items"] if not (o["kind"] == "Node" and o["metadata"]["name"] == "worker-b1")
                     and o["kind"] != "ReplicaSet"]
    data["items"].append({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
        "name": "other", "namespace": "shop", "uid": "0000aaaa-0000-4000-8000-000000000001", "resourceVersion": "2",
        "creationTimestamp": "2025-01-01T00:00:00Z"}, "spec": {"replicas": 0, "selector": {"matchLabels": {"x": "y"}},
                                                            "template": {"metadata": {"labels": {"x": "y"}}}}})
    (tmp_path / "partial.yaml").write_text(yaml.safe_dump(data))
    res = _import(str(tmp_path / "partial.yaml"))
    assert res.exit_code == 0, res.output
    assert "pods are bound to nodes missing from the dump (worker-b1)" in res.output
    assert "Pod kube-system/node-agent-" in res.output
    assert "objects have owners missing from the dump: Pod shop/frontend-" in res.output
    # it runs: the pod garbage collector deletes the orphans, the garbage collector the pods whose owner is gone
    result, _ = _run(tmp_path, [str(tmp_path / "partial.yaml")], NOTHING)
    gone = {r["object"] for r in result.cluster.trace.records if r["type"] == "deleted"}
    assert any(g.startswith("Pod/shop/frontend-") for g in gone)


def test_no_objects_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    res = _import(str(tmp_path / "empty.yaml"))
    assert res.exit_code == 2 and "no Kubernetes objects found" in res.output


def test_up_from_serves_the_dump_in_memory(tmp_path: Path) -> None:
    from podlife.apiserver.up import UpConfig, build_cluster

    cfg = UpConfig(clock="manual", data_dir=str(tmp_path / "data"), dumps=(str(SHOP),))
    cluster = build_cluster(cfg)
    assert cfg.data_dir is None and any("kept in memory only" in w for w in cfg.warnings)
    assert cluster.trace.start_time.isoformat() == "2025-01-01T00:30:00+00:00"
    assert len(cluster.store.list("Pod")) == 11 and sorted(cluster.kubelets) == ["worker-a0", "worker-a1",
                                                                                    "worker-b0", "worker-b1"]
    assert not (tmp_path / "data").exists()


def test_up_from_refuses_a_data_dir(tmp_path: Path) -> None:
    """The imported cluster is not written to a data directory: asking for one is exit 2, nothing made."""
    for flag in (["--data-dir", str(tmp_path / "data")], ["--durable"]):
        res = CliRunner().invoke(main, ["up", "--from", str(SHOP), "--clock", "manual", *flag])
        assert res.exit_code == 2, res.output
        assert (f"{flag[0]}: up --from keeps the imported cluster in memory only (it is not written to a data "
                f"directory, and ends with the process); drop {flag[0]}") in res.output
    assert not (tmp_path / "data").exists()


def test_a_generated_1_33_dump_is_quiet(tmp_path: Path) -> None:
    """bench/import.py's generator: what a 1.33 cluster's objects hold (container statuses with volumeMounts,
    resources and user, Deployment and PDB conditions, ControllerRevisions, its own root CA bundle)."""
    import importlib.util

    import orjson

    spec = importlib.util.spec_from_file_location("bench_import", ROOT / "bench" / "import.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    (tmp_path / "dump.json").write_bytes(orjson.dumps(gen.generate(30, 600)))
    result, dump = _run(tmp_path, [str(tmp_path / "dump.json")], NOTHING)
    assert dump.version == "1.33" and len(dump.of("Pod")) == 600 and not dump.warnings
    writes = {(r["verb"], r["object"].split("/")[0], r["by"]) for r in result.cluster.trace.records
              if r["type"] == "api"}
    assert writes == {("update", "Node", "kubelet")}


def test_a_container_status_no_kubelet_writes_is_a_warning(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(DUMP.read_text())
    pod = next(o for o in data["items"] if o["kind"] == "Pod" and o["metadata"]["name"] == "cache-0")
    pod["status"]["containerStatuses"][0]["restartCount"] = "many"
    (tmp_path / "odd.yaml").write_text(yaml.safe_dump(data))
    res = _import(str(tmp_path / "odd.yaml"))
    assert res.exit_code == 0 and "Traceback" not in res.output
    assert "Pod shop/cache-0 (status.containerStatuses[0].restartCount: expected a non-negative integer)" in res.output
    result, _ = _run(tmp_path, [str(tmp_path / "odd.yaml")], NOTHING)
    starts = [r for r in result.cluster.trace.records if r["type"] == "runtime" and r["op"] == "start"]
    assert [r["object"] for r in starts] == ["Pod/shop/cache-0"]   # started afresh; the others adopted


def test_a_spec_or_status_that_is_not_a_mapping_is_not_a_traceback(tmp_path: Path) -> None:
    # both were AttributeErrors (exit 3): a spec that is not a mapping is refused, a status that is not one
    # is the warning any status a kubelet would not write is
    import yaml

    outputs = {}
    for part in ("spec", "status"):
        data = yaml.safe_load(DUMP.read_text())
        pod = next(o for o in data["items"] if o["kind"] == "Pod" and o["metadata"]["name"] == "cache-0")
        pod[part] = "oops"
        (tmp_path / f"{part}.yaml").write_text(yaml.safe_dump(data))
        outputs[part] = _import(str(tmp_path / f"{part}.yaml"))
    assert outputs["spec"].exit_code == 2, outputs["spec"].output
    assert outputs["spec"].output.endswith(": Pod cache-0: spec: expected a mapping\n")
    assert outputs["status"].exit_code == 0, outputs["status"].output
    assert "Pod shop/cache-0 (status: expected a mapping)" in outputs["status"].output


def test_a_node_without_conditions_is_exit_2(tmp_path: Path) -> None:
    # was a KeyError in the kubelet once podlife up --from or run --from started
    import yaml

    data = yaml.safe_load(DUMP.read_text())
    node = next(o for o in data["items"] if o["kind"] == "Node")
    del node["status"]["conditions"]
    (tmp_path / "node.yaml").write_text(yaml.safe_dump(data))
    res = _import(str(tmp_path / "node.yaml"))
    assert res.exit_code == 2, res.output
    assert res.output == f"Node {node['metadata']['name']}: status.conditions: expected the list of conditions its " \
                         "kubelet writes (kubectl get nodes -o yaml has them)\n"
    res = CliRunner().invoke(main, ["run", "--from", str(tmp_path / "node.yaml"), "examples/hello.yaml"])
    assert res.exit_code == 2, res.output


# ---- a scenario that names its dump, and a dump run on its own ------------------------------------------

def test_a_scenario_naming_its_dump_runs_as_with_from(tmp_path: Path) -> None:
    named, given = tmp_path / "named.json", tmp_path / "given.json"
    res = CliRunner().invoke(main, ["run", str(EXAMPLES / "zone-outage.yaml"), "--report", str(named)])
    assert res.exit_code == 0, res.output
    # --from replaces the dumps the scenario names (here by the same file)
    res = CliRunner().invoke(main, ["run", "--from", str(SHOP), str(EXAMPLES / "zone-outage.yaml"), "--report",
                                    str(given)])
    assert res.exit_code == 0, res.output
    assert named.read_bytes() == given.read_bytes()
    # the path is the scenario's directory's, as objectsFrom's are
    assert json.loads(named.read_text())["import"]["files"] == [str(SHOP)]


def test_a_named_dump_that_is_missing_or_malformed_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(NOTHING + "  clusterFrom: [nowhere.yaml]\n")
    res = CliRunner().invoke(main, ["run", str(path)])
    assert res.exit_code == 2 and "nowhere.yaml" in res.output and "Traceback" not in res.output
    path.write_text(NOTHING + "  clusterFrom: {a: 1}\n")
    res = CliRunner().invoke(main, ["run", str(path)])
    assert res.exit_code == 2
    assert "spec.clusterFrom: expected a list of dump files or directories" in res.output


def test_a_command_that_reads_no_dump_refuses_a_scenario_naming_one(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["explain", str(EXAMPLES / "zone-outage.yaml"), "--pod", "cache-1"])
    assert res.exit_code == 2, res.output
    assert "spec.clusterFrom: names cluster dumps, which only podlife run and podlife diff read" in res.output


def test_diff_reads_the_dump_the_scenario_names() -> None:
    res = CliRunner().invoke(main, ["diff", str(EXAMPLES / "upgrade.yaml"), "--against", "1.33"])
    assert res.exit_code == 1, res.output
    assert "parts at: 1.29: 225.000s" in res.output and "1.33: 235.000s" in res.output


def test_a_dump_given_as_the_scenario_runs_its_cluster_on(tmp_path: Path) -> None:
    out, ref = tmp_path / "r.json", tmp_path / "ref.json"
    res = CliRunner().invoke(main, ["run", str(SHOP), "--report", str(out), "--until", "5m"])
    assert res.exit_code == 0, res.output
    assert f"warning: {SHOP}: a cluster dump: its cluster runs on from the instant it was taken" in res.output
    nothing = tmp_path / "shop-dump.yaml"   # the name the wrapped scenario takes from the file
    nothing.write_text(NOTHING.replace("nothing", "shop-dump"))
    res = CliRunner().invoke(main, ["run", "--from", str(SHOP), str(nothing), "--report", str(ref)])
    assert res.exit_code == 0, res.output
    a, b = json.loads(out.read_text()), json.loads(ref.read_text())
    assert a["import"] == b["import"] and a["whatIf"] == b["whatIf"] and a["import"]["pods"] > 0


def test_plain_manifests_holding_a_node_are_not_a_dump() -> None:
    from podlife.importer.declared import is_dump

    node = "kind: List\napiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n"
    assert not is_dump(node)   # written by hand: no resourceVersion, so not read from a cluster
    assert is_dump(node.replace("{name: n1}", "{name: n1, resourceVersion: '7'}"))

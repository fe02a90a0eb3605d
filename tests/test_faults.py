"""Faults end to end: kubelet restart, network partition, OOM kill, image pull failure, power-off."""

from __future__ import annotations

from tests.helpers import logs, records, run_text

BASE = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: faults}
spec:
  kubernetesVersion: "1.34"
  until: UNTIL
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        containers:
          - {name: app, image: nginx:1.27}
  actions:
ACTIONS
"""


def scenario(actions: str, until: str = "2m") -> str:
    return BASE.replace("UNTIL", until).replace("ACTIONS", actions)


def test_kubelet_restart_adopts_running_containers(tmp_path):
    r = run_text(tmp_path, scenario("""
    - at: 20s
      fault: {type: KubeletRestart, node: node-1}
"""))
    assert [x["t"] for x in records(r, "fault")] == [20.0]
    # the new kubelet relists: the pod is ADDed again and its running container adopted, not restarted
    assert [t for t, _ in logs(r, "SyncLoop ADD")] == [0.0, 20.0]
    assert [x["t"] for x in records(r, "runtime", op="start")] == [0.1]
    assert records(r, "container", object="Pod/default/web")[-1]["state"] == "running"
    assert records(r, "phase")[-1]["to"] == "Running"


def test_delete_during_partition_waits_for_heal(tmp_path):
    r = run_text(tmp_path, scenario("""
    - at: 10s
      fault: {type: NetworkPartition, node: node-1, for: 30s}
    - at: 20s
      delete: pod/web
"""))
    # the kubelet cannot see the deletion: the container runs on until the partition heals at 40 s, when
    # the relist shows the pod terminating and the kubelet stops it (0.1 s after SIGTERM by default);
    # the pod is removed at the next PLEG relist (41 s)
    assert [(x["t"], x["op"]) for x in records(r, "fault")] == [(10.0, "start"), (40.0, "heal")]
    assert [(x["t"], x["signal"]) for x in records(r, "signal")] == [(40.0, "SIGTERM")]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [41.0]


def test_oom_kill_restarts_container(tmp_path):
    r = run_text(tmp_path, scenario("""
    - at: 10s
      fault: {type: OOMKill, node: node-1, pod: web, container: app}
"""))
    # exit at 10; relist at 11 → sync (first restart: no backoff) → new container started 11.1; the status
    # of that sync was generated before the restart: terminated OOMKilled 137
    term = [x for x in records(r, "container", object="Pod/default/web") if x["state"] == "terminated"]
    assert [(x["t"], x["reason"], x["exitCode"]) for x in term] == [(11.0, "OOMKilled", 137)]
    assert [x["t"] for x in records(r, "runtime", op="start")] == [0.1, 11.1]
    assert records(r, "container", object="Pod/default/web")[-1]["restartCount"] == 1


def test_image_pull_failure_backs_off(tmp_path):
    text = scenario("""
    - at: 0s
      fault: {type: ImagePullFailure, image: "nginx:1.27", for: 30s}
""")
    r = run_text(tmp_path, text)
    reasons = [(e["t"], e["reason"], e["message"]) for e in records(r, "event") if e["reason"] in (
        "Pulling", "Failed", "BackOff", "Pulled")]
    # created at 0 with the fault already active: the pull fails at once (ErrImagePull); retries of the
    # failed sync come every 10-15 s and hit the 10 s pull backoff (ImagePullBackOff) or pull again;
    # once healed (30 s) the next pull succeeds
    assert reasons[0][1:] == ("Pulling", 'Pulling image "nginx:1.27"')
    assert reasons[1][1:] == ("Failed", 'Failed to pull image "nginx:1.27": rpc error: code = Unknown desc = '
                                        'failed to pull and unpack image "nginx:1.27"')
    assert reasons[2][1:] == ("Failed", "Error: ErrImagePull")
    waiting = [x["reason"] for x in records(r, "container", object="Pod/default/web") if x["state"] == "waiting"]
    assert "ErrImagePull" in waiting
    pulled = [t for t, reason, m in reasons if reason == "Pulled"]
    assert len(pulled) == 1 and pulled[0] >= 30.0
    assert records(r, "container", object="Pod/default/web")[-1]["state"] == "running"


def test_power_off_ends_processes_silently(tmp_path):
    r = run_text(tmp_path, scenario("""
    - at: 10s
      fault: {type: NodePowerOff, node: node-1}
""", until="30s"))
    exits = records(r, "runtime", op="exit")
    assert [(x["t"], x["detail"]) for x in exits] == [(10.0, "node powered off")]
    # nobody reports it: the API still shows the pod Running (the node lifecycle controller notices later)
    assert records(r, "phase")[-1]["to"] == "Running"


def test_power_off_then_on_restarts_containers_with_unknown_status(tmp_path):
    r = run_text(tmp_path, scenario("""
    - at: 10s
      fault: {type: NodePowerOff, node: node-1, for: 20s}
""", until="60s"))
    # the machine comes back at 30 s with an empty runtime and a new kubelet: the container the API saw
    # running is gone without a trace, so its status reads waiting with a last state
    # ContainerStatusUnknown (137) and one more restart; it is started again as attempt 1 (the count comes
    # from the pod's log directory, which the reboot kept)
    created = [x["detail"] for x in records(r, "runtime", op="create", container="app")]
    assert created[-1].endswith("attempt 1")
    pod = r.cluster.store.get("Pod", "default", "web")
    cs = pod["status"]["containerStatuses"][0]
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["reason"] == "ContainerStatusUnknown"
    assert cs["lastState"]["terminated"]["exitCode"] == 137
    assert "running" in cs["state"]


def test_restarted_kubelet_has_no_refs_for_adopted_containers(tmp_path):
    text = scenario("""
    - at: 20s
      fault: {type: KubeletRestart, node: node-1}
""", until="60s").replace("          - {name: app, image: nginx:1.27}",
                          "          - {name: app, image: nginx:1.27, livenessProbe: {tcpSocket: {port: 80}}}")
    r = run_text(tmp_path, text.replace("\"1.34\"", "\"1.18\""))
    # probes of the adopted container (at 20, 30, 40, 50 from the new kubelet's sync) find no reference
    warn = [(t, m) for t, m in logs(r, "No ref for container")]
    assert [t for t, _ in warn] == [20.0, 30.0, 40.0, 50.0]
    assert warn[0][1].endswith("(app)")
    assert [x["severity"] for x in records(r, "log") if "No ref" in x["message"]][0] == "W"

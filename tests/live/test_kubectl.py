"""Real kubectl against a realtime ``podlife up`` (10× speed): what each command prints."""

from __future__ import annotations

import json
import subprocess
import time


from tests.live.conftest import DAEMONSET_AND_AND, Live, rows, write

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: {name}}}
spec:
  terminationGracePeriodSeconds: {grace}
  containers:
  - name: app
    image: nginx:1.27
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: app
        image: nginx:1.27
"""


def _pod(live: Live, tmp_path, name: str, grace: int = 30) -> str:
    path = write(tmp_path, f"{name}.yaml", POD.format(name=name, grace=grace))
    assert live.kubectl("create", "-f", path).stdout.strip() == f"pod/{name} created"
    return path


def test_version_and_discovery(live: Live) -> None:
    out = live.kubectl("version", "-o", "json").stdout
    server = json.loads(out)["serverVersion"]
    assert (server["major"], server["minor"]) == ("1", "32")
    res = live.kubectl("api-resources").stdout
    table = rows(res)
    # NAME SHORTNAMES APIVERSION NAMESPACED KIND, as the resources' storage declares them
    assert table["pods"] == ["po", "v1", "true", "Pod"]
    assert table["deployments"] == ["deploy", "apps/v1", "true", "Deployment"]
    assert table["nodes"] == ["no", "v1", "false", "Node"]
    assert "poddisruptionbudgets" in table


def test_get_nodes_table(live: Live) -> None:
    out = live.kubectl("get", "nodes").stdout
    assert out.splitlines()[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    table = rows(out)
    assert sorted(table) == ["node-1", "node-2", "node-3"]
    assert table["node-1"][0] == "Ready" and table["node-1"][1] == "<none>"
    wide = live.kubectl("get", "nodes", "-o", "wide").stdout.splitlines()[0].split()
    assert wide[:7] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP"]


def test_pod_lifecycle(live: Live, tmp_path) -> None:
    path = _pod(live, tmp_path, "web", grace=30)
    live.kubectl("wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
    out = live.kubectl("get", "pods", "web").stdout
    assert out.splitlines()[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert rows(out)["web"][:3] == ["1/1", "Running", "0"]
    wide = live.kubectl("get", "pod", "web", "-o", "wide").stdout
    assert wide.splitlines()[0].split()[5:] == ["IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    assert rows(wide)["web"][4].startswith("10.244.")
    # apply over a created object: the annotation is added with a warning, then nothing changes
    assert live.kubectl("apply", "-f", path).stdout.strip() == "pod/web configured"
    assert live.kubectl("apply", "-f", path).stdout.strip() == "pod/web unchanged"
    assert live.kubectl("label", "pod", "web", "tier=front").stdout.strip() == "pod/web labeled"
    assert live.kubectl("annotate", "pod", "web", "note=x").stdout.strip() == "pod/web annotated"
    shown = json.loads(live.kubectl("get", "pod", "web", "-o", "json").stdout)
    assert shown["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert shown["metadata"]["annotations"]["note"] == "x"
    described = live.kubectl("describe", "pod", "web").stdout
    assert "Successfully assigned default/web to node-" in described
    assert "Started container app" in described
    logs = live.kubectl("logs", "web").stdout
    assert "process of container app started" in logs
    # nginx exits on SIGTERM: the delete returns once the pod is gone (--wait is the default)
    assert live.kubectl("delete", "pod", "web", "--timeout=60s").stdout.strip() == 'pod "web" deleted'
    assert live.kubectl("get", "pod", "web", check=False).stderr.strip() == \
        'Error from server (NotFound): pods "web" not found'


def test_patch_types(live: Live, tmp_path) -> None:
    _pod(live, tmp_path, "patched", grace=0)
    live.kubectl("patch", "pod", "patched", "-p", '{"metadata":{"labels":{"a":"1"}}}')
    live.kubectl("patch", "pod", "patched", "--type=merge", "-p", '{"metadata":{"labels":{"b":"2"}}}')
    live.kubectl("patch", "pod", "patched", "--type=json", "-p",
                 '[{"op":"add","path":"/metadata/labels/c","value":"3"}]')
    labels = json.loads(live.kubectl("get", "pod", "patched", "-o", "json").stdout)["metadata"]["labels"]
    assert labels == {"app": "patched", "a": "1", "b": "2", "c": "3"}
    bad = live.kubectl("patch", "pod", "patched", "--type=json", "-p", '{"op":"add"}', check=False)
    assert bad.returncode != 0
    live.kubectl("delete", "pod", "patched", "--grace-period=0", "--force")


def test_delete_grace_force_and_wait(live: Live, tmp_path) -> None:
    _pod(live, tmp_path, "slow", grace=600)   # a shell-less nginx image stops on SIGTERM; grace is the cap
    live.kubectl("wait", "--for=condition=Ready", "pod/slow", "--timeout=30s")
    out = live.kubectl("delete", "pod", "slow", "--grace-period=0", "--force").stdout
    assert out.strip() == 'pod "slow" force deleted'
    live.kubectl("wait", "--for=delete", "pod/slow", "--timeout=30s")
    _pod(live, tmp_path, "graced", grace=600)
    live.kubectl("wait", "--for=condition=Ready", "pod/graced", "--timeout=30s")
    live.kubectl("delete", "pod", "graced", "--grace-period=1", "--wait=false")
    live.kubectl("wait", "--for=delete", "pod/graced", "--timeout=30s")


def test_server_side_apply_and_create_errors(live: Live, tmp_path) -> None:
    path = write(tmp_path, "ssa.yaml", POD.format(name="ssa", grace=0))
    assert live.kubectl("apply", "--server-side", "-f", path).stdout.strip() == "pod/ssa serverside-applied"
    managers = live.kubectl("get", "pod", "ssa", "-o",
                            "jsonpath={range .metadata.managedFields[*]}{.manager}/{.operation} {end}").stdout.split()
    assert managers[0] == "kubectl/Apply"
    other = write(tmp_path, "other.yaml", POD.format(name="ssa", grace=0).replace("{app: ssa}", "{app: other}"))
    conflict = live.kubectl("apply", "--server-side", "--field-manager=other", "-f", other, check=False)
    assert conflict.returncode == 1
    assert conflict.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl": '
                                      ".metadata.labels.app")
    again = live.kubectl("create", "-f", path, check=False)
    assert again.stderr.strip() == f'Error from server (AlreadyExists): error when creating "{path}": pods "ssa" ' \
                                   "already exists"
    live.kubectl("delete", "pod", "ssa", "--grace-period=0", "--force")


def test_strict_field_validation(live: Live, tmp_path) -> None:
    path = write(tmp_path, "bad.yaml",
                 POD.format(name="bad", grace=0).replace("  containers:", "  bogus: 1\n  containers:"))
    p = live.kubectl("create", "-f", path, check=False)
    assert p.returncode == 1
    assert p.stderr.strip() == f'Error from server (BadRequest): error when creating "{path}": Pod in version "v1" ' \
                               'cannot be handled as a Pod: strict decoding error: unknown field "spec.bogus"'


def test_deployment_rollout(live: Live, tmp_path) -> None:
    path = write(tmp_path, "deploy.yaml", DEPLOYMENT)
    assert live.kubectl("apply", "-f", path).stdout.strip() == "deployment.apps/web created"
    status = live.kubectl("rollout", "status", "deploy/web", "--timeout=60s").stdout
    assert status.splitlines()[-1] == 'deployment "web" successfully rolled out'
    table = rows(live.kubectl("get", "deploy", "web").stdout)
    assert table["web"][:3] == ["2/2", "2", "2"]
    assert live.kubectl("scale", "deploy/web", "--replicas=3").stdout.strip() == "deployment.apps/web scaled"
    live.wait_for("3 ready replicas", lambda: rows(live.kubectl("get", "deploy", "web").stdout)["web"][0] == "3/3")
    live.kubectl("set", "image", "deploy/web", "app=nginx:1.28")
    live.kubectl("rollout", "status", "deploy/web", "--timeout=60s")
    assert live.kubectl("rollout", "restart", "deploy/web").stdout.strip() == "deployment.apps/web restarted"
    live.kubectl("rollout", "status", "deploy/web", "--timeout=60s")
    assert live.kubectl("rollout", "undo", "deploy/web", "--to-revision=1").stdout.strip() == \
        "deployment.apps/web rolled back"
    live.kubectl("rollout", "status", "deploy/web", "--timeout=60s")
    image = live.kubectl("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}").stdout
    assert image == "nginx:1.27"
    rs = rows(live.kubectl("get", "rs", "-l", "app=web").stdout)
    assert len(rs) == 3 and sorted(r[0] for r in rs.values()) == ["0", "0", "3"]
    events = live.kubectl("get", "events", "--field-selector", "involvedObject.name=web").stdout
    assert "ScalingReplicaSet" in events
    live.kubectl("delete", "deploy", "web")


def test_cordon_drain_uncordon(live: Live, tmp_path) -> None:
    _pod(live, tmp_path, "drained", grace=1)
    live.kubectl("wait", "--for=condition=Ready", "pod/drained", "--timeout=30s")
    node = live.kubectl("get", "pod", "drained", "-o", "jsonpath={.spec.nodeName}").stdout
    assert live.kubectl("cordon", node).stdout.strip() == f"node/{node} cordoned"
    assert rows(live.kubectl("get", "node", node).stdout)[node][0] == "Ready,SchedulingDisabled"
    out = live.kubectl("drain", node, "--force", "--timeout=60s").stdout
    assert "pod/drained evicted" in out and out.strip().endswith(f"node/{node} drained")
    assert live.kubectl("uncordon", node).stdout.strip() == f"node/{node} uncordoned"
    assert rows(live.kubectl("get", "node", node).stdout)[node][0] == "Ready"


def test_get_watch_prints_table_rows(live: Live, tmp_path) -> None:
    """get -w asks for Tables inside the watch events: each change is one row of the pod's columns."""
    import queue
    import threading

    w = subprocess.Popen(["kubectl", "get", "pods", "-w", "-l", "app=watched", "--request-timeout=60s"],
                         env=live.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in w.stdout],
                     daemon=True).start()  # type: ignore[union-attr]
    try:
        _pod(live, tmp_path, "watched", grace=0)
        seen: list[list[str]] = []
        deadline = time.monotonic() + 30
        while not any(cells[:3] == ["watched", "1/1", "Running"] for cells in seen):
            seen.append(lines.get(timeout=max(deadline - time.monotonic(), 0.01)).split())
        assert seen[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"], seen
        # the watch may start before or after the create: the rows follow the pod from where it was then
        statuses = [cells[2] for cells in seen[1:]]
        order = ["Pending", "ContainerCreating", "Running"]
        assert all(cells[0] == "watched" for cells in seen[1:]) and statuses == sorted(statuses, key=order.index), seen
    finally:
        w.terminate()
        w.wait()
    live.kubectl("delete", "pod", "watched", "--grace-period=0", "--force")


def test_explain(live: Live) -> None:
    out = live.kubectl("explain", "pod.spec.terminationGracePeriodSeconds").stdout
    assert "KIND:       Pod" in out and "FIELD: terminationGracePeriodSeconds <integer>" in out
    # a field whose type is a $ref keeps its description (v3 wraps the $ref in allOf, builder3/util WrapRefs)
    out = live.kubectl("explain", "deployment.spec.strategy").stdout
    assert "FIELD: strategy <DeploymentStrategy>" in out
    assert "The deployment strategy to use to replace existing pods with new ones." in out


def test_events_command(live: Live, tmp_path) -> None:
    _pod(live, tmp_path, "evented", grace=0)
    live.kubectl("wait", "--for=condition=Ready", "pod/evented", "--timeout=30s")
    out = live.kubectl("events", "--for", "pod/evented").stdout
    assert "Scheduled" in out and "Started container app" in out
    live.kubectl("delete", "pod", "evented", "--grace-period=0", "--force")


def test_ctrl_c_stops_cleanly(live_factory) -> None:
    other = live_factory("1.32")
    assert other.kubectl("get", "ns").returncode == 0
    assert other.stop() == 0
    assert other.output().rstrip().endswith("podlife: stopped")


def test_daemonset_rollout_undo_matches_revisions_by_their_bytes(live: Live, tmp_path) -> None:
    # kubectl polymorphichelpers/rollback.go DaemonSetRollbacker: daemonSetMatch compares the revision's data
    # with its own getPatch of the DaemonSet byte for byte; a match is a skipped rollback
    live.kubectl("apply", "-f", write(tmp_path, "ds.yaml", DAEMONSET_AND_AND.format(name="undo-ds",
                                                                                image="nginx:1.27")))
    live.kubectl("rollout", "status", "ds/undo-ds", "--timeout=60s")
    live.kubectl("set", "image", "ds/undo-ds", "c=nginx:1.28")
    live.kubectl("rollout", "status", "ds/undo-ds", "--timeout=60s")
    assert live.kubectl("rollout", "undo", "ds/undo-ds", "--to-revision=2").stdout.strip() == \
        "daemonset.apps/undo-ds skipped rollback (current template already matches revision 2)"
    assert live.kubectl("rollout", "undo", "ds/undo-ds").stdout.strip() == "daemonset.apps/undo-ds rolled back"
    image = live.kubectl("get", "ds", "undo-ds", "-o", "jsonpath={.spec.template.spec.containers[0].image}").stdout
    assert image == "nginx:1.27"
    live.kubectl("delete", "ds", "undo-ds")

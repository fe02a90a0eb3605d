"""The test harness: ``podlife advance --until``, snapshots, and the pytest plugin run as a user runs it (a
separate pytest through the entry point), its teardown after a failure and after an interrupt included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podlife.testing.cluster import (
    ClusterOptions,
    PodlifeCluster,
    PodlifeError,
    PodlifeTimeout,
    Zygote,
    _group_members,
    port_open,
)
from tests.plugin_runner import run_pytest

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    z = Zygote()
    yield z
    z.close()


@pytest.fixture
def cluster(zygote: Zygote) -> Iterator[PodlifeCluster]:
    with PodlifeCluster(ClusterOptions(version="1.33"), zygote) as c:
        yield c


def podlife(c: PodlifeCluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podlife.cli", *args, "--kubeconfig", c.kubeconfig],
                          check=False, capture_output=True, text=True, timeout=120)


def test_advance_until_stops_at_the_instant_the_condition_holds(cluster: PodlifeCluster) -> None:
    cluster.advance("30s")
    cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
    done = podlife(cluster, "advance", "--until", "pod/web condition Ready", "--timeout", "5m")
    assert (done.returncode, done.stdout, done.stderr) == (0, "clock at 31s: pod/web condition Ready\n", "")
    # not past it: the Ready=True condition record is at that instant, and the clock did not move on
    ready = [r for r in cluster.trace({"type": "condition", "object": "Pod/default/web"})
             if r["conditionType"] == "Ready" and r["status"] == "True"]
    assert [r["t"] for r in ready] == [31.0]
    assert cluster.now == 31.0
    # a condition that already holds moves nothing
    assert cluster.advance_until("pod/web phase Running") == 31.0


def test_advance_until_times_out_with_exit_1(cluster: PodlifeCluster) -> None:
    cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
    late = podlife(cluster, "advance", "--until", "pod/web phase Succeeded", "--timeout", "2m")
    assert late.returncode == 1
    assert late.stderr == "clock at 120s: pod/web phase Succeeded did not hold within 2m\n"
    assert cluster.now == 120.0
    with pytest.raises(PodlifeTimeout, match=r"'pod/web deleted' did not hold within 10s \(clock at 130s\)"):
        cluster.advance_until("pod/web deleted", timeout="10s")


def test_advance_until_gone_and_node_checks(cluster: PodlifeCluster) -> None:
    cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
    cluster.advance_until("pod/web condition Ready")
    node = cluster.request("GET", "/api/v1/namespaces/default/pods/web")["spec"]["nodeName"]
    cluster.fault("NodePowerOff", node=node)
    t_unknown = cluster.advance_until(f"node/{node} nodeReady Unknown", timeout="5m")
    t_taint = cluster.advance_until(f"node/{node} taint node.kubernetes.io/unreachable:NoExecute", timeout="5m")
    assert t_taint >= t_unknown > 1.0
    # the taint manager marks the pod for deletion after its 300 s toleration, but nothing on a powered-off
    # node confirms it: the pod is never gone (upstream: a node shutdown leaves pods Terminating)
    with pytest.raises(PodlifeTimeout, match="TaintManagerEviction"):
        cluster.advance_until("pod/web deleted", timeout="1h")
    assert cluster.request("GET", "/api/v1/namespaces/default/pods/web")["metadata"]["deletionTimestamp"]


@pytest.mark.parametrize("args, message", [
    (["advance", "--until", "pod/web"], 'until: "pod/web" is not OBJECT CHECK [VALUE]'),
    (["advance", "--until", "web condition Ready"], 'until: "web" is not kind/name or kind/namespace/name'),
    (["advance", "--until", "pod/web colour Red"], 'until: "colour" is not a check'),
    (["advance", "--until", "node/node-1 phase Running"], "until: phase needs a pod object (pod/NAME)"),
    (["advance", "--until", "pod/web phase Sleeping"], 'until: phase "Sleeping" is not a pod phase'),
    (["advance", "1m", "--until", "pod/web deleted"], "advance: expected DURATION or --until CONDITION"),
    (["advance", "--until", "pod/web deleted", "--timeout", "soon"], "--timeout: "),
    # negative durations were a 409 from the server and exit 1
    (["advance", "--until", "pod/web deleted", "--timeout", "-1m"], '--timeout: "-1m" is negative'),
])
def test_advance_until_refuses_bad_input_with_exit_2(cluster: PodlifeCluster, args: list[str],
                                                     message: str) -> None:
    done = podlife(cluster, *args)
    assert done.returncode == 2, done
    assert message in done.stderr
    assert cluster.now == 0.0   # nothing moved


def test_a_negative_advance_is_the_requests_fault(cluster: PodlifeCluster) -> None:
    # was 409 Conflict, as if the clock's state were to blame
    for query, key in (("by=-5m", "by"), ("until=pod/web%20deleted&timeout=-1m", "timeout")):
        with pytest.raises(PodlifeError) as err:
            cluster.request("POST", f"/podlife/advance?{query}")
        assert str(err.value).endswith(f"400 {key}: \"-{query[-2:]}\" is negative; expected a duration of zero or "
                                       "more, e.g. 5m"), err.value
    assert cluster.now == 0.0


def test_snapshot_restore_replays_to_the_same_trace_bytes(cluster: PodlifeCluster) -> None:
    cluster.advance("1m")
    saved = podlife(cluster, "snapshot", "save", "base")
    assert (saved.returncode, saved.stdout) == (0, "snapshot base saved at 60s\n"), saved.stderr

    def branch() -> bytes:
        cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
        cluster.advance_until("pod/web condition Ready")
        cluster.fault("NodePowerOff", node="node-1", for_="2m")
        cluster.advance("5m")
        with urllib.request.urlopen(cluster.url + "/podlife/trace?follow=false") as resp:
            return bytes(resp.read())

    first = branch()
    served_by = _server_pid(cluster)
    restored = podlife(cluster, "snapshot", "restore", "base")
    assert (restored.returncode, restored.stdout) == (0, "snapshot base restored: clock at 60s\n"), restored.stderr
    assert cluster.now == 60.0
    assert cluster.request("GET", "/api/v1/namespaces/default/pods")["items"] == []
    assert _server_pid(cluster) != served_by   # another process serves, on the same address
    assert branch() == first
    cluster.restore("base")   # restored again: the snapshot stays
    assert branch() == first
    listed = podlife(cluster, "snapshot", "list")
    assert listed.stdout == "base\t60s\n"
    missing = podlife(cluster, "snapshot", "restore", "nope")
    assert missing.returncode == 2 and 'snapshot "nope" not found' in missing.stderr
    cluster.snapshot("base")   # saved again: replaces the first (its process exits)
    cluster.advance("1m")
    assert cluster.restore("base") == 361.0   # where branch() left the clock: 60 s + 1 s + 5 min
    assert [(s["name"], s["seconds"]) for s in cluster.request("GET", "/podlife/snapshots")["snapshots"]] == \
        [("base", 361.0)]
    bad = podlife(cluster, "snapshot", "save", "Not_A_Name")
    assert bad.returncode == 2
    assert 'name: "Not_A_Name" is not a snapshot name; expected a DNS label, e.g. base' in bad.stderr


def test_a_connection_open_at_the_snapshot_is_closed_by_restores(cluster: PodlifeCluster) -> None:
    """A keep-alive connection that was open when the snapshot was taken is the old server's: after restores
    (the snapshot's process forks a new holder each time) it is closed, never left open with nobody reading
    it (a client would wait for ever)."""
    import http.client
    from urllib.parse import urlsplit

    u = urlsplit(cluster.url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=5)
    conn.request("GET", "/version")
    assert conn.getresponse().read()
    snap = cluster.snapshot("open")
    cluster.restore(snap)
    cluster.restore(snap)
    with pytest.raises((ConnectionError, http.client.RemoteDisconnected)):
        conn.request("GET", "/version")
        conn.getresponse().read()
    conn.close()


def _server_pid(c: PodlifeCluster) -> int:
    return int(c.request("GET", "/podlife/snapshots")["pid"])


def test_snapshots_need_a_manual_clock(zygote: Zygote) -> None:
    with PodlifeCluster(ClusterOptions(clock="realtime"), zygote) as c, \
            pytest.raises(PodlifeError, match="409 snapshots: the clock is realtime"):
        c.snapshot("base")


# ---- the plugin, as a user runs it ----------------------------------------------------------------------

USER_SUITE = '''
import json, os, signal
import pytest

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "app", "image": "nginx"}]}}


def record(c, name):
    with open(os.path.join(os.environ["RECORD_DIR"], name + ".json"), "w") as f:
        json.dump({"pgid": c.pgid, "url": c.url, "workdir": c.workdir, "kubeconfig": c.kubeconfig}, f)


@pytest.mark.podlife(versions=["1.29", "1.33"])
def test_ready(podlife_cluster, podlife_version):
    record(podlife_cluster, "ready-" + podlife_version)
    assert podlife_cluster.version.startswith("v" + podlife_version + ".")
    podlife_cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
    assert podlife_cluster.advance_until("pod/web condition Ready", timeout="5m") == 1.0


def test_fails_with_events(podlife_cluster):
    record(podlife_cluster, "fails")
    podlife_cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
    podlife_cluster.advance_until("pod/web condition Ready")
    podlife_cluster.snapshot("ready")   # its holder process must go too
    podlife_cluster.fault("NodePowerOff", node="node-1")
    podlife_cluster.advance_until("pod/web phase Succeeded", timeout="2m")


def test_interrupted(podlife_cluster):
    record(podlife_cluster, "interrupted")
    podlife_cluster.snapshot("before")
    if os.environ.get("INTERRUPT"):
        os.kill(os.getpid(), signal.SIGINT)
'''


def _left_behind(record_dir: Path) -> list[str]:
    """What a cluster of the run left: a process of its group, a port that accepts, a file."""
    out = []
    for f in sorted(record_dir.glob("*.json")):
        info: dict[str, Any] = json.loads(f.read_text())
        if _group_members(info["pgid"]):
            out.append(f"{f.stem}: processes {_group_members(info['pgid'])}")
        if port_open(info["url"]):
            out.append(f"{f.stem}: {info['url']} accepts connections")
        if os.path.exists(info["workdir"]):
            out.append(f"{f.stem}: {info['workdir']} remains")
    return out


def test_plugin_runs_a_user_suite_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_SUITE))
    records = tmp_path / "records"
    records.mkdir()
    done = run_pytest(["-q", "test_user.py"], tmp_path, tmp_path, env={"RECORD_DIR": str(records)})
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "1 failed, 3 passed" in out, out
    # the failing test's report: the cluster's recent Events and a link to the HTML report of the run
    section = out[out.index("podlife cluster (podlife_cluster)"):]
    assert section.splitlines()[1].startswith("Kubernetes v1.")
    assert section.splitlines()[1].endswith(", clock at 121s")
    assert "recent events:" in section
    assert "Normal  RegisteredNode  Node/node-1" in section
    html = section.split("HTML report of the run: file://")[1].split()[0]
    assert Path(html).read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.stem for p in records.glob("*.json")) == ["fails", "interrupted", "ready-1.29", "ready-1.33"]
    assert _left_behind(records) == []


def test_plugin_teardown_after_an_interrupt_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(textwrap.dedent(USER_SUITE))
    records = tmp_path / "records"
    records.mkdir()
    done = run_pytest(["-q", "test_user.py", "-k", "interrupted"], tmp_path, tmp_path,
                      env={"RECORD_DIR": str(records), "INTERRUPT": "1"})
    assert done.returncode == 2, done.stdout + done.stderr   # pytest: interrupted
    assert "KeyboardInterrupt" in done.stdout
    assert [p.stem for p in records.glob("*.json")] == ["interrupted"]
    assert _left_behind(records) == []


SCOPED_SUITE = '''
import json, os

URLS = []


def test_first(podlife_cluster):
    URLS.append(podlife_cluster.url)
    assert podlife_cluster.version.startswith("v1.31.")
    assert [n["metadata"]["name"] for n in podlife_cluster.request("GET", "/api/v1/nodes")["items"]] == ["solo"]
    podlife_cluster.advance("1m")


def test_second_shares_it(podlife_cluster):
    assert podlife_cluster.url == URLS[0]
    assert podlife_cluster.now == 60.0
'''

ONE_NODE = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: one-node}
spec:
  cluster:
    nodes: [{name: solo}]
"""


def test_plugin_options_set_version_cluster_file_and_scope(tmp_path: Path) -> None:
    (tmp_path / "test_scoped.py").write_text(textwrap.dedent(SCOPED_SUITE))
    (tmp_path / "one-node.yaml").write_text(ONE_NODE)
    done = run_pytest(["-q", "test_scoped.py", "--podlife-scope", "module", "--podlife-version", "1.31",
                       "--podlife-cluster", "one-node.yaml"], tmp_path, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


KILLED = '''
import sys, time
from podlife.testing.cluster import ClusterOptions, PodlifeCluster, Zygote

zygote = Zygote()
cluster = PodlifeCluster(ClusterOptions(), zygote).start()
cluster.snapshot("base")
print(cluster.pgid, cluster.url, cluster.workdir, zygote.dir, flush=True)
time.sleep(600)
'''


def test_clusters_die_with_a_killed_test_process(tmp_path: Path) -> None:
    """SIGKILL leaves no teardown to run: the warm process sees its lifeline close and kills what it started."""
    import signal
    import time

    script = tmp_path / "killed.py"
    script.write_text(KILLED)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pgid_text, url, workdir, zygote_dir = proc.stdout.readline().split()
    pgid = int(pgid_text)
    assert _group_members(pgid) and port_open(url)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while (_group_members(pgid) or port_open(url)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _group_members(pgid) == []
    assert not port_open(url)
    while (os.path.exists(workdir) or os.path.exists(zygote_dir)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(workdir) and not os.path.exists(zygote_dir)


PROCESS_SUITE = '''
import pytest

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "echo"},
       "spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "echo hi"]}]}}


@pytest.mark.podlife(runtime="process")
def test_real_process(podlife_cluster):
    assert podlife_cluster.url.startswith("https://")   # the process runtime is served with TLS and a token
    podlife_cluster.request("POST", "/api/v1/namespaces/default/pods", POD)
    podlife_cluster.wait_for("the pod's end", lambda: podlife_cluster.request(
        "GET", "/api/v1/namespaces/default/pods/echo")["status"].get("phase") == "Succeeded", timeout=30)
    assert [r["type"] for r in podlife_cluster.trace({"object": "Pod/default/echo", "type": "phase"})]
'''


def test_plugin_with_the_process_runtime(tmp_path: Path) -> None:
    (tmp_path / "test_process.py").write_text(textwrap.dedent(PROCESS_SUITE))
    done = run_pytest(["-q", "test_process.py"], tmp_path, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout

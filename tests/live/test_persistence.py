"""``podlife up --data-dir``: what a client was told was written survives ``kill -9``, and ``podlife up`` on the
same directory restarts the cluster: objects, resourceVersions, the clock, watches from a resourceVersion."""

from __future__ import annotations

import json
import os
import signal
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.live.conftest import Live, _require_kubectl


@pytest.fixture
def restartable(tmp_path: Path):
    _require_kubectl()
    started: list[Live] = []

    def start(**kw) -> Live:
        kubeconfig = tmp_path / "kubeconfig"
        if kubeconfig.exists():
            kubeconfig.unlink()   # Live waits for the new server to write it
        live = Live(tmp_path, "1.32", clock="manual", **kw)
        started.append(live)
        return live
    yield start
    for live in started:
        live.stop()


def _kill9(live: Live) -> None:
    os.kill(live.proc.pid, signal.SIGKILL)
    live.proc.wait()


def _configmap(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": {"k": name}}).encode()


def test_every_acknowledged_write_survives_kill_9(restartable):
    live = restartable()
    acknowledged: list[tuple[str, int]] = []
    done = threading.Event()

    def writer() -> None:
        n = 0
        while True:
            req = urllib.request.Request(f"{live.url}/api/v1/namespaces/default/configmaps", data=_configmap(f"cm-{n}"),
                                         method="POST", headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=10) as resp:
                    body = json.loads(resp.read())
                    acknowledged.append((body["metadata"]["name"], int(body["metadata"]["resourceVersion"])))
            except (urllib.error.URLError, OSError, ValueError):
                return   # the server is gone
            n += 1
            if n == 150:
                done.set()

    t = threading.Thread(target=writer)
    t.start()
    assert done.wait(60)
    _kill9(live)   # while the writer is still sending
    t.join(30)
    assert len(acknowledged) >= 150

    again = restartable()
    code, lst = again.json("GET", "/api/v1/namespaces/default/configmaps")
    assert code == 200
    kept = {o["metadata"]["name"]: int(o["metadata"]["resourceVersion"]) for o in lst["items"]}
    for name, rv in acknowledged:
        assert kept.get(name) == rv, name
    # resourceVersions go on after the last one written before the kill
    code, cm = again.json("POST", "/api/v1/namespaces/default/configmaps", _configmap("after"))
    assert code == 201
    assert int(cm["metadata"]["resourceVersion"]) > max(kept.values())


def test_a_restart_continues_the_clock_objects_and_watches(restartable):
    live = restartable()
    live.kubectl("run", "web", "--image=nginx:1.27")
    assert live.advance("30s") == 30.0
    pod = json.loads(live.kubectl("get", "pod", "web", "-o", "json").stdout)
    assert pod["status"]["phase"] == "Running"
    code, cm = live.json("POST", "/api/v1/namespaces/default/configmaps", _configmap("cm"))
    since = cm["metadata"]["resourceVersion"]
    for n in range(3):
        live.kubectl("label", "configmap", "cm", f"n={n}", "--overwrite")
    before = live.trace()
    _kill9(live)

    again = restartable()
    # the manual clock's every move is committed: it goes on from 30 s
    assert again.seconds() == 30.0
    assert "restarted at 30.000 s" in again.output()
    same = json.loads(again.kubectl("get", "pod", "web", "-o", "json").stdout)
    assert same["metadata"]["uid"] == pod["metadata"]["uid"]
    assert same["metadata"]["creationTimestamp"] == pod["metadata"]["creationTimestamp"]

    # a watch from a resourceVersion before the kill replays what came after it
    code, _, raw = again.request("GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={since}"
                                        "&timeoutSeconds=1")
    assert code == 200
    events = [json.loads(line) for line in raw.splitlines() if line]
    assert [(e["type"], e["object"]["metadata"]["labels"]["n"]) for e in events] == \
        [("MODIFIED", "0"), ("MODIFIED", "1"), ("MODIFIED", "2")]

    # the trace goes on in the data directory's file: the records before the kill, then the restart, where
    # every node comes back as from a power-off and the kubelet starts the pod again
    after = again.trace()
    assert after[:len(before)] == before
    rest = after[len(before):]
    assert [(r["t"], r["node"]) for r in rest if r["type"] == "fault"] == \
        [(30.0, "node-1"), (30.0, "node-2"), (30.0, "node-3")]
    again.advance("2s")
    now = json.loads(again.kubectl("get", "pod", "web", "-o", "json").stdout)
    assert now["status"]["phase"] == "Running"
    starts = [r for r in again.trace() if r["type"] == "runtime" and r["op"] == "start" and r["t"] >= 30]
    assert [r["container"] for r in starts] == ["web"]


def test_a_compacted_resource_version_is_gone_after_a_restart(restartable):
    live = restartable()
    code, cm = live.json("POST", "/api/v1/namespaces/default/configmaps", _configmap("cm"))
    first = cm["metadata"]["resourceVersion"]
    patch = b'{"data": {"k": "x"}}'
    rvs = {}
    for n in range(1100):   # more than the 1,000 revisions kept
        code, _, raw = live.request("PATCH", "/api/v1/namespaces/default/configmaps/cm",
                                    patch.replace(b"x", str(n).encode()),
                                    {"Content-Type": "application/merge-patch+json"})
        assert code == 200
        rvs[n] = json.loads(raw)["metadata"]["resourceVersion"]
    _kill9(live)

    again = restartable()
    code, _, raw = again.request("GET", f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={first}")
    assert code == 200
    event = json.loads(raw.splitlines()[0])
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410
    assert event["object"]["reason"] == "Expired"

    # a list at an exact revision: the objects as they were then, or 410 once it is compacted
    # (staging/src/k8s.io/apiserver/pkg/storage/etcd3/errors.go)
    code, lst = again.json("GET", f"/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact"
                                  f"&resourceVersion={rvs[1050]}")
    assert code == 200
    assert lst["metadata"]["resourceVersion"] == rvs[1050]
    assert [o["data"]["k"] for o in lst["items"] if o["metadata"]["name"] == "cm"] == ["1050"]
    code, status = again.json("GET", f"/api/v1/namespaces/default/configmaps?resourceVersionMatch=Exact"
                                     f"&resourceVersion={first}")
    assert (code, status["reason"], status["message"]) == \
        (410, "Expired", "The resourceVersion for the provided list is too old.")

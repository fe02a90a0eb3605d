"""Real kubectl against ``podlife up --runtime process``: containers are local processes, with real signals,
exit codes, hooks, probes and logs. Every wait polls with a deadline; nothing sleeps to synchronise."""

from __future__ import annotations

import fcntl
import ipaddress
import json
import os
import pty
import select
import signal
import struct
import subprocess
import textwrap
import termios
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from podlife.runtime.supervisor import start_time
from tests.helpers import processes_in_groups
from tests.live.conftest import PODLIFE, Live, _require_kubectl, write

VERSION = "1.32"   # kubectl on these machines runs the kubectl of the server's minor


class ProcessCluster(Live):
    """``podlife up --runtime process`` on a free port, with its own kubeconfig and data directory."""

    def __init__(self, tmp: Path) -> None:
        _require_kubectl()
        self.tmp = tmp
        self.data_dir = tmp / "data"
        super().__init__(tmp, VERSION, extra=("--runtime", "process", "--data-dir", str(self.data_dir)))

    def apply(self, manifest: str) -> None:
        self.kubectl("apply", "-f", write(self.tmp, f"m{time.monotonic_ns()}.yaml", manifest))

    def pod(self, name: str) -> dict[str, Any]:
        p = self.kubectl("get", "pod", name, "-o", "json", check=False)
        return json.loads(p.stdout) if p.returncode == 0 else {}

    def status(self, name: str, container: str | None = None) -> dict[str, Any]:
        statuses = (self.pod(name).get("status") or {}).get("containerStatuses") or [{}]
        return next((s for s in statuses if container in (None, s.get("name"))), {})

    def state(self, name: str, container: str | None = None) -> dict[str, Any]:
        return self.status(name, container).get("state") or {}

    def ready(self, name: str) -> bool:
        conds = (self.pod(name).get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conds)

    def events(self, name: str) -> list[dict[str, Any]]:
        out = self.kubectl("get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json")
        return json.loads(out.stdout)["items"]

    def records(self, type_: str, pod: str, **match: Any) -> list[dict[str, Any]]:
        return [r for r in self.trace() if r["type"] == type_ and r.get("object") == f"Pod/default/{pod}"
                and all(r.get(k) == v for k, v in match.items())]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessCluster]:
    c = ProcessCluster(tmp_path_factory.mktemp("process"))
    yield c
    c.stop()


def pid_alive(pid: int, started: str | None) -> bool:
    return started is not None and start_time(pid) == started


# ---- readiness ------------------------------------------------------------------------------------------

def test_http_server_becomes_ready_only_once_its_readiness_probe_succeeds(cluster: ProcessCluster,
                                                                         tmp_path: Path) -> None:
    # the server listens once the test creates the file LISTEN; the probe GETs / every second
    listen = tmp_path / "listen"
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: web}}
        spec:
          terminationGracePeriodSeconds: 3
          containers:
          - name: app
            image: python:3
            command: ["sh", "-c", "until [ -f $LISTEN ]; do sleep 0.1; done;
                                   exec python3 -u -m http.server 8080 --bind $(POD_IP)"]
            env:
            - name: POD_IP
              valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}
            - {{name: LISTEN, value: "{listen}"}}
            volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
            readinessProbe:
              httpGet: {{path: /, port: 8080}}
              periodSeconds: 1
          volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """)
    cluster.wait_for("web Running", lambda: "running" in cluster.state("web"), 20)
    ip = cluster.pod("web")["status"]["podIP"]
    node = json.loads(cluster.kubectl("get", "node", cluster.pod("web")["spec"]["nodeName"], "-o", "json").stdout)
    # an address of its node's podCIDR, from .2 (.1 is the node's)
    assert ipaddress.ip_address(ip) in list(ipaddress.ip_network(node["spec"]["podCIDR"]).hosts())[1:]
    cluster.wait_for("a failed readiness probe", lambda: cluster.records("event", "web", reason="Unhealthy"), 20)
    assert not cluster.ready("web"), "Ready before anything listens"
    listen.touch()
    cluster.wait_for("web Ready", lambda: cluster.ready("web"), 20)
    ready_seen = time.time()
    with urllib.request.urlopen(f"http://{ip}:8080/", timeout=5) as r:
        assert r.status == 200
    # the probe failed while nothing listened, with the prober's words
    failures = [e["message"] for e in cluster.events("web") if e["reason"] == "Unhealthy"]
    assert failures and failures[0] == (f'Readiness probe failed: Get "http://{ip}:8080/": dial tcp {ip}:8080: '
                                        "connect: connection refused")
    # the server's own log: it listened, and answered the kubelet's probe, before the pod was seen Ready
    lines = cluster.kubectl("logs", "web", "--timestamps").stdout.splitlines()
    serving = next(line for line in lines if "Serving HTTP on" in line)
    probed = next(line for line in lines if '"GET / HTTP/1.1" 200' in line)
    assert serving.split()[0] <= probed.split()[0]
    assert _epoch(probed.split()[0]) <= ready_seen


def _epoch(rfc3339nano: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(rfc3339nano[:26] + "+00:00").timestamp()


# ---- SIGTERM, preStop, SIGKILL --------------------------------------------------------------------------

TRAPS_SIGTERM = """\
import os, signal, sys, time
def term(*_):
    with open(os.environ["MARKS"], "a") as f:
        f.write(f"SIGTERM {time.time()}\\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
print("up", flush=True)
while True:
    time.sleep(1)
"""


def test_delete_runs_prestop_then_sigterm_and_the_process_exits(cluster: ProcessCluster, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: graceful}}
        spec:
          terminationGracePeriodSeconds: 30
          containers:
          - name: app
            image: python:3
            command: ["python3", "-c", {json.dumps(TRAPS_SIGTERM)}]
            env: [{{name: MARKS, value: "{marks}"}}]
            volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
            lifecycle:
              preStop:
                exec: {{command: ["sh", "-c", "echo preStop $(date +%s.%N) >> $MARKS"]}}
          volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """)
    cluster.wait_for("graceful Running", lambda: "running" in cluster.state("graceful"), 20)
    start = time.time()
    cluster.kubectl("delete", "pod", "graceful", "--wait=true", timeout=30)
    took = time.time() - start
    seen = marks.read_text().split()
    assert seen[0::2] == ["preStop", "SIGTERM"], seen       # the hook first, then the signal
    assert float(seen[1]) <= float(seen[3])
    # it exited at its SIGTERM, long before the grace period ended in a SIGKILL
    assert took < 20, f"delete took {took:.1f} s: the process should have exited at its SIGTERM"
    assert [r["signal"] for r in cluster.records("signal", "graceful")] == ["SIGTERM"]
    assert [r["detail"] for r in cluster.records("runtime", "graceful", op="exit")] == ["exitCode 0"]
    hooks = [(r["hook"], r["phase"]) for r in cluster.records("hook", "graceful")]
    assert hooks == [("preStop", "started"), ("preStop", "completed")]


IGNORES_SIGTERM = """\
import os, signal, time
def term(*_):
    with open(os.environ["MARKS"], "a") as f:
        f.write(f"{time.time()}\\n")
signal.signal(signal.SIGTERM, term)
with open(os.environ["PIDFILE"], "w") as f:
    f.write(str(os.getpid()))
while True:
    time.sleep(1)
"""


def test_a_process_ignoring_sigterm_is_killed_at_the_grace_period(cluster: ProcessCluster, tmp_path: Path) -> None:
    marks, pidfile = tmp_path / "marks", tmp_path / "pid"
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: stubborn}}
        spec:
          terminationGracePeriodSeconds: 2
          containers:
          - name: app
            image: python:3
            command: ["python3", "-c", {json.dumps(IGNORES_SIGTERM)}]
            env: [{{name: MARKS, value: "{marks}"}}, {{name: PIDFILE, value: "{pidfile}"}}]
            volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
          volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """)
    cluster.wait_for("its pid", lambda: pidfile.exists() and pidfile.read_text(), 20)
    pid = int(pidfile.read_text())
    pidfd = os.pidfd_open(pid)
    try:
        cluster.kubectl("delete", "pod", "stubborn", "--wait=false")
        ready, _, _ = select.select([pidfd], [], [], 10)   # readable once the process has ended
        died = time.time()
        assert ready, "the process outlived its grace period"
    finally:
        os.close(pidfd)
    term = float(cluster.wait_for("the SIGTERM mark", lambda: marks.exists() and marks.read_text(), 5))
    assert 2.0 - 0.05 <= died - term <= 2.0 + 0.2, f"SIGKILL {died - term:.3f} s after SIGTERM, grace 2 s"
    signals = [(r["signal"], r.get("timeoutSeconds")) for r in cluster.records("signal", "stubborn")]
    assert signals == [("SIGTERM", 2), ("SIGKILL", None)]
    cluster.wait_for("stubborn gone", lambda: not cluster.pod("stubborn"), 10)


# ---- restarts -------------------------------------------------------------------------------------------

def test_a_crashing_command_goes_into_crashloopbackoff_with_the_models_backoff(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: crasher}
        spec:
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "echo attempt; exit 3"]
        """)
    cluster.wait_for("restart 2", lambda: len(cluster.records("runtime", "crasher", op="start")) >= 3, 30)
    st = cluster.status("crasher")
    assert (st["lastState"]["terminated"]["exitCode"], st["lastState"]["terminated"]["reason"]) == (3, "Error")
    # the gaps, in the kernel's (here: the wall clock's) seconds: restart 1 at the next PLEG relist and sync;
    # restart 2 once the back-off of 10 s (flowcontrol's initial) has passed, at the pod worker's retry: its
    # 10 s back-off with up to 50 % jitter (pod_workers.go completeWork, 1.32), plus the relist
    starts = [r["t"] for r in cluster.records("runtime", "crasher", op="start")]
    exits = [r["t"] for r in cluster.records("runtime", "crasher", op="exit")]
    assert starts[1] - exits[0] <= 2.0
    assert 10.0 <= starts[2] - exits[1] <= 15.0 + 2.0
    # in between, the status said why it waited (shown as Error first, then CrashLoopBackOff at the retry,
    # as kubectl get pods -w shows a real crash loop)
    waiting = [r["t"] for r in cluster.records("container", "crasher", state="waiting", reason="CrashLoopBackOff")]
    assert waiting and exits[1] < waiting[0] <= starts[2]
    backoffs = [e["message"] for e in cluster.events("crasher") if e["reason"] == "BackOff"]
    uid = cluster.pod("crasher")["metadata"]["uid"]
    assert backoffs[0] == f"Back-off restarting failed container app in pod crasher_default({uid})"
    cluster.kubectl("delete", "pod", "crasher", "--wait=false")


def test_exec_probes_gate_startup_and_a_failing_liveness_probe_restarts_the_container(
        cluster: ProcessCluster, tmp_path: Path) -> None:
    # started once the test creates START (after a startup probe failed); healthy from then until 3 s later;
    # the probes run in the container's directory
    start = tmp_path / "start"
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: probed}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "rm -f started healthy; until [ -f $START ]; do sleep 0.1; done;
                                   touch started healthy; sleep 3; rm healthy; exec sleep 3600"]
            env: [{{name: START, value: "{start}"}}]
            workingDir: /work
            volumeMounts: [{{name: work, mountPath: /work}}, {{name: host, mountPath: "{tmp_path}"}}]
            startupProbe:
              exec: {{command: ["test", "-f", "started"]}}
              periodSeconds: 1
              failureThreshold: 30
            livenessProbe:
              exec: {{command: ["sh", "-c", "test -f healthy || {{ echo no healthy file; exit 1; }}"]}}
              periodSeconds: 1
              failureThreshold: 2
          volumes: [{{name: work, emptyDir: {{}}}}, {{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """)
    cluster.wait_for("a failed startup probe", lambda: cluster.records("event", "probed", reason="Unhealthy"), 20)
    start.touch()
    cluster.wait_for("a restart", lambda: cluster.status("probed").get("restartCount", 0) >= 1, 30)
    events = [(e["reason"], e["message"]) for e in sorted(cluster.events("probed"),
                                                          key=lambda e: e.get("firstTimestamp") or "")]
    unhealthy = [m for r, m in events if r == "Unhealthy"]
    assert unhealthy[0] == "Startup probe failed: "   # test -f prints nothing
    assert "Liveness probe failed: no healthy file\n" in unhealthy
    # liveness is probed only once the startup probe has succeeded
    assert unhealthy.index("Liveness probe failed: no healthy file\n") > max(
        i for i, m in enumerate(unhealthy) if m.startswith("Startup"))
    assert ("Killing", "Container app failed liveness probe, will be restarted") in events
    # killContainer: the pod's 1 s grace is raised to the 2 s minimum; sleep (not PID 1 here) dies of SIGTERM
    kills = cluster.records("signal", "probed")
    assert [(r["signal"], r.get("timeoutSeconds")) for r in kills][:1] == [("SIGTERM", 2)]
    assert cluster.status("probed")["lastState"]["terminated"]["exitCode"] == 128 + signal.SIGTERM
    cluster.kubectl("delete", "pod", "probed", "--wait=false")


def test_a_probe_whose_command_cannot_start_fails_with_the_runtimes_words(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: badprobe}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sleep", "3600"]
            readinessProbe:
              exec: {command: ["no-such-check"]}
              periodSeconds: 1
        """)
    message = cluster.wait_for("a failed probe", lambda: next(
        (e["message"] for e in cluster.events("badprobe") if e["reason"] == "Unhealthy"), None), 20)
    assert message == ("Readiness probe failed: failed to exec in container: OCI runtime exec failed: exec failed: "
                       'unable to start container process: exec: "no-such-check": executable file not found in '
                       "$PATH: unknown")
    # the worker goes on probing: the next probe fails the same way
    cluster.wait_for("another probe", lambda: len(cluster.records("event", "badprobe", reason="Unhealthy")) >= 2, 10)
    assert not cluster.ready("badprobe")
    cluster.kubectl("delete", "pod", "badprobe", "--wait=false")


# ---- logs -----------------------------------------------------------------------------------------------

COUNTS = "import time\nfor i in range(N):\n    print(i, flush=True)\n    time.sleep(0.2)\n"


def test_logs_follow_tail_timestamps_and_previous(cluster: ProcessCluster) -> None:
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: counter}}
        spec:
          restartPolicy: Never   # the app's log stays the one under test after it exits
          containers:
          - name: app
            image: python:3
            command: ["python3", "-u", "-c", {json.dumps(COUNTS.replace("N", "25"))}]
          - name: side
            image: busybox
            command: ["sh", "-c", "echo to stderr >&2; echo to stdout; sleep 3600"]
        """)
    cluster.wait_for("counter Running", lambda: "running" in cluster.state("counter", "app"), 20)
    follow = subprocess.Popen(["kubectl", "logs", "-f", "counter", "-c", "app"], env=cluster.env,
                              stdout=subprocess.PIPE, text=True)
    try:
        arrived = []
        assert follow.stdout is not None
        for line in follow.stdout:   # kubectl logs -f ends when the container does
            arrived.append((int(line), time.monotonic()))
        assert follow.wait(timeout=10) == 0
    finally:
        follow.kill()
    assert [n for n, _ in arrived] == list(range(25))
    # the lines came as they were printed, not at once at the end
    assert arrived[-1][1] - arrived[0][1] > 1.0
    assert cluster.kubectl("logs", "counter", "-c", "app", "--tail", "3").stdout == "22\n23\n24\n"
    stamped = cluster.kubectl("logs", "counter", "-c", "app", "--tail", "1", "--timestamps").stdout
    ts, text = stamped.split()
    assert text == "24" and ts.endswith("Z") and len(ts) == len("2006-01-02T15:04:05.000000000Z")
    assert cluster.kubectl("logs", "counter", "-c", "app", "--since", "1h").stdout.splitlines()[0] == "0"
    # kubectl sends sinceTime with whole seconds (metav1.Time): the lines from that second on
    everything = [line.split() for line in cluster.kubectl("logs", "counter", "-c", "app", "--timestamps")
                  .stdout.splitlines()]
    late = cluster.kubectl("logs", "counter", "-c", "app", "--since-time", ts).stdout.split()
    assert late == [n for t, n in everything if t[:19] >= ts[:19]] and late[-1] == "24"
    side = cluster.kubectl("logs", "counter", "-c", "side").stdout
    assert sorted(side.splitlines()) == ["to stderr", "to stdout"]
    no_previous = cluster.kubectl("logs", "counter", "-c", "side", "--previous", check=False)
    assert no_previous.returncode == 1
    assert 'previous terminated container "side" in pod "counter" not found' in no_previous.stderr
    first = (next((cluster.data_dir / "pods").glob("default_counter_*/app/0.log"))).read_text().splitlines()
    assert first[0].split(" ", 1)[1] == "stdout F 0"
    # a container that exits 1 on its first run and stays up on its second (the file it leaves in its
    # emptyDir tells them apart): --previous shows the first attempt, the plain logs the second
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: rerun}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "if [ -f ran ]; then echo second; exec sleep 3600; fi;
                                   touch ran; echo first; exit 1"]
            workingDir: /work
            volumeMounts: [{name: work, mountPath: /work}]
          volumes: [{name: work, emptyDir: {}}]
        """)
    cluster.wait_for("a restart", lambda: cluster.status("rerun").get("restartCount", 0) >= 1
                     and "running" in cluster.state("rerun"), 30)
    assert cluster.kubectl("logs", "rerun", "--previous").stdout == "first\n"
    cluster.wait_for("the second run's line", lambda: cluster.kubectl("logs", "rerun").stdout == "second\n", 10)
    files = sorted(p.name for p in (cluster.data_dir / "pods").glob("default_rerun_*/app/*.log"))
    assert files == ["0.log", "1.log"]
    cluster.kubectl("delete", "pod", "rerun", "--wait=false")
    cluster.kubectl("delete", "pod", "counter", "--wait=false")


# ---- environment, commands ------------------------------------------------------------------------------

def test_downward_api_environment_and_a_container_without_command(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings}
        data: {greeting: hello}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: envs, labels: {app: envs}}
        spec:
          restartPolicy: Never
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "echo $POD_NAME $POD_NAMESPACE $NODE_NAME $POD_IP $GREETING $(ECHOED) $HOSTNAME"]
            env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: POD_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
            - {name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
            - {name: GREETING, valueFrom: {configMapKeyRef: {name: settings, key: greeting}}}
            - {name: ECHOED, value: "$(GREETING)-again"}
          - name: nocommand
            image: example.com/unknown:1
        """)
    cluster.wait_for("app done", lambda: "terminated" in cluster.state("envs", "app"), 20)
    pod = cluster.pod("envs")
    words = cluster.kubectl("logs", "envs", "-c", "app").stdout.split()
    assert words == ["envs", "default", pod["spec"]["nodeName"], pod["status"]["podIP"], "hello",
                     "hello-again", "envs"]
    cluster.wait_for("CreateContainerError", lambda: cluster.state("envs", "nocommand").get("waiting", {})
                     .get("reason") == "CreateContainerError", 20)
    failed = [(e["type"], e["message"]) for e in cluster.events("envs") if e["reason"] == "Failed"]
    assert failed and failed[0][0] == "Warning"
    assert failed[0][1].startswith('Error: failed to generate container "') and failed[0][1].endswith(
        '" spec: no command specified; podlife knows no ENTRYPOINT/CMD of image "example.com/unknown:1": give the '
        "container a command, or declare the image in the pod annotation podlife.io/images")
    cluster.kubectl("delete", "pod", "envs", "--wait=false")


def test_env_from_keys_that_are_not_shell_names_reach_a_busybox_sh(cluster: ProcessCluster) -> None:
    # test/e2e/common/node/configmap.go "should be consumable via the environment": envFrom keys with '-'
    # (IsEnvVarName allows them), read back through busybox's sh -c env, with and without a prefix
    cluster.apply("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: dashed}
        data: {data-1: value-1, data.2: value-2}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: dashed-env}
        spec:
          restartPolicy: Never
          containers:
          - name: app
            image: registry.k8s.io/e2e-test-images/busybox:1.36.1-1
            command: ["/bin/sh", "-c", "env"]
            envFrom:
            - configMapRef: {name: dashed}
            - {prefix: p-, configMapRef: {name: dashed}}
        """)
    cluster.wait_for("app done", lambda: "terminated" in cluster.state("dashed-env", "app"), 20)
    lines = cluster.kubectl("logs", "dashed-env").stdout.splitlines()
    assert {"data-1=value-1", "data.2=value-2", "p-data-1=value-1", "p-data.2=value-2"} <= set(lines)
    cluster.kubectl("delete", "pod", "dashed-env", "--wait=false")


def test_run_as_user_group_and_supplemental_groups(cluster: ProcessCluster) -> None:
    # test/e2e/node/security_context.go and common/node/security_context.go: id -u / id -g in a busybox container,
    # the container's securityContext over the pod's, fsGroup and supplementalGroups among the groups; exec runs
    # as the same user
    if os.geteuid() != 0:
        pytest.skip("only root can run a process as another user")
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: ids}
        spec:
          securityContext: {runAsUser: 1001, runAsGroup: 2001, supplementalGroups: [3001], fsGroup: 4001}
          containers:
          - name: pod-level
            image: busybox
            command: ["sh", "-c", "echo uid=$(id -u) gid=$(id -g) groups=$(id -G); sleep 600"]
          - name: own
            image: busybox
            command: ["sh", "-c", "echo uid=$(id -u) gid=$(id -g); sleep 600"]
            securityContext: {runAsUser: 65534, runAsGroup: 65534}
        """)
    cluster.wait_for("both running", lambda: all("running" in cluster.state("ids", c) for c in ("pod-level", "own")),
                     30)
    cluster.wait_for("output", lambda: cluster.kubectl("logs", "ids", "-c", "own").stdout.strip() != "", 20)
    assert cluster.kubectl("logs", "ids", "-c", "pod-level").stdout.split() == [
        "uid=1001", "gid=2001", "groups=2001", "3001", "4001"]
    assert cluster.kubectl("logs", "ids", "-c", "own").stdout.split() == ["uid=65534", "gid=65534"]
    assert cluster.kubectl("exec", "ids", "-c", "own", "--", "id", "-u").stdout.strip() == "65534"
    cluster.kubectl("delete", "pod", "ids", "--wait=false")


def test_working_dir_is_the_processes_directory(cluster: ProcessCluster, tmp_path: Path) -> None:
    (tmp_path / "only-here").touch()
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: workdir}}
        spec:
          restartPolicy: Never
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "pwd; ls"]
            workingDir: "{tmp_path}"
            volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
          volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """)
    cluster.wait_for("app done", lambda: "terminated" in cluster.state("workdir"), 20)
    assert cluster.kubectl("logs", "workdir").stdout == f"{tmp_path}\nonly-here\n"
    cluster.kubectl("delete", "pod", "workdir", "--wait=false")


# answers every GET with 200 and notes the path and the address it was reached on
NOTES_GETS = """\
import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(os.environ["MARKS"], "a") as f:
            f.write(f"{self.path} {self.server.server_address[0]}\\n")
        self.send_response(200)
        self.end_headers()
http.server.HTTPServer((os.environ["POD_IP"], 8080), H).serve_forever()
"""


def test_an_http_prestop_hook_reaches_the_pods_own_server(cluster: ProcessCluster, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: hooked}}
        spec:
          terminationGracePeriodSeconds: 5
          containers:
          - name: app
            image: python:3
            command: ["python3", "-c", {json.dumps(NOTES_GETS)}]
            env:
            - {{name: MARKS, value: "{marks}"}}
            - {{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}
            volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
            readinessProbe: {{tcpSocket: {{port: 8080}}, periodSeconds: 1}}
            lifecycle:
              preStop:
                httpGet: {{path: /prestop, port: 8080}}
          volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """)
    cluster.wait_for("hooked Ready", lambda: cluster.ready("hooked"), 20)
    ip = cluster.pod("hooked")["status"]["podIP"]
    assert not marks.exists()   # the tcpSocket probe only connects
    cluster.kubectl("delete", "pod", "hooked", "--wait=true", timeout=30)
    assert marks.read_text() == f"/prestop {ip}\n"
    hooks = [(r["hook"], r["phase"]) for r in cluster.records("hook", "hooked")]
    assert hooks == [("preStop", "started"), ("preStop", "completed")]


NOTES_HOOK_REQUESTS = """\
import http.server, os
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(os.environ["MARKS"], "a") as f:
            h = self.headers
            target = self.requestline.split()[1]   # as sent: self.path folds a leading '//'
            f.write(f"{target} {h['User-Agent']} {h['X-Hook']} {h['Authorization']}\\n")
        self.send_response(200)
        self.end_headers()
http.server.HTTPServer((os.environ["POD_IP"], 8080), H).serve_forever()
"""


def _hook_server(tmp_path: Path) -> str:
    """A pod noting each GET it serves (path, User-Agent, X-Hook, Authorization) in ``tmp_path``/marks."""
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: hook-server}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: python:3
            command: ["python3", "-c", {json.dumps(NOTES_HOOK_REQUESTS)}]
            env:
            - {{name: MARKS, value: "{tmp_path / 'marks'}"}}
            - {{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}
            volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
            readinessProbe: {{tcpSocket: {{port: 8080}}, periodSeconds: 1}}
          volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
        """


def _https_hooked(server_ip: str) -> str:
    """A pod whose postStart hook GETs https://SERVER:8080/poststart with two headers."""
    return f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: fallback}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: registry.k8s.io/pause:3.9
            lifecycle:
              postStart:
                httpGet:
                  host: {server_ip}
                  path: /poststart
                  port: 8080
                  scheme: HTTPS
                  httpHeaders: [{{name: X-Hook, value: start}}, {{name: Authorization, value: Bearer t}}]
        """


def test_an_https_hook_answered_by_an_http_server_is_sent_again_over_http(cluster: ProcessCluster,
                                                                          tmp_path: Path) -> None:
    # lifecycle/handlers.go (ConsistentHTTPGetHandlers, 1.26 on): the request a probe would send, scheme and
    # headers included; an HTTP answer to HTTPS is retried as HTTP without Authorization, and the pod gets a
    # LifecycleHTTPFallback Warning. The server is another pod, ready first (as in test/e2e/common/node
    # lifecycle_hook.go): a postStart hook is sent as soon as its container starts
    cluster.apply(_hook_server(tmp_path))
    cluster.wait_for("hook-server Ready", lambda: cluster.ready("hook-server"), 20)
    ip = cluster.pod("hook-server")["status"]["podIP"]
    cluster.apply(_https_hooked(ip))
    cluster.wait_for("fallback Ready", lambda: cluster.ready("fallback"), 20)
    minor = VERSION.split(".")[1]
    assert (tmp_path / "marks").read_text() == f"/poststart kube-lifecycle/1.{minor} start None\n"
    fallbacks = [e for e in cluster.events("fallback") if e["reason"] == "LifecycleHTTPFallback"]
    assert [(e["type"], e["message"]) for e in fallbacks] == [
        ("Warning", f"request to HTTPS lifecycle hook {ip}:8080 got HTTP response, retry with HTTP succeeded")]
    cluster.kubectl("delete", "pod", "fallback", "hook-server", "--wait=false")


def test_before_1_26_an_http_hook_is_plain_http_to_host_port_slash_path(tmp_path: Path) -> None:
    # lifecycle/handlers.go runHTTPHandler without ConsistentHTTPGetHandlers: GET http://host:port/ + path,
    # neither the scheme nor the headers of the action, Go's own User-Agent; through the API (no kubectl 1.25)
    live = Live(tmp_path, "1.25", extra=("--runtime", "process", "--data-dir", str(tmp_path / "data")))
    pods = "/api/v1/namespaces/default/pods"

    def ready(name: str) -> bool:
        conds = (live.json("GET", f"{pods}/{name}")[1].get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conds)
    try:
        assert live.json("POST", pods, yaml.safe_load(textwrap.dedent(_hook_server(tmp_path))))[0] == 201
        live.wait_for("hook-server Ready", lambda: ready("hook-server"), 20)
        ip = live.json("GET", f"{pods}/hook-server")[1]["status"]["podIP"]
        assert live.json("POST", pods, yaml.safe_load(textwrap.dedent(_https_hooked(ip))))[0] == 201
        live.wait_for("fallback Ready", lambda: ready("fallback"), 20)
        assert (tmp_path / "marks").read_text() == "//poststart Go-http-client/1.1 None None\n"
        events = live.json("GET", "/api/v1/namespaces/default/events")[1]["items"]
        assert not [e for e in events if e["reason"] in ("LifecycleHTTPFallback", "FailedPostStartHook")]
    finally:
        live.stop()


def test_the_behavior_annotation_has_no_effect_on_a_process(cluster: ProcessCluster) -> None:
    # modelled, this container would start 60 s late and exit 7; the process exits 5 at once
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: unmodelled
          annotations:
            podlife/behavior: |
              app: {startSeconds: 60, exitAfterSeconds: 1, exitCode: 7}
        spec:
          restartPolicy: Never
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "echo real; exit 5"]
        """)
    cluster.wait_for("app done", lambda: "terminated" in cluster.state("unmodelled"), 20)
    done = cluster.state("unmodelled")["terminated"]
    assert (done["exitCode"], done["reason"]) == (5, "Error")
    assert cluster.kubectl("logs", "unmodelled").stdout == "real\n"
    cluster.kubectl("delete", "pod", "unmodelled", "--wait=false")


def test_an_init_container_hands_a_file_to_the_app_through_an_emptydir(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: handoff}
        spec:
          terminationGracePeriodSeconds: 1
          volumes: [{name: shared, emptyDir: {}}]
          initContainers:
          - name: prepare
            image: busybox
            command: ["sh", "-c", "echo prepared > /shared/flag"]
            volumeMounts: [{name: shared, mountPath: /shared}]
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "cat /in/flag; exec sleep 3600"]
            volumeMounts: [{name: shared, mountPath: /in, readOnly: true}]
        """)
    cluster.wait_for("app Running", lambda: "running" in cluster.state("handoff", "app"), 20)
    init = cluster.pod("handoff")["status"]["initContainerStatuses"][0]["state"]["terminated"]
    assert (init["exitCode"], init["reason"]) == (0, "Completed")
    assert cluster.kubectl("logs", "handoff", "-c", "app").stdout == "prepared\n"
    assert (next((cluster.data_dir / "pods").glob("default_handoff_*")) / "volumes" / "shared" / "flag").exists()
    cluster.kubectl("delete", "pod", "handoff", "--wait=false")


def test_two_pods_listen_on_the_same_port_on_their_own_addresses(cluster: ProcessCluster) -> None:
    for name in ("echo-a", "echo-b"):
        cluster.apply(f"""\
            apiVersion: v1
            kind: Pod
            metadata: {{name: {name}, labels: {{app: echo}}}}
            spec:
              terminationGracePeriodSeconds: 1
              containers:
              - name: app
                image: python:3
                command: ["python3", "-m", "http.server", "9000", "--bind", "$(POD_IP)"]
                env: [{{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}]
                ports: [{{name: http, containerPort: 9000}}]
                readinessProbe: {{tcpSocket: {{port: http}}, periodSeconds: 1}}
            """)
    cluster.apply("""\
        apiVersion: v1
        kind: Service
        metadata: {name: echo}
        spec:
          selector: {app: echo}
          ports: [{port: 80, targetPort: 9000}]
        """)
    for name in ("echo-a", "echo-b"):
        cluster.wait_for(f"{name} Ready", lambda name=name: cluster.ready(name), 20)

    def addresses() -> list[str]:
        slices = json.loads(cluster.kubectl("get", "endpointslices", "-l", "kubernetes.io/service-name=echo",
                                            "-o", "json").stdout)["items"]
        return sorted(a for s in slices for e in s.get("endpoints") or [] for a in e["addresses"]
                      if (e.get("conditions") or {}).get("ready"))
    listed = cluster.wait_for("both endpoints ready", lambda: len(addresses()) == 2 and addresses(), 20)
    for ip in listed:
        with urllib.request.urlopen(f"http://{ip}:9000/", timeout=5) as r:
            assert r.status == 200
    cluster.kubectl("delete", "pod", "echo-a", "echo-b", "--wait=false")


def test_kubectl_exec_runs_in_the_containers_environment(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: shell}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sleep", "3600"]
            env: [{name: GREETING, value: hello}]
        """)
    cluster.wait_for("shell Running", lambda: "running" in cluster.state("shell"), 20)
    # kubectl 1.32 speaks WebSocket (v5.channel.k8s.io) first
    p = cluster.kubectl("exec", "shell", "--", "sh", "-c", 'echo "$GREETING $HOSTNAME $(pwd)"; echo oops >&2; exit 3',
                        check=False)
    # in the container's mount namespace, whose working directory is the image's (busybox: none, so /)
    assert (p.returncode, p.stdout) == (3, "hello shell /\n")
    assert p.stderr.startswith("oops\n") and "command terminated with exit code 3" in p.stderr
    piped = subprocess.run(["kubectl", "exec", "-i", "shell", "--", "tr", "a-z", "A-Z"], input="quiet\n",
                           env=cluster.env, capture_output=True, text=True, timeout=30)
    assert (piped.returncode, piped.stdout) == (0, "QUIET\n")
    missing = cluster.kubectl("exec", "shell", "--", "no-such-program", check=False)
    assert missing.returncode == 1
    assert 'exec: "no-such-program": executable file not found in $PATH' in missing.stderr
    cluster.kubectl("delete", "pod", "shell", "--wait=false")


def on_terminal(cluster: ProcessCluster, argv: list[str], rows: int, cols: int) -> tuple[int, bytes, str]:
    """Run ``argv`` on a pseudo-terminal of ``rows`` by ``cols``; (its exit code, what it wrote, the terminal)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    ours = os.ttyname(slave)
    p: subprocess.Popen[bytes] | None = None
    out = b""
    try:
        p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=cluster.env, start_new_session=True)
        os.close(slave)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:   # EIO: the program ended and closed the terminal
                break
            if not chunk:
                break
            out += chunk
        return p.wait(timeout=10), out, ours
    finally:
        os.close(master)
        if p is not None:
            p.kill()


def test_kubectl_exec_with_a_terminal(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: term}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sleep", "3600"]
        """)
    cluster.wait_for("term Running", lambda: "running" in cluster.state("term"), 20)
    # kubectl uses a terminal only when its stdin is one: a pseudo-terminal of 40 rows by 100 columns, which
    # kubectl sends on the resize channel
    code, out, ours = on_terminal(cluster, ["kubectl", "exec", "-it", "term", "--", "sh", "-c",
                                            'until [ "$(stty size)" = "40 100" ]; do sleep 0.1; done; tty; '
                                            'echo "$TERM"; stty size; exit 5'], 40, 100)
    assert code == 5, out
    lines = out.decode().replace("\r\n", "\n").splitlines()
    # the command ran on a terminal of its own, with TERM=xterm (containerd's execInternal sets it for a tty)
    # and kubectl's size
    assert lines[0].startswith("/dev/pts/") and lines[0] != ours, lines
    assert lines[1:3] == ["xterm", "40 100"], lines
    cluster.kubectl("delete", "pod", "term", "--wait=false")


def test_an_oomkill_fault_kills_the_real_process(cluster: ProcessCluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: victim}
        spec:
          containers:
          - name: app
            image: busybox
            command: ["sleep", "3600"]
        """)
    cluster.wait_for("victim Running", lambda: "running" in cluster.state("victim"), 20)
    node = cluster.pod("victim")["spec"]["nodeName"]
    p = cluster.podlife("fault", "OOMKill", "--node", node, "--pod", "default/victim", "--container", "app")
    assert p.returncode == 0, p.stderr
    cluster.wait_for("a restart", lambda: cluster.status("victim").get("restartCount", 0) >= 1, 20)
    last = cluster.status("victim")["lastState"]["terminated"]
    assert (last["exitCode"], last["reason"]) == (137, "OOMKilled")
    assert [r["signal"] for r in cluster.records("signal", "victim")] == ["SIGKILL"]
    cluster.kubectl("delete", "pod", "victim", "--wait=false")


# ---- the clock, a crash, a restart ----------------------------------------------------------------------

@pytest.mark.parametrize("flags", [("--clock", "manual"), ("--speed", "10")])
def test_the_process_runtime_needs_the_realtime_clock(tmp_path: Path, flags: tuple[str, str]) -> None:
    p = subprocess.run([*PODLIFE, "up", "--runtime", "process", *flags, "--kubeconfig", str(tmp_path / "kc")],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.startswith("--runtime process: real processes run on the wall clock")
    assert " ".join(flags) in p.stderr


def test_sigkill_of_podlife_leaves_no_process_behind(tmp_path: Path) -> None:
    c = ProcessCluster(tmp_path)
    try:
        c.apply("""\
            apiVersion: apps/v1
            kind: Deployment
            metadata: {name: sleepers}
            spec:
              replicas: 3
              selector: {matchLabels: {app: sleepers}}
              template:
                metadata: {labels: {app: sleepers}}
                spec:
                  containers:
                  - name: app
                    image: busybox
                    # a shell whose children are in its group: killing the shell alone would orphan them
                    command: ["sh", "-c", "sleep 3600 & sleep 3600 & wait"]
            """)
        c.wait_for("3 pods Running", lambda: c.kubectl("get", "pods", "--no-headers").stdout.count("Running") == 3,
                   30)
        journal = (c.data_dir / "runtime" / "processes.journal").read_text().split("\n")
        mains = [int(line.split()[1]) for line in journal if line.startswith("spawn ")]
        supervisor = int(next(line for line in journal if line.startswith("supervisor ")).split()[1])
        assert len(mains) == 3
        group = [(pid, start_time(pid)) for pid in processes_in_groups(mains)]
        assert len(group) == 9, group   # each shell and its two sleeps
        os.kill(c.proc.pid, signal.SIGKILL)
        c.proc.wait()
        c.wait_for("every container process gone", lambda: not [p for p, st in group if pid_alive(p, st)], 5)
        c.wait_for("the supervisor gone", lambda: start_time(supervisor) is None, 5)
    finally:
        c.stop()


def test_ctrl_c_stops_every_container_gracefully_then_kills_at_the_grace_period(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    c = ProcessCluster(tmp_path)
    try:
        c.apply(f"""\
            apiVersion: v1
            kind: Pod
            metadata: {{name: polite}}
            spec:
              containers:
              - name: app
                image: python:3
                command: ["python3", "-c", {json.dumps(TRAPS_SIGTERM)}]
                env: [{{name: MARKS, value: "{marks}"}}]
                volumeMounts: [{{name: host, mountPath: "{tmp_path}"}}]
              volumes: [{{name: host, hostPath: {{path: "{tmp_path}"}}}}]
            ---
            apiVersion: v1
            kind: Pod
            metadata: {{name: stubborn}}
            spec:
              terminationGracePeriodSeconds: 2
              containers:
              - name: app
                image: busybox
                command: ["sh", "-c", "trap '' TERM; sleep 3600 & wait; sleep 3600"]
            """)
        c.wait_for("both Running", lambda: "running" in c.state("polite") and "running" in c.state("stubborn"), 20)
        # Running is the process started; its SIGTERM handler is set once it has printed "up"
        c.wait_for("polite's handler set", lambda: "up" in c.kubectl("logs", "polite", check=False).stdout, 20)
        mains = [int(line.split()[1]) for line in (c.data_dir / "runtime" / "processes.journal").read_text()
                 .splitlines() if line.startswith("spawn ")]
        group = [(pid, start_time(pid)) for pid in processes_in_groups(mains)]
        start = time.monotonic()
        c.proc.send_signal(signal.SIGINT)
        assert c.proc.wait(timeout=15) == 0
        took = time.monotonic() - start
        assert marks.read_text().startswith("SIGTERM ")     # the polite one heard its stop signal
        assert 2.0 <= took < 5.0, took                      # the stubborn one held out for its 2 s
        assert not [p for p, st in group if pid_alive(p, st)]
        assert "podlife: stopping the container processes" in c.output()
    finally:
        c.stop()


def test_a_data_dir_in_use_is_refused(cluster: ProcessCluster, tmp_path: Path) -> None:
    p = subprocess.run([*PODLIFE, "up", "--runtime", "process", "--port", "0", "--data-dir", str(cluster.data_dir),
                        "--kubeconfig", str(tmp_path / "kc")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.startswith(f"--data-dir: {cluster.data_dir} is in use by another podlife up")


def test_a_restart_on_the_same_data_dir_kills_what_was_left(tmp_path: Path) -> None:
    left = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    try:
        journal = tmp_path / "data" / "runtime" / "processes.journal"
        journal.parent.mkdir(parents=True)
        journal.write_text(f"spawn {left.pid} {left.pid} {start_time(left.pid)}\n")
        c = ProcessCluster(tmp_path)
        try:
            assert left.wait(timeout=10) == -signal.SIGKILL
            assert "killed 1 processes an earlier podlife up left running" in c.output()
        finally:
            c.stop()
    finally:
        left.kill()


def test_a_restart_on_the_same_data_dir_continues_restart_counts_from_the_log_files(tmp_path: Path) -> None:
    c = ProcessCluster(tmp_path)
    try:
        c.apply("""\
            apiVersion: v1
            kind: Pod
            metadata: {name: crasher}
            spec:
              containers:
              - name: app
                image: busybox
                command: ["sh", "-c", "echo attempt; exit 1"]
            """)
        c.wait_for("a restart", lambda: c.status("crasher").get("restartCount", 0) >= 1, 30)
        before = c.status("crasher")["restartCount"]
    finally:
        assert c.stop() == 0
    log_dir = next((c.data_dir / "pods").glob("default_crasher_*/app"))
    kept = {p.name: p.read_text() for p in log_dir.glob("*.log")}
    last = max(int(name[:-4]) for name in kept)
    assert last >= before
    # the runtime forgot its containers; the kubelet finds none and takes the next count from the log files
    # (kuberuntime_container.go startContainer: calcRestartCountByLogDir), so no earlier log is overwritten
    (tmp_path / "kubeconfig").unlink()
    c = ProcessCluster(tmp_path)
    try:
        c.wait_for("the first attempt after the restart", lambda: f"{last + 1}.log" in
                   {p.name for p in log_dir.glob("*.log")}, 30)
        c.wait_for("its status", lambda: c.status("crasher").get("restartCount", 0) > before, 30)
        # the first attempt the status reports after the restart (the node's power-on, as the restart is
        # traced) carries that count
        trace = c.trace()
        on = max(i for i, r in enumerate(trace) if r["type"] == "fault" and r.get("op") == "heal")
        first = next(r for r in trace[on:] if r["type"] == "container" and r.get("object") == "Pod/default/crasher"
                     and r["state"] in ("running", "terminated"))
        assert first["restartCount"] == last + 1, trace[on:]
        assert {p.name: p.read_text() for p in log_dir.glob("*.log") if p.name in kept} == kept
    finally:
        c.stop()

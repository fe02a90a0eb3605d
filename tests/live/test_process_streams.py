"""The streaming subresources of ``podlife up --runtime process`` as the clients of a 1.28 cluster use them:
kubectl 1.28 (exec, exec -it and port-forward over SPDY/3.1 on the connection itself), the conformance suite's
WebSocket exec and logs (subprotocols channel.k8s.io, base64.channel.k8s.io, binary.k8s.io,
base64.binary.k8s.io, with Go's ``Origin: http://localhost``) and the official Python client's ``stream()``.
Every wait polls with a deadline."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.live.test_process_runtime import ProcessCluster, on_terminal

EXEC = "/api/v1/namespaces/default/pods/shell/exec"
LOG = "/api/v1/namespaces/default/pods/shell/log?container=app"


class Cluster128(ProcessCluster):
    def __init__(self, tmp: Path) -> None:
        import tests.live.test_process_runtime as prt

        saved, prt.VERSION = prt.VERSION, "1.28"   # kubectl on these machines runs the kubectl of the server's minor
        try:
            super().__init__(tmp)
        finally:
            prt.VERSION = saved


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster128]:
    c = Cluster128(tmp_path_factory.mktemp("streams"))
    c.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: shell}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "echo container is alive; sleep 3600"]
            env: [{name: GREETING, value: hello}]
        """)
    c.wait_for("shell Running", lambda: "running" in c.state("shell"), 30)
    yield c
    c.stop()


def _ws(cluster: ProcessCluster, path: str, protocols: tuple[str, ...], origin: str | None = "http://localhost",
        send: list[bytes | str] | None = None) -> tuple[str | None, list[tuple[str, Any]]]:
    """Open a WebSocket as the conformance suite's helper does (Go's Origin), read every message until the
    server closes; (the negotiated subprotocol, [(type, data)]). A refused handshake raises."""
    async def go() -> tuple[str | None, list[tuple[str, Any]]]:
        headers = {"Authorization": f"Bearer {cluster.token}"}
        if origin is not None:
            headers["Origin"] = origin
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(cluster.url.replace("https://", "wss://") + path, protocols=protocols,
                                          ssl=cluster.ssl, headers=headers) as ws:
                for m in send or []:
                    await (ws.send_str(m) if isinstance(m, str) else ws.send_bytes(m))
                got = []
                async for msg in ws:
                    got.append((msg.type.name, msg.data))
                return ws.protocol, got
    return asyncio.run(asyncio.wait_for(go(), 30))


# ---- SPDY/3.1: kubectl 1.28 ------------------------------------------------------------------------------

def test_kubectl_128_exec_speaks_spdy(cluster: Cluster128) -> None:
    assert json.loads(cluster.kubectl("version", "-o", "json").stdout)["clientVersion"]["minor"] == "28"
    p = cluster.kubectl("exec", "shell", "--", "sh", "-c", 'echo "$GREETING $HOSTNAME"; echo oops >&2; exit 3',
                        check=False)
    assert (p.returncode, p.stdout) == (3, "hello shell\n")
    assert p.stderr == "oops\ncommand terminated with exit code 3\n"
    piped = subprocess.run(["kubectl", "exec", "-i", "shell", "--", "tr", "a-z", "A-Z"], input="quiet\n" * 3,
                           env=cluster.env, capture_output=True, text=True, timeout=30)
    assert (piped.returncode, piped.stdout) == (0, "QUIET\n" * 3)
    missing = cluster.kubectl("exec", "shell", "--", "no-such-program", check=False)
    assert missing.returncode == 1
    assert missing.stderr == ("error: Internal error occurred: error executing command in container: failed to exec "
                              "in container: OCI runtime exec failed: exec failed: unable to start container "
                              'process: exec: "no-such-program": executable file not found in $PATH: unknown\n')


def test_kubectl_128_exec_with_a_terminal_sends_its_size_on_the_resize_stream(cluster: Cluster128) -> None:
    code, out, _ = on_terminal(cluster, ["kubectl", "exec", "-it", "shell", "--", "sh", "-c",
                                         'until [ "$(stty size)" = "33 77" ]; do sleep 0.1; done; stty size; exit 4'],
                               33, 77)
    assert code == 4, out
    assert out.decode().replace("\r\n", "\n").splitlines()[0] == "33 77"


def _post(cluster: ProcessCluster, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    """A POST with exactly these headers (urllib would say ``Connection: close``)."""
    import http.client
    from urllib.parse import urlsplit

    u = urlsplit(cluster.url)
    conn = http.client.HTTPSConnection(u.hostname or "", u.port, context=cluster.ssl, timeout=30)
    try:
        conn.request("POST", path, headers={"Authorization": f"Bearer {cluster.token}", **headers})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def test_spdy_handshake_refusals_are_upstreams(cluster: Cluster128) -> None:
    spdy = {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"}
    path = f"{EXEC}?command=true&stdout=true"
    # httpstream.Handshake: no protocol named (400), none the server speaks (403, with the ones it accepts)
    code, _, body = _post(cluster, path, spdy)
    assert (code, body) == (400, b"unable to upgrade: X-Stream-Protocol-Version is required\n")
    code, headers, body = _post(cluster, path, {**spdy, "X-Stream-Protocol-Version": "v9.channel.k8s.io"})
    assert (code, body.decode()) == (403, "unable to upgrade: unable to negotiate protocol: client supports "
                                          "[v9.channel.k8s.io], server accepts [v4.channel.k8s.io v3.channel.k8s.io "
                                          "v2.channel.k8s.io channel.k8s.io]\n")
    assert headers["X-Accepted-Stream-Protocol-Versions"] == ("v4.channel.k8s.io, v3.channel.k8s.io, "
                                                              "v2.channel.k8s.io, channel.k8s.io")
    # spdy.UpgradeResponse: the Connection header must ask for the upgrade
    code, _, body = _post(cluster, path, {"Connection": "close", "Upgrade": "SPDY/3.1",
                                          "X-Stream-Protocol-Version": "v4.channel.k8s.io"})
    assert code == 400 and body.startswith(b"unable to upgrade: missing upgrade headers in request: http.Header{")
    assert b'"Connection":[]string{"close"}' in body
    assert b"Bearer" not in body
    # no upgrade at all: the API server's proxy refuses before the kubelet
    code, _, body = _post(cluster, path, {})
    assert code == 400 and json.loads(body)["message"] == "Upgrade request required"


def test_kubectl_128_port_forward_speaks_spdy(cluster: Cluster128) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: web}
        spec:
          terminationGracePeriodSeconds: 1
          volumes: [{name: www, emptyDir: {}}]
          containers:
          - name: app
            image: busybox
            # on every address of the pod's network namespace: port-forward dials its localhost
            command: ["sh", "-c", "cd /www && echo served > index.html && exec python3 -m http.server 8000"]
            volumeMounts: [{name: www, mountPath: /www}]
        """)
    cluster.wait_for("web Running", lambda: "running" in cluster.state("web"), 30)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = subprocess.Popen(["kubectl", "port-forward", "pod/web", f"{port}:8000", "--address", "127.0.0.1"],
                         env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        assert p.stdout.readline() == f"Forwarding from 127.0.0.1:{port} -> 8000\n"

        def fetch() -> bytes:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5) as r:
                    return bytes(r.read())
            except OSError:
                return b""
        assert cluster.wait_for("the page through the tunnel", fetch, 30) == b"served\n"
    finally:
        p.terminate()
        p.wait(timeout=10)
    cluster.kubectl("delete", "pod", "web", "--wait=false")


def _talker(cluster: Cluster128, name: str, go: Path) -> None:
    """A pod that says "waiting" until ``go`` exists, then writes two lines on each stream and ends."""
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: {name}}}
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          volumes: [{{name: host, hostPath: {{path: "{go.parent}"}}}}]
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "until [ -e {go} ]; do echo waiting; sleep 0.1; done; echo out 1; sleep 0.2;
                      echo err 1 >&2; sleep 0.2; echo out 2; sleep 0.2; echo err 2 >&2"]
            volumeMounts: [{{name: host, mountPath: "{go.parent}"}}]
        """)
    cluster.wait_for(f"{name} Running", lambda: "running" in cluster.state(name), 30)


def test_kubectl_128_attach_speaks_spdy_and_ends_with_the_process(cluster: Cluster128, tmp_path: Path) -> None:
    go = tmp_path / "go"
    _talker(cluster, "talk", go)
    p = subprocess.Popen(["kubectl", "attach", "talk"], env=cluster.env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stderr is not None
    assert p.stdout.readline() == "waiting\n"   # attached: what the process writes from now on comes
    go.touch()
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0
    # the main process's streams, apart, from the moment of attaching to its end (the kubelet's Success)
    assert [line for line in out.splitlines() if line != "waiting"] == ["out 1", "out 2"]
    assert err.splitlines()[-2:] == ["err 1", "err 2"]
    # the log has all of it
    assert cluster.kubectl("logs", "talk").stdout.endswith("out 1\nerr 1\nout 2\nerr 2\n")


def test_kubectl_128_attach_stdin_reaches_a_container_created_with_stdin(cluster: Cluster128) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: reader}
        spec:
          restartPolicy: Never
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            stdin: true
            stdinOnce: true
            command: ["sh", "-c", 'read line; echo "got $line"; read more || echo "end of stdin"']
        """)
    cluster.wait_for("reader Running", lambda: "running" in cluster.state("reader"), 30)
    # kubectl's end of stdin closes the container's (stdinOnce): the second read sees it
    p = subprocess.run(["kubectl", "attach", "-i", "reader"], input="hello\n", env=cluster.env,
                       capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stdout) == (0, "got hello\nend of stdin\n"), p.stderr
    cluster.wait_for("reader Completed", lambda: (cluster.state("reader").get("terminated") or {}).get("exitCode")
                     == 0, 30)


def test_attach_over_websocket(cluster: Cluster128, tmp_path: Path) -> None:
    go = tmp_path / "go"
    _talker(cluster, "wstalk", go)

    async def attach() -> list[tuple[str, Any]]:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(
                    cluster.url.replace("https://", "wss://") + "/api/v1/namespaces/default/pods/wstalk/attach"
                    "?stdout=1&stderr=1", protocols=("v4.channel.k8s.io",), ssl=cluster.ssl,
                    headers={"Authorization": f"Bearer {cluster.token}"}) as ws:
                got = [(m.type.name, m.data) for m in (await ws.receive(), await ws.receive())]
                go.touch()
                return got + [(m.type.name, m.data) async for m in ws]
    got = asyncio.run(asyncio.wait_for(attach(), 30))
    assert got[:2] == [("BINARY", b"\x01"), ("BINARY", b"\x01waiting\n")]
    said = [data for _, data in got[2:] if data != b"\x01waiting\n"]
    assert said == [b"\x01out 1\n", b"\x02err 1\n", b"\x01out 2\n", b"\x02err 2\n",
                    b'\x03{"metadata":{},"status":"Success"}']


# ---- WebSocket: the conformance suite's exec and logs, the Python client ------------------------------------

def test_exec_over_websocket_as_the_conformance_suite_does(cluster: Cluster128) -> None:
    path = f"{EXEC}?stderr=1&stdout=1&container=app&command=echo&command=remote+execution+test"
    # channel.k8s.io: an empty stdout message once open, then the output; success writes no status
    assert _ws(cluster, path, ("channel.k8s.io",)) == (
        "channel.k8s.io", [("BINARY", b"\x01"), ("BINARY", b"\x01remote execution test\n")])
    # base64.channel.k8s.io: the channel as a digit and the data in base64, in text messages
    assert _ws(cluster, path, ("base64.channel.k8s.io",)) == (
        "base64.channel.k8s.io", [("TEXT", "1"), ("TEXT", "1" + base64.b64encode(b"remote execution test\n").decode())])
    failing = f"{EXEC}?stdout=1&container=app&command=sh&command=-c&command=exit+7"
    # v1: a failure is its message on the error channel; v4: the Status as JSON
    assert _ws(cluster, failing, ("channel.k8s.io",))[1][-1] == (
        "BINARY", b"\x03command terminated with non-zero exit code: error executing command [sh -c exit 7], exit "
                  b"code 7")
    proto, got = _ws(cluster, failing, ("v4.base64.channel.k8s.io",))
    assert proto == "v4.base64.channel.k8s.io" and got[-1][1][0] == "3"
    assert json.loads(base64.b64decode(got[-1][1][1:])) == {
        "metadata": {}, "status": "Failure",
        "message": "command terminated with non-zero exit code: error executing command [sh -c exit 7], exit code 7",
        "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": "7"}]}}
    # stdin in base64 text messages (before v5 there is no end of stdin: the command reads one line)
    piped = f"{EXEC}?stdin=1&stdout=1&container=app&command=head&command=-n1"
    assert _ws(cluster, piped, ("v4.base64.channel.k8s.io",), send=["0" + base64.b64encode(b"typed\n").decode()]) == (
        "v4.base64.channel.k8s.io", [("TEXT", "1"), ("TEXT", "1" + base64.b64encode(b"typed\n").decode()),
                                     ("TEXT", "3" + base64.b64encode(b'{"metadata":{},"status":"Success"}').decode())])


def test_a_cross_site_origin_still_cannot_open_an_exec_websocket(cluster: Cluster128) -> None:
    path = f"{EXEC}?stdout=1&container=app&command=true"
    for origin in ("http://evil.example", "http://localhost:8080", "http://127.0.0.1:1"):
        with pytest.raises(aiohttp.WSServerHandshakeError) as e:
            _ws(cluster, path, ("channel.k8s.io",), origin=origin)
        assert e.value.status == 403
    assert _ws(cluster, path, ("channel.k8s.io",), origin=None)[1] == [("BINARY", b"\x01")]


def test_logs_over_websocket_as_the_conformance_suite_reads_them(cluster: Cluster128) -> None:
    # wsstream.Reader: an empty message first, then the log as binary messages (or base64 text)
    assert _ws(cluster, LOG, ("binary.k8s.io",)) == (
        "binary.k8s.io", [("BINARY", b""), ("BINARY", b"container is alive\n")])
    assert _ws(cluster, LOG, ("base64.binary.k8s.io",)) == (
        "base64.binary.k8s.io", [("TEXT", ""), ("TEXT", base64.b64encode(b"container is alive\n").decode())])
    assert _ws(cluster, LOG, ()) == (None, [("BINARY", b""), ("BINARY", b"container is alive\n")])


def test_the_python_clients_stream_runs_exec_over_websocket(cluster: Cluster128) -> None:
    from kubernetes import client, config
    from kubernetes.stream import stream

    api = client.CoreV1Api(config.new_client_from_config(config_file=cluster.kubeconfig))
    out = stream(api.connect_get_namespaced_pod_exec, "shell", "default", command=["sh", "-c", "echo $GREETING"],
                 stderr=True, stdin=False, stdout=True, tty=False)
    assert out == "hello\n"
    ws = stream(api.connect_get_namespaced_pod_exec, "shell", "default", command=["sh", "-c", "exit 5"],
                stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    ws.run_forever(timeout=20)
    assert ws.returncode == 5


# ---- the pause image --------------------------------------------------------------------------------------

def test_the_pause_image_runs_podlifes_built_in_pause(cluster: Cluster128) -> None:
    assert "registry.k8s.io/pause runs podlife's built-in pause" in cluster.output()
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: paused}
        spec:
          terminationGracePeriodSeconds: 20
          containers:
          - {name: pause, image: registry.k8s.io/pause:3.9}
        """)
    cluster.wait_for("paused Running", lambda: "running" in cluster.state("paused"), 30)
    assert cluster.wait_for("its warning", lambda: cluster.kubectl("logs", "paused").stdout) == (
        "Warning: pause should be the first process\n")
    start = time.time()
    cluster.kubectl("delete", "pod", "paused", "--wait=true", timeout=30)
    # SIGTERM ends it at once with exit code 0 (pause.c sigdown), long before the grace period's SIGKILL
    assert time.time() - start < 15
    assert [r["signal"] for r in cluster.records("signal", "paused")] == ["SIGTERM"]
    assert [r["detail"] for r in cluster.records("runtime", "paused", op="exit")] == ["exitCode 0"]


def test_exec_and_logs_reach_an_ephemeral_container(cluster: Cluster128) -> None:
    """The conformance suite's Ephemeral Containers tests: an ephemeral container added with kubectl debug is a
    container of the pod for exec and logs (pkg/registry/core/pod/strategy.go podHasContainerWithName visits
    ephemeral containers too)."""
    cluster.kubectl("debug", "shell", "--image=busybox", "-c", "debugger", "--",
                    "sh", "-c", "echo debugger is up; sleep 3600")

    def running() -> bool:
        pod = json.loads(cluster.kubectl("get", "pod", "shell", "-o", "json").stdout)
        return any(s["name"] == "debugger" and "running" in s["state"]
                   for s in pod["status"].get("ephemeralContainerStatuses") or ())
    cluster.wait_for("debugger running", running, 30)
    p = cluster.kubectl("exec", "shell", "-c", "debugger", "--", "sh", "-c", "echo from the debugger")
    assert p.stdout == "from the debugger\n"
    assert cluster.kubectl("logs", "shell", "-c", "debugger").stdout == "debugger is up\n"
    missing = cluster.kubectl("exec", "shell", "-c", "nobody", "--", "true", check=False)
    assert missing.stderr == ('Error from server (BadRequest): container nobody is not valid for pod shell\n')

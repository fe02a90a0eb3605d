"""A web page in the user's browser must not drive ``podlife up`` (podlife.apiserver.browser): foreign Origin and
Host headers and the body types a page sends without a CORS preflight are refused, the process runtime needs the
token, and the data at rest is the owner's alone, with no temporary files left behind.

Each refusal asserts the status, the Status body, that nothing happened, and that the server still answers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import aiohttp
import pytest

from tests.live.conftest import PODLIFE, Live, _require_kubectl

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
EVIL = "http://evil.example"
FAULT = {"type": "MemoryUsage", "node": "node-1", "value": "32Gi"}


def _cm(name: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}).encode()


@pytest.fixture(scope="module")
def frozen(live_factory) -> Live:
    """A manual clock: nothing moves unless a request moves it."""
    return live_factory("1.32", clock="manual")


def _port(live: Live) -> int:
    return int(live.url.rsplit(":", 1)[1])


def _refused(live: Live, method: str, path: str, body: bytes | None, headers: dict[str, str], auth: bool = True
             ) -> tuple[int, str | None, str]:
    code, _, raw = live.request(method, path, body, headers, auth=auth)
    doc = json.loads(raw)
    assert doc["kind"] == "Status" and doc["status"] == "Failure" and doc["code"] == code, doc
    return code, doc.get("reason"), doc["message"]


def _healthy(live: Live) -> None:
    assert live.proc.poll() is None, live.output()
    assert live.request("GET", "/readyz")[0] == 200


def _cross_origin(live: Live, origin: str) -> str:
    return (f'cross-origin request from "{origin}" refused: podlife up serves only requests from '
            f"{live.url} origin or without an Origin header (kubectl, client libraries)")


# ---- Origin -------------------------------------------------------------------------------------------------

def test_a_foreign_origin_cannot_stop_the_server(frozen: Live) -> None:
    # the request a page sends with fetch(..., {method: "POST", mode: "no-cors", body: "x"}): no preflight
    assert _refused(frozen, "POST", "/podlife/stop", b"x", {"Origin": EVIL, "Content-Type": "text/plain"}) == (
        403, "Forbidden", _cross_origin(frozen, EVIL))
    assert _refused(frozen, "POST", "/podlife/stop", None, {"Origin": EVIL}) == (
        403, "Forbidden", _cross_origin(frozen, EVIL))
    _healthy(frozen)


def test_a_foreign_origin_cannot_inject_a_fault(frozen: Live) -> None:
    before = frozen.trace()
    for content_type in ("text/plain", "application/json"):
        assert _refused(frozen, "POST", "/podlife/faults", json.dumps(FAULT).encode(),
                        {"Origin": EVIL, "Content-Type": content_type}) == (403, "Forbidden",
                                                                          _cross_origin(frozen, EVIL))
    assert frozen.trace() == before   # no fault started
    _healthy(frozen)


def test_a_foreign_origin_cannot_create_and_the_servers_own_can(frozen: Live) -> None:
    port = _port(frozen)
    for origin in (EVIL, f"http://localhost:{port + 1}", f"https://127.0.0.1:{port}", "null"):
        assert _refused(frozen, "POST", CONFIGMAPS, _cm("from-a-page"),
                        {"Origin": origin, "Content-Type": "application/json"}) == (
            403, "Forbidden", _cross_origin(frozen, origin))
    assert frozen.json("GET", f"{CONFIGMAPS}/from-a-page")[0] == 404
    # the server's own origin (a page it served, were there one) is same-origin
    code, _, _ = frozen.request("POST", CONFIGMAPS, _cm("same-origin"),
                                {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"})
    assert code == 201
    code, _, _ = frozen.request("GET", f"{CONFIGMAPS}/same-origin", None,
                                {"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"})
    assert code == 200
    _healthy(frozen)


def test_a_foreign_origin_cannot_open_a_websocket(frozen: Live) -> None:
    # a page's WebSocket is never preflighted; kubectl exec/attach/logs send no Origin
    async def handshake(origin: str | None) -> int:
        headers = {"Origin": origin} if origin else {}
        async with aiohttp.ClientSession() as session:
            try:
                async with session.ws_connect(frozen.url + "/api/v1/namespaces/default/pods/none/exec?command=true"
                                              "&stdout=true", headers=headers, protocols=("v5.channel.k8s.io",)):
                    return 101
            except aiohttp.WSServerHandshakeError as e:
                return e.status
    assert asyncio.run(handshake(EVIL)) == 403
    assert asyncio.run(handshake(None)) == 404   # through to the API: the pod does not exist
    _healthy(frozen)


# ---- Content-Type ------------------------------------------------------------------------------------------

ACCEPTED = ("the body of the request was in an unknown format - accepted media types include: application/json, "
            "application/yaml, application/vnd.kubernetes.protobuf")


@pytest.mark.parametrize("content_type", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x"])
def test_the_body_types_a_page_sends_without_preflight_are_refused(frozen: Live, content_type: str) -> None:
    headers = {"Content-Type": content_type}
    # negotiation.NewUnsupportedMediaTypeError, as the API server answers a create of an unknown type
    assert _refused(frozen, "POST", CONFIGMAPS, _cm("plain"), headers) == (415, "UnsupportedMediaType", ACCEPTED)
    assert frozen.json("GET", f"{CONFIGMAPS}/plain")[0] == 404
    control = ("the body of the request was in an unknown format - accepted media types include: application/json")
    assert _refused(frozen, "POST", "/podlife/stop", b"{}", headers) == (415, "UnsupportedMediaType", control)
    before = frozen.trace()
    assert _refused(frozen, "POST", "/podlife/faults", json.dumps(FAULT).encode(), headers) == (
        415, "UnsupportedMediaType", control)
    assert frozen.trace() == before
    _healthy(frozen)


def test_the_clients_types_still_pass(frozen: Live) -> None:
    assert frozen.json("POST", CONFIGMAPS, _cm("json"))[0] == 201
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\n"
    assert frozen.request("POST", CONFIGMAPS, yaml_body, {"Content-Type": "application/yaml"})[0] == 201
    code, _ = frozen.json("PATCH", f"{CONFIGMAPS}/json", {"data": {"a": "b"}},
                          content_type="application/merge-patch+json")
    assert code == 200
    # podlife advance and podlife down send no body; podlife fault sends JSON
    assert frozen.podlife("advance", "1s").returncode == 0
    p = frozen.podlife("fault", "MemoryUsage", "--node", "node-3", "--value", "1Gi")
    assert p.returncode == 0, p.stderr
    _healthy(frozen)


# ---- Host ----------------------------------------------------------------------------------------------------

def test_a_rebound_host_cannot_list_secrets(frozen: Live) -> None:
    port = _port(frozen)
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.nip.io", f"[::2]:{port}"):
        assert _refused(frozen, "GET", "/api/v1/secrets", None, {"Host": host}) == (
            421, None, f'the Host "{host}" of the request is not served by podlife up (it answers to 127.0.0.1, ::1, '
                       "localhost); a web page that rebinds a name to this address is refused")
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost", f"LOCALHOST.:{port}"):
        code, _, raw = frozen.request("GET", "/api/v1/secrets", None, {"Host": host})
        assert code == 200 and json.loads(raw)["kind"] == "SecretList", host
    _healthy(frozen)


def test_kubectl_passes_every_check(frozen: Live) -> None:
    _require_kubectl()
    frozen.kubectl("create", "configmap", "by-kubectl", "--from-literal=a=b")
    assert frozen.kubectl("get", "configmap", "by-kubectl", "-o", "jsonpath={.data.a}").stdout == "b"
    frozen.kubectl("patch", "configmap", "by-kubectl", "-p", '{"data":{"a":"c"}}')
    frozen.kubectl("delete", "configmap", "by-kubectl")


# ---- the process runtime needs the token --------------------------------------------------------------------

def _private_tmp(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return {**os.environ, "TMPDIR": str(tmp)}


def _temporary(env: dict[str, str]) -> list[str]:
    return sorted(p for p in os.listdir(env["TMPDIR"]) if p.startswith("podlife-up-"))


def test_the_process_runtime_requires_the_token_on_loopback(tmp_path: Path) -> None:
    _require_kubectl()
    env = _private_tmp(tmp_path)
    live = Live(tmp_path, "1.32", extra=("--runtime", "process", "--ephemeral"), env=env)
    try:
        # TLS too: kubectl sends a kubeconfig's token only over TLS
        assert live.url.startswith("https://127.0.0.1:") and live.token
        for auth in ({}, {"Authorization": "Bearer wrong"}):
            # an authentication failure: the Status of responsewriters Unauthorized
            assert _refused(live, "POST", "/api/v1/namespaces/default/pods", b"{}",
                            {"Content-Type": "application/json", **auth}, auth=False) == (
                401, "Unauthorized", "Unauthorized")
            assert _refused(live, "POST", "/podlife/stop", None, auth, auth=False) == (
                401, "Unauthorized", "Unauthorized")
        assert live.kubectl("get", "pods", "-o", "name").stdout == ""   # nothing was created
        assert live.kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/node-1", "node/node-2",
                                                                             "node/node-3"]
        _healthy(live)
        assert len(_temporary(env)) == 1   # the pods' directory of --ephemeral
    finally:
        assert live.stop() == 0
    assert _temporary(env) == []


# ---- data at rest -------------------------------------------------------------------------------------------

def _modes(directory: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in directory.iterdir() if p.is_file()}


def test_the_data_directory_is_private_and_an_old_one_is_tightened(tmp_path: Path) -> None:
    (tmp_path / "first").mkdir()
    first = Live(tmp_path / "first", "1.32")
    data = tmp_path / "first" / "data"
    try:
        assert first.json("POST", CONFIGMAPS, _cm("kept"))[0] == 201
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        modes = _modes(data)
        assert {"state.db", "state.db-wal", "state.db-shm", "trace.ndjson", "podlife.lock"} <= set(modes)
        assert set(modes.values()) == {0o600}, modes
        assert stat.S_IMODE(os.stat(first.kubeconfig).st_mode) == 0o600
    finally:
        assert first.stop() == 0
    # as an older podlife left it
    data.chmod(0o755)
    for p in data.iterdir():
        if p.is_file():
            p.chmod(0o644)
    (tmp_path / "second").mkdir()
    again = Live(tmp_path / "second", "1.32", extra=("--data-dir", str(data)))
    try:
        assert again.json("GET", f"{CONFIGMAPS}/kept")[0] == 200
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        assert set(_modes(data).values()) == {0o600}, _modes(data)
        _healthy(again)
    finally:
        assert again.stop() == 0


# ---- no temporary files left --------------------------------------------------------------------------------

TEMPORARY = ("--tls", "--runtime", "process", "--ephemeral")   # a key and the pods' directory in $TMPDIR


@pytest.mark.parametrize("how", ["podlife down", "SIGTERM", "SIGINT"])
def test_no_temporary_directory_is_left_after_a_stop(tmp_path: Path, how: str) -> None:
    env = _private_tmp(tmp_path)
    live = Live(tmp_path, "1.32", extra=TEMPORARY, env=env)
    assert live.url.startswith("https://") and len(_temporary(env)) == 1   # the key is gone already
    if how == "podlife down":
        p = live.podlife("down")
        assert p.returncode == 0, p.stderr
    else:
        live.proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
    assert live.proc.wait(timeout=30) == 0
    assert live.output().splitlines()[-1] == "podlife: stopped"
    assert _temporary(env) == []


def test_no_temporary_directory_is_left_after_a_failed_start(tmp_path: Path) -> None:
    env = _private_tmp(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        p = subprocess.run([*PODLIFE, "up", *TEMPORARY, "--port", str(port), "--kubeconfig",
                            str(tmp_path / "kubeconfig")], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.startswith(f"--port: cannot serve on 127.0.0.1:{port}: "), p.stderr
    assert _temporary(env) == []
    assert not (tmp_path / "kubeconfig").exists()


def test_sigterm_while_starting_leaves_nothing(tmp_path: Path) -> None:
    env = _private_tmp(tmp_path)
    proc = subprocess.Popen([*PODLIFE, "up", *TEMPORARY, "--port", "0", "--kubeconfig", str(tmp_path / "kc")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not _temporary(env) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)   # the pods' directory is made while the cluster is built
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert _temporary(env) == []

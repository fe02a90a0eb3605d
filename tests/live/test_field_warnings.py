"""podlife up says what it does not model as the API server says its own warnings: a Warning header
(299 - "FIELD: message") on a create or update whose body sets a not-modelled field (podlife.api.fieldsupport);
kubectl prints it as "Warning: …"."""

from __future__ import annotations

import json

import pytest

from tests.live.conftest import Live

TEXT = ("spec.shareProcessNamespace: not modelled: each container's process is assumed to be PID 1 of its own "
        "namespace (with a shared one, a process without a SIGTERM handler would be killed by SIGTERM)")


@pytest.fixture(scope="module")
def frozen(live_factory) -> Live:
    return live_factory("1.32", clock="manual")


def _pod(name: str, shared: bool | None) -> dict:
    spec = {"containers": [{"name": "app", "image": "nginx"}]}
    if shared is not None:
        spec["shareProcessNamespace"] = shared
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _send(live: Live, method: str, path: str, body: dict) -> tuple[int, str | None]:
    code, headers, _ = live.request(method, path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return code, headers.get("Warning")


def test_a_create_or_update_that_sets_a_not_modelled_field_gets_one_warning(frozen):
    assert _send(frozen, "POST", "/api/v1/namespaces/default/pods", _pod("shared", True)) == (201, f'299 - "{TEXT}"')
    assert _send(frozen, "POST", "/api/v1/namespaces/default/pods", _pod("plain", False)) == (201, None)
    code, _, raw = frozen.request("GET", "/api/v1/namespaces/default/pods/shared")
    pod = json.loads(raw)
    pod["metadata"]["labels"] = {"a": "b"}
    assert _send(frozen, "PUT", "/api/v1/namespaces/default/pods/shared", pod) == (200, f'299 - "{TEXT}"')


def test_kubectl_prints_it(frozen, tmp_path):
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(_pod("via-kubectl", True)))
    p = frozen.kubectl("create", "-f", str(path))
    assert f"Warning: {TEXT}" in p.stderr

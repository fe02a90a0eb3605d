"""Protobuf request bodies, decoded as the JSON body of the same request.

The fixtures are bodies real kubectl 1.32 and 1.33 sent to a recording test server; for each `kubectl create`
the expected dict is what the same kubectl printed for the same command with `--dry-run=client -o json` (the
object it would have sent as JSON). The others are checked against the command's flags and the served objects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podlife.api.errors import ApiError
from podlife.apiserver.protobuf import MAGIC, decode, go_duration, supported

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"
PAIRED = sorted(p.stem for p in FIXTURES.glob("*.json"))


def body(name: str) -> bytes:
    return (FIXTURES / f"{name}.pb").read_bytes()


def test_every_kubectl_create_fixture_is_paired():
    assert len(PAIRED) == 21


@pytest.mark.parametrize("name", PAIRED)
def test_decodes_as_kubectl_would_have_sent_json(name):
    assert decode(body(name)) == json.loads((FIXTURES / f"{name}.json").read_text())


def test_pointer_zeros_survive_and_value_zeros_are_omitted():
    dep = decode(body("v1.32-create-deployment"))
    assert dep["spec"]["replicas"] == 0                   # *int32: --replicas=0 is kept
    assert "minReadySeconds" not in dep["spec"]           # int32 omitempty: zero is dropped
    assert dep["metadata"]["creationTimestamp"] is None   # metav1.Time zero is null
    assert dep["status"] == {} and dep["spec"]["strategy"] == {}   # structs are never omitted


def test_auth_can_i():
    assert decode(body("v1.32-auth-can-i")) == {
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
        "status": {"allowed": False}}
    review = decode(body("v1.33-auth-can-i-subresource"))   # auth can-i list deployments.apps --subresource=scale
    assert review["spec"]["resourceAttributes"] == {"namespace": "default", "verb": "list", "group": "apps",
                                                    "resource": "deployments", "subresource": "scale"}


def test_create_token():
    # kubectl create token sa1 --duration=10m: audiences and boundObjectRef have no omitempty (null)
    assert decode(body("v1.33-create-token")) == {
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": None},
        "spec": {"audiences": None, "expirationSeconds": 600, "boundObjectRef": None},
        "status": {"token": "", "expirationTimestamp": None}}


def test_debug_copy_keeps_the_source_pod():
    # kubectl debug pod/p1 -it --copy-to=p1-copy --image=busybox --share-processes, p1 served by the test server
    pod = decode(body("v1.32-debug-copy-to"))
    spec = pod["spec"]
    app, debugger = spec["containers"]
    assert app["env"][1] == {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    assert app["livenessProbe"] == {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10}   # IntOrString
    assert app["resources"] == {"limits": {"cpu": "500m", "memory": "128Mi"}}                    # Quantity
    assert app["securityContext"] == {"privileged": False, "runAsUser": 0}                       # pointers
    assert spec["volumes"] == [{"name": "v", "emptyDir": {}}]                                    # inlined source
    assert (spec["terminationGracePeriodSeconds"], spec["automountServiceAccountToken"]) == (0, False)
    assert spec["shareProcessNamespace"] is True
    assert debugger["image"] == "busybox" and debugger["stdin"] is True and debugger["tty"] is True
    assert debugger["name"].startswith("debugger-")


def test_envelope_errors():
    with pytest.raises(ApiError) as e:
        decode(b'{"kind":"Pod"}')
    assert e.value.code == 400
    with pytest.raises(ApiError) as e:
        decode(body("v1.32-create-deployment")[:40])
    assert (e.value.code, e.value.reason) == (400, "BadRequest")
    # a kind outside the table: the JSON and YAML media types are what the server can read
    envelope = MAGIC + bytes([0x0A, 0x14, 0x0A, 0x08]) + b"stable/x" + bytes([0x12, 0x08]) + b"Widget42"
    with pytest.raises(ApiError) as e:
        decode(envelope)
    assert (e.value.code, e.value.reason) == (415, "UnsupportedMediaType")
    assert e.value.message.endswith("accepted media types include: application/json, application/yaml")
    assert supported("apps/v1", "Deployment") and not supported("stable/x", "Widget42")


def test_go_duration():
    assert [go_duration(n) for n in (0, 1, 1_500, 300_000_000, 90 * 10**9, 3_600 * 10**9, 3_723_500_000_000)] == [
        "0s", "1ns", "1.5µs", "300ms", "1m30s", "1h0m0s", "1h2m3.5s"]

"""The kubernetes Python client and a Kopf operator against a realtime ``podlife up``; kubectl of several
minors; TLS with a bearer token."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.live.conftest import Live, rows, write

kubernetes = pytest.importorskip("kubernetes")


def _api(live: Live):
    from kubernetes import client, config

    return client.CoreV1Api(config.new_client_from_config(live.kubeconfig))


def test_python_client_list_watch_create_patch_delete(live: Live) -> None:
    from kubernetes import client, watch

    v1 = _api(live)
    listed = v1.list_namespaced_pod("default", label_selector="client=py")
    assert listed.items == []
    rv = listed.metadata.resource_version
    pod = v1.create_namespaced_pod("default", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "py", "labels": {"client": "py"}},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "c", "image": "nginx"}]}})
    assert pod.metadata.name == "py" and int(pod.metadata.resource_version) > int(rv)
    patched = v1.patch_namespaced_pod("py", "default", {"metadata": {"labels": {"patched": "yes"}}})
    assert patched.metadata.labels == {"client": "py", "patched": "yes"}
    # the watch from the list's resourceVersion replays what happened since, then a bookmark 2 s before its
    # timeout (the watch cache's bookmark timer)
    events = []
    for ev in watch.Watch().stream(v1.list_namespaced_pod, "default", label_selector="client=py",
                                   resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=3):
        events.append((ev["type"], ev["raw_object"]["metadata"].get("name")))
        if ev["type"] == "BOOKMARK":
            assert int(ev["raw_object"]["metadata"]["resourceVersion"]) >= int(patched.metadata.resource_version)
    assert events[0] == ("ADDED", "py") and ("BOOKMARK", None) in events
    assert {t for t, _ in events[1:]} <= {"MODIFIED", "BOOKMARK"}
    v1.delete_namespaced_pod("py", "default")
    live.wait_for("the pod to go", lambda: not v1.list_namespaced_pod("default", label_selector="client=py").items)
    with pytest.raises(client.ApiException) as e:
        v1.read_namespaced_pod("py", "default")
    assert e.value.status == 404
    assert json.loads(e.value.body)["message"] == 'pods "py" not found'


def test_watch_from_a_compacted_version_is_gone(live: Live) -> None:
    """The store keeps 1,000 changes; older resourceVersions answer an ERROR event with 410 Expired."""
    from kubernetes import client, watch

    v1 = _api(live)
    for i in range(1010):   # ConfigMaps churn the history without starting anything
        live.json("POST", "/api/v1/namespaces/default/configmaps",
                  {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": f"churn-{i}", "labels": {"churn": "yes"}}})
    with pytest.raises(client.ApiException) as e:
        for _ in watch.Watch().stream(v1.list_namespaced_config_map, "default", resource_version="1",
                                      timeout_seconds=5):
            pass
    assert e.value.status == 410
    code, body = live.json("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=churn%3Dyes")
    assert code == 200 and len(body["items"]) == 1010


OPERATOR = '''
import kopf

@kopf.on.create("example.com", "v1", "widgets")
def widget_created(spec, patch, **_):
    patch.status["observedSize"] = spec.get("size")

@kopf.on.create("", "v1", "pods", labels={"watched": "yes"})
def pod_created(patch, **_):
    patch.metadata.annotations["seen-by"] = "operator"
'''

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
"""


def test_kopf_operator(live: Live, tmp_path) -> None:
    pytest.importorskip("kopf")
    live.kubectl("apply", "-f", write(tmp_path, "crd.yaml", CRD))
    live.kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", "--timeout=30s")
    assert "widgets" in rows(live.kubectl("api-resources", "--api-group=example.com").stdout)
    op = subprocess.Popen([sys.executable, "-m", "kopf", "run", "--standalone", "-n", "default",
                           write(tmp_path, "op.py", OPERATOR)], env=live.env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    try:
        live.kubectl("apply", "-f", write(tmp_path, "w.yaml", "apiVersion: example.com/v1\nkind: Widget\n"
                                                              "metadata: {name: w1}\nspec: {size: 3}\n"))
        live.kubectl("run", "kp", "--image=nginx", "--labels=watched=yes")
        live.wait_for("the widget's status", lambda: live.kubectl(
            "get", "wd", "w1", "-o", "jsonpath={.status.observedSize}").stdout == "3")
        live.wait_for("the pod's annotation", lambda: live.kubectl(
            "get", "pod", "kp", "-o", "jsonpath={.metadata.annotations.seen-by}").stdout == "operator")
        assert rows(live.kubectl("get", "widgets").stdout)["w1"][0] == "3"   # the CRD's printer column
    finally:
        op.terminate()
        out = op.communicate(timeout=30)[0]
    assert "Handler 'widget_created' succeeded." in out and "Handler 'pod_created' succeeded." in out
    live.kubectl("delete", "pod", "kp", "--grace-period=0", "--force")


@pytest.mark.parametrize("minor", ["1.27", "1.30", "1.31", "1.33"])
def test_kubectl_of_other_minors(live_factory, tmp_path, minor: str) -> None:
    """The kubectl dispatcher runs the kubectl of the server's minor: each must find its discovery (aggregated
    v2beta1 up to 1.29, v2 from 1.30), OpenAPI and Tables."""
    live: Live = live_factory(minor, speed=10.0)
    assert json.loads(live.kubectl("version", "-o", "json").stdout)["serverVersion"]["minor"] == minor.split(".")[1]
    path = write(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
                                       "  containers: [{name: app, image: nginx}]\n")
    assert live.kubectl("apply", "-f", path).stdout.strip() == "pod/web created"
    live.kubectl("wait", "--for=condition=Ready", "pod/web", "--timeout=30s")
    assert rows(live.kubectl("get", "pods").stdout)["web"][:2] == ["1/1", "Running"]
    # kubectl create deployment sends a protobuf body from 1.32
    out = live.kubectl("create", "deployment", "d", "--image=nginx", "--replicas=1").stdout
    assert out.strip() == "deployment.apps/d created"
    live.kubectl("rollout", "status", "deploy/d", "--timeout=30s")
    assert live.kubectl("autoscale", "deploy", "d", "--min=1", "--max=2", "--cpu-percent=50").stdout.strip() == \
        "horizontalpodautoscaler.autoscaling/d autoscaled"
    # the Jobs table has a Status column from 1.30 (PR #123226)
    live.kubectl("create", "job", "j", "--image=busybox", "--", "true")
    header = live.kubectl("get", "jobs").stdout.splitlines()[0].split()
    assert header[:3] == (["NAME", "COMPLETIONS", "DURATION"] if minor == "1.27" else ["NAME", "STATUS", "COMPLETIONS"])
    # 1.27 and 1.28 read /openapi/v2 as protobuf for explain; later ones /openapi/v3
    assert "FIELD: nodeName <string>" in live.kubectl("explain", "pod.spec.nodeName").stdout
    # a SelfSubjectAccessReview (protobuf from 1.32) is answered, not stored: one user, allowed everything
    assert live.kubectl("auth", "can-i", "delete", "nodes").stdout.strip() == "yes"
    live.kubectl("delete", "pod", "web", "--grace-period=0", "--force")
    assert live.stop() == 0


def test_tls_and_token(live_factory) -> None:
    live: Live = live_factory("1.32", extra=("--tls",))
    assert live.url.startswith("https://127.0.0.1:") and live.token
    assert rows(live.kubectl("get", "nodes").stdout)["node-1"][0] == "Ready"
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(live.url + "/api/v1/pods", context=ctx, timeout=10)
    assert e.value.code == 401
    assert json.loads(e.value.read())["reason"] == "Unauthorized"
    for wrong in (f"Bearer {live.token}x", live.token, "Bearer "):   # another token, no scheme, an empty one
        req = urllib.request.Request(live.url + "/api/v1/namespaces", headers={"Authorization": wrong})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, context=ctx, timeout=10)
        assert e.value.code == 401
        assert json.loads(e.value.read())["reason"] == "Unauthorized"
    other = dict(live.env, KUBECONFIG="")
    p = subprocess.run(["kubectl", "--server", live.url, "--token", "wrong", "--insecure-skip-tls-verify", "get",
                        "nodes"], env=other, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert p.stderr.strip() == "error: You must be logged in to the server (Unauthorized)"
    req = urllib.request.Request(live.url + "/api/v1/namespaces", headers={"Authorization": f"Bearer {live.token}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
        assert resp.status == 200

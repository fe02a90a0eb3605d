"""Volumes at their mount paths, image entrypoints and port-forward on ``podlife up --runtime process``, with
real kubectl. Each container has a mount namespace of its own (the tests run as root, as CI does)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from podlife.runtime import mountns
from tests.live.conftest import Live, _require_kubectl, write

VERSION = "1.32"
CLUSTER = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: volumes}
spec:
  kubernetesVersion: "1.32"
  cluster:
    nodes: [{name: node-1}]
    kubelet: {syncFrequency: 2s}
"""


class Cluster(Live):
    def __init__(self, tmp: Path) -> None:
        _require_kubectl()
        self.tmp = tmp
        super().__init__(tmp, VERSION, cluster=write(tmp, "cluster.yaml", CLUSTER),
                         extra=("--runtime", "process", "--data-dir", str(tmp / "data")))

    def apply(self, manifest: str) -> None:
        self.kubectl("apply", "-f", write(self.tmp, f"m{time.monotonic_ns()}.yaml", manifest))

    def pod(self, name: str) -> dict[str, Any]:
        p = self.kubectl("get", "pod", name, "-o", "json", check=False)
        return json.loads(p.stdout) if p.returncode == 0 else {}

    def running(self, name: str) -> bool:
        statuses = (self.pod(name).get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and all("running" in (s.get("state") or {}) for s in statuses)

    def sh(self, pod: str, container: str, script: str) -> str:
        return self.kubectl("exec", pod, "-c", container, "--", "sh", "-c", script).stdout


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    why = mountns.available()
    if why is not None:
        pytest.skip(f"no mount namespaces here: {why}")
    c = Cluster(tmp_path_factory.mktemp("volumes"))
    yield c
    c.stop()


def test_configmap_secret_downward_api_and_shared_empty_dir_at_their_mount_paths(cluster: Cluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: app-config}
        data: {app.yaml: "level: info\\n", other: "x"}
        ---
        apiVersion: v1
        kind: Secret
        metadata: {name: app-secret}
        stringData: {password: s3cret}
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: vols
          labels: {app: vols, tier: web}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: app
            image: busybox
            command: ["sh", "-c", "echo hello > /shared/greeting; exec sleep 3600"]
            volumeMounts:
            - {name: config, mountPath: /etc/config}
            - {name: podinfo, mountPath: /etc/podinfo}
            - {name: secret, mountPath: /etc/secret, readOnly: true}
            - {name: shared, mountPath: /shared}
            - {name: config, mountPath: /etc/app.yaml, subPath: app.yaml}
          - name: sidecar
            image: busybox
            command: ["sleep", "3600"]
            volumeMounts:
            - {name: shared, mountPath: /data}
          volumes:
          - name: config
            configMap: {name: app-config, items: [{key: app.yaml, path: app.yaml, mode: 0600}]}
          - name: podinfo
            downwardAPI:
              items:
              - {path: labels, fieldRef: {fieldPath: metadata.labels}}
              - {path: name, fieldRef: {fieldPath: metadata.name}}
          - name: secret
            secret: {secretName: app-secret, defaultMode: 0400}
          - name: shared
            emptyDir: {}
        """)
    cluster.wait_for("vols Running", lambda: cluster.running("vols"), 30)
    out = cluster.sh("vols", "app", "cat /etc/config/app.yaml /etc/podinfo/labels; echo; cat /etc/podinfo/name; "
                     "echo; cat /etc/secret/password; echo; cat /etc/app.yaml; "
                     "stat -L -c '%a %n' /etc/config/app.yaml /etc/secret/password /etc/podinfo/name")
    assert out == ('level: info\napp="vols"\ntier="web"\nvols\ns3cret\nlevel: info\n'
                   "600 /etc/config/app.yaml\n400 /etc/secret/password\n644 /etc/podinfo/name\n")
    # upstream's layout: ..data → the timestamped directory, each key a symlink through ..data
    layout = cluster.sh("vols", "app", "readlink /etc/config/app.yaml; readlink /etc/config/..data")
    first, data = layout.splitlines()
    assert first == "..data/app.yaml" and data.startswith("..20")
    # the sidecar sees the app's file in the emptyDir shared between them, at its own mount path
    assert cluster.sh("vols", "sidecar", "cat /data/greeting") == "hello\n"
    # read-only: the machine's directories bound in the root and the API-data volumes; writable: the root itself
    # (no readOnlyRootFilesystem: the container's own, as an image's writable layer is) and the emptyDir
    writes = cluster.sh("vols", "app", "touch /usr/x 2>/dev/null && echo rw || echo ro; "
                        "touch /etc/secret/x 2>/dev/null && echo rw || echo ro; "
                        "touch /shared/x 2>/dev/null && echo rw || echo ro; "
                        "touch /x 2>/dev/null && echo rw || echo ro")
    assert writes == "ro\nro\nrw\nrw\n"
    # an emptyDir on the default medium is 0777, past the umask (pkg/volume/emptydir: setupDir)
    assert cluster.sh("vols", "sidecar", "stat -c '%a' /data") == "777\n"
    assert not os.path.exists("/etc/config"), "the mount point was made on the host"
    # an update of the ConfigMap reaches the volume within the sync period (2 s here); a subPath does not
    cluster.kubectl("patch", "configmap", "app-config", "-p", '{"data": {"app.yaml": "level: debug\\n"}}')
    cluster.wait_for("the new config", lambda: cluster.sh("vols", "app", "cat /etc/config/app.yaml")
                     == "level: debug\n", 20)
    assert cluster.sh("vols", "app", "cat /etc/app.yaml") == "level: info\n"
    cluster.kubectl("label", "pod", "vols", "tier=db", "--overwrite")
    cluster.wait_for("the new labels", lambda: cluster.sh("vols", "app", "cat /etc/podinfo/labels")
                     == 'app="vols"\ntier="db"', 20)
    cluster.kubectl("delete", "pod", "vols", "--wait=false")


def test_args_only_busybox_pod_runs_its_args_with_the_image_entrypoint(cluster: Cluster) -> None:
    if shutil.which("sh") is None:
        pytest.skip("no sh")
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: argsonly}
        spec:
          restartPolicy: Never
          containers:
          - name: c
            image: busybox:1.36
            args: ["sh", "-c", "echo from-args $(GREETING); pwd"]
            env: [{name: GREETING, value: hi}]
        """)
    cluster.wait_for("argsonly Succeeded", lambda: cluster.pod("argsonly").get("status", {}).get("phase")
                     == "Succeeded", 30)
    assert cluster.kubectl("logs", "argsonly").stdout == "from-args hi\n/\n"


def test_image_program_missing_names_it(cluster: Cluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: noagn}
        spec:
          restartPolicy: Never
          containers:
          - {name: c, image: registry.k8s.io/e2e-test-images/agnhost:2.53, args: ["pause"]}
        """)

    def failed() -> list[str]:
        out = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=noagn", "-o", "json").stdout
        return [e["message"] for e in json.loads(out)["items"] if e["reason"] == "Failed"]
    messages = cluster.wait_for("noagn failed", failed, 30)
    assert messages[0] == (
        "Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
        'failed: unable to start container process: exec: "/agnhost": no such file or directory: '
        'unknown (podlife runs the program of image "registry.k8s.io/e2e-test-images/agnhost:2.53" from this '
        'machine, and "/agnhost" is not on it)')


def test_official_python_client_exec_with_stdin_in_text_frames_on_an_args_only_busybox_pod(cluster: Cluster) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    from kubernetes.stream import stream

    # the pod of the client's own e2e exec test: busybox with args only (the image's CMD replaced)
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: busybox-test}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: sleep
            image: busybox
            args: ["/bin/sh", "-c", "while true; do date; sleep 5; done"]
        """)
    cluster.wait_for("busybox-test Running", lambda: cluster.running("busybox-test"), 30)
    client = kubernetes.config.new_client_from_config(config_file=cluster.env["KUBECONFIG"])
    api = kubernetes.client.CoreV1Api(client)
    resp = stream(api.connect_get_namespaced_pod_exec, "busybox-test", "default", command=["/bin/sh"],
                  stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
    try:
        resp.write_stdin("echo test string 1 $HOSTNAME\n")   # a str: sent as a text frame
        out = ""
        deadline = time.monotonic() + 10
        while "\n" not in out and time.monotonic() < deadline:
            resp.update(timeout=1)
            out += resp.read_stdout() if resp.peek_stdout() else ""
        assert out == "test string 1 busybox-test\n"
        resp.write_stdin("exit 4\n")
        resp.update(timeout=5)
        deadline = time.monotonic() + 10
        while resp.is_open() and time.monotonic() < deadline:
            resp.update(timeout=1)
        assert resp.returncode == 4
    finally:
        resp.close()
    cluster.kubectl("delete", "pod", "busybox-test", "--wait=false")


def test_pods_proxy_and_services_proxy_reach_the_pods_http_server(cluster: Cluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: site, labels: {app: site}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: web
            image: python:3
            command: ["sh", "-c", "echo hello from $(POD_NAME) > /srv/hello.txt;
                                   exec python3 -m http.server 8080 --bind $(POD_IP) --directory /srv"]
            env:
            - {name: POD_IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            ports: [{name: http, containerPort: 8080}]
            readinessProbe: {tcpSocket: {port: http}, periodSeconds: 1}
            volumeMounts: [{name: srv, mountPath: /srv}]
          volumes: [{name: srv, emptyDir: {}}]
        ---
        apiVersion: v1
        kind: Service
        metadata: {name: site}
        spec:
          selector: {app: site}
          ports: [{name: web, port: 80, targetPort: http}]
        """)
    cluster.wait_for("site Ready", lambda: any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (cluster.pod("site").get("status") or {}).get("conditions") or []), 30)
    pods = cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/site:8080/proxy/hello.txt").stdout
    assert pods == "hello from site\n"
    # no port given: the first declared container port
    assert cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/site/proxy/hello.txt").stdout == pods
    cluster.wait_for("an endpoint", lambda: cluster.kubectl(
        "get", "--raw", "/api/v1/namespaces/default/services/site:web/proxy/hello.txt", check=False).stdout == pods,
        20)
    missing = cluster.kubectl("get", "--raw", "/api/v1/namespaces/default/pods/site:8080/proxy/nope", check=False)
    assert missing.returncode == 1 and missing.stderr.startswith("Error from server (NotFound)")
    cluster.kubectl("delete", "pod", "site", "--wait=false")


LINKS_SERVER = """\
import functools, http.server, os
os.makedirs("/srv/docs")
with open("/srv/index.html", "w") as f:
    f.write("<A HREF='/docs/a.html'>a</A><a href=rel.html>r</a>")
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="/srv")
http.server.HTTPServer((os.environ["POD_IP"], 8080), handler).serve_forever()
"""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kw: Any) -> None:
        return None


def _send(cluster: Cluster, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One request, its redirects not followed (the conformance test's http.Client: ErrUseLastResponse)."""
    https = urllib.request.HTTPSHandler(context=cluster.ssl)
    opener = urllib.request.build_opener(_NoRedirects, https)
    req = urllib.request.Request(cluster.url + path, method=method,
                                 headers={"Authorization": f"Bearer {cluster.token}"})
    try:
        with opener.open(req, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_the_proxy_passes_every_method_redirects_the_bare_path_and_rewrites_links(cluster: Cluster) -> None:
    # test/e2e/network/proxy.go ("A set of valid responses", "should proxy through a service and a pod"):
    # pods/proxy and services/proxy take HEAD and OPTIONS too (proxyMethods), GET and HEAD of NAME/proxy are
    # redirected to NAME/proxy/ (upgradeaware.go proxyRedirectsforRootPath), and absolute links and redirects
    # of the proxied server go through the proxy (proxy/transport.go)
    cluster.apply(f"""\
        apiVersion: v1
        kind: Pod
        metadata: {{name: links, labels: {{app: links}}}}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: web
            image: python:3
            command: ["python3", "-c", {json.dumps(LINKS_SERVER)}]
            env:
            - {{name: POD_IP, valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}}}
            ports: [{{name: http, containerPort: 8080}}]
            readinessProbe: {{tcpSocket: {{port: http}}, periodSeconds: 1}}
            volumeMounts: [{{name: srv, mountPath: /srv}}]
          volumes: [{{name: srv, emptyDir: {{}}}}]
        ---
        apiVersion: v1
        kind: Service
        metadata: {{name: links}}
        spec:
          selector: {{app: links}}
          ports: [{{name: web, port: 80, targetPort: http}}]
        """)
    cluster.wait_for("links Ready", lambda: any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (cluster.pod("links").get("status") or {}).get("conditions") or []), 30)
    pod = "/api/v1/namespaces/default/pods/links/proxy"
    svc = "/api/v1/namespaces/default/services/links:web/proxy"
    cluster.wait_for("an endpoint", lambda: _send(cluster, "GET", svc + "/")[0] == 200, 20)
    for prefix in (pod, svc):
        code, headers, _ = _send(cluster, "GET", prefix + "?x=1")
        assert (code, headers["Location"]) == (301, prefix + "/?x=1")
        assert _send(cluster, "HEAD", prefix)[0] == 301
        code, headers, body = _send(cluster, "GET", prefix + "/")
        # start tags written back as Go's tokenizer writes them, end tags as they came
        assert (code, body) == (200, f'<a href="{prefix}/docs/a.html">a</A><a href="rel.html">r</a>'.encode())
        # http.server redirects a directory to its path with '/': the Location goes through the proxy too
        code, headers, _ = _send(cluster, "GET", prefix + "/docs")
        assert (code, headers["Location"]) == (301, prefix + "/docs/")
        code, headers, body = _send(cluster, "HEAD", prefix + "/index.html")
        assert (code, headers["Content-Type"], body) == (200, "text/html", b"")
        # http.server has no OPTIONS: its 501 shows the request reached it (the API server's own is a 405)
        code, _, body = _send(cluster, "OPTIONS", prefix + "/")
        assert code == 501 and b"Unsupported method ('OPTIONS')" in body
    cluster.kubectl("delete", "pod", "links", "--wait=false")
    cluster.kubectl("delete", "service", "links", "--wait=false")


def test_official_python_client_port_forward_reaches_the_pods_http_server(cluster: Cluster) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    from kubernetes.stream import portforward

    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: fwd}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: web
            image: python:3
            # every address of the pod's network namespace: port-forward dials its localhost
            command: ["sh", "-c", "echo forwarded > /srv/index.html;
                                   exec python3 -m http.server 8081 --directory /srv"]
            readinessProbe: {tcpSocket: {port: 8081}, periodSeconds: 1}
            volumeMounts: [{name: srv, mountPath: /srv}]
          volumes: [{name: srv, emptyDir: {}}]
        """)
    cluster.wait_for("fwd Ready", lambda: any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (cluster.pod("fwd").get("status") or {}).get("conditions") or []), 30)
    client = kubernetes.config.new_client_from_config(config_file=cluster.env["KUBECONFIG"])
    api = kubernetes.client.CoreV1Api(client)
    pf = portforward(api.connect_get_namespaced_pod_portforward, "fwd", "default", ports="8081")
    sock = pf.socket(8081)
    sock.settimeout(10)
    sock.sendall(b"GET /index.html HTTP/1.0\r\nHost: fwd\r\n\r\n")
    reply = b""
    while True:
        data = sock.recv(4096)
        if not data:
            break
        reply += data
    sock.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0] == b"HTTP/1.0 200 OK"
    assert body == b"forwarded\n"
    assert pf.error(8081) is None
    cluster.kubectl("delete", "pod", "fwd", "--wait=false")


def test_kubectl_port_forward_reaches_the_pods_http_server(cluster: Cluster) -> None:
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: kfwd}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: web
            image: python:3
            command: ["sh", "-c", "echo through kubectl > /srv/index.html;
                                   exec python3 -m http.server 8082 --directory /srv"]
            readinessProbe: {tcpSocket: {port: 8082}, periodSeconds: 1}
            volumeMounts: [{name: srv, mountPath: /srv}]
          volumes: [{name: srv, emptyDir: {}}]
        """)
    cluster.wait_for("kfwd Ready", lambda: any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (cluster.pod("kfwd").get("status") or {}).get("conditions") or []), 30)
    fwd = subprocess.Popen(["kubectl", "port-forward", "pod/kfwd", ":8082"], env=cluster.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert fwd.stdout is not None
        line = fwd.stdout.readline()   # Forwarding from 127.0.0.1:PORT -> 8082
        assert line.startswith("Forwarding from 127.0.0.1:") and line.rstrip().endswith(" -> 8082"), line
        local = int(line.split("127.0.0.1:")[1].split()[0])
        for _ in range(2):   # two connections, each its own pair of streams
            with urllib.request.urlopen(f"http://127.0.0.1:{local}/index.html", timeout=10) as r:
                assert (r.status, r.read()) == (200, b"through kubectl\n")
    finally:
        fwd.terminate()
        fwd.wait(timeout=10)
    cluster.kubectl("delete", "pod", "kfwd", "--wait=false")


def test_kubectl_cp_into_and_out_of_a_memory_empty_dir(cluster: Cluster) -> None:
    if shutil.which("tar") is None:
        pytest.skip("no tar")
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: cpd}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: c
            image: busybox
            command: ["sleep", "3600"]
            volumeMounts: [{name: data, mountPath: /data}]
          volumes: [{name: data, emptyDir: {medium: Memory}}]
        """)
    cluster.wait_for("cpd Running", lambda: cluster.running("cpd"), 30)
    assert cluster.sh("cpd", "c", "stat -f -c %T /data") == "tmpfs\n"   # medium Memory
    src = cluster.tmp / "payload.txt"
    src.write_text("copied in\n")
    cluster.kubectl("cp", str(src), "cpd:/data/payload.txt")
    assert cluster.sh("cpd", "c", "cat /data/payload.txt") == "copied in\n"
    back = cluster.tmp / "back.txt"
    cluster.kubectl("cp", "cpd:/data/payload.txt", str(back))
    assert back.read_text() == "copied in\n"
    cluster.kubectl("delete", "pod", "cpd", "--wait=false")


def test_projected_service_account_volume_at_its_usual_path(cluster: Cluster) -> None:
    # the kube-api-access volume's shape, under /var/run (a symlink to /run on Debian: shadowed, not followed)
    cluster.apply("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: sa}
        spec:
          terminationGracePeriodSeconds: 1
          containers:
          - name: c
            image: busybox
            command: ["sleep", "3600"]
            volumeMounts: [{name: api, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}]
          volumes:
          - name: api
            projected:
              defaultMode: 420   # decimal, as upstream's kube-api-access volume: 0644
              sources:
              - serviceAccountToken: {path: token, expirationSeconds: 3607}
              - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}
              - downwardAPI: {items: [{path: namespace, fieldRef: {fieldPath: metadata.namespace}}]}
        """)
    cluster.wait_for("sa Running", lambda: cluster.running("sa"), 30)
    d = "/var/run/secrets/kubernetes.io/serviceaccount"
    assert cluster.sh("sa", "c", f"ls {d}; cat {d}/namespace; echo; head -1 {d}/ca.crt; stat -L -c %a {d}/token") \
        == "ca.crt\nnamespace\ntoken\ndefault\n-----BEGIN CERTIFICATE-----\n644\n"
    assert not os.path.exists("/run/secrets/kubernetes.io"), "the mount point was made on the host"
    cluster.kubectl("delete", "pod", "sa", "--wait=false")

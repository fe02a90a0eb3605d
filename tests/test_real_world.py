"""Manifests shaped like what applications ship (tests/fixtures/real-world, written for podlife), run as plain
manifests on several versions: each either runs, with the warnings a user must see, or is refused where the
version's API refuses it; and what they do is what a cluster with default settings does, with each time
derived below from the upstream rule that makes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run
from podlife.versions import NEWEST
from tests.helpers import records, times

FIXTURES = Path(__file__).parent / "fixtures" / "real-world"
VERSIONS = ("1.25", "1.29", "1.33", NEWEST)

# fixture → {version: the error line (refused) or None}, for versions where it is refused; else it runs
REFUSED = {
    "istio-native-sidecar.yaml": {"1.25": "istio-native-sidecar.yaml:70: spec.template.spec.initContainers[1]."
                                          "restartPolicy: unknown field in Container: Kubernetes 1.25 does not "
                                          "have it (it exists from 1.28)"},
    "probes-and-hooks.yaml": {"1.25": "probes-and-hooks.yaml:49: spec.containers[2].lifecycle.preStop.sleep: "
                                      "unknown field in LifecycleHandler: Kubernetes 1.25 does not have it (it "
                                      "exists from 1.29)"},
}
# fixture → warnings every version prints (as "FILE:LINE: PATH: message", file name only)
WARNINGS = {
    "cert-manager.yaml": ["cert-manager.yaml:87: kind ClusterRole", "cert-manager.yaml:99: kind ClusterRoleBinding",
                          "cert-manager.yaml:261: kind MutatingWebhookConfiguration",
                          "cert-manager.yaml:312: custom resource Certificate",
                          # runAsNonRoot without runAsUser: the kubelet checks the image's user, which podlife
                          # does not know (podlife.api.fieldsupport)
                          *(f"cert-manager.yaml:{n}: spec.template.spec.securityContext.runAsNonRoot: not modelled"
                            for n in (137, 174, 222, 301))],
    "config-references.yaml": [
        "config-references.yaml:63: spec.template.spec.volumes[0].projected.sources[0].configMap.items: not "
        "modelled: the keys listed are assumed to be in the object",
        "config-references.yaml:67: spec.template.spec.volumes[0].projected.sources[1].secret.items: not "
        "modelled: the keys listed are assumed to be in the object"],
    "gpu-inference.yaml": ["gpu-inference.yaml:54: spec.template.spec.volumes[0].emptyDir.sizeLimit: not modelled"],
    "ingress-nginx.yaml": ["ingress-nginx.yaml:23: kind Role", "ingress-nginx.yaml:40: kind ClusterRole",
                           "ingress-nginx.yaml:54: kind RoleBinding", "ingress-nginx.yaml:63: kind ClusterRoleBinding",
                           'ingress-nginx.yaml:184: spec.template.spec.volumes[0].secret.secretName: Secret '
                           '"ingress-nginx-admission" is not among the scenario\'s objects',
                           "ingress-nginx.yaml:246: kind IngressClass",
                           "ingress-nginx.yaml:255: kind ValidatingWebhookConfiguration"],
    "legacy-controllers.yaml": ["legacy-controllers.yaml:23: kind PodTemplate"],
    "node-agents.yaml": ["node-agents.yaml:19: spec.template.spec.hostPID: not modelled: each container's process "
                         "is assumed to be PID 1 of its own namespace",
                         "node-agents.yaml:83: spec.template.spec.volumes[0].hostPath.type: not modelled: the host "
                         "path is assumed to exist"],
    "network-and-ingress.yaml": ["network-and-ingress.yaml:3: kind NetworkPolicy", "network-and-ingress.yaml:30: "
                                 "kind Ingress"],
    "operator-with-crs.yaml": ["operator-with-crs.yaml:48: custom resource ServiceMonitor"],
    "sandboxed-runtime.yaml": ["sandboxed-runtime.yaml:6: handler: not modelled: every node's container runtime "
                               "is assumed to have this handler configured"],
    "windows-app.yaml": ["windows-app.yaml:15: spec.template.spec.os.name: podlife models Linux nodes"],
}
# fixture → {version: warnings only that version prints}
VERSION_WARNINGS = {
    "postgres-ha.yaml": {"1.25": ["postgres-ha.yaml:32: spec.persistentVolumeClaimRetentionPolicy: dropped by the "
                                  "API server: the StatefulSetAutoDeletePVC feature gate is off by default"]},
    "probes-and-hooks.yaml": {"1.29": ["probes-and-hooks.yaml:49: spec.containers[2].lifecycle.preStop.sleep: "
                                       "dropped by the API server: the PodLifecycleSleepAction feature gate is off"]},
    "priority-and-spread.yaml": {"1.25": ["priority-and-spread.yaml:38: spec.template.spec.topologySpreadConstraints"
                                          "[0].minDomains: dropped: Kubernetes 1.25 does not have this field"]},
    "jobs.yaml": {"1.25": ["jobs.yaml:12: spec.podFailurePolicy: dropped by the API server: the "
                           "JobPodFailurePolicy feature gate is off by default on Kubernetes 1.25"]},
}


def _cli(path: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["run", str(path), "--quiet", "--until", "3m", *args])
    return res.exit_code, res.output


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.yaml")))
def test_each_fixture_runs_or_is_refused_as_upstream(fixture, version):
    code, out = _cli(FIXTURES / fixture, "--kubernetes-version", version)
    refused = REFUSED.get(fixture, {}).get(version)
    if refused is not None:
        assert code == 2 and out.strip().splitlines()[-1] == f"{FIXTURES / fixture.split(':')[0]}:" \
            f"{refused.split(':', 1)[1]}"
        return
    assert code == 0, out
    warnings = [line.removeprefix("warning: ").replace(f"{FIXTURES}/", "") for line in out.splitlines()
                if line.startswith("warning: ")]
    extra = VERSION_WARNINGS.get(fixture, {}).get(version, [])   # replaces a warning about the same field
    expected = [w for w in WARNINGS.get(fixture, []) if not any(e.split(":")[:3] == w.split(":")[:3] for e in extra)]
    expected += extra
    assert len(warnings) == len(expected), warnings

    def by_line(w: str) -> int:
        return int(w.split(":")[1])

    for line, prefix in zip(sorted(warnings, key=by_line), sorted(expected, key=by_line)):
        assert line.startswith(prefix), (line, prefix)


def _run(tmp_path: Path, fixture: str, body: str = "", version: str | None = None):
    """The fixture through objectsFrom, with actions or nodes in ``body`` (indented under spec)."""
    (tmp_path / fixture).write_text((FIXTURES / fixture).read_text())
    path = tmp_path / "scenario.yaml"
    path.write_text(f"apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {{name: rw}}\nspec:\n"
                    f"  objectsFrom: [{fixture}]\n{body}")
    return run(load_scenario(str(path), kubernetes_version=version))


def _pods(result, prefix: str) -> list[str]:
    return sorted({r["object"] for r in records(result, "api", verb="create") if r["object"].startswith(prefix)})


def _assumed(result, container: str) -> list[str]:
    from podlife.scenario.assumptions import assumptions

    return [a["assumption"] for a in assumptions(result.scenario) if a["container"] == container]


def test_istio_classic_injection(tmp_path):
    """istio-init's iptables program is run by the image's entrypoint (args without command): podlife cannot see
    it and assumes it completes 1 s after it starts (0.1 s after creation: 1.1 s), seen at the 2 s relist; the
    app and the proxy then start (3 s relist). The proxy (args only, pilot-agent's entrypoint) is assumed to exit
    0.1 s after SIGTERM, like the app: the pod is gone at the next relist after 30.1 s."""
    r = _run(tmp_path, "istio-injected-app.yaml",
             "  until: 60s\n  actions: [{at: 30s, delete: deployment/reviews-v1}]\n")
    pod = _pods(r, "Pod/default/reviews-v1-")[0]
    running = [(x["t"], x["container"]) for x in records(r, "container", object=pod, state="running")]
    assert running == [(1.0, "istio-init"), (3.0, "reviews"), (3.0, "istio-proxy")]
    assert [(x["t"], x["container"]) for x in records(r, "signal", object=pod, signal="SIGTERM")] == \
        [(30.0, "reviews"), (30.0, "istio-proxy")]
    assert times(r, "deleted", object=pod) == [31.0]
    assert _assumed(r, "istio-proxy")[:2] == ["no command (image entrypoint unknown, with args); assumed: runs until "
                                              "stopped", "SIGTERM: assumed handled, exits in 0.1 s"]


def test_istio_native_sidecar_stops_after_the_app(tmp_path):
    """KEP-753 from 1.29: the proxy, a restartable init container, starts after istio-init and before the app, and
    is sent SIGTERM only once the app has exited (30.1 s), not with it."""
    r = _run(tmp_path, "istio-native-sidecar.yaml",
             "  until: 60s\n  actions: [{at: 30s, delete: deployment/reviews-v2}]\n", version="1.29")
    pod = _pods(r, "Pod/default/reviews-v2-")[0]
    started = [x["container"] for x in records(r, "container", object=pod, state="running")]
    assert started == ["istio-init", "istio-proxy", "reviews"]
    assert [(x["t"], x["container"]) for x in records(r, "signal", object=pod, signal="SIGTERM")] == \
        [(30.0, "reviews"), (30.1, "istio-proxy")]


def test_ingress_nginx_waits_for_its_webhook_certificate(tmp_path):
    """The controller mounts the Secret that kube-webhook-certgen creates from inside its Job: podlife does not
    run that program, so the pod stays ContainerCreating, the volume manager retrying with exponential back-off
    (nestedpendingoperations: 500 ms doubling) - and the scenario's warning says so. Adding the Secret at 2 s, as
    the Job would, lets the controller start at the next retry (3.5 s) and run at the 4 s relist."""
    r = _run(tmp_path, "ingress-nginx.yaml", "  until: 70s\n")
    pod = _pods(r, "Pod/ingress-nginx/ingress-nginx-controller-")[0]
    assert times(r, "event", object=pod, reason="FailedMount") == [0.0, 0.5, 1.5, 3.5, 7.5, 15.5, 31.5, 63.5]
    assert all(job in [x["object"] for x in records(r, "condition", conditionType="Complete", status="True")]
               for job in ("Job/ingress-nginx/ingress-nginx-admission-create",
                           "Job/ingress-nginx/ingress-nginx-admission-patch"))
    r = _run(tmp_path, "ingress-nginx.yaml", "  until: 70s\n  actions:\n  - {at: 2s, create: {apiVersion: v1, kind: "
             "Secret, metadata: {name: ingress-nginx-admission, namespace: ingress-nginx}, data: {cert: eA==, key: "
             "eA==}}}\n")
    pod = _pods(r, "Pod/ingress-nginx/ingress-nginx-controller-")[0]
    assert times(r, "event", object=pod, reason="FailedMount") == [0.0, 0.5, 1.5]
    assert times(r, "container", object=pod, state="running") == [4.0]


def test_stateful_sets_wait_for_provisioning_and_readiness(tmp_path):
    """WaitForFirstConsumer claims are provisioned once the scheduler picks a node (PreBind waits): redis binds at
    the assumed 2 s, postgres at its class's 6 s. OrderedReady then waits for Ready: redis' readiness probe
    (period 5 s, initial delay 5 s) ticks from the pod's first sync (2 s) and first passes the delay at 12 s (the
    container started at 3 s; the probe the status at 4 s triggers is inside the delay), so redis-1 is created
    at 12 s and bound at 14 s, redis-2 at 26 s. postgres' probe (period 10 s, no delay) runs as soon as the status
    at the relist after its start (7 s) finds it not ready (PR #98376): Ready at 7 s, postgres-1 binds at
    7 + 6 = 13 s."""
    r = _run(tmp_path, "redis-statefulset.yaml", "  until: 60s\n")
    assert [times(r, "api", verb="bind", object=f"Pod/default/redis-{i}") for i in range(3)] == [[2.0], [14.0], [26.0]]
    r = _run(tmp_path, "postgres-ha.yaml", "  until: 60s\n")
    assert [times(r, "api", verb="bind", object=f"Pod/default/postgres-{i}") for i in range(2)] == [[6.0], [13.0]]


def test_cronjob_every_two_minutes(tmp_path):
    """robfig/cron "*/2 * * * *" from the 2025-01-01T00:00:00Z start: 00:02 and 00:04; the v2 controller creates
    each Job 100 ms after its time (requeue for the next time + 100 ms)."""
    r = _run(tmp_path, "cronjob-backup.yaml", "  until: 5m\n")
    jobs = [(x["t"], x["object"]) for x in records(r, "api", verb="create") if x["object"].startswith("Job/")]
    assert [t for t, _ in jobs] == [120.1, 240.1]


def test_limit_ranger_defaults_change_the_qos_class(tmp_path):
    """LimitRanger sets each container's missing default limits and requests (after API defaulting copied the
    metrics container's cpu limit to its request): both containers end Burstable, not BestEffort."""
    r = _run(tmp_path, "quota-and-limits.yaml", "  until: 5s\n")
    pod = next(o for o in r.cluster.store.list("Pod", "team-a"))
    res = {c["name"]: c["resources"] for c in pod["spec"]["containers"]}
    assert res == {"worker": {"requests": {"cpu": "100m", "memory": "128Mi"},
                              "limits": {"cpu": "500m", "memory": "512Mi"}},
                   "metrics": {"limits": {"cpu": "200m", "memory": "512Mi"},
                               "requests": {"cpu": "200m", "memory": "128Mi"}}}
    assert pod["status"]["qosClass"] == "Burstable"
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container worker; cpu, memory limit for container worker; "
        "memory request for container metrics; memory limit for container metrics")


def test_replication_controller_runs_its_pods(tmp_path):
    r = _run(tmp_path, "legacy-controllers.yaml", "  until: 5s\n")
    assert len(_pods(r, "Pod/default/frontend-legacy-")) == 3
    assert [x["source"] for x in records(r, "event", reason="SuccessfulCreate")] == ["replication-controller"] * 3


def test_gpu_pods_need_a_gpu_node(tmp_path):
    """One GPU node with one nvidia.com/gpu, tainted: the first replica lands there, the second finds no GPU left
    (the NodeResourcesFit filter) and the CPU node lacks the selector's label."""
    nodes = ("  until: 10s\n  cluster:\n    nodes:\n    - {name: cpu-1}\n    - name: gpu-1\n"
             "      labels: {nvidia.com/gpu.present: 'true'}\n"
             "      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]\n"
             "      capacity: {cpu: '16', memory: 64Gi, pods: '110', nvidia.com/gpu: '1'}\n")
    r = _run(tmp_path, "gpu-inference.yaml", nodes)
    binds = [x["node"] for x in records(r, "api", verb="bind")]
    assert binds == ["gpu-1"]
    failed = [x["message"] for x in records(r, "event", reason="FailedScheduling")]
    assert failed[0].startswith("0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) didn't match "
                                "Pod's node affinity/selector.")


def test_runtime_class_brings_overhead_and_scheduling(tmp_path):
    r = _run(tmp_path, "sandboxed-runtime.yaml", "  until: 5s\n")
    pod = r.cluster.store.get("Pod", "default", "untrusted")
    assert pod["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert pod["spec"]["nodeSelector"] == {"sandbox.gke.io/runtime": "gvisor"}
    assert {"key": "sandbox.gke.io/runtime", "operator": "Equal", "value": "gvisor", "effect": "NoSchedule"} in \
        pod["spec"]["tolerations"]


def test_prestop_shapes(tmp_path):
    """Delete at 30 s with 45 s of grace: an httpGet preStop (assumed instant) and an unrecognised shell loop
    (assumed instant) are followed by SIGTERM at once; the sleep action waits 10 s (SIGTERM with 45 - 10 = 35 s);
    exec sleep 15 takes 15 s (30 s left). The shell loop's container is a shell as PID 1: SIGKILL at 30 + 45 = 75 s,
    as is etcd's (no known handler) at 45 + 30 = 75 s."""
    r = _run(tmp_path, "probes-and-hooks.yaml", "  until: 90s\n  actions: [{at: 30s, delete: pod/probes}]\n")
    sigterm = {x["container"]: (x["t"], x["timeoutSeconds"]) for x in records(r, "signal", signal="SIGTERM")}
    assert sigterm == {"exec-probe": (30.0, 45), "http-probe": (30.0, 45), "tcp-probe": (40.0, 35),
                       "grpc-probe": (45.0, 30)}
    assert {x["container"]: x["t"] for x in records(r, "signal", signal="SIGKILL")} == {"exec-probe": 75.0,
                                                                                       "grpc-probe": 75.0}

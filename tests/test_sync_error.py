"""The pod worker's "Error syncing pod, skipping" for a sync whose containers could not start
(pod_workers.go managePodLoop; the error is PodSyncResult.Error() of kuberuntime's SyncPod).

kubelet.go SyncPod returns that error unless every SyncResult of the sync, succeeded ones included, is a
back-off (ErrCrashLoopBackOff or ErrImagePullBackOff). kuberuntime's SyncPod adds a ConfigPodSandbox result,
succeeded, to every sync that gets past the sandbox, before it starts anything, so a sync that waits out a
back-off returns its error too (and is retried after the pod worker's 10-15 s backOffPeriod): the line comes
at every sync whose container is in back-off, on every version.
"""

from __future__ import annotations

import math

import pytest

from tests.helpers import logs, records, run_text

CRASH = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: crash}
spec:
  kubernetesVersion: "VERSION"
  until: 2m
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: crash}
      spec:
        containers:
          - {name: app, image: busybox:1.36, command: ["sh", "-c", "exit 1"]}
"""

PULL = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: pull}
spec:
  kubernetesVersion: "VERSION"
  until: 1m
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: app, image: "nginx:1.27"}]}}
  actions:
    - at: 0s
      fault: {type: ImagePullFailure, image: "nginx:1.27", for: 40s}
"""


def sync_errors(r):
    return [(x["t"], x["severity"], f'{x["file"]}:{x["line"]}', x["message"])
            for x in records(r, "log") if "Error syncing pod" in x["message"]]


def uid(r, name):
    return r.cluster.store.get("Pod", "default", name)["metadata"]["uid"]


def test_crash_loop_back_off_is_logged_from_1_34(tmp_path):
    r = run_text(tmp_path, CRASH.replace("VERSION", "1.34"))
    u = uid(r, "crash")
    starts = [x["t"] for x in records(r, "runtime", op="start", container="app")]
    # the container exits as it starts; the relist (every 1 s) that sees the exit syncs the pod. The first
    # restart (1.1) is immediate; each later sync after an exit finds the back-off (10 s, doubling) running,
    # so the line comes at the relist after every start but the first
    assert starts[:2] == [0.1, 1.1]
    expected = [float(math.ceil(t)) for t in starts[1:]]
    assert expected[0] == 2.0
    lines = sync_errors(r)
    assert [t for t, *_ in lines] == expected
    for (_t, severity, site, message), backoff in zip(lines, ["10s", "20s", "40s", "1m20s"]):
        assert (severity, site) == ("E", "pod_workers.go:1301")
        # klog quotes err with strconv.Quote: the %q-quoted parts of the error come out as \"
        assert message == (
            '"Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"app\\" with CrashLoopBackOff: '
            f'\\"back-off {backoff} restarting failed container=app pod=crash_default({u})\\"" pod="default/crash" '
            f'podUID="{u}"')
    # the retry at the back-off's expiry restarts the container and logs nothing
    assert len(lines) == 4 and len(starts) == 5


@pytest.mark.parametrize("version", ["1.18", "1.33"])
def test_crash_loop_back_off_is_logged_at_every_sync_in_back_off_before_1_34(tmp_path, version):
    r = run_text(tmp_path, CRASH.replace("VERSION", version))
    starts = [x["t"] for x in records(r, "runtime", op="start", container="app")]
    assert len(starts) >= 4   # it did crash-loop
    lines = [t for t, *_ in sync_errors(r)]
    # each sync that finds the back-off running logs, as it records the BackOff event: the relist after each
    # exit but the first, then the failed sync's retries (every 10-15 s) until one finds the back-off over
    # and restarts the container (no line)
    assert lines == [e["t"] for e in records(r, "event", reason="BackOff")]
    assert not set(lines) & set(starts)
    assert {float(math.ceil(t)) for t in starts[1:]} <= set(lines)
    for a, b in zip(starts[1:], starts[2:]):
        within = [t for t in lines if a < t < b]
        assert all(10.0 <= y - x <= 15.0 for x, y in zip(within, within[1:])), within
        assert 10.0 <= b - within[-1] <= 15.0 + 0.2   # the retry that restarted it (start 0.1 s into it)


@pytest.mark.parametrize("version", ["1.18", "1.34"])
def test_image_pull_failure_and_back_off_are_logged(tmp_path, version):
    r = run_text(tmp_path, PULL.replace("VERSION", version))
    u = uid(r, "web")
    pulls = [e["t"] for e in records(r, "event", reason="Pulling")]
    backoffs = [e["t"] for e in records(r, "event", reason="BackOff")]
    # created at 0 with the fault active: the sync creates the sandbox and the pull fails at once
    # (ErrImagePull); the relist at 1.0 syncs again within the 10 s pull back-off (ImagePullBackOff); the
    # failed sync's retries alternate between the two; each of those syncs logs (a pull after the fault heals
    # at 40 s succeeds and does not)
    assert pulls[0] == 0.0 and backoffs[0] == 1.0
    failed_pulls = [t for t in pulls if t < 40.0]
    lines = sync_errors(r)
    assert [t for t, *_ in lines] == sorted(failed_pulls + backoffs)
    err = 'rpc error: code = Unknown desc = failed to pull and unpack image "nginx:1.27"'
    for t, severity, site, message in lines:
        reason, text = ("ErrImagePull", err) if t in failed_pulls else \
            ("ImagePullBackOff", 'Back-off pulling image "nginx:1.27"')
        if version == "1.18":
            assert (severity, site) == ("E", "pod_workers.go:191")
            assert message == (f'Error syncing pod {u} ("web_default({u})"), skipping: failed to "StartContainer" '
                               f'for "app" with {reason}: "{text.replace(chr(34), chr(92) + chr(34))}"')
        else:
            assert (severity, site) == ("E", "pod_workers.go:1301")
            quoted = text.replace('"', '\\\\\\"')
            assert message == (
                f'"Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"app\\" with {reason}: '
                f'\\"{quoted}\\"" pod="default/web" podUID="{u}"')


def test_pod_sync_result_error_formats_as_upstream():
    from podlife.kubelet.kuberuntime.manager import ActionResult, aggregate

    # PodSyncResult.Error: failed to %q for %q with %w: %q per failed result; NewAggregate brackets several
    a = ActionResult("StartContainer", "app", "CreateContainerConfigError", 'configmap "cfg" not found')
    b = ActionResult("StartContainer", "side", "RunContainerError", "line one\nline\ttwo")
    assert aggregate([a]) == 'failed to "StartContainer" for "app" with CreateContainerConfigError: ' \
                             '"configmap \\"cfg\\" not found"'
    assert aggregate([a, b]) == '[' + aggregate([a]) + ', failed to "StartContainer" for "side" with ' \
                                'RunContainerError: "line one\\nline\\ttwo"]'


CONFIG = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: cfg}
spec:
  kubernetesVersion: "1.35"
  until: 40s
  objects:
    - apiVersion: v1
      kind: Pod
      metadata: {name: cfg}
      spec:
        initContainers:
          - name: init
            image: busybox:1.36
            command: ["true"]
            env: [{name: X, valueFrom: {configMapKeyRef: {name: missing, key: k}}}]
        containers:
          - {name: app, image: busybox:1.36}
"""


def test_init_container_config_error_is_logged_at_every_failed_sync(tmp_path):
    r = run_text(tmp_path, CONFIG)
    u = uid(r, "cfg")
    failed = [e["t"] for e in records(r, "event", reason="Failed")]
    # not a back-off: each sync that tries the init container (creation at 0, the relist at 1.0, the failed
    # sync's retries) fails and logs, at the same instant as its Failed event
    assert failed[:2] == [0.0, 1.0]
    assert [t for t, _ in logs(r, "Error syncing pod")] == failed
    assert {m for _, m in logs(r, "Error syncing pod")} == {
        '"Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"init\\" with '
        'CreateContainerConfigError: \\"configmap \\\\\\"missing\\\\\\" not found\\"" pod="default/cfg" '
        f'podUID="{u}"'}

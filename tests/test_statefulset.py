"""The StatefulSet controller end to end (pkg/controller/statefulset).

Timing facts of the model (see tests/test_controllers.py): a default container starts 0.1 s after its pod is
created and the kubelet reports the pod Running and Ready at its next PLEG relist, the next whole second; a
deleted pod whose container exits on SIGTERM (0.1 s) is removed at the next whole second; a `sleep 3600`
container ignores SIGTERM and dies by SIGKILL when the 30 s grace period ends, the pod being removed at the next
whole second.
"""

from __future__ import annotations

import pytest

from podlife.controlplane.controllers.statefulset import parent_and_ordinal
from podlife.controlplane.controllers.statefulset_revisions import revision_name
from tests.helpers import records, run_text


def _scenario(replicas: int = 3, actions: str = "[]", until: str = "30s", version: str = "1.34",
              policy: str = "", command: str = "") -> str:
    cmd = f", command: {command}" if command else ""
    pol = f"\n        podManagementPolicy: {policy}" if policy else ""
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: sts}}
spec:
  kubernetesVersion: "{version}"
  objects:
    - apiVersion: apps/v1
      kind: StatefulSet
      metadata: {{name: web}}
      spec:
        replicas: {replicas}
        serviceName: web{pol}
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            containers: [{{name: app, image: nginx:1.27{cmd}}}]
  actions: {actions}
  until: {until}
"""


def _creates(r, kind: str = "Pod") -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb="create", by="statefulset-controller")
            if x["object"].startswith(kind + "/")]


def _deletes(r, kind: str = "Pod") -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb="delete", by="statefulset-controller")
            if x["object"].startswith(kind + "/")]


def _events(r, reason: str) -> list[tuple[float, str]]:
    return [(e["t"], e["message"]) for e in records(r, "event", reason=reason, object="StatefulSet/default/web")]


def test_ordered_ready_startup_one_after_the_other(tmp_path):
    # web-0 created at 0, Running and Ready at the 1 s relist -> web-1 created at 1, Ready at 2 -> web-2 at 2,
    # Ready at 3
    r = run_text(tmp_path, _scenario())
    assert _creates(r) == [(0.0, "web-0"), (1.0, "web-1"), (2.0, "web-2")]
    assert _events(r, "SuccessfulCreate") == [(float(i), f"create Pod web-{i} in StatefulSet web successful")
                                              for i in range(3)]
    store = r.cluster.store
    sset = store.get("StatefulSet", "default", "web")
    rev = revision_name(sset, 0)
    pod = store.get("Pod", "default", "web-1")
    assert pod["metadata"]["generateName"] == "web-"
    assert pod["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-1",
                                         "apps.kubernetes.io/pod-index": "1", "controller-revision-hash": rev}
    assert pod["metadata"]["ownerReferences"] == [{
        "apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": sset["metadata"]["uid"],
        "controller": True, "blockOwnerDeletion": True}]
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "web")
    assert sset["status"] == {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
                              "availableReplicas": 3, "observedGeneration": 1, "currentRevision": rev,
                              "updateRevision": rev, "collisionCount": 0}
    # the last status write: web-2 Ready at 3
    writes = records(r, "api", verb="update", object="StatefulSet/default/web", subresource="status")
    assert writes[-1]["t"] == 3.0


@pytest.mark.parametrize("version,index_label,available", [("1.27", False, True), ("1.22", False, False),
                                                           ("1.28", True, True)])
def test_version_dependent_fields(tmp_path, version, index_label, available):
    # apps.kubernetes.io/pod-index from 1.28 (PodIndexLabel beta); status.availableReplicas counted from 1.23
    # (StatefulSetMinReadySeconds beta); in 1.22 the field exists, has no omitempty, and so is encoded as 0
    r = run_text(tmp_path, _scenario(replicas=1, until="5s", version=version))
    pod = r.cluster.store.get("Pod", "default", "web-0")
    assert ("apps.kubernetes.io/pod-index" in pod["metadata"]["labels"]) is index_label
    sset = r.cluster.store.get("StatefulSet", "default", "web")
    assert sset["status"]["availableReplicas"] == (1 if available else 0)


def test_parallel_creates_all_at_once(tmp_path):
    r = run_text(tmp_path, _scenario(policy="Parallel", until="5s"))
    assert _creates(r) == [(0.0, "web-0"), (0.0, "web-1"), (0.0, "web-2")]


def test_deleted_replica_is_recreated_once_gone(tmp_path):
    # all Ready at 3. web-1 deleted at 10: it is terminating (the same name cannot be created, and OrderedReady
    # waits). nginx exits 0.1 s after SIGTERM; the pod is removed at the 11 s relist; the next sync, in the same
    # instant, creates web-1 again
    r = run_text(tmp_path, _scenario(actions="[{at: 10s, delete: pod/web-1}]"))
    assert [x["t"] for x in records(r, "terminating", object="Pod/default/web-1")] == [10.0]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web-1")] == [11.0]
    assert _creates(r)[3:] == [(11.0, "web-1")]


def test_terminating_replica_blocks_until_removed(tmp_path):
    # `sleep 3600` ignores SIGTERM: web-0 deleted at 10 is SIGKILLed at 40 (grace 30 s) and removed at the 41 s
    # relist; web-0 is recreated only then, and web-1, web-2 are left alone meanwhile
    r = run_text(tmp_path, _scenario(actions="[{at: 10s, delete: pod/web-0}]", until="45s",
                                     command='["sleep", "3600"]'))
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web-0")] == [41.0]
    assert _creates(r) == [(0.0, "web-0"), (1.0, "web-1"), (2.0, "web-2"), (41.0, "web-0")]
    assert _deletes(r) == []


def test_scale_down_from_the_highest_ordinal_one_at_a_time(tmp_path):
    # scaled to 1 at 20: web-2 deleted at 20, removed at 21; only then web-1 is deleted (21), removed at 22
    r = run_text(tmp_path, _scenario(actions="[{at: 20s, scale: statefulset/web, replicas: 1}]"))
    assert _deletes(r) == [(20.0, "web-2"), (21.0, "web-1")]
    assert _events(r, "SuccessfulDelete") == [(20.0, "delete Pod web-2 in StatefulSet web successful"),
                                              (21.0, "delete Pod web-1 in StatefulSet web successful")]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web-1")] == [22.0]
    assert r.cluster.store.get("StatefulSet", "default", "web")["status"]["replicas"] == 1


def test_parallel_scale_down_deletes_all_at_once(tmp_path):
    r = run_text(tmp_path, _scenario(policy="Parallel",
                                     actions="[{at: 10s, scale: statefulset/web, replicas: 0}]", until="15s"))
    assert _deletes(r) == [(10.0, "web-2"), (10.0, "web-1"), (10.0, "web-0")]


def test_parent_and_ordinal():
    pod = {"metadata": {"name": "my-set-12"}}
    assert parent_and_ordinal(pod) == ("my-set", 12)
    assert parent_and_ordinal({"metadata": {"name": "web"}}) == ("", -1)


ROLL = ("[{at: 10s, patch: statefulset/web, mergePatch: {spec: {template: {metadata: {labels: {app: web, "
        "v: '2'}}}}}}]")


@pytest.mark.parametrize("version, deletes", [
    # MaxUnavailableStatefulSet on: maxUnavailable 2 replaces web-3 and web-2 together, then web-1 and web-0
    ("1.37", [(10.0, "web-3"), (10.0, "web-2"), (13.0, "web-1"), (13.0, "web-0")]),
    ("1.35", [(10.0, "web-3"), (10.0, "web-2"), (13.0, "web-1"), (13.0, "web-0")]),
    # off in 1.36 (PR #137904): one pod at a time, each once the one before is Ready again
    ("1.36", [(10.0, "web-3"), (12.0, "web-2"), (14.0, "web-1"), (16.0, "web-0")]),
])
def test_rolling_update_max_unavailable(tmp_path, version, deletes):
    """OrderedReady, 4 replicas Ready from 3 s; the template changes at 10. nginx exits at SIGTERM (10.1) and a
    deleted pod is gone at the next relist (11), recreated with the new revision at once (11), Ready at the
    relist after (12). With maxUnavailable 2 both highest ordinals go at 10; web-2 is recreated at 11 and, being
    OrderedReady, web-3 only once web-2 is Ready (12), Ready at 13: then the next two."""
    text = _scenario(replicas=4, actions=ROLL, version=version, until="40s").replace(
        "        serviceName: web", "        serviceName: web\n"
                                   "        updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}")
    r = run_text(tmp_path, text)
    assert _deletes(r) == deletes
    assert any("maxUnavailable: dropped" in w for w in r.scenario.warnings) == (version == "1.36")

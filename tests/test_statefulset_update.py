"""StatefulSet template changes (pkg/controller/statefulset/stateful_set_control.go updateStatefulSet,
getStatefulSetRevisions, completeRollingUpdate; test/e2e/apps/statefulset.go "should perform canary updates and
phased rolling updates of template modifications", "should implement legacy replacement when the update strategy
is OnDelete").

A default container starts 0.1 s after its pod is created, the pod is Running and Ready at the next whole second;
a deleted pod's container exits 0.1 s after SIGTERM and the pod is removed at the next whole second, when the
controller recreates it under the same name.
"""

from __future__ import annotations

from tests.helpers import records, run_text


def _scenario(strategy: str, actions: str, until: str, replicas: int = 3, version: str = "1.34") -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: sts-update}}
spec:
  kubernetesVersion: "{version}"
  objects:
    - apiVersion: apps/v1
      kind: StatefulSet
      metadata: {{name: web}}
      spec:
        replicas: {replicas}
        serviceName: web
        updateStrategy: {strategy}
        selector: {{matchLabels: {{app: web}}}}
        template:
          metadata: {{labels: {{app: web}}}}
          spec:
            containers: [{{name: app, image: 'nginx:1.27'}}]
  actions:{actions}
  until: {until}
"""


NEW_IMAGE = "\n    - {at: 10s, patch: statefulset/web, mergePatch: {spec: {template: {spec: {containers: " \
            "[{name: app, image: 'nginx:1.28'}]}}}}}"


def _partition(t: int, p: int) -> str:
    return (f"\n    - {{at: {t}s, patch: statefulset/web, mergePatch: {{spec: {{updateStrategy: "
            f"{{rollingUpdate: {{partition: {p}}}}}}}}}}}")


CANARY = (NEW_IMAGE + _partition(20, 2) + "\n    - {at: 30s, delete: pod/web-0}\n    - {at: 30s, delete: pod/web-2}"
          + _partition(50, 1) + _partition(60, 0))


def _writes(r, verb: str) -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb=verb, by="statefulset-controller")
            if x["object"].startswith("Pod/")]


def _pods(r) -> dict[str, tuple[str, str]]:
    """pod -> (image, revision label)."""
    return {p["metadata"]["name"]: (p["spec"]["containers"][0]["image"],
                                    p["metadata"]["labels"]["controller-revision-hash"])
            for p in r.cluster.store.list("Pod", "default")}


def _revisions(r) -> tuple[str, str]:
    """(first revision, second revision) names, by revision number."""
    revs = sorted(r.cluster.store.list("ControllerRevision", "default"), key=lambda c: c["revision"])
    return tuple(c["metadata"]["name"] for c in revs)  # type: ignore[return-value]


def _status(r) -> dict:
    """The status fields of interest; a zero count is omitted from the stored status (omitempty)."""
    st = r.cluster.store.get("StatefulSet", "default", "web")["status"]
    return {k: st.get(k, 0) for k in ("replicas", "currentReplicas", "updatedReplicas", "currentRevision",
                                   "updateRevision")}


def test_a_partition_above_the_replicas_updates_nothing(tmp_path):
    """Partition 3 of 3: the new template makes a second revision (10) and no pod is replaced; the revisions
    differ in status."""
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {partition: 3}}", NEW_IMAGE, "19s"))
    old, new = _revisions(r)
    assert [x["t"] for x in records(r, "api", verb="create", by="statefulset-controller")
            if x["object"].startswith("ControllerRevision/")] == [0.0, 10.0]
    assert _writes(r, "delete") == []
    assert _pods(r) == {f"web-{i}": ("nginx:1.27", old) for i in range(3)}
    assert _status(r) == {"replicas": 3, "currentReplicas": 3, "updatedReplicas": 0, "currentRevision": old,
                          "updateRevision": new}
    rev = r.cluster.store.get("ControllerRevision", "default", new)
    assert rev["revision"] == 2
    assert rev["metadata"]["labels"] == {"app": "web", "controller.kubernetes.io/hash": new[len("web-"):]}
    assert rev["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_canary_update_replaces_only_ordinals_at_or_above_the_partition(tmp_path):
    """Partition 2 (20): web-2 only is deleted and recreated (21) from the update revision; currentRevision stays
    the old one, currentReplicas 2, updatedReplicas 1."""
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {partition: 3}}",
                                     NEW_IMAGE + _partition(20, 2), "29s"))
    old, new = _revisions(r)
    assert _writes(r, "delete") == [(20.0, "web-2")]
    assert _writes(r, "create")[3:] == [(21.0, "web-2")]
    assert _pods(r) == {"web-0": ("nginx:1.27", old), "web-1": ("nginx:1.27", old), "web-2": ("nginx:1.28", new)}
    assert _status(r) == {"replicas": 3, "currentReplicas": 2, "updatedReplicas": 1, "currentRevision": old,
                          "updateRevision": new}


def test_deleted_pods_are_restored_to_their_partition_side_revision(tmp_path):
    """The user deletes web-0 and web-2 (30): both leave at 31; web-0 (below the partition) comes back from the
    current revision at 31, web-2 from the update revision once web-0 is Ready (32)."""
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {partition: 3}}",
                                     CANARY.split(_partition(50, 1))[0], "45s"))
    old, new = _revisions(r)
    assert _writes(r, "create")[4:] == [(31.0, "web-0"), (32.0, "web-2")]
    assert _pods(r) == {"web-0": ("nginx:1.27", old), "web-1": ("nginx:1.27", old), "web-2": ("nginx:1.28", new)}
    assert _status(r)["currentRevision"] == old


def test_phased_rolling_update_then_the_update_revision_becomes_current(tmp_path):
    """Partition 1 (50) replaces web-1, partition 0 (60) web-0; once every pod is updated and ready (62)
    completeRollingUpdate makes the update revision current."""
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {partition: 3}}", CANARY, "80s"))
    old, new = _revisions(r)
    assert _writes(r, "delete") == [(20.0, "web-2"), (50.0, "web-1"), (60.0, "web-0")]
    assert _writes(r, "create") == [(0.0, "web-0"), (1.0, "web-1"), (2.0, "web-2"), (21.0, "web-2"),
                                    (31.0, "web-0"), (32.0, "web-2"), (51.0, "web-1"), (61.0, "web-0")]
    assert _pods(r) == {f"web-{i}": ("nginx:1.28", new) for i in range(3)}
    assert _status(r) == {"replicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": new,
                          "updateRevision": new}
    assert [(e["t"], e["message"]) for e in records(r, "event", reason="SuccessfulDelete",
                                                   object="StatefulSet/default/web")] == [
        (20.0, "delete Pod web-2 in StatefulSet web successful"),
        (50.0, "delete Pod web-1 in StatefulSet web successful"),
        (60.0, "delete Pod web-0 in StatefulSet web successful")]


def test_rolling_update_without_partition_goes_from_the_highest_ordinal(tmp_path):
    """One pod at a time in reverse ordinal order, each once the one above is Running and Ready again."""
    r = run_text(tmp_path, _scenario("{type: RollingUpdate}", NEW_IMAGE, "30s"))
    assert _writes(r, "delete") == [(10.0, "web-2"), (12.0, "web-1"), (14.0, "web-0")]
    assert _writes(r, "create")[3:] == [(11.0, "web-2"), (13.0, "web-1"), (15.0, "web-0")]
    old, new = _revisions(r)
    assert _status(r) == {"replicas": 3, "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": new,
                          "updateRevision": new}


def test_max_unavailable_replaces_two_at_a_time_where_its_gate_is_on(tmp_path):
    """1.35 (MaxUnavailableStatefulSet beta, on): maxUnavailable 2 deletes web-3 and web-2 at 10; OrderedReady
    recreates web-2 (11) then web-3 (12); at 13 all are healthy and web-1, web-0 go."""
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}", NEW_IMAGE, "30s",
                                     replicas=4, version="1.35"))
    assert _writes(r, "delete") == [(10.0, "web-3"), (10.0, "web-2"), (13.0, "web-1"), (13.0, "web-0")]
    assert _writes(r, "create")[4:] == [(11.0, "web-2"), (12.0, "web-3"), (14.0, "web-0"), (15.0, "web-1")]
    # 1.34 (gate off): one at a time
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}", NEW_IMAGE, "30s",
                                     replicas=4, version="1.34"))
    assert [t for t, _ in _writes(r, "delete")] == [10.0, 12.0, 14.0, 16.0]


def test_max_unavailable_stops_at_the_partition(tmp_path):
    r = run_text(tmp_path, _scenario("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 3, partition: 2}}",
                                     NEW_IMAGE, "30s", replicas=4, version="1.35"))
    assert _writes(r, "delete") == [(10.0, "web-3"), (10.0, "web-2")]


def test_on_delete_replaces_only_deleted_pods_with_the_new_template(tmp_path):
    """OnDelete: the new template changes no pod; the pods the user deletes (20) come back from the update
    revision; currentRevision stays the first one (completeRollingUpdate is for RollingUpdate only)."""
    deletes = "".join(f"\n    - {{at: 20s, delete: pod/web-{i}}}" for i in range(3))
    r = run_text(tmp_path, _scenario("{type: OnDelete}", NEW_IMAGE + deletes, "40s"))
    old, new = _revisions(r)
    assert _writes(r, "delete") == []
    assert _writes(r, "create")[3:] == [(21.0, "web-0"), (22.0, "web-1"), (23.0, "web-2")]
    assert _pods(r) == {f"web-{i}": ("nginx:1.28", new) for i in range(3)}
    assert _status(r) == {"replicas": 3, "currentReplicas": 0, "updatedReplicas": 3, "currentRevision": old,
                          "updateRevision": new}


def test_rollback_renumbers_the_old_revision(tmp_path):
    """Going back to the first template: no third revision, the first is renumbered 3 and is the update
    revision again."""
    back = "\n    - {at: 20s, patch: statefulset/web, mergePatch: {spec: {template: {spec: {containers: " \
           "[{name: app, image: 'nginx:1.27'}]}}}}}"
    r = run_text(tmp_path, _scenario("{type: RollingUpdate}", NEW_IMAGE + back, "40s"))
    revs = {c["metadata"]["name"]: c["revision"] for c in r.cluster.store.list("ControllerRevision", "default")}
    first = next(n for n, v in revs.items() if v == 3)
    assert sorted(revs.values()) == [2, 3]
    assert _status(r)["updateRevision"] == _status(r)["currentRevision"] == first
    assert _pods(r) == {f"web-{i}": ("nginx:1.27", first) for i in range(3)}


def test_start_ordinals_number_the_pods_and_the_partition_counts_from_them(tmp_path):
    """spec.ordinals.start 5 (StatefulSetStartOrdinal, beta from 1.27): web-5, web-6, web-7, one after the other;
    partition 2 keeps web-5 and web-6 (ordinals below start + partition) at the current revision."""
    text = _scenario("{type: RollingUpdate, rollingUpdate: {partition: 2}}", NEW_IMAGE, "30s").replace(
        "        serviceName: web", "        serviceName: web\n        ordinals: {start: 5}")
    r = run_text(tmp_path, text)
    old, new = _revisions(r)
    assert _writes(r, "create") == [(0.0, "web-5"), (1.0, "web-6"), (2.0, "web-7"), (11.0, "web-7")]
    assert _writes(r, "delete") == [(10.0, "web-7")]
    assert _pods(r) == {"web-5": ("nginx:1.27", old), "web-6": ("nginx:1.27", old), "web-7": ("nginx:1.28", new)}
    pod = r.cluster.store.get("Pod", "default", "web-7")
    assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "7"


def test_start_ordinals_are_dropped_while_the_gate_is_off(tmp_path):
    """1.26: StatefulSetStartOrdinal is alpha and off; the pods are numbered from 0 and a warning says the field
    has no effect."""
    text = _scenario("{type: RollingUpdate}", " []", "5s", version="1.26").replace(
        "        serviceName: web", "        serviceName: web\n        ordinals: {start: 5}")
    r = run_text(tmp_path, text)
    assert [n for _, n in _writes(r, "create")] == ["web-0", "web-1", "web-2"]
    assert any("spec.ordinals" in w and "StatefulSetStartOrdinal" in w for w in r.scenario.warnings)


def test_max_unavailable_waits_for_min_ready_seconds_with_parallel_pods(tmp_path):
    """Parallel pods, minReadySeconds 5, maxUnavailable 1 (kubernetes#112307): on 1.35 a replaced pod counts as
    unavailable until it has been Ready 5 s, so web-3 (Ready at 12) lets web-2 go at 17; on 1.34 (gate off)
    the one-at-a-time path waits only for Running and Ready (12)."""
    text = _scenario("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}", NEW_IMAGE, "40s", replicas=4,
                     version="1.35").replace("        serviceName: web", "        serviceName: web\n"
                                             "        minReadySeconds: 5\n        podManagementPolicy: Parallel")
    r = run_text(tmp_path, text)
    assert _writes(r, "delete") == [(10.0, "web-3"), (17.0, "web-2"), (24.0, "web-1"), (31.0, "web-0")]
    r = run_text(tmp_path, text.replace('"1.35"', '"1.34"'))
    assert _writes(r, "delete") == [(10.0, "web-3"), (12.0, "web-2"), (14.0, "web-1"), (16.0, "web-0")]

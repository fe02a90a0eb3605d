"""DaemonSet template changes (pkg/controller/daemon/update.go; test/e2e/apps/daemon_set.go "should update pod
when spec was updated and update strategy is RollingUpdate", "should rollback without unnecessary restarts",
"should surge pods onto nodes when spec was updated and update strategy is RollingUpdate").

Three nodes n0-n2; a default container starts 0.1 s after its pod is created, the pod is Ready at the kubelet's
next relist (whole seconds) and a deleted pod's container exits 0.1 s after SIGTERM (terminal phase), the kubelet
removing the pod at its next relist. The rolling update walks the nodes by name (upstream: Go map order).
"""

from __future__ import annotations

import pytest

from podlife.controlplane.controllers.deployment import compute_hash
from tests.helpers import records, run_text


def _scenario(strategy: str = "", actions: str = "", version: str = "1.34", extra: str = "",
              until: str = "60s") -> str:
    return f"""
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {{name: ds-update}}
spec:
  kubernetesVersion: "{version}"
  cluster:
    nodes:
      - {{namePrefix: n, count: 3}}
  objects:
    - apiVersion: apps/v1
      kind: DaemonSet
      metadata: {{name: agent}}
      spec:{strategy}{extra}
        selector: {{matchLabels: {{app: agent}}}}
        template:
          metadata: {{labels: {{app: agent}}}}
          spec:
            containers: [{{name: app, image: agent:1}}]
  actions:{actions}
  until: {until}
"""


IMAGE_2 = "\n    - {at: 10s, patch: daemonset/agent, mergePatch: {spec: {template: {spec: {containers: " \
          "[{name: app, image: 'agent:2'}]}}}}}"


def _pod_writes(r, verb: str) -> list[tuple[float, str]]:
    return [(x["t"], x["object"].split("/")[-1]) for x in records(r, "api", verb=verb, by="daemonset-controller")
            if x["object"].startswith("Pod/")]


def _node_of(r, pod: str) -> str:
    return next(x["node"] for x in records(r, "api", verb="bind") if x["object"].endswith("/" + pod))


def _events(r, reason: str) -> list[tuple[float, str]]:
    return [(e["t"], e["message"]) for e in records(r, "event", reason=reason, object="DaemonSet/default/agent")]


def test_rolling_update_replaces_one_node_at_a_time(tmp_path):
    """maxUnavailable 1 (the default): the old pod of n0 is deleted at the template change (10); it is terminal
    at 10.1, when (1.28+, PR #118716) its replacement is created; Ready at 11, so n1's old pod goes at 11, and so
    on. Each template is a ControllerRevision <ds>-<hash> with revision 1, 2."""
    r = run_text(tmp_path, _scenario(actions=IMAGE_2))
    creates, deletes = _pod_writes(r, "create"), _pod_writes(r, "delete")
    assert [t for t, _ in deletes] == [10.0, 11.0, 12.0]
    assert [t for t, _ in creates] == [0.0, 0.0, 0.0, 10.1, 11.1, 12.1]
    first = {_node_of(r, p): p for _, p in creates[:3]}
    second = {_node_of(r, p): p for _, p in creates[3:]}
    assert [p for _, p in deletes] == [first["n0"], first["n1"], first["n2"]]
    assert [p for _, p in creates[3:]] == [second["n0"], second["n1"], second["n2"]]
    assert _events(r, "SuccessfulDelete") == [(t, f"Deleted pod: {p}") for t, p in deletes]
    assert _events(r, "SuccessfulCreate") == [(t, f"Created pod: {p}") for t, p in creates]

    store = r.cluster.store
    ds = store.get("DaemonSet", "default", "agent")
    new_hash = compute_hash(ds["spec"]["template"], None)
    revisions = sorted(store.list("ControllerRevision", "default"), key=lambda c: c["revision"])
    assert [c["revision"] for c in revisions] == [1, 2]
    assert revisions[1]["metadata"]["name"] == f"agent-{new_hash}"
    assert revisions[1]["metadata"]["labels"] == {"app": "agent", "controller-revision-hash": new_hash}
    assert revisions[1]["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    assert revisions[1]["data"]["spec"]["template"]["$patch"] == "replace"
    assert revisions[1]["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "agent:2"
    assert [x["t"] for x in records(r, "api", verb="create", by="daemonset-controller")
            if x["object"].startswith("ControllerRevision/")] == [0.0, 10.0]
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "2"}
    for pod in store.list("Pod", "default"):
        assert pod["metadata"]["labels"] == {"app": "agent", "pod-template-generation": "2",
                                             "controller-revision-hash": new_hash}
        assert pod["spec"]["containers"][0]["image"] == "agent:2"
    assert ds["status"] == {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                            "numberReady": 3, "observedGeneration": 2, "updatedNumberScheduled": 3,
                            "numberAvailable": 3}


def test_before_1_28_the_replacement_waits_for_the_old_pod_to_leave(tmp_path):
    """Before PR #118716 a terminal pod being deleted still occupies its node: the new pod is created when the
    kubelet removes the old one at its relist (11), Ready at 12, when the next old pod goes."""
    r = run_text(tmp_path, _scenario(actions=IMAGE_2, version="1.27"))
    assert [t for t, _ in _pod_writes(r, "delete")] == [10.0, 12.0, 14.0]
    assert [t for t, _ in _pod_writes(r, "create")] == [0.0, 0.0, 0.0, 11.0, 13.0, 15.0]
    removed = [x["t"] for x in records(r, "api", verb="delete", by="kubelet")]
    assert removed == [11.0, 13.0, 15.0]


@pytest.mark.parametrize("value", ["2", "'34%'"])
def test_max_unavailable_two_deletes_two_at_once(tmp_path, value):
    """maxUnavailable 2, or a percentage of the 3 desired nodes rounded up (util.UnavailableCount: 34% -> 2)."""
    strategy = "\n        updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: VALUE}}".replace(
        "VALUE", value)
    r = run_text(tmp_path, _scenario(strategy, IMAGE_2))
    assert [t for t, _ in _pod_writes(r, "delete")] == [10.0, 10.0, 11.0]
    assert [t for t, _ in _pod_writes(r, "create")][3:] == [10.1, 10.1, 11.1]


def test_max_surge_creates_the_new_pod_first(tmp_path):
    """maxSurge 1, maxUnavailable 0, minReadySeconds 5: n0's new pod is created at 10 beside the old one, Ready
    at 11, available at 16, when its old pod is deleted and n1's new pod created; every node keeps an available
    pod throughout."""
    strategy = ("\n        minReadySeconds: 5"
                "\n        updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}")
    r = run_text(tmp_path, _scenario(strategy, IMAGE_2))
    creates, deletes = _pod_writes(r, "create"), _pod_writes(r, "delete")
    assert [t for t, _ in creates] == [0.0, 0.0, 0.0, 10.0, 16.0, 22.0]
    assert [t for t, _ in deletes] == [16.0, 22.0, 28.0]
    assert [_node_of(r, p) for _, p in creates[3:]] == ["n0", "n1", "n2"]
    assert [_node_of(r, p) for _, p in deletes] == ["n0", "n1", "n2"]
    # each old pod goes exactly when its node's new pod has been Ready for minReadySeconds
    for (_, new), (t_del, _) in zip(creates[3:], deletes):
        ready = [x["t"] for x in records(r, "condition", object=f"Pod/default/{new}", conditionType="Ready",
                                         status="True")]
        assert ready and t_del == ready[0] + 5
    ds = r.cluster.store.get("DaemonSet", "default", "agent")
    assert ds["status"]["updatedNumberScheduled"] == 3 and ds["status"]["numberAvailable"] == 3


def test_rollback_without_unnecessary_restarts(tmp_path):
    """A template whose container fails is rolled out to n0 only (its new pod never becomes available, so
    maxUnavailable 1 is used up); going back to the first template makes revision 1 current again (renumbered
    3): only n0's failing pod is replaced, the other two pods are never restarted."""
    actions = ("\n    - {at: 10s, patch: daemonset/agent, mergePatch: {spec: {template: {spec: {containers: "
               "[{name: app, image: 'agent:2', command: ['false']}]}}}}}"
               "\n    - {at: 30s, patch: daemonset/agent, mergePatch: {spec: {template: {spec: {containers: "
               "[{name: app, image: 'agent:1'}]}}}}}")
    r = run_text(tmp_path, _scenario(actions=actions))
    creates, deletes = _pod_writes(r, "create"), _pod_writes(r, "delete")
    assert [t for t, _ in deletes] == [10.0, 30.0]
    assert [t for t, _ in creates] == [0.0, 0.0, 0.0, 10.1, 30.0]
    assert _node_of(r, creates[3][1]) == "n0" and deletes[1][1] == creates[3][1]
    store = r.cluster.store
    originals = {p for _, p in creates[:3]} - {deletes[0][1]}
    assert originals <= {p["metadata"]["name"] for p in store.list("Pod", "default")}
    revisions = {c["metadata"]["name"]: c["revision"] for c in store.list("ControllerRevision", "default")}
    first_hash = store.get("Pod", "default", sorted(originals)[0])["metadata"]["labels"]["controller-revision-hash"]
    assert revisions[f"agent-{first_hash}"] == 3
    assert sorted(revisions.values()) == [2, 3]
    assert [x["t"] for x in records(r, "api", verb="update", by="daemonset-controller")
            if x["object"] == f"ControllerRevision/default/agent-{first_hash}"] == [30.0]
    ds = store.get("DaemonSet", "default", "agent")
    assert ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "3"
    assert ds["status"]["updatedNumberScheduled"] == 3


def test_on_delete_replaces_only_the_pods_the_user_deletes(tmp_path):
    strategy = "\n        updateStrategy: {type: OnDelete}"
    # the pod names are seeded: a short run tells n1's, which the user then deletes at 20
    r = run_text(tmp_path, _scenario(strategy, IMAGE_2, until="5s"))
    n1 = next(p for _, p in _pod_writes(r, "create") if _node_of(r, p) == "n1")
    r = run_text(tmp_path, _scenario(strategy, IMAGE_2 + f"\n    - {{at: 20s, delete: pod/{n1}}}", until="40s"))
    assert _pod_writes(r, "delete") == []
    creates = _pod_writes(r, "create")
    assert [t for t, _ in creates] == [0.0, 0.0, 0.0, 20.1]
    store = r.cluster.store
    new = store.get("Pod", "default", creates[3][1])
    assert new["spec"]["containers"][0]["image"] == "agent:2"
    assert new["metadata"]["labels"]["pod-template-generation"] == "2"
    assert sorted(p["spec"]["containers"][0]["image"] for p in store.list("Pod", "default")) == \
        ["agent:1", "agent:1", "agent:2"]
    st = store.get("DaemonSet", "default", "agent")["status"]
    assert (st["updatedNumberScheduled"], st["numberAvailable"], st["observedGeneration"]) == (1, 3, 2)


def test_revision_history_limit_deletes_the_oldest_unused_revisions(tmp_path):
    """cleanupHistory: with revisionHistoryLimit 1, the third template (20) leaves two old revisions, one too
    many: revision 1, which no pod carries any more (its rollout ended at 12.1), is deleted in that sync."""
    actions = "".join(f"\n    - {{at: {t}s, patch: daemonset/agent, mergePatch: {{spec: {{template: {{spec: "
                      f"{{containers: [{{name: app, image: 'agent:{i}'}}]}}}}}}}}}}"
                      for t, i in ((10, 2), (20, 3)))
    r = run_text(tmp_path, _scenario(actions=actions, extra="\n        revisionHistoryLimit: 1"))
    revisions = sorted(r.cluster.store.list("ControllerRevision", "default"), key=lambda c: c["revision"])
    assert [c["revision"] for c in revisions] == [2, 3]
    deleted = [x["t"] for x in records(r, "api", verb="delete", by="daemonset-controller")
               if x["object"].startswith("ControllerRevision/")]
    assert deleted == [20.0]


def test_max_surge_is_dropped_while_its_gate_is_off(tmp_path):
    """1.21: DaemonSetUpdateSurge is alpha and off; the API server drops maxSurge (a warning says so) and the
    update runs on maxUnavailable 1. From 1.22 (beta) the same manifest surges."""
    strategy = "\n        updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}"
    r = run_text(tmp_path, _scenario(strategy, IMAGE_2, version="1.21"))
    assert any("spec.updateStrategy.rollingUpdate.maxSurge" in w and "DaemonSetUpdateSurge" in w
               for w in r.scenario.warnings)
    ds = r.cluster.store.get("DaemonSet", "default", "agent")
    assert "maxSurge" not in ds["spec"]["updateStrategy"]["rollingUpdate"]
    # one node at a time; the 1.21 kubelet removes a deleted pod 10 s after the deletion, when its successor is
    # created, Ready at the next relist when the next old pod goes
    assert [t for t, _ in _pod_writes(r, "delete")] == [10.0, 21.0, 31.0]
    assert [t for t, _ in _pod_writes(r, "create")][3:] == [20.0, 30.0, 40.0]
    assert [x["t"] for x in records(r, "api", verb="delete", by="kubelet")] == [20.0, 30.0, 40.0]


def test_deleting_the_daemonset_collects_its_revisions(tmp_path):
    """The revisions carry the DaemonSet's controller reference: the garbage collector deletes them with it."""
    r = run_text(tmp_path, _scenario(actions=IMAGE_2 + "\n    - {at: 20s, delete: daemonset/agent}", until="30s"))
    gone = [(x["t"], x["object"].split("/")[0])
            for x in records(r, "api", verb="delete", by="generic-garbage-collector")
            if x["object"].startswith("ControllerRevision/")]
    assert gone == [(20.0, "ControllerRevision"), (20.0, "ControllerRevision")]
    assert r.cluster.store.list("ControllerRevision", "default") == []


def test_controller_revisions_print_as_kubectl_shows_them(tmp_path):
    """printControllerRevision: NAME, CONTROLLER (kind.group/name), REVISION, AGE."""
    from datetime import timedelta

    from podlife.apiserver.tables import table

    r = run_text(tmp_path, _scenario(actions=IMAGE_2, until="20s"))
    revs = sorted(r.cluster.store.list("ControllerRevision", "default"), key=lambda c: c["revision"])
    t = table("ControllerRevision", revs, r.cluster.trace.start_time + timedelta(seconds=20), include="None")
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Controller", "Revision", "Age"]
    assert [row["cells"] for row in t["rows"]] == [[revs[0]["metadata"]["name"], "daemonset.apps/agent", 1, "20s"],
                                                   [revs[1]["metadata"]["name"], "daemonset.apps/agent", 2, "10s"]]


def test_a_deleted_revision_is_made_again(tmp_path):
    """deleteHistory syncs the DaemonSet, whose constructHistory snapshots the current template again (with
    number 1 again: there is no other revision)."""
    r = run_text(tmp_path, _scenario(until="20s"))
    name = r.cluster.store.list("ControllerRevision", "default")[0]["metadata"]["name"]
    r = run_text(tmp_path, _scenario(actions=f"\n    - {{at: 5s, delete: controllerrevision/{name}}}", until="20s"))
    assert [(x["t"], x["verb"], x["by"]) for x in records(r, "api", object=f"ControllerRevision/default/{name}")] == [
        (0.0, "create", "daemonset-controller"), (5.0, "delete", "kubectl"), (5.0, "create", "daemonset-controller")]
    assert r.cluster.store.get("ControllerRevision", "default", name)["revision"] == 1
    assert [x["t"] for x in records(r, "api", verb="delete", by="daemonset-controller")] == []


SURGE_E2E_CONTAINER = ('{name: app, image: "agent:1", env: [{name: VERSION, value: "VER"}], '
                       'lifecycle: {preStop: {exec: {command: ["/bin/sh", "-c", "sleep 15"]}}}, '
                       'readinessProbe: {exec: {command: ["/bin/sh", "-ec", "touch /var/tmp/ready"]}, '
                       'initialDelaySeconds: 7, periodSeconds: 3, successThreshold: 1, failureThreshold: 1}}')


def test_surge_rollout_keeps_the_e2e_invariants(tmp_path):
    """daemon_set.go "should surge pods onto nodes": maxSurge 20% (of 3 nodes: 1), maxUnavailable 0,
    minReadySeconds 10, a 15 s preStop and a readiness probe with initialDelaySeconds 7. The VERSION change at 30
    surges onto n0; the new pod is Ready at 39 (probe after 7 s, reported at the relist) and available at 49, when
    n0's old pod is deleted and n1's new pod created; and so on every 19 s. The old pods end 15.1 s after their
    deletion (preStop, then SIGTERM). Invariants: an old pod never runs beside a new one for more than 60 s,
    a node never has two running pods of one version nor more than one deleted pod."""
    text = _scenario("\n        minReadySeconds: 10"
                     "\n        updateStrategy: {type: RollingUpdate, "
                     "rollingUpdate: {maxSurge: '20%', maxUnavailable: 0}}",
                     "\n    - {at: 30s, patch: daemonset/agent, mergePatch: {spec: {template: {spec: {containers: ["
                     + SURGE_E2E_CONTAINER.replace("VER", "2") + "]}}}}}", until="150s")
    text = text.replace("containers: [{name: app, image: agent:1}]",
                        "containers: [" + SURGE_E2E_CONTAINER.replace("VER", "1") + "]")
    r = run_text(tmp_path, text)
    creates, deletes = _pod_writes(r, "create"), _pod_writes(r, "delete")
    assert [t for t, _ in creates] == [0.0, 0.0, 0.0, 30.0, 49.0, 68.0]
    assert [t for t, _ in deletes] == [49.0, 68.0, 87.0]
    nodes = {p: _node_of(r, p) for _, p in creates}
    assert [nodes[p] for _, p in creates[3:]] == ["n0", "n1", "n2"] == [nodes[p] for _, p in deletes]
    ended = {x["object"].split("/")[-1]: x["t"] for x in records(r, "phase", to="Succeeded")}
    assert [ended[p] for _, p in deletes] == [64.1, 83.1, 102.1]
    for (t_new, new), (t_del, old) in zip(creates[3:], deletes):
        assert nodes[new] == nodes[old] and t_del - t_new <= 60      # overlap bound (maxSurgeOverlap)
    # maxSurge 1: the next node's surge starts only when the previous node's old pod is deleted
    assert [t for t, _ in creates[4:]] == [t for t, _ in deletes[:-1]]
    ds = r.cluster.store.get("DaemonSet", "default", "agent")
    assert ds["status"]["updatedNumberScheduled"] == 3
    assert sorted(c["revision"] for c in r.cluster.store.list("ControllerRevision", "default")) == [1, 2]


def test_a_strategic_patch_of_one_container_field_rolls_the_pods(tmp_path):
    """kubectl patch --type=strategic (containers merge by name): setting only the image is a valid template
    change; the scenario loader's check applies it as the run does."""
    action = ("\n    - {at: 10s, patch: daemonset/agent, strategicMergePatch: {spec: {template: {spec: {containers: "
              "[{name: app, image: 'agent:2'}]}}}}}")
    r = run_text(tmp_path, _scenario(actions=action.replace("image: 'agent:2'", "env: [{name: V, value: '2'}]")))
    assert [t for t, _ in _pod_writes(r, "delete")] == [10.0, 11.0, 12.0]
    assert {p["spec"]["containers"][0]["image"] for p in r.cluster.store.list("Pod", "default")} == {"agent:1"}
    assert {p["spec"]["containers"][0]["env"][0]["value"] for p in r.cluster.store.list("Pod", "default")} == {"2"}


def test_a_duplicate_current_revision_is_deduplicated(tmp_path):
    """dedupCurHistories: an orphan revision holding the same template (here created by the user at 5 s, with
    revision 5 and the selector's labels) is adopted and labelled with its name; of the two current revisions
    the higher one is kept, the pods are relabelled with its hash, and the other is deleted. No pod restarts."""
    import json

    r = run_text(tmp_path, _scenario(until="1s"))
    template = r.cluster.store.get("DaemonSet", "default", "agent")["spec"]["template"]
    data = {"spec": {"template": {**template, "$patch": "replace"}}}
    manifest = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
                "metadata": {"name": "agent-manual", "labels": {"app": "agent"}}, "data": data, "revision": 5}
    r = run_text(tmp_path, _scenario(actions=f"\n    - {{at: 5s, create: {json.dumps(manifest)}}}", until="20s"))
    store = r.cluster.store
    revisions = store.list("ControllerRevision", "default")
    assert [(c["metadata"]["name"], c["revision"]) for c in revisions] == [("agent-manual", 5)]
    assert revisions[0]["metadata"]["labels"] == {"app": "agent", "controller-revision-hash": "agent-manual"}
    assert revisions[0]["metadata"]["ownerReferences"][0]["name"] == "agent"
    pods = store.list("Pod", "default")
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {"agent-manual"}
    relabels = [x["t"] for x in records(r, "api", verb="patch", by="daemonset-controller")
                if x["object"].startswith("Pod/")]
    assert relabels == [5.0, 5.0, 5.0]
    assert _pod_writes(r, "delete") == []
    assert [x["t"] for x in records(r, "api", verb="delete", by="daemonset-controller")
            if x["object"].startswith("ControllerRevision/")] == [5.0]
    assert store.get("DaemonSet", "default", "agent")["status"]["updatedNumberScheduled"] == 3


def test_a_revision_a_client_creates_is_left_until_the_daemonset_syncs(tmp_path, monkeypatch):
    """test/e2e/apps/controller_revision.go: a client creates a second revision of the DaemonSet (its own name,
    the current template's data, revision 2). addHistory only observes a revision with a controllerRef, so both
    stay; a label update to it (updateHistory) syncs the DaemonSet, whose dedupCurHistories keeps the higher
    revision of the two that match its template and deletes revision 1."""
    import podlife.scenario.run as runmod
    from podlife.api.meta import clone

    build = runmod.build
    by = "e2e.test"

    def with_client(sc):
        cluster = build(sc)
        store = cluster.store

        def create() -> None:
            (first,) = store.list("ControllerRevision", "default")
            copy = {k: first[k] for k in ("apiVersion", "kind", "data")}
            meta = first["metadata"]
            copy["metadata"] = {"name": "agent-client", "namespace": "default", "labels": dict(meta["labels"]),
                                "ownerReferences": meta["ownerReferences"]}
            copy["revision"] = 2
            store.create(copy, by=by)

        def relabel() -> None:
            rev = clone(store.get("ControllerRevision", "default", "agent-client"))
            rev["metadata"]["labels"]["agent-client"] = "updated"
            store.update(rev, by=by)

        cluster.kernel.call_at(10.0, create)
        cluster.kernel.call_at(20.0, relabel)
        return cluster

    monkeypatch.setattr(runmod, "build", with_client)
    r = run_text(tmp_path, _scenario(until="30s"))
    deleted = [(x["t"], x["object"]) for x in records(r, "api", verb="delete", by="daemonset-controller")]
    (first_name,) = [n for t, n in deleted]
    assert deleted == [(20.0, first_name)] and first_name.startswith("ControllerRevision/default/agent-")
    assert [(c["metadata"]["name"], c["revision"]) for c in r.cluster.store.list("ControllerRevision", "default")] \
        == [("agent-client", 2)]


def test_revision_data_is_the_bytes_of_gos_getpatch(tmp_path):
    """daemon.Match compares a revision's data byte for byte with the client's getPatch: the template marshalled
    by encoding/json (creationTimestamp null, resources {}), read into a map and marshalled again (keys sorted).
    test/e2e/apps/daemon_set.go curHistory needs exactly one revision to match. Served JSON escapes & as Go's
    encoder does."""
    import orjson

    from podlife.apiserver.cache import _go_escaped

    r = run_text(tmp_path, _scenario(until="5s").replace("image: agent:1}", "image: agent:1, "
                                                         "command: [sh, -c, 'a && b']}"))
    (rev,) = r.cluster.store.list("ControllerRevision", "default")
    assert _go_escaped(orjson.dumps(rev["data"])) == (
        b'{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"agent"}},'
        b'"spec":{"containers":[{"command":["sh","-c","a \\u0026\\u0026 b"],"image":"agent:1",'
        b'"imagePullPolicy":"IfNotPresent","name":"app","resources":{},'
        b'"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],'
        b'"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler",'
        b'"securityContext":{},"terminationGracePeriodSeconds":30}}}}')

"""Issue 25's small API items through the store and ``podlife run``: immutable ConfigMaps/Secrets, metadata kept
by status writes, RBAC roleRef defaulting, CronJob schedules with ``?``."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from podlife.api.defaults import apply_defaults
from podlife.api.errors import ApiError
from podlife.api.store import Store, ensure_namespaces
from podlife.cluster.contracts import StoreOptions, no_admission
from podlife.versions import NEWEST, profile as version_profile
from podlife.controlplane.controllers.cronjob import parse_schedule
from podlife.engine import Kernel
from podlife.scenario.errors import ScenarioError
from podlife.trace.recorder import Trace
from tests.helpers import records, run_text

IMMUTABLE = "field is immutable when `immutable` is set"


def make_store() -> Store:
    kernel = Kernel(seed=0)
    store = Store(kernel, Trace(kernel, datetime(2025, 1, 1, tzinfo=timezone.utc)),
                  StoreOptions(profile=version_profile(NEWEST), admission=no_admission))
    ensure_namespaces(store, ["default"])
    return store


def refused(store: Store, obj: dict) -> ApiError:
    with pytest.raises(ApiError) as ei:
        store.update(obj, by="kubectl")
    return ei.value


def test_immutable_configmap_update_is_refused_with_upstreams_causes():
    store = make_store()
    cm = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"},
                       "data": {"a": "1"}, "immutable": True}, by="kubectl")
    e = refused(store, {**cm, "data": {"a": "2"}, "binaryData": {"b": "AQ=="}, "immutable": False})
    assert e.code == 422
    assert [str(c) for c in e.causes] == [f"immutable: Forbidden: {IMMUTABLE}", f"data: Forbidden: {IMMUTABLE}",
                                          f"binaryData: Forbidden: {IMMUTABLE}"]
    assert store.get("ConfigMap", "default", "c")["data"] == {"a": "1"}
    # metadata may still change; a mutable ConfigMap may become immutable
    store.update({**cm, "metadata": {**cm["metadata"], "labels": {"x": "y"}}}, by="kubectl")
    m = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", "namespace": "default"},
                      "data": {"a": "1"}}, by="kubectl")
    assert store.update({**m, "data": {"a": "2"}, "immutable": True}, by="kubectl")["data"] == {"a": "2"}


def test_immutable_secret_compares_data_with_string_data_merged_and_type_never_changes():
    store = make_store()
    s = store.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
                      "data": {"k": "djE="}, "immutable": True}, by="kubectl")
    e = refused(store, {**s, "stringData": {"k": "v2"}})
    assert e.args[0] == f'Secret "s" is invalid: data: Forbidden: {IMMUTABLE}'
    store.update({**s, "data": {}, "stringData": {"k": "v1"}}, by="kubectl")   # the same bytes
    s = store.get("Secret", "default", "s")
    e = refused(store, {**s, "type": "kubernetes.io/tls", "immutable": None})
    assert [(c.path, c.type) for c in e.causes][:2] == [("type", "Invalid value"),
                                                        ("immutable", "Forbidden")]
    assert str(e.causes[0]) == 'type: Invalid value: "kubernetes.io/tls": field is immutable'


def test_status_write_keeps_labels_and_annotations_as_each_status_strategy_does():
    store = make_store()
    pod = store.create({"apiVersion": "v1", "kind": "Pod",
                        "metadata": {"name": "p", "namespace": "default", "labels": {"a": "1"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, by="kubectl")
    md = {**pod["metadata"], "labels": {"a": "2"}, "annotations": {"n": "1"},
          "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "x", "uid": "u"}]}
    got = store.update({**pod, "metadata": md, "spec": {}}, by="kubectl", subresource="status")
    # podStatusStrategy.PrepareForUpdate: spec and ownerReferences stay the stored ones
    assert (got["metadata"]["labels"], got["metadata"]["annotations"]) == ({"a": "2"}, {"n": "1"})
    assert "ownerReferences" not in got["metadata"] and got["spec"] == pod["spec"]
    tmpl = {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    d = store.create({"apiVersion": "apps/v1", "kind": "Deployment",
                      "metadata": {"name": "d", "namespace": "default", "labels": {"a": "1"}},
                      "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}}, "template": tmpl}},
                     by="kubectl")
    got = store.update({**d, "metadata": {**d["metadata"], "labels": {"a": "2"}, "annotations": {"n": "1"}}},
                       by="kubectl", subresource="status")
    # deploymentStatusStrategy.PrepareForUpdate also resets the labels
    assert (got["metadata"]["labels"], got["metadata"]["annotations"]) == ({"a": "1"}, {"n": "1"})
    # jobStatusStrategy resets only spec; a status write that drops the annotations drops them (nil as written)
    job = store.create({"apiVersion": "batch/v1", "kind": "Job",
                        "metadata": {"name": "j", "namespace": "default", "annotations": {"n": "1"}},
                        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                       "containers": tmpl["spec"]["containers"]}}}}, by="kubectl")
    md = {k: v for k, v in job["metadata"].items() if k != "annotations"}
    got = store.update({**job, "metadata": {**md, "labels": {"x": "y"}}}, by="kubectl",
                       subresource="status")
    assert got["metadata"]["labels"] == {"x": "y"} and "annotations" not in got["metadata"]


def test_rbac_bindings_default_an_empty_role_ref_api_group():
    rb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "r"},
          "roleRef": {"apiGroup": "", "kind": "Role", "name": "x"},
          "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "User", "name": "u"},
                       {"kind": "Group", "name": "g", "apiGroup": "rbac.authorization.k8s.io"}]}
    apply_defaults(rb)
    assert rb["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert [s.get("apiGroup") for s in rb["subjects"]] == [None, "rbac.authorization.k8s.io",
                                                           "rbac.authorization.k8s.io"]


@pytest.mark.parametrize("schedule,parsed", [
    ("0 0 ? * *", "0 0 * * *"), ("*/1 * * * ?", "*/1 * * * *"), ("?/15 ? ? ? ?", "*/15 * * * *"),
    ("0 0 1 * *", "0 0 1 * *"),
])
def test_question_mark_is_a_star_as_in_robfig_cron(schedule, parsed):
    assert parse_schedule(schedule) == parsed


def test_cronjob_with_question_mark_runs_in_podlife_run(tmp_path):
    r = run_text(tmp_path, """
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: cron}
        spec:
          kubernetesVersion: "1.32"
          startTime: "2025-01-01T00:00:30Z"
          until: 5m
          objects:
          - apiVersion: batch/v1
            kind: CronJob
            metadata: {name: q}
            spec:
              schedule: "*/2 * ? * ?"
              jobTemplate:
                spec:
                  template:
                    spec:
                      restartPolicy: Never
                      containers: [{name: c, image: busybox}]
        """)
    # every even minute from 00:00:30: 00:02 and 00:04, + nextScheduleDelta
    created = [(x["t"], x["object"]) for x in records(r, "api", verb="create", by="cronjob-controller")]
    assert created == [(90.1, "Job/default/q-28928162"), (210.1, "Job/default/q-28928164")]


def test_podlife_run_refuses_a_patch_to_an_immutable_configmap_when_loading(tmp_path):
    # the loader dry-runs each patch against the object as created: the update is refused whenever it comes
    with pytest.raises(ScenarioError) as ei:
        run_text(tmp_path, """
            apiVersion: podlife/v1alpha1
            kind: Scenario
            metadata: {name: frozen}
            spec:
              kubernetesVersion: "1.32"
              until: 20s
              objects:
              - {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}, data: {a: "1"}, immutable: true}
              actions:
              - at: 10s
                patch: configmap/cfg
                mergePatch: {data: {a: "2"}}
            """)
    assert str(ei.value).endswith(f'scenario.yaml:13: spec.actions[0].mergePatch: ConfigMap "cfg" is invalid: '
                                  f'data: Forbidden: {IMMUTABLE} (the API server refuses this update whenever '
                                  f'it comes)')

"""Small API-fidelity items of issue 25 against a live ``podlife up``, with kubectl and raw requests: immutable
ConfigMaps/Secrets, metadata kept by status writes, CronJob schedules with ``?``, RBAC bindings whose roleRef
names no apiGroup."""

from __future__ import annotations

import json

import pytest

from tests.live.conftest import DAEMONSET_AND_AND, Live, write

NS = "/api/v1/namespaces/default"
IMMUTABLE = "field is immutable when `immutable` is set"


def _causes(body: dict) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in body["details"]["causes"]]


def test_immutable_configmap_refuses_data_and_flag_changes(live: Live, tmp_path) -> None:
    # pkg/apis/core/validation/validation.go ValidateConfigMapUpdate
    live.kubectl("apply", "-f", write(tmp_path, "cm.yaml", """
apiVersion: v1
kind: ConfigMap
metadata: {name: frozen-cm}
data: {a: "1"}
binaryData: {b: "AQ=="}
immutable: true
"""))
    p = live.kubectl("patch", "configmap", "frozen-cm", "-p", '{"data":{"a":"2"}}', check=False)
    assert p.returncode == 1
    assert p.stderr.strip() == ('The ConfigMap "frozen-cm" is invalid: data: Forbidden: ' + IMMUTABLE)
    code, body = live.json("PATCH", f"{NS}/configmaps/frozen-cm",
                           {"immutable": False, "data": {"a": "1", "c": "3"}, "binaryData": None},
                           "application/merge-patch+json")
    assert code == 422
    assert _causes(body) == [("immutable", "FieldValueForbidden", "Forbidden: " + IMMUTABLE),
                             ("data", "FieldValueForbidden", "Forbidden: " + IMMUTABLE),
                             ("binaryData", "FieldValueForbidden", "Forbidden: " + IMMUTABLE)]
    # labels may still change, and the data did not
    live.kubectl("label", "configmap", "frozen-cm", "x=y")
    got = json.loads(live.kubectl("get", "configmap", "frozen-cm", "-o", "json").stdout)
    assert (got["data"], got["binaryData"], got["metadata"]["labels"]) == ({"a": "1"}, {"b": "AQ=="}, {"x": "y"})


def test_immutable_secret_refuses_data_stringdata_and_flag_changes(live: Live, tmp_path) -> None:
    # ValidateSecretUpdate: stringData is data by the time validation runs; the type never changes
    live.kubectl("apply", "-f", write(tmp_path, "s.yaml", """
apiVersion: v1
kind: Secret
metadata: {name: frozen-secret}
data: {k: djE=}
immutable: true
"""))
    p = live.kubectl("patch", "secret", "frozen-secret", "-p", '{"stringData":{"k":"v2"}}', check=False)
    assert p.stderr.strip() == 'The Secret "frozen-secret" is invalid: data: Forbidden: ' + IMMUTABLE
    p = live.kubectl("patch", "secret", "frozen-secret", "-p", '{"immutable":false}', check=False)
    assert p.stderr.strip() == 'The Secret "frozen-secret" is invalid: immutable: Forbidden: ' + IMMUTABLE
    # the same bytes through stringData are no change
    live.kubectl("patch", "secret", "frozen-secret", "-p", '{"stringData":{"k":"v1"}}')
    code, body = live.json("PATCH", f"{NS}/secrets/frozen-secret", {"type": "kubernetes.io/basic-auth"},
                           "application/merge-patch+json")
    assert code == 422
    assert _causes(body)[0] == ("type", "FieldValueInvalid", 'Invalid value: "kubernetes.io/basic-auth": '
                                                              "field is immutable")


@pytest.mark.parametrize("kind,path,keeps_labels", [
    ("Pod", f"{NS}/pods/st-pod/status", True),
    ("ReplicaSet", "/apis/apps/v1/namespaces/default/replicasets/st-rs/status", True),
    ("Deployment", "/apis/apps/v1/namespaces/default/deployments/st-dep/status", False),
    ("Job", "/apis/batch/v1/namespaces/default/jobs/st-job/status", True),
])
def test_status_patch_keeps_labels_and_annotations(live: Live, tmp_path, kind: str, path: str,
                                                   keeps_labels: bool) -> None:
    # podStatusStrategy / rsStatusStrategy reset spec only; deploymentStatusStrategy also resets labels
    # (test/e2e/common/node/pods.go, test/e2e/apps/{replica_set,job}.go patch annotations through /status)
    name = path.split("/")[-2]
    pod = "{containers: [{name: c, image: nginx}]}"
    tmpl = f"{{metadata: {{labels: {{app: {name}}}}}, spec: {pod}}}"
    body = {"Pod": f"spec: {pod}",
            "ReplicaSet": f"spec: {{replicas: 0, selector: {{matchLabels: {{app: {name}}}}}, template: {tmpl}}}",
            "Deployment": f"spec: {{replicas: 0, selector: {{matchLabels: {{app: {name}}}}}, template: {tmpl}}}",
            "Job": "spec: {suspend: true, template: {spec: {restartPolicy: Never, containers: "
                   "[{name: c, image: busybox}]}}}"}[kind]
    api = {"Pod": "v1", "Job": "batch/v1"}.get(kind, "apps/v1")
    live.kubectl("apply", "-f", write(tmp_path, f"{name}.yaml",
                                      f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}\n{body}\n"))
    code, got = live.json("PATCH", path, {"metadata": {"labels": {"patched": "yes"},
                                                       "annotations": {"patchedstatus": "true"}}},
                          "application/merge-patch+json")
    assert code == 200, got
    assert got["metadata"]["annotations"]["patchedstatus"] == "true"
    assert ("patched" in (got["metadata"].get("labels") or {})) is keeps_labels
    kind_arg = kind.lower()
    stored = json.loads(live.kubectl("get", kind_arg, name, "-o", "json").stdout)
    assert stored["metadata"]["annotations"]["patchedstatus"] == "true"
    assert ("patched" in (stored["metadata"].get("labels") or {})) is keeps_labels


def test_cronjob_schedule_with_question_mark(live: Live, tmp_path) -> None:
    # robfig/cron v3 parser.go getRange: "?" is "*"
    live.kubectl("apply", "-f", write(tmp_path, "cj.yaml", """
apiVersion: batch/v1
kind: CronJob
metadata: {name: qmark}
spec:
  schedule: "*/1 * ? * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: c, image: busybox}]
"""))
    got = json.loads(live.kubectl("get", "cronjob", "qmark", "-o", "json").stdout)
    assert got["spec"]["schedule"] == "*/1 * ? * *"


def test_rolebinding_with_empty_roleref_apigroup_is_defaulted(live: Live, tmp_path) -> None:
    # pkg/apis/rbac/v1/defaults.go SetDefaults_RoleBinding / SetDefaults_Subject
    live.kubectl("apply", "-f", write(tmp_path, "rb.yaml", """
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb-empty-group}
roleRef: {apiGroup: "", kind: ClusterRole, name: edit}
subjects:
- {kind: ServiceAccount, name: default, namespace: default}
- {kind: User, name: alice}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: crb-empty-group}
roleRef: {apiGroup: "", kind: ClusterRole, name: view}
subjects: [{kind: Group, name: devs}]
"""))
    rb = json.loads(live.kubectl("get", "rolebinding", "rb-empty-group", "-o", "json").stdout)
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"}
    assert rb["subjects"] == [{"kind": "ServiceAccount", "name": "default", "namespace": "default"},
                              {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]
    crb = json.loads(live.kubectl("get", "clusterrolebinding", "crb-empty-group", "-o", "json").stdout)
    assert crb["roleRef"]["apiGroup"] == "rbac.authorization.k8s.io"
    assert crb["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}]
    # a group that is not RBAC's is still refused (ValidateRoleBinding)
    code, body = live.json("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                           {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                            "metadata": {"name": "rb-other"},
                            "roleRef": {"apiGroup": "example.com", "kind": "ClusterRole", "name": "edit"}})
    assert code == 422
    assert _causes(body) == [("roleRef.apiGroup", "FieldValueNotSupported",
                              'Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"')]


def test_daemonset_revision_data_is_served_as_gos_getpatch(live: Live, tmp_path) -> None:
    # test/e2e/apps/daemon_set.go curHistory: daemon.Match compares the served data byte for byte with the
    # client's getPatch (keys sorted, zero structs written, & escaped); controller_revision.go: a revision a
    # client creates for the DaemonSet is not deleted at once (addHistory only observes it)
    live.kubectl("apply", "-f", write(tmp_path, "ds.yaml", DAEMONSET_AND_AND.format(name="rev-bytes", image="nginx")))
    path = "/apis/apps/v1/namespaces/default/controllerrevisions"
    raw = live.wait_for("the revision", lambda: (lambda r: r[2] if b'"rev-bytes-' in r[2] else None)(
        live.request("GET", path + "?labelSelector=app%3Drev-bytes")))
    assert (b'"data":{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,'
            b'"labels":{"app":"rev-bytes"}},"spec":{"containers":[{"command":["sh","-c","a \\u0026\\u0026 b"],'
            b'"image":"nginx","imagePullPolicy":"Always","name":"c","resources":{},') in raw
    (first,) = json.loads(raw)["items"]
    ds_path = "/apis/apps/v1/namespaces/default/daemonsets/rev-bytes"
    live.wait_for("the pods available", lambda: (lambda st: st.get("desiredNumberScheduled") and
                  st.get("numberAvailable") == st["desiredNumberScheduled"] and
                  st.get("updatedNumberScheduled") == st["desiredNumberScheduled"])(
        live.json("GET", ds_path)[1].get("status") or {}))
    copy = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "data": first["data"], "revision": 2,
            "metadata": {"name": "rev-bytes-client", "labels": first["metadata"]["labels"],
                         "ownerReferences": first["metadata"]["ownerReferences"]}}
    code, _ = live.json("POST", path, copy)
    assert code == 201
    names = sorted([first["metadata"]["name"], "rev-bytes-client"])
    code, body = live.json("GET", path + "?labelSelector=app%3Drev-bytes")
    assert sorted(i["metadata"]["name"] for i in body["items"]) == names
    # a pod update syncs the DaemonSet: dedupCurHistories keeps the higher revision of the two that match
    live.kubectl("label", "pod", "-l", "app=rev-bytes", "touch=1")
    live.wait_for("the older revision deleted", lambda: [i["metadata"]["name"] for i in live.json(
        "GET", path + "?labelSelector=app%3Drev-bytes")[1]["items"]] == ["rev-bytes-client"])

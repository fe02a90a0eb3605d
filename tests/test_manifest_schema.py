"""Strict decoding of manifests per Kubernetes version: unknown fields, wrong types, unserved apiVersions,
kind: List, CustomResourceDefinitions, and kinds stored without a model (with their warning)."""

from __future__ import annotations

import copy
import textwrap
from typing import Any

import pytest
import yaml

from podlife.report.assemble import report
from podlife.scenario.errors import ScenarioError
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run
from tests.helpers import within

HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata:\n  name: test\n"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def scenario(manifests: str, version: str = "1.34", until: str = "5s") -> str:
    with open("app.yaml", "w", encoding="utf-8") as fh:
        fh.write(textwrap.dedent(manifests))
    with open("scenario.yaml", "w", encoding="utf-8") as fh:
        fh.write(HEAD + f'spec:\n  kubernetesVersion: "{version}"\n  until: {until}\n  objectsFrom: [app.yaml]\n')
    return "scenario.yaml"


def error(manifests: str, version: str = "1.34") -> str:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(scenario(manifests, version))
    return str(exc.value)


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: app
    image: nginx
"""


# ------------------------------------------------------------------------------------------ pods

@pytest.mark.parametrize("extra, message", [
    ("  terminationGracePeriod: 5\n",
     'app.yaml:8: spec.terminationGracePeriod: unknown field in PodSpec; did you mean '
     '"terminationGracePeriodSeconds"?'),
    ("    lifecycle:\n      prestop: {exec: {command: [sleep, '1']}}\n",
     'app.yaml:9: spec.containers[0].lifecycle.prestop: unknown field in Lifecycle; did you mean "preStop"?'),
    ("    ports: [{containerPort: \"80\"}]\n",
     'app.yaml:8: spec.containers[0].ports[0].containerPort: expected an integer (int32), got the string "80"'),
    ("    ports: [{containerPort: 4294967296}]\n",
     "app.yaml:8: spec.containers[0].ports[0].containerPort: 4294967296 does not fit in an int32"),
    ("    command: sh -c 'sleep 1'\n",
     "app.yaml:8: spec.containers[0].command: expected a list, got the string \"sh -c 'sleep 1'\""),
    ("    resources: {limits: {cpu: [1]}}\n",
     "app.yaml:8: spec.containers[0].resources.limits.cpu: expected a quantity (a string such as 500m or 1Gi, "
     "or a number), got a list"),
    ("    stdin: yes please\n", 'app.yaml:8: spec.containers[0].stdin: expected a boolean, got the string '
                               '"yes please"'),
])
def test_pod_fields_are_decoded_strictly(extra, message):
    assert error(POD + extra) == message


def test_type_errors_name_the_line_of_the_value_not_the_object():
    text = POD.replace("metadata: {name: web}", "metadata:\n  name: web\n  labels: {tier: [a]}")
    assert error(text) == "app.yaml:5: metadata.labels.tier: expected a string, got a list"


@pytest.mark.parametrize("version, ok", [("1.18", True), ("1.19", False), ("1.28", False), ("1.34", False)])
def test_legacy_sidecar_type_only_on_1_18(version, ok):
    # the lifecycle.type field came with the sidecar pull request the seed-000 kubelet carried; no release has it
    text = POD + "    lifecycle: {type: Sidecar}\n"
    if ok:
        load_scenario(scenario(text, version))
    else:
        assert error(text, version).startswith("app.yaml:8: spec.containers[0].lifecycle.type: unknown field in "
                                               "Lifecycle; known fields: postStart, preStop")


@pytest.mark.parametrize("version, ok", [("1.27", False), ("1.28", True)])
def test_init_container_restart_policy_from_1_28(version, ok):
    text = POD + "  initContainers:\n  - name: proxy\n    image: envoy\n    restartPolicy: Always\n"
    if ok:
        load_scenario(scenario(text, version))
    else:
        assert error(text, version) == ("app.yaml:11: spec.initContainers[0].restartPolicy: unknown field in "
                                        "Container: Kubernetes 1.27 does not have it (it exists from 1.28)")


@pytest.mark.parametrize("version, ok", [("1.22", False), ("1.23", True)])
def test_pod_os_from_1_23_on_the_1_25_schema(version, ok):
    text = POD + "  os: {name: linux}\n"
    if ok:
        load_scenario(scenario(text, version))
    else:
        assert error(text, version) == ("app.yaml:8: spec.os: unknown field in PodSpec: Kubernetes 1.22 does not "
                                        "have it (it exists from 1.23)")


# ------------------------------------------------------------------------------------------ apiVersions

@pytest.mark.parametrize("manifest, version, message", [
    ("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\n", "1.34",
     'app.yaml:1: apiVersion: no matches for kind "Deployment" in version "extensions/v1beta1" on Kubernetes '
     "1.34; expected apiVersion apps/v1"),
    ("apiVersion: v2\nkind: Pod\nmetadata: {name: a}\n", "1.34",
     'app.yaml:1: apiVersion: no matches for kind "Pod" in version "v2" on Kubernetes 1.34; expected apiVersion v1'),
    ("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a}\n", "1.20",
     'app.yaml:1: apiVersion: no matches for kind "CronJob" in version "batch/v1" on Kubernetes 1.20; expected '
     "apiVersion batch/v1beta1"),
    ("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: a}\n", "1.25",
     'app.yaml:1: apiVersion: no matches for kind "CronJob" in version "batch/v1beta1" on Kubernetes 1.25; '
     "expected apiVersion batch/v1"),
    ("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\n", "1.25",
     'app.yaml:1: apiVersion: no matches for kind "PodDisruptionBudget" in version "policy/v1beta1" on '
     "Kubernetes 1.25; expected apiVersion policy/v1"),
    ("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: a}\n", "1.34",
     'app.yaml:1: apiVersion: no matches for kind "Widget" in version "example.com/v1" on Kubernetes 1.34; '
     "expected a built-in kind or a kind defined by a CustomResourceDefinition in the scenario"),
])
def test_unserved_api_versions(manifest, version, message):
    assert error(manifest, version) == message


def test_retired_group_versions_load_on_their_versions():
    # batch/v1beta1 CronJob and policy/v1beta1 PodDisruptionBudget were served through 1.24
    sc = load_scenario(scenario("""\
        apiVersion: batch/v1beta1
        kind: CronJob
        metadata: {name: nightly}
        spec:
          schedule: "0 3 * * *"
          jobTemplate:
            spec:
              template:
                spec:
                  restartPolicy: OnFailure
                  containers: [{name: c, image: busybox}]
        ---
        apiVersion: policy/v1beta1
        kind: PodDisruptionBudget
        metadata: {name: web}
        spec: {minAvailable: 1}
        """, "1.20"))
    assert [m.obj["kind"] for m in sc.objects] == ["CronJob", "PodDisruptionBudget"]


# ------------------------------------------------------------------------------------------ every kind

# (manifest, path to a mapping that gets a misspelt key, the key, the field it should have been,
#  path of a field that gets a wrong type, that value, the expected type phrase)
_KINDS: list[tuple[dict[str, Any], tuple, str, str, tuple, Any, str]] = [
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"},
      "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "a"}},
               "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c",
                                                                                             "image": "x"}]}}}},
     ("spec",), "replica", "replicas", ("spec", "replicas"), "2", "an integer (int32)"),
    ({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "a"},
      "spec": {"serviceName": "a", "selector": {"matchLabels": {"app": "a"}},
               "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c",
                                                                                             "image": "x"}]}}}},
     ("spec",), "podManagmentPolicy", "podManagementPolicy", ("spec", "serviceName"), 5, "a string"),
    ({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "a"},
      "spec": {"selector": {"matchLabels": {"app": "a"}},
               "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "c",
                                                                                             "image": "x"}]}}}},
     ("spec",), "minReadySecond", "minReadySeconds", ("spec", "selector"), "app=a", "a mapping"),
    ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "a"},
      "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}},
     ("spec",), "backofLimit", "backoffLimit", ("spec", "template", "spec", "containers"), {"name": "c"},
     "a list"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "a"},
      "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
          "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}}},
     ("spec",), "concurencyPolicy", "concurrencyPolicy", ("spec", "suspend"), "no", "a boolean"),
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"},
      "spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]}},
     ("spec", "ports", 0), "targetport", "targetPort", ("spec", "ports", 0, "port"), "http", "an integer (int32)"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}},
     (), "dat", "data", ("data", "k"), 1, "a string"),
    ({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}, "stringData": {"k": "v"}},
     (), "stringdata", "stringData", ("type",), ["Opaque"], "a string"),
    ({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a"}},
     (), "automountServiceAccountTokens", "automountServiceAccountToken", ("secrets",), "x", "a list"),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "a"},
      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
     ("spec",), "storageClass", "storageClassName", ("spec", "accessModes"), "ReadWriteOnce", "a list"),
    ({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "a"},
      "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d"}}},
     ("spec",), "persistentVolumeReclaimPolicies", "persistentVolumeReclaimPolicy", ("spec", "hostPath"), "/d",
     "a mapping"),
    ({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "a"},
      "provisioner": "example.com/disk"},
     (), "volumeBindingMod", "volumeBindingMode", ("allowVolumeExpansion",), "true", "a boolean"),
    ({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "a"},
      "spec": {"minAvailable": 1}},
     ("spec",), "maxUnavailabe", "maxUnavailable", ("spec", "selector"), [], "a mapping"),
    ({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "a"},
      "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "a"}, "maxReplicas": 3}},
     ("spec",), "minReplica", "minReplicas", ("spec", "maxReplicas"), "3", "an integer (int32)"),
    ({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "a"},
      "spec": {"ingressClassName": "nginx", "defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}},
     ("spec",), "rule", "rules", ("spec", "ingressClassName"), 1, "a string"),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a"},
      "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
     ("rules", 0), "verb", "verbs", ("rules", 0, "resources"), "pods", "a list"),
    ({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "a"}, "value": 1000},
     (), "globalDefaults", "globalDefault", ("value",), 2 ** 40, None),
    ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},
     ("metadata",), "label", "labels", ("metadata", "labels"), ["x"], "a mapping"),
    ({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "a"},
      "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/deployer",
      "reportingInstance": "deployer-1", "action": "Deploy", "reason": "Deployed", "type": "Normal",
      "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"}, "note": "rolled out"},
     (), "reportingControler", "reportingController", ("note",), 5, "a string"),
    ({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "a"},
      "spec": {"podSelector": {}}},
     ("spec",), "policyType", "policyTypes", ("spec", "podSelector"), "all", "a mapping"),
]


def _with(obj: dict[str, Any], path: tuple, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    node = out
    for seg in path[:-1]:
        node = node[seg]
    node[path[-1]] = value
    return out


def _line_of(text: str, key: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.lstrip(" -").startswith(f"{key}:"))


def _dotted(path: tuple) -> str:
    out = ""
    for seg in path:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
    return out


@pytest.mark.parametrize("case", _KINDS, ids=[c[0]["kind"] for c in _KINDS])
def test_every_kind_rejects_a_misspelt_field(case):
    obj, parent, typo, meant, *_ = case
    bad = _with(obj, parent + (typo,), "x")
    text = yaml.safe_dump(bad, sort_keys=False)
    field = _dotted(parent + (typo,))
    assert error(text).startswith(f"app.yaml:{_line_of(text, typo)}: {field}: unknown field in ")
    assert error(text).endswith(f'did you mean "{meant}"?')


@pytest.mark.parametrize("case", _KINDS, ids=[c[0]["kind"] for c in _KINDS])
def test_every_kind_rejects_a_wrong_type(case):
    obj, *_, path, value, phrase = case
    bad = _with(obj, path, value)
    text = yaml.safe_dump(bad, sort_keys=False)
    message = error(text)
    assert message.startswith(f"app.yaml:{_line_of(text, [p for p in path if isinstance(p, str)][-1])}: "
                              f"{_dotted(path)}: ")
    assert (f"expected {phrase}, got" in message) if phrase else "does not fit in an int32" in message


@pytest.mark.parametrize("case", _KINDS, ids=[c[0]["kind"] for c in _KINDS])
def test_every_kind_rejects_an_unknown_api_version(case):
    obj = dict(case[0], apiVersion="example.invalid/v9")
    message = error(yaml.safe_dump(obj, sort_keys=False))
    assert message.startswith(f'app.yaml:1: apiVersion: no matches for kind "{obj["kind"]}" in version '
                              '"example.invalid/v9" on Kubernetes 1.34; expected apiVersion ')


@pytest.mark.parametrize("case", _KINDS, ids=[c[0]["kind"] for c in _KINDS])
def test_every_kind_loads_and_is_stored(case):
    obj = case[0]
    sc = load_scenario(scenario(yaml.safe_dump(obj, sort_keys=False)))
    result = run(sc)
    stored = [o for o in result.cluster.store.all_objects()
              if o["kind"] == obj["kind"] and o["metadata"]["name"] == "a"]
    assert len(stored) == 1


# ------------------------------------------------------------------------------------------ lists, CRDs, warnings

def test_kind_list_stands_for_its_items():
    sc = load_scenario(scenario("""\
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: ConfigMap
          metadata: {name: settings}
        - apiVersion: v1
          kind: PodList
          items:
          - apiVersion: v1
            kind: Pod
            metadata: {name: web}
            spec: {containers: [{name: app, image: nginx}]}
        """))
    assert [(m.obj["kind"], m.source.path, m.source.line) for m in sc.objects] == [
        ("ConfigMap", "items[0]", 4), ("Pod", "items[1].items[0]", 10)]


def test_error_inside_a_list_names_the_item():
    assert error("""\
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Pod
          metadata: {name: web}
          spec: {containers: [{name: app, image: nginx}], restartPolicyy: Never}
        """) == 'app.yaml:7: items[0].spec.restartPolicyy: unknown field in PodSpec; did you mean "restartPolicy"?'


CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              port: {x-kubernetes-int-or-string: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
"""


@pytest.mark.parametrize("spec, message", [
    ("{size: three}", 'app.yaml:27: spec.size: expected an integer, got the string "three"'),
    ("{size: 2, colour: red}", 'app.yaml:27: spec.colour: unknown field; known fields: extra, port, size'),
    ("{port: 80}", "app.yaml:27: spec.size: required field missing"),
    ("{size: 0}", "app.yaml:27: spec.size: 0 is less than the minimum of 1"),
    ("{size: 1, port: [80]}", "app.yaml:27: spec.port: expected an integer or a string (int-or-string), got a list"),
])
def test_custom_resources_are_checked_against_their_crd(spec, message):
    cr = f"apiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: w}}\nspec: {spec}\n"
    assert error(CRD + cr) == message


def _nested_crd(levels: int, leaf: Any, value: Any) -> str:
    """A CRD whose spec nests ``levels`` objects (f<levels-1> … f0) down to ``leaf``, and a Widget setting f0."""
    schema, spec = leaf, value
    for i in range(levels):
        schema = {"type": "object", "properties": {f"f{i}": schema}}
        spec = {f"f{i}": spec} if i else {"f0": value}
    crd = yaml.safe_load(CRD.split("---")[0])
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {"type": "object", "properties": {"spec": schema}}
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}
    return yaml.safe_dump_all([crd, widget], sort_keys=False)


def _dotted_chain(head: str, levels: int, step: str = "") -> str:
    return head + "".join(f".{step}f{i}" for i in reversed(range(levels)))


def test_a_crd_nested_a_hundred_levels_deep_is_accepted_and_checks_its_resources():
    # upstream has no depth limit below its JSON decoder's (10,000); podlife's metaschema check would recurse
    # past Python's limit at this depth, so it checks such a schema node by node
    text = _nested_crd(100, {"type": "string"}, "x")
    sc = load_scenario(scenario(text))
    assert [m.obj["kind"] for m in sc.objects] == ["CustomResourceDefinition", "Widget"]
    text = _nested_crd(100, {"type": "string"}, 5)
    assert error(text) == (f"app.yaml:{len(text.splitlines())}: {_dotted_chain('spec', 100)}: expected a string, "
                           "got the number 5")
    # what only the metaschema refuses, found at the bottom (a string's minLength is a non-negative integer)
    text = _nested_crd(100, {"type": "string", "minLength": -1}, "x")
    assert error(text) == (f"app.yaml:{_line_of(text, 'openAPIV3Schema')}: spec.versions[0].schema.openAPIV3Schema: "
                           "not a valid structural schema: -1 is less than the minimum of 0")


def test_an_object_nested_deeper_than_podlife_can_check_is_an_error_not_a_crash():
    leaf = "{type: string}"
    for i in range(180):   # flow style: the YAML reader follows this depth, the schema check does not
        leaf = f"{{type: object, properties: {{f{i}: {leaf}}}}}"
    crd = CRD.split("---")[0].split("      openAPIV3Schema:")[0]
    text = crd + f"      openAPIV3Schema: {{type: object, properties: {{spec: {leaf}}}}}\n"
    message = error(text)
    assert message.startswith("app.yaml:13: spec.versions[0].schema.openAPIV3Schema.properties.spec"
                              + _dotted_chain("", 180, "properties.") + ".type: nested 368 levels deep")
    assert message.endswith("deeper than podlife can check against the schema; expected fewer levels")


PATTERNS = CRD.replace("              extra:", "              name: {type: string, pattern: '^(a+)+$'}\n"
                                      "              letters: {type: string, pattern: '^\\pL+$'}\n"
                                      "              extra:")
WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: %s\n"


def test_patterns_match_in_linear_time_with_go_regexp_syntax():
    # Go's regexp is RE2: '^(a+)+$' against 40 a's and a '!' is a quick mismatch, not exponential backtracking;
    # \pL (a Unicode letter) is RE2 syntax that Python's re does not have
    text = PATTERNS + WIDGET % "{size: 1, name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!, letters: héllo}"
    assert within(5, error, text) == ("app.yaml:29: spec.name: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' does not "
                                      "match '^(a+)+$'")
    sc = load_scenario(scenario(PATTERNS + WIDGET % "{size: 1, name: aaaa, letters: héllo}"))
    assert sc.objects[1].obj["spec"]["letters"] == "héllo"
    assert error(PATTERNS + WIDGET % "{size: 1, letters: h3llo}") == \
        "app.yaml:29: spec.letters: 'h3llo' does not match '^\\\\pL+$'"


def test_a_pattern_go_cannot_compile_refuses_the_crd():
    # apiextensions validateValueValidation: regexp.Compile; look-ahead is Perl syntax RE2 does not have
    text = PATTERNS.replace("'^\\pL+$'", "'^(?=a)'") + WIDGET % "{size: 1}"
    assert error(text) == ('app.yaml:23: spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.letters.'
                           "pattern: \"^(?=a)\" must be a valid regular expression, but isn't: invalid perl operator: "
                           "(?=")


def test_custom_resources_are_stored_with_their_crd_scope_and_warned_about():
    cr = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2, port: http, extra: {a: 1}}\n"
    sc = load_scenario(scenario(CRD + cr))
    assert sc.warnings == ["app.yaml:24: custom resource Widget (example.com/v1) is stored and validated but not "
                           "modelled: nothing acts on its 1 object"]
    rep = report(run(sc))
    assert rep["warnings"] == sc.warnings
    widget = [o for o in rep["final"]["objects"] if o["kind"] == "Widget"]
    assert [(w["metadata"]["namespace"], w["spec"]["extra"]) for w in widget] == [("default", {"a": 1})]


def test_one_warning_per_unmodelled_kind_and_storage_as_given():
    sc = load_scenario(scenario("""\
        apiVersion: networking.k8s.io/v1
        kind: IngressClass
        metadata: {name: public}
        spec: {controller: example.com/ingress}
        ---
        apiVersion: networking.k8s.io/v1
        kind: IngressClass
        metadata: {name: private}
        spec: {controller: example.com/ingress}
        """))
    assert sc.warnings == ["app.yaml:1: kind IngressClass (networking.k8s.io/v1) is stored and validated but not "
                           "modelled: nothing acts on its 2 objects"]
    classes = [o for o in run(sc).cluster.store.all_objects() if o["kind"] == "IngressClass"]
    assert [(c["metadata"]["name"], "namespace" in c["metadata"]) for c in classes] == [("private", False),
                                                                                       ("public", False)]


@pytest.mark.parametrize("extra, message", [
    ("    resources: {requests: {memory: 1..5Gi}}\n",
     'app.yaml:8: spec.containers[0].resources.requests.memory: the string "1..5Gi" is not a quantity: quantities '
     "must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("    resources: {limits: {cpu: 10Zi}}\n",
     'app.yaml:8: spec.containers[0].resources.limits.cpu: the string "10Zi" is not a quantity: quantities must '
     "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("    resources: {requests: {memory: 100000000000000000000000000000}}\n",
     "app.yaml:8: spec.containers[0].resources.requests.memory: 100000000000000000000000000000 does not fit in an "
     "int64"),
])
def test_quantities_are_parsed_at_decoding(extra, message):
    # resource.Quantity's UnmarshalJSON: a malformed quantity is a decode error, before defaulting (QoS)
    assert error(POD + extra) == message


def test_a_null_quantity_decodes_as_zero():
    sc = load_scenario(scenario(POD + "    resources: {requests: {memory: null}}\n"))
    pod = run(sc).cluster.store.get("Pod", "default", "web")
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"memory": "0"}


def test_null_items_of_string_lists_decode_as_empty_strings():
    # encoding/json: null in a []string is ""; a command [sh, -c, null] is accepted and runs "sh -c ''"
    sc = load_scenario(scenario(POD + "    command: [sh, -c, null]\n"))
    result = run(sc)
    pod = result.cluster.store.get("Pod", "default", "web")
    assert pod["spec"]["containers"][0]["command"] == ["sh", "-c", ""]

"""Scenario loading: good paths, and one test per kind of bad input with its exact message, line and path."""

from __future__ import annotations

import pickle
import textwrap
from datetime import datetime, timezone

import pytest

from podlife.config import KubeletConfiguration
from podlife.scenario.durations import format_duration, parse_duration
from podlife.scenario.errors import ScenarioError
from podlife.scenario.load import load_scenario
from podlife.versions import MODELLED_VERSIONS, NEWEST
from podlife.scenario.model import Source

# Every scenario below starts with these 4 lines, so the first line of a body is line 5.
HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata:\n  name: test\n"
DURATION_HINT = "expected e.g. 500ms, 3s, 1m30s, 2h or a number of seconds"


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(text: str, name: str = "scenario.yaml") -> str:
    with open(name, "w", encoding="utf-8") as fh:
        fh.write(text)
    return name


def load(body: str = "", *sets: str, **kw):
    return load_scenario(write(HEAD + textwrap.dedent(body)), list(sets), **kw)


def error(body: str = "", *sets: str, **kw) -> str:
    with pytest.raises(ScenarioError) as exc:
        load(body, *sets, **kw)
    return str(exc.value)


def raw_error(text: str, *sets: str, **kw) -> str:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(write(text), list(sets), **kw)
    return str(exc.value)


# ------------------------------------------------------------------------------------------ durations

@pytest.mark.parametrize("text, seconds", [
    ("500ms", 0.5), ("3s", 3.0), ("1m30s", 90.0), ("2h", 7200.0), ("1.5s", 1.5), ("100us", 0.0001),
    ("100µs", 0.0001), ("0", 0.0), ("10", 10.0), ("2.5", 2.5), (".5s", 0.5), ("1h1m1s", 3661.0),
    ("-1.5h", -5400.0), ("7.9s", 7.9), ("30.9s", 30.9), ("1ns", 1e-9), (90, 90.0), (0.25, 0.25),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text, message", [
    ("10x", 'unknown unit "x" in duration "10x"'),
    ("1m30", 'missing unit in duration "1m30"'),
    ("", 'invalid duration ""'),
    ("s", 'invalid duration "s"'),
    ("1e3", 'unknown unit "e" in duration "1e3"'),
    ("1 s", 'unknown unit " s" in duration "1 s"'),
    (True, "invalid duration True"),
    (float("nan"), "invalid duration nan"),
    ("3000000h", 'invalid duration "3000000h"'),
])
def test_parse_duration_rejects(text, message):
    with pytest.raises(ValueError) as exc:
        parse_duration(text)
    assert str(exc.value) == message


@pytest.mark.parametrize("seconds, text", [
    (90, "1m30s"), (0.5, "500ms"), (300, "5m0s"), (0, "0s"), (7200, "2h0m0s"), (1.5, "1.5s"),
    (0.0001, "100µs"), (1e-9, "1ns"), (0.1, "100ms"), (3600.1, "1h0m0.1s"), (-90, "-1m30s"), (59.999, "59.999s"),
])
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


# --------------------------------------------------------------------------------------------- errors

def test_scenario_error_rendering():
    assert str(ScenarioError("scenario.yaml", 12, "spec.actions[2].at", '"10x" is not a duration')) == \
        'scenario.yaml:12: spec.actions[2].at: "10x" is not a duration'
    assert str(ScenarioError("scenario.yaml", None, "spec.seed", "bad")) == "scenario.yaml: spec.seed: bad"
    assert str(ScenarioError("scenario.yaml", 3, "", "invalid YAML: x")) == "scenario.yaml:3: invalid YAML: x"
    e = pickle.loads(pickle.dumps(ScenarioError("f", 1, "p", "m")))
    assert (e.file, e.line, e.path, e.message) == ("f", 1, "p", "m")


# ------------------------------------------------------------------------------------------ good paths

def test_defaults():
    s = load()
    assert s.name == "test" and s.description == "" and s.path == "scenario.yaml"
    assert s.kubernetes_version == NEWEST == "1.37"
    assert s.start_time == datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert (s.seed, s.until, s.objects, s.actions, s.expect, s.warnings) == (0, None, [], [], [], [])
    [node] = s.cluster.nodes
    assert (node.name, node.runtime, node.podCIDR, node.zone, node.labels, node.taints) == \
        ("node-1", "containerd", "10.244.1.0/24", None, {}, [])
    assert node.capacity == {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    assert s.cluster.kubelet == KubeletConfiguration()
    assert s.cluster.controllerManager.nodeMonitorGracePeriod is None  # per-version default, filled later


def test_full_spec_values():
    s = load("""\
        spec:
          kubernetesVersion: "1.18"
          startTime: 2020-06-03T22:39:30.5+02:00
          seed: 7
          until: 1m30s
        """)
    assert s.kubernetes_version == "1.18"
    assert s.start_time == datetime(2020, 6, 3, 20, 39, 30, 500000, tzinfo=timezone.utc)
    assert (s.seed, s.until) == (7, 90.0)


def test_nodes_name_prefix_count_and_pod_cidrs():
    s = load("""\
        spec:
          cluster:
            nodes:
              - name: cp
                podCIDR: 10.244.2.0/24
              - namePrefix: worker-
                count: 3
                zone: a
                runtime: docker-1.13
                labels: {tier: web}
                taints: [{key: dedicated, value: web, effect: NoSchedule}]
                capacity: {cpu: 4, memory: 8Gi}
        """)
    assert [n.name for n in s.cluster.nodes] == ["cp", "worker-0", "worker-1", "worker-2"]
    # node i gets 10.244.(i+1).0/24, skipping the block cp took explicitly
    assert [n.podCIDR for n in s.cluster.nodes] == \
        ["10.244.2.0/24", "10.244.3.0/24", "10.244.4.0/24", "10.244.5.0/24"]
    w = s.cluster.nodes[1]
    assert (w.zone, w.runtime) == ("a", "docker-1.13")
    assert w.labels == {"tier": "web", "topology.kubernetes.io/zone": "a"}
    assert w.taints == [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]
    assert w.capacity == {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    assert w.labels is not s.cluster.nodes[2].labels


def test_many_nodes_pod_cidrs_continue_past_10_244_255():
    s = load("spec:\n  cluster:\n    nodes: [{namePrefix: n, count: 300}]\n")
    assert s.cluster.nodes[254].podCIDR == "10.244.255.0/24"
    assert s.cluster.nodes[255].podCIDR == "10.245.0.0/24"


def test_empty_node_list_is_allowed_with_a_warning():
    s = load("spec:\n  cluster:\n    nodes: []\n")
    assert s.cluster.nodes == []
    assert s.warnings == ["scenario.yaml:7: spec.cluster.nodes: no nodes: every pod will stay Pending"]


def test_components():
    s = load("""\
        spec:
          cluster:
            kubelet:
              nodeStatusUpdateFrequency: 20s
              runtimeRequestTimeout: 30
              maxPods: 50
              serializeImagePulls: false
              evictionHard: {memory.available: 200Mi}
              evictionSoft: {nodefs.available: 15%}
              evictionSoftGracePeriod: {nodefs.available: 1m30s}
            controllerManager: {nodeMonitorGracePeriod: 40s, nodeEvictionRate: 0.5, podEvictionTimeout: 2m}
            apiServer: {defaultNotReadyTolerationSeconds: 30}
            scheduler: {podMaxBackoffSeconds: 20}
        """)
    k = s.cluster.kubelet
    assert (k.nodeStatusUpdateFrequency, k.runtimeRequestTimeout, k.maxPods, k.serializeImagePulls) == \
        (20.0, 30.0, 50, False)
    assert k.evictionHard == {"memory.available": "200Mi"}  # replaces the default set, as upstream
    assert k.evictionSoft == {"nodefs.available": "15%"}
    assert k.evictionSoftGracePeriod == {"nodefs.available": 90.0}
    cm = s.cluster.controllerManager
    assert (cm.nodeMonitorGracePeriod, cm.nodeEvictionRate, cm.podEvictionTimeout) == (40.0, 0.5, 120.0)
    assert s.cluster.apiServer.defaultNotReadyTolerationSeconds == 30
    assert s.cluster.scheduler.podMaxBackoffSeconds == 20


def test_null_component_field_keeps_default():
    s = load("spec:\n  cluster:\n    kubelet: {evictionHard: null}\n")
    assert s.cluster.kubelet.evictionHard == KubeletConfiguration().evictionHard


def test_objects_and_sources():
    s = load("""\
        spec:
          objects:
            - apiVersion: v1
              kind: Pod
              metadata: {name: web-0}
            - apiVersion: v1
              kind: ConfigMap
              metadata: {generateName: web-}
        """)
    assert [m.obj["kind"] for m in s.objects] == ["Pod", "ConfigMap"]
    assert s.objects[0].source == Source("scenario.yaml", 7, "spec.objects[0]")
    assert s.objects[1].source == Source("scenario.yaml", 10, "spec.objects[1]")


def test_timestamps_in_manifests_stay_strings():
    s = load("""\
        spec:
          objects:
            - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, creationTimestamp: 2020-06-03T20:39:30Z}}
        """)
    assert s.objects[0].obj["metadata"]["creationTimestamp"] == "2020-06-03T20:39:30Z"


def test_objects_from_relative_to_the_scenario(tmp_path):
    (tmp_path / "sub" / "manifests").mkdir(parents=True)
    (tmp_path / "sub" / "manifests" / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\n"
        "# a comment\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n")
    (tmp_path / "sub" / "scenario.yaml").write_text(HEAD + textwrap.dedent("""\
        spec:
          objects:
            - {apiVersion: v1, kind: Namespace, metadata: {name: ns}}
          objectsFrom: [manifests/app.yaml]
        """))
    s = load_scenario("sub/scenario.yaml")
    assert [m.obj["metadata"]["name"] for m in s.objects] == ["ns", "a", "b"]
    assert s.objects[1].source == Source("sub/manifests/app.yaml", 1, "")
    assert s.objects[2].source == Source("sub/manifests/app.yaml", 7, "")


def test_version_float_that_reads_back_is_accepted():
    assert load("spec:\n  kubernetesVersion: 1.18\n").kubernetes_version == "1.18"
    assert load('spec:\n  kubernetesVersion: "1.20"\n').kubernetes_version == "1.20"
    assert list(MODELLED_VERSIONS)[0] == "1.18"


def test_actions():
    s = load("""\
        spec:
          actions:
            - at: 7.9s
              delete: Pod/web-0
              gracePeriodSeconds: -1
              propagationPolicy: Foreground
            - at: 5
              create: {apiVersion: v1, kind: Pod, metadata: {name: x, namespace: prod}}
            - at: 1m
              scale: deployment/web
              namespace: prod
              replicas: 0
            - at: 2m
              patch: deployment/web
              mergePatch: {spec: {paused: true}}
            - at: 3m
              drain: node-1
            - at: 10s
              fault: {type: ContainerHang, node: node-1, pod: web-0, container: app, for: 5m}
            - at: 11s
              fault: {type: ImagePullFailure, image: "nginx:1.25"}
            - at: 12s
              fault: {type: MemoryUsage, node: node-1, value: 30Gi}
        """)
    a = s.actions
    assert [x.verb for x in a] == ["delete", "create", "scale", "patch", "drain", "fault", "fault", "fault"]
    assert (a[0].at, a[0].target, a[0].namespace, a[0].grace_period_seconds, a[0].force,
            a[0].propagation_policy) == (7.9, "pod/web-0", "default", -1, False, "Foreground")
    assert a[0].raw == {"at": "7.9s", "delete": "Pod/web-0", "gracePeriodSeconds": -1,
                        "propagationPolicy": "Foreground"}
    assert a[0].source == Source("scenario.yaml", 7, "spec.actions[0]")
    assert (a[1].at, a[1].target, a[1].namespace, a[1].manifest["kind"]) == (5.0, "pod/x", "prod", "Pod")
    assert (a[2].target, a[2].namespace, a[2].replicas) == ("deployment/web", "prod", 0)
    assert a[3].merge_patch == {"spec": {"paused": True}}
    assert a[4].target == "node-1"
    f = a[5].fault
    assert (f.type, f.node, f.pod, f.container, f.for_seconds) == \
        ("ContainerHang", "node-1", "default/web-0", "app", 300.0)
    assert f.source == Source("scenario.yaml", 23, "spec.actions[5].fault")
    assert (a[6].fault.image, a[6].fault.node) == ("nginx:1.25", None)
    assert a[7].fault.value == "30Gi"


@pytest.mark.parametrize("options, grace", [
    ("force: true", 0),                              # kubectl --force alone sends 0
    ("force: true\n      gracePeriodSeconds: -1", 0),  # ... as does --force with a negative grace period
    ("force: true\n      gracePeriodSeconds: 0", 0),
    ("gracePeriodSeconds: 0", 0),                    # an API delete: not turned into 1 as kubectl would
    ("gracePeriodSeconds: -5", -5),                  # reaches the API server as written
    ("force: false", None),
])
def test_delete_force_semantics(options, grace):
    s = load(f"spec:\n  actions:\n    - at: 1s\n      delete: pod/web-0\n      {options}\n")
    assert s.actions[0].grace_period_seconds == grace


def test_actions_and_expectations_after_until_warn():
    s = load("""\
        spec:
          until: 1m
          actions:
            - {at: 2m, cordon: node-1}
            - {at: 3s, uncordon: node-9}
          expect:
            - {object: pod/web, phase: Running, always: [0s, 5m]}
        """)
    assert s.warnings == [
        "scenario.yaml:8: spec.actions[0].at: 2m0s is after spec.until (1m0s); the action will not run",
        'scenario.yaml:9: spec.actions[1].uncordon: "node-9" is not a node of this scenario (nodes: node-1)',
        "scenario.yaml:11: spec.expect[0]: checks up to 5m0s, after spec.until (1m0s)",
    ]


def test_expectations():
    s = load("""\
        spec:
          expect:
            - description: gone
              object: pod/web-0
              deleted: true
              by: 30.9s
            - object: Pod/prod/web-1
              condition: {type: Ready, status: False}
              always: [10s, 1m]
            - object: pod/web-2
              namespace: prod
              containerState: {name: app, state: terminated, reason: Error, exitCode: 137}
              after: 5s
              by: 10s
            - object: node/node-1
              nodeReady: "Unknown"
              at: 1m
            - object: node/node-1
              taint: node.kubernetes.io/unreachable
              after: 1m
            - object: node/node-1
              taint: {key: node.kubernetes.io/not-ready, effect: NoExecute}
            - object: deployment/web
              deleted: false
        """)
    e = s.expect
    assert (e[0].object, e[0].namespace, e[0].check, e[0].value, e[0].description, e[0].by) == \
        ("pod/web-0", "default", "deleted", True, "gone", 30.9)
    assert e[0].source == Source("scenario.yaml", 7, "spec.expect[0]")
    assert (e[1].object, e[1].namespace, e[1].value, e[1].always) == \
        ("pod/web-1", "prod", {"type": "Ready", "status": "False", "reason": None}, (10.0, 60.0))
    assert (e[2].namespace, e[2].after, e[2].by) == ("prod", 5.0, 10.0)
    assert e[2].value == {"name": "app", "state": "terminated", "reason": "Error", "exitCode": 137}
    assert (e[3].check, e[3].value, e[3].at) == ("nodeReady", "Unknown", 60.0)
    assert (e[4].value, e[4].after, e[4].by) == ({"key": "node.kubernetes.io/unreachable", "effect": None}, 60.0, None)
    # no timing: holds at the end of the run
    assert e[5].value == {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}
    assert (e[5].by, e[5].at, e[5].after, e[5].always) == (None, None, None, None)
    assert (e[6].object, e[6].value) == ("deployment/web", False)


# ------------------------------------------------------------------------------------------- overrides

def test_set_overrides():
    s = load("""\
        spec:
          actions:
            - at: 1s
              cordon: node-1
        """,
             "spec.cluster.kubelet.nodeStatusUpdateFrequency=20s",  # creates cluster and kubelet
             "spec.actions[0].at=3s",
             "spec.seed=4",
             "spec.cluster.kubelet.evictionHard[memory.available]=50Mi",
             "metadata.description=from the command line",
             "spec.objects=[{apiVersion: v1, kind: Pod, metadata: {name: p}}]")
    assert s.cluster.kubelet.nodeStatusUpdateFrequency == 20.0
    assert s.cluster.kubelet.evictionHard == {"memory.available": "50Mi"}
    assert (s.actions[0].at, s.actions[0].raw["at"]) == (3.0, "3s")
    assert (s.seed, s.description) == (4, "from the command line")
    assert s.objects[0].source == Source("scenario.yaml", None, "spec.objects[0]")


def test_keyword_overrides_win_over_set_and_file():
    s = load('spec:\n  kubernetesVersion: "1.20"\n  seed: 1\n', "spec.seed=2",
             kubernetes_version="1.18", seed=3, until="90s")
    assert (s.kubernetes_version, s.seed, s.until) == ("1.18", 3, 90.0)


def test_keyword_overrides_without_spec():
    s = load_scenario(write(HEAD), kubernetes_version="1.30", seed=0, until="2m")
    assert (s.kubernetes_version, s.seed, s.until) == ("1.30", 0, 120.0)


def test_set_version_as_number_round_trip():
    assert load("", "spec.kubernetesVersion=1.25").kubernetes_version == "1.25"
    assert error("", "spec.kubernetesVersion=1.30") == \
        'scenario.yaml: spec.kubernetesVersion: 1.30 is read by YAML as the number 1.3; quote the version, ' \
        'e.g. "1.30" (set by --set)'


@pytest.mark.parametrize("expr, message", [
    ("spec.actions[1].at=2s", "scenario.yaml: --set spec.actions[1].at: index 1 out of range; spec.actions has 1 item"),
    ("spec.actions[0].at.x=2s",
     'scenario.yaml: --set spec.actions[0].at.x: cannot go into spec.actions[0].at: it is "1s", not a mapping or list'),
    ("spec.actions.at=2s",
     "scenario.yaml: --set spec.actions.at: spec.actions is a list; expected an [index], not .at"),
    ("metadata.name.x=1", 'scenario.yaml: --set metadata.name.x: cannot go into metadata.name: it is "test", '
                          "not a mapping or list"),
    ("spec.seed", 'scenario.yaml: --set: "spec.seed": expected PATH=VALUE'),
    ("=3", 'scenario.yaml: --set: "=3": empty path; expected PATH=VALUE'),
    ("spec..seed=3", "scenario.yaml: --set spec..seed: invalid path; expected dotted field names with optional "
                     "[index], e.g. spec.actions[0].at"),
    ("spec.seed=[1", 'scenario.yaml: --set spec.seed: invalid value "[1": invalid YAML: expected \',\' or \']\', '
                     "but got '<stream end>' (while parsing a flow sequence)"),
])
def test_set_errors(expr, message):
    assert error("spec:\n  actions:\n    - {at: 1s, cordon: node-1}\n", expr) == message


def test_set_value_invalid_names_set_and_has_no_line():
    assert error("spec:\n  actions:\n    - {at: 1s, cordon: node-1}\n", "spec.actions[0].at=10x") == \
        f'scenario.yaml: spec.actions[0].at: "10x" is not a duration; {DURATION_HINT} (set by --set)'
    assert error("", "spec.cluster.kubelet.fooBar=1").startswith(
        "scenario.yaml: spec.cluster.kubelet.fooBar: unknown field; known fields: syncFrequency, ")


def test_keyword_override_invalid():
    assert error("", until="10x") == \
        f'scenario.yaml: spec.until: "10x" is not a duration; {DURATION_HINT} (set by --until)'
    assert error("", seed=-1) == "scenario.yaml: spec.seed: expected an integer >= 0, got -1 (set by --seed)"
    assert error("", kubernetes_version="1.17") == \
        'scenario.yaml: spec.kubernetesVersion: "1.17" is not a modelled version; expected a minor version, ' \
        f'one of "1.18" … "{NEWEST}" (set by --kubernetes-version)'


# ----------------------------------------------------------------------------------- file and YAML errors

def test_missing_file():
    with pytest.raises(ScenarioError) as exc:
        load_scenario("nothere.yaml")
    assert str(exc.value) == "nothere.yaml: cannot read the scenario: No such file or directory"


def test_empty_file():
    assert raw_error("# nothing\n") == \
        "scenario.yaml: the file is empty; expected a Scenario (apiVersion: podlife/v1alpha1, kind: Scenario)"


def test_yaml_syntax_error_has_line():
    assert error("spec:\n  seed: 1\n   until: 2s\n") == \
        "scenario.yaml:7: invalid YAML: mapping values are not allowed here"


def test_two_documents():
    assert raw_error(HEAD + "---\n" + HEAD) == \
        "scenario.yaml:6: expected one YAML document (a Scenario), found another one here"


def test_duplicate_key():
    assert error("spec:\n  seed: 1\n  seed: 2\n") == "scenario.yaml:7: spec.seed: duplicate key; first given at line 6"


def test_root_not_a_mapping():
    assert raw_error("- a\n") == "scenario.yaml:1: expected a mapping, got a list"


# --------------------------------------------------------------------------------------- header errors

def test_api_version_and_kind():
    assert raw_error("apiVersion: v1\nkind: Scenario\n") == \
        'scenario.yaml:1: apiVersion: "v1" is not supported; expected "podlife/v1alpha1"'
    assert raw_error("kind: Scenario\n") == \
        'scenario.yaml:1: apiVersion: required field missing; expected "podlife/v1alpha1"'
    assert raw_error("apiVersion: podlife/v1alpha1\nkind: Pod\n") == \
        'scenario.yaml:2: kind: "Pod" is not supported; expected "Scenario"'


def test_metadata():
    head = "apiVersion: podlife/v1alpha1\nkind: Scenario\n"
    assert raw_error(head) == "scenario.yaml:1: metadata: required field missing; expected a mapping with name"
    assert raw_error(head + "metadata:\n  description: x\n") == \
        "scenario.yaml:3: metadata.name: required field missing; expected a DNS-1123 label, e.g. my-scenario"
    assert raw_error(head + "metadata:\n  name: My_Scenario\n") == \
        'scenario.yaml:4: metadata.name: "My_Scenario" is not a valid DNS-1123 label; expected lowercase letters, ' \
        "digits and '-', starting and ending with a letter or digit, at most 63 characters"
    assert raw_error(head + "metadata:\n  name: a\n  labels: {}\n") == \
        "scenario.yaml:5: metadata.labels: unknown field; known fields: name, description"


def test_unknown_spec_field():
    assert error("spec:\n  actionz: []\n") == \
        "scenario.yaml:6: spec.actionz: unknown field; known fields: kubernetesVersion, startTime, seed, until, " \
        "cluster, objects, objectsFrom, clusterFrom, behaviors, actions, expect"


def test_unknown_top_level_field():
    assert raw_error(HEAD + "status: {}\n") == \
        "scenario.yaml:5: status: unknown field; known fields: apiVersion, kind, metadata, spec"


def test_wrong_types():
    assert error("spec: 3\n") == "scenario.yaml:5: spec: expected a mapping, got 3"
    assert error("spec:\n  actions: {at: 1s}\n") == "scenario.yaml:6: spec.actions: expected a list, got a mapping"
    assert error("spec:\n  seed: one\n") == 'scenario.yaml:6: spec.seed: expected an integer >= 0, got "one"'
    assert error("spec:\n  seed: 1.5\n") == "scenario.yaml:6: spec.seed: expected an integer >= 0, got 1.5"
    assert error("spec:\n  cluster:\n    kubelet: {serializeImagePulls: maybe}\n") == \
        'scenario.yaml:7: spec.cluster.kubelet.serializeImagePulls: expected true or false, got "maybe"'
    assert error("spec:\n  objectsFrom: [3]\n") == \
        "scenario.yaml:6: spec.objectsFrom[0]: expected a file path relative to the scenario, got 3"


def test_description_must_be_a_string():
    text = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata:\n  name: t\n  description: [x]\n"
    assert raw_error(text) == "scenario.yaml:5: metadata.description: expected a string, got a list"


# ------------------------------------------------------------------------------------ spec value errors

def test_version_errors():
    assert error("spec:\n  kubernetesVersion: 1.20\n") == \
        'scenario.yaml:6: spec.kubernetesVersion: 1.20 is read by YAML as the number 1.2; quote the version, ' \
        'e.g. "1.20"'
    assert error("spec:\n  kubernetesVersion: 1.2\n") == \
        'scenario.yaml:6: spec.kubernetesVersion: 1.2 is not a modelled version; expected a quoted minor version, ' \
        f'one of "1.18" … "{NEWEST}"'
    assert error('spec:\n  kubernetesVersion: "1.17"\n') == \
        'scenario.yaml:6: spec.kubernetesVersion: "1.17" is not a modelled version; expected a minor version, ' \
        f'one of "1.18" … "{NEWEST}"'
    assert error("spec:\n  kubernetesVersion: 1\n") == \
        f'scenario.yaml:6: spec.kubernetesVersion: expected a quoted minor version such as "{NEWEST}", got 1'


def test_start_time_errors():
    assert error("spec:\n  startTime: 2020-06-03\n") == \
        'scenario.yaml:6: spec.startTime: "2020-06-03" is not an RFC 3339 time; expected e.g. "2020-06-03T20:39:30Z"'
    assert error("spec:\n  startTime: 2020-13-03T20:39:30Z\n") == \
        'scenario.yaml:6: spec.startTime: "2020-13-03T20:39:30Z" is not an RFC 3339 time; expected e.g. ' \
        '"2020-06-03T20:39:30Z"'


def test_until_errors():
    assert error("spec:\n  until: 10x\n") == f'scenario.yaml:6: spec.until: "10x" is not a duration; {DURATION_HINT}'
    assert error("spec:\n  until: -5s\n") == 'scenario.yaml:6: spec.until: "-5s" is negative; expected a duration >= 0'
    assert error("spec:\n  until: [1]\n") == \
        "scenario.yaml:6: spec.until: expected a duration (e.g. 500ms, 3s, 1m30s, 2h or a number of seconds), " \
        "got a list"


# ------------------------------------------------------------------------------------------ node errors

def nodes(yaml_items: str) -> str:
    return "spec:\n  cluster:\n    nodes:\n" + textwrap.indent(textwrap.dedent(yaml_items), "      ")


@pytest.mark.parametrize("items, message", [
    ("- name: a\n- name: a\n", 'scenario.yaml:9: spec.cluster.nodes[1].name: duplicate node name "a"; '
                               "expected unique node names"),
    ("- name: worker-1\n- {namePrefix: worker-, count: 2}\n",
     'scenario.yaml:9: spec.cluster.nodes[1].namePrefix: duplicate node name "worker-1"; expected unique node names'),
    ("- {name: a, namePrefix: b}\n", "scenario.yaml:8: spec.cluster.nodes[0]: expected exactly one of name or "
                                     "namePrefix (with count)"),
    ("- {zone: a}\n",
     "scenario.yaml:8: spec.cluster.nodes[0]: expected exactly one of name or namePrefix (with count)"),
    ("- {name: a, count: 2}\n", "scenario.yaml:8: spec.cluster.nodes[0].count: count needs namePrefix instead of name"),
    ("- {namePrefix: w}\n", "scenario.yaml:8: spec.cluster.nodes[0].count: required field missing; expected an "
                            "integer >= 1 with namePrefix"),
    ("- {namePrefix: w, count: 0}\n", "scenario.yaml:8: spec.cluster.nodes[0].count: expected an integer >= 1, got 0"),
    ("- {namePrefix: W-, count: 2}\n",
     'scenario.yaml:8: spec.cluster.nodes[0].namePrefix: "W-" makes the node name "W-0", which is not a valid '
     "DNS-1123 subdomain; expected lowercase letters, digits, '-' and '.', starting and ending with a letter or "
     "digit, at most 253 characters"),
    ("- {name: Node_1}\n", 'scenario.yaml:8: spec.cluster.nodes[0].name: "Node_1" is not a valid DNS-1123 subdomain; '
                           "expected lowercase letters, digits, '-' and '.', starting and ending with a letter or "
                           "digit, at most 253 characters"),
    ("- {name: a, podCIDR: 10.244.1.7/24}\n",
     'scenario.yaml:8: spec.cluster.nodes[0].podCIDR: "10.244.1.7/24" is not a valid IPv4 CIDR; expected a network '
     "address with a prefix length, e.g. 10.244.1.0/24"),
    ("- {name: a, podCIDR: 10.244.1.0}\n",
     'scenario.yaml:8: spec.cluster.nodes[0].podCIDR: "10.244.1.0" is not a valid IPv4 CIDR; expected a network '
     "address with a prefix length, e.g. 10.244.1.0/24"),
    ("- {name: a, podCIDR: 10.244.0.0/16}\n- {name: b, podCIDR: 10.244.3.0/24}\n",
     'scenario.yaml:9: spec.cluster.nodes[1].podCIDR: 10.244.3.0/24 overlaps the podCIDR 10.244.0.0/16 of node "a"; '
     "expected disjoint pod CIDRs"),
    ("- {namePrefix: w, count: 2, podCIDR: 10.1.0.0/16}\n",
     "scenario.yaml:8: spec.cluster.nodes[0].podCIDR: one podCIDR cannot serve the 2 nodes of namePrefix/count; "
     "leave it out to give each node its own /24"),
    ("- {name: a, runtime: docker}\n", 'scenario.yaml:8: spec.cluster.nodes[0].runtime: "docker" is not a valid '
                                       "runtime; expected one of: containerd, docker-18.06, docker-1.13"),
    ("- name: a\n  taints:\n  - {key: x, effect: NoRun}\n",
     'scenario.yaml:10: spec.cluster.nodes[0].taints[0].effect: "NoRun" is not a valid taint effect; expected one '
     "of: NoSchedule, PreferNoSchedule, NoExecute"),
    ("- name: a\n  taints:\n  - {effect: NoSchedule}\n",
     "scenario.yaml:10: spec.cluster.nodes[0].taints[0].key: required field missing; expected a taint key, "
     "e.g. dedicated"),
    ("- name: a\n  taints:\n  - {key: x, effect: NoSchedule}\n  - {key: x, value: y, effect: NoSchedule}\n",
     'scenario.yaml:11: spec.cluster.nodes[0].taints[1]: duplicate taint "x" with effect NoSchedule; expected one '
     "taint per key and effect"),
    ("- {name: a, zone: a, labels: {topology.kubernetes.io/zone: b}}\n",
     'scenario.yaml:8: spec.cluster.nodes[0].zone: "a" contradicts labels[topology.kubernetes.io/zone] "b"; '
     "expected one of them, or the same value"),
    ("- {name: a, labels: {replicas: 3}}\n",
     "scenario.yaml:8: spec.cluster.nodes[0].labels.replicas: expected a string (label values are strings: quote "
     "numbers and booleans), got 3"),
    ("- {name: a, labels: {bad key: x}}\n",
     'scenario.yaml:8: spec.cluster.nodes[0].labels[bad key]: "bad key" is not a valid label key; expected a name '
     "(at most 63 characters: letters, digits, '-', '_', '.') with an optional DNS subdomain prefix and '/'"),
    ("- {name: a, capacity: {memory: lots}}\n",
     'scenario.yaml:8: spec.cluster.nodes[0].capacity.memory: "lots" is not a quantity; expected e.g. 250m, 2, 1Gi, '
     "500Mi"),
    ("- {name: a, cpu: 4}\n", "scenario.yaml:8: spec.cluster.nodes[0].cpu: unknown field; known fields: name, "
                              "namePrefix, count, zone, labels, taints, capacity, runtime, podCIDR"),
    ("- a\n", 'scenario.yaml:8: spec.cluster.nodes[0]: expected a mapping, got "a"'),
])
def test_node_errors(items, message):
    assert error(nodes(items)) == message


def test_unknown_cluster_field():
    assert error("spec:\n  cluster:\n    etcd: {}\n") == \
        "scenario.yaml:7: spec.cluster.etcd: unknown field; known fields: nodes, kubelet, controllerManager, " \
        "apiServer, scheduler, featureGates"


# ------------------------------------------------------------------------------------ component errors

def test_unknown_kubelet_field_lists_known_fields():
    assert error("spec:\n  cluster:\n    kubelet:\n      fooBar: 1\n") == \
        "scenario.yaml:8: spec.cluster.kubelet.fooBar: unknown field; known fields: syncFrequency, " \
        "nodeStatusUpdateFrequency, nodeStatusReportFrequency, nodeLeaseDurationSeconds, runtimeRequestTimeout, " \
        "maxPods, evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMaxPodGracePeriod, " \
        "evictionPressureTransitionPeriod, evictionMonitoringPeriod, shutdownGracePeriod, " \
        "shutdownGracePeriodCriticalPods, serializeImagePulls, imageMinimumGCAge, allowedUnsafeSysctls, featureGates"


def test_unknown_feature_gate():
    # featuregate SetFromMap: "unrecognized feature gate"; podlife names the gates it models for the version
    assert error("spec:\n  cluster:\n    kubelet:\n      featureGates: {Nope: true}\n").startswith(
        "scenario.yaml:8: spec.cluster.kubelet.featureGates.Nope: unrecognized feature gate: Nope (not a gate "
        f"podlife models; modelled on {NEWEST}: AllowOverwriteTerminationGracePeriodSeconds, ")


@pytest.mark.parametrize("body, message", [
    ("kubelet: {nodeStatusUpdateFrequency: 10x}",
     f'spec.cluster.kubelet.nodeStatusUpdateFrequency: "10x" is not a duration; {DURATION_HINT}'),
    ("kubelet: {maxPods: -1}", "spec.cluster.kubelet.maxPods: expected an integer >= 0 (int32), got -1"),
    ("kubelet: {evictionHard: {memory.avail: 1Gi}}",
     'spec.cluster.kubelet.evictionHard[memory.avail]: unknown eviction signal "memory.avail"; expected one of: '
     "memory.available, nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, pid.available"),
    ("kubelet: {evictionHard: {memory.available: 1Gx}}",
     'spec.cluster.kubelet.evictionHard[memory.available]: "1Gx" is not an eviction threshold; expected a quantity '
     "(e.g. 100Mi) or a percentage (e.g. 10%)"),
    ("kubelet: {evictionHard: {nodefs.available: 110%}}",
     'spec.cluster.kubelet.evictionHard[nodefs.available]: "110%" is not a valid percentage; expected 0% … 100%'),
    ("kubelet: {evictionSoft: {memory.available: 1Gi}}",
     "spec.cluster.kubelet.evictionSoft[memory.available]: a soft eviction threshold needs a grace period; expected "
     "spec.cluster.kubelet.evictionSoftGracePeriod[memory.available] as well"),
    ("kubelet: {evictionSoftGracePeriod: {pid.available: soon}}",
     f'spec.cluster.kubelet.evictionSoftGracePeriod[pid.available]: "soon" is not a duration; {DURATION_HINT}'),
    ("kubelet: {evictionHard: [memory.available]}",
     "spec.cluster.kubelet.evictionHard: expected a mapping, got a list"),
    ("controllerManager: {nodeEvictionRate: fast}",
     'spec.cluster.controllerManager.nodeEvictionRate: expected a finite number >= 0, got "fast"'),
    ("apiServer: {defaultUnreachableTolerationSeconds: 1.5}",
     "spec.cluster.apiServer.defaultUnreachableTolerationSeconds: expected an integer >= 0, got 1.5"),
    ("scheduler: {podBackoff: 1}",
     "spec.cluster.scheduler.podBackoff: unknown field; known fields: podInitialBackoffSeconds, "
     "podMaxBackoffSeconds, percentageOfNodesToScore"),
])
def test_component_errors(body, message):
    assert error(f"spec:\n  cluster:\n    {body}\n") == f"scenario.yaml:7: {message}"


def test_soft_grace_period_without_threshold_warns():
    s = load("spec:\n  cluster:\n    kubelet:\n      evictionSoftGracePeriod: {memory.available: 1m}\n")
    assert s.warnings == ["scenario.yaml:8: spec.cluster.kubelet.evictionSoftGracePeriod[memory.available]: "
                          "grace period for a signal without a soft threshold; it has no effect"]


# ------------------------------------------------------------------------------------ object errors

@pytest.mark.parametrize("item, message", [
    ("- [1]", "scenario.yaml:7: spec.objects[0]: expected a mapping, got a list"),
    ("- {kind: Pod, metadata: {name: a}}",
     "scenario.yaml:7: spec.objects[0].apiVersion: required field missing; expected a non-empty string"),
    ("- {apiVersion: v1, kind: '', metadata: {name: a}}",
     "scenario.yaml:7: spec.objects[0].kind: expected a non-empty string, got an empty string"),
    ("- {apiVersion: v1, kind: Pod}",
     "scenario.yaml:7: spec.objects[0].metadata: required field missing; expected a mapping with name or generateName"),
    ("- {apiVersion: v1, kind: Pod, metadata: {labels: {}}}",
     "scenario.yaml:7: spec.objects[0].metadata.name: required field missing; expected metadata.name or "
     "metadata.generateName"),
    ("- {apiVersion: v1, kind: Pod, metadata: {name: 5}}",
     "scenario.yaml:7: spec.objects[0].metadata.name: expected a non-empty string, got 5"),
])
def test_object_shape_errors(item, message):
    assert error(f"spec:\n  objects:\n    {item}\n") == message


def test_objects_from_missing_file(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "scenario.yaml").write_text(HEAD + "spec:\n  objectsFrom:\n    - manifests/x.yaml\n")
    with pytest.raises(ScenarioError) as exc:
        load_scenario("sub/scenario.yaml")
    assert str(exc.value) == \
        'sub/scenario.yaml:7: spec.objectsFrom[0]: cannot read "sub/manifests/x.yaml": No such file or directory'


def test_objects_from_errors_name_the_manifest_file(tmp_path):
    write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n",
          "m.yaml")
    assert error("spec:\n  objectsFrom: [m.yaml]\n") == \
        "m.yaml:5: kind: required field missing; expected a non-empty string"
    write("apiVersion: v1\nkind: [\n", "m.yaml")
    assert error("spec:\n  objectsFrom: [m.yaml]\n") == \
        "m.yaml:3: invalid YAML: expected the node content, but found '<stream end>' (while parsing a flow node)"
    write("- 1\n", "m.yaml")
    assert error("spec:\n  objectsFrom: [m.yaml]\n") == "m.yaml:1: expected a mapping, got a list"


# ------------------------------------------------------------------------------------ action errors

def action(text: str) -> str:
    return "spec:\n  actions:\n    - " + textwrap.indent(textwrap.dedent(text), "      ").lstrip()


@pytest.mark.parametrize("text, message", [
    # the example of the format page
    ("at: 10x\ncordon: node-1\n", f'scenario.yaml:7: spec.actions[0].at: "10x" is not a duration; {DURATION_HINT}'),
    ("cordon: node-1\n", "scenario.yaml:7: spec.actions[0].at: required field missing; expected a duration "
                         "(e.g. 500ms, 3s, 1m30s, 2h or a number of seconds)"),
    ("at: -1s\ncordon: node-1\n", 'scenario.yaml:7: spec.actions[0].at: "-1s" is negative; expected a duration >= 0'),
    ("at: 1s\n", "scenario.yaml:7: spec.actions[0]: expected exactly one verb among delete, create, apply, scale, "
                 "patch, cordon, uncordon, drain, evict, fault, join, leave; found none"),
    ("at: 1s\ncordon: node-1\ndrain: node-1\n",
     "scenario.yaml:7: spec.actions[0]: expected exactly one verb among delete, create, apply, scale, patch, cordon, "
     "uncordon, drain, evict, fault, join, leave; found cordon, drain"),
    ("at: 1s\ncordon: node-1\nreplicas: 3\n",
     "scenario.yaml:9: spec.actions[0].replicas: unknown field; known fields: at, cordon"),
    ("at: 1s\ndelete: web\n", 'scenario.yaml:8: spec.actions[0].delete: "web" is not kind/name; expected e.g. '
                              "pod/web-0 or deployment/web"),
    ("at: 1s\ndelete: pod/a/b\n", 'scenario.yaml:8: spec.actions[0].delete: "pod/a/b" is not kind/name; expected '
                                  "e.g. pod/web-0 or deployment/web"),
    ("at: 1s\ndelete: pod/x\nforce: true\ngracePeriodSeconds: 5\n",
     "scenario.yaml:10: spec.actions[0].gracePeriodSeconds: 5 with force: true; expected 0 or no gracePeriodSeconds "
     "(as kubectl refuses --force with --grace-period greater than 0)"),
    ("at: 1s\ndelete: pod/x\nforce: yes please\n",
     'scenario.yaml:9: spec.actions[0].force: expected true or false, got "yes please"'),
    ("at: 1s\ndelete: pod/x\ngracePeriodSeconds: 1.5\n",
     "scenario.yaml:9: spec.actions[0].gracePeriodSeconds: expected an integer, got 1.5"),
    ("at: 1s\ndelete: pod/x\npropagationPolicy: background\n",
     'scenario.yaml:9: spec.actions[0].propagationPolicy: "background" is not a valid propagation policy; expected '
     "one of: Background, Foreground, Orphan"),
    ("at: 1s\ndelete: pod/x\nnamespace: Prod\n",
     'scenario.yaml:9: spec.actions[0].namespace: "Prod" is not a valid DNS-1123 label; expected lowercase letters, '
     "digits and '-', starting and ending with a letter or digit, at most 63 characters"),
    ("at: 1s\nscale: deployment/web\n",
     "scenario.yaml:7: spec.actions[0].replicas: required field missing; expected an integer >= 0"),
    ("at: 1s\nscale: deployment/web\nreplicas: -1\n",
     "scenario.yaml:9: spec.actions[0].replicas: expected an integer >= 0 (int32), got -1"),
    ("at: 1s\npatch: deployment/web\nmergePatch: '{}'\n",
     'scenario.yaml:9: spec.actions[0].mergePatch: expected a mapping, got "{}"'),
    ("at: 1s\ncreate: {apiVersion: v1, kind: Pod}\n",
     "scenario.yaml:8: spec.actions[0].create.metadata: required field missing; expected a mapping with name or "
     "generateName"),
    ("at: 1s\napply: {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: a}}\nnamespace: b\n",
     'scenario.yaml:9: spec.actions[0].namespace: "b" differs from the manifest\'s metadata.namespace "a"; expected '
     "the same namespace or only one of them"),
    ("at: 1s\ncordon: [node-1]\n", "scenario.yaml:8: spec.actions[0].cordon: expected a node name, got a list"),
    ("- 1s\n", 'scenario.yaml:7: spec.actions[0]: expected a mapping, got a list'),
])
def test_action_errors(text, message):
    assert error(action(text)) == message


@pytest.mark.parametrize("fault, message", [
    ("{node: node-1}", "spec.actions[0].fault.type: required field missing; expected a fault type, one of "
                       "ContainerHang, LostExitEvent, RuntimeDown, RuntimeRestart, KubeletRestart, KubeletStop, "
                       "KubeletStart, NetworkPartition, NodePowerOff, NodeShutdown, MemoryUsage, DiskUsage, OOMKill, "
                       "ImagePullFailure"),
    ("{type: DiskFull, node: node-1}",
     'spec.actions[0].fault.type: "DiskFull" is not a valid fault type; expected one of: ContainerHang, '
     "LostExitEvent, RuntimeDown, RuntimeRestart, KubeletRestart, KubeletStop, KubeletStart, NetworkPartition, "
     "NodePowerOff, NodeShutdown, MemoryUsage, DiskUsage, OOMKill, ImagePullFailure"),
    ("{type: ContainerHang, node: node-1, pod: web}",
     "spec.actions[0].fault.container: required field missing; expected a container name (a ContainerHang fault "
     "needs node, pod, container)"),
    ("{type: MemoryUsage, node: node-1}",
     "spec.actions[0].fault.value: required field missing; expected a quantity, e.g. 30Gi (a MemoryUsage fault "
     "needs node, value)"),
    ("{type: ImagePullFailure}",
     "spec.actions[0].fault.image: required field missing; expected an image reference (a ImagePullFailure fault "
     "needs image)"),
    ("{type: RuntimeDown, node: node-1, pod: web}",
     "spec.actions[0].fault.pod: unknown field; known fields: type, node, for"),
    ("{type: ImagePullFailure, image: x, container: app}",
     "spec.actions[0].fault.container: unknown field; known fields: type, image, node, for"),
    ("{type: RuntimeDown, node: node-2}",
     'spec.actions[0].fault.node: "node-2" is not a node of this scenario; expected one of the nodes: node-1'),
    ("{type: OOMKill, node: node-1, pod: a/b/c, container: app}",
     'spec.actions[0].fault.pod: "a/b/c" is not a pod reference; expected namespace/name or name, e.g. default/web-0'),
    ("{type: RuntimeDown, node: node-1, for: forever}",
     f'spec.actions[0].fault.for: "forever" is not a duration; {DURATION_HINT}'),
    ("{type: DiskUsage, node: node-1, value: 90 percent}",
     'spec.actions[0].fault.value: "90 percent" is not a quantity; expected e.g. 250m, 2, 1Gi, 500Mi'),
    ("RuntimeDown", 'spec.actions[0].fault: expected a mapping, got "RuntimeDown"'),
])
def test_fault_errors(fault, message):
    assert error(action(f"at: 1s\nfault: {fault}\n")) == f"scenario.yaml:8: {message}"


# -------------------------------------------------------------------------------- expectation errors

@pytest.mark.parametrize("text, message", [
    ("phase: Running\n", "scenario.yaml:7: spec.expect[0].object: required field missing; expected kind/name or "
                         "kind/namespace/name, e.g. pod/web-0"),
    ("object: web\ndeleted: true\n", 'scenario.yaml:7: spec.expect[0].object: "web" is not kind/name or '
                                     "kind/namespace/name; expected e.g. pod/web-0, pod/default/web-0 or node/node-1"),
    ("object: node/x/node-1\ndeleted: true\n",
     'scenario.yaml:7: spec.expect[0].object: "node/x/node-1": nodes are cluster-scoped; expected node/NAME'),
    ("object: pod/a/web\nnamespace: b\ndeleted: true\n",
     'scenario.yaml:8: spec.expect[0].namespace: "b" differs from the namespace "a" in object; expected the same '
     "namespace or only one of them"),
    ("object: pod/web\n", "scenario.yaml:7: spec.expect[0]: expected exactly one check among deleted, phase, ready, "
                          "condition, containerState, nodeReady, taint; found none"),
    ("object: pod/web\nphase: Running\nready: true\n",
     "scenario.yaml:7: spec.expect[0]: expected exactly one check among deleted, phase, ready, condition, "
     "containerState, nodeReady, taint; found phase, ready"),
    ("object: pod/web\nnodeReady: 'True'\n",
     'scenario.yaml:8: spec.expect[0].nodeReady: needs a node object (e.g. object: node/NAME), got "pod/web"'),
    ("object: pod/web\ntaint: x\n",
     'scenario.yaml:8: spec.expect[0].taint: needs a node object (e.g. object: node/NAME), got "pod/web"'),
    ("object: node/n\nphase: Running\n",
     'scenario.yaml:8: spec.expect[0].phase: needs a pod object (e.g. object: pod/NAME), got "node/n"'),
    ("object: node/n\ncontainerState: {name: a, state: running}\n",
     'scenario.yaml:8: spec.expect[0].containerState: needs a pod object (e.g. object: pod/NAME), got "node/n"'),
    ("object: pod/web\nphase: running\n",
     'scenario.yaml:8: spec.expect[0].phase: "running" is not a valid pod phase; expected one of: Pending, Running, '
     "Succeeded, Failed, Unknown"),
    ("object: pod/web\nready: 'yes'\n", 'scenario.yaml:8: spec.expect[0].ready: expected true or false, got "yes"'),
    ("object: pod/web\ncondition: {type: Ready, status: maybe}\n",
     'scenario.yaml:8: spec.expect[0].condition.status: "maybe" is not a valid status; expected one of: True, False, '
     "Unknown"),
    ("object: pod/web\ncondition: {status: 'True'}\n",
     "scenario.yaml:8: spec.expect[0].condition.type: required field missing; expected a condition type, e.g. Ready"),
    ("object: pod/web\ncontainerState: {name: app, state: done}\n",
     'scenario.yaml:8: spec.expect[0].containerState.state: "done" is not a valid container state; expected one of: '
     "waiting, running, terminated"),
    ("object: pod/web\ncontainerState: {name: app, state: running, exitCode: 1}\n",
     "scenario.yaml:8: spec.expect[0].containerState.exitCode: only a terminated container has an exit code; "
     "expected state: terminated, got running"),
    ("object: node/n\ntaint: {key: x, effect: Never}\n",
     'scenario.yaml:8: spec.expect[0].taint.effect: "Never" is not a valid taint effect; expected one of: '
     "NoSchedule, PreferNoSchedule, NoExecute"),
    ("object: pod/web\nphase: Running\nby: 1s\nat: 2s\n",
     "scenario.yaml:7: spec.expect[0]: conflicting timing at, by; expected one of by, at, always, or after "
     "(optionally with by)"),
    ("object: pod/web\nphase: Running\nalways: [1s]\n",
     "scenario.yaml:9: spec.expect[0].always: expected a list [from, to] of two durations, got a list of 1 item"),
    ("object: pod/web\nphase: Running\nalways: [1m, 1s]\n",
     "scenario.yaml:9: spec.expect[0].always: from 1m0s is after to 1s; expected from <= to"),
    ("object: pod/web\nphase: Running\nalways: [1s, 10x]\n",
     f'scenario.yaml:9: spec.expect[0].always[1]: "10x" is not a duration; {DURATION_HINT}'),
    ("object: pod/web\nphase: Running\nafter: 1m\nby: 10s\n",
     "scenario.yaml:9: spec.expect[0].after: 1m0s is after by 10s; expected after <= by"),
    ("object: pod/web\nphase: Running\nwithin: 1m\n",
     "scenario.yaml:9: spec.expect[0].within: unknown field; known fields: object, namespace, description, deleted, "
     "phase, ready, condition, containerState, nodeReady, taint, by, at, after, always"),
])
def test_expectation_errors(text, message):
    body = "spec:\n  expect:\n    - " + textwrap.indent(text, "      ").lstrip()
    assert error(body) == message


@pytest.mark.parametrize("fields, message", [
    ("mergePatch: {spec: {}}, strategicMergePatch: {spec: {}}", "expected exactly one of mergePatch"),
    ("subresource: status", "mergePatch: required field missing; expected a JSON merge patch mapping"),
    ("mergePatch: {status: {}}, subresource: scale", '"scale" is not a valid subresource; expected one of: status'),
])
def test_patch_action_needs_one_patch_and_a_known_subresource(fields, message):
    got = error(f"spec:\n  actions: [{{at: 1s, patch: pod/web, {fields}}}]\n")
    assert "spec.actions[0]" in got and message in got


def test_default_pod_cidr_moves_past_taken_blocks_and_ignores_ipv6():
    import ipaddress

    from podlife.cluster.spec import default_pod_cidr

    net = ipaddress.ip_network
    assert default_pod_cidr(0, 0, [net("::/0")]) == (net("10.244.1.0/24"), 0)
    # node 1 would have 10.244.2.0/24; a /23 taken over 10.244.2-3 moves it, and the nodes after it, on by two
    assert default_pod_cidr(1, 0, [net("10.244.2.0/23")]) == (net("10.244.4.0/24"), 2)


# ------------------------------------------------------------------------------- updates refused at load

_DEPLOYMENT = ("{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {selector: {matchLabels: {a: b}}, "
               "template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c, image: x}]}}}}")


def test_an_update_is_checked_against_the_object_as_the_api_server_stored_it():
    # the pod was stored with what admission added (DefaultTolerationSeconds' tolerations, Priority's priority, the
    # ServiceAccount's account and token volume): an apply whose spec leaves them out changes them, and the API
    # server's pod update
    # validation (validation.go ValidatePodUpdate) names the tolerations first, as the run's own write would
    message = error("""\
        spec:
          objects:
          - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: x}]}}
          actions:
          - {at: 1s, apply: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: y}]}}}
        """)
    assert message.startswith('scenario.yaml:9: spec.actions[0].apply: Pod "p" is invalid: spec.tolerations: '
                              "Forbidden: existing toleration can not be modified except its tolerationSeconds; "
                              "spec: Forbidden: pod updates may not change fields other than")
    # and the ServiceAccount plugin's token volume and its mount
    assert "\n  spec.serviceAccountName: 'default' -> None\n" in message
    assert "\n  spec.containers[0].volumeMounts: [{'mountPath': '/var/run/secrets/kubernetes.io/serviceaccount', " \
           "'name': 'kube-api-access-" in message
    last = message.splitlines()[-1]
    assert last.startswith("  spec.volumes: [{'name': 'kube-api-access-") and \
        last.endswith("-> None (the API server refuses this update whenever it comes)")


def test_a_status_patch_keeps_the_stored_spec_so_it_is_not_refused_at_load():
    # deploymentStatusStrategy.PrepareForUpdate (pkg/registry/apps/deployment/strategy.go) resets spec to the
    # stored one: a negative replicas in a status patch is dropped, not refused
    sc = load(f"""\
        spec:
          objects:
          - {_DEPLOYMENT}
          actions:
          - {{at: 1s, patch: deployment/d, subresource: status, mergePatch: {{spec: {{replicas: -1}}}}}}
        """)
    assert [a.subresource for a in sc.actions] == ["status"]
    message = error(f"""\
        spec:
          objects:
          - {_DEPLOYMENT}
          actions:
          - {{at: 1s, patch: deployment/d, mergePatch: {{spec: {{replicas: -1}}}}}}
        """)
    assert message == ('scenario.yaml:9: spec.actions[0].mergePatch: Deployment "d" is invalid: spec.replicas: '
                       "Invalid value: -1: must be greater than or equal to 0 (the API server refuses this update "
                       "whenever it comes)")


def test_an_update_to_an_object_the_api_server_does_not_create_is_left_to_the_run():
    # the Deployment's namespace does not exist: its create fails as the run starts (naming the object), so the
    # later patch has nothing to update at load either
    sc = load(f"""\
        spec:
          objects:
          - {_DEPLOYMENT.replace("name: d}", "name: d, namespace: missing}")}
          actions:
          - {{at: 1s, patch: deployment/d, namespace: missing, mergePatch: {{spec: {{replicas: -1}}}}}}
        """)
    assert [a.verb for a in sc.actions] == ["patch"]

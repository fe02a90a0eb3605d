"""A corpus of bad inputs: each ends quickly with exit status 2 and a message naming file, line and field.

Text cases are written here (the scenario head is added); files that are not ordinary text live in
tests/bad_inputs/. Every case runs through the real CLI in this process, with a time bound.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main
from tests.helpers import within

HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n"
CORPUS = Path(__file__).parent / "bad_inputs"
SECONDS = 10
POD = "  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: x%s}]}}\n"

# (case, body after "spec:", the message after "bad.yaml:")
TEXT_CASES = [
    ("until zero", "  until: 0\n", "5: spec.until: 0 is not greater than 0; expected a duration > 0 and at most "
                                  "168h0m0s"),
    ("until beyond a week", "  until: 100000h\n", '5: spec.until: "100000h" is longer than a week; expected a '
                                                  "duration > 0 and at most 168h0m0s"),
    ("until negative", "  until: -5s\n", '5: spec.until: "-5s" is negative; expected a duration >= 0'),
    ("status frequency zero", "  cluster: {kubelet: {nodeStatusUpdateFrequency: 0s}}\n",
     '5: spec.cluster.kubelet.nodeStatusUpdateFrequency: "0s" must be greater than 0; expected a duration (e.g. '
     "500ms, 3s, 1m30s, 2h or a number of seconds) > 0"),
    ("monitor period zero", "  cluster: {controllerManager: {nodeMonitorPeriod: 0s}}\n",
     '5: spec.cluster.controllerManager.nodeMonitorPeriod: "0s" must be greater than 0; expected a duration (e.g. '
     "500ms, 3s, 1m30s, 2h or a number of seconds) > 0"),
    ("lease duration zero", "  cluster: {kubelet: {nodeLeaseDurationSeconds: 0}}\n",
     "5: spec.cluster.kubelet.nodeLeaseDurationSeconds: expected an integer >= 1 (int32), got 0"),
    ("scheduler backoff order", "  cluster: {scheduler: {podInitialBackoffSeconds: 20, podMaxBackoffSeconds: 10}}\n",
     "5: spec.cluster.scheduler.podMaxBackoffSeconds: 10 must be greater than or equal to podInitialBackoffSeconds "
     "(20)"),
    ("percentage of nodes", "  cluster: {scheduler: {percentageOfNodesToScore: 150}}\n",
     "5: spec.cluster.scheduler.percentageOfNodesToScore: 150 is not in the range 0-100"),
    ("a billion nodes", "  cluster: {nodes: [{namePrefix: n, count: 1000000000}]}\n",
     "5: spec.cluster.nodes[0].count: 1,000,000,000 nodes; podlife runs clusters of at most 5,000 nodes "
     "(Kubernetes' supported maximum)"),
    ("unknown capacity resource", "  cluster: {nodes: [{name: n1, capacity: {cpu: '4', bananas: '3'}}]}\n",
     "5: spec.cluster.nodes[0].capacity.bananas: unknown resource name; expected cpu, memory, pods, "
     "ephemeral-storage, hugepages-<size> or a fully-qualified extended resource such as nvidia.com/gpu"),
    ("capacity exponent", "  cluster: {nodes: [{name: n1, capacity: {cpu: '1e999999999'}}]}\n",
     '5: spec.cluster.nodes[0].capacity.cpu: "1e999999999" is not a quantity: an exponent of 999999999 is beyond '
     "what podlife computes (at most ±60)"),
    ("capacity malformed", "  cluster: {nodes: [{name: n1, capacity: {memory: 1..5Gi}}]}\n",
     '5: spec.cluster.nodes[0].capacity.memory: "1..5Gi" is not a quantity; expected e.g. 250m, 2, 1Gi, 500Mi'),
    ("a billion replicas", "  objects:\n  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: "
                           "{replicas: 1000000000, selector: {matchLabels: {a: b}}, template: {metadata: {labels: "
                           "{a: b}}, spec: {containers: [{name: a, image: x}]}}}}\n",
     "6: spec.objects[0].spec.replicas: 1,000,000,000 pods; podlife runs workloads of at most 150,000 pods"),
    ("replicas as a string", "  objects:\n  - {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: "
                             "{replicas: '3', selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, "
                             "spec: {containers: [{name: a, image: x}]}}}}\n",
     '6: spec.objects[0].spec.replicas: expected an integer (int32), got the string "3"'),
    ("grace period as a float", "  objects:\n" + POD.replace("spec: {containers",
                                                           "spec: {terminationGracePeriodSeconds: 1.5, containers")
     % "", "6: spec.objects[0].spec.terminationGracePeriodSeconds: expected an integer (int64), got the number 1.5"),
    ("grace period too large", "  objects:\n" + POD.replace("spec: {containers",
                                                          "spec: {terminationGracePeriodSeconds: 10000000000000000000"
                                                          "000, containers") % "",
     "6: spec.objects[0].spec.terminationGracePeriodSeconds: 10000000000000000000000 does not fit in an int64"),
    ("probe period as a string", "  objects:\n" + POD % ", livenessProbe: {exec: {command: [x]}, periodSeconds: "
                                                        "ten}",
     '6: spec.objects[0].spec.containers[0].livenessProbe.periodSeconds: expected an integer (int32), got the '
     'string "ten"'),
    ("command as a string", "  objects:\n" + POD % ", command: sleep 5",
     '6: spec.objects[0].spec.containers[0].command: expected a list, got the string "sleep 5"'),
    ("command with a number", "  objects:\n" + POD % ", command: [sleep, 5]",
     "6: spec.objects[0].spec.containers[0].command[1]: expected a string, got the number 5"),
    ("pod spec as a list", "  objects:\n  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: [1]}\n",
     "6: spec.objects[0].spec: expected a mapping, got a list"),
    ("quantity 10Zi", "  objects:\n" + POD % ", resources: {limits: {memory: 10Zi}}",
     '6: spec.objects[0].spec.containers[0].resources.limits.memory: the string "10Zi" is not a quantity: '
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("quantity 1..5Gi", "  objects:\n" + POD % ", resources: {requests: {memory: 1..5Gi}}",
     '6: spec.objects[0].spec.containers[0].resources.requests.memory: the string "1..5Gi" is not a quantity: '
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("apiVersion of another kind", "  objects:\n  - {apiVersion: apps/v1, kind: Pod, metadata: {name: p}}\n",
     '6: spec.objects[0].apiVersion: no matches for kind "Pod" in version "apps/v1" on Kubernetes 1.37; expected '
     "apiVersion v1"),
    ("extensions Deployment", "  objects:\n  - {apiVersion: extensions/v1beta1, kind: Deployment, metadata: "
                              "{name: d}}\n",
     '6: spec.objects[0].apiVersion: no matches for kind "Deployment" in version "extensions/v1beta1" on '
     "Kubernetes 1.37; expected apiVersion apps/v1"),
    ("misspelt field", "  objects:\n" + POD.replace("spec: {containers", "spec: {terminationGracePeriod: 5, "
                                                                       "containers") % "",
     '6: spec.objects[0].spec.terminationGracePeriod: unknown field in PodSpec; did you mean '
     '"terminationGracePeriodSeconds"?'),
    ("lifecycle prestop", "  objects:\n" + POD % ", lifecycle: {prestop: {exec: {command: [x]}}}",
     '6: spec.objects[0].spec.containers[0].lifecycle.prestop: unknown field in Lifecycle; did you mean "preStop"?'),
    ("init restartPolicy on 1.18", "  kubernetesVersion: '1.18'\n  objects:\n" + POD.replace(
        "spec: {containers", "spec: {initContainers: [{name: i, image: x, restartPolicy: Always}], containers") % "",
     "7: spec.objects[0].spec.initContainers[0].restartPolicy: unknown field in Container: Kubernetes 1.18 does "
     "not have it (it exists from 1.28)"),
    ("Sidecar type on 1.34", "  objects:\n" + POD % ", lifecycle: {type: Sidecar}",
     "6: spec.objects[0].spec.containers[0].lifecycle.type: unknown field in Lifecycle; known fields: postStart, "
     "preStop, stopSignal"),
    ("sleep zero on 1.32", "  kubernetesVersion: '1.32'\n  objects:\n" + POD % ", lifecycle: {preStop: {sleep: "
                                                                                 "{seconds: 0}}}",
     '7: spec.objects[0]: Pod "p" is invalid: spec.containers[0].lifecycle.preStop.sleep: Invalid value: 0: must be '
     "greater than 0 and less than terminationGracePeriodSeconds (30)"),
    ("claim template without a name", "  objects:\n  - {apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s}, "
                                      "spec: {serviceName: s, selector: {matchLabels: {a: b}}, template: {metadata: "
                                      "{labels: {a: b}}, spec: {containers: [{name: a, image: x}]}}, "
                                      "volumeClaimTemplates: [{metadata: {}, spec: {accessModes: [ReadWriteOnce], "
                                      "resources: {requests: {storage: 1Gi}}}}]}}\n",
     '6: spec.objects[0]: StatefulSet "s" is invalid: spec.volumeClaimTemplates[0].metadata.name: Required value'),
    ("CRD with a broken schema",
     "  objects:\n  - {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, "
     "metadata: {name: ws.example.com}, spec: {group: example.com, scope: Namespaced, names: "
     "{plural: ws, kind: W}, versions: [{name: v1, served: true, storage: true, schema: "
     "{openAPIV3Schema: {type: object, properties: {spec: {type: bogus}}}}}]}}\n",
     "6: spec.objects[0].spec.versions[0].schema.openAPIV3Schema: not a valid structural schema: "
     "'bogus' is not valid under any of the given schemas"),
    ("behaviour cpu", "  behaviors: [{container: a, behavior: {cpu: lots}}]\n",
     "5: spec.behaviors[0].behavior.cpu: 'lots' is not a cpu quantity, or a mapping of seconds after the start to "
     "cpu quantities"),
    ("evict a deployment", "  actions: [{at: 1s, evict: deployment/web}]\n",
     '5: spec.actions[0].evict: "deployment/web" is not a pod; expected pod/NAME (evictions are for pods)'),
    ("drain timeout", "  actions: [{at: 1s, drain: node-1, timeout: -1s}]\n",
     '5: spec.actions[0].timeout: "-1s" is negative; expected a duration >= 0'),
    ("scale to a billion", "  actions: [{at: 1s, scale: deployment/web, replicas: 1000000000}]\n",
     "5: spec.actions[0].replicas: 1,000,000,000 pods; podlife runs workloads of at most 150,000 pods"),
]


def _run(path: Path, *extra: str) -> tuple[int, str, float]:
    start = time.perf_counter()
    res = within(SECONDS, CliRunner().invoke, main, ["run", str(path), "--quiet", *extra], what=path.name)
    return res.exit_code, res.output.strip(), time.perf_counter() - start


@pytest.mark.parametrize("case, body, message", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_text_case(tmp_path, case, body, message):
    path = tmp_path / "bad.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    code, out, _ = _run(path)
    assert (code, out.splitlines()[-1]) == (2, f"{path}:{message}")


@pytest.mark.parametrize("name, message", [
    ("nul-byte.yaml", "5: invalid YAML: unacceptable character #x0000 (control characters are not allowed)"),
    ("latin-1.yaml", "5: not UTF-8 text: byte 0xe9 cannot be decoded; expected a UTF-8 YAML file"),
    ("deep-nesting.yaml", " invalid YAML: nested too deeply to read; expected an ordinary document"),
    ("alias-bomb.yaml", None),
    ("objects-from-bomb.yaml", None),
])
def test_file_case(tmp_path, name, message):
    for f in CORPUS.iterdir():
        shutil.copy(f, tmp_path / f.name)
    code, out, _ = _run(tmp_path / name)
    assert code == 2
    if message is not None:
        assert out.splitlines()[-1] == f"{tmp_path / name}:{message}"
    else:
        assert "more than 1,000,000 values once YAML aliases are expanded" in out


def test_alias_bomb_in_set(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(HEAD + "  until: 10s\n")
    bomb = "[" + ",".join(["&a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]"] +
                          [f"&a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]) + "]"
    code, out, _ = _run(path, "--set", f"metadata.description={bomb}")
    assert code == 2 and "more than 1,000,000 values once YAML aliases are expanded" in out


def test_alias_bombs_are_refused_before_they_are_expanded(tmp_path):
    # the expanded size is counted over the distinct YAML nodes (a few dozen here), not built: CPU time stays far
    # below what building a million values takes (seconds), in the scenario, in objectsFrom and in --set
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import load_scenario

    for f in CORPUS.iterdir():
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "ok.yaml").write_text(HEAD + "  until: 10s\n")
    bomb = "[" + ",".join(["&a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]"] +
                          [f"&a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]) + "]"
    cases = [(tmp_path / "alias-bomb.yaml", [], f"{tmp_path / 'alias-bomb.yaml'}:5: spec.l6[0][4][8][3][1][6][5]: "),
             (tmp_path / "objects-from-bomb.yaml", [], f"{tmp_path / 'manifests-alias-bomb.yaml'}:1: "
                                                       "l6[0][4][8][3][1][7][0]: "),
             (tmp_path / "ok.yaml", [f"metadata.description={bomb}"], f"{tmp_path / 'ok.yaml'}: --set ")]
    for path, overrides, where in cases:
        start = time.process_time()
        with pytest.raises(ScenarioError) as exc:
            load_scenario(str(path), overrides)
        assert time.process_time() - start < 0.5, path.name
        assert str(exc.value).startswith(where), str(exc.value)
        assert str(exc.value).endswith("more than 1,000,000 values once YAML aliases are expanded; expected a "
                                       "document of ordinary size")


HELLO = Path(__file__).parent.parent / "examples" / "hello.yaml"


@pytest.mark.parametrize("args, message", [
    (["--until", "0"], f'{HELLO}: spec.until: "0" is not greater than 0; expected a duration > 0 and at most '
                       "168h0m0s (set by --until)"),
    (["--until", "abc"], f'{HELLO}: spec.until: "abc" is not a duration; expected e.g. 500ms, 3s, 1m30s, 2h or a '
                         "number of seconds (set by --until)"),
    (["--seed", "-1"], f"{HELLO}: spec.seed: expected an integer >= 0, got -1 (set by --seed)"),
    (["--at", "5q"], '--at: unknown unit "q" in duration "5q"'),
    (["--set", "spec.until"], f'{HELLO}: --set: "spec.until": expected PATH=VALUE'),
    (["--set", "=3"], f'{HELLO}: --set: "=3": empty path; expected PATH=VALUE'),
    (["--kubernetes-version", "2.0"], None),
    (["--delete", "pod/web"], f"{HELLO}: --delete: only for plain manifests; a Scenario lists its deletes in "
                              "spec.actions"),
    (["--report", "/nonexistent/dir/x.json"], "/nonexistent/dir/x.json: No such file or directory"),
])
def test_command_line_case(args, message):
    code, out, _ = _run(HELLO, *args)
    assert code == 2
    if message is not None:
        assert out.splitlines()[-1] == message

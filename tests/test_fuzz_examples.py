"""Random mutations of the example scenarios never crash or hang podlife: the CLI exits 0, 1 or 2.

Each case takes an example, changes one place in it (deletes a key, adds a misspelt one, or replaces a value
with one of the usual suspects: huge, negative, zero, NaN, wrong type, malformed quantity or duration) and runs
it through the real CLI in this process with a per-case time bound. Derandomized, so CI sees the same cases.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from podlife.cli import main
from tests.helpers import within

ROOT = Path(__file__).parent.parent / "examples"
EXAMPLES = sorted(p for p in ROOT.rglob("*.yaml")
                  if any((d or {}).get("kind") == "Scenario" for d in yaml.safe_load_all(p.read_text())))
SUSPECTS: list[Any] = [None, 0, -1, 2 ** 63, 10 ** 30, 1.5, float("nan"), float("inf"), "", "x", "1..5Gi", "10Zi",
                       "-5s", "1e999999", "0s", [], {}, [None], {"x": 1}, True, "é\u0000"]
SECONDS = 30


def _places(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _places(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _places(v, prefix + (i,))
    return out


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(example=st.sampled_from(EXAMPLES), pick=st.integers(0, 10 ** 6), op=st.sampled_from(["delete", "add", "set"]),
       value=st.sampled_from(SUSPECTS))
def test_a_mutated_example_ends_with_0_1_or_2(tmp_path_factory, example, pick, op, value):
    doc = yaml.safe_load(example.read_text())
    doc = copy.deepcopy(doc)
    places = _places(doc)
    place = places[pick % len(places)]
    parent = doc
    for seg in place[:-1]:
        parent = parent[seg]
    if op == "delete" and isinstance(parent, dict):
        del parent[place[-1]]
    elif op == "add" and isinstance(parent, dict):
        parent[f"{place[-1]}x"] = value
    else:
        parent[place[-1]] = value
    # next to the original so relative objectsFrom paths still resolve
    target = example.parent / f"_mutated_{example.stem}.yaml"
    try:
        target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
        result = within(SECONDS, CliRunner().invoke, main, ["run", str(target), "--quiet", "--until", "600s"],
                        what=f"{example.name} {place} {op} {value!r}")
    finally:
        target.unlink(missing_ok=True)
    assert result.exit_code in (0, 1, 2), (f"{example.name} {place} {op} {value!r}: exit {result.exit_code}\n"
                                           f"{result.output[-500:]}")


MANIFESTS = [d for f in sorted(ROOT.rglob("*-manifests.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(pick=st.integers(0, 10 ** 6), op=st.sampled_from(["delete", "add", "set"]), value=st.sampled_from(SUSPECTS))
def test_a_mutated_manifest_ends_with_0_1_or_2(tmp_path_factory, pick, op, value):
    """The objectsFrom manifests of the examples (StatefulSet with claims, CRD and custom resource, RBAC, GPU
    Deployment, ...), inlined into one scenario, with one place changed."""
    doc = {"apiVersion": "podlife/v1alpha1", "kind": "Scenario", "metadata": {"name": "mutated"},
           "spec": {"until": "60s", "cluster": {"nodes": [{"name": "n1", "capacity": {
               "cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "2"}}]},
               "objects": copy.deepcopy(MANIFESTS)}}
    places = _places(doc["spec"]["objects"])
    place = ("spec", "objects") + places[pick % len(places)]
    parent: Any = doc
    for seg in place[:-1]:
        parent = parent[seg]
    if op == "delete" and isinstance(parent, dict):
        del parent[place[-1]]
    elif op == "add" and isinstance(parent, dict):
        parent[f"{place[-1]}x"] = value
    else:
        parent[place[-1]] = value
    target = tmp_path_factory.mktemp("m") / "mutated.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    result = within(SECONDS, CliRunner().invoke, main, ["run", str(target), "--quiet"], what=f"{place} {op} {value!r}")
    assert result.exit_code in (0, 1, 2), f"{place} {op} {value!r}: exit {result.exit_code}\n{result.output[-500:]}"

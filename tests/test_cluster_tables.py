"""The cluster's tables: the fault kinds (read by the loader, the live API and the docs) and the controllers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from podlife.cluster.controllers import CONTROLLERS, KUBERNETES_SERVICE
from podlife.cluster.faults import FAULTS

DOC = Path(__file__).resolve().parents[1] / "docs" / "scenario-format.md"


def _doc_fault_rows() -> dict[str, str]:
    """docs/scenario-format.md §2.2's fault table: type -> its fields column (a row may name several types)."""
    text = DOC.read_text()
    table = text[text.index("Fault types ("):text.index("### 2.3")]
    rows: dict[str, str] = {}
    for line in table.splitlines():
        m = re.match(r"\| ([A-Z][A-Za-z /]+) \| ([^|]+) \|", line)
        if m:
            for name in m.group(1).split(" / "):
                rows[name.strip()] = m.group(2).strip()
    return rows


def test_the_docs_list_every_fault_kind_with_its_fields() -> None:
    def fields(required: tuple[str, ...], optional: tuple[str, ...]) -> str:
        return ", ".join(required) + (f" (and {', '.join(optional)}, optional)" if optional else "")

    assert _doc_fault_rows() == {name: fields(k.required, k.optional) for name, k in FAULTS.items()}


def test_the_loader_reads_the_fault_table() -> None:
    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.faultspec import load_fault

    assert (FAULTS["ImagePullFailure"].required, FAULTS["ImagePullFailure"].optional) == (("image",), ("node",))
    assert FAULTS["OOMKill"].required == ("node", "pod", "container")
    with pytest.raises(ScenarioError) as e:
        load_fault({"type": "Nope", "node": "n"}, ["n"])
    assert str(e.value).endswith(f"expected one of: {', '.join(FAULTS)}")
    assert [n for n, k in FAULTS.items() if k.needs_container] == ["ContainerHang", "LostExitEvent", "OOMKill"]


def test_controllers_start_in_the_table_order() -> None:
    names = [d.name for d in CONTROLLERS]
    assert len(set(names)) == len(names)
    # the API server's own Service first, the node lifecycle trio last, as they started before the table
    assert names[0] == KUBERNETES_SERVICE
    assert names[-3:] == ["node-lifecycle-controller", "taint-eviction-controller",
                          "pod-garbage-collector-controller"]
    assert all(d.required_gates == () for d in CONTROLLERS)   # every controller runs in every modelled version


def test_a_fault_kind_is_one_row_and_its_code(tmp_path, monkeypatch) -> None:
    # CONTRIBUTING.md's example, added at run time: the loader takes the new type, start_fault applies it and
    # `for` heals it, through NodeFaults only
    from podlife.cluster import faults
    from tests.helpers import records, run_text

    def isolate(cluster, fault):
        node = faults._node(cluster, fault)
        node.set_partitioned(True)
        node.runtime_down(True)
        return lambda: (node.runtime_down(False), node.set_partitioned(False)) and None

    monkeypatch.setitem(FAULTS, "NodeIsolation", faults.FaultKind("NodeIsolation", ("node",), (), isolate))
    r = run_text(tmp_path, """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: isolation}
spec:
  kubernetesVersion: "1.34"
  until: 1m
  objects:
    - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: app, image: nginx:1.27}]}}
  actions:
    - at: 10s
      fault: {type: NodeIsolation, node: node-1, for: 30s}
""")
    assert [(x["t"], x["fault"], x["op"]) for x in records(r, "fault")] == [
        (10.0, "NodeIsolation", "start"), (40.0, "NodeIsolation", "heal")]
    # the container ran on through it: started once, never signalled
    assert [x["t"] for x in records(r, "runtime", op="start")] == [0.1]
    assert records(r, "signal") == []

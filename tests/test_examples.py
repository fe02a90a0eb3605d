"""Every example scenario runs and every one of its expectations passes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from podlife.importer.declared import named_dumps
from podlife.scenario.load import load_scenario
from podlife.scenario.run import run

ROOT = Path(__file__).parent.parent / "examples"
SCENARIOS = sorted(p for p in ROOT.rglob("*.yaml")
                   if any((d or {}).get("kind") == "Scenario" for d in yaml.safe_load_all(p.read_text())))


def test_the_examples_are_found():
    assert len(SCENARIOS) >= 12



@pytest.mark.parametrize("path", SCENARIOS, ids=[str(p.relative_to(ROOT)) for p in SCENARIOS])
def test_example_passes(path):
    dumps = named_dumps(str(path), path.read_text())   # examples/import/: the cluster of the dump it names
    if dumps:
        from podlife.importer import command

        dump = command.read(dumps)
        result = run(command.scenario(dump, str(path)), builder=command.builder(dump))
    else:
        result = run(load_scenario(str(path)))
    assert result.verdicts, "an example states what it shows as expectations"
    assert [v.as_dict() for v in result.verdicts if not v.passed] == []

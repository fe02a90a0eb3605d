"""The action verbs are one table (scenario/actionspec.py ACTION_FIELDS): the scenario format's §2.2 shows every
verb, and only fields the loader accepts for it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from podlife.scenario.actionspec import ACTION_FIELDS, VERBS

DOC = Path(__file__).resolve().parents[1] / "docs" / "scenario-format.md"


def _documented_actions() -> list[dict]:
    section = DOC.read_text().split("### 2.2 Actions", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None, "no YAML example in §2.2"
    return yaml.safe_load(block.group(1))["actions"]


def test_docs_show_every_verb_with_fields_it_takes():
    actions = _documented_actions()
    shown = []
    for entry in actions:
        verbs = [k for k in entry if k in VERBS]
        assert len(verbs) == 1, entry
        assert set(entry) - {"at", verbs[0]} <= set(ACTION_FIELDS[verbs[0]]), entry
        shown.append(verbs[0])
    assert sorted(set(shown)) == sorted(VERBS)


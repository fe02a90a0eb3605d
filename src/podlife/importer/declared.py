"""Dumps a scenario file names itself, and dump files given where a scenario was expected.

``spec.clusterFrom`` lists dumps (paths relative to the scenario's file, as ``objectsFrom``'s are) that
``podlife run`` and ``podlife diff`` read as if they were given with ``--from``; ``--from`` on the command line
replaces them. A cluster dump given to ``podlife run`` in place of a scenario (``podlife import``'s output, or a
``kubectl get ... -o yaml`` List holding Nodes) runs on its own: the cluster goes on from the dump's instant."""

from __future__ import annotations

import os
import re
from typing import Any

import yaml

from podlife.api import yamlread
from podlife.scenario.errors import ScenarioError

FIELD = "clusterFrom"
_HEADER = "# podlife import:"   # the first line of podlife import's output (command.write)


def named_dumps(path: str, text: str) -> tuple[str, ...]:
    """``spec.clusterFrom`` of the scenario text, resolved against the scenario's directory; () without it."""
    if FIELD not in text:   # the common case costs no parse
        return ()
    try:
        raw = yamlread.safe_load(text)
    except yaml.YAMLError:
        return ()   # the loader reports it, with its line
    spec = raw.get("spec") if isinstance(raw, dict) else None
    value = spec.get(FIELD) if isinstance(spec, dict) else None
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise ScenarioError(path, None, f"spec.{FIELD}", "expected a list of dump files or directories "
                                                         "(kubectl get ... -o yaml, podlife import's output)")
    base = os.path.dirname(path) if path not in ("-", "<stdin>") else ""
    return tuple(v if os.path.isabs(v) else os.path.join(base, v) for v in value)


def is_dump(text: str) -> bool:
    """True for podlife import's output and for a List of objects read from a cluster that holds a Node."""
    if text.startswith(_HEADER):
        return True
    if not re.search(r"^kind: List\s*$", text, re.MULTILINE) or "kind: Node" not in text:
        return False
    try:
        raw: Any = yaml.load(text, Loader=yamlread.fast_safe_loader())
    except yaml.YAMLError:
        return False
    items = raw.get("items") if isinstance(raw, dict) and raw.get("kind") == "List" else None
    return isinstance(items, list) and any(
        isinstance(o, dict) and o.get("kind") == "Node"
        and isinstance(o.get("metadata"), dict) and "resourceVersion" in o["metadata"] for o in items)


def scenario_around(path: str) -> str:
    """The Scenario that runs a dump's cluster with nothing added (podlife run DUMP)."""
    from podlife.scenario.scenariospec import API_VERSION

    name = re.sub(r"[^a-z0-9-]+", "-", os.path.splitext(os.path.basename(path))[0].lower()).strip("-")[:63]
    return yaml.safe_dump({"apiVersion": API_VERSION, "kind": "Scenario", "metadata": {"name": name or "dump"},
                           "spec": {}}, sort_keys=False)

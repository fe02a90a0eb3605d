"""``podlife run`` on plain Kubernetes manifests: a Scenario is wrapped around them.

A file (or standard input) whose first document is not a podlife Scenario is read as manifests: they are
created at t=0 and the ``--delete REF@TIME`` flags become delete actions. The manifests are referenced
through ``objectsFrom`` (standard input as the source ``<stdin>``), so they are read as any manifest file is
and errors in them keep their file, line and field path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import yaml

from podlife.api.yamlread import CONSTRUCT_ERRORS
from podlife.scenario.durations import parse_duration
from podlife.scenario.errors import ScenarioError
from podlife.scenario.scenariospec import API_VERSION


def is_scenario(text: str) -> bool:
    """True unless the text clearly holds something other than a Scenario (invalid YAML counts as a
    Scenario, so that the loader reports it with its line)."""
    # libyaml's parser when PyYAML has it: the loader parses the whole text again, with lines, right after this
    # (a second pure-Python parse was a tenth of a small run); text it does not take goes to the Python parser,
    # whose verdict it was before
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return _first_is_scenario(yaml.load_all(text, Loader=fast))
        except Exception:  # noqa: BLE001
            pass
    try:
        return _first_is_scenario(yaml.safe_load_all(text))
    except (yaml.YAMLError, RecursionError, *CONSTRUCT_ERRORS):
        # a value its constructor refuses (a date that does not exist, `!!int abc`) is bad input too
        return True


def _first_is_scenario(docs: Iterator[Any]) -> bool:
    for doc in docs:
        if doc is not None:
            return not isinstance(doc, dict) or doc.get("kind") == "Scenario" or "kind" not in doc
    return True


def delete_actions(flags: tuple[str, ...], source: str) -> list[dict[str, str]]:
    """``--delete pod/web@10s`` (``@TIME`` defaults to 0s) → scenario actions; bad ones raise ScenarioError."""
    actions = []
    for flag in flags:
        ref, _, at = flag.partition("@")
        at = at or "0s"
        if "/" not in ref or not all(ref.split("/", 1)):
            raise ScenarioError(source, None, "--delete",
                                f'"{flag}" is not KIND/NAME[@TIME], e.g. pod/web@10s')
        try:
            parse_duration(at)
        except ValueError:
            raise ScenarioError(source, None, "--delete", f'"{at}" in "{flag}" is not a duration, '
                                                          f"e.g. 10s or 1m30s") from None
        actions.append({"at": at, "delete": ref})
    return actions


STDIN = "<stdin>"   # the source name of manifests read from standard input (load_scenario's ``sources``)


def wrap(path: str, actions: list[dict[str, str]]) -> str:
    """The Scenario text around the manifests of ``path`` (``-``: standard input, given as the source STDIN)."""
    name = re.sub(r"[^a-z0-9-]+", "-", os.path.splitext(os.path.basename(path))[0].lower()).strip("-")[:63]
    spec: dict = {"objectsFrom": [STDIN if path == "-" else os.path.basename(path)]}
    if actions:
        spec["actions"] = actions
    return yaml.safe_dump({"apiVersion": API_VERSION, "kind": "Scenario",
                           "metadata": {"name": "stdin" if path == "-" else name or "manifests"}, "spec": spec},
                          sort_keys=False)

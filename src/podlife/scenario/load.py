"""Load and validate a scenario file (shared/docs/scenario-format.md §2) into ``podlife.scenario.model``.

Every problem is a ScenarioError naming the file, the line where known and the field path. The steps:
parse the YAML keeping the line of every field path → apply ``--set`` and the keyword overrides to that raw
tree → validate it into the dataclasses. Each step has its own module: ``yamlread`` (text and YAML, with lines
and guards), ``overrides`` (``--set`` and the keyword flags), ``scenariospec`` (the Scenario and its spec
fields) with ``clusterconfig``, ``manifests``, ``actionspec``, ``faultspec`` and ``expectspec`` for the parts
of the spec, ``writecheck`` (updates refused whatever comes first) and ``fieldcheck`` (the shared checks).

Choices made where the format page is silent (they belong in its documentation):

- Field paths: schema fields as ``a.b``, list items as ``[i]``, keys of free-form maps that are not plain
  identifiers as ``[key]`` (``labels[topology.kubernetes.io/zone]``), as k8s field.Path prints them. ``--set``
  accepts the same syntax, so ``--set 'spec.cluster.kubelet.evictionHard[memory.available]=200Mi'`` works.
- Values given by ``--set``/``--seed``/``--until``/``--kubernetes-version`` have no line; errors about them
  end with ``(set by --set)`` etc. The keyword overrides are applied after every ``--set``.
- YAML: timestamps stay strings (as in Kubernetes JSON); a duplicate key is an error; merge keys (``<<``) and
  anchors work; a non-string scalar key (``1:``) is taken as written.
- ``kubernetesVersion``: a string; an unquoted number only when it reads back the same (1.18 yes, 1.20 no:
  YAML reads it as 1.2).
- Nodes: ``podCIDR`` defaults to one /24 per node: node i (0-based, after namePrefix/count expansion) gets the
  (i+1)-th /24 after 10.244.0.0/24, i.e. 10.244.1.0/24, 10.244.2.0/24, …, 10.244.255.0/24, 10.245.0.0/24, …
  (staying inside 10.0.0.0/8), skipping blocks that overlap a podCIDR given explicitly. Explicit podCIDRs
  must not overlap. ``nodes: []`` is allowed (with a warning). ``count`` needs ``namePrefix``; a ``zone`` that
  contradicts ``labels[topology.kubernetes.io/zone]`` is an error.
- Component configuration: integers must be >= 0 except ``evictionMaxPodGracePeriod``; durations >= 0;
  every ``evictionSoft`` signal needs an ``evictionSoftGracePeriod`` (as the kubelet refuses to start
  otherwise); ``evictionHard`` replaces the default set (see ``_component``).
- ``objects`` are created first, then every document of every ``objectsFrom`` file, in order. Empty
  documents are skipped. A manifest from an ``objectsFrom`` file has Source(file, line of the document, "").
- Actions: ``kind/name`` targets keep the name as written and lower-case the kind (``Deployment/web`` →
  ``deployment/web``); create/apply set ``target`` to ``kind/name`` of the manifest when it has a name and
  accept ``namespace`` (it must agree with the manifest's, as ``kubectl create -n``). Delete is an API
  DELETE: ``gracePeriodSeconds`` is passed as written (0 deletes at once, negative values reach the API
  server, which has its own rules); ``force: true`` is kubectl's ``--force``: it sends gracePeriodSeconds 0
  when none (or a negative one) is given and is refused together with a grace period > 0. Unlike kubectl,
  gracePeriodSeconds 0 without force is NOT turned into 1. cordon/uncordon/drain of a node that is not a
  scenario node is allowed with a warning (a Node object may come from ``objects``); a fault's node must be a
  scenario node. ``for: 0`` is allowed. ``value`` of MemoryUsage/DiskUsage is a quantity.
- Expectations: ``object`` kinds pod/pods/po and node/nodes/no are recognised for the check/kind rules; the
  kind is lower-cased. ``kind/namespace/name`` and ``namespace`` must agree; a node object cannot have a
  namespace part. Unquoted true/false is accepted where "True"/"False" is expected. ``value`` is normalised:
  condition → {type, status, reason}, containerState → {name, state, reason, exitCode}, taint → {key,
  effect} (missing ones None). Timing: ``by`` | ``at`` | ``always: [from, to]`` | ``after`` (with optional
  ``by``, after <= by); none of them means "holds at the end of the run".
- Warnings: actions/expectation times after ``until``, a soft grace period without a soft threshold, no nodes,
  cordon/uncordon/drain of an unknown node.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from podlife.scenario.errors import ScenarioError
from podlife.scenario.fieldcheck import Check
from podlife.scenario.model import Scenario
from podlife.scenario.overrides import apply_keyword, apply_set
from podlife.scenario.scenariospec import API_VERSION, scenario_spec
from podlife.scenario.yamlread import Builder, Raw, compose, read_text
from podlife.versions import normalize_version


def load_scenario(path: str, overrides: Sequence[str] = (), *, kubernetes_version: str | None = None,
                  seed: int | None = None, until: str | None = None,
                  text: str | None = None,
                  sources: Mapping[str, str] | None = None) -> Scenario:
    """Read, override and validate a scenario file; raise ScenarioError on any invalid input.

    ``text``, when given, is the scenario itself (read from standard input, or wrapped around plain
    manifests); ``path`` then names it in messages and anchors relative ``objectsFrom`` paths.
    ``sources`` gives the text of ``objectsFrom`` entries that are not files (plain manifests on standard
    input are ``<stdin>``), read as files are: same YAML guards, errors with their own name and lines.

    ``overrides`` are ``PATH=VALUE`` strings (``--set``), applied in order to the raw YAML tree before
    validation; ``kubernetes_version``, ``seed`` and ``until`` then replace spec.kubernetesVersion/seed/until.
    """
    try:
        text = read_text(path) if text is None else text
    except OSError as exc:
        raise ScenarioError(path, None, "", f"cannot read the scenario: {exc.strerror or exc}") from None
    data, lines, texts = _parsed(path, text)
    raw = Raw(path, data, lines, texts)
    raw.sources = sources or {}
    for expr in overrides:
        apply_set(raw, expr)
    if kubernetes_version is not None:  # v1.34 and 1.34.2 name the minor 1.34, for every command
        kubernetes_version = normalize_version(kubernetes_version)
    for field, value, flag in (("kubernetesVersion", kubernetes_version, "--kubernetes-version"),
                               ("seed", seed, "--seed"), ("until", until, "--until")):
        if value is not None:
            apply_keyword(raw, field, value, flag)
    return scenario_spec(Check(raw), raw.data)




Parsed = tuple[Any, dict[str, int], dict[str, str]]
# the documents read more than once in this process (a sweep loads its scenario once a point: composing the YAML,
# in pure Python for its lines, is two thirds of loading), by file and text; the oldest goes past _PARSED_KEPT
_parsed_kept: dict[tuple[str, str], Parsed | None] = {}
_PARSED_KEPT = 4


def _parsed(path: str, text: str) -> Parsed:
    """The scenario document as plain data with the line of each field path and the text of each scalar. From
    its second reading on, a deep copy of the kept result (aliases stay shared as YAML built them), which the
    caller may override as it likes."""
    key = (path, text)
    kept = _parsed_kept.get(key)
    if kept is not None:
        try:
            return _copy(kept)
        except RecursionError:   # deeper than copying can follow from here: read afresh
            pass
    nodes = compose(text, path)
    if not nodes:
        raise ScenarioError(path, None, "", "the file is empty; expected a Scenario (apiVersion: "
                                            f"{API_VERSION}, kind: Scenario)")
    if len(nodes) > 1:
        raise ScenarioError(path, nodes[1].start_mark.line + 1, "",
                            "expected one YAML document (a Scenario), found another one here")
    lines: dict[str, int] = {"": nodes[0].start_mark.line + 1}
    texts: dict[str, str] = {}
    data = Builder(path, lines, texts).tree(nodes[0])
    if key not in _parsed_kept:   # the first reading: only remembered
        _parsed_kept[key] = None
    elif kept is None:            # the second: kept, and the caller gets a copy
        try:
            copied = _copy((data, lines, texts))
        except RecursionError:
            return data, lines, texts
        _parsed_kept[key] = (data, lines, texts)
        return copied
    while len(_parsed_kept) > _PARSED_KEPT:
        del _parsed_kept[next(iter(_parsed_kept))]
    return data, lines, texts


def _copy(parsed: Parsed) -> Parsed:
    data, lines, texts = parsed
    return copy.deepcopy(data), dict(lines), dict(texts)

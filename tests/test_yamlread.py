"""The scenario loader composes YAML from libyaml's events when libyaml reads the text without complaint
(podlife.scenario.yamlread._compose_from_events), else with the Python parser as before. Both must give the
loader the same nodes: the same kinds, tags, values, lines and columns, and the same documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from podlife.api.yamlread import Loader, event_loader
from podlife.scenario import yamlread
from tests import bad_corpus

ROOT = Path(__file__).resolve().parent.parent
HEAD = "apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n"

pytestmark = pytest.mark.skipif(event_loader() is None, reason="PyYAML without libyaml")


def _python(text: str) -> list[yaml.Node] | None:
    try:
        return list(yaml.compose_all(text, Loader=Loader))
    except (yaml.YAMLError, RecursionError):   # the reader refuses control characters, the parser bad syntax
        return None


def _shape(node: yaml.Node, seen: dict[int, int]) -> Any:
    """What the loader reads of a node (kind, tag, value, line and column), aliases as the index of the node
    they repeat."""
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    where = (node.start_mark.line, node.start_mark.column)
    if isinstance(node, yaml.ScalarNode):
        return ("scalar", node.tag, node.value, where)
    if isinstance(node, yaml.SequenceNode):
        return ("seq", node.tag, where, [_shape(n, seen) for n in node.value])
    return ("map", node.tag, where, [(_shape(k, seen), _shape(v, seen)) for k, v in node.value])


def _texts() -> list[tuple[str, str]]:
    out = []
    for path in sorted(ROOT.glob("**/*.yaml")):
        try:
            out.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:   # a fixture of a file that is not UTF-8: refused before any YAML
            continue
    for category in ("YAML", "CLUSTER", "PODS", "KINDS", "ACTIONS"):
        for case in getattr(bad_corpus, category):
            texts = [case[1], *(case[3] if len(case) > 3 else {}).values()]
            for text in texts:
                if isinstance(text, bytes):   # a whole file
                    try:
                        out.append((f"{category}: {case[0]}", text.decode("utf-8")))
                    except UnicodeDecodeError:
                        pass
                else:
                    out.append((f"{category}: {case[0]}", text if text.startswith("#") else HEAD + text))
    # a byte order mark at the start and at the start of a later line (libyaml skips both, Python the first)
    out += [("bom", "\ufeffa: 1\nb: 2\n"), ("bom inside", "a: 1\n\ufeffb: 2\n")]
    return out


TEXTS = _texts()


def test_the_corpus_is_large_and_both_ways_are_taken() -> None:
    composed = [yamlread._compose_from_events(text) for _, text in TEXTS]
    assert len(TEXTS) > 600
    assert sum(n is not None for n in composed) > 600 and sum(n is None for n in composed) >= 10


@pytest.mark.parametrize("name, text", TEXTS, ids=[t[0] for t in TEXTS])
def test_libyaml_events_compose_the_python_parser_s_nodes(name: str, text: str) -> None:
    fast = yamlread._compose_from_events(text)
    slow = _python(text)
    if fast is None:   # left to the Python parser, which gives the error (or reads what libyaml refused)
        return
    assert slow is not None, "libyaml read a text the Python parser refuses"
    seen_fast: dict[int, int] = {}
    seen_slow: dict[int, int] = {}
    assert [_shape(n, seen_fast) for n in fast] == [_shape(n, seen_slow) for n in slow]

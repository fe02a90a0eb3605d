"""YAML as Kubernetes reads it (sigs.k8s.io/yaml turns YAML into JSON, so timestamps stay strings and ``=`` is
a string), and the budget on what a document may expand to through aliases; shared by the scenario loader and
the API's body decoding."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import yaml

MAX_YAML_VALUES = 1_000_000          # values one YAML document may expand to
TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
VALUE_TAG = "tag:yaml.org,2002:value"

# yaml.reader.Reader.NON_PRINTABLE within ASCII: the control characters but tab, line feed and carriage return
_ASCII_NON_PRINTABLE = re.compile("[^\t\n\r -~]")
# and over all of Unicode, as the characters it matches rather than those it does not: the same characters
# (tests/test_yamlload.py: every code point), 4M instructions to compile where PyYAML's class of the printable
# ones takes 57M (podlife.yamlload leaves that one uncompiled until used)
_FORBIDDEN = "[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uD800-\uDFFF\uFFFE\uFFFF]"


@lru_cache(maxsize=1)
def _non_printable_pattern() -> re.Pattern[str]:
    return re.compile(_FORBIDDEN)


def non_printable(text: str) -> bool:
    """Whether PyYAML's reader refuses a character of the text (Reader.NON_PRINTABLE finds one)."""
    if text.isascii():
        return _ASCII_NON_PRINTABLE.search(text) is not None
    return _non_printable_pattern().search(text) is not None


# what a tagged scalar's constructor raises for a value its tag does not take (PyYAML does not wrap these)
CONSTRUCT_ERRORS = (ValueError, KeyError, TypeError, OverflowError)


def tag_mismatch(node: yaml.ScalarNode, resolver: yaml.resolver.BaseResolver | None = None) -> str:
    """go-yaml's words for a scalar its tag refuses (resolve.go resolve: "cannot decode !!str `abc` as a !!int"),
    with the tag the plain value resolves to (by ``resolver``'s rules, by default Kubernetes' reading)."""
    def short(tag: str) -> str:
        return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag
    if resolver is None:
        resolver = yaml.resolver.Resolver()
        resolver.yaml_implicit_resolvers = Loader.yaml_implicit_resolvers
    plain = resolver.resolve(yaml.ScalarNode, node.value, (True, False))
    if plain == node.tag:   # PyYAML resolves by pattern where go-yaml parses: a date that does not exist is text
        plain = "tag:yaml.org,2002:str"
    return f"cannot decode {short(plain)} `{node.value}` as a {short(node.tag)}"


class _TagErrors:
    """A loader's refused tagged values (``!!int abc``, a date that does not exist) are YAMLErrors as every other
    bad input is, not a bare ValueError or KeyError."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> object:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except CONSTRUCT_ERRORS:
            if not isinstance(node, yaml.ScalarNode):
                raise
            raise yaml.constructor.ConstructorError(None, None, tag_mismatch(node, self), node.start_mark) from None


class SafeLoader(_TagErrors, yaml.SafeLoader):
    """yaml.SafeLoader whose reader checks text with non_printable's patterns (text they refuse goes to the
    reader's own check: the same error, with its position), with _TagErrors."""

    def check_printable(self, data: str) -> None:
        if non_printable(data):
            super().check_printable(data)


@lru_cache(maxsize=1)
def fast_safe_loader() -> type:
    """yaml.CSafeLoader (libyaml) with _TagErrors, or SafeLoader without libyaml: for large files."""
    base = getattr(yaml, "CSafeLoader", None)
    return SafeLoader if base is None else type("CSafeLoader", (_TagErrors, base), {})


def safe_load(text: str) -> Any:
    """yaml.safe_load with SafeLoader: every refusal is a YAMLError."""
    return yaml.load(text, Loader=SafeLoader)


class Loader(yaml.SafeLoader):
    """SafeLoader that leaves timestamps as strings, as Kubernetes' JSON has them ("=" stays a string too)."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (TIMESTAMP_TAG, VALUE_TAG)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@lru_cache(maxsize=1)
def event_loader() -> type | None:
    """Loader's reading with libyaml's parser for the events and Python's composer and resolvers for the nodes
    (several times faster than Python's parser; the nodes differ only in a plain scalar's style, '' for None,
    and in marks that have a line and column but not the text), or None if PyYAML is built without libyaml."""
    try:
        from yaml._yaml import CParser
    except ImportError:
        return None

    class EventLoader(CParser, yaml.composer.Composer, yaml.constructor.SafeConstructor,
                      yaml.resolver.Resolver):
        yaml_implicit_resolvers = Loader.yaml_implicit_resolvers
        check_node = yaml.composer.Composer.check_node
        get_node = yaml.composer.Composer.get_node
        get_single_node = yaml.composer.Composer.get_single_node

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
    return EventLoader


def expanded_sizes(root: yaml.Node) -> dict[int, int]:
    """How many values each node (by id) becomes once aliases are expanded, counted as the scenario loader's
    _Builder.build counts them (scalars, lists and mappings; not keys), capped just past MAX_YAML_VALUES.
    Iterative, each distinct node once; a node inside itself (a recursive alias, refused by build) adds nothing
    to its own size."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = node.value if isinstance(node, yaml.SequenceNode) else \
            [v for _, v in node.value] if isinstance(node, yaml.MappingNode) else []
        if done:
            sizes[id(node)] = min(1 + sum(sizes.get(id(c), 0) for c in children), MAX_YAML_VALUES + 1)
            visiting.discard(id(node))
        elif id(node) not in sizes and id(node) not in visiting:
            visiting.add(id(node))
            stack.append((node, True))
            stack += [(c, False) for c in children if id(c) not in sizes and id(c) not in visiting]
    return sizes

"""Reading a scenario or manifest file: text with guards (size, kind of file, UTF-8), YAML composed and built into
plain data with the line of every field path, under guards (control characters, depth, duplicate keys, tags,
recursive aliases, alias expansion past ``MAX_YAML_VALUES``)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from typing import Any

import yaml

from podlife.api.yamlread import MAX_YAML_VALUES, Loader, event_loader, expanded_sizes, non_printable
from podlife.scenario.errors import ScenarioError
from podlife.scenario.fieldpath import join_path

# ---------------------------------------------------------------------------------------------------- YAML

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def yaml_error(exc: yaml.YAMLError, file: str, path: str = "") -> ScenarioError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return ScenarioError(file, mark.line + 1 if mark else None, path, message)


def compose(text: str, file: str) -> list[yaml.Node]:
    """Every document of a YAML stream as nodes (syntax errors → ScenarioError with the line)."""
    nodes = _compose_from_events(text)
    if nodes is not None:
        return nodes
    try:
        loader = Loader(text)   # the reader refuses NUL and other control characters here
    except yaml.reader.ReaderError as exc:
        raise ScenarioError(file, text[:exc.position].count("\n") + 1, "",
                            f"invalid YAML: unacceptable character #x{exc.character:04x} (control characters "
                            "are not allowed)") from None
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        return nodes
    except yaml.YAMLError as exc:
        raise yaml_error(exc, file) from None
    except RecursionError:
        raise ScenarioError(file, None, "", "invalid YAML: nested too deeply to read; expected an ordinary "
                                            "document") from None
    finally:
        loader.dispose()


def _compose_from_events(text: str) -> list[yaml.Node] | None:
    """The nodes composed from libyaml's events (a tenth of the Python parser's time: 8 % of a small run), when
    libyaml reads the text without complaint and Python's reader would too; None otherwise, and the Python
    parser reads it as before, for its errors. The nodes serve as the Python parser's do: the builder reads
    their tags, values and lines, not their style or the text of their marks (tests/test_yamlread.py compares
    the two on every YAML file of the repository and the bad-input corpus)."""
    loader_class = event_loader()
    if loader_class is None or "\ufeff" in text or non_printable(text):
        return None   # a byte order mark: libyaml skips one at the start of any line, Python's only at the start
    loader = loader_class(text)
    try:
        nodes = []
        while loader.check_node():
            nodes.append(loader.get_node())
        return nodes
    except (yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()


class Builder:
    """Turns YAML nodes into plain data, recording the line of each field path and the text of each scalar."""

    def __init__(self, file: str, lines: dict[str, int], texts: dict[str, str]):
        self.file, self.lines, self.texts = file, lines, texts
        self.constructor = yaml.constructor.SafeConstructor()
        self.active: set[int] = set()

    def fail(self, node: yaml.Node, path: str, message: str) -> ScenarioError:
        return ScenarioError(self.file, node.start_mark.line + 1, path, message)

    def tree(self, node: yaml.Node) -> Any:
        """The whole document; nesting deeper than Python can follow is an error, not a crash."""
        try:
            self._refuse_alias_bomb(node)
            return self.build(node, "")
        except RecursionError:
            raise self.fail(node, "", "nested too deeply; expected an ordinary document") from None

    def _refuse_alias_bomb(self, root: yaml.Node) -> None:
        """Refuse a document that expands to more than MAX_YAML_VALUES values before building any of it: the
        expanded size of each distinct node is counted once (linear in the nodes the file holds), then the
        walk in document order stops at the value build() would have stopped at, so the error names it."""
        sizes = expanded_sizes(root)
        if sizes[id(root)] <= MAX_YAML_VALUES:
            return
        node, path, count = root, "", 1
        while True:   # descend into the child that crosses the budget, skipping the whole ones before it
            pairs = ([(join_path(path, i), v) for i, v in enumerate(node.value)] if isinstance(node, yaml.SequenceNode)
                     else [(join_path(path, self._key(k, path)) if k.tag != _MERGE_TAG else path, v)
                           for k, v in node.value] if isinstance(node, yaml.MappingNode) else [])
            for child_path, child in pairs:
                if count + sizes.get(id(child), 0) <= MAX_YAML_VALUES:
                    count += sizes.get(id(child), 0)
                    continue
                node, path, count = child, child_path, count + 1
                break
            else:
                break
            if count > MAX_YAML_VALUES:
                break
        raise self.fail(node, path, f"more than {MAX_YAML_VALUES:,} values once YAML aliases are expanded; "
                                    "expected a document of ordinary size")

    def build(self, node: yaml.Node, path: str) -> Any:
        if id(node) in self.active:
            raise self.fail(node, path, "recursive YAML alias; expected a tree")
        try:
            if isinstance(node, yaml.ScalarNode):
                return self._scalar(node, path)
            self.active.add(id(node))
            if isinstance(node, yaml.SequenceNode):
                return self._sequence(node, path)
            return self._mapping(node, path)
        except yaml.YAMLError as exc:  # unknown tags, bad merge keys
            raise yaml_error(exc, self.file, path) from None
        finally:
            self.active.discard(id(node))

    def _scalar(self, node: yaml.ScalarNode, path: str) -> Any:
        value = self.constructor.construct_object(node, deep=True)
        self.constructor.constructed_objects.clear()
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise self.fail(node, path, f"unsupported YAML tag {node.tag}; expected a string, number, "
                                        "boolean or null")
        self.texts[path] = node.value
        return value

    def _sequence(self, node: yaml.SequenceNode, path: str) -> list[Any]:
        if node.tag != _SEQ_TAG:
            raise self.fail(node, path, f"unsupported YAML tag {node.tag}; expected a plain list")
        out = []
        for i, item in enumerate(node.value):
            child = join_path(path, i)
            self.lines[child] = item.start_mark.line + 1
            out.append(self.build(item, child))
        return out

    def _key(self, node: yaml.Node, path: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, path, "expected a string key, got a mapping or list as a key")
        key = self.constructor.construct_object(node, deep=True)
        self.constructor.constructed_objects.clear()
        return key if isinstance(key, str) else node.value  # 1: / true: keep their text

    def _mapping(self, node: yaml.MappingNode, path: str) -> dict[str, Any]:
        if node.tag != _MAP_TAG:
            raise self.fail(node, path, f"unsupported YAML tag {node.tag}; expected a plain mapping")
        first: dict[str, int] = {}
        for key_node, _ in node.value:  # duplicates among the keys written here (merged ones may be overridden)
            if key_node.tag == _MERGE_TAG:
                continue
            key = self._key(key_node, path)
            if key in first:
                raise self.fail(key_node, join_path(path, key),
                                f"duplicate key; first given at line {first[key]}")
            first[key] = key_node.start_mark.line + 1
        self.constructor.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, path)
            child = join_path(path, key)
            self.lines[child] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, child)
        return out


class Raw:
    """The scenario as plain data, with the line of each field path and where overridden values came from."""

    def __init__(self, file: str, data: Any, lines: dict[str, int], texts: dict[str, str]):
        self.file, self.data, self.lines, self.texts = file, data, lines, texts
        self.origins: dict[str, str] = {}  # path → "--set" / "--seed" / …
        self.sources: Mapping[str, str] = {}  # objectsFrom names whose text is given, not read ("<stdin>")


# the most a scenario or manifest file may hold: ample for any bundle of manifests (the API server takes 3 MiB
# per object), and a bound on what a device or a runaway file can make podlife read
MAX_FILE_BYTES = 32 * 1024 * 1024
_KINDS_OF_FILE = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_text(file: str) -> str:
    """The file's text; not UTF-8 (or not text) is a ScenarioError naming the line of the first bad byte. Only a
    regular file (or a pipe, as a shell's process substitution gives) of at most MAX_FILE_BYTES is read: a
    device such as /dev/zero would never end."""
    if "\x00" in file:   # open() raises ValueError for it, not OSError
        raise OSError(errno.EINVAL, "a path cannot hold a NUL character; expected a file's path", file)
    with open(file, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        for test, what in _KINDS_OF_FILE:
            if test(mode):
                raise OSError(errno.EINVAL, f"{what}, not a regular file; expected a YAML file", file)
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; expected a YAML file "
                                   "of ordinary size", file)
    return decode_text(data, file)


def decode_text(data: bytes, file: str) -> str:
    """UTF-8 ``data`` read from ``file`` (a path or <stdin>) as text, or a ScenarioError at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ScenarioError(file, line, "", f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded; "
                                            "expected a UTF-8 YAML file") from None



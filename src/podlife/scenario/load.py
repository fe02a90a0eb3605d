"""Load and validate a scenario file (shared/docs/scenario-format.md §2) into ``podlife.scenario.model``.

Every problem is a ScenarioError naming the file, the line where known and the field path. The steps:
parse the YAML keeping the line of every field path → apply ``--set`` and the keyword overrides to that raw
tree → validate it into the dataclasses.

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
import errno
import ipaddress
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import yaml

from podlife.api import schema, validation
from podlife.api.decoding import MAX_REPLICAS
from podlife.api.errors import ApiError
from podlife.api.warnings import manifest_warnings as api_warnings
from podlife.api.warnings import missing_references, unmodelled_fields
from podlife.api.quantity import parse_quantity
from podlife.api.meta import KINDS
from podlife.api.yamlread import MAX_YAML_VALUES
from podlife.api.yamlread import Loader as _Loader
from podlife.api.yamlread import expanded_sizes as _expanded_sizes
from podlife.config import (
    ApiServerConfiguration,
    ControllerManagerConfiguration,
    KubeletConfiguration,
    SchedulerConfiguration,
    field_kinds,
)
from podlife.runtime.behavior import BehaviorError, BehaviorRule, check_fields
from podlife.scenario.assumptions import object_ref
from podlife.scenario.assumptions import unmatched_rules
from podlife.scenario.durations import format_duration, parse_duration
from podlife.scenario.errors import ScenarioError
from podlife import features
from podlife.versions import MODELLED_VERSIONS, NEWEST, Profile, normalize_version, profile
from podlife.trace.recorder import LAST_TIME
from podlife.scenario.model import (
    HORIZON_SECONDS,
    RUNTIMES,
    Action,
    ClusterSpec,
    Expectation,
    Fault,
    Manifest,
    NodeSpec,
    Scenario,
    Source,
    default_pod_cidr,
)

if TYPE_CHECKING:
    from podlife.kubectl.drain import DrainOptions


API_VERSION = "podlife/v1alpha1"
DEFAULT_START_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)
VERBS = ("delete", "create", "apply", "scale", "patch", "cordon", "uncordon", "drain", "evict", "fault", "join",
         "leave")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")
EVICTION_SIGNALS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                    "imagefs.inodesFree", "pid.available")
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
CONDITION_STATUSES = ("True", "False", "Unknown")
CONTAINER_STATES = ("waiting", "running", "terminated")
ZONE_LABEL = "topology.kubernetes.io/zone"

# Fault type → (required fields, optional fields); "type" and "for" are allowed on every fault.
_NODE = ("node",)
_CONTAINER = ("node", "pod", "container")
FAULT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "ContainerHang": (_CONTAINER, ()),
    "LostExitEvent": (_CONTAINER, ()),
    "RuntimeDown": (_NODE, ()),
    "RuntimeRestart": (_NODE, ()),
    "KubeletRestart": (_NODE, ()),
    "KubeletStop": (_NODE, ()),
    "KubeletStart": (_NODE, ()),
    "NetworkPartition": (_NODE, ()),
    "NodePowerOff": (_NODE, ()),
    "NodeShutdown": (_NODE, ()),
    "MemoryUsage": (("node", "value"), ()),
    "DiskUsage": (("node", "value"), ()),
    "OOMKill": (_CONTAINER, ()),
    "ImagePullFailure": (("image",), ("node",)),
}
FAULT_TYPES = tuple(FAULT_FIELDS)

_POD_KINDS = ("pod", "pods", "po")
_NODE_KINDS = ("node", "nodes", "no")
# check → kinds it applies to (None: any kind)
_CHECK_KINDS: dict[str, tuple[str, ...] | None] = {
    "deleted": None,
    "phase": _POD_KINDS,
    "ready": _POD_KINDS,
    "condition": None,  # any kind with status.conditions
    "containerState": _POD_KINDS,
    "nodeReady": _NODE_KINDS,
    "taint": _NODE_KINDS,
}
EXPECT_CHECKS = tuple(_CHECK_KINDS)

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_QUANTITY = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?\Z")
_PERCENT = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)%\Z")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9.]*\Z")
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))\Z")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

_DURATION_HINT = "e.g. 500ms, 3s, 1m30s, 2h or a number of seconds"
MAX_UNTIL = 7 * 24 * 3600.0          # the longest simulated span podlife runs (a week)
MAX_NODES = 5000                     # Kubernetes' supported cluster size
_LABEL_HINT = "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
_SUBDOMAIN_HINT = ("lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, "
                   "at most 253 characters")


# --------------------------------------------------------------------------------------------------- paths

def _join(path: str, key: str | int) -> str:
    """Child path, as k8s field.Path prints it: a.b, a[0], a[some.key]."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key}]"


def _parent(path: str) -> str:
    if path.endswith("]"):
        return path[:path.rfind("[")]
    return path[:max(path.rfind("."), 0)]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + ".") or path.startswith(prefix + "[")


# ---------------------------------------------------------------------------------------------------- YAML

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _yaml_error(exc: yaml.YAMLError, file: str, path: str = "") -> ScenarioError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
    return ScenarioError(file, mark.line + 1 if mark else None, path, message)


def _compose(text: str, file: str) -> list[yaml.Node]:
    """Every document of a YAML stream as nodes (syntax errors → ScenarioError with the line)."""
    try:
        loader = _Loader(text)   # the reader refuses NUL and other control characters here
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
        raise _yaml_error(exc, file) from None
    except RecursionError:
        raise ScenarioError(file, None, "", "invalid YAML: nested too deeply to read; expected an ordinary "
                                            "document") from None
    finally:
        loader.dispose()


class _Builder:
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
        sizes = _expanded_sizes(root)
        if sizes[id(root)] <= MAX_YAML_VALUES:
            return
        node, path, count = root, "", 1
        while True:   # descend into the child that crosses the budget, skipping the whole ones before it
            pairs = ([(_join(path, i), v) for i, v in enumerate(node.value)] if isinstance(node, yaml.SequenceNode)
                     else [(_join(path, self._key(k, path)) if k.tag != _MERGE_TAG else path, v)
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
            raise _yaml_error(exc, self.file, path) from None
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
            child = _join(path, i)
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
                raise self.fail(key_node, _join(path, key),
                                f"duplicate key; first given at line {first[key]}")
            first[key] = key_node.start_mark.line + 1
        self.constructor.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, path)
            child = _join(path, key)
            self.lines[child] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, child)
        return out


def read_text(file: str) -> str:
    return _read(file)


# the most a scenario or manifest file may hold: ample for any bundle of manifests (the API server takes 3 MiB
# per object), and a bound on what a device or a runaway file can make podlife read
MAX_FILE_BYTES = 32 * 1024 * 1024
_KINDS_OF_FILE = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _read(file: str) -> str:
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


# ---------------------------------------------------------------------------------------------- overrides

_SET_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[([^\[\]]+)\]")


def _set_segments(expr: str, file: str) -> list[str | int]:
    """`spec.actions[0].at` → ["spec", "actions", 0, "at"]; [key] addresses a map key with dots in it."""
    segments: list[str | int] = []
    pos = 0
    text = "." + expr if expr and expr[0] != "[" else expr
    while pos < len(text):
        m = _SET_SEGMENT.match(text, pos)
        if not m:
            raise ScenarioError(file, None, f"--set {expr}",
                                "invalid path; expected dotted field names with optional [index], "
                                "e.g. spec.actions[0].at")
        name, bracket = m.group(1), m.group(2)
        segments.append(name if name is not None else (int(bracket) if bracket.isdigit() else bracket))
        pos = m.end()
    return segments


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f'"{value}"' if len(value) <= _SHOWN else f'"{value[:_SHOWN]}…" ({len(value):,} characters)'
    return repr(value)


_SHOWN = 80   # characters of a value quoted in a message


class _Raw:
    """The scenario as plain data, with the line of each field path and where overridden values came from."""

    def __init__(self, file: str, data: Any, lines: dict[str, int], texts: dict[str, str]):
        self.file, self.data, self.lines, self.texts = file, data, lines, texts
        self.origins: dict[str, str] = {}  # path → "--set" / "--seed" / …
        self.sources: Mapping[str, str] = {}  # objectsFrom names whose text is given, not read ("<stdin>")

    def replace(self, segments: Sequence[str | int], value: Any, texts: dict[str, str], origin: str,
                expr: str) -> None:
        """Set the value at segments, creating missing mapping keys."""
        where = f"{origin} {expr}"
        node, path = self.data, ""
        for i, seg in enumerate(segments):
            last = i == len(segments) - 1
            if isinstance(node, dict):
                key = str(seg)
                child = _join(path, key)
                if last:
                    node[key] = value
                elif not isinstance(node.get(key), (dict, list)):
                    if node.get(key) is not None:
                        raise ScenarioError(self.file, None, where, f"cannot go into {child}: it is "
                                            f"{_describe(node[key])}, not a mapping or list")
                    node[key] = {}
                node, path = (node[key] if not last else None), child
            elif isinstance(node, list):
                if not isinstance(seg, int):
                    raise ScenarioError(self.file, None, where,
                                        f"{path or 'the scenario'} is a list; expected an [index], not .{seg}")
                if seg >= len(node):
                    raise ScenarioError(self.file, None, where,
                                        f"index {seg} out of range; {path} has {_items(len(node))}")
                child = _join(path, seg)
                if last:
                    node[seg] = value
                node, path = (node[seg] if not last else None), child
            else:
                raise ScenarioError(self.file, None, where,
                                    f"cannot index {path or 'the scenario'}: it is {_describe(node)}, "
                                    "not a mapping or list")
        self._forget(path)
        self.origins[path] = origin
        self.texts.update({(path + p if p.startswith("[") or not p else f"{path}.{p}"): t
                           for p, t in texts.items()})

    def _forget(self, path: str) -> None:
        for table in (self.lines, self.texts, self.origins):
            for p in [p for p in table if _under(p, path)]:
                del table[p]

    def apply_set(self, expr: str) -> None:
        if "=" not in expr:
            raise ScenarioError(self.file, None, "--set", f'"{expr}": expected PATH=VALUE')
        target, text = expr.split("=", 1)
        if not target:
            raise ScenarioError(self.file, None, "--set", f'"{expr}": empty path; expected PATH=VALUE')
        segments = _set_segments(target, self.file)
        canonical = ""
        for seg in segments:
            canonical = _join(canonical, seg)
        try:
            nodes = _compose(text, self.file)
            lines: dict[str, int] = {}
            texts: dict[str, str] = {}
            value = _Builder(self.file, lines, texts).tree(nodes[0]) if nodes else None
        except ScenarioError as exc:
            raise ScenarioError(self.file, None, f"--set {canonical}",
                                f'invalid value "{text}": {exc.message}') from None
        if len(nodes) > 1:
            raise ScenarioError(self.file, None, f"--set {canonical}", "expected one YAML value")
        if not isinstance(self.data, dict):
            return  # validation reports the root
        self.replace(segments, value, texts, "--set", canonical)

    def apply_keyword(self, field: str, value: Any, flag: str) -> None:
        if not isinstance(self.data, dict):
            return
        spec = self.data.get("spec")
        if spec is None:
            self.data["spec"] = {}
        elif not isinstance(spec, dict):
            return  # validation reports spec
        self.replace(["spec", field], value, {}, flag, f"spec.{field}")


# --------------------------------------------------------------------------------------------- validation

class _Check:
    """Validation helpers that turn a field path into a ScenarioError with its line."""

    def __init__(self, raw: _Raw):
        self.raw = raw
        self.file = raw.file
        self.warnings: list[str] = []

    # -- locations
    def line(self, path: str) -> int | None:
        p = path
        while True:
            if p in self.raw.origins:
                return None
            if p in self.raw.lines:
                return self.raw.lines[p]
            if not p:
                return None
            p = _parent(p)

    def origin(self, path: str) -> str | None:
        p = path
        while True:
            if p in self.raw.origins:
                return self.raw.origins[p]
            if not p:
                return None
            p = _parent(p)

    def error(self, path: str, message: str) -> ScenarioError:
        origin = self.origin(path)
        return ScenarioError(self.file, self.line(path), path,
                             f"{message} (set by {origin})" if origin else message)

    def warn(self, path: str, message: str) -> None:
        self.warnings.append(str(self.error(path, message)))

    def source(self, path: str) -> Source:
        return Source(self.file, self.line(path), path)

    # -- shapes
    def mapping(self, value: Any, path: str, known: Sequence[str] | None = None,
                optional: bool = True) -> dict[str, Any]:
        if value is None and optional:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"expected a mapping, got {_describe(value)}")
        if known is not None:
            self.known(value, path, known)
        return value

    def known(self, mapping: dict[str, Any], path: str, known: Iterable[str]) -> None:
        known = list(known)
        for key in mapping:
            if key not in known:
                raise self.error(_join(path, key), f"unknown field; known fields: {', '.join(known)}")

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(path, f"expected a list, got {_describe(value)}")
        return value

    def required(self, mapping: dict[str, Any], key: str, path: str, what: str) -> Any:
        if mapping.get(key) is None:
            raise self.error(_join(path, key), f"required field missing; expected {what}")
        return mapping[key]

    def string(self, value: Any, path: str, what: str = "a string") -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected {what}, got {_describe(value)}")
        return value

    def nonempty(self, value: Any, path: str, what: str) -> str:
        s = self.string(value, path, what)
        if not s:
            raise self.error(path, f"expected {what}, got an empty string")
        return s

    def integer(self, value: Any, path: str, minimum: int | None = None, bits: int = 64) -> int:
        """An integer >= minimum that fits the Go field it stands for (int64, or int32)."""
        what = ("an integer" if minimum is None else f"an integer >= {minimum}") + (" (int32)" if bits == 32 else "")
        if isinstance(value, bool) or not isinstance(value, int) or (minimum is not None and value < minimum):
            raise self.error(path, f"expected {what}, got {_describe(value)}")
        if not -2 ** (bits - 1) <= value < 2 ** (bits - 1):
            raise self.error(path, f"{value} does not fit in an int{bits}; expected {what}")
        return value

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise self.error(path, f"expected a finite number >= 0, got {_describe(value)}")
        return float(value)

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"expected true or false, got {_describe(value)}")
        return value

    def duration(self, value: Any, path: str) -> float:
        if isinstance(value, str):
            try:
                seconds = parse_duration(value)
            except ValueError:
                raise self.error(path, f"{_describe(value)} is not a duration; expected {_DURATION_HINT}") from None
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                seconds = parse_duration(value)
            except ValueError:
                raise self.error(path, f"{value!r} is not a duration; expected {_DURATION_HINT}") from None
        else:
            raise self.error(path, f"expected a duration ({_DURATION_HINT}), got {_describe(value)}")
        if seconds < 0:
            raise self.error(path, f"{_describe(value)} is negative; expected a duration >= 0")
        return seconds

    def one_of(self, value: Any, path: str, allowed: Sequence[str], what: str) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise self.error(path, f"{_describe(value)} is not a valid {what}; expected one of: "
                                   f"{', '.join(allowed)}")
        return value

    def status(self, value: Any, path: str) -> str:
        """"True"/"False"/"Unknown"; an unquoted YAML true/false is taken as "True"/"False"."""
        if isinstance(value, bool):
            return "True" if value else "False"
        return self.one_of(value, path, CONDITION_STATUSES, "status")

    def dns_label(self, value: Any, path: str) -> str:
        s = self.string(value, path, "a DNS-1123 label")
        if len(s) > 63 or not _DNS_LABEL.match(s):
            raise self.error(path, f'"{s}" is not a valid DNS-1123 label; expected {_LABEL_HINT}')
        return s

    def dns_subdomain(self, value: Any, path: str) -> str:
        s = self.string(value, path, "a DNS-1123 subdomain")
        if not _is_subdomain(s):
            raise self.error(path, f'"{s}" is not a valid DNS-1123 subdomain; expected {_SUBDOMAIN_HINT}')
        return s

    def quantity(self, value: Any, path: str) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and not -2 ** 63 <= value < 2 ** 63:
            raise self.error(path, f"{value} does not fit in an int64; expected a quantity such as 1Gi")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # cpu: 8 is a quantity too
        if not isinstance(value, str) or not _QUANTITY.match(value) or value.startswith("-"):
            raise self.error(path, f"{_describe(value)} is not a quantity; expected e.g. 250m, 2, 1Gi, 500Mi")
        try:
            parse_quantity(value)
        except ValueError as e:
            raise self.error(path, f"{_describe(value)} is not a quantity: {e}") from None
        return value

    def resource_name(self, key: str, path: str) -> None:
        """validateResourceName for node capacity: a standard name or a fully-qualified extended resource."""
        standard = key in ("cpu", "memory", "pods", "ephemeral-storage", "storage") or key.startswith("hugepages-")
        prefix, slash, name = key.partition("/")
        if standard or (slash and "." in prefix and _is_subdomain(prefix) and _is_qualified_name(name)):
            return
        raise self.error(path, "unknown resource name; expected cpu, memory, pods, ephemeral-storage, "
                               "hugepages-<size> or a fully-qualified extended resource such as nvidia.com/gpu")

    def str_map(self, value: Any, path: str, check_key: Callable[[str, str], None] | None = None,
                check_value: Callable[[Any, str], str] | None = None) -> dict[str, str]:
        out = {}
        for key, v in self.mapping(value, path).items():
            child = _join(path, key)
            if check_key:
                check_key(key, child)
            out[key] = check_value(v, child) if check_value else self.string(v, child)
        return out

    def label_key(self, key: str, path: str) -> None:
        if not _is_qualified_name(key):
            raise self.error(path, f'"{key}" is not a valid label key; expected a name (at most 63 '
                                   "characters: letters, digits, '-', '_', '.') with an optional DNS "
                                   "subdomain prefix and '/'")

    def label_value(self, value: Any, path: str) -> str:
        s = self.string(value, path, "a string (label values are strings: quote numbers and booleans)")
        if s and (len(s) > 63 or not _QUALIFIED_NAME.match(s)):
            raise self.error(path, f'"{s}" is not a valid label value; expected at most 63 characters: '
                                   "letters, digits, '-', '_', '.', starting and ending with a letter or digit")
        return s


def _is_subdomain(s: str) -> bool:
    return len(s) <= 253 and bool(_DNS_SUBDOMAIN.match(s))


def _is_qualified_name(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if "/" in key and not _is_subdomain(prefix):
        return False
    return 0 < len(name) <= 63 and bool(_QUALIFIED_NAME.match(name))


# --------------------------------------------------------------------------------------------- top level

def load_scenario(path: str, overrides: Sequence[str] = (), *, kubernetes_version: str | None = None,
                  seed: int | None = None, until: str | None = None,
                  supported_faults: frozenset[str] | None = None, text: str | None = None,
                  sources: Mapping[str, str] | None = None) -> Scenario:
    """Read, override and validate a scenario file; raise ScenarioError on any invalid input.

    ``text``, when given, is the scenario itself (read from standard input, or wrapped around plain
    manifests); ``path`` then names it in messages and anchors relative ``objectsFrom`` paths.
    ``sources`` gives the text of ``objectsFrom`` entries that are not files (plain manifests on standard
    input are ``<stdin>``), read as files are: same YAML guards, errors with their own name and lines.

    ``overrides`` are ``PATH=VALUE`` strings (``--set``), applied in order to the raw YAML tree before
    validation; ``kubernetes_version``, ``seed`` and ``until`` then replace spec.kubernetesVersion/seed/until.
    ``supported_faults``, when given, limits the fault types to those whose model exists.
    """
    try:
        text = _read(path) if text is None else text
    except OSError as exc:
        raise ScenarioError(path, None, "", f"cannot read the scenario: {exc.strerror or exc}") from None
    nodes = _compose(text, path)
    if not nodes:
        raise ScenarioError(path, None, "", "the file is empty; expected a Scenario (apiVersion: "
                                            f"{API_VERSION}, kind: Scenario)")
    if len(nodes) > 1:
        raise ScenarioError(path, nodes[1].start_mark.line + 1, "",
                            "expected one YAML document (a Scenario), found another one here")
    lines: dict[str, int] = {"": nodes[0].start_mark.line + 1}
    texts: dict[str, str] = {}
    raw = _Raw(path, _Builder(path, lines, texts).tree(nodes[0]), lines, texts)
    raw.sources = sources or {}
    for expr in overrides:
        raw.apply_set(expr)
    if kubernetes_version is not None:  # v1.34 and 1.34.2 name the minor 1.34, for every command
        kubernetes_version = normalize_version(kubernetes_version)
    for field, value, flag in (("kubernetesVersion", kubernetes_version, "--kubernetes-version"),
                               ("seed", seed, "--seed"), ("until", until, "--until")):
        if value is not None:
            raw.apply_keyword(field, value, flag)
    return _scenario(_Check(raw), raw.data, supported_faults)


def _scenario(ck: _Check, data: Any, supported_faults: frozenset[str] | None) -> Scenario:
    top = ck.mapping(data, "", ("apiVersion", "kind", "metadata", "spec"), optional=False)
    api_version = ck.required(top, "apiVersion", "", f'"{API_VERSION}"')
    if api_version != API_VERSION:
        raise ck.error("apiVersion", f'{_describe(api_version)} is not supported; expected "{API_VERSION}"')
    kind = ck.required(top, "kind", "", '"Scenario"')
    if kind != "Scenario":
        raise ck.error("kind", f'{_describe(kind)} is not supported; expected "Scenario"')
    meta = ck.mapping(ck.required(top, "metadata", "", "a mapping with name"), "metadata",
                      ("name", "description"))
    name = ck.dns_label(ck.required(meta, "name", "metadata", "a DNS-1123 label, e.g. my-scenario"),
                        "metadata.name")
    description = ck.string(meta["description"], "metadata.description") \
        if meta.get("description") is not None else ""

    spec = ck.mapping(top.get("spec"), "spec", ("kubernetesVersion", "startTime", "seed", "until", "cluster",
                                                "objects", "objectsFrom", "behaviors", "actions", "expect"))
    # validated in the documented field order, so the first error reported is the first one in the file
    version = _version(ck, spec.get("kubernetesVersion"), "spec.kubernetesVersion")
    start_time = _start_time(ck, spec.get("startTime"), "spec.startTime")
    seed = ck.integer(spec["seed"], "spec.seed", 0) if spec.get("seed") is not None else 0
    until = ck.duration(spec["until"], "spec.until") if spec.get("until") is not None else None
    if until is not None and not 0 < until <= MAX_UNTIL:
        raise ck.error("spec.until", f"{_describe(spec['until'])} is {'not greater than 0' if until <= 0 else 'longer than a week'}; "
                                     f"expected a duration > 0 and at most {format_duration(MAX_UNTIL)}")
    _fits_the_calendar(ck, start_time, until, spec)
    cluster = _cluster(ck, spec.get("cluster"), version)
    api = profile(version, cluster.featureGates)   # the API server's behaviour, with the cluster's gates
    objects, pending = _objects(ck, spec.get("objects"), spec.get("objectsFrom"))
    behaviors = tuple(_behavior_rule(ck, b, f"spec.behaviors[{i}]")
                      for i, b in enumerate(ck.sequence(spec.get("behaviors"), "spec.behaviors")))
    node_names = [n.name for n in cluster.nodes]
    joined: list[NodeSpec] = list(cluster.nodes)  # nodes that join later may be named by any action
    raw_actions = ck.sequence(spec.get("actions"), "spec.actions")
    for i, a in enumerate(raw_actions):
        if isinstance(a, dict) and "join" in a:
            joined.extend(_node_entry(ck, a["join"], f"spec.actions[{i}].join", joined, []))
    node_names = [n.name for n in joined]
    actions = [_action(ck, a, f"spec.actions[{i}]", node_names, until, supported_faults)
               for i, a in enumerate(raw_actions)]
    pending += [(ck, a.manifest, f"spec.actions[{i}].{a.verb}") for i, a in enumerate(actions)
                if a.manifest is not None]
    notes: list[tuple[dict[str, Any], str, str]] = []
    crds = _strict(pending, api, notes)
    minor = int(version.split(".")[1])
    kinds = schema.kind_names(minor, crds)
    for i, a in enumerate(actions):
        _action_kind(ck, a, f"spec.actions[{i}]", kinds, minor)
    _dry_run(ck, objects, actions, kinds, api)
    by_name = {n.name: n for n in joined}
    for a in actions:
        if a.verb == "join":
            a.nodes = [by_name[n] for n in a.raw_join_names]
    expect = [_expectation(ck, e, f"spec.expect[{i}]", until, kinds)
              for i, e in enumerate(ck.sequence(spec.get("expect"), "spec.expect"))]
    manifests = [m.obj for m in objects] + [a.manifest for a in actions if a.manifest is not None]
    for i in unmatched_rules(manifests, behaviors):
        ck.warn(f"spec.behaviors[{i}]", "matches no container of the scenario's manifests; it has no effect")
    return Scenario(name=name, description=description, kubernetes_version=version, start_time=start_time,
                    seed=seed, until=until, cluster=cluster, objects=objects, actions=actions, expect=expect,
                    path=ck.file, warnings=ck.warnings, behaviors=behaviors,
                    field_notes=[(object_ref(obj), f"{sub}: {message}") for obj, sub, message in notes])


def _behavior_rule(ck: _Check, value: Any, path: str) -> BehaviorRule:
    """spec.behaviors[i]: glob patterns (pod, container, image) and the behaviour fields of section 2.1."""
    m = ck.mapping(value, path, ("pod", "container", "image", "behavior"), optional=False)
    patterns = {k: ck.nonempty(m[k], _join(path, k), "a glob pattern") if m.get(k) is not None else None
                for k in ("pod", "container", "image")}
    fields = ck.mapping(ck.required(m, "behavior", path, "a mapping of podlife/behavior fields"),
                        _join(path, "behavior"))
    try:
        check_fields(fields, "")
    except BehaviorError as e:
        raise ck.error(f"{path}.behavior.{e.path}", str(e).split(": ", 1)[-1]) from None
    return BehaviorRule(fields=dict(fields), **patterns)


def _version_range() -> str:
    versions = [str(v) for v in MODELLED_VERSIONS]
    minors = [v.partition(".")[2] for v in versions]
    if all(m.isdigit() for m in minors) and [int(m) for m in minors] == list(
            range(int(minors[0]), int(minors[0]) + len(minors))):
        return f'"{versions[0]}" … "{versions[-1]}"'
    return ", ".join(f'"{v}"' for v in versions)


def _version(ck: _Check, value: Any, path: str) -> str:
    if value is None:
        return NEWEST
    if isinstance(value, float):
        text = ck.raw.texts.get(path, str(value))
        if str(value) != text:  # 1.20 reads as 1.2
            raise ck.error(path, f'{text} is read by YAML as the number {value}; quote the version, '
                                 f'e.g. "{text}"')
        if str(value) in MODELLED_VERSIONS:
            return str(value)
        raise ck.error(path, f"{value} is not a modelled version; expected a quoted minor version, "
                             f"one of {_version_range()}")
    if not isinstance(value, str):
        raise ck.error(path, f'expected a quoted minor version such as "{NEWEST}", got {_describe(value)}')
    if value not in MODELLED_VERSIONS:
        raise ck.error(path, f'"{value}" is not a modelled version; expected a minor version, one of '
                             f"{_version_range()}")
    return value


def _fits_the_calendar(ck: _Check, start: datetime, until: float | None, spec: dict[str, Any]) -> None:
    """Every instant of the run must have an RFC 3339 timestamp (a four-digit year, as metav1.Time and Go's
    RFC 3339 encoding need): startTime plus the run's span (spec.until, else HORIZON_SECONDS) ends by
    9999-12-31T23:59:59Z."""
    span = until if until is not None else HORIZON_SECONDS
    if (LAST_TIME - start).total_seconds() >= span:
        return
    latest = (LAST_TIME - timedelta(seconds=span)).strftime("%Y-%m-%dT%H:%M:%SZ")
    what = f"ends {format_duration(span)} after it (spec.until)" if until is not None else \
        f"may last {format_duration(span)} (the longest without spec.until)"
    raise ck.error("spec.startTime", f"{_describe(spec.get('startTime'))} is too late: the run {what}, past "
                                     "9999-12-31T23:59:59Z, the last time a timestamp can express; expected a time at "
                                     f"or before {latest}")


def _start_time(ck: _Check, value: Any, path: str) -> datetime:
    if value is None:
        return DEFAULT_START_TIME
    m = _RFC3339.match(value) if isinstance(value, str) else None
    try:
        if not m:
            raise ValueError
        y, mo, d, h, mi, s, frac, _, sign, oh, om = m.groups()
        micro = int((frac or "0")[:6].ljust(6, "0"))
        offset = timedelta(hours=int(oh), minutes=int(om)) * (-1 if sign == "-" else 1) if sign else timedelta()
        return datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), micro,
                        tzinfo=timezone(offset)).astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise ck.error(path, f"{_describe(value)} is not an RFC 3339 time; expected e.g. "
                             '"2020-06-03T20:39:30Z"') from None


# ------------------------------------------------------------------------------------------------ cluster

_NODE_FIELDS = ("name", "namePrefix", "count", "zone", "labels", "taints", "capacity", "runtime", "podCIDR")
_COMPONENTS = (("kubelet", KubeletConfiguration), ("controllerManager", ControllerManagerConfiguration),
               ("apiServer", ApiServerConfiguration), ("scheduler", SchedulerConfiguration))


def _cluster(ck: _Check, value: Any, version: str) -> ClusterSpec:
    path = "spec.cluster"
    cluster = ck.mapping(value, path, ("nodes",) + tuple(name for name, _ in _COMPONENTS) + ("featureGates",))
    if cluster.get("nodes") is None:
        nodes = [NodeSpec(name="node-1")]
        explicit: list[tuple[str, ipaddress.IPv4Network]] = []
    else:
        nodes, explicit = [], []
        for i, entry in enumerate(ck.sequence(cluster["nodes"], f"{path}.nodes")):
            nodes.extend(_node_entry(ck, entry, f"{path}.nodes[{i}]", nodes, explicit))
            if len(nodes) > MAX_NODES:
                raise ck.error(f"{path}.nodes[{i}]", f"{len(nodes):,} nodes; podlife runs clusters of at most "
                                                     f"{MAX_NODES:,} nodes (Kubernetes' supported maximum)")
        if not nodes:
            ck.warn(f"{path}.nodes", "no nodes: every pod will stay Pending")
    _default_pod_cidrs(ck, nodes, explicit, f"{path}.nodes")
    minor = int(version.split(".")[1])
    # set on every component (--feature-gates of the API server, controller-manager and scheduler, the
    # kubelets' featureGates), as an operator sets a cluster's gates
    gates = _gates(ck, cluster["featureGates"], f"{path}.featureGates", minor,
                   "the API server, controllers, scheduler and kubelets") \
        if cluster.get("featureGates") is not None else {}
    components = {name: _component(ck, cluster.get(name), f"{path}.{name}", cls, version, gates)
                  for name, cls in _COMPONENTS}
    _check_scheduler(ck, components["scheduler"], f"{path}.scheduler")
    return ClusterSpec(nodes=nodes, featureGates=gates, **components)


def _gates(ck: _Check, value: Any, path: str, minor: int, whose: str) -> dict[str, bool]:
    """A featureGates map: each gate known to the release and not locked to the other value (featuregate
    SetFromMap), among those podlife models. A gate set against the release's default is said, as the run then
    departs from what that release does out of the box."""
    gates = {}
    for gate, v in ck.mapping(value, path).items():
        on = ck.boolean(v, _join(path, gate))
        problem = features.check(gate, on, minor)
        if problem is not None:
            raise ck.error(_join(path, gate), problem)
        gates[gate] = on
        if on != features.defaults(minor)[gate]:
            ck.warn(_join(path, gate), f"{features.departure(gate, on, minor)}; {whose} follow it")
    return gates


def _check_scheduler(ck: _Check, config: SchedulerConfiguration, path: str) -> None:
    """pkg/scheduler/apis/config/validation: backoffs ordered, percentageOfNodesToScore within 0-100."""
    if config.podMaxBackoffSeconds < config.podInitialBackoffSeconds:
        raise ck.error(f"{path}.podMaxBackoffSeconds", f"{config.podMaxBackoffSeconds} must be greater than or "
                                                       f"equal to podInitialBackoffSeconds "
                                                       f"({config.podInitialBackoffSeconds})")
    if not 0 <= config.percentageOfNodesToScore <= 100:
        raise ck.error(f"{path}.percentageOfNodesToScore", f"{config.percentageOfNodesToScore} is not in the "
                                                           "range 0-100")


def _node_entry(ck: _Check, value: Any, path: str, previous: list[NodeSpec],
                explicit: list[tuple[str, ipaddress.IPv4Network]]) -> list[NodeSpec]:
    entry = ck.mapping(value, path, _NODE_FIELDS, optional=False)
    names = _node_names(ck, entry, path)
    taken = {n.name for n in previous}
    for n in names:
        if n in taken:
            raise ck.error(f"{path}.{'name' if 'name' in entry else 'namePrefix'}",
                           f'duplicate node name "{n}"; expected unique node names')
        taken.add(n)
    labels = ck.str_map(entry.get("labels"), f"{path}.labels", ck.label_key, ck.label_value)
    zone = None
    if entry.get("zone") is not None:
        zone = ck.label_value(entry["zone"], f"{path}.zone")
        if labels.get(ZONE_LABEL, zone) != zone:
            raise ck.error(f"{path}.zone", f'"{zone}" contradicts labels[{ZONE_LABEL}] "{labels[ZONE_LABEL]}"; '
                                           "expected one of them, or the same value")
        labels[ZONE_LABEL] = zone
    capacity = NodeSpec(name="").capacity
    capacity.update(ck.str_map(entry.get("capacity"), f"{path}.capacity", check_key=ck.resource_name,
                               check_value=ck.quantity))
    for err in validation.validate_node_resources({"capacity": capacity}):   # what the Node's registration checks
        name = err.path.rpartition("capacity.")[2]
        raise ck.error(_join(f"{path}.capacity", name), f"{_describe(capacity[name])}: {err.detail}")
    runtime = ck.one_of(entry["runtime"], f"{path}.runtime", RUNTIMES, "runtime") \
        if entry.get("runtime") is not None else "containerd"
    cidr = _pod_cidr(ck, entry, path, names, explicit)
    taints = _taints(ck, entry.get("taints"), f"{path}.taints")
    return [NodeSpec(name=n, zone=zone, labels=dict(labels), taints=copy.deepcopy(taints),
                     capacity=dict(capacity), runtime=runtime, podCIDR=cidr) for n in names]


def _node_names(ck: _Check, entry: dict[str, Any], path: str) -> list[str]:
    if ("name" in entry) == ("namePrefix" in entry):
        raise ck.error(path, "expected exactly one of name or namePrefix (with count)")
    if "name" in entry:
        if "count" in entry:
            raise ck.error(f"{path}.count", "count needs namePrefix instead of name")
        return [ck.dns_subdomain(entry["name"], f"{path}.name")]
    prefix = ck.string(entry["namePrefix"], f"{path}.namePrefix")
    count = ck.integer(ck.required(entry, "count", path, "an integer >= 1 with namePrefix"), f"{path}.count", 1)
    if count > MAX_NODES:
        raise ck.error(f"{path}.count", f"{count:,} nodes; podlife runs clusters of at most {MAX_NODES:,} nodes "
                                        "(Kubernetes' supported maximum)")
    names = [f"{prefix}{i}" for i in range(count)]
    for n in (names[0], names[-1]):
        if not _is_subdomain(n):
            raise ck.error(f"{path}.namePrefix", f'"{prefix}" makes the node name "{n}", which is not a valid '
                                                 f"DNS-1123 subdomain; expected {_SUBDOMAIN_HINT}")
    return names


def _pod_cidr(ck: _Check, entry: dict[str, Any], path: str, names: list[str],
              explicit: list[tuple[str, ipaddress.IPv4Network]]) -> str | None:
    if entry.get("podCIDR") is None:
        return None
    cpath = f"{path}.podCIDR"
    text = ck.string(entry["podCIDR"], cpath, "an IPv4 CIDR such as 10.244.1.0/24")
    try:
        if "/" not in text:
            raise ValueError
        net = ipaddress.IPv4Network(text)
    except ValueError:
        raise ck.error(cpath, f'"{text}" is not a valid IPv4 CIDR; expected a network address with a prefix '
                              "length, e.g. 10.244.1.0/24") from None
    if len(names) > 1:
        raise ck.error(cpath, f"one podCIDR cannot serve the {len(names)} nodes of namePrefix/count; leave it "
                              "out to give each node its own /24")
    for other, other_net in explicit:
        if net.overlaps(other_net):
            raise ck.error(cpath, f'{net} overlaps the podCIDR {other_net} of node "{other}"; expected '
                                  "disjoint pod CIDRs")
    explicit.append((names[0], net))
    return str(net)


def _default_pod_cidrs(ck: _Check, nodes: list[NodeSpec], explicit: list[tuple[str, ipaddress.IPv4Network]],
                       path: str) -> None:
    """Each node without a podCIDR gets its default (model.default_pod_cidr), clear of the explicit ones."""
    taken = [net for _, net in explicit]
    offset = 0
    for i, node in enumerate(nodes):
        if node.podCIDR is not None:
            continue
        found = default_pod_cidr(i, offset, taken)
        if found is None:
            raise ck.error(path, "no free /24 left in 10.0.0.0/8 for a default podCIDR; expected a podCIDR "
                                 "on every node")
        net, offset = found
        node.podCIDR = str(net)


def _taints(ck: _Check, value: Any, path: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(ck.sequence(value, path)):
        tpath = f"{path}[{i}]"
        taint = ck.mapping(item, tpath, ("key", "value", "effect"), optional=False)
        key = ck.string(ck.required(taint, "key", tpath, "a taint key, e.g. dedicated"), f"{tpath}.key")
        ck.label_key(key, f"{tpath}.key")
        effect = ck.one_of(ck.required(taint, "effect", tpath, f"one of {', '.join(TAINT_EFFECTS)}"),
                           f"{tpath}.effect", TAINT_EFFECTS, "taint effect")
        if (key, effect) in seen:
            raise ck.error(tpath, f'duplicate taint "{key}" with effect {effect}; expected one taint per key '
                                  "and effect")
        seen.add((key, effect))
        if taint.get("value") is not None:
            out.append({"key": key, "value": ck.label_value(taint["value"], f"{tpath}.value"), "effect": effect})
        else:
            out.append({"key": key, "effect": effect})
    return out


def _component(ck: _Check, value: Any, path: str, cls: type, version: str, gates: dict[str, bool]) -> Any:
    kinds = field_kinds(cls)
    given = ck.mapping(value, path, list(kinds))
    config = cls()
    for key, v in given.items():
        fpath = f"{path}.{key}"
        if v is None:
            continue  # null = unset: the default (possibly per-version) stays
        # A given evictionHard (or any map) replaces the default map as a whole, as upstream: the kubelet only
        # applies DefaultEvictionHard when the field is unset (pkg/kubelet/apis/config/v1beta1/defaults.go), so
        # signals left out are not enforced. (The newer upstream mergeDefaultEvictionSettings is not modelled.)
        if kinds[key] == "gates":
            config.featureGates = _gates(ck, v, fpath, int(version.split(".")[1]), "the kubelets (only)")
            continue
        setattr(config, key, _config_value(ck, v, fpath, kinds[key], key))
    if cls is KubeletConfiguration:
        _check_soft_eviction(ck, config, path)
        # the kubelet's own featureGates win over the cluster's
        _check_kubelet(ck, config, path, given, profile(version, {**gates, **config.featureGates}))
    return config


def _check_kubelet(ck: _Check, kc: KubeletConfiguration, path: str, given: dict[str, Any], prof: Any) -> None:
    """pkg/kubelet/apis/config/validation ValidateKubeletConfiguration: the checks on the fields podlife reads;
    its feature gates were checked as they were read (_gates)."""
    sgp, critical = kc.shutdownGracePeriod, kc.shutdownGracePeriodCriticalPods
    if (sgp > 0 or critical > 0) and not prof.graceful_node_shutdown:
        key = "shutdownGracePeriod" if sgp > 0 else "shutdownGracePeriodCriticalPods"
        raise ck.error(f"{path}.{key}", "specifying shutdownGracePeriod or shutdownGracePeriodCriticalPods requires "
                                        f"feature gate GracefulNodeShutdown (beta and on by default from 1.21; "
                                        f"Kubernetes {prof.version} does not have it on)")
    for key, value in (("shutdownGracePeriod", sgp), ("shutdownGracePeriodCriticalPods", critical)):
        if 0 < value < 1:
            raise ck.error(f"{path}.{key}", f"{_describe(given[key])} must be either zero or otherwise >= 1 sec")
    if critical > sgp:
        raise ck.error(f"{path}.shutdownGracePeriodCriticalPods",
                       f"{format_duration(critical)} must be <= shutdownGracePeriod ({format_duration(sgp)})")


def _config_value(ck: _Check, value: Any, path: str, kind: str, key: str) -> Any:
    if kind == "duration":
        return ck.duration(value, path)
    if kind == "positive duration":   # the components' config validation refuses 0 and negatives
        seconds = ck.duration(value, path)
        if seconds <= 0:
            raise ck.error(path, f"{_describe(value)} must be greater than 0; expected a duration "
                                 f"({_DURATION_HINT}) > 0")
        return seconds
    if kind.startswith("positive int"):
        return ck.integer(value, path, 1, bits=int(kind[-2:]))
    if kind.startswith("int"):
        return ck.integer(value, path, None if key == "evictionMaxPodGracePeriod" else 0, bits=int(kind[-2:]))
    if kind == "float":
        return ck.number(value, path)
    if kind == "bool":
        return ck.boolean(value, path)
    if kind == "signals":
        return ck.str_map(value, path, lambda k, p: _signal(ck, k, p), lambda v, p: _threshold(ck, v, p))
    if kind == "durations":
        out = {}
        for signal, v in ck.mapping(value, path).items():
            _signal(ck, signal, _join(path, signal))
            out[signal] = ck.duration(v, _join(path, signal))
        return out
    raise AssertionError(f"unknown config kind {kind!r} for {path}")


def _signal(ck: _Check, key: str, path: str) -> None:
    if key not in EVICTION_SIGNALS:
        raise ck.error(path, f'unknown eviction signal "{key}"; expected one of: {", ".join(EVICTION_SIGNALS)}')


def _threshold(ck: _Check, value: Any, path: str) -> str:
    if not isinstance(value, str):   # KubeletConfiguration's thresholds are map[string]string
        raise ck.error(path, f"expected a string such as 100Mi or 10%, got {_describe(value)}")
    if value.endswith("%"):
        if not _PERCENT.match(value) or float(value[:-1]) > 100:
            raise ck.error(path, f'"{value}" is not a valid percentage; expected 0% … 100%')
        return value
    try:
        return ck.quantity(value, path)
    except ScenarioError:
        raise ck.error(path, f"{_describe(value)} is not an eviction threshold; expected a quantity (e.g. "
                             "100Mi) or a percentage (e.g. 10%)") from None


def _check_soft_eviction(ck: _Check, kubelet: KubeletConfiguration, path: str) -> None:
    # pkg/kubelet/eviction/helpers.go ParseThresholdConfig: a soft threshold needs a grace period
    for signal in kubelet.evictionSoft:
        if signal not in kubelet.evictionSoftGracePeriod:
            raise ck.error(_join(f"{path}.evictionSoft", signal),
                           f"a soft eviction threshold needs a grace period; expected "
                           f"{_join(f'{path}.evictionSoftGracePeriod', signal)} as well")
    for signal in kubelet.evictionSoftGracePeriod:
        if signal not in kubelet.evictionSoft:
            ck.warn(_join(f"{path}.evictionSoftGracePeriod", signal),
                    "grace period for a signal without a soft threshold; it has no effect")


# ------------------------------------------------------------------------------------------------ objects

def _manifest_shape(ck: _Check, value: Any, path: str) -> dict[str, Any]:
    """Only the shape: a mapping with apiVersion, kind and metadata.name or generateName (the API validates)."""
    obj = ck.mapping(value, path or "", optional=False)
    for key in ("apiVersion", "kind"):
        ck.nonempty(ck.required(obj, key, path, "a non-empty string"), _join(path, key), "a non-empty string")
    meta = ck.mapping(ck.required(obj, "metadata", path, "a mapping with name or generateName"),
                      _join(path, "metadata"), optional=False)
    mpath = _join(path, "metadata")
    if meta.get("name") is None and meta.get("generateName") is None:
        raise ck.error(_join(mpath, "name"), "required field missing; expected metadata.name or "
                                             "metadata.generateName")
    for key in ("name", "generateName", "namespace"):
        if meta.get(key) is not None:
            ck.nonempty(meta[key], _join(mpath, key), "a non-empty string")
    return obj


# (the check that knows the manifest's lines, the manifest, its path): strict decoding waits for the version
# and for every CustomResourceDefinition of the scenario
_Pending = list[tuple[_Check, dict[str, Any], str]]


def _manifests(ck: _Check, value: Any, path: str, out: list[Manifest], pending: _Pending) -> None:
    """One manifest, or each item of a ``kind: List`` (kubectl accepts v1 List and any ``…List`` with items)."""
    obj = ck.mapping(value, path or "", optional=False)
    kind = obj.get("kind")
    if kind == "List" or (isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list)):
        ck.known(obj, path, ("apiVersion", "kind", "metadata", "items"))
        for i, item in enumerate(ck.sequence(ck.required(obj, "items", path, "a list of manifests"),
                                             _join(path, "items"))):
            _manifests(ck, item, _join(_join(path, "items"), i), out, pending)
        return
    _json_numbers(obj)
    out.append(Manifest(_manifest_shape(ck, obj, path), ck.source(path)))
    pending.append((ck, obj, path))


def _json_numbers(node: Any) -> None:
    """What kubectl's YAML-to-JSON conversion does to numbers: a float with no fraction below 1e21 is written
    without a decimal point (encoding/json's float format), so the API server reads it as an integer (``5.0``
    is 5, and ``-5.0`` fails validation as -5 does); a larger one keeps its exponent and does not decode into an
    integer field. In place, keeping the mapping's order."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in list(items):
        if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
            node[k] = int(v)
        elif isinstance(v, (dict, list)):
            _json_numbers(v)


def _objects(ck: _Check, inline: Any, files: Any) -> tuple[list[Manifest], _Pending]:
    out: list[Manifest] = []
    pending: _Pending = []
    for i, obj in enumerate(ck.sequence(inline, "spec.objects")):
        _manifests(ck, obj, f"spec.objects[{i}]", out, pending)
    base = os.path.dirname(ck.file)
    for i, rel in enumerate(ck.sequence(files, "spec.objectsFrom")):
        path = f"spec.objectsFrom[{i}]"
        rel = ck.nonempty(rel, path, "a file path relative to the scenario")
        _objects_file(ck, rel if rel in ck.raw.sources else os.path.normpath(os.path.join(base, rel)), path, out,
                      pending)
    return out, pending


def _objects_file(ck: _Check, file: str, path: str, out: list[Manifest], pending: _Pending) -> None:
    try:
        text = ck.raw.sources[file] if file in ck.raw.sources else _read(file)
    except OSError as exc:
        raise ck.error(path, f'cannot read "{file}": {exc.strerror or exc}') from None
    for node in _compose(text, file):
        lines: dict[str, int] = {}
        texts: dict[str, str] = {}
        obj = _Builder(file, lines, texts).tree(node)
        if obj is None:
            continue  # an empty document, as kubectl skips them
        lines[""] = node.start_mark.line + 1
        doc = _Check(_Raw(file, obj, lines, texts))
        doc.warnings = ck.warnings
        _manifests(doc, obj, "", out, pending)


def _schema_path(path: str, segments: Sequence[str | int]) -> str:
    for seg in segments:
        path = _join(path, seg)
    return path


def _strict(pending: _Pending, prof: Profile, notes: list[tuple[dict[str, Any], str, str]]
            ) -> list[dict[str, Any]]:
    """Decode every manifest strictly against the version's schema (kubectl apply --validate=strict), custom
    resources against their CustomResourceDefinition; then one warning per kind podlife does not model, and one
    per not-modelled field a manifest sets (also added to ``notes``: manifest, field path, message)."""
    minor = prof.minor
    custom: dict[schema.GroupVersionKind, dict[str, Any]] = {}
    for c, obj, path in pending:
        if obj.get("kind") == "CustomResourceDefinition":
            _strict_one(c, obj, path, minor, {})
            for i, where, problem in schema.invalid_custom_schemas(obj):
                field = _schema_path(path, ("spec", "versions", i, "schema", "openAPIV3Schema", *where))
                raise c.error(field, problem if where else f"not a valid structural schema: {problem}")
            custom.update(schema.custom_schemas(obj))
    unmodelled: dict[tuple[str, str], list[tuple[_Check, str]]] = {}
    dropped: list[list[str]] = []
    for c, obj, path in pending:
        if obj.get("kind") != "CustomResourceDefinition":
            _strict_one(c, obj, path, minor, custom)
            dropped.append(_gated_fields(c, obj, path, prof))
        else:
            dropped.append([])
        if obj["kind"] not in KINDS and obj["kind"] != "CustomResourceDefinition":
            unmodelled.setdefault((obj["kind"], obj["apiVersion"]), []).append((c, path))
    for (c, obj, path), gone in zip(pending, dropped):
        said = api_warnings(obj, prof)
        told = [sub for sub, _ in said] + gone   # a field the version drops needs no "not modelled" as well
        for sub, message in said:
            c.warn(f"{path}.{sub}" if path else sub, message)
        for sub, message in unmodelled_fields(obj):
            if not any(sub == t or sub.startswith((f"{t}.", f"{t}[")) for t in told):
                c.warn(f"{path}.{sub}" if path else sub, message)
                notes.append((obj, sub, message))
    objs = [obj for _, obj, _ in pending]
    for i, sub, message in missing_references(objs):
        c, _, path = pending[i]
        c.warn(f"{path}.{sub}" if path else sub, message)
    for (kind, api_version), places in unmodelled.items():
        c, path = places[0]
        what = "custom resource" if schema.GroupVersionKind(api_version, kind) in custom else "kind"
        count = f"{len(places)} objects" if len(places) > 1 else "1 object"
        c.warn(path, f"{what} {kind} ({api_version}) is stored and validated but not modelled: nothing acts on "
                     f"its {count}")
    return [obj for _, obj, _ in pending if obj.get("kind") == "CustomResourceDefinition"]


def _gated_fields(ck: _Check, obj: dict[str, Any], path: str, prof: Profile) -> list[str]:
    """Fields the version's API server drops because their feature gate is off (dropDisabledFields): said, not
    silently lost. Returns them."""
    from podlife.api.warnings import manifest_warnings

    covered = {p for p, _ in manifest_warnings(obj, prof)}   # said there, in its own words
    fields = _dropped_fields(obj, prof)
    for field in fields:
        if field in covered:
            continue
        ck.warn(f"{path}.{field}" if path else field,
                f"dropped: Kubernetes {prof.version} does not have this field (its feature gate is off)")
    return fields


def _dropped_fields(obj: dict[str, Any], prof: Any) -> list[str]:
    """The paths (from the object's root) of the gated fields the version drops: in a pod spec (a Pod, a pod
    template, a CronJob's job template), a Job spec, a StatefulSet's update strategy."""
    from podlife.api.registry.job import drop_disabled_job_fields
    from podlife.api.podutil import drop_disabled_fields

    def at(*keys: str) -> Any:
        node: Any = obj
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        return node

    out: list[str] = []
    kind = obj.get("kind")
    for keys in ((("spec",),) if kind == "Job" else (("spec", "jobTemplate", "spec"),) if kind == "CronJob" else ()):
        if isinstance(at(*keys), dict):
            prefix = ".".join(keys[:-1])
            out += [f"{prefix}.{d}" if prefix else d for d in drop_disabled_job_fields(copy.deepcopy(at(*keys)), prof)]
    if kind == "StatefulSet" and "maxUnavailable" in (at("spec", "updateStrategy", "rollingUpdate") or {}) and \
            not prof.statefulset_max_unavailable:
        out.append("spec.updateStrategy.rollingUpdate.maxUnavailable")
    for keys in (("spec",), ("spec", "template", "spec"), ("spec", "jobTemplate", "spec", "template", "spec")):
        spec = at(*keys)
        if isinstance(spec, dict) and "containers" in spec:
            prefix = ".".join(keys[:-1])
            out += [f"{prefix}.{d}" if prefix else d for d in drop_disabled_fields(copy.deepcopy(spec), prof)]
            break
    return out


def _strict_one(ck: _Check, obj: dict[str, Any], path: str, minor: int,
                custom: dict[schema.GroupVersionKind, dict[str, Any]]) -> None:
    errors = schema.check(obj, minor, custom)
    if errors:
        first = min(errors, key=lambda e: (ck.line(_schema_path(path, e.path)) or 0, [str(p) for p in e.path]))
        raise ck.error(_schema_path(path, first.path), first.message)
    _workload_size(ck, obj, path)


def _workload_size(ck: _Check, obj: dict[str, Any], path: str) -> None:
    """Valid upstream up to int32, but no simulation of a billion pods ends: podlife's own limit, said plainly.
    ``obj`` is a manifest or a patch of one: a workload's replicas, a Job's (or CronJob's Job template's)
    parallelism and completions, a HorizontalPodAutoscaler's replica bounds."""
    for where in (("spec",), ("spec", "jobTemplate", "spec")):
        spec: Any = obj
        for seg in where:
            spec = spec.get(seg) if isinstance(spec, dict) else None
        if not isinstance(spec, dict):
            continue
        for key in ("replicas", "parallelism", "completions", "minReplicas", "maxReplicas"):
            n = spec.get(key)
            if isinstance(n, int) and not isinstance(n, bool) and n > MAX_REPLICAS:
                raise ck.error(_schema_path(path, where + (key,)), f"{n:,} pods; podlife runs workloads of at "
                                                                  f"most {MAX_REPLICAS:,} pods")


# ------------------------------------------------------------------------------------------------ actions

_ACTION_FIELDS = {
    "delete": ("namespace", "gracePeriodSeconds", "force", "propagationPolicy"),
    "create": ("namespace",),
    "apply": ("namespace",),
    "scale": ("namespace", "replicas"),
    "patch": ("namespace", "mergePatch", "strategicMergePatch", "subresource"),
    "cordon": (),
    "uncordon": (),
    "drain": ("ignoreDaemonSets", "force", "deleteEmptyDirData", "gracePeriodSeconds", "timeout", "disableEviction"),
    "evict": ("namespace", "gracePeriodSeconds"),
    "fault": (),
    "join": (),
    "leave": (),
}


def _action(ck: _Check, value: Any, path: str, nodes: list[str], until: float | None,
            supported_faults: frozenset[str] | None) -> Action:
    raw = ck.mapping(value, path, optional=False)
    verbs = [v for v in VERBS if v in raw]
    if len(verbs) != 1:
        found = f"found {', '.join(verbs)}" if verbs else "found none"
        raise ck.error(path, f"expected exactly one verb among {', '.join(VERBS)}; {found}")
    verb = verbs[0]
    ck.known(raw, path, ("at", verb) + _ACTION_FIELDS[verb])
    at = ck.duration(ck.required(raw, "at", path, f"a duration ({_DURATION_HINT})"), f"{path}.at")
    if until is not None and at > until:
        ck.warn(f"{path}.at", f"{format_duration(at)} is after spec.until ({format_duration(until)}); "
                              "the action will not run")
    elif until is None and at > HORIZON_SECONDS:
        ck.warn(f"{path}.at", f"{format_duration(at)} is after {format_duration(HORIZON_SECONDS)}, where a run "
                              "without spec.until ends; the action will not run (set spec.until)")
    action = Action(at=at, verb=verb, target=None, raw=copy.deepcopy(raw), source=ck.source(path))
    if "namespace" in raw:
        action.namespace = ck.dns_label(raw["namespace"], f"{path}.namespace")
    vpath = f"{path}.{verb}"
    if verb in ("delete", "scale", "patch", "evict"):
        action.target = _target(ck, raw[verb], vpath)
    if verb == "delete":
        _delete_options(ck, raw, path, action)
    elif verb == "evict":
        if action.target.partition("/")[0] not in ("pod", "pods", "po"):
            raise ck.error(vpath, f'"{raw[verb]}" is not a pod; expected pod/NAME (evictions are for pods)')
        if raw.get("gracePeriodSeconds") is not None:
            action.grace_period_seconds = ck.integer(raw["gracePeriodSeconds"], f"{path}.gracePeriodSeconds")
    elif verb in ("create", "apply"):
        _json_numbers(raw[verb])
        action.manifest = _manifest_shape(ck, raw[verb], vpath)
        if action.manifest.get("kind") == "Node" and verb == "create":
            ck.warn(vpath, f"Node {action.manifest['metadata'].get('name')}: podlife assumes a machine behind it, "
                           "whose kubelet starts and registers it (as a join action does)")
        _manifest_namespace(ck, action, raw, path)
    elif verb == "scale":
        action.replicas = ck.integer(ck.required(raw, "replicas", path, "an integer >= 0"), f"{path}.replicas", 0,
                                     bits=32)
        if action.replicas > MAX_REPLICAS:
            raise ck.error(f"{path}.replicas", f"{action.replicas:,} pods; podlife runs workloads of at most "
                                               f"{MAX_REPLICAS:,} pods")
    elif verb == "patch":
        given = [k for k in ("mergePatch", "strategicMergePatch") if k in raw]
        if not given:
            ck.required(raw, "mergePatch", path, "a JSON merge patch mapping")
        if len(given) != 1:
            raise ck.error(path, "expected exactly one of mergePatch (a JSON merge patch mapping) and "
                                 "strategicMergePatch (a strategic merge patch mapping)")
        action.strategic = given[0] == "strategicMergePatch"
        action.merge_patch = ck.mapping(raw[given[0]], f"{path}.{given[0]}", optional=False)
        _json_numbers(action.merge_patch)
        _workload_size(ck, action.merge_patch, f"{path}.{given[0]}")
        if raw.get("subresource") is not None:
            action.subresource = ck.one_of(raw["subresource"], f"{path}.subresource", ("status",), "subresource")
    elif verb == "join":
        # parsed with the cluster's nodes (names unique across both); the loader attaches the NodeSpecs
        action.raw_join_names = _node_names(ck, ck.mapping(raw[verb], vpath, _NODE_FIELDS, optional=False), vpath)
    elif verb in ("cordon", "uncordon", "drain", "leave"):
        action.target = ck.dns_subdomain(ck.string(raw[verb], vpath, "a node name"), vpath)
        if verb == "drain":
            action.drain_options = _drain_options(ck, raw, path)
        if action.target not in nodes:
            ck.warn(vpath, f'"{action.target}" is not a node of this scenario ({_names(nodes)})')
    else:
        action.fault = _fault(ck, raw[verb], vpath, nodes, supported_faults)
    return action


_SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController")


def _action_kind(ck: _Check, action: Action, path: str, kinds: dict[str, schema.ServedKind], minor: int) -> None:
    """The kind a delete, scale or patch names must be served (kubectl: the server doesn't have a resource type);
    scale needs a scale subresource; a merge patch is decoded strictly against the kind's schema."""
    if action.verb not in ("delete", "scale", "patch"):
        return
    vpath = f"{path}.{action.verb}"
    kind_s, _, name = (action.target or "").partition("/")
    served = kinds.get(kind_s)
    if served is None:
        raise ck.error(vpath, f'the server doesn\'t have a resource type "{kind_s}"; expected a kind Kubernetes '
                              f"1.{minor} serves (pod, deployment, …) or one a CustomResourceDefinition of the "
                              "scenario defines")
    if served.kind not in KINDS:
        action.target = f"{served.kind}/{name}"
    if action.verb == "scale" and served.kind not in _SCALABLE:
        raise ck.error(vpath, f'{served.kind} "{name}" has no scale subresource; expected a deployment, '
                              "replicaset, statefulset or replicationcontroller")
    if action.verb == "patch" and action.merge_patch is not None:
        ppath = f"{path}.{'strategicMergePatch' if action.strategic else 'mergePatch'}"
        if served.definition is not None:
            errors = schema.check_patch(action.merge_patch, served.definition, minor)
            if errors:
                first = min(errors, key=lambda e: (ck.line(_schema_path(ppath, e.path)) or 0,
                                                   [str(p) for p in e.path]))
                raise ck.error(_schema_path(ppath, first.path), first.message)
        _check_patched_annotation(ck, action.merge_patch, ppath)


def _dry_run(ck: _Check, objects: list[Manifest], actions: list[Action], kinds: dict[str, schema.ServedKind],
             prof: Profile) -> None:
    """Patches and applies the API server refuses whatever happens before them: each is applied, in time order,
    to the defaulted manifest the scenario created, and validated as the update it is (replicas below 0, an
    immutable selector or pod field changed, a template whose labels leave the selector). Objects the
    scenario does not create itself (a controller's pods) are left to the run."""
    from podlife.api.defaults import apply_defaults
    from podlife.api.registry.job import generate_selector
    from podlife.scenario.actions import apply_manifest, merge_patch

    known: dict[tuple[str, str, str], dict[str, Any]] = {}

    def key(kind: str, namespace: str | None, name: str) -> tuple[str, str, str]:
        served = kinds.get(kind.lower())
        return (served.kind if served else kind, namespace or "default" if not served or served.namespaced else "",
                name)

    def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(obj)
        apply_defaults(out)
        if out.get("kind") == "Job" and not (out.get("spec") or {}).get("manualSelector"):
            # the Job strategy generates its selector and template labels from the UID at create
            out.setdefault("metadata", {}).setdefault("uid", "00000000-0000-0000-0000-000000000000")
            generate_selector(out, prof.job_prefixed_labels)
        return out

    for m in objects:
        md = m.obj.get("metadata") or {}
        if md.get("name"):
            known[key(m.obj["kind"], md.get("namespace"), md["name"])] = defaulted(m.obj)
    token = validation.FEATURES.set(validation.features(prof))
    try:
        for i, a in sorted(enumerate(actions), key=lambda ia: ia[1].at):
            path = f"spec.actions[{i}]"
            if a.verb in ("create", "apply") and a.manifest is not None:
                md = a.manifest.get("metadata") or {}
                k = key(a.manifest["kind"], a.namespace, md.get("name") or "")
                old = known.get(k)
                if a.verb == "apply" and old is not None:
                    new = defaulted(apply_manifest(old, a.manifest))
                    _refused(ck, validation.validate(new, old=old), f"{path}.apply", k[0], k[2])
                    known[k] = new
                elif md.get("name"):
                    known[k] = defaulted(a.manifest)
            elif a.verb in ("patch", "scale", "delete"):
                kind, _, name = (a.target or "").partition("/")
                k = key(kind, a.namespace, name)
                old = known.get(k)
                if a.verb == "delete":
                    known.pop(k, None)
                elif old is not None:
                    if a.verb == "patch" and a.strategic:
                        # lists merge on their patchMergeKey (containers by name), as the run applies it; a
                        # patch the API refuses as such fails at run time, where it is reported
                        try:
                            new = defaulted(_strategic(old, a.merge_patch or {}, prof))
                        except ApiError:
                            continue
                    else:
                        new = defaulted(merge_patch(old, a.merge_patch or {}) if a.verb == "patch" else
                                        merge_patch(old, {"spec": {"replicas": a.replicas}}))
                    where = f"{path}.{'strategicMergePatch' if a.strategic else 'mergePatch'}" \
                        if a.verb == "patch" else f"{path}.replicas"
                    _refused(ck, validation.validate(new, old=old), where, k[0], k[2])
                    known[k] = new
    finally:
        validation.FEATURES.reset(token)


def _strategic(old: dict[str, Any], patch: dict[str, Any], prof: Profile) -> dict[str, Any]:
    """A strategic merge patch applied to a manifest as the scenario's patch action applies it."""
    import json

    from podlife.api.patch import STRATEGIC_MERGE_PATCH, apply_patch

    sch = schema.type_schema(prof.minor, old.get("apiVersion", "v1"), old.get("kind", ""))
    return apply_patch(old, json.dumps(patch).encode(), STRATEGIC_MERGE_PATCH, sch).object


def _refused(ck: _Check, causes: list[Any], path: str, kind: str, name: str) -> None:
    if causes:
        raise ck.error(path, f'{kind} "{name}" is invalid: ' + "; ".join(str(c) for c in causes)
                       + " (the API server refuses this update whenever it comes)")


def _check_patched_annotation(ck: _Check, patch: dict[str, Any], path: str) -> None:
    """A podlife/behavior annotation a patch sets is checked as one in a manifest."""
    from podlife.runtime.behavior import ANNOTATION, BehaviorError, parse_annotation

    for meta_path in (("metadata",), ("spec", "template", "metadata")):
        node: Any = patch
        for seg in meta_path + ("annotations",):
            node = node.get(seg) if isinstance(node, dict) else None
        text = node.get(ANNOTATION) if isinstance(node, dict) else None
        if text is None:
            continue
        where = _join(_schema_path(path, meta_path + ("annotations",)), ANNOTATION)
        if not isinstance(text, str):
            raise ck.error(where, "expected a string of YAML")
        try:
            parse_annotation(text)
        except BehaviorError as e:
            raise ck.error(f"{where}.{e.path}" if e.path else where, str(e).split(": ", 1)[-1]) from None


def _target(ck: _Check, value: Any, path: str) -> str:
    """kind/name, kind lower-cased (kubectl resolves kinds case-insensitively)."""
    text = ck.string(value, path, "kind/name, e.g. pod/web-0")
    kind, sep, name = text.partition("/")
    if not sep or not _KIND.match(kind) or "/" in name or not _is_subdomain(name):
        raise ck.error(path, f'"{text}" is not kind/name; expected e.g. pod/web-0 or deployment/web')
    return f"{kind.lower()}/{name}"


def _delete_options(ck: _Check, raw: dict[str, Any], path: str, action: Action) -> None:
    if raw.get("gracePeriodSeconds") is not None:
        action.grace_period_seconds = ck.integer(raw["gracePeriodSeconds"], f"{path}.gracePeriodSeconds")
    if raw.get("force") is not None:
        action.force = ck.boolean(raw["force"], f"{path}.force")
    if raw.get("propagationPolicy") is not None:
        action.propagation_policy = ck.one_of(raw["propagationPolicy"], f"{path}.propagationPolicy",
                                              PROPAGATION_POLICIES, "propagation policy")
    if action.force:
        # kubectl delete: --force with --grace-period > 0 is refused; --force alone (or with a negative
        # grace period) sends gracePeriodSeconds 0 (staging/src/k8s.io/kubectl/pkg/cmd/delete/delete.go)
        grace = action.grace_period_seconds
        if grace is not None and grace > 0:
            raise ck.error(f"{path}.gracePeriodSeconds", f"{grace} with force: true; expected 0 or no "
                           "gracePeriodSeconds (as kubectl refuses --force with --grace-period greater than 0)")
        action.grace_period_seconds = 0


def _drain_options(ck: _Check, raw: dict[str, Any], path: str) -> DrainOptions:
    """kubectl drain's flags: --ignore-daemonsets, --force, --delete-emptydir-data, --grace-period, --timeout,
    --disable-eviction (each with kubectl's default)."""
    from podlife.kubectl.drain import DrainOptions   # on first use: few scenarios drain a node

    opts = DrainOptions()
    for key, attr in (("ignoreDaemonSets", "ignore_daemonsets"), ("force", "force"),
                      ("deleteEmptyDirData", "delete_emptydir_data"), ("disableEviction", "disable_eviction")):
        if raw.get(key) is not None:
            setattr(opts, attr, ck.boolean(raw[key], f"{path}.{key}"))
    if raw.get("gracePeriodSeconds") is not None:
        opts.grace_period_seconds = ck.integer(raw["gracePeriodSeconds"], f"{path}.gracePeriodSeconds", -1)
    if raw.get("timeout") is not None:
        opts.timeout = ck.duration(raw["timeout"], f"{path}.timeout")   # 0: no timeout
    return opts


def _manifest_namespace(ck: _Check, action: Action, raw: dict[str, Any], path: str) -> None:
    meta = action.manifest["metadata"]
    own = meta.get("namespace")
    if "namespace" in raw and own is not None and own != action.namespace:
        raise ck.error(f"{path}.namespace", f'"{action.namespace}" differs from the manifest\'s metadata.'
                       f'namespace "{own}"; expected the same namespace or only one of them')
    if own is not None:
        action.namespace = own
    if meta.get("name") is not None:
        action.target = f"{action.manifest['kind'].lower()}/{meta['name']}"


def _names(nodes: list[str]) -> str:
    if not nodes:
        return "it has no nodes"
    shown = ", ".join(nodes[:10])
    return f"nodes: {shown}, … ({len(nodes)} in all)" if len(nodes) > 10 else f"nodes: {shown}"


def _fault(ck: _Check, value: Any, path: str, nodes: list[str], supported: frozenset[str] | None) -> Fault:
    spec = ck.mapping(value, path, optional=False)
    ftype = ck.one_of(ck.required(spec, "type", path, f"a fault type, one of {', '.join(FAULT_TYPES)}"),
                      f"{path}.type", FAULT_TYPES, "fault type")
    if supported is not None and ftype not in supported:
        modelled = ", ".join(t for t in FAULT_TYPES if t in supported) or "none"
        raise ck.error(f"{path}.type", f'fault type "{ftype}" is not modelled yet (modelled: {modelled})')
    required, optional = FAULT_FIELDS[ftype]
    ck.known(spec, path, ("type",) + required + optional + ("for",))
    what = {"node": "a node name", "pod": "namespace/name or name", "container": "a container name",
            "image": "an image reference", "value": "a quantity, e.g. 30Gi"}
    for key in required:
        ck.required(spec, key, path, f"{what[key]} (a {ftype} fault needs {', '.join(required)})")
    fault = Fault(type=ftype, source=ck.source(path))
    if spec.get("node") is not None:
        fault.node = ck.string(spec["node"], f"{path}.node", "a node name")
        if fault.node not in nodes:
            raise ck.error(f"{path}.node", f'"{fault.node}" is not a node of this scenario; expected one of the '
                                           f"{_names(nodes)}")
    if spec.get("pod") is not None:
        fault.pod = _pod_ref(ck, spec["pod"], f"{path}.pod")
    if spec.get("container") is not None:
        fault.container = ck.dns_label(spec["container"], f"{path}.container")
    if spec.get("image") is not None:
        fault.image = ck.nonempty(spec["image"], f"{path}.image", "an image reference, e.g. nginx:1.25")
    if spec.get("value") is not None:
        fault.value = ck.quantity(spec["value"], f"{path}.value")
    if spec.get("for") is not None:
        fault.for_seconds = ck.duration(spec["for"], f"{path}.for")
    return fault


def _pod_ref(ck: _Check, value: Any, path: str) -> str:
    text = ck.string(value, path, "namespace/name or name")
    namespace, _, name = text.rpartition("/") if "/" in text else ("default", "", text)
    if not _DNS_LABEL.match(namespace) or len(namespace) > 63 or not _is_subdomain(name):
        raise ck.error(path, f'"{text}" is not a pod reference; expected namespace/name or name, e.g. '
                             "default/web-0")
    return f"{namespace}/{name}"


# ------------------------------------------------------------------------------------------- expectations

_EXPECT_FIELDS = ("object", "namespace", "description") + EXPECT_CHECKS + ("by", "at", "after", "always")
_TIMINGS = ({"by"}, {"at"}, {"always"}, {"after"}, {"after", "by"}, set())


def _expectation(ck: _Check, value: Any, path: str, until: float | None,
                 kinds: dict[str, schema.ServedKind]) -> Expectation:
    raw = ck.mapping(value, path, _EXPECT_FIELDS, optional=False)
    kind, namespace, name = _object_ref(ck, raw, path)
    served = kinds.get(kind)
    if served is None:
        raise ck.error(f"{path}.object", f'unknown kind "{kind}"; expected a kind the Kubernetes version serves '
                                         "(pod, node, deployment, …) or one a CustomResourceDefinition of the "
                                         "scenario defines")
    if served.kind not in KINDS:
        kind = served.kind
    checks = [c for c in EXPECT_CHECKS if c in raw]
    if len(checks) != 1:
        found = f"found {', '.join(checks)}" if checks else "found none"
        raise ck.error(path, f"expected exactly one check among {', '.join(EXPECT_CHECKS)}; {found}")
    check = checks[0]
    kinds = _CHECK_KINDS[check]
    if kinds is not None and kind not in kinds:
        needs = "a node" if kinds == _NODE_KINDS else "a pod"
        example = "node/NAME" if kinds == _NODE_KINDS else "pod/NAME"
        raise ck.error(f"{path}.{check}", f'needs {needs} object (e.g. object: {example}), got "{raw["object"]}"')
    exp = Expectation(object=f"{kind}/{name}", namespace=namespace, check=check,
                      value=_check_value(ck, check, raw[check], f"{path}.{check}"), source=ck.source(path),
                      namespaced=served.namespaced)
    if raw.get("description") is not None:
        exp.description = ck.string(raw["description"], f"{path}.description")
    _timing(ck, raw, path, exp, until)
    return exp


def _object_ref(ck: _Check, raw: dict[str, Any], path: str) -> tuple[str, str, str]:
    opath = f"{path}.object"
    text = ck.string(ck.required(raw, "object", path, "kind/name or kind/namespace/name, e.g. pod/web-0"),
                     opath, "kind/name or kind/namespace/name")
    parts = text.split("/")
    bad = (len(parts) not in (2, 3) or not _KIND.match(parts[0]) or not _is_subdomain(parts[-1])
           or (len(parts) == 3 and not _DNS_LABEL.match(parts[1])))
    if bad:
        raise ck.error(opath, f'"{text}" is not kind/name or kind/namespace/name; expected e.g. pod/web-0, '
                              "pod/default/web-0 or node/node-1")
    kind, name = parts[0].lower(), parts[-1]
    namespace = "default"
    if raw.get("namespace") is not None:
        namespace = ck.dns_label(raw["namespace"], f"{path}.namespace")
    if len(parts) == 3:
        if kind in _NODE_KINDS:
            raise ck.error(opath, f'"{text}": nodes are cluster-scoped; expected node/NAME')
        if raw.get("namespace") is not None and namespace != parts[1]:
            raise ck.error(f"{path}.namespace", f'"{namespace}" differs from the namespace "{parts[1]}" in '
                                                "object; expected the same namespace or only one of them")
        namespace = parts[1]
    return kind, namespace, name


def _check_value(ck: _Check, check: str, value: Any, path: str) -> Any:
    if check in ("deleted", "ready"):
        return ck.boolean(value, path)
    if check == "phase":
        return ck.one_of(value, path, POD_PHASES, "pod phase")
    if check == "nodeReady":
        return ck.status(value, path)
    if check == "condition":
        cond = ck.mapping(value, path, ("type", "status", "reason"), optional=False)
        return {"type": ck.nonempty(ck.required(cond, "type", path, "a condition type, e.g. Ready"),
                                    f"{path}.type", "a condition type"),
                "status": ck.status(ck.required(cond, "status", path, '"True", "False" or "Unknown"'),
                                    f"{path}.status"),
                "reason": _opt_str(ck, cond, "reason", path)}
    if check == "containerState":
        return _container_state(ck, value, path)
    return _taint_check(ck, value, path)


def _opt_str(ck: _Check, m: dict[str, Any], key: str, path: str) -> str | None:
    return ck.string(m[key], f"{path}.{key}") if m.get(key) is not None else None


def _container_state(ck: _Check, value: Any, path: str) -> dict[str, Any]:
    cs = ck.mapping(value, path, ("name", "state", "reason", "exitCode"), optional=False)
    state = ck.one_of(ck.required(cs, "state", path, f"one of {', '.join(CONTAINER_STATES)}"),
                      f"{path}.state", CONTAINER_STATES, "container state")
    exit_code = None
    if cs.get("exitCode") is not None:
        exit_code = ck.integer(cs["exitCode"], f"{path}.exitCode", bits=32)
        if not 0 <= exit_code <= 255:
            # ContainerStateTerminated.exitCode is an int32, but a Linux process's exit status is 8 bits (and a
            # signal's death 128+n): such an expectation could never be met
            raise ck.error(f"{path}.exitCode", f"{exit_code} is not an exit status; expected an integer 0-255 (a "
                                               f"process's exit status is 8 bits: `exit {exit_code}` is seen as "
                                               f"{exit_code & 0xFF})")
        if state != "terminated":
            raise ck.error(f"{path}.exitCode", f"only a terminated container has an exit code; expected "
                                               f"state: terminated, got {state}")
    return {"name": ck.dns_label(ck.required(cs, "name", path, "a container name"), f"{path}.name"),
            "state": state, "reason": _opt_str(ck, cs, "reason", path), "exitCode": exit_code}


def _taint_check(ck: _Check, value: Any, path: str) -> dict[str, Any]:
    if isinstance(value, str):
        ck.label_key(value, path)
        return {"key": value, "effect": None}
    taint = ck.mapping(value, path, ("key", "effect"), optional=False)
    key = ck.string(ck.required(taint, "key", path, "a taint key"), f"{path}.key", "a taint key")
    ck.label_key(key, f"{path}.key")
    effect = None
    if taint.get("effect") is not None:
        effect = ck.one_of(taint["effect"], f"{path}.effect", TAINT_EFFECTS, "taint effect")
    return {"key": key, "effect": effect}


def _timing(ck: _Check, raw: dict[str, Any], path: str, exp: Expectation, until: float | None) -> None:
    given = {k for k in ("by", "at", "after", "always") if raw.get(k) is not None}
    if given not in _TIMINGS:
        raise ck.error(path, f"conflicting timing {', '.join(sorted(given))}; expected one of by, at, always, "
                             "or after (optionally with by)")
    for key in ("by", "at", "after"):
        if key in given:
            setattr(exp, key, ck.duration(raw[key], f"{path}.{key}"))
    if "always" in given:
        apath = f"{path}.always"
        span = raw["always"]
        if not isinstance(span, list) or len(span) != 2:
            got = f"a list of {_items(len(span))}" if isinstance(span, list) else _describe(span)
            raise ck.error(apath, f"expected a list [from, to] of two durations, got {got}")
        start, end = ck.duration(span[0], f"{apath}[0]"), ck.duration(span[1], f"{apath}[1]")
        if start > end:
            raise ck.error(apath, f"from {format_duration(start)} is after to {format_duration(end)}; "
                                  "expected from <= to")
        exp.always = (start, end)
    if exp.after is not None and exp.by is not None and exp.after > exp.by:
        raise ck.error(f"{path}.after", f"{format_duration(exp.after)} is after by {format_duration(exp.by)}; "
                                        "expected after <= by")
    latest = max([t for t in (exp.by, exp.at, exp.after) if t is not None] + list(exp.always or ()), default=None)
    if until is not None and latest is not None and latest > until:
        ck.warn(path, f"checks up to {format_duration(latest)}, after spec.until ({format_duration(until)})")


def load_fault(spec: Any, nodes: list[str], origin: str = "fault") -> Fault:
    """One fault given outside a scenario (``podlife fault`` on a running cluster), checked as a scenario's
    fault action is: the same types, fields and node names."""
    from podlife.scenario.faults import MODELLED

    raw = _Raw(origin, {"fault": spec}, {}, {})
    return _fault(_Check(raw), spec, "fault", nodes, MODELLED)

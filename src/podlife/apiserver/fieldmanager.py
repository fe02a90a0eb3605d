"""managedFields and server-side apply, as kube-apiserver's field manager keeps them
(k8s.io/apimachinery pkg/util/managedfields/internal, over sigs.k8s.io/structured-merge-diff).

Public API:

- ``manager_name(field_manager, user_agent) -> str``: the manager of a create, update or non-apply patch
  (handlers/create.go managerOrUserAgent: the fieldManager parameter, else the user agent up to its first
  '/', printable characters only, at most 128 bytes).
- ``update(live, new, manager, schema, now, subresource="") -> dict``: ``new`` with ``metadata.managedFields``
  brought up to date for an ordinary write (operation Update; FieldManager.UpdateNoErrors). ``live`` is ``{}``
  on create. ``now`` is the RFC 3339 time the server stamps (the caller's clock keeps podlife deterministic).
- ``apply(live, applied, manager, schema, now, force=False, subresource="") -> dict``: server-side apply
  (application/apply-patch+yaml) of the decoded configuration ``applied`` onto ``live`` (``{}`` when the
  object does not exist yet): the merged object with its managedFields. Conflicts with other managers are
  409 Conflict "Apply failed with N conflict(s): conflict with "kubectl" using apps/v1: .spec.replicas",
  unless ``force``. Bad configurations are 400 (wrong apiVersion, managedFields set) or 500 (fields the
  schema does not declare: "failed to create typed patch object (…): .spec.foo: field not declared in
  schema"), as upstream answers.
- ``fields_v1(paths)`` / ``parse_fields_v1(doc)``: the FieldsV1 encoding (``f:<field>``, ``k:<keys as
  JSON>``, ``v:<value as JSON>``, ``i:<index>``, ``.`` for an item that is itself a member).

``schema`` is ``podlife.api.schema.type_schema(...)`` for a built-in kind, a ``TypeSchema`` over a CRD's
openAPIV3Schema for a custom resource, or None (fields are then deduced: maps granular, lists atomic).
List and map granularity follow x-kubernetes-list-type / x-kubernetes-list-map-keys /
x-kubernetes-map-type, and for lists without a list type the patch strategy (merge with a merge key is a map
list, merge alone a set, anything else atomic), as kube-openapi's schemaconv derives them.

Client-side ``kubectl apply`` needs nothing here: kubectl computes the three-way strategic merge patch and
keeps the kubectl.kubernetes.io/last-applied-configuration annotation itself; the server sees a strategic
merge patch from manager "kubectl-client-side-apply". ``kubectl apply --server-side`` migrates those fields
to its own manager client-side (csaupgrade) before applying.
"""

from __future__ import annotations

import copy
import json
import unicodedata
from typing import Any, Iterable

import orjson

from podlife.api import decoding
from podlife.api.errors import ApiError, FieldError
from podlife.api.gofmt import rfc3339
from podlife.api.schema import TypeSchema
from podlife.engine.slices import pause

FIELD_MANAGER_MAX_LENGTH = 128        # apis/meta/v1/validation FieldManagerMaxLength
MAX_UPDATE_MANAGERS = 10              # internal/fieldmanager.go DefaultMaxUpdateManagers
ANCIENT_CHANGES = "ancient-changes"   # capmanagers.go
BEFORE_FIRST_APPLY = "before-first-apply"   # skipnonapplied.go
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
FIELD_MANAGER_CONFLICT = "FieldManagerConflict"   # metav1.CauseTypeFieldManagerConflict

PE = tuple[str, Any]          # ("f", name) | ("k", key JSON) | ("v", value JSON) | ("i", index)
Path = tuple[PE, ...]

# stripmeta.go: never owned
_STRIPPED: frozenset[Path] = frozenset(
    [(("f", "apiVersion"),), (("f", "kind"),), (("f", "metadata"),)]
    + [(("f", "metadata"), ("f", n)) for n in ("name", "namespace", "creationTimestamp", "selfLink", "uid",
                                               "clusterName", "generation", "managedFields", "resourceVersion")])


def manager_name(field_manager: str | None, user_agent: str | None) -> str:
    if field_manager:
        return field_manager
    out = ""
    for c in (user_agent or "").split("/")[0]:
        if not (c == " " or unicodedata.category(c)[0] in "LMNPS"):
            continue
        if len((out + c).encode()) > FIELD_MANAGER_MAX_LENGTH:
            break
        out += c
    return out


# ------------------------------------------------------------------------------------------------ schema

class _Type:
    """A schema node as structured-merge-diff sees it: scalar, struct, map or list, atomic or granular."""

    __slots__ = ("ts", "ext", "deduced")

    def __init__(self, ts: TypeSchema | None, ext: dict[str, Any] | None = None) -> None:
        self.ts, self.ext = ts, ext or {}
        # (asked at every node of a walk: decided once)
        self.deduced = ts is None or bool(self._x("x-kubernetes-preserve-unknown-fields")) and not ts.is_struct

    def _x(self, name: str) -> Any:
        if name in self.ext:
            return self.ext[name]
        return self.ts.node.get(name) if self.ts is not None else None

    def kind(self, value: Any) -> str:
        if self.ts is None or self.deduced:
            return "map" if isinstance(value, dict) else "list" if isinstance(value, list) else "scalar"
        if self.ts.is_struct:
            return "struct"
        if self.ts.is_map:
            return "map"
        if self.ts.is_list:
            return "list"
        return "scalar"

    @property
    def atomic(self) -> bool:
        if self.ts is None or self.deduced:
            return False
        if self.ts.is_list:
            return self.list_type() == "atomic"
        return self._x("x-kubernetes-map-type") == "atomic"

    def list_type(self) -> str:
        if self.ts is None or self.deduced:
            return "atomic"   # deduced lists are atomic
        declared = self._x("x-kubernetes-list-type")
        if declared:
            return declared
        strategies = str(self._x("x-kubernetes-patch-strategy") or "").split(",")
        if "merge" in strategies:
            return "map" if self._x("x-kubernetes-patch-merge-key") else "set"
        return "atomic"

    def list_keys(self) -> list[str]:
        keys = self._x("x-kubernetes-list-map-keys")
        if keys:
            return list(keys)
        key = self._x("x-kubernetes-patch-merge-key")
        return [key] if key else []

    def field(self, key: str) -> _Type | None:
        if self.ts is None or self.deduced:
            return _Type(None)
        if self.ts.is_struct:
            hit = self.ts.field(key)
            if hit is None:
                return _Type(None) if self._x("x-kubernetes-preserve-unknown-fields") else None
            return _Type(hit[0], hit[1])
        if self.ts.is_map:
            return _Type(self.ts.values())
        return _Type(None)

    def item(self) -> _Type:
        if self.ts is None or self.deduced:
            return _Type(None)
        return _Type(self.ts.items())

    def key_default(self, key: str) -> Any:
        """The default of a map list's key field, from the item type's schema (typed/helpers.go
        keyedAssociativeListItemToPathElement: a key the item omits takes its default). None: no default."""
        if self.ts is None or self.deduced:
            return None
        items = self.ts.items()
        prop = items.fields().get(key)
        if isinstance(prop, dict) and prop.get("default") is not None:
            return prop["default"]   # a CRD's structural schema carries its defaults
        return _KEY_DEFAULTS.get((items.name, key))


# The `+default=` markers of list-map key fields in k8s.io/api (core/v1 types.go: ContainerPort.Protocol and
# ServicePort.Protocol, `+default="TCP"`), which kube-openapi puts in the served OpenAPI; the schemas podlife
# reads (kubernetes-validate's) leave defaults out.
_KEY_DEFAULTS: dict[tuple[str, str], Any] = {
    ("io.k8s.api.core.v1.ContainerPort", "protocol"): "TCP",
    ("io.k8s.api.core.v1.ServicePort", "protocol"): "TCP",
}


class _SchemaError(Exception):
    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors


def _canon(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _item_pe(t: _Type, item: Any, index: int) -> PE:
    """listItemToPathElement: a map list's item by its keys, a set's by value, others by index."""
    lt = t.list_type()
    if lt == "map":
        keys = t.list_keys()
        if not isinstance(item, dict):
            raise _SchemaError([f"associative list with keys has an element that is not a map type: {_canon(item)}"])
        present = {}
        for k in keys:
            if k in item:
                present[k] = item[k]
            else:
                default = t.key_default(k)
                if default is not None:
                    present[k] = default
        if not present:
            raise _SchemaError([f"associative list with keys has an element that omits all key fields "
                                f"{_canon(keys)} (and doesn't have default values for any key fields)"])
        return ("k", _canon(present))
    if lt == "set":
        return ("v", _canon(item))
    return ("i", index)


# ------------------------------------------------------------------------------------------------ field sets

def _field_set(value: Any, t: _Type, strict: bool = False) -> dict[Path, Any]:
    """typed ToFieldSet, keeping each path's value when it is a leaf (for comparisons). With ``strict``,
    fields a struct does not declare are errors (the typed object of an apply configuration)."""
    out: dict[Path, Any] = {}
    errors: list[str] = []
    _walk_set(value, t, (), out, errors, strict)
    if errors:
        raise _SchemaError(errors)
    return out


_NODE = object()   # a member that is not a leaf


def _walk_set(value: Any, t: _Type, path: Path, out: dict[Path, Any], errors: list[str], strict: bool) -> None:
    pause()   # a large object is tracked in slices (podlife.engine.slices)
    kind = t.kind(value)
    if kind == "scalar" or t.atomic:
        if strict and kind == "scalar" and t.ts is not None and not t.deduced:
            err = decoding.smd_scalar_error(value, t.ts)   # AsTyped validates the configuration's scalars
            if err is not None:
                errors.append(f"{_path_str(path)}: {err}")
        out[path] = value
        return
    if value is None:
        # a null struct, map or list: a member of a comparison's sets (typed Compare), not of an apply
        # configuration's (tofieldset.go doMap/doList: nothing for a null granular value)
        if not strict:
            out[path] = value
        return
    if kind == "list":
        if not isinstance(value, list):
            out[path] = value
            return
        if t.list_type() == "atomic":
            out[path] = value
            return
        seen: dict[PE, int] = {}
        pes = []
        for i, item in enumerate(value):
            pe = _item_pe(t, item, i)
            pes.append(pe)
            seen[pe] = seen.get(pe, 0) + 1
        item_t = t.item()
        for pe, item in zip(pes, value):
            if seen[pe] > 1:
                out[path + (pe,)] = _NODE   # duplicates: the item, not its fields
                continue
            _walk_set(item, item_t, path + (pe,), out, errors, strict)
            out.setdefault(path + (pe,), _NODE)   # the item itself is a member
        return
    if not isinstance(value, dict):
        out[path] = value
        return
    map_child = t.field("") if kind == "map" else None   # a map's values share one type
    for key, v in value.items():
        child = map_child if map_child is not None else t.field(key)
        p = path + (("f", key),)
        if child is None:
            if strict:
                errors.append(f"{_path_str(p)}: field not declared in schema")
            continue
        _walk_set(v, child, p, out, errors, strict)
        # a map's keys are members (visitMapItems); a struct field only through what it holds, so an empty
        # struct is no member of a configuration's set, though a comparison counts it added
        if kind == "map" or (not strict and (v is None or (isinstance(v, dict) and not v))):
            out.setdefault(p, v if not isinstance(v, (dict, list)) or not v else _NODE)


def _status_set(value: Any, t: _Type) -> dict[Path, Any]:
    """``_field_set(value, t)`` less every path outside ``.status``: all that a write of the status subresource
    can take or lose (``_tracked``), without walking the spec of every pod the kubelet reports on."""
    out: dict[Path, Any] = {}
    if not isinstance(value, dict) or "status" not in value or t.atomic or t.kind(value) not in ("struct", "map"):
        return out   # the walk of such a value has no path under .status
    child = t.field("") if t.kind(value) == "map" else t.field("status")
    if child is None:
        return out
    v = value["status"]
    p: Path = (("f", "status"),)
    _walk_set(v, child, p, out, [], False)
    if t.kind(value) == "map" or v is None or (isinstance(v, dict) and not v):   # as _walk_set's own loop
        out.setdefault(p, v if not isinstance(v, (dict, list)) or not v else _NODE)
    return out


def _ensure_named(paths: set[Path]) -> set[Path]:
    """EnsureNamedFieldsAreMembers: a field that has owned children is itself a member."""
    out = set(paths)
    for p in paths:
        for i in range(1, len(p)):
            if p[i - 1][0] == "f":
                out.add(p[:i])
    return out


def _path_str(p: Path) -> str:
    """fieldpath.Path.String: .field, [key=value,…], [=value], [index]."""
    parts = []
    for kind, v in p:
        if kind == "f":
            parts.append("." + v)
        elif kind == "k":
            parts.append("[" + ",".join(f"{k}={_to_string(x)}" for k, x in json.loads(v).items()) + "]")
        elif kind == "v":
            parts.append(f"[={_to_string(json.loads(v))}]")
        else:
            parts.append(f"[{v}]")
    return "".join(parts)


def _to_string(v: Any) -> str:
    """value.ToString: strings quoted, other scalars as Go prints them."""
    from podlife.api.gofmt import go_quote, go_value
    if isinstance(v, str):
        return go_quote(v)
    return go_value(v)


_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _pe_sort_key(pe: PE) -> tuple[int, Any]:
    kind, v = pe
    if kind == "k":
        return 1, tuple((k, _canon(x)) for k, x in json.loads(v).items())
    return _RANK[kind], v


def _iterate(paths: set[Path]) -> list[Path]:
    """Set.Iterate order: at each level the members first, then the children's subtrees, each sorted."""
    out: list[Path] = []

    def walk(prefix: Path, subset: Iterable[Path]) -> None:
        depth = len(prefix)
        members: set[PE] = set()
        children: dict[PE, list[Path]] = {}   # grouped in one pass: linear in the paths at each level
        for p in subset:
            if len(p) == depth + 1:
                members.add(p[depth])
            else:
                children.setdefault(p[depth], []).append(p)
        out.extend(prefix + (pe,) for pe in sorted(members, key=_pe_sort_key))
        for pe in sorted(children, key=_pe_sort_key):
            walk(prefix + (pe,), children[pe])

    walk((), paths)
    return out


def fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Set.ToJSON: nested objects keyed f:/k:/v:/i:, "." marking a path that is a member and has children."""
    paths = set(paths)
    # the paths that have children, found in one pass over every path's prefixes (linear in the paths'
    # total length, where asking each path whether another extends it was quadratic)
    parents: set[Path] = set()
    for p in paths:
        parents.update(p[:i] for i in range(1, len(p)))
        pause()
    root: dict[str, Any] = {}
    for p in paths:
        node = root
        for pe in p:
            node = node.setdefault(_pe_text(pe), {})
        if p in parents:
            node["."] = {}
        pause()
    return _sort_fields(root)


_ENCODED: dict[frozenset[Path], bytes] = {}
ENCODED_KEPT = 1024   # field sets whose fieldsV1 is kept (the first made dropped first)


def _fields_v1_kept(paths: Iterable[Path]) -> dict[str, Any]:
    """``fields_v1(paths)``, a new copy each time, made once per field set while ENCODED_KEPT are kept:
    the pods of one template carry the same sets (the controller's, the kubelet's), and a status write leaves
    the other managers' sets as they were."""
    key = frozenset(paths)
    hit = _ENCODED.get(key)
    if hit is None:
        hit = _ENCODED[key] = orjson.dumps(fields_v1(key))
        if len(_ENCODED) > ENCODED_KEPT:
            del _ENCODED[next(iter(_ENCODED))]
    return orjson.loads(hit)   # (its own dicts: a caller may change its object's)


def _sort_fields(node: dict[str, Any]) -> dict[str, Any]:
    """Each level's keys in Set order: "." first, then by kind (f, k, v, i) and within a kind by its value. Sorted
    kind by kind on the values alone (stable, as one sort on (kind, value) would be): at 100,000 labels, one
    sort comparing those pairs took 0.7 s, during which the server answered no one."""
    pause()
    by_rank: dict[int, list[tuple[Any, str]]] = {}
    for k in node:
        rank, v = (-1, None) if k == "." else _pe_sort_key(_pe_parse(k))
        by_rank.setdefault(rank, []).append((v, k))
        pause()
    out = {}
    for rank in sorted(by_rank):
        keys = by_rank[rank]
        keys.sort(key=_first)
        for _, k in keys:
            out[k] = _sort_fields(node[k])
    return out


def _first(pair: tuple[Any, str]) -> Any:
    return pair[0]


def _pe_text(pe: PE) -> str:
    kind, v = pe
    return f"{kind}:{v}"


def _pe_parse(text: str) -> PE:
    kind, _, rest = text.partition(":")
    if kind == "i":
        return "i", int(rest)
    if kind in ("k", "v"):
        return kind, _canon(json.loads(rest)) if kind == "v" else _canon(dict(sorted(json.loads(rest).items())))
    return "f", rest


def parse_fields_v1(doc: dict[str, Any], prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for key, child in (doc or {}).items():
        pause()
        if key == ".":
            out.add(prefix)
            continue
        p = prefix + (_pe_parse(key),)
        if not child:
            out.add(p)
        else:
            out |= parse_fields_v1(child, p)
    return out


_PARSED: dict[bytes, frozenset[Path]] = {}


def _parsed_fields_v1(doc: Any) -> set[Path]:
    """``parse_fields_v1(doc)``, kept per encoding of ``doc`` (ENCODED_KEPT of them; every write of an
    object decodes the entries of its other managers, as they were)."""
    try:
        key = orjson.dumps(doc) if isinstance(doc, dict) else None
    except TypeError:
        key = None
    if key is None:
        return parse_fields_v1(doc)
    hit = _PARSED.get(key)
    if hit is None:
        hit = _PARSED[key] = frozenset(parse_fields_v1(doc))
        if len(_PARSED) > ENCODED_KEPT:
            del _PARSED[next(iter(_PARSED))]
    return set(hit)


# ------------------------------------------------------------------------------------------------ managers

class _Entry:
    __slots__ = ("manager", "operation", "api_version", "subresource", "time", "paths")

    def __init__(self, manager: str, operation: str, api_version: str, subresource: str, time: str | None,
                 paths: set[Path]):
        self.manager, self.operation, self.api_version = manager, operation, api_version
        self.subresource, self.time, self.paths = subresource, time, paths

    @property
    def ident(self) -> tuple[str, str, str, str]:
        """BuildManagerIdentifier: an Apply entry is one per manager whatever its apiVersion."""
        return (self.manager, self.operation, "" if self.operation == "Apply" else self.api_version,
                self.subresource)

    @property
    def identifier(self) -> str:
        """The identifier's JSON text (metav1.ManagedFieldsEntry field order, empty fields omitted)."""
        manager, operation, api_version, subresource = self.ident
        row = {"manager": manager, "operation": operation, "apiVersion": api_version, "subresource": subresource}
        return json.dumps({k: v for k, v in row.items() if v}, separators=(",", ":"))

    def describe(self) -> str:
        """conflict.go printManager."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == "Update":
            return f"{text} using {self.api_version}"
        return text


def _decode(obj: dict[str, Any]) -> list[_Entry] | None:
    """DecodeManagedFields; None when the entries are not valid (callers treat it as empty)."""
    out = []
    for e in (obj.get("metadata") or {}).get("managedFields") or ():
        if not isinstance(e, dict) or e.get("operation") not in ("Apply", "Update") or not e.get("apiVersion") \
                or e.get("fieldsType") != "FieldsV1":
            return None
        t = e.get("time")   # a metav1.Time: +00:00 from a client is the same time
        out.append(_Entry(e.get("manager", ""), e["operation"], e["apiVersion"], e.get("subresource", ""),
                          rfc3339(t) if isinstance(t, str) else t, _parsed_fields_v1(e.get("fieldsV1") or {})))
    return out


def _encode(entries: list[_Entry]) -> list[dict[str, Any]] | None:
    if not entries:
        return None
    rows = []
    for e in entries:
        row: dict[str, Any] = {"manager": e.manager, "operation": e.operation, "apiVersion": e.api_version}
        if e.time is not None:
            row["time"] = e.time
        row["fieldsType"] = "FieldsV1"
        row["fieldsV1"] = _fields_v1_kept(e.paths)
        if e.subresource:
            row["subresource"] = e.subresource
        rows.append(row)
    # managedfields.go sortEncodedManagedFields: operation, time, manager, apiVersion, subresource
    rows.sort(key=lambda r: (r["operation"], r.get("time") or "", r["manager"], r["apiVersion"],
                             r.get("subresource", "")))
    return rows


def _set_managed(obj: dict[str, Any], entries: list[_Entry]) -> None:
    meta = obj.setdefault("metadata", {})
    encoded = _encode(entries)
    if encoded is None:
        meta.pop("managedFields", None)
    else:
        meta["managedFields"] = encoded


def _tracked(paths: set[Path], subresource: str, has_status: bool) -> set[Path]:
    """The registry strategies' reset fields: the main resource does not own status, the status subresource
    owns only status."""
    status = ("f", "status")
    if subresource == "status":
        return {p for p in paths if p and p[0] == status}
    if subresource == "approval":
        # pkg/registry/certificates/certificates/strategy.go csrApprovalStrategy: only the conditions are written
        return {p for p in paths if p[:2] == (status, ("f", "conditions"))}
    if subresource == "ephemeralcontainers":
        # pkg/registry/core/pod/strategy.go podEphemeralContainersStrategy: only spec.ephemeralContainers
        return {p for p in paths if p[:2] == (("f", "spec"), ("f", "ephemeralContainers"))}
    if has_status:
        return {p for p in paths if not p or p[0] != status}
    return paths


def _compare(old: dict[Path, Any], new: dict[Path, Any]) -> tuple[set[Path], set[Path], set[Path]]:
    """typed Compare: added, modified (leaves whose value changed), removed."""
    added = set(new) - set(old)
    removed = set(old) - set(new)
    modified = {p for p in set(old) & set(new)
                if old[p] is not _NODE and new[p] is not _NODE and not _same_scalar(old[p], new[p])
                and _canon(old[p]) != _canon(new[p])}
    return added, modified, removed


def _same_scalar(a: Any, b: Any) -> bool:
    """Equal scalars of one type encode alike (the common case, decided without encoding them)."""
    return type(a) is type(b) and type(a) in (str, int, bool) and a == b


def _api_version(obj: dict[str, Any], schema_api_version: str | None) -> str:
    return str(obj.get("apiVersion") or schema_api_version or "")


def _run_update(live: dict[str, Any], new: dict[str, Any], entries: list[_Entry], manager: str, api_version: str,
                t: _Type, now: str, subresource: str, has_status: bool) -> list[_Entry]:
    """managedFieldsUpdater + structured merge Updater.Update with force: the writer takes every field it
    changed, others lose what changed or disappeared."""
    of = _status_set if subresource == "status" else _field_set
    old_set = of(live, t) if live else {}
    new_set = of(new, t)
    added, modified, removed = _compare(old_set, new_set)
    changed = _tracked(added | modified, subresource, has_status)
    removed = _tracked(removed, subresource, has_status)
    me = (manager, "Update", api_version, subresource)
    kept: list[_Entry] = []
    mine: _Entry | None = None
    for e in entries:
        if e.ident == me:
            mine = e
            continue
        e.paths = e.paths - changed - removed
        if e.paths:
            kept.append(e)
    previous = (mine.paths - removed) if mine else set()
    taken = changed - _STRIPPED
    if taken:
        kept.append(_Entry(manager, "Update", api_version, subresource, now, (previous | taken) - _STRIPPED))
    elif mine is not None and previous:
        # managedfieldsupdater.go Update: a write that took no field leaves its manager's entry and time as they
        # were (so a no-op write leaves the object's bytes, and its resourceVersion, unchanged)
        mine.paths = previous
        kept.append(mine)
    return _cap(kept)


def _cap(entries: list[_Entry]) -> list[_Entry]:
    """capmanagers.go: beyond 10 Update entries the oldest merge into "ancient-changes" per apiVersion."""
    updaters = [e for e in entries if e.operation == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return entries
    updaters.sort(key=lambda e: (e.time or "", e.identifier))
    first: dict[str, _Entry] = {}
    length = len(updaters)
    for e in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        if e.api_version not in first:
            first[e.api_version] = e
            continue
        bucket = next((x for x in entries if x.ident == (ANCIENT_CHANGES, "Update", e.api_version, "")), None)
        if bucket is None:   # the first manager of that version becomes the bucket
            bucket = first[e.api_version]
            bucket.manager, bucket.subresource = ANCIENT_CHANGES, ""
        bucket.paths = bucket.paths | e.paths
        bucket.time = e.time
        entries = [x for x in entries if x is not e]
        length -= 1
    return entries


def update(live: dict[str, Any], new: dict[str, Any], manager: str, schema: TypeSchema | None, now: str,
           subresource: str = "", has_status: bool = True, copy_object: bool = True) -> dict[str, Any]:
    """FieldManager.UpdateNoErrors for a create (``live`` = {}), update or non-apply patch. ``copy_object=False``:
    the result shares all but its metadata with ``new`` (for a caller that keeps only its managedFields)."""
    if copy_object:
        out = copy.deepcopy(new)
    else:
        out = dict(new)
        out["metadata"] = dict(new.get("metadata") or {})
    live_entries = _decode(live) or []
    sent = (new.get("metadata") or {}).get("managedFields")
    if subresource:
        entries = live_entries
    elif sent is not None and (sent == [] or sent == [{}]):   # isResetManagedFields
        entries = []
    else:
        decoded = _decode(new) if sent else None
        entries = decoded if decoded else live_entries
    (out.get("metadata") or {}).pop("managedFields", None)
    if not entries and (live.get("metadata") or {}).get("uid"):
        # skipnonapplied.go: an existing object nobody tracked stays untracked until its first apply
        return out
    t = _Type(schema)
    try:
        result = _run_update(_strip_managed(live), _strip_managed(out), entries, manager or "unknown",
                             _api_version(new, None), t, now, subresource, has_status)
    except _SchemaError:
        _set_managed(out, live_entries)   # UpdateNoErrors: restore the live entries
        return out
    _set_managed(out, result)
    return out


def _strip_managed(obj: dict[str, Any]) -> dict[str, Any]:
    if "managedFields" not in (obj.get("metadata") or {}):
        return obj
    out = dict(obj)
    out["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    return out


# ------------------------------------------------------------------------------------------------ apply

def object_gvknn(obj: dict[str, Any]) -> str:
    """internal/structuredmerge.go objectGVKNN: "namespace/name; group/version, Kind=kind"."""
    return _gvk_nn(obj)


def _gvk_nn(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version}, Kind={obj.get('kind', '')}"


def typed_patch(applied: dict[str, Any], t: _Type | TypeSchema | None) -> dict[Path, Any]:
    """The apply configuration as a typed object (structuredmerge.go Apply: ObjectToTyped): a field the schema
    does not declare is a 500 naming each (smd's errors, one per line after "errors:" when several)."""
    try:
        return _field_set(applied, t if isinstance(t, _Type) else _Type(t), strict=True)
    except _SchemaError as e:
        body = e.errors[0] if len(e.errors) == 1 else "errors:\n" + "\n".join("  " + x for x in e.errors)
        raise ApiError(500, "", f"failed to create typed patch object ({_gvk_nn(applied)}): {body}") from None


def apply(live: dict[str, Any], applied: dict[str, Any], manager: str, schema: TypeSchema | None, now: str,
          force: bool = False, subresource: str = "", has_status: bool = True) -> dict[str, Any]:
    live_api_version = live.get("apiVersion") if live else None
    if live_api_version and applied.get("apiVersion") != live_api_version:
        raise ApiError(400, "BadRequest", "Incorrect version specified in apply patch. Specified patch version: "
                                          f"{applied.get('apiVersion', '')}, expected: {live_api_version}")
    if (applied.get("metadata") or {}).get("managedFields") is not None:
        raise ApiError(400, "BadRequest", "metadata.managedFields must be nil")
    entries = _decode(live)
    if entries is None:
        raise ApiError(500, "", "failed to decode managed fields: operation must be `Apply` or `Update`")
    t = _Type(schema)
    api_version = str(applied.get("apiVersion", ""))
    config_set = typed_patch(applied, t)
    base = _strip_managed(live) if live else {}
    if not entries and base:
        # skipnonapplied.go: what exists is first attributed to "before-first-apply"
        entries = _run_update({}, base, [], BEFORE_FIRST_APPLY, api_version, t, now, "", has_status)
    merged = _merge(base, applied, t)
    ident = (manager, "Apply", "", subresource)
    last = next((e for e in entries if e.ident == ident), None)
    new_paths = _tracked(set(config_set), subresource, has_status) - _STRIPPED
    others = [e for e in entries if e.ident != ident]
    if last is not None and last.paths:
        owned = _ensure_named(set().union(*(e.paths for e in others), new_paths))
        for p in sorted(_ensure_named(last.paths) - owned, key=len):
            _remove(merged, p, t)
    old_set = _field_set(base, t) if base else {}
    added, modified, removed = _compare(old_set, _field_set(merged, t))
    changed = _tracked(added | modified, subresource, has_status)
    removed = _tracked(removed, subresource, has_status)
    conflicts = [(e, p) for e in others for p in _iterate(e.paths & changed)]
    if conflicts and not force:
        raise _conflict_error(conflicts)
    kept = []
    for entry in others:
        entry.paths = entry.paths - changed - removed
        if entry.paths:
            kept.append(entry)
    # a no-op apply keeps the manager's time (managedfieldsupdater.go: no object, no new time)
    noop = _canon(merged) == _canon(base)
    if new_paths:
        time = (last.time if last is not None else None) if noop else now
        kept.append(_Entry(manager, "Apply", api_version, subresource, time, new_paths))
    out = merged
    _set_managed(out, kept)
    if manager == "kubectl" and ((out.get("metadata") or {}).get("annotations") or {}).get(LAST_APPLIED):
        # lastappliedupdater.go: an object kubectl applied client-side keeps its annotation in step, when kubectl
        # applies under its default manager (another manager opts out)
        annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[LAST_APPLIED] = _canon(_without_last_applied(applied))
    return out


def _without_last_applied(applied: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(applied)
    annotations = (out.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
        if not annotations:
            out["metadata"].pop("annotations")
    return out


def _conflict_error(conflicts: list[tuple[_Entry, Path]]) -> ApiError:
    """conflict.go NewConflictError → errors.NewApplyConflict: 409, reason Conflict, one cause of type
    FieldManagerConflict per conflicting field, details holding nothing else. Upstream gathers the conflicts
    from a map of managers (merge.ConflictsFromManagers); here they come in the managers' sorted order, the
    order the multi-conflict message prints them in (getConflictMessage sorts the managers)."""
    conflicts = sorted(conflicts, key=lambda c: c[0].identifier)   # stable: each manager's paths stay in order
    causes = [FieldError(_path_str(p), FIELD_MANAGER_CONFLICT, f"conflict with {e.describe()}") for e, p in conflicts]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = f"Apply failed with 1 conflict: conflict with {e.describe()}: {_path_str(p)}"
    else:
        lines = []
        last = None
        for e, p in conflicts:
            if e.identifier != last:
                lines.append(f"conflicts with {e.describe()}:")
                last = e.identifier
            lines.append(f"- {_path_str(p)}")
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    err = ApiError(409, "Conflict", message, causes)
    err.causes_only = True
    return err


# ------------------------------------------------------------------------------------------------ merge

def _merge(lhs: Any, rhs: Any, t: _Type) -> Any:
    """typed Merge with the "keep RHS" rule: the configuration wins on leaves, granular maps and lists merge
    item by item (map lists by key, sets by value), atomic ones are replaced."""
    if rhs is None:
        return copy.deepcopy(lhs) if lhs is not None else None
    if lhs is None:
        return copy.deepcopy(rhs)
    kind = t.kind(rhs)
    if kind == "scalar" or t.atomic:
        return copy.deepcopy(rhs)
    if kind in ("struct", "map") and isinstance(lhs, dict) and isinstance(rhs, dict):
        if not lhs and not rhs:
            return {}
        out = {}
        for key in list(lhs) + [k for k in rhs if k not in lhs]:
            child = t.field(key) or _Type(None)
            if key in rhs:
                out[key] = _merge(lhs.get(key), rhs[key], child) if key in lhs else copy.deepcopy(rhs[key])
            else:
                out[key] = copy.deepcopy(lhs[key])
        return out
    if kind == "list" and isinstance(lhs, list) and isinstance(rhs, list):
        if t.list_type() == "atomic" or (not lhs and not rhs):
            return copy.deepcopy(rhs)
        return _merge_list(lhs, rhs, t)
    return copy.deepcopy(rhs)


def _merge_list(lhs: list[Any], rhs: list[Any], t: _Type) -> list[Any]:
    """mergingWalker.visitListItems: the configuration's order for its items, live-only items kept where
    they were relative to the shared ones."""
    item_t = t.item()
    r_pes = [_item_pe(t, v, i) for i, v in enumerate(rhs)]
    if len(set(r_pes)) != len(r_pes):
        dup = next(pe for pe in r_pes if r_pes.count(pe) > 1)
        raise ApiError(500, "", f"failed to create typed patch object: duplicate entries for key {_path_str((dup,))}")
    l_pes = [_item_pe(t, v, i) for i, v in enumerate(lhs)]
    l_obs: dict[PE, Any] = {}
    for pe, v in zip(l_pes, lhs):
        l_obs[pe] = None if pe in l_obs else v
    r_obs = dict(zip(r_pes, rhs))
    shared = [pe for pe in r_pes if pe in l_obs]
    next_shared = shared.pop(0) if shared else None
    merged_r: set[PE] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(l_pes) or ri < len(r_pes):
        if li < len(l_pes) and ri < len(r_pes):
            pe = l_pes[li]
            if pe == r_pes[ri]:
                merged_r.add(pe)
                out.append(_merge(l_obs.get(pe), r_obs[pe], item_t))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if pe in r_obs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < len(l_pes):
            pe = l_pes[li]
            if pe not in r_obs:
                out.append(copy.deepcopy(lhs[li]))
                li += 1
                continue
            if pe in merged_r:
                li += 1
        if ri < len(r_pes):
            pe = r_pes[ri]
            merged_r.add(pe)
            out.append(_merge(l_obs.get(pe), r_obs[pe], item_t))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop(0) if shared else None
    return out


def _remove(obj: Any, path: Path, t: _Type) -> None:
    """RemoveItems for one path: a field or a list item disappears with everything under it."""
    node, nt = obj, t
    for depth, (kind, v) in enumerate(path):
        last = depth == len(path) - 1
        if kind == "f":
            if not isinstance(node, dict) or v not in node:
                return
            if last:
                del node[v]
                return
            nt = nt.field(v) or _Type(None)
            node = node[v]
        else:
            if not isinstance(node, list):
                return
            idx = next((i for i, item in enumerate(node) if _item_pe(nt, item, i) == (kind, v)), None)
            if idx is None:
                return
            if last:
                del node[idx]
                return
            node = node[idx]
            nt = nt.item()

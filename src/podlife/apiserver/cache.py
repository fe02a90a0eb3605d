"""What the API server keeps beside the store to answer reads cheaply, as upstream's watch cache
(staging/src/k8s.io/apiserver/pkg/storage/cacher) keeps it beside etcd: per kind, fed by a watch on the store,

- the keys of the objects by label (key, value) and, for pods, by ``spec.nodeName`` (the cacher's own index
  for the kubelets' field selector), so that a selector with an equality (``-l app=web``, ``in (a,b)``,
  ``fieldSelector=spec.nodeName=N``) reads only the objects it can match;
- each object's JSON, made once per resourceVersion and reused by every GET, LIST and watch event that sends it
  (stored objects are never changed in place: a write stores a new dict with a new resourceVersion), and its
  Table row's JSON, made once per resourceVersion, instant and Table options.

A request reads after the clock has run everything due at its instant (podlife.engine.live), watch deliveries
included, so what is indexed is what is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from podlife.api.meta import Obj, kept
from podlife.api.selectors import DOUBLE_EQUALS, EQUALS, IN, Selector
from podlife.api.store import DELETED, Key, Store

_INDEXED_FIELDS = {"Pod": ("spec.nodeName",)}
BODY_MAX = 4 << 20        # a LIST response larger than this is not kept
BODIES_KEPT = 64          # LIST responses kept (the most recent)
BODIES_BYTES = 64 << 20   # and their bytes at most


class _KindCache:
    def __init__(self, cache: ReadCache, kind: str) -> None:
        self.kind = kind
        self.cache = cache
        self.labels: dict[tuple[str, str], set[Key]] = {}
        self.fields: dict[tuple[str, str], set[Key]] = {}
        self.indexed = _INDEXED_FIELDS.get(kind, ())
        self.built = False   # the indexes are made at the first selector that can use them
        cache.store.watch(kind, self._on_change)

    def _build(self) -> None:
        for obj in self.cache.store.list(self.kind):
            self._add(_key(obj), obj)
        self.built = True

    def _on_change(self, type_: str, obj: Obj, old: Obj | None) -> None:
        key = _key(obj)
        if type_ == DELETED:
            self.cache.json.pop((self.kind, *key), None)
            self.cache.rows.pop((self.kind, *key), None)
        if not self.built:
            return
        if old is not None:
            self._drop(key, old)
        if type_ != DELETED:
            self._add(key, obj)

    def _add(self, key: Key, obj: Obj) -> None:
        for kv in (obj["metadata"].get("labels") or {}).items():
            self.labels.setdefault(kv, set()).add(key)
        for f in self.indexed:
            self.fields.setdefault((f, _field(obj, f)), set()).add(key)

    def _drop(self, key: Key, obj: Obj) -> None:
        for kv in (obj["metadata"].get("labels") or {}).items():
            keys = self.labels.get(kv)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.labels[kv]
        for f in self.indexed:
            keys = self.fields.get((f, _field(obj, f)))
            if keys is not None:
                keys.discard(key)

    def candidates(self, labels: Selector | None, equal: dict[str, str]) -> set[Key] | None:
        """The keys that can match, from the equalities the indexes answer; None when none does."""
        usable = [r for r in labels.requirements if r.operator in (EQUALS, DOUBLE_EQUALS, IN)] \
            if labels is not None else []
        fields = [(f, value) for f, value in equal.items() if f in self.indexed]
        if not usable and not fields:
            return None
        if not self.built:
            self._build()
        found: list[set[Key]] = [set().union(*(self.labels.get((r.key, v), ()) for v in r.values)) for r in usable]
        found += [self.fields.get(fv, set()) for fv in fields]
        found.sort(key=len)
        return found[0].intersection(*found[1:])


class ReadCache:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.kinds: dict[str, _KindCache] = {}
        self.json: dict[tuple[str, str, str], tuple[str, bytes]] = {}
        self.rows: dict[tuple[str, str, str], tuple[str, Any, bytes]] = {}
        self._options: dict[Any, Any] = {}   # each Table options tuple seen, as one object (compared by identity)
        self._bodies: dict[tuple[Any, ...], bytes] = {}
        self._body_bytes = 0

    def kind(self, kind: str) -> _KindCache:
        kc = self.kinds.get(kind)
        if kc is None:
            kc = self.kinds[kind] = _KindCache(self, kind)
        return kc

    def encoded(self, kind: str, obj: Obj) -> bytes:
        """The object's JSON, made once per resourceVersion."""
        md = obj["metadata"]
        rv = md.get("resourceVersion", "")
        k = (kind, md.get("namespace", ""), md["name"])
        hit = self.json.get(k)
        if hit is not None and hit[0] == rv:
            return hit[1]
        self.kind(kind)   # its DELETED events drop what is left here
        data = kept(_go_escaped(orjson.dumps(obj)) if kind == "ControllerRevision" else orjson.dumps(obj))
        self.json[k] = (rv, data)
        return data

    def table_rows(self, kind: str, objs: list[Obj], options: Any, make: Callable[[Obj], bytes]) -> list[bytes]:
        """The JSON of each object's Table row for these options (served version, Table version, includeObject,
        the instant: ages change with it), made once per resourceVersion and options. Equal options are one
        object here, compared by identity (a Table of 150,000 pods is 150,000 lookups)."""
        options = self._options.setdefault(options, options)
        if len(self._options) > 64:
            self._options.clear()
        self.kind(kind)
        cache = self.rows
        out = []
        for obj in objs:
            md = obj["metadata"]
            rv = md.get("resourceVersion", "")
            k = (kind, md.get("namespace", ""), md["name"])
            hit = cache.get(k)
            if hit is not None and hit[1] is options and hit[0] == rv:
                out.append(hit[2])
                continue
            row = kept(make(obj))
            cache[k] = (rv, options, row)
            out.append(row)
        return out

    def body(self, key: tuple[Any, ...]) -> bytes | None:
        """A LIST's response made for the same request at the same state (``key`` holds both), or None."""
        return self._bodies.get(key)

    def keep_body(self, key: tuple[Any, ...], body: bytes) -> None:
        if len(body) > BODY_MAX:
            return
        self._bodies[key] = body
        self._body_bytes += len(body)
        while len(self._bodies) > BODIES_KEPT or self._body_bytes > BODIES_BYTES:
            self._body_bytes -= len(self._bodies.pop(next(iter(self._bodies))))

    def exact(self, labels: Selector | None) -> bool:
        """What select() returns for this label selector (and no field selector) matches it as it stands: every
        requirement is an equality the label index answers, and the index has seen every write."""
        return labels is not None and not labels.nothing and not self.store.delivering() and all(
            r.operator in (EQUALS, DOUBLE_EQUALS, IN) for r in labels.requirements)

    def select(self, kind: str, namespace: str | None, labels: Selector | None, equal: dict[str, str]
               ) -> list[Obj] | None:
        """The stored objects the indexes allow for these selectors, in key order (still to be matched in
        full); None when no index applies (the caller lists them all)."""
        keys = self.kind(kind).candidates(labels, equal)
        if keys is None:
            return None
        out = []
        for ns, name in sorted(keys):
            if namespace is None or ns == namespace:
                obj = self.store.try_get(kind, ns or None, name)
                if obj is not None:
                    out.append(obj)
        return out


def _key(obj: Obj) -> Key:
    md = obj["metadata"]
    return (md.get("namespace", ""), md["name"])


def _field(obj: Obj, path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def _go_escaped(data: bytes) -> bytes:
    """The API server's JSON encoder escapes <, >, & and U+2028/U+2029 (encoding/json's escapeHTML), also inside
    a RawExtension. A ControllerRevision's data is compared byte for byte with the client's own encoding of the
    template (daemon.Match), so there it is written as Go writes it; in JSON those characters occur only inside
    strings, where the escapes mean the same."""
    for raw, esc in ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
                     ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029")):
        data = data.replace(raw, esc)
    return data

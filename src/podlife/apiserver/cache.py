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


class _KindCache:
    def __init__(self, cache: ReadCache, kind: str) -> None:
        self.kind = kind
        self.cache = cache
        self.labels: dict[tuple[str, str], set[Key]] = {}
        self.fields: dict[tuple[str, str], set[Key]] = {}
        self.indexed = _INDEXED_FIELDS.get(kind, ())
        for obj in cache.store.list(kind):
            self._add(_key(obj), obj)
        cache.store.watch(kind, self._on_change)

    def _on_change(self, type_: str, obj: Obj, old: Obj | None) -> None:
        key = _key(obj)
        if old is not None:
            self._drop(key, old)
        if type_ == DELETED:
            self.cache.json.pop((self.kind, *key), None)
            self.cache.rows.pop((self.kind, *key), None)
        else:
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
        found: list[set[Key]] = []
        for r in labels.requirements if labels is not None else ():
            if r.operator in (EQUALS, DOUBLE_EQUALS, IN):
                found.append(set().union(*(self.labels.get((r.key, v), ()) for v in r.values)))
        for f, value in equal.items():
            if f in self.indexed:
                found.append(self.fields.get((f, value), set()))
        if not found:
            return None
        found.sort(key=len)
        return found[0].intersection(*found[1:])


class ReadCache:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.kinds: dict[str, _KindCache] = {}
        self.json: dict[tuple[str, str, str], tuple[str, bytes]] = {}
        self.rows: dict[tuple[str, str, str], tuple[str, Any, bytes]] = {}

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
        data = kept(orjson.dumps(obj))
        self.json[k] = (rv, data)
        return data

    def row(self, kind: str, obj: Obj, options: Any, make: Callable[[], bytes]) -> bytes:
        """The JSON of the object's Table row for these options (served version, Table version, includeObject,
        the instant: ages change with it), made once per resourceVersion and options."""
        md = obj["metadata"]
        rv = md.get("resourceVersion", "")
        k = (kind, md.get("namespace", ""), md["name"])
        hit = self.rows.get(k)
        if hit is not None and hit[0] == rv and hit[1] == options:
            return hit[2]
        self.kind(kind)
        row = kept(make())
        self.rows[k] = (rv, options, row)
        return row

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

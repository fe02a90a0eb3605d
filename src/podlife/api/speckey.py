"""Keys of pod specs (or containers) for caches of answers that do not read the service-account token volume's name.

ServiceAccount admission mounts a projected volume named ``kube-api-access-<5 random>`` into every pod
(plugin/pkg/admission/serviceaccount/admission.go mountServiceAccountToken), so the replicas of one template no
longer have the same spec: their JSON differs in that name alone. Caches that answer the same for every such
name (the validation of a spec without errors, the scheduler's facts of a spec, a container's behaviour) key
the spec by :func:`name_free`, its JSON with the name taken out.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import Any

import orjson

from podlife.api.meta import kept
from podlife.api.names import NAME_CHARS

_PREFIX = b"kube-api-access-"   # admission.TOKEN_VOLUME_PREFIX
_QUOTED = b'"' + _PREFIX
_ALPHABET = NAME_CHARS.encode()  # names.random_suffix draws the 5 characters from these
_HOLE = b'"kube-api-access-"'


def split(json: bytes) -> tuple[bytes, str | None]:
    """``json``'s key (``name_free``) and the generated token volume name taken out of it (None: nothing was)."""
    mentions = json.count(_PREFIX)
    if not mentions:
        return json, None
    at = json.find(_QUOTED)
    name = json[at:at + 23]   # the quotes, the prefix and 5 characters
    if at <= 0 or json[at - 1] == 92 or name[22:] != b'"' or name[17:22].strip(_ALPHABET):
        return json, None   # 92: a backslash (an escaped quote inside another string)
    # split and join: the count and the replace of the name, in a third of their time (bytes.count and
    # bytes.replace are slower than bytes.split with a needle of this length)
    pieces = json.split(name)
    if len(pieces) != mentions + 1:
        return json, None
    pieces[0] = b"\0" + pieces[0]
    return _HOLE.join(pieces), name[1:-1].decode()


def name_free(json: bytes) -> bytes:
    """``json`` with the generated token volume name replaced by a hole, when every mention of the prefix in it
    is that one name as a whole string; otherwise ``json`` itself. Two specs with the same key are then the same
    but for a consistent renaming of one generated-form name (a valid DNS label of one length) to another that
    neither mentions. The key of a rewritten JSON starts with a NUL byte, which no JSON starts with, so it never
    equals a JSON's own bytes."""
    return split(json)[0]


Path = tuple[str | int, ...]


def name_paths(model: Any, name: str) -> list[Path] | None:
    """Where ``name`` is in ``model`` (a spec whose ``split`` took it out): the paths to the strings equal to it,
    or None when it is also elsewhere (a key, or inside another string)."""
    paths: list[Path] = []

    def walk(value: Any, path: Path) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k == name:
                    paths.append(())   # a key: not a value's place, counted so that the check below fails
                walk(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))
        elif value == name:
            paths.append(path)

    walk(model, ())
    if () in paths or orjson.dumps(model).count(f'"{name}"'.encode()) != len(paths):
        return None
    return paths


def graft(model: dict, paths: list[Path], name: str) -> dict:
    """A spec equal to ``model`` but for ``name`` at ``paths`` (``name_paths``), the same key as the model's:
    copies of the dicts and lists on the way to the name, the model's own objects for everything else, so
    replicas hold a few small containers each instead of a whole spec (stored data is never changed in place)."""
    out = dict(model)
    for path in paths:
        new, old = out, model
        for step in path[:-1]:
            old = old[step]
            child = new[step]
            if child is old:
                child = new[step] = old.copy()
            new = child
        new[path[-1]] = name
    return out


def share_spec(specs: dict[bytes, Any], spec: dict, limit: int) -> dict:
    """The spec to store (Store._share): the first alike spec itself, or, when only the token volume's name
    differs, the first one's with the name grafted in; ``specs`` keeps up to ``limit`` first specs by key. The
    spec returned is remembered with its key (``stored_key``)."""
    try:
        json = orjson.dumps(spec)
    except TypeError:
        return spec
    key, name = split(json)
    found = specs.get(key)
    if found is None:
        if len(specs) > limit:
            specs.clear()
        key = kept(key)
        specs[key] = (spec, name_paths(spec, name) if name is not None else None, key)
        out = spec
    else:
        out = found[0] if name is None else graft(found[0], found[1], name) if found[1] is not None else spec
        key = found[2]
    _remember(out, key, None if "nodeName" in out else key)
    return out


# Specs as stored (never changed in place afterwards) → (the spec, its key, its key less nodeName): the store
# works out the key of each pod spec it keeps (share_spec), and the caches that key a spec the same way (the
# scheduler's templates and spec facts) read it here instead of encoding and splitting the spec again. Keyed by
# id(); the entry holds the spec, so the id is not reused while it is here.
_STORED: dict[int, tuple[dict, bytes | None, bytes | None]] = {}
STORED_KEPT = 8192   # when reached, the specs no one else holds are forgotten
_limit = STORED_KEPT
# The specs a binding replaced (their ids): each stays in _STORED while its pod's old revision may still be read
# (the scheduler binds in bursts, long after it assumed), and is looked at again at every pod write
# (collect_superseded). A scan only when the table is full left them: after the creation burst the table grows only
# by a binding's new spec, so about one dead spec a pod stayed (some 100 MiB at 150,000 pods).
_SUPERSEDED: deque[int] = deque()
UNHELD = 2   # sys.getrefcount of a spec only this table holds: the entry's reference and the call's


def _remember(spec: dict, key: bytes | None, nodeless: bytes | None) -> None:
    if len(_STORED) >= _limit:
        _forget_unheld()
    _STORED[id(spec)] = (spec, key, nodeless)


def _forget_unheld() -> None:
    """Forget the specs only this table holds (nothing can ask for them again); keep the others, and room for as
    many more. A scenario's first objects create every pod before the scheduler's first turn: forgetting them all
    made the scheduler encode each of those specs again."""
    global _limit
    refcount = getattr(sys, "getrefcount", None)
    if refcount is None:   # an interpreter that does not count references: forget them all, as before
        _STORED.clear()
    else:
        for k in [k for k, entry in _STORED.items() if refcount(entry[0]) <= UNHELD]:
            del _STORED[k]
    _limit = max(STORED_KEPT, 2 * len(_STORED))


def stored_key(spec: dict) -> bytes | None:
    """The key (``split``) of a stored spec's JSON, when the store has it at hand; None otherwise."""
    entry = _STORED.get(id(spec))
    return entry[1] if entry is not None and entry[0] is spec else None


def nodeless_key(spec: dict) -> bytes | None:
    """The key of a stored spec's JSON without its nodeName, when the store has it at hand; None otherwise."""
    entry = _STORED.get(id(spec))
    return entry[2] if entry is not None and entry[0] is spec else None


def bound_spec(spec: dict, node: str) -> dict:
    """``spec`` with nodeName set (pods/binding), remembered with the key of ``spec`` less nodeName when known."""
    out = {**spec, "nodeName": node}
    was = nodeless_key(spec)
    if was is not None:
        _remember(out, None, was)
        _SUPERSEDED.append(id(spec))
    return out


def collect_superseded() -> None:
    """Look at the oldest spec a binding replaced (Store._commit, at each pod write): forgotten if only this table
    holds it now, else looked at again after the others. An id that another spec has taken since is judged as that
    spec: an unheld one can go whatever it is."""
    if _SUPERSEDED:
        refcount = getattr(sys, "getrefcount", None)
        if refcount is None:   # (no reference counts: _forget_unheld forgets every spec when the table is full)
            _SUPERSEDED.clear()
            return
        key = _SUPERSEDED.popleft()
        entry = _STORED.get(key)
        if entry is not None:
            if refcount(entry[0]) <= UNHELD:
                del _STORED[key]
            else:
                _SUPERSEDED.append(key)

"""Keys of pod specs (or containers) for caches of answers that do not read the service-account token volume's name.

ServiceAccount admission mounts a projected volume named ``kube-api-access-<5 random>`` into every pod
(plugin/pkg/admission/serviceaccount/admission.go mountServiceAccountToken), so the replicas of one template no
longer have the same spec: their JSON differs in that name alone. Caches that answer the same for every such
name (the validation of a spec without errors, the scheduler's facts of a spec, a container's behaviour) key
the spec by :func:`name_free`, its JSON with the name taken out.
"""

from __future__ import annotations

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
    if at <= 0 or json[at - 1] == 92 or name[22:] != b'"' or name[17:22].strip(_ALPHABET) \
            or json.count(name) != mentions:   # 92: a backslash (an escaped quote inside another string)
        return json, None
    return b"\0" + json.replace(name, _HOLE), name[1:-1].decode()


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
    differs, the first one's with the name grafted in; ``specs`` keeps up to ``limit`` first specs by key."""
    try:
        json = orjson.dumps(spec)
    except TypeError:
        return spec
    key, name = split(json)
    found = specs.get(key)
    if found is None:
        if len(specs) > limit:
            specs.clear()
        specs[kept(key)] = (spec, name_paths(spec, name) if name is not None else None)
        return spec
    if name is None:
        return found[0]
    return graft(found[0], found[1], name) if found[1] is not None else spec

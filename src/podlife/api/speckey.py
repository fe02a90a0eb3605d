"""Keys of pod specs (or containers) for caches of answers that do not read the service-account token volume's name.

ServiceAccount admission mounts a projected volume named ``kube-api-access-<5 random>`` into every pod
(plugin/pkg/admission/serviceaccount/admission.go mountServiceAccountToken), so the replicas of one template no
longer have the same spec: their JSON differs in that name alone. Caches that answer the same for every such
name (the validation of a spec without errors, the scheduler's facts of a spec, a container's behaviour) key
the spec by :func:`name_free`, its JSON with the name taken out.
"""

from __future__ import annotations

from typing import Any

from podlife.api.names import NAME_CHARS

_PREFIX = b"kube-api-access-"   # admission.TOKEN_VOLUME_PREFIX
_QUOTED = b'"' + _PREFIX
_ALPHABET = NAME_CHARS.encode()  # names.random_suffix draws the 5 characters from these
_HOLE = b'"kube-api-access-"'


def name_free(json: bytes) -> bytes:
    """``json`` with the generated token volume name replaced by a hole, when every mention of the prefix in it
    is that one name as a whole string; otherwise ``json`` itself. Two specs with the same key are then the same
    but for a consistent renaming of one generated-form name (a valid DNS label of one length) to another that
    neither mentions. The key of a rewritten JSON starts with a NUL byte, which no JSON starts with, so it never
    equals a JSON's own bytes."""
    mentions = json.count(_PREFIX)
    if not mentions:
        return json
    at = json.find(_QUOTED)
    name = json[at:at + 23]   # the quotes, the prefix and 5 characters
    if at <= 0 or json[at - 1] == 92 or name[22:] != b'"' or name[17:22].strip(_ALPHABET) \
            or json.count(name) != mentions:   # 92: a backslash (an escaped quote inside another string)
        return json
    return b"\0" + json.replace(name, _HOLE)


def graft(value: Any, model: Any) -> Any:
    """``value`` rebuilt on ``model``'s parts: every part equal to the model's at the same place is the model's
    own object, so replicas whose specs have one key (``name_free``) hold a few dicts of their own (the paths to
    their name) instead of a whole spec each. Only for a model with the same key (the same JSON but for the
    name: the same keys in the same order, the same types), and for data never changed in place."""
    if value == model:
        return model
    if isinstance(value, dict):
        return {k: m if v == m else graft(v, m) for k, v, m in zip(value, value.values(), model.values())}
    if isinstance(value, list):
        return [m if v == m else graft(v, m) for v, m in zip(value, model)]
    return value

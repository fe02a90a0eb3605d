"""Helpers on core/v1 objects that several admission plugins share (pkg/apis/core/helper)."""

from __future__ import annotations

from typing import Any

from podlife.api.meta import Obj


def _match_toleration(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """core/v1 Toleration.MatchToleration: same key, effect, operator and value."""
    return all((a.get(f) or "") == (b.get(f) or "") for f in ("key", "effect", "operator", "value"))


def add_or_update_toleration(pod: Obj, toleration: dict[str, Any]) -> bool:
    """pkg/apis/core/helper AddOrUpdateTolerationInPod: replace a matching toleration, else append."""
    spec = pod.setdefault("spec", {})
    out: list[dict[str, Any]] = []
    updated = False
    for t in spec.get("tolerations") or ():
        if _match_toleration(toleration, t):
            if t == toleration:
                return False
            out.append(dict(toleration))
            updated = True
            continue
        out.append(t)
    if not updated:
        out.append(dict(toleration))
    spec["tolerations"] = out
    return True

"""Mutating admission plugins of the API server: plugin/pkg/admission.

The apiserver's create handler decodes the object (applying defaults), runs the mutating admission chain, then
the registry strategy (PrepareForCreate) and validation. podlife's registry runs defaulting and strategy in one
step, so a plugin is called from the strategy's ``prepare_for_create`` right after defaulting, for every plugin
in ``store.admission`` (the list the cluster builds from ApiServerConfiguration; a bare Store has none).
"""

from __future__ import annotations

from typing import Any, Protocol

from podlife.api.meta import Obj
from podlife.config import ApiServerConfiguration

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"


class Plugin(Protocol):
    def admit(self, obj: Obj) -> None: ...


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


class DefaultTolerationSeconds:
    """plugin/pkg/admission/defaulttolerationseconds: every pod that does not already tolerate the NoExecute
    taints not-ready and unreachable gets a toleration of each, operator Exists, for tolerationSeconds
    (--default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds, 300 s)."""

    def __init__(self, not_ready_seconds: int, unreachable_seconds: int) -> None:
        self.not_ready_seconds = not_ready_seconds
        self.unreachable_seconds = unreachable_seconds

    def admit(self, obj: Obj) -> None:
        if obj.get("kind") != "Pod":
            return
        not_ready = unreachable = False
        for t in (obj.get("spec") or {}).get("tolerations") or ():
            key, effect = t.get("key") or "", t.get("effect") or ""
            if key in (TAINT_NOT_READY, "") and effect in ("NoExecute", ""):
                not_ready = True
            if key in (TAINT_UNREACHABLE, "") and effect in ("NoExecute", ""):
                unreachable = True
        if not not_ready:
            add_or_update_toleration(obj, {"key": TAINT_NOT_READY, "operator": "Exists", "effect": "NoExecute",
                                           "tolerationSeconds": self.not_ready_seconds})
        if not unreachable:
            add_or_update_toleration(obj, {"key": TAINT_UNREACHABLE, "operator": "Exists", "effect": "NoExecute",
                                           "tolerationSeconds": self.unreachable_seconds})


def default_plugins(config: ApiServerConfiguration) -> list[Plugin]:
    """The default-enabled mutating plugins podlife models (kube-apiserver's DefaultTolerationSeconds is on by
    default in every modelled version)."""
    return [DefaultTolerationSeconds(config.defaultNotReadyTolerationSeconds,
                                     config.defaultUnreachableTolerationSeconds)]

"""The validation options that depend on the Kubernetes version (upstream's PodValidationOptions and the
feature-gate checks inside the group validators). Every read of them goes through this module: the store
sets them around each write from the version's rules (podlife.versions, rules of the same names); outside a
cluster they are empty, which means the newest behaviour."""

from __future__ import annotations

from contextvars import ContextVar

FEATURES: ContextVar[dict[str, bool]] = ContextVar("validation_features", default={})
GATED = ("sleep_action_allow_zero", "container_restart_rules", "restart_all_containers", "container_stop_signals",
         "relaxed_env_var_names", "daemonset_max_surge")   # versions rules of the same names


def features(profile: object) -> dict[str, bool]:
    """The validation options of a version (podlife.versions rules of the same names)."""
    return {name: getattr(profile, name) for name in GATED}


def enabled(name: str) -> bool:
    """One option of the write being validated (on when no version set it: the newest behaviour)."""
    return FEATURES.get().get(name, True)


def snapshot() -> tuple[tuple[str, bool], ...]:
    """The options in force, as part of a cache key."""
    return tuple(FEATURES.get().items())

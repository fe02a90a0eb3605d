"""The validation options that depend on the Kubernetes version (upstream's PodValidationOptions and the
feature-gate checks inside the group validators): the rules (podlife.versions Profile) of the write being
validated. Every read of them goes through ``rules()`` here; they are set only through ``set_rules`` (the store
around each write, the scenario check around its dry run). Read unset it is an error, not a guess at a
version."""

from __future__ import annotations

from contextvars import ContextVar, Token

from podlife.versions import Profile

_RULES: ContextVar[Profile] = ContextVar("validation_rules")


def set_rules(profile: Profile) -> Token[Profile]:
    """Validate with ``profile``'s rules until ``reset_rules(token)``."""
    return _RULES.set(profile)


def reset_rules(token: Token[Profile]) -> None:
    _RULES.reset(token)


def rules() -> Profile:
    """The rules of the write being validated."""
    try:
        return _RULES.get()
    except LookupError:
        raise RuntimeError("validation ran without a version's rules (podlife.api.validation.set_rules)") from None

"""Create validation of the kinds ``podlife.api.validation`` does not cover itself, one module per API group as
upstream keeps them (pkg/apis/<group>/validation): the kinds podlife stores, and those it models beyond the
core workloads. Every other kind gets ObjectMeta validation with a DNS-subdomain name, as most upstream kinds
(and custom resources) have.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from podlife.api.errors import FieldError
from podlife.api.validators import admissionregistration, apiextensions, autoscaling, core, networking, rbac, storage

Validator = Callable[[Mapping], list[FieldError]]

VALIDATORS: dict[str, Validator] = {
    **core.VALIDATORS,
    **autoscaling.VALIDATORS,
    **storage.VALIDATORS,
    **networking.VALIDATORS,
    **rbac.VALIDATORS,
    **apiextensions.VALIDATORS,
    **admissionregistration.VALIDATORS,
}


UpdateValidator = Callable[[Mapping, Mapping], list[FieldError]]
UPDATE_VALIDATORS: dict[str, UpdateValidator] = {**core.UPDATE_VALIDATORS}


def update_validator(kind: str) -> UpdateValidator | None:
    """The update-only rules of a kind (new, old), run between ObjectMeta update and create validation."""
    return UPDATE_VALIDATORS.get(kind)


def validator(kind: str) -> Validator | None:
    return VALIDATORS.get(kind)

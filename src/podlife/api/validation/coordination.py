"""coordination.k8s.io Lease (pkg/apis/coordination/validation)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import Errs, as_dict, as_int, forbidden, invalid, invalid_each, not_supported
from podlife.api.validation.objectmeta import validate_object_meta


def validate_lease(obj: Mapping) -> Errs:
    """ValidateLease (coordination/validation)."""
    spec = as_dict(obj.get("spec"))
    errs = validate_object_meta(obj.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and as_int(duration) <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and as_int(transitions) < 0:
        errs.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    strategy = spec.get("strategy")
    if strategy is not None:
        if "/" not in str(strategy):
            if strategy != "OldestEmulationVersion":
                errs.append(not_supported("spec.strategy.strategy", strategy, ["OldestEmulationVersion"]))
        else:
            errs += invalid_each("spec.strategy.strategy", strategy, names.qualified_name_errors(str(strategy)))
    if spec.get("preferredHolder") and not strategy:
        errs.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs

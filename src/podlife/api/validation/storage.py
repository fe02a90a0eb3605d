"""storage.k8s.io (pkg/apis/storage/validation): StorageClass, with podlife's provisioning-delay annotation."""

from __future__ import annotations

import math
from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import Errs, as_dict, as_str, invalid, invalid_each, not_supported, required
from podlife.api.validation.objectmeta import meta

PROVISIONING_SECONDS = "podlife/provisioning-seconds"
MAX_PROVISIONING_SECONDS = 7 * 24 * 3600   # no run is longer


def validate_storage_class(obj: Mapping) -> Errs:
    """ValidateStorageClass: a provisioner that is a qualified name, a supported reclaim policy and binding
    mode; the podlife/provisioning-seconds annotation is a number of seconds."""
    errs = meta(obj, False)
    provisioner = as_str(obj.get("provisioner"))
    if not provisioner:
        errs.append(required("provisioner"))
    else:
        errs += invalid_each("provisioner", provisioner, names.qualified_name_errors(provisioner.lower()))
    policy = obj.get("reclaimPolicy")
    if policy is not None and policy not in ("Delete", "Retain"):
        errs.append(not_supported("reclaimPolicy", policy, ["Delete", "Retain"]))
    mode = obj.get("volumeBindingMode")
    if mode is not None and mode not in ("Immediate", "WaitForFirstConsumer"):
        errs.append(not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"]))
    if len(as_dict(obj.get("parameters"))) > 512:
        errs.append(invalid("parameters", "", "can have at most 512 parameters"))
    delay = as_dict(as_dict(obj.get("metadata")).get("annotations")).get(PROVISIONING_SECONDS)
    if delay is not None:
        try:
            seconds = float(delay)
        except ValueError:
            seconds = math.nan
        if not 0 <= seconds <= MAX_PROVISIONING_SECONDS:
            errs.append(invalid(f"metadata.annotations[{PROVISIONING_SECONDS}]", delay,
                                 f"expected a number of seconds from 0 to {MAX_PROVISIONING_SECONDS} (podlife's "
                                 "provisioning delay)"))
    return errs


VALIDATORS = {"StorageClass": validate_storage_class}

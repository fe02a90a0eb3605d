"""admissionregistration.k8s.io (pkg/apis/admissionregistration/validation): webhook configurations, which
podlife stores without calling (a warning says so)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import Errs, as_dict, as_list, as_str, invalid, invalid_each, not_supported, required
from podlife.api.validation.objectmeta import meta


def _webhooks(obj: Mapping, mutating: bool) -> Errs:
    errs = meta(obj, False)
    seen: set[str] = set()
    for i, hook in enumerate(as_list(obj.get("webhooks"))):
        hook, p = as_dict(hook), f"webhooks[{i}]"
        name = as_str(hook.get("name"))
        errs += invalid_each(f"{p}.name", name, names.qualified_name_errors(name) if "/" in name else
                      names.dns1123_subdomain_errors(name))
        if name.count(".") < 2:
            errs.append(invalid(f"{p}.name", name, "should be a domain with at least three segments separated by dots"))
        if name in seen:
            errs.append(invalid(f"{p}.name", name, "must be unique"))   # a Duplicate upstream
        seen.add(name)
        client = as_dict(hook.get("clientConfig"))
        if (client.get("url") is None) == (client.get("service") is None):
            errs.append(required(f"{p}.clientConfig", "exactly one of url or service is required"))
        side = hook.get("sideEffects")
        if side is None:
            errs.append(required(f"{p}.sideEffects", "must specify one of None, NoneOnDryRun"))
        elif side not in ("None", "NoneOnDryRun"):
            errs.append(not_supported(f"{p}.sideEffects", side, ["None", "NoneOnDryRun"]))
        versions = as_list(hook.get("admissionReviewVersions"))
        if not versions:
            errs.append(required(f"{p}.admissionReviewVersions", "must specify one of v1, v1beta1"))
        elif not {"v1", "v1beta1"} & set(versions):
            errs.append(invalid(f"{p}.admissionReviewVersions", versions, "must include at least one of v1, v1beta1"))
        policy = hook.get("failurePolicy")
        if policy is not None and policy not in ("Fail", "Ignore"):
            errs.append(not_supported(f"{p}.failurePolicy", policy, ["Fail", "Ignore"]))
        match = hook.get("matchPolicy")
        if match is not None and match not in ("Equivalent", "Exact"):
            errs.append(not_supported(f"{p}.matchPolicy", match, ["Equivalent", "Exact"]))
        timeout = hook.get("timeoutSeconds")
        if timeout is not None and not 1 <= timeout <= 30:
            errs.append(invalid(f"{p}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
        if mutating:
            reinvocation = hook.get("reinvocationPolicy")
            if reinvocation is not None and reinvocation not in ("IfNeeded", "Never"):
                errs.append(not_supported(f"{p}.reinvocationPolicy", reinvocation, ["IfNeeded", "Never"]))
    return errs


VALIDATORS = {
    "ValidatingWebhookConfiguration": lambda obj: _webhooks(obj, False),
    "MutatingWebhookConfiguration": lambda obj: _webhooks(obj, True),
}

"""apiregistration.k8s.io (staging/src/k8s.io/kube-aggregator/pkg/apis/apiregistration/validation
ValidateAPIService): the name is spec.version + "." + spec.group (so the legacy group's is "v1."), a local
APIService has no TLS settings, a service-backed one names its Service and port."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import Errs, as_dict, as_int, as_str, invalid, invalid_each, path_segment_name, \
    required
from podlife.api.validation.objectmeta import meta


def validate_apiservice(obj: Mapping) -> Errs:
    spec = as_dict(obj.get("spec"))
    group, version = as_str(spec.get("group")), as_str(spec.get("version"))
    wanted = f"{version}.{group}"

    def name_fn(name: str, prefix: bool = False) -> list[str]:
        found = path_segment_name(name, prefix)
        if found:
            return found
        return [] if name == wanted else [f'must be `spec.version+"."+spec.group`: "{wanted}"']

    errs = meta(obj, False, name_fn)
    if not group and version != "v1":
        errs.append(required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        errs += invalid_each("spec.group", group, names.dns1123_subdomain_errors(group))
    errs += invalid_each("spec.version", version, names.dns1035_label_errors(version))
    gpm, vp = as_int(spec.get("groupPriorityMinimum")), as_int(spec.get("versionPriority"))
    if not 0 < gpm <= 20000:
        errs.append(invalid("spec.groupPriorityMinimum", gpm, "must be positive and less than 20000"))
    if not 0 < vp <= 1000:
        errs.append(invalid("spec.versionPriority", vp, "must be positive and less than 1000"))
    ca, insecure = as_str(spec.get("caBundle")), spec.get("insecureSkipTLSVerify") is True
    service = spec.get("service")
    if service is None:
        if ca:
            size = len(ca) * 3 // 4 - ca.count("=")   # the decoded bytes
            errs.append(invalid("spec.caBundle", f"{size} bytes", "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(invalid("spec.insecureSkipTLSVerify", True,
                                "local APIServices may not have insecureSkipTLSVerify"))
        return errs
    service = as_dict(service)
    if not as_str(service.get("namespace")):
        errs.append(required("spec.service.namespace"))
    if not as_str(service.get("name")):
        errs.append(required("spec.service.name"))
    port = as_int(service.get("port"))
    bad = names.port_num_errors(port)
    if bad:
        errs.append(invalid("spec.service.port", port, "port is not valid: " + ", ".join(bad)))
    if insecure and ca:
        errs.append(invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return errs


VALIDATORS = {"APIService": validate_apiservice}

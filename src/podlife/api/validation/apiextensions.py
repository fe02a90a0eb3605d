"""CustomResourceDefinition (apiextensions-apiserver pkg/apis/apiextensions/validation): the name is
plural.group, names and versions are DNS-1035 labels, exactly one storage version, a schema for each
version. (The schema itself is checked as a structural schema by podlife.api.schema.)"""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import Errs, as_dict, as_list, as_str, invalid, invalid_each, not_supported, required
from podlife.api.validation.objectmeta import meta


def validate_crd(obj: Mapping) -> Errs:
    errs = meta(obj, False)
    spec = as_dict(obj.get("spec"))
    group, plural = as_str(spec.get("group")), as_str(as_dict(spec.get("names")).get("plural"))
    name = as_str(as_dict(obj.get("metadata")).get("name"))
    if name != f"{plural}.{group}":
        errs.append(invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        errs.append(required("spec.group"))
    else:
        errs += invalid_each("spec.group", group, names.dns1123_subdomain_errors(group))
        if "." not in group:
            errs.append(invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = as_str(spec.get("scope"))
    if scope not in ("Cluster", "Namespaced"):
        errs.append(not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    crd_names = as_dict(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        value = as_str(crd_names.get(key))
        if not value:
            if key in ("plural", "kind"):
                errs.append(required(f"spec.names.{key}"))
            continue
        checked = value.lower() if key in ("kind", "listKind") else value
        errs += invalid_each(f"spec.names.{key}", value, names.dns1035_label_errors(checked))
    for i, short in enumerate(as_list(crd_names.get("shortNames"))):
        errs += invalid_each(f"spec.names.shortNames[{i}]", short, names.dns1035_label_errors(as_str(short)))
    versions = as_list(spec.get("versions"))
    if not versions:
        errs.append(required("spec.versions", "must have exactly one version marked as storage version"))
    seen: set[str] = set()
    storage = 0
    for i, v in enumerate(versions):
        v, p = as_dict(v), f"spec.versions[{i}]"
        vname = as_str(v.get("name"))
        errs += invalid_each(f"{p}.name", vname, names.dns1035_label_errors(vname))
        if vname in seen:
            errs.append(invalid(f"{p}.name", vname, "must be unique"))
        seen.add(vname)
        storage += bool(v.get("storage"))
        if obj.get("apiVersion") == "apiextensions.k8s.io/v1" and\
                as_dict(v.get("schema")).get("openAPIV3Schema") is None:
            errs.append(required(f"{p}.schema.openAPIV3Schema", "schemas are required"))
    if versions and storage != 1:
        errs.append(invalid("spec.versions", f"{storage} storage versions",
                             "must have exactly one version marked as storage version"))
    return errs


VALIDATORS = {"CustomResourceDefinition": validate_crd}

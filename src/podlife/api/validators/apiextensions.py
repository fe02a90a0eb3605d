"""CustomResourceDefinition (apiextensions-apiserver pkg/apis/apiextensions/validation): the name is
plural.group, names and versions are DNS-1035 labels, exactly one storage version, a schema for each
version. (The schema itself is checked as a structural schema by podlife.api.schema.)"""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validators.common import Errs, _d, _invalid, _l, _msgs, _not_supported, _required, _s, meta


def validate_crd(obj: Mapping) -> Errs:
    errs = meta(obj, False)
    spec = _d(obj.get("spec"))
    group, plural = _s(spec.get("group")), _s(_d(spec.get("names")).get("plural"))
    name = _s(_d(obj.get("metadata")).get("name"))
    if name != f"{plural}.{group}":
        errs.append(_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        errs.append(_required("spec.group"))
    else:
        errs += _msgs("spec.group", group, names.dns1123_subdomain_errors(group))
        if "." not in group:
            errs.append(_invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = _s(spec.get("scope"))
    if scope not in ("Cluster", "Namespaced"):
        errs.append(_not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    crd_names = _d(spec.get("names"))
    for key in ("plural", "singular", "kind", "listKind"):
        value = _s(crd_names.get(key))
        if not value:
            if key in ("plural", "kind"):
                errs.append(_required(f"spec.names.{key}"))
            continue
        checked = value.lower() if key in ("kind", "listKind") else value
        errs += _msgs(f"spec.names.{key}", value, names.dns1035_label_errors(checked))
    for i, short in enumerate(_l(crd_names.get("shortNames"))):
        errs += _msgs(f"spec.names.shortNames[{i}]", short, names.dns1035_label_errors(_s(short)))
    versions = _l(spec.get("versions"))
    if not versions:
        errs.append(_required("spec.versions", "must have exactly one version marked as storage version"))
    seen: set[str] = set()
    storage = 0
    for i, v in enumerate(versions):
        v, p = _d(v), f"spec.versions[{i}]"
        vname = _s(v.get("name"))
        errs += _msgs(f"{p}.name", vname, names.dns1035_label_errors(vname))
        if vname in seen:
            errs.append(_invalid(f"{p}.name", vname, "must be unique"))
        seen.add(vname)
        storage += bool(v.get("storage"))
        if obj.get("apiVersion") == "apiextensions.k8s.io/v1" and \
                _d(v.get("schema")).get("openAPIV3Schema") is None:
            errs.append(_required(f"{p}.schema.openAPIV3Schema", "schemas are required"))
    if versions and storage != 1:
        errs.append(_invalid("spec.versions", f"{storage} storage versions",
                             "must have exactly one version marked as storage version"))
    return errs


VALIDATORS = {"CustomResourceDefinition": validate_crd}

"""Discovery documents: legacy (/api, /apis, /apis/GROUP, /api[s]/…/VERSION) and aggregated (apidiscovery.k8s.io
v2 and v2beta1, KEP-3352), built from the catalog.

kubectl 1.27–1.29 ask for aggregated v2beta1, 1.30+ for v2 then v2beta1, each falling back to the legacy
documents when the answer is not of the asked type: the response names exactly the type it is
(staging/src/k8s.io/apiserver/pkg/endpoints/discovery/aggregated/handler.go).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from podlife.apiserver.resources import Catalog, Resource

T = TypeVar("T")
# an aggregated group (podlife.apiserver.aggregator.groups): its groupPriorityMinimum, name and document
Extra = tuple[int, str, Any]

# kube-aggregator's group priorities (pkg/controlplane/apiserver/aggregator.go apiVersionPriorities), highest
# first; custom resource groups follow in name order
GROUP_ORDER = ("", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
               "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io",
               "policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
               "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
               "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io")

AGGREGATED = {v: f"application/json;g=apidiscovery.k8s.io;v={v};as=APIGroupDiscoveryList"
              for v in ("v2", "v2beta1")}


def _ordered_groups(cat: Catalog) -> list[tuple[str, list[str]]]:
    groups = cat.groups()
    rank = {g: i for i, g in enumerate(GROUP_ORDER)}
    return sorted(groups.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _merged(local: list[tuple[str, T]], extra: list[Extra]) -> list[T]:
    """The local groups in their order with the aggregated ones among them by priority, then name (handler_apis.go:
    apiregistration.k8s.io first, the rest helper.SortedByGroupAndVersion)."""
    from podlife.apiserver.aggregator.registration import group_priority

    pending = sorted(extra, key=lambda e: (-e[0], e[1]))
    out: list[T] = []
    for group, doc in local:
        if group not in ("", "apiregistration.k8s.io"):
            key = (-group_priority(group), group)
            while pending and (-pending[0][0], pending[0][1]) < key:
                out.append(pending.pop(0)[2])
        out.append(doc)
    return out + [e[2] for e in pending]


def api_versions(host: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}


def _group_doc(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(cat: Catalog, extra: Sequence[Extra] = ()) -> dict[str, Any]:
    local = [(g, _group_doc(g, vs)) for g, vs in _ordered_groups(cat) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": _merged(local, list(extra))}


def api_group(cat: Catalog, group: str) -> dict[str, Any] | None:
    vs = cat.groups().get(group)
    if not vs or not group:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, vs)}


def resource_list(cat: Catalog, group: str, version: str) -> dict[str, Any] | None:
    rs = cat.in_version(group, version)
    if not rs:
        return None
    out: list[dict[str, Any]] = []
    for r in rs:
        entry: dict[str, Any] = {"name": r.resource, "singularName": r.singular, "namespaced": r.namespaced,
                                 "kind": r.kind, "verbs": list(r.verbs)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for name, kind, verbs in r.subresources:
            sub: dict[str, Any] = {"name": f"{r.resource}/{name}", "singularName": "", "namespaced": r.namespaced,
                                   "kind": kind, "verbs": list(verbs)}
            if kind in ("Scale",):
                sub.update(group="autoscaling", version="v1")
            elif kind == "Eviction":
                sub.update(group="policy", version="v1")
            elif kind == "TokenRequest":
                sub.update(group="authentication.k8s.io", version="v1")
            out.append(sub)
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": out}


def _response_kind(r: Resource, kind: str) -> dict[str, str]:
    if kind == "Scale":
        return {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    if kind == "Eviction":
        return {"group": "policy", "version": "v1", "kind": "Eviction"}
    if kind == "TokenRequest":
        return {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}
    return {"group": r.group, "version": r.version, "kind": kind}


def _aggregated_resource(r: Resource) -> dict[str, Any]:
    entry: dict[str, Any] = {"resource": r.resource, "responseKind": _response_kind(r, r.kind),
                             "scope": "Namespaced" if r.namespaced else "Cluster",
                             "singularResource": r.singular, "verbs": list(r.verbs)}
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    if r.subresources:
        entry["subresources"] = [{"subresource": name, "responseKind": _response_kind(r, kind),
                                  "verbs": list(verbs)} for name, kind, verbs in r.subresources]
    return entry


def aggregated(cat: Catalog, version: str, legacy: bool, extra: Sequence[Extra] = ()) -> dict[str, Any]:
    """APIGroupDiscoveryList of /api (the core group) or /apis (every other group, ``extra`` the aggregated
    ones)."""
    items: list[tuple[str, Any]] = []
    for group, versions in _ordered_groups(cat):
        if (group == "") != legacy:
            continue
        items.append((group, {"metadata": {"name": group, "creationTimestamp": None},
                              "versions": [{"version": v, "freshness": "Current",
                                            "resources": [_aggregated_resource(r) for r in cat.in_version(group, v)]}
                                           for v in versions]}))
    return {"kind": "APIGroupDiscoveryList", "apiVersion": f"apidiscovery.k8s.io/{version}",
            "metadata": {}, "items": _merged(items, [] if legacy else list(extra))}


def negotiate_aggregated(accept: str) -> str | None:
    """The aggregated discovery version the Accept header asks for first, if any (the clients list them in order
    of preference and end with plain JSON)."""
    for part in accept.split(","):
        params = dict(p.strip().split("=", 1) for p in part.split(";")[1:] if "=" in p)
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList" \
                and params.get("v") in AGGREGATED:
            return params["v"]
        media = part.split(";")[0].strip()
        if media in ("application/json", "*/*", "application/*") and not params:
            return None
    return None

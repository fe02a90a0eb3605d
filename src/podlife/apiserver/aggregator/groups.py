"""The groups of service-backed APIServices in discovery: legacy /apis and /apis/GROUP list every registered
one (staging/src/k8s.io/kube-aggregator/pkg/apiserver/handler_apis.go: apisHandler, apiGroupHandler), whether
available or not; aggregated discovery lists each version with the resources its server gave, "Current" when the
last fetch succeeded, else "Stale" with the last ones fetched or none (handler_discovery.go syncAPIService).
podlife takes the resources from the available-condition check's GET /apis/GROUP/VERSION (upstream's fallback to
legacy discovery) rather than a separate fetch of the server's aggregated /apis."""

from __future__ import annotations

import re
from typing import Any

from podlife.api.meta import Obj


def _version_key(v: str) -> tuple[int, int, int, str]:
    """version.CompareKubeAwareVersionStrings: GA > beta > alpha, higher numbers first, then others by name."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0, v)
    stage = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), v)


def extension_apiservices(store: Any, local_groups: set[str]) -> dict[str, list[Obj]]:
    """Service-backed APIServices of groups the server does not serve itself, by group, each group's versions
    in preference order (helper.SortedByGroupAndVersion)."""
    by_group: dict[str, list[Obj]] = {}
    for a in store.list("APIService"):
        spec = a.get("spec") or {}
        if spec.get("service") and spec.get("group") and spec["group"] not in local_groups:
            by_group.setdefault(spec["group"], []).append(a)
    for items in by_group.values():
        items.sort(key=lambda a: (-(a["spec"].get("versionPriority") or 0), _version_key(a["spec"]["version"])))
    return by_group


def group_priority(items: list[Obj]) -> int:
    return max(a["spec"].get("groupPriorityMinimum") or 0 for a in items)


def group_doc(group: str, items: list[Obj]) -> Obj:
    gvs = [{"groupVersion": f"{group}/{a['spec']['version']}", "version": a["spec"]["version"]} for a in items]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def aggregated_versions(items: list[Obj], resources: dict[str, Obj], fresh: dict[str, bool]) -> list[Obj]:
    out = []
    for a in items:
        name, version = a["metadata"]["name"], a["spec"]["version"]
        listed = resources.get(name) or {}
        out.append({"version": version, "freshness": "Current" if fresh.get(name) else "Stale",
                    "resources": _aggregated(listed.get("resources") or [], a["spec"]["group"], version)})
    return out


def _aggregated(entries: list[Obj], group: str, version: str) -> list[Obj]:
    """A legacy APIResourceList's entries as aggregated discovery's (subresources under their resource)."""
    def kind_of(e: Obj) -> Obj:
        return {"group": e.get("group", group), "version": e.get("version", version), "kind": e.get("kind", "")}

    main: dict[str, Obj] = {}
    for e in entries:
        if "/" in e.get("name", ""):
            continue
        entry: Obj = {"resource": e["name"], "responseKind": kind_of(e),
                      "scope": "Namespaced" if e.get("namespaced") else "Cluster",
                      "singularResource": e.get("singularName", ""), "verbs": list(e.get("verbs") or [])}
        for key in ("shortNames", "categories"):
            if e.get(key):
                entry[key] = list(e[key])
        main[e["name"]] = entry
    for e in entries:
        parent, _, sub = e.get("name", "").partition("/")
        if sub and parent in main:
            main[parent].setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind_of(e), "verbs": list(e.get("verbs") or [])})
    return list(main.values())

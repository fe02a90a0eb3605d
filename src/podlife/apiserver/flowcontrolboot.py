"""The mandatory API Priority and Fairness configuration the API server creates at start: the ``exempt`` and
``catch-all`` PriorityLevelConfigurations and FlowSchemas (pkg/registry/flowcontrol/rest/storage_flowcontrol.go
post-start hook priority-and-fairness-config-producer; their contents from staging/src/k8s.io/apiserver/pkg/apis/
flowcontrol/bootstrap/default.go). Created when missing, as the ensurer does; podlife does not recreate or
re-spec them afterwards, does not create the suggested configuration (system, node-high, leader-election,
workload-high, workload-low, global-default and their FlowSchemas), and does not classify requests by them:
the README says so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podlife.api import schema
from podlife.api.conversion import to_flowcontrol
from podlife.api.errors import ApiError
from podlife.api.meta import Obj

# pkg/registry/flowcontrol/ensurer/strategy.go fieldManager
BY = "api-priority-and-fairness-config-producer-v1"
AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"   # flowcontrol AutoUpdateAnnotationKey
_ALL_RULES = {
    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
                       "namespaces": ["*"]}],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}


def _meta(name: str) -> Obj:
    return {"name": name, "annotations": {AUTO_UPDATE: "true"}}


def _groups(*names: str) -> list[Obj]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def mandatory(minor: int, api_version: str) -> list[Obj]:
    """The mandatory objects in ``api_version`` (the stored one), with the fields the minor's API has: the
    exempt level's ``exempt`` block (1.28+) and ``lendablePercent`` (1.26+) come with those fields."""
    has = _fields(minor, api_version)
    limited: Obj = {"nominalConcurrencyShares": 5}
    if "lendablePercent" in has("LimitedPriorityLevelConfiguration"):
        limited["lendablePercent"] = 0
    limited["limitResponse"] = {"type": "Reject"}
    exempt: Obj = {"type": "Exempt"}
    if "exempt" in has("PriorityLevelConfigurationSpec"):
        exempt["exempt"] = {"nominalConcurrencyShares": 0, "lendablePercent": 0}
    v1 = "flowcontrol.apiserver.k8s.io/v1"
    objs: list[Obj] = [
        {"apiVersion": v1, "kind": "PriorityLevelConfiguration", "metadata": _meta("catch-all"),
         "spec": {"type": "Limited", "limited": limited}},
        {"apiVersion": v1, "kind": "PriorityLevelConfiguration", "metadata": _meta("exempt"), "spec": exempt},
        {"apiVersion": v1, "kind": "FlowSchema", "metadata": _meta("exempt"),
         "spec": {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1,
                  "rules": [{"subjects": _groups("system:masters"), **_ALL_RULES}]}},
        {"apiVersion": v1, "kind": "FlowSchema", "metadata": _meta("catch-all"),
         "spec": {"priorityLevelConfiguration": {"name": "catch-all"}, "matchingPrecedence": 10000,
                  "distinguisherMethod": {"type": "ByUser"},
                  "rules": [{"subjects": _groups("system:unauthenticated", "system:authenticated"),
                             **_ALL_RULES}]}},
    ]
    return [to_flowcontrol(o, api_version) for o in objs]


def _fields(minor: int, api_version: str) -> Callable[[str], frozenset[str]]:
    def has(type_name: str) -> frozenset[str]:
        version = api_version.rpartition("/")[2]
        d = schema.definitions(minor).get(f"io.k8s.api.flowcontrol.{version}.{type_name}") or {}
        return frozenset(d.get("properties") or ())
    return has


def ensure(store: Any, minor: int) -> None:
    """Create the missing mandatory objects, when the minor serves flowcontrol."""
    info = store.kinds.get("FlowSchema")
    if info is None or not info.api_version.startswith("flowcontrol.apiserver.k8s.io/"):
        return
    for obj in mandatory(minor, info.api_version):
        if store.try_get(obj["kind"], None, obj["metadata"]["name"]) is not None:
            continue   # the ensurer leaves an existing one's spec unless it is auto-updated (podlife: always)
        try:
            store.create(obj, by=BY)
        except ApiError:
            continue

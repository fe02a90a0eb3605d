"""The local APIServices: one per built-in group version the API server serves, as kube-apiserver's
autoregister controller creates them at start (cmd/kube-apiserver/app/aggregator.go apiServicesToRegister,
makeAPIService; staging/src/k8s.io/kube-aggregator/pkg/controllers/autoregister: label automanaged=onstart,
created when missing and left to the user afterwards). The aggregator's own group (apiregistration.k8s.io) has
none: it is listed first in discovery without one (handler_apis.go)."""

from __future__ import annotations

from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj

BY = "kube-apiserver"
MANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"
# (group, version) -> (groupPriorityMinimum, versionPriority): apiVersionPriorities of
# cmd/kube-apiserver/app/aggregator.go (1.28) and pkg/controlplane/apiserver/aggregator.go
# DefaultGenericAPIServicePriorities (flowcontrol v1, 1.29+); only the versions podlife serves
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    # the beta versions served by default (podlife.versions.SERVED_BETAS): 1.28's table, and 1.21's for the
    # versions removed in 1.22
    ("autoscaling", "v2beta2"): (17500, 1),
    ("batch", "v1beta1"): (17400, 9),
    ("rbac.authorization.k8s.io", "v1beta1"): (17000, 12),
    ("storage.k8s.io", "v1beta1"): (16800, 9),
    ("scheduling.k8s.io", "v1beta1"): (16600, 12),
    ("coordination.k8s.io", "v1beta1"): (16500, 9),
    ("node.k8s.io", "v1beta1"): (16300, 9),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): (16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"): (16100, 12),
    # GA versions newer than the tables read: the group's priority there, the version above its betas' (resource
    # v1beta2 15, storagemigration v1beta1 9)
    ("resource.k8s.io", "v1"): (16200, 21),
    ("storagemigration.k8s.io", "v1"): (15800, 15),
}
# the crdRegistrationController's APIService for a custom resource group (pkg/controlplane/controller/
# crdregistration): groupPriorityMinimum 1000, versionPriority 100
CRD_GROUP_PRIORITY = 1000
LOCAL_CONDITION = {"type": "Available", "status": "True", "reason": "Local",
                   "message": "Local APIServices are always available"}   # helpers.go NewLocalAvailable…


def name_of(group: str, version: str) -> str:
    return f"{version}.{group}"


def group_priority(group: str) -> int:
    """The group's discovery rank: its highest groupPriorityMinimum (helper.SortedByGroupAndVersion)."""
    found = [g for (grp, _v), (g, _vp) in PRIORITIES.items() if grp == group]
    return max(found) if found else CRD_GROUP_PRIORITY


def local_apiservices(groups: dict[str, list[str]]) -> list[Obj]:
    """The APIServices of the served group versions that have a priority (makeAPIService skips the others)."""
    out = []
    for group, versions in groups.items():
        for version in versions:
            prio = PRIORITIES.get((group, version))
            if prio is None:
                continue
            out.append({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                        "metadata": {"name": name_of(group, version), "labels": {MANAGED_LABEL: "onstart"}},
                        "spec": {"group": group, "version": version, "groupPriorityMinimum": prio[0],
                                 "versionPriority": prio[1]}})
    return sorted(out, key=lambda o: o["metadata"]["name"])


def register(store: Any, groups: dict[str, list[str]], timestamp: str) -> None:
    """Create the missing ones, with the Local condition the available-condition controller gives them."""
    for obj in local_apiservices(groups):
        if store.try_get("APIService", None, obj["metadata"]["name"]) is not None:
            continue   # onstart: an existing one is the user's (a restart of a data directory keeps them)
        try:
            created = store.create(obj, by=BY)
            created = {**created, "status": {"conditions": [{**LOCAL_CONDITION, "lastTransitionTime": timestamp}]}}
            store.update(created, by=BY, subresource="status")
        except ApiError:
            continue

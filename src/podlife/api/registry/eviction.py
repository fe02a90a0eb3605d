"""The pod eviction subresource: pkg/registry/core/pod/storage/eviction.go (EvictionREST.Create).

An eviction deletes the pod unless a PodDisruptionBudget forbids it. Pods that are terminal, Pending or
already terminating skip the budget check (canIgnorePDB). A pod covered by more than one budget cannot be
evicted (500). A budget whose status is behind its generation, or that allows no disruption, answers 429
TooManyRequests; otherwise its disruptionsAllowed is decremented and the pod recorded in disruptedPods before
the delete. An unready pod is evicted without using the budget when the budget is already met (IfHealthyBudget)
or always (unhealthyPodEvictionPolicy AlwaysAllow). From 1.26 (PodDisruptionConditions) the pod first gets the
DisruptionTarget condition, reason EvictionByEvictionAPI.
"""

from __future__ import annotations

from typing import Any

from podlife.api import errors
from podlife.api.meta import Obj, clone, get_condition
from podlife.api.selectors import compiled
from podlife.versions import Profile

PDB_VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
MAX_DISRUPTED_PODS = 2000


def _ready(pod: Obj) -> bool:
    c = get_condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def matching_budgets(store: Any, pod: Obj) -> list[Obj]:
    """getPodDisruptionBudgets: budgets of the pod's namespace whose (non-empty) selector selects it."""
    labels = pod["metadata"].get("labels") or {}
    out = []
    for pdb in store.list("PodDisruptionBudget", pod["metadata"]["namespace"]):
        sel = (pdb.get("spec") or {}).get("selector")
        if not sel:
            continue   # an empty or missing selector selects nothing here (policy/v1 semantics aside)
        try:
            if compiled(sel).matches(labels):
                out.append(pdb)
        except ValueError:
            continue
    return out


DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"   # policy/v1 DisruptionBudgetCause


def too_many_requests(message: str, cause: str) -> errors.ApiError:
    """429 with the budget's DisruptionBudget cause in the Status's details (eviction.go: NewTooManyRequests
    then Details.Causes += {Type: DisruptionBudgetCause}); kubectl prints only the message."""
    return errors.ApiError(429, "TooManyRequests", message, [errors.FieldError("", DISRUPTION_BUDGET_CAUSE, cause)])


def evict(store: Any, namespace: str, name: str, by: str, grace: int | None, profile: Profile | None = None) -> None:
    """EvictionREST.Create; raises ApiError (404, 429, 500) as the API would answer. The request is traced as
    an ``api`` record with verb evict (and its outcome as the delete that follows); a refusal adds the
    Status's message (``error``), its HTTP ``code`` and, for a budget's 429, its ``causes``."""
    with store.trace.hold():
        rec = store.trace.emit("api", verb="evict", object=f"Pod/{namespace}/{name}", by=by)
        if grace is not None:
            rec["gracePeriodSeconds"] = grace
        try:
            _evict(store, namespace, name, by, grace, profile)
        except errors.ApiError as e:
            rec["error"] = e.message
            rec["code"] = e.code
            if e.code == 429:
                rec["causes"] = [{"type": c.type, "message": c.detail} for c in e.causes]
            raise


def _evict(store: Any, namespace: str, name: str, by: str, grace: int | None, profile: Profile | None) -> None:
    pod = store.get("Pod", namespace, name)
    status = pod.get("status") or {}
    ignore_budget = status.get("phase") in ("Succeeded", "Failed", "Pending") or \
        bool(pod["metadata"].get("deletionTimestamp"))
    if not ignore_budget:
        budgets = matching_budgets(store, pod)
        if len(budgets) > 1:
            raise errors.ApiError(500, "InternalError", MULTIPLE_PDBS)
        if budgets:
            _check_and_decrement(store, budgets[0], pod, by, profile)
    _delete(store, pod, by, grace, profile)


def _check_and_decrement(store: Any, pdb: Obj, pod: Obj, by: str, profile: Profile | None) -> None:
    spec, st = pdb.get("spec") or {}, pdb.get("status") or {}
    policy = spec.get("unhealthyPodEvictionPolicy", "IfHealthyBudget") \
        if profile is None or profile.pdb_unhealthy_pod_eviction_policy else "IfHealthyBudget"
    if not _ready(pod):
        if policy == "AlwaysAllow":
            return
        if st.get("currentHealthy", 0) >= st.get("desiredHealthy", 0) and st.get("desiredHealthy", 0) > 0:
            return   # the budget is met without this unready pod
    name = pdb["metadata"]["name"]
    if st.get("observedGeneration", 0) < pdb["metadata"].get("generation", 1):
        raise too_many_requests(PDB_VIOLATION, f"The disruption budget {name} is still being processed by the "
                                               "server.")
    allowed = st.get("disruptionsAllowed", 0)
    if allowed < 0:
        raise errors.ApiError(403, "Forbidden", "pdb disruptions allowed is negative")
    if len(st.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise errors.ApiError(403, "Forbidden", "DisruptedPods map too big - too many evictions not confirmed by "
                                                "PDB controller")
    if allowed == 0:
        raise too_many_requests(PDB_VIOLATION, f"The disruption budget {name} needs "
                                               f"{st.get('desiredHealthy', 0)} healthy pods and has "
                                               f"{st.get('currentHealthy', 0)} currently")
    new = clone(pdb)
    nst = new.setdefault("status", {})
    nst["disruptionsAllowed"] = allowed - 1
    nst.setdefault("disruptedPods", {})[pod["metadata"]["name"]] = store.trace.timestamp()
    store.update(new, by=by, subresource="status")


def _delete(store: Any, pod: Obj, by: str, grace: int | None, profile: Profile | None) -> None:
    from podlife.api.store import DeleteOptions

    md = pod["metadata"]
    if (profile is None or profile.disruption_target_condition) and not md.get("deletionTimestamp") and \
            (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"):
        new = clone(pod)
        conds = [c for c in new["status"].get("conditions") or () if c.get("type") != "DisruptionTarget"]
        conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": store.trace.timestamp(), "reason": "EvictionByEvictionAPI",
                      "message": "Eviction API: evicting"})
        new["status"]["conditions"] = conds
        store.update(new, by=by, subresource="status")
    store.delete("Pod", md["namespace"], md["name"], by=by,
                 options=DeleteOptions(grace_period_seconds=grace, uid=md["uid"]))

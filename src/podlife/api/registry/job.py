"""batch/v1 Job registry strategy: pkg/registry/batch/job/strategy.go.

On create the API server fills the UID before validation (rest.BeforeCreate FillObjectMetaSystemFields), and
the strategy generates the selector and the pod template labels from it unless spec.manualSelector is true
(generateSelector). From 1.27 (PR #114930) the labels are also set with the batch.kubernetes.io/ prefix and
the selector matches the prefixed controller-uid (versions rule ``job_prefixed_labels``, read from
the store's profile).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podlife.api import defaults
from podlife.api.meta import Obj
from podlife.api.meta import KINDS
from podlife.api.registry.generic import Strategy, drop_disabled_template_fields
from podlife.versions import Profile

if TYPE_CHECKING:
    from podlife.api.store import Store

LEGACY_UID_LABEL = "controller-uid"
LEGACY_NAME_LABEL = "job-name"
UID_LABEL = "batch.kubernetes.io/controller-uid"
NAME_LABEL = "batch.kubernetes.io/job-name"


def generate_selector(job: Obj, prefixed: bool) -> None:
    """strategy.go generateSelector: template labels and selector from the Job's UID and name."""
    md = job["metadata"]
    uid, name = md["uid"], md["name"]
    spec = job.setdefault("spec", {})
    tmpl = spec.setdefault("template", {})
    tmd = tmpl.setdefault("metadata", {})
    labels = tmd.get("labels")
    if not isinstance(labels, dict):
        labels = tmd["labels"] = {}
    if prefixed:
        labels.setdefault(UID_LABEL, uid)
        labels.setdefault(NAME_LABEL, name)
    # the legacy labels stay for compatibility (still set in 1.34)
    labels.setdefault(LEGACY_UID_LABEL, uid)
    labels.setdefault(LEGACY_NAME_LABEL, name)
    key = UID_LABEL if prefixed else LEGACY_UID_LABEL
    sel = spec.get("selector")
    if not isinstance(sel, dict):
        sel = spec["selector"] = {}
    ml = sel.get("matchLabels")
    if not isinstance(ml, dict):
        ml = sel["matchLabels"] = {}
    ml.setdefault(key, uid)


def drop_disabled_job_fields(spec: Obj, profile: Profile | None) -> list[str]:
    """dropDisabledFields (pkg/api/job): the Job fields whose feature gate is off in the version; returns their
    paths, for the user's warning."""
    if profile is None or not isinstance(spec, dict):
        return []
    dropped = []
    for field, on in (("ttlSecondsAfterFinished", profile.ttl_after_finished),
                      ("suspend", profile.job_suspend),
                      ("podFailurePolicy", profile.job_pod_failure_policy),
                      ("backoffLimitPerIndex", profile.job_backoff_limit_per_index),
                      ("maxFailedIndexes", profile.job_backoff_limit_per_index),
                      ("successPolicy", profile.job_success_policy),
                      ("podReplacementPolicy", profile.job_status_terminating)):
        if not on and field in spec:
            del spec[field]
            dropped.append(f"spec.{field}")
    if not profile.job_indexed and spec.get("completionMode") == "Indexed":
        del spec["completionMode"]
        dropped.append("spec.completionMode")
    return dropped


def drop_defaulted_job_fields(spec: Obj, profile: Profile | None) -> None:
    """SetDefaults_Job fills podReplacementPolicy only while JobPodReplacementPolicy is on (and
    dropDisabledFields removes a given one while it is off)."""
    if profile is not None and isinstance(spec, dict) and not profile.job_status_terminating:
        spec.pop("podReplacementPolicy", None)


class JobStrategy(Strategy):
    fills_uid = True

    def __init__(self) -> None:
        super().__init__(KINDS["Job"])

    def prepare_for_create(self, obj: Obj, store: Store) -> None:
        obj.setdefault("apiVersion", self.info.api_version)
        drop_disabled_job_fields(obj.get("spec") or {}, store.profile)
        defaults.apply_defaults(obj)
        drop_defaulted_job_fields(obj.get("spec") or {}, store.profile)
        drop_disabled_template_fields(obj, store.profile)
        obj["status"] = {}
        obj["metadata"]["uid"] = store._new_uid()
        if not (obj.get("spec") or {}).get("manualSelector"):
            generate_selector(obj, store.profile.job_prefixed_labels)

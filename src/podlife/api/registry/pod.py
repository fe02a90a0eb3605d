"""Pod strategy: pkg/registry/core/pod/strategy.go."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podlife.api import defaults, validation
from podlife.api.errors import FieldError
from podlife.api.meta import KINDS, Obj
from podlife.api.podutil import drop_disabled_pod_fields
from podlife.api.registry.generic import Strategy
from podlife.versions import NegativeGrace

if TYPE_CHECKING:
    from podlife.api.store import Store


class PodStrategy(Strategy):
    def __init__(self) -> None:
        super().__init__(KINDS["Pod"])

    def prepare_for_create(self, obj: Obj, store: Store) -> None:
        # podStrategy.PrepareForCreate: status reset to Pending with the QoS class
        obj.setdefault("apiVersion", "v1")
        defaults.apply_defaults(obj)
        # the mutating admission chain runs between defaulting and the strategy (podlife.api.admission);
        # the store is given its plugins (StoreOptions.admission)
        for plugin in store.admission:
            plugin.admit(obj)
        obj["status"] = {"phase": "Pending", "qosClass": defaults.compute_qos_class(obj)}
        if store.profile.pod_generation:
            obj["metadata"]["generation"] = 1   # KEP-5067: podStrategy.PrepareForCreate sets it
        else:
            obj["metadata"].pop("generation", None)
        drop_disabled_pod_fields(obj["spec"], store.profile)
        if obj["spec"].get("schedulingGates"):
            # applySchedulingGatedCondition
            obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False",
                                            "reason": "SchedulingGated",
                                            "message": "Scheduling is blocked due to non-empty scheduling gates",
                                            "lastProbeTime": None,
                                            "lastTransitionTime": store.trace.timestamp()}]

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return validation.validate_update(new, old)

    def check_graceful_delete(self, obj: Obj, grace: int | None, negative_grace: NegativeGrace) -> int | None:
        # podStrategy.CheckGracefulDelete
        if grace is None:
            grace = obj["spec"].get("terminationGracePeriodSeconds", 30)
        if not obj["spec"].get("nodeName"):
            grace = 0  # never scheduled: nothing to stop
        if obj.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            grace = 0  # already terminated
        if grace < 0 and negative_grace == "treated-as-one":
            grace = 1  # PR #115606
        return grace

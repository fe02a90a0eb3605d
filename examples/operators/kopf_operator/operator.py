"""The same policy as a Kopf operator: event handlers on nodes and Deployments (level-triggered, as policy.py
needs; Kopf applies the returned patch).

    kopf run --all-namespaces --standalone operator.py
"""

from __future__ import annotations

from typing import Any

import kopf
from policy import AUTO_ROLLBACK, deployment_patch, fenced_taints


@kopf.on.event("", "v1", "nodes")
def fence(body: kopf.Body, patch: kopf.Patch, logger: Any, **_: Any) -> None:
    taints = fenced_taints(dict(body))
    if taints is not None:
        patch.spec["taints"] = taints
        logger.info("fencing node %s (out-of-service)", body.metadata.name)


@kopf.on.event("apps", "v1", "deployments", annotations={AUTO_ROLLBACK: "true"})
def rollback(body: kopf.Body, patch: kopf.Patch, logger: Any, **_: Any) -> None:
    change = deployment_patch(dict(body))
    if change is None:
        return
    for section, fields in change.items():
        patch[section] = fields
    logger.info("%s deployment %s", "rolling back" if "spec" in change else "recording the image of",
                body.metadata.name)

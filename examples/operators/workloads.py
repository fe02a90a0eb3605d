"""The workloads the example suites run the operators against (plain dicts, as the official client accepts)."""

from __future__ import annotations

from typing import Any

from policy import AUTO_ROLLBACK


def statefulset(name: str = "web", replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}}


def deployment(name: str = "api", image: str = "registry.example/api:v1", replicas: int = 3,
               deadline: int = 120) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "annotations": {AUTO_ROLLBACK: "true"}},
            "spec": {"replicas": replicas, "progressDeadlineSeconds": deadline, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": image}]}}}}

"""A plain controller with the official Kubernetes client: a resync loop that lists the nodes and Deployments
and applies policy.py to each (level-triggered, so a missed or cut-off watch loses nothing).

    python controller.py        # against $KUBECONFIG, until Ctrl-C
"""

from __future__ import annotations

import threading
from typing import Any

from kubernetes import client, config
from urllib3.exceptions import HTTPError
from policy import deployment_patch, fenced_taints


class Controller:
    def __init__(self, api: client.ApiClient) -> None:
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.actions: list[str] = []   # what it did, for logs and tests

    def reconcile(self) -> None:
        for node in self.core.list_node().to_dict()["items"]:
            taints = fenced_taints(_as_api(node))
            if taints is not None:
                self.core.patch_node(node["metadata"]["name"], {"spec": {"taints": taints}})
                self.actions.append(f"fenced node/{node['metadata']['name']}")
        for d in self.apps.list_deployment_for_all_namespaces().items:
            obj = client.ApiClient().sanitize_for_serialization(d)   # the API's field names
            patch = deployment_patch(obj)
            if patch is not None:
                self.apps.patch_namespaced_deployment(d.metadata.name, d.metadata.namespace, patch)
                what = "rolled back" if "spec" in patch else "recorded the image of"
                self.actions.append(f"{what} deployment/{d.metadata.name}")

    def run(self, stop: threading.Event, period: float = 0.05) -> None:
        while not stop.is_set():
            try:
                self.reconcile()
            except (client.ApiException, HTTPError, OSError) as e:   # the API server restarting: the next resync
                self.actions.append(f"error: {type(e).__name__}")  # tries again
            stop.wait(period)


def _as_api(obj: dict[str, Any]) -> dict[str, Any]:
    """to_dict() writes the python attribute names; the policy reads the taints' key and effect, the same in
    both."""
    return obj


if __name__ == "__main__":
    config.load_kube_config()
    stop = threading.Event()
    try:
        Controller(client.ApiClient()).run(stop, period=2.0)
    except KeyboardInterrupt:
        stop.set()

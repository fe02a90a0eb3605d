"""managedFields of the model's own writes: the controllers, the scheduler and the kubelets write under their
binaries' names (the first part of their user agents), as a real cluster shows with
``kubectl get -o yaml --show-managed-fields``, and a server-side apply that takes a controller's field conflicts."""

from __future__ import annotations

import json

from tests.live.conftest import Live


def _entries(live: Live, *what: str) -> list[tuple[str, str, str | None, dict]]:
    obj = json.loads(live.kubectl("get", *what, "-o", "json", "--show-managed-fields").stdout)
    return [(m["manager"], m["operation"], m.get("subresource"), m["fieldsV1"])
            for m in obj["metadata"].get("managedFields") or ()]


def test_the_model_writes_under_its_components_names(live_factory, tmp_path) -> None:
    live: Live = live_factory("1.32", clock="manual")
    live.kubectl("create", "deployment", "web", "--image=nginx:1.27")
    live.advance("5s")
    pod = json.loads(live.kubectl("get", "pods", "-l", "app=web", "-o", "json").stdout)["items"][0]
    name = pod["metadata"]["name"]
    entries = _entries(live, "pod", name)
    # the ReplicaSet controller created it (kube-controller-manager, Update), the kubelet wrote its status; the
    # binding leaves no entry (pods/binding writes storage directly: pkg/registry/core/pod/storage assignPod)
    assert [(m, op, sub) for m, op, sub, _ in entries] == [("kube-controller-manager", "Update", None),
                                                          ("kubelet", "Update", "status")]
    kcm, kubelet = entries[0][3], entries[1][3]
    assert set(kcm["f:metadata"]) == {"f:generateName", "f:labels", "f:ownerReferences"}
    assert "f:nodeName" not in kcm["f:spec"]
    assert set(kubelet) == {"f:status"}
    assert {"f:phase", "f:podIP", "f:containerStatuses"} <= set(kubelet["f:status"])

    # the Deployment: kubectl create's entry and the deployment controller's status
    assert [(m, op, sub) for m, op, sub, _ in _entries(live, "deployment", "web")] == \
        [("kubectl-create", "Update", None), ("kube-controller-manager", "Update", "status")]
    # a Node: its kubelet registered it
    assert [m for m, *_ in _entries(live, "node", "node-1")] == ["kubelet"]

    # a server-side apply of a field the controller set conflicts with it, in kubectl's words
    manifest = json.dumps({"apiVersion": "v1", "kind": "Pod",
                           "metadata": {"name": name, "labels": {"pod-template-hash": "other"}}})
    p = live.kubectl("apply", "--server-side", "-f", "-", input=manifest, check=False)
    assert p.returncode == 1
    assert p.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kube-controller-manager" '
                               "using v1: .metadata.labels.pod-template-hash")

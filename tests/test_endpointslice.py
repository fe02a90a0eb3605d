"""EndpointSlice and Endpoints controllers end to end (pkg/controller/endpointslice,
staging/src/k8s.io/endpointslice, pkg/controller/endpoint).

One pod behind a Service (port 80 → targetPort 8080), preStop `sleep 5`, an app that exits 0.5 s after SIGTERM,
deleted at t=10 s. Timing facts of the model: the container starts at 1.0 (startSeconds) and the pod turns
Ready at the next PLEG relist, 2.0; the delete at 10.0 sets deletionTimestamp and starts the preStop hook at
once; the hook ends at 15.0, SIGTERM then, the app exits at 15.5 and the kubelet writes Ready=False (1.27+:
phase Succeeded) at 15.5; the pod is removed at the next relist, 16.0 (1.27+), or when the kubelet's status
manager gets to it (20.0 before 1.27 in this model).

podToEndpoint (utils.go): serving = Ready; terminating = deletionTimestamp set; ready = serving and not
terminating. ShouldPodBeInEndpoints: terminal pods and pods without an IP are out; terminating ones too
unless the terminating condition is on (KEP-1672 beta, 1.22).
"""

from __future__ import annotations

import re

import pytest

from podlife.controlplane.controllers.endpointslice import (
    find_port,
    pod_endpoints_changed,
    repack_subsets,
    should_pod_be_in_endpoints,
)
from tests.helpers import records, run_text

SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: eps}
spec:
  kubernetesVersion: "VERSION"
  objects:
    - apiVersion: v1
      kind: Service
      metadata: {name: web, labels: {tier: front}}
      spec:
        selector: {app: web}
        ports: [{name: http, port: 80, targetPort: 8080}]
    - apiVersion: v1
      kind: Pod
      metadata:
        name: web
        labels: {app: web}
        annotations:
          podlife/behavior: |
            app: {startSeconds: 1, termSeconds: 0.5}
      spec:
        containers:
          - name: app
            image: nginx:1.27
            lifecycle:
              preStop: {exec: {command: ["sleep", "5"]}}
  actions:
    - at: 10s
      delete: pod/web
  until: 30s
"""


def _run(tmp_path, version: str):
    return run_text(tmp_path, SCENARIO.replace("VERSION", version))


def _writes(result, kind: str) -> list[tuple[float, str, dict]]:
    """(time, verb, object as written) for each write of a kind: the api records in order, paired with the
    store's watch history (one entry per write). The API server's own default/kubernetes objects are left out."""
    recs = [r for r in records(result, "api") if r["object"].startswith(f"{kind}/") and r["by"] != "kube-apiserver"]
    hist = [h.obj for h in result.cluster.store._history if h.kind == kind
            and (h.obj["metadata"].get("namespace"), h.obj["metadata"]["name"]) != ("default", "kubernetes")]
    assert len(recs) == len(hist)
    return [(r["t"], r["verb"], h) for r, h in zip(recs, hist)]


def _conds(slice_: dict) -> list[dict]:
    return [ep["conditions"] for ep in slice_["endpoints"]]


def test_slice_shape(tmp_path):
    r = _run(tmp_path, "1.34")
    writes = _writes(r, "EndpointSlice")
    t, verb, s = writes[0]
    # created with the service at t=0: the pod has no IP yet, so a placeholder (no endpoints, no ports)
    assert (t, verb) == (0.0, "create")
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", s["metadata"]["name"])
    assert s["metadata"]["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                                       "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    svc = r.cluster.store.get("Service", "default", "web")
    assert s["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web",
                                                 "uid": svc["metadata"]["uid"], "controller": True,
                                                 "blockOwnerDeletion": True}]
    assert (s["apiVersion"], s["addressType"], s["endpoints"], s["ports"]) == \
        ("discovery.k8s.io/v1", "IPv4", [], [])
    # every later write updates the same slice (the placeholder is reused, finalize turns create+delete
    # into an update)
    assert {w[2]["metadata"]["name"] for w in writes} == {s["metadata"]["name"]}
    assert [v for _, v, _ in writes[1:]] == ["update"] * (len(writes) - 1)
    ready = writes[1][2]
    pod = [h.obj for h in r.cluster.store._history if h.kind == "Pod"][-1]
    assert ready["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    assert ready["endpoints"] == [{
        "addresses": [pod["status"]["podIP"]],
        "conditions": {"ready": True, "serving": True, "terminating": False},
        "targetRef": {"kind": "Pod", "namespace": "default", "name": "web", "uid": pod["metadata"]["uid"]},
        "nodeName": "node-1"}]


def test_terminating_endpoint_while_prestop_runs(tmp_path):
    r = _run(tmp_path, "1.34")
    writes = [(t, _conds(s)) for t, _, s in _writes(r, "EndpointSlice")]
    assert writes == [
        (0.0, []),                                                              # placeholder, no pod IP
        (2.0, [{"ready": True, "serving": True, "terminating": False}]),        # pod Ready
        (10.0, [{"ready": False, "serving": True, "terminating": True}]),       # deleted: preStop running
        (15.5, []),                                                             # app exited: terminal pod
    ]
    hooks = [(h["t"], h["phase"]) for h in records(r, "hook")]
    assert hooks == [(10.0, "started"), (15.0, "completed")]
    assert [x["t"] for x in records(r, "deleted", object="Pod/default/web")] == [16.0]
    # the legacy Endpoints drops the terminating pod at once (publishNotReadyAddresses is false)
    eps = [(t, s.get("subsets")) for t, _, s in _writes(r, "Endpoints")]
    assert [t for t, _ in eps] == [0.0, 2.0, 10.0]
    assert eps[0][1] is None and eps[2][1] is None
    assert eps[1][1][0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert [a["targetRef"]["name"] for a in eps[1][1][0]["addresses"]] == ["web"]


def test_serving_follows_readiness_while_terminating(tmp_path):
    # 1.26: no terminal phase before removal; the app exits at 15.5 and the pod turns not Ready: the
    # terminating endpoint stays, serving=false, until the pod is removed
    r = _run(tmp_path, "1.26")
    writes = [(t, _conds(s)) for t, _, s in _writes(r, "EndpointSlice")]
    gone = records(r, "deleted", object="Pod/default/web")[0]["t"]
    assert writes == [
        (0.0, []),
        (2.0, [{"ready": True, "serving": True, "terminating": False}]),
        (10.0, [{"ready": False, "serving": True, "terminating": True}]),
        (15.5, [{"ready": False, "serving": False, "terminating": True}]),
        (gone, []),
    ]


@pytest.mark.parametrize("version,api", [("1.21", "v1"), ("1.18", "v1beta1")])
def test_before_terminating_condition_endpoint_removed_at_deletion(tmp_path, version, api):
    r = _run(tmp_path, version)
    writes = [(t, _conds(s)) for t, _, s in _writes(r, "EndpointSlice")]
    assert writes == [(0.0, []), (2.0, [{"ready": True}]), (10.0, [])]
    ready = _writes(r, "EndpointSlice")[1][2]
    assert ready["apiVersion"] == f"discovery.k8s.io/{api}"
    ep = ready["endpoints"][0]
    if api == "v1beta1":
        assert ep["topology"] == {"kubernetes.io/hostname": "node-1"} and "nodeName" not in ep
    else:
        assert ep["nodeName"] == "node-1" and "topology" not in ep


def test_not_ready_pod_is_a_not_ready_address(tmp_path):
    text = SCENARIO.replace("VERSION", "1.34").replace(
        "            image: nginx:1.27\n",
        "            image: nginx:1.27\n            readinessProbe: {exec: {command: [\"false\"]}}\n").replace(
        "app: {startSeconds: 1, termSeconds: 0.5}", "app: {startSeconds: 1, termSeconds: 0.5, readySeconds: 600}")
    r = run_text(tmp_path, text)
    eps = [(t, s.get("subsets")) for t, _, s in _writes(r, "Endpoints")]
    # the pod gets its IP at 2.0 and never passes its readiness probe (readySeconds 600; the probe the status
    # at 2.0 triggers fails, so do the ticks): a not-ready address
    assert eps[1][1][0]["notReadyAddresses"][0]["targetRef"]["name"] == "web"
    assert "addresses" not in eps[1][1][0]
    slices = [(t, _conds(s)) for t, _, s in _writes(r, "EndpointSlice")]
    assert slices[1] == (2.0, [{"ready": False, "serving": False, "terminating": False}])
    assert slices[2] == (10.0, [{"ready": False, "serving": False, "terminating": True}])
    assert slices[-1][1] == []


def test_service_deleted_removes_endpoints_and_slices(tmp_path):
    text = SCENARIO.replace("VERSION", "1.34").replace("      delete: pod/web", "      delete: service/web")
    r = run_text(tmp_path, text)
    assert [x["t"] for x in records(r, "deleted", object="Endpoints/default/web")] == [10.0]
    gone = [x for x in records(r, "deleted") if x["object"].startswith("EndpointSlice/")]
    assert len(gone) == 1 and gone[0]["t"] == 10.0  # the garbage collector, through the ownerReference
    # only the API server's own slice is left
    assert [s["metadata"]["name"] for s in r.cluster.store.list("EndpointSlice")] == ["kubernetes"]


def test_repack_subsets_groups_ports_and_sorts_addresses():
    a = {"ip": "10.0.0.2", "targetRef": {"uid": "b"}}
    b = {"ip": "10.0.0.1", "targetRef": {"uid": "a"}}
    p80, p90 = {"name": "a", "port": 80, "protocol": "TCP"}, {"name": "b", "port": 90, "protocol": "TCP"}
    out = repack_subsets([(a, True, p80), (a, True, p90), (b, True, p80), (b, False, p90)])
    assert out == [{"addresses": [b, a], "ports": [p80]},
                   {"addresses": [a], "notReadyAddresses": [b], "ports": [p90]}]


def _pod(**kw) -> dict:
    pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u", "labels": {"app": "web"},
                        "resourceVersion": "1"},
           "spec": {"containers": [{"name": "app", "ports": [{"name": "http", "containerPort": 8080},
                                                             {"name": "dns", "containerPort": 53,
                                                              "protocol": "UDP"}]}]},
           "status": {"phase": "Running", "podIP": "10.244.1.2", "podIPs": [{"ip": "10.244.1.2"}],
                      "conditions": [{"type": "Ready", "status": "True"}]}}
    for k, v in kw.items():
        pod[k].update(v)
    return pod


def test_find_port_resolves_named_target_ports_by_protocol():
    pod = _pod()
    assert find_port(pod, {"port": 80, "targetPort": "http", "protocol": "TCP"}) == 8080
    assert find_port(pod, {"port": 53, "targetPort": "dns", "protocol": "UDP"}) == 53
    assert find_port(pod, {"port": 53, "targetPort": "dns", "protocol": "TCP"}) is None
    assert find_port(pod, {"port": 80, "targetPort": 9090}) == 9090
    assert find_port(pod, {"port": 80}) == 80


def test_should_pod_be_in_endpoints():
    assert should_pod_be_in_endpoints(_pod(), False)
    assert not should_pod_be_in_endpoints(_pod(status={"phase": "Succeeded"}), True)
    assert not should_pod_be_in_endpoints(_pod(status={"podIP": "", "podIPs": []}), True)
    deleting = _pod(metadata={"deletionTimestamp": "2025-01-01T00:00:10Z"})
    assert should_pod_be_in_endpoints(deleting, True) and not should_pod_be_in_endpoints(deleting, False)


def test_pod_endpoints_changed():
    old = _pod()
    assert pod_endpoints_changed(old, _pod(metadata={"resourceVersion": "2"})) == (False, False)
    assert pod_endpoints_changed(old, _pod(status={"conditions": []})) == (True, False)
    assert pod_endpoints_changed(old, _pod(metadata={"labels": {"app": "x"}})) == (False, True)
    # the Go pointer comparison: any update of a terminating pod counts as a change
    d = {"deletionTimestamp": "2025-01-01T00:00:10Z"}
    assert pod_endpoints_changed(_pod(metadata=d), _pod(metadata=d)) == (True, False)

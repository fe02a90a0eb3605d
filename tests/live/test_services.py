"""Services, their IPs and endpoints, the API server's own Service, and the objects every namespace gets, through
the real clients against ``podlife up``: what test/e2e/network/endpointslice.go and service.go, and the
conformance suite's namespace setup (it waits for the "default" ServiceAccount), check."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from tests.live.conftest import Live, _require_kubectl, rows

kubernetes = pytest.importorskip("kubernetes")


def _client(live: Live):
    from kubernetes import config

    return config.new_client_from_config(live.kubeconfig)


def test_every_namespace_gets_its_default_service_account_and_root_ca(live: Live) -> None:
    from kubernetes import client

    v1 = client.CoreV1Api(_client(live))
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert v1.read_namespaced_service_account("default", ns).metadata.name == "default"
        cm = v1.read_namespaced_config_map("kube-root-ca.crt", ns)
        assert cm.data["ca.crt"].startswith("-----BEGIN CERTIFICATE-----\n")
        assert cm.metadata.annotations["kubernetes.io/description"].startswith("Contains a CA bundle")
    v1.create_namespace({"metadata": {"name": "svc-e2e"}})
    live.wait_for("the default ServiceAccount", lambda: v1.list_namespaced_service_account("svc-e2e").items)
    assert [sa.metadata.name for sa in v1.list_namespaced_service_account("svc-e2e").items] == ["default"]
    assert "kube-root-ca.crt" in rows(live.kubectl("get", "configmaps", "-n", "svc-e2e").stdout)
    # deleted, it comes back (serviceaccounts_controller.go serviceAccountDeleted; publisher.go configMapDeleted)
    live.kubectl("delete", "serviceaccount", "default", "-n", "svc-e2e")
    live.kubectl("delete", "configmap", "kube-root-ca.crt", "-n", "svc-e2e")
    live.wait_for("the account again", lambda: "default" in rows(live.kubectl("get", "sa", "-n", "svc-e2e").stdout))
    live.wait_for("the CA again", lambda: "kube-root-ca.crt" in rows(live.kubectl("get", "cm", "-n", "svc-e2e").stdout))
    # a pod without serviceAccountName runs as "default" (ServiceAccount admission)
    pod = v1.create_namespaced_pod("svc-e2e", {"metadata": {"name": "p"},
                                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert pod.spec.service_account_name == "default"


def test_endpoints_and_endpointslices_point_to_the_api_server(live: Live) -> None:
    """endpointslice.go "should have Endpoints and EndpointSlices pointing to API Server"."""
    from kubernetes import client

    api = _client(live)
    v1, disc = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    svc = v1.read_namespaced_service("kubernetes", "default")
    assert (svc.spec.cluster_ip, svc.spec.cluster_ips, svc.spec.ip_families, svc.spec.ip_family_policy) == \
        ("10.96.0.1", ["10.96.0.1"], ["IPv4"], "SingleStack")
    assert [(p.name, p.port, p.protocol, p.target_port) for p in svc.spec.ports] == [("https", 443, "TCP", 6443)]
    assert svc.metadata.labels == {"component": "apiserver", "provider": "kubernetes"}
    assert svc.spec.selector is None
    eps = v1.read_namespaced_endpoints("kubernetes", "default")
    assert len(eps.subsets) == 1
    # served on 127.0.0.1, which Endpoints may not hold: podlife's fixed control-plane address
    assert [a.ip for a in eps.subsets[0].addresses] == ["10.0.0.2"]
    assert [(p.name, p.port, p.protocol) for p in eps.subsets[0].ports] == [("https", 6443, "TCP")]
    assert eps.metadata.labels == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    eps_slice = disc.read_namespaced_endpoint_slice("kubernetes", "default")
    assert len(eps_slice.endpoints) == len(eps.subsets[0].addresses) == 1
    assert eps_slice.metadata.labels == {"kubernetes.io/service-name": "kubernetes"}
    assert eps_slice.address_type == "IPv4"
    assert eps_slice.endpoints[0].addresses == ["10.0.0.2"] and eps_slice.endpoints[0].conditions.ready is True
    assert [(p.name, p.port, p.protocol) for p in eps_slice.ports] == [("https", 6443, "TCP")]
    # the newer form of the test (endpointSlicesEqual): the slices listed by service-name hold the same addresses
    # and ports as the Endpoints
    listed = disc.list_namespaced_endpoint_slice("default", label_selector="kubernetes.io/service-name=kubernetes")
    assert [s.metadata.name for s in listed.items] == ["kubernetes"]
    out = rows(live.kubectl("get", "svc", "kubernetes", "-n", "default").stdout)
    assert out["kubernetes"][:4] == ["ClusterIP", "10.96.0.1", "<none>", "443/TCP"]


def test_services_get_cluster_ips_and_node_ports(live: Live) -> None:
    from kubernetes import client

    v1 = client.CoreV1Api(_client(live))
    rng = ipaddress.ip_network("10.96.0.0/12")

    def create(name: str, **spec):
        spec.setdefault("ports", [{"name": "http", "port": 80}])
        return v1.create_namespaced_service("default", {"metadata": {"name": name}, "spec": spec})

    a = create("alloc-a", selector={"app": "a"})
    ip = ipaddress.ip_address(a.spec.cluster_ip)
    # a dynamic IP comes from the upper band: offsets 256 and up of the range (KEP-3070)
    assert ip in rng and int(ip) - int(rng.network_address) - 1 >= 256
    assert (a.spec.cluster_ips, a.spec.ip_families, a.spec.ip_family_policy) == ([a.spec.cluster_ip], ["IPv4"],
                                                                                   "SingleStack")
    np = create("alloc-np", type="NodePort", selector={"app": "a"},
                ports=[{"name": "http", "port": 80}, {"name": "https", "port": 443}])
    ports = [p.node_port for p in np.spec.ports]
    # upper band of 30000-32767 first: offsets 86 and up (KEP-3668)
    assert len(set(ports)) == 2 and all(30086 <= p <= 32767 for p in ports)
    headless = create("alloc-headless", cluster_ip="None", selector={"app": "a"})
    assert (headless.spec.cluster_ip, headless.spec.cluster_ips, headless.spec.ip_families) == \
        ("None", ["None"], ["IPv4"])
    ext = v1.create_namespaced_service("default", {"metadata": {"name": "alloc-ext"},
                                                   "spec": {"type": "ExternalName", "externalName": "example.com"}})
    assert ext.spec.cluster_ip is None and ext.spec.cluster_ips is None and ext.spec.ip_families is None
    # a requested IP that is taken, or out of the range: 422 (alloc.go allocIPs)
    for want, why in ((a.spec.cluster_ip, "provided IP is already allocated"),
                      ("10.0.0.7", "the provided IP (10.0.0.7) is not in the valid range. The range of valid IPs is "
                                   "10.96.0.0/12")):
        with pytest.raises(client.ApiException) as e:
            create("alloc-clash", cluster_ip=want)
        assert e.value.status == 422
        body = json.loads(e.value.body)
        assert body["message"] == (f'Service "alloc-clash" is invalid: spec.clusterIPs: Invalid value: '
                                   f'[]string{{"{want}"}}: failed to allocate IP {want}: {why}')
        assert body["details"]["causes"][0]["field"] == "spec.clusterIPs"
    with pytest.raises(client.ApiException) as e:
        create("alloc-clash", type="NodePort", ports=[{"name": "x", "port": 80, "nodePort": ports[0]}])
    assert e.value.status == 422
    assert json.loads(e.value.body)["message"] == (f'Service "alloc-clash" is invalid: spec.ports[0].nodePort: '
                                                    f"Invalid value: {ports[0]}: provided port is already allocated")
    # a requested free IP is given; deleted, it is free again
    fixed = create("alloc-fixed", cluster_ip="10.96.0.10")
    assert fixed.spec.cluster_ips == ["10.96.0.10"]
    v1.delete_namespaced_service("alloc-fixed", "default")
    assert create("alloc-fixed", cluster_ip="10.96.0.10").spec.cluster_ip == "10.96.0.10"
    # kubectl shows them
    table = rows(live.kubectl("get", "svc", "-n", "default").stdout)
    assert table["alloc-a"][:2] == ["ClusterIP", a.spec.cluster_ip]
    assert table["alloc-np"][:4] == ["NodePort", np.spec.cluster_ip, "<none>", f"80:{ports[0]}/TCP,443:{ports[1]}/TCP"]
    assert table["alloc-headless"][1] == "None"


def test_endpoints_and_slices_for_a_service_with_a_selector(live: Live) -> None:
    """endpointslice.go "should create and delete Endpoints and EndpointSlices for a Service with a selector
    specified"."""
    from kubernetes import client

    api = _client(live)
    v1, disc = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    svc = v1.create_namespaced_service("default", {
        "metadata": {"name": "example-empty-selector"},
        "spec": {"selector": {"does-not-match-anything": "endpoints-and-endpoint-slices-should-still-be-created"},
                 "ports": [{"name": "example", "port": 80, "protocol": "TCP"}]}})
    live.wait_for("the Endpoints", lambda: v1.list_namespaced_endpoints(
        "default", field_selector=f"metadata.name={svc.metadata.name}").items)
    selector = f"kubernetes.io/service-name={svc.metadata.name}"
    slices = live.wait_for("the EndpointSlice", lambda: disc.list_namespaced_endpoint_slice(
        "default", label_selector=selector).items)
    assert slices[0].metadata.labels["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    assert not slices[0].endpoints
    v1.delete_namespaced_service(svc.metadata.name, "default")
    live.wait_for("the Endpoints to go", lambda: not v1.list_namespaced_endpoints(
        "default", field_selector=f"metadata.name={svc.metadata.name}").items)
    live.wait_for("the slices to go", lambda: not disc.list_namespaced_endpoint_slice(
        "default", label_selector=selector).items)


def test_unset_unschedulable_matches_false(live: Live) -> None:
    """NodeToSelectableFields: fmt.Sprint of spec.unschedulable, "false" when unset. (Read raw: the typed
    V1Node needs nodeInfo fields podlife does not fill yet.)"""
    from kubernetes import client

    v1 = client.CoreV1Api(_client(live))

    def names(**kw) -> list[str]:
        raw = v1.list_node(_preload_content=False, **kw)
        return sorted(n["metadata"]["name"] for n in json.loads(raw.data)["items"])
    everyone = names()
    assert everyone
    assert names(field_selector="spec.unschedulable=false") == everyone
    assert names(field_selector="spec.unschedulable=true") == []
    assert names(field_selector="spec.unschedulable!=true") == everyone
    live.kubectl("cordon", everyone[0])
    assert names(field_selector="spec.unschedulable=true") == everyone[:1]
    assert names(field_selector="spec.unschedulable=false") == everyone[1:]
    live.kubectl("uncordon", everyone[0])


def test_allocations_survive_a_restart(tmp_path: Path) -> None:
    """The allocators are rebuilt from the stored Services (repair.go): an IP and a node port taken before a
    restart are still taken after it."""
    _require_kubectl()
    from kubernetes import client

    live = Live(tmp_path, "1.32", clock="manual")
    try:
        v1 = client.CoreV1Api(_client(live))
        svc = v1.create_namespaced_service("default", {"metadata": {"name": "kept"}, "spec": {
            "type": "NodePort", "selector": {"a": "b"}, "ports": [{"port": 80}]}})
    finally:
        live.stop()
    (tmp_path / "kubeconfig").unlink()
    live = Live(tmp_path, "1.32", clock="manual")
    try:
        v1 = client.CoreV1Api(_client(live))
        for spec, field in (({"clusterIP": svc.spec.cluster_ip, "ports": [{"port": 80}]}, "spec.clusterIPs"),
                            ({"type": "NodePort", "ports": [{"port": 80, "nodePort": svc.spec.ports[0].node_port}]},
                             "spec.ports[0].nodePort")):
            with pytest.raises(client.ApiException) as e:
                v1.create_namespaced_service("default", {"metadata": {"name": "again"}, "spec": spec})
            assert e.value.status == 422
            assert json.loads(e.value.body)["details"]["causes"][0]["field"] == field
        assert v1.read_namespaced_service("kubernetes", "default").spec.cluster_ip == "10.96.0.1"
    finally:
        live.stop()


def test_endpoints_and_slices_for_pods_matching_a_service(live: Live) -> None:
    """endpointslice.go "should create Endpoints and EndpointSlices for Pods matching a Service", with the checks
    of its expectEndpointsAndSlices: counts, ports (a number targetPort as the Service's, a named one as each
    pod's container port), targetRefs, and a deleted slice recreated."""
    from kubernetes import client

    api = _client(live)
    v1, disc = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    ns = "eps-e2e"
    v1.create_namespace({"metadata": {"name": ns}})
    live.wait_for("the default ServiceAccount", lambda: v1.list_namespaced_service_account(ns).items)

    def pod(name: str, labels: dict, ports: list) -> None:
        v1.create_namespaced_pod(ns, {"metadata": {"name": name, "labels": labels}, "spec": {
            "containers": [{"name": "container1", "image": "nginx", "ports": ports}]}})
    pod("pod1", {"pod1": "on", "shared12": "on"}, [{"name": "example-name", "containerPort": 3000}])
    pod("pod2", {"pod2": "on", "shared12": "on"}, [{"name": "example-name", "containerPort": 3001},
                                                   {"name": "other-port", "containerPort": 3002}])

    def svc(name: str, selector: dict, port: dict) -> None:
        v1.create_namespaced_service(ns, {"metadata": {"name": name}, "spec": {
            "selector": selector, "publishNotReadyAddresses": True, "ports": [{"port": 80, "protocol": "TCP",
                                                                               **port}]}})
    svc("example-int-port", {"pod1": "on"}, {"name": "example", "targetPort": 3000})
    svc("example-named-port", {"shared12": "on"}, {"name": "http", "targetPort": "example-name"})
    svc("example-no-match", {"pod3": "on"}, {"name": "example-no-match", "targetPort": 8080})
    pods = live.wait_for("the pods' IPs", lambda: (lambda ps: ps if all(p.status.pod_ip for p in ps) else None)(
        [v1.read_namespaced_pod(n, ns) for n in ("pod1", "pod2")]))
    by_ip = {p.status.pod_ip: p for p in pods}
    container_port = {"pod1": 3000, "pod2": 3001}

    def check(name: str, members: list[str], subsets: int) -> None:
        selector = f"kubernetes.io/service-name={name}"
        def listed() -> list | None:
            items = disc.list_namespaced_endpoint_slice(ns, label_selector=selector).items
            return items if items and sum(len(s.endpoints or ()) for s in items) >= len(members) else None
        slices = live.wait_for(f"{name}'s slices", listed)
        eps = live.wait_for(f"{name}'s Endpoints", lambda: (lambda e: e if len(e.subsets or ()) == subsets and sum(
            len(s.addresses or ()) + len(s.not_ready_addresses or ()) for s in e.subsets or ()) == len(members)
            else None)(v1.read_namespaced_endpoints(name, ns)))
        svc_port = v1.read_namespaced_service(name, ns).spec.ports[0]
        named = isinstance(svc_port.target_port, str)
        for s in slices:
            assert s.metadata.labels["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
            assert s.address_type == "IPv4"
            if not members:
                assert not s.ports and not s.endpoints
                continue
            assert len(s.ports) == 1 and (s.ports[0].name, s.ports[0].protocol) == (svc_port.name, "TCP")
            for ep in s.endpoints:
                p = by_ip[ep.addresses[0]]
                ref = ep.target_ref
                assert (ref.kind, ref.namespace, ref.name, ref.uid) == ("Pod", ns, p.metadata.name, p.metadata.uid)
                assert ep.node_name == p.spec.node_name
                assert ep.conditions.ready is True   # publishNotReadyAddresses
                assert s.ports[0].port == (container_port[p.metadata.name] if named else 3000)
        assert sorted(by_ip[ep.addresses[0]].metadata.name for s in slices for ep in s.endpoints or ()) == members
        for subset in eps.subsets or ():
            assert [(x.name, x.protocol) for x in subset.ports] == [(svc_port.name, "TCP")]
            for a in (subset.addresses or []) + (subset.not_ready_addresses or []):
                p = by_ip[a.ip]
                assert (a.target_ref.kind, a.target_ref.name, a.target_ref.uid) == ("Pod", p.metadata.name,
                                                                                   p.metadata.uid)
                assert subset.ports[0].port == (container_port[p.metadata.name] if named else 3000)
        if not members:
            assert len(slices) == 1 and not eps.subsets

    check("example-int-port", ["pod1"], 1)
    check("example-named-port", ["pod1", "pod2"], 2)   # one subset per distinct port
    check("example-no-match", [], 0)
    named = disc.list_namespaced_endpoint_slice(ns, label_selector="kubernetes.io/service-name=example-named-port")
    for s in named.items:
        disc.delete_namespaced_endpoint_slice(s.metadata.name, ns)
    check("example-named-port", ["pod1", "pod2"], 2)


def test_conformance_type_change_and_mirroring_on_1_28(live_factory) -> None:
    """Two conformance tests' API steps through the Python client on 1.28: "should be able to change the type
    from NodePort to ExternalName" (the jig's get-modify-update; refused before with 'spec.externalTrafficPolicy:
    Invalid value: "Cluster"') and "should mirror a custom Endpoints resource through create update and delete"
    (endpointslicemirroring.go: polled every 2 s for 12 s; here the realtime clock is the server's)."""
    from kubernetes import client

    live = live_factory("1.28")
    api = _client(live)
    v1, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    v1.create_namespaced_service("default", {"metadata": {"name": "nodeport-service"}, "spec": {
        "type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": 80, "protocol": "TCP"}]}})
    svc = v1.read_namespaced_service("nodeport-service", "default")
    svc.spec.type = "ExternalName"
    svc.spec.external_name = "externalsvc.default.svc.cluster.local"
    got = v1.replace_namespaced_service("nodeport-service", "default", svc)
    assert got.spec.cluster_ip is None and got.spec.external_traffic_policy is None
    assert [p.node_port for p in got.spec.ports] == [None]

    v1.create_namespaced_service("default", {"metadata": {"name": "example-custom-endpoints"}, "spec": {
        "ports": [{"name": "example", "port": 80, "protocol": "TCP"}]}})
    endpoints = {"metadata": {"name": "example-custom-endpoints"},
                 "subsets": [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}]}
    v1.create_namespaced_endpoints("default", endpoints)

    def mirrored() -> list:
        return discovery.list_namespaced_endpoint_slice(
            "default", label_selector="kubernetes.io/service-name=example-custom-endpoints").items

    def addresses() -> list:
        return [[e.addresses for e in s.endpoints] for s in mirrored()]
    live.wait_for("the mirrored slice", lambda: addresses() == [[["10.1.2.3"]]], timeout=12)
    [s] = mirrored()
    assert s.metadata.labels["endpointslice.kubernetes.io/managed-by"] == "endpointslicemirroring-controller.k8s.io"
    assert [(p.name, p.port, p.protocol) for p in s.ports] == [("", 80, "TCP")]
    endpoints["subsets"][0]["addresses"] = [{"ip": "10.2.3.4"}]
    v1.replace_namespaced_endpoints("example-custom-endpoints", "default", endpoints)
    live.wait_for("the update mirrored", lambda: addresses() == [[["10.2.3.4"]]], timeout=12)
    v1.delete_namespaced_endpoints("example-custom-endpoints", "default")
    live.wait_for("the slice gone", lambda: mirrored() == [], timeout=12)


def _watched(live: Live, path: str, rv: str) -> list[tuple[str, dict]]:
    """The events a watch from ``rv`` sees before its 1 s timeout."""
    code, _, raw = live.request("GET", f"{path}&watch=true&resourceVersion={rv}&timeoutSeconds=1")
    assert code == 200
    return [(e["type"], e["object"]) for e in map(json.loads, raw.decode().splitlines()) if e]


def test_service_and_endpoints_lifecycles_as_the_conformance_suite_drives_them(live_factory) -> None:
    """The API steps of service.go's "should complete a service status lifecycle", "should test the lifecycle of
    an Endpoint", "should delete a collection of services" and "should find a service from listing all
    namespaces", on 1.28, with what each step checks."""
    live = live_factory("1.28")
    ns = "/api/v1/namespaces/default"
    smp, merge = "application/strategic-merge-patch+json", "application/merge-patch+json"
    _, listed = live.json("GET", "/api/v1/services?labelSelector=test-service-static%3Dtrue")
    rv = listed["metadata"]["resourceVersion"]
    svc = {"metadata": {"name": "test-service-e2e", "labels": {"test-service-static": "true"}},
           "spec": {"type": "ClusterIP", "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 80}]}}
    assert live.json("POST", f"{ns}/services", svc)[0] == 201
    code, status = live.json("GET", f"{ns}/services/test-service-e2e/status")
    assert code == 200 and status["status"] == {"loadBalancer": {}}
    code, patched = live.json("PATCH", f"{ns}/services/test-service-e2e/status", {
        "metadata": {"annotations": {"patchedstatus": "true"}},
        "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.1"}]}}}, merge)
    assert code == 200 and patched["metadata"]["annotations"] == {"patchedstatus": "true"}
    assert patched["status"]["loadBalancer"] == {"ingress": [{"ip": "203.0.113.1"}]}
    # UpdateStatus with a metav1.Condition the test leaves without lastTransitionTime (Go sends null)
    patched["status"]["conditions"] = [{"type": "StatusUpdate", "status": "True", "reason": "E2E",
                                        "message": "Set from e2e test", "lastTransitionTime": None}]
    code, updated = live.json("PUT", f"{ns}/services/test-service-e2e/status", patched)
    assert code == 200, updated
    assert [(c["type"], c["reason"], c["message"]) for c in updated["status"]["conditions"]] == [
        ("StatusUpdate", "E2E", "Set from e2e test")]
    code, relabelled = live.json("PATCH", f"{ns}/services/test-service-e2e",
                                 {"metadata": {"labels": {"test-service": "patched"}}}, smp)
    assert code == 200
    assert relabelled["metadata"]["labels"] == {"test-service-static": "true", "test-service": "patched"}
    assert live.json("DELETE", f"{ns}/services/test-service-e2e")[0] == 200
    seen = _watched(live, f"{ns}/services?labelSelector=test-service-static%3Dtrue", rv)
    assert [t for t, _ in seen] == ["ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
    assert seen[1][1]["metadata"]["annotations"] == {"patchedstatus": "true"}
    assert seen[-1][1]["metadata"]["labels"]["test-service-static"] == "true"

    # the lifecycle of an Endpoint
    _, listed = live.json("GET", "/api/v1/endpoints?labelSelector=test-endpoint-static%3Dtrue")
    rv = listed["metadata"]["resourceVersion"]
    ep = {"metadata": {"name": "testservice", "labels": {"test-endpoint-static": "true"}},
          "subsets": [{"addresses": [{"ip": "10.0.0.24"}], "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}]}
    assert live.json("POST", f"{ns}/endpoints", ep)[0] == 201
    _, listed = live.json("GET", "/api/v1/endpoints?labelSelector=test-endpoint-static%3Dtrue")
    [found] = listed["items"]
    found["metadata"]["labels"]["test-service"] = "updated"
    assert live.json("PUT", f"{ns}/endpoints/testservice", found)[0] == 200
    code, ep = live.json("PATCH", f"{ns}/endpoints/testservice", {
        "metadata": {"labels": {"test-service": "patched"}},
        "subsets": [{"addresses": [{"ip": "10.0.0.25"}], "ports": [{"name": "http-test", "port": 8080}]}]}, smp)
    assert code == 200 and ep["metadata"]["labels"]["test-service"] == "patched"
    assert ep["subsets"] == [{"addresses": [{"ip": "10.0.0.25"}],
                              "ports": [{"name": "http-test", "port": 8080, "protocol": "TCP"}]}]
    code, _ = live.json("DELETE", f"{ns}/endpoints?labelSelector=test-endpoint-static%3Dtrue")
    assert code == 200
    seen = _watched(live, f"{ns}/endpoints?labelSelector=test-endpoint-static%3Dtrue", rv)
    assert [t for t, _ in seen] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]

    # a collection of services deleted by label; the kubernetes Service found listing all namespaces
    live.json("POST", "/api/v1/namespaces", {"metadata": {"name": "svc-collection"}})
    for name, label, port in (("e2e-svc-a", "delete", 8001), ("e2e-svc-b", "delete", 8002),
                              ("e2e-svc-c", "keep", 8003)):
        assert live.json("POST", "/api/v1/namespaces/svc-collection/services", {
            "metadata": {"name": name, "labels": {"e2e-test-service": label}},
            "spec": {"type": "ClusterIP", "ports": [{"name": "http", "protocol": "TCP", "port": port,
                                                     "targetPort": port}]}})[0] == 201
    path = "/api/v1/namespaces/svc-collection/services"
    assert len(live.json("GET", path)[1]["items"]) == 3
    code, gone = live.json("DELETE", f"{path}?labelSelector=e2e-test-service%3Ddelete")
    assert code == 200 and [s["metadata"]["name"] for s in gone["items"]] == ["e2e-svc-a", "e2e-svc-b"]
    assert [s["metadata"]["name"] for s in live.json("GET", path)[1]["items"]] == ["e2e-svc-c"]
    every = live.json("GET", "/api/v1/services")[1]["items"]
    assert ("default", "kubernetes") in {(s["metadata"]["namespace"], s["metadata"]["name"]) for s in every}

"""Service IPs and node ports (pkg/registry/core/service/storage/alloc.go, ipallocator, portallocator), the API
server's own default/kubernetes Service with its Endpoints and EndpointSlice (pkg/controlplane/reconcilers),
the root CA publisher, and the zero values of field selectors."""

from __future__ import annotations

import copy
import ipaddress
from datetime import datetime, timezone

import pytest

from podlife.api.errors import ApiError
from podlife.api.registry.service import Allocators, _ip_offset, _port_offset, _random_scan
from podlife.apiserver.fields import FieldSelector
from podlife.cluster import Cluster
from podlife.controlplane.controllers.endpointslice import EndpointSliceController
from podlife.controlplane.controllers.rootcacertpublisher import PLACEHOLDER_CA
from podlife.cluster.spec import NodeSpec
from tests.helpers import records, run_text

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
RANGE = ipaddress.ip_network("10.96.0.0/12")


def _cluster(version: str = "1.32", seed: int = 0) -> Cluster:
    return Cluster(version=version, seed=seed, start_time=START, nodes=[NodeSpec("n1")])


def _svc(c: Cluster, name: str, ns: str = "default", **spec) -> dict:
    spec.setdefault("ports", [{"name": "http", "port": 80}])
    return c.store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                           "spec": spec}, by="user")


def _offset(ip: str) -> int:
    return int(ipaddress.ip_address(ip)) - int(RANGE.network_address) - 1


def test_range_offsets_follow_the_keps():
    # KEP-3070: min(max(16, size/16), 256) over the CIDR size; KEP-3668: min(max(16, size/32), 128)
    assert [_ip_offset(n) for n in (16, 32, 256, 4096, 2 ** 20)] == [0, 16, 16, 256, 256]
    assert [_port_offset(n) for n in (16, 100, 2768, 10000)] == [0, 16, 86, 128]


def test_random_scan_takes_the_upper_band_first_then_the_lower():
    class Fixed:
        def __init__(self, *draws: int) -> None:
            self.draws = list(draws)

        def randrange(self, n: int) -> int:
            return self.draws.pop(0) % n
    # size 10, offset 4: the upper band is 4..9; a start of 5 scans 9, then wraps to 4
    assert _random_scan(Fixed(5), set(), 10, 4) == 9
    assert _random_scan(Fixed(5), {9}, 10, 4) == 4
    # the upper band full: a random start in 0..3
    assert _random_scan(Fixed(0, 2), {4, 5, 6, 7, 8, 9}, 10, 4) == 2
    assert _random_scan(Fixed(0, 0), set(range(10)), 10, 4) is None


def test_cluster_ips_are_allocated_deterministically_and_validated():
    c = _cluster()
    a = _svc(c, "a", selector={"app": "a"})
    spec = a["spec"]
    assert (spec["clusterIPs"], spec["ipFamilies"], spec["ipFamilyPolicy"]) == ([spec["clusterIP"]], ["IPv4"],
                                                                                "SingleStack")
    assert ipaddress.ip_address(spec["clusterIP"]) in RANGE and _offset(spec["clusterIP"]) >= 256
    # the same seed draws the same IP
    assert _svc(_cluster(), "a", selector={"app": "a"})["spec"]["clusterIP"] == spec["clusterIP"]
    with pytest.raises(ApiError) as e:
        _svc(c, "b", clusterIP=spec["clusterIP"])
    assert (e.value.code, e.value.message) == (422, f'Service "b" is invalid: spec.clusterIPs: Invalid value: '
                                                    f'[]string{{"{spec["clusterIP"]}"}}: failed to allocate IP '
                                                    f'{spec["clusterIP"]}: provided IP is already allocated')
    with pytest.raises(ApiError) as e:
        _svc(c, "b", clusterIP="10.112.0.1")   # just past 10.96.0.0/12
    assert e.value.message.endswith("failed to allocate IP 10.112.0.1: the provided IP (10.112.0.1) is not in the "
                                     "valid range. The range of valid IPs is 10.96.0.0/12")
    with pytest.raises(ApiError) as e:
        _svc(c, "b", ipFamilyPolicy="RequireDualStack")
    assert e.value.message == ('Service "b" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": '
                               "this cluster is not configured for dual-stack services")
    # deleting releases: the IP can be asked for again
    _svc(c, "fixed", clusterIP="10.96.0.10")
    c.store.delete("Service", "default", "fixed", by="user")
    assert _svc(c, "fixed", clusterIP="10.96.0.10")["spec"]["clusterIPs"] == ["10.96.0.10"]
    # a dry run allocates nothing
    dry = c.store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dry"},
                          "spec": {"clusterIP": "10.96.0.11", "ports": [{"port": 80}]}}, by="user", dry_run=True)
    assert dry["spec"]["clusterIP"] == "10.96.0.11"
    assert _svc(c, "wet", clusterIP="10.96.0.11")["spec"]["clusterIP"] == "10.96.0.11"


def test_without_static_subrange_any_offset_is_drawn():
    # before 1.25 (ServiceIPStaticSubrange) one random scan covers the whole range
    assert Allocators(_cluster("1.24").store).ip_offset == 0
    assert Allocators(_cluster("1.25").store).ip_offset == 256
    assert Allocators(_cluster("1.27").store).port_offset == 0
    assert Allocators(_cluster("1.28").store).port_offset == 86


def test_headless_and_external_name():
    c = _cluster()
    h = _svc(c, "h", clusterIP="None", selector={"app": "h"})["spec"]
    assert (h["clusterIP"], h["clusterIPs"], h["ipFamilies"], h["ipFamilyPolicy"]) == ("None", ["None"], ["IPv4"],
                                                                                       "SingleStack")
    # headless and selectorless: RequireDualStack and both families, even on a single-stack cluster
    h = _svc(c, "h2", clusterIP="None")["spec"]
    assert (h["ipFamilies"], h["ipFamilyPolicy"]) == (["IPv4", "IPv6"], "RequireDualStack")
    e = _svc(c, "e", type="ExternalName", externalName="example.com", ports=[])["spec"]
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} & set(e)


def test_node_ports_allocated_shared_by_port_and_released_by_type_change():
    c = _cluster()
    s = _svc(c, "np", type="NodePort", selector={"a": "b"},
             ports=[{"name": "tcp", "port": 53, "protocol": "TCP"}, {"name": "udp", "port": 53, "protocol": "UDP"},
                    {"name": "web", "port": 80}])
    ports = [p["nodePort"] for p in s["spec"]["ports"]]
    # ports of one number share one node port (initNodePorts svcPortToNodePort)
    assert ports[0] == ports[1] != ports[2] and all(30086 <= p <= 32767 for p in ports)
    with pytest.raises(ApiError) as e:
        _svc(c, "np2", type="NodePort", ports=[{"name": "x", "port": 80, "nodePort": ports[2]}])
    assert e.value.message == (f'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: {ports[2]}: '
                               "provided port is already allocated")
    with pytest.raises(ApiError) as e:
        _svc(c, "np2", type="NodePort", ports=[{"name": "x", "port": 80, "nodePort": 29999}])
    assert e.value.message.endswith("Invalid value: 29999: provided port is not in the valid range. The range of "
                                    "valid ports is 30000-32767")
    # a PUT that leaves out what was allocated keeps it (patchAllocatedValues)
    put = copy.deepcopy(s)
    put["spec"].pop("clusterIP")
    put["spec"].pop("clusterIPs")
    for p in put["spec"]["ports"]:
        p.pop("nodePort")
    kept = c.store.update(put, by="user")
    assert kept["spec"]["clusterIP"] == s["spec"]["clusterIP"]
    assert [p["nodePort"] for p in kept["spec"]["ports"]] == ports
    # to ClusterIP: the node ports go (and externalTrafficPolicy with them), and are free again
    to_cip = copy.deepcopy(kept)
    to_cip["spec"]["type"] = "ClusterIP"
    got = c.store.update(to_cip, by="user")["spec"]
    assert [p.get("nodePort") for p in got["ports"]] == [None, None, None] and "externalTrafficPolicy" not in got
    assert _svc(c, "np2", type="NodePort", ports=[{"name": "x", "port": 80, "nodePort": ports[2]}])
    # to ExternalName: the cluster IP goes; back to ClusterIP: a new one is drawn
    to_ext = copy.deepcopy(c.store.get("Service", "default", "np"))
    to_ext["spec"].update(type="ExternalName", externalName="example.com")
    got = c.store.update(to_ext, by="user")["spec"]
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} & set(got)
    back = copy.deepcopy(c.store.get("Service", "default", "np"))
    back["spec"]["type"] = "ClusterIP"
    back["spec"].pop("externalName")
    got = c.store.update(back, by="user")["spec"]
    assert ipaddress.ip_address(got["clusterIP"]) in RANGE and got["ipFamilyPolicy"] == "SingleStack"


def test_allocators_are_rebuilt_from_the_stored_services():
    """A restarted API server (podlife up) keeps no bitmap: what the stored Services hold is taken."""
    c = _cluster()
    s = _svc(c, "np", type="NodePort", selector={"a": "b"})
    del c.store.strategy_state["service-allocators"]   # as after a restart: a fresh allocator over the same store
    with pytest.raises(ApiError) as e:
        _svc(c, "again", clusterIP=s["spec"]["clusterIP"])
    assert e.value.causes[0].path == "spec.clusterIPs"
    with pytest.raises(ApiError) as e:
        _svc(c, "again", type="NodePort",
             ports=[{"name": "x", "port": 80, "nodePort": s["spec"]["ports"][0]["nodePort"]}])
    assert e.value.causes[0].path == "spec.ports[0].nodePort"


def test_the_api_servers_own_service_endpoints_and_slice():
    c = _cluster("1.32")
    svc = c.store.get("Service", "default", "kubernetes")
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["clusterIPs"] == ["10.96.0.1"]
    assert svc["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 6443}]
    ep = c.store.get("Endpoints", "default", "kubernetes")
    assert ep["metadata"]["labels"] == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    assert ep["subsets"] == [{"addresses": [{"ip": "10.0.0.2"}],
                              "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}]}]
    sl = c.store.get("EndpointSlice", "default", "kubernetes")
    assert sl["apiVersion"] == "discovery.k8s.io/v1"
    assert sl["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert (sl["addressType"], sl["endpoints"], sl["ports"]) == (
        "IPv4", [{"addresses": ["10.0.0.2"], "conditions": {"ready": True}}],
        [{"name": "https", "port": 6443, "protocol": "TCP"}])
    # its IP is the range's first, which no one else may take
    with pytest.raises(ApiError):
        _svc(c, "thief", clusterIP="10.96.0.1")
    # 1.18: Endpoints only, without the skip-mirror label; 1.19-1.20: a v1beta1 slice
    old = _cluster("1.18").store
    assert old.try_get("EndpointSlice", "default", "kubernetes") is None
    assert "labels" not in old.get("Endpoints", "default", "kubernetes")["metadata"]
    assert _cluster("1.20").store.get("EndpointSlice", "default", "kubernetes")["apiVersion"] == \
        "discovery.k8s.io/v1beta1"


SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: bootstrap}
spec:
  kubernetesVersion: "1.32"
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
  actions:
    - at: 5s
      delete: service/kubernetes
    - at: 6s
      delete: serviceaccount/default
      namespace: team
  until: 30s
"""


def test_deleted_bootstrap_objects_come_back(tmp_path):
    r = run_text(tmp_path, SCENARIO)
    store = r.cluster.store
    # the bootstrap controller checks every EndpointInterval (10 s): back at 15 s, with its IP
    created = [x["t"] for x in records(r, "api", verb="create", object="Service/default/kubernetes")]
    assert created == [0.0, 15.0]
    assert store.get("Service", "default", "kubernetes")["spec"]["clusterIP"] == "10.96.0.1"
    # the serviceaccounts controller recreates at once
    assert [x["t"] for x in records(r, "api", verb="create", object="ServiceAccount/team/default")] == [0.0, 6.0]
    cm = store.get("ConfigMap", "team", "kube-root-ca.crt")
    assert cm["data"] == {"ca.crt": PLACEHOLDER_CA}


def test_root_ca_configmap_by_version_and_restored_when_changed():
    assert _cluster("1.19").store.try_get("ConfigMap", "default", "kube-root-ca.crt") is None
    assert "annotations" not in _cluster("1.20").store.get("ConfigMap", "default", "kube-root-ca.crt")["metadata"]
    c = _cluster("1.32")
    cm = copy.deepcopy(c.store.get("ConfigMap", "kube-system", "kube-root-ca.crt"))
    assert cm["metadata"]["annotations"]["kubernetes.io/description"].startswith("Contains a CA bundle")
    cm["data"] = {"ca.crt": "tampered"}
    c.store.update(cm, by="user")
    c.kernel.run(until=1)   # the watch delivers at this instant's flush
    assert c.store.get("ConfigMap", "kube-system", "kube-root-ca.crt")["data"] == {"ca.crt": PLACEHOLDER_CA}
    other = _cluster("1.25", seed=7).store.get("ConfigMap", "default", "kube-root-ca.crt")
    assert other["data"]["ca.crt"] == PLACEHOLDER_CA   # the same in every cluster


@pytest.mark.parametrize("kind, text, obj, want", [
    ("Node", "spec.unschedulable=false", {"spec": {}}, True),
    ("Node", "spec.unschedulable=false", {"spec": {"unschedulable": True}}, False),
    ("Node", "spec.unschedulable!=true", {}, True),
    ("Pod", "spec.hostNetwork=false", {"spec": {}}, True),
    ("ReplicaSet", "status.replicas=0", {"status": {}}, True),
    ("ReplicationController", "status.replicas=0", {"status": {}}, True),
    ("ReplicationController", "status.replicas=1", {"status": {"replicas": 1}}, True),
    ("Job", "status.successful=0", {"status": {}}, True),
    ("Pod", "spec.nodeName=", {"spec": {}}, True),
])
def test_unset_selectable_fields_read_as_their_zero_value(kind, text, obj, want):
    assert FieldSelector(kind, text).matches({"metadata": {"name": "x"}, **obj}) is want


def test_health_check_node_port_for_local_load_balancers():
    c = _cluster()
    s = _svc(c, "lb", type="LoadBalancer", externalTrafficPolicy="Local", selector={"a": "b"})["spec"]
    hc = s["healthCheckNodePort"]
    assert 30086 <= hc <= 32767 and hc != s["ports"][0]["nodePort"]
    with pytest.raises(ApiError) as e:
        _svc(c, "np", type="NodePort", ports=[{"name": "x", "port": 80, "nodePort": hc}])
    assert e.value.message.endswith("provided port is already allocated")
    upd = copy.deepcopy(c.store.get("Service", "default", "lb"))
    upd["spec"]["externalTrafficPolicy"] = "Cluster"
    assert "healthCheckNodePort" not in c.store.update(upd, by="user")["spec"]
    assert "healthCheckNodePort" not in _svc(c, "lb2", type="LoadBalancer", selector={"a": "b"})["spec"]


def test_a_deleted_endpointslice_is_recreated():
    """onEndpointSliceDelete: a managed slice deleted by someone else brings a sync of its Service
    endpointSliceChangeMinSyncDelay (1 s) later (endpointslice.go e2e: "recreating EndpointSlices after they've
    been deleted"); the controller's own deletions do not."""
    c = _cluster()
    c.store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default",
                                                                   "labels": {"app": "p"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, by="user")
    _svc(c, "web", selector={"app": "p"})
    c.kernel.run(until=5)

    def slices() -> list[dict]:
        return c.store.list("EndpointSlice", "default", where=lambda s: (s["metadata"].get("labels") or {}).get(
            "kubernetes.io/service-name") == "web")
    [old] = slices()
    assert len(old["endpoints"]) == 1
    c.store.delete("EndpointSlice", "default", old["metadata"]["name"], by="user")
    c.kernel.run(until=5.5)
    assert slices() == []
    c.kernel.run(until=7)
    [new] = slices()
    assert new["metadata"]["creationTimestamp"] == "2025-01-01T00:00:06Z"
    assert new["endpoints"] == old["endpoints"] and new["metadata"]["name"] != old["metadata"]["name"]
    ctrl = next(x for x in c.controllers if isinstance(x, EndpointSliceController))
    assert not ctrl.deleting   # no deletion left expected


def test_a_cluster_ip_may_not_change_once_set():
    c = _cluster()
    a = _svc(c, "a", selector={"a": "b"})
    upd = copy.deepcopy(a)
    upd["spec"]["clusterIP"] = "10.96.5.5"
    upd["spec"]["clusterIPs"] = ["10.96.5.5"]
    with pytest.raises(ApiError) as e:
        c.store.update(upd, by="user")
    assert (e.value.code, e.value.message) == (422, 'Service "a" is invalid: spec.clusterIPs[0]: Invalid value: '
                                                    '[]string{"10.96.5.5"}: may not change once set')
    assert c.store.get("Service", "default", "a")["spec"]["clusterIP"] == a["spec"]["clusterIP"]


@pytest.mark.parametrize("host, port, want", [
    ("127.0.0.1", 6443, ("10.0.0.2", 6443)), ("localhost", 0, ("10.0.0.2", 6443)),
    ("0.0.0.0", 7000, ("10.0.0.2", 7000)), ("::1", 6443, ("10.0.0.2", 6443)),
    ("192.168.1.20", 6443, ("192.168.1.20", 6443)),
])
def test_the_advertised_address_of_podlife_up(host, port, want):
    from podlife.apiserver.up import UpConfig, advertised_address

    assert advertised_address(UpConfig(host=host, port=port)) == want


# ---- type changes (test/e2e/network/service.go "should be able to change the type from ... to ...") -------------


def _read_modify_write(c: Cluster, name: str, **spec) -> dict:
    """The e2e jig's UpdateService: get, change some fields, PUT the whole object back."""
    svc = copy.deepcopy(c.store.get("Service", "default", name))
    for k, v in spec.items():
        if v is None:
            svc["spec"].pop(k, None)
        else:
            svc["spec"][k] = v
    return c.store.update(svc, by="user")


def test_nodeport_to_externalname_drops_what_the_old_type_used_and_releases_it():
    """The conformance test's update (it failed with 'spec.externalTrafficPolicy: Invalid value: "Cluster"').
    dropTypeDependentFields: clusterIP(s), ipFamilies, ipFamilyPolicy, the node ports and externalTrafficPolicy
    (all as read back by the client) go; the IP and node port are free for the next Service."""
    c = _cluster("1.28")
    np = _svc(c, "nodeport-service", type="NodePort", selector={"a": "b"})["spec"]
    assert np["externalTrafficPolicy"] == "Cluster"
    got = _read_modify_write(c, "nodeport-service", type="ExternalName",
                             externalName="externalsvc.ns.svc.cluster.local")["spec"]
    assert got == {"type": "ExternalName", "externalName": "externalsvc.ns.svc.cluster.local",
                   "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": 80}],
                   "selector": {"a": "b"}, "sessionAffinity": "None",
                   "internalTrafficPolicy": "Cluster"}   # not type-dependent: kept (ExternalName ignores it)
    again = _svc(c, "again", type="NodePort", clusterIP=np["clusterIP"],
                 ports=[{"name": "x", "port": 80, "nodePort": np["ports"][0]["nodePort"]}])["spec"]
    assert again["clusterIP"] == np["clusterIP"]


def test_a_changed_dependent_field_is_kept_for_validation_to_refuse():
    """A field the update changed as well as the type is not wiped (rule c of dropTypeDependentFields)."""
    c = _cluster("1.28")
    _svc(c, "s", type="NodePort", selector={"a": "b"})
    with pytest.raises(ApiError) as e:
        _read_modify_write(c, "s", type="ExternalName", externalName="example.com", externalTrafficPolicy="Local")
    assert 'spec.externalTrafficPolicy: Invalid value: "Local"' in e.value.message


def test_externalname_to_clusterip_and_nodeport_allocate():
    c = _cluster("1.28")
    for name, to in (("e1", "ClusterIP"), ("e2", "NodePort")):
        _svc(c, name, type="ExternalName", externalName="foo.example.com", ports=[])
        got = _read_modify_write(c, name, type=to, externalName=None,
                                 ports=[{"port": 80, "name": "http", "protocol": "TCP", "targetPort": 9376}])["spec"]
        assert ipaddress.ip_address(got["clusterIP"]) in RANGE and got["clusterIPs"] == [got["clusterIP"]]
        assert got["ipFamilies"] == ["IPv4"] and got["ipFamilyPolicy"] == "SingleStack"
        assert got["internalTrafficPolicy"] == "Cluster"
        if to == "NodePort":
            assert 30000 <= got["ports"][0]["nodePort"] <= 32767 and got["externalTrafficPolicy"] == "Cluster"
        else:
            assert "nodePort" not in got["ports"][0] and "externalTrafficPolicy" not in got


def test_clusterip_to_loadbalancer_without_a_cloud_and_back():
    """No cloud provider: a LoadBalancer gets node ports and no ingress; back to ClusterIP, the node ports,
    externalTrafficPolicy and allocateLoadBalancerNodePorts go, the cluster IP stays."""
    c = _cluster("1.28")
    cip = _svc(c, "lb", selector={"a": "b"})["spec"]["clusterIP"]
    lb = _read_modify_write(c, "lb", type="LoadBalancer")
    assert lb["spec"]["clusterIP"] == cip and lb["spec"]["allocateLoadBalancerNodePorts"] is True
    assert 30000 <= lb["spec"]["ports"][0]["nodePort"] <= 32767 and lb["status"] == {"loadBalancer": {}}
    # a status writer (a cloud's service controller) gives it an ingress; leaving LoadBalancer clears it
    st = copy.deepcopy(lb)
    st["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.7"}]}}
    c.store.update(st, by="user", subresource="status")
    back = _read_modify_write(c, "lb", type="ClusterIP")
    assert back["spec"]["clusterIP"] == cip and "nodePort" not in back["spec"]["ports"][0]
    assert not {"externalTrafficPolicy", "allocateLoadBalancerNodePorts"} & set(back["spec"])
    assert back["status"] == {"loadBalancer": {}}


def test_external_traffic_policy_with_external_ips_by_version():
    """PR #119150 (1.29): a ClusterIP Service with externalIPs is externally accessible, so externalTrafficPolicy
    is defaulted to Cluster and may be set; 1.28 allows it on NodePort and LoadBalancer only, with its own
    message, and drops it when a NodePort becomes such a ClusterIP Service."""
    new, old = _cluster("1.29"), _cluster("1.28")
    assert _svc(new, "x", externalIPs=["192.0.2.1"])["spec"]["externalTrafficPolicy"] == "Cluster"
    assert "externalTrafficPolicy" not in _svc(old, "x", externalIPs=["192.0.2.1"])["spec"]
    with pytest.raises(ApiError) as e:
        _svc(old, "y", externalIPs=["192.0.2.1"], externalTrafficPolicy="Local")
    assert e.value.message == ('Service "y" is invalid: spec.externalTrafficPolicy: Invalid value: "Local": may only '
                               "be set when `type` is 'NodePort' or 'LoadBalancer'")
    with pytest.raises(ApiError) as e:
        _svc(new, "y", externalTrafficPolicy="Local")
    assert e.value.message == ('Service "y" is invalid: spec.externalTrafficPolicy: Invalid value: "Local": may only '
                               "be set for externally-accessible services")
    for c, kept in ((new, True), (old, False)):
        _svc(c, "np", type="NodePort", externalIPs=["192.0.2.1"])
        got = _read_modify_write(c, "np", type="ClusterIP")["spec"]
        assert ("externalTrafficPolicy" in got) is kept

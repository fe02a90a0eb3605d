"""EndpointSliceMirroring controller (pkg/controller/endpointslicemirroring): the Endpoints of a Service without a
selector are mirrored into EndpointSlices, through create, update and delete (test/e2e/network/
endpointslicemirroring.go "should mirror a custom Endpoints resource through create update and delete")."""

from __future__ import annotations

import copy
import re
from datetime import datetime, timezone

from podlife.cluster import Cluster
from podlife.cluster.spec import NodeSpec
from podlife.controlplane.controllers.endpointslicemirroring import CONTROLLER_NAME

START = datetime(2025, 1, 1, tzinfo=timezone.utc)
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"


def _cluster(version: str = "1.28") -> Cluster:
    return Cluster(version=version, seed=0, start_time=START, nodes=[NodeSpec("n1")])


def _service(c: Cluster, name: str = "example-custom-endpoints", **spec) -> dict:
    spec.setdefault("ports", [{"name": "example", "port": 80, "protocol": "TCP"}])
    return c.store.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
                           "spec": spec}, by="user")


def _endpoints(c: Cluster, subsets: list, name: str = "example-custom-endpoints", **meta) -> dict:
    return c.store.create({"apiVersion": "v1", "kind": "Endpoints",
                           "metadata": {"name": name, "namespace": "default", **meta}, "subsets": subsets}, by="user")


def _settle(c: Cluster) -> None:
    """What the writes of this instant bring, at this instant (mirroringEndpointUpdatesBatchPeriod is 0)."""
    c.kernel.run(until=c.kernel.now + 0.001)


def _slices(c: Cluster, name: str = "example-custom-endpoints") -> list[dict]:
    return c.store.list("EndpointSlice", "default", where=lambda s: (s["metadata"].get("labels") or {}).get(
        "kubernetes.io/service-name") == name)


def test_a_custom_endpoints_is_mirrored_through_create_update_and_delete():
    c = _cluster()
    _service(c)
    ep = _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}])
    assert ep["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]   # SetDefaults_Endpoints
    _settle(c)
    [s] = _slices(c)
    md = s["metadata"]
    assert md["creationTimestamp"] == ep["metadata"]["creationTimestamp"]
    assert re.fullmatch(r"example-custom-endpoints-[a-z0-9]{5}", md["name"])
    assert md["labels"] == {"kubernetes.io/service-name": "example-custom-endpoints", MANAGED_BY: CONTROLLER_NAME}
    assert md["ownerReferences"] == [{"apiVersion": "v1", "kind": "Endpoints", "name": "example-custom-endpoints",
                                      "uid": ep["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert s["addressType"] == "IPv4"
    assert s["ports"] == [{"name": "", "protocol": "TCP", "port": 80}]
    assert s["endpoints"] == [{"addresses": ["10.1.2.3"], "conditions": {"ready": True}}]
    # an update (the e2e test PUTs its own object back, without a resourceVersion): the same slice, updated
    upd = copy.deepcopy(ep)
    del upd["metadata"]["resourceVersion"]
    upd["subsets"][0]["addresses"] = [{"ip": "10.2.3.4"}]
    c.store.update(upd, by="user")
    _settle(c)
    [after] = _slices(c)
    assert after["metadata"]["name"] == md["name"]
    assert after["endpoints"] == [{"addresses": ["10.2.3.4"], "conditions": {"ready": True}}]
    # an update that changes nothing mirrored writes nothing
    rv = after["metadata"]["resourceVersion"]
    again = copy.deepcopy(c.store.get("Endpoints", "default", "example-custom-endpoints"))
    again["metadata"]["annotations"] = {"endpoints.kubernetes.io/last-change-trigger-time": "2025-01-01T00:00:00Z"}
    c.store.update(again, by="user")
    _settle(c)
    assert _slices(c)[0]["metadata"]["resourceVersion"] == rv
    c.store.delete("Endpoints", "default", "example-custom-endpoints", by="user")
    _settle(c)
    assert _slices(c) == []


def test_what_is_not_mirrored():
    """shouldMirror and syncEndpoints: a Service with a selector (the EndpointSlice controller's), Endpoints
    without a Service, skip-mirror; a selector added later removes the mirrored slices."""
    c = _cluster()
    _service(c, "selected", selector={"app": "x"})
    _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}], name="selected")
    _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}], name="lonely")
    _service(c, "skipped")
    _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}], name="skipped",
               labels={"endpointslice.kubernetes.io/skip-mirror": "true"})
    _service(c, "later")
    _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}], name="later")
    c.kernel.run(until=1)
    mirrored = c.store.list("EndpointSlice", "default", where=lambda s: (s["metadata"].get("labels") or {}).get(
        MANAGED_BY) == CONTROLLER_NAME)
    assert [s["metadata"]["labels"]["kubernetes.io/service-name"] for s in mirrored] == ["later"]
    svc = copy.deepcopy(c.store.get("Service", "default", "later"))
    svc["spec"]["selector"] = {"app": "y"}
    c.store.update(svc, by="user")
    c.kernel.run(until=2)
    assert [s for s in _slices(c, "later") if s["metadata"]["labels"].get(MANAGED_BY) == CONTROLLER_NAME] == []


def test_the_api_servers_own_endpoints_are_left_to_it():
    """default/kubernetes: its Endpoints carry skip-mirror; the one slice is the API server's, unlabelled."""
    c = _cluster()
    c.kernel.run(until=1)
    [s] = _slices(c, "kubernetes")
    assert s["metadata"]["name"] == "kubernetes" and MANAGED_BY not in s["metadata"]["labels"]


def test_subsets_addresses_families_and_labels():
    c = _cluster()
    _service(c, "multi")
    _endpoints(c, [
        {"ports": [{"name": "a", "port": 80}], "addresses": [{"ip": "10.0.0.1", "nodeName": "n1", "hostname": "h"}],
         "notReadyAddresses": [{"ip": "10.0.0.2"}, {"ip": "fd00::1"}]},
        {"ports": [{"name": "b", "port": 81, "protocol": "UDP"}], "addresses": [{"ip": "10.0.0.3"}]},
    ], name="multi", labels={"team": "x"}, annotations={"note": "kept",
                                                         "kubectl.kubernetes.io/last-applied-configuration": "{}"})
    c.kernel.run(until=1)
    got = sorted(((s["addressType"], s["ports"][0]["name"]), s) for s in _slices(c, "multi"))
    assert [k for k, _ in got] == [("IPv4", "a"), ("IPv4", "b"), ("IPv6", "a")]
    v4a = got[0][1]
    assert v4a["endpoints"] == [
        {"addresses": ["10.0.0.1"], "conditions": {"ready": True}, "hostname": "h", "nodeName": "n1"},
        {"addresses": ["10.0.0.2"], "conditions": {"ready": False}}]
    assert v4a["metadata"]["labels"] == {"team": "x", "kubernetes.io/service-name": "multi",
                                         MANAGED_BY: CONTROLLER_NAME}
    assert v4a["metadata"]["annotations"] == {"note": "kept"}
    assert got[1][1]["ports"] == [{"name": "b", "protocol": "UDP", "port": 81}]
    assert got[2][1]["endpoints"] == [{"addresses": ["fd00::1"], "conditions": {"ready": False}}]



def test_a_mirrored_slice_changed_by_someone_else_is_put_back():
    c = _cluster()
    _service(c)
    _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}])
    _settle(c)
    [s] = _slices(c)
    s = copy.deepcopy(s)
    s["endpoints"] = [{"addresses": ["10.9.9.9"], "conditions": {"ready": True}}]
    c.store.update(s, by="user")
    _settle(c)
    assert [e["addresses"] for e in _slices(c)[0]["endpoints"]] == [["10.1.2.3"]]
    c.store.delete("EndpointSlice", "default", s["metadata"]["name"], by="user")
    _settle(c)
    [back] = _slices(c)
    assert back["endpoints"][0]["addresses"] == ["10.1.2.3"]


def test_no_mirroring_before_1_19():
    c = _cluster("1.18")
    _service(c)
    _endpoints(c, [{"ports": [{"port": 80}], "addresses": [{"ip": "10.1.2.3"}]}])
    c.kernel.run(until=1)
    assert _slices(c) == []

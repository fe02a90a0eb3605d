"""Protobuf request bodies against a live ``podlife up`` (1.33): real kubectl creates (kubectl 1.32+ sends
protobuf for its ``create`` generators), and the bodies e2e.test's client-go sends for the kinds its
conformance tests create, each read back as JSON, then the API operations those tests go on to use."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.live.conftest import Live
from tests.pbwire import encode, envelope, field, message, number

PB = {"Content-Type": "application/vnd.kubernetes.protobuf"}
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


@pytest.fixture(scope="module")
def up(live_factory) -> Live:
    return live_factory("1.33", clock="manual")


def _post(up: Live, path: str, body: bytes) -> dict[str, Any]:
    code, _, raw = up.request("POST", path, body, PB)
    assert code == 201, raw
    return json.loads(raw)


def test_kubectl_creates_send_protobuf(up: Live) -> None:
    assert up.kubectl("create", "ingress", "web", "--rule=example.com/=svc:80").stdout.strip() == \
        "ingress.networking.k8s.io/web created"
    _, ing = up.json("GET", "/apis/networking.k8s.io/v1/namespaces/default/ingresses/web")
    assert ing["spec"]["rules"] == [{"host": "example.com", "http": {"paths": [
        {"path": "/", "pathType": "Exact", "backend": {"service": {"name": "svc", "port": {"number": 80}}}}]}}]
    assert up.kubectl("create", "priorityclass", "high", "--value=1000", "--description=d").stdout.strip() == \
        "priorityclass.scheduling.k8s.io/high created"
    _, pc = up.json("GET", "/apis/scheduling.k8s.io/v1/priorityclasses/high")
    assert (pc["value"], pc["description"], pc["preemptionPolicy"], "globalDefault" in pc) == (
        1000, "d", "PreemptLowerPriority", False)   # globalDefault is omitempty
    assert up.kubectl("create", "poddisruptionbudget", "pdb", "--selector=app=a", "--min-available=1"
                      ).stdout.strip() == "poddisruptionbudget.policy/pdb created"
    _, pdb = up.json("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/pdb")
    assert (pdb["spec"]["minAvailable"], pdb["spec"]["selector"]) == (1, {"matchLabels": {"app": "a"}})
    assert up.kubectl("create", "clusterrole", "reader", "--verb=get,list", "--resource=pods").stdout.strip() == \
        "clusterrole.rbac.authorization.k8s.io/reader created"
    _, role = up.json("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader")
    assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]


def test_webhook_configurations(up: Live) -> None:
    """test/e2e/apimachinery/webhook.go: create, list by label, patch, update, deletecollection."""
    rule = field(1, "CREATE") + field(2, field(1, "") + field(2, "v1") + field(3, "configmaps"))
    service = field(1, "default") + field(2, "e2e-test-webhook") + field(3, "/configmaps") + number(4, 8443)
    hook = (field(1, "deny-configmap.k8s.io") + field(2, field(1, service)) + field(3, rule) + field(6, "None")
            + field(8, "v1"))
    meta = field(1, field(1, "e2e-validating") + field(11, field(1, "e2e-list-test-uuid") + field(2, "u1")))
    created = _post(up, f"{ADMISSION}/validatingwebhookconfigurations",
                    envelope("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
                             meta + field(2, hook)))
    webhook = created["webhooks"][0]
    assert webhook["clientConfig"] == {"service": {"namespace": "default", "name": "e2e-test-webhook",
                                                   "path": "/configmaps", "port": 8443}}
    # registry defaulting (SetDefaults_ValidatingWebhook): failurePolicy Fail, matchPolicy Equivalent,
    # empty selectors, timeoutSeconds 10, scope "*"
    assert (webhook["failurePolicy"], webhook["matchPolicy"], webhook["namespaceSelector"],
            webhook["objectSelector"], webhook["timeoutSeconds"], webhook["rules"][0]["scope"]) == (
        "Fail", "Equivalent", {}, {}, 10, "*")
    mutating = encode("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", {
        "metadata": {"name": "e2e-mutating", "labels": {"e2e-list-test-uuid": "u1"}},
        "webhooks": [{"name": "adding-configmap-data.k8s.io", "clientConfig": {"url": "https://127.0.0.1:9/m"},
                      "sideEffects": "None", "admissionReviewVersions": ["v1"],
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                 "resources": ["configmaps"]}]}]})
    assert _post(up, f"{ADMISSION}/mutatingwebhookconfigurations", mutating)["webhooks"][0]["reinvocationPolicy"] \
        == "Never"
    for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
        _, listed = up.json("GET", f"{ADMISSION}/{kind}?labelSelector=e2e-list-test-uuid%3Du1")
        assert len(listed["items"]) == 1
        name = listed["items"][0]["metadata"]["name"]
        patch = {"webhooks": [{"name": listed["items"][0]["webhooks"][0]["name"],
                               "rules": [{"operations": [], "apiGroups": [""], "apiVersions": ["v1"],
                                          "resources": ["configmaps"]}]}]}
        code, patched = up.json("PATCH", f"{ADMISSION}/{kind}/{name}", patch,
                                "application/strategic-merge-patch+json")
        assert code == 200 and patched["webhooks"][0]["rules"][0]["operations"] == [], patched
        patched["webhooks"][0]["rules"][0]["operations"] = ["CREATE"]
        code, updated = up.json("PUT", f"{ADMISSION}/{kind}/{name}", patched)
        assert code == 200 and updated["webhooks"][0]["rules"][0]["operations"] == ["CREATE"], updated
        # webhook.go "patching/updating a ... webhook should work": a JSON patch of the rule's operations
        replace = [{"op": "replace", "path": "/webhooks/0/rules/0/operations", "value": ["UPDATE"]}]
        code, patched = up.json("PATCH", f"{ADMISSION}/{kind}/{name}", replace, "application/json-patch+json")
        assert code == 200 and patched["webhooks"][0]["rules"][0]["operations"] == ["UPDATE"], patched
        code, _ = up.json("DELETE", f"{ADMISSION}/{kind}?labelSelector=e2e-list-test-uuid%3Du1")
        assert code == 200
        assert up.json("GET", f"{ADMISSION}/{kind}/{name}")[0] == 404


def test_ingress_class_lifecycle(up: Live) -> None:
    """test/e2e/network/ingressclass.go "should support creating IngressClass API operations"."""
    base = "/apis/networking.k8s.io/v1/ingressclasses"
    for name in ("ic-1", "ic-2"):
        body = field(1, field(1, name) + field(11, field(1, "special-label") + field(2, "generic")))
        _post(up, base, envelope("networking.k8s.io/v1", "IngressClass",
                                 body + field(2, field(1, "example.com/controller"))))
    code, got = up.json("GET", f"{base}/ic-1")
    assert code == 200 and got["spec"] == {"controller": "example.com/controller"}
    _, listed = up.json("GET", f"{base}?labelSelector=special-label%3Dgeneric")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["ic-1", "ic-2"]
    since = listed["metadata"]["resourceVersion"]
    code, patched = up.json("PATCH", f"{base}/ic-1", {"metadata": {"annotations": {"patched": "true"}}},
                            "application/merge-patch+json")
    assert code == 200 and patched["metadata"]["annotations"] == {"patched": "true"}
    patched["metadata"]["annotations"]["updated"] = "true"
    body = encode("networking.k8s.io/v1", "IngressClass", patched)
    code, headers, raw = up.request("PUT", f"{base}/ic-1", body, PB)
    assert code == 200 and "Warning" not in headers, raw
    fields = {k: v for k, v in json.loads(raw).items() if k not in ("apiVersion", "kind")}
    newer = envelope("networking.k8s.io/v1", "IngressClass",
                     message("networking/v1.IngressClass", fields) + field(9, "from a newer release"))
    code, headers, raw = up.request("PUT", f"{base}/ic-1", newer, PB)
    assert code == 200 and "networking/v1.IngressClass, field 9: not known to podlife" in headers["Warning"], raw
    assert json.loads(raw)["metadata"]["annotations"] == {"patched": "true", "updated": "true"}
    # the watch from the list's resourceVersion sees the patch and the update, both MODIFIED
    code, _, raw = up.request("GET", f"{base}?watch=true&resourceVersion={since}&labelSelector=special-label%3Dgeneric"
                                     "&timeoutSeconds=1")
    events = [json.loads(line) for line in raw.splitlines()]
    assert [(e["type"], e["object"]["metadata"]["annotations"]) for e in events] == [
        ("MODIFIED", {"patched": "true"}), ("MODIFIED", {"patched": "true", "updated": "true"})]
    assert up.json("DELETE", f"{base}/ic-1")[0] == 200
    assert up.json("DELETE", f"{base}?labelSelector=special-label%3Dgeneric")[0] == 200
    assert up.json("GET", f"{base}?labelSelector=special-label%3Dgeneric")[1]["items"] == []


def test_csi_driver_and_storage_capacity(up: Live) -> None:
    """test/e2e/storage/csi_inline.go (CSIDriver) and csistoragecapacity.go (namespaced CSIStorageCapacity)."""
    spec = number(1, 0) + number(2, 1) + field(3, "Ephemeral")
    driver = _post(up, "/apis/storage.k8s.io/v1/csidrivers",
                   envelope("storage.k8s.io/v1", "CSIDriver", field(1, field(1, "inline.csi.example.com"))
                            + field(2, spec)))
    # SetDefaults_CSIDriverSpec fills what was left unset; the explicit false stays false
    assert (driver["spec"]["attachRequired"], driver["spec"]["podInfoOnMount"],
            driver["spec"]["volumeLifecycleModes"]) == (False, True, ["Ephemeral"])
    assert (driver["spec"]["storageCapacity"], driver["spec"]["fsGroupPolicy"],
            driver["spec"]["requiresRepublish"]) == (False, "ReadWriteOnceWithFSType", False)
    code, patched = up.json("PATCH", "/apis/storage.k8s.io/v1/csidrivers/inline.csi.example.com",
                            {"metadata": {"labels": {"patched": "yes"}}}, "application/merge-patch+json")
    assert code == 200 and patched["metadata"]["labels"] == {"patched": "yes"}
    topology = field(1, field(1, "topology.kubernetes.io/zone") + field(2, "z1"))
    capacity = field(1, field(1, "csc-1")) + field(2, topology) + field(3, "sc") + field(4, field(1, "1Gi"))
    base = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"
    got = _post(up, base, envelope("storage.k8s.io/v1", "CSIStorageCapacity", capacity))
    assert (got["nodeTopology"], got["storageClassName"], got["capacity"]) == (
        {"matchLabels": {"topology.kubernetes.io/zone": "z1"}}, "sc", "1Gi")
    _, listed = up.json("GET", "/apis/storage.k8s.io/v1/csistoragecapacities")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["csc-1"]
    code, patched = up.json("PATCH", f"{base}/csc-1", {"capacity": "2Gi"}, "application/merge-patch+json")
    assert code == 200 and patched["capacity"] == "2Gi"
    assert up.json("DELETE", base)[0] == 200
    assert up.json("GET", f"{base}/csc-1")[0] == 404


def test_custom_resource_protobuf_body_is_refused(up: Live) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "crontabs.stable.example.com"},
           "spec": {"group": "stable.example.com", "scope": "Namespaced",
                    "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}]}}
    # the CRD itself in protobuf is read like any built-in kind
    got = _post(up, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                encode("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd))
    assert got["spec"]["versions"][0]["schema"] == crd["spec"]["versions"][0]["schema"]
    up.wait_for("the CRD to be served", lambda: up.json(
        "GET", "/apis/stable.example.com/v1/namespaces/default/crontabs")[0] == 200)
    body = envelope("stable.example.com/v1", "CronTab", field(1, field(1, "c1")))
    code, _, raw = up.request("POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", body, PB)
    assert code == 415
    assert json.loads(raw)["message"] == ("the body of the request was in an unknown format - accepted media "
                                          "types include: application/json, application/yaml")
    # whatever the envelope names: the custom resource's endpoint has no protobuf serializer at all
    body = envelope("v1", "ConfigMap", field(1, field(1, "c1")))
    code, _, raw = up.request("PUT", "/apis/stable.example.com/v1/namespaces/default/crontabs/c1", body, PB)
    assert (code, json.loads(raw)["reason"]) == (415, "UnsupportedMediaType")


def test_lease_as_e2e_test_writes_it(up: Live) -> None:
    """test/e2e/common/node/lease.go "lease API should be available": MicroTimes at the Go zero time plus a few
    seconds (year 1), read back equal, then an update, a strategic merge patch and a deletecollection."""
    base = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    spec = {"holderIdentity": "holder", "leaseDurationSeconds": 30, "acquireTime": "0001-01-01T00:00:02.000000Z",
            "renewTime": "0001-01-01T00:00:05.000000Z", "leaseTransitions": 0}
    created = _post(up, base, encode("coordination.k8s.io/v1", "Lease", {"metadata": {"name": "lease"},
                                                                         "spec": spec}))
    assert created["spec"] == spec and up.json("GET", f"{base}/lease")[1]["spec"] == spec
    created["spec"] = {**spec, "holderIdentity": "holder2", "acquireTime": "0001-01-01T00:00:20.000000Z",
                       "leaseTransitions": 1}
    code, _, raw = up.request("PUT", f"{base}/lease", encode("coordination.k8s.io/v1", "Lease", created), PB)
    assert code == 200, raw
    assert up.json("GET", f"{base}/lease")[1]["spec"] == created["spec"]
    patch = {"spec": {"holderIdentity": "holder3", "acquireTime": "0001-01-01T00:00:50.000000Z"}}
    code, patched = up.json("PATCH", f"{base}/lease", patch, "application/strategic-merge-patch+json")
    assert code == 200 and patched["spec"]["acquireTime"] == "0001-01-01T00:00:50.000000Z", patched
    _post(up, base, encode("coordination.k8s.io/v1", "Lease", {
        "metadata": {"name": "lease2", "labels": {"deletecollection": "true"}}, "spec": spec}))
    assert up.json("DELETE", f"{base}?labelSelector=deletecollection%3Dtrue")[0] == 200
    assert [i["metadata"]["name"] for i in up.json("GET", base)[1]["items"]] == ["lease"]


def test_status_writes_and_other_conformance_kinds(up: Live) -> None:
    """Status writes in protobuf (client-go UpdateStatus) on FlowSchema, ValidatingAdmissionPolicy and
    PersistentVolume (test/e2e/apimachinery/flowcontrol.go, validatingadmissionpolicy.go,
    test/e2e/storage/persistent_volumes.go), and an EndpointSlice as endpointslice.go creates it."""
    fs = _post(up, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", encode(
        "flowcontrol.apiserver.k8s.io/v1", "FlowSchema", {
            "metadata": {"name": "e2e-fs"}, "spec": {
                "priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 1000,
                "rules": [{"subjects": [{"kind": "User", "user": {"name": "e2e"}}],
                           "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}))
    fs["status"] = {"conditions": [{"type": "StatusUpdated", "status": "True", "reason": "E2E", "message": "Set"}]}
    code, _, raw = up.request("PUT", "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/e2e-fs/status",
                              encode("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", fs), PB)
    assert code == 200, raw
    assert json.loads(raw)["status"]["conditions"][0]["type"] == "StatusUpdated"
    vap = _post(up, f"{ADMISSION}/validatingadmissionpolicies", encode(
        "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", {
            "metadata": {"name": "e2e-vap"}, "spec": {
                "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"],
                                                        "apiVersions": ["v1"], "resources": ["deployments"]}]},
                "validations": [{"expression": "object.spec.replicas > 1"}]}}))
    assert (vap["spec"]["failurePolicy"], vap["spec"]["matchConstraints"]["matchPolicy"],
            vap["spec"]["matchConstraints"]["resourceRules"][0]["scope"]) == ("Fail", "Equivalent", "*")
    vap["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "E2E", "message": "",
                                     "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    code, _, raw = up.request("PUT", f"{ADMISSION}/validatingadmissionpolicies/e2e-vap/status",
                              encode("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", vap), PB)
    assert code == 200, raw
    assert json.loads(raw)["status"]["conditions"][0]["type"] == "Ready"
    pv = _post(up, "/api/v1/persistentvolumes", encode("v1", "PersistentVolume", {
        "metadata": {"name": "e2e-pv"}, "spec": {"capacity": {"storage": "3M"}, "accessModes": ["ReadWriteOnce"],
                                                 "persistentVolumeReclaimPolicy": "Retain",
                                                 "hostPath": {"path": "/tmp/e2e"}}}))
    assert pv["spec"]["hostPath"] == {"path": "/tmp/e2e", "type": ""}   # SetDefaults_HostPathVolumeSource
    pv = up.json("GET", "/api/v1/persistentvolumes/e2e-pv")[1]   # the PV controller may have written it since
    pv["status"] = {"phase": "Available", "message": "updated by e2e"}
    code, _, raw = up.request("PUT", "/api/v1/persistentvolumes/e2e-pv/status", encode("v1", "PersistentVolume", pv),
                              PB)
    assert code == 200, raw
    assert json.loads(raw)["status"]["message"] == "updated by e2e"
    slice_ = _post(up, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", encode(
        "discovery.k8s.io/v1", "EndpointSlice", {
            "metadata": {"name": "e2e-slice", "labels": {"kubernetes.io/service-name": "e2e"}},
            "addressType": "IPv4", "endpoints": [{"addresses": ["1.2.3.4", "5.6.7.8"]}], "ports": None}))
    assert (slice_["endpoints"], slice_["ports"]) == ([{"addresses": ["1.2.3.4", "5.6.7.8"], "conditions": {}}], None)


def test_default_ingress_class(up: Live) -> None:
    """test/e2e/network/ingressclass.go [Serial]: an Ingress without a class gets the default IngressClass;
    with two defaults created in the same second, the lower name (DefaultIngressClass admission, 1.25+)."""
    for name in ("default-b", "default-a"):
        _post(up, "/apis/networking.k8s.io/v1/ingressclasses", encode("networking.k8s.io/v1", "IngressClass", {
            "metadata": {"name": name, "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
            "spec": {"controller": "example.com/c"}}))
    ingresses = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
    backend = {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}
    got = _post(up, ingresses, encode("networking.k8s.io/v1", "Ingress", {"metadata": {"name": "plain"},
                                                                          "spec": backend}))
    assert got["spec"]["ingressClassName"] == "default-a"
    annotated = {"metadata": {"name": "annotated", "annotations": {"kubernetes.io/ingress.class": "other"}},
                 "spec": backend}
    assert "ingressClassName" not in _post(up, ingresses, encode("networking.k8s.io/v1", "Ingress", annotated))["spec"]
    for name in ("default-a", "default-b"):
        up.json("DELETE", f"/apis/networking.k8s.io/v1/ingressclasses/{name}")

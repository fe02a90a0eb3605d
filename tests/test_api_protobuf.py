"""Protobuf request bodies, decoded as the JSON body of the same request.

The fixtures are bodies real kubectl 1.32 and 1.33 sent to a recording test server; for each `kubectl create`
the expected dict is what the same kubectl printed for the same command with `--dry-run=client -o json` (the
object it would have sent as JSON). The others are checked against the command's flags and the served objects.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from podlife.api.errors import ApiError
from podlife.apiserver.protobuf import MAGIC, decode, go_duration, supported

from tests.pbwire import encode, envelope, field, number, varint

FIXTURES = Path(__file__).parent / "fixtures" / "protobuf"
PAIRED = sorted(p.stem for p in FIXTURES.glob("*.json"))


def body(name: str) -> bytes:
    return (FIXTURES / f"{name}.pb").read_bytes()


def test_every_kubectl_create_fixture_is_paired():
    assert len(PAIRED) == 21


@pytest.mark.parametrize("name", PAIRED)
def test_decodes_as_kubectl_would_have_sent_json(name):
    assert decode(body(name)) == json.loads((FIXTURES / f"{name}.json").read_text())


def test_pointer_zeros_survive_and_value_zeros_are_omitted():
    dep = decode(body("v1.32-create-deployment"))
    assert dep["spec"]["replicas"] == 0                   # *int32: --replicas=0 is kept
    assert "minReadySeconds" not in dep["spec"]           # int32 omitempty: zero is dropped
    assert dep["metadata"]["creationTimestamp"] is None   # metav1.Time zero is null
    assert dep["status"] == {} and dep["spec"]["strategy"] == {}   # structs are never omitted


def test_auth_can_i():
    assert decode(body("v1.32-auth-can-i")) == {
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
        "status": {"allowed": False}}
    review = decode(body("v1.33-auth-can-i-subresource"))   # auth can-i list deployments.apps --subresource=scale
    assert review["spec"]["resourceAttributes"] == {"namespace": "default", "verb": "list", "group": "apps",
                                                    "resource": "deployments", "subresource": "scale"}


def test_create_token():
    # kubectl create token sa1 --duration=10m: audiences and boundObjectRef have no omitempty (null)
    assert decode(body("v1.33-create-token")) == {
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": None},
        "spec": {"audiences": None, "expirationSeconds": 600, "boundObjectRef": None},
        "status": {"token": "", "expirationTimestamp": None}}


def test_debug_copy_keeps_the_source_pod():
    # kubectl debug pod/p1 -it --copy-to=p1-copy --image=busybox --share-processes, p1 served by the test server
    pod = decode(body("v1.32-debug-copy-to"))
    spec = pod["spec"]
    app, debugger = spec["containers"]
    assert app["env"][1] == {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    assert app["livenessProbe"] == {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10}   # IntOrString
    assert app["resources"] == {"limits": {"cpu": "500m", "memory": "128Mi"}}                    # Quantity
    assert app["securityContext"] == {"privileged": False, "runAsUser": 0}                       # pointers
    assert spec["volumes"] == [{"name": "v", "emptyDir": {}}]                                    # inlined source
    assert (spec["terminationGracePeriodSeconds"], spec["automountServiceAccountToken"]) == (0, False)
    assert spec["shareProcessNamespace"] is True
    assert debugger["image"] == "busybox" and debugger["stdin"] is True and debugger["tty"] is True
    assert debugger["name"].startswith("debugger-")


def test_envelope_errors():
    with pytest.raises(ApiError) as e:
        decode(b'{"kind":"Pod"}')
    assert e.value.code == 400
    with pytest.raises(ApiError) as e:
        decode(body("v1.32-create-deployment")[:40])
    assert (e.value.code, e.value.reason) == (400, "BadRequest")
    # a kind outside the table: the JSON and YAML media types are what the server can read
    envelope = MAGIC + bytes([0x0A, 0x14, 0x0A, 0x08]) + b"stable/x" + bytes([0x12, 0x08]) + b"Widget42"
    with pytest.raises(ApiError) as e:
        decode(envelope)
    assert (e.value.code, e.value.reason) == (415, "UnsupportedMediaType")
    assert e.value.message.endswith("accepted media types include: application/json, application/yaml")
    assert supported("apps/v1", "Deployment") and not supported("stable/x", "Widget42")


def test_go_duration():
    assert [go_duration(n) for n in (0, 1, 1_500, 300_000_000, 90 * 10**9, 3_600 * 10**9, 3_723_500_000_000)] == [
        "0s", "1ns", "1.5µs", "300ms", "1m30s", "1h0m0s", "1h2m3.5s"]


# ------------------------------------------------------------------------------------------------ every kind served

def _served_kinds() -> list[tuple[int, str, str]]:
    from podlife.apiserver.resources import builtin_resources
    from podlife.versions import NEWEST_MINOR, OLDEST_MINOR

    return sorted({(minor, r.api_version, r.kind) for minor in range(OLDEST_MINOR, NEWEST_MINOR + 1)
                   for r in builtin_resources(minor)})


# 1.37 kinds whose protobuf field numbers podlife has not taken from upstream yet: their bodies get the 415
NOT_YET = {("certificates.k8s.io/v1", "PodCertificateRequest"), ("resource.k8s.io/v1", "DeviceTaintRule")}


def test_every_built_in_kind_in_discovery_reads_protobuf():
    """client-go sends protobuf for every built-in kind (e2e.test's default content type); a kind without a
    table entry would answer its create with 415."""
    missing = {(minor, av, kind) for minor, av, kind in _served_kinds()
               if not supported(av, kind) and (av, kind) not in NOT_YET}
    assert missing == set()
    assert {(av, kind) for _, av, kind in _served_kinds() if not supported(av, kind)} == NOT_YET


def test_every_message_the_table_names_is_in_the_table():
    from podlife.apiserver.protobuf import _SPECIAL, _UNIONS, _table

    table = _table()
    named = {f.type for fields in table.values() for f in fields.values() if "." in f.type}
    assert named - set(table) - _SPECIAL - _UNIONS == set()


def test_a_custom_resource_body_is_unsupported_media_type():
    # apiextensions-apiserver serves custom resources as JSON and YAML only (crdHandler's negotiated serializer)
    body = envelope("stable.example.com/v1", "CronTab", field(1, field(1, "c1")))
    with pytest.raises(ApiError) as e:
        decode(body)
    assert (e.value.code, e.value.reason) == (415, "UnsupportedMediaType")
    assert e.value.message == ("the body of the request was in an unknown format - accepted media types include: "
                               "application/json, application/yaml")


# -------------------------------------------------------------------------------------------- numbers pinned by hand

META = field(1, field(1, "x"))   # ObjectMeta{name: x}
X = {"name": "x", "creationTimestamp": None}


def test_validating_webhook_configuration_as_e2e_test_sends_it():
    """test/e2e/apimachinery/webhook.go registerWebhook: a service reference with a CA bundle, one rule, a
    namespace selector, sideEffects None, admissionReviewVersions v1 and v1beta1, a timeout."""
    rule = field(1, "CREATE") + field(2, field(1, "") + field(2, "v1") + field(3, "pods") + field(4, "*"))
    service = field(1, "ns") + field(2, "e2e-test-webhook") + field(3, "/pods") + number(4, 8443)
    selector = field(2, field(1, "webhook-e2e") + field(2, "In") + field(3, "true"))
    hook = (field(1, "deny-pod.k8s.io") + field(2, field(1, service) + field(2, b"CA")) + field(3, rule)
            + field(4, "Fail") + field(5, selector) + field(6, "None") + number(7, 30) + field(8, "v1")
            + field(8, "v1beta1") + field(9, "Equivalent") + field(10, b"")
            + field(11, field(1, "m") + field(2, "true")))
    got = decode(envelope("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
                          META + field(2, hook)))
    assert got == {
        "kind": "ValidatingWebhookConfiguration", "apiVersion": "admissionregistration.k8s.io/v1", "metadata": X,
        "webhooks": [{
            "name": "deny-pod.k8s.io",
            "clientConfig": {"service": {"namespace": "ns", "name": "e2e-test-webhook", "path": "/pods",
                                         "port": 8443}, "caBundle": "Q0E="},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                       "scope": "*"}],
            "failurePolicy": "Fail", "matchPolicy": "Equivalent",
            "namespaceSelector": {"matchExpressions": [{"key": "webhook-e2e", "operator": "In",
                                                        "values": ["true"]}]},
            "objectSelector": {}, "sideEffects": "None", "timeoutSeconds": 30,
            "admissionReviewVersions": ["v1", "v1beta1"], "matchConditions": [{"name": "m", "expression": "true"}]}]}


def test_mutating_webhook_numbers_differ_from_validating():
    # MutatingWebhook: objectSelector 11, reinvocationPolicy 10, matchConditions 12
    hook = (field(1, "adding-configmap-data-stage-1.k8s.io") + field(2, field(3, "https://127.0.0.1/m"))
            + field(6, "None") + field(8, "v1") + field(10, "IfNeeded") + field(11, b""))
    got = decode(envelope("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", META + field(2, hook)))
    assert got["webhooks"] == [{"name": "adding-configmap-data-stage-1.k8s.io",
                                "clientConfig": {"url": "https://127.0.0.1/m"}, "objectSelector": {},
                                "sideEffects": "None", "admissionReviewVersions": ["v1"],
                                "reinvocationPolicy": "IfNeeded"}]


def test_ingress_class_as_e2e_test_sends_it():
    """test/e2e/network/ingressclass.go: a controller and namespaced parameters."""
    params = field(1, "k8s.io") + field(2, "IngressParameters") + field(3, "p") + field(4, "Namespace") + \
        field(5, "ns")
    got = decode(envelope("networking.k8s.io/v1", "IngressClass",
                          META + field(2, field(1, "example.com/controller") + field(2, params))))
    assert got["spec"] == {"controller": "example.com/controller",
                           "parameters": {"apiGroup": "k8s.io", "kind": "IngressParameters", "name": "p",
                                          "scope": "Namespace", "namespace": "ns"}}
    # scope is a *string without omitempty: null when unset
    got = decode(envelope("networking.k8s.io/v1", "IngressClass",
                          META + field(2, field(1, "c") + field(2, field(2, "K") + field(3, "n")))))
    assert got["spec"]["parameters"] == {"kind": "K", "name": "n", "scope": None}


def test_csi_driver_keeps_explicit_false_pointers():
    """test/e2e/storage/csi_inline.go: attachRequired false and podInfoOnMount true are *bool (false is kept,
    defaulting fills the unset ones); volumeLifecycleModes Ephemeral; a token request."""
    spec = (number(1, 0) + number(2, 1) + field(3, "Ephemeral") + field(5, "File")
            + field(6, field(1, "aud") + number(2, 3600)) + number(7, 0))
    got = decode(envelope("storage.k8s.io/v1", "CSIDriver", META + field(2, spec)))
    assert got["spec"] == {"attachRequired": False, "podInfoOnMount": True, "volumeLifecycleModes": ["Ephemeral"],
                           "fsGroupPolicy": "File", "tokenRequests": [{"audience": "aud", "expirationSeconds": 3600}],
                           "requiresRepublish": False}
    assert decode(envelope("storage.k8s.io/v1", "CSIDriver", META))["spec"] == {}   # spec has no omitempty


def test_csi_storage_capacity_as_e2e_test_sends_it():
    """test/e2e/storage/csistoragecapacity.go: a node topology, a storage class, a capacity."""
    topology = field(1, field(1, "topology.example.com/zone") + field(2, "z1"))
    body = META + field(2, topology) + field(3, "sc") + field(4, field(1, "1Gi")) + field(5, field(1, "100Mi"))
    got = decode(envelope("storage.k8s.io/v1", "CSIStorageCapacity", body))
    assert got == {"kind": "CSIStorageCapacity", "apiVersion": "storage.k8s.io/v1", "metadata": X,
                   "nodeTopology": {"matchLabels": {"topology.example.com/zone": "z1"}},
                   "storageClassName": "sc", "capacity": "1Gi", "maximumVolumeSize": "100Mi"}


def test_lease_micro_time_and_custom_resource_definition_schema_unions():
    spec = field(1, "holder") + number(2, 15) + field(3, number(1, 1_700_000_000) + number(2, 123_456_000))
    got = decode(envelope("coordination.k8s.io/v1", "Lease", META + field(2, spec)))
    assert got["spec"] == {"holderIdentity": "holder", "leaseDurationSeconds": 15,
                           "acquireTime": "2023-11-14T22:13:20.123456Z"}
    # JSONSchemaProps: properties map, additionalProperties false (OrBool), items (OrArray), maximum (double)
    replicas = field(5, "integer") + varint(9 << 3 | 1) + struct.pack("<d", 10.0) + field(8, field(1, "1"))
    props = (field(5, "object") + field(29, field(1, "replicas") + field(2, replicas))
             + field(30, number(1, 0)) + field(24, field(1, field(5, "string"))))
    version = field(1, "v1") + number(2, 1) + number(3, 1) + field(4, field(1, props)) + field(5, field(1, b""))
    names = field(1, "crontabs") + field(4, "CronTab")
    spec = field(1, "stable.example.com") + field(3, names) + field(4, "Namespaced") + field(7, version)
    got = decode(envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", META + field(2, spec)))
    assert got["spec"] == {
        "group": "stable.example.com", "names": {"plural": "crontabs", "kind": "CronTab"}, "scope": "Namespaced",
        "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                      "schema": {"openAPIV3Schema": {
                          "type": "object", "items": {"type": "string"},
                          "properties": {"replicas": {"type": "integer", "default": 1, "maximum": 10}},
                          "additionalProperties": False}}}]}
    assert got["status"] == {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
                             "storedVersions": None}


# ------------------------------------------------------------------------------------------------ round trips

# each newly covered kind in its JSON form (as encoding/json writes the Go struct: zero values of fields without
# omitempty present, structs never omitted), encoded as client-go would send it, must decode to itself
ROUND_TRIPS: list[tuple[str, str, dict]] = [
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", {
        "metadata": X, "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {"resourceRules": [{"resourceNames": ["a"], "operations": ["CREATE"],
                                                    "apiGroups": ["apps"], "apiVersions": ["v1"],
                                                    "resources": ["deployments"]}],
                                 "matchPolicy": "Equivalent"},
            "validations": [{"expression": "object.spec.replicas <= 5", "message": "too many"}],
            "failurePolicy": "Fail", "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}],
            "variables": [{"name": "v", "expression": "1"}]},
        "status": {"observedGeneration": 1, "typeChecking": {"expressionWarnings": [{"fieldRef": "f", "warning": "w"}]},
                   "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z",
                                   "reason": "R", "message": ""}]}}),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", {
        "metadata": X, "spec": {"policyName": "p", "paramRef": {"name": "c", "parameterNotFoundAction": "Deny"},
                                "validationActions": ["Deny", "Audit"]}}),
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicy", {
        "metadata": X, "spec": {"mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[]"}}],
                                "reinvocationPolicy": "Never"}}),
    ("admissionregistration.k8s.io/v1", "MutatingAdmissionPolicyBinding", {"metadata": X, "spec": {"policyName": "p"}}),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition", {
        "metadata": X, "spec": {
            "group": "g.example.com", "names": {"plural": "ws", "singular": "w", "shortNames": ["w"], "kind": "W",
                                                 "listKind": "WList", "categories": ["all"]},
            "scope": "Cluster", "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"namespace": "n", "name": "s", "port": 443}, "caBundle": "Q0E="},
                "conversionReviewVersions": ["v1"]}},
            "versions": [{"name": "v1", "served": True, "storage": False, "deprecated": True,
                          "deprecationWarning": "old",
                          "schema": {"openAPIV3Schema": {
                              "type": "object", "x-kubernetes-preserve-unknown-fields": True,
                              "required": ["spec"], "enum": [{"a": 1}, "b"], "minLength": 0,
                              "anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True,
                              "x-kubernetes-validations": [{"rule": "self.a > 0", "reason": "FieldValueInvalid"}],
                              "items": [{"type": "string"}, {"type": "integer"}],
                              "additionalProperties": {"type": "string"},
                              "dependencies": {"a": ["b"], "c": {"type": "object"}}}},
                          "subresources": {"scale": {"specReplicasPath": ".spec.r", "statusReplicasPath": ".status.r",
                                                     "labelSelectorPath": ".status.s"}},
                          "additionalPrinterColumns": [{"name": "R", "type": "integer", "jsonPath": ".spec.r"}],
                          "selectableFields": [{"jsonPath": ".spec.color"}]}]},
        "status": {"conditions": [{"type": "Established", "status": "True", "lastTransitionTime": None}],
                   "acceptedNames": {"plural": "ws", "kind": "W"}, "storedVersions": ["v1"]}}),
    ("apiregistration.k8s.io/v1", "APIService", {
        "metadata": X, "spec": {"service": {"namespace": "n", "name": "s", "port": 443}, "group": "metrics.k8s.io",
                                "version": "v1beta1", "insecureSkipTLSVerify": True, "groupPriorityMinimum": 100,
                                "versionPriority": 0},
        "status": {"conditions": [{"type": "Available", "status": "False", "lastTransitionTime": None,
                                   "reason": "MissingEndpoints"}]}}),
    ("apps/v1", "ControllerRevision", {"metadata": X, "data": {"spec": {"template": {}}}, "revision": 0}),
    ("certificates.k8s.io/v1", "ClusterTrustBundle", {"metadata": X, "spec": {"trustBundle": ""}}),
    ("coordination.k8s.io/v1", "Lease", {
        "metadata": X, "spec": {"holderIdentity": "", "leaseDurationSeconds": 0,
                                "renewTime": "2024-05-01T10:00:00.500000Z",
                                "leaseTransitions": 0, "strategy": "OldestEmulationVersion", "preferredHolder": "p"}}),
    ("discovery.k8s.io/v1", "EndpointSlice", {
        "metadata": X, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "conditions": {"ready": False, "serving": True, "terminating": False},
                       "targetRef": {"kind": "Pod", "namespace": "n", "name": "p", "uid": "u"}, "nodeName": "node-1",
                       "zone": "z", "hints": {"forZones": [{"name": "z"}], "forNodes": [{"name": "node-1"}]}},
                      {"addresses": ["10.0.0.2"], "conditions": {}}],
        "ports": [{"name": "", "protocol": "TCP", "port": 80, "appProtocol": "http"}]}),
    ("discovery.k8s.io/v1", "EndpointSlice", {"metadata": X, "addressType": "FQDN", "endpoints": None,
                                              "ports": None}),
    ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", {
        "metadata": X, "spec": {
            "priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 0,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "n", "name": "*"}},
                                    {"kind": "Group", "group": {"name": "system:authenticated"}},
                                    {"kind": "User", "user": {"name": "u"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
                                          "namespaces": ["*"]},
                                         {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                                          "namespaces": None}],
                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}]},
        "status": {}}),
    ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration", {
        "metadata": X, "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 0, "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 6, "queueLengthLimit": 50}}}},
        "status": {}}),
    ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration", {
        "metadata": X, "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": None,
                                                               "limitResponse": {"type": "Reject"}}},
        "status": {}}),
    ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration", {
        "metadata": X, "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0}}, "status": {}}),
    # the beta versions (field numbers as v1's; v1beta1/v1beta2 name field 1 assuredConcurrencyShares, and it and
    # v1beta3's are not pointers: a zero is written)
    *((f"flowcontrol.apiserver.k8s.io/{v}", "FlowSchema", {
        "metadata": X, "spec": {
            "priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 9900,
            "distinguisherMethod": {"type": "ByNamespace"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:serviceaccounts"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                          "clusterScope": True, "namespaces": ["*"]}]}]},
        "status": {"conditions": [{"type": "Dangling", "status": "False", "lastTransitionTime": None,
                                   "reason": "Found", "message": "m"}]}}) for v in ("v1beta1", "v1beta2", "v1beta3")),
    *((f"flowcontrol.apiserver.k8s.io/{v}", "PriorityLevelConfiguration", {
        "metadata": X, "spec": {"type": "Limited", "limited": {
            shares: 0, "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 6,
                                                                      "queueLengthLimit": 50}},
            "lendablePercent": 50, "borrowingLimitPercent": 20}},
        "status": {}}) for v, shares in (("v1beta1", "assuredConcurrencyShares"),
                                         ("v1beta2", "assuredConcurrencyShares"),
                                         ("v1beta3", "nominalConcurrencyShares"))),
    *((f"flowcontrol.apiserver.k8s.io/{v}", "PriorityLevelConfiguration", {
        "metadata": X, "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
        "status": {}}) for v in ("v1beta2", "v1beta3")),
    # beta versions served until 1.21 and 1.26, with their v1's field numbers (v1beta1 Lease has no strategy)
    ("coordination.k8s.io/v1beta1", "Lease", {
        "metadata": X, "spec": {"holderIdentity": "h", "leaseDurationSeconds": 40,
                                "renewTime": "2021-05-01T10:00:00.500000Z", "leaseTransitions": 2}}),
    ("storage.k8s.io/v1beta1", "StorageClass", {
        "metadata": X, "provisioner": "example.com/p", "parameters": {"type": "ssd"}, "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate", "allowVolumeExpansion": True}),
    ("storage.k8s.io/v1beta1", "CSIStorageCapacity", {
        "metadata": X, "nodeTopology": {"matchLabels": {"zone": "a"}}, "storageClassName": "sc",
        "capacity": "10Gi"}),
    ("networking.k8s.io/v1", "IngressClass", {"metadata": X, "spec": {"controller": "c"}}),
    ("networking.k8s.io/v1", "NetworkPolicy", {
        "metadata": X, "spec": {
            "podSelector": {},
            "ingress": [{"ports": [{"protocol": "TCP", "port": 80, "endPort": 90}, {"port": "http"}],
                         "from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
                                  {"namespaceSelector": {"matchLabels": {"a": "b"}}, "podSelector": {}}]}],
            "egress": [{}], "policyTypes": ["Ingress", "Egress"]}}),
    ("networking.k8s.io/v1", "IPAddress", {
        "metadata": X, "spec": {"parentRef": {"resource": "services", "namespace": "n", "name": "s"}}}),
    ("networking.k8s.io/v1", "ServiceCIDR", {"metadata": X, "spec": {"cidrs": ["10.96.0.0/12"]}, "status": {}}),
    ("storage.k8s.io/v1", "StorageClass", {
        "metadata": X, "provisioner": "example.com/p", "parameters": {"type": "ssd"}, "reclaimPolicy": "Retain",
        "mountOptions": ["ro"], "allowVolumeExpansion": False, "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}]}),
    ("storage.k8s.io/v1", "StorageClass", {"metadata": X, "provisioner": ""}),
    ("storage.k8s.io/v1", "CSINode", {
        "metadata": X, "spec": {"drivers": [{"name": "d", "nodeID": "n", "topologyKeys": ["zone"],
                                             "allocatable": {"count": 0}}]}}),
    ("storage.k8s.io/v1", "VolumeAttachment", {
        "metadata": X, "spec": {"attacher": "a", "source": {"persistentVolumeName": "pv"}, "nodeName": "node-1"},
        "status": {"attached": False, "attachError": {"time": "2024-01-01T00:00:00Z", "message": "m",
                                                      "errorCode": 0}}}),
    ("storage.k8s.io/v1", "VolumeAttributesClass", {"metadata": X, "driverName": "d", "parameters": {"iops": "1"}}),
    ("storagemigration.k8s.io/v1", "StorageVersionMigration", {
        "metadata": X, "spec": {"resource": {"group": "", "resource": "secrets"}},
        "status": {"conditions": [{"type": "Running", "status": "True", "lastTransitionTime": None, "reason": "",
                                   "message": ""}], "resourceVersion": "42"}}),
    ("v1", "ComponentStatus", {"metadata": X, "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}),
    ("v1", "LimitRange", {"metadata": X, "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"},
                                                              "default": {"memory": "64Mi"}}]}}),
    ("v1", "Node", {
        "metadata": X, "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"], "unschedulable": True,
                                "taints": [{"key": "k", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "4", "pods": "110"}, "conditions": [{
            "type": "Ready", "status": "True", "lastHeartbeatTime": "2024-01-01T00:00:00Z",
            "lastTransitionTime": None, "reason": "KubeletReady"}],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "m", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                         "containerRuntimeVersion": "", "kubeletVersion": "v1.33.0", "kubeProxyVersion": "",
                         "operatingSystem": "linux", "architecture": "amd64", "swap": {"capacity": 0}},
            "images": [{"names": ["nginx"], "sizeBytes": 1}], "volumesAttached": [{"name": "v", "devicePath": ""}],
            "runtimeHandlers": [{"name": "runc", "features": {"recursiveReadOnlyMounts": True,
                                                           "userNamespaces": False}}],
            "features": {"supplementalGroupsPolicy": True}, "declaredFeatures": ["A"]}}),
    ("v1", "PersistentVolume", {
        "metadata": X, "spec": {
            "capacity": {"storage": "1Gi"}, "csi": {"driver": "d", "volumeHandle": "h", "readOnly": True,
                                                    "nodePublishSecretRef": {"name": "s", "namespace": "n"}},
            "accessModes": ["ReadWriteOnce"], "claimRef": {"namespace": "n", "name": "c"},
            "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "sc", "volumeMode": "Filesystem",
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "k", "operator": "In", "values": ["v"]}]}]}}},
        "status": {"phase": "Available", "lastPhaseTransitionTime": "2024-01-01T00:00:00Z"}}),
    ("v1", "PersistentVolume", {
        "metadata": X, "spec": {"local": {"path": "/mnt"}, "azureFile": {"secretName": "s", "shareName": "x",
                                                                          "secretNamespace": None},
                                "scaleIO": {"gateway": "g", "system": "s", "secretRef": None}},
        "status": {}}),
    ("resource.k8s.io/v1", "DeviceClass", {
        "metadata": X, "spec": {"selectors": [{"cel": {"expression": "device.driver == 'd'"}}],
                                "config": [{"opaque": {"driver": "d", "parameters": {"a": 1}}}],
                                "extendedResourceName": "example.com/gpu"}}),
    ("resource.k8s.io/v1", "ResourceClaim", {
        "metadata": X,
        "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                              "deviceClassName": "c", "allocationMode": "ExactCount", "count": 2,
                                              "adminAccess": False, "tolerations": [{"key": "k", "operator": "Exists"}],
                                              "capacity": {"requests": {"memory": "1Gi"}}}},
                                          {"name": "f", "firstAvailable": [{"name": "s", "deviceClassName": "c"}]}],
                             "constraints": [{"requests": ["r"], "matchAttribute": "example.com/numa"}],
                             "config": [{"requests": ["r"], "opaque": {"driver": "d", "parameters": {}}}]}},
        "status": {"allocation": {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p",
                                                            "device": "g0", "consumedCapacity": {"memory": "1Gi"}}],
                                              "config": [{"source": "FromClass", "opaque": {"driver": "d",
                                                                                             "parameters": None}}]},
                                  "allocationTimestamp": "2024-01-01T00:00:00Z"},
                   "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}],
                   "devices": [{"driver": "d", "pool": "p", "device": "g0",
                                "networkData": {"interfaceName": "eth1", "ips": ["10.0.0.1/24"]}}]}}),
    ("resource.k8s.io/v1", "ResourceClaimTemplate", {
        "metadata": X, "spec": {"metadata": {"labels": {"a": "b"}, "creationTimestamp": None},
                                "spec": {"devices": {}}}}),
    ("resource.k8s.io/v1", "ResourceSlice", {
        "metadata": X, "spec": {
            "driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "node-1",
            "devices": [{"name": "g0", "attributes": {"model": {"string": "a100"}, "index": {"int": 0},
                                                      "ok": {"bool": False}},
                         "capacity": {"memory": {"value": "40Gi", "requestPolicy": {
                             "default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}}}},
                         "consumesCounters": [{"counterSet": "s", "counters": {"mem": {"value": "1"}}}],
                         "taints": [{"key": "k", "effect": "NoSchedule"}]}],
            "sharedCounters": [{"name": "s", "counters": {"mem": {"value": "8"}}}]}}),
]


@pytest.mark.parametrize("api_version,kind,obj", ROUND_TRIPS,
                         ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(ROUND_TRIPS)])
def test_round_trip(api_version, kind, obj):
    assert decode(encode(api_version, kind, obj)) == {"kind": kind, "apiVersion": api_version, **obj}


NEW_GROUPS = {"admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "coordination.k8s.io",
              "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io", "storage.k8s.io",
              "storagemigration.k8s.io"}
NEW_IN_OLD_GROUPS = {("apps/v1", "ControllerRevision"), ("certificates.k8s.io/v1", "ClusterTrustBundle"),
                     ("networking.k8s.io/v1", "IngressClass"), ("networking.k8s.io/v1", "NetworkPolicy"),
                     ("networking.k8s.io/v1", "IPAddress"), ("networking.k8s.io/v1", "ServiceCIDR"),
                     ("v1", "ComponentStatus"), ("v1", "LimitRange"), ("v1", "Node"), ("v1", "PersistentVolume")}
HAND_PINNED = {("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
               ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
               ("storage.k8s.io/v1", "CSIDriver"), ("storage.k8s.io/v1", "CSIStorageCapacity")}


def test_round_trips_cover_every_newly_covered_kind():
    newly = {(av, k) for _, av, k in _served_kinds() if supported(av, k)
             and (av.rpartition("/")[0] in NEW_GROUPS or (av, k) in NEW_IN_OLD_GROUPS)}
    assert newly - {(av, k) for av, k, _ in ROUND_TRIPS} - HAND_PINNED == set()
    assert NEW_IN_OLD_GROUPS <= newly


def test_times_before_1000_keep_a_four_digit_year():
    # e2e's Lease test: &metav1.MicroTime{Time: time.Time{}.Add(2 * time.Second)}
    seconds = -62_135_596_800 + 2   # 0001-01-01T00:00:02Z
    spec = field(3, number(1, seconds)) + field(4, number(1, seconds) + number(2, 5_000))
    got = decode(envelope("coordination.k8s.io/v1", "Lease", META + field(2, spec)))
    assert got["spec"] == {"acquireTime": "0001-01-01T00:00:02.000000Z", "renewTime": "0001-01-01T00:00:02.000005Z"}
    condition = field(1, "Ready") + field(2, "True") + field(3, number(1, seconds))
    got = decode(envelope("apiregistration.k8s.io/v1", "APIService", META + field(3, field(1, condition))))
    assert got["status"]["conditions"][0]["lastTransitionTime"] == "0001-01-01T00:00:02Z"


def test_fields_newer_than_the_table_are_skipped_and_said():
    from podlife.apiserver.protobuf import dropped_warnings

    spec = field(1, "example.com/c") + field(9, "from a newer release")
    got = decode(envelope("networking.k8s.io/v1", "IngressClass", META + field(2, spec)))
    assert got["spec"] == {"controller": "example.com/c"}
    assert dropped_warnings() == ["networking/v1.IngressClassSpec, field 9: not known to podlife's protobuf table; "
                                  "the value was dropped (send JSON to keep it)"]
    decode(envelope("networking.k8s.io/v1", "IngressClass", META))
    assert dropped_warnings() == []

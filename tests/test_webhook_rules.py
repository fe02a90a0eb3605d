"""Which requests a webhook's rules match (staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/
rules/rules.go), and which it never sees (IsExemptAdmissionConfigurationResource)."""

from __future__ import annotations

from typing import Any

import pytest

from podlife.apiserver.webhooks import Attributes, matches, response_type_error, review, rule_matches


def _attrs(resource: str = "pods", sub: str = "", namespace: str = "default", op: str = "CREATE",
           group: str = "", version: str = "v1", kind: str = "Pod") -> Attributes:
    return Attributes(op, group, version, resource, kind, bool(namespace) or resource == "namespaces", namespace,
                      "x", sub, {"username": "u", "groups": ["system:authenticated"]}, False, None)


def _rule(resources: list[str], **kw: Any) -> dict[str, Any]:
    return {"operations": kw.pop("operations", ["CREATE"]), "apiGroups": kw.pop("apiGroups", [""]),
            "apiVersions": kw.pop("apiVersions", ["v1"]), "resources": resources, **kw}


@pytest.mark.parametrize(("resources", "resource", "sub", "want"), [
    (["pods"], "pods", "", True),
    (["pods"], "pods", "status", False),      # a subresource is matched only when named
    (["pods/status"], "pods", "status", True),
    (["pods/*"], "pods", "attach", True),
    (["pods/*"], "pods", "", True),           # rules.go: sub "*" matches the resource itself too
    (["*"], "configmaps", "", True),
    (["*"], "pods", "status", False),
    (["*/*"], "pods", "status", True),
    (["*/status"], "deployments", "status", True),
    (["*/status"], "deployments", "scale", False),
])
def test_resources_and_subresources(resources: list[str], resource: str, sub: str, want: bool) -> None:
    assert rule_matches(_rule(resources), _attrs(resource, sub)) is want


def test_operations_groups_versions() -> None:
    a = _attrs("deployments", group="apps", kind="Deployment", op="UPDATE")
    assert not rule_matches(_rule(["deployments"], apiGroups=["apps"]), a)           # CREATE only
    assert rule_matches(_rule(["deployments"], apiGroups=["apps"], operations=["*"]), a)
    assert not rule_matches(_rule(["deployments"], operations=["*"]), a)              # the core group
    assert rule_matches(_rule(["deployments"], apiGroups=["*"], apiVersions=["*"], operations=["UPDATE"]), a)
    assert not rule_matches(_rule(["deployments"], apiGroups=["apps"], apiVersions=["v1beta1"],
                                  operations=["UPDATE"]), a)


def test_scope() -> None:
    namespaced, node = _attrs("pods"), _attrs("nodes", namespace="", kind="Node")
    ns = _attrs("namespaces", namespace="", kind="Namespace")
    for scope, want in (("Namespaced", (True, False, False)), ("Cluster", (False, True, True)),
                        ("*", (True, True, True))):
        got = tuple(rule_matches(_rule(["*"], scope=scope), a) for a in (namespaced, node, ns))
        assert got == want, scope


def test_webhook_configurations_are_exempt() -> None:
    hook = {"rules": [_rule(["*/*"], apiGroups=["*"], apiVersions=["*"], operations=["*"])]}
    for kind, resource in (("ValidatingWebhookConfiguration", "validatingwebhookconfigurations"),
                           ("MutatingWebhookConfiguration", "mutatingwebhookconfigurations")):
        for op in ("CREATE", "UPDATE", "DELETE"):
            a = _attrs(resource, namespace="", kind=kind, group="admissionregistration.k8s.io", op=op)
            assert not matches(hook, a, None, None, None)
    assert matches(hook, _attrs(), None, None, None)


@pytest.mark.parametrize("review_version", ["v1", "v1beta1"])
def test_review_names_its_own_version_not_the_kinds(review_version: str) -> None:
    # request/admissionreview.go: the envelope is admission.k8s.io/<the version the webhook speaks>, whatever
    # version the object's kind is served in (here a custom resource's v1alpha1)
    a = _attrs("widgets", group="example.com", version="v1alpha1", kind="Widget")
    doc = review(a, {"kind": "Widget"}, None, "uid-1", review_version)
    assert doc["apiVersion"] == f"admission.k8s.io/{review_version}"
    assert doc["request"]["kind"] == {"group": "example.com", "version": "v1alpha1", "kind": "Widget"}
    # admissionreview.go: the requester's UserInfo as authenticated
    assert doc["request"]["userInfo"] == {"username": "u", "groups": ["system:authenticated"]}


@pytest.mark.parametrize(("response", "error"), [
    ({"uid": "u", "allowed": True}, ""),
    ({"uid": "u", "allowed": False, "status": {"code": 403, "message": "no"}, "warnings": ["w"]}, ""),
    ({"uid": "u", "allowed": "yes"},
     "json: cannot unmarshal string into Go struct field AdmissionResponse.response.allowed of type bool"),
    ({"uid": 7, "allowed": True},
     "json: cannot unmarshal number into Go struct field AdmissionResponse.response.uid of type types.UID"),
    ({"uid": "u", "allowed": True, "patch": ["op"]},
     "json: cannot unmarshal array into Go struct field AdmissionResponse.response.patch of type []uint8"),
    ({"uid": "u", "allowed": False, "status": "denied"},
     "json: cannot unmarshal string into Go struct field AdmissionResponse.response.status of type v1.Status"),
    ({"uid": "u", "allowed": False, "status": {"code": "403"}},
     "json: cannot unmarshal string into Go struct field Status.response.status.code of type int32"),
    ({"uid": "u", "allowed": False, "status": {"code": 4.5}},
     "json: cannot unmarshal number 4.5 into Go struct field Status.response.status.code of type int32"),
    ({"uid": "u", "allowed": True, "warnings": ["ok", 3]},
     "json: cannot unmarshal number into Go struct field AdmissionResponse.response.warnings of type string"),
])
def test_a_response_of_the_wrong_types_is_a_failed_call(response: dict[str, Any], error: str) -> None:
    # the API server decodes the AdmissionReview into its Go types (dispatcher.go callHook: r.Do(ctx).Into);
    # a value of another type is encoding/json's UnmarshalTypeError, not a crash
    assert response_type_error(response) == error

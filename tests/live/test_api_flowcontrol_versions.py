"""flowcontrol.apiserver.k8s.io is served in the versions upstream serves by default at each minor (issue 25):
1.28 serves v1beta3 (preferred) and v1beta2, 1.29 v1 (preferred) and v1beta3, 1.32 v1 only
(pkg/controlplane/instance.go legacyBetaEnabledByDefaultResources; the deprecation guide's removals). An object
written in one version reads back in another with PriorityLevelConfiguration's concurrency shares renamed
(pkg/apis/flowcontrol/v1beta2/conversion.go) and v1beta3's zero-preserving annotation (v1beta3/conversion.go)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.live.conftest import Live

G = "/apis/flowcontrol.apiserver.k8s.io"


@pytest.fixture(scope="module")
def v128(live_factory: Callable[..., Live]) -> Live:
    return live_factory("1.28", clock="manual")


@pytest.fixture(scope="module")
def v129(live_factory: Callable[..., Live]) -> Live:
    return live_factory("1.29", clock="manual")


def _plc(api_version: str, shares_field: str, shares: int, name: str) -> dict:
    return {"apiVersion": f"flowcontrol.apiserver.k8s.io/{api_version}", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": name},
            "spec": {"type": "Limited", "limited": {shares_field: shares, "lendablePercent": 10,
                                                    "limitResponse": {"type": "Reject"}}}}


def test_discovery_at_128_lists_v1beta3_preferred_then_v1beta2(v128: Live) -> None:
    code, group = v128.json("GET", G)
    assert code == 200
    assert [v["version"] for v in group["versions"]] == ["v1beta3", "v1beta2"]
    assert group["preferredVersion"] == {"groupVersion": "flowcontrol.apiserver.k8s.io/v1beta3", "version": "v1beta3"}
    code, apis = v128.json("GET", "/apis")
    entry = next(g for g in apis["groups"] if g["name"] == "flowcontrol.apiserver.k8s.io")
    assert (entry["versions"], entry["preferredVersion"]) == (group["versions"], group["preferredVersion"])
    for version in ("v1beta3", "v1beta2"):
        code, rl = v128.json("GET", f"{G}/{version}")
        assert code == 200
        assert sorted(r["name"] for r in rl["resources"]) == [
            "flowschemas", "flowschemas/status", "prioritylevelconfigurations", "prioritylevelconfigurations/status"]
    assert v128.json("GET", f"{G}/v1")[0] == 404
    assert v128.json("GET", f"{G}/v1/flowschemas")[0] == 404
    assert v128.json("GET", f"{G}/v1beta1/flowschemas")[0] == 404


def test_plc_written_in_v1beta2_reads_back_renamed_in_v1beta3(v128: Live) -> None:
    code, made = v128.json("POST", f"{G}/v1beta2/prioritylevelconfigurations",
                           _plc("v1beta2", "assuredConcurrencyShares", 7, "pl-b2"))
    assert code == 201, made
    assert made["apiVersion"] == "flowcontrol.apiserver.k8s.io/v1beta2"
    assert made["spec"]["limited"] == {"assuredConcurrencyShares": 7, "lendablePercent": 10,
                                       "limitResponse": {"type": "Reject"}}
    code, b3 = v128.json("GET", f"{G}/v1beta3/prioritylevelconfigurations/pl-b2")
    assert code == 200
    assert b3["apiVersion"] == "flowcontrol.apiserver.k8s.io/v1beta3"
    assert b3["spec"] == {"type": "Limited", "limited": {"nominalConcurrencyShares": 7, "lendablePercent": 10,
                                                         "limitResponse": {"type": "Reject"}}}
    assert b3["metadata"]["uid"] == made["metadata"]["uid"]
    # and an update in v1beta3 shows in v1beta2
    b3["spec"]["limited"]["nominalConcurrencyShares"] = 9
    code, put = v128.json("PUT", f"{G}/v1beta3/prioritylevelconfigurations/pl-b2", b3)
    assert code == 200, put
    code, b2 = v128.json("GET", f"{G}/v1beta2/prioritylevelconfigurations/pl-b2")
    assert b2["spec"]["limited"]["assuredConcurrencyShares"] == 9
    assert "nominalConcurrencyShares" not in b2["spec"]["limited"]


def test_flowschema_list_and_watch_in_both_versions(v128: Live) -> None:
    fs = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1beta3", "kind": "FlowSchema", "metadata": {"name": "fs-b3"},
          "spec": {"priorityLevelConfiguration": {"name": "pl-b2"}, "matchingPrecedence": 500,
                   "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                              "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}]}}
    code, made = v128.json("POST", f"{G}/v1beta3/flowschemas", fs)
    assert code == 201, made
    for version in ("v1beta2", "v1beta3"):
        code, lst = v128.json("GET", f"{G}/{version}/flowschemas")
        assert code == 200
        assert lst["kind"] == "FlowSchemaList" and lst["apiVersion"] == f"flowcontrol.apiserver.k8s.io/{version}"
        item = next(i for i in lst["items"] if i["metadata"]["name"] == "fs-b3")
        assert item["spec"] == fs["spec"]
        code, _, raw = v128.request("GET", f"{G}/{version}/flowschemas?watch=true&resourceVersion=0"
                                           "&timeoutSeconds=1")
        assert code == 200
        events = [json.loads(line) for line in raw.splitlines() if line]
        added = next(e["object"] for e in events if e["object"]["metadata"]["name"] == "fs-b3")
        assert {e["type"] for e in events} == {"ADDED"}
        assert added["apiVersion"] == f"flowcontrol.apiserver.k8s.io/{version}"
        assert added["spec"] == fs["spec"]


def test_129_serves_v1_preferred_and_v1beta3_not_v1beta2(v129: Live) -> None:
    code, group = v129.json("GET", G)
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta3"]
    assert group["preferredVersion"]["version"] == "v1"
    assert v129.json("GET", f"{G}/v1beta2/flowschemas")[0] == 404
    assert v129.json("GET", f"{G}/v1beta3/flowschemas")[0] == 200


def test_129_v1_zero_shares_carry_v1beta3_annotation(v129: Live) -> None:
    from kubernetes import client, config

    api = client.FlowcontrolApiserverV1Api(config.new_client_from_config(v129.kubeconfig))
    body = _plc("v1", "nominalConcurrencyShares", 0, "pl-zero")
    made = api.create_priority_level_configuration(body)
    assert made.spec.limited.nominal_concurrency_shares == 0
    code, b3 = v129.json("GET", f"{G}/v1beta3/prioritylevelconfigurations/pl-zero")
    assert code == 200
    assert b3["metadata"]["annotations"] == {"flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares": ""}
    assert b3["spec"]["limited"]["nominalConcurrencyShares"] == 0
    # written back in v1beta3 with the annotation, v1 shows neither it nor a defaulted 30
    code, put = v129.json("PUT", f"{G}/v1beta3/prioritylevelconfigurations/pl-zero", b3)
    assert code == 200, put
    back = api.read_priority_level_configuration("pl-zero")
    assert back.metadata.annotations is None
    assert back.spec.limited.nominal_concurrency_shares == 0


def test_132_serves_v1_only(live_factory: Callable[..., Live]) -> None:
    v132 = live_factory("1.32", clock="manual")
    code, group = v132.json("GET", G)
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert v132.json("GET", f"{G}/v1beta3/flowschemas")[0] == 404
    assert v132.json("GET", f"{G}/v1/flowschemas")[0] == 200


def test_128_mandatory_configuration_is_created_at_start(v128: Live) -> None:
    code, pl = v128.json("GET", f"{G}/v1beta3/prioritylevelconfigurations/catch-all")
    assert code == 200
    assert pl["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "true"}
    assert pl["spec"] == {"type": "Limited", "limited": {"nominalConcurrencyShares": 5, "lendablePercent": 0,
                                                         "limitResponse": {"type": "Reject"}}}
    code, pl2 = v128.json("GET", f"{G}/v1beta2/prioritylevelconfigurations/catch-all")
    assert pl2["spec"]["limited"]["assuredConcurrencyShares"] == 5
    code, ex = v128.json("GET", f"{G}/v1beta3/prioritylevelconfigurations/exempt")
    assert ex["spec"] == {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}
    code, fss = v128.json("GET", f"{G}/v1beta3/flowschemas")
    by_name = {f["metadata"]["name"]: f["spec"] for f in fss["items"]}
    assert by_name["exempt"]["matchingPrecedence"] == 1
    assert by_name["exempt"]["rules"][0]["subjects"] == [{"kind": "Group", "group": {"name": "system:masters"}}]
    assert by_name["catch-all"]["matchingPrecedence"] == 10000
    assert by_name["catch-all"]["distinguisherMethod"] == {"type": "ByUser"}


# ---- the other beta versions upstream served by default (podlife.versions.SERVED_BETAS)

def test_121_serves_the_betas_removed_in_122_and_125(live_factory: Callable[..., Live]) -> None:
    v121 = live_factory("1.21", clock="manual")
    code, rbac = v121.json("GET", "/apis/rbac.authorization.k8s.io")
    assert [v["version"] for v in rbac["versions"]] == ["v1", "v1beta1"]
    assert rbac["preferredVersion"]["version"] == "v1"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1beta1", "kind": "Role", "metadata": {"name": "r"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    code, made = v121.json("POST", "/apis/rbac.authorization.k8s.io/v1beta1/namespaces/default/roles", role)
    assert code == 201, made
    assert made["apiVersion"] == "rbac.authorization.k8s.io/v1beta1"
    code, v1 = v121.json("GET", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/r")
    assert (v1["apiVersion"], v1["rules"], v1["metadata"]["uid"]) == (
        "rbac.authorization.k8s.io/v1", role["rules"], made["metadata"]["uid"])
    code, lst = v121.json("GET", "/apis/rbac.authorization.k8s.io/v1beta1/namespaces/default/roles")
    assert [(i["apiVersion"], i["metadata"]["name"]) for i in lst["items"]] == [
        ("rbac.authorization.k8s.io/v1beta1", "r")]
    # batch/v1beta1 CronJobs are the stored batch/v1 ones
    cj = {"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "cj"},
          "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
              "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}}
    code, made = v121.json("POST", "/apis/batch/v1beta1/namespaces/default/cronjobs", cj)
    assert code == 201, made
    assert made["apiVersion"] == "batch/v1beta1" and made["spec"]["concurrencyPolicy"] == "Allow"
    code, v1 = v121.json("GET", "/apis/batch/v1/namespaces/default/cronjobs/cj")
    assert (v1["apiVersion"], v1["spec"]) == ("batch/v1", made["spec"])
    code, auto = v121.json("GET", "/apis/autoscaling")
    assert [v["version"] for v in auto["versions"]] == ["v1", "v2beta2"]
    code, node = v121.json("GET", "/apis/node.k8s.io")
    assert [v["version"] for v in node["versions"]] == ["v1", "v1beta1"]
    rc = {"apiVersion": "node.k8s.io/v1beta1", "kind": "RuntimeClass", "metadata": {"name": "gvisor"},
          "handler": "runsc"}
    code, made = v121.json("POST", "/apis/node.k8s.io/v1beta1/runtimeclasses", rc)
    assert code == 201, made
    code, v1 = v121.json("GET", "/apis/node.k8s.io/v1/runtimeclasses/gvisor")
    assert (v1["apiVersion"], v1["handler"]) == ("node.k8s.io/v1", "runsc")


def test_122_and_126_no_longer_serve_them(live_factory: Callable[..., Live]) -> None:
    v122 = live_factory("1.22", clock="manual")
    assert v122.json("GET", "/apis/rbac.authorization.k8s.io/v1beta1/namespaces/default/roles")[0] == 404
    assert v122.json("GET", "/apis/batch/v1beta1/namespaces/default/cronjobs")[0] == 200
    v126 = live_factory("1.26", clock="manual")
    assert v126.json("GET", "/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers")[0] == 404
    assert v126.json("GET", "/apis/storage.k8s.io/v1beta1/csistoragecapacities")[0] == 200
    assert v126.json("GET", "/apis/batch/v1beta1/namespaces/default/cronjobs")[0] == 404


def test_128_status_apply_as_the_apf_config_consumer_does(v128: Live) -> None:
    """k8s.io/apiserver's APF config controller (an extension server's too) server-side applies each FlowSchema's
    Dangling condition to flowschemas/status in v1beta3 at 1.28."""
    cond = {"type": "Dangling", "status": "False", "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Found",
            "message": 'This FlowSchema references the PriorityLevelConfiguration object named "exempt" and it '
                       "exists"}
    body = {"apiVersion": "flowcontrol.apiserver.k8s.io/v1beta3", "kind": "FlowSchema",
            "metadata": {"name": "exempt"}, "status": {"conditions": [cond]}}
    code, _, raw = v128.request(
        "PATCH", f"{G}/v1beta3/flowschemas/exempt/status?fieldManager=api-priority-and-fairness-config-consumer-v1"
                 "&force=true", json.dumps(body).encode(), {"Content-Type": "application/apply-patch+yaml"})
    assert code == 200, raw
    code, b2 = v128.json("GET", f"{G}/v1beta2/flowschemas/exempt")
    assert b2["status"] == {"conditions": [cond]}
    assert b2["spec"]["matchingPrecedence"] == 1

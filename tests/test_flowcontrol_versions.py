"""flowcontrol.apiserver.k8s.io's served versions per minor, the conversions between them and the mandatory
configuration per minor (no server: the catalog and podlife.api.conversion directly)."""

from __future__ import annotations

import pytest

from podlife.api.conversion import PRESERVE_ZERO, to_flowcontrol
from podlife.apiserver.flowcontrolboot import mandatory
from podlife.apiserver.resources import Catalog

FC = "flowcontrol.apiserver.k8s.io"

# pkg/controlplane/instance.go (legacyBetaEnabledByDefaultResources) and the deprecation guide: preferred first
EXPECTED = {18: None, 19: None, 20: ["v1beta1"], 21: ["v1beta1"], 22: ["v1beta1"], 23: ["v1beta2", "v1beta1"],
            24: ["v1beta2", "v1beta1"], 25: ["v1beta2", "v1beta1"], 26: ["v1beta3", "v1beta2"],
            27: ["v1beta3", "v1beta2"], 28: ["v1beta3", "v1beta2"], 29: ["v1", "v1beta3"], 30: ["v1", "v1beta3"],
            31: ["v1", "v1beta3"], **{m: ["v1"] for m in range(32, 38)}}


@pytest.mark.parametrize("minor", sorted(EXPECTED))
def test_served_versions_per_minor(minor: int) -> None:
    cat = Catalog(minor)
    assert cat.groups().get(FC) == EXPECTED[minor]
    stored = {r.stored_version for r in cat.builtin if r.group == FC}
    assert stored == (set() if EXPECTED[minor] is None else {f"{FC}/{EXPECTED[minor][0]}"})


def _plc(version: str, shares: dict) -> dict:
    return {"apiVersion": f"{FC}/{version}", "kind": "PriorityLevelConfiguration", "metadata": {"name": "p"},
            "spec": {"type": "Limited", "limited": {**shares, "limitResponse": {"type": "Reject"},
                                                    "lendablePercent": 5}}}


def test_shares_are_renamed_in_place_between_v1beta2_and_v1beta3() -> None:
    out = to_flowcontrol(_plc("v1beta2", {"assuredConcurrencyShares": 7}), f"{FC}/v1beta3")
    assert out == _plc("v1beta3", {"nominalConcurrencyShares": 7})
    assert list(out["spec"]["limited"]) == ["nominalConcurrencyShares", "limitResponse", "lendablePercent"]
    assert to_flowcontrol(out, f"{FC}/v1beta1") == _plc("v1beta1", {"assuredConcurrencyShares": 7})
    assert to_flowcontrol(out, f"{FC}/v1") == _plc("v1", {"nominalConcurrencyShares": 7})


def test_v1_zero_shares_round_trip_through_v1beta3() -> None:
    b3 = to_flowcontrol(_plc("v1", {"nominalConcurrencyShares": 0}), f"{FC}/v1beta3")
    assert b3["metadata"] == {"name": "p", "annotations": {PRESERVE_ZERO: ""}}
    assert to_flowcontrol(b3, f"{FC}/v1") == _plc("v1", {"nominalConcurrencyShares": 0})
    # a non-zero value carries no annotation
    assert "annotations" not in to_flowcontrol(_plc("v1", {"nominalConcurrencyShares": 3}), f"{FC}/v1beta3")[
        "metadata"]


def test_flowschemas_only_change_apiversion() -> None:
    fs = {"apiVersion": f"{FC}/v1beta2", "kind": "FlowSchema", "metadata": {"name": "f"},
          "spec": {"priorityLevelConfiguration": {"name": "p"}, "matchingPrecedence": 10}}
    assert to_flowcontrol(fs, f"{FC}/v1beta3") == {**fs, "apiVersion": f"{FC}/v1beta3"}


def test_mandatory_configuration_has_the_fields_of_its_minor() -> None:
    old = {o["metadata"]["name"] + "/" + o["kind"]: o for o in mandatory(22, f"{FC}/v1beta1")}
    assert old["catch-all/PriorityLevelConfiguration"]["spec"] == {
        "type": "Limited", "limited": {"assuredConcurrencyShares": 5, "limitResponse": {"type": "Reject"}}}
    assert old["exempt/PriorityLevelConfiguration"]["spec"] == {"type": "Exempt"}
    new = {o["metadata"]["name"] + "/" + o["kind"]: o for o in mandatory(30, f"{FC}/v1")}
    assert new["exempt/PriorityLevelConfiguration"]["spec"] == {
        "type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}
    assert [o["apiVersion"] for o in new.values()] == [f"{FC}/v1"] * 4

"""A CustomResourceDefinition's conversion webhook (``spec.conversion.strategy: Webhook``) called by ``podlife up``
as the API server calls it: what test/e2e/apimachinery/crd_conversion_webhook.go asserts ("should be able to
convert from CR v1 to CR v2", "should be able to convert a non homogeneous list of CRs"), against an HTTPS
webhook in the test process that converts as agnhost's crd-conversion-webhook does
(test/images/agnhost/crd-conversion-webhook/converter/example_converter.go), and the None strategy."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live.conftest import Live

pytest.importorskip("cryptography")
from tests.live.test_webhooks import serve_json  # noqa: E402

GROUP = "stable.example.com"


def _convert(obj: dict[str, Any], to: str) -> dict[str, Any]:
    """example_converter.go: v1 hostPort "h:p" ↔ v2 host and port."""
    out = dict(obj)
    if obj["apiVersion"] == to:
        raise ValueError(f"conversion from a version to itself should not call the webhook: {to}")
    if to.endswith("/v2") and "hostPort" in out:
        out["host"], out["port"] = out.pop("hostPort").split(":")
    elif to.endswith("/v1") and ("host" in out or "port" in out):
        out["hostPort"] = f"{out.pop('host', '')}:{out.pop('port', '')}"
    out["apiVersion"] = to
    out["metadata"] = {**obj["metadata"], "labels": {"converted": "yes"}, "uid": "changed-by-the-webhook"}
    return out


class ConversionHook:
    """The conversion webhook: every review it gets is kept."""

    def __init__(self, tmp: Path) -> None:
        self.reviews: list[dict[str, Any]] = []

        def convert(path: str, review: dict[str, Any]) -> dict[str, Any]:
            self.reviews.append({"path": path, **review})
            req = review["request"]
            try:
                objs = [_convert(o, req["desiredAPIVersion"]) for o in req["objects"]]
                resp = {"uid": req["uid"], "convertedObjects": objs, "result": {"status": "Success"}}
            except ValueError as e:
                resp = {"uid": req["uid"], "result": {"status": "Failure", "message": str(e)}}
            return {"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": resp}
        self.server, self.pem = serve_json(tmp, convert)
        self.port = self.server.server_address[1]


@pytest.fixture(scope="module")
def hook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConversionHook]:
    h = ConversionHook(tmp_path_factory.mktemp("conversion"))
    yield h
    h.server.shutdown()


def _crd(plural: str, storage: str, conversion: dict[str, Any]) -> dict[str, Any]:
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced", "conversion": conversion,
                     "names": {"plural": plural, "singular": plural[:-1], "kind": plural[:-1].capitalize()},
                     "versions": [{"name": v, "served": True, "storage": v == storage, "schema": schema}
                                  for v in ("v1", "v2")]}}


def _webhook(hook: ConversionHook, versions: list[str]) -> dict[str, Any]:
    return {"strategy": "Webhook", "webhook": {"conversionReviewVersions": versions, "clientConfig": {
        "url": f"https://127.0.0.1:{hook.port}/crdconvert", "caBundle": base64.b64encode(hook.pem).decode()}}}


def _make(live: Live, crd: dict[str, Any]) -> str:
    code, body = live.json("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    plural = crd["spec"]["names"]["plural"]
    live.wait_for("served", lambda: live.request("GET", f"/apis/{GROUP}/v2/namespaces/default/{plural}")[0] == 200)
    return f"/apis/{GROUP}/{{}}/namespaces/default/{plural}"


def _cr(kind: str, version: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": kind, "metadata": {"name": name}, **fields}


def test_a_v1_resource_read_at_v2_is_converted_by_the_webhook(live: Live, hook: ConversionHook) -> None:
    path = _make(live, _crd("e2eones", "v1", _webhook(hook, ["v1", "v1beta1"])))
    code, created = live.json("POST", path.format("v1"), _cr("E2eone", "v1", "cr-instance-1",
                                                              hostPort="localhost:8080"))
    assert code == 201 and created["hostPort"] == "localhost:8080"
    assert hook.reviews == []   # written and answered at the version it is kept at: no call
    code, got = live.json("GET", path.format("v2") + "/cr-instance-1")
    assert code == 200, got
    # verifyV2Object
    assert (got["apiVersion"], got["host"], got["port"], "hostPort" in got) == (
        f"{GROUP}/v2", "localhost", "8080", False)
    # restoreObjectMeta: labels from the webhook, the rest of the metadata the stored object's
    assert got["metadata"]["labels"] == {"converted": "yes"}
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    review = hook.reviews[-1]
    assert review["path"] == "/crdconvert?timeout=30s"
    assert (review["apiVersion"], review["kind"]) == ("apiextensions.k8s.io/v1", "ConversionReview")
    assert review["request"]["desiredAPIVersion"] == f"{GROUP}/v2"
    assert [o["metadata"]["name"] for o in review["request"]["objects"]] == ["cr-instance-1"]


def test_a_mixed_list_is_converted_both_ways_in_one_review(live: Live, hook: ConversionHook) -> None:
    path = _make(live, _crd("e2etwos", "v1", _webhook(hook, ["v1beta1"])))
    assert live.json("POST", path.format("v1"), _cr("E2etwo", "v1", "cr-instance-1", hostPort="localhost:8080"))[0] \
        == 201
    assert live.json("POST", path.format("v2"), _cr("E2etwo", "v2", "cr-instance-2", host="localhost",
                                                    port="8080"))[0] == 201
    before = len(hook.reviews)
    for version, check in (("v1", {"hostPort": "localhost:8080"}), ("v2", {"host": "localhost", "port": "8080"})):
        code, listed = live.json("GET", path.format(version))
        assert code == 200, listed
        assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["cr-instance-1", "cr-instance-2"]
        for item in listed["items"]:
            assert item["apiVersion"] == f"{GROUP}/{version}"
            assert {k: item.get(k) for k in check} == check
            assert not {"hostPort", "host", "port"} - set(check) & set(item)
    # one review per list, holding only the object kept at the other version, in v1beta1 as the CRD asks
    reviews = hook.reviews[before:]
    assert [(r["apiVersion"], [o["metadata"]["name"] for o in r["request"]["objects"]]) for r in reviews] == [
        ("apiextensions.k8s.io/v1beta1", ["cr-instance-2"]), ("apiextensions.k8s.io/v1beta1", ["cr-instance-1"])]


def test_a_webhook_that_fails_fails_the_read_with_its_message(live: Live, hook: ConversionHook) -> None:
    path = _make(live, _crd("e2ethrees", "v1", _webhook(hook, ["v1"])))
    live.json("POST", path.format("v1"), _cr("E2ethree", "v1", "bad", hostPort="no-colon"))
    code, status = live.json("GET", path.format("v2") + "/bad")
    assert code == 500 and status["reason"] == "InternalError"
    assert status["message"].startswith(f"Internal error occurred: conversion webhook for {GROUP}/v1, "
                                        "Kind=E2ethree failed: ")


def test_the_none_strategy_changes_only_the_api_version(live: Live) -> None:
    path = _make(live, _crd("e2efours", "v1", {"strategy": "None"}))
    live.json("POST", path.format("v1"), _cr("E2efour", "v1", "same", hostPort="localhost:8080"))
    code, got = live.json("GET", path.format("v2") + "/same")
    assert code == 200
    assert (got["apiVersion"], got["hostPort"]) == (f"{GROUP}/v2", "localhost:8080")


def test_a_watch_at_the_other_version_sends_converted_objects(live: Live, hook: ConversionHook) -> None:
    path = _make(live, _crd("e2efives", "v1", _webhook(hook, ["v1"])))
    live.json("POST", path.format("v1"), _cr("E2efive", "v1", "watched", hostPort="example:80"))
    code, _, raw = live.request("GET", path.format("v2") + "?watch=true&timeoutSeconds=1")
    assert code == 200
    events = [json.loads(line) for line in raw.splitlines()]
    assert [(e["type"], e["object"]["apiVersion"], e["object"].get("host"), e["object"].get("port"))
            for e in events] == [("ADDED", f"{GROUP}/v2", "example", "80")]

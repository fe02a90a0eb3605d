"""A Table's JSON spliced from its rows' kept JSON is what encoding the whole Table gives, byte for byte."""

from __future__ import annotations

from datetime import datetime, timezone

import orjson
import pytest

from podlife.apiserver import tables

NOW = datetime(2025, 1, 1, 0, 10, tzinfo=timezone.utc)


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "7", "uid": f"u-{name}",
                         "creationTimestamp": "2025-01-01T00:00:00Z", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running", "podIP": "10.0.0.3",
                       "containerStatuses": [{"name": "app", "ready": True, "restartCount": 2,
                                              "state": {"running": {"startedAt": "2025-01-01T00:00:05Z"}}}]}}


@pytest.mark.parametrize("include", ["None", "Metadata", "Object"])
@pytest.mark.parametrize("version", ["v1", "v1beta1"])
@pytest.mark.parametrize("count", [0, 1, 3])
def test_encoded_table_is_the_tables_json(include: str, version: str, count: int) -> None:
    pods = [_pod(f"web-{i}") for i in range(count)]
    meta = {"resourceVersion": "9", "continue": "abc"}
    whole = orjson.dumps(tables.table("Pod", pods, NOW, version=version, include=include, list_meta=meta))
    cols, make = tables.row_maker("Pod", NOW, version=version, include=include)
    spliced = tables.encoded_table(cols, [orjson.dumps(make(p)) for p in pods], version=version, list_meta=meta)
    assert spliced == whole
    if pods:
        assert orjson.loads(spliced)["rows"][0]["cells"][:3] == ["web-0", "1/1", "Running"]

"""The API surface over raw HTTP, on a manual clock: discovery, lists, watches, subresources, namespaces."""

from __future__ import annotations

import json

import pytest

from tests.live.conftest import Live

PODS = "/api/v1/namespaces/default/pods"
V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture(scope="module")
def frozen(live_factory) -> Live:
    return live_factory("1.32", clock="manual")


def _pod(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
            "spec": {"terminationGracePeriodSeconds": 10, "containers": [{"name": "app", "image": "nginx"}]}}


def _get(live: Live, path: str, accept: str = "application/json") -> tuple[int, dict[str, str], dict]:
    code, headers, raw = live.request("GET", path, headers={"Accept": accept})
    return code, headers, json.loads(raw)


def test_aggregated_discovery_answers_the_version_asked_for(frozen: Live) -> None:
    for accept, version in ((f"{V2},{V2BETA1},application/json", "v2"), (f"{V2BETA1},application/json", "v2beta1")):
        for path in ("/api", "/apis"):
            code, headers, doc = _get(frozen, path, accept)
            assert code == 200 and headers["Content-Type"] == accept.split(",")[0]
            assert doc["apiVersion"] == f"apidiscovery.k8s.io/{version}" and doc["kind"] == "APIGroupDiscoveryList"
    _, _, core = _get(frozen, "/api", V2)
    pods = next(r for r in core["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods["shortNames"] == ["po"] and pods["categories"] == ["all"] and pods["scope"] == "Namespaced"
    assert {s["subresource"] for s in pods["subresources"]} >= {"status", "binding", "eviction", "log"}
    _, headers, legacy = _get(frozen, "/api")
    assert headers["Content-Type"] == "application/json" and legacy["kind"] == "APIVersions"
    _, _, groups = _get(frozen, "/apis")
    assert groups["kind"] == "APIGroupList" and "apps" in [g["name"] for g in groups["groups"]]
    _, _, v = _get(frozen, "/version")
    assert (v["major"], v["minor"], v["gitVersion"]) == ("1", "32", "v1.32.0")


def test_list_limit_continue_and_selectors(frozen: Live) -> None:
    for i in range(5):
        assert frozen.json("POST", PODS, _pod(f"page-{i}", page="yes", parity=str(i % 2)))[0] == 201
    code, first = frozen.json("GET", f"{PODS}?labelSelector=page%3Dyes&limit=2")
    assert [p["metadata"]["name"] for p in first["items"]] == ["page-0", "page-1"]
    token = first["metadata"]["continue"]
    _, second = frozen.json("GET", f"{PODS}?labelSelector=page%3Dyes&limit=2&continue={token}")
    _, third = frozen.json("GET", f"{PODS}?labelSelector=page%3Dyes&limit=2&continue={second['metadata']['continue']}")
    assert [p["metadata"]["name"] for p in second["items"] + third["items"]] == ["page-2", "page-3", "page-4"]
    assert "continue" not in third["metadata"]
    _, odd = frozen.json("GET", f"{PODS}?labelSelector=page%3Dyes,parity%21%3D0")
    assert [p["metadata"]["name"] for p in odd["items"]] == ["page-1", "page-3"]
    _, named = frozen.json("GET", f"{PODS}?fieldSelector=metadata.name%3Dpage-4")
    assert [p["metadata"]["name"] for p in named["items"]] == ["page-4"]
    code, bad = frozen.json("GET", f"{PODS}?fieldSelector=spec.bogus%3Dx")
    assert (code, bad["message"]) == (400, "field label not supported: spec.bogus")
    frozen.json("DELETE", f"{PODS}?labelSelector=page%3Dyes&gracePeriodSeconds=0")


def test_table_with_wide_columns(frozen: Live) -> None:
    frozen.json("POST", PODS, _pod("tabled"))
    code, _, table = _get(frozen, f"{PODS}/tabled", TABLE)
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    cols = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert cols == [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1), ("Node", 1),
                    ("Nominated Node", 1), ("Readiness Gates", 1)]
    # created at this frozen instant: scheduled and being created, no IP yet
    assert table["rows"][0]["cells"][:5] == ["tabled", "0/1", "ContainerCreating", "0", "0s"]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    frozen.json("DELETE", f"{PODS}/tabled?gracePeriodSeconds=0")


def test_dry_run_writes_nothing(frozen: Live) -> None:
    code, obj = frozen.json("POST", f"{PODS}?dryRun=All", _pod("dry"))
    assert code == 201 and obj["metadata"]["name"] == "dry"
    assert frozen.json("GET", f"{PODS}/dry")[0] == 404
    code, bad = frozen.json("POST", f"{PODS}?dryRun=Some", _pod("dry"))
    assert code == 400


def test_scale_subresource(frozen: Live) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "rs"}},
                   "template": {"metadata": {"labels": {"app": "rs"}},
                                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}
    base = "/apis/apps/v1/namespaces/default/replicasets"
    assert frozen.json("POST", base, rs)[0] == 201
    code, scale = frozen.json("PATCH", f"{base}/rs/scale", {"spec": {"replicas": 3}},
                              content_type="application/merge-patch+json")
    assert code == 200 and scale["kind"] == "Scale" and scale["spec"] == {"replicas": 3}
    assert scale["status"]["selector"] == "app=rs"
    # the ReplicaSet controller acts at the same instant: three pods exist before time moves
    _, pods = frozen.json("GET", f"{PODS}?labelSelector=app%3Drs")
    assert len(pods["items"]) == 3
    frozen.json("DELETE", f"{base}/rs")


def test_scale_selector_of_a_replication_controller(frozen: Live) -> None:
    """An RC's selector is a plain map: its Scale's status.selector is labels.SelectorFromSet(...).String(), sorted
    by key (core/replicationcontroller/storage scaleFromRC), which `kubectl scale rc` parses."""
    rc = {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "demo"},
          "spec": {"replicas": 0, "selector": {"name": "demo", "app": "web"},
                   "template": {"metadata": {"labels": {"name": "demo", "app": "web"}},
                                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}
    base = "/api/v1/namespaces/default/replicationcontrollers"
    assert frozen.json("POST", base, rc)[0] == 201
    code, scale = frozen.json("GET", f"{base}/demo/scale")
    assert code == 200 and scale["status"] == {"replicas": 0, "selector": "app=web,name=demo"}
    frozen.json("DELETE", f"{base}/demo")


def test_events_in_both_groups(frozen: Live) -> None:
    frozen.json("POST", PODS, _pod("evented"))
    _, core = frozen.json("GET", "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Devented")
    assert core["items"][0]["reason"] == "Scheduled"
    _, new = frozen.json("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
    converted = [e for e in new["items"] if e["regarding"].get("name") == "evented"]
    # the same stored Events, converted: note is message, regarding is involvedObject
    assert [(e["reason"], e["note"]) for e in converted] == [(e["reason"], e["message"]) for e in core["items"]]
    assert {e["apiVersion"] for e in converted} == {"events.k8s.io/v1"}
    frozen.json("DELETE", f"{PODS}/evented?gracePeriodSeconds=0")


def test_logs_of_the_simulated_process(frozen: Live) -> None:
    frozen.json("POST", PODS, _pod("logged"))
    code, _, raw = frozen.request("GET", f"{PODS}/logged/log")
    assert code == 400 and json.loads(raw)["message"] == \
        'container "app" in pod "logged" is waiting to start: ContainerCreating'
    frozen.advance("5s")
    code, _, raw = frozen.request("GET", f"{PODS}/logged/log")
    assert code == 200
    assert raw.decode().splitlines() == ["podlife: process of container app started (simulated; its output is not "
                                         "modelled)"]
    # -f streams until the process exits: the DELETE lets SIGTERM end nginx (0.1 s: a container without a command)
    import urllib.request

    with urllib.request.urlopen(frozen.url + f"{PODS}/logged/log?follow=true", timeout=30) as stream:
        assert stream.readline().decode().startswith("podlife: process of container app started")
        frozen.json("DELETE", f"{PODS}/logged")
        frozen.advance("5s")
        assert stream.read().decode().splitlines() == ["podlife: received SIGTERM",
                                                       "podlife: process exited (exitCode 0)"]


def test_logs_of_the_simulated_process_over_websocket(frozen: Live) -> None:
    import asyncio

    import aiohttp

    frozen.json("POST", PODS, _pod("wslogged"))
    frozen.advance("5s")

    async def read(path: str) -> list[tuple[str, object]]:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(frozen.url + path, protocols=("binary.k8s.io",)) as ws:
                return [(m.type.name, m.data) async for m in ws]
    line = b"podlife: process of container app started (simulated; its output is not modelled)\n"
    # responsewriters.StreamObject over wsstream.Reader: an empty message, then the log as binary messages
    assert asyncio.run(read(f"{PODS}/wslogged/log")) == [("BINARY", b""), ("BINARY", line)]

    async def follow() -> list[tuple[str, object]]:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(frozen.url + f"{PODS}/wslogged/log?follow=true",
                                          protocols=("binary.k8s.io",)) as ws:
                got = [(m.type.name, m.data) for m in (await ws.receive(), await ws.receive())]
                await asyncio.to_thread(frozen.json, "DELETE", f"{PODS}/wslogged")
                await asyncio.to_thread(frozen.advance, "5s")
                return got + [(m.type.name, m.data) async for m in ws]
    got = asyncio.run(follow())
    assert got[:2] == [("BINARY", b""), ("BINARY", line)] and {kind for kind, _ in got} == {"BINARY"}
    # the rest as the kernel moved (one message per step)
    assert b"".join(data for _, data in got[2:]) == (  # type: ignore[misc]
        b"podlife: received SIGTERM\npodlife: process exited (exitCode 0)\n")


def test_namespace_finalization(frozen: Live) -> None:
    assert frozen.json("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": "team"}})[0] == 201
    frozen.json("POST", "/api/v1/namespaces/team/pods", _pod("p"))
    frozen.advance("5s")
    code, ns = frozen.json("DELETE", "/api/v1/namespaces/team")
    assert code == 200 and ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
    code, refused = frozen.json("POST", "/api/v1/namespaces/team/configmaps",
                                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}})
    assert (code, refused["message"]) == (403, 'configmaps "late" is forbidden: unable to create new content in '
                                               "namespace team because it is being terminated")
    # plugin/pkg/admission/namespace/lifecycle: the 403 carries a NamespaceTerminating cause
    assert refused["details"] == {"name": "late", "kind": "configmaps", "causes": [
        {"reason": "NamespaceTerminating", "message": "namespace team is being terminated",
         "field": "metadata.namespace"}]}
    code, again = frozen.json("DELETE", "/api/v1/namespaces/team")
    assert code == 409 and again["message"].endswith("this namespace will automatically be purged by the system.")
    # namespace_controller.go: the deletion is processed 5 s after it is seen (namespaceDeletionGracePeriod): the
    # pod is deleted and the conditions are written; that write is seen and processed 5 s later (before the
    # estimate's 10/2 + 1 = 6 s), when the pod is gone: the conditions change again and the namespace is finalized
    frozen.advance("9s")
    code, ns = frozen.json("GET", "/api/v1/namespaces/team")
    assert code == 200 and {c["type"]: c["status"] for c in ns["status"]["conditions"]}["NamespaceContentRemaining"] \
        == "True"
    frozen.advance("1s")
    assert frozen.json("GET", "/api/v1/namespaces/team")[0] == 404
    records = [r for r in frozen.trace() if r.get("object") == "Namespace/team" and r["type"] in ("api", "deleted")]
    t0 = records[0]["t"]
    assert [(r["t"] - t0, r["type"], r.get("by"), r.get("subresource")) for r in records] == [
        (0.0, "api", "Python-urllib", None),
        (5.0, "api", "Python-urllib", None), (10.0, "api", "namespace-controller", "status"),
        (15.0, "api", "namespace-controller", "status"), (15.0, "api", "namespace-controller", "finalize"),
        (15.0, "deleted", None, None)]


def test_immortal_namespaces_are_not_deleted(frozen: Live) -> None:
    # staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go: default, kube-system and
    # kube-public may not be deleted; kube-node-lease may
    for name in ("default", "kube-system", "kube-public"):
        code, body = frozen.json("DELETE", f"/api/v1/namespaces/{name}")
        assert (code, body["reason"], body["message"]) == (
            403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may not be deleted')
        code, ns = frozen.json("GET", f"/api/v1/namespaces/{name}")
        assert code == 200 and "deletionTimestamp" not in ns["metadata"] and ns["status"]["phase"] == "Active"


def test_watch_table_events_and_bookmarks_over_http(frozen: Live) -> None:
    frozen.json("POST", PODS, _pod("w"))
    code, headers, raw = frozen.request(
        "GET", f"{PODS}?watch=true&fieldSelector=metadata.name%3Dw&timeoutSeconds=3&allowWatchBookmarks=true",
        headers={"Accept": TABLE})
    events = [json.loads(line) for line in raw.splitlines()]
    assert code == 200 and [e["type"] for e in events] == ["ADDED", "BOOKMARK"]
    assert events[0]["object"]["kind"] == "Table" and events[0]["object"]["rows"][0]["cells"][0] == "w"
    frozen.json("DELETE", f"{PODS}/w?gracePeriodSeconds=0")


def test_watch_list_ends_its_initial_events_with_a_bookmark(frozen: Live) -> None:
    frozen.json("POST", PODS, _pod("listed", wl="yes"))
    code, _, raw = frozen.request("GET", f"{PODS}?watch=true&labelSelector=wl%3Dyes&sendInitialEvents=true"
                                         "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1")
    events = [json.loads(line) for line in raw.splitlines()]
    # then the watch's own bookmark, 2 s before its 1 s timeout: at once
    assert [e["type"] for e in events] == ["ADDED", "BOOKMARK", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert "annotations" not in events[2]["object"]["metadata"]
    frozen.json("DELETE", f"{PODS}/listed?gracePeriodSeconds=0")


def test_autoscaling_v1_is_the_stored_v2(frozen: Live) -> None:
    """kubectl autoscale (to 1.33) posts autoscaling/v1: its CPU target is the v2 cpu Utilization metric."""
    base = "/apis/autoscaling/{}/namespaces/default/horizontalpodautoscalers"
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                    "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}}
    code, created = frozen.json("POST", base.format("v1"), hpa)
    assert code == 201 and created["spec"]["targetCPUUtilizationPercentage"] == 50
    _, v2 = frozen.json("GET", base.format("v2") + "/h")
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 50}}}]
    frozen.json("DELETE", base.format("v1") + "/h")


def test_job_table(frozen: Live) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
           "spec": {"template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}}
    base = "/apis/batch/v1/namespaces/default/jobs"
    assert frozen.json("POST", base, job)[0] == 201
    _, _, table = _get(frozen, f"{base}/once", TABLE)
    assert [c["name"] for c in table["columnDefinitions"]][:5] == ["Name", "Status", "Completions", "Duration", "Age"]
    assert table["rows"][0]["cells"][:3] == ["once", "Running", "0/1"]
    frozen.advance("10s")
    _, _, table = _get(frozen, f"{base}/once", TABLE)
    assert table["rows"][0]["cells"][:3] == ["once", "Complete", "1/1"]
    frozen.json("DELETE", f"{base}/once?propagationPolicy=Background")


def test_indexed_job_with_the_documentation_failure_policy(frozen: Live) -> None:
    """A POSTed Indexed Job whose podFailurePolicy has an onExitCodes-only rule and a status-less pattern is
    created (201) with the pattern's status defaulted to True; its pods are named and labelled by index and
    status.completedIndexes counts them."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "shards"},
           "spec": {"completionMode": "Indexed", "completions": 3, "parallelism": 3,
                    "podFailurePolicy": {"rules": [
                        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
                    "template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox", "command": ["true"]}]}}}}
    base = "/apis/batch/v1/namespaces/default/jobs"
    code, created = frozen.json("POST", base, job)
    assert code == 201, created
    assert created["spec"]["podFailurePolicy"]["rules"][1]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}]
    frozen.advance("10s")
    _, pods = frozen.json("GET", "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io/job-name%3Dshards")
    got = sorted((p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"], p["spec"]["hostname"],
                  p["metadata"]["name"].rsplit("-", 1)[0]) for p in pods["items"])
    assert got == [("0", "shards-0", "shards-0"), ("1", "shards-1", "shards-1"), ("2", "shards-2", "shards-2")]
    _, done = frozen.json("GET", f"{base}/shards")
    assert (done["status"]["completedIndexes"], done["status"]["succeeded"]) == ("0-2", 3)
    frozen.json("DELETE", f"{base}/shards?propagationPolicy=Background")


def test_grace_periods_at_int64s_limits(frozen: Live) -> None:
    """DeleteOptions.gracePeriodSeconds is an int64: beyond it the request is refused (400); int64's largest
    value is accepted, and the deletion time it gives (past year 9999) is written as the last instant a
    timestamp can express."""
    frozen.json("POST", PODS, _pod("huge"))
    frozen.advance("2s")
    for grace in ("9223372036854775808", "1000000000000000000000000000000", "1.5", "x"):
        code, body = frozen.json("DELETE", f"{PODS}/huge?gracePeriodSeconds={grace}")
        assert (code, body["reason"]) == (400, "BadRequest"), body
    code, body = frozen.json("POST", f"{PODS}/huge/eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "huge"},
        "deleteOptions": {"gracePeriodSeconds": 10 ** 30}})
    assert (code, body["reason"]) == (400, "BadRequest"), body
    code, pod = frozen.json("DELETE", f"{PODS}/huge?gracePeriodSeconds=9223372036854775807")
    assert code == 200 and pod["metadata"]["deletionTimestamp"] == "9999-12-31T23:59:59Z"
    assert pod["metadata"]["deletionGracePeriodSeconds"] == 9223372036854775807
    frozen.json("DELETE", f"{PODS}/huge?gracePeriodSeconds=0")


def test_table_of_a_create_only_kind_is_not_acceptable(frozen: Live) -> None:
    """test/e2e/apimachinery/table_conversion.go "should return a 406 for a backend which does not implement
    metadata": a SelfSubjectAccessReview (and the other create-only kinds) have no Table; JSON still works."""
    sar = json.dumps({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                      "spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}}}).encode()
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    code, _, raw = frozen.request("POST", path, sar, headers={"Accept": TABLE, "Content-Type": "application/json"})
    assert code == 406
    assert json.loads(raw) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                               "message": "only the following media types are accepted: application/json, "
                                          "application/yaml, application/vnd.kubernetes.protobuf",
                               "reason": "NotAcceptable", "code": 406}
    code, _, raw = frozen.request("POST", path, sar, headers={"Accept": f"{TABLE}, application/json",
                                                              "Content-Type": "application/json"})
    assert code == 201 and json.loads(raw)["kind"] == "SelfSubjectAccessReview"
    review = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                         "spec": {"token": "x"}}).encode()
    code, _, _ = frozen.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", review,
                                headers={"Accept": TABLE, "Content-Type": "application/json"})
    assert code == 406


def test_a_repeated_list_is_answered_as_the_state_stands(frozen: Live) -> None:
    """A LIST repeated at the same state is answered with the bytes it had (podlife.apiserver.cache); any write,
    of that kind or another, and a move of the clock (a Table's ages) make it new."""
    ns = "/api/v1/namespaces/relist/pods"
    assert frozen.json("POST", "/api/v1/namespaces", {"metadata": {"name": "relist"}})[0] == 201
    assert frozen.json("POST", ns, _pod("one"))[0] == 201
    _, _, first = frozen.request("GET", ns, headers={"Accept": TABLE})
    _, _, again = frozen.request("GET", ns, headers={"Accept": TABLE})
    assert first == again and [r["cells"][0] for r in json.loads(first)["rows"]] == ["one"]
    assert frozen.json("POST", ns, _pod("two"))[0] == 201
    _, _, table = _get(frozen, ns, TABLE)
    assert [r["cells"][0] for r in table["rows"]] == ["one", "two"]
    rv = table["metadata"]["resourceVersion"]
    assert frozen.json("POST", "/api/v1/namespaces/relist/configmaps", {"metadata": {"name": "c"}})[0] == 201
    _, _, later = _get(frozen, ns, TABLE)
    assert int(later["metadata"]["resourceVersion"]) > int(rv)
    ages = [r["cells"][4] for r in later["rows"]]
    frozen.advance("3m")
    _, _, aged = _get(frozen, ns, TABLE)
    assert [r["cells"][4] for r in aged["rows"]] != ages and [r["cells"][4] for r in aged["rows"]][0].startswith("3m")
    _, plain = frozen.json("GET", ns)
    assert [p["metadata"]["name"] for p in plain["items"]] == ["one", "two"]


def test_watches_replaying_several_revisions_of_one_object_send_each_revision(frozen: Live) -> None:
    """Every watch sends each event's own revision of the object, in order, the same bytes for each watch (the
    lines are made once per event and shared: podlife.apiserver.watch.Frames)."""
    code, created = frozen.json("POST", PODS, _pod("revs"))
    assert code == 201
    rvs = [created["metadata"]["resourceVersion"]]   # then the scheduler's and the kubelet's writes
    for i in range(3):
        code, patched = frozen.json("PATCH", f"{PODS}/revs", {"metadata": {"labels": {"step": str(i)}}},
                                    "application/merge-patch+json")
        assert code == 200
        rvs.append(patched["metadata"]["resourceVersion"])
    since = int(rvs[0]) - 1
    streams = []
    for _ in range(2):
        code, _, raw = frozen.request(
            "GET", f"{PODS}?watch=true&fieldSelector=metadata.name%3Drevs&resourceVersion={since}&timeoutSeconds=1")
        assert code == 200
        streams.append(raw)
    assert streams[0] == streams[1]
    events = [json.loads(line) for line in streams[0].splitlines()]
    seen = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert seen == sorted(set(seen)) and (events[0]["type"], seen[0]) == ("ADDED", int(rvs[0]))
    assert {e["type"] for e in events[1:]} == {"MODIFIED"} and seen[-3:] == [int(rv) for rv in rvs[1:]]
    assert [e["object"]["metadata"].get("labels", {}).get("step") for e in events[-4:]] == [None, "0", "1", "2"]
    frozen.json("DELETE", f"{PODS}/revs?gracePeriodSeconds=0")

"""API behaviour the conformance suite checks, with real clients on a manual clock: the CSR approval subresource
(kubectl certificate approve), the eviction 429's DisruptionBudget cause, core/v1 events found by source= when
written through events.k8s.io/v1, a ResourceQuota's status put right by the controller's full resync, and
completed init containers reported ready."""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.live.conftest import Live

NS = "/api/v1/namespaces/default"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"


@pytest.fixture(scope="module")
def frozen(live_factory) -> Live:
    return live_factory("1.32", clock="manual")


def _csr_pem(tmp_path: Path) -> str:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    key, req = tmp_path / "k.pem", tmp_path / "r.pem"
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=fidelity", "-keyout", str(key), "-out", str(req)], check=True, capture_output=True)
    return base64.b64encode(req.read_bytes()).decode()


def _self_signed_pem(tmp_path: Path) -> bytes:
    key, cert = tmp_path / "ck.pem", tmp_path / "c.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=e2e", "-days", "1", "-keyout", str(key), "-out", str(cert)], check=True,
                   capture_output=True)
    return cert.read_bytes()


def test_kubectl_certificate_approve_writes_the_approval_subresource(frozen: Live, tmp_path: Path) -> None:
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "fidelity-csr"},
            "spec": {"request": _csr_pem(tmp_path), "signerName": "kubernetes.io/kube-apiserver-client",
                     "usages": ["client auth"]}}
    assert frozen.json("POST", CSRS, body)[0] == 201
    out = frozen.kubectl("certificate", "approve", "fidelity-csr").stdout
    assert out.strip() == "certificatesigningrequest.certificates.k8s.io/fidelity-csr approved"
    code, csr = frozen.json("GET", f"{CSRS}/fidelity-csr/approval")
    assert code == 200
    [cond] = csr["status"]["conditions"]
    now = csr["metadata"]["creationTimestamp"]   # the manual clock has not moved
    assert cond == {"type": "Approved", "status": "True", "reason": "KubectlApprove",
                    "message": "This CSR was approved by kubectl certificate approve.",
                    "lastUpdateTime": cond["lastUpdateTime"], "lastTransitionTime": now}
    assert [f["subresource"] for f in csr["metadata"]["managedFields"] if f.get("subresource")] == ["approval"]
    # an approval write changes only the conditions of spec and status (csrApprovalStrategy.PrepareForUpdate)
    changed = {**csr, "spec": {**csr["spec"], "usages": ["digital signature"]}}
    code, after = frozen.json("PUT", f"{CSRS}/fidelity-csr/approval", changed)
    assert code == 200 and after["spec"]["usages"] == ["client auth"]
    assert after["metadata"]["resourceVersion"] == csr["metadata"]["resourceVersion"]   # nothing changed
    # Approved and Denied together are refused (validateConditions)
    both = {**after, "status": {"conditions": [*after["status"]["conditions"],
                                               {"type": "Denied", "status": "True", "reason": "No"}]}}
    code, status = frozen.json("PUT", f"{CSRS}/fidelity-csr/approval", both)
    assert code == 422
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "status.conditions[1].type",
                                            "message": 'Invalid value: "Denied": Approved and Denied conditions are '
                                                       'mutually exclusive'}]
    # pkg/registry/certificates/certificates/strategy.go SelectableFields: spec.signerName
    _, listed = frozen.json("GET", f"{CSRS}?fieldSelector=spec.signerName%3Dkubernetes.io/kube-apiserver-client")
    assert [c["metadata"]["name"] for c in listed["items"]] == ["fidelity-csr"]
    _, listed = frozen.json("GET", f"{CSRS}?fieldSelector=spec.signerName%3Dexample.com/other")
    assert listed["items"] == []
    assert frozen.kubectl("certificate", "deny", "fidelity-csr", check=False).stderr.strip() == \
        'error: certificate signing request "fidelity-csr" is already Approved'


def test_csr_patches_keep_their_annotations_on_every_subresource(frozen: Live, tmp_path: Path) -> None:
    """test/e2e/auth/certificates.go "should support CSR API operations": a merge patch of the CSR, of its
    /approval and of its /status each carries a metadata annotation, and each is kept (the subresource strategies
    reset spec and status, not metadata: csrApprovalStrategy, csrStatusStrategy PrepareForUpdate)."""
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "e2e-csr"},
            "spec": {"request": _csr_pem(tmp_path), "signerName": "example.com/e2e", "usages": ["digital signature"]}}
    assert frozen.json("POST", CSRS, body)[0] == 201
    merge = "application/merge-patch+json"
    code, patched = frozen.json("PATCH", f"{CSRS}/e2e-csr", {"metadata": {"annotations": {"patched": "true"}}}, merge)
    assert code == 200 and patched["metadata"]["annotations"] == {"patched": "true"}
    code, approval = frozen.json("PATCH", f"{CSRS}/e2e-csr/approval", {
        "metadata": {"annotations": {"patchedapproval": "true"}},
        "status": {"conditions": [{"type": "ApprovalPatch", "status": "True", "reason": "e2e"}]}}, merge)
    assert code == 200, approval
    assert [c["type"] for c in approval["status"]["conditions"]] == ["ApprovalPatch"]
    assert approval["metadata"]["annotations"] == {"patched": "true", "patchedapproval": "true"}
    # approved first, as the e2e test does (a certificate may only be set on an approved CSR)
    approval["status"]["conditions"].append({"type": "Approved", "status": "True", "reason": "E2E"})
    assert frozen.json("PUT", f"{CSRS}/e2e-csr/approval", approval)[0] == 200
    cert = base64.b64encode(_self_signed_pem(tmp_path)).decode()
    code, status = frozen.json("PATCH", f"{CSRS}/e2e-csr/status", {
        "metadata": {"annotations": {"patchedstatus": "true"}}, "status": {"certificate": cert}}, merge)
    assert code == 200, status
    assert status["metadata"]["annotations"] == {"patched": "true", "patchedapproval": "true", "patchedstatus": "true"}
    # an update of /status with a label written along keeps it too
    status["metadata"]["labels"] = {"updated": "true"}
    code, updated = frozen.json("PUT", f"{CSRS}/e2e-csr/status", status)
    assert code == 200 and updated["metadata"]["labels"] == {"updated": "true"}
    assert frozen.json("GET", f"{CSRS}/e2e-csr")[1]["metadata"]["labels"] == {"updated": "true"}


def test_eviction_refused_by_a_budget_names_its_cause(frozen: Live) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "guarded", "labels": {"app": "guarded"}},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    assert frozen.json("POST", f"{NS}/pods", pod)[0] == 201
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "guard"},
           "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}}
    assert frozen.json("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb)[0] == 201
    frozen.advance("20s")   # scheduled, started, ready; the budget's status counts it
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded", "namespace": "default"}}
    code, status = frozen.json("POST", f"{NS}/pods/guarded/eviction", eviction)
    assert code == 429
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": "Cannot evict pod as it would violate the pod's disruption budget.",
                      "reason": "TooManyRequests",
                      "details": {"causes": [{"reason": "DisruptionBudget",
                                              "message": "The disruption budget guard needs 1 healthy pods and has "
                                                         "1 currently"}]},
                      "code": 429}


def test_events_written_through_events_k8s_io_match_source(frozen: Live) -> None:
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "from-new-api"},
             "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "fidelity-controller",
             "reportingInstance": "fidelity-1", "action": "Test", "reason": "Testing", "type": "Normal",
             "note": "written as events.k8s.io/v1", "regarding": {"kind": "Pod", "name": "x", "namespace": "default"}}
    assert frozen.json("POST", "/apis/events.k8s.io/v1/namespaces/default/events", event)[0] == 201
    # pkg/registry/core/event/strategy.go ToSelectableFields: source falls back to the reporting controller
    _, found = frozen.json("GET", f"{NS}/events?fieldSelector=source%3Dfidelity-controller")
    assert [e["metadata"]["name"] for e in found["items"]] == ["from-new-api"]
    _, others = frozen.json("GET", f"{NS}/events?fieldSelector=source%3Dfidelity-controller,reason%3DOther")
    assert others["items"] == []
    # events.k8s.io names its own field labels (pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent):
    # test/e2e/instrumentation/events.go lists with reportingController=
    ev1 = "/apis/events.k8s.io/v1/namespaces/default/events"
    for selector in ("reportingController%3Dfidelity-controller", "regarding.kind%3DPod,regarding.name%3Dx",
                     "reason%3DTesting,type%3DNormal,metadata.name%3Dfrom-new-api",
                     "regarding.namespace%3Ddefault,metadata.namespace%3Ddefault,regarding.name%3Dx"):
        code, found = frozen.json("GET", f"{ev1}?fieldSelector={selector}")
        assert code == 200 and [e["metadata"]["name"] for e in found["items"]] == ["from-new-api"], selector
    _, none = frozen.json("GET", f"{ev1}?fieldSelector=reportingController!%3Dfidelity-controller,reason%3DTesting")
    assert none["items"] == []
    # the core names are not the group's: refused with the conversion func's message
    for label in ("source", "involvedObject.name", "reportingComponent", "note"):
        code, status = frozen.json("GET", f"{ev1}?fieldSelector={label}%3Dx")
        assert (code, status["reason"], status["message"]) == (400, "BadRequest", f"field label not supported: {label}")
    code, status = frozen.json("GET", f"{NS}/events?fieldSelector=reportingController%3Dx")
    assert (code, status["message"]) == (400, "field label not supported: reportingController")


def test_quota_status_written_by_a_client_is_reset_by_the_full_resync(frozen: Live) -> None:
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "reset-me"},
             "spec": {"hard": {"cpu": "1", "memory": "1Gi"}}}
    assert frozen.json("POST", f"{NS}/resourcequotas", quota)[0] == 201
    code, patched = frozen.json("PATCH", f"{NS}/resourcequotas/reset-me/status",
                                {"status": {"hard": {"cpu": "2", "memory": "2Gi"}}},
                                "application/strategic-merge-patch+json")
    assert code == 200 and patched["status"]["hard"] == {"cpu": "2", "memory": "2Gi"}
    assert patched["spec"]["hard"] == {"cpu": "1", "memory": "1Gi"}
    # the quota informer ignores status writes; enqueueAll runs every 5 min from the controller's start (t=0)
    now = frozen.seconds()
    tick = (int(now // 300) + 1) * 300
    frozen.advance(f"{tick - now - 1:g}s")
    assert frozen.json("GET", f"{NS}/resourcequotas/reset-me")[1]["status"]["hard"] == {"cpu": "2", "memory": "2Gi"}
    frozen.advance("1s")
    assert frozen.json("GET", f"{NS}/resourcequotas/reset-me")[1]["status"]["hard"] == {"cpu": "1", "memory": "1Gi"}
    assert frozen.json("DELETE", f"{NS}/resourcequotas/reset-me")[0] == 200   # pods without requests may run again


def test_an_init_container_that_completed_is_ready(frozen: Live) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "with-init"},
           "spec": {"initContainers": [{"name": "setup", "image": "busybox", "command": ["true"]}],
                    "containers": [{"name": "app", "image": "nginx"}]}}
    assert frozen.json("POST", f"{NS}/pods", pod)[0] == 201
    frozen.advance("30s")
    _, got = frozen.json("GET", f"{NS}/pods/with-init")
    [init] = got["status"]["initContainerStatuses"]
    assert init["state"]["terminated"]["exitCode"] == 0 and init["state"]["terminated"]["reason"] == "Completed"
    # pkg/kubelet/prober/prober_manager.go UpdatePodStatus
    assert init["ready"] is True
    assert got["status"]["containerStatuses"][0]["ready"] is True


def test_kubectl_debug_adds_an_ephemeral_container_the_kubelet_starts(frozen: Live) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debugged"},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    assert frozen.json("POST", f"{NS}/pods", pod)[0] == 201
    frozen.advance("10s")
    frozen.kubectl("debug", "debugged", "--image=busybox", "-c", "dbg", "--profile=legacy", "--", "sleep", "3600")
    _, got = frozen.json("GET", f"{NS}/pods/debugged")
    assert got["spec"]["ephemeralContainers"] == [
        {"name": "dbg", "image": "busybox", "command": ["sleep", "3600"], "resources": {},
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
         "imagePullPolicy": "Always"}]
    assert ("kubectl", "ephemeralcontainers") in \
        [(f["manager"], f.get("subresource")) for f in got["metadata"]["managedFields"]]
    frozen.advance("10s")
    _, got = frozen.json("GET", f"{NS}/pods/debugged")
    [st] = got["status"]["ephemeralContainerStatuses"]
    assert st["name"] == "dbg" and "running" in st["state"] and st["ready"] is False and "started" not in st
    _, events = frozen.json("GET", f"{NS}/events?fieldSelector=involvedObject.name%3Ddebugged,reason%3DStarted")
    assert sorted((e["involvedObject"].get("fieldPath"), e["message"]) for e in events["items"]) == [
        ("spec.containers{app}", "Started container app"), ("spec.ephemeralContainers{dbg}", "Started container dbg")]
    # ValidatePodEphemeralContainersUpdate: existing ones may be neither removed nor changed; workload fields are
    # refused
    path = f"{NS}/pods/debugged/ephemeralcontainers"
    removed = {**got, "spec": {**got["spec"], "ephemeralContainers": []}}
    code, status = frozen.json("PUT", path, removed)
    assert code == 422 and status["details"]["causes"] == [
        {"reason": "FieldValueForbidden", "field": "spec.ephemeralContainers",
         "message": 'Forbidden: existing ephemeral containers "dbg" may not be removed\n'}]
    more = {**got, "spec": {**got["spec"], "ephemeralContainers": [
        *got["spec"]["ephemeralContainers"],
        {"name": "app", "image": "busybox", "ports": [{"containerPort": 80}], "terminationMessagePolicy": "File",
         "imagePullPolicy": "Always", "targetContainerName": "nope"}]}}
    code, status = frozen.json("PUT", path, more)
    assert code == 422 and status["details"]["causes"] == [
        {"reason": "FieldValueDuplicate", "field": "spec.ephemeralContainers[1].name",
         "message": 'Duplicate value: "app"'},
        {"reason": "FieldValueNotFound", "field": "spec.ephemeralContainers[1].targetContainerName",
         "message": 'Not found: "nope"'},
        {"reason": "FieldValueForbidden", "field": "spec.ephemeralContainers[1].ports",
         "message": "Forbidden: cannot be set for an Ephemeral Container"}]


def _port_pod(name: str, host_ip: str | None = None, protocol: str = "TCP") -> dict:
    port = {"containerPort": 80, "hostPort": 54321, "protocol": protocol, **({"hostIP": host_ip} if host_ip else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "nginx", "ports": [port]}]}}


def test_the_kubelet_rejects_a_pod_whose_host_port_is_taken(frozen: Live) -> None:
    assert frozen.json("POST", f"{NS}/pods", _port_pod("holder"))[0] == 201
    frozen.advance("5s")
    for name, ip, proto in (("clash", "127.0.0.1", "TCP"), ("udp", None, "UDP")):
        assert frozen.json("POST", f"{NS}/pods", _port_pod(name, ip, proto))[0] == 201
    frozen.advance("5s")
    _, clash = frozen.json("GET", f"{NS}/pods/clash")
    # pkg/kubelet/lifecycle/predicate.go: GeneralPredicates' NodePorts, then kubelet.go rejectPod
    assert (clash["status"]["phase"], clash["status"]["reason"], clash["status"]["message"]) == (
        "Failed", "NodePorts", "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for "
                               "the requested pod ports")
    assert "containerStatuses" not in clash["status"]
    _, events = frozen.json("GET", f"{NS}/events?fieldSelector=involvedObject.name%3Dclash")
    assert [(e["type"], e["reason"]) for e in events["items"]] == [("Warning", "NodePorts")]
    for name in ("holder", "udp"):   # another protocol on the same port is free
        assert frozen.json("GET", f"{NS}/pods/{name}")[1]["status"]["phase"] == "Running"


@pytest.mark.parametrize(("value", "message"), [
    ("..", "unable to provision SubPath `..`: must not contain '..'"),
    ("/tmp", "error SubPath `/tmp` must not be an absolute path")])
def test_a_subpath_expr_that_expands_out_of_the_volume_fails_the_container(frozen: Live, value: str,
                                                                          message: str) -> None:
    name = "subpath-" + ("up" if value == ".." else "abs")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
           "spec": {"volumes": [{"name": "work", "emptyDir": {}}],
                    "containers": [{"name": "app", "image": "busybox", "command": ["sleep", "3600"],
                                    "env": [{"name": "POD_NAME", "value": value}],
                                    "volumeMounts": [{"name": "work", "mountPath": "/logs",
                                                      "subPathExpr": "$(POD_NAME)"}]}]}}
    assert frozen.json("POST", f"{NS}/pods", pod)[0] == 201
    frozen.advance("10s")
    _, got = frozen.json("GET", f"{NS}/pods/{name}")
    # kubelet_pods.go makeMounts, in generateContainerConfig: CreateContainerConfigError
    assert got["status"]["containerStatuses"][0]["state"] == {
        "waiting": {"reason": "CreateContainerConfigError", "message": message}}
    _, events = frozen.json("GET", f"{NS}/events?fieldSelector=involvedObject.name%3D{name},reason%3DFailed")
    assert {e["message"] for e in events["items"]} == {f"Error: {message}"}


def _pb_field(num: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (payloads here are under 128 bytes)."""
    return bytes([num << 3 | 2, len(payload)]) + payload


def test_a_protobuf_delete_options_body_is_read(frozen: Live) -> None:
    """client-go sends DeleteOptions as protobuf for built-in kinds (e2e.test deleting its namespaces); the
    options are metav1's in every group-version."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pb-delete"},
           "spec": {"containers": [{"name": "app", "image": "nginx"}]}}
    assert frozen.json("POST", f"{NS}/pods", pod)[0] == 201
    options = bytes([1 << 3 | 0, 0]) + _pb_field(4, b"Background")   # gracePeriodSeconds: 0, propagationPolicy
    envelope = b"k8s\x00" + _pb_field(1, _pb_field(1, b"v1") + _pb_field(2, b"DeleteOptions")) + _pb_field(2, options)
    code, _, raw = frozen.request("DELETE", f"{NS}/pods/pb-delete", envelope,
                                  {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert code == 200, raw
    assert frozen.json("GET", f"{NS}/pods/pb-delete")[0] == 404   # grace 0: gone at once


def test_protobuf_event_and_replication_controller_bodies_are_read(frozen: Live) -> None:
    """client-go's protobuf bodies of core/v1 Event and ReplicationController (e2e.test creates both)."""
    meta = _pb_field(1, b"pb-event")
    involved = _pb_field(1, b"Pod") + _pb_field(2, b"default") + _pb_field(3, b"x")
    event = (_pb_field(1, meta) + _pb_field(2, involved) + _pb_field(3, b"Testing") + _pb_field(4, b"hello")
             + _pb_field(5, _pb_field(1, b"fidelity")) + bytes([8 << 3, 1]) + _pb_field(9, b"Normal"))
    envelope = b"k8s\x00" + _pb_field(1, _pb_field(1, b"v1") + _pb_field(2, b"Event")) + _pb_field(2, event)
    code, _, raw = frozen.request("POST", f"{NS}/events", envelope,
                                  {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert code == 201, raw
    _, got = frozen.json("GET", f"{NS}/events/pb-event")
    assert (got["involvedObject"], got["reason"], got["message"], got["source"], got["count"], got["type"]) == (
        {"kind": "Pod", "namespace": "default", "name": "x"}, "Testing", "hello", {"component": "fidelity"}, 1,
        "Normal")
    assert (got["reportingComponent"], got["reportingInstance"]) == ("", "")   # no omitempty upstream
    labels = _pb_field(11, _pb_field(1, b"app") + _pb_field(2, b"rc"))   # ObjectMeta.labels
    template = _pb_field(1, labels) + _pb_field(2, _pb_field(2, _pb_field(1, b"app") + _pb_field(2, b"nginx")))
    spec = bytes([1 << 3, 0]) + _pb_field(2, _pb_field(1, b"app") + _pb_field(2, b"rc")) + _pb_field(3, template)
    rc = _pb_field(1, _pb_field(1, b"pb-rc")) + _pb_field(2, spec)
    envelope = b"k8s\x00" + _pb_field(1, _pb_field(1, b"v1") + _pb_field(2, b"ReplicationController")) + \
        _pb_field(2, rc)
    code, _, raw = frozen.request("POST", f"{NS}/replicationcontrollers", envelope,
                                  {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert code == 201, raw
    _, got = frozen.json("GET", f"{NS}/replicationcontrollers/pb-rc")
    assert (got["spec"]["replicas"], got["spec"]["selector"]) == (0, {"app": "rc"})   # *int32 zero kept
    assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"


def test_protobuf_pod_template_and_runtime_class_bodies_are_read(frozen: Live) -> None:
    template = _pb_field(2, _pb_field(2, _pb_field(1, b"app") + _pb_field(2, b"nginx")))   # spec.containers[0]
    body = _pb_field(1, _pb_field(1, b"pb-template")) + _pb_field(2, template)
    envelope = b"k8s\x00" + _pb_field(1, _pb_field(1, b"v1") + _pb_field(2, b"PodTemplate")) + _pb_field(2, body)
    code, _, raw = frozen.request("POST", f"{NS}/podtemplates", envelope,
                                  {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert code == 201, raw
    _, got = frozen.json("GET", f"{NS}/podtemplates/pb-template")
    assert got["template"]["spec"]["containers"][0]["image"] == "nginx"
    scheduling = _pb_field(1, _pb_field(1, b"disk") + _pb_field(2, b"ssd"))   # nodeSelector
    body = _pb_field(1, _pb_field(1, b"pb-runtime")) + _pb_field(2, b"runc") + _pb_field(4, scheduling)
    envelope = b"k8s\x00" + _pb_field(1, _pb_field(1, b"node.k8s.io/v1") + _pb_field(2, b"RuntimeClass")) + \
        _pb_field(2, body)
    code, _, raw = frozen.request("POST", "/apis/node.k8s.io/v1/runtimeclasses", envelope,
                                  {"Content-Type": "application/vnd.kubernetes.protobuf"})
    assert code == 201, raw
    _, got = frozen.json("GET", "/apis/node.k8s.io/v1/runtimeclasses/pb-runtime")
    assert (got["handler"], got["scheduling"], "overhead" in got) == ("runc", {"nodeSelector": {"disk": "ssd"}}, False)

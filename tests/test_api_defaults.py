"""Defaulting, QoS and effective requests, checked against pkg/apis/*/v1/defaults.go,
pkg/apis/core/v1/helper/qos and component-helpers/resource PodRequests."""

import copy

import pytest

from podlife.api.defaults import (
    apply_defaults,
    compute_qos_class,
    default_image_pull_policy,
    default_pod_spec,
    pod_requests,
    qos_class,
)


def pod(*containers, init=(), **spec):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": list(containers), **({"initContainers": list(init)} if init else {}), **spec},
    }


def ctr(name="c", image="nginx:1.25", **extra):
    return {"name": name, "image": image, **extra}


def res(requests=None, limits=None):
    out = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return {"resources": out}


# --- Pod ------------------------------------------------------------------------------------


def test_pod_defaults_exactly():
    p = pod(ctr(ports=[{"containerPort": 80}]))
    apply_defaults(p)
    assert p == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1.25",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "imagePullPolicy": "IfNotPresent",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "enableServiceLinks": True,
        },
    }
    assert "priority" not in p["spec"] and "tolerations" not in p["spec"]


def test_defaulting_is_idempotent_and_keeps_explicit_values():
    p = pod(ctr(imagePullPolicy="Never", terminationMessagePolicy="FallbackToLogsOnError"),
            restartPolicy="Never", terminationGracePeriodSeconds=0, dnsPolicy="Default",
            schedulerName="mine", enableServiceLinks=False)
    p["metadata"]["namespace"] = "ns"
    apply_defaults(p)
    once = copy.deepcopy(p)
    apply_defaults(p)
    assert p == once
    spec = p["spec"]
    assert (spec["restartPolicy"], spec["terminationGracePeriodSeconds"], spec["dnsPolicy"]) == ("Never", 0, "Default")
    assert spec["schedulerName"] == "mine" and spec["enableServiceLinks"] is False
    assert spec["containers"][0]["imagePullPolicy"] == "Never"
    assert spec["containers"][0]["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert p["metadata"]["namespace"] == "ns"


def test_negative_termination_grace_period_is_kept():
    p = pod(ctr(), terminationGracePeriodSeconds=-1)
    apply_defaults(p)
    assert p["spec"]["terminationGracePeriodSeconds"] == -1


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("docker.io/library/nginx", "Always"),
        ("localhost:5000/app", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("localhost:5000/app:v1", "IfNotPresent"),
        ("registry.k8s.io/pause:3.9", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:latest@sha256:" + "a" * 64, "Always"),
        ("NGINX", "IfNotPresent"),  # unparsable reference: upstream ignores the error, tag ""
        ("", "IfNotPresent"),
    ],
)
def test_image_pull_policy(image, policy):
    assert default_image_pull_policy(image) == policy
    p = pod(ctr(image=image))
    apply_defaults(p)
    assert p["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_init_and_ephemeral_containers_get_container_defaults():
    p = pod(ctr(), init=[ctr("init", image="busybox")])
    p["spec"]["ephemeralContainers"] = [{"name": "debug", "image": "busybox:1"}]
    apply_defaults(p)
    init = p["spec"]["initContainers"][0]
    assert (init["imagePullPolicy"], init["terminationMessagePath"], init["terminationMessagePolicy"]) == (
        "Always", "/dev/termination-log", "File")
    assert p["spec"]["ephemeralContainers"][0]["imagePullPolicy"] == "IfNotPresent"


def test_probe_defaults():
    probe = {"httpGet": {"port": 8080}, "initialDelaySeconds": 5}
    p = pod(ctr(livenessProbe=probe, readinessProbe={"exec": {"command": ["true"]}, "periodSeconds": 3},
                startupProbe={"tcpSocket": {"port": 80}, "failureThreshold": 30, "timeoutSeconds": 0}))
    apply_defaults(p)
    c = p["spec"]["containers"][0]
    assert c["livenessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        "initialDelaySeconds": 5,
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert c["readinessProbe"] == {"exec": {"command": ["true"]}, "periodSeconds": 3, "timeoutSeconds": 1,
                                   "successThreshold": 1, "failureThreshold": 3}
    # 0 is Go's "unset" for these int32 fields: replaced by the default
    assert c["startupProbe"]["timeoutSeconds"] == 1 and c["startupProbe"]["failureThreshold"] == 30
    assert "initialDelaySeconds" not in c["readinessProbe"]


def test_http_get_keeps_explicit_path_and_scheme_and_lifecycle_hooks_are_defaulted():
    p = pod(ctr(livenessProbe={"httpGet": {"port": 1, "path": "/healthz", "scheme": "HTTPS"}},
                lifecycle={"preStop": {"httpGet": {"port": 1}}, "type": "Sidecar"}))
    apply_defaults(p)
    c = p["spec"]["containers"][0]
    assert c["livenessProbe"]["httpGet"] == {"port": 1, "path": "/healthz", "scheme": "HTTPS"}
    assert c["lifecycle"] == {"preStop": {"httpGet": {"port": 1, "path": "/", "scheme": "HTTP"}}, "type": "Sidecar"}


def test_requests_default_to_limits_per_resource():
    p = pod(ctr(**res(requests={"memory": "64Mi"}, limits={"cpu": "500m", "memory": "128Mi"})),
            init=[ctr("i", **res(limits={"cpu": "1"}))])
    apply_defaults(p)
    assert p["spec"]["containers"][0]["resources"] == {
        "requests": {"memory": "64Mi", "cpu": "500m"},
        "limits": {"cpu": "500m", "memory": "128Mi"},
    }
    assert p["spec"]["initContainers"][0]["resources"]["requests"] == {"cpu": "1"}


def test_requests_only_are_untouched():
    p = pod(ctr(**res(requests={"cpu": "100m"})))
    apply_defaults(p)
    assert p["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}


def test_host_network_copies_container_ports_to_host_ports():
    p = pod(ctr(ports=[{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9191}]), hostNetwork=True)
    apply_defaults(p)
    assert [port["hostPort"] for port in p["spec"]["containers"][0]["ports"]] == [8080, 9191]


def test_volume_and_env_defaults():
    p = pod(ctr(env=[{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]),
            volumes=[{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "c"}},
                     {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}}])
    apply_defaults(p)
    vols = p["spec"]["volumes"]
    assert vols[0] == {"name": "scratch", "emptyDir": {}}
    assert vols[1]["configMap"]["defaultMode"] == 420
    assert vols[2]["secret"]["defaultMode"] == 256
    assert p["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"


def test_default_pod_spec_for_templates_skips_pod_only_defaults():
    spec = {"containers": [ctr(**res(limits={"cpu": "1"}))]}
    default_pod_spec(spec)
    assert spec["restartPolicy"] == "Always" and spec["terminationGracePeriodSeconds"] == 30
    assert "enableServiceLinks" not in spec  # SetDefaults_Pod only
    assert "requests" not in spec["containers"][0]["resources"]  # SetDefaults_Pod only


# --- workloads -------------------------------------------------------------------------------


def template():
    return {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [ctr()]}}


def test_deployment_defaults():
    d = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
         "spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template()}}
    apply_defaults(d)
    spec = d["spec"]
    assert d["metadata"]["namespace"] == "default"
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    assert "minReadySeconds" not in spec
    tspec = spec["template"]["spec"]
    assert tspec["restartPolicy"] == "Always" and tspec["dnsPolicy"] == "ClusterFirst"
    assert tspec["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "enableServiceLinks" not in tspec


def test_deployment_strategy_defaults_respect_user_values():
    d = {"kind": "Deployment", "spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "template": template()}}
    apply_defaults(d)
    assert d["spec"]["strategy"] == {"type": "Recreate"}
    assert d["spec"]["replicas"] == 0
    d = {"kind": "Deployment", "spec": {"strategy": {"rollingUpdate": {"maxSurge": 0}}, "template": template()}}
    apply_defaults(d)
    assert d["spec"]["strategy"] == {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "25%"}, "type": "RollingUpdate"}


def test_replicaset_statefulset_daemonset_defaults():
    rs = {"kind": "ReplicaSet", "spec": {"template": template()}}
    apply_defaults(rs)
    assert rs["spec"]["replicas"] == 1

    sts = {"kind": "StatefulSet", "spec": {"serviceName": "s", "template": template()}}
    apply_defaults(sts)
    spec = sts["spec"]
    assert spec["replicas"] == 1
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}

    sts = {"kind": "StatefulSet", "spec": {"updateStrategy": {"type": "OnDelete"}, "template": template()}}
    apply_defaults(sts)
    assert sts["spec"]["updateStrategy"] == {"type": "OnDelete"}

    ds = {"kind": "DaemonSet", "spec": {"template": template()}}
    apply_defaults(ds)
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10


def test_job_defaults():
    job = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": template()}}
    apply_defaults(job)
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert job["metadata"]["labels"] == {"app": "a"}
    # the template still gets restartPolicy Always; validation then rejects it for Jobs, as upstream
    assert spec["template"]["spec"]["restartPolicy"] == "Always"

    job = {"kind": "Job", "spec": {"parallelism": 3, "backoffLimitPerIndex": 1, "podFailurePolicy": {"rules": []},
                                   "template": template()}}
    apply_defaults(job)
    assert "completions" not in job["spec"]
    assert job["spec"]["backoffLimit"] == 2**31 - 1
    assert job["spec"]["podReplacementPolicy"] == "Failed"


# --- other kinds -----------------------------------------------------------------------------


def test_service_defaults():
    svc = {"kind": "Service", "metadata": {"name": "s"},
           "spec": {"selector": {"app": "a"},
                    "ports": [{"port": 80}, {"port": 443, "targetPort": "https", "protocol": "UDP"}]}}
    apply_defaults(svc)
    assert svc["spec"] == {
        "selector": {"app": "a"},
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                  {"port": 443, "targetPort": "https", "protocol": "UDP"}],
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster",
    }
    lb = {"kind": "Service", "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "sessionAffinity": "ClientIP"}}
    apply_defaults(lb)
    assert lb["spec"]["externalTrafficPolicy"] == "Cluster"
    assert lb["spec"]["allocateLoadBalancerNodePorts"] is True
    assert lb["spec"]["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


def test_namespace_defaults():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    apply_defaults(ns)
    assert ns == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team", "labels": {"kubernetes.io/metadata.name": "team"}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    # once the finalizer is gone from a live namespace, defaulting does not bring it back
    ns["spec"]["finalizers"] = []
    ns["status"]["phase"] = "Terminating"
    apply_defaults(ns)
    assert ns["spec"]["finalizers"] == [] and ns["status"]["phase"] == "Terminating"


def test_priority_class_node_and_unknown_kinds():
    pc = {"kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
    apply_defaults(pc)
    assert pc["preemptionPolicy"] == "PreemptLowerPriority" and "namespace" not in pc["metadata"]
    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "pods": "110"}}}
    apply_defaults(node)
    assert node["status"]["allocatable"] == {"cpu": "4", "pods": "110"}
    assert "namespace" not in node["metadata"]
    assert node["spec"] == {}  # NodeSpec is a struct: a Node without one reads back with spec: {}
    lease = {"kind": "Lease", "metadata": {"name": "l"}}
    apply_defaults(lease)
    assert lease == {"kind": "Lease", "metadata": {"name": "l", "namespace": "default"}}
    other = {"kind": "Widget", "metadata": {"name": "w"}}
    apply_defaults(other)
    assert other == {"kind": "Widget", "metadata": {"name": "w"}}


# --- QoS ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("containers", "init", "expected"),
    [
        ([ctr()], [], "BestEffort"),
        ([ctr(**res(requests={"cpu": "0", "memory": "0"}))], [], "BestEffort"),  # zero requests do not count
        ([ctr(**res(requests={"ephemeral-storage": "1Gi"}))], [], "BestEffort"),  # only cpu/memory count
        ([ctr(**res(requests={"cpu": "100m"}))], [], "Burstable"),
        ([ctr(**res(limits={"cpu": "1", "memory": "1Gi"}))], [], "Guaranteed"),  # requests default to limits
        ([ctr(**res(requests={"cpu": "1", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}))], [], "Guaranteed"),
        ([ctr(**res(requests={"cpu": "1000m", "memory": "1024Mi"}, limits={"cpu": "1", "memory": "1Gi"}))], [],
         "Guaranteed"),
        ([ctr(**res(requests={"cpu": "500m", "memory": "1Gi"}, limits={"cpu": "1", "memory": "1Gi"}))], [],
         "Burstable"),
        ([ctr(**res(limits={"cpu": "1"}))], [], "Burstable"),  # memory limit missing
        ([ctr("a", **res(limits={"cpu": "1", "memory": "1Gi"})), ctr("b")], [], "Burstable"),
        ([ctr(**res(limits={"cpu": "1", "memory": "1Gi"}))], [ctr("i")], "Burstable"),  # init containers count
        ([ctr(**res(limits={"cpu": "1", "memory": "1Gi"}))], [ctr("i", **res(limits={"cpu": "2", "memory": "1Gi"}))],
         "Guaranteed"),
        ([ctr(**res(limits={"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"}))], [], "Guaranteed"),
    ],
)
def test_qos_class(containers, init, expected):
    p = pod(*containers, init=init)
    assert compute_qos_class(p) == expected
    apply_defaults(p)  # same answer on the defaulted pod
    assert qos_class(p) == expected


def test_qos_class_prefers_recorded_status():
    p = pod(ctr())
    p["status"] = {"qosClass": "Burstable"}
    assert qos_class(p) == "Burstable"
    assert compute_qos_class(p) == "BestEffort"


# --- effective requests -------------------------------------------------------------------------


def test_pod_requests_sums_regular_containers():
    spec = pod(ctr("a", **res(requests={"cpu": "100m", "memory": "100Mi"})),
               ctr("b", **res(requests={"cpu": "250m"}, limits={"memory": "1Gi"})))["spec"]
    assert pod_requests(spec) == {"cpu": 350, "memory": 100 * 2**20 + 2**30}


def test_pod_requests_init_containers_take_the_max():
    spec = pod(ctr(**res(requests={"cpu": "200m", "memory": "1Gi"})),
               init=[ctr("i1", **res(requests={"cpu": "1"})), ctr("i2", **res(requests={"memory": "512Mi"}))])["spec"]
    assert pod_requests(spec) == {"cpu": 1000, "memory": 2**30}


def test_pod_requests_native_sidecar_before_init_container():
    # sidecar (100m) keeps running while init (500m) runs, and alongside the app (200m)
    spec = pod(ctr(**res(requests={"cpu": "200m"})),
               init=[ctr("sidecar", restartPolicy="Always", **res(requests={"cpu": "100m"})),
                     ctr("init", **res(requests={"cpu": "500m"}))])["spec"]
    assert pod_requests(spec) == {"cpu": 600}


def test_pod_requests_native_sidecar_after_init_container():
    spec = pod(ctr(**res(requests={"cpu": "200m"})),
               init=[ctr("init", **res(requests={"cpu": "500m"})),
                     ctr("sidecar", restartPolicy="Always", **res(requests={"cpu": "100m"}))])["spec"]
    assert pod_requests(spec) == {"cpu": 500}
    spec["initContainers"][0]["resources"]["requests"]["cpu"] = "250m"
    assert pod_requests(spec) == {"cpu": 300}


def test_pod_requests_overhead_and_other_resources():
    spec = pod(ctr(**res(requests={"cpu": "1", "ephemeral-storage": "1Gi", "nvidia.com/gpu": "2"})),
               overhead={"cpu": "250m", "memory": "120Mi"})["spec"]
    assert pod_requests(spec) == {"cpu": 1250, "ephemeral-storage": 2**30, "memory": 120 * 2**20, "nvidia.com/gpu": 2}
    assert pod_requests(spec, exclude_overhead=True) == {"cpu": 1000, "ephemeral-storage": 2**30, "nvidia.com/gpu": 2}


def test_pod_requests_non_missing_only_fills_unset_requests():
    spec = pod(ctr("a"), ctr("b", **res(requests={"cpu": "0"})), ctr("c", **res(requests={"memory": "1Gi"})))["spec"]
    filled = pod_requests(spec, non_missing={"cpu": "100m", "memory": "200M"})
    assert filled == {"cpu": 200, "memory": 400_000_000 + 2**30}
    assert pod_requests(spec) == {"cpu": 0, "memory": 2**30}


def test_pod_requests_pod_level_resources_override():
    spec = pod(ctr(**res(requests={"cpu": "100m", "memory": "64Mi"})),
               resources={"requests": {"cpu": "1"}, "limits": {"cpu": "2"}})["spec"]
    assert pod_requests(spec) == {"cpu": 1000, "memory": 64 * 2**20}


def test_pod_requests_empty_pod():
    assert pod_requests({"containers": [ctr()]}) == {}


def test_webhook_configuration_defaults():
    """admissionregistration/v1 SetDefaults_ValidatingWebhook / MutatingWebhook, SetDefaults_Rule and
    SetDefaults_ServiceReference; what is set stays."""
    hook = {"name": "h.example.com", "clientConfig": {"service": {"namespace": "n", "name": "s"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 5}
    validating = {"kind": "ValidatingWebhookConfiguration", "webhooks": [copy.deepcopy(hook)]}
    apply_defaults(validating)
    assert validating["webhooks"][0] == {**hook, "failurePolicy": "Fail", "matchPolicy": "Equivalent",
                                         "namespaceSelector": {}, "objectSelector": {}, "timeoutSeconds": 5,
                                         "clientConfig": {"service": {"namespace": "n", "name": "s", "port": 443}},
                                         "rules": [{**hook["rules"][0], "scope": "*"}]}
    mutating = {"kind": "MutatingWebhookConfiguration", "webhooks": [copy.deepcopy(hook)]}
    apply_defaults(mutating)
    assert mutating["webhooks"][0]["reinvocationPolicy"] == "Never"
    assert "reinvocationPolicy" not in validating["webhooks"][0]


def test_admission_policy_defaults():
    policy = {"kind": "ValidatingAdmissionPolicy", "spec": {"matchConstraints": {"resourceRules": [{}]}}}
    apply_defaults(policy)
    assert policy["spec"] == {"failurePolicy": "Fail", "matchConstraints": {
        "resourceRules": [{"scope": "*"}], "matchPolicy": "Equivalent", "namespaceSelector": {},
        "objectSelector": {}}}
    binding = {"kind": "ValidatingAdmissionPolicyBinding", "spec": {"policyName": "p", "paramRef": {"name": "c"}}}
    apply_defaults(binding)
    assert binding["spec"] == {"policyName": "p", "paramRef": {"name": "c", "parameterNotFoundAction": "Deny"}}


@pytest.mark.parametrize("version,expected", [
    ("1.19", {"attachRequired": True, "podInfoOnMount": False, "volumeLifecycleModes": ["Persistent"]}),
    ("1.27", {"attachRequired": True, "podInfoOnMount": False, "volumeLifecycleModes": ["Persistent"],
              "storageCapacity": False, "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False}),
    ("1.33", {"attachRequired": True, "podInfoOnMount": False, "volumeLifecycleModes": ["Persistent"],
              "storageCapacity": False, "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
              "seLinuxMount": False}),
])
def test_csi_driver_defaults_follow_the_release(version, expected):
    """storage/v1 SetDefaults_CSIDriver: the fields its release's feature gates default; an explicit false and
    a non-empty list stay."""
    from podlife.api.defaults import default_csi_driver
    from podlife.versions import profile

    driver = {"kind": "CSIDriver", "spec": {}}
    default_csi_driver(driver, profile(version).csi_driver_defaults)
    assert driver["spec"] == expected
    driver = {"kind": "CSIDriver", "spec": {"attachRequired": False, "volumeLifecycleModes": ["Ephemeral"]}}
    default_csi_driver(driver, profile(version).csi_driver_defaults)
    assert (driver["spec"]["attachRequired"], driver["spec"]["volumeLifecycleModes"]) == (False, ["Ephemeral"])


class _Classes:
    def __init__(self, *classes: tuple[str, str]) -> None:
        self.classes = [{"metadata": {"name": n, "creationTimestamp": t, "annotations": {
            "ingressclass.kubernetes.io/is-default-class": "true"}}} for n, t in classes]

    def list(self, kind: str) -> list[dict]:
        assert kind == "IngressClass"
        return self.classes


def test_default_ingress_class_by_release():
    from podlife.api.admission import DefaultIngressClass
    from podlife.api.errors import ApiError

    store = _Classes(("old", "2024-01-01T00:00:00Z"), ("new-b", "2024-01-02T00:00:00Z"),
                     ("new-a", "2024-01-02T00:00:00Z"))
    ingress = {"kind": "Ingress", "metadata": {"name": "i"}, "spec": {}}
    DefaultIngressClass(store, newest_wins=True).admit(ingress)
    assert ingress["spec"]["ingressClassName"] == "new-a"   # the newest, then the lower name
    with pytest.raises(ApiError) as e:   # before 1.25
        DefaultIngressClass(store, newest_wins=False).admit({"kind": "Ingress", "metadata": {"name": "i"}})
    assert (e.value.code, e.value.message) == (403, 'ingresses.networking.k8s.io "i" is forbidden: Internal error '
                                                    'occurred: 3 default IngressClasses were found, only 1 allowed')
    named = {"kind": "Ingress", "metadata": {"name": "i"}, "spec": {"ingressClassName": "mine"}}
    DefaultIngressClass(store).admit(named)
    assert named["spec"]["ingressClassName"] == "mine"

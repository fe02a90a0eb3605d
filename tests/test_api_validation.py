"""Validation, checked against pkg/apis/core/validation, pkg/apis/apps/validation,
pkg/apis/batch/validation, scheduling and coordination validation (paths and wording)."""

import copy

import pytest

from podlife.api import names
from podlife.api.defaults import apply_defaults
from podlife.api.validation import reset_rules, set_rules, validate, validate_update
from podlife.api.validation.core_pod import POD_UPDATE_FORBIDDEN_MSG
from podlife.api.validation.objectmeta import validate_object_meta_update
from podlife.versions import NEWEST, profile
from tests.helpers import newest_rules  # noqa: F401  (the fixture)

pytestmark = pytest.mark.usefixtures("newest_rules")


def errs(obj, **kw):
    return [str(e) for e in validate(obj, **kw)]


def defaulted(obj):
    apply_defaults(obj)
    return obj


def make_pod(*containers, init=(), meta=None, **spec):
    containers = containers or ({"name": "app", "image": "nginx:1.25"},)
    body = {"containers": [dict(c) for c in containers], **spec}
    if init:
        body["initContainers"] = [dict(c) for c in init]
    return defaulted({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", **(meta or {})}, "spec": body})


def c(name="app", image="nginx:1.25", **extra):
    return {"name": name, "image": image, **extra}


# --- Pod: metadata ----------------------------------------------------------------------------


def test_valid_pod_has_no_errors():
    p = make_pod(c(ports=[{"containerPort": 80, "name": "http"}],
                   resources={"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1", "memory": "128Mi"}},
                   livenessProbe={"httpGet": {"port": "http"}}, readinessProbe={"tcpSocket": {"port": 80}},
                   startupProbe={"exec": {"command": ["true"]}}, lifecycle={"preStop": {"sleep": {"seconds": 5}}},
                   env=[{"name": "A", "value": "1"}], volumeMounts=[{"name": "data", "mountPath": "/data"}]),
                 meta={"labels": {"app": "web"}, "annotations": {"Example.com/Note": "x"}},
                 volumes=[{"name": "data", "emptyDir": {}}],
                 nodeSelector={"kubernetes.io/os": "linux"},
                 tolerations=[{"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute",
                               "tolerationSeconds": 30},
                              {"operator": "Exists"}],
                 activeDeadlineSeconds=60)
    assert validate(p) == []


def test_name_required_unless_generate_name():
    p = make_pod(meta={"name": ""})
    assert errs(p) == ["metadata.name: Required value: name or generateName is required"]
    p = make_pod(meta={"name": "", "generateName": "web-"})
    assert errs(p) == []
    p = make_pod(meta={"name": "", "generateName": "Web-"})
    assert errs(p) == ['metadata.generateName: Invalid value: "Web-": ' + names.DNS1123_SUBDOMAIN_ERROR]


def test_name_must_be_dns_subdomain():
    p = make_pod(meta={"name": "My_Pod"})
    (e,) = validate(p)
    assert (e.path, e.type, e.value) == ("metadata.name", "Invalid value", "My_Pod")
    assert e.detail == (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    )
    assert errs(make_pod(meta={"name": "a" * 254})) == [
        'metadata.name: Invalid value: "' + "a" * 254 + '": must be no more than 253 characters'
    ]


def test_namespace_required_and_labels_annotations_checked():
    p = make_pod()
    p["metadata"]["namespace"] = ""
    p["metadata"]["labels"] = {"ok": "-bad-"}
    p["metadata"]["annotations"] = {"a/b/c": "x"}
    got = validate(p)
    assert [(e.path, e.type) for e in got] == [
        ("metadata.namespace", "Required value"),
        ("metadata.labels", "Invalid value"),
        ("metadata.annotations", "Invalid value"),
    ]


def test_finalizers_and_owner_references():
    p = make_pod(meta={"finalizers": ["custom", "example.com/ok"],
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1",
                                            "controller": True},
                                           {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs2", "uid": "2",
                                            "controller": True}]})
    got = errs(p)
    assert got[0].startswith("metadata.ownerReferences: Invalid value: ")
    assert got[0].endswith(': Only one reference can have Controller set to true. Found "true" in references for '
                           'ReplicaSet/rs and ReplicaSet/rs2')
    assert got[1] == ('metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor '
                      'is it fully qualified')
    assert len(got) == 2


# --- Pod: containers -----------------------------------------------------------------------------


def test_containers_required():
    p = make_pod()
    p["spec"]["containers"] = []
    assert errs(p) == ["spec.containers: Required value"]


def test_container_name_and_image():
    p = make_pod(c(name="", image=""))
    assert errs(p) == ["spec.containers[0].name: Required value", "spec.containers[0].image: Required value"]
    p = make_pod(c(name="App"))
    assert errs(p) == ['spec.containers[0].name: Invalid value: "App": ' + names.DNS1123_LABEL_ERROR]
    assert names.DNS1123_LABEL_ERROR == (
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
        "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )
    p = make_pod(c(name="a.b"))
    assert errs(p) == ['spec.containers[0].name: Invalid value: "a.b": must not contain dots']
    p = make_pod(c(image=" nginx"))
    assert errs(p) == ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing '
                       'whitespace']


def test_container_names_unique_across_regular_and_init():
    p = make_pod(c("a"), c("a"), init=[c("a", image="busybox"), c("i"), c("i")])
    assert errs(p) == [
        'spec.containers[1].name: Duplicate value: "a"',
        'spec.initContainers[0].name: Duplicate value: "a"',
        'spec.initContainers[2].name: Duplicate value: "i"',
    ]


def test_fields_defaulting_fills_are_required_when_missing():
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [c()]}}
    assert errs(p) == [
        "spec.terminationGracePeriodSeconds: Required value",
        "spec.containers[0].terminationMessagePolicy: Required value",
        "spec.containers[0].imagePullPolicy: Required value",
        "spec.restartPolicy: Required value",
        "spec.dnsPolicy: Required value",
    ]


def test_restart_policy_unsupported():
    assert errs(make_pod(restartPolicy="Sometimes")) == [
        'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
    ]
    assert errs(make_pod(dnsPolicy="Cluster")) == [
        'spec.dnsPolicy: Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", '
        '"Default", "None"'
    ]
    p = make_pod(c(imagePullPolicy="Sometimes"))
    assert errs(p) == ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: '
                       '"Always", "IfNotPresent", "Never"']


def test_requests_must_not_exceed_limits():
    p = make_pod(c(resources={"requests": {"cpu": "1"}, "limits": {"cpu": "500m"}}))
    (e,) = validate(p)
    assert (e.path, e.type, e.value, e.detail) == (
        "spec.containers[0].resources.requests", "Invalid value", "1",
                                                   "must be less than or equal to cpu limit of 500m")
    p = make_pod(c(resources={"requests": {"memory": "2048Mi"}, "limits": {"memory": "1Gi"}}))
    assert errs(p) == ['spec.containers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to '
                       'memory limit of 1Gi']
    p = make_pod(c(resources={"requests": {"cpu": "1000m"}, "limits": {"cpu": "1"}}))
    assert errs(p) == []


def test_resource_quantities_and_names():
    p = make_pod(c(resources={"limits": {"cpu": "-1", "memory": "1Gb"}}))
    got = errs(p)
    assert ('spec.containers[0].resources.limits[memory]: Invalid value: "1Gb": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") in got
    assert 'spec.containers[0].resources.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0' in got
    p = make_pod(c(resources={"requests": {"foo": "1"}}))
    assert errs(p) == [
        'spec.containers[0].resources.requests[foo]: Invalid value: "foo": must be a standard resource type or fully '
        'qualified',
        'spec.containers[0].resources.requests[foo]: Invalid value: "foo": must be a standard resource for containers',
    ]
    p = make_pod(c(resources={"limits": {"pods": "1"}}))  # defaulting copies the limit into requests
    assert errs(p) == [
        'spec.containers[0].resources.limits[pods]: Invalid value: "pods": must be a standard resource for containers',
        'spec.containers[0].resources.requests[pods]: Invalid value: "pods": must be a standard resource for '
        'containers',
    ]


def test_extended_resources_must_be_integers_and_not_overcommitted():
    p = make_pod(c(resources={"limits": {"example.com/gpu": "500m"}}))
    assert errs(p) == [
        'spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer',
        'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer',
    ]
    p = make_pod(c(resources={"requests": {"example.com/gpu": "1"}, "limits": {"example.com/gpu": "2"}}))
    assert errs(p) == ['spec.containers[0].resources.requests: Invalid value: "1": must be equal to example.com/gpu '
                       'limit of 2']
    p = make_pod(c(resources={"requests": {"example.com/gpu": "1"}}))
    assert errs(p) == ["spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
                       "resources"]


def test_hugepages_rules():
    p = make_pod(c(resources={"limits": {"hugepages-2Mi": "3Mi"}}))
    got = errs(p)
    assert ('spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: "3Mi": 3Mi is not positive integer '
            'multiple of hugepages-2Mi') in got
    assert "spec.containers[0].resources: Forbidden: HugePages require cpu or memory" in got
    p = make_pod(c(resources={"limits": {"hugepages-2Mi": "4Mi", "memory": "1Gi"}}))
    assert errs(p) == []


def test_container_ports():
    p = make_pod(c(ports=[{"containerPort": 0}, {"containerPort": 70000, "hostPort": 8080, "protocol": "HTTP"},
                          {"containerPort": 81, "name": "web"}, {"containerPort": 82, "name": "web"},
                          {"containerPort": 83, "name": "123"}]))
    assert errs(p) == [
        "spec.containers[0].ports[0].containerPort: Required value",
        "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.containers[0].ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        'spec.containers[0].ports[3].name: Duplicate value: "web"',
        'spec.containers[0].ports[4].name: Invalid value: "123": must contain at least one letter (a-z)',
    ]


def test_host_port_conflicts_and_host_network():
    p = make_pod(c("a", ports=[{"containerPort": 80, "hostPort": 8080}]),
                 c("b", ports=[{"containerPort": 81, "hostPort": 8080}]))
    assert errs(p) == ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']
    p = make_pod(c(ports=[{"containerPort": 80, "hostPort": 81}]), hostNetwork=True)
    assert errs(p) == ["spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when "
                       "`hostNetwork` is true"]


def test_env_and_volume_mounts():
    p = make_pod(c(env=[{"name": ""}, {"name": "A=B"},
                        {"name": "X", "value": "1", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                   volumeMounts=[{"name": "missing", "mountPath": "/a"}, {"name": "v", "mountPath": "/a"}]),
                 volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "configMap": {"name": "c"}},
                          {"name": "two", "emptyDir": {}, "hostPath": {"path": "/x"}}])
    assert errs(p) == [
        'spec.volumes[1].name: Duplicate value: "v"',
        "spec.volumes[2].hostPath: Forbidden: may not specify more than 1 volume type",
        "spec.containers[0].env[0].name: Required value",
        "spec.containers[0].env[1].name: Invalid value: \"A=B\": a valid environment variable name must consist only "
        "of printable ASCII characters other than '='",
        'spec.containers[0].env[2].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
        'spec.containers[0].volumeMounts[0].name: Not found: "missing"',
        'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/a": must be unique',
    ]


# --- Pod: init containers, probes, lifecycle ----------------------------------------------------


def test_init_container_restart_policy_only_always():
    # without ContainerRestartRules (before 1.35): init containers restart Always (sidecars) or not at all
    token = set_rules(profile(NEWEST, {"ContainerRestartRules": False}))
    try:
        p = make_pod(init=[c("sidecar", image="envoy", restartPolicy="Always")])
        assert errs(p) == []
        p = make_pod(init=[c("init", image="busybox", restartPolicy="Never")])
        assert errs(p) == ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: '
                           '"Always"']
        p = make_pod(c(restartPolicy="Always"))
        assert errs(p) == ["spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"]
    finally:
        reset_rules(token)


def test_container_restart_policy_and_rules_with_container_restart_rules():
    # KEP-5307 (beta, on from 1.35): any container may set Always, OnFailure or Never, and rules whose action is
    # Restart and whose exit codes are matched In or NotIn (the pod-lifecycle page's restart-on-exit-codes example)
    rules = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}]
    assert errs(make_pod(c(restartPolicy="Never", restartPolicyRules=rules))) == []
    assert errs(make_pod(init=[c("init", image="busybox", restartPolicy="Never")])) == []
    p = make_pod(c(restartPolicy="Sometimes", restartPolicyRules=[{"action": "Kill", "exitCodes": {"operator": "Is"}}]))
    assert errs(p) == [
        'spec.containers[0].restartPolicy: Unsupported value: "Sometimes": supported values: "Always", '
        '"OnFailure", "Never"',
        'spec.containers[0].restartPolicyRules[0].action: Unsupported value: "Kill": supported values: "Restart", '
        '"RestartAllContainers"',
        'spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: '
        '"In", "NotIn"',
    ]


def test_init_containers_without_always_may_not_have_probes_or_hooks():
    probe = {"exec": {"command": ["true"]}}
    p = make_pod(init=[c("init", image="busybox", readinessProbe=probe, lifecycle={"postStart": probe})])
    assert errs(p) == [
        "spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always",
        "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without "
        "restartPolicy=Always",
    ]
    p = make_pod(init=[c("init", image="busybox", restartPolicy="Always", readinessProbe=probe,
                         lifecycle={"postStart": probe})])
    assert errs(p) == []


def test_probe_handlers():
    p = make_pod(c(livenessProbe={"periodSeconds": 5}))
    assert errs(p) == ["spec.containers[0].livenessProbe: Required value: must specify a handler type"]
    p = make_pod(c(readinessProbe={"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}, "httpGet": {"port": 80}}))
    assert errs(p) == [
        "spec.containers[0].readinessProbe.httpGet: Forbidden: may not specify more than 1 handler type",
        "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type",
    ]
    p = make_pod(c(livenessProbe={"exec": {}}, readinessProbe={"grpc": {"port": 0}},
                   startupProbe={"tcpSocket": {"port": "no_such"}}))
    assert errs(p) == [
        "spec.containers[0].livenessProbe.exec.command: Required value",
        "spec.containers[0].readinessProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive",
        'spec.containers[0].startupProbe.tcpSocket.port: Invalid value: "no_such": must contain only alpha-numeric '
        'characters (a-z, 0-9), and hyphens (-)',
    ]


def test_probe_numbers():
    probe = {"exec": {"command": ["true"]}, "successThreshold": 2, "periodSeconds": -1, "initialDelaySeconds": -5}
    p = make_pod(c(livenessProbe=dict(probe), readinessProbe=dict(probe), startupProbe=dict(probe)))
    assert errs(p) == [
        "spec.containers[0].livenessProbe.initialDelaySeconds: Invalid value: -5: must be greater than or equal to 0",
        "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
        "spec.containers[0].readinessProbe.initialDelaySeconds: Invalid value: -5: must be greater than or equal to 0",
        "spec.containers[0].readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.containers[0].startupProbe.initialDelaySeconds: Invalid value: -5: must be greater than or equal to 0",
        "spec.containers[0].startupProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.containers[0].startupProbe.successThreshold: Invalid value: 2: must be 1",
    ]
    p = make_pod(c(readinessProbe={"exec": {"command": ["x"]}, "terminationGracePeriodSeconds": 5},
                   livenessProbe={"exec": {"command": ["x"]}, "terminationGracePeriodSeconds": 0}))
    assert errs(p) == [
        "spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0",
        "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for "
        "readinessProbes",
    ]


def test_http_get_probe_scheme_and_path():
    p = make_pod(c(livenessProbe={"httpGet": {"port": 80, "scheme": "FTP"}}))
    assert errs(p) == ['spec.containers[0].livenessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: '
                       '"HTTP", "HTTPS"']


def test_lifecycle_hooks():
    p = make_pod(c(lifecycle={"preStop": {"exec": {"command": ["x"]}, "sleep": {"seconds": 1}}, "postStart": {}}))
    assert errs(p) == [
        "spec.containers[0].lifecycle.postStart: Required value: must specify a handler type",
        "spec.containers[0].lifecycle.preStop.sleep: Forbidden: may not specify more than 1 handler type",
    ]
    p = make_pod(c(lifecycle={"preStop": {"sleep": {"seconds": 31}}}))
    assert errs(p) == ["spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and less "
                       "than terminationGracePeriodSeconds (30)"]
    p = make_pod(c(lifecycle={"preStop": {"grpc": {"port": 80}}}))  # grpc is a probe-only handler
    assert errs(p) == ["spec.containers[0].lifecycle.preStop: Required value: must specify a handler type"]


def test_legacy_sidecar_lifecycle_type_is_accepted():
    p = make_pod(c(lifecycle={"type": "Sidecar"}))
    assert validate(p) == []
    p = make_pod(c(lifecycle={"type": "Sidecar", "preStop": {"exec": {"command": ["x"]}}}))
    assert validate(p) == []


# --- Pod: spec fields ----------------------------------------------------------------------------


def test_active_deadline_and_grace_period():
    assert errs(make_pod(activeDeadlineSeconds=0)) == [
        "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive"
    ]
    assert errs(make_pod(activeDeadlineSeconds=1)) == []
    assert errs(make_pod(terminationGracePeriodSeconds=-1)) == []  # upstream accepts negative values


def test_tolerations():
    p = make_pod(tolerations=[
        {"key": "k", "operator": "Like", "effect": "NoSchedule"},
        {"key": "k", "operator": "Exists", "value": "v"},
        {"key": "", "operator": "Equal", "value": "v"},
        {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5},
        {"key": "k", "effect": "Never"},
        {"key": "-k-", "operator": "Exists"},
    ])
    assert errs(p) == [
        'spec.tolerations[0].operator: Unsupported value: "Like": supported values: "Equal", "Exists"',
        'spec.tolerations[1].operator: Invalid value: "v": value must be empty when `operator` is \'Exists\'',
        'spec.tolerations[2].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which '
        'means "match all values and all keys"',
        'spec.tolerations[3].effect: Invalid value: "NoSchedule": effect must be \'NoExecute\' when '
        '`tolerationSeconds` is set',
        'spec.tolerations[4].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", '
        '"NoExecute"',
        'spec.tolerations[5].key: Invalid value: "-k-": name part must consist of alphanumeric characters, \'-\', '
        '\'_\' or \'.\', '
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def test_node_selector_affinity_and_spread():
    node_affinity = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []},
                     "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}]}
    anti_affinity = {"requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {}}]}
    spread = [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
              {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
    p = make_pod(nodeSelector={"bad key": "v"},
                 affinity={"nodeAffinity": node_affinity, "podAntiAffinity": anti_affinity},
                 topologySpreadConstraints=spread)
    got = errs(p)
    assert got[0].startswith('spec.nodeSelector: Invalid value: "bad key": name part must consist')
    assert got[1:] == [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: "
        "must have at least one node selector term",
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must "
        "be in the range 1-100",
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: "
        "can not be empty",
        'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: '
        '"": name part must be non-empty',
        got[5],
        "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        'spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: "{zone, DoNotSchedule}"',
    ]
    assert got[5].startswith('spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]'
                             '.topologyKey: Invalid value: "": name part must consist')


def test_scheduling_gates_and_node_name_on_create():
    p = make_pod(nodeName="n1", schedulingGates=[{"name": "example.com/gate"}, {"name": "example.com/gate"}])
    assert errs(p) == [
        'spec.schedulingGates[1]: Duplicate value: "example.com/gate"',
        "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
    ]
    p = make_pod(ephemeralContainers=[{"name": "dbg", "image": "busybox"}])
    assert errs(p) == ["spec.ephemeralContainers: Forbidden: cannot be set on create"]


def test_pod_annotations():
    p = make_pod(meta={"annotations": {"kubernetes.io/config.mirror": "x",
                                       "controller.kubernetes.io/pod-deletion-cost": "1.5"}})
    assert errs(p) == [
        'metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set spec.nodeName if mirror pod '
        'annotation is set',
        'metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "1.5": must be a 32bit '
        'integer',
    ]


# --- Pod updates ----------------------------------------------------------------------------------


def stored_pod(**spec):
    p = make_pod(**spec)
    p["metadata"].update({"resourceVersion": "7", "uid": "u1"})
    return p


def test_pod_update_allows_image_change():
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert validate(new, old=old) == []
    assert validate_update(new, old) == []


def test_pod_update_rejects_other_spec_changes():
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["restartPolicy"] = "Never"
    (e,) = validate(new, old=old)
    assert (e.path, e.type) == ("spec", "Forbidden")
    assert e.detail.startswith(POD_UPDATE_FORBIDDEN_MSG + "\n")
    assert POD_UPDATE_FORBIDDEN_MSG == (
        "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    )
    assert "restartPolicy" in e.detail


def test_pod_update_container_count_and_image():
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"].append(dict(new["spec"]["containers"][0], name="second"))
    assert errs(new, old=old) == ["spec.containers: Forbidden: pod updates may not add or remove containers"]
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = ""
    assert errs(new, old=old) == ["spec.containers[0].image: Required value",
                                  "spec.containers[0].image: Required value"]


def test_pod_update_active_deadline_seconds():
    old = stored_pod(activeDeadlineSeconds=100)
    new = copy.deepcopy(old)
    new["spec"]["activeDeadlineSeconds"] = 50
    assert errs(new, old=old) == []
    new["spec"]["activeDeadlineSeconds"] = 200
    assert errs(new,
                old=old) == ["spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous "
                             "value"]
    del new["spec"]["activeDeadlineSeconds"]
    got = validate(new, old=old)
    assert [(e.path, e.detail)
            for e in got] == [("spec.activeDeadlineSeconds", "must not update from a positive integer to nil value")]
    old = stored_pod()
    new = copy.deepcopy(old)
    new["spec"]["activeDeadlineSeconds"] = 10
    assert errs(new, old=old) == []


def test_pod_update_tolerations_only_additions():
    tol = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 60}
    old = stored_pod(tolerations=[tol])
    new = copy.deepcopy(old)
    new["spec"]["tolerations"].append({"key": "x", "operator": "Exists"})
    new["spec"]["tolerations"][0]["tolerationSeconds"] = 10
    assert errs(new, old=old) == []
    new["spec"]["tolerations"][0]["value"] = "w"
    assert errs(new,
                old=old) == ["spec.tolerations: Forbidden: existing toleration can not be modified except its "
                             "tolerationSeconds"]


def test_pod_update_grace_period_negative_to_one():
    old = stored_pod(terminationGracePeriodSeconds=-1)
    new = copy.deepcopy(old)
    new["spec"]["terminationGracePeriodSeconds"] = 1
    assert errs(new, old=old) == []
    new["spec"]["terminationGracePeriodSeconds"] = 2
    assert [e.path for e in validate(new, old=old)] == ["spec"]


def test_pod_update_scheduling_gates_and_gated_node_selector():
    old = stored_pod(schedulingGates=[{"name": "g1"}, {"name": "g2"}], nodeSelector={"a": "1"})
    new = copy.deepcopy(old)
    new["spec"]["schedulingGates"] = [{"name": "g2"}]
    new["spec"]["nodeSelector"]["b"] = "2"
    assert errs(new, old=old) == []
    new["spec"]["schedulingGates"] = [{"name": "g2"}, {"name": "g3"}]
    assert errs(new,
                old=old) == ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new "
                             "scheduling gate 'g3'"]
    new["spec"]["schedulingGates"] = []
    new["spec"]["nodeSelector"] = {"a": "2"}
    assert [e.detail
            for e in validate(new,
                              old=old)] == ["only additions to spec.nodeSelector are allowed (no mutations or "
                                            "deletions)"]


def test_object_meta_update_rules():
    old = stored_pod()
    new = copy.deepcopy(old)
    del new["metadata"]["resourceVersion"]  # an unconditional update: the store supplies it
    new["metadata"]["name"] = "other"
    assert errs(new, old=old) == ['metadata.name: Invalid value: "other": field is immutable']
    got = validate_object_meta_update(new["metadata"], old["metadata"], require_resource_version=True)
    assert [str(e) for e in got] == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        'metadata.name: Invalid value: "other": field is immutable',
    ]
    new = copy.deepcopy(old)
    new["metadata"]["generation"] = -1
    new["metadata"]["uid"] = "u2"
    assert errs(new, old=old) == [
        "metadata.generation: Invalid value: -1: must not be decremented",
        'metadata.uid: Invalid value: "u2": field is immutable',
        # ValidateObjectMeta on the new pod
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0",
    ]
    old["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["example.com/f"]
    assert errs(new, old=old) == [
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new '
        'finalizers []string{"example.com/f"}'
    ]


# --- workloads ---------------------------------------------------------------------------------------


def deployment(**spec):
    body = {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [c()]}}, **spec}
    return defaulted({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": body})


def test_valid_deployment():
    assert validate(deployment()) == []


def test_deployment_selector_rules():
    d = deployment(selector={"matchLabels": {"app": "other"}})
    (e,) = validate(d)
    assert (e.path, e.type, e.value, e.detail) == (
        "spec.template.metadata.labels", "Invalid value", {"app": "web"}, "`selector` does not match template `labels`")
    d = deployment()
    del d["spec"]["selector"]
    assert [e.path for e in validate(d)] == ["spec.selector", "spec.template.metadata.labels"]
    assert validate(d)[0].type == "Required value"
    d = deployment(selector={})
    assert [str(e)
            for e in validate(d)] == ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"]
    d = deployment(selector={"matchExpressions": [{"key": "app", "operator": "Is", "values": ["web"]}]})
    assert [(e.path, e.detail) for e in validate(d)] == [
        ("spec.selector.matchExpressions[0].operator", "not a valid selector operator"),
        ("spec.selector", "invalid label selector"),
    ]


def test_deployment_spec_rules():
    d = deployment(replicas=-1, minReadySeconds=700, revisionHistoryLimit=-2)
    assert errs(d) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        "spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0",
        "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds",
    ]


def test_deployment_strategy():
    d = deployment(strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})
    assert errs(d) == ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
                       "'Recreate'"]
    d = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}})
    assert errs(d) == ['spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` '
                       'is 0']
    d = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "abc", "maxUnavailable": "150%"}})
    assert errs(d) == [
        'spec.strategy.rollingUpdate.maxSurge: Invalid value: "abc": a valid percent string must be a numeric string '
        'followed by an ending \'%\' '
        "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
    ]
    d = deployment(strategy={"type": "BlueGreen"})
    assert [(e.path, e.type, e.detail) for e in validate(d)] == [
        ("spec.strategy", "Unsupported value", 'supported values: "Recreate", "RollingUpdate"')]


def test_deployment_template_is_validated_as_pod_template():
    d = deployment()
    tspec = d["spec"]["template"]["spec"]
    tspec["containers"][0]["image"] = ""
    tspec["restartPolicy"] = "Never"
    tspec["activeDeadlineSeconds"] = 5
    d["spec"]["template"]["metadata"]["labels"]["bad key"] = "x"
    got = errs(d)
    assert got[0].startswith('spec.template.labels: Invalid value: "bad key"')
    assert got[1:] == [
        "spec.template.spec.containers[0].image: Required value",
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
    ]


def test_invalid_selector_skips_template_validation_like_upstream():
    d = deployment()
    d["spec"]["selector"]["matchLabels"]["bad key"] = "x"
    d["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    got = validate(d)
    assert [(e.path, e.detail) for e in got][1:] == [("spec.selector", "invalid label selector")]
    assert got[0].path == "spec.selector.matchLabels"


def test_deployment_update_selector_is_immutable():
    old = deployment()
    old["metadata"]["resourceVersion"] = "3"
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    assert validate(new, old=old) == []
    new["spec"]["selector"]["matchLabels"]["tier"] = "fe"
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "fe"
    assert [(e.path, e.detail) for e in validate(new, old=old)] == [("spec.selector", "field is immutable")]


def test_replicaset():
    rs = defaulted({"kind": "ReplicaSet", "metadata": {"name": "rs"},
                    "spec": {"selector": {},
                             "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [c()]}}}})
    assert [e.detail for e in validate(rs)] == ["empty selector is invalid for deployment"]  # sic, upstream wording
    rs["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    assert validate(rs) == []


def statefulset(**spec):
    body = {"serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [c()]}}, **spec}
    return defaulted({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}, "spec": body})


def test_statefulset():
    assert validate(statefulset()) == []
    s = statefulset(podManagementPolicy="Random", replicas=-1)
    assert errs(s) == [
        "spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'",
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
    ]
    s = statefulset()
    s["metadata"]["name"] = "db.main"  # StatefulSet names are DNS labels
    assert errs(s) == ['metadata.name: Invalid value: "db.main": must not contain dots']
    s = statefulset(updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}})
    assert [e.detail for e in validate(s)] == ["only allowed for updateStrategy 'RollingUpdate'"]


def test_statefulset_template_pod_spec_not_validated_like_upstream():
    s = statefulset()
    s["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    assert validate(s) == []
    s["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert errs(s) == ['spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"']


def test_statefulset_update_forbids_other_fields():
    old = statefulset()
    old["metadata"]["resourceVersion"] = "1"
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert validate(new, old=old) == []
    new["spec"]["serviceName"] = "other"
    assert [(e.path, e.type) for e in validate(new, old=old)] == [("spec", "Forbidden")]


def test_daemonset():
    ds = defaulted({"kind": "DaemonSet", "metadata": {"name": "agent"},
                    "spec": {"selector": {"matchLabels": {"app": "agent"}},
                             "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [c()]}}}})
    assert validate(ds) == []
    del ds["spec"]["selector"]
    assert [e.path for e in validate(ds)] == ["spec.template.metadata.labels"]  # no separate Required, as upstream
    ds["spec"]["selector"] = {"matchLabels": {"app": "agent"}}
    ds["spec"]["updateStrategy"]["rollingUpdate"] = {"maxUnavailable": 0, "maxSurge": 0}
    assert errs(ds) == ["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge "
                        "is 0"]


def test_job():
    job = defaulted({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
                     "spec": {"selector": {"matchLabels": {"job": "pi"}},
                              "template": {"metadata": {"labels": {"job": "pi"}},
                                           "spec": {"containers": [c()], "restartPolicy": "Never"}}}})
    assert validate(job) == []
    job["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    job["spec"]["backoffLimit"] = -1
    assert errs(job) == [
        "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
    ]
    job = defaulted({"kind": "Job", "metadata": {"name": "pi"},
                     "spec": {"template": {"metadata": {"labels": {"job": "pi"}},
                                           "spec": {"containers": [c()], "restartPolicy": "OnFailure"}}}})
    assert [(e.path, e.type) for e in validate(job)] == [("spec.selector", "Required value"),
                                                         ("spec.template.metadata.labels", "Invalid value")]


# --- Service -------------------------------------------------------------------------------------------


def service(**spec):
    body = {"selector": {"app": "web"}, "ports": [{"port": 80}], **spec}
    return defaulted({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": body})


def test_valid_services():
    assert validate(service()) == []
    assert validate(service(ports=[], clusterIP="None")) == []  # headless needs no ports
    assert validate(service(type="ExternalName", externalName="example.com.", ports=[])) == []
    assert validate(service(type="LoadBalancer")) == []


def test_service_name_is_dns1035_label():
    s = service()
    s["metadata"]["name"] = "1web"
    assert errs(s) == [
        'metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or '
        '\'-\', '
        "start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_service_ports():
    assert errs(service(ports=[])) == ["spec.ports: Required value"]
    s = service(ports=[{"port": 0}, {"port": 80, "name": "Web"}, {"port": 80, "name": "Web"}])
    assert errs(s) == [
        "spec.ports[0].name: Required value",
        "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",  # defaulted from port
        'spec.ports[1].name: Invalid value: "Web": ' + names.DNS1123_LABEL_ERROR,
        'spec.ports[2].name: Invalid value: "Web": ' + names.DNS1123_LABEL_ERROR,
        'spec.ports[2].name: Duplicate value: "Web"',
        "spec.ports[2]: Duplicate value: {'protocol': 'TCP', 'port': 80}",
    ]


def test_service_type_and_affinity():
    s = service(type="Internal", sessionAffinity="Sticky")
    assert errs(s) == [
        'spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"',
        'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", '
        '"NodePort"',
    ]
    s = service(ports=[{"port": 80, "nodePort": 30080}])
    assert errs(s) == ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
    s = service(externalTrafficPolicy="Local")
    assert errs(s) == ['spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible '
                       'services']


# --- cluster-scoped and other kinds --------------------------------------------------------------------


def test_namespace():
    ns = defaulted({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    assert validate(ns) == []
    ns = defaulted({"kind": "Namespace", "metadata": {"name": "team.a", "namespace": "x"},
                    "spec": {"finalizers": ["custom"]}})
    assert errs(ns) == [
        'metadata.name: Invalid value: "team.a": must not contain dots',
        "metadata.namespace: Forbidden: not allowed on this type",
        'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]


def test_node():
    node = defaulted({"kind": "Node", "metadata": {"name": "node-1.example"},
                      "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
                      "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"}}})
    assert validate(node) == []
    node["spec"]["taints"] += [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}, {"key": "k"}]
    node["status"]["capacity"]["pods"] = node["status"]["allocatable"]["pods"] = "1.5"
    got = validate(node)
    assert [(e.path, e.type, e.detail) for e in got] == [
        ("metadata.taints[1]", "Duplicate value", "taints must be unique by key and effect pair"),
        ("metadata.taints[2].effect", "Required value", ""),
        ("status.capacity.pods", "Invalid value", "must be an integer"),
        ("status.allocatable.pods", "Invalid value", "must be an integer"),
    ]


def test_priority_class():
    pc = defaulted({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 1_000_000_000})
    assert validate(pc) == []
    pc["value"] = 1_000_000_001
    assert errs(pc) == ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
    sys_pc = defaulted({"kind": "PriorityClass", "metadata": {"name": "system-cluster-critical"},
                        "value": 2_000_000_000})
    assert validate(sys_pc) == []
    sys_pc["value"] = 5
    assert errs(sys_pc) == [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: value of system-cluster-critical PriorityClass must be 2000000000"
    ]
    other = defaulted({"kind": "PriorityClass", "metadata": {"name": "system-mine"}, "value": 1})
    assert errs(other) == [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. "
        "error: system-mine is not a known system priority class"
    ]
    pc = defaulted({"kind": "PriorityClass", "metadata": {"name": "low"}, "value": 1, "preemptionPolicy": "Sometimes"})
    assert errs(pc) == ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", '
                        '"Never"']


def test_priority_class_update_value_immutable():
    old = defaulted({"kind": "PriorityClass", "metadata": {"name": "high", "resourceVersion": "1"}, "value": 10})
    new = copy.deepcopy(old)
    new["value"] = 11
    assert errs(new, old=old) == ["value: Forbidden: may not be changed in an update."]


def test_lease():
    lease = defaulted({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": "node-1", "namespace": "kube-node-lease"},
                       "spec": {"holderIdentity": "node-1", "leaseDurationSeconds": 40}})
    assert validate(lease) == []
    lease["spec"].update(leaseDurationSeconds=0, leaseTransitions=-1)
    assert errs(lease) == [
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
    ]


def test_event_legacy_validation():
    ev = defaulted({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "team"},
                    "involvedObject": {"kind": "Pod", "name": "web", "namespace": "team"}, "reason": "Scheduled"})
    assert validate(ev) == []
    ev["involvedObject"]["namespace"] = "other"
    assert errs(ev) == ['involvedObject.namespace: Invalid value: "other": does not match event.namespace']
    # upstream v1 events do not require involvedObject when the event lives in "default"
    bare = defaulted({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}})
    assert validate(bare) == []
    new_style = defaulted({"kind": "Event", "metadata": {"name": "e", "namespace": "team"},
                           "eventTime": "2024-01-01T00:00:00.000000Z",
                           "involvedObject": {"namespace": "team"}})
    assert errs(new_style) == [
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        'reportingController: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or '
        '\'.\', '
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "reportingInstance: Required value",
        "action: Required value",
        "reason: Required value",
    ]


def test_events_k8s_io_v1_event_validation():
    # ValidateEventCreate: an events.k8s.io/v1 Event is validated in core.Event's field names (reportingController
    # is reportingComponent in core/v1 JSON, note is message), then with the strict checks of that version
    ev = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "team"},
          "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/my-controller",
          "reportingInstance": "my-controller-1", "action": "Started", "reason": "Started", "type": "Normal",
          "regarding": {"kind": "Pod", "name": "web", "namespace": "team"}, "note": "hello"}
    assert validate(ev) == []
    assert errs(dict(ev, note="x" * 1025, reportingController="")) == [
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        'reportingController: Invalid value: "": name part must consist of alphanumeric characters, \'-\', \'_\' or '
        "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'message: Invalid value: "": can have at most 1024 characters',
    ]
    bad = dict(ev, type="Info", deprecatedCount=3, deprecatedSource={"component": "kubelet"}, series={"count": 1},
               regarding={"kind": "Pod", "name": "web", "namespace": "other"})
    del bad["eventTime"]
    assert errs(bad) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace',
        'series.count: Invalid value: "": should be at least 2',
        "series.lastObservedTime: Required value",
        "eventTime: Required value",
        'type: Invalid value: "": has invalid value: Info',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
    ]
    # events.k8s.io/v1beta1 keeps the legacy checks only, as core/v1 does
    assert errs(dict(bad, apiVersion="events.k8s.io/v1beta1")) == [
        'involvedObject.namespace: Invalid value: "other": does not match event.namespace']


def test_kinds_without_a_validator_get_object_meta_validation():
    # custom resources and most stored kinds: ValidateObjectMeta with a DNS-subdomain name
    assert validate({"kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}) == []
    assert [str(e) for e in validate({"kind": "Widget", "metadata": {"name": "W_1", "namespace": "default"}})] == [
        'metadata.name: Invalid value: "W_1": ' + names.DNS1123_SUBDOMAIN_ERROR]
    old = {"kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}
    assert validate(dict(old), old=old) == []


@pytest.mark.parametrize("kind", ["Pod", "Deployment", "Service", "Namespace"])
def test_field_errors_have_known_types(kind):
    obj = {"kind": kind, "metadata": {"name": "Bad_Name"}, "spec": {}}
    for e in validate(obj):
        assert e.type in {"Required value", "Invalid value", "Unsupported value", "Duplicate value", "Forbidden",
                          "Not found"}


def test_malformed_values_are_reported_not_raised():
    # upstream rejects these while decoding JSON; here they become field errors instead of exceptions
    p = make_pod(c(name=5, ports="80", resources={"limits": ["1"]}), meta={"labels": ["a"]})
    got = errs(p)
    assert "metadata.labels: Invalid value: ['a']: must be a map of string keys to string values" in got
    assert "spec.containers[0].name: Invalid value: 5: must be a string" in got
    bad_kind = {"kind": ["Pod"], "metadata": {"name": "x"}}
    assert validate(bad_kind) == []

"""The field table (podlife.api.fieldsupport) covers every field of every modelled kind's schema, in every
version; a manifest that sets a not-modelled field gets exactly one warning naming it, in the warnings and the
report's assumptions; modelled and stored-only fields get none; the README lists the not-modelled fields."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from podlife.api import schema
from podlife.api.fieldsupport import (KINDS_TABLE, MODELLED, NOT_MODELLED, STORED, compiled, readme_list, rule_for,
                                      unmodelled)
from podlife.api.meta import KINDS
from podlife.cli import main
from podlife.scenario.assumptions import assumptions
from podlife.scenario.load import load_scenario
from podlife.versions import NEWEST_MINOR, OLDEST_MINOR

ROOT = Path(__file__).parent.parent


def _fields(ts: schema.TypeSchema, path: str, seen: frozenset[str]):
    """Every field path of a schema node: ``[]`` for a list's items; a recursive type is not entered again."""
    for key, prop in ts.fields().items():
        sub = schema.TypeSchema(ts._defs, prop)
        p = f"{path}.{key}" if path else key
        if sub.is_list:
            sub, p = sub.items(), p + "[]"
        yield p
        if sub.is_struct and sub.name not in seen:
            yield from _fields(sub, p, seen | {sub.name})


def _schema_fields():
    for minor in range(OLDEST_MINOR, NEWEST_MINOR + 1):
        for kind in KINDS:
            for api_version in schema.served_versions(minor, kind):
                ts = schema.type_schema(minor, api_version, kind)
                for p in _fields(ts, "", frozenset({ts.name})):
                    yield minor, api_version, kind, p


def test_every_schema_field_of_every_modelled_kind_is_classified_and_every_rule_is_a_field():
    missing, used = set(), set()
    for minor, api_version, kind, path in _schema_fields():
        rule = rule_for(kind, path)
        if rule is None:
            missing.add(f"1.{minor} {kind} ({api_version}) {path}")
        else:
            used.add((kind, rule.pattern))
    assert sorted(missing) == []
    assert set(KINDS_TABLE) == set(KINDS)
    dead = [(kind, pattern) for kind in KINDS_TABLE for pattern in
            [*compiled(kind).exact, *(f"{k}.*" if k else "*" for k in compiled(kind).subtree)]
            if (kind, pattern) not in used]
    assert dead == []   # a rule no version's schema has a field for is a typo


def test_a_not_modelled_subtree_has_no_modelled_exception_under_it():
    """A check stops at a not-modelled rule's field, so nothing under it may be classified otherwise."""
    for kind in KINDS_TABLE:
        c = compiled(kind)
        roots = [k for k, r in c.subtree.items() if r.support == NOT_MODELLED]
        for root in roots:
            below = [p for p in [*c.exact, *c.subtree] if p.startswith((f"{root}.", f"{root}["))]
            assert [p for p in below if rule_for(kind, p).support != NOT_MODELLED] == [], (kind, root)


def test_a_new_field_of_a_spec_a_container_or_metadata_is_unclassified():
    """What makes the schema test fail on a new Kubernetes version's field: no rule covers it by a wildcard."""
    for kind, path in (("Pod", "spec.futureField"), ("Pod", "spec.containers[].futureField"),
                       ("Deployment", "spec.futureField"), ("Deployment", "spec.template.spec.futureField"),
                       ("CronJob", "spec.jobTemplate.spec.futureField"), ("Job", "metadata.futureField"),
                       ("StatefulSet", "spec.volumeClaimTemplates[].spec.futureField"),
                       ("Pod", "spec.volumes[].futureSource"), ("Service", "spec.futureField")):
        assert rule_for(kind, path) is None, (kind, path)


def test_examples_of_each_class():
    assert rule_for("Service", "spec.sessionAffinity").support == STORED
    assert rule_for("Pod", "metadata.annotations").support == MODELLED
    assert rule_for("Pod", "metadata.uid").support == STORED
    assert rule_for("Deployment", "spec.template.spec.containers[].readinessProbe.grpc").support == MODELLED
    assert rule_for("CronJob", "spec.jobTemplate.spec.successPolicy.rules[].succeededCount").support == MODELLED
    assert rule_for("Job", "spec.managedBy").support == NOT_MODELLED
    assert rule_for("StatefulSet", "spec.volumeClaimTemplates[].spec.dataSource.kind").support == NOT_MODELLED


def test_the_readme_lists_the_not_modelled_fields_of_the_table():
    text = (ROOT / "README.md").read_text()
    begin, end = "<!-- fieldsupport:begin -->\n", "<!-- fieldsupport:end -->"
    assert text[text.index(begin) + len(begin):text.index(end)] == readme_list()


SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: fields}
spec:
  until: 5s
  objects:
"""


def _load(tmp_path: Path, objects: str, version: str | None = None):
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO + textwrap.indent(textwrap.dedent(objects), "  "))
    return load_scenario(str(path), kubernetes_version=version)


def test_a_not_modelled_field_gets_one_warning_naming_it_and_one_assumption(tmp_path):
    # two containers set it: one warning, at its first place
    sc = _load(tmp_path, """
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec:
            containers:
            - name: a
              image: nginx
              securityContext: {runAsNonRoot: true}
            - name: b
              image: nginx
              securityContext: {runAsNonRoot: true}
    """)
    field = "spec.template.spec.containers[0].securityContext.runAsNonRoot"
    text = ("not modelled: the image is assumed to run as a non-root user (the kubelet's CreateContainerConfigError "
            "for an image that runs as root is not modelled)")
    assert sc.warnings == [f"{tmp_path}/scenario.yaml:20: spec.objects[0].{field}: {text}"]
    assert [a for a in assumptions(sc) if a["container"] == ""] == [
        {"object": "Deployment/default/web", "container": "", "assumption": f"{field}: {text}"}]


def test_job_fields_are_said_once_each(tmp_path):
    """Indexed Jobs and successPolicy are modelled (podlife.controlplane.controllers.job): no warning; managedBy
    naming another controller is not."""
    job = """
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: j}
      spec:
        completionMode: Indexed
        completions: 3
        successPolicy: {rules: [{succeededCount: 1}]}
        managedBy: example.com/batch
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: busybox, command: [sh, -c, "exit 0"]}]
    """
    sc = _load(tmp_path, job, "1.33")
    assert [w.split(": ", 2)[1:] for w in sc.warnings] == [
        ["spec.objects[0].spec.managedBy", "not modelled: the built-in Job controller manages the Job"]]
    # 1.30: JobSuccessPolicy is alpha, off: the API server drops the field, said once
    sc = _load(tmp_path, job.replace("        managedBy: example.com/batch\n", ""), "1.30")
    said = [w.split(": ", 2)[1] for w in sc.warnings]
    assert said.count("spec.objects[0].spec.successPolicy") == 1
    assert [a for a in assumptions(sc) if a["container"] == ""] == []


def test_modelled_and_stored_only_fields_get_no_warning(tmp_path):
    sc = _load(tmp_path, """
    - apiVersion: v1
      kind: Service
      metadata: {name: web, annotations: {team: a}}
      spec:
        selector: {app: web}
        sessionAffinity: ClientIP
        externalTrafficPolicy: Local
        type: NodePort
        ports: [{port: 80, targetPort: 8080, nodePort: 30080}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, labels: {app: web}}
      spec:
        shareProcessNamespace: false
        dnsPolicy: ClusterFirst
        securityContext: {runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000}
        volumes:
        - {name: data, emptyDir: {}}
        - {name: host, hostPath: {path: /var/log, type: DirectoryOrCreate}}
        containers:
        - name: web
          image: nginx
          securityContext: {readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
          readinessProbe: {grpc: {port: 9000}}
          volumeMounts: [{name: data, mountPath: /data}]
          terminationMessagePolicy: FallbackToLogsOnError
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: j}
      spec:
        completionMode: NonIndexed
        managedBy: kubernetes.io/job-controller
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: busybox}]
    """)
    assert sc.warnings == []
    assert [a for a in assumptions(sc) if a["container"] == ""] == []


def test_plain_manifests_say_it_in_the_warnings_summary_and_report(tmp_path):
    manifest = tmp_path / "app.yaml"
    manifest.write_text(textwrap.dedent("""
        apiVersion: v1
        kind: Pod
        metadata: {name: shared}
        spec:
          shareProcessNamespace: true
          containers: [{name: app, image: nginx}]
        """))
    report = tmp_path / "report.json"
    res = CliRunner().invoke(main, ["run", str(manifest), "--until", "5s", "--report", str(report)])
    assert res.exit_code == 0, res.output
    text = ("spec.shareProcessNamespace: not modelled: each container's process is assumed to be PID 1 of its "
            "own namespace (with a shared one, a process without a SIGTERM handler would be killed by SIGTERM)")
    assert [line for line in res.output.splitlines() if line.startswith("warning:")] == [
        f"warning: {manifest}:6: {text}"]
    summary = " ".join(res.output.split("assumed (", 1)[1].split())   # the console wraps long lines
    assert summary.startswith("podlife/behavior or spec.behaviors makes the container ones exact)")
    assert f"Pod/default/shared: {text}" in summary
    got = json.loads(report.read_text())
    assert [a for a in got["assumptions"] if a["container"] == ""] == [
        {"object": "Pod/default/shared", "container": "", "assumption": text}]
    assert got["warnings"] == [f"{manifest}:6: {text}"]


def test_the_check_visits_only_paths_toward_a_not_modelled_field():
    obj = {"kind": "Pod", "spec": {"containers": [{"name": "a", "image": "x", "env": [{"name": "A", "value": "1"}]}],
                                   "readinessGates": [{"conditionType": "example.com/ready"}]}}
    assert unmodelled(obj) == [("spec.readinessGates", "nothing in podlife sets the example.com/ready condition "
                                "(an external controller would; a patch action with subresource: status can): "
                                "until then the pod is not Ready")]
    assert "spec.containers[].image" not in compiled("Pod").toward

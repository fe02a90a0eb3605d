"""Default container behaviour where neither the annotation nor a known command form decides, and the list
of assumptions the report and summary show for it.

Timing facts of the model: a container starts 0.1 s after its pod is created (startSeconds 0.1); an assumed
completion exits COMPLETES_AFTER_SECONDS = 1 s after the start; the kubelet sees exits at whole-second PLEG
relists.
"""

from __future__ import annotations

import json

from click.testing import CliRunner

from podlife.cli import main
from podlife.runtime.behavior import BehaviorRule, behavior_for, resolve
from tests.helpers import records, run_text


def _pod(containers: list[dict], init: list[dict] | None = None, policy: str = "Always",
         annotation: str | None = None) -> dict:
    md: dict = {"name": "p"}
    if annotation is not None:
        md["annotations"] = {"podlife/behavior": annotation}
    spec: dict = {"containers": containers, "restartPolicy": policy}
    if init:
        spec["initContainers"] = init
    return {"metadata": md, "spec": spec}


def _resolve(c: dict, **kw):
    pod = _pod([c], **kw) if "init" not in kw else _pod([{"name": "main", "image": "x"}], **kw)
    target = c if "init" not in kw else kw["init"][0]
    return resolve(pod, target)


def test_nginx_without_command_keeps_the_default_and_says_so():
    b, notes = _resolve({"name": "web", "image": "nginx:1.27"})
    assert (b.exit_after, b.on_term, b.term_seconds, b.exit_code, b.term_exit_code) == (None, "exit", 0.1, 0, None)
    assert notes == ["no command (image entrypoint unknown); assumed: runs until stopped",
                     "SIGTERM: assumed handled, exits in 0.1 s"]


def test_nginx_command_handles_sigterm_with_exit_0():
    # nginx: SIGTERM is a fast shutdown; the master process exits with status 0
    b, notes = _resolve({"name": "web", "image": "nginx", "command": ["nginx", "-g", "daemon off;"]})
    assert (b.on_term, b.term_exit_code) == ("exit", 0)
    assert notes[1] == "SIGTERM: nginx: TERM is a fast shutdown, the master exits 0, in 0.1 s"


def test_shell_loop_as_pid1_ignores_sigterm():
    # a shell has no SIGTERM handler and, as PID 1 of its namespace, gets no default action
    b, notes = _resolve({"name": "loop", "image": "busybox",
                         "command": ["sh", "-c", "while true; do date; sleep 5; done"]})
    assert (b.exit_after, b.on_term) == (None, "ignore")
    assert notes == ["command not recognised; assumed: runs until stopped",
                     "SIGTERM: a shell runs as PID 1 and ignores SIGTERM (stops at SIGKILL)"]


def test_java_server_exits_143_on_sigterm():
    # the JVM runs its shutdown hooks on SIGTERM and then exits with 128 + 15 = 143
    b, notes = _resolve({"name": "api", "image": "eclipse-temurin:21",
                         "command": ["java", "-jar", "/app.jar"],
                         "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}}})
    assert (b.on_term, b.term_exit_code) == ("exit", 143)
    assert notes == ["command not recognised; assumed: runs until stopped",
                     "SIGTERM: JVM: runs its shutdown hooks, then exits 128+15 = 143, in 0.1 s",
                     "liveness probe httpGet: not evaluated, assumed to succeed"]


def test_exec_in_shell_and_init_wrapper():
    b, _ = _resolve({"name": "w", "image": "x", "command": ["sh", "-c", "exec nginx -g 'daemon off;'"]})
    assert (b.on_term, b.term_exit_code) == ("exit", 0)
    # tini forwards SIGTERM to a child that is not PID 1: without a handler it dies of it, 128 + 15
    b, _ = _resolve({"name": "w", "image": "x", "command": ["tini", "--", "/usr/local/bin/worker"]})
    assert (b.on_term, b.term_exit_code) == ("exit", 143)


def test_init_container_and_job_container_complete():
    b, notes = _resolve({"name": "setup", "image": "busybox", "command": ["/bin/migrate"]},
                        init=[{"name": "setup", "image": "busybox", "command": ["/bin/migrate"]}])
    assert (b.exit_after, b.exit_code) == (1.0, 0)
    assert notes[0] == "command not recognised; assumed: completes with exit 0 after 1 s"
    # a restartable init container is a sidecar: it runs until stopped
    side = {"name": "proxy", "image": "envoy", "restartPolicy": "Always"}
    assert _resolve(side, init=[side])[0].exit_after is None
    b, _ = _resolve({"name": "work", "image": "perl"}, policy="Never")
    assert (b.exit_after, b.exit_code) == (1.0, 0)


def test_annotation_and_commands_still_decide():
    b, notes = _resolve({"name": "work", "image": "perl", "command": ["perl", "x.pl"]}, policy="Never",
                        annotation="work: {exitAfterSeconds: 5, exitCode: 3, onTerm: exit}")
    assert (b.exit_after, b.exit_code, b.on_term, b.term_exit_code, notes) == (5.0, 3, "exit", None, [])
    b, notes = _resolve({"name": "s", "image": "busybox", "command": ["sleep", "30"]})
    assert (b.exit_after, b.on_term, notes) == (30.0, "ignore", [])


def test_kept_behaviours_answer_as_resolve_does_for_everything_it_reads():
    """behavior_for keeps its answers: each case below differs from the first in one thing resolve reads, and
    must get resolve's own answer, not the one kept for the first."""
    work = {"name": "work", "image": "perl", "command": ["perl", "x.pl"]}
    rule = (BehaviorRule({"exitAfterSeconds": 7}, pod="batch-*"),)
    cases = [
        (_pod([work]), work, ()),
        (_pod([work]), work, ()),                                       # asked again: the same
        (_pod([work], policy="Never"), work, ()),                       # expected to complete: exits after 1 s
        (_pod([work], annotation="work: {exitAfterSeconds: 5}"), work, ()),
        (_pod([work]), work, rule),                                     # the rule's pattern misses "p"
        ({**_pod([work]), "metadata": {"name": "batch-1"}}, work, rule),   # ... and matches "batch-1"
        (_pod([work]), work, (BehaviorRule({"exitAfterSeconds": 3}),)),   # other rules, the same pod name
        (_pod([work], init=[work]), work, ()),                          # the same container as an init container
        (_pod([{**work, "command": ["sleep", "9"]}]), {**work, "command": ["sleep", "9"]}, ()),
    ]
    got = [behavior_for(pod, c, rules) for pod, c, rules in cases]
    assert got == [resolve(pod, c, rules)[0] for pod, c, rules in cases]
    assert [b.exit_after for b in got] == [None, None, 1.0, 5.0, None, 7.0, 3.0, 1.0, 9.0]
    assert got[1] is got[0]   # kept, not resolved again


SCENARIO = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: defaults}
spec:
  until: 60s
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: report}
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: work, image: python:3.12, command: [python, /report.py]}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: web}
      spec:
        terminationGracePeriodSeconds: 30
        initContainers: [{name: setup, image: busybox, command: [/bin/migrate]}]
        containers: [{name: loop, image: busybox, command: [sh, -c, "while true; do sleep 5; done"]}]
    - apiVersion: v1
      kind: Pod
      metadata: {name: front}
      spec:
        containers: [{name: nginx, image: "nginx:1.27"}]
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: api}
      spec:
        selector: {matchLabels: {app: api}}
        template:
          metadata: {labels: {app: api}}
          spec:
            containers:
            - name: server
              image: eclipse-temurin:21
              command: [java, -jar, /app.jar]
              livenessProbe: {httpGet: {path: /health, port: 8080}}
  actions:
    - {at: 10s, delete: pod/web}
"""


def test_end_to_end_job_completes_init_runs_loop_waits_for_sigkill(tmp_path):
    r = run_text(tmp_path, SCENARIO)
    job = r.cluster.store.get("Job", "default", "report")
    assert job["status"].get("succeeded") == 1
    # init container: started at 0.1 s, exits at 0.1 + 1 = 1.1 s; the main container then starts
    exits = [(x["t"], x["container"]) for x in records(r, "runtime", op="exit") if "web" in x["object"]]
    assert exits[0] == (1.1, "setup")
    # the shell loop ignores SIGTERM at 10 s and dies of SIGKILL when the 30 s grace period ends, at 40 s
    sigs = [(x["t"], x["signal"]) for x in records(r, "signal", container="loop")]
    assert sigs == [(10.0, "SIGTERM"), (40.0, "SIGKILL")]


def test_report_and_summary_list_assumptions(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    res = CliRunner().invoke(main, ["run", str(path), "--report", str(tmp_path / "r.json")])
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["assumptions"] == [
        {"object": "Job/default/report", "container": "work",
         "assumption": "command not recognised; assumed: completes with exit 0 after 1 s"},
        {"object": "Job/default/report", "container": "work",
         "assumption": "SIGTERM: python, with no known SIGTERM handler, runs as PID 1 and ignores SIGTERM "
                       "(stops at SIGKILL)"},
        {"object": "Pod/default/web", "container": "setup",
         "assumption": "command not recognised; assumed: completes with exit 0 after 1 s"},
        {"object": "Pod/default/web", "container": "setup",
         "assumption": "SIGTERM: migrate, with no known SIGTERM handler, runs as PID 1 and ignores SIGTERM "
                       "(stops at SIGKILL)"},
        {"object": "Pod/default/web", "container": "loop",
         "assumption": "command not recognised; assumed: runs until stopped"},
        {"object": "Pod/default/web", "container": "loop",
         "assumption": "SIGTERM: a shell runs as PID 1 and ignores SIGTERM (stops at SIGKILL)"},
        # nginx's image runs nginx in the foreground, but podlife does not know images' entrypoints
        {"object": "Pod/default/front", "container": "nginx",
         "assumption": "no command (image entrypoint unknown); assumed: runs until stopped"},
        {"object": "Pod/default/front", "container": "nginx",
         "assumption": "SIGTERM: assumed handled, exits in 0.1 s"},
        # a Java server: the JVM runs its shutdown hooks on SIGTERM and exits 128 + 15; its HTTP probe is not run
        {"object": "Deployment/default/api", "container": "server",
         "assumption": "command not recognised; assumed: runs until stopped"},
        {"object": "Deployment/default/api", "container": "server",
         "assumption": "SIGTERM: JVM: runs its shutdown hooks, then exits 128+15 = 143, in 0.1 s"},
        {"object": "Deployment/default/api", "container": "server",
         "assumption": "liveness probe httpGet: not evaluated, assumed to succeed"},
    ]
    text = " ".join(res.output.split())
    assert "Pod/default/web loop: command not recognised; assumed: runs until stopped; SIGTERM: a shell" in text
    assert ("Pod/default/front nginx: no command (image entrypoint unknown); assumed: runs until stopped; "
            "SIGTERM: assumed handled, exits in 0.1 s") in text
    assert ("Deployment/default/api server: command not recognised; assumed: runs until stopped; SIGTERM: JVM: "
            "runs its shutdown hooks, then exits 128+15 = 143, in 0.1 s; liveness probe httpGet: not evaluated, "
            "assumed to succeed") in text


# ------------------------------------------------------------------------------ spec.behaviors

RULES = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: rules}
spec:
  until: 60s
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web}
      spec:
        replicas: 1
        selector: {matchLabels: {app: web}}
        template:
          metadata:
            labels: {app: web}
            annotations:
              podlife/behavior: "app: {termSeconds: 2}"
          spec:
            containers: [{name: app, image: example.com/web:1, command: [/srv/web]}]
  behaviors:
    - pod: "web-*"
      container: app
      behavior: {onTerm: exit, termSeconds: 7, exitCode: 0}
    - image: "example.com/*"
      behavior: {onTerm: ignore}
  actions:
    - {at: 10s, delete: deployment/web}
"""


def test_behaviors_rule_first_match_and_annotation_wins_per_field(tmp_path):
    # rule 1 matches (web-<hash>-<suffix>, app): onTerm exit; the annotation's termSeconds 2 beats the rule's 7
    r = run_text(tmp_path, RULES)
    term = records(r, "signal", container="app")
    assert [x["signal"] for x in term] == ["SIGTERM"]
    exits = [x["t"] for x in records(r, "runtime", op="exit", container="app")]
    assert exits == [term[0]["t"] + 2.0]
    assert r.scenario.behaviors[0].pod == "web-*"


def test_behaviors_rule_removes_the_assumptions_it_answers(tmp_path):
    from podlife.scenario.assumptions import assumptions
    r = run_text(tmp_path, RULES)
    assert assumptions(r.scenario) == [
        {"object": "Deployment/default/web", "container": "app",
         "assumption": "command not recognised; assumed: runs until stopped"}]


def _error(tmp_path, behaviors: str) -> str:
    import pytest

    from podlife.scenario.errors import ScenarioError
    from podlife.scenario.load import load_scenario
    p = tmp_path / "s.yaml"
    p.write_text("apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {name: x}\nspec:\n  behaviors:\n"
                 + behaviors)
    with pytest.raises(ScenarioError) as exc:
        load_scenario(str(p))
    return str(exc.value).replace(str(p), "s.yaml")


def test_behaviors_validated_strictly(tmp_path):
    assert _error(tmp_path, "    - {pods: web, behavior: {}}\n") == \
        "s.yaml:6: spec.behaviors[0].pods: unknown field; known fields: pod, container, image, behavior"
    assert _error(tmp_path, "    - {pod: web}\n") == \
        "s.yaml:6: spec.behaviors[0].behavior: required field missing; expected a mapping of podlife/behavior fields"
    assert _error(tmp_path, "    - {pod: web, behavior: {onTerm: stop}}\n") == \
        's.yaml:6: spec.behaviors[0].behavior.onTerm: "stop" is not one of exit, ignore'
    assert _error(tmp_path, "    - {pod: web, behavior: {exitAfter: 3}}\n").startswith(
        "s.yaml:6: spec.behaviors[0].behavior.exitAfter: unknown field; known fields: cpu, exitAfterSeconds, ")
    assert _error(tmp_path, "    - {image: 3, behavior: {}}\n") == \
        "s.yaml:6: spec.behaviors[0].image: expected a glob pattern, got 3"

"""The command line as a user meets it: exit statuses, messages, reports, determinism."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from podlife.cli import main
from podlife.versions import NEWEST, RULES, describe

EXAMPLES = Path(__file__).parent.parent / "examples"


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def test_hello_runs_and_passes(tmp_path):
    res = _invoke("run", str(EXAMPLES / "hello.yaml"), "--report", str(tmp_path / "r.json"),
                  "--klog", str(tmp_path / "k.log"))
    assert res.exit_code == 0, res.output
    assert "Pod/default/web" in res.output
    assert "2 passed, 0 failed" in res.output
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["format"] == "podlife-trace/v1"
    assert rep["scenario"] == "hello" and rep["kubernetesVersion"] == "1.34" and rep["seed"] == 0
    assert rep["startTime"] == "2025-01-01T00:00:00Z"
    assert [e["passed"] for e in rep["expectations"]] == [True, True]
    kinds = {o["kind"] for o in rep["final"]["objects"]}
    assert {"Namespace", "Node", "Lease", "Event"} <= kinds and "Pod" not in kinds  # the pod was deleted
    first = (tmp_path / "k.log").read_text().splitlines()[0]
    assert first.startswith("node-1 kubelet[3033]: I0101 00:00:00.000000    3033 kubelet.go:")


def test_same_scenario_same_bytes(tmp_path):
    for name in ("a.json", "b.json"):
        assert _invoke("run", str(EXAMPLES / "seed-000-sidecar-graceful-exit.yaml"), "--quiet",
                       "--report", str(tmp_path / name)).exit_code == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_seed_changes_identifiers(tmp_path):
    _invoke("run", str(EXAMPLES / "hello.yaml"), "--quiet", "--report", str(tmp_path / "a.json"))
    _invoke("run", str(EXAMPLES / "hello.yaml"), "--quiet", "--seed", "7", "--report", str(tmp_path / "b.json"))
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json"))
    uid = lambda rep: next(o for o in rep["final"]["objects"] if o["kind"] == "Namespace")["metadata"]["uid"]  # noqa
    assert uid(a) != uid(b) and b["seed"] == 7


def test_failed_expectation_exits_1(tmp_path):
    res = _invoke("run", str(EXAMPLES / "hello.yaml"), "--set", "spec.expect[1].by=11s")
    assert res.exit_code == 1
    assert "1 passed, 1 failed" in res.output
    assert "deleted at 13s" in res.output


def test_invalid_scenario_exits_2_naming_file_line_and_field(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: bad}
        spec:
          actions:
            - at: 10x
              delete: pod/web
        """))
    res = _invoke("run", str(p))
    assert res.exit_code == 2
    assert f'{p}:6: spec.actions[0].at: "10x" is not a duration' in res.output
    assert "Traceback" not in res.output


def test_invalid_manifest_exits_2(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: bad}
        spec:
          objects:
            - apiVersion: v1
              kind: Pod
              metadata: {name: web}
              spec:
                containers:
                  - name: app
        """))
    res = _invoke("run", str(p))
    assert res.exit_code == 2
    assert "spec.containers[0].image: Required value" in res.output


def test_bad_behavior_annotation_exits_2(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: bad}
        spec:
          objects:
            - apiVersion: v1
              kind: Pod
              metadata:
                name: web
                annotations:
                  podlife/behavior: |
                    app: {onTerm: explode}
              spec:
                containers: [{name: app, image: nginx}]
        """))
    res = _invoke("run", str(p))
    assert res.exit_code == 2
    assert "metadata.annotations[podlife/behavior].app.onTerm" in res.output
    assert '"explode" is not one of exit, ignore' in res.output


def test_every_fault_type_is_modelled(tmp_path):
    # MemoryUsage and DiskUsage were the last fault types the CLI refused; the loader's fault types are now
    # the rows of the one fault table (podlife.cluster.faults.FAULTS), each with its code.
    p = tmp_path / "f.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: f}
        spec:
          actions:
            - at: 1s
              fault: {type: MemoryUsage, node: node-1, value: 1Gi}
        """))
    res = _invoke("run", str(p))
    assert res.exit_code == 0, res.output


def test_missing_file_exits_2(tmp_path):
    res = _invoke("run", str(tmp_path / "nope.yaml"))
    assert res.exit_code == 2
    assert "nope.yaml" in res.output


def test_versions_lists_rules():
    res = _invoke("versions")
    assert res.exit_code == 0
    assert "Modelled Kubernetes versions: 1.18 … 1.37" in res.output and "grace_override" in res.output
    rows = describe()
    # every rule, each change with the span of minors it covers, the last ending at the newest
    assert {r[0] for r in rows} == {r.name for r in RULES}
    for name, span in (("restart_all_containers", "1.36-1.37"), ("container_stop_signals", "1.37"),
                       ("ready_to_start_at_sandbox", "1.36-1.37"), ("hpa_sync_on_change", "1.37"),
                       ("terminating_replicas_status", "1.35-1.37"), ("job_pod_failure_policy", "1.26-1.37")):
        assert (name, span, "True") in [r[:3] for r in rows]
    # a rule that is a gate's behaviour names the gate, with the values a scenario's gates give where they are
    # not plain true/false; the gates themselves follow, per release
    assert ("native_sidecars", "1.29-1.37", "ordered", "SidecarContainers (turned on: unordered; turned off: off)") \
        in [r[:4] for r in rows]
    assert ("job_delay_terminal_condition", "1.31-1.37", "True",
            "JobPodReplacementPolicy or JobManagedBy from 1.31") in [r[:4] for r in rows]
    assert ("grace_override", "1.28-1.37", "before-prestop", "") in [r[:4] for r in rows]
    assert "Feature gates a scenario may set" in res.output
    from podlife.features import describe as gates
    from podlife.versions import NEWEST_MINOR, OLDEST_MINOR

    assert [r[:3] for r in gates(OLDEST_MINOR, NEWEST_MINOR) if r[0] == "SidecarContainers"] == [
        ("SidecarContainers", "1.28", "Alpha, off"), ("SidecarContainers", "1.29-1.32", "Beta, on"),
        ("SidecarContainers", "1.33-1.37", "GA, on (locked)")]


def test_kubernetes_version_flag_accepts_patch_and_v_prefix(tmp_path):
    # behaviour is modelled per minor: v1.33 and 1.33.2 both select the 1.33 profile
    for flag in ("v1.33", "1.33.2", "1.33"):
        res = _invoke("run", str(EXAMPLES / "hello.yaml"), "--quiet", "--kubernetes-version", flag,
                      "--report", str(tmp_path / "r.json"))
        assert res.exit_code == 0, res.output
        assert json.loads((tmp_path / "r.json").read_text())["kubernetesVersion"] == "1.33"


def test_kubernetes_version_flag_out_of_range_lists_versions():
    for flag in ("v1.17.3", "2.0", "latest"):
        res = _invoke("run", str(EXAMPLES / "hello.yaml"), "--kubernetes-version", flag)
        assert res.exit_code == 2, res.output
        assert 'is not a modelled version' in res.output and f'"1.18" … "{NEWEST}"' in res.output


POD = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 30
  containers: [{name: app, image: busybox, command: [sh, -c, "while true; do sleep 1; done"]}]
"""


def test_run_plain_manifests_with_delete(tmp_path):
    (tmp_path / "app.yaml").write_text(POD)
    res = _invoke("run", str(tmp_path / "app.yaml"), "--delete", "pod/web@10s", "--report", str(tmp_path / "r.json"))
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["scenario"] == "app"
    # a shell loop as PID 1 ignores SIGTERM at 10 s; SIGKILL at 10 + 30 s
    sigs = [(r["t"], r["signal"]) for r in rep["records"] if r["type"] == "signal"]
    assert sigs == [(10.0, "SIGTERM"), (40.0, "SIGKILL")]


def test_run_plain_manifests_from_stdin():
    res = CliRunner().invoke(main, ["run", "-", "--delete", "pod/web"], input=POD)
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"stdin  (Kubernetes {NEWEST}")


def _stdin(text: str | bytes, *args: str):
    return CliRunner().invoke(main, ["run", "-", *args], input=text)


def test_plain_manifests_on_stdin_are_read_as_a_manifest_file_is():
    # errors name <stdin>, the line in what was piped in, and the field path within the manifest
    res = _stdin(POD.replace("  terminationGracePeriodSeconds: 30", "  terminationGracePeriod: 30"))
    assert res.exit_code == 2, res.output
    assert res.output == ('<stdin>:5: spec.terminationGracePeriod: unknown field in PodSpec; did you mean '
                          '"terminationGracePeriodSeconds"?\n')
    cases = [
        (POD + "---\nkind: [\n", "<stdin>:9: invalid YAML: expected the node content, but found '<stream end>' "
                                 "(while parsing a flow node)"),
        (POD + "---\nx: " + "[" * 5000 + "]" * 5000 + "\n",
         "<stdin>: invalid YAML: nested too deeply to read; expected an ordinary document"),
        (POD.replace("image: busybox", "image: !!python/object:os.system {}"),
         "<stdin>:6: spec.containers[0].image: unsupported YAML tag tag:yaml.org,2002:python/object:os.system; "
         "expected a plain mapping"),
        (POD.encode().replace(b"name: web", b"name: w\xffb"),
         "<stdin>:3: not UTF-8 text: byte 0xff cannot be decoded; expected a UTF-8 YAML file"),
    ]
    for text, message in cases:
        res = _stdin(text)
        assert (res.exit_code, res.output) == (2, message + "\n")


def test_run_plain_manifests_bad_input(tmp_path):
    (tmp_path / "app.yaml").write_text(POD)
    res = _invoke("run", str(tmp_path / "app.yaml"), "--delete", "web@10s")
    assert res.exit_code == 2 and '--delete: "web@10s" is not KIND/NAME[@TIME]' in res.output
    res = _invoke("run", str(EXAMPLES / "hello.yaml"), "--delete", "pod/web@1s")
    assert res.exit_code == 2 and "only for plain manifests" in res.output
    # an error inside the manifests names their file and line
    bad_behavior = "metadata: {name: web, annotations: {podlife/behavior: 'app: {x: 1}'}}"
    (tmp_path / "bad.yaml").write_text(POD.replace("metadata: {name: web}", bad_behavior))
    res = _invoke("run", str(tmp_path / "bad.yaml"))
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"{tmp_path / 'bad.yaml'}:1: ") and "app.x: unknown field" in res.output


def test_the_executable_writes_what_the_command_does(tmp_path):
    """``podlife`` as installed (podlife.cli:entry, its own process with its collection policy) prints and writes
    the same as the command run in this process, and exits with its status."""
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "podlife"
    scenario = str(EXAMPLES / "seed-003-pod-creation-flow.yaml")
    for how, cmd in (("entry", [str(exe)]), ("module", [sys.executable, "-m", "podlife.cli"])):
        if how == "entry" and not exe.exists():
            continue
        out = tmp_path / f"{how}.ndjson"
        p = subprocess.run(cmd + ["run", scenario, "--report", str(out)], capture_output=True, text=True, timeout=120)
        res = _invoke("run", scenario, "--report", str(tmp_path / "in.ndjson"))
        assert (p.returncode, p.stdout) == (res.exit_code, res.output) and p.returncode == 0
        assert out.read_bytes() == (tmp_path / "in.ndjson").read_bytes()


def test_one_run_collection_policy():
    """A run collects only the young generation, and in the one-run process (the executable) nothing at all:
    that process freezes what the run made when it ends. A process that is not one (tests, sweeps, podlife up)
    is left collecting as before."""
    import subprocess
    import sys

    code = textwrap.dedent("""
        import gc, json, sys
        from podlife.engine import kernel
        if sys.argv[1] == "one":
            kernel.one_run_process()
        before = gc.get_threshold()
        with kernel.few_collections():
            during = gc.get_threshold()
            collecting = gc.isenabled()
        after = (gc.get_threshold(), gc.isenabled(), gc.get_freeze_count() > 0)
        print(json.dumps([before, during, collecting, *after, gc.get_freeze_count() > 0]))
    """)
    out = {how: json.loads(subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True,
                                          check=True, timeout=60).stdout)
           for how in ("one", "library")}
    young_only = [100_000, 1 << 30, 100]
    assert out["one"] == [[100_000, 50, 100], young_only, False, [100_000, 50, 100], True, True, True]
    before, during, collecting, after, enabled, frozen_after_run, frozen = out["library"]
    assert during == young_only and collecting and after == before != young_only and enabled
    assert not frozen_after_run and not frozen


def test_a_created_pod_without_spec_is_refused_by_the_api_not_a_crash(tmp_path):
    # found by test_fuzz_examples: the summary's assumptions read the spec of every pod a scenario writes
    p = tmp_path / "nospec.yaml"
    p.write_text(textwrap.dedent("""\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: nospec}
        spec:
          until: 10s
          actions:
            - at: 1s
              create: {apiVersion: v1, kind: Pod, metadata: {name: bare}}
        """))
    r = CliRunner().invoke(main, ["run", str(p), "--report", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    assert "internal error" not in r.output
    rep = json.loads((tmp_path / "r.json").read_text())
    errors = [x for x in rep["records"] if x["type"] == "action" and x.get("error")]
    # upstream's message: ValidatePodSpec requires spec.containers
    assert [(x["t"], x["error"]) for x in errors] == [(1.0, 'Pod "bare" is invalid: spec.containers: Required value')]

"""A process's exit status is 8 bits (wait(2): WEXITSTATUS is status & 0xff): `sh -c 'exit 300'` reports 44,
as the container runtime reads it and the kubelet's ContainerStateTerminated.exitCode shows it."""

from __future__ import annotations

from podlife.runtime.behavior import command_effect
from tests.helpers import run_text


def test_exit_status_keeps_the_low_8_bits():
    assert command_effect(["sh", "-c", "exit 300"]).exit_code == 44
    assert command_effect(["sh", "-c", "sleep 2; exit 256"]).exit_code == 0
    assert command_effect(["sh", "-c", "exit 255"]).exit_code == 255
    assert command_effect(["/bin/sh", "-c", "exit 1000"]).exit_code == 1000 % 256 == 232
    # however long the number (bash wraps it in an intmax_t, which keeps the low 8 bits)
    assert command_effect(["sh", "-c", "exit " + "9" * 5000]).exit_code == 255   # 10**5000 - 1; 256 divides 10**5000
    assert command_effect(["sh", "-c", "exit ٣"]).exit_code == 0   # not an ASCII number: not read as one


def test_a_container_exiting_300_reports_44(tmp_path):
    r = run_text(tmp_path, """\
        apiVersion: podlife/v1alpha1
        kind: Scenario
        metadata: {name: exit300}
        spec:
          until: 10s
          objects:
            - apiVersion: v1
              kind: Pod
              metadata: {name: p}
              spec:
                restartPolicy: Never
                containers: [{name: a, image: busybox, command: [sh, -c, "sleep 1; exit 300"]}]
          expect:
            - {object: pod/p, containerState: {name: a, state: terminated, reason: Error, exitCode: 44}, by: 5s}
        """)
    pod = r.cluster.store.get("Pod", "default", "p")
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 44
    assert pod["status"]["phase"] == "Failed"
    assert [v.passed for v in r.verdicts] == [True]


def test_a_rule_listing_an_exit_code_above_255_is_warned_about(tmp_path):
    """The API takes any int32 in a Job's podFailurePolicy onExitCodes (and a container's restartPolicyRules),
    but no Linux container exits with 300: the rule's value can never match, which podlife says."""
    from podlife.scenario.load import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("""\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: w}
spec:
  objects:
    - apiVersion: batch/v1
      kind: Job
      metadata: {name: j}
      spec:
        podFailurePolicy:
          rules:
            - {action: FailJob, onExitCodes: {operator: In, values: [1, 300]}}
            - {action: Ignore, onExitCodes: {operator: NotIn, values: [0, 255]}}
        template:
          spec:
            restartPolicy: Never
            containers: [{name: a, image: busybox, command: [sh, -c, "exit 300"]}]
""")
    sc = load_scenario(str(path), [])
    assert [w for w in sc.warnings if "exit code" in w] == [
        f"{path}:12: spec.objects[0].spec.podFailurePolicy.rules[0].onExitCodes.values: 300: a container's exit "
        "code is 0-255 (an exit status is 8 bits: `exit 300` is seen as 44), so no container exits with it"]

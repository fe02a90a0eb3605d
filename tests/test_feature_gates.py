"""Feature gates a scenario sets (spec.cluster.featureGates, the kubelet's featureGates over them): the behaviour
rules that name a gate follow it, the API server drops the fields of a gate that is off, and featuregate
SetFromMap's refusals are scenario errors.

The times below follow the kubelet's loops as test_sidecars.py explains them: a container start takes 0.1 s,
the generic PLEG relists every second, and the sync after a relist starts the next container.
"""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from podlife import features
from podlife.cli import main
from podlife.report.assemble import header, report
from podlife.versions import RULES, profile
from tests.helpers import records, run_text
from tests.test_sidecars import POD as SIDECAR_POD
from tests.test_sleep_action import SCENARIO as SLEEP_ACTION

# test_sidecars.py's pod (an init container running 2 s, the agent as a native sidecar, the app; grace 5 s,
# deleted at 20 s) without its hooks and behaviours, on 1.28
_DROPPED = ("annotations:", "podlife/behavior", "app: {", "agent: {", "lifecycle:")
SIDECAR = "\n".join(line for line in SIDECAR_POD.replace('"1.29"', '"1.28"').splitlines()
                    if not line.strip().startswith(_DROPPED)) + "\n"


def _starts(r) -> list[tuple[float, str, str]]:
    return [(x["t"], x["container"], x["op"]) for x in records(r, "runtime") if x["op"] in ("start", "exit")
            and x.get("container")]


def test_1_28_drops_a_sidecars_restart_policy_by_default(tmp_path):
    # 1.28: SidecarContainers alpha and off (kube_features.go 1.28), so dropDisabledFields removes the init
    # container's restartPolicy: the agent is an ordinary init container. Assumed to complete 1 s after its start
    # (no command), it must exit before the app starts: init 0.1-2.1, relist 3.0 → agent 3.1, exits 4.1,
    # relist 5.0 → app 5.1. The delete at 20 s signals the app alone.
    r = run_text(tmp_path, SIDECAR)
    assert _starts(r)[:5] == [(0.1, "init", "start"), (2.1, "init", "exit"), (3.1, "agent", "start"),
                              (4.1, "agent", "exit"), (5.1, "app", "start")]
    assert [(x["t"], x["container"], x["signal"]) for x in records(r, "signal")] == [(20.0, "app", "SIGTERM")]
    [said] = [w for w in r.scenario.warnings if "initContainers[1].restartPolicy" in w]
    assert said.endswith(":20: spec.objects[0].spec.initContainers[1].restartPolicy: dropped by the API server: the "
                         "SidecarContainers feature gate is off by default on Kubernetes 1.28; the field has no "
                         "effect: the container is an ordinary init container, which must complete before the next "
                         "one starts")
    assert "featureGates" not in header(r.scenario)   # nothing set against the release's defaults


def test_1_28_with_the_gate_on_runs_the_sidecar(tmp_path):
    # the gate on: the agent is a restartable init container; once it has started (3.1) the next sync, after the
    # relist at 4.0, starts the app (4.1). 1.28 has no termination order yet (PR #120620 is 1.29): the DELETE
    # sends SIGTERM to both at once
    on = '"1.28"\n  cluster: {featureGates: {SidecarContainers: true}}\n'
    r = run_text(tmp_path, SIDECAR.replace('"1.28"\n', on))
    assert _starts(r)[:4] == [(0.1, "init", "start"), (2.1, "init", "exit"), (3.1, "agent", "start"),
                              (4.1, "app", "start")]
    assert [(x["t"], x["container"], x["signal"]) for x in records(r, "signal")] == [
        (20.0, "agent", "SIGTERM"), (20.0, "app", "SIGTERM")]
    assert r.cluster.profile.native_sidecars == "unordered"
    assert [w.split(": ", 1)[1] for w in r.scenario.warnings] == [
        "spec.cluster.featureGates.SidecarContainers: feature gate SidecarContainers turned on: Kubernetes 1.28 has "
        "it alpha and off by default; the API server, controllers, scheduler and kubelets follow it"]
    assert report(r)["featureGates"] == ["SidecarContainers=true"]


def test_a_sidecar_set_on_the_kubelet_alone_is_still_dropped_by_the_api_server(tmp_path):
    # the kubelet's featureGates reach the kubelet only: the API server (gate off) has already dropped the field
    r = run_text(tmp_path, SIDECAR.replace('"1.28"\n', '"1.28"\n  cluster: {kubelet: {featureGates: '
                                                         '{SidecarContainers: true}}}\n'))
    assert _starts(r)[3:5] == [(4.1, "agent", "exit"), (5.1, "app", "start")]
    assert header(r.scenario)["featureGates"] == ["SidecarContainers=true (kubelet)"]


# test_sleep_action.py's pod (grace 30 s, a 5 s sleep preStop, deleted at 10 s) on 1.30
SLEEP = SLEEP_ACTION.replace("  until: 60s\n", '  kubernetesVersion: "1.30"\n  until: 60s\n')


def test_sleep_action_off_on_the_kubelet_returns_at_once(tmp_path):
    # 1.30 has PodLifecycleSleepAction beta and on; turned off on the kubelet, handlers.go runSleepHandler returns
    # at once: the hook starts and completes at the DELETE, SIGTERM follows with the whole 30 s (on by default:
    # the hook ends at 15.0 and SIGTERM gets 25 s, test_sleep_action.py)
    text = SLEEP.replace("  until: 60s\n", "  until: 60s\n  cluster: {kubelet: {featureGates: "
                                          "{PodLifecycleSleepAction: false}}}\n")
    r = run_text(tmp_path, text)
    assert [(x["t"], x["phase"]) for x in records(r, "hook", hook="preStop")] == [(10.0, "started"),
                                                                                  (10.0, "completed")]
    assert [(x["t"], x["timeoutSeconds"]) for x in records(r, "signal", signal="SIGTERM")] == [(10.0, 30)]


def test_sleep_action_off_for_the_cluster_is_dropped(tmp_path):
    # turned off for every component, the API server drops the sleep action and, it being the hook's only
    # handler, the preStop hook (dropPodLifecycleSleepAction): no hook, SIGTERM at once with 30 s
    text = SLEEP.replace("  until: 60s\n",
                         "  until: 60s\n  cluster: {featureGates: {PodLifecycleSleepAction: false}}\n")
    r = run_text(tmp_path, text)
    assert records(r, "hook") == []
    assert [(x["t"], x["timeoutSeconds"]) for x in records(r, "signal", signal="SIGTERM")] == [(10.0, 30)]
    assert any(w.endswith("spec.objects[0].spec.containers[0].lifecycle.preStop.sleep: dropped by the API server: "
                          "the PodLifecycleSleepAction feature gate is turned off by the scenario's feature gates on "
                          "Kubernetes 1.30; the field has no effect") for w in r.scenario.warnings)


@pytest.mark.parametrize("gates, message", [
    ("{featureGates: {NoSuchGate: true}}",
     ":6: spec.cluster.featureGates.NoSuchGate: unrecognized feature gate: NoSuchGate (not a gate podlife models"),
    # GA and locked from 1.33 (kube_features.go 1.33 and 1.35)
    ("{featureGates: {SidecarContainers: false}}",
     ":6: spec.cluster.featureGates.SidecarContainers: cannot set feature gate SidecarContainers to false, feature is "
     "locked to true"),
    ("{kubelet: {featureGates: {PodLifecycleSleepAction: false}}}",
     ":6: spec.cluster.kubelet.featureGates.PodLifecycleSleepAction: cannot set feature gate PodLifecycleSleepAction "
     "to false, feature is locked to true"),
    # removed: JobPodFailurePolicy is in 1.32 and not in 1.33
    ("{featureGates: {JobPodFailurePolicy: true}}",
     ":6: spec.cluster.featureGates.JobPodFailurePolicy: unrecognized feature gate: JobPodFailurePolicy (Kubernetes "
     "1.34 has no such gate; it exists in 1.25-1.32)"),
])
def test_gates_the_release_refuses_exit_2(tmp_path, gates, message):
    path = tmp_path / "gates.yaml"
    path.write_text(f"apiVersion: podlife/v1alpha1\nkind: Scenario\nmetadata: {{name: g}}\nspec:\n"
                    f"  kubernetesVersion: '1.34'\n  cluster: {gates}\n")
    res = CliRunner().invoke(main, ["run", str(path), "--quiet"])
    assert res.exit_code == 2
    assert f"{path}{message}" in res.output
    assert "Traceback" not in res.output


def test_every_gated_rule_agrees_with_the_gate_table():
    # where a gate is at its default, a rule's table value is the one the gate's state gives (off where the
    # gate is off by default); every gate podlife models switches some rule or dropped field
    used = set()
    for r in RULES:
        for name in r.gates():
            assert name in features.BY_NAME, (r.name, name)
            used.add(name)
        for minor in range(r.gate_since, 38):
            d = features.defaults(minor)
            known = [g for g in r.gates() if g in d]
            if known and not any(d[g] for g in known):
                assert r.at(minor) == r.off, (r.name, minor)
            elif known:
                assert r.at(minor) != r.off, (r.name, minor)
    from podlife.versions import DROPPED_FIELD_GATES

    assert set(features.BY_NAME) == used | set(DROPPED_FIELD_GATES.values())


def test_a_gate_switches_its_rule_only_where_its_code_consults_it():
    # delayTerminalCondition (PR #125510) exists from 1.31: JobPodReplacementPolicy on 1.28 changes nothing there
    assert profile("1.28", {"JobPodReplacementPolicy": True}).job_delay_terminal_condition is False
    assert profile("1.31", {"JobPodReplacementPolicy": False, "JobManagedBy": False}).job_delay_terminal_condition \
        is False
    assert profile("1.31").job_delay_terminal_condition is True
    # ExecProbeTimeout is GA but not locked before 1.35: a cluster may turn the timeout off
    assert profile("1.34", {"ExecProbeTimeout": False}).exec_probe_timeout is False
    with pytest.raises(ValueError, match="locked to true"):
        profile("1.35", {"ExecProbeTimeout": False})


def test_differences_name_where_each_gate_is_set():
    assert features.differences(30, {"PodLifecycleSleepAction": False}, {"PodLifecycleSleepAction": True}) == [
        "PodLifecycleSleepAction=false (kubelet: true)"]
    assert features.differences(30, {"PodLifecycleSleepAction": True}, {"EventedPLEG": True}) == [
        "EventedPLEG=true (kubelet)"]


def _deployment(**container: object) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.27", **container}]}}}}


@pytest.mark.parametrize("gates, lifecycle", [({}, {}), ({"PodLifecycleSleepAction": True},
                                                          {"preStop": {"sleep": {"seconds": 5}}})])
def test_an_update_drops_a_disabled_field_too(tmp_path, gates, lifecycle):
    # DropDisabledTemplateFields runs in the Deployment strategy's PrepareForUpdate as well: on 1.29
    # (PodLifecycleSleepAction alpha, off) the applied template loses its sleep action and, sleep being the
    # hook's only handler, the preStop hook (adjustLifecycle); with the gate on the hook stays
    scenario = {"apiVersion": "podlife/v1alpha1", "kind": "Scenario", "metadata": {"name": "dep"},
                "spec": {"kubernetesVersion": "1.29", "until": "20s", "cluster": {"featureGates": gates},
                         "objects": [_deployment()],
                         "actions": [{"at": "10s",
                                      "apply": _deployment(lifecycle={"preStop": {"sleep": {"seconds": 5}}})}]}}
    r = run_text(tmp_path, yaml.safe_dump(scenario))
    container = r.cluster.store.get("Deployment", "default", "web")["spec"]["template"]["spec"]["containers"][0]
    assert container["lifecycle"] == lifecycle

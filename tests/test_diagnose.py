"""podlife diagnose: the seed incidents from evidence files alone, the readers of each evidence format, bad
and partial evidence, and generated incidents whose fault is known."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main
from podlife.diagnose import cases, diagnose, evidence
from podlife.diagnose.klogparse import parse_line, said
from podlife.diagnose.render import render

DATA = Path(__file__).parent / "data" / "diagnose"
SEED_000 = Path("/work/shared/seeds/000_f50fc1732a8f3363.txt")


def _files(seed: str) -> list[str]:
    return sorted(str(p) for p in (DATA / seed).iterdir())


@cache
def _diagnosed(*paths: str):
    ev, d = diagnose(list(paths))
    return ev, d, "\n".join(render(ev, d))


def test_seed_000_sidecar_prestop_and_grace_accounting():
    _, d, out = _diagnosed(*_files("seed-000"))
    best = d.best
    # the incident is no fault: the sidecar's preStop hook (run twice) and 1.18's grace accounting
    assert best.name == "PreStopHook+IgnoresSIGTERM+SlowShutdown" and best.change.at is None and d.fits
    plan = d.base.pods[0]
    assert (plan.key, plan.grace, plan.sidecars) == ("storage/cache-shard-0", 5, {"proxy-agent"})
    assert plan.prestop == {"proxy-agent": 3.067, "cache": 3.069}
    assert d.base.version == "1.18" and d.base.runtime == "docker-18.06"
    # the model's own figure: 21.4 s from the DELETE to the sidecar's exit (the log's 21.6 s)
    assert "storage/cache-shard-0: delete → last container exit 21.4 s modelled, 21.6 s in the evidence" in out
    assert "proxy-agent: SIGTERM with -3 s, a grace-period override passed by the caller" in out
    assert "cache: SIGTERM with 2 s, a grace-period override passed by the caller" in out
    # the other components' journal lines are counted, not fatal
    assert "kubelet.log: 3 line(s) in formats podlife does not read, ignored" in out
    # every fault type is ranked below it, and none reproduces anything the fault-free model does not
    assert all(h.change.at is not None for h in d.ranked[1:-1])


@pytest.mark.skipif(not SEED_000.exists(), reason="the seed documents are not on this machine")
def test_seed_000_real_kubelet_log():
    """The seed's own kubelet log (quoted in an article, its excerpt repeated: repeats count once)."""
    ev, d, out = _diagnosed(str(SEED_000))
    assert d.best.name == "PreStopHook+IgnoresSIGTERM+SlowShutdown"
    assert ev.duplicates == 10
    assert "delete → last container exit 21.4 s modelled, 21.6 s in the evidence" in out


def test_seed_001_hung_runtime_call_after_kubelet_restart():
    _, d, out = _diagnosed(*_files("seed-001"))
    # the restart is the log's start-up line, reconstructed as the user's action at its instant
    assert [d.base.clock(t) for t in d.base.restarts] == ["07-15 10:43:03.112"]
    assert d.best.name == "ContainerHang" and d.fits
    # the hang can be in any container running before the restart; the evidence cannot say which
    assert set(d.best.targets) == {"default/redis-0/redis", "default/sentinel-1/sentinel", "every container (3)"}
    assert max(d.best.instants) <= d.base.restarts[0]
    assert "skipping pod synchronization - [container runtime is down]" in out
    assert "to tell ContainerHang from RuntimeDown: `docker ps` hanging too would confirm RuntimeDown" in out


def test_seed_002_lost_exit_event():
    _, d, out = _diagnosed(*_files("seed-002"))
    assert [h.name for h in d.ranked[:2]] == ["LostExitEvent", "ContainerHang"] and d.fits
    # the model cannot tell the two apart; the node's SystemOOM event (a clue it does not model) does
    assert d.ranked[0].score == d.ranked[1].score
    assert d.best.clues and "SystemOOM" in d.best.clues[0]
    assert d.best.targets == ["every container (2)"]
    assert "would confirm LostExitEvent" in out


def test_klog_styles_read_to_the_same_facts():
    legacy = parse_line('I0603 20:39:44.044634    3033 kuberuntime_container.go:580] Killing container '
                        '{"docker" "4be8a1f09c3d"}, but using 2 second grace period override')
    structured = parse_line('I0603 20:39:44.044634    3033 kuberuntime_container.go:788] "Killing container with a '
                            'grace period override" pod="default/web" podUID="x" containerName="app" '
                            'containerID="containerd://4be8a1f09c3d" gracePeriod=2')
    assert legacy is not None and structured is not None
    a, b = said(legacy.message), said(structured.message)
    assert (a.kind, a.cid, a.value) == ("kill-override", "4be8a1f09c3d", 2.0)
    assert (b.kind, b.cid, b.value, b.pod, b.container) == ("kill-override", "4be8a1f09c3d", 2.0, "default/web",
                                                            "app")
    journal = parse_line('Jun 03 20:39:37 host-1 kubelet[3033]: E0603 20:39:37.908557    3033 kubelet.go:1845] '
                         'skipping pod synchronization - [PLEG is not healthy: pleg was last seen active 3m0s ago]')
    assert journal is not None and (journal.host, journal.severity) == ("host-1", "E")
    assert said(journal.message).kind == "skip-sync"
    assert parse_line("Jun 03 20:39:37 host-1 dockerd[10]: level=info msg=x") is None


def test_describe_and_pod_objects(tmp_path):
    ev = evidence.read([str(DATA / "seed-001" / "describe-redis-0.txt"), str(DATA / "seed-001" / "sentinel-1.yaml")])
    redis, sentinel = ev.pods["default/redis-0"], ev.pods["default/sentinel-1"]
    assert (redis.node, redis.containers, redis.grace) == ("worker-3", ["redis"], 30)
    assert redis.ids == {"c3e5a7b9d1f2e4c6a8b0d2f4e6a8c0b2d4f6e8a0c2b4d6f8e0a2c4b6d8f0a2c4": "redis"}
    assert sentinel.terminating and sentinel.deletion_t == 1563187463.0   # 10:44:53 - 30 s
    # a cluster-info dump: its JSON files are read, the rest counted
    dump = tmp_path / "dump" / "default"
    dump.mkdir(parents=True)
    (dump / "events.json").write_text((DATA / "seed-002" / "events.json").read_text())
    (dump / "web-0").mkdir()
    (dump / "web-0" / "logs.txt").write_text("hello\n")
    ev = evidence.read([str(tmp_path / "dump")])
    assert "events" in ev.has and [f.kind for f in ev.facts][:1] == ["event:SystemOOM"]
    assert sum(ev.ignored.values()) == 1


@pytest.mark.parametrize("name, text, message", [
    ("bad.json", '{"kind": "List", "items": [\n  {"kind": "Event",}\n]}',
     "bad.json:2: not valid JSON: Expecting property name enclosed in double quotes (column 20)"),
    ("bad.yaml", "kind: List\nitems:\n  - kind: Event\n   reason: x\n", "bad.yaml:4: not valid YAML"),
    ("tag.yaml", "kind: List\nitems:\n  - kind: Event\n    count: !!int abc\n",
     "tag.yaml:4: not valid YAML: cannot decode !!str `abc` as a !!int"),
    ("notes.txt", "the node was slow yesterday\nthen it recovered\n", "notes.txt:1: no kubelet log line, Event"),
    ("empty.log", "", "empty.log: the file is empty"),
])
def test_bad_evidence_exits_2_with_file_and_line(tmp_path, name, text, message):
    p = tmp_path / name
    p.write_text(text)
    res = CliRunner().invoke(main, ["diagnose", str(p)])
    assert res.exit_code == 2, res.output
    assert res.output.startswith(str(tmp_path / message.split(":")[0]))
    assert message.split(":", 1)[1] in res.output


def test_an_unmodelled_version_names_the_flag():
    # was '<diagnosis>:6: spec.kubernetesVersion: ...', naming the scenario diagnose writes for itself
    res = CliRunner().invoke(main, ["diagnose", *_files("seed-000"), "--kubernetes-version", "9.99"])
    assert res.exit_code == 2
    assert res.output == '--kubernetes-version: "9.99" is not a modelled version; expected a minor version, one ' \
                         'of "1.18" … "1.37"\n'


def test_missing_file_and_unknown_pod_exit_2(tmp_path):
    res = CliRunner().invoke(main, ["diagnose", str(tmp_path / "nope.log")])
    assert res.exit_code == 2 and "nope.log" in res.output
    res = CliRunner().invoke(main, ["diagnose", *_files("seed-000"), "--pod", "web-0"])
    assert res.exit_code == 2 and "no pod 'web-0' in the evidence; it names: storage/cache-shard-0" in res.output


def test_partial_evidence_says_what_is_missing():
    out = _diagnosed(str(DATA / "seed-002" / "events.json"))[2]
    assert "partial evidence, missing:" in out
    assert "the kubelet log (journalctl -u kubelet)" in out
    assert "the pod object (kubectl get pod -o yaml)" in out


def test_cli_diagnose_and_html(tmp_path):
    res = CliRunner().invoke(main, ["diagnose", *_files("seed-000"), "--html", str(tmp_path / "d.html")])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == ("podlife diagnose: storage/cache-shard-0 on cache-node-12, modelled as "
                                          "Kubernetes 1.18 with docker-18.06")
    page = (tmp_path / "d.html").read_text()
    assert "podlife-diagnosis" in page and "where they first part" in page and "data-podlife" not in page[:0]


@pytest.mark.parametrize("index", [0, 3, 4, 6, 7])
def test_generated_incident_recovers_its_fault(tmp_path, index):
    """A few generated incidents (bench/diagnose.py measures many): OOMKill, ImagePullFailure, KubeletRestart,
    RuntimeDown, NetworkPartition, from the klog and Events podlife wrote for them."""
    case = cases.generate(index)
    paths = cases.evidence(case, str(tmp_path))
    assert cases.visible(case, paths, str(tmp_path / "clean"))
    _, d = diagnose(paths)
    assert d.best.name == case.fault
    assert min(d.best.instants) - 2 <= case.at <= max(d.best.instants) + 2 or d.best.name == "KubeletRestart"


def test_log_in_local_time_is_moved_onto_the_events_utc(tmp_path):
    """The seed-002 log as a UTC+8 node writes it: its Events, in UTC, put it back (the facts' times agree)."""
    shifted = []
    for line in (DATA / "seed-002" / "kubelet.log").read_text().splitlines():
        for h in ("14", "15"):
            line = line.replace(f" {h}:", f" {int(h) + 8}:")
        shifted.append(line)
    (tmp_path / "kubelet.log").write_text("\n".join(shifted) + "\n")
    local = evidence.read([str(tmp_path / "kubelet.log"), str(DATA / "seed-002" / "events.json")])
    utc = evidence.read([str(DATA / "seed-002" / "kubelet.log"), str(DATA / "seed-002" / "events.json")])
    assert [(f.t, f.kind) for f in local.facts] == [(f.t, f.kind) for f in utc.facts]
    assert any("+8 h from UTC" in n for n in local.notes)


def test_structured_log_with_its_version_and_other_pods():
    """A 1.29 journal (structured messages, JSON-style PLEG event, another pod's probe line): the version is
    the start-up line's, the start-up is the log's beginning (no restart), --pod keeps the one pod."""
    ev, d = diagnose([str(DATA / "structured" / "kubelet.log")], "default/checkout-7d9f")
    out = "\n".join(render(ev, d))
    assert (d.base.version, d.base.runtime, d.base.restarts) == ("1.29", "containerd", [])
    assert [p.key for p in d.base.pods] == ["default/checkout-7d9f"]
    assert d.best.name == "IgnoresSIGTERM" and d.fits
    assert "default/checkout-7d9f: delete → last container exit 20.0 s modelled, 20.1 s in the evidence" in out
    died = [f for f in ev.facts if f.kind == "pleg-ContainerDied"]
    assert [f.container for f in died][:1] == ["api"]

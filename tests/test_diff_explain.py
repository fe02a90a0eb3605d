"""`podlife diff` and `podlife explain` on the seed-000 pod (its numbers are checked in test_seed_000.py)."""

from __future__ import annotations

from click.testing import CliRunner

from podlife.cli import main

SEED = "examples/seed-000-sidecar-graceful-exit.yaml"    # 1.18, lifecycle.type: Sidecar
NATIVE = "examples/seed-000-native-sidecar.yaml"          # 1.29, native sidecar
POD = "kirovpre-krds-sf-f3dec-0"


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_diff_seed_000_against_native_sidecar() -> None:
    code, out = _run("diff", SEED, "--against", NATIVE)
    assert code == 1
    assert out.splitlines()[0] == "sidecar-graceful-exit: 1.18 against 1.29"
    # delete at 6.408; 1.18 removal at 40.000 (the seed log: +33.610). 1.29: both preStops (3 s) end at 9.408,
    # the app gets 5 - 3 = 2 s (SIGKILL 11.408), then the sidecar its 2 s (SIGKILL 13.408): removed at the
    # next relist, 14.0 -> 7.592 s
    assert f"  {POD}: delete → removed 33.6 s on 1.18, 7.6 s on 1.29" in out
    # last process exit: 1.18 the sidecar after its -3 s override, 27.839 - 6.408; 1.29: 13.408 - 6.408
    assert f"  {POD}: delete → containers stopped 21.4 s on 1.18, 7.0 s on 1.29" in out
    assert "wording only on 1.18:" in out and "wording only on 1.29:" in out


def test_diff_html_draws_both_runs(tmp_path) -> None:
    import json
    import re

    out = tmp_path / "d.html"
    code, _ = _run("diff", SEED, "--against", NATIVE, "--html", str(out))
    assert code == 1
    page = out.read_text(encoding="utf-8")
    data = json.loads(re.search(r"id='podlife-timeline'>(.*?)</script>", page, re.S).group(1))
    assert data["labels"] == ["1.18", "1.29"]
    assert (data["a"]["end"], data["b"]["end"]) == (40.0, 21.468)
    removed = [[m["t"] for m in side["markers"] if m["kind"] == "removed"] for side in (data["a"], data["b"])]
    assert removed == [[40.0], [14.0]]


def test_diff_of_identical_runs() -> None:
    code, out = _run("diff", "examples/hello.yaml", "--against", "1.34")
    assert (code, out.splitlines()[-1]) == (0, "the two runs do not differ")


def test_diff_versions_of_one_file() -> None:
    code, out = _run("diff", "examples/hello.yaml", "--against", "1.18")
    assert code == 1
    assert out.splitlines()[0] == "hello: 1.34 against 1.18"


def test_diff_bad_input_exits_2() -> None:
    code, out = _run("diff", "examples/hello.yaml", "--against", "seed=x")
    assert code == 2 and "seed must be an integer" in out
    code, _ = _run("diff", "examples/hello.yaml", "--against", "1.99")
    assert code == 2


def test_explain_seed_000_names_the_overrides_and_the_second_prestop() -> None:
    code, out = _run("explain", SEED, "--pod", POD)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"Pod/default/{POD}: why 40s"
    text = "\n".join(lines)
    # the app: SIGTERM at 12.542 with the 2 s override after its 3.067 s preStop
    assert "12.542s  kirovpre-krds-ys02: SIGTERM with 2 s, a grace-period override passed by the caller" in text
    # the sidecar: killed again after the app, its preStop runs a second time, then the -3 s override
    assert ("14.712s  agent-kirovpre-krds-ys02: preStop hook (run 2 of 2: the container was killed again) "
            "took 3.067 s (completed)") in text
    assert "17.779s  agent-kirovpre-krds-ys02: SIGTERM with -3 s, a grace-period override" in text
    # removal 40.000 - 28.009 after the last terminated status: PodResourcesAreReclaimed retried on syncBatch
    assert "28.009s  11.991 s between the last container reported terminated and the removal" in text
    assert "6.408s  deletion requested by kubectl: grace 5 s from spec.terminationGracePeriodSeconds" in text


def test_explain_native_sidecar_arithmetic() -> None:
    code, out = _run("explain", NATIVE, "--pod", f"default/{POD}")
    assert code == 0
    # PR #115835 (1.28+): the 5 s grace is set before the 3 s preStop; 5 - 3 = 2 s reach SIGTERM
    assert "9.408s  kirovpre-krds-ys02: SIGTERM with 2 s: 5 s grace minus 3 s spent in preStop" in out


def test_explain_unknown_pod_exits_2() -> None:
    code, out = _run("explain", "examples/hello.yaml", "--pod", "nope")
    assert code == 2 and "no pod 'nope' in the trace (pods: default/web)" in out
    code, out = _run("explain", "examples/hello.yaml", "--pod", "web", "--at", "10x")
    assert code == 2 and out.startswith("--at:")

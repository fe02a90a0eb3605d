"""`podlife sweep`: points, reproducible tables whatever the workers, an external Dask cluster, bad input."""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from podlife.cli import main
from podlife.sweep.points import VaryError, parse_vary, points

HELLO = "examples/hello.yaml"


def test_vary_parsing() -> None:
    assert parse_vary("kubernetesVersion=1.32..1.34").values == ("1.32", "1.33", "1.34")
    assert parse_vary("kubernetesVersion=v1.30.2,1.18").values == ("1.30", "1.18")
    assert parse_vary("seed=3..5").values == (3, 4, 5)
    assert parse_vary("spec.until=10s,20s").values == ("10s", "20s")
    for bad in ("seed", "seed=5..3", "seed=a..b", "kubernetesVersion=1.10..1.20", "seed=x,y", "k="):
        with pytest.raises(VaryError):
            parse_vary(bad)


def test_points_order_and_sample() -> None:
    vs = [parse_vary("kubernetesVersion=1.33..1.34"), parse_vary("seed=0..2")]
    every = points(vs)
    assert every[:4] == [{"kubernetesVersion": "1.33", "seed": 0}, {"kubernetesVersion": "1.33", "seed": 1},
                         {"kubernetesVersion": "1.33", "seed": 2}, {"kubernetesVersion": "1.34", "seed": 0}]
    some = points(vs, sample=3, sample_seed=7)
    assert len(some) == 3 and all(p in every for p in some)
    assert some == points(vs, sample=3, sample_seed=7)
    assert [every.index(p) for p in some] == sorted(every.index(p) for p in some)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _sweep(tmp_path: Path, name: str, *extra: str) -> list[dict[str, str]]:
    out = tmp_path / f"{name}.csv"
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "kubernetesVersion=1.33..1.34", "--vary", "seed=0..1",
                                  "--out", str(out), *extra])
    assert r.exit_code == 0, r.output
    rows = _read_csv(out)
    for row in rows:
        assert float(row.pop("wallSeconds")) > 0  # the one column that measures the machine, not the model
    return rows


def test_same_table_with_one_and_two_workers(tmp_path: Path) -> None:
    one = _sweep(tmp_path, "one", "--workers", "1")
    two = _sweep(tmp_path, "two", "--workers", "2")
    assert one == two
    # hello: created at 0, Running at 2 (startSeconds 1 + the next relist); delete at 10 → removed at 13
    assert [(r["kubernetesVersion"], r["seed"], r["exit"], r["startupP99Seconds"], r["deleteToRemovedSeconds"])
            for r in one] == [("1.33", "0", "0", "2.0", "3.0"), ("1.33", "1", "0", "2.0", "3.0"),
                              ("1.34", "0", "0", "2.0", "3.0"), ("1.34", "1", "0", "2.0", "3.0")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_existing_dask_cluster_gives_the_same_table(tmp_path: Path) -> None:
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path("src").resolve()), os.environ.get("PYTHONPATH", "")]))
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                               "--no-dashboard"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from dask.distributed import Client

        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(address, timeout=5) as c:
                    if c.nthreads():
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the Dask cluster did not come up"
            time.sleep(0.2)
        remote = _sweep(tmp_path, "remote", "--cluster", address)
        assert remote == _sweep(tmp_path, "local", "--workers", "1")
    finally:
        for p in (worker, scheduler):
            p.terminate()
        for p in (worker, scheduler):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_a_failing_point_is_a_row_not_the_end(tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "spec.until=20s,1x", "--workers", "1",
                                  "--out", str(out)])
    assert r.exit_code == 0, r.output
    import pyarrow.parquet as pq

    rows = pq.read_table(out).to_pylist()
    assert [(x["spec.until"], x["exit"]) for x in rows] == [("20s", 0), ("1x", 2)]
    assert "spec.until" in rows[1]["error"]


def test_each_verdict_has_the_time_it_held_or_failed_at(tmp_path: Path) -> None:
    """hello's pod is Running at 2 s (started 1 s after its creation, seen at the next relist) and removed 3 s
    after its delete at 10 s: the removal holds at 13 s against a 14 s deadline and fails at the deadline
    itself, 12 s, when the deadline comes first."""
    out = tmp_path / "t.csv"
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "spec.expect[1].by=12s,14s", "--workers", "1",
                                  "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert [(x["spec.expect[1].by"], x["expect[0].passed"], x["expect[0].atSeconds"], x["expect[1].passed"],
             x["expect[1].atSeconds"], x["exit"]) for x in _read_csv(out)] == [
        ("12s", "True", "2.0", "False", "12.0", "1"), ("14s", "True", "2.0", "True", "13.0", "0")]


def test_bad_sweep_input_exits_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "seed=9..1"])
    assert r.exit_code == 2 and "runs backwards" in r.output
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "seed=1", "--out", str(tmp_path / "x.txt")])
    assert r.exit_code == 2 and "expected a .csv or .parquet file" in r.output
    r = CliRunner().invoke(main, ["sweep", str(tmp_path / "none.yaml"), "--vary", "seed=1"])
    assert r.exit_code == 2


def test_seed_000_example_script(tmp_path: Path) -> None:
    """examples/sweeps/seed-000-across-versions.sh, run as a user runs it: the sidecar's process ends 21.431 s
    after the DELETE on 1.18 (6.408 → 27.839; the seed log reports the exit at +21.607 once docker noticed)
    and the pod is removed 33.592 s after it (at 40.000); 7 s on 1.29 to 1.37 (preStop 3 s, app 2 s, sidecar
    2 s, in order), removed at the relist 0.592 s later; 5 s on 1.28 with SidecarContainers turned on (app and
    sidecar stopped together). With 1.28's default gates the API server drops the sidecar's restartPolicy and
    then refuses its preStop hook (exit 2)."""
    from podlife.sweep.engine import run_points_inline

    bindir = str(Path(sys.executable).parent)
    assert shutil.which("podlife", path=bindir), "podlife is not installed beside this Python"
    env = dict(os.environ, TMPDIR=str(tmp_path), PATH=os.pathsep.join([bindir, os.environ.get("PATH", "")]),
               PYTHONPATH=os.pathsep.join([str(Path("src").resolve()), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run(["sh", "examples/sweeps/seed-000-across-versions.sh"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    tables = tmp_path / "podlife-seed-000"
    rows = [row for name in ("legacy", "native-1.28", "native")
            for row in _read_csv(tables / f"{name}.csv")]
    assert [(x["kubernetesVersion"], x["exit"], x["deleteToStoppedSeconds"], x["deleteToRemovedSeconds"])
            for x in rows] == [("1.18", "0", "21.431", "33.592"), ("1.28", "0", "5.0", "5.592")] + \
        [(f"1.{minor}", "0", "7.0", "7.592") for minor in range(29, 38)]
    [default_128] = run_points_inline("examples/seed-000-native-sidecar.yaml", [], [{"kubernetesVersion": "1.28"}])
    assert default_128["exit"] == 2
    assert default_128["error"].endswith("spec.initContainers[0].lifecycle: Forbidden: may not be set for init "
                                         "containers without restartPolicy=Always")


def test_embedded_cluster_serves_no_dashboard_on_8787() -> None:
    """The scheduler's HTTP server (health and metrics) is on a free loopback port without the Bokeh
    dashboard, so it neither takes 8787 nor warns when another cluster holds it (held here if free)."""
    import urllib.error
    import urllib.request
    import warnings

    from podlife.sweep.engine import local_cluster

    holder = socket.socket()
    try:
        holder.bind(("127.0.0.1", 8787))
        holder.listen()
    except OSError:
        pass  # already held by something else: the same condition
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cluster = local_cluster(1)
        try:
            http = cluster.scheduler.http_server
            assert (http.address, http.port != 8787) == ("127.0.0.1", True)
            with urllib.request.urlopen(f"http://127.0.0.1:{http.port}/health", timeout=10) as r:
                assert r.read() == b"ok"
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(f"http://127.0.0.1:{http.port}/status", timeout=10)
            assert e.value.code == 404
        finally:
            cluster.close()
    finally:
        holder.close()
    assert [str(w.message) for w in caught if "already in use" in str(w.message)] == []


def test_ctrl_c_keeps_the_finished_rows(tmp_path: Path) -> None:
    """SIGINT to the sweep's process group (as Ctrl-C in a terminal) once some batches are done, and again
    while it shuts down: exit 130, the finished rows written (each the row a direct run of its point gives), no
    worker's traceback."""
    import re
    import signal
    import threading

    from podlife.sweep import output
    from podlife.sweep.engine import run_points_inline

    out = tmp_path / "partial.csv"
    grace = "spec.objects[0].spec.terminationGracePeriodSeconds"
    # FORCE_COLOR: the progress bar is drawn on the pipe, so its percentage shows when rows are done
    env = dict(os.environ, FORCE_COLOR="1", PYTHONPATH=os.pathsep.join([str(Path("src").resolve()),
                                                                       os.environ.get("PYTHONPATH", "")]))
    # SIGINT's default action in the sweep, as in a terminal's foreground job: pytest run as a shell's background
    # job (`cmd &` without job control) ignores SIGINT, its children inherit that, and Python keeps it ignored
    # (KeyboardInterrupt only "if the parent process has not changed it", the signal module's docs), so the sweep
    # ran to its end and exited 0. A handler set here is reset to the default action by exec.
    held = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "podlife.cli", "sweep", HELLO, "--vary", "seed=0..999",
                                 "--vary", f"{grace}=1,2,30", "--workers", "2", "--out", str(out)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    finally:
        signal.signal(signal.SIGINT, held)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: proc.stdout.read1(4096), b"")))
    reader.start()
    try:
        deadline = time.monotonic() + 120
        while not re.search(rb"\b([1-9]\d?)%", b"".join(chunks)):
            assert proc.poll() is None, b"".join(chunks).decode()
            assert time.monotonic() < deadline, "no row finished within 120 s"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.2)   # a second Ctrl-C, as impatient users press, while the workers are shut down
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        reader.join()
    stdout = b"".join(chunks).decode()
    assert "Traceback" not in stderr + stdout and "KeyboardInterrupt" not in stderr + stdout
    assert re.search(r"\b\d+ of 3000 points ran \(interrupted\)", stdout)
    rows = _read_csv(out)
    assert 0 < len(rows) < 3000
    pts = [{"seed": int(r["seed"]), grace: r[grace]} for r in rows]
    assert pts == sorted(pts, key=lambda p: (p["seed"], ["1", "2", "30"].index(p[grace])))  # point order
    direct = run_points_inline(HELLO, [], pts)
    output.write(str(tmp_path / "direct.csv"), direct, output.columns(direct, ["seed", grace]))
    drop = "wallSeconds"
    assert [{k: v for k, v in r.items() if k != drop} for r in rows] == \
           [{k: v for k, v in r.items() if k != drop} for r in _read_csv(tmp_path / "direct.csv")]
    # the rows differ by grace period (the comparison is not of one repeated row): the 2 s preStop is cut at
    # 1 s, then the app gets the 2 s minimum and exits 0.5 s after its SIGTERM (test_sweep_over_an_object_field)
    assert {r[grace]: r["deleteToStoppedSeconds"] for r in rows} == {"1": "1.5", "2": "2.5", "30": "2.5"}


GRACE = "spec.objects[0].spec.terminationGracePeriodSeconds"


def _cells(text: str) -> dict[str, list[list[str]]]:
    """The Rich summary's tables: title → rows of cells (the header row first)."""
    tables: dict[str, list[list[str]]] = {}
    title = ""
    for line in text.splitlines():
        if line.startswith("by "):
            title = line.strip()
            tables[title] = []
        elif line.startswith(("│", "┃")):
            tables[title].append([c.strip() for c in line.strip("│┃").replace("┃", "│").split("│")])
    return tables


def _html_verdicts(page: str) -> list[list[list[str]]]:
    """The verdict tables of a sweep page, from the Div models of its Bokeh document."""
    import html
    import json
    import re

    texts: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("name") == "Div" and "podlife-verdicts" in node.get("attributes", {}).get("text", ""):
                texts.append(node["attributes"]["text"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for doc in re.findall(r'<script type="application/json" id="[^"]+">\s*(.*?)\s*</script>', page, re.S):
        walk(json.loads(html.unescape(doc)))
    return [[re.findall(r"<t[hd]>(.*?)</t[hd]>", row) for row in re.findall(r"<tr>(.*?)</tr>", t)] for t in texts]


def test_summary_and_html_by_each_varied_value(tmp_path: Path) -> None:
    """hello over two versions and two grace periods. With 30 s the preStop's 2 s and the app's 0.5 s run out:
    stopped 2.5 s after the delete, removed at the next relist (3 s). With 1 s the preStop is cut at 1 s, then
    the container gets the 2 s minimum and its app exits 0.5 s after SIGTERM: stopped 1.5 s, removed at the
    relist 2 s after the delete (kuberuntime_container.go: killContainer, minimumGracePeriodInSeconds)."""
    page = tmp_path / "s.html"
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "kubernetesVersion=1.33..1.34",
                                  "--vary", f"{GRACE}=1,30", "--workers", "1", "--html", str(page)])
    assert r.exit_code == 0, r.output
    figures = ["delete→stopped s", "delete→removed s", "startup p50 s", "startup p99 s", "evicted"]
    assert _cells(r.output) == {
        "by kubernetesVersion": [["kubernetesVersion", "points", "passed", "failed", "errors", *figures],
                                 ["1.33", "2", "2", "0", "0", "2.000", "2.500", "2.000", "2.000", "0.000"],
                                 ["1.34", "2", "2", "0", "0", "2.000", "2.500", "2.000", "2.000", "0.000"]],
        f"by {GRACE}": [["terminationGracePeriodSeconds", "points", "passed", "failed", "errors", *figures],
                        ["1", "2", "2", "0", "0", "1.500", "2.000", "2.000", "2.000", "0.000"],
                        ["30", "2", "2", "0", "0", "2.500", "3.000", "2.000", "2.000", "0.000"]]}
    assert r.output.rstrip().endswith("4 of 4 points ran; 4 passed every expectation, 0 failed one, 0 could not run")

    text = page.read_text(encoding="utf-8")
    assert "<script src=" not in text and "<link " not in text   # Bokeh inlined: the page stands alone
    assert _html_verdicts(text) == [
        [["kubernetesVersion", "points", "passed", "failed", "errors"], ["1.33", "2", "2", "0", "0"],
         ["1.34", "2", "2", "0", "0"]],
        [[GRACE, "points", "passed", "failed", "errors"], ["1", "2", "2", "0", "0"], ["30", "2", "2", "0", "0"]]]
    for title in ("points passed, by kubernetesVersion", "deleteToRemovedSeconds by kubernetesVersion (mean)",
                  f"deleteToStoppedSeconds by {GRACE} (mean)"):
        assert f'"text":"{title}"' in text
    from tests.test_html_report import CHROMIUM, headless_dom

    if CHROMIUM is not None or os.environ.get("PODLIFE_REQUIRE_CHROMIUM"):   # as test_html_report's tests
        head = headless_dom(page, tmp_path)
        assert 'data-podlife-rendered="1"' in head and "data-podlife-error" not in head


def test_sample_through_the_cli(tmp_path: Path) -> None:
    """--sample K: K rows, the points the seeded draw picks, the same rows again (on another number of
    workers too), other points with another --sample-seed."""
    vs = ["--vary", "seed=0..49", "--vary", f"{GRACE}=1,2,30"]

    def sample(name: str, seed: str, workers: str) -> list[dict[str, str]]:
        out = tmp_path / f"{name}.csv"
        r = CliRunner().invoke(main, ["sweep", HELLO, *vs, "--sample", "6", "--sample-seed", seed,
                                      "--workers", workers, "--out", str(out)])
        assert r.exit_code == 0, r.output
        assert "6 of 6 points ran" in r.output
        return [{k: v for k, v in row.items() if k != "wallSeconds"} for row in _read_csv(out)]

    a, b, c = sample("a", "3", "1"), sample("b", "3", "2"), sample("c", "4", "1")
    drawn = points([parse_vary(v) for v in vs[1::2]], sample=6, sample_seed=3)
    assert [{"seed": int(x["seed"]), GRACE: x[GRACE]} for x in a] == drawn
    assert a == b
    assert [(x["seed"], x[GRACE]) for x in c] != [(x["seed"], x[GRACE]) for x in a]
    # each row is its point's: the grace period decides when the container stopped (as in the test above)
    assert {x[GRACE]: x["deleteToStoppedSeconds"] for x in a + c} == {"1": "1.5", "2": "2.5", "30": "2.5"}


STUBBORN = """\
apiVersion: podlife/v1alpha1
kind: Scenario
metadata:
  name: stubborn
spec:
  kubernetesVersion: "1.34"
  objects:
    - apiVersion: v1
      kind: Pod
      metadata:
        name: web
        annotations:
          podlife/behavior: |
            app:
              onTerm: ignore
      spec:
        containers:
          - name: app
            image: nginx:1.27
  actions:
    - at: 10s
      delete: pod/web
  expect:
    - description: the pod is gone within 20 s of the delete
      object: pod/web
      deleted: true
      by: 30s
"""


def test_sweep_over_an_object_field(tmp_path: Path) -> None:
    """A container that ignores SIGTERM and has no preStop is killed when the pod's grace period runs out
    (the runtime's StopContainer timeout is the grace); the pod is removed at the next relist, 1 s later.
    So delete → removed follows terminationGracePeriodSeconds: 6 s with 5, 31 s with 30 (past the 20 s the
    expectation allows)."""
    scenario = tmp_path / "stubborn.yaml"
    scenario.write_text(STUBBORN)
    out = tmp_path / "grace.csv"
    r = CliRunner().invoke(main, ["sweep", str(scenario), "--vary", f"{GRACE}=5,30", "--workers", "1",
                                  "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert [(x[GRACE], x["exit"], x["expect[0].passed"], x["deleteToStoppedSeconds"], x["deleteToRemovedSeconds"])
            for x in _read_csv(out)] == [("5", "0", "True", "5.0", "6.0"), ("30", "1", "False", "30.0", "31.0")]


def test_an_interrupted_sweep_keeps_ignoring_ctrl_c_to_the_end() -> None:
    """After a Ctrl-C `podlife sweep` writes its rows and exits 130 with SIGINT still ignored: restored in
    between, a second Ctrl-C during the interpreter's shutdown killed it (exit -2). Without ``keep`` the handler
    comes back as it was."""
    from podlife.sweep.engine import sigint_ignored

    before = signal.getsignal(signal.SIGINT)
    try:
        with sigint_ignored():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is before
        with sigint_ignored(keep=lambda: True):
            pass
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)

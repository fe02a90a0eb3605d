"""`podlife sweep`: points, reproducible tables whatever the workers, an external Dask cluster, bad input."""

from __future__ import annotations

import csv
import os
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


def _sweep(tmp_path: Path, name: str, *extra: str) -> list[dict[str, str]]:
    out = tmp_path / f"{name}.csv"
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "kubernetesVersion=1.33..1.34", "--vary", "seed=0..1",
                                  "--out", str(out), *extra])
    assert r.exit_code == 0, r.output
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
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


def test_bad_sweep_input_exits_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "seed=9..1"])
    assert r.exit_code == 2 and "runs backwards" in r.output
    r = CliRunner().invoke(main, ["sweep", HELLO, "--vary", "seed=1", "--out", str(tmp_path / "x.txt")])
    assert r.exit_code == 2 and "expected a .csv or .parquet file" in r.output
    r = CliRunner().invoke(main, ["sweep", str(tmp_path / "none.yaml"), "--vary", "seed=1"])
    assert r.exit_code == 2


def test_seed_000_example_points() -> None:
    """examples/sweeps/seed-000-across-versions.sh: the sidecar's process ends 21.431 s after the DELETE on
    1.18 (6.408 → 27.839; the seed log reports the exit at +21.607 once docker noticed), 7 s on 1.29+
    (preStop 3 s, app 2 s, sidecar 2 s, in order) and 5 s on 1.28 with SidecarContainers turned on (app and
    sidecar stopped together). With 1.28's default gates the API server drops the sidecar's restartPolicy and
    then refuses its preStop hook (exit 2)."""
    from podlife.sweep.engine import run_points_inline

    legacy = run_points_inline("examples/seed-000-sidecar-graceful-exit.yaml", [], [{"kubernetesVersion": "1.18"}])
    native = run_points_inline("examples/seed-000-native-sidecar.yaml", [],
                               [{"kubernetesVersion": "1.28", "spec.cluster.featureGates.SidecarContainers": "true"}]
                               + [{"kubernetesVersion": v} for v in ("1.29", "1.34", "1.37")])
    assert [(r["kubernetesVersion"], r["exit"], r["deleteToStoppedSeconds"], r["deleteToRemovedSeconds"])
            for r in legacy + native] == [("1.18", 0, 21.431, 33.592), ("1.28", 0, 5.0, 5.592),
                                          ("1.29", 0, 7.0, 7.592), ("1.34", 0, 7.0, 7.592),
                                          ("1.37", 0, 7.0, 7.592)]
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


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_ctrl_c_keeps_the_finished_rows(tmp_path: Path) -> None:
    """SIGINT to the sweep's process group (as Ctrl-C in a terminal) once some batches are done: exit 130, the
    finished rows written (each the row a direct run of its point gives), no worker's traceback."""
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
    proc = subprocess.Popen([sys.executable, "-m", "podlife.cli", "sweep", HELLO, "--vary", "seed=0..999",
                             "--vary", f"{grace}=1,2,30", "--workers", "2", "--out", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
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

"""Sweep throughput: points per second on one worker and on every core, and the engine's cost per point.

    python bench/sweep.py [--points 1000] [--scenario examples/seed-000-sidecar-graceful-exit.yaml]
                          [--engine dask|ray]

The baseline is the same points run in a plain loop in this process, measured in the same run. Besides wall
time, CPU seconds: of the loop (this process), and of each engine run, the worker processes' (this process's
children, counted once they have exited: the engine is closed before the figure is read, their start included)
and this process's own (the scheduler, the nannies and the client, which Dask runs here). From those CPU figures
it predicts the speed-up on an idle machine, which a loaded one cannot show in wall time (bench/README.md,
sweep.py: "predicted"). `--engine ray`
measures Ray's local mode on the same batches, for comparison with the engine podlife uses (Dask); Ray is not
a dependency of podlife and must be installed beside it for this.
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import time
from typing import Any

from podlife.sweep import engine
from podlife.sweep.point import run_batch
from podlife.sweep.points import parse_vary, points

Row = dict[str, Any]


def run_dask(scenario: str, pts: list[Row], workers: int) -> list[Row | None]:
    return engine.run_points(scenario, [], pts, workers=workers)[0]


def run_ray(scenario: str, pts: list[Row], workers: int) -> list[Row | None]:
    """The same batches as Dask's as Ray tasks of one CPU each, on a local Ray started (and timed) here."""
    import ray

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        task = ray.remote(num_cpus=1)(run_batch)
        rows: list[Row | None] = [None] * len(pts)
        refs = [task.remote(os.path.abspath(scenario), [], b, None) for b in engine.batches(pts, workers)]
        for batch in ray.get(refs):
            for i, row in batch:
                rows[i] = row
        return rows
    finally:
        ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--scenario", default="examples/seed-000-sidecar-graceful-exit.yaml")
    ap.add_argument("--engine", choices=("dask", "ray"), default="dask")
    args = ap.parse_args()
    pts = points([parse_vary(f"seed=0..{args.points - 1}")])
    run = run_ray if args.engine == "ray" else run_dask
    name = "Ray" if args.engine == "ray" else "Dask"

    def plain(rows: list[Row | None]) -> list[Row | None]:
        return [None if r is None else {k: v for k, v in r.items() if k != "wallSeconds"} for r in rows]

    per_point = 1000 / len(pts)
    print(f"{len(pts)} points; load average {os.getloadavg()[0]:.1f} at the start")
    t, c = time.perf_counter(), time.process_time()
    base = engine.run_points_inline(args.scenario, [], pts)
    loop, loop_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"plain loop, this process:  {len(pts) / loop:8.1f} points/s  ({loop:.2f} s; CPU {loop_cpu:.2f} s, "
          f"{loop_cpu * per_point:.2f} ms a point); load average {os.getloadavg()[0]:.1f}")

    # the engine's import and its start and close (a sweep of one point), apart from the runs below
    c = time.process_time()
    importlib.import_module("ray" if args.engine == "ray" else "dask.distributed")
    imported = time.process_time() - c
    t, c, k = time.perf_counter(), time.process_time(), _children_cpu()
    run(args.scenario, pts[:1], 1)
    start = (imported, time.perf_counter() - t, time.process_time() - c, _children_cpu() - k)
    results, cpu, split = {}, {}, {}
    cores = engine.default_workers()
    for n in sorted({1, cores}):
        t, c, w = time.perf_counter(), time.process_time(), _children_cpu()
        rows = run(args.scenario, pts, n)
        wall = time.perf_counter() - t
        here, workers = time.process_time() - c, _children_cpu() - w
        results[n], cpu[n], split[n] = wall, here + workers, (here, workers)
        print(f"{name}, {n} worker(s):         {len(pts) / wall:8.1f} points/s  ({wall:.2f} s, engine start "
              f"included; rows equal the loop's: {plain(rows) == plain(list(base))}); CPU: workers "
              f"{workers:.2f} s ({workers * per_point:.2f} ms a point in whichever worker ran it), "
              f"this process {here:.2f} s ({here * per_point:.2f} ms a point); "
              f"load average {os.getloadavg()[0]:.1f}")
    print(f"speed-up on {cores} cores: {results[1] / results[cores]:.2f}x (wall)")
    print(f"engine cost per point on 1 worker: {(results[1] - loop) * per_point:.2f} ms wall, "
          f"{(cpu[1] - loop_cpu) * per_point:.2f} ms CPU (engine start and the batching included)")
    if cores > 1:
        predict(len(pts), loop_cpu / len(pts), start, results, split, cores)


def predict(n_pts: int, loop_point: float, start: tuple[float, float, float, float], wall: dict[int, float],
            split: dict[int, tuple[float, float]], cores: int) -> None:
    """The speed-up on an idle machine, from CPU seconds (which other work on the machine changes far less than
    wall time). The serial part S: the engine's import here, and its start and close: the CPU (here and in its
    worker) of a one-point sweep less the loop's point. The workers' CPU a point w_n: their CPU less n starts,
    per point. This process's share h_n: its CPU beyond a start per second of the sweep (its periodic work is by
    the second, not by the point). On an idle machine this process runs beside one worker, but with one worker
    per core it takes h_n of the cores' time from them; and the last batch ends on average half a batch after
    the others:
        T_1 = S + N w_1        T_n = S + N w_n / (n - h_n) + b w_n / 2
    """
    imported, start_wall, start_here, start_workers = start
    serial = imported + start_here + start_workers - loop_point
    w = {n: (split[n][1] - n * start_workers) / n_pts for n in split}
    h = {n: max(0.0, split[n][0] - start_here) / wall[n] for n in split}
    b = min(32, -(-n_pts // (cores * 8)))   # engine.batches
    t1 = serial + n_pts * w[1]
    tn = serial + n_pts * w[cores] / (cores - h[cores]) + b * w[cores] / 2
    tn_same = serial + n_pts * w[1] / (cores - h[cores]) + b * w[1] / 2
    print(f"serial: {serial:.2f} s (the engine's import {imported:.2f} s; a one-point sweep: {start_wall:.2f} s "
          f"wall, CPU {start_here:.2f} s here and {start_workers:.2f} s in its worker); CPU a point in the workers: "
          f"{w[1] * 1000:.2f} ms on 1 worker, {w[cores] * 1000:.2f} ms on {cores} (the loop's: "
          f"{loop_point * 1000:.2f} ms); this process: {h[1] * 1000:.1f} / {h[cores] * 1000:.1f} ms of CPU a second")
    print(f"predicted for an idle machine: {t1:.1f} s on 1 worker (serial fraction {serial / t1:.3f}), {tn:.1f} s "
          f"on {cores}: {t1 / tn:.2f}x ({t1 / tn_same:.2f}x if a point cost the workers on {cores} what it costs "
          f"one); engine cost a point on 1 worker {(serial + n_pts * (w[1] - loop_point)) / n_pts * 1000:.2f} ms "
          f"CPU in the worker, {(serial + n_pts * (w[1] - loop_point) + h[1] * t1) / n_pts * 1000:.2f} ms with "
          "this process's")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


if __name__ == "__main__":
    main()

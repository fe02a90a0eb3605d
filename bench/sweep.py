"""Sweep throughput: points per second on one worker and on every core, and the engine's cost per point.

    python bench/sweep.py [--points 1000] [--scenario examples/seed-000-sidecar-graceful-exit.yaml]
                          [--engine dask|ray]

The baseline is the same points run in a plain loop in this process, measured in the same run. Besides wall
time, CPU seconds: of the loop (this process), and of each engine run, the worker processes' (this process's
children, counted once they have exited: the engine is closed before the figure is read, their start included)
and this process's own (the scheduler and the client, which Dask runs here). `--engine ray`
measures Ray's local mode on the same batches, for comparison with the engine podlife uses (Dask); Ray is not
a dependency of podlife and must be installed beside it for this.
"""

from __future__ import annotations

import argparse
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

    def children_cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    per_point = 1000 / len(pts)
    print(f"{len(pts)} points; load average {os.getloadavg()[0]:.1f} at the start")
    t, c = time.perf_counter(), time.process_time()
    base = engine.run_points_inline(args.scenario, [], pts)
    loop, loop_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"plain loop, this process:  {len(pts) / loop:8.1f} points/s  ({loop:.2f} s; CPU {loop_cpu:.2f} s, "
          f"{loop_cpu * per_point:.2f} ms a point); load average {os.getloadavg()[0]:.1f}")

    results, cpu = {}, {}
    cores = engine.default_workers()
    for n in sorted({1, cores}):
        t, c, w = time.perf_counter(), time.process_time(), children_cpu()
        rows = run(args.scenario, pts, n)
        wall = time.perf_counter() - t
        here, workers = time.process_time() - c, children_cpu() - w
        results[n], cpu[n] = wall, here + workers
        print(f"{name}, {n} worker(s):         {len(pts) / wall:8.1f} points/s  ({wall:.2f} s, engine start "
              f"included; rows equal the loop's: {plain(rows) == plain(list(base))}); CPU: workers "
              f"{workers:.2f} s ({workers * per_point:.2f} ms a point in whichever worker ran it), "
              f"this process {here:.2f} s ({here * per_point:.2f} ms a point); "
              f"load average {os.getloadavg()[0]:.1f}")
    print(f"speed-up on {cores} cores: {results[1] / results[cores]:.2f}x (wall)")
    print(f"engine cost per point on 1 worker: {(results[1] - loop) * per_point:.2f} ms wall, "
          f"{(cpu[1] - loop_cpu) * per_point:.2f} ms CPU (engine start and the batching included)")


if __name__ == "__main__":
    main()

"""Sweep throughput: points per second on one worker and on every core, and the engine's cost per point.

    python bench/sweep.py [--points 1000] [--scenario examples/seed-000-sidecar-graceful-exit.yaml]

The baseline is the same points run in a plain loop in this process, measured in the same run.
"""

from __future__ import annotations

import argparse
import time

from podlife.sweep import engine
from podlife.sweep.points import parse_vary, points


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=1000)
    ap.add_argument("--scenario", default="examples/seed-000-sidecar-graceful-exit.yaml")
    args = ap.parse_args()
    pts = points([parse_vary(f"seed=0..{args.points - 1}")])

    t = time.perf_counter()
    base = engine.run_points_inline(args.scenario, [], pts)
    loop = time.perf_counter() - t
    print(f"plain loop, this process:  {len(pts) / loop:8.1f} points/s  ({loop:.2f} s)")

    results = {}
    cores = engine.default_workers()
    for n in sorted({1, cores}):
        t = time.perf_counter()
        rows, _ = engine.run_points(args.scenario, [], pts, workers=n)
        wall = time.perf_counter() - t
        results[n] = wall
        same = [{k: v for k, v in r.items() if k != "wallSeconds"} for r in rows if r] == \
               [{k: v for k, v in r.items() if k != "wallSeconds"} for r in base]
        print(f"Dask, {n} worker(s):         {len(pts) / wall:8.1f} points/s  ({wall:.2f} s, cluster start "
              f"included; rows equal the loop's: {same})")
    print(f"speed-up on {cores} cores: {results[1] / results[cores]:.2f}x")
    print(f"engine cost per point on 1 worker: {(results[1] - loop) / len(pts) * 1000:.2f} ms "
          f"(cluster start and the batching included)")


if __name__ == "__main__":
    main()

"""The pytest plugin's costs: how long a ``podlife_cluster`` takes to start, and a snapshot to be taken and
restored with N pods.

    python bench/fixture.py [--clusters 5] [--pods 100]

- start: ``PodlifeCluster.start()`` to the first answered request (GET /version), with the session's warm
  process (podlife.testing.zygote) ready, as every fixture but a session's first one sees it; and the cold
  start (a ``python -m podlife.cli up`` subprocess, PODLIFE_ZYGOTE=0) for comparison;
- snapshot: a Deployment of ``--pods`` replicas advanced until they are ready, then ``snapshot()`` and
  ``restore()`` (each the wall time of the request), and the same requests after two restores giving the same
  trace bytes (checked, not timed);
- replay, the alternative to forking: the wall time of building the same state again from nothing (start a
  cluster, create the Deployment, advance), which is what replaying the request log would cost at least.

Wall-clock figures: run it on an idle machine; the minimum and median of ``--clusters`` starts are printed.
"""

from __future__ import annotations

import argparse
import statistics
import time

from podlife.testing.cluster import ClusterOptions, PodlifeCluster, Zygote


def deployment(replicas: int) -> dict[str, object]:
    labels = {"app": "web"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}


def build(cluster: PodlifeCluster, pods: int) -> None:
    cluster.request("POST", "/apis/apps/v1/namespaces/default/deployments", deployment(pods))
    cluster.advance_until(f"deployment/web readyReplicas {pods}", timeout="30m")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clusters", type=int, default=5)
    ap.add_argument("--pods", type=int, default=100)
    args = ap.parse_args()

    zygote = Zygote()
    t = time.monotonic()
    zygote.ready(120)
    print(f"warm process ready in {time.monotonic() - t:.2f} s (once per test session, while collecting)")
    try:
        starts = []
        for _ in range(args.clusters):
            with PodlifeCluster(ClusterOptions(), zygote) as c:
                starts.append(c.startup_seconds)
        print(f"fixture start (warm): min {min(starts):.3f} s, median {statistics.median(starts):.3f} s "
              f"over {len(starts)}")
        with PodlifeCluster(ClusterOptions()) as c:
            print(f"fixture start (cold subprocess): {c.startup_seconds:.3f} s")

        with PodlifeCluster(ClusterOptions(), zygote) as c:
            t = time.monotonic()
            build(c, args.pods)
            built = time.monotonic() - t
            t = time.monotonic()
            snap = c.snapshot("base")
            saved = time.monotonic() - t
            restores = []
            traces = []
            for _ in range(3):
                t = time.monotonic()
                c.restore(snap)
                restores.append(time.monotonic() - t)
                c.request("POST", "/api/v1/namespaces/default/pods",
                          {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "extra"},
                           "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
                c.advance("1m")
                traces.append(c.trace())
            same = all(tr == traces[0] for tr in traces)
        print(f"{args.pods} pods: state built in {built:.2f} s; snapshot {saved * 1000:.0f} ms; restore "
              f"{', '.join(f'{r * 1000:.0f}' for r in restores)} ms; same trace after each restore: {same}")
        with PodlifeCluster(ClusterOptions(), zygote) as c:
            t = time.monotonic()
            build(c, args.pods)
            print(f"replay (the same state built again from a fresh cluster): {time.monotonic() - t:.2f} s "
                  f"(+ {c.startup_seconds:.2f} s start)")
    finally:
        zygote.close()


if __name__ == "__main__":
    main()

"""The durable store's commit rate: ConfigMap writes through the store, each committed to SQLite on its own (as
each acknowledged API write is), with synchronous=NORMAL (the default) and FULL (--durable), beside the same
writes in memory.

    python bench/store.py [--writes 2000] [--dir DIR]

Wall-clock figures of one process on this machine (the fsyncs of FULL are wall time, not CPU); the in-memory row
is the store's own cost, the baseline the SQLite rows add to.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import datetime, timezone

from podlife.api.meta import clone
from podlife.api.storage import Persisted, SqliteLog
from podlife.cluster import Cluster


def run(writes: int, directory: str | None, durable: bool) -> tuple[float, float]:
    """(commits/s, CPU ms per commit) of ``writes`` updates of one ConfigMap, each its own commit."""
    persisted = None
    if directory is not None:
        path = os.path.join(directory, f"state-{'full' if durable else 'normal'}.db")
        persisted = Persisted(SqliteLog(path, durable=durable), resume=False)
    c = Cluster(version="1.32", seed=0, start_time=datetime(2026, 1, 1, tzinfo=timezone.utc), nodes=[],
                persisted=persisted)
    store = c.store
    cm = store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"},
                       "data": {"n": "initial"}}, by="bench")
    wall, cpu = time.perf_counter(), time.process_time()
    for n in range(writes):
        cm = clone(cm)
        cm["data"]["n"] = str(n)
        cm = store.update(cm, by="bench")
        if store.log is not None:
            store.log.commit()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if store.log is not None:
        store.log.close()
    return writes / wall, cpu * 1000 / writes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--dir", help="where the databases go (default: a temporary directory)")
    a = ap.parse_args()
    directory = a.dir or tempfile.mkdtemp(prefix="podlife-bench-store-")
    print(f"{a.writes} ConfigMap updates, one commit each, in {directory}")
    print(f"{'store':<30} {'commits/s':>10} {'CPU ms/commit':>14}")
    for name, d, durable in (("in memory (podlife run)", None, False),
                             ("SQLite WAL synchronous=NORMAL", directory, False),
                             ("SQLite WAL synchronous=FULL", directory, True)):
        rate, cpu = run(a.writes, d, durable)
        print(f"{name:<30} {rate:>10.0f} {cpu:>14.3f}")


if __name__ == "__main__":
    main()

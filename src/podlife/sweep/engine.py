"""Running a sweep's points on Dask: an embedded local cluster by default, or an existing scheduler.

Rows come back in any order and are put back in point order, so the table does not depend on the number of
workers. Points travel in batches: Dask's cost per task (about a millisecond) is then paid once per batch.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from podlife.sweep.point import run_batch

Row = dict[str, Any]


def batches(points: list[dict[str, Any]], workers: int) -> list[list[tuple[int, dict[str, Any]]]]:
    """About eight batches per worker (to keep every core busy to the end), at most 32 points each."""
    size = max(1, min(32, math.ceil(len(points) / (max(1, workers) * 8))))
    indexed = list(enumerate(points))
    return [indexed[i:i + size] for i in range(0, len(indexed), size)]


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class ClusterError(Exception):
    """The --cluster address is malformed or no scheduler answers there."""


CONNECT_TIMEOUT = "5s"


def connect(address: str) -> Any:
    """A client of an existing scheduler; a bad address or no answer within CONNECT_TIMEOUT is ClusterError."""
    import dask
    from dask.distributed import Client

    try:
        with dask.config.set({"distributed.comm.timeouts.connect": CONNECT_TIMEOUT}):
            return Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, ValueError, TypeError) as e:   # TimeoutError is an OSError
        raise ClusterError(f"cannot reach a Dask scheduler at {address!r}: {e or type(e).__name__}; expected "
                           "tcp://HOST:PORT of a running scheduler") from None


@contextlib.contextmanager
def sigint_ignored(keep: Callable[[], bool] = lambda: False) -> Iterator[None]:
    """SIGINT ignored while the embedded workers start (a process started then inherits the ignored signal, so a
    Ctrl-C to the process group cannot end a worker before its preload ignores SIGINT itself; a Ctrl-C in these
    seconds is lost, the next one interrupts the sweep), while they are shut down, and after an interrupt until
    the command has written the rows (podlife.cli sweep): ``keep`` says at the end whether it stays ignored,
    with no moment between in which a Ctrl-C would find Python's handler."""
    if threading.current_thread() is not threading.main_thread():   # only the main thread may set handlers
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        if not keep():
            signal.signal(signal.SIGINT, old)


def local_cluster(workers: int) -> Any:
    """The embedded cluster: one single-threaded worker process per core, ignoring Ctrl-C (the parent handles it).

    The scheduler serves HTTP whatever its options (health and metrics routes); it is put on a free loopback port
    rather than 8787, which another cluster may hold, and without the Bokeh dashboard. Nor does it keep what only
    a dashboard shows (EMBEDDED_CONFIG)."""
    import dask
    from dask.distributed import LocalCluster

    with dask.config.set(EMBEDDED_CONFIG):   # the nannies hand it on to the workers they start
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                            dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False}, silence_logs=40,
                            preload=["podlife.sweep.worker"])


# Dask's periodic diagnostics that only its dashboard and logs use, which cost CPU for as long as the sweep runs
# whatever the points (bench/README.md, sweep.py): the workers' statistical profiler (each worker's stack every
# 10 ms) and the event-loop tick (every 20 ms in the scheduler, each nanny and each worker; it measures how late
# the loop runs, for a warning in the log, which the workers do not write). Together 32 ms of CPU a second here
# and 28 in each worker at the defaults, 19 and 10 without.
EMBEDDED_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s"}


def run_points(scenario: str, base_sets: list[str], points: list[dict[str, Any]], until: str | None = None,
               workers: int | None = None, cluster: str | None = None,
               progress: Callable[[int], None] | None = None,
               hold_sigint: bool = False) -> tuple[list[Row | None], bool]:
    """Rows in point order (None where a point did not finish) and whether the sweep was interrupted.
    ``hold_sigint``: after an interrupt SIGINT stays ignored (the caller writes the rows and ends: a Ctrl-C
    pressed again then, even while the interpreter shuts down, must not kill it)."""
    from dask.distributed import Client, as_completed

    scenario = os.path.abspath(scenario)
    rows: list[Row | None] = [None] * len(points)
    local = None
    if cluster is None:
        n = workers or default_workers()
        with sigint_ignored():
            local = local_cluster(n)
            client = Client(local)
    else:
        client = connect(cluster)
        n = workers or max(1, sum(client.nthreads().values()))
    interrupted = False
    futures: list[Any] = []
    try:
        futures = [client.submit(run_batch, scenario, base_sets, b, until, pure=False) for b in batches(points, n)]
        for fut in as_completed(futures):
            for i, row in fut.result():
                rows[i] = row
            if progress is not None:
                progress(sum(r is not None for r in rows))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        # a second Ctrl-C must not cut the shutdown short and lose the rows
        with sigint_ignored(keep=lambda: interrupted and hold_sigint):
            if interrupted:
                client.cancel([f for f in futures if f.status != "finished"])
                for fut in futures:   # batches that finished after the last one taken
                    if fut.status == "finished":
                        for i, row in fut.result():
                            rows[i] = row
            client.close()
            if local is not None:
                local.close()
    return rows, interrupted


def run_points_inline(scenario: str, base_sets: list[str], points: list[dict[str, Any]],
                      until: str | None = None) -> list[Row]:
    """The same rows from a plain loop in this process (the baseline the engine is measured against)."""
    return [row for _, row in run_batch(os.path.abspath(scenario), base_sets, list(enumerate(points)), until)]

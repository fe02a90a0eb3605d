"""The garbage collector's policy while a model runs, apart from the kernel so that the ``podlife`` command can
set it before it knows which subcommand runs (without importing SimPy for ``--help``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# generation-0 threshold while a model runs (CPython's default is 700)
YOUNG_COLLECTION_THRESHOLD = 100_000
_RARE = (YOUNG_COLLECTION_THRESHOLD, 50, 100)
# while a model runs, the older generations are not collected (see few_collections)
_YOUNG_ONLY = (YOUNG_COLLECTION_THRESHOLD, 1 << 30, 100)
_one_run = False   # this process makes one run and exits (one_run_process)


@contextmanager
def few_collections() -> Iterator[None]:
    """Rarer garbage collections while a model runs. A run allocates millions of small objects, most short-lived,
    on a heap that grows with the cluster; with CPython's default thresholds they survive into the old generation
    and the collector scans the whole heap again and again (a third of a 10,000-pod run). With a larger young
    generation they die young; cycles are still collected while young. Only the young generation is collected:
    what outlives a young collection is the cluster, and tracing it again is what an older collection costs
    (2.3 s each, five of them in a 150,000-pod hour); garbage cycles that old are next to none (5 objects at the
    end of a 10,000-pod hour) and wait for the end of the run. Nothing in the model depends on when.

    In a one-run process the collector does not run at all while the model runs: a young collection traces
    every object made since the last one, and almost all of them are the cluster's (a 10,000-pod hour: twelve
    collections, 0.54 s of 10.9, for 1,146 garbage objects, the same 1,146 at 50,000 pods). Such cycles are
    left to the operating system at exit. What the run made is frozen before the collector is back (else its
    first young collection would trace all of it)."""
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(*_YOUNG_ONLY)
    if _one_run:
        gc.disable()
    try:
        yield
    finally:
        if _one_run:
            gc.freeze()
        gc.set_threshold(*before)
        if enabled:
            gc.enable()



@contextmanager
def one_point() -> Iterator[None]:
    """The collection policy of one point of a sweep, in a process that runs point after point (a sweep's
    worker, or its plain loop): no collection while the point loads, runs and makes its row, as in the
    ``podlife`` command's run (one_run_process), then one young collection once the point's objects are
    garbage. Everything the point made is young then, so that collection traces the point's cluster once, to
    free its cycles, and nothing older: none of the collections at CPython's thresholds in the middle of the
    report (which traced the cluster while it was still alive), and none of the whole heap, which in a Dask
    worker is mostly Dask's."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.collect(0)
        if enabled:
            gc.enable()

def one_run_process() -> None:
    """The collection policy of a process that loads one scenario, runs it, writes its report and exits (the
    ``podlife`` command). The young threshold of ``few_collections`` holds for the whole process: put back to
    CPython's after the run, it made the first allocations of the report's writing scan the whole heap of the
    run (0.6 s of a 10,000-pod hour). Its run freezes what it made when it ends (few_collections), so the
    report's writing does not trace it either. Call ``at_exit`` last."""
    global _one_run
    _one_run = True
    gc.set_threshold(*_RARE)


# a live server's young generation (serving_collections)
LIVE_YOUNG_COLLECTION_THRESHOLD = 10_000


def serving_collections() -> None:
    """The collection policy of ``podlife up``: only the young generation is collected, as in
    few_collections, and it is smaller, because a collection stops the server: it traces every object made
    since the last one, almost all of them the cluster's, so its length is set by the young threshold and not
    by the cluster's size (100,000: 0.1-0.25 s each while a 5,000-replica Deployment was created, pauses every
    other client waited out; 10,000: a tenth of that)."""
    gc.set_threshold(LIVE_YOUNG_COLLECTION_THRESHOLD, 1 << 30, 100)


def at_exit() -> None:
    """Leave the heap to the operating system: a model's cluster is a web of cycles (kernel, processes,
    informers) that the interpreter's last collection would otherwise trace object by object (1.5 s after a
    10,000-pod hour, 7 s after 50,000 pods) before the process can end."""
    gc.freeze()

"""Preloaded into the worker processes of the embedded cluster (LocalCluster's ``preload``)."""

from __future__ import annotations

import logging
import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Ctrl-C reaches the whole process group: the parent cancels the sweep and shuts the workers down, so a
    worker must not die of the SIGINT on its own first (with a KeyboardInterrupt traceback). Nor does it log:
    each point's failure is in its row, and a worker still busy with a batch when the parent shuts the
    scheduler down would otherwise print the failed heartbeat's traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)

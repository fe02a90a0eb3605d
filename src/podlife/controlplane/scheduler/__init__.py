"""The scheduler. Its modules are numpy's only users in a run, so numpy is first loaded here.

numpy's OpenBLAS starts a thread per core when it loads and sets up a buffer for each: on this package's
two-core machine about 70 ms of CPU, a quarter of a small run from start to exit (bench/README.md, "The command
line, start to exit"). The scheduler works on arrays element by element and calls no BLAS routine, so numpy is
loaded with one BLAS thread, unless the user chose a number (OpenBLAS reads these variables only when it
loads). The variable is removed again at once, so that processes podlife starts do not inherit it."""

from __future__ import annotations

import os
import sys

_BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

if "numpy" not in sys.modules and not any(v in os.environ for v in _BLAS_THREAD_VARIABLES):
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]

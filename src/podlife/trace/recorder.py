"""The trace: every observable thing that happens, as one chronological list of records.

Section 4 of the scenario format defines the record types. Records are plain dicts so the report is the list
itself; ``t`` is seconds since the scenario start, rounded to the millisecond.

Records are kept in ``records`` unless the trace is only streamed (``keep=False``: a long-running live
cluster); each ``sink`` sees every record as it is made.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from podlife.engine import Kernel


Record = dict[str, Any]


class Trace:
    def __init__(self, kernel: Kernel, start_time: datetime, keep: bool = True) -> None:
        self.kernel = kernel
        self.start_time = start_time
        self.keep = keep
        self.records: list[Record] = []
        self.sinks: list[Callable[[Record], None]] = []

    def emit(self, type_: str, **fields: Any) -> Record:
        rec = {"t": round(self.kernel.now, 3), "type": type_}
        rec.update(fields)
        if self.keep:
            self.records.append(rec)
        for sink in self.sinks:
            sink(rec)
        return rec

    def timestamp(self, t: float | None = None) -> str:
        """RFC 3339 time (seconds precision, as metav1.Time serialises) of simulated time ``t``."""
        when = self.start_time + timedelta(seconds=int(self.kernel.now if t is None else t))
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")

    def micro_timestamp(self, t: float | None = None) -> str:
        """RFC 3339 with microseconds, as metav1.MicroTime serialises (Lease renewTime, Event eventTime)."""
        when = self.start_time + timedelta(seconds=round(self.kernel.now if t is None else t, 6))
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")

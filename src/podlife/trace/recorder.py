"""The trace: every observable thing that happens, as one chronological list of records.

Section 4 of the scenario format defines the record types. Records are plain dicts so the report is the list
itself; ``t`` is seconds since the scenario start, rounded to the millisecond.

How much of it is made and kept is the run's choice (``--trace``): ``full`` makes every record; ``objects``
and ``summary`` make no component ``log`` records (whose formatting is a good part of a run's cost). Records
are kept in ``records`` unless the run streams them (``keep=False``); each ``sink`` sees every record as it is
made (a live trace); each ``Batched`` sink sees them in lists, in the order they were made, a little later (a
streamed report, the run's figures: read once the run has ended, so they need not see each record at once, and a
list costs one call where a record each cost one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from podlife.engine import Kernel

LAST_TIME = datetime.max.replace(tzinfo=timezone.utc)   # 9999-12-31T23:59:59.999999Z

LEVELS = ("full", "objects", "summary")

Record = dict[str, Any]

BATCH = 32   # records a Batched sink is handed at once: few enough to be still in the CPU cache (1,024 made it slower)


class Batched(NamedTuple):
    """A trace sink that takes the records in lists (``Trace.attach``)."""
    fn: Callable[[list[Record]], None]


class Trace:
    def __init__(self, kernel: Kernel, start_time: datetime, level: str = "full", keep: bool = True) -> None:
        self.kernel = kernel
        self.start_time = start_time
        self.level = level
        self.logs = level == "full"   # whether component log records are made at all
        self.keep = keep
        self.records: list[Record] = []
        self.sinks: list[Callable[[Record], None]] = []
        self.batch_sinks: list[Callable[[list[Record]], None]] = []
        self._batch: list[Record] = []
        self._held: list[Record] = []
        self._holds = 0
        self._t_at: float | None = None
        self._t = 0.0
        self._stamps: dict[int, str] = {}

    def attach(self, sinks: Iterable[Callable[[Record], None] | Batched]) -> None:
        for sink in sinks:
            if isinstance(sink, Batched):
                self.batch_sinks.append(sink.fn)
            else:
                self.sinks.append(sink)

    def emit(self, type_: str, **fields: Any) -> Record:
        return self.put({"t": None, "type": type_, **fields})

    def put(self, rec: Record) -> Record:
        """``emit`` for a record made whole, with ``"t"`` as its first key (any value; set here), which becomes the
        record itself: the store's api and status records and the Events' records are made so, as a copy
        of a record cost a third of what the trace spends on it."""
        now = self.kernel.now
        if now != self._t_at:   # records come in bursts at one instant (the same object): round it once
            self._t_at, self._t = now, round(now, 3)
        rec["t"] = self._t
        if self.keep:
            self.records.append(rec)
        if self.sinks:
            if self._holds:
                self._held.append(rec)
            else:
                for sink in self.sinks:
                    sink(rec)
        batch = self._batch
        batch.append(rec)
        if len(batch) >= BATCH and not self._holds:
            self.drain()
        return rec

    def drain(self) -> None:
        """Hand the records made so far to the Batched sinks (the run's end calls it; never within a hold, whose
        records may still be completed)."""
        batch, self._batch = self._batch, []
        if batch:
            for sink in self.batch_sinks:
                sink(batch)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """For records completed after other records were made (a request and its outcome): the sinks see the
        records made within, in the order they were made, once the outermost hold ends."""
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds:
                held, self._held = self._held, []
                for rec in held:
                    for sink in self.sinks:
                        sink(rec)
                if len(self._batch) >= BATCH:
                    self.drain()

    def timestamp(self, t: float | None = None) -> str:
        """RFC 3339 time (seconds precision, as metav1.Time serialises) of simulated time ``t``."""
        # the same second is stamped many times (every write of a busy second, every status of a running
        # container): each is formatted once
        second = int(self.kernel.now if t is None else t)
        stamp = self._stamps.get(second)
        if stamp is None:
            if len(self._stamps) >= 1 << 16:
                self._stamps.clear()
            stamp = self._stamps[second] = self._format(second)
        return stamp

    def _format(self, t: float) -> str:
        return self._when(int(t)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def micro_timestamp(self, t: float | None = None) -> str:
        """RFC 3339 with microseconds, as metav1.MicroTime serialises (Lease renewTime, Event eventTime)."""
        return self._when(round(self.kernel.now if t is None else t, 6)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    def _when(self, t: float) -> datetime:
        """The wall time of simulated time ``t``. A time past the last one a four-digit year holds (a deletion
        grace period near int64's limit: upstream's time arithmetic overflows there) is that last instant; the
        run itself never gets there (the loader keeps startTime + the run's span within it)."""
        try:
            return self.start_time + timedelta(seconds=t)
        except OverflowError:
            return LAST_TIME if t > 0 else datetime.min.replace(tzinfo=self.start_time.tzinfo)

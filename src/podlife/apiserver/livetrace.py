"""The trace of a running cluster, bounded: a long-running ``podlife up`` keeps no list of every record.

- ``LiveTrace``: the newest records in a ring that ``podlife trace`` followers read, and every record
  appended to ``trace.ndjson`` in the data directory, where older records are read back from; record numbers
  count from the cluster's first start, across restarts.
- ``ContainerLogs``: per container, the records of its last two attempts, which its log (pods/log, with
  ``previous``) is made from: the kubelet too keeps the log of the current and the previous container only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import IO

from podlife.report.stream import record_line
from podlife.trace.recorder import Record, Trace

RING = 100_000
_LOG_TYPES = frozenset({"runtime", "signal", "hook"})


class LiveTrace:
    def __init__(self, trace: Trace, path: str | None = None, size: int = RING) -> None:
        self.ring: deque[Record] = deque(maxlen=size)
        self.total = 0          # records made so far (the number of the next one)
        self.path = path
        self._file: IO[bytes] | None = None
        if path is not None:
            self.total = _count_lines(path)
            self._file = open(path, "ab")  # noqa: SIM115 - closed by close()
        for rec in trace.records:
            self.add(rec)
        trace.records = []
        trace.keep = False
        trace.sinks.append(self.add)

    def add(self, rec: Record) -> None:
        self.ring.append(rec)
        self.total += 1
        if self._file is not None:
            self._file.write(record_line(rec))

    @property
    def first(self) -> int:
        """The number of the oldest record still in memory."""
        return self.total - len(self.ring)

    def since(self, pos: int) -> Iterator[bytes]:
        """Records ``pos`` on, as JSON lines: the older ones from the file (if there is one), the rest from the
        ring. Without a file, what left the ring is gone and the lines start at the oldest kept."""
        first = self.first
        if pos < first and self._file is not None and self.path is not None:
            self._file.flush()
            with open(self.path, "rb") as f:
                for n, line in enumerate(f):
                    if n >= first:
                        break
                    if n >= pos:
                        yield line
        start = max(pos - first, 0)
        for i in range(start, len(self.ring)):
            yield record_line(self.ring[i])

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _count_lines(path: str) -> int:
    n = 0
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                n += chunk.count(b"\n")
    except FileNotFoundError:
        pass
    return n


class ContainerLogs:
    """A trace sink: the runtime, signal and hook records of each container's last two attempts. A deleted pod's
    are kept until ``KEEP_DELETED`` more pods were deleted (a follower reads the last lines after the delete)."""

    KEEP_DELETED = 1000

    def __init__(self, trace: Trace) -> None:
        self._pods: dict[str, dict[str, deque[list[Record]]]] = {}
        self._deleted: deque[str] = deque()
        for rec in trace.records:
            self.add(rec)
        trace.sinks.append(self.add)

    def add(self, rec: Record) -> None:
        typ = rec["type"]
        if typ == "deleted":
            ref = rec.get("object", "")
            if ref in self._pods:
                self._deleted.append(ref)
                if len(self._deleted) > self.KEEP_DELETED:
                    self._pods.pop(self._deleted.popleft(), None)
            return
        if typ not in _LOG_TYPES or "container" not in rec:
            return
        containers = self._pods.setdefault(rec.get("object", ""), {})
        if typ == "runtime" and rec.get("op") == "create":
            containers.setdefault(rec["container"], deque(maxlen=2)).append([])
        attempts = containers.get(rec["container"])
        if attempts:
            attempts[-1].append(rec)

    def attempts(self, ref: str, container: str) -> list[list[Record]]:
        """The container's attempts, oldest first (at most two); each starts with its create record."""
        return list(self._pods.get(ref, {}).get(container, ()))

"""Streamed output for large runs: the trace report as newline-delimited JSON, written record by record as the
run makes them, and the klog text likewise, so that a run's memory is bounded by its cluster, not its history.

The lines of a streamed report (docs/scenario-format.md section 4.1):

1. the header: ``format``, ``stream: "ndjson"``, ``trace`` (the level), ``scenario``, ``kubernetesVersion``,
   ``seed``, ``startTime``;
2. one line per record, in the order they were made;
3. one ``{"final": OBJECT}`` line per API object at the end (none at ``--trace summary``);
4. last, the outcome: ``endSeconds``, ``expectations``, ``assumptions``, ``warnings``, ``podTables`` and
   ``figures`` (podlife.report.figures). A file without it is from a run that did not end.

``read`` turns such a file back into the report's JSON form.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import IO, Any

import orjson

from podlife.report import klog
from podlife.trace.recorder import Record

SUFFIXES = (".ndjson", ".jsonl")
_BUFFER = 1 << 20


def is_streamed(path: str | None) -> bool:
    return path is not None and path.endswith(SUFFIXES)


# one line of a streamed report (or of podlife up's trace): compact JSON and a newline; a partial, not a
# function, as it is called once per record
record_line: Callable[[Any], bytes] = partial(orjson.dumps, option=orjson.OPT_APPEND_NEWLINE)


class NdjsonReport:
    def __init__(self, path: str, header: dict[str, Any]) -> None:
        self.f: IO[bytes] = open(path, "wb", buffering=_BUFFER)  # noqa: SIM115 - closed by finish()
        self._line({**header, "stream": "ndjson"})

    def _line(self, obj: Any) -> None:
        self.f.write(record_line(obj))

    record = _line   # the trace sink: one line per record

    def records(self, recs: list[Record]) -> None:
        """``record`` for each of ``recs`` (a Batched trace sink). The lines joined by newlines, then the last
        one's: orjson.dumps called without options costs a third less than with OPT_APPEND_NEWLINE (which it
        parses as a keyword at every call), the same bytes."""
        if recs:
            write = self.f.write
            write(b"\n".join(map(orjson.dumps, recs)))
            write(b"\n")

    def finish(self, objects: Iterable[dict[str, Any] | bytes], outcome: dict[str, Any]) -> None:
        """``objects``: each a dict, or its compact JSON (written as it is)."""
        write = self.f.write
        for obj in objects:
            # the bytes orjson makes of {"final": obj}, in three writes: joining them first would copy the object
            write(b'{"final":')
            write(obj if isinstance(obj, bytes) else orjson.dumps(obj))
            write(b"}\n")
        self._line(outcome)
        self.f.close()


class KlogStream:
    """The ``--klog`` text, a line per ``log`` record as it is made."""

    def __init__(self, path: str, start_time: datetime) -> None:
        self.f: IO[str] = open(path, "w", encoding="utf-8", buffering=_BUFFER)  # noqa: SIM115
        self.start_time = start_time

    def record(self, rec: Record) -> None:
        if rec["type"] == "log":
            self.f.write(klog.line(rec, self.start_time))
            self.f.write("\n")

    def records(self, recs: list[Record]) -> None:
        for rec in recs:
            if rec["type"] == "log":
                self.record(rec)

    def close(self) -> None:
        self.f.close()


def read(data: bytes) -> dict[str, Any]:
    """A streamed report as the JSON report (records and final objects in lists); ValueError if it is not
    one or did not end."""
    lines = io.BytesIO(data)
    first = lines.readline()
    try:
        head = orjson.loads(first)
    except orjson.JSONDecodeError as e:
        raise ValueError(f"line 1: not JSON: {e}") from None
    if not isinstance(head, dict) or head.get("stream") != "ndjson":
        raise ValueError("line 1: expected the header of a streamed report")
    rep = {k: v for k, v in head.items() if k != "stream"}
    records: list[Record] = []
    objects: list[dict[str, Any]] = []
    outcome: dict[str, Any] | None = None
    for n, raw in enumerate(lines, start=2):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise ValueError(f"line {n}: not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise ValueError(f"line {n}: expected an object")
        if "final" in obj:
            objects.append(obj["final"])
        elif "endSeconds" in obj:
            outcome = obj
        else:
            records.append(obj)
    if outcome is None:
        raise ValueError("the report has no outcome line: the run did not end")
    rep["endSeconds"] = outcome.pop("endSeconds")
    rep["records"] = records
    rep.update(outcome)
    rep["final"] = {"objects": objects}
    return rep

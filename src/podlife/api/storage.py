"""The store's durable log: every revision written to SQLite, as k3s keeps a cluster in SQLite through kine.

Three tables:

- ``revisions``: one row per revision (the store's resourceVersion), with the object as JSON after the write
  (for a delete, as it was when removed), the revision of the key's previous row (kine's ``prev_revision``) and
  the kernel time of the write;
- ``objects``: the current object of each key, indexed by (kind, namespace, name), so that a restart reads the
  cluster without replaying its history;
- ``meta``: what the cluster is (version, seed, start time, how many times it was started), the compacted
  revision and the kernel time last reached.

Writes are collected while the kernel runs and committed together by ``commit()``, which the live server calls
before it answers a request and whenever the clock has moved: an acknowledged write is in the database. The
journal is SQLite's WAL; ``synchronous=NORMAL`` (the default) survives the process being killed, ``FULL``
(``--durable``) also a power loss, at the cost of an fsync per commit.

Compaction, as kine's compactor: rows older than the newest ``keep`` revisions are deleted, except the previous
row of a key that a kept row still refers to (a watch replaying that row compares it with its predecessor).
Watches and lists asking for a compacted revision get 410 Gone.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

FORMAT = "podlife-store/v1"
KEEP = 1000                   # kine: the last 1,000 revisions survive every compaction
COMPACT_EVERY = 500           # compact once this many revisions have piled up beyond those kept
TIME_EVERY = 1.0              # wall seconds between writes of the clock alone (no revision to carry it)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS revisions (
    rv INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    deleted INTEGER NOT NULL,
    prev INTEGER,
    t REAL NOT NULL,
    value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS objects (
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    rv INTEGER NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (kind, namespace, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class StorageError(Exception):
    """The data directory cannot be used (not a podlife store, another version of the format)."""


@dataclass
class Revision:
    """One row of ``revisions``, decoded."""
    rv: int
    kind: str
    key: tuple[str, str]
    deleted: bool
    prev: int | None
    t: float
    obj: dict[str, Any]


class SqliteLog:
    def __init__(self, path: str, *, durable: bool = False, keep: int = KEEP) -> None:
        self.path = path
        self.keep = keep
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
        self.db.executescript(_SCHEMA)
        fmt = self.get_meta("format")
        if fmt is None:
            self.set_meta({"format": FORMAT})
        elif fmt != FORMAT:
            raise StorageError(f"{path}: a store of format {fmt!r}; this podlife reads {FORMAT!r}")
        self.compacted = int(self.get_meta("compacted") or 0)
        self._rows: list[tuple[Any, ...]] = []
        self._current: dict[tuple[str, str, str], tuple[int, bytes] | None] = {}
        self._now: float | None = None          # kernel time to record with the next commit
        self._written_now: float | None = None  # the kernel time last recorded
        self._time_written = 0.0                # wall time the clock alone was last written
        self._last_rv = self.last_revision()

    # ---- meta --------------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, values: dict[str, str]) -> None:
        with self._transaction():
            self.db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(values.items()))

    # ---- writes ------------------------------------------------------------------------------------

    def put(self, rv: int, kind: str, key: tuple[str, str], obj: dict[str, Any], prev: int | None, t: float,
            deleted: bool = False, value: bytes | None = None) -> bytes:
        """Record revision ``rv`` of ``key`` (to be committed with the next ``commit``); returns its JSON."""
        if value is None:
            value = orjson.dumps(obj)
        self._rows.append((rv, kind, key[0], key[1], int(deleted), prev, t, value))
        self._current[(kind, *key)] = None if deleted else (rv, value)
        self._now = t
        return value

    def clock(self, t: float) -> None:
        """The kernel reached ``t``: recorded with the next commit (the clock alone at most every TIME_EVERY
        wall seconds, or at once with ``commit(force=True)``)."""
        if t != self._written_now:
            self._now = t

    @property
    def pending(self) -> int:
        return len(self._rows)

    def commit(self, force: bool = False) -> None:
        if not self._rows:
            if self._now is None or not (force or time.monotonic() - self._time_written >= TIME_EVERY):
                return
        rows, current, now = self._rows, self._current, self._now
        self._rows, self._current, self._now = [], {}, None
        with self._transaction():
            if rows:
                self.db.executemany("INSERT INTO revisions (rv, kind, namespace, name, deleted, prev, t, value) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
                puts = [(k[0], k[1], k[2], v[0], v[1]) for k, v in current.items() if v is not None]
                dels = [k for k, v in current.items() if v is None]
                if puts:
                    self.db.executemany("INSERT OR REPLACE INTO objects (kind, namespace, name, rv, value) "
                                        "VALUES (?, ?, ?, ?, ?)", puts)
                if dels:
                    self.db.executemany("DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?", dels)
                self._last_rv = rows[-1][0]
                if self._last_rv - self.compacted >= self.keep + COMPACT_EVERY:
                    self._compact(self._last_rv - self.keep)
            if now is not None:
                self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('now', ?)", (repr(now),))
        self._written_now = now if now is not None else self._written_now
        self._time_written = time.monotonic()

    def _compact(self, upto: int) -> None:
        """Drop revisions up to ``upto``, but keep a row a later row names as its previous one."""
        self.db.execute("DELETE FROM revisions WHERE rv <= ? AND rv NOT IN "
                        "(SELECT prev FROM revisions WHERE rv > ? AND prev IS NOT NULL)", (upto, upto))
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('compacted', ?)", (str(upto),))
        self.compacted = upto

    def _transaction(self) -> Any:
        db = self.db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN")

            def __exit__(self, exc_type: Any, *_: Any) -> None:
                db.execute("ROLLBACK" if exc_type else "COMMIT")
        return _Tx()

    # ---- reads (a restart) -------------------------------------------------------------------------

    def last_revision(self) -> int:
        row = self.db.execute("SELECT max(rv) FROM revisions").fetchone()
        return max(int(row[0] or 0), self.compacted)

    def now(self) -> float:
        """The kernel time last reached: the clock's own record, or the newest write if that came later."""
        row = self.db.execute("SELECT max(t) FROM revisions").fetchone()
        return max(float(self.get_meta("now") or 0.0), float(row[0] or 0.0))

    def objects(self) -> Iterator[tuple[str, tuple[str, str], dict[str, Any]]]:
        """The current objects, CustomResourceDefinitions first (their resources' kinds come from them)."""
        cur = self.db.execute("SELECT kind, namespace, name, value FROM objects "
                              "ORDER BY kind != 'CustomResourceDefinition', kind, namespace, name")
        for kind, ns, name, value in cur:
            yield kind, (ns, name), orjson.loads(value)

    def revisions(self, after: int) -> list[Revision]:
        """The revisions after ``after`` and the rows they name as previous, in order."""
        cur = self.db.execute("SELECT rv, kind, namespace, name, deleted, prev, t, value FROM revisions "
                              "WHERE rv > ? OR rv IN (SELECT prev FROM revisions WHERE rv > ?) ORDER BY rv",
                              (after, after))
        return [Revision(rv, kind, (ns, name), bool(d), prev, t, orjson.loads(v))
                for rv, kind, ns, name, d, prev, t, v in cur]

    def close(self) -> None:
        self.commit(force=True)
        self.db.close()


def open_log(directory: str, durable: bool = False) -> SqliteLog:
    os.makedirs(directory, exist_ok=True)
    return SqliteLog(os.path.join(directory, "state.db"), durable=durable)


@dataclass
class Persisted:
    """What a cluster built over a durable log needs to know."""
    log: SqliteLog
    resume: bool          # the log holds a cluster: restart it rather than start a new one
    now: float = 0.0      # the kernel time it had reached
    stream: int = 0       # how many times it was started before

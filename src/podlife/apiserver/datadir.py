"""The data directory of ``podlife up`` (``--data-dir``): the cluster's state, its trace and a lock.

- ``state.db``: the store's durable log (podlife.api.storage), with what the cluster is in its meta table:
  Kubernetes version, seed, start time, how many times it was started, and the cluster file it was made from;
- ``cluster.yaml``: a copy of that file, read again on every restart;
- ``trace.ndjson``: every trace record, one JSON object a line, appended across restarts;
- ``podlife.lock``: held while a ``podlife up`` serves this directory; ``podlife.log`` (``--detach``).

A directory that holds a cluster is restarted: the version, seed and cluster file given on the command line
must be those it was made with (or left out).

The state holds Secrets: the directory is 0700 and its files 0600, made so and tightened on every start (an
older podlife made them 0755 and 0644). SQLite gives its -wal and -shm files the mode of state.db.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from datetime import datetime
from typing import IO

from podlife.api.storage import Persisted, StorageError, open_log
from podlife.scenario.errors import ScenarioError

CLUSTER_FILE = "cluster.yaml"
TRACE_FILE = "trace.ndjson"
LOCK_FILE = "podlife.lock"
LOG_FILE = "podlife.log"
STATE_FILE = "state.db"   # podlife.api.storage.open_log
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
# every file podlife keeps at the top of the directory
FILES = (STATE_FILE, STATE_FILE + "-wal", STATE_FILE + "-shm", STATE_FILE + "-journal", TRACE_FILE, CLUSTER_FILE,
         LOCK_FILE, LOG_FILE)


def private_dir(path: str) -> None:
    """``path`` made if missing, readable by its owner only."""
    os.makedirs(path, mode=PRIVATE_DIR, exist_ok=True)
    os.chmod(path, PRIVATE_DIR)


def private_file(path: str, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """``path`` opened (made if missing) readable and writable by its owner only; returns the descriptor."""
    fd = os.open(path, flags | os.O_CREAT, PRIVATE_FILE)
    os.fchmod(fd, PRIVATE_FILE)
    return fd


@dataclass
class Stored:
    """What the directory says the cluster is (None: a new directory)."""
    version: str
    seed: int
    start_time: datetime
    cluster_file: str | None      # the copy in the directory, if it was made from one


class DataDir:
    def __init__(self, path: str, durable: bool = False) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        try:
            private_dir(self.path)
            for name in FILES:
                if os.path.isfile(self.file(name)):
                    os.chmod(self.file(name), PRIVATE_FILE)
            for name in (STATE_FILE, TRACE_FILE):   # made before SQLite and the trace open them
                os.close(private_file(self.file(name)))
            lock = private_file(self.file(LOCK_FILE), os.O_RDWR | os.O_APPEND)
        except OSError as e:
            raise ScenarioError("--data-dir", None, "", f"{path}: {e.strerror}") from None
        self._lock: IO[str] = os.fdopen(lock, "a+")  # held until close
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.seek(0)
            pid = self._lock.read().strip() or "?"
            self._lock.close()
            raise ScenarioError("--data-dir", None, "", f"{self.path} is in use by another podlife up (pid {pid}); "
                                                        "stop it first (podlife down)") from None
        self._lock.seek(0)
        self._lock.truncate()
        self._lock.write(str(os.getpid()))
        self._lock.flush()
        try:
            self.log = open_log(self.path, durable=durable)
        except (StorageError, Exception) as e:  # noqa: BLE001 - sqlite3.DatabaseError: not a database
            self._lock.close()
            raise ScenarioError("--data-dir", None, "", f"{self.path}: cannot use its state.db: {e}") from None

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def stored(self) -> Stored | None:
        get = self.log.get_meta
        version = get("kubernetesVersion")
        if version is None:
            return None
        cluster = self.file(CLUSTER_FILE)
        return Stored(version, int(get("seed") or 0), datetime.fromisoformat(get("startTime") or ""),
                      cluster if os.path.exists(cluster) else None)

    def check(self, stored: Stored, version: str | None, seed: int | None, cluster_file: str | None) -> None:
        """A restart: what the command line names must be what the cluster was made with."""
        def refuse(flag: str, message: str) -> None:
            raise ScenarioError(flag, None, "", f"{message}; {self.path} holds a cluster made with "
                                                f"Kubernetes {stored.version}, seed {stored.seed}"
                                                f"{' from a cluster file' if stored.cluster_file else ''} "
                                                "(leave the flag out, or use another --data-dir)")
        if version is not None and version != stored.version:
            refuse("--kubernetes-version", f"{version} differs from the cluster's {stored.version}")
        if seed is not None and seed != stored.seed:
            refuse("--seed", f"{seed} differs from the cluster's {stored.seed}")
        if cluster_file is not None:
            with open(cluster_file, "rb") as f:
                given = f.read()
            kept = b""
            if stored.cluster_file is not None:
                with open(stored.cluster_file, "rb") as f:
                    kept = f.read()
            if given != kept:
                refuse(cluster_file, "this file differs from the one the cluster was made from")

    def record(self, version: str, seed: int, start_time: datetime, cluster_file: str | None) -> None:
        """A new cluster: remember what it is."""
        if cluster_file is not None:
            dst_fd = private_file(self.file(CLUSTER_FILE), os.O_WRONLY | os.O_TRUNC)
            with open(cluster_file, "rb") as src, os.fdopen(dst_fd, "wb") as dst:
                dst.write(src.read())
        self.log.set_meta({"kubernetesVersion": version, "seed": str(seed), "startTime": start_time.isoformat()})

    def persisted(self) -> Persisted:
        """The log as the cluster is built over it; counts this start."""
        starts = int(self.log.get_meta("starts") or 0)
        self.log.set_meta({"starts": str(starts + 1)})
        resume = self.log.last_revision() > 0
        return Persisted(self.log, resume, now=self.log.now() if resume else 0.0, stream=starts)

    def close(self) -> None:
        self.log.close()
        self._lock.close()

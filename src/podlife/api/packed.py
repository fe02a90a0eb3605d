"""The objects of a kind that a run makes by the hundred thousand and rarely reads again (Events: several per
pod), kept as their compact JSON, compressed.

New objects are kept as JSON until ``YOUNG`` of them have come; then they are sorted by key and compressed in
runs of ``RUN`` (one raw deflate stream per run, the objects separated by newlines, which compact JSON never
holds). Compressing a run at once costs a fifth of compressing its objects one by one and takes half the
space (about 75 bytes an Event instead of 160). Reading an object decodes its run; the runs read last are
kept decoded, so reading in key order (a list, the final report) decodes each run once: the keys of a batch
are consecutive runs, and each batch has one run being read at a time.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, MutableMapping
from functools import partial
from typing import Any

import orjson

Key = tuple[str, str]
Obj = dict[str, Any]

YOUNG = 4096   # objects kept as plain JSON before they are compressed
RUN = 64       # objects per compressed run

# what Events have in common (keys in the recorder's order, frequent values), for the first objects of a run
_ZDICT = (b'Successfully assigned default/ to Started container Created container Pulled Container image '
          b'already present on machine Created pod: Deleted pod: Scaled up replica set  from 0 to Stopping '
          b'container Marking for deletion of Pod Node  status is now: NodeNotReady '
          b'kubelet default-scheduler replicaset-controller deployment-controller node-controller '
          b'Scheduled SuccessfulCreate ScalingReplicaSet Killing TaintManagerEviction Evicted '
          b'{"apiVersion":"v1","kind":"Event","metadata":{"name":"","namespace":"default","uid":"",'
          b'"creationTimestamp":"T00:00:00Z","resourceVersion":"1"},"involvedObject":{"kind":"Pod",'
          b'"namespace":"default","name":"","uid":"","apiVersion":"v1","resourceVersion":"1",'
          b'"fieldPath":"spec.containers{c}"},"reason":"Pulled","message":"","type":"Normal",'
          b'"source":{"component":"kubelet","host":""},"firstTimestamp":"T00:00:00Z",'
          b'"lastTimestamp":"T00:00:00Z","count":1,"reportingComponent":"kubelet","reportingInstance":""}')


# What sorts (namespace, name) keys in their order, three times faster than the tuples: a namespace name is a
# DNS label, so it holds no NUL, and namespace + NUL + name orders as the pair does. str.join bound to NUL makes
# that string in C (a Python function per key cost 60 % more).
key_order: Callable[[Key], str] = partial(str.join, "\0")


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(1, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY, _ZDICT)
    return c.compress(data) + c.flush()


def _inflate(packed: bytes) -> list[bytes]:
    return zlib.decompressobj(-15, zdict=_ZDICT).decompress(packed).split(b"\n")


class PackedObjects(MutableMapping[Key, Obj]):
    """A mapping of keys to JSON objects, stored as above. Reading one decodes a fresh copy (JSON data comes
    back equal, keys in the same order); iteration is in the order keys were first set, as a dict's."""

    def __init__(self) -> None:
        self._at: dict[Key, bytes | int] = {}    # a young object's JSON, or run * RUN + its place in the run
        self._young: list[Key] = []
        self._runs: list[bytes] = []
        self._read: dict[int, list[bytes]] = {}  # runs decoded last, the oldest dropped first

    def encoded(self, key: Key) -> bytes:
        """The object as its compact JSON, for writing it out without decoding it."""
        return self._json(self._at[key])

    def _json(self, at: bytes | int) -> bytes:
        if isinstance(at, bytes):
            return at
        run, place = divmod(at, RUN)
        objs = self._read.get(run)
        if objs is None:
            objs = self._read[run] = _inflate(self._runs[run])
            # one run per batch being read in key order, and a few for reads out of order
            if len(self._read) > len(self._runs) * RUN // YOUNG + 16:
                del self._read[next(iter(self._read))]
        return objs[place]

    def __getitem__(self, key: Key) -> Obj:
        return orjson.loads(self._json(self._at[key]))

    def get(self, key: Key, default: Any = None) -> Any:
        at = self._at.get(key)
        return default if at is None else orjson.loads(self._json(at))

    def __setitem__(self, key: Key, obj: Obj) -> None:
        # orjson's buffer as it is (meta.kept would copy it to one of its size): compressed and let go within
        # YOUNG objects, it costs at most 32 MiB for a while rather than a copy of every object
        self._at[key] = orjson.dumps(obj)
        self._young.append(key)
        if len(self._young) >= YOUNG:
            self._compress()

    def _compress(self) -> None:
        at = self._at
        # a key set twice, or deleted since, is in the list more than once or not in the mapping
        keys = sorted((k for k in dict.fromkeys(self._young) if isinstance(at.get(k), bytes)), key=key_order)
        self._young = []
        for i in range(0, len(keys), RUN):
            part = keys[i:i + RUN]
            run = len(self._runs)
            self._runs.append(_deflate(b"\n".join([at[k] for k in part])))  # type: ignore[misc]
            for place, k in enumerate(part):
                at[k] = run * RUN + place

    def __delitem__(self, key: Key) -> None:
        del self._at[key]

    def __contains__(self, key: object) -> bool:
        return key in self._at

    def __iter__(self) -> Iterator[Key]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

"""The protobuf wire format, read: the fields of a message as they come (the API server's protobuf bodies,
podlife.apiserver.protobuf; a gRPC health answer, podlife.runtime.grpcprobe)."""

from __future__ import annotations

from typing import Any


class Malformed(Exception):
    pass


def varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise Malformed("unexpected EOF")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) in wire order."""
    out = []
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        v: int | bytes
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v, i = buf[i:i + 8], i + 8
        elif wire == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise Malformed(f"illegal wireType {wire} for field {num}")
        if i > len(buf):
            raise Malformed("unexpected EOF")
        out.append((num, wire, v))
    return out

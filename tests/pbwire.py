"""A small protobuf encoder for tests: the bytes client-go would send for an object, written the way the
go-to-protobuf (gogo) Marshal methods of k8s.io/api write them: fields in number order, a non-pointer scalar
or struct always (even at its zero value), a pointer or a list only when set, map entries sorted by key.

``encode(api_version, kind, obj)`` takes the object's JSON form and walks podlife's field table for the
numbers, so it checks what the table says about zero values and JSON names, not the numbers themselves; the
tests that pin numbers build their bodies by hand with ``field``.
"""

from __future__ import annotations

import base64
import json
import struct
from datetime import datetime, timezone
from typing import Any

from podlife.apiserver.openapispec import _varint as varint   # the same base-128 varint
from podlife.apiserver.protobuf import MAGIC, _message_name, _table

_MISSING = object()


def field(num: int, payload: bytes | str) -> bytes:
    """A length-delimited field."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(num << 3 | 2) + varint(len(data)) + data


def number(num: int, value: int) -> bytes:
    """A varint field (int32, int64, bool)."""
    return varint(num << 3) + varint(int(value))


def envelope(api_version: str, kind: str, message: bytes) -> bytes:
    """runtime.Unknown behind the k8s magic: TypeMeta, then the raw message."""
    return MAGIC + field(1, field(1, api_version) + field(2, kind)) + field(2, message)


def _seconds(text: str) -> tuple[int, int]:
    t = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)
    return int(t.timestamp()), t.microsecond * 1000


def _special(typ: str, value: Any) -> bytes:
    if typ in ("meta/v1.Time", "meta/v1.MicroTime"):
        if value is None:
            return b""
        seconds, nanos = _seconds(value)
        return number(1, seconds) + (number(2, nanos) if typ == "meta/v1.MicroTime" else b"")
    if typ == "resource.Quantity":
        return field(1, str(value))
    if typ == "intstr.IntOrString":
        return number(1, 1) + field(3, value) if isinstance(value, str) else number(1, 0) + number(2, value)
    if typ in ("runtime.RawExtension", "meta/v1.FieldsV1", "apiextensions/v1.JSON"):
        return field(1, json.dumps(value, separators=(",", ":")))
    schema = "apiextensions/v1.JSONSchemaProps"
    if typ == "apiextensions/v1.JSONSchemaPropsOrBool":
        return number(1, 1) + field(2, message(schema, value)) if isinstance(value, dict) else number(1, value)
    if typ == "apiextensions/v1.JSONSchemaPropsOrArray":
        if isinstance(value, list):
            return b"".join(field(2, message(schema, v)) for v in value)
        return field(1, message(schema, value))
    if typ == "apiextensions/v1.JSONSchemaPropsOrStringArray":
        if isinstance(value, list):
            return b"".join(field(2, v) for v in value)
        return field(1, message(schema, value))
    raise AssertionError(f"no encoding for {typ}")


def _one(num: int, typ: str, value: Any) -> bytes:
    if typ in _table():
        return field(num, message(typ, value or {}))
    if "." in typ:
        return field(num, _special(typ, value))
    if typ == "string":
        return field(num, value)
    if typ == "bytes":
        return field(num, base64.b64decode(value))
    if typ == "double":
        return varint(num << 3 | 1) + struct.pack("<d", float(value))
    return number(num, value)


def _zero(typ: str) -> Any:
    return {"string": "", "bool": False}.get(typ, 0 if "." not in typ and "/" not in typ else None)


def message(typ: str, obj: dict[str, Any]) -> bytes:
    out = b""
    for num, f in sorted(_table()[typ].items()):
        value = obj if f.inline else obj.get(f.name, _MISSING)
        if f.map:
            for key in sorted(value or {}) if value is not _MISSING else ():
                out += field(num, field(1, key) + _one(2, f.type, value[key]))
        elif f.repeated:
            for item in value or [] if value is not _MISSING else ():
                out += _one(num, f.type, item)
        elif value is _MISSING or value is None:
            if not f.pointer and f.type != "bytes":   # a struct or scalar held by value is written at its zero
                out += _one(num, f.type, {} if f.type in _table() else _zero(f.type))
        else:
            out += _one(num, f.type, value)
    return out


def encode(api_version: str, kind: str, obj: dict[str, Any]) -> bytes:
    name = _message_name(api_version, kind)
    assert name is not None, (api_version, kind)
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return envelope(api_version, kind, message(name, body))

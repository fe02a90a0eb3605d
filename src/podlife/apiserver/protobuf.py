"""Kubernetes protobuf request bodies (application/vnd.kubernetes.protobuf), decoded into the dict the JSON
body of the same request would give.

kubectl 1.32 and later send ``create deployment|namespace|configmap|secret|job|cronjob|service|
serviceaccount|role|…``, ``autoscale``, ``debug --copy-to`` and ``auth can-i`` bodies as protobuf and do not
retry with JSON after a 415, so the server has to read them.

Public API:

- ``PROTOBUF = "application/vnd.kubernetes.protobuf"``
- ``decode(body: bytes) -> dict``: the object in the envelope (k8s.io/apimachinery runtime/serializer/protobuf:
  the magic ``k8s\\x00`` then a runtime.Unknown holding apiVersion, kind and the typed message). Errors are
  ``ApiError``: 400 for a body that is not such an envelope, 415 (the JSON and YAML media types only) for a
  kind whose fields podlife does not know.
- ``supported(api_version, kind) -> bool``.
- ``dropped_warnings() -> list[str]``: the fields the last ``decode`` in this context skipped because the table
  does not know their numbers (newer than the table), as Warning texts.

The field table (``protobuf_fields.txt``) lists each message's field numbers with the JSON name, type and the
Go field's pointer and omitempty flags, so that zero values come out as encoding/json writes them. Special
messages have their JSON forms: Time (RFC 3339, null when zero), MicroTime, Duration ("1m30s"), Quantity and
IntOrString (the value), RawExtension and FieldsV1 (the embedded JSON), bytes (base64).
"""

from __future__ import annotations

import base64
import json
import struct
from contextvars import ContextVar
from datetime import datetime, timezone
from functools import lru_cache
from importlib import resources
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.protowire import Malformed as _Malformed, fields as _fields, varint as _varint

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# protobuf package of each API group-version the table covers
# (custom resources have none: apiextensions-apiserver serves them as JSON and YAML only)
_GROUPS = {"": "core", "apps": "apps", "batch": "batch", "autoscaling": "autoscaling", "policy": "policy",
           "authorization.k8s.io": "authorization", "authentication.k8s.io": "authentication",
           "rbac.authorization.k8s.io": "rbac", "scheduling.k8s.io": "scheduling", "networking.k8s.io": "networking",
           "certificates.k8s.io": "certificates", "events.k8s.io": "events", "node.k8s.io": "node",
           "admissionregistration.k8s.io": "admissionregistration", "apiextensions.k8s.io": "apiextensions",
           "apiregistration.k8s.io": "apiregistration", "coordination.k8s.io": "coordination",
           "discovery.k8s.io": "discovery", "flowcontrol.apiserver.k8s.io": "flowcontrol",
           "resource.k8s.io": "resource", "storage.k8s.io": "storage", "storagemigration.k8s.io": "storagemigration"}


class _Field:
    __slots__ = ("name", "type", "repeated", "map", "inline", "pointer", "always")

    def __init__(self, spec: str) -> None:
        parts = spec.split(":")
        self.name, typ = parts[0], parts[1]
        flags = parts[2] if len(parts) > 2 else ""
        self.repeated = typ.endswith("[]")
        typ = typ[:-2] if self.repeated else typ
        self.map = typ.startswith("{")
        self.type = typ[1:-1] if self.map else typ
        self.inline, self.pointer, self.always = "^" in flags, "*" in flags, "!" in flags


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[int, _Field]]:
    text = resources.files("podlife.apiserver").joinpath("protobuf_fields.txt").read_text()
    out: dict[str, dict[int, _Field]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name, *fields = line.split()
        out[name] = {int(f.split(":", 1)[0]): _Field(f.split(":", 1)[1]) for f in fields}
    return out


def _message_name(api_version: str, kind: str) -> str | None:
    group, _, version = api_version.rpartition("/")
    if kind == "DeleteOptions" and version == "v1":
        return "meta/v1.DeleteOptions"   # metav1.AddToGroupVersion registers the options in every group-version
    pkg = _GROUPS.get(group)
    return f"{pkg}/{version}.{kind}" if pkg else None


def supported(api_version: str, kind: str) -> bool:
    name = _message_name(api_version, kind)
    return name is not None and name in _table()


# ------------------------------------------------------------------------------------------------ wire format

def _signed(v: int, bits: int) -> int:
    v &= (1 << 64) - 1
    v = v - (1 << 64) if v >= 1 << 63 else v
    return v if bits == 64 else ((v + (1 << 31)) % (1 << 32)) - (1 << 31)


def _scalar(typ: str, wire: int, v: Any) -> Any:
    if typ == "string":
        return bytes(v).decode("utf-8", errors="replace")
    if typ == "bytes":
        return base64.b64encode(bytes(v)).decode()
    if typ == "bool":
        return bool(v)
    if typ in ("int32", "int64"):
        return _signed(v, 32 if typ == "int32" else 64)
    if typ in ("uint32", "uint64"):
        return v
    if typ == "double":   # encoding/json writes an integral float64 without a fraction ("maximum": 10)
        x = struct.unpack("<d", v)[0]
        return int(x) if x.is_integer() and abs(x) < 1e21 else x
    if typ == "float":
        return struct.unpack("<f", v)[0]
    raise _Malformed(f"unknown type {typ}")


def _packed(typ: str, wire: int, v: Any) -> list[Any]:
    """A repeated varint field may come packed (one length-delimited run)."""
    if wire == 2 and typ in ("int32", "int64", "bool", "uint32", "uint64"):
        out, i = [], 0
        while i < len(v):
            x, i = _varint(v, i)
            out.append(_scalar(typ, 0, x))
        return out
    return [_scalar(typ, wire, v)]


# ------------------------------------------------------------------------------------------------ messages

def _special(typ: str, buf: bytes) -> Any:
    f = {num: v for num, _, v in _fields(buf)}
    if typ in ("meta/v1.Time", "meta/v1.MicroTime"):
        seconds, nanos = _signed(f.get(1, 0), 64), _signed(f.get(2, 0), 32)
        if not seconds and not nanos:
            return None
        t = datetime.fromtimestamp(seconds, tz=timezone.utc)
        # RFC 3339 with a four-digit year (time.Time{}.Add(2*time.Second) is 0001-01-01T00:00:02Z, as e2e's Lease
        # test sends it); strftime's %Y does not pad
        text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
        return text + "Z" if typ == "meta/v1.Time" else text + f".{nanos // 1000:06d}Z"
    if typ == "meta/v1.Duration":
        return go_duration(_signed(f.get(1, 0), 64))
    if typ == "resource.Quantity":
        return bytes(f.get(1, b"")).decode()
    if typ == "intstr.IntOrString":
        if f.get(1, 0) == 1:
            return bytes(f.get(3, b"")).decode()
        return _signed(f.get(2, 0), 32)
    # runtime.RawExtension, meta/v1.FieldsV1: the JSON they hold
    raw = bytes(f.get(1, b""))
    if not raw:
        return None if typ == "runtime.RawExtension" else {}
    try:
        return json.loads(raw)
    except ValueError:
        raise _Malformed(f"{typ} does not hold JSON") from None


def _schema_union(typ: str, buf: bytes) -> Any:
    """apiextensions/v1 JSONSchemaProps unions, as their MarshalJSON writes them
    (staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/marshal.go)."""
    schema: dict[str, Any] | None = None
    others: list[Any] = []
    allows = False
    for num, wire, raw in _fields(buf):
        if typ == "apiextensions/v1.JSON":
            return json.loads(bytes(raw)) if num == 1 and raw else None
        if typ == "apiextensions/v1.JSONSchemaPropsOrBool":
            if num == 1:
                allows = bool(raw)
            elif num == 2:
                schema = _message("apiextensions/v1.JSONSchemaProps", bytes(raw))
        elif num == 1:
            schema = _message("apiextensions/v1.JSONSchemaProps", bytes(raw))
        elif num == 2:   # OrArray: more schemas; OrStringArray: property names
            others.append(_message("apiextensions/v1.JSONSchemaProps", bytes(raw))
                          if typ == "apiextensions/v1.JSONSchemaPropsOrArray" else _scalar("string", wire, raw))
    if typ == "apiextensions/v1.JSON":
        return None
    if typ == "apiextensions/v1.JSONSchemaPropsOrBool":
        return schema if schema is not None else allows
    return others if others else schema


_SPECIAL = frozenset({"meta/v1.Time", "meta/v1.MicroTime", "meta/v1.Duration", "resource.Quantity",
                      "intstr.IntOrString", "runtime.RawExtension", "meta/v1.FieldsV1"})
_UNIONS = frozenset({"apiextensions/v1.JSON", "apiextensions/v1.JSONSchemaPropsOrArray",
                     "apiextensions/v1.JSONSchemaPropsOrBool", "apiextensions/v1.JSONSchemaPropsOrStringArray"})


def _value(typ: str, wire: int, v: Any) -> Any:
    if typ in _SPECIAL:
        return _special(typ, bytes(v))
    if typ in _UNIONS:
        return _schema_union(typ, bytes(v))
    if typ in _table():
        return _message(typ, bytes(v))
    return _scalar(typ, wire, v)


def _zero(f: _Field) -> Any:
    if f.repeated or f.map:
        return None
    if f.type in _table():
        return _message(f.type, b"")   # a struct's own fields without omitempty are written at their zero
    return {"string": "", "bool": False, "bytes": None}.get(f.type, 0 if f.type not in _SPECIAL else None)


class _Structs:
    """Go structs held by value: encoding/json writes them even when empty (a zero Time as null)."""

    def __contains__(self, typ: object) -> bool:
        return typ in _table() or typ in ("meta/v1.Time", "meta/v1.MicroTime")


_STRUCTS = _Structs()


def _message(typ: str, buf: bytes) -> dict[str, Any]:
    spec = _table()[typ]
    values: dict[int, Any] = {}
    for num, wire, raw in _fields(buf):
        f = spec.get(num)
        if f is None:
            # a field newer than the table: skipped, as a server of the table's version would (gogo's Unmarshal
            # skips unknown fields), and said so
            _DROPPED.get([]).append(f"{typ}, field {num}")
            continue
        if f.map:
            entry = {n: (w, x) for n, w, x in _fields(bytes(raw))}
            key = _scalar("string", 2, entry[1][1]) if 1 in entry else ""
            w, x = entry.get(2, (2, b""))
            values.setdefault(num, {})[key] = _value(f.type, w, x)
        elif f.repeated:
            items = [_value(f.type, wire, raw)] if f.type in _table() or f.type in _SPECIAL or f.type in _UNIONS \
                else _packed(f.type, wire, raw)
            values.setdefault(num, []).extend(items)
        else:
            values[num] = _value(f.type, wire, raw)
    out: dict[str, Any] = {}
    for num, f in spec.items():   # the table's order is the Go struct's
        if num in values:
            v = values[num]
        elif f.always or (not f.pointer and not f.repeated and not f.map and f.type in _STRUCTS):
            v = None if f.pointer else _zero(f)   # encoding/json writes these whether set or not
        else:
            continue
        if f.inline:
            out.update(v or {})
        elif f.pointer or f.always or not _omitted(f, v):
            out[f.name] = v
    return out


def _omitted(f: _Field, v: Any) -> bool:
    """encoding/json omitempty: zero scalars, empty lists and maps; never a struct."""
    if f.type in _table() and not f.repeated and not f.map:
        return False
    if f.type in ("meta/v1.Time", "meta/v1.MicroTime") and not f.repeated:
        return False
    if isinstance(v, bool):
        return v is False
    return v in ("", 0, None) or v == [] or v == {}


def go_duration(ns: int) -> str:
    """time.Duration.String: "1h2m3.5s", "300ms", "0s"."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                whole, frac = divmod(ns, size)
                digits = f"{frac:0{len(str(size)) - 1}d}".rstrip("0") if size > 1 else ""
                return f"{sign}{whole}{'.' + digits if digits else ''}{unit}"
    seconds, frac = divmod(ns, 1_000_000_000)
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    tail = f"{frac:09d}".rstrip("0")
    text = f"{s}{'.' + tail if tail else ''}s"
    if h or m:
        text = f"{m}m{text}"
    if h:
        text = f"{h}h{text}"
    return sign + text


# ------------------------------------------------------------------------------------------------ envelope

# the fields of the body decode() last read (in this request's task) that the table does not know
_DROPPED: ContextVar[list[str]] = ContextVar("protobuf_dropped")


def dropped_warnings() -> list[str]:
    """Warning texts for the fields the last decode() in this context skipped."""
    return [f"{where}: not known to podlife's protobuf table; the value was dropped (send JSON to keep it)"
            for where in _DROPPED.get([])]


def decode(body: bytes) -> dict[str, Any]:
    _DROPPED.set([])
    if not body.startswith(MAGIC):
        raise ApiError(400, "BadRequest", "provided object is not a protobuf message with the k8s magic prefix")
    try:
        unknown = {num: v for num, _, v in _fields(body[len(MAGIC):])}
        type_meta = {num: bytes(v).decode() for num, _, v in _fields(bytes(unknown.get(1, b"")))}
    except _Malformed as e:
        raise ApiError(400, "BadRequest", f"the object provided is unrecognized: {e}") from None
    api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
    name = _message_name(api_version, kind)
    if name is None or name not in _table():
        # what a server answers for a type with no protobuf serializer (negotiation.NewUnsupportedMediaTypeError)
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                                                    "media types include: application/json, application/yaml")
    try:
        obj = _message(name, bytes(unknown.get(2, b"")))
    except (_Malformed, KeyError, struct.error, ValueError) as e:
        version = api_version.rpartition("/")[2]
        raise ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: '
                                          f"{e}") from None
    return {"kind": kind, "apiVersion": api_version, **obj}

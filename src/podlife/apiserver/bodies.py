"""Request bodies: size limit, media types and decoding, with the API server's error wording
(staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go limitedReadBody, create.go transformDecodeError)."""

from __future__ import annotations

from typing import Any

import orjson
import yaml

from podlife.api import decoding
from podlife.api.duplicates import Body
from podlife.api.errors import ApiError
from podlife.apiserver.status import bad_request, unsupported_media

MAX_BODY = 3 * 1024 * 1024   # the apiserver's MaxRequestBodyBytes default
JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
WRITE_TYPES = [JSON, YAML, PROTOBUF]


def _summary(data: bytes, n: int = 30) -> str:
    """handlers/rest.go summarizeData: a JSON object's start as text, anything else in hex."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        return data[:n].decode("utf-8", "replace") + (" ..." if len(data) > n else "")
    return data[:n].hex() + (" ..." if len(data) > n else "")


def _go_json_error(data: bytes, err: Exception) -> str:
    """encoding/json's words for the first problem of a body that is not JSON."""
    text = data.decode("utf-8", "replace").lstrip()
    if not text:
        return "unexpected end of JSON input"
    c = text[0]
    if c not in '{["-0123456789tfn':
        return f"invalid character {c!r} looking for beginning of value"
    return "unexpected end of JSON input" if "unexpected end" in str(err).lower() else str(err).split(":")[0]


def media_type(content_type: str | None) -> str:
    return (content_type or JSON).split(";")[0].strip().lower() or JSON


def decode(data: bytes, content_type: str | None, expected_kind: str, body: Body | None = None,
           custom: bool = False) -> Any:
    """A create or update body as a dict, or ApiError 400 / 415; ``body`` receives what strict decoding needs
    (podlife.api.duplicates.Body). A custom resource takes JSON and YAML only (apiextensions-apiserver's
    crdHandler serializers), whatever the protobuf body holds."""
    mt = media_type(content_type)
    if mt == PROTOBUF and custom:
        raise unsupported_media([JSON, YAML])
    if mt == PROTOBUF:
        from podlife.apiserver import protobuf

        return protobuf.decode(data)
    if mt not in (JSON, YAML, "*/*"):
        raise unsupported_media(WRITE_TYPES)
    unrecognized = f"the object provided is unrecognized (must be of type {expected_kind})"
    try:
        if body is not None:
            body.data, body.yaml = data, mt == YAML
        obj = decoding.parse_json(data) if mt != YAML else decoding.parse_yaml(
            data, body.yaml_lines if body is not None else None)
    except decoding.DecodeError as e:
        if mt == YAML:   # sigs.k8s.io/yaml YAMLToJSON, in the yaml serializer before anything else
            raise bad_request(f"{unrecognized}: error converting YAML to JSON: {e} ({_summary(data)})") from None
        raise bad_request(f"{unrecognized}: couldn't get version/kind; json parse error: {e} "
                          f"({_summary(data)})") from None
    except (orjson.JSONDecodeError, yaml.YAMLError) as e:
        why = _go_json_error(data, e) if mt != YAML else str(e).splitlines()[0]
        raise bad_request(f"{unrecognized}: couldn't get version/kind; json parse error: {why} "
                          f"({_summary(data)})") from None
    if not isinstance(obj, dict):
        raise bad_request(f"the object provided is unrecognized (must be of type {expected_kind}): couldn't get "
                          f"version/kind; json parse error: json: cannot unmarshal {_go_type(obj)} into Go value "
                          f"of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                          f"\"json:\\\"kind,omitempty\\\"\" }} ({_summary(data)})")
    return obj


def _go_type(v: Any) -> str:
    return {list: "array", str: "string", bool: "bool", int: "number", float: "number"}.get(type(v), "null") \
        if v is not None else "null"


def options(data: bytes, kind: str = "DeleteOptions", content_type: str | None = None) -> dict[str, Any]:
    """An options body (DeleteOptions, Eviction): JSON, protobuf (client-go's default for built-in types, e.g.
    e2e.test deleting a namespace) or nothing."""
    if not data.strip():
        return {}
    if media_type(content_type) == PROTOBUF:
        from podlife.apiserver import protobuf

        return protobuf.decode(data)
    try:
        obj = decoding.parse_json(data)
    except decoding.DecodeError as e:
        raise bad_request(f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
                          f"json parse error: {e} ({_summary(data)})") from None
    except orjson.JSONDecodeError as e:
        raise bad_request(f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
                          f"json parse error: {_go_json_error(data, e)} ({_summary(data)})") from None
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", f"the object provided is unrecognized (must be of type {kind})")
    return obj


def grace_period(value: Any) -> int | None:
    """DeleteOptions.gracePeriodSeconds, an *int64: a number (or a query parameter's digits) that fits."""
    if value is None:
        return None
    try:
        if isinstance(value, (bool, float)):
            raise ValueError(value)
        grace = int(value)
    except (TypeError, ValueError):
        raise bad_request(f"invalid gracePeriodSeconds: {value!r}") from None
    if not -2 ** 63 <= grace < 2 ** 63:
        raise bad_request(f"invalid gracePeriodSeconds: {value!r} does not fit in an int64")
    return grace

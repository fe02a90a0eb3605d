"""Helpers the group validators share: field errors with upstream wording, and the small checks
(k8s.io/apimachinery/pkg/util/validation, pkg/apis/core/validation) several groups call."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Mapping

from podlife.api import names, quantity
from podlife.api.names import config_key_errors
from podlife.api.errors import FieldError
from podlife.api.validation import (
    DUPLICATE,
    Errs,
    _d,
    _forbidden,
    _int,
    _invalid,
    _ip_errors as ip_errors,
    _l,
    _msgs,
    _not_supported,
    _required,
    _s,
    validate_object_meta,
)

__all__ = ["DUPLICATE", "Errs", "FieldError", "_d", "_forbidden", "_int", "_invalid", "_l", "_msgs",
           "_not_supported", "_required", "_s", "meta", "config_key_errors", "base64_errors", "path_segment_name",
           "quantity_errors", "ip_errors", "cidr_errors", "port_number_errors", "too_long"]


def meta(obj: Mapping, namespaced: bool, name_fn=names.name_is_dns_subdomain) -> Errs:
    return validate_object_meta(obj.get("metadata"), namespaced=namespaced, name_fn=name_fn)


def base64_errors(value: object) -> str | None:
    """A []byte field's JSON form is base64 (encoding/json: "illegal base64 data at input byte N")."""
    if not isinstance(value, str):
        return None
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        bad = next((i for i, ch in enumerate(value) if not (ch.isalnum() or ch in "+/=")), len(value) - len(value) % 4)
        return f"illegal base64 data at input byte {bad}"
    return None


def path_segment_name(name: str, prefix: bool = False) -> list[str]:
    """ValidatePathSegmentName (RBAC objects): anything that can be a URL path segment."""
    out = []
    if not prefix and name in (".", ".."):
        out.append(f"may not be '{name}'")
    for bad in ("/", "%"):
        if bad in name:
            out.append(f"may not contain '{bad}'")
    return out


def quantity_errors(value: object, path: str, *, positive: bool = False) -> Errs:
    """A quantity that parses and is not negative (ValidateResourceQuantityValue), or > 0."""
    try:
        q = quantity.parse(value)  # type: ignore[arg-type]
    except quantity.QuantityError as e:
        return [_invalid(path, value, str(e))]
    if positive and q.value <= 0:
        return [_invalid(path, str(q), "must be greater than zero")]
    if q.value < 0:
        return [_invalid(path, str(q), "must be greater than or equal to 0")]
    return []


def cidr_errors(value: object, path: str) -> Errs:
    try:
        ipaddress.ip_network(_s(value), strict=False)
        if "/" not in _s(value):
            raise ValueError
    except ValueError:
        return [_invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
    return []


def port_number_errors(value: object, path: str) -> Errs:
    return _msgs(path, value, names.port_num_errors(_int(value)))


def too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, "Too long", f"must have at most {limit} bytes")

"""metav1.Status bodies of failed requests (staging/src/k8s.io/apimachinery/pkg/api/errors)."""

from __future__ import annotations

import unicodedata
from typing import Any

from podlife.api.errors import ApiError, FieldError

# field error type → metav1.CauseType (staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go)
CAUSE_TYPES = {"Required value": "FieldValueRequired", "Invalid value": "FieldValueInvalid",
               "Unsupported value": "FieldValueNotSupported", "Duplicate value": "FieldValueDuplicate",
               "Forbidden": "FieldValueForbidden", "Not found": "FieldValueNotFound",
               "Too long": "FieldValueTooLong", "Too many": "FieldValueTooMany"}

# metav1.CauseType values of causes built directly (v1.NamespaceTerminatingCause: the lifecycle admission's)
# causes made as such, not from field errors: managedfields/internal/conflict.go, namespace lifecycle admission
# and policy/v1 DisruptionBudgetCause (pod eviction's 429)
RAW_CAUSES = frozenset(("FieldManagerConflict", "NamespaceTerminating", "DisruptionBudget"))


def status_body(err: ApiError, *, name: str | None = None, group: str | None = None,
                kind: str | None = None) -> dict[str, Any]:
    # metav1.Status's field order: TypeMeta, metadata, status, message, reason, details, code
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": err.message, "reason": err.reason}
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    if err.causes:
        details["causes"] = [_cause(c) for c in err.causes]
    retry = getattr(err, "retry_after", None)
    if retry is not None:
        details["retryAfterSeconds"] = retry
    if details or getattr(err, "details_always", False):
        body["details"] = details
    body["code"] = err.code
    if not err.reason:
        body.pop("reason")
    return body


def _cause(c: FieldError) -> dict[str, Any]:
    if c.type in RAW_CAUSES:   # a cause made as such, not from a field error (its message is the detail)
        raw = {"reason": c.type, "message": c.detail}
        if c.path:   # StatusCause.Field is omitempty
            raw["field"] = c.path
        return raw
    return {"reason": CAUSE_TYPES.get(c.type, "FieldValueInvalid"),
            "message": str(c)[len(c.path) + 2:] if str(c).startswith(c.path + ": ") else str(c), "field": c.path}


def success(name: str, group: str, kind: str, uid: str | None) -> dict[str, Any]:
    """What a DELETE of a kind that does not return the deleted object answers (registry/store.go
    finalizeDelete)."""
    details: dict[str, Any] = {"name": name, "group": group, "kind": kind}
    if uid:
        details["uid"] = uid
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def not_found_path() -> ApiError:
    """An unknown path: the NotFound of the mux (no details), as kubectl reports a missing resource type."""
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def method_not_allowed(verb: str, what: str) -> ApiError:
    return ApiError(405, "MethodNotAllowed", f"{verb} is not supported on resources of kind \"{what}\"")


def unsupported_media(accepted: list[str]) -> ApiError:
    """handlers/patch.go and rest/create: a body of an unknown Content-Type."""
    return ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                                                 f"media types include: {', '.join(accepted)}")


def too_large(limit: int) -> ApiError:
    """handlers/rest.go limitedReadBody: a body over the server's limit (3 MiB by default)."""
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def warning_header(text: str) -> str | None:
    """A Warning header value, or None for a text with control characters, which the API server drops
    (staging/src/k8s.io/apimachinery/pkg/util/net/http.go NewWarningHeader; endpoints/filters/warning.go)."""
    if any(unicodedata.category(c) == "Cc" for c in text):
        return None
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

"""API errors, shaped like metav1.Status, and field errors with their paths."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    """One validation failure at a field path, worded as k8s.io/apimachinery/pkg/util/validation/field does."""

    path: str  # e.g. spec.containers[0].image
    type: str  # Required value | Invalid value | Unsupported value | Duplicate value | Forbidden | Not found
    detail: str = ""
    value: object = None

    def __str__(self) -> str:
        if self.type == "Required value" or self.value is None:
            head = f"{self.path}: {self.type}"
        else:
            v = f'"{self.value}"' if isinstance(self.value, str) else f"{self.value}"
            head = f"{self.path}: {self.type}: {v}"
        return f"{head}: {self.detail}" if self.detail else head


class ApiError(Exception):
    """A failed API call: HTTP code, StatusReason and message, as the real API server answers."""

    causes_only = False   # details carry only the causes, no name/group/kind (errors.NewApplyConflict)

    def __init__(self, code: int, reason: str, message: str, causes: list[FieldError] | None = None,
                 name: str | None = None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.causes = causes or []
        self.name = name   # the object's, for the Status's details when the request path does not name it


def not_found(resource: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{resource} "{name}" not found', name=name)


def already_exists(resource: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{resource} "{name}" already exists', name=name)


def conflict(resource: str, name: str, why: str) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {resource} "{name}": {why}', name=name)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def invalid(kind: str, name: str, causes: list[FieldError]) -> ApiError:
    body = "; ".join(str(c) for c in causes)
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {body}', causes, name=name or None)


def forbidden(resource: str, name: str, why: str) -> ApiError:
    """apimachinery errors.NewForbidden (what admission.NewForbidden returns)."""
    return ApiError(403, "Forbidden", f'{resource} "{name}" is forbidden: {why}')

"""Events, core/v1 and events.k8s.io/v1 (pkg/apis/core/validation/events.go: ValidateEventCreate)."""

from __future__ import annotations

from collections.abc import Mapping

from podlife.api import names
from podlife.api.validation.common import Errs, as_dict, as_int, as_str, invalid, invalid_each, required
from podlife.api.validation.objectmeta import validate_object_meta


def validate_event(obj: Mapping) -> Errs:
    """ValidateEventCreate (core/validation/events.go): legacyValidateEvent for every Event, and the strict
    checks of events.k8s.io/v1 for one written in that version.

    Upstream does not require ``involvedObject`` (nor even metadata.name) for
    v1 Events; it checks that the involved object's namespace agrees with the
    event's, and the reporting fields of new-style events (eventTime set).
    """
    if obj.get("apiVersion") in ("events.k8s.io/v1", "events.k8s.io/v1beta1"):
        from podlife.api.conversion import from_events_v1

        # both share core.Event's internal field names (regarding → involvedObject, note → message, ...)
        core = from_events_v1(dict(obj))
        errs = _legacy_validate_event(core)
        return errs + (_strict_event_errors(core) if obj["apiVersion"] == "events.k8s.io/v1" else [])
    return _legacy_validate_event(obj)


def _strict_event_errors(event: Mapping) -> Errs:
    """The checks ValidateEventCreate adds for events.k8s.io/v1 and newer."""
    errs = validate_object_meta(event.get("metadata"), namespaced=True, name_fn=names.name_is_dns_subdomain)
    series = event.get("series")
    if series is not None:  # validateV1EventSeries
        series = as_dict(series)
        if as_int(series.get("count")) < 2:
            errs.append(invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            errs.append(required("series.lastObservedTime"))
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {as_str(event.get('type'))}"))
    for key in ("firstTimestamp", "lastTimestamp"):
        if event.get(key):
            errs.append(invalid(key, "", "needs to be unset"))
    if as_int(event.get("count")):
        errs.append(invalid("count", "", "needs to be unset"))
    source = as_dict(event.get("source"))
    if source.get("component") or source.get("host"):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


def _legacy_validate_event(obj: Mapping) -> Errs:
    """legacyValidateEvent, on an Event in core/v1 field names."""
    meta, involved = as_dict(obj.get("metadata")), as_dict(obj.get("involvedObject"))
    ns, ins = meta.get("namespace") or "", involved.get("namespace") or ""
    errs: Errs = []
    mismatch = invalid("involvedObject.namespace", ins, "does not match event.namespace")
    if not obj.get("eventTime"):
        if (not ins and ns not in ("", "default")) or (ins and ns != ins):
            errs.append(mismatch)
    else:
        if not ins and ns not in ("default", "kube-system"):
            errs.append(mismatch)
        errs += _new_style_event_errors(obj)
    return errs + invalid_each("namespace", ns, names.dns1123_subdomain_errors(ns))


def _new_style_event_errors(obj: Mapping) -> Errs:
    errs: Errs = []
    controller = obj.get("reportingComponent") or ""  # v1 JSON name of ReportingController
    if not controller:
        errs.append(required("reportingController"))
    errs += invalid_each("reportingController", controller, names.qualified_name_errors(controller))
    for key, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
        value = obj.get(key) or ""
        if not value:
            errs.append(required(key))
        if len(value) > limit:
            errs.append(invalid(key, "", f"can have at most {limit} characters"))
    if len(obj.get("message") or "") > 1024:
        errs.append(invalid("message", "", "can have at most 1024 characters"))
    return errs

"""Field selectors (staging/src/k8s.io/apimachinery/pkg/fields): ``a=b``, ``a==b``, ``a!=b``, comma-separated,
on the fields each resource supports (its registry's GetAttrs / the conversion funcs' field label
conversions: metadata.name and metadata.namespace everywhere, a few more per kind)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podlife.api.errors import ApiError
from podlife.api.meta import Obj


def _get(path: str, zero: str = "") -> Callable[[Obj], str]:
    keys = path.split(".")

    def read(o: Obj) -> str:
        cur: Any = o
        for k in keys:
            cur = cur.get(k) if isinstance(cur, dict) else None
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return zero if cur is None else str(cur)
    return read


_COMMON = ("metadata.name", "metadata.namespace")
SUPPORTED: dict[str, tuple[str, ...]] = {
    # pkg/apis/core/v1/conversion.go AddFieldLabelConversionsForPod
    "Pod": _COMMON + ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
                      "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"),
    "Node": _COMMON + ("spec.unschedulable",),
    "Namespace": _COMMON + ("status.phase",),
    "Secret": _COMMON + ("type",),
    "Event": _COMMON + ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                        "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                        "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"),
    "ReplicaSet": _COMMON + ("status.replicas",),
    # pkg/registry/core/replicationcontroller/strategy.go ControllerToSelectableFields
    "ReplicationController": _COMMON + ("status.replicas",),
    "Job": _COMMON + ("status.successful",),
    "PersistentVolumeClaim": _COMMON,
    # pkg/registry/certificates/certificates/strategy.go SelectableFields
    "CertificateSigningRequest": _COMMON + ("spec.signerName",),
}
# pkg/apis/events/v1/conversion.go (and v1beta1) AddFieldLabelConversionsForEvent: events.k8s.io names its
# selectable fields after its own fields, each mapped onto the core field set ToSelectableFields builds
_EVENTS_K8S_IO = {"regarding." + f: "involvedObject." + f
                  for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")}
_EVENTS_K8S_IO.update({"reportingController": "reportingComponent", "reason": "reason", "type": "type",
                       "metadata.namespace": "metadata.namespace", "metadata.name": "metadata.name"})
_BY_GROUP: dict[tuple[str, str], dict[str, str]] = {("events.k8s.io", "Event"): _EVENTS_K8S_IO}
_ALIASES = {("Event", "source"): "source.component", ("Job", "status.successful"): "status.succeeded",
            ("Pod", "status.podIPs"): "status.podIP"}
# The selectable field sets are built from the internal objects' Go fields, so an unset bool or integer reads
# as its zero value: pkg/registry/core/node/strategy.go NodeToSelectableFields (fmt.Sprint of
# spec.unschedulable), pkg/registry/core/pod/strategy.go PodToSelectableFields (hostNetwork "false" without a
# security context), pkg/registry/apps/replicaset and core/replicationcontroller (strconv.Itoa of status.replicas),
# pkg/registry/batch/job (strconv.Itoa of status.succeeded). Every other supported field is a string, whose zero
# value is "".
_ZERO = {("Node", "spec.unschedulable"): "false", ("Pod", "spec.hostNetwork"): "false",
         ("ReplicaSet", "status.replicas"): "0", ("ReplicationController", "status.replicas"): "0",
         ("Job", "status.succeeded"): "0"}




def _event_source(o: Obj) -> str:
    """pkg/registry/core/event/strategy.go ToSelectableFields: "source" is source.component, or the reporting
    controller when that is empty (events written through events.k8s.io/v1 carry no deprecatedSource)."""
    return _get("source.component")(o) or _get("reportingComponent")(o)


_READERS: dict[tuple[str, str], Callable[[Obj], str]] = {("Event", "source.component"): _event_source}


class FieldSelector:
    def __init__(self, kind: str, text: str, group: str = "") -> None:
        self.reqs: list[tuple[Callable[[Obj], str], bool, str]] = []   # (read, equal?, value)
        self.equal: dict[str, str] = {}   # field → the value it must equal (what an index can answer)
        converted = _BY_GROUP.get((group, kind))
        allowed = tuple(converted) if converted is not None else SUPPORTED.get(kind, _COMMON)
        for part in (p.strip() for p in text.split(",") if p.strip()):
            if "!=" in part:
                field, value, eq = *part.split("!=", 1), False
            elif "==" in part:
                field, value, eq = *part.split("==", 1), True
            elif "=" in part:
                field, value, eq = *part.split("=", 1), True
            else:
                raise ApiError(400, "BadRequest", f"invalid field selector: {part!r}: expected an operator")
            field = field.strip()
            if field not in allowed:
                raise ApiError(400, "BadRequest", f'field label not supported: {field}')
            if converted is not None:
                field = converted[field]   # the group's label, as the core field set names it
            path = _ALIASES.get((kind, field), field)
            read = _READERS.get((kind, path)) or _get(path, _ZERO.get((kind, path), ""))
            self.reqs.append((read, eq, value.strip()))
            if eq:
                self.equal[path] = value.strip()

    def matches(self, obj: Obj) -> bool:
        return all((read(obj) == value) == eq for read, eq, value in self.reqs)

    def __bool__(self) -> bool:
        return bool(self.reqs)

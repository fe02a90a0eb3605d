"""Faults: the fault types with their fields, and one fault checked (an action's, or ``podlife fault``'s)."""

from __future__ import annotations

from typing import Any

from podlife.cluster.faults import FAULTS
from podlife.scenario.fieldcheck import DNS_LABEL, Check, is_subdomain
from podlife.scenario.model import Fault
from podlife.scenario.yamlread import Raw


def node_list(nodes: list[str]) -> str:
    if not nodes:
        return "it has no nodes"
    shown = ", ".join(nodes[:10])
    return f"nodes: {shown}, … ({len(nodes)} in all)" if len(nodes) > 10 else f"nodes: {shown}"


def parse_fault(ck: Check, value: Any, path: str, nodes: list[str]) -> Fault:
    spec = ck.mapping(value, path, optional=False)
    types = tuple(FAULTS)   # the one table of fault kinds (podlife.cluster.faults)
    ftype = ck.one_of(ck.required(spec, "type", path, f"a fault type, one of {', '.join(types)}"),
                      f"{path}.type", types, "fault type")
    required, optional = FAULTS[ftype].required, FAULTS[ftype].optional
    ck.known(spec, path, ("type",) + required + optional + ("for",))
    what = {"node": "a node name", "pod": "namespace/name or name", "container": "a container name",
            "image": "an image reference", "value": "a quantity, e.g. 30Gi"}
    for key in required:
        ck.required(spec, key, path, f"{what[key]} (a {ftype} fault needs {', '.join(required)})")
    fault = Fault(type=ftype, source=ck.source(path))
    if spec.get("node") is not None:
        fault.node = ck.string(spec["node"], f"{path}.node", "a node name")
        if fault.node not in nodes:
            raise ck.error(f"{path}.node", f'"{fault.node}" is not a node of this scenario; expected one of the '
                                           f"{node_list(nodes)}")
    if spec.get("pod") is not None:
        fault.pod = _pod_ref(ck, spec["pod"], f"{path}.pod")
    if spec.get("container") is not None:
        fault.container = ck.dns_label(spec["container"], f"{path}.container")
    if spec.get("image") is not None:
        fault.image = ck.nonempty(spec["image"], f"{path}.image", "an image reference, e.g. nginx:1.25")
    if spec.get("value") is not None:
        fault.value = ck.quantity(spec["value"], f"{path}.value")
    if spec.get("for") is not None:
        fault.for_seconds = ck.duration(spec["for"], f"{path}.for")
    return fault


def _pod_ref(ck: Check, value: Any, path: str) -> str:
    text = ck.string(value, path, "namespace/name or name")
    namespace, _, name = text.rpartition("/") if "/" in text else ("default", "", text)
    if not DNS_LABEL.match(namespace) or len(namespace) > 63 or not is_subdomain(name):
        raise ck.error(path, f'"{text}" is not a pod reference; expected namespace/name or name, e.g. '
                             "default/web-0")
    return f"{namespace}/{name}"


def load_fault(spec: Any, nodes: list[str], origin: str = "fault") -> Fault:
    """One fault given outside a scenario (``podlife fault`` on a running cluster), checked as a scenario's
    fault action is: the same types, fields and node names."""
    raw = Raw(origin, {"fault": spec}, {}, {})
    return parse_fault(Check(raw), spec, "fault", nodes)

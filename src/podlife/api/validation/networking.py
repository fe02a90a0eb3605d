"""networking.k8s.io (pkg/apis/networking/validation): Ingress, IngressClass, NetworkPolicy."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from podlife.api import names, selectors
from podlife.api.errors import FieldError
from podlife.api.validation.common import (
    Errs,
    as_dict,
    as_list,
    as_str,
    cidr_errors,
    forbidden,
    invalid,
    invalid_each,
    not_supported,
    port_number_errors,
    required,
)
from podlife.api.validation.objectmeta import meta

_PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]


def _host_errors(host: str, path: str) -> Errs:
    """validateIngressRules: a DNS name (a leading '*.' allowed), not an IP address."""
    try:
        ipaddress.ip_address(host)
        return [invalid(path, host, "must be a DNS name, not an IP address")]
    except ValueError:
        pass
    name = host[2:] if host.startswith("*.") else host
    return invalid_each(path, host, names.dns1123_subdomain_errors(name))


def _backend(backend: Mapping, path: str) -> Errs:
    """validateIngressBackend: a service (DNS-1035 name, a port by name or number) or a resource."""
    service, resource = backend.get("service"), backend.get("resource")
    if service is None and resource is None:
        return [invalid(path, "", "one backend (`service` or `resource`) must be specified")]
    if service is not None and resource is not None:
        return [invalid(path, "", "cannot set both service and resource backends")]
    if resource is not None:
        return []
    service = as_dict(service)
    errs = invalid_each(f"{path}.service.name", as_str(service.get("name")),
                        names.dns1035_label_errors(as_str(service.get("name"))))
    port = as_dict(service.get("port"))
    if port.get("name") and port.get("number"):
        errs.append(invalid(f"{path}.service.port", port, "cannot set both port name & port number"))
    elif port.get("name"):
        errs += invalid_each(f"{path}.service.port.name", port["name"], names.port_name_errors(as_str(port["name"])))
    elif port.get("number") is not None:
        errs += port_number_errors(port["number"], f"{path}.service.port.number")
    else:
        errs.append(invalid(f"{path}.service.port", port, "port name or number is required"))
    return errs


def validate_ingress(obj: Mapping) -> Errs:
    """ValidateIngressCreate: rules (hosts, absolute paths of a known type, backends), a default backend or
    rules, the class name."""
    errs = meta(obj, True)
    spec = as_dict(obj.get("spec"))
    if spec.get("defaultBackend") is not None:
        errs += _backend(as_dict(spec["defaultBackend"]), "spec.defaultBackend")
    elif not as_list(spec.get("rules")):
        errs.append(invalid("spec", spec.get("rules") or [], "either `defaultBackend` or `rules` must be specified"))
    for i, rule in enumerate(as_list(spec.get("rules"))):
        rule, rp = as_dict(rule), f"spec.rules[{i}]"
        if rule.get("host"):
            errs += _host_errors(as_str(rule["host"]), f"{rp}.host")
        http = rule.get("http")
        if http is None:
            continue
        paths = as_list(as_dict(http).get("paths"))
        if not paths:
            errs.append(required(f"{rp}.http.paths"))
        for j, p in enumerate(paths):
            p, pp = as_dict(p), f"{rp}.http.paths[{j}]"
            ptype = p.get("pathType")
            if ptype is None:
                errs.append(required(f"{pp}.pathType", "pathType must be specified"))
            elif ptype not in _PATH_TYPES:
                errs.append(not_supported(f"{pp}.pathType", ptype, _PATH_TYPES))
            value = as_str(p.get("path"))
            if ptype in ("Exact", "Prefix") and not value.startswith("/"):
                errs.append(invalid(f"{pp}.path", value, "must be an absolute path"))
            if p.get("backend") is None:
                errs.append(required(f"{pp}.backend"))
            else:
                errs += _backend(as_dict(p["backend"]), f"{pp}.backend")
    for i, tls in enumerate(as_list(spec.get("tls"))):
        for j, host in enumerate(as_list(as_dict(tls).get("hosts"))):
            errs += _host_errors(as_str(host), f"spec.tls[{i}].hosts[{j}]")
    cls = spec.get("ingressClassName")
    if cls is not None:
        errs += invalid_each("spec.ingressClassName", cls, names.dns1123_subdomain_errors(as_str(cls)))
    return errs


def validate_ingress_class(obj: Mapping) -> Errs:
    """ValidateIngressClass: the controller is a domain-prefixed path of at most 250 characters."""
    errs = meta(obj, False)
    controller = as_str(as_dict(obj.get("spec")).get("controller"))
    if not controller:
        errs.append(required("spec.controller"))
    elif "/" not in controller or names.dns1123_subdomain_errors(controller.split("/", 1)[0]):
        errs.append(invalid("spec.controller", controller, 'must be a domain-prefixed path (such as "acme.io/foo")'))
    elif len(controller) > 250:
        errs.append(FieldError("spec.controller", "Too long", "may not be more than 250 bytes"))
    return errs


def _peer(peer: Mapping, path: str) -> Errs:
    """ValidateNetworkPolicyPeer: one of the selectors, or an ipBlock alone."""
    given = [k for k in ("podSelector", "namespaceSelector", "ipBlock") if peer.get(k) is not None]
    if not given:
        return [required(path, "must specify a peer")]
    if "ipBlock" in given and len(given) > 1:
        return [forbidden(path, "may not specify both ipBlock and another peer")]
    errs: Errs = []
    for key in ("podSelector", "namespaceSelector"):
        if peer.get(key) is not None:
            errs += selectors.validate_selector(as_dict(peer[key]), f"{path}.{key}")
    block = peer.get("ipBlock")
    if block is not None:
        block = as_dict(block)
        errs += cidr_errors(block.get("cidr"), f"{path}.ipBlock.cidr")
        for i, ex in enumerate(as_list(block.get("except"))):
            errs += cidr_errors(ex, f"{path}.ipBlock.except[{i}]")
    return errs


def _port(port: Mapping, path: str) -> Errs:
    errs: Errs = []
    proto = port.get("protocol")
    if proto is not None and proto not in ("SCTP", "TCP", "UDP"):
        errs.append(not_supported(f"{path}.protocol", proto, ["SCTP", "TCP", "UDP"]))
    value = port.get("port")
    if isinstance(value, str):
        errs += invalid_each(f"{path}.port", value, names.port_name_errors(value))
        if port.get("endPort") is not None:
            errs.append(required(f"{path}.port", "must be specified when endPort is specified"))
    elif value is not None:
        errs += port_number_errors(value, f"{path}.port")
        end = port.get("endPort")
        if end is not None and isinstance(end, int) and end < value:
            errs.append(invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
    return errs


def validate_network_policy(obj: Mapping) -> Errs:
    """ValidateNetworkPolicy: the pod selector, rules' ports and peers, known policy types."""
    errs = meta(obj, True)
    spec = as_dict(obj.get("spec"))
    errs += selectors.validate_selector(as_dict(spec.get("podSelector")), "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(as_list(spec.get(direction))):
            rule, rp = as_dict(rule), f"spec.{direction}[{i}]"
            for j, port in enumerate(as_list(rule.get("ports"))):
                errs += _port(as_dict(port), f"{rp}.ports[{j}]")
            for j, peer in enumerate(as_list(rule.get(peers))):
                errs += _peer(as_dict(peer), f"{rp}.{peers}[{j}]")
    types = as_list(spec.get("policyTypes"))
    for i, t in enumerate(types):
        if t not in ("Ingress", "Egress"):
            errs.append(not_supported(f"spec.policyTypes[{i}]", t, ["Egress", "Ingress"]))
    if len(types) > 2:
        errs.append(invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return errs


VALIDATORS = {"Ingress": validate_ingress, "IngressClass": validate_ingress_class,
              "NetworkPolicy": validate_network_policy}

"""A pod's host ports, as both the scheduler's NodePorts filter and the kubelet's admission read them
(pkg/scheduler/framework/plugins/nodeports, pkg/scheduler/framework types.go HostPortInfo)."""

from __future__ import annotations

ALL_IPS = "0.0.0.0"            # framework.DefaultBindAllHostIP


def host_ports(spec: dict) -> tuple[tuple[str, str, int], ...]:
    """nodeports.go getContainerPorts: (hostIP, protocol, hostPort) of the containers' host ports, sanitized as
    HostPortInfo does (no IP: every IP, no protocol: TCP)."""
    out = []
    for c in spec.get("containers") or ():
        for p in c.get("ports") or ():
            if int(p.get("hostPort") or 0) > 0:
                out.append((p.get("hostIP") or ALL_IPS, p.get("protocol") or "TCP", int(p["hostPort"])))
    return tuple(out)


def conflicts(wanted: tuple[tuple[str, str, int], ...], used: set[tuple[str, str, int]]) -> bool:
    """HostPortInfo.CheckConflict: the same protocol and port on the same IP, or either side on every IP."""
    return any(proto == uproto and port == uport and (ip == ALL_IPS or uip in (ALL_IPS, ip))
               for ip, proto, port in wanted for uip, uproto, uport in used)

"""The kubelet's predicate admit handler (pkg/kubelet/lifecycle/predicate.go), for the one general predicate a
pod bound without the scheduler can fail here: NodePorts. A pod that asks for a host port an active pod of the
node already holds is rejected (rejectPod: an event and phase Failed) and never started.

The other general predicates (resources fit, node affinity, node name, taints) are left to the scheduler: a pod
placed with spec.nodeName that would fail them is admitted (not modelled; the scheduler's placement never does).
"""

from __future__ import annotations

from collections.abc import Iterable

from podlife.api.meta import Obj
from podlife.api.hostports import conflicts, host_ports

NODE_PORTS = "NodePorts"
# plugins/nodeports ErrReason, in PredicateFailureError.Error's "Predicate %s failed: %s"
NODE_PORTS_MESSAGE = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"


def node_ports_conflict(pod: Obj, active: Iterable[Obj]) -> bool:
    """nodeports.Fits over the active pods' host ports."""
    wanted = host_ports(pod.get("spec") or {})
    if not wanted:
        return False
    return conflicts(wanted, {p for other in active for p in host_ports(other.get("spec") or {})})

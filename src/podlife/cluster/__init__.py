"""The composition root: podlife.cluster.cluster.Cluster assembles the kernel, trace, API store, control plane
and one kubelet + runtime per node; the seams between them are declared in podlife.cluster.contracts.

``Cluster`` is loaded on first use, so that the light modules here (spec, contracts, the fault table) can be
imported by the loader and the runtimes without the whole model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from podlife.cluster.cluster import Cluster as Cluster


def __getattr__(name: str) -> Any:
    if name == "Cluster":
        from podlife.cluster.cluster import Cluster

        return Cluster
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

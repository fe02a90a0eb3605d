"""Timed facts: what one piece of evidence says happened, in a form the real and the modelled timelines share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Fact:
    t: float                       # seconds since the diagnosis' origin (the scenario's start)
    kind: str                      # sync-delete, prestop-start, kill, exited, event:Killing, … (see klogparse)
    pod: str | None = None         # namespace/name
    container: str | None = None   # a container name, or "id:<hex>" until the id is resolved
    value: float | None = None     # a grace period, a version, …
    detail: str = ""
    source: str = ""               # file:line of the evidence ("model" for the modelled timeline)
    text: str = ""                 # the evidence line as written
    weight: float = 1.0            # how much it counts in the alignment (periodic noise counts less)


# Periodic lines a kubelet repeats (status sync every 10 s, relists): they say little about the incident.
LOW_WEIGHT = {"generating-status": 0.1, "status": 0.2, "still-running": 0.2, "skip-sync": 0.3, "no-sandbox": 0.3,
              "event:Pulled": 0.3, "event:Created": 0.3, "event:Started": 0.3, "event:Scheduled": 0.3,
              "pleg-ContainerStarted": 0.3}

_HEX = re.compile(r"\b[0-9a-f]{12,64}\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_NUM = re.compile(r"-?\b\d+(?:\.\d+)?\b")


def mask(text: str) -> str:
    """A log message's template: ids and numbers masked, so lines of two runs compare."""
    return _NUM.sub("N", _HEX.sub("ID", _UUID.sub("UID", text)))


@dataclass
class PodInfo:
    """What the evidence says about one pod's spec and identity (from its object, describe, or log lines)."""

    namespace: str
    name: str
    uid: str | None = None
    node: str | None = None
    containers: list[str] = field(default_factory=list)
    sidecars: set[str] = field(default_factory=set)          # lifecycle.type: Sidecar (the legacy PR's)
    grace: int | None = None
    spec: dict[str, Any] | None = None                        # the pod object's spec when given
    ids: dict[str, str] = field(default_factory=dict)         # container id (hex) -> name
    images: dict[str, str] = field(default_factory=dict)      # container -> image (from pull events)
    terminating: bool = False                                 # the evidence shows it Terminating at its end
    deletion_t: float | None = None                           # from the object's deletionTimestamp - grace

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def add_container(self, name: str) -> None:
        if name and name not in self.containers:
            self.containers.append(name)

"""``kubectl describe pod`` text: the pod's identity, containers, grace period, states and its Events table.

The Events table's times are ages ("2m3s") counted from when describe ran, which the text does not say, so its
events are kept as untimed clues (searched for upstream symptoms), not aligned.
"""

from __future__ import annotations

import re

from podlife.diagnose.facts import PodInfo


def is_describe(text: str) -> bool:
    head = text.lstrip()[:400]
    return head.startswith("Name:") and re.search(r"^Namespace:", head, re.MULTILINE) is not None


def parse(text: str) -> tuple[PodInfo, list[str], dict[str, str]]:
    """(pod, event lines "Reason: message", container name -> state word)."""
    def field(name: str) -> str | None:
        m = re.search(rf"^{name}:\s*(.*)$", text, re.MULTILINE)
        return m[1].strip() if m else None

    info = PodInfo(field("Namespace") or "default", field("Name") or "")
    node = field("Node")
    info.node = node.split("/")[0] if node and node != "<none>" else None
    grace = field("Termination Grace Period")
    if grace and re.match(r"\d+s", grace):
        info.grace = int(grace[:-1])
    status = field("Status") or ""
    info.terminating = status.startswith("Terminating")
    states: dict[str, str] = {}
    block = re.search(r"^Containers:\n(.*?)(?=^\S)", text, re.MULTILINE | re.DOTALL)
    if block:
        for m in re.finditer(r"^  ([\w.-]+):\n((?:^    .*\n?)*)", block[1], re.MULTILINE):
            info.add_container(m[1])
            cid = re.search(r"Container ID:\s*(?:\w+://)?([0-9a-f]+)", m[2])
            if cid:
                info.ids[cid[1]] = m[1]
            st = re.search(r"^    State:\s*(\w+)", m[2], re.MULTILINE)
            if st:
                states[m[1]] = st[1]
    events: list[str] = []
    ev = re.search(r"^Events:\n(.*)", text, re.MULTILINE | re.DOTALL)
    if ev:
        for line in ev[1].splitlines():
            cols = re.split(r"\s{2,}", line.strip())
            if len(cols) >= 5 and cols[0] in ("Normal", "Warning"):
                events.append(f"{cols[1]}: {cols[-1]}")
    return info, events, states

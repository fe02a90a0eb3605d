"""``podlife diagnose``: explain a real incident from its evidence against the model.

evidence readers (``klogparse``, ``kubeobjects``, ``describe``, ``evidence``) turn files into timed ``facts``;
``reconstruct`` builds the scenario they describe; ``simulate`` runs it and reads the model's output with the
same readers; ``align`` compares the two timelines; ``hypotheses`` searches the model's fault space and ranks
what reproduces the evidence; ``render`` and ``html`` show the result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from podlife.diagnose.evidence import Evidence
    from podlife.diagnose.hypotheses import Diagnosis


def diagnose(paths: list[str], pod: str | None = None, version: str | None = None) -> tuple[Evidence, Diagnosis]:
    """Read the evidence, reconstruct its scenario, search the hypotheses. Bad evidence raises ScenarioError."""
    from podlife.diagnose import evidence, hypotheses, reconstruct
    from podlife.scenario.errors import ScenarioError

    ev = evidence.read(paths)
    pods = None
    if pod is not None:
        hits = [k for k in ev.pods if k == pod or k.split("/", 1)[1] == pod]
        if not hits:
            raise ScenarioError("--pod", None, "", f"no pod {pod!r} in the evidence; it names: "
                                                   f"{', '.join(sorted(ev.pods)) or 'none'}")
        pods = hits[:1]
    if not ev.pods:
        raise ScenarioError(paths[0], None, "", "the evidence names no pod (no SyncLoop, container or Event line "
                                                "of a pod, no pod object)")
    base = reconstruct.build(ev, pods, version)
    return ev, hypotheses.search(ev, base)

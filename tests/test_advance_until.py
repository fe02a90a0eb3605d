"""The condition language of ``podlife advance --until``: each check of ``expect:`` on one line, judged on the
objects as stored."""

from __future__ import annotations

from typing import Any

import pytest

from podlife.api.meta import KINDS
from podlife.apiserver.until import ConditionError, parse


class Objects:
    """What the store answers for try_get: the objects given, by (kind, namespace, name)."""

    def __init__(self, *objs: dict[str, Any]) -> None:
        self.kinds = dict(KINDS)
        self.objs = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objs}

    def try_get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.objs.get((kind, namespace, name))


POD = {"kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
       "status": {"phase": "Running",
                  "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
                  "containerStatuses": [{"name": "app", "state": {"terminated": {"reason": "Error",
                                                                                 "exitCode": 1}}}]}}
NODE = {"kind": "Node", "metadata": {"name": "node-2"},
        "spec": {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]},
        "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}
DEPLOY = {"kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "status": {"readyReplicas": 3}}
STORE = Objects(POD, NODE, DEPLOY)


@pytest.mark.parametrize("text, holds", [
    ("pod/web-0 phase Running", True),
    ("pod/default/web-0 phase Pending", False),
    ("pod/web-0 ready", False),
    ("pod/web-0 ready false", True),
    ("pod/web-0 condition Ready", False),
    ("pod/web-0 condition Ready=False", True),
    ("pod/web-0 condition Ready=False reason=ContainersNotReady", True),
    ("pod/web-0 condition Ready=False reason=PodCompleted", False),
    ("pod/web-0 containerState app terminated reason=Error exitCode=1", True),
    ("pod/web-0 containerState app terminated exitCode=0", False),
    ("pod/web-0 containerState app running", False),
    ("pod/web-0 deleted", False),
    ("pod/web-1 deleted", True),
    ("pod/web-0 deleted false", True),
    ("node/node-2 nodeReady Unknown", True),
    ("node/node-2 taint node.kubernetes.io/unreachable", True),
    ("node/node-2 taint node.kubernetes.io/unreachable:NoSchedule", False),
    ("deployment/shop/web readyReplicas 3", True),
    ("deploy/shop/web readyReplicas 2", False),
    ("deployment/web readyReplicas 3", False),   # namespace default: another object
])
def test_a_condition_holds_on_the_stored_object(text: str, holds: bool) -> None:
    assert parse(text, STORE.kinds).holds(STORE) is holds


@pytest.mark.parametrize("text, message", [
    ("pod/web-0", 'until: "pod/web-0" is not OBJECT CHECK [VALUE]'),
    ("gizmo/x phase Running", 'until: unknown kind "gizmo"'),
    ("node/default/node-1 nodeReady True", 'until: "node/default/node-1": nodes are cluster-scoped'),
    ("pod/web-0 taint x", "until: taint needs a node object (node/NAME), got pod/web-0"),
    ("pod/web-0 ready maybe", "until: ready takes true or false, got maybe"),
    ("pod/web-0 condition Ready=Yes", 'until: condition status "Yes"; expected one of True, False, Unknown'),
    ("pod/web-0 containerState app exited", "until: containerState takes NAME STATE"),
    ("pod/web-0 containerState app terminated exitCode=300", 'until: exitCode "300" is not an exit status'),
    ("pod/web-0 containerState app terminated signal=9", 'until: "signal=9" is not one of reason=…, exitCode=…'),
    ("deployment/web readyReplicas three", 'until: readyReplicas "three" is not a number'),
])
def test_a_bad_condition_says_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(ConditionError) as e:
        parse(text, STORE.kinds)
    assert message in str(e.value)

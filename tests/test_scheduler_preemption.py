"""DefaultPreemption end to end (pkg/scheduler/framework/plugins/defaultpreemption, framework/preemption): a pod
that fits nowhere deletes lower-priority pods on one node, waits nominated to it and binds once they are gone.

The victims' containers stop 0.1 s after SIGTERM (podlife's default) unless a test says otherwise; the kubelet
then reports the terminal phase and deletes the pod object at the next whole second (its status sync), so a
victim deleted at 5 s is Succeeded at 5.1 s and gone at 6 s. The scheduler's informer drops a pod at its
terminal phase (field selector status.phase!=Succeeded,Failed), which is when its requests are freed."""

from __future__ import annotations

from tests.helpers import records, run_text

HEAD = """
apiVersion: podlife/v1alpha1
kind: Scenario
metadata: {name: preempt}
spec:
  kubernetesVersion: "1.34"
  cluster:
    nodes:
      - {namePrefix: n, count: NODES, capacity: {cpu: "1", memory: 1Gi, pods: "110"}}
  objects:
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: mid}, value: 100}
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: never}, value: 1000,
       preemptionPolicy: Never}
"""


def _pod(name: str, cpu: str, node: str | None = None, cls: str | None = None, extra: str = "") -> str:
    spec = []
    if node:
        spec.append(f"nodeName: {node}")
    if cls:
        spec.append(f"priorityClassName: {cls}")
    spec.append(f"containers: [{{name: app, image: app:1, resources: {{requests: {{cpu: {cpu}}}}}}}]")
    body = ", ".join(spec)
    return f"{{apiVersion: v1, kind: Pod, metadata: {{name: {name}{extra}}}, spec: {{{body}}}}}"


def scenario(nodes: int, objects: list[str], actions: list[str], until: str = "20s") -> str:
    text = HEAD.replace("NODES", str(nodes))
    text += "".join(f"    - {o}\n" for o in objects)
    text += "  actions:\n" + "".join(f"    - {a}\n" for a in actions)
    return text + f"  until: {until}\n"


HIGH_AT_5 = "{at: 5s, create: " + _pod("high", "600m", cls="high") + "}"


def _story(r, *names: str) -> list[tuple]:
    """The scheduler's and the victims' writes and Events, in order."""
    out = []
    for x in r.cluster.trace.records:
        if x.get("object", "").rsplit("/", 1)[-1] not in names or x["t"] < 2:
            continue
        if x["type"] == "event" and x["reason"] in ("FailedScheduling", "Preempted", "Scheduled"):
            out.append((x["t"], x["object"], x["reason"], x["message"]))
        elif x["type"] == "api" and x["by"] == "default-scheduler":
            out.append((x["t"], x["object"], x["verb"], x.get("subresource") or x.get("node")))
        elif x["type"] == "condition" and x["conditionType"] == "DisruptionTarget":
            out.append((x["t"], x["object"], "DisruptionTarget", x["reason"]))
        elif x["type"] == "deleted":
            out.append((x["t"], x["object"], "deleted", None))
    return out


def _uid(r, name: str) -> str:
    return next(o for o in r.cluster.store.list("Pod") if o["metadata"]["name"] == name)["metadata"]["uid"]


def test_a_high_priority_pod_preempts_and_binds_once_the_victim_is_gone(tmp_path):
    r = run_text(tmp_path, scenario(1, [_pod("low", "600m", node="n0")], [HIGH_AT_5]))
    uid = _uid(r, "high")
    # 5 s: 600m + 600m > 1 cpu. The node failed NodeResourcesFit (Unschedulable), low has priority 0 < 1000 and
    # without it high fits: low is the victim. 1.33+ (async preemption): the failure is handled first — the
    # FailedScheduling Event without a "preemption:" part (PostFilter succeeded) and the status with
    # nominatedNodeName — then the victim gets DisruptionTarget (1.26+), is deleted, and gets "Preempted"
    # (1.29+: the preemptor's UID). low exits at 5.1 s (Succeeded: the scheduler frees its cpu) and its object
    # goes at 6 s; high's first back-off (1 s) also ends at 6 s, when the deletion moves it back: bound at 6 s.
    assert _story(r, "low", "high") == [
        (5.0, "Pod/default/high", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu."),
        (5.0, "Pod/default/high", "update", "status"),
        (5.0, "Pod/default/low", "update", "status"),
        (5.0, "Pod/default/low", "DisruptionTarget", "PreemptionByScheduler"),
        (5.0, "Pod/default/low", "delete", None),
        (5.0, "Pod/default/low", "Preempted", f"Preempted by pod {uid} on node n0"),
        (6.0, "Pod/default/low", "deleted", None),
        (6.0, "Pod/default/high", "bind", "n0"),
        (6.0, "Pod/default/high", "Scheduled", "Successfully assigned default/high to n0"),
    ]
    high = r.cluster.store.get("Pod", "default", "high")
    assert high["status"]["nominatedNodeName"] == "n0"
    term = records(r, "terminating", object="Pod/default/low")
    assert [(x["t"], x["gracePeriodSeconds"]) for x in term] == [(5.0, 30)]   # its own grace: a plain delete
    low_cond = [c for c in r.cluster.trace.records if c["type"] == "condition" and c.get("conditionType") ==
                "DisruptionTarget"]
    assert len(low_cond) == 1


def test_synchronous_preemption_before_1_33_and_older_wordings(tmp_path):
    text = scenario(1, [_pod("low", "600m", node="n0")], [HIGH_AT_5])
    # 1.32: prepareCandidate runs inside PostFilter, so the victim is gone (deleted) before the FailedScheduling
    # Event and the preemptor's status update
    r = run_text(tmp_path, text, version="1.32")
    assert [s[1:3] for s in _story(r, "low", "high")[:6]] == [
        ("Pod/default/low", "update"), ("Pod/default/low", "DisruptionTarget"), ("Pod/default/low", "delete"),
        ("Pod/default/low", "Preempted"), ("Pod/default/high", "FailedScheduling"), ("Pod/default/high", "update")]
    # 1.25: no DisruptionTarget yet (PodDisruptionConditions beta from 1.26), the anonymous wording of PR #114923
    r = run_text(tmp_path, text, version="1.25")
    assert _story(r, "low")[:2] == [(5.0, "Pod/default/low", "delete", None),
                                    (5.0, "Pod/default/low", "Preempted", "Preempted by a pod on node n0")]
    # 1.22: the preemptor's namespace/name
    r = run_text(tmp_path, text, version="1.22")
    assert _story(r, "low")[1] == (5.0, "Pod/default/low", "Preempted", "Preempted by default/high on node n0")
    assert [x[1:] for x in _story(r, "high")[-2:]] == [("Pod/default/high", "bind", "n0"),
                                                      ("Pod/default/high", "Scheduled",
                                                       "Successfully assigned default/high to n0")]


def test_preemption_policy_never_waits(tmp_path):
    r = run_text(tmp_path, scenario(1, [_pod("low", "600m", node="n0")],
                                    ["{at: 5s, create: " + _pod("patient", "600m", cls="never") + "}"]))
    # PodEligibleToPreemptOthers: preemptionPolicy Never → the PostFilter status, after FitError's " %v."
    assert _story(r, "low", "patient") == [
        (5.0, "Pod/default/patient", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu. "
                                                         "preemption: not eligible due to preemptionPolicy=Never.."),
        (5.0, "Pod/default/patient", "update", "status")]


def test_the_nomination_holds_the_room_and_a_terminating_victim_blocks_another_preemption(tmp_path):
    slow = ", annotations: {podlife/behavior: 'app: {onTerm: ignore}'}"
    low = _pod("low", "600m", node="n0", extra=slow).replace("spec: {", "spec: {terminationGracePeriodSeconds: 20, ")
    r = run_text(tmp_path, scenario(1, [low], [
        HIGH_AT_5,
        "{at: 8s, create: " + _pod("small", "300m") + "}",
        "{at: 10s, patch: node/n0, mergePatch: {metadata: {labels: {touched: 'yes'}}}}"], until="40s"))
    story = _story(r, "low", "high", "small")
    # low ignores SIGTERM: killed at 5 + 20 = 25 s (Failed then, so its cpu is free for the scheduler at 25 s).
    # 8 s: small (priority 0, 300m) would fit beside the terminating low (600m + 300m) but high is nominated to n0
    # with a priority not below small's, so its 600m counts there (addGEPriorityNominatedPods): no fit, and no
    # pod of lower priority than 0 to preempt.
    assert (8.0, "Pod/default/small", "FailedScheduling",
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
            "victims found for incoming pod..") in story
    # 10 s: the node update moves both back. high (first: priority) still does not fit and its nominated node
    # holds a lower-priority pod terminating by preemption: not eligible, and it keeps its nomination.
    at10 = [s for s in story if s[0] == 10.0 and s[2] == "FailedScheduling"]
    assert at10 == [
        (10.0, "Pod/default/high", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu. preemption: "
                                                       "not eligible due to a terminating pod on the nominated node.."),
        (10.0, "Pod/default/small", "FailedScheduling",
         "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
         "victims found for incoming pod..")]
    # 25 s: low is Failed; high binds first (higher priority) and no longer holds the room, then small fits
    # (600m + 300m) — both at the kill, before low's object goes at 26 s
    assert [s for s in story if s[0] >= 25 and s[2] in ("bind", "deleted")] == [
        (25.0, "Pod/default/high", "bind", "n0"), (25.0, "Pod/default/small", "bind", "n0"),
        (26.0, "Pod/default/low", "deleted", None)]
    assert len([s for s in story if s[2] == "Preempted"]) == 1


def test_victims_chosen_by_budget_then_priority(tmp_path):
    pdb = ("{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {name: guard}, "
           "spec: {minAvailable: 1, selector: {matchLabels: {app: guarded}}}}")
    objects = [pdb, _pod("guarded", "600m", node="n0", extra=", labels: {app: guarded}"),
               _pod("plain", "600m", node="n1")]
    r = run_text(tmp_path, scenario(2, objects, [HIGH_AT_5]))
    # both nodes are candidates with one victim each; evicting guarded would violate its budget
    # (disruptionsAllowed 0), so pickOneNodeForPreemption's first rule picks n1
    assert [(s[1], s[2]) for s in _story(r, "guarded", "plain") if s[2] == "Preempted"] == [
        ("Pod/default/plain", "Preempted")]
    assert records(r, "api", verb="bind", object="Pod/default/high")[0]["node"] == "n1"

    objects = [_pod("mid", "600m", node="n0", cls="mid"), _pod("a", "500m", node="n1"), _pod("b", "500m", node="n1")]
    r = run_text(tmp_path, scenario(2, objects, [HIGH_AT_5]))
    # n0 needs one victim of priority 100, n1 two of priority 0 (500m + 600m > 1 cpu): the lowest highest-victim
    # priority (rule 2) comes before the fewest victims (rule 4), so a and b go
    assert sorted(s[1] for s in _story(r, "mid", "a", "b") if s[2] == "Preempted") == ["Pod/default/a",
                                                                                        "Pod/default/b"]
    assert records(r, "api", verb="bind", object="Pod/default/high")[0]["node"] == "n1"


def test_only_as_many_victims_as_needed(tmp_path):
    objects = [_pod("old", "400m", node="n0"), _pod("newer", "400m", node="n0", cls="mid")]
    r = run_text(tmp_path, scenario(1, objects, ["{at: 5s, create: " + _pod("high", "500m", cls="high") + "}"]))
    # both are below 1000; removing both, high fits; reprieve from the most important (mid, priority 100):
    # 400m + 500m fits, so mid stays; then old: 400 + 400 + 500 > 1000, old is the only victim
    assert [s[1] for s in _story(r, "old", "newer") if s[2] == "Preempted"] == ["Pod/default/old"]


def test_a_higher_preemptor_takes_over_a_lower_nomination(tmp_path):
    slow = ", annotations: {podlife/behavior: 'app: {onTerm: ignore}'}"
    low = _pod("low", "600m", node="n0", extra=slow).replace("spec: {", "spec: {terminationGracePeriodSeconds: 20, ")
    r = run_text(tmp_path, scenario(1, [low], [
        "{at: 5s, create: " + _pod("mid", "600m", cls="mid") + "}",
        "{at: 8s, create: " + _pod("high", "1", cls="high") + "}"], until="40s"))
    story = _story(r, "low", "mid", "high")
    # 5 s: mid (100) preempts low and is nominated to n0. 8 s: high (1000) asks the whole cpu; mid's nomination
    # does not hold room against a higher priority, and low (0) is still the only pod on n0: low is high's victim
    # again (deleted again, a second Preempted Event), and mid, of lower priority and nominated to the same node,
    # loses its nomination (ClearNominatedNodeName)
    assert [s[1:3] for s in story if s[2] in ("Preempted", "bind")] == [
        ("Pod/default/low", "Preempted"), ("Pod/default/low", "Preempted"), ("Pod/default/high", "bind")]
    mid = r.cluster.store.get("Pod", "default", "mid")
    assert "nominatedNodeName" not in mid["status"] and not mid["spec"].get("nodeName")
    # 25 s: low is killed; high binds; mid does not fit beside it and finds no pod below its priority 100
    assert [s for s in story if s[2] == "bind"] == [(25.0, "Pod/default/high", "bind", "n0")]
    assert (25.0, "Pod/default/mid", "FailedScheduling",
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
            "victims found for incoming pod..") in story


def test_the_preemption_part_names_what_still_fails_without_the_lower_pods(tmp_path):
    objects = [_pod("low", "300m", node="n0"), _pod("top", "600m", node="n0", cls="high")]
    r = run_text(tmp_path, scenario(1, objects, ["{at: 5s, create: " + _pod("mid", "800m", cls="mid") + "}"]))
    # SelectVictimsOnNode: without low (the only pod below 100) top's 600m + 800m still exceed 1 cpu, so the node's
    # dry-run status is NodeResourcesFit's own reason, counted in the PostFilter's FitError
    assert _story(r, "mid")[0] == (5.0, "Pod/default/mid", "FailedScheduling",
                                   "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                                   "available: 1 Insufficient cpu..")
    assert records(r, "event", reason="Preempted") == []

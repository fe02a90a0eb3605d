"""A dump made into what a cluster can start from: the objects (scrubbed, filtered, each kind/name once, CRDs
first, then in resourceVersion order), the instant it was taken (its newest timestamp), the Kubernetes version
its kubelets report, and what was wrong with it. Problems that stop a run are DumpErrors (exit 2); ones podlife
can go on from are warnings that name the objects."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from podlife.importer.clean import scrub, select
from podlife.importer.errors import DumpError
from podlife.importer.readers import read_dumps
from podlife.versions import NEWEST_MINOR, OLDEST_MINOR

Obj = dict[str, Any]
# kinds read but not stored: Events are history (read by --calibrate), not state
NOT_STORED = frozenset({"Event"})
# owners whose absence from a dump with none of their kind is taken as "not dumped", not "deleted"
_LISTED = 5   # names a warning lists before "and N more"


@dataclass
class Dump:
    objects: list[Obj]
    events: list[Obj]
    taken: datetime                       # the dump's newest timestamp: the model's clock starts there
    version: str | None                   # "1.33": the minor most kubelets report (None without Nodes)
    revision: int                         # the highest resourceVersion
    files: list[str]
    logs: list[str]
    warnings: list[str] = field(default_factory=list)
    pull_times: dict[str, float] = field(default_factory=dict)   # seconds per image (--calibrate)
    start_latency: float | None = None   # scheduled to started, seconds (--calibrate): reported, not modelled
    sandbox_seconds: float | None = None   # scheduled to the first container step, seconds (--calibrate)

    def of(self, kind: str) -> list[Obj]:
        return [o for o in self.objects if o["kind"] == kind]


def load_dump(paths: Sequence[str], namespaces: Sequence[str] = (), selector: str | None = None,
              anonymize: bool = False) -> Dump:
    read = read_dumps(paths)
    warnings: list[str] = []
    by_key: dict[tuple[str, str, str], tuple[str, Obj]] = {}
    events: list[Obj] = []
    shared: dict[str, dict[bytes, Any]] = {}
    for file, obj in read.objects:
        scrub(obj)
        if obj["kind"] == "Pod":
            _share_parts(obj, shared)
        if obj["kind"] in NOT_STORED:
            events.append(obj)
            continue
        md = obj["metadata"]
        key = (obj["kind"], md.get("namespace") or "", md["name"])
        seen = by_key.get(key)
        if seen is not None:
            first_file, first = seen
            newer = obj if _rv(obj) >= _rv(first) else first
            if first["metadata"].get("uid") != md.get("uid"):
                warnings.append(f"{_name(obj)} is in the dump twice with different UIDs ({first_file}, {file}); "
                                f"the one with the newer resourceVersion ({_rv(newer)}) is kept")
            by_key[key] = (file if newer is obj else first_file, newer)
        else:
            by_key[key] = (file, obj)
    objects = [o for _, o in by_key.values()]
    if not objects:
        raise DumpError(", ".join(paths), "no Kubernetes objects found; expected the output of kubectl get "
                                          "nodes,pods,... -A -o yaml (see podlife import --help)")
    _check_uids(objects, {id(o): f for f, o in by_key.values()})
    objects = select(objects, namespaces, selector)
    if anonymize:
        from podlife.importer.anonymize import anonymize as rename

        rename(objects, events)
    _check_node_status(objects)
    taken = _taken(objects, events)
    _without_leases(objects, taken, warnings)
    version = _version(objects, warnings)
    _bad_pod_status(objects, warnings)
    _missing_nodes(objects, warnings)
    _missing_owners(objects, warnings)
    objects.sort(key=lambda o: (o["kind"] != "CustomResourceDefinition", o["kind"] != "Namespace", _rv(o)))
    revision = max((_rv(o) for o in objects), default=0)
    for o in objects:   # objects written by hand without one come after the others, in the order read
        if not _rv(o):
            revision += 1
            o["metadata"]["resourceVersion"] = str(revision)
    dump = Dump(objects, events, taken, version, revision, read.files, read.logs, warnings)
    cal = read.calibration
    if isinstance(cal.get("pullTimes"), dict):
        dump.pull_times = {str(k): float(v) for k, v in cal["pullTimes"].items() if isinstance(v, (int, float))}
    if isinstance(cal.get("startLatency"), (int, float)):
        dump.start_latency = float(cal["startLatency"])
    if isinstance(cal.get("sandboxSeconds"), (int, float)):
        dump.sandbox_seconds = float(cal["sandboxSeconds"])
    return dump


# the parts of a pod that its replicas (and the pods of one node) have alike: kept once (objects read from a dump
# are never changed in place, as stored ones are not), so that a 150,000-pod dump holds a few thousand of each
_SPEC_PARTS = ("containers", "initContainers", "tolerations", "volumes", "affinity", "securityContext",
               "nodeSelector", "dnsConfig", "topologySpreadConstraints", "imagePullSecrets")
_SHARED_LIMIT = 50_000


def _share_parts(pod: Obj, shared: dict[str, dict[bytes, Any]]) -> None:
    from podlife.api.selectors import once

    md, spec = pod["metadata"], pod.get("spec")
    for holder, names in ((spec, _SPEC_PARTS), (md, ("labels", "ownerReferences"))):
        if not isinstance(holder, dict):
            continue
        for name in names:
            part = holder.get(name)
            if part:
                holder[name] = once(shared.setdefault(name, {}), part, _same, sort_keys=False, limit=_SHARED_LIMIT)


def _same(part: Any) -> Any:
    return part


def _rv(obj: Obj) -> int:
    rv = obj["metadata"].get("resourceVersion")
    return int(rv) if isinstance(rv, str) and rv.isdigit() else 0


def _name(obj: Obj) -> str:
    md = obj["metadata"]
    return f"{obj['kind']} {md['namespace']}/{md['name']}" if md.get("namespace") else f"{obj['kind']} {md['name']}"


def _few(names: list[str]) -> str:
    more = len(names) - _LISTED
    return ", ".join(names[:_LISTED]) + (f" and {more} more" if more > 0 else "")


def _check_uids(objects: list[Obj], files: dict[int, str]) -> None:
    """Two objects with one UID: the garbage collector and every ownerReference would confuse them."""
    seen: dict[str, Obj] = {}
    for o in objects:
        uid = o["metadata"].get("uid")
        if not uid:
            continue
        other = seen.get(uid)
        if other is not None:
            raise DumpError(files.get(id(o), "dump"), f"{_name(other)} and {_name(o)} have the same UID {uid}; a "
                                                      "cluster never holds two objects with one UID (is one of "
                                                      "the files from another cluster?)")
        seen[uid] = o


_STATUS_TIMES = {"Job": ("startTime", "completionTime"), "CronJob": ("lastScheduleTime", "lastSuccessfulTime"),
                 "HorizontalPodAutoscaler": ("lastScaleTime",)}


def _timestamps(obj: Obj) -> list[str]:
    md = obj["metadata"]
    out = [md.get("creationTimestamp")]
    kind = obj["kind"]
    status = obj.get("status")
    status = status if isinstance(status, dict) else {}   # one a kubelet would not write: _bad_pod_status says so
    if kind in ("Pod", "Node") or isinstance(status.get("conditions"), list):
        for c in status.get("conditions") or ():
            if isinstance(c, dict):   # lastUpdateTime: a Deployment's Progressing, renewed as it progresses
                out += [c.get(k) for k in ("lastTransitionTime", "lastHeartbeatTime", "lastUpdateTime",
                                           "lastProbeTime")]
    if kind == "Pod":
        out.append(status.get("startTime"))
        for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
            for part in ("state", "lastState"):
                for st in ((cs.get(part) or {}).values() if isinstance(cs, dict) else ()):
                    if isinstance(st, dict):
                        out += [st.get("startedAt"), st.get("finishedAt")]
    elif kind == "Lease":
        out.append((obj.get("spec") or {}).get("renewTime"))
    elif kind == "Event":   # core/v1 and events.k8s.io/v1 (a repeated event's series)
        out += [obj.get("lastTimestamp"), obj.get("eventTime"), obj.get("firstTimestamp"),
                obj.get("deprecatedLastTimestamp"), _get(obj.get("series"), "lastObservedTime")]
    elif kind in _STATUS_TIMES:   # what the controllers last did (never metadata.deletionTimestamp: in the future)
        out += [status.get(k) for k in _STATUS_TIMES[kind]]
    return [t for t in out if isinstance(t, str) and len(t) >= 20]


def _get(part: Any, key: str) -> Any:
    return part.get(key) if isinstance(part, dict) else None


def parse_time(ts: str) -> datetime:
    return datetime.fromisoformat(ts).astimezone(UTC)


def _taken(objects: list[Obj], events: list[Obj]) -> datetime:
    """The dump's instant: its newest timestamp, up to the next whole second (the model's timestamps are
    whole seconds from there)."""
    newest: datetime | None = None
    for o in objects + events:
        for ts in _timestamps(o):
            try:
                t = parse_time(ts)
            except ValueError:
                continue
            if newest is None or t > newest:
                newest = t
    if newest is None:
        raise DumpError("dump", "no object has a timestamp (metadata.creationTimestamp); expected objects read "
                                "from a cluster with kubectl get")
    if newest.microsecond:
        newest = newest.replace(microsecond=0) + timedelta(seconds=1)
    return newest


def _without_leases(objects: list[Obj], taken: datetime, warnings: list[str]) -> None:
    """A node's Lease is renewed every 10 s; without them (kubectl cluster-info dump has none) the newest
    timestamp can be minutes old: a kubelet posts an unchanged node status only every nodeStatusReportFrequency
    (5 m; pkg/kubelet/kubelet_node_status.go: tryUpdateNodeStatus)."""
    kinds = {(o["kind"], o["metadata"].get("namespace")) for o in objects}
    if ("Node", None) in kinds and ("Lease", "kube-node-lease") not in kinds:
        warnings.append(f"the dump has no node Leases: its instant is taken as its newest timestamp, "
                        f"{taken.strftime('%Y-%m-%dT%H:%M:%SZ')} (of events, conditions, container states), and it "
                        "may have been made up to 5 minutes later, as an unchanged node reports its status every "
                        "5 minutes (add leases to the kubectl get command)")


def kubelet_minor(node: Obj) -> int | None:
    v = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion") or ""
    parts = v.lstrip("v").split(".")
    return int(parts[1]) if len(parts) >= 2 and parts[0] == "1" and parts[1].isdigit() else None


# a kubeadm (or kops, kubespray) control plane's static pod: registry.k8s.io/kube-apiserver:v1.30.2
_APISERVER_IMAGE = re.compile(r"/kube-apiserver(?:-[a-z0-9]+)?:v1\.(\d+)\.")


def _apiserver_minor(objects: list[Obj]) -> int | None:
    """The control plane's minor, where the dump has its kube-apiserver pods (the newest, mid-upgrade)."""
    found = None
    for pod in objects:
        if pod["kind"] != "Pod" or pod["metadata"].get("namespace") != "kube-system":
            continue
        for c in (pod.get("spec") or {}).get("containers") or ():
            m = _APISERVER_IMAGE.search(str(c.get("image") or "")) if isinstance(c, dict) else None
            if m and (found is None or int(m.group(1)) > found):
                found = int(m.group(1))
    return found


def _modelled(minor: int, where: str, what: str) -> None:
    if not OLDEST_MINOR <= minor <= NEWEST_MINOR:
        raise DumpError(where, f"{what} is outside the versions podlife models (1.{OLDEST_MINOR} … 1.{NEWEST_MINOR})")


def _version(objects: list[Obj], warnings: list[str]) -> str | None:
    minors: Counter[int] = Counter()
    for node in (o for o in objects if o["kind"] == "Node"):
        m = kubelet_minor(node)
        if m is None:
            continue
        _modelled(m, f"Node {node['metadata']['name']}",
                  f"status.nodeInfo.kubeletVersion {node['status']['nodeInfo']['kubeletVersion']}")
        minors[m] += 1
    # the control plane: its kube-apiserver's image where the dump has it; else at least as new as every kubelet
    # (version skew policy: a kubelet is never newer than kube-apiserver, and may be up to three minors older,
    # two before 1.28), so mid-upgrade the newest kubelets'
    apiserver = _apiserver_minor(objects)
    if apiserver is not None:
        _modelled(apiserver, "Pod kube-system/kube-apiserver", f"the kube-apiserver image's version 1.{apiserver}")
    elif not minors:
        return None
    minor = apiserver if apiserver is not None else max(minors)
    if set(minors) - {minor}:
        source = "its kube-apiserver's image" if apiserver is not None else \
            "the newest: no kubelet is newer than its API server"
        kubelets = ", ".join(f"1.{m} ({n} node{'s' if n > 1 else ''})" for m, n in sorted(minors.items()))
        skew = 3 if minor >= 28 else 2
        beyond = sorted(m for m in minors if minor - m > skew or m > minor)
        warnings.append(f"the kubelets run {kubelets} and the control plane 1.{minor} ({source}): each kubelet "
                        "runs its node's version (all run the given one where the run sets another)"
                        + (f" (1.{', 1.'.join(str(m) for m in beyond)}: outside the version skew policy, which lets "
                           f"a kubelet be up to {skew} minors older than its API server, never newer)"
                           if beyond else ""))
    return f"1.{minor}"


def _status_problem(pod: Obj) -> str | None:
    """What in a pod's status a kubelet would not have written (the parts the restore reads), or None."""
    status = pod.get("status")
    if status is None:
        return None
    if not isinstance(status, dict):
        return "status: expected a mapping"
    for part_name in ("containerStatuses", "initContainerStatuses"):
        items = status.get(part_name)
        if items is None:
            continue
        if not isinstance(items, list):
            return f"status.{part_name}: expected a list"
        for i, cs in enumerate(items):
            where = f"status.{part_name}[{i}]"
            if not isinstance(cs, dict) or not isinstance(cs.get("name"), str):
                return f"{where}: expected a container status with a name"
            rc = cs.get("restartCount", 0)
            if not isinstance(rc, int) or isinstance(rc, bool) or rc < 0:
                return f"{where}.restartCount: expected a non-negative integer"
            for part in ("state", "lastState"):
                st = cs.get(part) or {}
                if not isinstance(st, dict) or any(not isinstance(v, dict) for v in st.values()):
                    return f"{where}.{part}: expected a mapping of running/waiting/terminated"
                for v in st.values():
                    for k in ("startedAt", "finishedAt"):
                        ts = v.get(k)
                        if ts is not None:
                            try:
                                parse_time(str(ts))
                            except ValueError:
                                return f"{where}.{part}.{k}: {ts!r} is not an RFC 3339 time"
                    code = v.get("exitCode")
                    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
                        return f"{where}.{part}.exitCode: expected an integer"
    return None


def _bad_pod_status(objects: list[Obj], warnings: list[str]) -> None:
    """A pod whose container statuses are not as a kubelet writes them keeps its phase, but its containers are
    not adopted: its kubelet starts them afresh."""
    bad = []
    for o in objects:
        if o["kind"] != "Pod":
            continue
        problem = _status_problem(o)
        if problem is not None:
            bad.append(f"{_name(o)} ({problem})")
            if isinstance(o.get("status"), dict):
                for part_name in ("containerStatuses", "initContainerStatuses"):
                    o["status"].pop(part_name, None)
                o["status"].pop("podIP", None)
            else:
                o.pop("status")
    if bad:
        warnings.append(f"{len(bad)} pods have container statuses a kubelet would not write: {_few(bad)}; their "
                        "containers are not adopted (their kubelet starts them afresh)")


def _check_node_status(objects: list[Obj]) -> None:
    """A Node's kubelet goes on from the conditions its Node has (the dump's): without them it has none to
    update, so a Node without them is not one read from a cluster."""
    for node in (o for o in objects if o["kind"] == "Node"):
        status = node.get("status")
        conditions = status.get("conditions") if isinstance(status, dict) else None
        if not isinstance(conditions, list) or not all(isinstance(c, dict) and isinstance(c.get("type"), str)
                                                       for c in conditions):
            raise DumpError(f"Node {node['metadata']['name']}", "status.conditions: expected the list of conditions "
                                                                "its kubelet writes (kubectl get nodes -o yaml has "
                                                                "them)")


def _missing_nodes(objects: list[Obj], warnings: list[str]) -> None:
    nodes = {o["metadata"]["name"] for o in objects if o["kind"] == "Node"}
    orphans = [o for o in objects if o["kind"] == "Pod" and (o.get("spec") or {}).get("nodeName")
               and o["spec"]["nodeName"] not in nodes]
    if orphans:
        missing = sorted({o["spec"]["nodeName"] for o in orphans})
        warnings.append(f"{len(orphans)} pods are bound to nodes missing from the dump ({_few(missing)}): "
                        f"{_few([_name(o) for o in orphans])}; no kubelet runs them, and the pod garbage collector "
                        "deletes them as orphans, as it would in the cluster (add the Nodes to the dump to keep them)")


def _missing_owners(objects: list[Obj], warnings: list[str]) -> None:
    """An owner that is missing although its kind was dumped is gone: the garbage collector deletes its
    dependents, as in the cluster. An owner whose kind is not in the dump at all was not dumped: the reference is
    dropped, so that the collector leaves the object alone (it then has no controller in the run)."""
    uids = {o["metadata"].get("uid") for o in objects}
    kinds = {o["kind"] for o in objects}
    gone: list[str] = []
    dropped: dict[str, list[str]] = {}
    for o in objects:
        refs = o["metadata"].get("ownerReferences")
        if not refs:
            continue
        kept = []
        for r in refs:
            if not isinstance(r, dict) or r.get("uid") in uids:
                kept.append(r)
            elif r.get("kind") in kinds:
                kept.append(r)
                gone.append(f"{_name(o)} (owner {r.get('kind')} {r.get('name')})")
            else:
                dropped.setdefault(str(r.get("kind")), []).append(_name(o))
        if len(kept) != len(refs):
            if kept:
                o["metadata"]["ownerReferences"] = kept
            else:
                del o["metadata"]["ownerReferences"]
    if gone:
        warnings.append(f"{len(gone)} objects have owners missing from the dump: {_few(gone)}; the garbage "
                        "collector deletes them, as it would in the cluster")
    for kind, names in sorted(dropped.items()):
        warnings.append(f"the dump has no {kind} objects, which own {len(names)} objects ({_few(names)}); their "
                        f"ownerReferences to a {kind} are dropped, so nothing controls them in the run (add "
                        f"{kind.lower()}s to the kubectl get command to keep them)")

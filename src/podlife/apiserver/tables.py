"""Table conversion (meta.k8s.io Table): the columns kubectl prints for each resource.

The column sets follow pkg/printers/internalversion/printers.go (AddHandlers: one column definition list per
kind, priority 1 = shown with -o wide). Pods use podlife.printers.pod_cells (pod_row's values), what also
writes the summary's tables. A kind without its own printer gets the default table (Name, Created At;
staging/src/k8s.io/apiserver/pkg/registry/rest/table.go), a custom resource its CRD's additionalPrinterColumns
(staging/src/k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson

from podlife.api.meta import Obj, get_condition
from podlife.printers import human_duration, parse_time, pod_cells
from podlife.versions import Profile

Column = tuple[str, str, int, str]   # name, type, priority, format
Row = list[Any]


def _age(obj: Obj, now: datetime) -> str:
    ts = obj["metadata"].get("creationTimestamp")
    return human_duration((now - parse_time(ts)).total_seconds()) if ts else "<unknown>"


def _since(ts: str | None, now: datetime) -> str:
    return human_duration((now - parse_time(ts)).total_seconds()) if ts else "<unknown>"


def _containers(spec: Obj) -> tuple[str, str]:
    cs = spec.get("containers") or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _selector(sel: Obj | None) -> str:
    from podlife.api.selectors import to_string

    return to_string(sel) or "<none>"


def _pod(o: Obj, now: datetime) -> Row:
    name, ready, status, restarts, age, node = pod_cells(o, now)
    st = o.get("status") or {}
    gates = (o.get("spec") or {}).get("readinessGates")
    gate_cell = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in st.get("conditions") or ()}
        gate_cell = f"{sum(conds.get(g.get('conditionType')) == 'True' for g in gates)}/{len(gates)}"
    return [name, ready, status, restarts, age, st.get("podIP") or "<none>", node,
            st.get("nominatedNodeName") or "<none>", gate_cell]


def _node(o: Obj, now: datetime) -> Row:
    st = o.get("status") or {}
    ready = get_condition(o, "Ready")
    status = "Unknown"
    if ready is not None:
        status = ("Ready" if ready.get("status") == "True" else
                  "NotReady" if ready.get("status") == "False" else "Unknown")
    if (o.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = o["metadata"].get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/") and "/" in k
                   and k.split("/", 1)[1])
    if labels.get("kubernetes.io/role"):
        roles = sorted({*roles, labels["kubernetes.io/role"]})
    info = st.get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in st.get("addresses") or ()}
    return [o["metadata"]["name"], status, ",".join(roles) or "<none>", _age(o, now),
            info.get("kubeletVersion", ""), addrs.get("InternalIP", "<none>"), addrs.get("ExternalIP", "<none>"),
            info.get("osImage", "<unknown>"), info.get("kernelVersion", "<unknown>"),
            info.get("containerRuntimeVersion", "<unknown>")]


def _namespace(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], (o.get("status") or {}).get("phase", ""), _age(o, now)]


def _deployment(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers((spec.get("template") or {}).get("spec") or {})
    return [o["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), _age(o, now), names, images,
            _selector(spec.get("selector"))]


def _replicaset(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers((spec.get("template") or {}).get("spec") or {})
    return [o["metadata"]["name"], spec.get("replicas", 0), st.get("replicas", 0), st.get("readyReplicas", 0),
            _age(o, now), names, images, _selector(spec.get("selector"))]


def _statefulset(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers((spec.get("template") or {}).get("spec") or {})
    return [o["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 0)}", _age(o, now),
            names, images]


def _daemonset(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    tspec = (spec.get("template") or {}).get("spec") or {}
    names, images = _containers(tspec)
    sel = ",".join(f"{k}={v}" for k, v in sorted((tspec.get("nodeSelector") or {}).items())) or "<none>"
    return [o["metadata"]["name"], st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
            st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0), sel,
            _age(o, now), names, images, _selector(spec.get("selector"))]


def _job_status(o: Obj) -> str:
    """printJob's Status (1.30+): Complete or Failed, else Terminating while deleted, else Suspended,
    FailureTarget or SuccessCriteriaMet, else Running."""
    def holds(ctype: str) -> bool:
        c = get_condition(o, ctype)
        return c is not None and c.get("status") == "True"
    for ctype in ("Complete", "Failed"):
        if holds(ctype):
            return ctype
    if o["metadata"].get("deletionTimestamp"):
        return "Terminating"
    return next((c for c in ("Suspended", "FailureTarget", "SuccessCriteriaMet") if holds(c)), "Running")


def _job(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    names, images = _containers((spec.get("template") or {}).get("spec") or {})
    completions = spec.get("completions")
    done = st.get("succeeded", 0)
    shown = f"{done}/{completions}" if completions is not None else (
        f"{done}/1 of {spec['parallelism']}" if (spec.get("parallelism") or 1) > 1 else f"{done}/1")
    start, end = st.get("startTime"), st.get("completionTime")
    duration = ""
    if start:
        stop = parse_time(end) if end else now
        duration = human_duration((stop - parse_time(start)).total_seconds())
    return [o["metadata"]["name"], _job_status(o), shown, duration, _age(o, now), names, images,
            _selector(spec.get("selector"))]


def _cronjob(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    jspec = ((spec.get("jobTemplate") or {}).get("spec") or {})
    names, images = _containers((jspec.get("template") or {}).get("spec") or {})
    last = st.get("lastScheduleTime")
    return [o["metadata"]["name"], spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            str(bool(spec.get("suspend"))), len(st.get("active") or ()), _since(last, now) if last else "<none>",
            _age(o, now), names, images, _selector(jspec.get("selector"))]


def _service(o: Obj, now: datetime) -> Row:
    spec = o.get("spec") or {}
    ports = ",".join(f"{p.get('port')}" + (f":{p['nodePort']}" if p.get("nodePort") else "")
                     + f"/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or ()) or "<none>"
    ext = spec.get("externalIPs") or []
    lb = [i.get("ip") or i.get("hostname")
          for i in ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()]
    external = ",".join(lb + ext) or ("<pending>" if spec.get("type") == "LoadBalancer" else "<none>")
    if spec.get("type") == "ExternalName":
        external = spec.get("externalName", "")
    sel = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items())) or "<none>"
    return [o["metadata"]["name"], spec.get("type", "ClusterIP"), spec.get("clusterIP") or "<none>", external,
            ports, _age(o, now), sel]


def _configmap(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age(o, now)]


def _controllerrevision(o: Obj, now: datetime) -> Row:
    """printControllerRevision: the controller as formatResourceName with its kind (daemonset.apps/agent)."""
    ref = next((r for r in o["metadata"].get("ownerReferences") or () if r.get("controller")), None)
    controller = "<none>"
    if ref is not None:
        group = (ref.get("apiVersion") or "").rpartition("/")[0] if "/" in (ref.get("apiVersion") or "") else ""
        controller = (f"{ref.get('kind', '')}.{group}" if group else ref.get("kind", "")).lower() + "/" + ref["name"]
    return [o["metadata"]["name"], controller, o.get("revision", 0), _age(o, now)]


def _secret(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], o.get("type", "Opaque"), len(o.get("data") or {}), _age(o, now)]


def _serviceaccount(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], len(o.get("secrets") or ()), _age(o, now)]


def _event(o: Obj, now: datetime) -> Row:
    inv = o.get("involvedObject") or {}
    last = o.get("lastTimestamp") or o.get("eventTime") or o["metadata"].get("creationTimestamp")
    first = o.get("firstTimestamp") or o.get("eventTime") or o["metadata"].get("creationTimestamp")
    src = o.get("source") or {}
    source = src.get("component", "") + (f", {src['host']}" if src.get("host") else "")
    obj = f"{(inv.get('kind') or '').lower()}/{inv.get('name', '')}"
    return [_since(last, now), o.get("type", ""), o.get("reason", ""), obj, (o.get("message") or "").strip(),
            inv.get("fieldPath", ""), source, _since(first, now), o.get("count", 1), o["metadata"]["name"]]


def _endpoints(o: Obj, now: datetime) -> Row:
    addrs = [f"{a.get('ip')}:{p.get('port')}" if p else a.get("ip", "")
             for s in o.get("subsets") or () for a in s.get("addresses") or ()
             for p in (s.get("ports") or [None])]
    shown = ",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")
    return [o["metadata"]["name"], shown or "<none>", _age(o, now)]


def _pvc(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    cap = (st.get("capacity") or {}).get("storage", "")
    modes = _access_modes(st.get("accessModes") or ())
    return [o["metadata"]["name"], st.get("phase", ""), spec.get("volumeName", ""), cap, modes,
            spec.get("storageClassName") or "", _age(o, now), spec.get("volumeMode", "Filesystem")]


def _pv(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace')}/{ref.get('name')}" if ref else ""
    return [o["metadata"]["name"], (spec.get("capacity") or {}).get("storage", ""),
            _access_modes(spec.get("accessModes") or ()), spec.get("persistentVolumeReclaimPolicy", ""),
            st.get("phase", ""), claim, spec.get("storageClassName", ""), st.get("reason", ""), _age(o, now),
            spec.get("volumeMode", "Filesystem")]


def _access_modes(modes: Any) -> str:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
    return ",".join(short.get(m, m) for m in modes)


def _hpa(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    targets = []
    current = {m.get("resource", {}).get("name"): m
               for m in st.get("currentMetrics") or () if m.get("type") == "Resource"}
    for m in spec.get("metrics") or ():
        if m.get("type") != "Resource":
            targets.append("<unknown>")
            continue
        res = m.get("resource") or {}
        want = (res.get("target") or {}).get("averageUtilization")
        cur = ((current.get(res.get("name")) or {}).get("resource") or {}).get("current", {}).get("averageUtilization")
        targets.append(f"{res.get('name')}: {'<unknown>' if cur is None else f'{cur}%'}/{want}%")
    return [o["metadata"]["name"], f"{ref.get('kind')}/{ref.get('name')}", ", ".join(targets) or "<none>",
            spec.get("minReplicas", 1), spec.get("maxReplicas", 0), st.get("currentReplicas", 0), _age(o, now)]


def _pdb(o: Obj, now: datetime) -> Row:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], str(spec.get("minAvailable", "N/A")), str(spec.get("maxUnavailable", "N/A")),
            st.get("disruptionsAllowed", 0), _age(o, now)]


def _lease(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], (o.get("spec") or {}).get("holderIdentity", ""), _age(o, now)]


def _apiservice(o: Obj, now: datetime) -> Row:
    """kube-aggregator pkg/registry/apiservice/etcd/etcd.go ConvertToTable."""
    ref = (o.get("spec") or {}).get("service")
    service = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else "Local"
    cond = next((c for c in (o.get("status") or {}).get("conditions") or () if c.get("type") == "Available"), None)
    status = "Unknown"
    if cond is not None:
        status = cond.get("status", "")
        if status != "True" and cond.get("reason"):
            status = f"{status} ({cond['reason']})"
    return [o["metadata"]["name"], service, status, _age(o, now)]


def _priorityclass(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], o.get("value", 0), str(bool(o.get("globalDefault"))), _age(o, now),
            o.get("preemptionPolicy", "PreemptLowerPriority")]


def _crd(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], o["metadata"].get("creationTimestamp", "")]


def _default(o: Obj, now: datetime) -> Row:
    return [o["metadata"]["name"], o["metadata"].get("creationTimestamp", "")]


_N = ("Name", "string", 0, "name")
_AGE = ("Age", "string", 0, "")


def _c(name: str, priority: int = 0, type_: str = "string") -> Column:
    return (name, type_, priority, "")


_WORKLOAD_WIDE = (_c("Containers", 1), _c("Images", 1), _c("Selector", 1))
PRINTERS: dict[str, tuple[tuple[Column, ...], Callable[[Obj, datetime], Row]]] = {
    "Pod": ((_N, _c("Ready"), _c("Status"), _c("Restarts"), _AGE, _c("IP", 1), _c("Node", 1),
             _c("Nominated Node", 1), _c("Readiness Gates", 1)), _pod),
    "Node": ((_N, _c("Status"), _c("Roles"), _AGE, _c("Version"), _c("Internal-IP", 1), _c("External-IP", 1),
              _c("OS-Image", 1), _c("Kernel-Version", 1), _c("Container-Runtime", 1)), _node),
    "Namespace": ((_N, _c("Status"), _AGE), _namespace),
    "Deployment": ((_N, _c("Ready"), _c("Up-to-date", 0, "integer"), _c("Available", 0, "integer"), _AGE,
                    *_WORKLOAD_WIDE), _deployment),
    "ReplicaSet": ((_N, _c("Desired", 0, "integer"), _c("Current", 0, "integer"), _c("Ready", 0, "integer"), _AGE,
                    *_WORKLOAD_WIDE), _replicaset),
    "StatefulSet": ((_N, _c("Ready"), _AGE, _c("Containers", 1), _c("Images", 1)), _statefulset),
    "DaemonSet": ((_N, _c("Desired", 0, "integer"), _c("Current", 0, "integer"), _c("Ready", 0, "integer"),
                   _c("Up-to-date", 0, "integer"), _c("Available", 0, "integer"), _c("Node Selector"), _AGE,
                   *_WORKLOAD_WIDE), _daemonset),
    "Job": ((_N, _c("Status"), _c("Completions"), _c("Duration"), _AGE, *_WORKLOAD_WIDE), _job),
    "CronJob": ((_N, _c("Schedule"), _c("Timezone"), _c("Suspend", 0, "boolean"), _c("Active", 0, "integer"),
                 _c("Last Schedule"), _AGE, *_WORKLOAD_WIDE), _cronjob),
    "Service": ((_N, _c("Type"), _c("Cluster-IP"), _c("External-IP"), _c("Port(s)"), _AGE, _c("Selector", 1)),
                _service),
    "ConfigMap": ((_N, _c("Data", 0, "integer"), _AGE), _configmap),
    "ControllerRevision": ((_N, _c("Controller"), _c("Revision", 0, "integer"), _AGE), _controllerrevision),
    "Secret": ((_N, _c("Type"), _c("Data", 0, "integer"), _AGE), _secret),
    "ServiceAccount": ((_N, _c("Secrets", 0, "integer"), _AGE), _serviceaccount),
    "Event": ((_c("Last Seen"), _c("Type"), _c("Reason"), _c("Object"), _c("Message"), _c("Subobject", 1),
               _c("Source", 1), _c("First Seen", 1), _c("Count", 1, "integer"), ("Name", "string", 1, "name")),
              _event),
    "Endpoints": ((_N, _c("Endpoints"), _AGE), _endpoints),
    "PersistentVolumeClaim": ((_N, _c("Status"), _c("Volume"), _c("Capacity"), _c("Access Modes"),
                               _c("StorageClass"), _AGE, _c("VolumeMode", 1)), _pvc),
    "PersistentVolume": ((_N, _c("Capacity"), _c("Access Modes"), _c("Reclaim Policy"), _c("Status"),
                          _c("Claim"), _c("StorageClass"), _c("Reason"), _AGE, _c("VolumeMode", 1)), _pv),
    "HorizontalPodAutoscaler": ((_N, _c("Reference"), _c("Targets"), _c("MinPods", 0, "integer"),
                                 _c("MaxPods", 0, "integer"), _c("Replicas", 0, "integer"), _AGE), _hpa),
    "PodDisruptionBudget": ((_N, _c("Min Available"), _c("Max Unavailable"), _c("Allowed Disruptions", 0, "integer"),
                             _AGE), _pdb),
    "Lease": ((_N, _c("Holder"), _AGE), _lease),
    "APIService": ((_N, _c("Service"), _c("Available"), _AGE), _apiservice),
    "PriorityClass": ((_N, _c("Value", 0, "integer"), _c("Global-Default", 0, "boolean"), _AGE,
                       _c("PreemptionPolicy", 1)), _priorityclass),
    "CustomResourceDefinition": ((_N, ("Created At", "date", 0, "")), _crd),
}
_DEFAULT = ((_N, ("Created At", "date", 0, "")), _default)


def _column_defs(cols: tuple[Column, ...]) -> list[dict[str, Any]]:
    return [{"name": n, "type": t, "format": f, "description": "", "priority": p} for n, t, p, f in cols]


def _partial(obj: Obj, version: str) -> dict[str, Any]:
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}", "metadata": obj["metadata"]}


def _without_column(printer_: tuple[tuple[Column, ...], Callable[[Obj, datetime], Row]], index: int):
    cols, row = printer_
    return cols[:index] + cols[index + 1:], lambda o, now: (lambda r: r[:index] + r[index + 1:])(row(o, now))


def printer(kind: str, crd: Obj | None, served_version: str, profile: Profile | None = None
            ) -> tuple[tuple[Column, ...], Callable[[Obj, datetime], Row]]:
    if crd is not None:
        return _custom_printer(crd, served_version)
    found = PRINTERS.get(kind, _DEFAULT)
    if kind == "Job" and profile is not None and not profile.job_status_column:
        return _without_column(found, 1)
    return found


def row_maker(kind: str, now: datetime, *, version: str = "v1", include: str = "Metadata", crd: Obj | None = None,
              served_version: str = "", profile: Profile | None = None
              ) -> tuple[tuple[Column, ...], Callable[[Obj], dict[str, Any]]]:
    """The columns of a Table of ``kind`` and what makes one object's row; ``include`` is the includeObject
    option (None, Metadata, Object)."""
    cols, row = printer(kind, crd, served_version, profile)

    def make(o: Obj) -> dict[str, Any]:
        r: dict[str, Any] = {"cells": row(o, now)}
        if include == "Object":
            r["object"] = o
        elif include == "Metadata":
            r["object"] = _partial(o, version)
        return r
    return cols, make


def table(kind: str, objs: list[Obj], now: datetime, *, version: str = "v1", include: str = "Metadata",
          crd: Obj | None = None, served_version: str = "", headers: bool = True,
          list_meta: dict[str, Any] | None = None, profile: Profile | None = None) -> dict[str, Any]:
    """A Table of ``objs``."""
    cols, make = row_maker(kind, now, version=version, include=include, crd=crd, served_version=served_version,
                           profile=profile)
    return _head(cols, version, list_meta, headers, [make(o) for o in objs])


def encoded_table(cols: tuple[Column, ...], rows: list[bytes], *, version: str = "v1",
                  list_meta: dict[str, Any] | None = None) -> bytes:
    """The JSON of a Table (with its column definitions) from its rows' JSON: what orjson makes of ``table``'s
    document, byte for byte (the rows are its last member), without encoding each row again."""
    head = orjson.dumps(_head(cols, version, list_meta, True, []))
    return b"".join((head[:-3], b"[", b",".join(rows), b"]}"))


def _head(cols: tuple[Column, ...], version: str, list_meta: dict[str, Any] | None, headers: bool,
          rows: list[Any]) -> dict[str, Any]:
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": list_meta or {},
            "columnDefinitions": _column_defs(cols) if headers else None, "rows": rows}


# ---- custom resources: additionalPrinterColumns -------------------------------------------------------------

def _custom_printer(crd: Obj, served_version: str):
    cols_spec: list[Obj] = []
    for v in (crd.get("spec") or {}).get("versions") or ():
        if v.get("name") == served_version:
            cols_spec = v.get("additionalPrinterColumns") or []
    if not cols_spec:
        return ((_N, _AGE), lambda o, now: [o["metadata"]["name"], _age(o, now)])
    cols: list[Column] = [_N]
    for c in cols_spec:
        cols.append((c.get("name", ""), c.get("type", "string"), int(c.get("priority", 0)), c.get("format", "")))

    def row(o: Obj, now: datetime) -> Row:
        out: Row = [o["metadata"]["name"]]
        for c in cols_spec:
            value = _jsonpath(o, c.get("jsonPath", ""))
            if c.get("type") == "date" and isinstance(value, str):
                value = _since(value, now)
            out.append(value)
        return out
    return tuple(cols), row


def _jsonpath(obj: Any, path: str) -> Any:
    """The simple ``.a.b`` paths CRD printer columns use (a list element by ``[n]``)."""
    cur = obj
    for part in [p for p in path.replace("[", ".[").split(".") if p]:
        if part.startswith("[") and part.endswith("]") and isinstance(cur, list):
            try:
                cur = cur[int(part[1:-1])]
            except (ValueError, IndexError):
                return None
        elif isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
        if cur is None:
            return None
    return cur

"""Kubelet log lines: klog's header, an optional journald prefix, and the messages that matter to a pod's life.

Two message styles are read: the printf style of the 1.18-era kubelet and the structured style (``"msg"
key=value``, KEP-1602) used from 1.21 on. Both map to the same fact kinds, so a legacy log compares with a
modelled one of either style. A line without a klog header is not a kubelet line: the reader counts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from podlife.diagnose.facts import mask

# journald: "Jun 03 20:39:37 host kubelet[3033]: " or podlife's "node-1 kubelet[3033]: "
_JOURNAL = re.compile(r"^(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? )?"
                      r"(?P<host>[\w.-]+) (?P<comp>[\w.-]+)\[\d+\]: ")
# klog: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
_KLOG = re.compile(r"^(?P<sev>[IWEF])(?P<mo>\d\d)(?P<dd>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)\.(?P<us>\d{1,9})"
                   r" +\d+ (?P<file>[\w./-]+):(?P<line>\d+)\] (?P<msg>.*)$")


@dataclass
class KlogLine:
    month: int
    day: int
    seconds: float                 # since midnight
    severity: str
    file: str
    line: int
    message: str
    host: str | None
    component: str | None


def parse_line(text: str) -> KlogLine | None:
    text = text.rstrip("\r\n")
    host = comp = None
    m = _JOURNAL.match(text)
    if m:
        host, comp = m["host"], m["comp"]
        text = text[m.end():]
    k = _KLOG.match(text.lstrip())
    if k is None:
        return None
    secs = int(k["h"]) * 3600 + int(k["mi"]) * 60 + int(k["s"]) + int(k["us"]) / 10 ** len(k["us"])
    return KlogLine(int(k["mo"]), int(k["dd"]), secs, k["sev"], k["file"], int(k["line"]), k["msg"], host, comp)


@dataclass
class Said:
    """What one message says: a fact kind and what it names."""

    kind: str
    pod: str | None = None          # namespace/name
    uid: str | None = None
    container: str | None = None    # name
    cid: str | None = None          # container id (hex, no scheme)
    value: float | None = None
    detail: str = ""
    names: dict[str, str] = field(default_factory=dict)   # container id -> name learnt from the line
    node: str | None = None


# ---- structured (key=value) messages ----------------------------------------------------------------------

_KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|\{[^}]*\}|\S+)')


def _structured(msg: str) -> tuple[str, dict[str, str]] | None:
    if not msg.startswith('"'):
        return None
    m = re.match(r'"((?:[^"\\]|\\.)*)"', msg)
    if m is None:
        return None
    kv: dict[str, str] = {}
    for k, v in _KV.findall(msg[m.end():]):
        kv[k] = v[1:-1].replace('\\"', '"') if v.startswith('"') else v
    return m[1], kv


def _cid(v: str | None) -> str | None:
    if not v:
        return None
    v = v.split("://", 1)[-1]
    return v if re.fullmatch(r"[0-9a-f]{12,64}", v) else None


_STRUCTURED_KINDS = {
    "SyncLoop ADD": "sync-add", "SyncLoop UPDATE": "sync-update", "SyncLoop DELETE": "sync-delete",
    "SyncLoop REMOVE": "sync-remove", "Running preStop hook": "prestop-start", "PreStop hook completed":
    "prestop-done", "Killing container with a grace period": "kill", "Killing container with a grace period "
    "override": "kill-override", "Container exited normally": "exited", "Container termination failed with "
    "gracePeriod": "stop-failed", "Error syncing pod, skipping": "sync-error", "Skipping pod synchronization":
    "skip-sync", "Pod fully terminated and removed from etcd": "removed", "Status for pod updated successfully":
    "status", "Pod is terminated, but some containers are still running": "still-running", "Generating pod status":
    "generating-status", "Calling network plugin cni to tear down pod": "cni-teardown",
    "No sandbox for pod can be found. Need to start a new one": "no-sandbox", "Cancelling current pod sync":
    "cancel-sync", "PreStop hook failed": "prestop-failed", "PreStop hook not completed in grace period":
    "prestop-timeout", "Probe failed": "probe-failed", "Kubelet version": "kubelet-start",
    "Starting kubelet": "kubelet-start", "Evicting pod": "evict",
}


def _said_structured(msg: str, kv: dict[str, str]) -> Said:
    pod = kv.get("pod")
    if pod is None and kv.get("pods", "").startswith("["):
        pods = re.findall(r'"([^"]+)"', kv["pods"])
        pod = pods[0] if pods else None
    said = Said(_STRUCTURED_KINDS.get(msg, "log:" + msg), pod=pod, uid=kv.get("podUID"),
                container=kv.get("containerName"), cid=_cid(kv.get("containerID")))
    if said.cid and said.container:
        said.names[said.cid] = said.container
    if "gracePeriod" in kv:
        said.value = _num(kv["gracePeriod"])
    if msg == "SyncLoop (PLEG): event for pod":
        m = re.search(r'"?Type"?:"(\w+)"[ ,]"?Data"?:"?(\w+)', kv.get("event", ""))
        said.kind, said.cid = ("pleg-" + m[1], _cid(m[2])) if m else ("pleg", None)
    elif msg == "Event occurred":
        said.kind = "event:" + kv.get("reason", "")
        said.detail = kv.get("message", "")
        if kv.get("kind") == "Node":
            said.node, said.pod = kv.get("object"), None
        elif kv.get("kind") == "Pod" and said.pod is None:
            said.pod = kv.get("object")
        fp = re.match(r"spec\.(?:init)?[cC]ontainers\{(.+)\}", kv.get("fieldPath", ""))
        said.container = fp[1] if fp else None
    elif said.kind in ("stop-failed", "sync-error", "skip-sync") or msg.endswith("from runtime service failed"):
        said.detail = kv.get("err", kv.get("errors", ""))
        if msg.endswith("from runtime service failed"):
            said.kind, said.cid = "runtime-error", _cid(kv.get("containerID"))
            said.detail = msg.split()[0] + ": " + said.detail
    elif said.kind == "kubelet-start":
        said.detail = kv.get("kubeletVersion", "")
    elif said.kind == "status":
        said.detail = kv.get("status", "")
    if "PLEG is not healthy" in msg + kv.get("err", "") + kv.get("errors", ""):
        said.kind = "pleg-unhealthy" if said.kind.startswith("log:") else said.kind
    return said


def _num(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


# ---- legacy (printf) messages -------------------------------------------------------------------------------

_POD_FULL = r'"?(?P<name>[\w.-]+)_(?P<ns>[\w.-]+)\((?P<uid>[0-9a-f-]{36})\)"?'
_LEGACY: list[tuple[str, re.Pattern[str]]] = [(k, re.compile(p)) for k, p in (
    ("sync-add", r'^SyncLoop \(ADD, "\w+"\): ' + _POD_FULL),
    ("sync-update", r'^SyncLoop \(UPDATE, "\w+"\): ' + _POD_FULL),
    ("sync-delete", r'^SyncLoop \(DELETE, "\w+"\): ' + _POD_FULL),
    ("sync-remove", r'^SyncLoop \(REMOVE, "\w+"\): ' + _POD_FULL),
    ("pleg", r'^SyncLoop \(PLEG\): ' + _POD_FULL + r', event: &pleg.PodLifecycleEvent\{ID:"[\w-]+", '
             r'Type:"(?P<type>\w+)", Data:"?(?P<cid>\w+)'),
    ("prestop-start", r'^Running preStop hook for container "(?:\w+://)?(?P<cid>[0-9a-f]+)"'),
    ("prestop-done", r'^preStop hook for container \{"\w+" "(?P<cid>[0-9a-f]+)"\} completed'),
    ("prestop-timeout", r'^preStop hook for container "?\{?"?(?:\w+://)?(?P<cid>[0-9a-f]+).* did not complete'),
    ("kill", r'^Killing container "(?:\w+://)?(?P<cid>[0-9a-f]+)" with (?P<v>-?\d+) second grace period'),
    ("kill-override", (r'^Killing container \{"\w+" "(?P<cid>[0-9a-f]+)"\}, but using (?P<v>-?\d+) second grace '
                      r'period override')),
    ("exited", r'^Container "(?:\w+://)?(?P<cid>[0-9a-f]+)" exited normally'),
    ("stop-failed", (r'^Container "(?:\w+://)?(?P<cid>[0-9a-f]+)" termination failed with gracePeriod (?P<v>-?\d+): '
                    r'(?P<detail>.*)')),
    ("runtime-error", r'^(?P<call>\w+) "?(?P<cid>[0-9a-f]{12,64})?"? ?from runtime service failed: (?P<detail>.*)'),
    ("sync-error", r'^Error syncing pod [\w-]+ \(' + _POD_FULL + r'\), skipping: (?P<detail>.*)'),
    ("skip-sync", r'^skipping pod synchronization - (?P<detail>.*)'),
    ("still-running", r'^Pod ' + _POD_FULL + r' is terminated, but some containers are still running'),
    ("removed", r'^Pod ' + _POD_FULL + r' fully terminated and removed from etcd'),
    ("status", r'^Status for pod ' + _POD_FULL + r' updated successfully: (?P<detail>.*)'),
    ("generating-status", r'^Generating status for ' + _POD_FULL),
    ("cni-teardown", r'^Calling network plugin \w+ to tear down pod "(?P<name>[\w.-]+)_(?P<ns>[\w.-]+)"'),
    ("no-sandbox", r'^No sandbox for pod ' + _POD_FULL + ' can be found'),
    ("cancel-sync", r'^Cancelling current pod sync for ' + _POD_FULL),
    ("event", (r'^Event\(v1\.ObjectReference\{Kind:"(?P<okind>\w+)", Namespace:"(?P<ns>[\w.-]*)", '
              r'Name:"(?P<name>[\w.-]+)".*?FieldPath:"(?P<fp>[^"]*)"\}\): type: \'\w+\' reason: \'(?P<reason>\w+)\' '
              r'(?P<detail>.*)')),
    ("kubelet-start", r'^(?:Version: |Kubelet version: ?)(?P<detail>v?\d+\.\d+\S*)'),
    ("kubelet-start", r'^Starting kubelet'),
    ("pleg-unhealthy", r'PLEG is not healthy(?P<detail>.*)'),
    ("evict", r'^Evicting pod ' + _POD_FULL),
    ("probe-failed", r'^(?P<detail>(?:Liveness|Readiness|Startup) probe for .* failed.*)'),
)]

# the seed-000 kubelet prints the container statuses with each status patch
_STATUS_IDS = re.compile(r"\{Name:(?P<name>[\w.-]+) State:.*?ContainerID:(?:\w+://)?(?P<cid>[0-9a-f]{12,64})\}")


def _said_legacy(msg: str) -> Said:
    for kind, pat in _LEGACY:
        m = pat.search(msg)
        if m is None:
            continue
        g = m.groupdict()
        said = Said(kind, pod=f"{g['ns']}/{g['name']}" if g.get("name") and g.get("ns") is not None else None,
                    uid=g.get("uid"), cid=_cid(g.get("cid")), value=_num(g["v"]) if g.get("v") else None,
                    detail=g.get("detail") or "")
        if kind == "pleg":
            said.kind = "pleg-" + g["type"]
        elif kind == "runtime-error":
            said.detail = f"{g['call']}: {said.detail}"
        elif kind == "event":
            said.kind = "event:" + g["reason"]
            if g["okind"] == "Node":
                said.node, said.pod = g["name"], None
            fp = re.match(r"spec\.(?:init)?[cC]ontainers\{(.+)\}", g["fp"])
            said.container = fp[1] if fp else None
        elif kind == "status":
            said.names = {s["cid"]: s["name"] for s in _STATUS_IDS.finditer(msg)}
        return said
    pod = re.search(_POD_FULL, msg)
    return Said("log:" + mask(msg), pod=f"{pod['ns']}/{pod['name']}" if pod else None, uid=pod["uid"] if pod else None)


def said(msg: str) -> Said:
    """The fact kind of one kubelet message and what it names."""
    s = _structured(msg)
    return _said_structured(*s) if s is not None else _said_legacy(msg)


def version_of(detail: str) -> str | None:
    m = re.match(r"v?(\d+)\.(\d+)", detail)
    return f"{m[1]}.{m[2]}" if m else None


def style(msg: str) -> str:
    return "structured" if msg.startswith('"') else "legacy"


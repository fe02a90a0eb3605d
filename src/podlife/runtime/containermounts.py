"""What a container's mount namespace binds (kubelet_pods.go makeMounts, makeHostsMount): its volumes and the
kubelet-managed /etc/hosts, as the process runtime hands them to podlife.runtime.mountns."""

from __future__ import annotations

import os

from podlife.api.expansion import expand
from podlife.api.meta import Obj
from podlife.runtime import hostsfile

API_DATA = ("configMap", "secret", "downwardAPI", "projected")   # always mounted read-only (kubelet 1.10+)


def volume_mounts(pod: Obj, spec: Obj, pod_dir: str, env: dict[str, str]) -> tuple[list[dict], list[str]]:
    """The container's mounts (kubelet_pods.go makeMounts: each volumeMount's volume, its subPath or
    subPathExpr) as {"source", "target", "readonly", "file"}, shallowest target first (containerd sorts them
    so), and the directories of memory-medium emptyDirs."""
    vols = {v.get("name", ""): v for v in pod["spec"].get("volumes") or ()}
    mounts, tmpfs = [], []
    for vm in spec.get("volumeMounts") or ():
        vol = vols.get(vm.get("name", ""))
        if vol is None:
            continue
        if "hostPath" in vol:
            hp = vol["hostPath"] or {}
            base = hp.get("path", "")
            if hp.get("type") == "DirectoryOrCreate":
                os.makedirs(base, 0o755, exist_ok=True)
            elif hp.get("type") == "FileOrCreate" and not os.path.exists(base):
                open(base, "a").close()
        else:
            base = os.path.join(pod_dir, "volumes", vol["name"])
            os.makedirs(base, exist_ok=True)
            if "emptyDir" in vol and (vol["emptyDir"] or {}).get("medium") == "Memory":
                tmpfs.append(base)
        source = base
        sub = vm.get("subPath") or (expand(vm["subPathExpr"], env) if vm.get("subPathExpr") else "")
        if sub:
            source = os.path.realpath(os.path.join(base, sub))
            if not os.path.exists(source):
                os.makedirs(source, 0o755, exist_ok=True)   # kubelet: a missing subPath becomes a directory
        ro = bool(vm.get("readOnly")) or any(k in vol for k in API_DATA)
        mounts.append({"source": source, "target": vm.get("mountPath", ""), "readonly": ro,
                       "file": os.path.isfile(source)})
    mounts.sort(key=lambda m: len([p for p in m["target"].split("/") if p]))
    return mounts, tmpfs


def hosts_mount(pod: Obj, pod_dir: str, pod_ips: list[str]) -> dict:
    """kubelet_pods.go makeHostsMount: the pod's hosts file, (re)written at each container's creation as
    ensureHostsFile does, mounted read-write at /etc/hosts. A hostNetwork pod's copies this machine's."""
    node_hosts = b""
    if pod["spec"].get("hostNetwork"):
        with open(hostsfile.ETC_HOSTS, "rb") as f:
            node_hosts = f.read()
    path = os.path.join(pod_dir, hostsfile.FILE_NAME)
    with open(path, "wb") as f:
        f.write(hostsfile.content(pod, pod_ips, node_hosts))
    os.chmod(path, 0o644)
    return {"source": path, "target": hostsfile.ETC_HOSTS, "readonly": False, "file": True}

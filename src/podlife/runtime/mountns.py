"""A container's own mount namespace, built between fork and exec in the supervisor's child (as runc builds
one): the host's root file system read-only beneath a root directory of the container's own (writable, as an
image's top layer is, unless securityContext.readOnlyRootFilesystem), the host's other mounts (/proc, /dev,
/sys, …) bound as they are, the container's own /tmp and /var/tmp (podlife.runtime.privatetmp: the first
mounts it is handed) and the pod's volumes bound at their mount paths.

How: unshare(CLONE_NEWNS) and make every mount private (nothing leaks back to the host); the new root is a
directory on a tmpfs scratch holding a bind of each entry of the host's ``/`` (recursive, so /proc, /dev and
the rest come along; read-only where it is the root file system), except that a directory which must hold a
mount point the host lacks (``/`` for ``/test-volume``, ``/etc`` for ``/etc/config``) is itself made of binds
of its entries, one level down, with the mount point added. Binds rather than an overlay of ``/``: an overlay
does not see files the host creates after it is mounted. Then each volume mount (readOnly: remounted
read-only), the new root read-only where asked, and pivot_root into it as runc does (``pivot_root(".", ".")``, then the
old root detached). An exec'd command (kubectl exec, probes, hooks) joins the container's namespace with setns.
Mounts the host makes later (beneath a bound entry) reach the container only if they propagate: they do not,
as every mount is private.

Direct system calls through ctypes, not ``unshare(1)``/bubblewrap: the supervisor's child is already between
fork and exec, so the calls need no helper process nor a script of mount commands; bubblewrap (not installed
here) cannot add a mount point under a read-only root either. Python 3.11 has no os.unshare/os.setns (3.12
adds them). Measured on this machine (2 cores, load 15; median of 30 forks): a fork alone 0.7 ms; fork plus
the namespace 4-6 ms with volumes at top-level paths (26 entries of ``/`` bound) and 21 ms with one under
``/etc`` as well (its 145 entries bound one by one); ``unshare -m true`` costs what ``true`` does (2.2 ms:
process start-up).
"""

from __future__ import annotations

import ctypes
import os
import platform

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
# pivot_root has no glibc wrapper: its system call number per architecture
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
_LIBC = ctypes.CDLL(None, use_errno=True)


class MountError(OSError):
    """A mount step that failed; ``step`` names it for the container's StartError message."""

    def __init__(self, step: str, num: int) -> None:
        super().__init__(num, f"{step}: {os.strerror(num)}")
        self.step = step


def check(result: int, step: str) -> None:
    if result != 0:
        raise MountError(step, ctypes.get_errno())


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    check(_LIBC.mount(source.encode() if source else None, target.encode(), fstype.encode() if fstype else None,
                       ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")


def available() -> str | None:
    """None when containers can have mount namespaces here, else why not (said once at start)."""
    if platform.machine() not in _SYS_PIVOT_ROOT:
        return f"no pivot_root system call number known for {platform.machine()}"
    if os.geteuid() != 0:
        return "podlife is not running as root (mount namespaces need CAP_SYS_ADMIN)"
    pid = os.fork()
    if pid == 0:   # try it in a child that exits at once
        ok = _LIBC.unshare(CLONE_NEWNS) == 0 and _LIBC.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE),
                                                             None) == 0
        os._exit(0 if ok else 1)
    _pid, status = os.waitpid(pid, 0)
    return None if os.waitstatus_to_exitcode(status) == 0 else "unshare(CLONE_NEWNS) is not permitted here"


def _existing_ancestor(path: str) -> str:
    while not os.path.exists(path):
        path = os.path.dirname(path)
    return path


def _beneath(path: str, top: str) -> bool:
    top = os.path.normpath(top)
    return path == top or path.startswith(top.rstrip("/") + "/")


def _shadow(host: str, dest: str, shadowed: set[str], root_dev: int) -> None:
    """Fill ``dest`` (a directory on the scratch tmpfs) with every entry of ``host``: a directory that holds a
    missing mount point is shadowed the same way, one level down; anything else is bound (recursively, so the
    mounts below come along), read-only when it is on the host's root file system; a symlink is copied."""
    for name in sorted(os.listdir(host)):
        hp, dp = os.path.join(host, name), os.path.join(dest, name)
        if hp in shadowed:   # a symlink too (/var/run → /run): a real directory here, or a mount point
            os.mkdir(dp)     # made beneath would follow the link out to the host
            _shadow(hp, dp, shadowed, root_dev)
            continue
        if os.path.islink(hp):
            os.symlink(os.readlink(hp), dp)
            continue
        try:
            st = os.stat(hp)
        except OSError:
            continue
        if os.path.isdir(hp):
            os.mkdir(dp)
        else:
            open(dp, "a").close()
        _mount(hp, dp, None, MS_BIND | MS_REC)
        if st.st_dev == root_dev:
            _mount(None, dp, None, MS_REMOUNT | MS_BIND | MS_RDONLY)


def enter(mounts: list[dict], scratch: str, read_only_root: bool = True) -> None:
    """Build the container's namespace and pivot into it. ``mounts``: {"source", "target", "readonly",
    "file"} in the kubelet's order; ``scratch`` an existing directory on the host to mount the tmpfs on.
    ``read_only_root`` (securityContext.readOnlyRootFilesystem): the new root itself read-only; without it the
    root directory is the container's own, writable (``touch /checkfile`` works, as in an image's writable
    layer), while the host's directories bound in it (/usr, /etc, …) stay read-only."""
    check(_LIBC.unshare(CLONE_NEWNS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    root = os.path.join(scratch, "root")
    os.mkdir(root)
    _mount(root, root, None, MS_BIND)   # pivot_root wants a mount point
    # the directories that hold a mount point the host lacks are shadowed: a tmpfs directory of binds
    shadowed = {"/"}
    missing = []
    for i, m in enumerate(mounts):
        target = os.path.normpath(m["target"])
        if os.path.lexists(target) or any(_beneath(target, e["target"]) for e in mounts[:i]):
            continue   # (beneath an earlier mount: made in it below, nothing of the host's to shadow)
        missing.append(m)
        a = _existing_ancestor(target)
        while True:
            shadowed.add(a)
            if a == "/":
                break
            a = os.path.dirname(a)
    _shadow("/", root, shadowed, os.stat("/").st_dev)
    for m in missing:
        where = root + os.path.normpath(m["target"])
        if m.get("file"):
            os.makedirs(os.path.dirname(where), exist_ok=True)
            open(where, "a").close()
        else:
            os.makedirs(where, exist_ok=True)
    for m in mounts:
        target = root + os.path.normpath(m["target"])
        if not os.path.lexists(target):
            # beneath an earlier volume (/etc/hosts in a volume at /etc): made in that volume, as runc makes a
            # missing mount point; read-only remounts wait until every mount point is made
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if m.get("file"):
                open(target, "a").close()
            else:
                os.mkdir(target)
        _mount(m["source"], target, None, MS_BIND | MS_REC)
    for m in mounts:
        if m.get("readonly"):
            _mount(None, root + os.path.normpath(m["target"]), None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    if read_only_root:
        _mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY)
    os.chdir(root)
    check(_LIBC.syscall(_SYS_PIVOT_ROOT[platform.machine()], b".", b"."), "pivot_root")
    check(_LIBC.umount2(b".", MNT_DETACH), "umount old root")
    os.chdir("/")


def setns(pid: int, kind: str, flag: int, step: str) -> None:
    """Enter the ``kind`` namespace (``mnt``, ``uts``) of the process ``pid``."""
    fd = os.open(f"/proc/{pid}/ns/{kind}", os.O_RDONLY)
    try:
        check(_LIBC.setns(fd, flag), step)
    finally:
        os.close(fd)


def join(pid: int) -> None:
    """Enter the mount namespace of the container whose main process is ``pid``."""
    setns(pid, "mnt", CLONE_NEWNS, "setns")


def memory_medium(path: str) -> None:
    """An emptyDir with medium Memory: a tmpfs on its directory, once, in the supervisor's own namespace (so
    every container of the pod binds the same one, and it goes when the supervisor does)."""
    if not os.path.ismount(path):
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0777")


def detach_under(directory: str) -> None:
    """Lazily unmount every mount point below ``directory`` in this (private) mount namespace."""
    try:
        with open("/proc/self/mountinfo") as f:
            points = [line.split()[4] for line in f if len(line.split()) > 4]
    except OSError:
        return
    for point in sorted(points, reverse=True):
        if point.startswith(directory.rstrip("/") + "/"):
            _LIBC.umount2(point.encode(), MNT_DETACH)


def own_namespace() -> None:
    """The supervisor's own private mount namespace."""
    check(_LIBC.unshare(CLONE_NEWNS), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)

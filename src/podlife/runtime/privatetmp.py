"""A container's own /tmp and /var/tmp (process runtime, in a mount namespace).

In a real container /tmp is a directory of the image's root file system: writable (the container's writable
layer, unless securityContext.readOnlyRootFilesystem), private to the container instance, and gone when the
container is removed (containerd removes its snapshot with it). podlife's containers see the machine's
directories read-only, so each instance gets these two directories of its own in the pod's directory
(``containers/<name>/<id>-rootfs/tmp`` and ``.../var/tmp``, mode 1777 as in an image), bound before the
pod's volumes (a volume at /tmp/x lands in it, one at /tmp hides it) and removed when the instance's processes
are gone (with its mount namespace and its writable root, a tmpfs there): podlife's kubelet removes no
container (no container GC), and nothing reads an exited container's files.
"""

from __future__ import annotations

import os
import shutil

DIRS = ("/tmp", "/var/tmp")


def root_dir(pod_dir: str, name: str, container_id: str) -> str:
    """The container instance's directory of its own root files, in the pod's directory."""
    return os.path.join(pod_dir, "containers", name, f"{container_id[:8]}-rootfs")


def mounts(root: str, read_only: bool, volumes: list[dict]) -> list[dict]:
    """The binds of the instance's /tmp and /var/tmp (read-only with readOnlyRootFilesystem, as the image's
    would be), none where a volume is mounted at that path or above it (it would hide the bind)."""
    out = []
    for target in DIRS:
        if any(target == v or target.startswith(v + "/") for v in (os.path.normpath(m["target"]) for m in volumes)):
            continue
        source = root + target
        os.makedirs(source, exist_ok=True)
        os.chmod(source, 0o1777)   # makedirs' mode is masked by the umask and never sets the sticky bit
        out.append({"source": source, "target": target, "readonly": read_only, "file": False})
    return out


def remove(root: str) -> None:
    """The instance's directory goes with the container ("": it has none)."""
    if root:
        shutil.rmtree(root, ignore_errors=True)

"""Which program of this machine runs an image's ``sh``.

The busybox and alpine images' ``/bin/sh`` is BusyBox ash, which hands every variable of its environment on to the
commands it runs, names that are not shell identifiers included: the kubelet allows ``-`` and ``.`` in them
(``envFrom`` keys such as ``data-1``: apimachinery validation.IsEnvVarName), and the conformance test
``ConfigMap should be consumable via the environment`` (test/e2e/common/node/configmap.go) reads them back
through ``sh -c env`` in busybox 1.36. Debian's ``/bin/sh`` (dash, and Debian's busybox 1.35 too) drops them;
bash does not. So where this machine's ``sh`` is dash, such an image's ``sh`` runs as bash."""

from __future__ import annotations

import os
import shutil

ASH_IMAGES = frozenset({"busybox", "e2e-test-images/busybox", "alpine"})   # images.repository() names
_SH = frozenset({"sh", "/bin/sh", "ash", "/bin/ash"})


def stand_in(data_dir: str) -> str | None:
    """This machine's bash, or None when this machine's ``sh`` keeps those variables itself or there is no bash.
    It runs as itself, not under the name ``sh`` from a link in the private data directory, which a container
    running as another user (runAsUser) could not reach; bash passes the variables on in either mode."""
    sh = shutil.which("sh")
    bash = shutil.which("bash")
    if sh is None or bash is None or os.path.basename(os.path.realpath(sh)) != "dash":
        return None
    return os.path.realpath(bash)


def shell_argv(argv: list[str], repository: str, sh: str | None) -> list[str]:
    """``argv`` with an ash image's shell replaced by ``sh`` (stand_in's), when there is one."""
    if sh is None or not argv or argv[0] not in _SH or repository not in ASH_IMAGES:
        return argv
    return [sh, *argv[1:]]

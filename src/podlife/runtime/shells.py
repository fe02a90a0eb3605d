"""Which program of this machine runs an image's ``sh``.

The busybox and alpine images' ``/bin/sh`` is BusyBox ash, which hands every variable of its environment on to the
commands it runs, names that are not shell identifiers included: the kubelet allows ``-`` and ``.`` in them
(``envFrom`` keys such as ``data-1``: apimachinery validation.IsEnvVarName), and the conformance test
``ConfigMap should be consumable via the environment`` (test/e2e/common/node/configmap.go) reads them back
through ``sh -c env`` in busybox 1.36. Debian's ``/bin/sh`` (dash, and Debian's busybox 1.35 too) drops them;
bash does not. So such an image's ``sh`` runs as this machine's BusyBox ash (its messages are the image's), or,
when the container's environment has such names and this machine's ``sh`` is dash, as bash. The busybox image's
other /bin applets (``/bin/sysctl``) run as this machine's BusyBox too where this machine has no such file."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

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


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def busybox() -> str | None:
    """This machine's BusyBox, whose ash speaks as the images' own sh does (``/bin/sh: can't create /file:
    Read-only file system``, which test/e2e/common/node/kubelet.go reads back from the log)."""
    path = shutil.which("busybox")
    return os.path.realpath(path) if path else None


def ash_program(argv: list[str], repository: str, busybox_path: str | None, env: dict[str, str]) -> str | None:
    """The program to run an ash image's sh as (under its own name ``argv[0]``, so that its messages name
    ``/bin/sh`` or ``sh`` as the image's would): this machine's BusyBox, unless the environment holds names
    that are not shell names, which Debian's BusyBox drops (then the bash of ``stand_in`` runs it)."""
    if busybox_path is None or not argv or repository not in ASH_IMAGES:
        return None
    if argv[0] not in _SH:
        return busybox_path if _applet(argv[0], repository, busybox_path) else None
    if not all(_SHELL_NAME.match(k) for k in env):
        return None
    return busybox_path


def _applet(path: str, repository: str, busybox_path: str) -> bool:
    """Whether ``path`` is one of the busybox image's /bin links to BusyBox (the image's /bin holds every applet,
    e.g. /bin/sysctl, which test/e2e/common/node/sysctl.go runs) that this machine lacks: then this machine's
    BusyBox runs it under that name, as the image's does."""
    if repository == "alpine" or os.path.dirname(path) != "/bin" or os.path.exists(path):
        return False   # alpine's /bin holds only some applets; a program this machine has runs as itself
    return os.path.basename(path) in _applets(busybox_path)


@functools.cache
def _applets(busybox_path: str) -> frozenset[str]:
    """``busybox --list``: the applets this machine's BusyBox has."""
    try:
        out = subprocess.run([busybox_path, "--list"], capture_output=True, text=True, check=False, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return frozenset()
    return frozenset(out.split())

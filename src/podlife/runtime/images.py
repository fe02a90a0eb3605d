"""Image configs for the process runtime, which pulls no image: ENTRYPOINT, CMD, WORKDIR and USER of widely used
public images, as their published image configs (Dockerfiles of the official images and of
kubernetes/test/images) set them, and the way a user declares an image podlife does not know.

How a container's process is chosen (containerd's WithImageConfigArgs, as CRI's generateContainerConfig asks):
``command`` replaces the image's ENTRYPOINT and drops its CMD; ``args`` replace the CMD; with neither, ENTRYPOINT
+ CMD. The program then comes from this machine (``sh`` of busybox is this machine's ``sh``).

A user's declaration: the pod annotation ``podlife.io/images``, a JSON object mapping an image reference (as the
container names it) to ``{"entrypoint": [...], "cmd": [...], "workingDir": "...", "user": "..."}``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import sys
from dataclasses import dataclass

ANNOTATION = "podlife.io/images"


@dataclass(frozen=True)
class ImageConfig:
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    working_dir: str = ""
    user: str = ""


_SH = ImageConfig(cmd=("sh",))
# repository (registry and library/ prefix removed, tag dropped) → its config; the same for every tag listed
KNOWN: dict[str, ImageConfig] = {
    "busybox": _SH,                                          # CMD ["sh"]
    "alpine": ImageConfig(cmd=("/bin/sh",)),                 # CMD ["/bin/sh"]
    "debian": ImageConfig(cmd=("bash",)),                    # CMD ["bash"]
    "ubuntu": ImageConfig(cmd=("/bin/bash",)),               # CMD ["/bin/bash"]
    "fedora": ImageConfig(cmd=("/bin/bash",)),
    "centos": ImageConfig(cmd=("/bin/bash",)),
    "python": ImageConfig(cmd=("python3",)),                 # CMD ["python3"]
    "node": ImageConfig(entrypoint=("docker-entrypoint.sh",), cmd=("node",)),
    "golang": ImageConfig(cmd=("bash",), working_dir="/go"),
    "nginx": ImageConfig(entrypoint=("/docker-entrypoint.sh",), cmd=("nginx", "-g", "daemon off;")),
    "httpd": ImageConfig(cmd=("httpd-foreground",), working_dir="/usr/local/apache2"),
    "redis": ImageConfig(entrypoint=("docker-entrypoint.sh",), cmd=("redis-server",), working_dir="/data"),
    "postgres": ImageConfig(entrypoint=("docker-entrypoint.sh",), cmd=("postgres",)),
    "mysql": ImageConfig(entrypoint=("docker-entrypoint.sh",), cmd=("mysqld",)),
    "memcached": ImageConfig(entrypoint=("docker-entrypoint.sh",), cmd=("memcached",), user="memcache"),
    # kubernetes/test/images and registry.k8s.io
    "e2e-test-images/busybox": _SH,
    "e2e-test-images/agnhost": ImageConfig(entrypoint=("/agnhost",), cmd=("pause",)),   # ENTRYPOINT, CMD
    # test/images/{nautilus,kitten}/Dockerfile: FROM agnhost, CMD ["test-webserver"] (it serves the image's /)
    "e2e-test-images/nautilus": ImageConfig(entrypoint=("/agnhost",), cmd=("test-webserver",)),
    "e2e-test-images/kitten": ImageConfig(entrypoint=("/agnhost",), cmd=("test-webserver",)),
    "e2e-test-images/nginx": ImageConfig(cmd=("nginx", "-g", "daemon off;")),
    "e2e-test-images/httpd": ImageConfig(cmd=("httpd-foreground",), working_dir="/usr/local/apache2"),
    "e2e-test-images/nonewprivs": ImageConfig(entrypoint=("/nnp",)),
    "e2e-test-images/nonroot": ImageConfig(entrypoint=("/nonroot",), user="1234"),
    "e2e-test-images/sample-apiserver": ImageConfig(entrypoint=("/sample-apiserver",)),   # ENTRYPOINT
    "pause": ImageConfig(entrypoint=("/pause",)),
}


def repository(image: str) -> str:
    """``docker.io/library/busybox:1.36`` → ``busybox``; ``registry.k8s.io/e2e-test-images/agnhost:2.53`` →
    ``e2e-test-images/agnhost``."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[:name.rindex(":")]
    parts = name.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]   # a registry host
    if parts[:1] == ["library"]:
        parts = parts[1:]
    return "/".join(parts)


def image_config(image: str, annotations: dict[str, str]) -> tuple[ImageConfig | None, str | None]:
    """(the image's config or None when unknown, an error in the user's declaration or None)."""
    declared = annotations.get(ANNOTATION)
    if declared:
        try:
            table = json.loads(declared)
            entry = table.get(image) if isinstance(table, dict) else None
        except ValueError as e:
            return None, f"annotation {ANNOTATION}: not a JSON object ({e})"
        if entry is not None:
            if not isinstance(entry, dict) or not all(
                    isinstance(entry.get(k, []), list) and all(isinstance(a, str) for a in entry.get(k, []))
                    for k in ("entrypoint", "cmd")):
                return None, (f'annotation {ANNOTATION}: "{image}" must be an object with "entrypoint" and "cmd" '
                              "lists of strings")
            return ImageConfig(tuple(entry.get("entrypoint", [])), tuple(entry.get("cmd", [])),
                               str(entry.get("workingDir", "")), str(entry.get("user", ""))), None
    return KNOWN.get(repository(image)), None


def process_args(command: list[str], args: list[str], config: ImageConfig | None) -> list[str]:
    """The process's argv: ``command`` replaces ENTRYPOINT and CMD, ``args`` replace CMD."""
    if command:
        return command + args
    entry = list(config.entrypoint) if config is not None else []
    return entry + (args if args else list(config.cmd) if config is not None else [])


# registry.k8s.io/pause has no program on this machine (its /pause is a static C binary of the image): podlife
# runs a built-in that does what build/pause/linux/pause.c does — ``-v`` prints the version; otherwise it exits
# 0 at SIGINT or SIGTERM (psignal's words on stderr), reaps children at SIGCHLD, warns that it is not PID 1
# (after its handlers are in place, so that the warning says SIGTERM will be heard), and sleeps
_PAUSE = r"""
import os, signal, sys
if any(a.lower() == "-v" for a in sys.argv[1:]):
    print("pause.c %s")
    sys.exit(0)
def down(signo, frame):
    os.write(2, ("Shutting down, got signal: %%s\n" %% signal.strsignal(signo)).encode())
    os._exit(0)
def reap(signo, frame):
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
signal.signal(signal.SIGINT, down)
signal.signal(signal.SIGTERM, down)
signal.signal(signal.SIGCHLD, reap)
if os.getpid() != 1:
    os.write(2, b"Warning: pause should be the first process\n")
while True:
    signal.pause()
"""
PAUSE_NOTE = ("registry.k8s.io/pause runs podlife's built-in pause (this machine's Python: it sleeps until SIGINT "
              "or SIGTERM, then exits 0, as pause.c); e2e-test-images/nonewprivs runs a built-in /nnp that prints "
              "the effective uid its set-user-ID-root program would have: 0, or the process's own uid where "
              "no_new_privs is set")

# e2e-test-images/nonewprivs's /nnp (test/images/nonewprivs/nnp.c) prints geteuid() and is set-user-ID root, so
# it prints 0 unless the process has no_new_privs (allowPrivilegeEscalation: false), when execve ignores the
# set-user-ID bit. A script cannot be set-user-ID: the built-in reads the real no_new_privs flag instead (which
# grep inherits). A shell script, not Python: podlife's Python may be in a directory other users cannot enter
_NNP = ('if grep -q "^NoNewPrivs:[[:space:]]*1" /proc/self/status; then echo "Effective uid: $(id -u)"; '
        'else echo "Effective uid: 0"; fi')


def builtin_program(image: str, argv: list[str]) -> list[str] | None:
    """The argv that stands in for an image's own program podlife provides itself (the pause image's
    ``/pause``, the nonewprivs image's ``/nnp``), else None."""
    if repository(image) == "e2e-test-images/nonewprivs" and argv[:1] == ["/nnp"]:
        return ["/bin/sh", "-c", _NNP, "/nnp", *argv[1:]]
    if repository(image) != "pause" or argv[:1] != ["/pause"]:
        return None
    tag = image.split("@", 1)[0].rsplit("/", 1)[-1].partition(":")[2] or "HEAD"
    return [python_for_everyone(), "-I", "-S", "-c", _PAUSE % f"v{tag}", *argv[1:]]


def _everyone_runs(path: str) -> bool:
    """Every directory on the way to ``path`` searchable, and the file executable, by any user."""
    parts = path.split("/")
    try:
        return all(os.stat("/".join(parts[:i]) or "/").st_mode & stat.S_IXOTH for i in range(1, len(parts) + 1))
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def python_for_everyone() -> str:
    """A Python a container running as any user (runAsUser) can start: podlife's own where it can (its
    -I -S mode needs nothing of podlife's environment), else this machine's python3 (podlife's may live in a
    directory only root enters, such as /root/.pyenv)."""
    own = os.path.realpath(sys.executable)
    if _everyone_runs(own):
        return own
    system = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    return os.path.realpath(system) if system and _everyone_runs(os.path.realpath(system)) else own

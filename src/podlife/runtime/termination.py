"""A container's termination message (pkg/kubelet/kuberuntime/kuberuntime_container.go).

makeMounts: an empty file of the pod's directory, mode 0666 whatever the umask (a container running as another
user writes it too), one per container instance (``containers/<name>/<id>``), mounted read-write at the
container's ``terminationMessagePath``.

getPodContainerStatuses, once the container has exited: the file's last 4096 bytes
(MaxContainerTerminationMessageLength; tail.ReadAtMost); with ``terminationMessagePolicy:
FallbackToLogsOnError``, a non-zero exit and an empty file, the last 80 lines of its log, at most 2048 bytes
(readLastStringFromContainerLogs: MaxContainerTerminationMessageLogLines, MaxContainerTerminationMessageLogLength).
The runtime's own message (why a start failed) comes first, then ``": "`` and this one.
"""

from __future__ import annotations

import os

from podlife.api.meta import Obj
from podlife.runtime.crilog import parse_line

MAX_FILE = 4 * 1024          # kubecontainer.MaxContainerTerminationMessageLength
MAX_LOG_BYTES = 2 * 1024     # kubecontainer.MaxContainerTerminationMessageLogLength
MAX_LOG_LINES = 80           # kubecontainer.MaxContainerTerminationMessageLogLines


def make_file(pod_dir: str, name: str, container_id: str, spec: Obj) -> tuple[str, dict]:
    """(the host file, its mount at the container's terminationMessagePath)."""
    directory = os.path.join(pod_dir, "containers", name)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, container_id[:8])
    open(path, "w").close()
    os.chmod(path, 0o666)
    return path, {"source": path, "target": spec["terminationMessagePath"], "readonly": False, "file": True}


def _read_at_most(path: str, limit: int) -> bytes:
    """tail.ReadAtMost: the last ``limit`` bytes."""
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - limit))
        return f.read()


def from_logs(log_path: str) -> str:
    """readLastStringFromContainerLogs: the last lines of the log as ``kubectl logs --tail 80 --limit-bytes
    2048`` prints them."""
    try:
        with open(log_path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
    except OSError as e:
        return f"Error on reading termination message from logs: {e}"
    out = b"".join(parsed[1] for parsed in map(parse_line, lines[-MAX_LOG_LINES:]) if parsed is not None)
    return out[:MAX_LOG_BYTES].decode("utf-8", "replace")


def message(host_file: str, spec: Obj, exit_code: int | None, reason: str, log_path: str) -> str:
    """getTerminationMessage, then the fallback to the log (never for a container that could not start)."""
    fallback = (spec.get("terminationMessagePolicy") == "FallbackToLogsOnError" and exit_code != 0
                and reason not in ("ContainerCannotRun", "StartError"))
    text, check_logs = "", fallback
    if host_file:
        try:
            data = _read_at_most(host_file, MAX_FILE)
        except FileNotFoundError:
            data = b""
        except OSError as e:
            return f"Error on reading termination log {host_file}: {e}"
        text, check_logs = data.decode("utf-8", "replace"), fallback and not data
    if check_logs:
        text = from_logs(log_path)
    return text

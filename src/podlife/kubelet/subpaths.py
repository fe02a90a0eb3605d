"""Volume mounts' subPathExpr, expanded by the kubelet when it makes a container's mounts (pkg/kubelet/
kubelet_pods.go makeMounts, pkg/kubelet/container/helpers.go ExpandContainerVolumeMounts). A reference to a
variable the container does not have (or has empty), an absolute path or one with a ".." element fails
generateContainerConfig: the container waits in CreateContainerConfigError and is retried."""

from __future__ import annotations

from podlife.api.meta import Obj
from podlife.api.expansion import _REF   # third_party/forked/golang/expansion's syntax


def subpath_error(container: Obj, env: list[tuple[str, str]]) -> str | None:
    """The error makeMounts returns for this container's mounts, or None."""
    values = dict(env)
    for mount in container.get("volumeMounts") or ():
        sub = mount.get("subPath") or ""
        expr = mount.get("subPathExpr") or ""
        if expr:
            missing = sorted({m.group(1) for m in _REF.finditer(expr) if m.group(0) != "$$"
                              and not values.get(m.group(1))})
            if missing:
                return "missing value for " + ", ".join(missing)
            sub = _REF.sub(lambda m: "$" if m.group(0) == "$$" else values[m.group(1)], expr)
        if not sub:
            continue
        if sub.startswith("/"):
            return f"error SubPath `{sub}` must not be an absolute path"
        if ".." in sub.split("/"):
            # pkg/volume/validation ValidatePathNoBacksteps
            return f"unable to provision SubPath `{sub}`: must not contain '..'"
    return None

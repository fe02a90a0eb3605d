"""The kubelet's sysctl admit handler (pkg/kubelet/sysctl/allowlist.go, whitelist.go before 1.22): a pod asking
for a sysctl that is neither safe (the release's SafeSysctlAllowlist, podlife.versions safe_sysctls) nor allowed
on the node (KubeletConfiguration allowedUnsafeSysctls), or a net sysctl with hostNetwork / an ipc one with
hostIPC, is rejected with reason SysctlForbidden (kubelet.go rejectPod)."""

from __future__ import annotations

from collections.abc import Iterable

from podlife.api.meta import Obj
from podlife.api.sysctlnames import Namespace, dotted, namespaced_by
from podlife.versions import Profile

FORBIDDEN_REASON = "SysctlForbidden"   # allowlist.go ForbiddenReason


class Allowlist:
    """NewAllowlist over the safe sysctls and the node's allowed unsafe ones; patterns end in ``*``."""

    def __init__(self, profile: Profile, allowed_unsafe: Iterable[str] = ()) -> None:
        self.profile = profile
        self.sysctls: dict[str, Namespace] = {}
        self.prefixes: dict[str, Namespace] = {}
        for pattern in (*profile.safe_sysctls, *allowed_unsafe):
            name = dotted(pattern) if profile.sysctl_slash_names else pattern
            if name.endswith("*"):
                self.prefixes[name[:-1]] = namespaced_by(name[:-1])
            else:
                self.sysctls[name] = namespaced_by(name)

    def _refusal(self, name: str, host_net: bool, host_ipc: bool) -> str | None:
        """validateSysctl: why ``name`` is refused, or None."""
        if self.profile.sysctl_slash_names:
            name = dotted(name)
        ns = self.sysctls.get(name)
        if ns is None:
            ns = next((pns for prefix, pns in self.prefixes.items() if name.startswith(prefix)), None)
        if ns is None:
            return f'"{name}" not {self.profile.sysctl_forbidden_word}'
        if (ns == "ipc" and host_ipc) or (ns == "net" and host_net):
            return f'"{name}" not allowed with host {ns} enabled'
        return None

    def admit(self, pod: Obj) -> str | None:
        """Admit: the message of the first refused sysctl (``forbidden sysctl: ...``), or None to admit."""
        spec = pod.get("spec") or {}
        for sysctl in (spec.get("securityContext") or {}).get("sysctls") or ():
            why = self._refusal(str(sysctl.get("name") or ""), bool(spec.get("hostNetwork")),
                                bool(spec.get("hostIPC")))
            if why is not None:
                return f"forbidden sysctl: {why}"
        return None


def unknown_namespace(pattern: str) -> str | None:
    """NewAllowlist's refusal of an allowed-unsafe pattern that is not known to be namespaced (the kubelet does not
    start), or None."""
    name = dotted(pattern)
    if namespaced_by(name[:-1] if name.endswith("*") else name):
        return None
    if name.endswith("*"):
        return f'the sysctls "{name}" are not known to be namespaced'
    return f'the sysctl "{name}" are not known to be namespaced'

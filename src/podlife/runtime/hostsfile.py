"""The pod's hostname and the kubelet-managed /etc/hosts (pkg/kubelet/kubelet_pods.go:
GeneratePodHostNameAndDomain, truncatePodHostnameIfNeeded, makeHostsMount, ensureHostsFile,
managedHostsFileContent, nodeHostsFileContent, hostsEntriesFromHostAliases). A runtime that puts files on disk
(the process runtime) writes the file and mounts it; the simulated ones do not ask. It lives beside the runtimes
that use it, below the kubelet, whose sandbox config (kuberuntime) reads the hostname from it too.

The cluster domain is ``cluster.local`` (kubeadm's default, cmd/kubeadm/app/constants DefaultServiceDNSDomain;
podlife has no kubelet ``clusterDomain`` setting): it appears only in the line of a pod with a subdomain.
"""

from __future__ import annotations

from podlife.api.meta import Obj

CLUSTER_DOMAIN = "cluster.local"
ETC_HOSTS = "/etc/hosts"
FILE_NAME = "etc-hosts"   # kubelet_pods.go getEtcHostsPath: <podDir>/etc-hosts
HOSTNAME_MAX = 63         # truncatePodHostnameIfNeeded: 64 bytes with the terminating NUL
FQDN_MAX = 64             # GetNodenameForKernel
_HEADER = "# Kubernetes-managed hosts file.\n"
_HEADER_HOST_NETWORK = "# Kubernetes-managed hosts file (host network).\n"
_LOCALHOST = ("127.0.0.1\tlocalhost\n"
              "::1\tlocalhost ip6-localhost ip6-loopback\n"
              "fe00::0\tip6-localnet\n"
              "fe00::0\tip6-mcastprefix\n"
              "fe00::1\tip6-allnodes\n"
              "fe00::2\tip6-allrouters\n")


def hostname_and_domain(pod: Obj) -> tuple[str, str]:
    """GeneratePodHostNameAndDomain: spec.hostname, else the pod's name, cut to 63 characters without a trailing
    '-' or '.'; the domain ``<subdomain>.<namespace>.svc.<cluster domain>`` when the pod has a subdomain (both
    fields are DNS labels by validation)."""
    spec, md = pod["spec"], pod["metadata"]
    hostname = spec.get("hostname") or md.get("name", "")
    if len(hostname) > HOSTNAME_MAX:
        hostname = hostname[:HOSTNAME_MAX].rstrip("-.")
    sub = spec.get("subdomain") or ""
    return hostname, (f"{sub}.{md.get('namespace', 'default')}.svc.{CLUSTER_DOMAIN}" if sub else "")


def kernel_hostname(pod: Obj) -> str:
    """The UTS hostname of the pod's containers (pkg/kubelet/util/util.go GetNodenameForKernel): the FQDN when
    setHostnameAsFQDN and the pod has a subdomain, else the short name."""
    hostname, domain = hostname_and_domain(pod)
    return f"{hostname}.{domain}" if pod["spec"].get("setHostnameAsFQDN") and domain else hostname


def sandbox_config_error(pod: Obj) -> str | None:
    """kuberuntime_sandbox.go generatePodSandboxConfig: GetNodenameForKernel's error for an FQDN longer than
    the kernel's 64 characters (a hostNetwork pod's sandbox has no hostname of its own)."""
    name = kernel_hostname(pod)
    if pod["spec"].get("hostNetwork") or len(name) <= FQDN_MAX:
        return None
    return (f"failed to construct FQDN from pod hostname and cluster domain, FQDN {name} is too long "
            f"({FQDN_MAX} characters is the max, {len(name)} characters requested)")


def _alias_lines(aliases: list[Obj]) -> str:
    if not aliases:
        return ""
    lines = "".join(f"{a.get('ip', '')}\t{chr(9).join(a.get('hostnames') or ())}\n" for a in aliases)
    return "\n# Entries added by HostAliases.\n" + lines


def content(pod: Obj, pod_ips: list[str], node_hosts: bytes) -> bytes:
    """ensureHostsFile: a hostNetwork pod's file is the node's (``node_hosts``) under its own header; any other
    pod's has the localhost lines and one line per pod IP. Both end with the hostAliases."""
    aliases = pod["spec"].get("hostAliases") or []
    if pod["spec"].get("hostNetwork"):
        return _HEADER_HOST_NETWORK.encode() + node_hosts + _alias_lines(aliases).encode()
    hostname, domain = hostname_and_domain(pod)
    names = f"{hostname}.{domain}\t{hostname}" if domain else hostname
    return (_HEADER + _LOCALHOST + "".join(f"{ip}\t{names}\n" for ip in pod_ips) + _alias_lines(aliases)).encode()


def should_mount(spec: Obj, pod_ips: list[str]) -> bool:
    """makeMounts/shouldMountHostsFile: only once the pod has an IP, and not into a container that mounts
    /etc/hosts itself (a Linux node: no Windows hostProcess case)."""
    return bool(pod_ips) and all(vm.get("mountPath") != ETC_HOSTS for vm in spec.get("volumeMounts") or ())

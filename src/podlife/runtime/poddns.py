"""The pod's /etc/resolv.conf as the kubelet asks for it and containerd writes it
(pkg/kubelet/network/dns/dns.go GetPodDNS; containerd's setupSandboxFiles and parseDNSOptions).

The kubelet's ``--resolv-conf`` is this machine's /etc/resolv.conf (its default), the cluster domain
``cluster.local`` (podlife.runtime.hostsfile) and ``clusterDNS`` the kube-dns Service's address when podlife up
serves cluster DNS (podlife.runtime.clusterdns), else empty: a ClusterFirst pod then falls back to Default with
upstream's MissingClusterDNS message. The search-line limits are ExpandedDNSConfig's (32 paths, 2048
characters), the ones podlife's validation applies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from podlife.api.meta import Obj
from podlife.runtime.hostsfile import CLUSTER_DOMAIN

RESOLV_CONF = "/etc/resolv.conf"
FILE_NAME = "resolv.conf"          # containerd: <sandbox root>/resolv.conf
DEFAULT_OPTIONS = ("ndots:5",)     # dns.go defaultDNSOptions
MAX_NAMESERVERS = 3                # validation.MaxDNSNameservers
MAX_SEARCH_PATHS = 32              # validation.MaxDNSSearchPathsExpanded
MAX_SEARCH_CHARS = 2048            # validation.MaxDNSSearchListCharsExpanded
MAX_SEARCH_LENGTH = 253            # utilvalidation.DNS1123SubdomainMaxLength
MISSING_CLUSTER_DNS = ('kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" '
                       'policy. Falling back to "Default" policy.')


@dataclass
class DNSConfig:
    """runtimeapi.DNSConfig."""

    servers: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)


def parse_resolv_conf(text: str) -> DNSConfig:
    """parseResolvConf: nameservers accumulate; the last search and options lines win; a search domain loses
    its trailing dot."""
    cfg = DNSConfig()
    for line in text.split("\n"):
        fields = line.strip().split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] == "nameserver" and len(fields) >= 2:
            cfg.servers.append(fields[1])
        elif fields[0] == "search":
            cfg.searches = [s.removesuffix(".") for s in fields[1:]]
        elif fields[0] == "options":
            cfg.options = fields[1:]
    return cfg


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))   # omitDuplicates: the first of each, in order


def _merge_options(existing: list[str], given: list[Obj]) -> list[str]:
    """mergeDNSOptions: a dnsConfig option replaces the same-named one. Upstream rebuilds the list from a Go map
    (in no fixed order); podlife keeps the order of first appearance, so the file's bytes are reproducible."""
    merged: dict[str, str] = {}
    for text in existing:
        name, _, value = text.partition(":")
        merged[name] = value
    for op in given:
        merged[op.get("name", "")] = op.get("value") or ""
    return [f"{k}:{v}" if v else k for k, v in merged.items()]


def _fit_search(searches: list[str]) -> tuple[list[str], bool]:
    """formDNSSearchFitsLimits: at most 32 paths, none over 253 characters, the line within 2048 characters
    (cut from the end)."""
    cut = len(searches) > MAX_SEARCH_PATHS
    kept = [s for s in searches[:MAX_SEARCH_PATHS] if len(s) <= MAX_SEARCH_LENGTH]
    cut = cut or len(kept) < len(searches[:MAX_SEARCH_PATHS])
    while kept and len(" ".join(kept)) > MAX_SEARCH_CHARS:
        kept.pop()
        cut = True
    return kept, cut


def pod_dns(pod: Obj, host: DNSConfig, cluster_dns: list[str]) -> tuple[DNSConfig, list[tuple[str, str]]]:
    """GetPodDNS: the pod's DNS config from the host's (``host``, the parsed --resolv-conf), and the Warning
    events (reason, message) the kubelet records on the pod on the way."""
    spec, md = pod["spec"], pod["metadata"]
    events: list[tuple[str, str]] = []
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    cfg = DNSConfig(list(host.servers), list(host.searches), list(host.options))
    # getPodDNSType: ClusterFirst on the host network falls back to Default
    cluster = policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not spec.get("hostNetwork"))
    if policy == "None":
        cfg = DNSConfig()
    elif cluster and cluster_dns:
        ns = md.get("namespace", "default")
        cfg.servers = list(cluster_dns)
        cfg.searches = _unique([f"{ns}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN, *cfg.searches])
        cfg.options = list(DEFAULT_OPTIONS)
    elif cluster:
        events.append(("MissingClusterDNS", f'pod: "{md.get("name", "")}_{md.get("namespace", "")}'
                                            f'({md.get("uid", "")})". {MISSING_CLUSTER_DNS}'))
    given = spec.get("dnsConfig")
    if given is not None:   # appendDNSConfig
        cfg.servers = _unique(cfg.servers + list(given.get("nameservers") or ()))
        cfg.searches = _unique(cfg.searches + list(given.get("searches") or ()))
        cfg.options = _merge_options(cfg.options, list(given.get("options") or ()))
    # formDNSConfigFitsLimits
    if len(cfg.servers) > MAX_NAMESERVERS:
        cfg.servers = cfg.servers[:MAX_NAMESERVERS]
        events.append(("DNSConfigForming", "Nameserver limits were exceeded, some nameservers have been omitted, "
                                           f"the applied nameserver line is: {' '.join(cfg.servers)}"))
    cfg.searches, cut = _fit_search(cfg.searches)
    if cut:
        events.append(("DNSConfigForming", "Search Line limits were exceeded, some search paths have been omitted, "
                                           f"the applied search line is: {' '.join(cfg.searches)}"))
    return cfg, events


def content(cfg: DNSConfig, host_file: bytes) -> bytes:
    """containerd parseDNSOptions: search, nameserver (one line each) and options lines; an empty config means
    a copy of the host's file."""
    text = ""
    if cfg.searches:
        text += f"search {' '.join(cfg.searches)}\n"
    if cfg.servers:
        text += "".join(f"nameserver {s}\n" for s in cfg.servers)
    if cfg.options:
        text += f"options {' '.join(cfg.options)}\n"
    return text.encode() if text else host_file


def should_mount(spec: Obj) -> bool:
    """Not into a container that mounts /etc/resolv.conf itself."""
    return all(vm.get("mountPath") != RESOLV_CONF for vm in spec.get("volumeMounts") or ())

"""The pod's resolv.conf (podlife.runtime.poddns) against the rules of pkg/kubelet/network/dns/dns.go GetPodDNS
and the bytes containerd's parseDNSOptions writes; the cases follow upstream's dns_test.go (TestGetPodDNS,
TestGetPodDNSCustom, TestMergeDNSOptions, formDNSSearchFitsLimits)."""

from __future__ import annotations

from typing import Any

from podlife.runtime import poddns

HOST = poddns.parse_resolv_conf("# host\nnameserver 10.255.255.53\nnameserver 1.1.1.1\nsearch corp.example.\n"
                                "search lab.example  home.example.\noptions attempts:2 rotate\n")
HOST_FILE = b"nameserver 10.255.255.53\n"
DNS = ["10.96.0.10"]


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "shop", "uid": "u-1"}, "spec": spec}


def resolv(p: dict[str, Any], cluster_dns: list[str] = DNS) -> tuple[bytes, list[tuple[str, str]]]:
    cfg, events = poddns.pod_dns(p, HOST, cluster_dns)
    return poddns.content(cfg, HOST_FILE), events


def test_parse_resolv_conf_accumulates_nameservers_last_search_and_options_win() -> None:
    assert HOST == poddns.DNSConfig(["10.255.255.53", "1.1.1.1"], ["lab.example", "home.example"],
                                    ["attempts:2", "rotate"])


def test_cluster_first_the_cluster_dns_the_cluster_search_then_the_hosts_and_ndots_5() -> None:
    assert resolv(pod(dnsPolicy="ClusterFirst")) == (
        b"search shop.svc.cluster.local svc.cluster.local cluster.local lab.example home.example\n"
        b"nameserver 10.96.0.10\noptions ndots:5\n", [])
    # ClusterFirstWithHostNet on the host network is ClusterFirst
    assert resolv(pod(dnsPolicy="ClusterFirstWithHostNet", hostNetwork=True))[0].startswith(
        b"search shop.svc.cluster.local ")


def test_default_and_cluster_first_on_the_host_network_take_the_hosts_settings() -> None:
    host = (b"search lab.example home.example\nnameserver 10.255.255.53\nnameserver 1.1.1.1\n"
            b"options attempts:2 rotate\n")
    assert resolv(pod(dnsPolicy="Default")) == (host, [])
    assert resolv(pod(dnsPolicy="ClusterFirst", hostNetwork=True)) == (host, [])


def test_none_is_the_dns_config_alone_and_dns_config_merges_into_the_others() -> None:
    cfg = {"nameservers": ["192.0.2.1"], "searches": ["a.example"],
           "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}]}
    assert resolv(pod(dnsPolicy="None", dnsConfig=cfg)) == (
        b"search a.example\nnameserver 192.0.2.1\noptions ndots:2 edns0\n", [])
    # appendDNSConfig: servers and searches appended without duplicates, a same-named option replaced
    cfg2 = {"nameservers": ["10.96.0.10", "192.0.2.1"], "searches": ["cluster.local", "b.example"],
            "options": [{"name": "ndots", "value": "1"}]}
    assert resolv(pod(dnsPolicy="ClusterFirst", dnsConfig=cfg2)) == (
        b"search shop.svc.cluster.local svc.cluster.local cluster.local lab.example home.example b.example\n"
        b"nameserver 10.96.0.10\nnameserver 192.0.2.1\noptions ndots:1\n", [])


def test_no_cluster_dns_falls_back_to_default_with_upstreams_event() -> None:
    data, events = resolv(pod(dnsPolicy="ClusterFirst"), [])
    assert data.startswith(b"search lab.example home.example\nnameserver 10.255.255.53\n")
    assert events == [("MissingClusterDNS", 'pod: "web_shop(u-1)". kubelet does not have ClusterDNS IP configured '
                                            'and cannot create Pod using "ClusterFirst" policy. Falling back to '
                                            '"Default" policy.')]


def test_limits_cut_nameservers_to_three_and_the_search_line_with_events() -> None:
    cfg = {"nameservers": ["192.0.2.1", "192.0.2.2", "192.0.2.3"],
           "searches": [f"d{i}.example" for i in range(40)]}
    data, events = resolv(pod(dnsPolicy="ClusterFirst", dnsConfig=cfg))
    searches = ["shop.svc.cluster.local", "svc.cluster.local", "cluster.local", "lab.example", "home.example",
                *[f"d{i}.example" for i in range(27)]]
    assert data == (f"search {' '.join(searches)}\n".encode() +
                    b"nameserver 10.96.0.10\nnameserver 192.0.2.1\nnameserver 192.0.2.2\noptions ndots:5\n")
    assert events == [
        ("DNSConfigForming", "Nameserver limits were exceeded, some nameservers have been omitted, the applied "
                             "nameserver line is: 10.96.0.10 192.0.2.1 192.0.2.2"),
        ("DNSConfigForming", "Search Line limits were exceeded, some search paths have been omitted, the applied "
                             f"search line is: {' '.join(searches)}")]


def test_an_empty_config_copies_the_hosts_file_and_a_mounted_resolv_conf_is_left_alone() -> None:
    assert poddns.content(poddns.DNSConfig(), HOST_FILE) == HOST_FILE
    assert not poddns.should_mount({"volumeMounts": [{"name": "r", "mountPath": "/etc/resolv.conf"}]})
    assert poddns.should_mount({"volumeMounts": [{"name": "r", "mountPath": "/etc"}]})

"""Host ports of the process runtime's pods (podlife.runtime.portmap) against the kubelet's MakePortMappings,
containerd's toCNIPortMappings and the CNI portmap plugin's fillDnatRules, and forwarded for real on loopback
addresses (127.0.0.0/8 is this machine's without root): the listeners are podlife's kube-proxy's."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from podlife.runtime.portmap import PortMap, PortMapping, addresses, port_mappings


def pod(*containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"namespace": "shop", "name": "web"},
            "spec": {"containers": [{"name": f"c{i}", "ports": ports} for i, ports in enumerate(containers)],
                     "initContainers": [{"name": "i", "ports": init or []}]}}


def test_only_regular_containers_ports_with_a_host_port_repeated_names_dropped() -> None:
    p = pod([{"containerPort": 80, "hostPort": 8080},
             {"containerPort": 81},                                            # no hostPort: not for CNI
             {"name": "dns", "containerPort": 53, "hostPort": 5353, "protocol": "UDP", "hostIP": "10.1.0.1"},
             {"name": "dns", "containerPort": 54, "hostPort": 5454, "protocol": "UDP"},   # the name again
             {"containerPort": 9, "hostPort": 9, "protocol": "SCTP"}],
            [{"containerPort": 80, "hostPort": 8080}],                           # another container: kept
            init=[{"containerPort": 70, "hostPort": 7070}])                       # init containers: never
    assert port_mappings(p) == [PortMapping(8080, 80, "TCP", ""), PortMapping(5353, 53, "UDP", "10.1.0.1"),
                                PortMapping(9, 9, "SCTP", ""), PortMapping(8080, 80, "TCP", "")]


def test_where_the_dnat_rule_matches() -> None:
    node = "10.244.0.1"
    assert addresses(PortMapping(1, 2, "TCP", ""), node) == [node, "127.0.0.1"]          # every local address
    assert addresses(PortMapping(1, 2, "TCP", "0.0.0.0"), node) == [node, "127.0.0.1"]   # unspecified: the same
    assert addresses(PortMapping(1, 2, "TCP", "127.0.0.1"), node) == ["127.0.0.1"]
    assert addresses(PortMapping(1, 2, "UDP", "192.0.2.7"), node) == ["192.0.2.7"]
    assert addresses(PortMapping(1, 2, "TCP", "::1"), node) == []                        # the other family
    assert addresses(PortMapping(1, 2, "TCP", "localhost"), node) == []                  # no address: ditto


def free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def tcp_server(ip: str, port: int, prefix: bytes) -> asyncio.Server:
    async def answer(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        w.write(prefix + await r.readline())
        await w.drain()
        w.close()
    return await asyncio.start_server(answer, ip, port)


async def tcp(ip: str, port: int) -> bytes:
    try:
        r, w = await asyncio.open_connection(ip, port)
    except ConnectionRefusedError:
        return b"refused"
    w.write(b"hello\n")
    data = await r.read()
    w.close()
    return data


async def _forwarding() -> dict[str, Any]:
    """Pods are servers on 127.0.0.5 and 127.0.0.9 (TCP and UDP), their node's address is 127.0.0.6."""
    tcp_port, udp_port, pp = free_port(socket.SOCK_STREAM), free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
    servers = [await tcp_server("127.0.0.5", pp, b"tcp:"), await tcp_server("127.0.0.9", pp, b"newer:")]
    loop = asyncio.get_running_loop()

    class Echo(asyncio.DatagramProtocol):
        def connection_made(self, transport: Any) -> None:
            self.t = transport

        def datagram_received(self, data: bytes, addr: Any) -> None:
            self.t.sendto(b"udp:" + data, addr)
    udp, _ = await loop.create_datagram_endpoint(Echo, local_addr=("127.0.0.5", pp))

    async def udp_ask(ip: str) -> bytes:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        await loop.sock_connect(s, (ip, udp_port))
        await loop.sock_sendall(s, b"hostname")
        try:
            return await asyncio.wait_for(loop.sock_recv(s, 100), 2)
        except asyncio.TimeoutError:
            return b"no answer"
        except ConnectionRefusedError:   # ICMP port unreachable
            return b"refused"
        finally:
            s.close()
    out: dict[str, Any] = {}
    ports = PortMap()
    assert ports.add("sb1", pod([{"containerPort": pp, "hostPort": tcp_port},
                                 {"containerPort": pp, "hostPort": udp_port, "protocol": "UDP",
                                  "hostIP": "127.0.0.6"}]), "127.0.0.5", "127.0.0.6") is None
    await asyncio.sleep(0.05)   # the asyncio servers are made in tasks
    out["tcp"] = [await tcp("127.0.0.6", tcp_port), await tcp("127.0.0.1", tcp_port)]
    out["udp"] = [await udp_ask("127.0.0.6"), await udp_ask("127.0.0.1")]
    # a newer sandbox of the node maps the same TCP port on localhost: it gets it, until it goes
    assert ports.add("sb3", pod([{"containerPort": pp, "hostPort": tcp_port, "hostIP": "127.0.0.1"}]),
                     "127.0.0.9", "127.0.0.6") is None
    out["newer"] = [await tcp("127.0.0.6", tcp_port), await tcp("127.0.0.1", tcp_port)]
    ports.remove("sb3")
    out["back"] = await tcp("127.0.0.1", tcp_port)
    # a sandbox whose hostPort another program holds: the set-up fails with Go's listen error
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    taken = holder.getsockname()[1]
    err = ports.add("sb2", pod([{"containerPort": 1, "hostPort": taken}]), "127.0.0.7", "127.0.0.8")
    holder.close()
    out["error"] = err and err.replace(str(taken), "P")
    out["left"] = sorted(ports.sandboxes), sorted(k[0] for k in ports.listeners if k[1] == taken)
    ports.remove("sb1")
    await asyncio.sleep(0.05)
    out["gone"] = [await tcp("127.0.0.6", tcp_port), await tcp("127.0.0.1", tcp_port), await udp_ask("127.0.0.6")]
    for server in servers:
        server.close()
    udp.close()
    return out


def test_tcp_and_udp_forwarded_the_latest_wins_bind_failure_and_teardown() -> None:
    assert asyncio.run(_forwarding()) == {
        "tcp": [b"tcp:hello\n", b"tcp:hello\n"],           # the node's address and localhost
        "udp": [b"udp:hostname", b"refused"],             # hostIP 127.0.0.6 only
        "newer": [b"tcp:hello\n", b"newer:hello\n"],
        "back": b"tcp:hello\n",
        "error": "listen tcp 127.0.0.1:P: bind: address already in use",
        "left": (["sb1"], []),
        "gone": [b"refused", b"refused", b"refused"]}


def test_what_is_not_mapped_or_taken_over_is_said(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port(socket.SOCK_STREAM)

    async def run() -> dict[str, list[tuple[str, int]]]:
        ports = PortMap()
        assert ports.add("sb", pod([{"containerPort": 9, "hostPort": 9, "protocol": "SCTP"},
                                    {"containerPort": 9, "hostPort": 9, "hostIP": "::1"}]), "127.0.0.5",
                         "127.0.0.6") is None
        # two nodes' pods with the same hostPort and no hostIP: each node's address, 127.0.0.1 the latest's
        assert ports.add("n0", pod([{"containerPort": 1, "hostPort": port}]), "127.0.0.5", "127.0.0.6") is None
        assert ports.add("n1", pod([{"containerPort": 2, "hostPort": port}]), "127.0.0.7", "127.0.0.8") is None
        held = {f"{k[0]}:{k[1] == port}": v.vs.endpoints for k, v in ports.listeners.items()}
        ports.close()
        assert ports.listeners == {} and ports.sandboxes == {}
        return held
    assert asyncio.run(run()) == {"127.0.0.6:True": [("127.0.0.5", 1)], "127.0.0.8:True": [("127.0.0.7", 2)],
                                  "127.0.0.1:True": [("127.0.0.7", 2)]}
    assert [r.getMessage() for r in caplog.records] == [
        "hostPort 9/SCTP of pod shop/web is not mapped: podlife forwards TCP and UDP host ports",
        "hostPort 9/TCP of pod shop/web is not mapped: its hostIP '::1' is not an IPv4 address (the pod's)",
        f"127.0.0.1:{port}/TCP now goes to pod shop/web, no longer to pod shop/web of another node (the nodes "
        "share this machine's addresses)"]

"""The Host and Origin checks of podlife.apiserver.browser, case by case (the live refusals are in
tests/live/test_hostile_browser.py)."""

from __future__ import annotations

import pytest

from podlife.apiserver.browser import Served, check_host, check_origin, split_host

LOOPBACK = Served.of("http", "127.0.0.1")


@pytest.mark.parametrize("value, expected", [
    ("localhost", ("localhost", None)),
    ("LocalHost.:6443", ("localhost", 6443)),
    ("127.0.0.1:80", ("127.0.0.1", 80)),
    ("[::1]:6443", ("::1", 6443)),
    ("[0:0:0:0:0:0:0:1]", ("::1", None)),
    ("::1", None),               # an IPv6 address needs its brackets
    ("[::1", None),
    ("[::1]x", None),
    ("localhost:http", None),
    ("localhost:70000", None),
    (":6443", None),
])
def test_split_host(value: str, expected: tuple[str, int | None] | None) -> None:
    assert split_host(value) == expected


@pytest.mark.parametrize("host", ["localhost", "localhost:1", "127.0.0.1:6443", "[::1]:6443", None])
def test_loopback_names_are_served(host: str | None) -> None:
    assert check_host(LOOPBACK, host) is None


@pytest.mark.parametrize("host", ["evil.example", "evil.example:6443", "127.0.0.2:6443", "localhost.evil.example",
                                  "::1", ""])
def test_other_hosts_are_refused(host: str) -> None:
    err = check_host(LOOPBACK, host)
    assert err is not None and err.code == 421 and f'"{host}"' in err.message


def test_the_address_and_certificate_names_are_served() -> None:
    served = Served.of("https", "10.0.0.5", ("10.0.0.5", "127.0.0.1", "::1", "localhost"))
    assert check_host(served, "10.0.0.5:6443") is None
    assert check_host(served, "10.0.0.6:6443") is not None
    named = Served.of("https", "podlife.internal")
    assert check_host(named, "PODLIFE.internal:6443") is None


def test_an_unspecified_address_serves_any_address_but_no_other_name() -> None:
    served = Served.of("https", "0.0.0.0")
    assert check_host(served, "192.168.1.20:6443") is None
    assert check_host(served, "[fe80::1]:6443") is None
    assert check_host(served, "evil.example:6443") is not None


@pytest.mark.parametrize("origin, host", [
    (None, "127.0.0.1:6443"),
    ("http://127.0.0.1:6443", "127.0.0.1:6443"),
    ("http://LOCALHOST:6443", "localhost:6443"),
    ("http://localhost", "localhost:80"),
    ("http://[::1]:6443", "[::1]:6443"),
])
def test_the_servers_own_origin_passes(origin: str | None, host: str) -> None:
    assert check_origin(LOOPBACK, origin, host) is None


@pytest.mark.parametrize("origin, host", [
    ("http://evil.example", "127.0.0.1:6443"),
    ("http://localhost:6443", "127.0.0.1:6443"),       # another name is another origin
    ("http://127.0.0.1:8080", "127.0.0.1:6443"),       # another port too
    ("https://127.0.0.1:6443", "127.0.0.1:6443"),      # and another scheme
    ("null", "127.0.0.1:6443"),                        # a sandboxed frame, a file:// page
    ("http://127.0.0.1:6443/path", "127.0.0.1:6443"),
    ("http://user@127.0.0.1:6443", "127.0.0.1:6443"),
    ("http://127.0.0.1:6443", None),
])
def test_any_other_origin_is_refused(origin: str, host: str | None) -> None:
    err = check_origin(LOOPBACK, origin, host)
    assert err is not None and err.code == 403 and err.reason == "Forbidden" and f'"{origin}"' in err.message


@pytest.mark.parametrize("origin, host", [
    ("http://localhost", "127.0.0.1:6443"),            # Go's websocket clients (the conformance suite) name it
    ("https://127.0.0.1", "127.0.0.1:6443"),
    ("http://[::1]", "[::1]:6443"),
])
def test_a_loopback_origin_on_its_schemes_own_port_passes_on_a_loopback_host(origin: str, host: str) -> None:
    assert check_origin(LOOPBACK, origin, host) is None


@pytest.mark.parametrize("origin, host", [
    ("http://localhost:8080", "127.0.0.1:6443"),       # another port of this machine: any user's server
    ("http://localhost", None),
    ("http://localhost.evil.example", "127.0.0.1:6443"),
])
def test_a_loopback_origin_on_another_port_stays_refused(origin: str, host: str | None) -> None:
    err = check_origin(LOOPBACK, origin, host)
    assert err is not None and err.code == 403


def test_a_loopback_origin_is_refused_when_the_request_came_by_another_address() -> None:
    served = Served.of("https", "0.0.0.0")
    err = check_origin(served, "http://localhost", "192.168.1.20:6443")
    assert err is not None and err.code == 403

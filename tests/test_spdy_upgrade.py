"""The SPDY upgrade's refusal names the request's headers as Go prints an http.Header with %#v
(staging/src/k8s.io/apimachinery/pkg/util/httpstream/spdy/upgrade.go UpgradeResponse)."""

from __future__ import annotations

from podlife.apiserver.spdyupgrade import go_header


def test_go_header_sorts_canonical_keys_and_keeps_values_in_order() -> None:
    got = go_header([("x-stream-protocol-version", "v4.channel.k8s.io"), ("Connection", "close"),
                     ("X-Stream-Protocol-Version", "v3.channel.k8s.io"), ("upgrade", 'SPDY/3.1 "x"')])
    assert got == ('http.Header{"Connection":[]string{"close"}, "Upgrade":[]string{"SPDY/3.1 \\"x\\""}, '
                   '"X-Stream-Protocol-Version":[]string{"v4.channel.k8s.io", "v3.channel.k8s.io"}}')


def test_go_header_of_no_headers() -> None:
    assert go_header([]) == "http.Header{}"

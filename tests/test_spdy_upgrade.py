"""SPDY: the upgrade's refusal names the request's headers as Go prints an http.Header with %#v
(staging/src/k8s.io/apimachinery/pkg/util/httpstream/spdy/upgrade.go UpgradeResponse); the port-forward streams
the kubelet refuses."""

from __future__ import annotations

from podlife.apiserver.podforward import stream_refusal
from podlife.apiserver.spdyupgrade import go_header


def test_go_header_sorts_canonical_keys_and_keeps_values_in_order() -> None:
    got = go_header([("x-stream-protocol-version", "v4.channel.k8s.io"), ("Connection", "close"),
                     ("X-Stream-Protocol-Version", "v3.channel.k8s.io"), ("upgrade", 'SPDY/3.1 "x"')])
    assert got == ('http.Header{"Connection":[]string{"close"}, "Upgrade":[]string{"SPDY/3.1 \\"x\\""}, '
                   '"X-Stream-Protocol-Version":[]string{"v4.channel.k8s.io", "v3.channel.k8s.io"}}')


def test_go_header_of_no_headers() -> None:
    assert go_header([]) == "http.Header{}"


def test_port_forward_streams_the_kubelet_refuses() -> None:
    # portforward/httpstream.go httpStreamReceived: a stream without a usable port or stream type is refused
    # (reset), where a port header of "abc" raised a bare ValueError in the session
    assert stream_refusal({"port": "8080", "streamtype": "data"}) == ""
    assert stream_refusal({"streamtype": "data"}) == '"port" header is required'
    assert stream_refusal({"port": "abc", "streamtype": "data"}) == (
        'unable to parse "abc" as a port: strconv.ParseUint: parsing "abc": invalid syntax')
    assert stream_refusal({"port": "70000", "streamtype": "data"}) == (
        'unable to parse "70000" as a port: strconv.ParseUint: parsing "70000": value out of range')
    assert stream_refusal({"port": "0", "streamtype": "error"}) == 'port "0" must be > 0'
    assert stream_refusal({"port": "80", "streamtype": "stdin"}) == 'invalid stream type "stdin"'

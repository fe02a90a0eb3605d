"""The proxy transport's rewriting (podlife.apiserver.proxyrewrite) against what upstream's Transport gives:
expected values checked with staging/src/k8s.io/apimachinery/pkg/util/proxy/transport_test.go and
upgradeaware.go, for the API server's transport (empty Scheme and Host)."""

from __future__ import annotations

import gzip
import zlib

import pytest

from podlife.apiserver.proxyrewrite import (forwarded_uri, join_preserving_trailing_slash, path_prepend,
                                            rewrite_body, rewrite_html, rewrite_url)

POD = "/api/v1/namespaces/proxy-1/pods/web/proxy"
BACKEND, APISERVER = "10.245.0.2:80", "127.0.0.1:6443"


def html(text: str, prepend: str = POD) -> str:
    return rewrite_html(text.encode(), BACKEND, APISERVER, prepend).decode()


def test_absolute_links_go_through_the_proxy_relative_and_foreign_ones_do_not() -> None:
    # the conformance test's porter page (test/e2e/network/proxy.go: "rewriteme")
    assert html('<a href="/rewriteme">test</a>') == f'<a href="{POD}/rewriteme">test</a>'
    assert html('<pre><a href="kubelet.log">kubelet.log</a><a href="/google.log/">google.log</a></pre>') == \
        f'<pre><a href="kubelet.log">kubelet.log</a><a href="{POD}/google.log/">google.log</a></pre>'
    assert html('<img src="k.jpg"/><img src="/k.jpg"/>') == f'<img src="k.jpg"/><img src="{POD}/k.jpg"/>'
    assert html('<script src="http://google.com/k.js"/>') == '<script src="http://google.com/k.js"/>'
    # the proxied server's own host:port is the same host: made a path of the API server
    assert html('<script src="http://10.245.0.2:80/k.js"/>') == f'<script src="{POD}/k.js"/>'
    # a link that already goes through the proxy is left as it is
    assert html(f'<a href="{POD}/x">x</a>') == f'<a href="{POD}/x">x</a>'


def test_start_tags_are_written_back_as_go_writes_them() -> None:
    # lower-case names, double-quoted values, Go's escapes; text, end tags and comments byte for byte
    assert html("<A HREF='/x?q=1#top' Class=big data-x='a\"b'>Ünï &amp; <!-- c --></A>") == \
        f'<a href="{POD}/x?q=1#top" class="big" data-x="a&#34;b">Ünï &amp; <!-- c --></A>'
    assert html("<p>\n  <br>\n<input disabled src='/i.png'>") == f'<p>\n  <br>\n<input disabled="" src="{POD}/i.png">'
    # raw text elements hold no tags (golang.org/x/net/html readStartTag)
    assert html('<title><a href="/no"></title><a href="/yes">') == f'<title><a href="/no"></title><a href="{POD}/yes">'


def test_urls_are_escaped_as_net_url_writes_them() -> None:
    # transport_test.go "redirect rel must be escaped" and "redirect abs other host must be escaped"
    prepend = "/proxy/node/node1:10250"
    assert rewrite_url("/redirected/target/%00<script>alert(1)</script>/", BACKEND, APISERVER, prepend) == \
        "/proxy/node/node1:10250/redirected/target/%00%3Cscript%3Ealert%281%29%3C/script%3E/"
    assert rewrite_url("http://example.com/t/%00<script>/", BACKEND, APISERVER, prepend) == \
        "http://example.com/t/%00%3Cscript%3E/"
    # naming the API server's own host keeps scheme and host ("redirect abs use reqHost no host no scheme")
    assert rewrite_url("http://10.0.0.1:8001/redirected/target/", "mynode.com", "10.0.0.1:8001", prepend) == \
        "http://10.0.0.1:8001/proxy/node/node1:10250/redirected/target/"
    assert rewrite_url("mailto:a@b.c", BACKEND, APISERVER, prepend) == "mailto:a@b.c"
    assert rewrite_url("#top", BACKEND, APISERVER, prepend) == "#top"
    assert rewrite_url("/bad%zz", BACKEND, APISERVER, prepend) is None   # url.Parse fails
    assert html('<a href="/bad%zz">') == '<a href="/bad%zz">'   # an attribute Go cannot parse stays


def test_paths_and_headers_of_the_handler() -> None:
    # getRequestOptions + JoinPreservingTrailingSlash: the location path; defaultProxyTransport: the prefix
    assert join_preserving_trailing_slash("", "") == ""
    assert join_preserving_trailing_slash("", "/") == "/"
    assert join_preserving_trailing_slash("", "/a//b/../c/") == "/a/c/"
    assert path_prepend(POD + "/", "/") == POD
    assert path_prepend(POD + "/some/path", "/some/path") == POD
    assert path_prepend(POD, "") == POD
    # transport_test.go: the X-Forwarded-Uri of a path that needs escaping
    assert forwarded_uri("/proxy/node/node1:10250", "/logs/log.log\x00<script>alert(1)</script>") == \
        "/proxy/node/node1:10250/logs/log.log%00%3Cscript%3Ealert%281%29%3C/script%3E"
    assert forwarded_uri(POD, "/") == POD + "/"


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "", "br"])
def test_compressed_html_is_rewritten_under_its_encoding(encoding: str) -> None:
    page = b'<a href="/rewriteme">test</a>'
    want = f'<a href="{POD}/rewriteme">test</a>'.encode()
    if encoding == "gzip":
        out = rewrite_body(gzip.compress(page), "gzip", BACKEND, APISERVER, POD)
        assert out is not None and gzip.decompress(out) == want
    elif encoding == "deflate":   # compress/flate: raw DEFLATE
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        out = rewrite_body(packer.compress(page) + packer.flush(), "deflate", BACKEND, APISERVER, POD)
        assert out is not None and zlib.decompress(out, -zlib.MAX_WBITS) == want
    elif encoding == "":
        assert rewrite_body(page, "", BACKEND, APISERVER, POD) == want
    else:   # an encoding the transport does not understand: passed on untouched
        assert rewrite_body(page, encoding, BACKEND, APISERVER, POD) is None


def test_a_body_that_does_not_decode_passes_as_it_is() -> None:
    # a pod's corrupt gzip or deflate answer is not rewritten, and is no 500 of the API server's
    for encoding, body in (("gzip", b"\x1f\x8bnot gzip"), ("gzip", b"plain"), ("deflate", b"\xff\xfe")):
        assert rewrite_body(body, encoding, "10.0.0.1:80", "api:6443", "/p") is None

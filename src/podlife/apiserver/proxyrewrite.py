"""What the API server's proxy transport does to a pods/proxy or services/proxy answer: links and redirects that
point into the proxied server are made to go through the proxy again
(staging/src/k8s.io/apimachinery/pkg/util/proxy/transport.go, Transport; set up by upgradeaware.go
defaultProxyTransport, because pods/proxy and services/proxy ask for the wrapped transport).

The API server builds that transport from its own request URL, which carries no scheme and no host on the server
side: a rewritten link is an absolute path, ``/api/v1/namespaces/NS/pods/NAME/proxy`` + the link's path, unless
it names the API server's own host (then scheme and host are kept). Links to other hosts and relative links are
left alone. Go's tokenizer (golang.org/x/net/html) is played by Python's html.parser: every start tag is written
back as Go's Token.String writes it (lower-case names, ``key="value"`` attributes), everything else byte for byte;
on malformed HTML the two tokenizers may cut tags differently.
"""

from __future__ import annotations

import gzip
import posixpath
import zlib
from collections.abc import Callable
from html.parser import HTMLParser
from urllib.parse import quote, unquote, urlsplit

# transport.go atomsToAttrs: the attributes of each tag that hold a URL
_URL_ATTRS: dict[str, frozenset[str]] = {
    "a": frozenset({"href"}), "applet": frozenset({"codebase"}), "area": frozenset({"href"}),
    "audio": frozenset({"src"}), "base": frozenset({"href"}), "blockquote": frozenset({"cite"}),
    "body": frozenset({"background"}), "button": frozenset({"formaction"}), "command": frozenset({"icon"}),
    "del": frozenset({"cite"}), "embed": frozenset({"src"}), "form": frozenset({"action"}),
    "frame": frozenset({"longdesc", "src"}), "head": frozenset({"profile"}), "html": frozenset({"manifest"}),
    "iframe": frozenset({"longdesc", "src"}), "img": frozenset({"longdesc", "src", "usemap"}),
    "input": frozenset({"src", "usemap", "formaction"}), "ins": frozenset({"cite"}), "link": frozenset({"href"}),
    "object": frozenset({"classid", "codebase", "data", "usemap"}), "q": frozenset({"cite"}),
    "script": frozenset({"src"}), "source": frozenset({"src"}), "video": frozenset({"poster", "src"}),
}
# golang.org/x/net/html token.go readStartTag: the elements whose content is raw text, not tags
_RAW_TEXT = ("iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title",
             "xmp")
# net/url shouldEscape(encodePath): the reserved characters a path keeps as they are (all but '?')
_PATH_SAFE = "$&+,/:;=@"
_FRAGMENT_SAFE = "$&+,/:;=?@!()*"   # shouldEscape(encodeFragment)
CORS_HEADERS = ("Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
                "Access-Control-Allow-Methods", "Access-Control-Allow-Origin")   # upgradeaware.go removeCORSHeaders


def go_clean_join(*elems: str) -> str:
    """path.Join: the non-empty elements joined by '/' and cleaned ('' when all are empty)."""
    joined = "/".join(e for e in elems if e)
    if not joined:
        return ""
    cleaned = posixpath.normpath(joined)
    return "/" + cleaned.lstrip("/") if cleaned.startswith("//") else cleaned


def join_preserving_trailing_slash(*elems: str) -> str:
    """apimachinery util/net JoinPreservingTrailingSlash."""
    result = go_clean_join(*elems)
    last = next((e for e in reversed(elems) if e), "")
    return result + "/" if last.endswith("/") and not result.endswith("/") else result


def escape_path(path: str) -> str:
    """net/url URL.EscapedPath of a path set in code (no RawPath): Go's encodePath escaping."""
    return quote(path, safe=_PATH_SAFE, errors="surrogateescape")


def path_prepend(request_path: str, location_path: str) -> str:
    """upgradeaware.go defaultProxyTransport: the request's path without the part that is the proxied path."""
    suffix = location_path
    if request_path.endswith("/") and not suffix.endswith("/"):
        suffix += "/"
    return request_path[:-len(suffix)] if suffix and request_path.endswith(suffix) else request_path


def forwarded_uri(prepend: str, backend_path: str) -> str:
    """transport.go RoundTrip: the X-Forwarded-Uri header sent to the proxied server."""
    uri = go_clean_join(prepend, escape_path(backend_path))
    return uri + "/" if backend_path.endswith("/") else uri


def _valid_encoded(raw: str, safe: str) -> bool:
    """net/url validEncoded: ``raw`` may stand as it is (sub-delims, brackets, escapes and what Go keeps)."""
    keep = set("!$&'()*+,;=:@[]%" + safe)
    return all(c.isascii() and (c.isalnum() or c in "-_.~" or c in keep) for c in raw)


def _escaped(raw: str, safe: str) -> str:
    """URL.EscapedPath / EscapedFragment of a parsed URL left unchanged: the text as written where it is validly
    encoded, else its decoded form escaped again."""
    if _valid_encoded(raw, safe):
        return raw
    return quote(unquote(raw, errors="surrogateescape"), safe=safe, errors="surrogateescape")


def _parses(target: str) -> bool:
    """url.Parse succeeds: no control character, and every '%' outside the query starts an escape."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in target):
        return False
    outside = target.split("?", 1)[0] + ("#" + target.split("#", 1)[1] if "#" in target else "")
    return all(outside[i + 1:i + 3].isascii() and len(outside[i + 1:i + 3]) == 2 and
               all(h in "0123456789abcdefABCDEF" for h in outside[i + 1:i + 3])
               for i, c in enumerate(outside) if c == "%")


def rewrite_url(target: str, source_host: str, request_host: str, prepend: str) -> str | None:
    """transport.go rewriteURL with the API server's transport (empty Scheme and Host): ``target`` found on a
    page of ``source_host`` (the proxied server's host:port), asked for at ``request_host`` (the Host header).
    Written back as url.URL.String writes it; None where url.Parse fails."""
    try:
        parts = urlsplit(target)
    except ValueError:
        return None
    if not _parses(target):
        return None
    if parts.scheme and parts.path[:1] != "/" and not parts.netloc and "//" not in target:
        return target   # opaque (mailto:, javascript:): relative for rewriteURL, written as it was
    host = parts.netloc.rpartition("@")[2]
    path = _escaped(parts.path, _PATH_SAFE)
    query = f"?{parts.query}" if parts.query or target.split("#", 1)[0].endswith("?") else ""
    fragment = f"#{_escaped(parts.fragment, _FRAGMENT_SAFE)}" if parts.fragment else ""
    if (host and host not in (source_host, request_host)) or not parts.path.startswith("/"):
        # another host's, or relative: not rewritten
        head = f"{parts.scheme}:" if parts.scheme else ""
        if parts.netloc or target[len(head):].startswith("//"):
            head += "//" + parts.netloc
        return head + path + query + fragment
    keep = bool(host) and host == request_host   # names the API server itself: scheme and host stay
    head = f"{parts.scheme}://{parts.netloc}" if keep else ""
    decoded = unquote(parts.path, errors="surrogateescape")
    if not decoded.startswith(prepend):
        joined = go_clean_join(prepend, decoded)
        path = escape_path(joined + "/" if decoded.endswith("/") and not joined.endswith("/") else joined)
    return head + path + query + fragment


def _go_escape(value: str) -> str:
    """golang.org/x/net/html escape: what Token.String writes for an attribute's value."""
    for char, ref in (("&", "&amp;"), ("'", "&#39;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&#34;"),
                      ("\r", "&#13;")):
        value = value.replace(char, ref)
    return value


class _StartTags(HTMLParser):
    """Finds every start tag: where it is in the text and how Go writes it back, its URLs rewritten."""

    def __init__(self, text: str, rewrite: Callable[[str], str | None]) -> None:
        super().__init__(convert_charrefs=True)
        self.rewrite = rewrite
        self.line_starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.line_starts.append(i + 1)
        self.spans: list[tuple[int, int, str]] = []

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]], closing: str) -> None:
        raw = self.get_starttag_text() or ""
        line, col = self.getpos()
        urls = _URL_ATTRS.get(tag, frozenset())
        out = [tag]
        for key, value in attrs:
            val = value or ""
            if key in urls:
                val = self.rewrite(val) or val   # a URL Go cannot parse stays as it is
            out.append(f'{key}="{_go_escape(val)}"')
        start = self.line_starts[line - 1] + col
        self.spans.append((start, start + len(raw), "<" + " ".join(out) + closing))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, ">")
        if tag in _RAW_TEXT:   # html.parser itself knows only script and style
            self.set_cdata_mode(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs, "/>")
        if tag in _RAW_TEXT:   # Go's tokenizer reads raw text after <script/> too
            self.set_cdata_mode(tag)


def rewrite_html(body: bytes, source_host: str, request_host: str, prepend: str) -> bytes:
    """transport.go rewriteHTML: every start tag written back as Go does, its URL attributes rewritten."""
    text = body.decode("utf-8", errors="surrogateescape")   # Go assumes UTF-8 and keeps any other byte
    parser = _StartTags(text, lambda u: rewrite_url(u, source_host, request_host, prepend))
    parser.feed(text)
    parser.close()
    out, at = [], 0
    for start, end, tag in parser.spans:
        out += [text[at:start], tag]
        at = end
    out.append(text[at:])
    return "".join(out).encode("utf-8", errors="surrogateescape")


def rewrite_body(body: bytes, encoding: str, source_host: str, request_host: str, prepend: str) -> bytes | None:
    """transport.go rewriteResponse: an HTML body rewritten under its Content-Encoding (gzip, deflate or none);
    None for an encoding the transport does not understand, or a body that does not decode (it passes as it is:
    what the pod sent is no error of the API server's)."""
    try:
        return _rewrite_body(body, encoding, source_host, request_host, prepend)
    except (OSError, EOFError, zlib.error):   # gzip.BadGzipFile is an OSError
        return None


def _rewrite_body(body: bytes, encoding: str, source_host: str, request_host: str, prepend: str) -> bytes | None:
    if encoding == "gzip":
        return gzip.compress(rewrite_html(gzip.decompress(body), source_host, request_host, prepend))
    if encoding == "deflate":   # compress/flate: raw DEFLATE, no zlib header
        plain = zlib.decompress(body, -zlib.MAX_WBITS)
        packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        return packer.compress(rewrite_html(plain, source_host, request_host, prepend)) + packer.flush()
    if encoding == "":
        return rewrite_html(body, source_host, request_host, prepend)
    return None

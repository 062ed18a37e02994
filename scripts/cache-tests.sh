#!/usr/bin/env bash
# Runs the HTTP caching conformance suite (cache-tests.fyi, a copy at $CACHE_TESTS) through
# `folio-edge --origin`, and fails unless at least $MIN_PASSED tests pass with at most
# $MAX_REQUIRED_FAILED required ones failing (the goals of the cache tier).
#
#   scripts/cache-tests.sh [--tls | --h2] BIN_DIR [RESULTS.json]
#
# The suite's origin listens on 127.0.0.1:8000; the edge listens on an ephemeral loopback port
# and is stopped (by its PID) when the script ends. With --tls the edge listens with HTTPS only
# (a certificate from a CA made for the run), and the suite's client (Node's fetch, HTTP/1.1)
# trusts that CA through NODE_EXTRA_CA_CERTS. With --h2, the same over HTTP/2: the client's
# fetch (undici) is given an Agent with allowH2 (scripts/cache-tests-h2.mjs, preloaded).
set -euo pipefail
tls=
h2=
if [ "${1:-}" = "--tls" ]; then tls=1; shift; fi
if [ "${1:-}" = "--h2" ]; then tls=1; h2=1; shift; fi
bin=${1:?usage: cache-tests.sh [--tls | --h2] BIN_DIR [RESULTS.json]}
suite=${CACHE_TESTS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/cache-tests}
results=${2:-$(mktemp /tmp/folio-cache-tests.XXXXXX.json)}
min_passed=${MIN_PASSED:-280}
max_required_failed=${MAX_REQUIRED_FAILED:-5}
[ -x "$suite/run.sh" ] || { echo "cache-tests suite not found at $suite (set CACHE_TESTS)" >&2; exit 2; }

log=$(mktemp -d /tmp/folio-cache-tests-edge.XXXXXX)
scheme=http
tls_args=()
if [ -n "$tls" ]; then
  scheme=https
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$log/ca.key" -out "$log/ca.pem" -days 1 \
    -subj "/CN=cache-tests CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$log/key.pem" -out "$log/leaf.csr" -subj "/CN=127.0.0.1" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$log/ext"
  openssl x509 -req -in "$log/leaf.csr" -CA "$log/ca.pem" -CAkey "$log/ca.key" -CAcreateserial -days 1 -extfile "$log/ext" \
    -out "$log/cert.pem" 2>/dev/null
  chmod 600 "$log/key.pem"
  tls_args=(--tls-cert "$log/cert.pem" --tls-key "$log/key.pem")
  export NODE_EXTRA_CA_CERTS="$log/ca.pem"
fi
if [ -n "$h2" ]; then
  export NODE_OPTIONS="--import $(cd "$(dirname "$0")" && pwd)/cache-tests-h2.mjs --no-warnings"
fi
"$bin/folio-edge" --origin "http://127.0.0.1:${CT_ORIGIN_PORT:-8000}" --port 0 --no-access-log "${tls_args[@]}" >"$log/out" 2>"$log/err" &
edge=$!
trap 'kill $edge 2>/dev/null; wait $edge 2>/dev/null; rm -rf "$log"' EXIT
for _ in $(seq 100); do grep -q '^listening on' "$log/out" && break; sleep 0.1; done
port=$(sed -n "s/^listening on $scheme:\/\/127.0.0.1:\([0-9]*\).*/\1/p" "$log/out")
[ -n "$port" ] || { cat "$log/err" >&2; echo "folio-edge did not start" >&2; exit 2; }

"$suite/run.sh" "$scheme://127.0.0.1:$port" "$results" | tee "$log/summary"
line=$(tail -1 "$log/summary")
passed=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) required failed$/\1/p')
failed=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) required failed$/\2/p')
[ -n "$passed" ] || { echo "could not read the suite's summary" >&2; exit 2; }
if [ "$passed" -lt "$min_passed" ] || [ "$failed" -gt "$max_required_failed" ]; then
  echo "cache-tests over $scheme${h2:+ (h2)}: $passed passed (goal >= $min_passed), $failed required failed (goal <= $max_required_failed)" >&2
  exit 1
fi
echo "cache-tests over $scheme${h2:+ (h2)}: $passed passed, $failed required failed: goals met"

#!/usr/bin/env bash
# usage: test-stack.sh STACK FILTER
#
# `make test`'s edge suites over a TLS stack (FOLIO_TEST_STACK=https1 or h2). The run's test CA
# is made here and added to the system's certificate bundle in a mount namespace of the run's
# own (the bundle bound over with a copy that also holds it): FolioKit syncs through URLSession,
# and FoundationNetworking (libcurl) on Linux trusts that bundle and nothing else. Needs root.
set -euo pipefail
stack=$1
filter=$2
swift=${SWIFT:-swift}
pki=$(mktemp -d /tmp/folio-stack-pki.XXXXXX)
trap 'rm -rf "$pki"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$pki/ca.key" -out "$pki/ca.pem" -days 30 \
  -subj "/CN=Folio Test CA" -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" 2>/dev/null
bundle=/etc/ssl/certs/ca-certificates.crt
cat "$bundle" "$pki/ca.pem" > "$pki/bundle.crt"
echo "edge suites over $stack"
FOLIO_TEST_CA_DIR=$pki FOLIO_TEST_STACK=$stack unshare --mount sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' _ \
  "$pki/bundle.crt" "$bundle" "$swift" test --skip-build --filter "$filter"

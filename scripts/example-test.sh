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
echo "example-test: Examples/Reader synced, read and localized against $url, then read offline"

#!/usr/bin/env bash
# Runs the HTTP caching conformance suite (cache-tests.fyi, a copy at $CACHE_TESTS) through
# `folio-edge --origin`, and fails unless at least $MIN_PASSED tests pass with at most
# $MAX_REQUIRED_FAILED required ones failing (the goals of the cache tier).
#
#   scripts/cache-tests.sh BIN_DIR [RESULTS.json]
#
# The suite's origin listens on 127.0.0.1:8000; the edge listens on an ephemeral loopback port
# and is stopped (by its PID) when the script ends.
set -euo pipefail
bin=${1:?usage: cache-tests.sh BIN_DIR [RESULTS.json]}
suite=${CACHE_TESTS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/cache-tests}
results=${2:-$(mktemp /tmp/folio-cache-tests.XXXXXX.json)}
min_passed=${MIN_PASSED:-280}
max_required_failed=${MAX_REQUIRED_FAILED:-5}
[ -x "$suite/run.sh" ] || { echo "cache-tests suite not found at $suite (set CACHE_TESTS)" >&2; exit 2; }

log=$(mktemp -d /tmp/folio-cache-tests-edge.XXXXXX)
"$bin/folio-edge" --origin "http://127.0.0.1:${CT_ORIGIN_PORT:-8000}" --port 0 --no-access-log >"$log/out" 2>"$log/err" &
edge=$!
trap 'kill $edge 2>/dev/null; wait $edge 2>/dev/null; rm -rf "$log"' EXIT
for _ in $(seq 100); do grep -q '^listening on' "$log/out" && break; sleep 0.1; done
port=$(sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$log/out")
[ -n "$port" ] || { cat "$log/err" >&2; echo "folio-edge did not start" >&2; exit 2; }

"$suite/run.sh" "http://127.0.0.1:$port" "$results" | tee "$log/summary"
line=$(tail -1 "$log/summary")
passed=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) required failed$/\1/p')
failed=$(echo "$line" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) required failed$/\2/p')
[ -n "$passed" ] || { echo "could not read the suite's summary" >&2; exit 2; }
if [ "$passed" -lt "$min_passed" ] || [ "$failed" -gt "$max_required_failed" ]; then
  echo "cache-tests: $passed passed (goal >= $min_passed), $failed required failed (goal <= $max_required_failed)" >&2
  exit 1
fi
echo "cache-tests: $passed passed, $failed required failed: goals met"

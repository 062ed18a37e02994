#!/usr/bin/env bash
# Failover benchmark: two folio-edge origins serving PUBLIC_DIR and one cache tier over both
# (--origin A --origin B, health checks every second). wrk sends cache misses through the tier
# (one object, a query of its own on every request, so each reaches an origin); halfway through
# the primary origin is killed (SIGKILL). Reports the requests, the non-2xx answers and socket
# errors (both must be 0), the p99 latency, and which origin answered how many.
# Usage: Benchmarks/failover-bench.sh PUBLIC_DIR EDGE_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
bench_setup failover-bench "$@"

wait_listening() { # file -> port
    for _ in $(seq 1 100); do grep -q "^listening on" "$1" 2>/dev/null && break; sleep 0.1; done
    sed -n 's/^listening on http:\/\/127.0.0.1:\([0-9]*\)$/\1/p' "$1"
}

start_origin() { # name: a folio-edge on PUBLIC_DIR, its pid appended to pids
    "$edge" --root "$root" --port 0 --threads 1 --no-access-log > "$work/$1.out" 2> "$work/$1.err" &
    pids+=($!)
}

start_origin primary
primary_pid=${pids[-1]}
start_origin backup
primary_port=$(wait_listening "$work/primary.out")
backup_port=$(wait_listening "$work/backup.out")
"${server_cpu[@]}" "$edge" --origin "http://127.0.0.1:$primary_port" --origin "http://127.0.0.1:$backup_port" \
    --port 0 --threads 1 --no-access-log > "$work/tier.out" 2> "$work/tier.err" &
pids+=($!)
tier_port=$(wait_listening "$work/tier.out")

# One uncompressed object (requests carry no Accept-Encoding).
object=objects/$(cd "$root/objects" && ls | grep -v '\.\(gz\|br\)$' | head -1)
cat > "$work/miss.lua" <<LUA
local n = 0
request = function()
    n = n + 1
    return wrk.format("GET", "/$object?miss=" .. n)
end
LUA

half=$(python3 -c "import re,sys; d=sys.argv[1]; v=float(re.sub('[a-z]+$','',d)); print(v*60/2 if d.endswith('m') else v/2)" "$duration")
(sleep "$half"; kill -9 "$primary_pid") &
out=$("${client_cpu[@]}" wrk -t1 -c"$conns" -d"$duration" --latency -s "$work/miss.lua" "http://127.0.0.1:$tier_port/")
{ wait "$primary_pid"; } 2>/dev/null || true
metrics=$(curl -s "http://127.0.0.1:$tier_port/.folio/metrics")

requests=$(echo "$out" | awk '/requests in/ {print $1}')
non2xx=$(echo "$out" | awk '/Non-2xx or 3xx responses/ {print $NF}')
socket=$(echo "$out" | awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10}')
p99=$(echo "$out" | awk '$1=="99%" {print $2}')
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
count() { echo "$metrics" | awk -v s="folio_edge_origin_requests_total{origin=\"127.0.0.1:$1\"}" '$1==s {print $2}'; }
echo "failover: $requests requests in $duration ($rps/s, $conns connections, all misses), primary killed at ${half}s"
echo "failover: non-2xx ${non2xx:-0}, socket errors ${socket:-0}, p99 $p99"
echo "failover: origin requests: primary $(count "$primary_port"), backup $(count "$backup_port")"
if [ "${non2xx:-0}" != 0 ] || [ "${socket:-0}" != 0 ]; then
    echo "failover: FAILED: client requests failed" >&2
    echo "$out" >&2
    exit 1
fi
